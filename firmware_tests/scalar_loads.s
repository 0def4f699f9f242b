// scalar_loads (assembly): scalar-memory-heavy kernel, one wave of 32.
// Loads a constant table with s_load_b32, _b64, _b96, _b128, _b256, _b512 (immediate
// offsets) and s_load_b32 with an SGPR offset, runs a set of SALU operations on the
// loaded values, and sums tbl[0..63] in a loop of s_load_b32 with an SGPR offset.
// The 54 results are packed into two VGPRs with v_writelane_b32 and stored:
// out[0..34]  = tbl[K] for K = 0,1,2,3,4,5, 8..11, 16..23, 32..47, 49
// out[35] sum of those 35, out[36] xor, out[37] d0*d1, out[38] d2 << (d3&31),
// out[39] d4 >> (d5&31), out[40] (int)d8 >> (d9&31), out[41] (d10 >> 3) & 0x7f,
// out[42] minu(d11,d16), out[43] maxi(d17,d18), out[44] popcount(d19),
// out[45] ctz(d20) (-1 if 0), out[46] brev(d21), out[47] ~d22, out[48] maxu(d23,d32),
// out[49:51] = d34:d33 + d36:d35 (64-bit, s_add_co_u32/s_add_co_ci_u32),
// out[51] = sum(tbl[0..63]), out[52:54] = d41:d40 + d43:d42 (s_add_nc_u64).
// (dK = tbl[K]); out[54..63] untouched.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	scalar_loads
	.p2align	8
	.type	scalar_loads,@function
scalar_loads:
	s_load_b64 s[2:3], s[0:1], 0x0           ; tbl
	s_load_b64 s[4:5], s[0:1], 0x8           ; dst
	s_wait_kmcnt 0x0
	s_load_b32 s8, s[2:3], 0x0               ; d0
	s_load_b64 s[10:11], s[2:3], 0x4         ; d1 d2
	s_load_b96 s[12:14], s[2:3], 0xc         ; d3 d4 d5
	s_load_b128 s[16:19], s[2:3], 0x20       ; d8..d11
	s_load_b256 s[24:31], s[2:3], 0x40       ; d16..d23
	s_load_b512 s[32:47], s[2:3], 0x80       ; d32..d47
	s_mov_b32 s6, 0xc0
	s_load_b32 s9, s[2:3], s6 offset:0x4     ; d49 (SGPR offset + immediate)
	s_wait_kmcnt 0x0
	s_mov_b32 s50, s8
	s_mov_b32 s51, s8
	s_add_co_i32 s50, s50, s10
	s_xor_b32 s51, s51, s10
	s_add_co_i32 s50, s50, s11
	s_xor_b32 s51, s51, s11
	s_add_co_i32 s50, s50, s12
	s_xor_b32 s51, s51, s12
	s_add_co_i32 s50, s50, s13
	s_xor_b32 s51, s51, s13
	s_add_co_i32 s50, s50, s14
	s_xor_b32 s51, s51, s14
	s_add_co_i32 s50, s50, s16
	s_xor_b32 s51, s51, s16
	s_add_co_i32 s50, s50, s17
	s_xor_b32 s51, s51, s17
	s_add_co_i32 s50, s50, s18
	s_xor_b32 s51, s51, s18
	s_add_co_i32 s50, s50, s19
	s_xor_b32 s51, s51, s19
	s_add_co_i32 s50, s50, s24
	s_xor_b32 s51, s51, s24
	s_add_co_i32 s50, s50, s25
	s_xor_b32 s51, s51, s25
	s_add_co_i32 s50, s50, s26
	s_xor_b32 s51, s51, s26
	s_add_co_i32 s50, s50, s27
	s_xor_b32 s51, s51, s27
	s_add_co_i32 s50, s50, s28
	s_xor_b32 s51, s51, s28
	s_add_co_i32 s50, s50, s29
	s_xor_b32 s51, s51, s29
	s_add_co_i32 s50, s50, s30
	s_xor_b32 s51, s51, s30
	s_add_co_i32 s50, s50, s31
	s_xor_b32 s51, s51, s31
	s_add_co_i32 s50, s50, s32
	s_xor_b32 s51, s51, s32
	s_add_co_i32 s50, s50, s33
	s_xor_b32 s51, s51, s33
	s_add_co_i32 s50, s50, s34
	s_xor_b32 s51, s51, s34
	s_add_co_i32 s50, s50, s35
	s_xor_b32 s51, s51, s35
	s_add_co_i32 s50, s50, s36
	s_xor_b32 s51, s51, s36
	s_add_co_i32 s50, s50, s37
	s_xor_b32 s51, s51, s37
	s_add_co_i32 s50, s50, s38
	s_xor_b32 s51, s51, s38
	s_add_co_i32 s50, s50, s39
	s_xor_b32 s51, s51, s39
	s_add_co_i32 s50, s50, s40
	s_xor_b32 s51, s51, s40
	s_add_co_i32 s50, s50, s41
	s_xor_b32 s51, s51, s41
	s_add_co_i32 s50, s50, s42
	s_xor_b32 s51, s51, s42
	s_add_co_i32 s50, s50, s43
	s_xor_b32 s51, s51, s43
	s_add_co_i32 s50, s50, s44
	s_xor_b32 s51, s51, s44
	s_add_co_i32 s50, s50, s45
	s_xor_b32 s51, s51, s45
	s_add_co_i32 s50, s50, s46
	s_xor_b32 s51, s51, s46
	s_add_co_i32 s50, s50, s47
	s_xor_b32 s51, s51, s47
	s_add_co_i32 s50, s50, s9
	s_xor_b32 s51, s51, s9
	s_mul_i32 s52, s8, s10
	s_and_b32 s53, s12, 31
	s_lshl_b32 s53, s11, s53
	s_lshr_b32 s54, s13, s14
	s_ashr_i32 s55, s16, s17
	s_bfe_u32 s56, s18, 0x70003
	s_min_u32 s57, s19, s24
	s_max_i32 s58, s25, s26
	s_bcnt1_i32_b32 s59, s27
	s_ctz_i32_b32 s60, s28
	s_brev_b32 s61, s29
	s_not_b32 s62, s30
	s_cmp_gt_u32 s31, s32
	s_cselect_b32 s63, s31, s32
	s_add_co_u32 s64, s33, s35
	s_add_co_ci_u32 s65, s34, s36
	s_mov_b32 s6, 0
	s_mov_b32 s66, 0
