// 8/16/64/96/128-bit global and LDS loads and stores. Each work-item t of one 64-wide
// group writes its element to LDS at t and reads back element (t ^ 5).
typedef struct { uint x, y, z; } u3_t;
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void mem_widths(__global const uchar *a8, __global const char *s8,
                __global const ushort *a16, __global const short *s16,
                __global const ulong *a64, __global const u3_t *a96, __global const uint4 *a128,
                __global uchar *o8, __global ushort *o16, __global ulong *o64,
                __global u3_t *o96, __global uint4 *o128, __global int *osum)
{
    __local uchar l8[64];
    __local ushort l16[64];
    __local ulong l64[64];
    __local u3_t l96[64];
    __local uint4 l128[64];
    uint t = (uint)get_local_id(0);
    uint r = t ^ 5u;
    l8[t] = a8[t] + (uchar)1;
    l16[t] = a16[t] ^ (ushort)0x8001;
    l64[t] = a64[t] + 0x100000001ul;
    u3_t v3 = a96[t];
    v3.x += 1u; v3.y ^= v3.z; v3.z = ~v3.z;
    l96[t] = v3;
    l128[t] = a128[t] + (uint4)(1u, 2u, 3u, 4u);
    osum[t] = (int)s8[t] + (int)s16[t];         // sign-extending loads
    barrier(CLK_LOCAL_MEM_FENCE);
    o8[t] = l8[r];
    o16[t] = l16[r];
    o64[t] = l64[r];
    o96[t] = l96[r];
    o128[t] = l128[r];
}
