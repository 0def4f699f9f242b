// Integer division and remainder of every width, signed and unsigned, by per-lane divisors
// (C semantics: the quotient truncates toward zero, the remainder takes the dividend's sign).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void corpus_intdiv(__global const int *a, __global const int *b, __global const long *la,
                   __global const long *lb, __global int *o32, __global long *o64)
{
    size_t i = get_global_id(0);
    int x = a[i], y = b[i];
    uint ux = (uint)x, uy = (uint)y;
    short sx = (short)x, sy = (short)y;
    uchar cx = (uchar)x, cy = (uchar)y;
    __global int *o = o32 + i * 8;
    o[0] = x / y;
    o[1] = x % y;
    o[2] = (int)(ux / uy);
    o[3] = (int)(ux % uy);
    o[4] = (short)(sx / sy);
    o[5] = (short)(sx % sy);
    o[6] = (char)((char)cx / (char)cy);
    o[7] = (uchar)(cx % cy);
    long lx = la[i], ly = lb[i];
    __global long *q = o64 + i * 4;
    q[0] = lx / ly;
    q[1] = lx % ly;
    q[2] = (long)((ulong)lx / (ulong)ly);
    q[3] = (long)((ulong)lx % (ulong)ly);
}
