// Divergent control flow: nested if/else, a per-lane trip-count loop with an early
// exit, and a Collatz loop with a cap. out[i*3 + {0,1,2}].
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void divergence(__global const uint *in, __global uint *out)
{
    uint i = (uint)get_group_id(0) * 64u + (uint)get_local_id(0);
    uint x = in[i];
    uint r;
    if (x & 1u) {
        r = x * 3u + 1u;
        if (x & 2u)
            r ^= 0x55u;
        else
            r += 7u;
    } else {
        r = x >> 1;
    }
    uint n = (x >> 4) & 31u;        // per-lane trip count 0..31
    uint acc = x;
    for (uint k = 0; k < n; ++k) {
        acc = acc * 31u + (k ^ r);
        if ((acc & 0xffu) == 0x5au)  // data-dependent early exit
            break;
    }
    uint c = (x & 0xffffu) + 1u, steps = 0;
    while (c != 1u && steps < 100u) {
        c = (c & 1u) ? 3u * c + 1u : c >> 1;
        ++steps;
    }
    out[i * 3u + 0u] = r;
    out[i * 3u + 1u] = acc;
    out[i * 3u + 2u] = steps;
}
