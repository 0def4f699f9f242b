// c[i] = a[i] + b[i] for i < n (float). One work-item per element, 64-wide groups.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void vector_add(__global const float *a, __global const float *b, __global float *c, uint n)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
