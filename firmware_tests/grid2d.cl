// 2-D grid, no reqd_work_group_size: row width from get_global_size(0) (hidden args).
// ids[y*W + x] = x | y << 16; grp[y*W + x] = lx | ly << 8 | gx << 16 | gy << 24.
__kernel void grid2d(__global uint *ids, __global uint *grp)
{
    uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);
    uint W = (uint)get_global_size(0);
    ids[y * W + x] = x | (y << 16);
    grp[y * W + x] = (uint)get_local_id(0) | ((uint)get_local_id(1) << 8) |
                     ((uint)get_group_id(0) << 16) | ((uint)get_group_id(1) << 24);
}
