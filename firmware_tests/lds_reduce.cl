// Workgroup sum of 256 uints through LDS (tree reduction, 8 waves, barriers).
// out[group] = sum(in[group*256 .. group*256+255]) mod 2^32.
#define BLOCK 256
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void lds_reduce(__global const uint *in, __global uint *out)
{
    __local uint s[BLOCK];
    uint t = (uint)get_local_id(0), g = (uint)get_group_id(0);
    s[t] = in[g * BLOCK + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = BLOCK / 2; w > 0; w >>= 1) {
        if (t < w)
            s[t] += s[t + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0)
        out[g] = s[0];
}
