"""Bit-exact RDNA 4 (gfx1200) FP64 VALU semantics, vectorised over numpy uint64 arrays.

Every function takes raw IEEE-754 binary64 bit patterns (uint64 arrays or anything
``np.asarray(x, np.uint64)`` accepts) and returns raw bits: ``uint64`` for double results,
``uint32`` for 32-bit results (float32 bits, int32 two's complement), ``bool`` for compares.

Mode: the wave's float mode (sim.fpmode), by default round to nearest even with denormals
kept (LLVM's ``.amdhsa_float_denorm_mode_16_64`` 3). FP_DENORM[7:6] flushes double sources
(every operation reading a double but v_cmp_class) and results; the directed roundings are
implemented for add, mul, fma and v_cvt_f32_f64 (exactly, on integers) and refused elsewhere. The NaN rules are those of
docs/fp32.md at double width:

* an operation with a NaN operand returns the first NaN operand in operand order with its
  quiet bit (bit 51) set, sign and payload kept;
* an invalid operation without NaN operands (inf - inf, 0 * inf, sqrt/rsq of a number below
  zero, fract(+-inf)) returns the default NaN ``0xFFF8000000000000``;
* min_num/max_num and minimum/maximum follow IEEE 754-2019 as the pseudocode states;
* float -> int conversions map NaN to 0.

add, mul, sqrt, rcp, the rounding functions and the compares use numpy float64, which is
IEEE binary64 with gradual underflow. fma, ldexp's denormal results, rsq and the scaled
division steps are computed exactly on Python integers and rounded once (``_round``).
v_rcp_f64, v_rsq_f64 and v_sqrt_f64 are correctly rounded: the ISA guide's pseudocode is
``1.0 / S0.f64``, ``1.0 / sqrt(S0.f64)`` and ``sqrt(S0.f64)`` (docs/model.md, "FP64").
"""
from __future__ import annotations

import math

import numpy as np

from . import fpmode as FM

__all__ = [
    "DEFAULT_NAN", "QUIET_BIT", "CMP_CONDITIONS",
    "add", "mul", "fma", "min_num", "max_num", "minimum", "maximum", "clamp01",
    "compare", "cmp_class",
    "cvt_i32_f64", "cvt_u32_f64", "cvt_f64_i32", "cvt_f64_u32", "cvt_f32_f64", "cvt_f64_f32",
    "trunc", "ceil", "floor", "rndne", "fract", "frexp_mant", "frexp_exp", "ldexp",
    "rcp", "rsq", "sqrt", "div_scale", "div_fmas", "div_fixup", "trig_preop",
]

U32, U64, I64 = np.uint32, np.uint64, np.int64
F32, F64 = np.float32, np.float64

DEFAULT_NAN = 0xFFF8_0000_0000_0000
QUIET_BIT = 1 << 51
_FRAC = (1 << 52) - 1
_ABS = U64(0x7FFF_FFFF_FFFF_FFFF)
_INF = U64(0x7FF0_0000_0000_0000)
_SIGN = U64(0x8000_0000_0000_0000)
_ONE = U64(0x3FF0_0000_0000_0000)
_BIAS = 1023


# --------------------------------------------------------------------------------------
# Bit helpers
def _u64(x) -> np.ndarray:
    """A double source as the mode reads it."""
    return FM.src(64, np.asarray(x, dtype=U64))


def _args(*xs):
    """uint64 views of the double operands as the mode reads them, broadcast together."""
    arrs = [np.asarray(x, dtype=U64) for x in xs]
    if len(arrs) > 1 and any(a.shape != arrs[0].shape for a in arrs):
        arrs = [np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrs)]
    return [FM.src(64, a) for a in arrs]


def _f(x: np.ndarray) -> np.ndarray:
    return x.view(F64)


def _bits(x) -> np.ndarray:
    return np.asarray(x, dtype=F64).view(U64)


def _field(x: np.ndarray) -> np.ndarray:
    """The biased exponent field (0 for zeros and denormals, 2047 for inf and NaN)."""
    return ((x >> U64(52)) & U64(0x7FF)).astype(I64)


def _is_nan(x: np.ndarray) -> np.ndarray:
    return (x & _ABS) > _INF


def _is_snan(x: np.ndarray) -> np.ndarray:
    return _is_nan(x) & ((x & U64(QUIET_BIT)) == 0)


