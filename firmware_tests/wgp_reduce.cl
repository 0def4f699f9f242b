// Workgroup-wide LDS reduction built in WGP mode (the workgroup of 512 may span both CUs).
// out[group*2] = sum, out[group*2+1] = max of the group's 512 uints.
#define BLOCK 512
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void wgp_reduce(__global const uint *in, __global uint *out)
{
    __local uint s[BLOCK];
    __local uint m[BLOCK];
    uint t = (uint)get_local_id(0), g = (uint)get_group_id(0);
    uint v = in[g * BLOCK + t];
    s[t] = v;
    m[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (uint w = BLOCK / 2; w > 0; w >>= 1) {
        if (t < w) {
            s[t] += s[t + w];
            m[t] = max(m[t], m[t + w]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) {
        out[g * 2u] = s[0];
        out[g * 2u + 1u] = m[0];
    }
}
