// 8-, 16- and 64-bit integer arithmetic, loads and stores (char, uchar, short, ushort, long,
// ulong); the 64-bit products and shifts wrap (unsigned arithmetic).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_narrow(__global const char *cs, __global const short *ss, __global const long *ls,
                   __global char *oc, __global short *os, __global long *ol)
{
    size_t i = get_global_id(0);
    char a = cs[2 * i], b = cs[2 * i + 1];
    oc[4 * i + 0] = a + b;
    oc[4 * i + 1] = a * b;
    oc[4 * i + 2] = a >> 2;
    oc[4 * i + 3] = (char)((uchar)a >> 3) ^ (char)(a < b);
    short p = ss[2 * i], q = ss[2 * i + 1];
    os[4 * i + 0] = p + q;
    os[4 * i + 1] = p * q;
    os[4 * i + 2] = (short)(p >> 3) - (short)((ushort)q >> 5);
    os[4 * i + 3] = p < q ? p : (short)(q & 0x7f0f);
    ulong x = (ulong)ls[2 * i], y = (ulong)ls[2 * i + 1];
    ol[4 * i + 0] = (long)(x + y);
    ol[4 * i + 1] = (long)(x * y);
    ol[4 * i + 2] = (long)x >> (y & 63u);
    ol[4 * i + 3] = (long)((x ^ y) - (x << 7) + (y >> 9)) + ((long)x < (long)y ? 1 : 0);
}