def _quiet(x: np.ndarray) -> np.ndarray:
    return x | U64(QUIET_BIT)


def _nan_fixup(r: np.ndarray, *srcs: np.ndarray) -> np.ndarray:
    """NaN operands win in operand order (quieted); any other NaN result is DEFAULT_NAN."""
    rn = _is_nan(r)
    if not rn.any():
        return FM.result(r.astype(U64, copy=False), 64)
    out = np.where(rn, U64(DEFAULT_NAN), r)
    for s in reversed(srcs):            # earliest operand applied last = highest priority
        out = np.where(_is_nan(s), _quiet(s), out)
    return FM.result(out.astype(U64, copy=False), 64)


# --------------------------------------------------------------------------------------
# Exact arithmetic on one lane: finite doubles as (negative, integer significand, exponent)
def _parts(bits: int) -> tuple[bool, int, int]:
    """Finite binary64 bits -> (negative, m, e) with |value| = m * 2**e."""
    field = (bits >> 52) & 0x7FF
    frac = bits & _FRAC
    if field == 0:
        return bool(bits >> 63), frac, -1074
    return bool(bits >> 63), frac | (1 << 52), field - 1075


def _round(negative: bool, n: int, e: int, toward_zero: bool = False, mode: int = FM.RNE) -> int:
    """Bits of (-1)**negative * n * 2**e (n >= 0 an int) rounded to binary64 in ``mode`` (ties
    to even; ``toward_zero`` selects FM.ZERO) with gradual underflow; overflow gives infinity,
    or the largest finite value when the rounding direction points back toward zero."""
    mode = FM.ZERO if toward_zero else mode
    sign = (1 << 63) if negative else 0
    if n == 0:
        return sign
    lsb = max(e + n.bit_length() - 53, -1074)     # exponent of the result's last bit
    shift = lsb - e
    if shift <= 0:
        q = n << -shift
    else:
        q = n >> shift
        rem = n & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if _rounds_up(mode, negative, rem, half, q & 1):
            q += 1
    if q >> 53:                                   # rounded up to the next binade
        q >>= 1
        lsb += 1
    bits = ((lsb + 1074) << 52) + q               # q < 2**52 only with lsb == -1074
    if bits >= 0x7FF0_0000_0000_0000:
        to_inf = mode == FM.RNE or mode == (FM.DOWN if negative else FM.UP)
        bits = 0x7FF0_0000_0000_0000 if to_inf else 0x7FEF_FFFF_FFFF_FFFF
    return sign | bits


def _rounds_up(mode: int, negative: bool, rem: int, half: int, odd: int) -> bool:
    """Whether the magnitude rounds up given the discarded remainder (half = its tie)."""
    if mode == FM.RNE:
        return rem > half or (rem == half and odd == 1)
    if mode == FM.ZERO or rem == 0:
        return False
    return negative == (mode == FM.DOWN)


def _fma_lane(a: int, b: int, c: int, scale: int = 0) -> int:
    """2**scale * (a * b + c) rounded once in the mode, for finite a, b, c (bits)."""
    mode = FM.STATE.round[64]
    na, ma, ea = _parts(a)
    nb, mb, eb = _parts(b)
    nc, mc, ec = _parts(c)
    np_, mp, ep = na != nb, ma * mb, ea + eb
    e = min(ep, ec)
    total = (-1 if np_ else 1) * (mp << (ep - e)) + (-1 if nc else 1) * (mc << (ec - e))
    if total == 0:      # exact zero: zeros of one sign keep it, else -0 only toward -inf
        same = mp == 0 and mc == 0 and np_ == nc
        return (1 << 63) if (np_ if same else mode == FM.DOWN) else 0
    return _round(total < 0, abs(total), e + scale, mode=mode)


def _mul_lane(a: int, b: int) -> int:
    """a * b rounded once in the mode, for finite a, b (bits)."""
    na, ma, ea = _parts(a)
    nb, mb, eb = _parts(b)
    return _round(na != nb, ma * mb, ea + eb, mode=FM.STATE.round[64])


def _lanes(fn, *arrays) -> np.ndarray:
    """Apply a per-lane integer function to uint64 arrays."""
    flat = [a.ravel().tolist() for a in arrays]
    return np.array([fn(*xs) for xs in zip(*flat)], dtype=U64).reshape(arrays[0].shape)


