"""Goldens the model's FP tests share, written from IEEE 754: binary16 arithmetic (NaN
operands, default NaN, infinities, else the exact value rounded once) and IEEE 754-2019's
minimum, maximum, minimumNumber and maximumNumber on binary32 bit patterns."""
from __future__ import annotations

import math

import numpy as np

from tests.fpexact import to_bits, value

F16_DNAN = 0xFE00           # binary16 default NaN
F16_INF = 0x7C00
_QUIET32 = 0x0040_0000      # binary32 quiet bit


def is_nan16(h):
    """Whether binary16 bits ``h`` are a NaN."""
    return (h & 0x7FFF) > F16_INF


def fl16(h):
    """Python float of a half (exact), inf/NaN included."""
    return float(np.uint16(h).view(np.float16))


def exact_or_special16(srcs, fvals, exact_fn, float_fn):
    """Golden of an arithmetic op: NaN operands (first, quieted), invalid -> default NaN,
    infinities from the float result, finite -> exact value rounded once."""
    for s in srcs:
        if is_nan16(s):
            return s | 0x200
    r = float_fn(*fvals)
    if math.isnan(r):
        return F16_DNAN
    if math.isinf(r) and not any(math.isinf(v) for v in fvals):
        return to_bits(exact_fn(*[value(s, 16) for s in srcs]), 16)   # overflow
    if math.isinf(r) or r == 0 and all(math.isfinite(v) for v in fvals) and \
            exact_fn(*[value(s, 16) for s in srcs]) == 0:
        return int(np.float16(r).view(np.uint16))                       # inf / exact zero's sign
    return to_bits(exact_fn(*[value(s, 16) for s in srcs]), 16)


def fma16(a, b, c):
    """Golden of a binary16 fused multiply-add: a * b + c rounded once."""
    for s in (a, b, c):
        if is_nan16(s):
            return s | 0x200
    fa, fb, fc = fl16(a), fl16(b), fl16(c)
    if any(math.isinf(v) for v in (fa, fb, fc)):
        r = fa * fb + fc if not ((fa == 0 or fb == 0) and math.isinf(fa * 1 if fb == 0 else fb)) else math.nan
        if (math.isinf(fa) and fb == 0) or (math.isinf(fb) and fa == 0):
            r = math.nan
        return F16_DNAN if math.isnan(r) else int(np.float16(r).view(np.uint16))
    exact = value(a, 16) * value(b, 16) + value(c, 16)
    if exact == 0:
        prod_neg = (a ^ b) >> 15 & 1
        both_zero = (fa * fb == 0) and fc == 0
        return 0x8000 if both_zero and prod_neg and c >> 15 else 0
    return to_bits(exact, 16)


def _is_nan32(b):
    return (b & 0x7FFF_FFFF) > 0x7F80_0000


def _order32(b):
    """Order of non-NaN floats with -0 < +0."""
    return (float(np.uint32(b).view(np.float32)), b >> 31 == 0)


def ieee_minimum(a, b):          # IEEE 754-2019 minimum, NaN: sNaN(a), sNaN(b), qNaN(a), qNaN(b)
    for x in (a, b):
        if _is_nan32(x) and not x & _QUIET32:
            return x | _QUIET32
    for x in (a, b):
        if _is_nan32(x):
            return x
    return a if _order32(a) < _order32(b) else b


def ieee_maximum(a, b):
    m = ieee_minimum(a, b)
    return m if _is_nan32(m) else (b if m == a and a != b else a)


def ieee_min_num(a, b):
    if _is_nan32(a) and _is_nan32(b):
        return a | _QUIET32
    if _is_nan32(a) or _is_nan32(b):
        return b if _is_nan32(a) else a
    return a if _order32(a) <= _order32(b) else b


def ieee_max_num(a, b):
    if _is_nan32(a) or _is_nan32(b):
        return ieee_min_num(a, b)
    return a if _order32(a) >= _order32(b) else b
