"""Vector ALU integer semantics on 32-lane uint32 (or uint64) numpy arrays.

Every function takes full lane arrays (the caller broadcasts scalar sources) and returns
the destination lane array; arithmetic wraps exactly as the 32-bit hardware does.
"""
from __future__ import annotations

import numpy as np

U32, U64, I32, I64 = np.uint32, np.uint64, np.int32, np.int64
_M32 = U64(0xFFFF_FFFF)


def _u64(x):
    return x.astype(U64)


def _i32(x):
    return x.view(I32) if x.dtype == U32 else x.astype(U32).view(I32)


def _sh(x, bits=31):
    """Shift amount: the low 5 (or 6) bits, as the ISA masks them."""
    return (x & U32(bits)).astype(U32)


def mul_lo(a, b):
    return ((_u64(a) * _u64(b)) & _M32).astype(U32)


def mul_hi_u32(a, b):
    return ((_u64(a) * _u64(b)) >> U64(32)).astype(U32)


def mul_hi_i32(a, b):
    return ((_i32(a).astype(I64) * _i32(b).astype(I64)) >> I64(32)).astype(U32)


def u24(x):
    return x & U32(0xFFFFFF)


def i24(x):
    return ((x << U32(8)).view(I32) >> I32(8)).astype(I64)


def bfe_u32(a, off, width):
    w = width & U32(31)
    return ((a >> _sh(off)) & ((U32(1) << w) - U32(1))).astype(U32)


def bfe_i32(a, off, width):
    """The field is taken after an arithmetic shift, so bits past bit 31 are copies of the sign."""
    w = (width & U32(31)).astype(I32)
    shifted = _i32(a) >> _sh(off).astype(I32)
    v = (shifted & ((I32(1) << w) - I32(1))).astype(I32)
    shift = (I32(32) - w).astype(I32) & I32(31)
    sext = ((v << shift) >> shift).astype(I32)
    return np.where(w == 0, I32(0), sext).astype(I32).view(U32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=U32)


def brev(a):
    return (_REV8[a & U32(0xFF)] << U32(24)) | (_REV8[(a >> U32(8)) & U32(0xFF)] << U32(16)) | \
        (_REV8[(a >> U32(16)) & U32(0xFF)] << U32(8)) | _REV8[a >> U32(24)]


def popcount(a):
    return np.bitwise_count(a).astype(U32)


def ctz(a):
    """Trailing zeros; 0xFFFFFFFF (-1) when no bit is set."""
    low = a & (~a + U32(1))
    return np.where(a == 0, U32(0xFFFF_FFFF), popcount(low - U32(1)))


def clz(a):
    """Leading zeros; 0xFFFFFFFF (-1) when no bit is set."""
    s = a.copy()
    for k in (1, 2, 4, 8, 16):
        s |= s >> U32(k)
    return np.where(a == 0, U32(0xFFFF_FFFF), U32(32) - popcount(s))


def cls(a):
    """Index (from the MSB) of the first bit that differs from the sign bit; -1 for 0 and -1."""
    x = np.where(a >> U32(31) != 0, ~a, a).astype(U32)
    return np.where((a == 0) | (a == U32(0xFFFF_FFFF)), U32(0xFFFF_FFFF), clz(x))


def alignbit(a, b, s):
    return (((_u64(a) << U64(32)) | _u64(b)) >> _u64(s & U32(31)) & _M32).astype(U32)


def alignbyte(a, b, s):
    return (((_u64(a) << U64(32)) | _u64(b)) >> (_u64(s & U32(3)) * U64(8)) & _M32).astype(U32)


def perm(a, b, sel):
    """v_perm_b32: each result byte picks a byte of {a, b} (b holds bytes 0-3), a sign or a constant."""
    pool = (a.astype(U64) << U64(32)) | b.astype(U64)
    out = np.zeros(a.shape, U32)
    for k in range(4):
        s = ((sel >> U32(8 * k)) & U32(0xFF)).astype(U64)
        byte = ((pool >> ((s & U64(7)) * U64(8))) & U64(0xFF)).astype(U32)
        # selectors 8..11 replicate the sign bit of bytes 1, 3, 5, 7
        sign_bit = U64(16) * (np.clip(s, 8, 11).astype(U64) - U64(8)) + U64(15)
        sign = ((pool >> sign_bit) & U64(1)).astype(U32) * U32(0xFF)
        byte = np.where(s >= 13, U32(0xFF), np.where(s == 12, U32(0), np.where(s >= 8, sign, byte)))
        out |= byte.astype(U32) << U32(8 * k)
    return out


def smin(a, b):
    return np.minimum(_i32(a), _i32(b)).view(U32)


def smax(a, b):
    return np.maximum(_i32(a), _i32(b)).view(U32)


def med3_i32(a, b, c):
    a, b, c = _i32(a), _i32(b), _i32(c)
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c)).view(U32)


def med3_u32(a, b, c):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def add_co(a, b, cin=None):
    """32-bit add with carry-in (lane bool array); returns (sum, carry-out bools)."""
    s = _u64(a) + _u64(b)
    if cin is not None:
        s = s + cin.astype(U64)
    return (s & _M32).astype(U32), s > _M32


def sub_co(a, b, bin_=None):
    """32-bit subtract with borrow-in; returns (difference, borrow-out bools)."""
    s = _u64(b)
    if bin_ is not None:
        s = s + bin_.astype(U64)
    return ((_u64(a) - s) & _M32).astype(U32), s > _u64(a)


def mad_u64_u32(a, b, c):
    """{carry, D[63:0]} = a.u32 * b.u32 + c.u64."""
    p = _u64(a) * _u64(b)
    s = p + c.astype(U64)
    return s, s < p


def mad_i64_i32(a, b, c):
    """{D1, D[63:0]} = a.i32 * b.i32 + c.i64 as a 65-bit signed value; D1 is bit 64."""
    p = _i32(a).astype(I64) * _i32(b).astype(I64)
    cc = c.astype(U64).view(I64)
    s = (p.view(U64) + cc.view(U64)).view(I64)
    overflow = ((p < 0) == (cc < 0)) & ((s < 0) != (p < 0))
    sign = np.where(overflow, p < 0, s < 0)
    return s.view(U64), sign


INT_CMP = {
    "f": lambda a, b: np.zeros(a.shape, bool),
    "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
    "ne": np.not_equal, "lg": np.not_equal, "ge": np.greater_equal,
    "t": lambda a, b: np.ones(a.shape, bool),
}


def int_compare(cond: str, typ: str):
    """f(a, b) -> lane bools for v_cmp_<cond>_<typ> with integer ``typ`` (i32 u32 i64 u64 i16 u16)."""
    op = INT_CMP[cond]
    if typ == "i32":
        return lambda a, b: op(_i32(a), _i32(b))
    if typ == "i64":
        return lambda a, b: op(a.astype(U64).view(I64), b.astype(U64).view(I64))
    return lambda a, b: op(a, b)
