// Uniform half arithmetic (cl_khr_fp16) that clang-19 keeps on the scalar ALU: conversions
// both ways, add/sub/mul/fma, fmin/fmax, rounding to integers and compares feeding a branch
// and selects. Each workgroup walks its 32 input pairs in a uniform loop; lane k stores pair k.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_salu_half(__global const half *hs, __global const float *fs, __global half *oh,
                      __global float *of, __global int *oi)
{
    uint lid = get_local_id(0), g = get_group_id(0);
    for (uint k = 0; k < 32; k++) {
        uint p = 32 * g + k;
        half a = hs[2 * p], b = hs[2 * p + 1];
        float f = fs[p];
        half c = (half)f;
        half r[10];
        r[0] = a + b;
        r[1] = a - b;
        r[2] = a * b;
        r[3] = fma(a, b, c);
        r[4] = fmin(a, b);
        r[5] = fmax(a, c);
        r[6] = c;
        r[7] = floor(a) + ceil(b);
        r[8] = a < b ? c : b;
        half t;
        if (a > c)
            t = a - c;
        else
            t = c * (half)0.5;
        r[9] = t;
        float x = (float)a + f, y = (float)r[3] * 2.0f;
        int flags = (a == b) | (a <= c) << 1 | isunordered(a, b) << 2 | (b != c) << 3
                    | (a >= b) << 4 | isless(b, c) << 5;
        if (lid == k) {
            for (int j = 0; j < 10; j++)
                oh[10 * p + j] = r[j];
            of[2 * p] = x;
            of[2 * p + 1] = y;
            oi[p] = flags;
        }
    }
}
