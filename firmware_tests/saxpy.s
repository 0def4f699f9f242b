// saxpy (assembly): y[i] = fma(a, x[i], y[i]) for i < n (v_fma_f32, one rounding).
// Same semantics as saxpy.cl. 64-bit VGPR addresses (v_lshlrev_b64, v_add_co_u32 /
// v_add_co_ci_u32) and a v_cmpx bounds check.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	saxpy
	.p2align	8
	.type	saxpy,@function
saxpy:
	s_load_b128 s[4:7], s[0:1], 0x0          ; y, x
	s_load_b64 s[8:9], s[0:1], 0x10          ; a, n
	v_lshl_or_b32 v1, ttmp9, 6, v0           ; i
	v_mov_b32_e32 v2, 0
	s_wait_kmcnt 0x0
	v_cmpx_gt_u32_e32 s9, v1                 ; exec &= n > i
	s_cbranch_execz .Lend
	v_lshlrev_b64_e32 v[2:3], 2, v[1:2]      ; byte offset (64-bit)
	v_add_co_u32 v4, vcc_lo, s4, v2
	v_add_co_ci_u32_e32 v5, vcc_lo, s5, v3, vcc_lo
	v_add_co_u32 v6, vcc_lo, s6, v2
	v_add_co_ci_u32_e32 v7, vcc_lo, s7, v3, vcc_lo
	global_load_b32 v8, v[4:5], off          ; y[i]
	global_load_b32 v9, v[6:7], off          ; x[i]
	s_wait_loadcnt 0x0
	v_fma_f32 v8, s8, v9, v8                 ; a*x + y
	global_store_b32 v[4:5], v8, off
.Lend:
	s_endpgm
.Lfunc_end_saxpy:
	.size	saxpy, .Lfunc_end_saxpy-saxpy

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel saxpy
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 24
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 10
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
        .name:           yv
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           xv
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .name:           alpha
        .offset:         16
        .size:           4
        .type_name:      float
        .value_kind:     by_value
      - .name:           n_elems
        .offset:         20
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 24
    .max_flat_workgroup_size: 64
    .name:           saxpy
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     14
    .symbol:         saxpy.kd
    .vgpr_count:     10
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
