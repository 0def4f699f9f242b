// float4 loads and stores (128-bit accesses) with per-component arithmetic, int4 and
// swizzles, and a private array indexed by data.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_vec(__global const float4 *a, __global const float4 *b, __global const int4 *n,
                __global float4 *prod, __global float4 *sum, __global int4 *mix)
{
    size_t i = get_global_id(0);
    float4 x = a[i], y = b[i];
    prod[i] = x * y;
    sum[i] = x.wzyx + y;
    int4 k = n[i];
    mix[i] = (int4)(k.x + k.w, k.y * k.z, k.z ^ k.x, k.w - k.y) + (x < y);
}
