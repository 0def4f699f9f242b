// C[M x N] = A[M x K] * B[K x N], float, 16x16 tiles through LDS. Each work-item
// accumulates with fma in k order: acc = fma(A[row][k], B[k][col], acc), k = 0..K-1.
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void matmul_tile(__global const float *A, __global const float *B, __global float *C,
                 uint N, uint K)
{
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1);
    uint col = (uint)get_group_id(0) * TS + tx;
    uint row = (uint)get_group_id(1) * TS + ty;
    float acc = 0.0f;
    for (uint t = 0; t < K; t += TS) {
        As[ty][tx] = A[row * K + t + tx];
        Bs[ty][tx] = B[(t + ty) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TS; ++k)
            acc = fma(As[ty][k], Bs[k][tx], acc);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}
