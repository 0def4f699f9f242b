// Conversions (OpenCL C 6.2.3): float to integer in every rounding mode, saturated or not,
// integers to float in every rounding mode, narrowing with saturation, double and half.
// fin holds values every integer type in the non-saturating conversions can represent;
// fw also holds NaN, infinities and values out of every range (saturating conversions only).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_cvt(__global const float *fin, __global const float *fw, __global const int *ns,
                __global const long *ls, __global const double *ds,
                __global int *oi, __global float *of, __global long *ol, __global double *od,
                __global half *oh)
{
    size_t i = get_global_id(0);
    float x = fin[i], w = fw[i];
    int k = ns[i];
    long m = ls[i];
    double z = ds[i];
    __global int *a = oi + i * 16;
    a[0] = convert_int_rte(x);
    a[1] = convert_int_rtz(x);
    a[2] = convert_int_rtp(x);
    a[3] = convert_int_rtn(x);
    a[4] = convert_int_sat_rte(w);
    a[5] = convert_int_sat(w);
    a[6] = (int)convert_uint_sat_rtp(w);
    a[7] = (int)convert_uint_rtz(fabs(x));
    a[8] = convert_char_sat(k);
    a[9] = convert_uchar_sat(k);
    a[10] = convert_short_sat(k);
    a[11] = convert_ushort_sat(k);
    a[12] = convert_char_sat_rte(w);
    a[13] = convert_uchar_sat(w);
    a[14] = convert_short_sat_rtn(w);
    a[15] = convert_int_sat(m);
    __global float *b = of + i * 14;
    b[0] = convert_float_rte(k);
    b[1] = convert_float_rtz(k);
    b[2] = convert_float_rtp(k);
    b[3] = convert_float_rtn(k);
    b[4] = convert_float((uint)k);
    b[5] = convert_float_rtz((uint)k);
    b[6] = convert_float(m);
    b[7] = convert_float_rtp(m);
    b[8] = convert_float_rtn(m);
    b[9] = convert_float((ulong)m);
    b[10] = convert_float(z);
    b[11] = convert_float_rtz(z);
    b[12] = convert_float_rtp(z);
    b[13] = convert_float_rtn(z);
    __global long *c = ol + i * 5;
    c[0] = convert_long_rte(x);
    c[1] = convert_long_sat(w);
    c[2] = (long)convert_ulong_sat_rtp(w);
    c[3] = convert_long(z);
    c[4] = convert_long_sat_rtn(z * 1.0e10);
    __global double *d = od + i * 4;
    d[0] = convert_double(x);
    d[1] = convert_double(m);
    d[2] = convert_double(k);
    d[3] = convert_double((ulong)m);
    __global half *h = oh + i * 6;
    h[0] = convert_half(x);
    h[1] = convert_half_rtz(x);
    h[2] = convert_half_rtp(x);
    h[3] = convert_half_rtn(x);
    h[4] = convert_half(k);
    h[5] = convert_half((float)convert_half(x) * 2.0f);
}
