"""More gfx1200 FP32 VALU semantics: the division helpers, sin/cos, the rounding
conversions, DX9 multiply and the three-operand min/max forms.

Same conventions as ``sim.fp32``: raw binary32 patterns in numpy uint32 arrays (int32 bits
for the float-to-int conversions), the wave's float mode (sim.fpmode: FP_DENORM flushing;
these operations are refused in a directed rounding mode), the NaN rules of docs/fp32.md.
sin and cos belong to the transcendental unit: a denormal source reads as a zero.

Division. LLVM expands an IEEE ``fdiv float`` (OpenCL with -cl-fp32-correctly-rounded-
divide-sqrt; any LLVM IR ``fdiv`` without ``!fpmath``) into

    d' = v_div_scale_f32(d, d, n)          n' , VCC = v_div_scale_f32(n, d, n)
    r = v_rcp_f32(d')   two Newton steps on r and two on q = n' r (v_fma_f32)
    q = v_div_fmas_f32(rem, r, q)          result = v_div_fixup_f32(q, d, n)

The scaled operands keep every intermediate normal, so the final FMA rounds the quotient
correctly; v_div_fmas_f32 undoes a one-sided scale inside that same rounding, and
v_div_fixup_f32 supplies the special cases. The functions below follow the RDNA 4 ISA
guide's pseudocode for the three opcodes, read with these interpretations where the text
cannot be meant literally (docs/model.md, "Division"):

* v_div_scale_f32: ``1.0 / 64'F(S1) == DENORM.f64`` never holds for a float32 S1, so it is
  read as "1/S1 is a float32 denormal" (|S1| > 2^126); ``S2 / S1 == DENORM`` is the exact
  quotient below 2^-126. When both hold the divisor is scaled by 2^-64 (the text's 2^+64
  would overflow a divisor above 2^126). The result is S0 when no case scales it.
* v_div_fmas_f32: the text's ``2^32 * fma`` with VCC cannot undo a 2^64 operand scale; the
  scale undone is 2^+64 when S2 (the scaled quotient) is at least 2.0, else 2^-64.
* v_div_fixup_f32: UNDERFLOW_F32 is +-0 (the quotient is below 2^-150 there); a NaN quotient
  from the iteration (only an overflowed scaled quotient produces one) becomes +-inf. The
  text's ``exponent(S1) == 255`` case is unreachable (an infinite or NaN divisor is caught
  before it).
"""
from __future__ import annotations

import numpy as np

from . import fp32 as F
from . import fpmode as FM
from .fpmode import fma_odd64

U32, U64, I64 = np.uint32, np.uint64, np.int64
F32, F64 = np.float32, np.float64
_ABS, _INF, _SIGN = U32(0x7FFFFFFF), U32(0x7F800000), U32(0x80000000)
_HALF = U32(0x3F000000)


def _u32(x) -> np.ndarray:
    return np.asarray(x, dtype=U32)


def _is_nan(x):
    return (x & _ABS) > _INF


def _field(x):
    """Biased exponent field (0 for zero and denormals, 255 for inf/NaN)."""
    return ((x >> U32(23)) & U32(0xFF)).astype(I64)


def _f64(x):
    with np.errstate(invalid="ignore"):
        return _u32(x).view(F32).astype(F64)


# --------------------------------------------------------------------------------------
# Conversions, DX9 multiply, min/max forms
def cvt_nearest_i32(a) -> np.ndarray:
    """v_cvt_nearest_i32_f32: f32_to_i32(floor(S0 + 0.5F)); the addition rounds (RNE)."""
    return F.cvt_i32_f32(F.floor(F.add(_u32(a), _HALF)))


def cvt_floor_i32(a) -> np.ndarray:
    """v_cvt_floor_i32_f32: f32_to_i32(floor(S0))."""
    return F.cvt_i32_f32(F.floor(_u32(a)))


def mul_dx9_zero(a, b) -> np.ndarray:
    """v_mul_dx9_zero_f32: +0 if either operand equals 0.0 (even with a NaN or infinite other
    operand), else S0 * S1. Denormals are not zero (they are kept)."""
    a, b = FM.src(32, *np.broadcast_arrays(_u32(a), _u32(b)))
    zero = ((a & _ABS) == 0) | ((b & _ABS) == 0)
    return np.where(zero, U32(0), F.mul(a, b)).astype(U32)


def minimum3(a, b, c) -> np.ndarray:
    """v_minimum3_f32: v_minimum_f32(v_minimum_f32(S0, S1), S2)."""
    return F.minimum(F.minimum(a, b), c)


def maximum3(a, b, c) -> np.ndarray:
    """v_maximum3_f32: v_maximum_f32(v_maximum_f32(S0, S1), S2)."""
    return F.maximum(F.maximum(a, b), c)


def minmax_num(a, b, c) -> np.ndarray:
    """v_minmax_num_f32: v_max_num_f32(v_min_num_f32(S0, S1), S2)."""
    return F.max_num(F.min_num(a, b), c)


def maxmin_num(a, b, c) -> np.ndarray:
    """v_maxmin_num_f32: v_min_num_f32(v_max_num_f32(S0, S1), S2)."""
    return F.min_num(F.max_num(a, b), c)


