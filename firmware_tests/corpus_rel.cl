// Relational, classification and select functions (OpenCL C 6.15.6) on values that include
// NaN, infinities, zeros of both signs and subnormals; scalar forms return 1 for true,
// vector forms -1; select and bitselect on floats and integers; min/max/step/sign/copysign.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_rel(__global const float *xs, __global const float *ys, __global const int *cs,
                __global int *oi, __global float *of)
{
    size_t i = get_global_id(0);
    float x = xs[i], y = ys[i];
    int c = cs[i];
    __global int *r = oi + 16 * i;
    r[0] = isequal(x, y);
    r[1] = isnotequal(x, y);
    r[2] = isgreater(x, y);
    r[3] = isgreaterequal(x, y);
    r[4] = isless(x, y);
    r[5] = islessequal(x, y);
    r[6] = islessgreater(x, y);
    r[7] = isfinite(x) | (isinf(x) << 1) | (isnan(x) << 2) | (isnormal(x) << 3) | (signbit(x) << 4);
    r[8] = isordered(x, y) | (isunordered(x, y) << 1);
    int4 v = isless((float4)(x, y, x, y), (float4)(y, x, 0.0f, 0.0f));
    r[9] = v.x;
    r[10] = v.y + 4 * v.z + 16 * v.w;
    r[11] = any(v) | (all(v) << 1) | (any((int2)(c, 0)) << 2);
    int4 s = select((int4)(1, 2, 3, 4), (int4)(5, 6, 7, 8), (int4)(c, -c, as_int(as_uint(c) << 8), ~c));
    r[12] = s.x + 10 * s.y + 100 * s.z + 1000 * s.w;
    r[13] = select(c, -c, c & 4);
    r[14] = (int)bitselect((uint)c, ~(uint)c, as_uint(x));
    r[15] = (int)(x < y) - (int)(x != x);
    __global float *f = of + 8 * i;
    f[0] = select(x, y, c & 1);
    f[1] = fmin(x, y);
    f[2] = fmax(x, y);
    f[3] = copysign(x, y);
    f[4] = step(x, y);
    f[5] = sign(x);
    f[6] = bitselect(x, y, as_float(c));
    f[7] = fabs(x) - fabs(y);
}
