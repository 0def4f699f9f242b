// 3-D grid with reqd_work_group_size(4,4,2): out[(z*H + y)*W + x] = x | y << 10 | z << 20.
__kernel __attribute__((reqd_work_group_size(4, 4, 2)))
void grid3d(__global uint *out, uint W, uint H)
{
    uint x = (uint)get_group_id(0) * 4u + (uint)get_local_id(0);
    uint y = (uint)get_group_id(1) * 4u + (uint)get_local_id(1);
    uint z = (uint)get_group_id(2) * 2u + (uint)get_local_id(2);
    out[(z * H + y) * W + x] = x | (y << 10) | (z << 20);
}
