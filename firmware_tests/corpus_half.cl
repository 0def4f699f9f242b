// half arithmetic (cl_khr_fp16: each operation rounds to half), compares, conversions to and
// from float; vload_half / vstore_half (every rounding mode) and vload_half4 / vstore_half4
// on float data.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_half(__global const half *hs, __global const float *fs, __global half *oh,
                 __global float *of, __global half *st)
{
    size_t i = get_global_id(0);
    half a = hs[2 * i], b = hs[2 * i + 1];
    oh[6 * i + 0] = a + b;
    oh[6 * i + 1] = a * b;
    oh[6 * i + 2] = a - b;
    oh[6 * i + 3] = a < b ? a : b;
    oh[6 * i + 4] = -a;
    oh[6 * i + 5] = (half)(float)i + a;
    of[4 * i + 0] = (float)a;
    of[4 * i + 1] = vload_half(2 * i + 1, hs);
    float4 v = vload_half4(i, hs + 128);
    of[4 * i + 2] = v.x + v.y;
    of[4 * i + 3] = v.z * v.w;
    float f = fs[i];
    vstore_half(f, 8 * i + 0, st);
    vstore_half_rtz(f, 8 * i + 1, st);
    vstore_half_rtp(f, 8 * i + 2, st);
    vstore_half_rtn(f, 8 * i + 3, st);
    vstore_half4((float4)(f, -f, f * 0.5f, f + 1.0f), 2 * i + 1, st);
}
