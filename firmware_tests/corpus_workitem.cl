// The library's work-item functions, which read the hidden kernel arguments (code object v5):
// no reqd_work_group_size, so sizes and counts come from hidden_group_size_*,
// hidden_block_count_* and hidden_grid_dims, get_global_id adds hidden_global_offset_*.
__kernel void corpus_workitem(__global uint *out)
{
    uint lin = (uint)get_global_linear_id();
    __global uint *o = out + 16 * lin;
    o[0] = (uint)get_global_id(0);
    o[1] = (uint)get_global_id(1);
    o[2] = (uint)get_global_id(2);
    o[3] = (uint)get_local_id(0) | ((uint)get_local_id(1) << 8) | ((uint)get_local_id(2) << 16);
    o[4] = (uint)get_group_id(0) | ((uint)get_group_id(1) << 8) | ((uint)get_group_id(2) << 16);
    o[5] = (uint)get_local_size(0) | ((uint)get_local_size(1) << 8) | ((uint)get_local_size(2) << 16);
    o[6] = (uint)get_enqueued_local_size(0) | ((uint)get_enqueued_local_size(1) << 8);
    o[7] = (uint)get_global_size(0);
    o[8] = (uint)get_global_size(1);
    o[9] = (uint)get_global_size(2);
    o[10] = (uint)get_num_groups(0) | ((uint)get_num_groups(1) << 8) | ((uint)get_num_groups(2) << 16);
    o[11] = get_work_dim();
    o[12] = (uint)get_global_offset(0) + (uint)get_global_offset(1) + (uint)get_global_offset(2);
    o[13] = (uint)get_local_linear_id();
    o[14] = lin;
    o[15] = get_sub_group_id() | (get_sub_group_local_id() << 8) | (get_num_sub_groups() << 16)
          | (get_sub_group_size() << 24);
}