# --------------------------------------------------------------------------------------
# sin / cos of 2*pi*x
def sincos_turns(x, want_cos: bool) -> np.ndarray:
    """sin or cos of 2*pi*x for finite float64 x: exact reduction to the nearest quarter turn,
    float64 evaluation of the remainder (|t| <= pi/4). Exact zeros follow IEEE 754-2019
    sinPi/cosPi: sin takes the sign of x, cos is +0."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        r = x - np.rint(x)                       # exact: turns in [-0.5, 0.5]
        n = np.rint(4.0 * r)                     # quarter turns, -2..2
        t = 2.0 * np.pi * (r - 0.25 * n)         # r - n/4 is exact, |t| <= pi/4
        quad = (np.nan_to_num(n).astype(I64) + (1 if want_cos else 0)) & 3
        s, c = np.sin(t), np.cos(t)
        val = np.select([quad == 0, quad == 1, quad == 2], [s, c, -s], -c)
    zero = 0.0 if want_cos else np.copysign(0.0, x)
    return np.where(val == 0, zero, val)


def _sincos(a, want_cos: bool) -> np.ndarray:
    """sincos_turns rounded once to float32; inf -> default NaN, NaN -> quiet NaN; a denormal
    source reads as a zero of its sign."""
    a = FM.flush(_u32(a), 32)
    with np.errstate(all="ignore"):
        res = sincos_turns(_f64(a), want_cos).astype(F32).view(U32)
    res = np.where((a & _ABS) == _INF, U32(F.DEFAULT_NAN), res)
    return np.where(_is_nan(a), a | U32(F.QUIET_BIT), res).astype(U32)


def sin(a) -> np.ndarray:
    """v_sin_f32: sin(S0 * 2 pi) (S0 in turns)."""
    return _sincos(a, False)


def cos(a) -> np.ndarray:
    """v_cos_f32: cos(S0 * 2 pi) (S0 in turns)."""
    return _sincos(a, True)


# --------------------------------------------------------------------------------------
# Division helpers
def _ldexp(x, k: int):
    return F.ldexp(x, np.full(np.shape(x), k, dtype=np.int64).astype(U32))


def div_scale(s0, s1, s2):
    """v_div_scale_f32 (S1 = denominator, S2 = numerator, S0 = the one to scale).

    Returns (D bits, VCC bool per lane)."""
    s0, s1, s2 = (np.ascontiguousarray(v) for v in FM.src(32, *np.broadcast_arrays(_u32(s0), _u32(s1), _u32(s2))))
    en, ed = _field(s2), _field(s1)
    n, d = np.abs(_f64(s2)), np.abs(_f64(s1))
    zero = ((s1 & _ABS) == 0) | ((s2 & _ABS) == 0)
    big = en - ed >= 96                          # quotient near the top of the range
    den_denorm = ed == 0
    rcp_denorm = d > 2.0 ** 126
    q_denorm = n < d * 2.0 ** -126               # exact in float64
    tiny_num = en <= 23
    up, down = _ldexp(s0, 64), _ldexp(s0, -64)
    is_den = F.cmp_eq(s0, s1)
    is_num = F.cmp_eq(s0, s2)
    conds = [zero, big, den_denorm, rcp_denorm & q_denorm, rcp_denorm, q_denorm, tiny_num]
    dval = np.select(conds, [U32(F.DEFAULT_NAN), np.where(is_den, up, s0), up,
                             np.where(is_den, down, s0), down, np.where(is_num, up, s0), up], s0)
    vcc = np.select(conds, [False, True, False, True, False, True, False], False)
    return FM.result(dval.astype(U32), 32), vcc.astype(bool)


def _fma_scaled(a, b, c, k):
    """2^k * (a*b + c) rounded once to float32 (RNE), k an int64 array (the scaling of the
    round-to-odd value is exact)."""
    with np.errstate(all="ignore"):
        r = np.ldexp(fma_odd64(_f64(a), _f64(b), _f64(c)), k).astype(F32).view(U32)
    return FM.result(F.nan_fixup(r, a, b, c), 32)


def div_fmas(a, b, c, vcc) -> np.ndarray:
    """v_div_fmas_f32: fma(S0, S1, S2), with VCC scaled by 2^+64 (S2 >= 2.0) or 2^-64 inside
    the single rounding."""
    a, b, c = (np.ascontiguousarray(v) for v in FM.src(32, *np.broadcast_arrays(_u32(a), _u32(b), _u32(c))))
    k = np.where(np.asarray(vcc, bool), np.where(_field(c) > 127, 64, -64), 0).astype(I64)
    return _fma_scaled(a, b, c, k)


def div_fixup(s0, s1, s2) -> np.ndarray:
    """v_div_fixup_f32: S0 = quotient, S1 = denominator, S2 = numerator."""
    s0, s1, s2 = FM.src(32, *np.broadcast_arrays(_u32(s0), _u32(s1), _u32(s2)))
    sign = (s1 ^ s2) & _SIGN
    m0, m1, m2 = s0 & _ABS, s1 & _ABS, s2 & _ABS
    conds = [_is_nan(s2), _is_nan(s1), (m1 == 0) & (m2 == 0), (m1 == _INF) & (m2 == _INF),
             (m1 == 0) | (m2 == _INF), (m1 == _INF) | (m2 == 0),
             _field(s2) - _field(s1) < -150, m0 > _INF]
    vals = [s2 | U32(F.QUIET_BIT), s1 | U32(F.QUIET_BIT), U32(F.DEFAULT_NAN), U32(F.DEFAULT_NAN),
            sign | _INF, sign, sign, sign | _INF]
    return FM.result(np.select(conds, vals, sign | m0).astype(U32), 32)
