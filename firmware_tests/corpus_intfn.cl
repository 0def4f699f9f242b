// OpenCL integer built-ins: 24-bit multiplies, high halves, bit counts, rotates, absolute
// differences, saturating and halving arithmetic, upsample.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_intfn(__global const uint *a, __global const uint *b, __global const uint *c,
                  __global const ulong *la, __global const ulong *lb,
                  __global uint *o32, __global ulong *o64)
{
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i], z = c[i];
    int sx = (int)x, sy = (int)y, sz = (int)z;
    uint x24 = x & 0xffffffu, y24 = y & 0xffffffu;
    int sx24 = (int)(x << 8) >> 8, sy24 = (int)(y << 8) >> 8;
    __global uint *o = o32 + i * 32;
    o[0] = mad24(x24, y24, z);
    o[1] = (uint)mad24(sx24, sy24, sz);
    o[2] = mul24(x24, y24);
    o[3] = (uint)mul24(sx24, sy24);
    o[4] = mul_hi(x, y);
    o[5] = (uint)mul_hi(sx, sy);
    o[6] = mad_hi(x, y, z);
    o[7] = clz(x >> (y & 31u));
    o[8] = (uint)clz((uchar)x) | ((uint)clz((ushort)y) << 8);
    o[9] = popcount(x) | (popcount((uchar)y) << 8) | (popcount((short)z) << 16);
    o[10] = ctz(x & (x - (y & 1u)));
    o[11] = rotate(x, y);
    o[12] = (uint)rotate((uchar)x, (uchar)y) | ((uint)rotate((ushort)y, (ushort)z) << 16);
    // halved: the device library's abs_diff(int) and abs_diff(long) subtract with LLVM's nsw flag,
    // so a difference beyond the signed range is undefined there (OpenCL C says |x - y| exactly)
    o[13] = abs_diff(sx >> 1, sy >> 1);
    o[14] = abs_diff(x, y);
    o[15] = abs(sx);
    o[16] = (uint)abs_diff((char)x, (char)y) | ((uint)abs_diff((short)y, (short)z) << 16);
    o[17] = (uint)add_sat(sx, sy);
    o[18] = add_sat(x, y);
    o[19] = (uint)sub_sat(sx, sy);
    o[20] = sub_sat(x, y);
    o[21] = (uint)(uchar)add_sat((char)x, (char)y) | ((uint)(uchar)add_sat((uchar)y, (uchar)z) << 8)
          | ((uint)(ushort)sub_sat((short)z, (short)x) << 16);
    o[22] = (uint)(ushort)sub_sat((ushort)x, (ushort)y) | ((uint)(ushort)add_sat((short)y, (short)z) << 16);
    o[23] = (uint)hadd(sx, sy);
    o[24] = rhadd(x, y);
    o[25] = (uint)mad_sat(sx >> 8, sy >> 8, sz);
    o[26] = upsample((ushort)x, (ushort)y);
    o[27] = (uint)max(sx, sy) ^ min(x, y);
    o[28] = (uint)clamp(sx, -1000, 1000);
    o[29] = bitselect(x, y, z);
    o[30] = (uint)mul_hi((short)x, (short)y) & 0xffffu;
    o[31] = mad_sat(x >> 4, y >> 4, z);
    ulong p = la[i], q = lb[i];
    __global ulong *r = o64 + i * 10;
    r[0] = mul_hi(p, q);
    r[1] = (ulong)mul_hi((long)p, (long)q);
    r[2] = clz(p >> (q & 63u));
    r[3] = popcount(p);
    r[4] = rotate(p, q);
    r[5] = (ulong)add_sat((long)p, (long)q);
    r[6] = sub_sat(p, q);
    r[7] = abs_diff((long)p >> 1, (long)q >> 1);
    r[8] = (ulong)upsample((int)x, y);
    r[9] = p * q + (p >> 3) - (q << 5);
}
