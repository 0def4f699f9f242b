"""Firmware test manifest: kernels, launch shapes, inputs and numpy golden functions.

Every entry of TESTS names a kernel source in this directory (gfx1200 assembly ``.s``
or OpenCL C ``.cl``), the launch shape, a generator of kernel arguments and a golden
function written from the kernel's intended semantics (never from simulator output).

    args = test.make_args(np.random.default_rng(seed))   # buffers and numpy scalars
    expected = test.golden(args)                          # {arg index: final contents}
    ... run the kernel on copies of args, giving `outputs` (same list layout) ...
    check_outputs(test, args, outputs)                    # raises AssertionError

Golden results are bit-exact unless ``ulp_tol`` > 0 (then float32 results may differ by
that many units in the last place). Order-dependent results (atomics with return, the
wave X / wave Y experiment) are left out of the golden dict and verified by ``check``.

This module imports only numpy and the standard library.
"""
from __future__ import annotations

import os
from fractions import Fraction

import numpy as np

from .corpus import entries as _corpus_entries
from .entry import FirmwareTest

HERE = os.path.dirname(os.path.abspath(__file__))
M32 = 0xFFFFFFFF


def path(test: FirmwareTest) -> str:
    """Absolute path of the test's kernel source."""
    return os.path.join(HERE, test.source)


# --------------------------------------------------------------------------- exact FP32

def fma32(a, b, c) -> np.ndarray:
    """Exact float32 fused multiply-add fl32(a*b + c), vectorised, ties to even.

    The float32 product is exact in float64 (48 significant bits, no under/overflow),
    the sum is formed with TwoSum and rounded to odd at 53 bits, so the final rounding
    to float32 (24 bits <= 53 - 2) is a single correct rounding."""
    a64 = np.asarray(a, np.float32).astype(np.float64)
    b64 = np.asarray(b, np.float32).astype(np.float64)
    c64 = np.asarray(c, np.float32).astype(np.float64)
    a64, b64, c64 = np.broadcast_arrays(a64, b64, c64)
    with np.errstate(all="ignore"):
        p = a64 * b64
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
    bits = np.ascontiguousarray(s).view(np.int64).copy()
    fix = (err != 0) & ((bits & 1) == 0) & np.isfinite(s)
    up = np.signbit(err) == np.signbit(s)          # |exact| > |s|: move away from zero
    bits = np.where(fix, np.where(up, bits + 1, bits - 1), bits)
    with np.errstate(all="ignore"):
        return bits.view(np.float64).astype(np.float32)


def round_f32(x: Fraction) -> np.float32:
    """Round an exact rational to float32, ties to even (reference, scalar)."""
    if x == 0:
        return np.float32(0.0)
    sign = -1 if x < 0 else 1
    m = abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    q = Fraction(2) ** (max(e, -126) - 23)          # quantum of the target binade
    n = m / q
    r = n.numerator // n.denominator
    rem = n - r
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and r % 2 == 1):
        r += 1
    v = r * q
    if v >= Fraction(2) ** 128:
        return np.float32(sign * np.inf)
    return np.float32(sign * float(v))


