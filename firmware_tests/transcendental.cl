// Hardware transcendentals (about 1 ULP): out[i*5 + k] = rcp, rsqrt, sqrt of x[i] (x > 0),
// exp2 of e[i], log2 of x[i].
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void transcendental(__global const float *x, __global const float *e, __global float *out)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    float v = x[i];
    __global float *o = out + i * 5u;
    o[0] = native_recip(v);     // v_rcp_f32
    o[1] = native_rsqrt(v);     // v_rsq_f32
    o[2] = native_sqrt(v);      // v_sqrt_f32
    o[3] = native_exp2(e[i]);   // v_exp_f32
    o[4] = native_log2(v);      // v_log_f32
}
