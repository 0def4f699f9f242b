"""Bit-exact IEEE binary16 (half) semantics for the gfx1200 16-bit float VALU opcodes.

Values are raw 16-bit patterns in numpy uint32 arrays (the low 16 bits; int16 results as
their 16-bit two's-complement pattern). Mode: the wave's float mode (sim.fpmode): FP_DENORM
of the f16/f64 field flushes sources and results; the directed roundings are implemented for
add, sub, mul, fma, ldexp and the conversions to f16 and refused elsewhere. Unlike the f32
transcendentals, v_rcp_f16 and v_rsq_f16 "DO support denormals" (LLVM AMDGPU); the other f16
transcendentals are taken to do the same.

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
from . import fpmode as FM

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


def _binary(fn, addends):
    """add/sub/mul: the float64 value of two halves' sum or product is exact."""
    def op(a, b):
        a, b = FM.src(16, _u(a), _u(b))
        with np.errstate(all="ignore"):
            x = fn(to_f64(a), to_f64(b))
        return FM.finish(nan_fixup(from_f64(x), a, b), 16, lambda: x, addends(a, b))
    return op


add = _binary(np.add, lambda a, b: (a, b))
sub = _binary(np.subtract, lambda a, b: (a, b ^ U32(_SIGN)))
mul = _binary(np.multiply, lambda a, b: ())


def fma(a, b, c) -> np.ndarray:
    a, b, c = FM.src(16, _u(a), _u(b), _u(c))
    x = E.fma_odd64(to_f64(a), to_f64(b), to_f64(c))
    sign = (a ^ b) & U32(_SIGN)
    prod = np.where(((a & U32(_ABS)) == 0) | ((b & U32(_ABS)) == 0), sign, sign | U32(ONE))
    return FM.finish(nan_fixup(from_f64(x), a, b, c), 16, lambda: x, (prod, c))


def _via_f32(fn):
    """An op that returns one of its operands (or a quieted NaN): through the FP32 function."""
    def op(*xs):
        xs = FM.src(16, *[_u(x) for x in xs])
        return FM.result(from_f32_exact(fn(*[to_f32(x) for x in xs])), 16)
    return op


min_num, max_num = _via_f32(F.min_num), _via_f32(F.max_num)
minimum, maximum = _via_f32(F.minimum), _via_f32(F.maximum)
med3_num = _via_f32(F.med3_num)


def compare(cond, a, b):
    a, b = FM.src(16, _u(a), _u(b))
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
    """The VOP3 clamp bit on an f16 result: NaN -> +0, x < 0 -> +0, x > 1 -> 1.0, else x (-0
    stays -0, as sim.fp32.clamp01)."""
    x = _u(x)
    with np.errstate(invalid="ignore"):
        v = to_f64(x)
        r = np.where(v < 0, U32(0), np.where(v > 1, U32(ONE), x))
    return np.where(is_nan(x), U32(0), r).astype(U32)


# --------------------------------------------------------------------------------------
# Conversions
def cvt_f32_f16(h) -> np.ndarray:
    """Exact; a NaN is quieted."""
    h = FM.src(16, _u(h))
    r = to_f32(h)
    return np.where(is_nan(_u(h)), r | U32(F.QUIET_BIT), r).astype(U32)


