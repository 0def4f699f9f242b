// Global atomics from many waves. c[] layout (uint):
//  c[0] ticket counter  (atomic_inc with return -> ticket[i])
//  c[1] sum of v        (atomic_add, no return)
//  c[2] signed min      (atomic_min on int, no return)   c[3] signed max
//  c[4] unsigned min    c[5] unsigned max                (with return, unused)
//  c[6] and  c[7] or  c[8] xor   (no return)
//  c[9] untouched
//  c[10] cmpxchg-loop sum of v
//  c[11] sub of (v & 0xff) (no return)
//  c[16 + (i & 15)] += i  (atomic_add with return -> aold[i])
//  xc[0] atomic_xchg with return -> xold[i]
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void global_atomics(__global const uint *v, __global uint *c, __global uint *ticket,
                    __global uint *xold, __global uint *aold, __global uint *xc)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    uint x = v[i];
    ticket[i] = atomic_inc(&c[0]);
    atomic_add(&c[1], x);
    atomic_min((volatile __global int *)&c[2], (int)x);
    atomic_max((volatile __global int *)&c[3], (int)x);
    atomic_min(&c[4], x);
    atomic_max(&c[5], x);
    atomic_and(&c[6], x | 0x80000001u);
    atomic_or(&c[7], x & 0x00f0f0f0u);
    atomic_xor(&c[8], x);
    xold[i] = atomic_xchg(&xc[0], x);
    uint old = c[10];
    for (;;) {
        uint seen = atomic_cmpxchg(&c[10], old, old + x);
        if (seen == old)
            break;
        old = seen;
    }
    atomic_sub(&c[11], x & 0xffu);
    aold[i] = atomic_add(&c[16u + (i & 15u)], i);
}
