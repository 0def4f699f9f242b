// int_alu (assembly): integer ALU mix, 20 results per work-item in out[i*20 + k].
// Same semantics as int_alu.cl (see the comments there), written with the exact
// instructions: v_mul_lo/hi, 24-bit multiplies, shifts, v_bfe_u32/i32, v_bfm_b32 +
// v_bfi_b32, v_bfrev_b32, v_bcnt_u32_b32, v_ctz_i32_b32 / v_clz_i32_u32 (clamped to 32),
// v_alignbit_b32 rotate, min/max, and a 64-bit add with carry.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	int_alu
	.p2align	8
	.type	int_alu,@function
int_alu:
s_load_b128 s[4:7], s[0:1], 0x0          ; a, b
s_load_b64 s[8:9], s[0:1], 0x10          ; out
v_lshl_or_b32 v0, ttmp9, 6, v0           ; i
v_lshlrev_b32_e32 v4, 2, v0              ; i*4
v_mul_u32_u24_e32 v3, 0x50, v0           ; i*80
s_wait_kmcnt 0x0
global_load_b32 v1, v4, s[4:5]           ; x
global_load_b32 v2, v4, s[6:7]           ; y
s_wait_loadcnt 0x0
v_and_b32_e32 v5, 31, v2                 ; s = y & 31
v_mul_lo_u32 v10, v1, v2                 ; o0
v_mul_hi_u32 v11, v1, v2                 ; o1
v_mul_hi_i32 v12, v1, v2                 ; o2
v_mul_u32_u24_e32 v13, v1, v2            ; o3
v_mul_i32_i24_e32 v14, v1, v2            ; o4
v_lshlrev_b32_e32 v15, v5, v1            ; o5 x << s
v_lshrrev_b32_e32 v16, v5, v1            ; o6 x >> s
v_ashrrev_i32_e32 v17, v5, v1            ; o7 (int)x >> s
v_bfe_u32 v6, v2, 8, 5                   ; w = (y >> 8) & 31
v_bfe_u32 v18, v1, v5, v6                ; o8
v_bfe_u32 v7, v2, 16, 5                  ; w2 = (y >> 16) & 31
v_bfe_i32 v19, v1, v5, v7                ; o9
v_bfe_u32 v8, v2, 8, 4                   ; off = (y >> 8) & 15
v_bfm_b32 v9, 8, v8                      ; m = 0xff << off
v_lshlrev_b32_e32 v30, v8, v2            ; y << off
v_bfi_b32 v20, v9, v30, v1               ; o10 (m & (y<<off)) | (~m & x)
v_bfrev_b32_e32 v21, v1                  ; o11
v_bcnt_u32_b32 v31, v1, 0
v_bcnt_u32_b32 v22, v2, v31              ; o12 popcount(x) + popcount(y)
v_and_b32_e32 v31, 0xfff00000, v1
v_ctz_i32_b32_e32 v32, v31
v_min_u32_e32 v23, 32, v32               ; o13 ctz (32 for 0)
v_and_b32_e32 v31, 7, v2
v_lshrrev_b32_e32 v31, v31, v1
v_clz_i32_u32_e32 v32, v31
v_min_u32_e32 v24, 32, v32               ; o14 clz (32 for 0)
v_sub_nc_u32_e32 v31, 32, v5
v_alignbit_b32 v25, v1, v1, v31          ; o15 rotl(x, s) = rotr(x, 32 - s)
v_min_i32_e32 v31, v1, v2
v_max_u32_e32 v32, v1, v2
v_xor_b32_e32 v26, v31, v32              ; o16
v_max_i32_e32 v31, v1, v2
v_min_u32_e32 v32, v1, v2
v_add_nc_u32_e32 v27, v31, v32           ; o17
v_add_co_u32 v28, vcc_lo, v2, v1         ; o18 lo(x:y + y:x)
v_add_co_ci_u32_e32 v29, vcc_lo, v1, v2, vcc_lo   ; o19 hi
global_store_b128 v3, v[10:13], s[8:9]
global_store_b128 v3, v[14:17], s[8:9] offset:16
global_store_b128 v3, v[18:21], s[8:9] offset:32
global_store_b128 v3, v[22:25], s[8:9] offset:48
global_store_b64 v3, v[26:27], s[8:9] offset:64
global_store_b64 v3, v[28:29], s[8:9] offset:72
s_endpgm
.Lfunc_end_int_alu:
	.size	int_alu, .Lfunc_end_int_alu-int_alu

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel int_alu
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
		.amdhsa_next_free_vgpr 33
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
        .name:           out
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 24
    .max_flat_workgroup_size: 64
    .name:           int_alu
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     14
    .symbol:         int_alu.kd
    .vgpr_count:     33
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
