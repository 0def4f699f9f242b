// out[W x H] = transpose(in[H x W]) through a padded 16x17 LDS tile.
#define TS 16
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void transpose(__global const uint *in, __global uint *out, uint W, uint H)
{
    __local uint tile[TS][TS + 1];
    uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1);
    uint bx = (uint)get_group_id(0) * TS, by = (uint)get_group_id(1) * TS;
    tile[ty][tx] = in[(by + ty) * W + bx + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(bx + ty) * H + by + tx] = tile[tx][ty];
}
