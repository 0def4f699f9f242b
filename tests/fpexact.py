"""Exact rounding of rationals to IEEE binary32/binary16 (round to nearest even, denormals,
overflow to infinity): an independent golden for the model's FP tests."""
from __future__ import annotations

import struct
from decimal import Decimal, localcontext
from fractions import Fraction

FORMATS = {32: (8, 23), 16: (5, 10)}     # exponent bits, fraction bits


def to_bits(x: Fraction, bits: int = 32) -> int:
    """Nearest binary<bits> pattern to the exact value x (RNE); x == 0 gives +0."""
    ebits, fbits = FORMATS[bits]
    bias = (1 << (ebits - 1)) - 1
    sign = 1 if x < 0 else 0
    x = abs(x)
    out_sign = sign << (bits - 1)
    if x == 0:
        return out_sign
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    e = max(e, 1 - bias)                                  # denormals share the smallest exponent
    ulp = Fraction(2) ** (e - fbits)
    q, rem = divmod(x, ulp)
    q = int(q)
    if rem > ulp / 2 or (rem == ulp / 2 and q & 1):
        q += 1
    if q >> (fbits + 1):                                  # carried into the next binade
        q >>= 1
        e += 1
    if e > bias:
        return out_sign | (((1 << ebits) - 1) << fbits)   # infinity
    field = (e + bias) if q >> fbits else 0
    return out_sign | (field << fbits) | (q & ((1 << fbits) - 1))


def value(bits: int, width: int = 32) -> Fraction:
    """Exact value of a finite binary<width> pattern."""
    ebits, fbits = FORMATS[width]
    bias = (1 << (ebits - 1)) - 1
    sign = -1 if bits >> (width - 1) & 1 else 1
    field = (bits >> fbits) & ((1 << ebits) - 1)
    frac = bits & ((1 << fbits) - 1)
    if field == (1 << ebits) - 1:
        raise ValueError(f"0x{bits:x} is not finite")
    if field == 0:
        return sign * Fraction(frac) * Fraction(2) ** (1 - bias - fbits)
    return sign * Fraction(frac | 1 << fbits) * Fraction(2) ** (field - bias - fbits)


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def sin_turns(x: Fraction, want_cos: bool) -> Fraction:
    """sin/cos(2 pi x) to about 60 digits (Taylor series on x reduced to [-1/2, 1/2])."""
    with localcontext() as ctx:
        ctx.prec = 70
        r = x - round(x)
        t = 2 * PI * Decimal(r.numerator) / Decimal(r.denominator)
        term, k, total = (Decimal(1), 0, Decimal(0)) if want_cos else (t, 1, Decimal(0))
        while abs(term) > Decimal(10) ** -65:
            total += term
            term = -term * t * t / ((k + 1) * (k + 2))
            k += 2
        return Fraction(total)
