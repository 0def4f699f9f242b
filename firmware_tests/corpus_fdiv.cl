// Float division, square roots and the native_* functions on per-lane (varying) values and
// on kernel arguments (uniform values, which the compiler may compute in scalar registers).
// Built twice: with stock flags (x / y within 2.5 ulp, sqrt within 3 ulp) and with
// -cl-fp32-correctly-rounded-divide-sqrt (both correctly rounded).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_fdiv(__global const float *xs, __global const float *ys, float u, float v,
                 __global float *out, __global float *uni)
{
    size_t i = get_global_id(0);
    float x = xs[i], y = ys[i], ax = fabs(x);
    __global float *o = out + i * 10;
    o[0] = x / y;
    o[1] = sqrt(ax);
    o[2] = rsqrt(ax);
    o[3] = native_sqrt(ax);
    o[4] = native_rsqrt(ax);
    o[5] = native_recip(y);
    o[6] = native_divide(x, y);
    o[7] = x / v;
    o[8] = native_exp2(clamp(x, -100.0f, 100.0f));
    o[9] = native_log2(ax);
    if (i == 0) {
        uni[0] = u / v;
        uni[1] = sqrt(u);
        uni[2] = rsqrt(u);
        uni[3] = native_sqrt(u);
        uni[4] = native_rsqrt(u);
        uni[5] = native_recip(v);
        uni[6] = native_exp2(v);
        uni[7] = native_log2(u);
    }
}
