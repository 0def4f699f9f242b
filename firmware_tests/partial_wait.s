// partial_wait (assembly): 20 independent global_load_b32 in flight, then
// s_wait_loadcnt 19, 18, ..., 0, consuming the oldest result first. Relies on loadcnt
// retiring in issue order within a wave.
// i = g*64 + t; v_j = src[j*128 + i] (j = 0..19); acc = 0; acc = acc*3 ^ v_j; dst[i] = acc.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	partial_wait
	.p2align	8
	.type	partial_wait,@function
partial_wait:
s_load_b128 s[4:7], s[0:1], 0x0          ; src, dst
v_lshl_or_b32 v0, ttmp9, 6, v0           ; i
v_lshlrev_b32_e32 v1, 2, v0
v_mov_b32_e32 v2, 0                      ; acc
s_wait_kmcnt 0x0
global_load_b32 v10, v1, s[4:5] offset:0
global_load_b32 v11, v1, s[4:5] offset:512
global_load_b32 v12, v1, s[4:5] offset:1024
global_load_b32 v13, v1, s[4:5] offset:1536
global_load_b32 v14, v1, s[4:5] offset:2048
global_load_b32 v15, v1, s[4:5] offset:2560
global_load_b32 v16, v1, s[4:5] offset:3072
global_load_b32 v17, v1, s[4:5] offset:3584
global_load_b32 v18, v1, s[4:5] offset:4096
global_load_b32 v19, v1, s[4:5] offset:4608
global_load_b32 v20, v1, s[4:5] offset:5120
global_load_b32 v21, v1, s[4:5] offset:5632
global_load_b32 v22, v1, s[4:5] offset:6144
global_load_b32 v23, v1, s[4:5] offset:6656
global_load_b32 v24, v1, s[4:5] offset:7168
global_load_b32 v25, v1, s[4:5] offset:7680
global_load_b32 v26, v1, s[4:5] offset:8192
global_load_b32 v27, v1, s[4:5] offset:8704
global_load_b32 v28, v1, s[4:5] offset:9216
global_load_b32 v29, v1, s[4:5] offset:9728
s_wait_loadcnt 19                      ; load 0 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v10
s_wait_loadcnt 18                      ; load 1 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v11
s_wait_loadcnt 17                      ; load 2 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v12
s_wait_loadcnt 16                      ; load 3 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v13
s_wait_loadcnt 15                      ; load 4 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v14
s_wait_loadcnt 14                      ; load 5 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v15
s_wait_loadcnt 13                      ; load 6 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v16
s_wait_loadcnt 12                      ; load 7 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v17
s_wait_loadcnt 11                      ; load 8 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v18
s_wait_loadcnt 10                      ; load 9 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v19
s_wait_loadcnt 9                      ; load 10 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v20
s_wait_loadcnt 8                      ; load 11 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v21
s_wait_loadcnt 7                      ; load 12 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v22
s_wait_loadcnt 6                      ; load 13 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v23
s_wait_loadcnt 5                      ; load 14 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v24
s_wait_loadcnt 4                      ; load 15 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v25
s_wait_loadcnt 3                      ; load 16 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v26
s_wait_loadcnt 2                      ; load 17 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v27
s_wait_loadcnt 1                      ; load 18 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v28
s_wait_loadcnt 0                      ; load 19 (and all older) done
v_lshl_add_u32 v2, v2, 1, v2             ; acc *= 3
v_xor_b32_e32 v2, v2, v29
global_store_b32 v1, v2, s[6:7]
s_endpgm
.Lfunc_end_partial_wait:
	.size	partial_wait, .Lfunc_end_partial_wait-partial_wait

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel partial_wait
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
		.amdhsa_next_free_vgpr 30
		.amdhsa_next_free_sgpr 8
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
    .name:           partial_wait
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     10
    .symbol:         partial_wait.kd
    .vgpr_count:     30
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
