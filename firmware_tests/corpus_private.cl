// Private arrays indexed by data: a small one the compiler keeps in registers and selects
// from, and one large enough to live in scratch memory (per-lane private segment).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_private(__global const uint *idx, __global uint *small_out, __global uint *big_out)
{
    size_t i = get_global_id(0);
    uint k = idx[i];
    uint small[8];
    for (uint j = 0; j < 8; j++)
        small[j] = (uint)i * 8u + j * j;
    small[k & 7u] += 1000u;
    small_out[i] = small[(k >> 3) & 7u] + small[(k >> 6) & 7u];
    uint big[96];
    for (uint j = 0; j < 96; j++)
        big[j] = j * 3u + (uint)i;
    big[k % 96u] = k;
    big[(k >> 8) % 96u] += 7u;
    big_out[i] = big[(k >> 16) % 96u] ^ big[(k >> 4) % 96u];
}
