// mem_widths (assembly): same semantics and arguments as mem_widths.cl, with explicit
// 8/16/64/96/128-bit global and LDS accesses: global_load_u8/i8/u16/i16/b64/b96/b128,
// ds_store_b8/b16/b64/b96/b128, ds_load_u8/i8/u16/i16/b64/b96/b128,
// global_store_b8/b16/b32/b64/b96/b128. The sign-extending values also make a round
// trip through LDS (ds_load_i8/i16 of the work-item's own element).
// LDS: l8 @0, l16 @64, l64 @256, l96 @768 (16-byte slots), l128 @1792, s8 @2816, s16 @2880.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	mem_widths
	.p2align	8
	.type	mem_widths,@function
mem_widths:
s_load_b512 s[4:19], s[0:1], 0x0         ; a8 s8 a16 s16 a64 a96 a128 o8
s_load_b256 s[20:27], s[0:1], 0x40       ; o16 o64 o96 o128
s_load_b64 s[28:29], s[0:1], 0x60        ; osum
v_lshlrev_b32_e32 v1, 1, v0              ; t*2
v_lshlrev_b32_e32 v2, 3, v0              ; t*8
v_mul_u32_u24_e32 v3, 12, v0             ; t*12
v_lshlrev_b32_e32 v4, 4, v0              ; t*16
v_lshlrev_b32_e32 v5, 2, v0              ; t*4
s_wait_kmcnt 0x0
global_load_u8 v10, v0, s[4:5]
global_load_i8 v11, v0, s[6:7]
global_load_u16 v12, v1, s[8:9]
global_load_i16 v13, v1, s[10:11]
global_load_b64 v[14:15], v2, s[12:13]
global_load_b96 v[16:18], v3, s[14:15]
global_load_b128 v[20:23], v4, s[16:17]
s_wait_loadcnt 0x0
v_add_nc_u32_e32 v10, 1, v10
ds_store_b8 v0, v10
v_xor_b32_e32 v12, 0x8001, v12
ds_store_b16 v1, v12 offset:64
v_add_co_u32 v14, vcc_lo, v14, 1
v_add_co_ci_u32_e32 v15, vcc_lo, 1, v15, vcc_lo   ; + 0x100000001
ds_store_b64 v2, v[14:15] offset:256
v_add_nc_u32_e32 v16, 1, v16
v_xor_b32_e32 v17, v17, v18
v_not_b32_e32 v18, v18
ds_store_b96 v4, v[16:18] offset:768
v_add_nc_u32_e32 v20, 1, v20
v_add_nc_u32_e32 v21, 2, v21
v_add_nc_u32_e32 v22, 3, v22
v_add_nc_u32_e32 v23, 4, v23
ds_store_b128 v4, v[20:23] offset:1792
ds_store_b8 v0, v11 offset:2816
ds_store_b16 v1, v13 offset:2880
s_wait_dscnt 0x0
s_barrier_signal -1
s_barrier_wait -1
ds_load_i8 v24, v0 offset:2816
ds_load_i16 v25, v1 offset:2880
v_xor_b32_e32 v6, 5, v0                  ; r = t ^ 5
v_lshlrev_b32_e32 v7, 1, v6
v_lshlrev_b32_e32 v8, 3, v6
v_lshlrev_b32_e32 v9, 4, v6
ds_load_u8 v26, v6
ds_load_u16 v27, v7 offset:64
ds_load_b64 v[28:29], v8 offset:256
ds_load_b96 v[30:32], v9 offset:768
ds_load_b128 v[36:39], v9 offset:1792
s_wait_dscnt 0x5                         ; the two sign-extending loads
v_add_nc_u32_e32 v24, v24, v25
global_store_b32 v5, v24, s[28:29]
s_wait_dscnt 0x0
global_store_b8 v0, v26, s[18:19]
global_store_b16 v1, v27, s[20:21]
global_store_b64 v2, v[28:29], s[22:23]
global_store_b96 v3, v[30:32], s[24:25]
global_store_b128 v4, v[36:39], s[26:27]
s_endpgm
.Lfunc_end_mem_widths:
	.size	mem_widths, .Lfunc_end_mem_widths-mem_widths

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel mem_widths
		.amdhsa_group_segment_fixed_size 3072
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 104
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 40
		.amdhsa_next_free_sgpr 30
		.amdhsa_reserve_vcc 1
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_workgroup_processor_mode 0
		.amdhsa_memory_ordered 1
	.end_amdhsa_kernel
	.text

	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .is_const:       true
        .name:           a8
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           s8
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           a16
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           s16
        .offset:         24
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           a64
        .offset:         32
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           a96
        .offset:         40
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           a128
        .offset:         48
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           o8
        .offset:         56
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           o16
        .offset:         64
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           o64
        .offset:         72
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           o96
        .offset:         80
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           o128
        .offset:         88
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           osum
        .offset:         96
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 3072
    .kernarg_segment_align: 8
    .kernarg_segment_size: 104
    .max_flat_workgroup_size: 64
    .name:           mem_widths
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     32
    .symbol:         mem_widths.kd
    .vgpr_count:     40
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
