// Float compares, conversions, rounding, min/max and selects: 20 words per item.
#define NOUT 20
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void float_ops(__global const float *xs, __global const float *ys, __global const int *is,
               __global uint *out)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    float x = xs[i], y = ys[i];
    int k = is[i];
    __global uint *o = out + i * NOUT;
    o[0] = as_uint(x < y ? x : y);                    // v_cmp_lt_f32 + v_cndmask_b32
    o[1] = as_uint(x >= y ? 1.0f : -1.0f);            // v_cmp_ge_f32 / v_cndmask
    o[2] = (x == y) ? 7u : 3u;                        // v_cmp_eq_f32
    o[3] = (x != y) + ((x > y) << 1) + ((x <= y) << 2);
    o[4] = (uint)(int)x;                              // v_cvt_i32_f32
    o[5] = (uint)fabs(x);                             // v_cvt_u32_f32
    o[6] = as_uint((float)k);                         // v_cvt_f32_i32
    o[7] = as_uint((float)(uint)k);                   // v_cvt_f32_u32
    o[8] = as_uint(floor(x));                         // v_floor_f32
    o[9] = as_uint(ceil(x));                          // v_ceil_f32
    o[10] = as_uint(trunc(x));                        // v_trunc_f32
    o[11] = as_uint(rint(x));                         // v_rndne_f32
    o[12] = as_uint(fmin(x, y));                      // v_min_num_f32
    o[13] = as_uint(fmax(x, y));                      // v_max_num_f32
    o[14] = as_uint(x * y);
    o[15] = as_uint(x + y);
    o[16] = as_uint(x - y);
    o[17] = as_uint(fabs(x) * -2.0f);
    o[18] = as_uint(-x);
    o[19] = as_uint(fabs(y - x) < 1.0f ? x : 0.5f * y);
}
