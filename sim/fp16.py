"""Bit-exact IEEE binary16 (half) semantics for the gfx1200 16-bit float VALU opcodes.

Values are raw 16-bit patterns in numpy uint32 arrays (the low 16 bits; int16 results as
their 16-bit two's-complement pattern). Mode: round to nearest even, denormals kept.

Exactness: the sum, difference and product of two halves are exact in float64, and numpy
rounds float64 (and float32) to float16 once, correctly; the FMA rounds the exact a*b + c
(sim.fp32ext.fma_odd64: round-to-odd at 53 bits, then once to 11 bits). Division-like
results (rcp, sqrt) computed in float64 and rounded to half are correctly rounded (53 >=
2*11 + 2); rsq, exp, log, sin and cos are their float64 values rounded once to half, not
the hardware's approximations. NaN rules as sim.fp32: the first NaN operand, quieted (bit 9),
else the default NaN 0xFE00 for an invalid operation.
"""
from __future__ import annotations

import numpy as np

from . import fp32 as F
from . import fp32ext as E

U32, I64 = np.uint32, np.int64
F16, F32, F64 = np.float16, np.float32, np.float64
DEFAULT_NAN = 0xFE00
QUIET = 0x0200
_ABS, _INF, _SIGN = 0x7FFF, 0x7C00, 0x8000
ONE = 0x3C00


def _u(x) -> np.ndarray:
    return np.asarray(x, dtype=U32) & U32(0xFFFF)


def is_nan(h):
    return (h & U32(_ABS)) > U32(_INF)


def to_f64(h) -> np.ndarray:
    return _u(h).astype(np.uint16).view(F16).astype(F64)


def from_f64(x) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(x, F64).astype(F16).view(np.uint16).astype(U32)


def nan_fixup(r, *srcs) -> np.ndarray:
    """NaN results: the first NaN source quieted, else DEFAULT_NAN."""
    r = np.where(is_nan(r), U32(DEFAULT_NAN), r)
    for s in reversed(srcs):
        r = np.where(is_nan(s), s | U32(QUIET), r)
    return r.astype(U32)


def to_f32(h) -> np.ndarray:
    """Exact widening to float32 bits; a NaN keeps sign and payload (shifted up), unquieted."""
    h = _u(h)
    nan = is_nan(h)
    wide = to_f64(np.where(nan, U32(0), h)).astype(F32).view(U32)
    nan_bits = ((h & U32(_SIGN)) << U32(16)) | U32(0x7F80_0000) | ((h & U32(0x3FF)) << U32(13))
    return np.where(nan, nan_bits, wide).astype(U32)