# --------------------------------------------------------------------------------------
# Add, mul, fma
def add(a, b) -> np.ndarray:
    """v_add_f64: a + b, rounded in the mode (v_sub is v_add with the neg modifier)."""
    a, b = _args(a, b)
    if FM.STATE.round[64]:
        return _fma_scaled(a, np.full(a.shape, _ONE), b, 0)   # exact a * 1.0 + b, one rounding
    with np.errstate(all="ignore"):
        r = _bits(_f(a) + _f(b))
    return _nan_fixup(r, a, b)


def mul(a, b) -> np.ndarray:
    """v_mul_f64: a * b, rounded in the mode."""
    a, b = _args(a, b)
    with np.errstate(all="ignore"):
        r = _bits(_f(a) * _f(b))
    finite = ((a & _ABS) < _INF) & ((b & _ABS) < _INF)
    if FM.STATE.round[64] and finite.any():
        idx = np.nonzero(finite)
        r = r.copy()
        r[idx] = _lanes(_mul_lane, a[idx], b[idx])
    return _nan_fixup(r, a, b)


def _fma_scaled(a, b, c, scale) -> np.ndarray:
    """2**scale * (a * b + c) with one rounding; scale an int64 array (0 for plain fma)."""
    a, b, c = _args(a, b, c)
    scale = np.broadcast_to(np.asarray(scale, I64), a.shape)
    finite = ((a & _ABS) < _INF) & ((b & _ABS) < _INF) & ((c & _ABS) < _INF)
    with np.errstate(all="ignore"):
        fa, fb, fc = _f(a), _f(b), _f(c)
        # a non-finite operand decides the result; a finite product never overflows here
        ab_finite = np.isfinite(fa) & np.isfinite(fb)
        r = _bits(np.where(ab_finite, fc, fa * fb + fc))
    if finite.any():
        idx = np.nonzero(finite)
        exact = _lanes(_fma_lane, a[idx], b[idx], c[idx], scale[idx])
        r = r.copy()
        r[idx] = exact
    return _nan_fixup(r, a, b, c)


def fma(a, b, c) -> np.ndarray:
    """v_fma_f64: a * b + c rounded once in the mode; an exact zero is -0 for (-0) + (-0) and,
    toward -inf, for a zero sum of other addends."""
    return _fma_scaled(a, b, c, 0)


# --------------------------------------------------------------------------------------
# Min / max / clamp
def _lt_signed_zero(a, b):
    """a < b as doubles, with -0 < +0 (operands not NaN)."""
    return (_f(a) < _f(b)) | ((((a | b) & _ABS) == 0) & (a > b))


def min_num(a, b) -> np.ndarray:
    """v_min_num_f64: IEEE 754-2019 minimumNumber (-0 < +0; a single NaN operand is ignored)."""
    a, b = _args(a, b)
    na, nb = _is_nan(a), _is_nan(b)
    r = np.where(_lt_signed_zero(a, b), a, b)
    r = np.where(nb, a, r)
    return FM.result(np.where(na, np.where(nb, _quiet(a), b), r).astype(U64, copy=False), 64)


def max_num(a, b) -> np.ndarray:
    """v_max_num_f64: IEEE 754-2019 maximumNumber (+0 > -0; a single NaN operand is ignored)."""
    a, b = _args(a, b)
    na, nb = _is_nan(a), _is_nan(b)
    r = np.where(_lt_signed_zero(b, a), a, b)
    r = np.where(nb, a, r)
    return FM.result(np.where(na, np.where(nb, _quiet(a), b), r).astype(U64, copy=False), 64)


def _nan_select_2019(a, b, r):
    """NaN propagation of v_minimum/v_maximum: sNaN(a), sNaN(b), qNaN(a), qNaN(b)."""
    r = np.where(_is_nan(b), b, r)
    r = np.where(_is_nan(a), a, r)
    r = np.where(_is_snan(b), _quiet(b), r)
    return FM.result(np.where(_is_snan(a), _quiet(a), r).astype(U64, copy=False), 64)


def minimum(a, b) -> np.ndarray:
    """v_minimum_f64: IEEE 754-2019 minimum (-0 < +0; NaN operands propagate)."""
    a, b = _args(a, b)
    return _nan_select_2019(a, b, np.where(_lt_signed_zero(a, b), a, b))


