// float_ops (assembly): float compares, conversions, rounding, min/max and v_cndmask;
// 20 words per work-item in out[i*20 + k]. Same semantics as float_ops.cl.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	float_ops
	.p2align	8
	.type	float_ops,@function
float_ops:
s_load_b256 s[4:11], s[0:1], 0x0         ; xs, ys, is, out
v_lshl_or_b32 v0, ttmp9, 6, v0           ; i
v_lshlrev_b32_e32 v5, 2, v0              ; i*4
v_mul_u32_u24_e32 v4, 0x50, v0           ; i*80
s_wait_kmcnt 0x0
global_load_b32 v1, v5, s[4:5]           ; x
global_load_b32 v2, v5, s[6:7]           ; y
global_load_b32 v3, v5, s[8:9]           ; k
s_wait_loadcnt 0x0
v_cmp_lt_f32_e32 vcc_lo, v1, v2
v_cndmask_b32_e32 v10, v2, v1, vcc_lo    ; o0 x < y ? x : y
v_cmp_ge_f32_e32 vcc_lo, v1, v2
v_cndmask_b32_e64 v11, -1.0, 1.0, vcc_lo ; o1
v_cmp_eq_f32_e32 vcc_lo, v1, v2
v_cndmask_b32_e64 v12, 3, 7, vcc_lo      ; o2
v_cmp_neq_f32_e64 s12, v1, v2
v_cndmask_b32_e64 v30, 0, 1, s12
v_cmp_gt_f32_e64 s13, v1, v2
v_cndmask_b32_e64 v31, 0, 2, s13
v_cmp_le_f32_e64 s14, v1, v2
v_cndmask_b32_e64 v32, 0, 4, s14
v_add3_u32 v13, v30, v31, v32            ; o3 (x!=y) + 2(x>y) + 4(x<=y)
v_cvt_i32_f32_e32 v14, v1                ; o4
v_cvt_u32_f32_e64 v15, |v1|              ; o5
v_cvt_f32_i32_e32 v16, v3                ; o6
v_cvt_f32_u32_e32 v17, v3                ; o7
v_floor_f32_e32 v18, v1                  ; o8
v_ceil_f32_e32 v19, v1                   ; o9
v_trunc_f32_e32 v20, v1                  ; o10
v_rndne_f32_e32 v21, v1                  ; o11
v_min_num_f32_e32 v22, v1, v2            ; o12
v_max_num_f32_e32 v23, v1, v2            ; o13
v_mul_f32_e32 v24, v1, v2                ; o14
v_add_f32_e32 v25, v1, v2                ; o15
v_sub_f32_e32 v26, v1, v2                ; o16
v_mul_f32_e64 v27, |v1|, -2.0            ; o17
v_xor_b32_e32 v28, 0x80000000, v1        ; o18 -x
v_sub_f32_e32 v30, v2, v1                ; y - x
v_cmp_gt_f32_e64 s15, 1.0, |v30|         ; |y - x| < 1
v_mul_f32_e32 v31, 0.5, v2
v_cndmask_b32_e64 v29, v31, v1, s15      ; o19
global_store_b128 v4, v[10:13], s[10:11]
global_store_b128 v4, v[14:17], s[10:11] offset:16
global_store_b128 v4, v[18:21], s[10:11] offset:32
global_store_b128 v4, v[22:25], s[10:11] offset:48
global_store_b128 v4, v[26:29], s[10:11] offset:64
s_endpgm
.Lfunc_end_float_ops:
	.size	float_ops, .Lfunc_end_float_ops-float_ops

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel float_ops
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 32
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 33
		.amdhsa_next_free_sgpr 16
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
        .name:           xs
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           ys
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           is
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           out
        .offset:         24
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 32
    .max_flat_workgroup_size: 64
    .name:           float_ops
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     18
    .symbol:         float_ops.kd
    .vgpr_count:     33
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