def from_f32_exact(x) -> np.ndarray:
    """Narrowing of float32 bits known to be halves (values or NaNs from to_f32)."""
    x = np.asarray(x, U32)
    nan = (x & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
    nan_bits = ((x >> U32(16)) & U32(_SIGN)) | U32(_INF) | ((x >> U32(13)) & U32(0x3FF))
    with np.errstate(all="ignore"):
        narrow = x.view(F32).astype(F16).view(np.uint16).astype(U32)
    return np.where(nan, nan_bits, narrow).astype(U32)


def _binary(fn):
    def op(a, b):
        a, b = _u(a), _u(b)
        with np.errstate(all="ignore"):
            r = from_f64(fn(to_f64(a), to_f64(b)))
        return nan_fixup(r, a, b)
    return op


add = _binary(np.add)
sub = _binary(np.subtract)
mul = _binary(np.multiply)


def fma(a, b, c) -> np.ndarray:
    a, b, c = _u(a), _u(b), _u(c)
    r = from_f64(E.fma_odd64(to_f64(a), to_f64(b), to_f64(c)))
    return nan_fixup(r, a, b, c)


def _via_f32(fn):
    """An op that returns one of its operands (or a quieted NaN): through the FP32 function."""
    return lambda *xs: from_f32_exact(fn(*[to_f32(x) for x in xs]))


min_num, max_num = _via_f32(F.min_num), _via_f32(F.max_num)
minimum, maximum = _via_f32(F.minimum), _via_f32(F.maximum)
med3_num = _via_f32(F.med3_num)


def compare(cond, a, b):
    return F.compare(cond, to_f32(a), to_f32(b))


def cmp_class(a, mask):
    """v_cmp_class_f16: bit k of the mask tests class k (as v_cmp_class_f32)."""
    a = _u(a)
    mag, neg = a & U32(_ABS), (a >> U32(15)) == 1
    cls = np.select([mag == 0, mag < U32(0x400), mag < U32(_INF), mag == U32(_INF),
                     (a & U32(QUIET)) != 0],
                    [np.where(neg, 5, 6), np.where(neg, 4, 7), np.where(neg, 3, 8),
                     np.where(neg, 2, 9), 1], 0).astype(U32)
    return ((np.asarray(mask, U32) >> cls) & U32(1)) == 1


def clamp01(x):
    """The VOP3 clamp bit on an f16 result: NaN -> +0, else into [+0, 1.0]."""
    x = _u(x)
    r = min_num(max_num(x, U32(0)), U32(ONE))
    return np.where(is_nan(x), U32(0), r).astype(U32)


# --------------------------------------------------------------------------------------
# Conversions
def cvt_f32_f16(h) -> np.ndarray:
    """Exact; a NaN is quieted."""
    r = to_f32(h)
    return np.where(is_nan(_u(h)), r | U32(F.QUIET_BIT), r).astype(U32)


def cvt_f16_f32(x) -> np.ndarray:
    """One RNE rounding of the float32 value; a NaN keeps sign and top payload, quieted."""
    x = np.asarray(x, U32)
    with np.errstate(all="ignore"):
        r = x.view(F32).astype(F16).view(np.uint16).astype(U32)
    nan = (x & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
    nan_bits = ((x >> U32(16)) & U32(_SIGN)) | U32(_INF | QUIET) | ((x >> U32(13)) & U32(0x3FF))
    return np.where(nan, nan_bits, r).astype(U32)


def cvt_pk_rtz(a, b) -> np.ndarray:
    """v_cvt_pk_rtz_f16_f32: both float32 values rounded toward zero; S0 low, S1 high."""
    def rtz(x):
        r = cvt_f16_f32(x)
        with np.errstate(invalid="ignore"):
            v = np.abs(np.asarray(x, U32).view(F32).astype(F64))
        over = np.abs(to_f64(r)) > v                         # RNE went away from zero
        finite = (np.asarray(x, U32) & U32(0x7FFF_FFFF)) < U32(0x7F80_0000)
        return np.where(over & finite & ~is_nan(r), r - U32(1), r).astype(U32)
    return rtz(a) | (rtz(b) << U32(16))


def cvt_f16_int(x, signed: bool) -> np.ndarray:
    x = _u(x).astype(I64)
    if signed:
        x = x - ((x >> 15 & 1) << 16)
    return from_f64(x.astype(F64))


def cvt_int_f16(h, signed: bool) -> np.ndarray:
    """Truncation toward zero, saturating to the 16-bit range; NaN -> 0."""
    h = _u(h)
    lo, hi = (-(1 << 15), (1 << 15) - 1) if signed else (0, 0xFFFF)
    with np.errstate(all="ignore"):
        v = np.clip(np.trunc(to_f64(h)), lo, hi)
    v = np.where(is_nan(h), 0, v)
    return (v.astype(I64) & 0xFFFF).astype(U32)


# --------------------------------------------------------------------------------------
# Rounding, scaling, unary math
def _unary(fn):
    def op(a):
        a = _u(a)
        with np.errstate(all="ignore"):
            r = from_f64(fn(to_f64(a)))
        return nan_fixup(r, a)
    return op


floor, ceil, trunc, rndne = _unary(np.floor), _unary(np.ceil), _unary(np.trunc), _unary(np.rint)
rcp = _unary(lambda x: 1.0 / x)
sqrt = _unary(np.sqrt)
rsq = _unary(lambda x: 1.0 / np.sqrt(x))
exp = _unary(np.exp2)
log = _unary(np.log2)
sin = _unary(lambda x: E.sincos_turns(x, False))
cos = _unary(lambda x: E.sincos_turns(x, True))
_ALMOST_ONE = 0x3BFF


def fract(a) -> np.ndarray:
    """S0 - floor(S0), at most the largest half below 1.0; +-inf -> default NaN."""
    a = _u(a)
    with np.errstate(all="ignore"):
        x = to_f64(a)
        d = from_f64(x - np.floor(x))
    d = np.minimum(d, U32(_ALMOST_ONE))
    d = np.where((a & U32(_ABS)) == U32(_INF), U32(DEFAULT_NAN), d)
    return nan_fixup(d, a)


def ldexp(a, n) -> np.ndarray:
    """S0 * 2^S1.i16, rounded once."""
    a, n = _u(a), _u(n).astype(I64)
    k = n - ((n >> 15 & 1) << 16)
    with np.errstate(all="ignore"):
        r = from_f64(np.ldexp(to_f64(a), np.clip(k, -100, 100)))
    return nan_fixup(r, a)


def frexp_mant(a) -> np.ndarray:
    """Mantissa in [0.5, 1) with the sign; +-0, +-inf returned, NaN quieted."""
    a = _u(a)
    with np.errstate(all="ignore"):
        m, _ = np.frexp(to_f64(a))
    r = from_f64(m)
    special = ((a & U32(_ABS)) == 0) | ((a & U32(_ABS)) >= U32(_INF))
    return nan_fixup(np.where(special, a, r), a)


def frexp_exp(a) -> np.ndarray:
    """The int16 exponent e with S0 = mant * 2^e (denormals normalised); 0 for +-0/inf/NaN."""
    a = _u(a)
    with np.errstate(all="ignore"):
        _, e = np.frexp(to_f64(a))
    e = np.where(((a & U32(_ABS)) == 0) | ((a & U32(_ABS)) >= U32(_INF)), 0, e)
    return (e.astype(I64) & 0xFFFF).astype(U32)


def div_fixup(q, d, n) -> np.ndarray:
    """v_div_fixup_f16(quotient, denominator, numerator), the ISA guide's cases."""
    q, d, n = _u(q), _u(d), _u(n)
    sign = (d ^ n) & U32(_SIGN)
    md, mn = d & U32(_ABS), n & U32(_ABS)
    conds = [is_nan(n), is_nan(d), (md == 0) & (mn == 0), (md == U32(_INF)) & (mn == U32(_INF)),
             (md == 0) | (mn == U32(_INF)), (md == U32(_INF)) | (mn == 0)]
    vals = [n | U32(QUIET), d | U32(QUIET), U32(DEFAULT_NAN), U32(DEFAULT_NAN),
            sign | U32(_INF), sign]
    return np.select(conds, vals, sign | (q & U32(_ABS))).astype(U32)
