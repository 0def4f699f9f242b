// Integer ALU mix: 20 results per work-item in out[i*20 + k].
#define NOUT 20
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void int_alu(__global const uint *a, __global const uint *b, __global uint *out)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    uint x = a[i], y = b[i];
    uint s = y & 31u;
    __global uint *o = out + i * NOUT;
    o[0] = x * y;                                     // v_mul_lo_u32
    o[1] = mul_hi(x, y);                              // v_mul_hi_u32
    o[2] = (uint)mul_hi((int)x, (int)y);              // v_mul_hi_i32
    o[3] = mul24(x, y);                               // v_mul_u32_u24
    o[4] = (uint)mul24((int)x, (int)y);               // v_mul_i32_i24
    o[5] = x << s;                                    // v_lshlrev_b32
    o[6] = x >> s;                                    // v_lshrrev_b32
    o[7] = (uint)((int)x >> s);                       // v_ashrrev_i32
    o[8] = bitfield_extract_unsigned(x, s, (y >> 8) & 31u);   // v_bfe_u32
    o[9] = (uint)bitfield_extract_signed((int)x, s, (y >> 16) & 31u); // v_bfe_i32
    o[10] = bitfield_insert(x, y, (y >> 8) & 15u, 8u);       // v_bfi_b32
    o[11] = bit_reverse(x);                           // v_bfrev_b32
    o[12] = popcount(x) + popcount(y);                // v_bcnt_u32_b32
    o[13] = ctz(x & 0xfff00000u);                     // v_ctz_i32_b32 (32 for 0)
    o[14] = clz(x >> (y & 7u));                       // v_clz_i32_u32 (32 for 0)
    o[15] = rotate(x, y);                             // v_alignbit_b32
    o[16] = (uint)min((int)x, (int)y) ^ max(x, y);    // v_min_i32, v_max_u32
    o[17] = (uint)max((int)x, (int)y) + min(x, y);    // v_max_i32, v_min_u32
    ulong p = upsample(x, y) + upsample(y, x);        // 64-bit add
    o[18] = (uint)p;
    o[19] = (uint)(p >> 32);
}
