/*
 * dcu_device.h -- device-side OpenCL C support for the DCU project.
 *
 * Kernels are compiled with
 *   clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx1200 -O2
 *            -nogpulib -mcumode -mllvm -amdgpu-enable-vopd=0
 *            -include dcu/include/dcu_device.h -c k.cl -o k.o
 * With -nogpulib there is no device library, so the OpenCL work-item,
 * synchronisation, atomic and the few math functions the project's kernels
 * use are defined here as static inline overloadable functions.
 *
 * Work-item functions:
 *   get_local_id / get_group_id       -> v0 bit fields / ttmp9, ttmp7 (no kernargs)
 *   get_local_size                    -> __builtin_amdgcn_workgroup_size_*: a constant when
 *                                        the kernel has reqd_work_group_size, otherwise a load
 *                                        of hidden_group_size_* (implicit kernarg +12/+14/+16)
 *   get_num_groups                    -> hidden_block_count_* (implicit kernarg +0/+4/+8)
 *   get_global_size                   -> get_num_groups * get_local_size (uniform grids)
 *   get_global_offset                 -> 0
 *   get_work_dim                      -> hidden_grid_dims (implicit kernarg +64, u16)
 * Prefer reqd_work_group_size(X,Y,Z) and get_local_id/get_group_id in kernels: they
 * need no hidden kernel arguments and keep index math 32-bit.
 * The dcu_* functions below return uint, which avoids 64-bit index math.
 */
#ifndef DCU_DEVICE_H
#define DCU_DEVICE_H

#define DCU_INL static inline __attribute__((overloadable, always_inline))
#define DCU_INL1 static inline __attribute__((always_inline))

/* ---------------------------------------------------------------- work items */
DCU_INL1 uint dcu_local_id(uint d) {
    switch (d) {
    case 0: return __builtin_amdgcn_workitem_id_x();
    case 1: return __builtin_amdgcn_workitem_id_y();
    case 2: return __builtin_amdgcn_workitem_id_z();
    default: return 0u;
    }
}
DCU_INL1 uint dcu_group_id(uint d) {
    switch (d) {
    case 0: return __builtin_amdgcn_workgroup_id_x();
    case 1: return __builtin_amdgcn_workgroup_id_y();
    case 2: return __builtin_amdgcn_workgroup_id_z();
    default: return 0u;
    }
}
DCU_INL1 uint dcu_local_size(uint d) {
    switch (d) {
    case 0: return __builtin_amdgcn_workgroup_size_x();
    case 1: return __builtin_amdgcn_workgroup_size_y();
    case 2: return __builtin_amdgcn_workgroup_size_z();
    default: return 1u;
    }
}
/* hidden arguments (code object v5 implicit kernarg layout) */
DCU_INL1 uint dcu_num_groups(uint d) {
    const __constant uint *p = (const __constant uint *)__builtin_amdgcn_implicitarg_ptr();
    return d < 3u ? p[d] : 1u;
}
DCU_INL1 uint dcu_global_id(uint d) { return dcu_group_id(d) * dcu_local_size(d) + dcu_local_id(d); }
DCU_INL1 uint dcu_global_size(uint d) { return dcu_num_groups(d) * dcu_local_size(d); }

DCU_INL size_t get_local_id(uint d) { return dcu_local_id(d); }
DCU_INL size_t get_group_id(uint d) { return dcu_group_id(d); }
DCU_INL size_t get_local_size(uint d) { return dcu_local_size(d); }
DCU_INL size_t get_enqueued_local_size(uint d) { return dcu_local_size(d); }
DCU_INL size_t get_num_groups(uint d) { return dcu_num_groups(d); }
DCU_INL size_t get_global_id(uint d) { return dcu_global_id(d); }
DCU_INL size_t get_global_size(uint d) { return dcu_global_size(d); }
DCU_INL size_t get_global_offset(uint d) { (void)d; return 0; }
DCU_INL uint get_work_dim(void) {
    const __constant ushort *p = (const __constant ushort *)__builtin_amdgcn_implicitarg_ptr();
    return p[32]; /* hidden_grid_dims at +64 */
}
DCU_INL size_t get_local_linear_id(void) {
    return (dcu_local_id(2) * dcu_local_size(1) + dcu_local_id(1)) * dcu_local_size(0) + dcu_local_id(0);
}