def maximum(a, b) -> np.ndarray:
    """v_maximum_f64: IEEE 754-2019 maximum (+0 > -0; NaN operands propagate)."""
    a, b = _args(a, b)
    return _nan_select_2019(a, b, np.where(_lt_signed_zero(b, a), a, b))


def clamp01(x) -> np.ndarray:
    """The VOP3 clamp bit on an FP64 result: NaN -> +0, x < 0 -> +0, x > 1 -> 1.0, else x (-0
    stays -0, as sim.fp32.clamp01)."""
    x = np.asarray(x, dtype=U64)
    with np.errstate(invalid="ignore"):
        r = np.where(_f(x) < 0, U64(0), np.where(_f(x) > 1, _ONE, x))
    return np.where(_is_nan(x), U64(0), r).astype(U64, copy=False)


# --------------------------------------------------------------------------------------
# Compares (VOPC): v_cmp_<cond>_f64 is VOPC op 0x20 + the index in CMP_CONDITIONS
CMP_CONDITIONS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u",
                  "nge", "nlg", "ngt", "nle", "neq", "nlt", "t")
_CMP = {
    "f": lambda x, y: np.zeros(np.broadcast(x, y).shape, bool),
    "lt": lambda x, y: x < y, "eq": lambda x, y: x == y, "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y, "lg": lambda x, y: (x < y) | (x > y), "ge": lambda x, y: x >= y,
    "o": lambda x, y: (x == x) & (y == y), "u": lambda x, y: (x != x) | (y != y),
    "nge": lambda x, y: ~(x >= y), "nlg": lambda x, y: ~((x < y) | (x > y)),
    "ngt": lambda x, y: ~(x > y), "nle": lambda x, y: ~(x <= y), "neq": lambda x, y: x != y,
    "nlt": lambda x, y: ~(x < y), "t": lambda x, y: np.ones(np.broadcast(x, y).shape, bool),
}


def compare(cond: str, a, b) -> np.ndarray:
    """v_cmp_<cond>_f64 as a bool per lane: ordered conditions are false and the n*
    conditions true when an operand is NaN; -0 == +0."""
    a, b = _args(a, b)
    with np.errstate(all="ignore"):
        return _CMP[cond](_f(a), _f(b))


def cmp_class(a, mask) -> np.ndarray:
    """v_cmp_class_f64: bit k of the 32-bit mask tests class k of a: 0 sNaN, 1 qNaN, 2 -inf,
    3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf (never flushed)."""
    a = np.asarray(a, dtype=U64)
    mask = np.asarray(mask, dtype=U32)
    mag = a & _ABS
    neg = (a >> U64(63)) == 1
    cls = np.where(mag == 0, np.where(neg, 5, 6),
          np.where(mag < U64(1 << 52), np.where(neg, 4, 7),
          np.where(mag < _INF, np.where(neg, 3, 8),
          np.where(mag == _INF, np.where(neg, 2, 9),
          np.where((a & U64(QUIET_BIT)) != 0, 1, 0))))).astype(U32)
    return ((mask >> cls) & U32(1)) == 1


# --------------------------------------------------------------------------------------
# Conversions
def _to_int(a, lo: float, hi: float) -> np.ndarray:
    a = _u64(a)
    with np.errstate(all="ignore"):
        f = np.clip(np.trunc(_f(a)), lo, hi)
    return np.where(_is_nan(a), 0.0, f).astype(I64).astype(U32)


def cvt_i32_f64(a) -> np.ndarray:
    """v_cvt_i32_f64: truncate toward zero, saturate to [-2^31, 2^31-1], NaN -> 0."""
    return _to_int(a, -2.0 ** 31, 2.0 ** 31 - 1)


def cvt_u32_f64(a) -> np.ndarray:
    """v_cvt_u32_f64: truncate toward zero, saturate to [0, 2^32-1], NaN -> 0."""
    return _to_int(a, 0.0, 2.0 ** 32 - 1)


def cvt_f64_i32(a) -> np.ndarray:
    """v_cvt_f64_i32: exact."""
    return _bits(np.asarray(a, dtype=U32).view(np.int32).astype(F64))


def cvt_f64_u32(a) -> np.ndarray:
    """v_cvt_f64_u32: exact."""
    return _bits(np.asarray(a, dtype=U32).astype(F64))


