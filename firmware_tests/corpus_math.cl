// AMD's device-library math functions (ocml through opencl.bc) in single precision, each
// checked against a float64 reference within its OpenCL C ulp limit (OpenCL C 7.4).
// x: any finite argument, p: positive, u: in [-1, 1], y: second argument, n: integer.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_math(__global const float *xs, __global const float *ps, __global const float *us,
                 __global const float *ys, __global const int *ns, __global float *out)
{
    size_t i = get_global_id(0);
    float x = xs[i], p = ps[i], u = us[i], y = ys[i];
    int n = ns[i];
    __global float *o = out + 40 * i;
    o[0] = exp(x);
    o[1] = exp2(x);
    o[2] = exp10(x * 0.4f);
    o[3] = expm1(x);
    o[4] = log(p);
    o[5] = log2(p);
    o[6] = log10(p);
    o[7] = log1p(p);
    o[8] = sin(x);
    o[9] = cos(x);
    o[10] = tan(x);
    o[11] = asin(u);
    o[12] = acos(u);
    o[13] = atan(x);
    o[14] = atan2(x, y);
    o[15] = sinh(x);
    o[16] = cosh(x);
    o[17] = tanh(x);
    o[18] = asinh(x);
    o[19] = acosh(p + 1.0f);
    o[20] = atanh(u * 0.99f);
    o[21] = pow(p, y);
    o[22] = powr(p, y);
    o[23] = pown(p, n);
    o[24] = rootn(p, n == 0 ? 3 : n);
    o[25] = cbrt(x);
    o[26] = erf(x);
    o[27] = erfc(x);
    o[28] = tgamma(p);
    o[29] = hypot(x, y);
    o[30] = fmod(x, y);
    o[31] = remainder(x, y);
    o[32] = sqrt(p);
    o[33] = rsqrt(p);
    o[34] = sinpi(x);
    o[35] = cospi(x);
    o[36] = ldexp(x, n);
    o[37] = logb(p) + (float)ilogb(x);
    o[38] = trunc(x) + round(y) + rint(x * 4.0f) + ceil(y) + floor(x);
    o[39] = atanpi(x);
}
