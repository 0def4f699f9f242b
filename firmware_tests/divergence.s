// divergence (assembly): same semantics as divergence.cl, with hand-written EXEC
// management: if/else with s_and_saveexec / s_xor / s_and_not1_saveexec and
// s_cbranch_execz skips, a nested v_cmpx, a loop whose lanes leave at different trip
// counts (v_cmpx at the top, s_and_b32 exec on an early exit, s_cbranch_execnz), and a
// Collatz loop with a cap (VOP3 compares into SGPR masks).
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	divergence
	.p2align	8
	.type	divergence,@function
divergence:
	s_load_b128 s[4:7], s[0:1], 0x0          ; src, dst
	v_lshl_or_b32 v1, ttmp9, 6, v0           ; i
	v_lshlrev_b32_e32 v2, 2, v1              ; i*4
	v_mul_u32_u24_e32 v3, 12, v1             ; i*12
	s_wait_kmcnt 0x0
	global_load_b32 v4, v2, s[4:5]           ; x
	s_wait_loadcnt 0x0
	; ---- r = (x & 1) ? ((x & 2) ? (3x+1) ^ 0x55 : 3x+1+7) : x >> 1
	v_and_b32_e32 v5, 1, v4
	v_cmp_ne_u32_e32 vcc_lo, 0, v5
	s_and_saveexec_b32 s10, vcc_lo           ; s10 = all, exec = odd lanes
	s_xor_b32 s10, exec_lo, s10              ; s10 = even lanes
	s_cbranch_execz .Lr_else
	v_lshl_add_u32 v6, v4, 1, v4             ; 3x
	v_add_nc_u32_e32 v6, 1, v6               ; 3x + 1
	s_mov_b32 s11, exec_lo                   ; odd lanes
	v_and_b32_e32 v7, 2, v4
	v_cmpx_ne_u32_e32 0, v7                  ; exec = odd & (x & 2)
	s_cbranch_execz .Lr_inner_else
	v_xor_b32_e32 v6, 0x55, v6
.Lr_inner_else:
	s_and_not1_b32 exec_lo, s11, exec_lo     ; odd & !(x & 2)
	s_cbranch_execz .Lr_inner_end
	v_add_nc_u32_e32 v6, 7, v6
.Lr_inner_end:
	s_mov_b32 exec_lo, s11
.Lr_else:
	s_and_not1_saveexec_b32 s10, s10         ; s10 = odd lanes, exec = even lanes
	s_cbranch_execz .Lr_end
	v_lshrrev_b32_e32 v6, 1, v4
.Lr_end:
	s_or_b32 exec_lo, exec_lo, s10           ; all lanes again
	; ---- acc = x; for k < n=(x>>4)&31: acc = acc*31 + (k ^ r); break if (acc & 0xff) == 0x5a
	v_bfe_u32 v7, v4, 4, 5                   ; n
	v_mov_b32_e32 v8, v4                     ; acc
	v_mov_b32_e32 v9, 0                      ; k
	s_mov_b32 s12, exec_lo
.Lloop1:
	v_cmpx_lt_u32_e32 v9, v7                 ; lanes with k < n stay
	s_cbranch_execz .Lloop1_end
	v_xor_b32_e32 v10, v9, v6
	v_mul_lo_u32 v8, v8, 31
	v_add_nc_u32_e32 v8, v8, v10
	v_add_nc_u32_e32 v9, 1, v9
	v_and_b32_e32 v10, 0xff, v8
	v_cmp_ne_u32_e32 vcc_lo, 0x5a, v10
	s_and_b32 exec_lo, exec_lo, vcc_lo       ; early exit
	s_cbranch_execnz .Lloop1
.Lloop1_end:
	s_mov_b32 exec_lo, s12
	; ---- c = (x & 0xffff) + 1; while (c != 1 && steps < 100) { c = odd ? 3c+1 : c/2; steps++ }
	v_and_b32_e32 v11, 0xffff, v4
	v_add_nc_u32_e32 v11, 1, v11
	v_mov_b32_e32 v12, 0
.Lloop2:
	v_cmp_ne_u32_e64 s13, 1, v11
	v_cmp_gt_u32_e64 s14, 0x64, v12          ; 100 > steps
	s_and_b32 s13, s13, s14
	s_and_b32 exec_lo, exec_lo, s13
	s_cbranch_execz .Lloop2_end
	v_and_b32_e32 v13, 1, v11
	v_cmp_eq_u32_e32 vcc_lo, 1, v13
	s_mov_b32 s15, exec_lo
	s_and_b32 exec_lo, exec_lo, vcc_lo       ; odd c
	s_cbranch_execz .Lskip_odd
	v_lshl_add_u32 v14, v11, 1, v11
	v_add_nc_u32_e32 v11, 1, v14
.Lskip_odd:
	s_and_not1_b32 exec_lo, s15, vcc_lo      ; even c
	s_cbranch_execz .Lskip_even
	v_lshrrev_b32_e32 v11, 1, v11
.Lskip_even:
	s_mov_b32 exec_lo, s15
	v_add_nc_u32_e32 v12, 1, v12
	s_branch .Lloop2
.Lloop2_end:
	s_mov_b32 exec_lo, s12
	global_store_b32 v3, v6, s[6:7]
	global_store_b32 v3, v8, s[6:7] offset:4
	global_store_b32 v3, v12, s[6:7] offset:8
	s_endpgm
.Lfunc_end_divergence:
	.size	divergence, .Lfunc_end_divergence-divergence

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel divergence
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
		.amdhsa_next_free_vgpr 15
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
        .name:           src
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
    .max_flat_workgroup_size: 64
    .name:           divergence
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     18
    .symbol:         divergence.kd
    .vgpr_count:     15
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