def cvt_f16_f32(x) -> np.ndarray:
    """One rounding of the float32 value (in the f16 mode); a NaN keeps sign and top payload,
    quieted."""
    x = FM.src(32, np.asarray(x, U32))
    with np.errstate(all="ignore"):
        v = x.view(F32).astype(F64)
        r = v.astype(F16).view(np.uint16).astype(U32)
    nan = (x & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
    nan_bits = ((x >> U32(16)) & U32(_SIGN)) | U32(_INF | QUIET) | ((x >> U32(13)) & U32(0x3FF))
    return FM.finish(np.where(nan, nan_bits, r).astype(U32), 16, lambda: v)


def cvt_pk_rtz(a, b) -> np.ndarray:
    """v_cvt_pk_rtz_f16_f32: both float32 values rounded toward zero; S0 low, S1 high."""
    def rtz(x):
        x = FM.src(32, np.asarray(x, U32))
        with np.errstate(all="ignore"):
            r = x.view(F32).astype(F16).view(np.uint16).astype(U32)
        nan = (x & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
        r = np.where(nan, ((x >> U32(16)) & U32(_SIGN)) | U32(_INF | QUIET)
                     | ((x >> U32(13)) & U32(0x3FF)), r).astype(U32)
        with np.errstate(invalid="ignore"):
            v = np.abs(np.asarray(x, U32).view(F32).astype(F64))
        over = np.abs(to_f64(r)) > v                         # RNE went away from zero
        finite = (np.asarray(x, U32) & U32(0x7FFF_FFFF)) < U32(0x7F80_0000)
        return FM.result(np.where(over & finite & ~is_nan(r), r - U32(1), r).astype(U32), 16)
    return rtz(a) | (rtz(b) << U32(16))


def cvt_f16_int(x, signed: bool) -> np.ndarray:
    x = _u(x).astype(I64)
    if signed:
        x = x - ((x >> 15 & 1) << 16)
    v = x.astype(F64)
    return FM.finish(from_f64(v), 16, lambda: v)


def cvt_int_f16(h, signed: bool) -> np.ndarray:
    """Truncation toward zero, saturating to the 16-bit range; NaN -> 0."""
    h = FM.src(16, _u(h))
    lo, hi = (-(1 << 15), (1 << 15) - 1) if signed else (0, 0xFFFF)
    with np.errstate(all="ignore"):
        v = np.clip(np.trunc(to_f64(h)), lo, hi)
    v = np.where(is_nan(h), 0, v)
    return (v.astype(I64) & 0xFFFF).astype(U32)


# --------------------------------------------------------------------------------------
# Rounding, scaling, unary math
def _unary(fn):
    def op(a):
        a = FM.src(16, _u(a))
        with np.errstate(all="ignore"):
            r = from_f64(fn(to_f64(a)))
        return FM.result(nan_fixup(r, a), 16)
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
    a = FM.src(16, _u(a))
    with np.errstate(all="ignore"):
        x = to_f64(a)
        d = from_f64(x - np.floor(x))
    d = np.minimum(d, U32(_ALMOST_ONE))
    d = np.where((a & U32(_ABS)) == U32(_INF), U32(DEFAULT_NAN), d)
    return FM.result(nan_fixup(d, a), 16)


def ldexp(a, n) -> np.ndarray:
    """S0 * 2^S1.i16, rounded once (in the mode)."""
    a, n = FM.src(16, _u(a)), _u(n).astype(I64)
    k = n - ((n >> 15 & 1) << 16)
    with np.errstate(all="ignore"):
        x = np.ldexp(to_f64(a), np.clip(k, -100, 100))
    return FM.finish(nan_fixup(from_f64(x), a), 16, lambda: x)


def frexp_mant(a) -> np.ndarray:
    """Mantissa in [0.5, 1) with the sign; +-0, +-inf returned, NaN quieted."""
    a = FM.src(16, _u(a))
    with np.errstate(all="ignore"):
        m, _ = np.frexp(to_f64(a))
    r = from_f64(m)
    special = ((a & U32(_ABS)) == 0) | ((a & U32(_ABS)) >= U32(_INF))
    return nan_fixup(np.where(special, a, r), a)


def frexp_exp(a) -> np.ndarray:
    """The int16 exponent e with S0 = mant * 2^e (denormals normalised); 0 for +-0/inf/NaN."""
    a = FM.src(16, _u(a))
    with np.errstate(all="ignore"):
        _, e = np.frexp(to_f64(a))
    e = np.where(((a & U32(_ABS)) == 0) | ((a & U32(_ABS)) >= U32(_INF)), 0, e)
    return (e.astype(I64) & 0xFFFF).astype(U32)


def div_fixup(q, d, n) -> np.ndarray:
    """v_div_fixup_f16(quotient, denominator, numerator), the ISA guide's cases."""
    q, d, n = FM.src(16, _u(q), _u(d), _u(n))
    sign = (d ^ n) & U32(_SIGN)
    md, mn = d & U32(_ABS), n & U32(_ABS)
    conds = [is_nan(n), is_nan(d), (md == 0) & (mn == 0), (md == U32(_INF)) & (mn == U32(_INF)),
             (md == 0) | (mn == U32(_INF)), (md == U32(_INF)) | (mn == 0)]
    vals = [n | U32(QUIET), d | U32(QUIET), U32(DEFAULT_NAN), U32(DEFAULT_NAN),
            sign | U32(_INF), sign]
    return FM.result(np.select(conds, vals, sign | (q & U32(_ABS))).astype(U32), 16)