def fma32_exact(a, b, c) -> np.float32:
    """Scalar reference FMA through Fractions (slow; used to test fma32)."""
    a, b, c = np.float32(a), np.float32(b), np.float32(c)
    fa, fb, fc = (Fraction(float(v)) for v in (a, b, c))
    s = fa * fb + fc
    if s == 0:
        # exact zero: -0 only when both terms are zeros of negative sign (round to nearest)
        p_neg = bool(np.signbit(a)) != bool(np.signbit(b))
        both_zero = fa * fb == 0 and fc == 0
        return np.float32(-0.0) if (both_zero and p_neg and np.signbit(c)) else np.float32(0.0)
    return round_f32(s)


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 units in the last place (monotone integer mapping)."""
    def key(x):
        i = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(a) - key(b))


def check_outputs(test: FirmwareTest, inputs: list, outputs: list) -> None:
    """Compare a run's final buffers with the golden results, then run test.check.

    inputs: the argument list given to the launch (unmodified); outputs: the final
    contents of every argument (same indices; scalars may be None)."""
    for idx, exp in test.golden(inputs).items():
        got = np.asarray(outputs[idx])
        exp = np.asarray(exp)
        assert got.shape == exp.shape and got.dtype == exp.dtype, (
            f"{test.name}: arg {idx}: got {got.dtype}{got.shape}, expected {exp.dtype}{exp.shape}")
        if test.ulp_tol and exp.dtype == np.float32:
            d = ulp_diff(got, exp)
            bad = np.flatnonzero(d > test.ulp_tol)
        else:
            g = np.ascontiguousarray(got).reshape(-1).view(np.uint8).reshape(exp.size, -1)
            e = np.ascontiguousarray(exp).reshape(-1).view(np.uint8).reshape(exp.size, -1)
            bad = np.flatnonzero((g != e).any(axis=1))
        if bad.size:
            i = bad[0]
            raise AssertionError(
                f"{test.name}: arg {idx}: {bad.size} of {exp.size} elements differ; "
                f"first at {i}: got {got.reshape(-1)[i]!r}, expected {exp.reshape(-1)[i]!r}")
    if test.check is not None:
        test.check(inputs, outputs)


# --------------------------------------------------------------------------- helpers

def _u32(rng, n, lo=0, hi=1 << 32):
    return rng.integers(lo, hi, size=n, dtype=np.uint64).astype(np.uint32)


def _i64(x):
    return np.asarray(x).astype(np.uint32).astype(np.int32).astype(np.int64)


def _popcount32(x):
    x = np.asarray(x, np.uint64)
    return np.array([bin(int(v)).count("1") for v in x.ravel()], np.uint64).reshape(x.shape)


def _ctz32(x):
    return np.array([(int(v) & -int(v)).bit_length() - 1 if v else 32 for v in np.ravel(x)],
                    np.uint64).reshape(np.shape(x))


def _clz32(x):
    return np.array([32 - int(v).bit_length() for v in np.ravel(x)], np.uint64).reshape(np.shape(x))


def _brev32(x):
    return np.array([int(f"{int(v):032b}"[::-1], 2) for v in np.ravel(x)], np.uint64).reshape(np.shape(x))


def _sum_u32(x):
    return int(np.asarray(x, np.uint64).sum()) & M32


# --------------------------------------------------------------------------- vector_add / saxpy

N_VEC, VEC_GRID = 1000, 16   # 16 x 64 = 1024 work-items, last wave partly out of range


def vector_add_args(rng):
    n = VEC_GRID * 64
    a = rng.uniform(-100, 100, n).astype(np.float32)
    b = rng.uniform(-100, 100, n).astype(np.float32)
    c = np.full(n, -7.0, np.float32)
    return [a, b, c, np.uint32(N_VEC)]


def vector_add_golden(args):
    a, b, c, n = args
    out = c.copy()
    out[:int(n)] = a[:int(n)] + b[:int(n)]
    return {2: out}


def saxpy_args(rng):
    n = VEC_GRID * 64
    y = rng.uniform(-10, 10, n).astype(np.float32)
    x = rng.uniform(-10, 10, n).astype(np.float32)
    return [y, x, np.float32(rng.uniform(-3, 3)), np.uint32(N_VEC)]


def saxpy_golden(args):
    y, x, a, n = args
    out = y.copy()
    n = int(n)
    out[:n] = fma32(np.float32(a), x[:n], y[:n])
    return {0: out}


# --------------------------------------------------------------------------- int_alu

INT_N = 256


def int_alu_args(rng):
    a = _u32(rng, INT_N)
    b = _u32(rng, INT_N)
    a[:8] = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x00F00000, 0x00800000, 0xFFF00000]
    b[:8] = [0, 0xFFFFFFFF, 31, 0x00101F1F, 0x1F1F0F20, 0x00FFFFFF, 0xFF800000, 3]
    a[8:16] = 0          # ctz / clz of 0
    a[16:24] &= 0x000FFFFF
    return [a, b, np.zeros(INT_N * 20, np.uint32)]


def int_alu_ref(a, b):
    x = np.asarray(a, np.uint32).astype(np.uint64)
    y = np.asarray(b, np.uint32).astype(np.uint64)
    xi, yi = _i64(x), _i64(y)
    s = y & 31
    o = np.zeros((x.size, 20), np.uint64)
    o[:, 0] = (x * y) & M32
    o[:, 1] = (x * y) >> 32
    o[:, 2] = ((xi * yi) >> 32).astype(np.uint64) & M32
    o[:, 3] = ((x & 0xFFFFFF) * (y & 0xFFFFFF)) & M32
    sx = ((x & 0xFFFFFF).astype(np.int64) ^ 0x800000) - 0x800000
    sy = ((y & 0xFFFFFF).astype(np.int64) ^ 0x800000) - 0x800000
    o[:, 4] = (sx * sy).astype(np.uint64) & M32
    o[:, 5] = (x << s) & M32
    o[:, 6] = x >> s
    o[:, 7] = (xi >> s.astype(np.int64)).astype(np.uint64) & M32
    w = (y >> 8) & 31
    o[:, 8] = (x >> s) & ((np.uint64(1) << w) - np.uint64(1))
    w2 = ((y >> 16) & 31).astype(np.int64)
    t = (xi >> s.astype(np.int64)) & ((np.int64(1) << w2) - 1)
    sign = np.where(w2 > 0, (t >> np.maximum(w2 - 1, 0)) & 1, 0)
    t = t - (sign << w2)
    o[:, 9] = t.astype(np.uint64) & M32
    off = (y >> 8) & 15
    m = (np.uint64(0xFF) << off) & M32
    o[:, 10] = (x & (~m & M32)) | ((y << off) & m)
    o[:, 11] = _brev32(x)
    o[:, 12] = _popcount32(x) + _popcount32(y)
    o[:, 13] = _ctz32(x & 0xFFF00000)
    o[:, 14] = _clz32(x >> (y & 7))
    o[:, 15] = ((x << s) | (x >> (32 - s))) & M32          # rotl; x >> 32 == 0 for s == 0
    o[:, 16] = (np.minimum(xi, yi).astype(np.uint64) & M32) ^ np.maximum(x, y)
    o[:, 17] = ((np.maximum(xi, yi).astype(np.uint64) & M32) + np.minimum(x, y)) & M32
    p = (((x << 32) | y) + ((y << 32) | x))  # uint64 wraps
    o[:, 18] = p & M32
    o[:, 19] = p >> 32
    return o.astype(np.uint32).reshape(-1)


def int_alu_golden(args):
    return {2: int_alu_ref(args[0], args[1])}


# --------------------------------------------------------------------------- float_ops

FLT_N = 256


def float_ops_args(rng):
    n = FLT_N
    mag = rng.uniform(1.0, 100.0, n).astype(np.float32)
    x = np.where(rng.random(n) < 0.5, -mag, mag).astype(np.float32)
    k = rng.integers(1, 100, n)
    sel = rng.random(n)
    x = np.where(sel < 0.15, (np.sign(x) * (k + 0.5)).astype(np.float32), x)        # ties
    x = np.where((sel >= 0.15) & (sel < 0.25), (np.sign(x) * k).astype(np.float32), x)  # integers
    y = np.where(rng.random(n) < 0.5, -1, 1) * rng.uniform(1.0, 100.0, n)
    y = y.astype(np.float32)
    sel = rng.random(n)
    y = np.where(sel < 0.15, x, y)                                          # equal
    y = np.where((sel >= 0.15) & (sel < 0.3), (x + np.float32(0.25)).astype(np.float32), y)
    y = np.where(np.abs(y) < 1.0, np.float32(1.5), y).astype(np.float32)
    ints = rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype(np.int32)
    ints[:4] = [0, -1, 2147483647, -2147483648]
    ints[4:8] = [16777217, 16777219, -16777217, 33554435]   # rounding in cvt_f32_i32
    return [x, y, ints, np.zeros(n * 20, np.uint32)]


def float_ops_ref(x, y, k):
    x = np.asarray(x, np.float32)
    y = np.asarray(y, np.float32)
    k = np.asarray(k, np.int32)
    f = np.float32
    o = np.zeros((x.size, 20), np.uint32)
    bits = lambda v: np.asarray(v, np.float32).view(np.uint32)
    o[:, 0] = bits(np.where(x < y, x, y))
    o[:, 1] = bits(np.where(x >= y, f(1.0), f(-1.0)))
    o[:, 2] = np.where(x == y, 7, 3)
    o[:, 3] = (x != y).astype(np.uint32) + 2 * (x > y) + 4 * (x <= y)
    o[:, 4] = np.trunc(x).astype(np.int64).astype(np.uint32)
    o[:, 5] = np.trunc(np.abs(x)).astype(np.uint32)
    o[:, 6] = bits(k.astype(np.float32))
    o[:, 7] = bits(k.view(np.uint32).astype(np.float32))
    o[:, 8] = bits(np.floor(x))
    o[:, 9] = bits(np.ceil(x))
    o[:, 10] = bits(np.trunc(x))
    o[:, 11] = bits(np.rint(x))
    o[:, 12] = bits(np.fmin(x, y))
    o[:, 13] = bits(np.fmax(x, y))
    o[:, 14] = bits(x * y)
    o[:, 15] = bits(x + y)
    o[:, 16] = bits(x - y)
    o[:, 17] = bits(np.abs(x) * f(-2.0))
    o[:, 18] = bits(-x)
    o[:, 19] = bits(np.where(np.abs(y - x) < f(1.0), x, f(0.5) * y))
    return o.reshape(-1)


def float_ops_golden(args):
    return {3: float_ops_ref(args[0], args[1], args[2])}


# --------------------------------------------------------------------------- transcendental

TR_N = 256


def transcendental_args(rng):
    n = TR_N
    x = np.exp2(rng.uniform(-10, 10, n))
    x = np.where((x > 0.7) & (x < 1.5), x * 4.0, x).astype(np.float32)   # log2 near 0 avoided
    e = rng.uniform(-20, 20, n).astype(np.float32)
    return [x, e, np.zeros(n * 5, np.float32)]


def transcendental_golden(args):
    x = args[0].astype(np.float64)
    e = args[1].astype(np.float64)
    o = np.stack([1.0 / x, 1.0 / np.sqrt(x), np.sqrt(x), np.exp2(e), np.log2(x)], axis=1)
    return {2: o.astype(np.float32).reshape(-1)}


# --------------------------------------------------------------------------- divergence

DIV_N = 256


def divergence_args(rng):
    x = _u32(rng, DIV_N)
    x[:32] &= ~np.uint32(1)            # wave 0: every lane even -> the odd branch is skipped (execz)
    x[32:64] |= np.uint32(3)           # wave 1: every lane odd with bit 1 set
    x[64:72] = [0, 1, 2, 3, 0xFFFFFFFF, 0x5A, 0xFFFF, 0x10000]
    return [x, np.zeros(DIV_N * 3, np.uint32)]


def divergence_ref(xs):
    out = np.zeros((len(xs), 3), np.uint32)
    for i, x in enumerate(int(v) for v in xs):
        if x & 1:
            r = (x * 3 + 1) & M32
            r = (r ^ 0x55) if (x & 2) else (r + 7) & M32
        else:
            r = x >> 1
        n = (x >> 4) & 31
        acc = x
        for k in range(n):
            acc = (acc * 31 + (k ^ r)) & M32
            if (acc & 0xFF) == 0x5A:
                break
        c, steps = (x & 0xFFFF) + 1, 0
        while c != 1 and steps < 100:
            c = ((3 * c + 1) & M32) if (c & 1) else c >> 1
            steps += 1
        out[i] = (r, acc, steps)
    return out.reshape(-1)


def divergence_golden(args):
    return {1: divergence_ref(args[0])}


# --------------------------------------------------------------------------- LDS reductions

def reduce_args(block, groups):
    def make(rng):
        return [_u32(rng, block * groups), np.zeros(groups, np.uint32)]
    return make


def reduce_golden(block):
    def golden(args):
        v = args[0].astype(np.uint64).reshape(-1, block)
        return {1: (v.sum(axis=1) & M32).astype(np.uint32)}
    return golden


def wgp_reduce_args(rng):
    return [_u32(rng, 512 * 2), np.zeros(4, np.uint32)]


def wgp_reduce_golden(args):
    v = args[0].reshape(-1, 512)
    out = np.zeros(4, np.uint32)
    out[0::2] = (v.astype(np.uint64).sum(axis=1) & M32).astype(np.uint32)
    out[1::2] = v.max(axis=1)
    return {1: out}


# --------------------------------------------------------------------------- LDS stride sweep

STRIDE_LDS = 2048


def lds_stride_args(stride):
    def make(rng):
        return [_u32(rng, STRIDE_LDS), np.zeros(64, np.uint32), np.uint32(stride)]
    return make


def lds_stride_golden(args):
    src, _, stride = args
    s = int(stride)
    out = np.zeros(64, np.uint32)
    for t in range(64):
        lane = t & 31
        acc = 0
        for r in range(8):
            acc = (acc * 33 + int(src[lane * s + r])) & M32
        out[t] = acc
    return {1: out}


# --------------------------------------------------------------------------- histogram

HIST_GROUPS, HIST_PER_ITEM = 4, 4


def histogram_args(rng):
    n = HIST_GROUPS * HIST_PER_ITEM * 256
    v = _u32(rng, n)
    hot = rng.random(n) < 0.3                     # contention on a few bins
    v = np.where(hot, (v & ~np.uint32(63)) | np.uint32(7), v).astype(np.uint32)
    hist = np.zeros(64, np.uint32)
    hist[:4] = [1, 2, 3, 4]
    return [v, hist, np.uint32(HIST_PER_ITEM)]


def histogram_golden(args):
    v, hist, _ = args
    return {1: (hist + np.bincount(v & 63, minlength=64)).astype(np.uint32)}


# --------------------------------------------------------------------------- matmul / transpose / scan

MM_M, MM_N, MM_K = 32, 48, 64


def matmul_args(rng):
    A = rng.uniform(-1, 1, MM_M * MM_K).astype(np.float32)
    B = rng.uniform(-1, 1, MM_K * MM_N).astype(np.float32)
    return [A, B, np.zeros(MM_M * MM_N, np.float32), np.uint32(MM_N), np.uint32(MM_K)]


def matmul_golden(args):
    A = args[0].reshape(MM_M, MM_K)
    B = args[1].reshape(MM_K, MM_N)
    acc = np.zeros((MM_M, MM_N), np.float32)
    for k in range(MM_K):                          # the kernel's fma order: k = 0..K-1
        acc = fma32(A[:, k][:, None], B[k, :][None, :], acc)
    return {2: acc.reshape(-1)}


TR_W, TR_H = 48, 32


def transpose_args(rng):
    return [_u32(rng, TR_W * TR_H), np.zeros(TR_W * TR_H, np.uint32), np.uint32(TR_W), np.uint32(TR_H)]


def transpose_golden(args):
    return {1: np.ascontiguousarray(args[0].reshape(TR_H, TR_W).T).reshape(-1)}


def scan_args(rng):
    return [_u32(rng, 4 * 256), np.zeros(4 * 256, np.uint32)]


def scan_golden(args):
    v = args[0].astype(np.uint64).reshape(-1, 256)
    return {1: (np.cumsum(v, axis=1) & M32).astype(np.uint32).reshape(-1)}


# --------------------------------------------------------------------------- scalar loads

SCALAR_K = [0, 1, 2, 3, 4, 5, 8, 9, 10, 11] + list(range(16, 24)) + list(range(32, 48)) + [49]


def scalar_loads_args(rng):
    tbl = _u32(rng, 64)
    tbl[20] = (tbl[20] | 1) << np.uint32(7)       # ctz = 7
    return [tbl, np.zeros(64, np.uint32)]


def scalar_loads_golden(args):
    d = [int(v) for v in args[0]]
    s32 = lambda v: v - (1 << 32) if v & 0x80000000 else v
    out = [d[k] for k in SCALAR_K]
    out.append(sum(out) & M32)
    xv = 0
    for v in out[:35]:
        xv ^= v
    out.append(xv)
    out.append((d[0] * d[1]) & M32)
    out.append((d[2] << (d[3] & 31)) & M32)
    out.append(d[4] >> (d[5] & 31))
    out.append((s32(d[8]) >> (d[9] & 31)) & M32)
    out.append((d[10] >> 3) & 0x7F)
    out.append(min(d[11], d[16]))
    out.append(max(s32(d[17]), s32(d[18])) & M32)
    out.append(bin(d[19]).count("1"))
    out.append(((d[20] & -d[20]).bit_length() - 1) & M32 if d[20] else M32)
    out.append(int(f"{d[21]:032b}"[::-1], 2))
    out.append(~d[22] & M32)
    out.append(max(d[23], d[32]))
    s = ((d[34] << 32) | d[33]) + ((d[36] << 32) | d[35])
    out += [s & M32, (s >> 32) & M32]
    out.append(sum(d) & M32)
    s = (((d[41] << 32) | d[40]) + ((d[43] << 32) | d[42])) & ((1 << 64) - 1)
    out += [s & M32, s >> 32]
    assert len(out) == 54
    res = args[1].copy()
    res[:54] = np.array(out, np.uint64).astype(np.uint32)
    return {1: res}


# --------------------------------------------------------------------------- partial wait

PW_LOADS, PW_GROUPS = 20, 2


def partial_wait_args(rng):
    return [_u32(rng, PW_LOADS * 128), np.zeros(PW_GROUPS * 64, np.uint32)]


def partial_wait_golden(args):
    src = args[0].astype(np.uint64)
    i = np.arange(PW_GROUPS * 64)
    acc = np.zeros(i.size, np.uint64)
    for j in range(PW_LOADS):
        acc = ((acc * 3) & M32) ^ src[j * 128 + i]
    return {1: acc.astype(np.uint32)}


# --------------------------------------------------------------------------- partial wave / grids

def partial_wave_args(n, total):
    def make(rng):
        return [_u32(rng, total), np.full(total, 0xDEADBEEF, np.uint32), np.uint32(n)]
    return make


def partial_wave_golden(block):
    def golden(args):
        src, dst, n = args
        n = int(n)
        out = dst.copy()
        i = np.arange(n, dtype=np.uint64)
        out[:n] = ((src[:n].astype(np.uint64) * 2654435761 + (i % block)) & M32).astype(np.uint32)
        return {1: out}
    return golden


G2_GRID, G2_BLOCK = (6, 5), (8, 4)


def grid2d_args(rng):
    n = G2_GRID[0] * G2_BLOCK[0] * G2_GRID[1] * G2_BLOCK[1]
    return [np.zeros(n, np.uint32), np.zeros(n, np.uint32)]


def grid2d_golden(args):
    W, H = G2_GRID[0] * G2_BLOCK[0], G2_GRID[1] * G2_BLOCK[1]
    y, x = np.mgrid[0:H, 0:W].astype(np.uint32)
    ids = x | (y << 16)
    grp = (x % 8) | ((y % 4) << 8) | ((x // 8) << 16) | ((y // 4) << 24)
    return {0: ids.reshape(-1).astype(np.uint32), 1: grp.reshape(-1).astype(np.uint32)}


G3_GRID, G3_BLOCK = (3, 4, 5), (4, 4, 2)
G3_W, G3_H, G3_D = 12, 16, 10


def grid3d_args(rng):
    return [np.zeros(G3_W * G3_H * G3_D, np.uint32), np.uint32(G3_W), np.uint32(G3_H)]


def grid3d_golden(args):
    z, y, x = np.mgrid[0:G3_D, 0:G3_H, 0:G3_W].astype(np.uint32)
    return {0: (x | (y << 10) | (z << 20)).reshape(-1).astype(np.uint32)}


# --------------------------------------------------------------------------- global atomics

AT_GROUPS = 8
AT_N = AT_GROUPS * 64


def atomics_args(rng):
    v = _u32(rng, AT_N)
    v[:4] = [0x80000000, 0x7FFFFFFF, 0, 0xFFFFFFFF]
    c = np.zeros(32, np.uint32)
    c[:12] = [100, 5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0, 0xFFFFFFFF, 0,
              0x12345678, 0xCAFEF00D, 3, 1000000]
    c[16:32] = _u32(rng, 16, 0, 1 << 20)
    z = lambda: np.zeros(AT_N, np.uint32)
    return [v, c, z(), z(), z(), np.array([0xABCDEF], np.uint32)]


def atomics_golden(args):
    v, c = args[0], args[1]
    vi = v.view(np.int32)
    out = c.copy()
    out[0] = (int(c[0]) + AT_N) & M32
    out[1] = (int(c[1]) + _sum_u32(v)) & M32
    out[2] = np.int32(min(int(c.view(np.int32)[2]), int(vi.min()))).view(np.uint32)
    out[3] = np.int32(max(int(c.view(np.int32)[3]), int(vi.max()))).view(np.uint32)
    out[4] = min(int(c[4]), int(v.min()))
    out[5] = max(int(c[5]), int(v.max()))
    out[6] = int(c[6]) & int(np.bitwise_and.reduce(v | np.uint32(0x80000001)))
    out[7] = int(c[7]) | int(np.bitwise_or.reduce(v & np.uint32(0x00F0F0F0)))
    out[8] = int(c[8]) ^ int(np.bitwise_xor.reduce(v))
    out[10] = (int(c[10]) + _sum_u32(v)) & M32
    out[11] = (int(c[11]) - _sum_u32(v & np.uint32(0xFF))) & M32
    i = np.arange(AT_N, dtype=np.uint64)
    for k in range(16):
        out[16 + k] = (int(c[16 + k]) + int(i[(i & 15) == k].sum())) & M32
    return {1: out}


def atomics_check(inputs, outputs):
    v, c = inputs[0], inputs[1]
    ticket, xold, aold, xc = (np.asarray(outputs[k]) for k in (2, 3, 4, 5))
    # tickets: a permutation of c0 .. c0 + n - 1
    assert np.array_equal(np.sort(ticket), int(c[0]) + np.arange(AT_N, dtype=np.uint32)), \
        "global_atomics: tickets are not a permutation of the counter's values"
    # exchange chain: returned olds + final value == initial value + all written values
    lhs = np.sort(np.concatenate([xold, xc[:1]]))
    rhs = np.sort(np.concatenate([inputs[5][:1], v]))
    assert np.array_equal(lhs, rhs), "global_atomics: atomic_xchg returns are not a chain"
    # add with return on 16 counters: sorted olds are the exclusive prefix sums of the adds
    i = np.arange(AT_N, dtype=np.uint64)
    for k in range(16):
        lanes = np.flatnonzero((i & 15) == k)
        olds = aold[lanes].astype(np.uint64)
        adds = i[lanes]
        order = np.lexsort((adds, olds))
        exp = int(c[16 + k]) + np.concatenate([[0], np.cumsum(adds[order])[:-1]])
        assert np.array_equal(olds[order], exp.astype(np.uint64) & M32), \
            f"global_atomics: returned olds of counter {k} are not a prefix sum"


# --------------------------------------------------------------------------- memory widths

def mem_widths_args(rng):
    n = 64
    return [rng.integers(0, 256, n, dtype=np.uint8),
            rng.integers(-128, 128, n, dtype=np.int8),
            rng.integers(0, 1 << 16, n, dtype=np.uint16),
            rng.integers(-(1 << 15), 1 << 15, n, dtype=np.int16),
            rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
            _u32(rng, n * 3), _u32(rng, n * 4),
            np.zeros(n, np.uint8), np.zeros(n, np.uint16), np.zeros(n, np.uint64),
            np.zeros(n * 3, np.uint32), np.zeros(n * 4, np.uint32), np.zeros(n, np.int32)]


def mem_widths_golden(args):
    a8, s8, a16, s16, a64, a96, a128 = args[:7]
    r = np.arange(64) ^ 5
    with np.errstate(over="ignore"):
        l8 = (a8 + np.uint8(1)).astype(np.uint8)
        l64 = a64 + np.uint64(0x100000001)
    l16 = a16 ^ np.uint16(0x8001)
    v3 = a96.reshape(64, 3).copy()
    v3[:, 0] += np.uint32(1)
    v3[:, 1] ^= v3[:, 2]
    v3[:, 2] = ~v3[:, 2]
    l128 = (a128.reshape(64, 4).astype(np.uint64) + np.array([1, 2, 3, 4], np.uint64)) & M32
    return {7: l8[r], 8: l16[r], 9: l64[r], 10: v3[r].reshape(-1),
            11: l128.astype(np.uint32)[r].reshape(-1),
            12: s8.astype(np.int32) + s16.astype(np.int32)}


# --------------------------------------------------------------------------- wave X / wave Y

XY_CHAIN, XY_K, XY_CAP = 65536, 128, 4096


def wave_xy_args(unroll):
    def make(rng):
        lines = XY_CHAIN // 32                      # one chain node per 128-byte line
        perm = np.concatenate([[0], 1 + rng.permutation(lines - 1)])
        chain = _u32(rng, XY_CHAIN)
        chain[perm * 32] = (np.roll(perm, -1) * 32).astype(np.uint32)
        return [chain, _u32(rng, 32 * unroll), np.zeros(48, np.uint32),
                np.uint32(XY_K), np.uint32(XY_CAP)]
    return make


def wave_xy_golden(args):
    return {}   # all results depend on X's timing-dependent iteration count: see wave_xy_check


def wave_xy_check(unroll):
    def check(inputs, outputs):
        chain, xbuf, dst0, K, cap = inputs
        out = np.asarray(outputs[2])
        idx = 0
        for _ in range(int(K)):
            idx = int(chain[idx])
        assert int(out[0]) == idx, f"wave Y chase: got {int(out[0])}, expected {idx}"
        assert int(out[1]) == int(K), "wave Y: K not written"
        count = int(out[2])
        assert 1 <= count <= int(cap), f"wave X: iteration count {count} out of range"
        per = xbuf.reshape(unroll, 32).astype(np.uint64).sum(axis=0)
        exp = (per * count) & M32
        assert np.array_equal(out[16:48].astype(np.uint64), exp), "wave X: sums != count * row sums"
        assert np.array_equal(out[3:16], dst0[3:16]), "wave X/Y: untouched words changed"
    return check


# --------------------------------------------------------------------------- the list

def _t(name, source, kernel, grid, block, make_args, golden, tags, **kw):
    form = "asm" if source.endswith(".s") else "cl"
    return FirmwareTest(name=name, source=source, kernel=kernel, grid=tuple(grid), block=tuple(block),
                        make_args=make_args, golden=golden, tags=frozenset(set(tags) | {form}), **kw)


TESTS: list[FirmwareTest] = []
for _form, _ext in (("cl", ".cl"), ("asm", ".s")):
    TESTS += [
        _t(f"vector_add_{_form}", "vector_add" + _ext, "vector_add", (VEC_GRID,), (64,),
           vector_add_args, vector_add_golden, {"global", "divergence"}),
        _t(f"saxpy_{_form}", "saxpy" + _ext, "saxpy", (VEC_GRID,), (64,),
           saxpy_args, saxpy_golden, {"global", "fma"}),
        _t(f"int_alu_{_form}", "int_alu" + _ext, "int_alu", (INT_N // 64,), (64,),
           int_alu_args, int_alu_golden, {"global", "valu", "int"}),
        _t(f"float_ops_{_form}", "float_ops" + _ext, "float_ops", (FLT_N // 64,), (64,),
           float_ops_args, float_ops_golden, {"global", "valu", "float"}),
        _t(f"transcendental_{_form}", "transcendental" + _ext, "transcendental", (TR_N // 64,), (64,),
           transcendental_args, transcendental_golden, {"global", "valu", "trans"}, ulp_tol=1),
        _t(f"divergence_{_form}", "divergence" + _ext, "divergence", (DIV_N // 64,), (64,),
           divergence_args, divergence_golden, {"global", "divergence", "loop"}),
        _t(f"global_atomics_{_form}", "global_atomics" + _ext, "global_atomics", (AT_GROUPS,), (64,),
           atomics_args, atomics_golden, {"global", "atomic"}, check=atomics_check),
        _t(f"mem_widths_{_form}", "mem_widths" + _ext, "mem_widths", (1,), (64,),
           mem_widths_args, mem_widths_golden, {"global", "lds", "barrier", "widths"}),
        _t(f"grid3d_{_form}", "grid3d" + _ext, "grid3d", G3_GRID, G3_BLOCK,
           grid3d_args, grid3d_golden, {"global", "grid"}),
    ]

TESTS += [
    _t("lds_reduce_cl", "lds_reduce.cl", "lds_reduce", (8,), (256,),
       reduce_args(256, 8), reduce_golden(256), {"lds", "barrier", "global"}),
    _t("lds_reduce_asm", "lds_reduce.s", "lds_reduce", (8,), (128,),
       reduce_args(128, 8), reduce_golden(128), {"lds", "barrier", "global"}),
    _t("wgp_reduce_cl", "wgp_reduce.cl", "wgp_reduce", (2,), (512,),
       wgp_reduce_args, wgp_reduce_golden, {"lds", "barrier", "global", "wgp"}, wgp=True),
    _t("lds_histogram_cl", "lds_histogram.cl", "lds_histogram", (HIST_GROUPS,), (256,),
       histogram_args, histogram_golden, {"lds", "barrier", "atomic", "global"}),
    _t("matmul_tile_cl", "matmul_tile.cl", "matmul_tile", (MM_N // 16, MM_M // 16), (16, 16),
       matmul_args, matmul_golden, {"lds", "barrier", "global", "fma", "grid"}),
    _t("transpose_cl", "transpose.cl", "transpose", (TR_W // 16, TR_H // 16), (16, 16),
       transpose_args, transpose_golden, {"lds", "barrier", "global", "grid"}),
    _t("prefix_scan_cl", "prefix_scan.cl", "prefix_scan", (4,), (256,),
       scan_args, scan_golden, {"lds", "barrier", "global"}),
    _t("scalar_loads_asm", "scalar_loads.s", "scalar_loads", (1,), (32,),
       scalar_loads_args, scalar_loads_golden, {"scalar", "global"}),
    _t("partial_wait_asm", "partial_wait.s", "partial_wait", (PW_GROUPS,), (64,),
       partial_wait_args, partial_wait_golden, {"global", "ooo", "waitcnt"}),
    _t("partial_wave_cl", "partial_wave.cl", "partial_wave", (16,), (64,),
       partial_wave_args(1000, 1024), partial_wave_golden(64), {"global", "divergence", "hidden_args"}),
    _t("partial_wave_b48_cl", "partial_wave.cl", "partial_wave", (5,), (48,),
       partial_wave_args(230, 240), partial_wave_golden(48), {"global", "divergence", "hidden_args"}),
    _t("partial_wave_b40_cl", "partial_wave.cl", "partial_wave", (3,), (40,),
       partial_wave_args(101, 120), partial_wave_golden(40), {"global", "divergence", "hidden_args"}),
    _t("grid2d_cl", "grid2d.cl", "grid2d", G2_GRID, G2_BLOCK,
       grid2d_args, grid2d_golden, {"global", "grid", "hidden_args"}),
    _t("wave_xy_asm", "wave_xy.s", "wave_xy", (1,), (64,),
       wave_xy_args(4), wave_xy_golden, {"global", "lds", "barrier", "ooo"}, check=wave_xy_check(4)),
    _t("wave_xy_u8_asm", "wave_xy_u8.s", "wave_xy_u8", (1,), (64,),
       wave_xy_args(8), wave_xy_golden, {"global", "lds", "barrier", "ooo"}, check=wave_xy_check(8)),
]
TESTS += [
    _t(f"lds_stride_s{s}_asm", "lds_stride.s", "lds_stride", (1,), (64,),
       lds_stride_args(s), lds_stride_golden, {"lds", "barrier", "lds_stride"})
    for s in range(65)
]

# The OpenCL C corpus (built-ins, AMD's device library, atomics, sub-groups): corpus.py.
TESTS += _corpus_entries()

_BY_NAME = {t.name: t for t in TESTS}
assert len(_BY_NAME) == len(TESTS), "duplicate test names"


def get(name: str) -> FirmwareTest:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no firmware test {name!r}; known: {sorted(_BY_NAME)}") from None


def names(tag: str | None = None) -> list[str]:
    """Test names, optionally only those carrying `tag`."""
    return [t.name for t in TESTS if tag is None or tag in t.tags]
