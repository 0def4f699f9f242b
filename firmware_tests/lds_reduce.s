// lds_reduce (assembly): out[g] = sum of in[g*128 .. g*128+127] (uint, mod 2^32).
// Block 128 = 4 waves. Tree reduction in LDS, fully unrolled: ds_load_2addr_b32 with
// offset1 = w dwords, s_barrier_signal -1 / s_barrier_wait -1 between steps (every
// wave executes every barrier, also when its EXEC is zero).
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	lds_reduce
	.p2align	8
	.type	lds_reduce,@function
lds_reduce:
	s_load_b128 s[4:7], s[0:1], 0x0          ; src, dst
	v_lshl_or_b32 v1, ttmp9, 7, v0           ; g*128 + t
	v_lshlrev_b32_e32 v2, 2, v1
	v_lshlrev_b32_e32 v3, 2, v0              ; LDS byte address t*4
	s_wait_kmcnt 0x0
	global_load_b32 v4, v2, s[4:5]
	s_wait_loadcnt 0x0
	ds_store_b32 v3, v4
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 64, v0               ; t < 64
	s_cbranch_execz .Lskip64
	ds_load_2addr_b32 v[5:6], v3 offset1:64
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip64:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 32, v0               ; t < 32
	s_cbranch_execz .Lskip32
	ds_load_2addr_b32 v[5:6], v3 offset1:32
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip32:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 16, v0               ; t < 16
	s_cbranch_execz .Lskip16
	ds_load_2addr_b32 v[5:6], v3 offset1:16
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip16:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 8, v0               ; t < 8
	s_cbranch_execz .Lskip8
	ds_load_2addr_b32 v[5:6], v3 offset1:8
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip8:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 4, v0               ; t < 4
	s_cbranch_execz .Lskip4
	ds_load_2addr_b32 v[5:6], v3 offset1:4
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip4:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 2, v0               ; t < 2
	s_cbranch_execz .Lskip2
	ds_load_2addr_b32 v[5:6], v3 offset1:2
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip2:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	s_mov_b32 s10, exec_lo
	v_cmpx_gt_u32_e32 1, v0               ; t < 1
	s_cbranch_execz .Lskip1
	ds_load_2addr_b32 v[5:6], v3 offset1:1
	s_wait_dscnt 0x0
	v_add_nc_u32_e32 v5, v5, v6
	ds_store_b32 v3, v5
.Lskip1:
	s_mov_b32 exec_lo, s10
	s_wait_dscnt 0x0
	s_barrier_signal -1
	s_barrier_wait -1
	v_cmpx_eq_u32_e32 0, v0
	s_cbranch_execz .Lend
	ds_load_b32 v5, v3
	s_lshl_b32 s11, ttmp9, 2
	v_mov_b32_e32 v6, s11
	s_wait_dscnt 0x0
	global_store_b32 v6, v5, s[6:7]
.Lend:
	s_endpgm
.Lfunc_end_lds_reduce:
	.size	lds_reduce, .Lfunc_end_lds_reduce-lds_reduce

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel lds_reduce
		.amdhsa_group_segment_fixed_size 512
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
		.amdhsa_next_free_vgpr 7
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
    .group_segment_fixed_size: 512
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 128
    .name:           lds_reduce
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 128
      - 1
      - 1
    .sgpr_count:     14
    .symbol:         lds_reduce.kd
    .vgpr_count:     7
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
