// Bounds-checked map with no reqd_work_group_size: uses get_global_id, so the
// group size comes from the hidden kernel arguments. Launched with n not a
// multiple of 32 and with block sizes that leave a partial last wave.
__kernel void partial_wave(__global const uint *in, __global uint *out, uint n)
{
    uint i = (uint)get_global_id(0);
    if (i < n)
        out[i] = in[i] * 2654435761u + (uint)get_local_id(0);
}
