// 64-bin histogram: LDS atomics per workgroup (ds_add_u32), then global atomics.
// hist must be zero on entry; hist[b] = count of (in[i] & 63) == b.
#define BLOCK 256
#define BINS 64
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void lds_histogram(__global const uint *in, __global uint *hist, uint per_item)
{
    __local uint h[BINS];
    uint t = (uint)get_local_id(0), g = (uint)get_group_id(0);
    if (t < BINS)
        h[t] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < per_item; ++k) {
        uint v = in[(g * per_item + k) * BLOCK + t];
        atomic_inc(&h[v & (BINS - 1)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < BINS)
        atomic_add(&hist[t], h[t]);
}