def cvt_f32_f64(a) -> np.ndarray:
    """v_cvt_f32_f64: rounded to binary32 in the f32 mode (RNE by default) with gradual
    underflow and overflow to inf; a NaN keeps its sign and the top 22 bits of its payload,
    quieted."""
    a = _u64(a)
    with np.errstate(all="ignore"):
        r = _f(a).astype(F32).view(U32)
    nan = (U32(0x7FC0_0000) | ((a >> U64(32)).astype(U32) & U32(0x8000_0000))
           | ((a >> U64(29)) & U64(0x3F_FFFF)).astype(U32))
    return FM.finish(np.where(_is_nan(a), nan, r).astype(U32, copy=False), 32, lambda: _f(a))


def cvt_f64_f32(a) -> np.ndarray:
    """v_cvt_f64_f32: exact (float32 denormals kept unless the f32 mode flushes sources); a NaN
    keeps sign and payload, quieted."""
    a = FM.src(32, np.asarray(a, dtype=U32))
    with np.errstate(invalid="ignore"):
        r = _bits(a.view(F32).astype(F64))
    nan_in = (a & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
    nan = (U64(0x7FF8_0000_0000_0000) | ((a & U32(0x8000_0000)).astype(U64) << U64(32))
           | ((a & U32(0x7F_FFFF)).astype(U64) << U64(29)))
    return np.where(nan_in, nan, r).astype(U64, copy=False)


# --------------------------------------------------------------------------------------
# Rounding, fraction, exponent
def _unary_np(fn, a):
    a = _u64(a)
    with np.errstate(all="ignore"):
        r = _bits(fn(_f(a)))
    return _nan_fixup(r, a)


def trunc(a) -> np.ndarray:
    """v_trunc_f64: round toward zero (trunc(-0.5) = -0)."""
    return _unary_np(np.trunc, a)


def ceil(a) -> np.ndarray:
    """v_ceil_f64: round toward +inf (ceil(-0.5) = -0)."""
    return _unary_np(np.ceil, a)


def floor(a) -> np.ndarray:
    """v_floor_f64: round toward -inf (floor(-0.5) = -1)."""
    return _unary_np(np.floor, a)


def rndne(a) -> np.ndarray:
    """v_rndne_f64: IEEE roundToIntegralTiesToEven (rndne(2.5) = 2, rndne(-0.5) = -0)."""
    return _unary_np(np.rint, a)


_ALMOST_ONE = U64(0x3FEF_FFFF_FFFF_FFFF)


def fract(a) -> np.ndarray:
    """v_fract_f64: min(a - floor(a), 0x3FEFFFFFFFFFFFFF); fract(+-inf) = DEFAULT_NAN,
    fract(-0) = +0."""
    a = _u64(a)
    with np.errstate(all="ignore"):
        fa = _f(a)
        d = _bits(fa - np.floor(fa))
    d = np.where(d > _ALMOST_ONE, _ALMOST_ONE, d)          # d >= +0 here: bit order = value order
    d = np.where((a & _ABS) == _INF, U64(DEFAULT_NAN), d)
    return FM.result(np.where(_is_nan(a), _quiet(a), d).astype(U64, copy=False), 64)


def _special(a):
    """Zeros, infinities and NaNs: the inputs frexp leaves alone."""
    mag = a & _ABS
    return (mag == 0) | (mag >= _INF)


def frexp_mant(a) -> np.ndarray:
    """v_frexp_mant_f64: the significand in [0.5, 1) with the sign of a (denormals normalised);
    +-0 and +-inf unchanged, NaN quieted."""
    a = _u64(a)
    mant, _ = np.frexp(_f(a))
    r = np.where(_special(a), a, _bits(mant))
    return np.where(_is_nan(a), _quiet(a), r).astype(U64, copy=False)


def frexp_exp(a) -> np.ndarray:
    """v_frexp_exp_i32_f64: e with a = mant * 2**e, mant in [0.5, 1) (denormals normalised:
    2**-1074 -> -1073); 0 for +-0, +-inf and NaN. int32 bits."""
    a = _u64(a)
    _, e = np.frexp(_f(a))
    return np.where(_special(a), 0, e).astype(I64).astype(U32)


def _ldexp_lane(a: int, n: int, toward_zero: bool = False) -> int:
    neg, m, e = _parts(a)
    return _round(neg, m, e + n, toward_zero)


def ldexp(a, n) -> np.ndarray:
    """v_ldexp_f64: a * 2**n (n = int32 bits), rounded once (RNE, denormal results kept)."""
    a = _u64(a)
    k = np.broadcast_to(np.asarray(n, dtype=U32).view(np.int32).astype(I64), a.shape)
    k = np.clip(k, -2200, 2200)                   # beyond: 0 or inf whatever the significand
    with np.errstate(all="ignore"):
        r = _bits(np.ldexp(_f(a), k))            # exact unless the result is denormal
    tiny = ((r & _ABS) < U64(1 << 52)) & ~_special(a)
    if tiny.any():
        idx = np.nonzero(tiny)
        r = r.copy()
        r[idx] = _lanes(_ldexp_lane, a[idx], k[idx])
    return _nan_fixup(r, a)


# --------------------------------------------------------------------------------------
# Reciprocal, reciprocal square root, square root
def rcp(a) -> np.ndarray:
    """v_rcp_f64: 1 / a correctly rounded (rcp(+-0) = +-inf)."""
    a = _u64(a)
    with np.errstate(all="ignore"):
        r = _bits(1.0 / _f(a))
    return _nan_fixup(r, a)


def sqrt(a) -> np.ndarray:
    """v_sqrt_f64: correctly rounded; sqrt(-0) = -0, below zero the default NaN."""
    a = _u64(a)
    with np.errstate(all="ignore"):
        r = _bits(np.sqrt(_f(a)))
    return _nan_fixup(r, a)


def _rsq_lane(a: int) -> int:
    """1 / sqrt(a) correctly rounded, for finite a > 0: q = floor(2**k / sqrt(m)) with a
    sticky bit appended, rounded once."""
    _, m, e = _parts(a)
    if e & 1:
        m, e = m << 1, e - 1
    k = 84                                        # q has at least 57 bits: m < 2**54
    q = math.isqrt((1 << (2 * k)) // m)
    inexact = q * q * m != 1 << (2 * k)
    return _round(False, (q << 1) | inexact, -k - e // 2 - 1)


def rsq(a) -> np.ndarray:
    """v_rsq_f64: 1 / sqrt(a) correctly rounded; rsq(+-0) = +-inf, rsq(+inf) = +0, below zero
    the default NaN."""
    a = _u64(a)
    with np.errstate(all="ignore"):
        r = _bits(1.0 / np.sqrt(_f(a)))           # the special cases; finite a > 0 below
    pos = (a > U64(0)) & (a < _INF)
    if pos.any():
        idx = np.nonzero(pos)
        r = r.copy()
        r[idx] = _lanes(_rsq_lane, a[idx])
    return _nan_fixup(r, a)


# --------------------------------------------------------------------------------------
# Division helpers. LLVM expands an IEEE ``fdiv double`` into
#     d' = v_div_scale_f64(d, d, n)          n', VCC = v_div_scale_f64(n, d, n)
#     r = v_rcp_f64(d')   Newton steps on r and q = n' r (v_fma_f64, v_mul_f64)
#     q = v_div_fmas_f64(rem, r, q)          result = v_div_fixup_f64(q, d, n)
# The functions follow the ISA guide's pseudocode for the three opcodes, read as sim.fp32ext
# reads their FP32 forms (docs/model.md, "FP64"):
# * v_div_scale_f64: "1.0 / S1 == DENORM" is |S1| > 2^1022; "S2 / S1 == DENORM" is the exact
#   quotient below 2^-1022; when both hold the divisor is scaled by 2^-128. The result is S0
#   when no case scales it.
# * v_div_fmas_f64: the text's 2^64 * fma cannot undo a 2^128 operand scale; the scale
#   undone is 2^+128 when S2 (the scaled quotient) is at least 2.0, else 2^-128.
# * v_div_fixup_f64: UNDERFLOW_F64 is +-0; a NaN or infinite quotient becomes +-inf (the
#   text's "exponent(S1) == 2047" case, unreachable as written, read as S0's exponent).
def div_scale(s0, s1, s2):
    """v_div_scale_f64 (S1 = denominator, S2 = numerator, S0 = the one to scale).

    Returns (D bits, VCC bool per lane)."""
    s0, s1, s2 = _args(s0, s1, s2)
    en, ed = _field(s2), _field(s1)
    with np.errstate(all="ignore"):
        n, d = np.abs(_f(s2)), np.abs(_f(s1))
        zero = ((s1 & _ABS) == 0) | ((s2 & _ABS) == 0)
        big = en - ed >= 768                     # quotient near the top of the range
        den_denorm = ed == 0
        rcp_denorm = d > 2.0 ** 1022
        q_denorm = np.ldexp(n, 1022) < d         # exact: the scaling is exact or overflows
        tiny_num = en <= 53
        is_den = compare("eq", s0, s1)
        is_num = compare("eq", s0, s2)
    up, down = ldexp(s0, np.int32(128).view(U32)), ldexp(s0, np.int32(-128).view(U32))
    conds = [zero, big, den_denorm, rcp_denorm & q_denorm, rcp_denorm, q_denorm, tiny_num]
    dval = np.select(conds, [U64(DEFAULT_NAN), np.where(is_den, up, s0), up,
                             np.where(is_den, down, s0), down, np.where(is_num, up, s0), up], s0)
    vcc = np.select(conds, [False, True, False, True, False, True, False], False)
    return FM.result(dval.astype(U64), 64), vcc.astype(bool)


def div_fmas(a, b, c, vcc) -> np.ndarray:
    """v_div_fmas_f64: fma(S0, S1, S2), on VCC lanes scaled by 2^+128 (S2 >= 2.0) or 2^-128
    inside the single rounding."""
    a, b, c = _args(a, b, c)
    k = np.where(np.asarray(vcc, bool), np.where(_field(c) > _BIAS, 128, -128), 0).astype(I64)
    return _fma_scaled(a, b, c, k)


def div_fixup(s0, s1, s2) -> np.ndarray:
    """v_div_fixup_f64: S0 = quotient, S1 = denominator, S2 = numerator."""
    s0, s1, s2 = _args(s0, s1, s2)
    sign = (s1 ^ s2) & _SIGN
    m0, m1, m2 = s0 & _ABS, s1 & _ABS, s2 & _ABS
    conds = [_is_nan(s2), _is_nan(s1), (m1 == 0) & (m2 == 0), (m1 == _INF) & (m2 == _INF),
             (m1 == 0) | (m2 == _INF), (m1 == _INF) | (m2 == 0),
             _field(s2) - _field(s1) < -1075, m0 >= _INF]
    vals = [_quiet(s2), _quiet(s1), U64(DEFAULT_NAN), U64(DEFAULT_NAN),
            sign | _INF, sign, sign, sign | _INF]
    return FM.result(np.select(conds, vals, sign | m0).astype(U64), 64)


# --------------------------------------------------------------------------------------
# v_trig_preop_f64: 53-bit segments of 2/pi for Payne-Hanek range reduction
def _two_over_pi_bits(bits: int) -> int:
    """floor(2/pi * 2**bits), from Machin's formula on integers with 64 guard bits."""
    prec = bits + 64
    one = 1 << prec

    def arctan_inv(x: int) -> int:               # arctan(1/x) * 2**prec
        total, term, k, x2 = 0, one // x, 1, x * x
        while term:
            total += term // k if k % 4 == 1 else -(term // k)
            term //= x2
            k += 2
        return total
    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)
    return (2 << (bits + prec)) // pi


TWO_OVER_PI_1201 = _two_over_pi_bits(1201)        # 0.{b1200 ... b0}: b1200 weighs 2^-1
_SEG_MASK = (1 << 53) - 1


def _trig_preop_lane(a: int, sel: int) -> int:
    field = (a >> 52) & 0x7FF
    shift = (sel & 31) * 53 + max(field - 1077, 0)
    segment = ((TWO_OVER_PI_1201 << shift) >> (1201 - 53)) & _SEG_MASK
    scale = -53 - shift + (128 if field >= 1968 else 0)
    return _round(False, segment, scale, toward_zero=True)


def trig_preop(a, sel) -> np.ndarray:
    """v_trig_preop_f64: segment S1[4:0] of 2/pi (53 bits from bit 1200 - 53 * S1[4:0] down,
    skipping exponent(S0) - 1077 more bits for large S0) as a double, scaled by 2^128 when
    exponent(S0) >= 1968; rounded toward zero. Only S0's exponent field is read (pseudocode)."""
    a = _u64(a)
    sel = np.broadcast_to(np.asarray(sel, dtype=U32), a.shape)
    return _lanes(_trig_preop_lane, a, sel)
