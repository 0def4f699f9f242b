/*
 * dcu_device.h -- OpenCL C functions the device library lacks.
 *
 * Kernels are compiled with clang's OpenCL declarations (-finclude-default-header)
 * and AMD's device library (opencl.bc, ocml.bc, ockl.bc) linked as builtin bitcode:
 * work-item, synchronisation, atomic, math and sub-group functions are the library's
 * (see dcu/toolchain.py). This header, force-included after clang's declarations,
 * adds only what neither provides for amdgcn.
 *
 * cl_khr_extended_bit_ops (OpenCL 3.0 extension; clang declares it for SPIR only and
 * the library does not define it): the 32-bit forms, on the ISA's bit-field
 * instructions (v_bfe_u32, v_bfe_i32, v_bfi_b32, v_bfrev_b32).
 */
#ifndef DCU_DEVICE_H
#define DCU_DEVICE_H

#define DCU_INL static inline __attribute__((overloadable, always_inline))

DCU_INL uint bitfield_extract_unsigned(uint x, uint off, uint w) { return __builtin_amdgcn_ubfe(x, off, w); }
DCU_INL int bitfield_extract_signed(int x, uint off, uint w) { return __builtin_amdgcn_sbfe(x, off, w); }
DCU_INL uint bitfield_insert(uint base, uint ins, uint off, uint w) {
    uint m = (w >= 32u ? 0xffffffffu : ((1u << w) - 1u)) << off;
    return (base & ~m) | ((ins << off) & m);
}
DCU_INL uint bit_reverse(uint x) { return __builtin_bitreverse32(x); }

#undef DCU_INL
#endif /* DCU_DEVICE_H */
