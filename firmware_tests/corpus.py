"""The OpenCL C corpus: ordinary kernels over the language's built-ins and AMD's device library.

Each ``corpus_*.cl`` kernel exercises one area (integer and float division, conversions,
narrow and wide types, integer and relational built-ins, atomics, sub-groups, work-item
functions, private arrays, math functions); :func:`entries` makes their manifest entries,
which ``manifest.TESTS`` includes (tag ``corpus``). Golden results are written here in numpy and Python
integers from the OpenCL C specification's definitions (OpenCL C 3.0, sections 6.2.3
conversions, 6.15 built-in functions, 7.4 accuracy). Integer and conversion results are
bit-exact; math functions are checked per function against a float64 reference within
the specification's ulp limit (:data:`MATH_ULP`), in ``check``.

This module imports only numpy and the standard library.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .entry import FirmwareTest

N = 128                       # work-items: 2 workgroups of 64
GRID, BLOCK = (2,), (64,)
I32, U32, I64, U64 = (1 << 31), (1 << 32), (1 << 63), (1 << 64)


# ------------------------------------------------------------------------ integer helpers
def _wrap(v: int, bits: int, signed: bool = True) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _sat(v: int, bits: int, signed: bool = True) -> int:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return min(max(v, lo), hi)


def _tdiv(a: int, b: int) -> int:
    """C division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trem(a: int, b: int) -> int:
    return a - b * _tdiv(a, b)


def _clz(v: int, bits: int) -> int:
    return bits - v.bit_length()


def _ctz(v: int, bits: int) -> int:
    return bits if v == 0 else (v & -v).bit_length() - 1


def _rotl(v: int, s: int, bits: int) -> int:
    s %= bits
    m = (1 << bits) - 1
    return ((v << s) | (v >> (bits - s))) & m


def _ints(a) -> list[int]:
    return [int(v) for v in np.asarray(a).ravel()]


def _special_u32(rng, n: int) -> np.ndarray:
    """Random 32-bit words with the boundary values sprinkled in."""
    v = rng.integers(0, U32, n, dtype=np.uint64).astype(np.uint32)
    small = rng.integers(0, 40, n).astype(np.uint32)
    v = np.where(rng.random(n) < 0.2, small, v)
    for k, s in enumerate([0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFF, 0xFFFF, 0x8000]):
        v[(k * 13 + 5) % n] = s
    return v


# --------------------------------------------------------------------- exact float helpers
_FORMATS = {np.float16: (11, -14, 15), np.float32: (24, -126, 127), np.float64: (53, -1022, 1023)}


def round_float(v: float, dtype, mode: str = "rte"):
    """A float (zeros and infinities kept with their sign) rounded to ``dtype`` in ``mode``."""
    v = float(v)
    return dtype(v) if v == 0 or math.isinf(v) else round_exact(Fraction(v), dtype, mode)


def round_exact(q: Fraction, dtype, mode: str = "rte"):
    """Round an exact rational to ``dtype`` (float16/32/64) in an OpenCL rounding mode:
    rte (nearest, ties to even), rtz, rtp, rtn; overflow as IEEE 754 directs."""
    p, emin, emax = _FORMATS[dtype]
    if q == 0:
        return dtype(0.0)
    neg = q < 0
    m = -q if neg else q
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    n = m / quantum
    r, rem = n.numerator // n.denominator, n - n.numerator // n.denominator
    away = {"rte": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and r % 2 == 1),
            "rtz": False, "rtp": rem > 0 and not neg, "rtn": rem > 0 and neg}[mode]
    v = (r + away) * quantum
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if v > largest:
        to_inf = mode == "rte" or (mode == "rtp" and not neg) or (mode == "rtn" and neg)
        return dtype(-np.inf if neg else np.inf) if to_inf else dtype(-float(largest) if neg else float(largest))
    return dtype(-float(v) if neg else float(v))


def _f2i(x, mode: str) -> float:
    """A float rounded to an integral value in an OpenCL rounding mode."""
    return {"rte": np.rint, "rtz": np.trunc, "rtp": np.ceil, "rtn": np.floor}[mode](float(x))


def _f2i_sat(x, mode: str, bits: int, signed: bool) -> int:
    """convert_<int>_sat_<mode>: out-of-range values give the nearest limit. For NaN OpenCL C
    recommends 0 ("should"); the device library clamps with fmax/fmin, which pass NaN over,
    so NaN gives the type's minimum (0 for the unsigned types)."""
    if np.isnan(x):
        return _sat(-(1 << 80), bits, signed)
    r = _f2i(x, mode)
    if np.isinf(r):
        return _sat(-(1 << 80) if r < 0 else 1 << 80, bits, signed)
    return _sat(int(r), bits, signed)


def _f32(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


def ulp_error(got, ref) -> np.ndarray:
    """|got - ref| in float32 units in the last place of the exact result ``ref`` (float64):
    2^(max(e, -126) - 23) for ref in [2^e, 2^(e+1)). 0 where both are the same infinity or
    both NaN; inf where only one is NaN or infinite (a float32 infinity also matches an
    exact result beyond the largest float32, the largest float32 one beyond its half ulp)."""
    got = np.asarray(got, np.float32).astype(np.float64)
    ref = np.asarray(ref, np.float64)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.abs(ref)))
        ulp = np.exp2(np.maximum(np.where(np.isfinite(e), e, -126), -126) - 23)
        err = np.abs(got - ref) / ulp
    big = np.abs(ref) > float(np.finfo(np.float32).max)
    err = np.where(big & np.isinf(got) & (np.sign(got) == np.sign(ref)), 0.0, err)
    err = np.where(np.isnan(ref) | np.isnan(got), np.where(np.isnan(ref) & np.isnan(got), 0.0, np.inf), err)
    same_inf = np.isinf(ref) & (got == ref)
    return np.where(same_inf, 0.0, np.where(np.isinf(ref) & ~same_inf, np.inf, err))


def _check_ulp(name: str, got, ref, limit: float) -> None:
    err = ulp_error(got, ref)
    bad = np.flatnonzero(~(err <= limit))
    if bad.size:
        i = bad[0]
        raise AssertionError(f"{name}: {bad.size} of {err.size} results beyond {limit} ulp; first at {i}: "
                             f"got {np.float32(np.ravel(got)[i])!r}, exact {np.ravel(ref)[i]!r} "
                             f"({err[i]:.2f} ulp)")


def _no_golden(args) -> dict:
    """For tests whose results are all checked by ``check`` (ulp limits per function)."""
    return {}


def _t(name, source, kernel, make_args, golden, tags, check=None, grid=GRID, block=BLOCK, **kw):
    return FirmwareTest(name, source, kernel, grid, block, make_args, golden, check=check,
                        tags=frozenset(tags) | {"cl", "corpus"}, **kw)


