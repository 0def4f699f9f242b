// global_atomics (assembly): same semantics and buffer layout as global_atomics.cl, but
// every lane issues its own atomic (no wave-level combining): global_atomic_inc_u32
// (bound 0xffffffff, i.e. +1) with return for the ticket, add/min/max/and/or/xor/sub
// without return, max_u32 and swap (on xc[0]) with return, a per-lane cmpswap retry loop
// (DATA = {new, compare}), and add with return on 16 counters.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	global_atomics
	.p2align	8
	.type	global_atomics,@function
global_atomics:
	s_load_b256 s[4:11], s[0:1], 0x0         ; src, ctr, ticket, xold
	s_load_b128 s[12:15], s[0:1], 0x20       ; aold, xc
	v_lshl_or_b32 v1, ttmp9, 6, v0           ; i
	v_lshlrev_b32_e32 v2, 2, v1              ; i*4
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v5, -1
	s_wait_kmcnt 0x0
	global_load_b32 v4, v2, s[4:5]           ; x
	global_atomic_inc_u32 v6, v3, v5, s[6:7] th:TH_ATOMIC_RETURN   ; c[0]++
	s_wait_loadcnt 0x0
	global_store_b32 v2, v6, s[8:9]          ; ticket[i]
	global_atomic_add_u32 v3, v4, s[6:7] offset:4
	global_atomic_min_i32 v3, v4, s[6:7] offset:8
	global_atomic_max_i32 v3, v4, s[6:7] offset:12
	global_atomic_min_u32 v3, v4, s[6:7] offset:16
	global_atomic_max_u32 v7, v3, v4, s[6:7] offset:20 th:TH_ATOMIC_RETURN
	v_or_b32_e32 v8, 0x80000001, v4
	global_atomic_and_b32 v3, v8, s[6:7] offset:24
	v_and_b32_e32 v8, 0xf0f0f0, v4
	global_atomic_or_b32 v3, v8, s[6:7] offset:28
	global_atomic_xor_b32 v3, v4, s[6:7] offset:32
	global_atomic_swap_b32 v9, v3, v4, s[14:15] th:TH_ATOMIC_RETURN   ; xc[0]
	s_wait_loadcnt 0x0
	global_store_b32 v2, v9, s[10:11]        ; xold[i]
	global_load_b32 v10, v3, s[6:7] offset:40   ; first guess of c[10]
	s_wait_loadcnt 0x0
	s_mov_b32 s16, exec_lo
.Lcas:
	v_add_nc_u32_e32 v11, v10, v4            ; new value
	v_mov_b32_e32 v12, v10                   ; compare value
	global_atomic_cmpswap_b32 v13, v3, v[11:12], s[6:7] offset:40 th:TH_ATOMIC_RETURN
	s_wait_loadcnt 0x0
	v_cmp_ne_u32_e32 vcc_lo, v13, v10        ; failed: retry with the value seen
	v_mov_b32_e32 v10, v13
	s_and_b32 exec_lo, exec_lo, vcc_lo
	s_cbranch_execnz .Lcas
	s_mov_b32 exec_lo, s16
	v_and_b32_e32 v8, 0xff, v4
	global_atomic_sub_u32 v3, v8, s[6:7] offset:44
	v_and_b32_e32 v14, 15, v1
	v_lshlrev_b32_e32 v14, 2, v14
	global_atomic_add_u32 v15, v14, v1, s[6:7] offset:64 th:TH_ATOMIC_RETURN
	s_wait_loadcnt 0x0
	global_store_b32 v2, v15, s[12:13]       ; aold[i]
	s_endpgm
.Lfunc_end_global_atomics:
	.size	global_atomics, .Lfunc_end_global_atomics-global_atomics

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel global_atomics
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 48
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 18
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
        .name:           ctr
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           ticket
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           xold
        .offset:         24
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           aold
        .offset:         32
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           xc
        .offset:         40
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 48
    .max_flat_workgroup_size: 64
    .name:           global_atomics
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     20
    .symbol:         global_atomics.kd
    .vgpr_count:     16
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