/* ------------------------------------------------------------ synchronisation */
DCU_INL void mem_fence(cl_mem_fence_flags f) {
    (void)f;
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
}
DCU_INL void read_mem_fence(cl_mem_fence_flags f) {
    (void)f;
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
DCU_INL void write_mem_fence(cl_mem_fence_flags f) {
    (void)f;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
}
/* barrier: workgroup release fence, s_barrier_signal -1 + s_barrier_wait -1, acquire fence */
DCU_INL void barrier(cl_mem_fence_flags f) {
    (void)f;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
DCU_INL void work_group_barrier(cl_mem_fence_flags f) { barrier(f); }

/* ------------------------------------------------------------------- integer */
#define DCU_MINMAX(T)                                                        \
    DCU_INL T min(T a, T b) { return a < b ? a : b; }                        \
    DCU_INL T max(T a, T b) { return a > b ? a : b; }                        \
    DCU_INL T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
DCU_MINMAX(char) DCU_MINMAX(uchar) DCU_MINMAX(short) DCU_MINMAX(ushort)
DCU_MINMAX(int) DCU_MINMAX(uint) DCU_MINMAX(long) DCU_MINMAX(ulong)
#undef DCU_MINMAX

DCU_INL uint abs(int x) { return x < 0 ? -(uint)x : (uint)x; }
DCU_INL uint abs(uint x) { return x; }
DCU_INL uint abs_diff(int a, int b) { return a > b ? (uint)a - (uint)b : (uint)b - (uint)a; }
DCU_INL uint abs_diff(uint a, uint b) { return a > b ? a - b : b - a; }
DCU_INL int mul_hi(int a, int b) { return (int)(((long)a * (long)b) >> 32); }
DCU_INL uint mul_hi(uint a, uint b) { return (uint)(((ulong)a * (ulong)b) >> 32); }
/* 24-bit multiplies: operands are masked / sign-extended from 24 bits, as the
   hardware does (v_mul_u32_u24, v_mul_i32_i24) */
DCU_INL int mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
DCU_INL uint mul24(uint a, uint b) { return (a & 0xffffffu) * (b & 0xffffffu); }
DCU_INL int mad24(int a, int b, int c) { return mul24(a, b) + c; }
DCU_INL uint mad24(uint a, uint b, uint c) { return mul24(a, b) + c; }
DCU_INL int mad_hi(int a, int b, int c) { return mul_hi(a, b) + c; }
DCU_INL uint mad_hi(uint a, uint b, uint c) { return mul_hi(a, b) + c; }
DCU_INL int add_sat(int a, int b) { int r; return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT_MAX : INT_MIN) : r; }
DCU_INL uint add_sat(uint a, uint b) { uint r = a + b; return r < a ? UINT_MAX : r; }
DCU_INL int sub_sat(int a, int b) { int r; return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT_MAX : INT_MIN) : r; }
DCU_INL uint sub_sat(uint a, uint b) { return a > b ? a - b : 0u; }
DCU_INL uint popcount(uint x) { return (uint)__builtin_popcount(x); }
DCU_INL int popcount(int x) { return __builtin_popcount((uint)x); }
DCU_INL ulong popcount(ulong x) { return (ulong)__builtin_popcountl(x); }
/* clz/ctz of 0 is the bit width, as OpenCL requires */
DCU_INL uint clz(uint x) { return x ? (uint)__builtin_clz(x) : 32u; }
DCU_INL int clz(int x) { return (int)clz((uint)x); }
DCU_INL uint ctz(uint x) { return x ? (uint)__builtin_ctz(x) : 32u; }
DCU_INL int ctz(int x) { return (int)ctz((uint)x); }
DCU_INL uint rotate(uint v, uint s) { return __builtin_rotateleft32(v, s); }
DCU_INL int rotate(int v, int s) { return (int)__builtin_rotateleft32((uint)v, (uint)s); }
DCU_INL ulong rotate(ulong v, ulong s) { return __builtin_rotateleft64(v, s); }
DCU_INL ulong upsample(uint hi, uint lo) { return ((ulong)hi << 32) | lo; }
DCU_INL long upsample(int hi, uint lo) { return (long)(((ulong)(uint)hi << 32) | lo); }
/* not OpenCL 2.0 core, provided for the kernels: bitfield ops and bit reverse */
DCU_INL uint bitfield_extract_unsigned(uint x, uint off, uint w) { return __builtin_amdgcn_ubfe(x, off, w); }
DCU_INL int bitfield_extract_signed(int x, uint off, uint w) { return __builtin_amdgcn_sbfe(x, off, w); }
DCU_INL uint bitfield_insert(uint base, uint ins, uint off, uint w) {
    uint m = (w >= 32u ? 0xffffffffu : ((1u << w) - 1u)) << off;
    return (base & ~m) | ((ins << off) & m);
}
DCU_INL uint bit_reverse(uint x) { return __builtin_bitreverse32(x); }

