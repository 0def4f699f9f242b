// double arithmetic: add, multiply, divide and sqrt (correctly rounded, OpenCL C 7.4),
// fma, compares, min/max, conversions to and from integers and float.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_double(__global const double *ds, __global double *od, __global long *ol)
{
    size_t i = get_global_id(0);
    double x = ds[2 * i], y = ds[2 * i + 1];
    __global double *o = od + 8 * i;
    o[0] = x + y;
    o[1] = x * y;
    o[2] = x / y;
    o[3] = sqrt(fabs(x));
    o[4] = fma(x, y, x);
    o[5] = fmin(x, y) - fmax(x, y);
    o[6] = floor(x) + trunc(y);
    o[7] = (double)(float)x + (double)(int)y;
    ol[2 * i + 0] = (long)(x * 1.0e6);
    ol[2 * i + 1] = (x < y) | ((x == y) << 1) | ((x >= y) << 2);
}
