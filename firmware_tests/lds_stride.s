// lds_stride (assembly): LDS bank-conflict sweep. One group of 64 (2 waves).
// LDS[0..2047] = src[0..2047] (each work-item copies 32 dwords), barrier, then every
// lane L = t & 31 issues 8 back-to-back ds_load_b32 at dword addresses L*S + r
// (r = 0..7, the immediate offset), then combines them oldest first with partial
// s_wait_dscnt 7..0: acc = 0; acc = acc*33 + LDS[L*S + r]; dst[t] = acc.
// S (0..64) is a kernel argument: a wave32 access costs gcd(S, 32) LDS cycles.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	lds_stride
	.p2align	8
	.type	lds_stride,@function
lds_stride:
	s_load_b128 s[4:7], s[0:1], 0x0          ; src, dst
	s_load_b32 s8, s[0:1], 0x10              ; stride S (dwords)
	v_lshlrev_b32_e32 v1, 2, v0              ; t*4
	s_mov_b32 s9, 0                          ; fill base (bytes)
	s_wait_kmcnt 0x0
.Lfill:
	v_add_nc_u32_e32 v3, s9, v1              ; byte address (j*64 + t)*4
	global_load_b32 v20, v3, s[4:5] offset:0
	global_load_b32 v21, v3, s[4:5] offset:256
	global_load_b32 v22, v3, s[4:5] offset:512
	global_load_b32 v23, v3, s[4:5] offset:768
	global_load_b32 v24, v3, s[4:5] offset:1024
	global_load_b32 v25, v3, s[4:5] offset:1280
	global_load_b32 v26, v3, s[4:5] offset:1536
	global_load_b32 v27, v3, s[4:5] offset:1792
	s_wait_loadcnt 0x0
	ds_store_b32 v3, v20 offset:0
	ds_store_b32 v3, v21 offset:256
	ds_store_b32 v3, v22 offset:512
	ds_store_b32 v3, v23 offset:768
	ds_store_b32 v3, v24 offset:1024
	ds_store_b32 v3, v25 offset:1280
	ds_store_b32 v3, v26 offset:1536
	ds_store_b32 v3, v27 offset:1792
	s_add_co_i32 s9, s9, 0x800
	s_cmp_lt_u32 s9, 0x2000
	s_cbranch_scc1 .Lfill
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	v_and_b32_e32 v4, 31, v0                 ; lane
	v_mul_lo_u32 v5, v4, s8                  ; lane*S
	v_lshlrev_b32_e32 v5, 2, v5              ; bytes
	ds_load_b32 v10, v5 offset:0
	ds_load_b32 v11, v5 offset:4
	ds_load_b32 v12, v5 offset:8
	ds_load_b32 v13, v5 offset:12
	ds_load_b32 v14, v5 offset:16
	ds_load_b32 v15, v5 offset:20
	ds_load_b32 v16, v5 offset:24
	ds_load_b32 v17, v5 offset:28
	v_mov_b32_e32 v6, 0
	s_wait_dscnt 7
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v10
	s_wait_dscnt 6
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v11
	s_wait_dscnt 5
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v12
	s_wait_dscnt 4
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v13
	s_wait_dscnt 3
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v14
	s_wait_dscnt 2
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v15
	s_wait_dscnt 1
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v16
	s_wait_dscnt 0
	v_lshl_add_u32 v6, v6, 5, v6             ; acc *= 33
	v_add_nc_u32_e32 v6, v6, v17
	global_store_b32 v1, v6, s[6:7]
	s_endpgm
.Lfunc_end_lds_stride:
	.size	lds_stride, .Lfunc_end_lds_stride-lds_stride

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel lds_stride
		.amdhsa_group_segment_fixed_size 8192
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 20
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 28
		.amdhsa_next_free_sgpr 12
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
        .name:           src
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           dst
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .name:           stride
        .offset:         16
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
    .group_segment_fixed_size: 8192
    .kernarg_segment_align: 8
    .kernarg_segment_size: 20
    .max_flat_workgroup_size: 64
    .name:           lds_stride
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     14
    .symbol:         lds_stride.kd
    .vgpr_count:     28
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
