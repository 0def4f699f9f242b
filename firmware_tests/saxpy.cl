// y[i] = fma(a, x[i], y[i]) for i < n (float, single rounding).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void saxpy(__global float *y, __global const float *x, float a, uint n)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    if (i < n)
        y[i] = fma(a, x[i], y[i]);
}
