// transcendental (assembly): out[i*5 + k] = rcp(x), rsqrt(x), sqrt(x), exp2(e), log2(x)
// with v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32, v_log_f32 (about 1 ULP).
// Same semantics as transcendental.cl.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	transcendental
	.p2align	8
	.type	transcendental,@function
transcendental:
s_load_b128 s[4:7], s[0:1], 0x0          ; x, e
s_load_b64 s[8:9], s[0:1], 0x10          ; out
v_lshl_or_b32 v0, ttmp9, 6, v0           ; i
v_lshlrev_b32_e32 v1, 2, v0
v_mul_u32_u24_e32 v2, 20, v0             ; i*20
s_wait_kmcnt 0x0
global_load_b32 v3, v1, s[4:5]
global_load_b32 v4, v1, s[6:7]
s_wait_loadcnt 0x1                       ; x (the older load) is back
v_rcp_f32_e32 v5, v3
v_rsq_f32_e32 v6, v3
v_sqrt_f32_e32 v7, v3
v_log_f32_e32 v9, v3
s_wait_loadcnt 0x0
v_exp_f32_e32 v8, v4
global_store_b32 v2, v5, s[8:9]
global_store_b32 v2, v6, s[8:9] offset:4
global_store_b32 v2, v7, s[8:9] offset:8
global_store_b32 v2, v8, s[8:9] offset:12
global_store_b32 v2, v9, s[8:9] offset:16
s_endpgm
.Lfunc_end_transcendental:
	.size	transcendental, .Lfunc_end_transcendental-transcendental

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel transcendental
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
        .is_const:       true
        .name:           x
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           e
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           out
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 24
    .max_flat_workgroup_size: 64
    .name:           transcendental
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     14
    .symbol:         transcendental.kd
    .vgpr_count:     10
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
