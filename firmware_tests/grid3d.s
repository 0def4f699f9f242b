// grid3d (assembly): same semantics as grid3d.cl, block (4,4,2).
// Reads the workgroup ids from ttmp9 (x), ttmp7[15:0] (y), ttmp7[31:16] (z) and the
// packed work-item id v0 = x | y << 10 | z << 20.
// out[(z*H + y)*W + x] = x | y << 10 | z << 20 (global ids).
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
	.amdhsa_code_object_version 5
	.text
	.globl	grid3d
	.p2align	8
	.type	grid3d,@function
grid3d:
s_load_b128 s[4:7], s[0:1], 0x0          ; dst, W, H
v_and_b32_e32 v1, 0x3ff, v0              ; local x
v_bfe_u32 v2, v0, 10, 10                 ; local y
v_bfe_u32 v3, v0, 20, 10                 ; local z
s_and_b32 s8, ttmp7, 0xffff              ; group y
s_lshr_b32 s9, ttmp7, 16                 ; group z
v_lshl_add_u32 v1, ttmp9, 2, v1          ; x = gx*4 + lx
v_lshl_add_u32 v2, s8, 2, v2             ; y = gy*4 + ly
v_lshl_add_u32 v3, s9, 1, v3             ; z = gz*2 + lz
s_wait_kmcnt 0x0
v_mad_u32_u24 v4, v3, s7, v2             ; z*H + y
v_mad_u32_u24 v4, v4, s6, v1             ; (z*H + y)*W + x
v_lshlrev_b32_e32 v4, 2, v4
v_lshlrev_b32_e32 v5, 10, v2
v_lshlrev_b32_e32 v6, 20, v3
v_or3_b32 v5, v1, v5, v6
global_store_b32 v4, v5, s[4:5]
s_endpgm
.Lfunc_end_grid3d:
	.size	grid3d, .Lfunc_end_grid3d-grid3d

	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel grid3d
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 16
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 1
		.amdhsa_system_sgpr_workgroup_id_z 1
		.amdhsa_system_vgpr_workitem_id 2
		.amdhsa_next_free_vgpr 7
		.amdhsa_next_free_sgpr 10
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
        .name:           dst
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .name:           W
        .offset:         8
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
      - .name:           H
        .offset:         12
        .size:           4
        .type_name:      uint
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 32
    .name:           grid3d
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 4
      - 4
      - 2
    .sgpr_count:     12
    .symbol:         grid3d.kd
    .vgpr_count:     7
    .wavefront_size: 32
amdhsa.target:   amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
