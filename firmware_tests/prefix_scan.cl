// Workgroup inclusive prefix sum of 256 uints (Hillis-Steele, double-buffered LDS).
#define BLOCK 256
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void prefix_scan(__global const uint *in, __global uint *out)
{
    __local uint buf[2][BLOCK];
    uint t = (uint)get_local_id(0), g = (uint)get_group_id(0);
    uint p = 0;
    buf[0][t] = in[g * BLOCK + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < BLOCK; off <<= 1) {
        uint v = buf[p][t];
        if (t >= off)
            v += buf[p][t - off];
        buf[p ^ 1u][t] = v;
        p ^= 1u;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g * BLOCK + t] = buf[p][t];
}
