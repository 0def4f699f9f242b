// wave_xy (assembly): the wave X / wave Y experiment of Chips and Cheese's "RDNA 4's
// 'Out-of-Order' Memory Accesses",
// X issuing 4 independent loads per iteration. One workgroup of 64 = 2 waves.
// Wave 0 (Y) chases a pointer chain: idx = 0; K times idx = chain[idx] (each load
// depends on the last); then sets an LDS flag and writes out[0] = idx, out[1] = K.
// Wave 1 (X) loops: 4 independent global_load_b32 of xbuf[lane + 32*j] (j < 4, a
// small buffer that stays cached), s_wait_loadcnt 0, sum += all 4, count += 1, and
// leaves when it sees Y's flag in LDS (or count reaches cap). It writes out[2] = count
// and out[16 + lane] = its sum (so sum == count * sum_j xbuf[lane + 32 j] mod 2^32).
// X's count depends on timing: the golden checks the chase result and X's sums
// against X's own count.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	wave_xy
	.p2align	8
	.type	wave_xy,@function
wave_xy:
	s_load_b256 s[4:11], s[0:1], 0x0         ; chain, xbuf, dst, K, cap
	v_mov_b32_e32 v1, 0
	v_readfirstlane_b32 s12, v0
	s_lshr_b32 s12, s12, 5                   ; wave index in the group
	v_and_b32_e32 v2, 31, v0                 ; lane
	v_lshlrev_b32_e32 v3, 2, v2              ; lane*4
	s_cmp_lg_u32 s12, 0
	s_cbranch_scc1 .Lbarrier
	ds_store_b32 v1, v1                      ; Y clears the flag
	s_wait_dscnt 0x0
.Lbarrier:
	s_barrier_signal -1
	s_barrier_wait -1
	s_wait_kmcnt 0x0
	s_cmp_lg_u32 s12, 0
	s_cbranch_scc1 .Lwave_x
	; ---------------- wave Y: pointer chase
	v_mov_b32_e32 v4, 0                      ; idx
	s_mov_b32 s13, s10                       ; K (>= 1)
.Lchase:
	v_lshlrev_b32_e32 v5, 2, v4
	global_load_b32 v4, v5, s[4:5]           ; idx = chain[idx]
	s_wait_loadcnt 0x0
	s_add_co_i32 s13, s13, -1
	s_cmp_lg_u32 s13, 0
	s_cbranch_scc1 .Lchase
	v_mov_b32_e32 v6, 1
	ds_store_b32 v1, v6                      ; flag = 1
	s_wait_dscnt 0x0
	s_mov_b32 exec_lo, 1
	v_mov_b32_e32 v7, s10
	global_store_b32 v1, v4, s[8:9]          ; out[0] = idx
	global_store_b32 v1, v7, s[8:9] offset:4 ; out[1] = K
	s_endpgm
	; ---------------- wave X: 4 independent loads per iteration
.Lwave_x:
	v_mov_b32_e32 v8, 0                      ; sum
	s_mov_b32 s14, 0                         ; count
.Lxloop:
	global_load_b32 v12, v3, s[6:7] offset:0
	global_load_b32 v13, v3, s[6:7] offset:128
	global_load_b32 v14, v3, s[6:7] offset:256
	global_load_b32 v15, v3, s[6:7] offset:384
	s_wait_loadcnt 0x0
	v_add3_u32 v8, v8, v12, v13
	v_add3_u32 v8, v8, v14, v15
	s_add_co_i32 s14, s14, 1
	ds_load_b32 v9, v1                       ; Y's flag
	s_wait_dscnt 0x0
	v_readfirstlane_b32 s15, v9
	s_cmp_ge_u32 s14, s11                    ; count >= cap: stop
	s_cbranch_scc1 .Lxdone
	s_cmp_eq_u32 s15, 0
	s_cbranch_scc1 .Lxloop
.Lxdone:
	global_store_b32 v3, v8, s[8:9] offset:64   ; out[16 + lane] = sum
	s_mov_b32 exec_lo, 1
	v_mov_b32_e32 v10, s14
	global_store_b32 v1, v10, s[8:9] offset:8   ; out[2] = count
	s_endpgm
.Lfunc_end_wave_xy:
	.size	wave_xy, .Lfunc_end_wave_xy-wave_xy

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel wave_xy
		.amdhsa_group_segment_fixed_size 64
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
		.amdhsa_next_free_vgpr 16
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
        .name:           chain
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .is_const:       true
        .name:           xbuf
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           dst
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .name:           K
        .offset:         24
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
      - .name:           cap
        .offset:         28
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
    .group_segment_fixed_size: 64
    .kernarg_segment_align: 8
    .kernarg_segment_size: 32
    .max_flat_workgroup_size: 64
    .name:           wave_xy
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     18
    .symbol:         wave_xy.kd
    .vgpr_count:     16
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