# --------------------------------------------------------------------- integer division
def intdiv_args(rng):
    a = _special_u32(rng, N).view(np.int32).copy()
    b = rng.integers(-(1 << 31), 1 << 31, N, dtype=np.int64)
    b = np.where(rng.random(N) < 0.4, rng.integers(-300, 300, N), b)
    b = np.where(rng.random(N) < 0.1, 1 << rng.integers(0, 31, N), b)
    b = np.where((b & 0xFF) == 0, b | 0x05, b).astype(np.int64)    # no zero divisor in any width
    b[:4] = [1, -1, 7, -3]
    b = b.astype(np.int32)
    b = np.where((a == -I32) & (b == -1), np.int32(-3), b)
    la = rng.integers(-(1 << 63), (1 << 63) - 1, N, dtype=np.int64)
    la = np.where(rng.random(N) < 0.3, rng.integers(-(1 << 31), 1 << 31, N), la)
    lb = rng.integers(-(1 << 63), (1 << 63) - 1, N, dtype=np.int64) >> rng.integers(0, 62, N)
    lb = np.where(rng.random(N) < 0.3, rng.integers(1, 1 << 20, N), lb)
    lb = np.where(lb == 0, 11, lb)
    lb = np.where((la == -I64) & (lb == -1), 5, lb)
    return [a, b, la, lb, np.zeros(N * 8, np.int32), np.zeros(N * 4, np.int64)]


