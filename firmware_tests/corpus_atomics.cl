// Every global and local atomic, 32- and 64-bit: OpenCL 1.x atomic_* (int, uint, float
// xchg), atom_* on long/ulong (cl_khr_int64_base_atomics, cl_khr_int64_extended_atomics) and
// OpenCL 2.0 atomic_fetch_*_explicit; the wrapping increment and decrement and the float add,
// min and max through clang's AMDGPU and scoped-atomic builtins. Each work-item applies each operation once to a shared
// slot. g32/g64 (global) start from the host's values; local slots start from the same
// values, and the first work-item of each group adds its group's final local values to
// lsum32/lsum64. Returned values go to ret32/ret64 (checked as chains and permutations, which
// hold whatever order the lanes took).
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define N32 17
#define N64 12
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_atomics(__global const uint *vs, __global const ulong *lvs, __global uint *g32,
                    __global ulong *g64, __global float *gf, __global uint *lsum32,
                    __global ulong *lsum64, __global uint *ret32, __global ulong *ret64)
{
    __local uint l32[N32];
    __local ulong l64[N64];
    size_t i = get_global_id(0);
    uint lid = (uint)get_local_id(0);
    if (lid < N32)
        l32[lid] = g32[N32 + lid];
    if (lid < N64)
        l64[lid] = g64[N64 + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint v = vs[i], bit = 1u << (i & 31u);
    ulong w = lvs[i], lbit = 1ul << (i & 63u);
    volatile __global int *gi = (volatile __global int *)g32;
    volatile __global uint *gu = (volatile __global uint *)g32;
    volatile __local int *li = (volatile __local int *)l32;
    volatile __local uint *lu = (volatile __local uint *)l32;

    atomic_add(gu + 0, v & 0xffffu);
    atomic_sub(gu + 1, v & 0xffu);
    atomic_min(gi + 2, (int)v);
    atomic_max(gi + 3, (int)v);
    atomic_min(gu + 4, v);
    atomic_max(gu + 5, v);
    atomic_and(gu + 6, ~bit);
    atomic_or(gu + 7, bit);
    atomic_xor(gu + 8, v);
    atomic_inc(gu + 9);
    atomic_dec(gu + 10);
    ret32[4 * i + 0] = atomic_add(gu + 11, v & 0xfffu);
    ret32[4 * i + 1] = atomic_xchg(gu + 12, v);
    atomic_fetch_add_explicit((volatile __global atomic_uint *)(gu + 13), 3u, memory_order_relaxed,
                              memory_scope_device);
    ret32[4 * i + 2] = as_uint(atomic_xchg(gf + (i & 1), (float)i));
    uint seen = gu[14];
    for (uint prev; (prev = atomic_cmpxchg(gu + 14, seen, seen + 5u)) != seen;)
        seen = prev;
    ret32[4 * i + 3] = seen;
    __builtin_amdgcn_atomic_inc32(gu + 15, 40u, __ATOMIC_RELAXED, "agent");
    __builtin_amdgcn_atomic_dec32(gu + 16, 40u, __ATOMIC_RELAXED, "agent");
    __scoped_atomic_fetch_add(gf + 2, (float)(v & 0xffu) * 0.25f, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
    __scoped_atomic_fetch_min(gf + 3, as_float(v & 0x3fffffffu) - 1.0f, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
    __scoped_atomic_fetch_max(gf + 4, as_float(v & 0x3fffffffu) - 1.0f, __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);

    atomic_add(lu + 0, v & 0xffffu);
    atomic_sub(lu + 1, v & 0xffu);
    atomic_min(li + 2, (int)v);
    atomic_max(li + 3, (int)v);
    atomic_min(lu + 4, v);
    atomic_max(lu + 5, v);
    atomic_and(lu + 6, ~bit);
    atomic_or(lu + 7, bit);
    atomic_xor(lu + 8, v);
    atomic_inc(lu + 9);
    atomic_dec(lu + 10);
    atomic_add(lu + 11, v & 0xfffu);
    uint old = lu[12];
    while (atomic_cmpxchg(lu + 12, old, old + 5u) != old)
        old = lu[12];
    atomic_fetch_or_explicit((volatile __local atomic_uint *)(lu + 13), bit, memory_order_relaxed,
                             memory_scope_work_group);
    __builtin_amdgcn_atomic_inc32(lu + 15, 40u, __ATOMIC_RELAXED, "workgroup");
    __builtin_amdgcn_atomic_dec32(lu + 16, 40u, __ATOMIC_RELAXED, "workgroup");
    __scoped_atomic_fetch_add((__local float *)(lu + 14), (float)(v & 0xffu) * 0.25f, __ATOMIC_RELAXED,
                              __MEMORY_SCOPE_WRKGRP);

    volatile __global long *gl = (volatile __global long *)g64;
    volatile __global ulong *gul = (volatile __global ulong *)g64;
    volatile __local long *ll = (volatile __local long *)l64;
    volatile __local ulong *lul = (volatile __local ulong *)l64;
    atom_add(gul + 0, w >> 8);
    atom_sub(gul + 1, w >> 16);
    atom_min(gl + 2, (long)w);
    atom_max(gl + 3, (long)w);
    atom_min(gul + 4, w);
    atom_max(gul + 5, w);
    atom_and(gul + 6, ~lbit);
    atom_or(gul + 7, lbit);
    atom_xor(gul + 8, w);
    atom_inc(gul + 9);
    ret64[2 * i + 0] = atom_xchg(gul + 10, w);
    ulong gseen = gul[11];
    for (ulong prev; (prev = atom_cmpxchg(gul + 11, gseen, gseen + 9ul)) != gseen;)
        gseen = prev;
    ret64[2 * i + 1] = gseen;
    atom_add(lul + 0, w >> 8);
    atom_sub(lul + 1, w >> 16);
    atom_min(ll + 2, (long)w);
    atom_max(ll + 3, (long)w);
    atom_min(lul + 4, w);
    atom_max(lul + 5, w);
    atom_and(lul + 6, ~lbit);
    atom_or(lul + 7, lbit);
    atom_xor(lul + 8, w);
    atom_dec(lul + 9);
    ulong lo = lul[10];
    while (atom_cmpxchg(lul + 10, lo, lo + 9ul) != lo)
        lo = lul[10];
    atomic_fetch_xor_explicit((volatile __local atomic_ulong *)(lul + 11), w, memory_order_relaxed,
                              memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (uint k = 0; k < N32; k++)
            atomic_add(lsum32 + k, l32[k]);
        for (uint k = 0; k < N64; k++)
            atom_add(lsum64 + k, l64[k]);
    }
}
