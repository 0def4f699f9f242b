// vector_add (assembly): c[i] = a[i] + b[i] for i < n, float, 64-wide groups.
// Same semantics as vector_add.cl. Uses the SADDR form of global loads (64-bit base in
// SGPRs + 32-bit VGPR byte offset) and an s_and_saveexec / s_cbranch_execz bounds check.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	vector_add
	.p2align	8
	.type	vector_add,@function
vector_add:
	s_load_b128 s[4:7], s[0:1], 0x0          ; a, b
	s_load_b64 s[8:9], s[0:1], 0x10          ; c
	s_load_b32 s10, s[0:1], 0x18             ; n
	v_lshl_or_b32 v1, ttmp9, 6, v0           ; i = group*64 + local
	s_wait_kmcnt 0x0
	v_cmp_gt_u32_e32 vcc_lo, s10, v1         ; n > i
	s_and_saveexec_b32 s11, vcc_lo
	s_cbranch_execz .Lend
	v_lshlrev_b32_e32 v2, 2, v1
	global_load_b32 v3, v2, s[4:5]
	global_load_b32 v4, v2, s[6:7]
	s_wait_loadcnt 0x0
	v_add_f32_e32 v3, v3, v4
	global_store_b32 v2, v3, s[8:9]
.Lend:
	s_endpgm
.Lfunc_end_vector_add:
	.size	vector_add, .Lfunc_end_vector_add-vector_add

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel vector_add
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 28
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 5
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
        .name:           a
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           b
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           c
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .name:           n_elems
        .offset:         24
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 28
    .max_flat_workgroup_size: 64
    .name:           vector_add
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     14
    .symbol:         vector_add.kd
    .vgpr_count:     5
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