def intdiv_golden(args):
    a, b, la, lb = (_ints(x) for x in args[:4])
    o32, o64 = [], []
    for x, y in zip(a, b):
        ux, uy = x % U32, y % U32
        sx, sy = _wrap(x, 16), _wrap(y, 16)
        cx, cy = x & 0xFF, y & 0xFF
        o32 += [_wrap(_tdiv(x, y), 32), _trem(x, y), _wrap(ux // uy, 32), _wrap(ux % uy, 32),
                _wrap(_tdiv(sx, sy), 16), _wrap(_trem(sx, sy), 16),
                _wrap(_tdiv(_wrap(cx, 8), _wrap(cy, 8)), 8), cx % cy]
    for x, y in zip(la, lb):
        ux, uy = x % U64, y % U64
        o64 += [_tdiv(x, y), _trem(x, y), _wrap(ux // uy, 64), _wrap(ux % uy, 64)]
    return {4: np.array(o32, np.int32), 5: np.array(o64, np.int64)}


# ------------------------------------------------------------------------ float division
# OpenCL C 7.4 single precision: x / y 2.5 ulp, sqrt 3 ulp (both 0 with
# -cl-fp32-correctly-rounded-divide-sqrt), rsqrt 2 ulp. native_* are implementation-defined:
# the hardware instructions they use (v_rcp, v_rsq, v_sqrt, v_exp, v_log) are 1 ulp, a
# native_divide (x times v_rcp) 2.
FDIV_SLOTS = ("x/y", "sqrt", "rsqrt", "native_sqrt", "native_rsqrt", "native_recip", "native_divide",
              "x/v", "native_exp2", "native_log2")
FDIV_UNI = ("u/v", "sqrt", "rsqrt", "native_sqrt", "native_rsqrt", "native_recip", "native_exp2", "native_log2")
_FDIV_LIMIT = {"x/y": 2.5, "x/v": 2.5, "u/v": 2.5, "sqrt": 3, "rsqrt": 2, "native_sqrt": 1, "native_rsqrt": 1,
               "native_recip": 1, "native_divide": 2, "native_exp2": 1, "native_log2": 1}


def _normal_f32(rng, n: int, lo: int = -30, hi: int = 30) -> np.ndarray:
    m = rng.uniform(1.0, 2.0, n)
    e = rng.integers(lo, hi, n)
    s = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return (s * m * np.exp2(e)).astype(np.float32)


def fdiv_args(rng):
    x, y = _normal_f32(rng, N), _normal_f32(rng, N)
    x[:3], y[:3] = [1.0, 3.0, -7.5], [3.0, 3.0, 0.1]
    return [x, y, np.float32(rng.uniform(1, 100)), np.float32(-rng.uniform(0.01, 10)),
            np.zeros(N * 10, np.float32), np.zeros(8, np.float32)]


def _fdiv_refs(args):
    x, y = (np.asarray(a, np.float32).astype(np.float64) for a in args[:2])
    u, v = float(args[2]), float(args[3])
    ax = np.abs(x)
    vary = [x / y, np.sqrt(ax), 1 / np.sqrt(ax), np.sqrt(ax), 1 / np.sqrt(ax), 1 / y, x / y, x / v,
            np.exp2(np.clip(x, -100, 100)), np.log2(ax)]
    uni = [u / v, math.sqrt(u), 1 / math.sqrt(u), math.sqrt(u), 1 / math.sqrt(u), 1 / v, 2.0 ** v, math.log2(u)]
    return vary, uni


def _check_rounded(name: str, got, ref) -> None:
    """Correctly rounded: float64 division and square root of float32 operands round to float32
    without a double-rounding error (53 >= 2 * 24 + 2), so the golden is float32(ref)."""
    want = np.asarray(ref, np.float64).astype(np.float32)
    got = np.asarray(got, np.float32)
    bad = np.flatnonzero(want.view(np.uint32) != got.view(np.uint32))
    if bad.size:
        i = bad[0]
        raise AssertionError(f"{name}: {bad.size} of {want.size} results not correctly rounded; first at {i}: "
                             f"got {got.ravel()[i]!r}, expected {want.ravel()[i]!r}")


def fdiv_check(exact: bool):
    """x / y and sqrt correctly rounded when ``exact`` (-cl-fp32-correctly-rounded-divide-sqrt),
    else within their OpenCL limits; the rest within theirs."""
    def check(inputs, outputs):
        vary, uni = _fdiv_refs(inputs)
        out = np.asarray(outputs[4]).reshape(N, 10)
        for names, got, refs, label in ((FDIV_SLOTS, out.T, vary, ""), (FDIV_UNI, outputs[5], uni, "uniform ")):
            for k, name in enumerate(names):
                if exact and name in ("x/y", "sqrt", "x/v", "u/v"):
                    _check_rounded(f"corpus_fdiv {label}{name}", got[k], refs[k])
                else:
                    _check_ulp(f"corpus_fdiv {label}{name}", got[k], refs[k], _FDIV_LIMIT[name])
    return check


# ----------------------------------------------------------------------- integer built-ins
def intfn_args(rng):
    a, b, c = (_special_u32(rng, N) for _ in range(3))
    la = rng.integers(0, U64, N, dtype=np.uint64)
    lb = rng.integers(0, U64, N, dtype=np.uint64)
    lb[::5] = rng.integers(0, 64, len(lb[::5]), dtype=np.uint64)
    la[3], lb[3] = 0, 0
    la[4], lb[4] = (1 << 63), (1 << 64) - 1
    return [a, b, c, la, lb, np.zeros(N * 32, np.uint32), np.zeros(N * 10, np.uint64)]


def _intfn_row(x: int, y: int, z: int) -> list[int]:
    sx, sy, sz = _wrap(x, 32), _wrap(y, 32), _wrap(z, 32)
    x24, y24 = x & 0xFFFFFF, y & 0xFFFFFF
    sx24, sy24 = _wrap(x24, 24), _wrap(y24, 24)
    u8, s8, u16, s16 = (lambda v: v & 0xFF), (lambda v: _wrap(v, 8)), (lambda v: v & 0xFFFF), (lambda v: _wrap(v, 16))
    return [x24 * y24 + z, sx24 * sy24 + sz, x24 * y24, sx24 * sy24,
            (x * y) >> 32, (sx * sy) >> 32, ((x * y) >> 32) + z,
            _clz(x >> (y & 31), 32),
            _clz(u8(x), 8) | (_clz(u16(y), 16) << 8),
            bin(x).count("1") | (bin(u8(y)).count("1") << 8) | (bin(u16(z)).count("1") << 16),
            _ctz(x & (x - (y & 1)), 32),
            _rotl(x, y, 32),
            _rotl(u8(x), u8(y), 8) | (_rotl(u16(y), u16(z), 16) << 16),
            abs((sx >> 1) - (sy >> 1)), abs(x - y), abs(sx),
            abs(s8(x) - s8(y)) | (abs(s16(y) - s16(z)) << 16),
            _sat(sx + sy, 32), _sat(x + y, 32, False), _sat(sx - sy, 32), _sat(x - y, 32, False),
            u8(_sat(s8(x) + s8(y), 8)) | (_sat(u8(y) + u8(z), 8, False) << 8) | (u16(_sat(s16(z) - s16(x), 16)) << 16),
            _sat(u16(x) - u16(y), 16, False) | (u16(_sat(s16(y) + s16(z), 16)) << 16),
            (sx + sy) >> 1, (x + y + 1) >> 1,
            _sat((sx >> 8) * (sy >> 8) + sz, 32),
            (u16(x) << 16) | u16(y),
            max(sx, sy) ^ min(x, y),
            min(max(sx, -1000), 1000),
            (x & ~z) | (y & z),
            ((s16(x) * s16(y)) >> 16) & 0xFFFF,
            _sat((x >> 4) * (y >> 4) + z, 32, False)]


def _intfn_row64(p: int, q: int, x: int, y: int) -> list[int]:
    sp, sq = _wrap(p, 64), _wrap(q, 64)
    return [(p * q) >> 64, (sp * sq) >> 64, _clz(p >> (q & 63), 64), bin(p).count("1"), _rotl(p, q, 64),
            _sat(sp + sq, 64), max(p - q, 0), abs((sp >> 1) - (sq >> 1)), (x << 32) | y,
            p * q + (p >> 3) - (q << 5)]


def intfn_golden(args):
    a, b, c, la, lb = (_ints(v) for v in args[:5])
    o32 = [v % U32 for x, y, z in zip(a, b, c) for v in _intfn_row(x, y, z)]
    o64 = [v % U64 for p, q, x, y in zip(la, lb, a, b) for v in _intfn_row64(p, q, x, y)]
    return {5: np.array(o32, np.uint32), 6: np.array(o64, np.uint64)}


# ---------------------------------------------------------------------------- conversions
def cvt_args(rng):
    fin = np.concatenate([rng.uniform(-300, 300, 48), np.round(rng.uniform(-40, 40, 24)) + 0.5,
                          _normal_f32(rng, 32, -24, 30), rng.uniform(-2e9, 2e9, 24)]).astype(np.float32)
    fin[:6] = [0.5, -0.5, 1.5, -2.5, 2049.0, -0.0]
    fw = np.concatenate([fin[:64] * 1000, rng.uniform(-5e9, 5e9, 32), rng.uniform(-300, 300, 18),
                         [np.nan, np.inf, -np.inf, 3e38, -3e38, 2147483520.0, 2147483648.0, -2147483904.0,
                          255.5, -128.5, 65535.7, 32767.5, 4294967040.0, 4294967296.0]]).astype(np.float32)
    ns = _special_u32(rng, N).view(np.int32).copy()
    ns[40:80] = rng.integers(-70000, 70000, 40)
    ls = rng.integers(-(1 << 63), (1 << 63) - 1, N, dtype=np.int64)
    ls[::3] = rng.integers(-(1 << 40), 1 << 40, len(ls[::3]))
    ls[:4] = [-(1 << 63), (1 << 63) - 1, (1 << 53) + 1, 0]
    ds = np.concatenate([rng.uniform(-1e9, 1e9, 64), _normal_f32(rng, 64, -40, 40).astype(np.float64)
                         * (1 + rng.uniform(0, 1e-7, 64))])
    ds[::7] = np.abs(ds[::7]) * 1e-20
    return [fin, fw, ns, ls, ds, np.zeros(N * 16, np.int32), np.zeros(N * 14, np.float32),
            np.zeros(N * 5, np.int64), np.zeros(N * 4, np.float64), np.zeros(N * 6, np.float16)]


def _cvt_rows(x, w, k, m, z):
    k, m = int(k), int(m)
    um, uk = m % U64, k % U32
    ints = [int(_f2i(x, "rte")), int(_f2i(x, "rtz")), int(_f2i(x, "rtp")), int(_f2i(x, "rtn")),
            _f2i_sat(w, "rte", 32, True), _f2i_sat(w, "rtz", 32, True), _wrap(_f2i_sat(w, "rtp", 32, False), 32),
            int(_f2i(abs(x), "rtz")),
            _sat(k, 8), _sat(k, 8, False), _sat(k, 16), _sat(k, 16, False),
            _f2i_sat(w, "rte", 8, True), _f2i_sat(w, "rtz", 8, False), _f2i_sat(w, "rtn", 16, True),
            _sat(m, 32)]
    floats = [round_exact(Fraction(k), np.float32, md) for md in ("rte", "rtz", "rtp", "rtn")]
    floats += [round_exact(Fraction(uk), np.float32), round_exact(Fraction(uk), np.float32, "rtz"),
               round_exact(Fraction(m), np.float32), round_exact(Fraction(m), np.float32, "rtp"),
               round_exact(Fraction(m), np.float32, "rtn"), round_exact(Fraction(um), np.float32)]
    floats += [round_float(z, np.float32, md) for md in ("rte", "rtz", "rtp", "rtn")]
    longs = [int(_f2i(x, "rte")), _f2i_sat(w, "rtz", 64, True), _wrap(_f2i_sat(w, "rtp", 64, False), 64),
             int(_f2i(z, "rtz")), _f2i_sat(float(z) * 1.0e10, "rtn", 64, True)]
    doubles = [float(x), round_exact(Fraction(m), np.float64), float(k), round_exact(Fraction(um), np.float64)]
    halves = [round_float(x, np.float16, md) for md in ("rte", "rtz", "rtp", "rtn")]
    halves.append(round_exact(Fraction(k), np.float16))
    halves.append(round_float(float(round_float(x, np.float16)) * 2, np.float16))
    return ints, floats, longs, doubles, halves


def cvt_golden(args):
    cols = [[], [], [], [], []]
    for row in zip(*args[:5]):
        for col, vals in zip(cols, _cvt_rows(*row)):
            col += vals
    return {5: np.array(cols[0], np.int32), 6: np.array(cols[1], np.float32), 7: np.array(cols[2], np.int64),
            8: np.array(cols[3], np.float64), 9: np.array(cols[4], np.float16)}


# ------------------------------------------------------------- 8/16/64-bit integer types
def narrow_args(rng):
    cs = rng.integers(-128, 128, 2 * N).astype(np.int8)
    ss = rng.integers(-32768, 32768, 2 * N).astype(np.int16)
    ls = rng.integers(-(1 << 63), (1 << 63) - 1, 2 * N, dtype=np.int64)
    ls[1::6] = rng.integers(0, 64, len(ls[1::6]))
    return [cs, ss, ls, np.zeros(4 * N, np.int8), np.zeros(4 * N, np.int16), np.zeros(4 * N, np.int64)]


def narrow_golden(args):
    cs, ss, ls = (_ints(v) for v in args[:3])
    oc, os_, ol = [], [], []
    for i in range(N):
        a, b = cs[2 * i], cs[2 * i + 1]
        oc += [_wrap(a + b, 8), _wrap(a * b, 8), a >> 2, _wrap(((a & 0xFF) >> 3) ^ int(a < b), 8)]
        p, q = ss[2 * i], ss[2 * i + 1]
        os_ += [_wrap(p + q, 16), _wrap(p * q, 16), _wrap((p >> 3) - ((q & 0xFFFF) >> 5), 16),
                p if p < q else _wrap(q & 0x7F0F, 16)]
        x, y = ls[2 * i], ls[2 * i + 1]
        ux, uy = x % U64, y % U64
        ol += [_wrap(ux + uy, 64), _wrap(ux * uy, 64), x >> (uy & 63),
               _wrap((ux ^ uy) - (ux << 7) + (uy >> 9) + int(x < y), 64)]
    return {3: np.array(oc, np.int8), 4: np.array(os_, np.int16), 5: np.array(ol, np.int64)}


# --------------------------------------------------------------------------------- half
def half_args(rng):
    hs = (rng.standard_normal(640) * np.exp2(rng.integers(-12, 12, 640))).astype(np.float16)
    hs[:6] = [0.0, -0.0, 6e-8, 65504.0, -3.0, 300.0]
    fs = np.concatenate([rng.uniform(-4, 4, 64), _normal_f32(rng, 48, -26, 18), [65504.0, 65520.0, -65519.0,
                         1e-8, -3e-5, 5.960464477539063e-08, 1.0009765625, -2049.0] * 2]).astype(np.float32)
    return [hs, fs, np.zeros(6 * N, np.float16), np.zeros(4 * N, np.float32), np.zeros(8 * N, np.float16)]


def half_golden(args):
    hs, fs = np.asarray(args[0], np.float16), np.asarray(args[1], np.float32)
    a, b = hs[0:2 * N:2], hs[1:2 * N:2]
    with np.errstate(all="ignore"):
        oh = np.stack([a + b, a * b, a - b, np.where(a < b, a, b), -a,
                       np.arange(N).astype(np.float16) + a], axis=1).astype(np.float16)
        v = hs[128:128 + 4 * N].astype(np.float32).reshape(N, 4)
        of = np.stack([a.astype(np.float32), b.astype(np.float32), v[:, 0] + v[:, 1], v[:, 2] * v[:, 3]], axis=1)
        four = np.stack([fs, -fs, fs * np.float32(0.5), fs + np.float32(1.0)], axis=1)
    st = []
    for f, q in zip(fs, four):
        st += [round_float(f, np.float16, md) for md in ("rte", "rtz", "rtp", "rtn")]
        st += [round_float(g, np.float16) for g in q]
    return {2: oh.ravel(), 3: of.astype(np.float32).ravel(), 4: np.array(st, np.float16)}


# ------------------------------------------------------------------------ uniform half
SALU_HALF_PAIRS = [(0.0, -0.0), (-0.0, -0.0), (np.inf, -np.inf), (65504.0, 65504.0), (6e-8, 6e-8),
                   (1.0, 2.0 ** -11), (1.0009765625, 2.0 ** -11), (2.5, -3.5), (-0.75, np.nan),
                   (np.nan, 1.0), (-np.inf, 0.5), (3.0, 3.0)]
SALU_HALF_N = 64              # pairs: each of the 2 workgroups walks 32 in a uniform loop


def salu_half_args(rng):
    n = SALU_HALF_N
    hs = (rng.standard_normal(2 * n) * np.exp2(rng.integers(-10, 10, 2 * n))).astype(np.float16)
    for k, (a, b) in enumerate(SALU_HALF_PAIRS):
        hs[2 * k], hs[2 * k + 1] = a, b
    fs = np.concatenate([rng.uniform(-8, 8, n - 8), [65520.0, -65519.0, 1e-8, 3e-5, 0.0, -0.0,
                                                      1.0004882, 2049.0]]).astype(np.float32)
    return [hs, fs, np.zeros(10 * n, np.float16), np.zeros(2 * n, np.float32), np.zeros(n, np.int32)]


def _first_nan(r, *srcs):
    """An f16 NaN result as the model makes it: the first NaN source quieted, else 0xFE00."""
    if not np.isnan(r):
        return np.float16(r)
    bits = next((int(np.float16(x).view(np.uint16)) | 0x200 for x in srcs if np.isnan(x)), 0xFE00)
    return np.uint16(bits).view(np.float16)


def _exact_or_f64(exact, fallback: float, dtype):
    """``exact()`` (a Fraction) rounded once to ``dtype``, or ``fallback`` (the float64 value) for
    zeros, infinities and NaNs, whose sign and class float64 arithmetic already gets right."""
    if fallback == 0 or not math.isfinite(fallback):
        return dtype(fallback)
    return round_exact(exact(), dtype)


def _min_num(a, b, less=True):
    """fmin/fmax (v_/s_min_num, max_num): a NaN gives the other operand, -0 < +0."""
    if np.isnan(a) or np.isnan(b):
        return b if np.isnan(a) else a
    key = lambda x: (float(x), math.copysign(1, float(x)))
    return a if (key(a) < key(b)) == less and key(a) != key(b) else b


def salu_half_golden(args):
    hs, fs = np.asarray(args[0], np.float16), np.asarray(args[1], np.float32)
    oh, of, oi = [], [], []
    with np.errstate(all="ignore"):
        for p in range(SALU_HALF_N):
            a, b, f = hs[2 * p], hs[2 * p + 1], fs[p]
            x, y = np.float64(a), np.float64(b)
            c = np.float16(f)
            z = np.float64(c)
            fma = _first_nan(_exact_or_f64(lambda: Fraction(x) * Fraction(y) + Fraction(z), x * y + z,
                                           np.float16), a, b, c)
            r = [_first_nan(x + y, a, b), _first_nan(x - y, a, b), _first_nan(x * y, a, b), fma,
                 _min_num(a, b), _min_num(a, c, less=False), c,
                 _first_nan(np.floor(x) + np.ceil(y), a, b), c if a < b else b,
                 _first_nan(x - z, a, c) if a > c else _first_nan(z * 0.5, c)]
            oh += [np.float16(v) for v in r]
            of += [_exact_or_f64(lambda: Fraction(x) + Fraction(float(f)), x + np.float64(f), np.float32),
                   np.float32(np.float64(fma) * 2)]
            oi.append(int(a == b) | int(a <= c) << 1 | int(np.isnan(a) or np.isnan(b)) << 2
                      | int(b != c) << 3 | int(a >= b) << 4 | int(b < c) << 5)
    return {2: np.array(oh, np.float16), 3: np.array(of, np.float32), 4: np.array(oi, np.int32)}


# ------------------------------------------------------------------------------- double
def double_args(rng):
    ds = (rng.uniform(1, 10, 2 * N) * 10.0 ** rng.integers(-5, 7, 2 * N)
          * np.where(rng.random(2 * N) < 0.5, -1, 1))
    ds[1::2] = np.clip(ds[1::2], -1e9, 1e9)
    ds[8], ds[9] = 2.5, 2.5
    return [ds, np.zeros(8 * N, np.float64), np.zeros(2 * N, np.int64)]


def double_golden(args):
    ds = np.asarray(args[0], np.float64)
    od, ol = [], []
    for x, y in zip(ds[0::2], ds[1::2]):
        x, y = float(x), float(y)
        od += [x + y, x * y, x / y, math.sqrt(abs(x)),
               float(round_exact(Fraction(x) * Fraction(y) + Fraction(x), np.float64)),
               min(x, y) - max(x, y), math.floor(x) + math.trunc(y),
               float(np.float32(x)) + float(int(y))]
        ol += [int(x * 1.0e6), int(x < y) | (int(x == y) << 1) | (int(x >= y) << 2)]
    return {1: np.array(od, np.float64), 2: np.array(ol, np.int64)}


# ------------------------------------------------------------------------- float4, int4
def vec_args(rng):
    a = rng.uniform(-100, 100, 4 * N).astype(np.float32)
    b = rng.uniform(-100, 100, 4 * N).astype(np.float32)
    n = rng.integers(-(1 << 15), 1 << 15, 4 * N).astype(np.int32)   # no int overflow
    return [a, b, n, np.zeros(4 * N, np.float32), np.zeros(4 * N, np.float32), np.zeros(4 * N, np.int32)]


def vec_golden(args):
    a, b = (np.asarray(v, np.float32).reshape(N, 4) for v in args[:2])
    k = np.asarray(args[2], np.int32).reshape(N, 4).astype(np.int64)
    lt = -(a < b).astype(np.int64)
    mix = np.stack([k[:, 0] + k[:, 3], k[:, 1] * k[:, 2], k[:, 2] ^ k[:, 0], k[:, 3] - k[:, 1]], axis=1) + lt
    return {3: (a * b).ravel(), 4: (a[:, ::-1] + b).ravel(), 5: (mix % U32).astype(np.uint32).view(np.int32).ravel()}


# ------------------------------------------------------------------------ private arrays
def private_args(rng):
    return [_special_u32(rng, N), np.zeros(N, np.uint32), np.zeros(N, np.uint32)]


def private_golden(args):
    small_out, big_out = [], []
    for i, k in enumerate(_ints(args[0])):
        small = [i * 8 + j * j for j in range(8)]
        small[k & 7] += 1000
        small_out.append(small[(k >> 3) & 7] + small[(k >> 6) & 7])
        big = [j * 3 + i for j in range(96)]
        big[k % 96] = k
        big[(k >> 8) % 96] += 7
        big_out.append((big[(k >> 16) % 96] ^ big[(k >> 4) % 96]) % U32)
    return {1: np.array(small_out, np.uint32), 2: np.array(big_out, np.uint32)}


# ------------------------------------------------------------------------ relational
_QNAN, _NQNAN = 0x7FC00000, 0xFFC00000


def rel_args(rng):
    x = rng.uniform(-10, 10, N).astype(np.float32)
    y = rng.uniform(-10, 10, N).astype(np.float32)
    specials = _f32([_QNAN, _NQNAN, 0x7F800000, 0xFF800000, 0, 0x80000000, 1, 0x80000005, 0x00800000, 0x7F7FFFFF])
    x[:10] = specials
    y[10:20] = specials
    y[20:25] = x[20:25]                         # equal pairs
    y[0], x[10] = 2.0, -2.0                     # never NaN on both sides, never zeros of both signs
    c = rng.integers(-(1 << 31) + 1, 1 << 31, N).astype(np.int32)
    return [x, y, c, np.zeros(16 * N, np.int32), np.zeros(8 * N, np.float32)]


def _sign(x: float) -> float:
    """sign(): OpenCL C gives 0.0 for NaN without fixing its sign; ocml keeps the NaN's sign bit."""
    if math.isnan(x):
        return math.copysign(0.0, x)
    return 1.0 if x > 0 else (-1.0 if x < 0 else x)


def rel_golden(args):
    xs, ys, cs = np.asarray(args[0], np.float32), np.asarray(args[1], np.float32), _ints(args[2])
    xb, yb = xs.view(np.uint32), ys.view(np.uint32)
    oi, of = [], []
    msb = (lambda v: (v >> 31) & 1 if v >= 0 else 1)
    for i in range(N):
        x, y, c = float(xs[i]), float(ys[i]), cs[i]
        bx, by = int(xb[i]), int(yb[i])
        v = [-int(x < y), -int(y < x), -int(x < 0.0), -int(y < 0.0)]
        sel = [(a if not msb(m) else b) for a, b, m in zip((1, 2, 3, 4), (5, 6, 7, 8),
                                                             (c, -c, _wrap((c << 8) % U32, 32), ~c))]
        isnormal = math.isfinite(x) and abs(x) >= 2.0 ** -126
        oi += [int(x == y), int(x != y), int(x > y), int(x >= y), int(x < y), int(x <= y),
               int(x < y or x > y),
               int(math.isfinite(x)) | (int(math.isinf(x)) << 1) | (int(math.isnan(x)) << 2)
               | (int(isnormal) << 3) | ((bx >> 31) << 4),
               int(not (math.isnan(x) or math.isnan(y))) | (int(math.isnan(x) or math.isnan(y)) << 1),
               v[0], v[1] + 4 * v[2] + 16 * v[3],
               int(any(m < 0 for m in v)) | (int(all(m < 0 for m in v)) << 1) | (int(c < 0) << 2),
               sel[0] + 10 * sel[1] + 100 * sel[2] + 1000 * sel[3],
               -c if c & 4 else c,
               _wrap(((c % U32) & ~bx) | (~c % U32 & bx), 32),
               int(x < y) - int(x != x)]
        fmin = y if math.isnan(x) else (x if math.isnan(y) else min(x, y))
        fmax = y if math.isnan(x) else (x if math.isnan(y) else max(x, y))
        of += [int(yb[i] if c & 1 else xb[i]),
               int(np.float32(fmin).view(np.uint32)), int(np.float32(fmax).view(np.uint32)),
               (bx & 0x7FFFFFFF) | (by & 0x80000000),
               int(np.float32(0.0 if y < x else 1.0).view(np.uint32)),
               int(np.float32(_sign(x)).view(np.uint32)),
               (bx & ~(c % U32)) | (by & (c % U32)),
               int((np.abs(xs[i:i + 1]) - np.abs(ys[i:i + 1])).view(np.uint32)[0])]
    return {3: np.array(oi, np.int64).astype(np.int32), 4: np.array(of, np.uint32).view(np.float32)}


# ------------------------------------------------------------------------ work items
def workitem_args(grid, block):
    total = int(np.prod(grid)) * int(np.prod(block))
    return lambda rng: [np.zeros(16 * total, np.uint32)]


def workitem_golden(grid, block):
    grid3, block3 = tuple(grid) + (1,) * (3 - len(grid)), tuple(block) + (1,) * (3 - len(block))
    gsize = [g * b for g, b in zip(grid3, block3)]
    wg = block3[0] * block3[1] * block3[2]
    n_sub = -(-wg // 32)

    def golden(args):
        out = np.zeros((gsize[0] * gsize[1] * gsize[2], 16), np.uint32)
        for gz in range(gsize[2]):
            for gy in range(gsize[1]):
                for gx in range(gsize[0]):
                    g = (gx, gy, gz)
                    lid = [v % b for v, b in zip(g, block3)]
                    grp = [v // b for v, b in zip(g, block3)]
                    lin = (gz * gsize[1] + gy) * gsize[0] + gx
                    llin = (lid[2] * block3[1] + lid[1]) * block3[0] + lid[0]
                    sg = llin // 32
                    sg_size = min(32, wg - 32 * sg)
                    out[lin] = [gx, gy, gz, lid[0] | lid[1] << 8 | lid[2] << 16,
                                grp[0] | grp[1] << 8 | grp[2] << 16,
                                block3[0] | block3[1] << 8 | block3[2] << 16, block3[0] | block3[1] << 8,
                                gsize[0], gsize[1], gsize[2], grid3[0] | grid3[1] << 8 | grid3[2] << 16,
                                len(grid), 0, llin, lin, sg | (llin % 32) << 8 | n_sub << 16 | sg_size << 24]
        return {0: out.ravel()}
    return golden


# -------------------------------------------------------------------------- sub-groups
def subgroup_args(rng):
    x = rng.integers(-1_000_000, 1_000_000, N).astype(np.int32)
    x[0:32] = np.abs(x[0:32]) + 1            # wave 0: all positive
    x[40] = -1_500_000                       # wave 1: one value below -1e6
    x[64:96] = rng.integers(-500, 500, 32)   # wave 2: no value above 1000
    f = rng.uniform(-1e3, 1e3, N).astype(np.float32)
    return [x, f, np.zeros(12 * N, np.int32), np.zeros(2 * N, np.float32)]


def subgroup_golden(args):
    xs, fs = _ints(args[0]), np.asarray(args[1], np.float32)
    oi, of = [], []
    for w in range(N // 32):
        x = xs[32 * w: 32 * w + 32]
        f = fs[32 * w: 32 * w + 32]
        for lane in range(32):
            pre = x[:lane + 1]
            oi += [32 | 32 << 8 | 2 << 16, (w % 2) | lane << 8, _wrap(sum(x), 32), min(x), max(x),
                   _wrap(max(v % U32 for v in x), 32), sum(pre), sum(pre[:-1]), max(pre), x[5],
                   int(any(v > 1000 for v in x)) | int(all(v > -1_000_000 for v in x)) << 1
                   | int(all(v > 0 for v in x)) << 2,
                   min(pre[:-1], default=I32 - 1)]
            of += [f.min(), f.max()]
    return {2: np.array(oi, np.int32), 3: np.array(of, np.float32)}


# ---------------------------------------------------------------------------- atomics
N32, N64 = 17, 12


def atomics_args(rng):
    vs = rng.integers(0, U32, N, dtype=np.uint64).astype(np.uint32)
    lvs = rng.integers(0, U64, N, dtype=np.uint64)
    init32 = rng.integers(0, 1 << 30, N32, dtype=np.uint64).astype(np.uint32)
    init32[[6, 7, 9, 10]] = [0xFFFFFFFF, 0, 0, 0xFFFFFFFF]
    init32[15], init32[16] = 0, 3
    init64 = rng.integers(0, 1 << 62, N64, dtype=np.uint64)
    init64[[6, 7, 9]] = [(1 << 64) - 1, 0, 5]
    g32 = np.concatenate([init32, init32])
    g32[N32 + 14] = 0x3F800000                  # the local float slot starts at 1.0
    g64 = np.concatenate([init64, init64])
    gf = np.array([-1.0, -2.0, 0.5, 1e30, -1e30], np.float32)
    return [vs, lvs, g32, g64, gf, np.zeros(N32, np.uint32), np.zeros(N64, np.uint64),
            np.zeros(4 * N, np.uint32), np.zeros(2 * N, np.uint64)]


def _slot_finals32(init: list[int], vs: list[int], local: bool) -> list[int]:
    """Final values of the 32-bit slots after every lane's operations (order-independent)."""
    bits = [1 << (i & 31) for i in range(len(vs))]
    s = list(init)
    s[0] = (s[0] + sum(v & 0xFFFF for v in vs)) % U32
    s[1] = (s[1] - sum(v & 0xFF for v in vs)) % U32
    s[2] = min([_wrap(s[2], 32)] + [_wrap(v, 32) for v in vs]) % U32
    s[3] = max([_wrap(s[3], 32)] + [_wrap(v, 32) for v in vs]) % U32
    s[4] = min([s[4]] + vs)
    s[5] = max([s[5]] + vs)
    s[6] &= ~(sum(set(bits))) % U32
    s[7] |= sum(set(bits))
    for v in vs:
        s[8] ^= v
    s[9] = (s[9] + len(vs)) % U32
    s[10] = (s[10] - len(vs)) % U32
    s[11] = (s[11] + sum(v & 0xFFF for v in vs)) % U32
    if local:
        s[12] = (s[12] + 5 * len(vs)) % U32
        s[13] |= sum(set(bits))
        s[14] = int(np.float32(np.uint32(s[14]).view(np.float32) + sum(v & 0xFF for v in vs) * 0.25).view(np.uint32))
    else:
        s[13] = (s[13] + 3 * len(vs)) % U32
        s[14] = (s[14] + 5 * len(vs)) % U32
    for _ in vs:
        s[15] = 0 if s[15] >= 40 else s[15] + 1
        s[16] = 40 if s[16] == 0 or s[16] > 40 else s[16] - 1
    return s


def _slot_finals64(init: list[int], ws: list[int], local: bool) -> list[int]:
    bits = [1 << (i & 63) for i in range(len(ws))]
    s = list(init)
    s[0] = (s[0] + sum(w >> 8 for w in ws)) % U64
    s[1] = (s[1] - sum(w >> 16 for w in ws)) % U64
    s[2] = min([_wrap(s[2], 64)] + [_wrap(w, 64) for w in ws]) % U64
    s[3] = max([_wrap(s[3], 64)] + [_wrap(w, 64) for w in ws]) % U64
    s[4] = min([s[4]] + ws)
    s[5] = max([s[5]] + ws)
    s[6] &= ~(sum(set(bits))) % U64
    s[7] |= sum(set(bits))
    for w in ws:
        s[8] ^= w
    s[9] = (s[9] + (-1 if local else 1) * len(ws)) % U64
    if local:
        s[10] = (s[10] + 9 * len(ws)) % U64
        for w in ws:
            s[11] ^= w
    else:
        s[11] = (s[11] + 9 * len(ws)) % U64
    return s


def atomics_golden(args):
    """The local slots' sums over the groups; the global slots, whose exchanged values depend
    on the lanes' order, are checked by atomics_check."""
    vs, lvs, g32, g64 = (_ints(a) for a in args[:4])
    lsum32 = [0] * N32
    lsum64 = [0] * N64
    for grp in range(N // 64):
        lo = _slot_finals32(g32[N32:], vs[64 * grp: 64 * grp + 64], True)
        lsum32 = [(a + b) % U32 for a, b in zip(lsum32, lo)]
        lo64 = _slot_finals64(g64[N64:], lvs[64 * grp: 64 * grp + 64], True)
        lsum64 = [(a + b) % U64 for a, b in zip(lsum64, lo64)]
    return {5: np.array(lsum32, np.uint32), 6: np.array(lsum64, np.uint64)}


def atomics_check(inputs, outputs):
    vs, lvs, g32, g64 = (_ints(a) for a in inputs[:4])
    gf_in = np.asarray(inputs[4], np.float32)
    got32, got64, gf = _ints(outputs[2]), _ints(outputs[3]), np.asarray(outputs[4], np.float32)
    ret32 = np.asarray(outputs[7]).reshape(N, 4)
    ret64 = np.asarray(outputs[8]).reshape(N, 2)
    fin32 = _slot_finals32(g32[:N32], vs, False)
    fin64 = _slot_finals64(g64[:N64], lvs, False)
    for k in range(N32):
        if k != 12:
            assert got32[k] == fin32[k], f"global 32-bit slot {k}: got {got32[k]:#x}, expected {fin32[k]:#x}"
    for k in range(N64):
        if k != 10:
            assert got64[k] == fin64[k], f"global 64-bit slot {k}: got {got64[k]:#x}, expected {fin64[k]:#x}"
    assert got32[N32:] == g32[N32:] and got64[N64:] == g64[N64:], "the local slots' global copies changed"
    # add with return: each lane's old value plus its addend is another lane's old value or the final one
    olds = sorted(int(r) for r in ret32[:, 0])
    nexts = sorted((int(r) + (v & 0xFFF)) % U32 for r, v in zip(ret32[:, 0], vs))
    assert olds[0] == g32[11] and sorted(olds[1:] + [fin32[11]]) == nexts, "atomic_add returns are no chain"
    # exchanges: the values returned plus the final one are the initial one plus every lane's
    for name, rets, init, vals, final in (
            ("atomic_xchg", ret32[:, 1], g32[12], vs, got32[12]),
            ("atom_xchg", ret64[:, 0], g64[10], lvs, got64[10])):
        assert sorted(_ints(rets) + [final]) == sorted([init] + vals), f"{name} returns are no permutation"
    for slot in (0, 1):
        lanes = np.arange(slot, N, 2)
        rets = ret32[lanes, 2].view(np.float32)
        vals = lanes.astype(np.float32)
        assert sorted(list(rets) + [gf[slot]]) == sorted([gf_in[slot]] + list(vals)), f"float xchg slot {slot}"
    # compare-and-swap loops: each lane replaced a distinct step of the sequence
    for name, rets, init, step, mod in (("atomic_cmpxchg", ret32[:, 3], g32[14], 5, U32),
                                        ("atom_cmpxchg", ret64[:, 1], g64[11], 9, U64)):
        assert sorted(_ints(rets)) == sorted((init + step * j) % mod for j in range(N)), f"{name} chain"
    adds = np.float32(gf_in[2]) + np.float32(sum(v & 0xFF for v in vs) * 0.25)
    floats = _f32([v & 0x3FFFFFFF for v in vs]) - np.float32(1.0)
    assert gf[2] == adds, f"float atomic add: got {gf[2]}, expected {adds}"
    assert gf[3] == min(gf_in[3], floats.min()) and gf[4] == max(gf_in[4], floats.max()), "float atomic min/max"


# -------------------------------------------------------------------------------- math
# OpenCL C 3.0, 7.4, single precision: maximum error in ulp of each function (0: correctly
# rounded). The corpus_math kernel's slot k computes MATH_FUNCS[k].
MATH_ULP = {"exp": 3, "exp2": 3, "exp10": 3, "expm1": 3, "log": 3, "log2": 3, "log10": 3, "log1p": 2,
            "sin": 4, "cos": 4, "tan": 5, "asin": 4, "acos": 4, "atan": 5, "atan2": 6, "sinh": 4,
            "cosh": 4, "tanh": 5, "asinh": 4, "acosh": 4, "atanh": 5, "pow": 16, "powr": 16, "pown": 16,
            "rootn": 16, "cbrt": 2, "erf": 16, "erfc": 16, "tgamma": 16, "hypot": 4, "fmod": 0,
            "remainder": 0, "sqrt": 3, "rsqrt": 2, "sinpi": 4, "cospi": 4, "ldexp": 0, "logb+ilogb": 0,
            "rounding": 0, "atanpi": 5}
MATH_FUNCS = tuple(MATH_ULP)


def math_inputs(rng, n: int):
    """Arguments of the corpus_math kernel for n work-items: x any finite, p positive, u in
    [-1, 1], y a second argument, n an integer exponent."""
    x = rng.uniform(-12, 12, n)
    x[::9] = rng.uniform(-1000, 1000, len(x[::9]))
    x[1::11] = rng.uniform(-1, 1, len(x[1::11])) * 1e-3
    x = np.where(x == 0, 0.75, x).astype(np.float32)
    p = np.exp(rng.uniform(np.log(1e-3), np.log(60), n)).astype(np.float32)
    u = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.uniform(-4, 4, n)
    y = np.where(np.abs(y) < 1e-3, 0.5, y).astype(np.float32)
    k = rng.integers(-20, 21, n).astype(np.int32)
    return [x, p, u, y, k]


def math_args(rng):
    return math_inputs(rng, N) + [np.zeros(N * len(MATH_FUNCS), np.float32)]


def _round_half_away(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _sinpi(x: np.ndarray) -> np.ndarray:
    """sin(pi x) with exact zeros and ones at multiples of 1/2 (x mod 2 is exact in float64)."""
    r = np.fmod(x, 2.0)
    exact = np.array([0.0, 1.0, 0.0, -1.0])[np.mod(np.floor(r * 2), 4).astype(int)]
    return np.where(r * 2 == np.floor(r * 2), exact, np.sin(np.pi * r))


def math_reference(x, p, u, y, k) -> dict[str, np.ndarray]:
    """Each function's exact result (float64) for the kernel's float32 arguments."""
    f32 = np.float32
    x, p, u, y = (np.asarray(v, np.float32) for v in (x, p, u, y))
    X, P, U, Y = (v.astype(np.float64) for v in (x, p, u, y))
    k = np.asarray(k, np.int64)
    kr = np.where(k == 0, 3, k)
    vec = np.vectorize
    with np.errstate(all="ignore"):
        return {
            "exp": np.exp(X), "exp2": np.exp2(X), "exp10": 10.0 ** (x * f32(0.4)).astype(np.float64),
            "expm1": np.expm1(X), "log": np.log(P), "log2": np.log2(P), "log10": np.log10(P), "log1p": np.log1p(P),
            "sin": np.sin(X), "cos": np.cos(X), "tan": np.tan(X), "asin": np.arcsin(U), "acos": np.arccos(U),
            "atan": np.arctan(X), "atan2": np.arctan2(X, Y), "sinh": np.sinh(X), "cosh": np.cosh(X),
            "tanh": np.tanh(X), "asinh": np.arcsinh(X), "acosh": np.arccosh((p + f32(1)).astype(np.float64)),
            "atanh": np.arctanh((u * f32(0.99)).astype(np.float64)), "pow": P ** Y, "powr": P ** Y,
            "pown": P ** k.astype(np.float64), "rootn": np.sign(P) * np.abs(P) ** (1.0 / kr),
            "cbrt": np.cbrt(X), "erf": vec(math.erf)(X), "erfc": vec(math.erfc)(X),
            "tgamma": vec(lambda v: math.gamma(v) if v < 171 else math.inf)(P), "hypot": np.hypot(X, Y),
            "fmod": np.fmod(X, Y), "remainder": vec(math.remainder)(X, Y), "sqrt": np.sqrt(P),
            "rsqrt": 1 / np.sqrt(P), "sinpi": _sinpi(X), "cospi": _sinpi(X + 0.5),
            "ldexp": np.ldexp(X, k), "logb+ilogb": (np.frexp(P)[1] - 1.0) + (np.frexp(X)[1] - 1.0),
            "rounding": np.trunc(X) + _round_half_away(Y) + np.rint(X * 4) + np.ceil(Y) + np.floor(X),
            "atanpi": np.arctan(X) / np.pi}


def math_errors(inputs, out) -> dict[str, np.ndarray]:
    """Each function's ulp error at every work-item, from a run's output buffer."""
    ref = math_reference(*inputs[:5])
    got = np.asarray(out, np.float32).reshape(-1, len(MATH_FUNCS))
    return {f: ulp_error(got[:, j], ref[f]) for j, f in enumerate(MATH_FUNCS)}


def math_check(inputs, outputs):
    ref = math_reference(*inputs[:5])
    got = np.asarray(outputs[5], np.float32).reshape(N, len(MATH_FUNCS))
    for j, f in enumerate(MATH_FUNCS):
        _check_ulp(f"corpus_math {f}", got[:, j], ref[f], MATH_ULP[f])


def entries() -> list:
    """The corpus's ``FirmwareTest`` entries."""
    return [
        _t("corpus_intdiv_cl", "corpus_intdiv.cl", "corpus_intdiv", intdiv_args, intdiv_golden, {"int", "div"}),
        _t("corpus_fdiv_cl", "corpus_fdiv.cl", "corpus_fdiv", fdiv_args, _no_golden, {"float", "div", "trans"},
           check=fdiv_check(False)),
        _t("corpus_fdiv_exact_cl", "corpus_fdiv.cl", "corpus_fdiv", fdiv_args, _no_golden,
           {"float", "div", "trans"}, check=fdiv_check(True), cl_options=("-cl-fp32-correctly-rounded-divide-sqrt",)),
        _t("corpus_intfn_cl", "corpus_intfn.cl", "corpus_intfn", intfn_args, intfn_golden, {"int"}),
        _t("corpus_cvt_cl", "corpus_cvt.cl", "corpus_cvt", cvt_args, cvt_golden, {"cvt", "float", "f64", "f16"}),
        _t("corpus_narrow_cl", "corpus_narrow.cl", "corpus_narrow", narrow_args, narrow_golden, {"int", "widths"}),
        _t("corpus_half_cl", "corpus_half.cl", "corpus_half", half_args, half_golden, {"f16", "widths"}),
        _t("corpus_salu_half_cl", "corpus_salu_half.cl", "corpus_salu_half", salu_half_args, salu_half_golden,
           {"f16"}),
        _t("corpus_double_cl", "corpus_double.cl", "corpus_double", double_args, double_golden, {"f64"}),
        _t("corpus_vec_cl", "corpus_vec.cl", "corpus_vec", vec_args, vec_golden, {"float", "widths"}),
        _t("corpus_private_cl", "corpus_private.cl", "corpus_private", private_args, private_golden, {"scratch"}),
        _t("corpus_rel_cl", "corpus_rel.cl", "corpus_rel", rel_args, rel_golden, {"float", "int"}),
        _t("corpus_workitem_cl", "corpus_workitem.cl", "corpus_workitem", workitem_args((2, 3, 2), (8, 4, 2)),
           workitem_golden((2, 3, 2), (8, 4, 2)), {"hidden_args", "grid"}, grid=(2, 3, 2), block=(8, 4, 2)),
        _t("corpus_workitem_b48_cl", "corpus_workitem.cl", "corpus_workitem", workitem_args((3,), (48,)),
           workitem_golden((3,), (48,)), {"hidden_args"}, grid=(3,), block=(48,)),
        _t("corpus_subgroup_cl", "corpus_subgroup.cl", "corpus_subgroup", subgroup_args, subgroup_golden, {"subgroup"}),
        _t("corpus_atomics_cl", "corpus_atomics.cl", "corpus_atomics", atomics_args, atomics_golden, {"atomic", "lds"},
           check=atomics_check),
        _t("corpus_math_cl", "corpus_math.cl", "corpus_math", math_args, _no_golden, {"float", "trans", "mathlib"},
           check=math_check),
    ]