.Lsum:
	s_load_b32 s7, s[2:3], s6 offset:0x0
	s_wait_kmcnt 0x0
	s_add_co_i32 s66, s66, s7
	s_add_co_i32 s6, s6, 4
	s_cmp_lt_u32 s6, 0x100
	s_cbranch_scc1 .Lsum
	s_add_nc_u64 s[68:69], s[40:41], s[42:43]
	v_writelane_b32 v1, s8, 0
	v_writelane_b32 v1, s10, 1
	v_writelane_b32 v1, s11, 2
	v_writelane_b32 v1, s12, 3
	v_writelane_b32 v1, s13, 4
	v_writelane_b32 v1, s14, 5
	v_writelane_b32 v1, s16, 6
	v_writelane_b32 v1, s17, 7
	v_writelane_b32 v1, s18, 8
	v_writelane_b32 v1, s19, 9
	v_writelane_b32 v1, s24, 10
	v_writelane_b32 v1, s25, 11
	v_writelane_b32 v1, s26, 12
	v_writelane_b32 v1, s27, 13
	v_writelane_b32 v1, s28, 14
	v_writelane_b32 v1, s29, 15
	v_writelane_b32 v1, s30, 16
	v_writelane_b32 v1, s31, 17
	v_writelane_b32 v1, s32, 18
	v_writelane_b32 v1, s33, 19
	v_writelane_b32 v1, s34, 20
	v_writelane_b32 v1, s35, 21
	v_writelane_b32 v1, s36, 22
	v_writelane_b32 v1, s37, 23
	v_writelane_b32 v1, s38, 24
	v_writelane_b32 v1, s39, 25
	v_writelane_b32 v1, s40, 26
	v_writelane_b32 v1, s41, 27
	v_writelane_b32 v1, s42, 28
	v_writelane_b32 v1, s43, 29
	v_writelane_b32 v1, s44, 30
	v_writelane_b32 v1, s45, 31
	v_writelane_b32 v2, s46, 0
	v_writelane_b32 v2, s47, 1
	v_writelane_b32 v2, s9, 2
	v_writelane_b32 v2, s50, 3
	v_writelane_b32 v2, s51, 4
	v_writelane_b32 v2, s52, 5
	v_writelane_b32 v2, s53, 6
	v_writelane_b32 v2, s54, 7
	v_writelane_b32 v2, s55, 8
	v_writelane_b32 v2, s56, 9
	v_writelane_b32 v2, s57, 10
	v_writelane_b32 v2, s58, 11
	v_writelane_b32 v2, s59, 12
	v_writelane_b32 v2, s60, 13
	v_writelane_b32 v2, s61, 14
	v_writelane_b32 v2, s62, 15
	v_writelane_b32 v2, s63, 16
	v_writelane_b32 v2, s64, 17
	v_writelane_b32 v2, s65, 18
	v_writelane_b32 v2, s66, 19
	v_writelane_b32 v2, s68, 20
	v_writelane_b32 v2, s69, 21
	v_lshlrev_b32_e32 v3, 2, v0
	global_store_b32 v3, v1, s[4:5]
	s_mov_b32 exec_lo, 0x3fffff              ; lanes 0..21
	global_store_b32 v3, v2, s[4:5] offset:128
	s_endpgm
.Lfunc_end_scalar_loads:
	.size	scalar_loads, .Lfunc_end_scalar_loads-scalar_loads

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel scalar_loads
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 16
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 4
		.amdhsa_next_free_sgpr 70
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
        .name:           tbl
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           dst
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 32
    .name:           scalar_loads
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 32
      - 1
      - 1
    .sgpr_count:     72
    .symbol:         scalar_loads.kd
    .vgpr_count:     4
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