/* --------------------------------------------------------------------- float */
DCU_INL float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
DCU_INL float mad(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
DCU_INL float fabs(float x) { return __builtin_fabsf(x); }
DCU_INL float copysign(float x, float y) { return __builtin_copysignf(x, y); }
DCU_INL float fmin(float a, float b) { return __builtin_fminf(a, b); }
DCU_INL float fmax(float a, float b) { return __builtin_fmaxf(a, b); }
DCU_INL float min(float a, float b) { return __builtin_fminf(a, b); }
DCU_INL float max(float a, float b) { return __builtin_fmaxf(a, b); }
DCU_INL float clamp(float x, float lo, float hi) { return __builtin_fminf(__builtin_fmaxf(x, lo), hi); }
DCU_INL float floor(float x) { return __builtin_floorf(x); }
DCU_INL float ceil(float x) { return __builtin_ceilf(x); }
DCU_INL float trunc(float x) { return __builtin_truncf(x); }
DCU_INL float rint(float x) { return __builtin_rintf(x); }
/* hardware transcendentals (v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32, v_log_f32): ~1 ULP */
DCU_INL float native_recip(float x) { return __builtin_amdgcn_rcpf(x); }
DCU_INL float native_rsqrt(float x) { return __builtin_amdgcn_rsqf(x); }
DCU_INL float native_sqrt(float x) { return __builtin_amdgcn_sqrtf(x); }
DCU_INL float native_exp2(float x) { return __builtin_amdgcn_exp2f(x); }
DCU_INL float native_log2(float x) { return __builtin_amdgcn_logf(x); }
/* as_float / as_uint / as_int come from clang's opencl-c-base.h (__builtin_astype) */

/* ------------------------------------------------------------------- atomics */
/* OpenCL 1.x atomic_* functions: relaxed, device scope (global) / workgroup scope (local). */
#define DCU_ATOMIC_RMW(NAME, BUILTIN, T)                                                       \
    DCU_INL T NAME(volatile __global T *p, T v) {                                              \
        return BUILTIN((__global T *)p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);           \
    }                                                                                          \
    DCU_INL T NAME(volatile __local T *p, T v) {                                               \
        return BUILTIN((__local T *)p, v, __ATOMIC_RELAXED, __MEMORY_SCOPE_WRKGRP);            \
    }
#define DCU_ATOMIC_ALL(T)                                                   \
    DCU_ATOMIC_RMW(atomic_add, __scoped_atomic_fetch_add, T)                \
    DCU_ATOMIC_RMW(atomic_sub, __scoped_atomic_fetch_sub, T)                \
    DCU_ATOMIC_RMW(atomic_min, __scoped_atomic_fetch_min, T)                \
    DCU_ATOMIC_RMW(atomic_max, __scoped_atomic_fetch_max, T)                \
    DCU_ATOMIC_RMW(atomic_and, __scoped_atomic_fetch_and, T)                \
    DCU_ATOMIC_RMW(atomic_or, __scoped_atomic_fetch_or, T)                  \
    DCU_ATOMIC_RMW(atomic_xor, __scoped_atomic_fetch_xor, T)                \
    DCU_ATOMIC_RMW(atomic_xchg, __scoped_atomic_exchange_n, T)              \
    DCU_INL T atomic_inc(volatile __global T *p) { return atomic_add(p, (T)1); } \
    DCU_INL T atomic_dec(volatile __global T *p) { return atomic_sub(p, (T)1); } \
    DCU_INL T atomic_inc(volatile __local T *p) { return atomic_add(p, (T)1); }  \
    DCU_INL T atomic_dec(volatile __local T *p) { return atomic_sub(p, (T)1); }  \
    DCU_INL T atomic_cmpxchg(volatile __global T *p, T cmp, T val) {                           \
        __scoped_atomic_compare_exchange_n((__global T *)p, &cmp, val, 0, __ATOMIC_RELAXED,    \
                                           __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);           \
        return cmp;                                                                            \
    }                                                                                          \
    DCU_INL T atomic_cmpxchg(volatile __local T *p, T cmp, T val) {                            \
        __scoped_atomic_compare_exchange_n((__local T *)p, &cmp, val, 0, __ATOMIC_RELAXED,     \
                                           __ATOMIC_RELAXED, __MEMORY_SCOPE_WRKGRP);           \
        return cmp;                                                                            \
    }
DCU_ATOMIC_ALL(int)
DCU_ATOMIC_ALL(uint)
#undef DCU_ATOMIC_ALL
#undef DCU_ATOMIC_RMW
/* atom_* spellings (cl_khr_*_int32_atomics) */
#define atom_add atomic_add
#define atom_sub atomic_sub
#define atom_min atomic_min
#define atom_max atomic_max
#define atom_and atomic_and
#define atom_or atomic_or
#define atom_xor atomic_xor
#define atom_xchg atomic_xchg
#define atom_cmpxchg atomic_cmpxchg
#define atom_inc atomic_inc
#define atom_dec atomic_dec

#endif /* DCU_DEVICE_H */
