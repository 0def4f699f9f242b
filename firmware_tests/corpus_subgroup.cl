// Sub-group functions (cl_khr_subgroups) on wave32: a sub-group is a wave. Reductions and
// scans of integers, min/max of floats, broadcast, any/all.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_subgroup(__global const int *xs, __global const float *fs, __global int *oi,
                     __global float *of)
{
    size_t i = get_global_id(0);
    int x = xs[i];
    float f = fs[i];
    __global int *r = oi + 12 * i;
    r[0] = get_sub_group_size() | (get_max_sub_group_size() << 8) | (get_num_sub_groups() << 16);
    r[1] = get_sub_group_id() | (get_sub_group_local_id() << 8);
    r[2] = sub_group_reduce_add(x);
    r[3] = sub_group_reduce_min(x);
    r[4] = sub_group_reduce_max(x);
    r[5] = (int)sub_group_reduce_max((uint)x);
    r[6] = sub_group_scan_inclusive_add(x);
    r[7] = sub_group_scan_exclusive_add(x);
    r[8] = sub_group_scan_inclusive_max(x);
    r[9] = sub_group_broadcast(x, 5u);
    r[10] = sub_group_any(x > 1000) | (sub_group_all(x > -1000000) << 1) | (sub_group_all(x > 0) << 2);
    r[11] = sub_group_scan_exclusive_min(x);
    of[2 * i + 0] = sub_group_reduce_min(f);
    of[2 * i + 1] = sub_group_reduce_max(f);
}
