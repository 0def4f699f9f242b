"""Scalar ALU semantics (SOP1, SOP2, SOPC, SOPK) from the RDNA 4 ISA guide.

Each function works on Python ints holding the unsigned bit pattern of the operand and
returns ``(result, scc)`` where ``scc`` is None when the instruction leaves SCC alone.
"""
from __future__ import annotations

M32 = 0xFFFF_FFFF
M64 = 0xFFFF_FFFF_FFFF_FFFF


def sx(x: int, bits: int) -> int:
    """Interpret the low ``bits`` of ``x`` as a two's-complement signed integer."""
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def _bits(w: int) -> int:
    return (1 << w) - 1


def _brev(x: int, w: int) -> int:
    return int(format(x, f"0{w}b")[::-1], 2)


def _ctz(x: int, w: int) -> int:
    return (x & -x).bit_length() - 1 if x else -1


def _clz(x: int, w: int) -> int:
    return w - x.bit_length() if x else -1


def _cls(x: int, w: int) -> int:
    """Count of leading bits equal to the sign bit, after the sign bit; -1 for 0 and -1."""
    if x in (0, _bits(w)):
        return -1
    if x >> (w - 1):
        x = ~x & _bits(w)
    return w - x.bit_length()  # index (from the MSB) of the first bit that differs from the sign


def _signed_overflow_add(a: int, b: int, r: int, w: int = 32) -> int:
    sa, sb, sr = a >> (w - 1) & 1, b >> (w - 1) & 1, r >> (w - 1) & 1
    return int(sa == sb and sa != sr)


def _signed_overflow_sub(a: int, b: int, r: int, w: int = 32) -> int:
    sa, sb, sr = a >> (w - 1) & 1, b >> (w - 1) & 1, r >> (w - 1) & 1
    return int(sa != sb and sa != sr)


def _bfe(a: int, b: int, w: int, signed: bool) -> int:
    off = b & (w - 1)
    width = (b >> 16) & 0x7F
    if width == 0:
        return 0
    if signed:   # the ISA shifts S0 arithmetically: bits past the top are copies of the sign
        v = (sx(a, w) >> off) & _bits(min(width, w))
        return (sx(v, width) if width < w else v) & _bits(w)
    return (a >> off) & _bits(min(width, w))


def _nz(r: int) -> tuple[int, int]:
    return r, int(r != 0)


# SOP2: f(a, b, scc) -> (d, scc | None); operands already masked to their widths.
SOP2 = {
    "s_add_co_u32": lambda a, b, c: ((a + b) & M32, int(a + b > M32)),
    "s_sub_co_u32": lambda a, b, c: ((a - b) & M32, int(b > a)),
    "s_add_co_i32": lambda a, b, c: ((a + b) & M32, _signed_overflow_add(a, b, (a + b) & M32)),
    "s_sub_co_i32": lambda a, b, c: ((a - b) & M32, _signed_overflow_sub(a, b, (a - b) & M32)),
    "s_add_co_ci_u32": lambda a, b, c: ((a + b + c) & M32, int(a + b + c > M32)),
    "s_sub_co_ci_u32": lambda a, b, c: ((a - b - c) & M32, int(b + c > a)),
    "s_absdiff_i32": lambda a, b, c: _nz(abs(sx(a - b, 32)) & M32),   # |wrapped difference|
    "s_lshl_b32": lambda a, b, c: _nz((a << (b & 31)) & M32),
    "s_lshl_b64": lambda a, b, c: _nz((a << (b & 63)) & M64),
    "s_lshr_b32": lambda a, b, c: _nz(a >> (b & 31)),
    "s_lshr_b64": lambda a, b, c: _nz(a >> (b & 63)),
    "s_ashr_i32": lambda a, b, c: _nz((sx(a, 32) >> (b & 31)) & M32),
    "s_ashr_i64": lambda a, b, c: _nz((sx(a, 64) >> (b & 63)) & M64),
    "s_lshl1_add_u32": lambda a, b, c: (((a << 1) + b) & M32, int((a << 1) + b > M32)),
    "s_lshl2_add_u32": lambda a, b, c: (((a << 2) + b) & M32, int((a << 2) + b > M32)),
    "s_lshl3_add_u32": lambda a, b, c: (((a << 3) + b) & M32, int((a << 3) + b > M32)),
    "s_lshl4_add_u32": lambda a, b, c: (((a << 4) + b) & M32, int((a << 4) + b > M32)),
    "s_min_i32": lambda a, b, c: (a, 1) if sx(a, 32) < sx(b, 32) else (b, 0),
    "s_min_u32": lambda a, b, c: (a, 1) if a < b else (b, 0),
    "s_max_i32": lambda a, b, c: (a, 1) if sx(a, 32) >= sx(b, 32) else (b, 0),
    "s_max_u32": lambda a, b, c: (a, 1) if a >= b else (b, 0),
    "s_and_b32": lambda a, b, c: _nz(a & b),
    "s_and_b64": lambda a, b, c: _nz(a & b),
    "s_or_b32": lambda a, b, c: _nz(a | b),
    "s_or_b64": lambda a, b, c: _nz(a | b),
    "s_xor_b32": lambda a, b, c: _nz(a ^ b),
    "s_xor_b64": lambda a, b, c: _nz(a ^ b),
    "s_nand_b32": lambda a, b, c: _nz(~(a & b) & M32),
    "s_nand_b64": lambda a, b, c: _nz(~(a & b) & M64),
    "s_nor_b32": lambda a, b, c: _nz(~(a | b) & M32),
    "s_nor_b64": lambda a, b, c: _nz(~(a | b) & M64),
    "s_xnor_b32": lambda a, b, c: _nz(~(a ^ b) & M32),
    "s_xnor_b64": lambda a, b, c: _nz(~(a ^ b) & M64),
    "s_and_not1_b32": lambda a, b, c: _nz(a & ~b & M32),
    "s_and_not1_b64": lambda a, b, c: _nz(a & ~b & M64),
    "s_or_not1_b32": lambda a, b, c: _nz((a | ~b) & M32),
    "s_or_not1_b64": lambda a, b, c: _nz((a | ~b) & M64),
    "s_bfe_u32": lambda a, b, c: _nz(_bfe(a, b, 32, False)),
    "s_bfe_i32": lambda a, b, c: _nz(_bfe(a, b, 32, True)),
    "s_bfe_u64": lambda a, b, c: _nz(_bfe(a, b, 64, False)),
    "s_bfe_i64": lambda a, b, c: _nz(_bfe(a, b, 64, True)),
    "s_bfm_b32": lambda a, b, c: ((_bits(a & 31) << (b & 31)) & M32, None),
    "s_bfm_b64": lambda a, b, c: ((_bits(a & 63) << (b & 63)) & M64, None),
    "s_mul_i32": lambda a, b, c: ((a * b) & M32, None),
    "s_mul_hi_u32": lambda a, b, c: ((a * b) >> 32, None),
    "s_mul_hi_i32": lambda a, b, c: (((sx(a, 32) * sx(b, 32)) >> 32) & M32, None),
    "s_mul_u64": lambda a, b, c: ((a * b) & M64, None),
    "s_cselect_b32": lambda a, b, c: (a if c else b, None),
    "s_cselect_b64": lambda a, b, c: (a if c else b, None),
    "s_pack_ll_b32_b16": lambda a, b, c: ((a & 0xFFFF) | (b & 0xFFFF) << 16, None),
    "s_pack_lh_b32_b16": lambda a, b, c: ((a & 0xFFFF) | (b & 0xFFFF0000), None),
    "s_pack_hh_b32_b16": lambda a, b, c: ((a >> 16) | (b & 0xFFFF0000), None),
    "s_pack_hl_b32_b16": lambda a, b, c: ((a >> 16) | (b & 0xFFFF) << 16, None),
    "s_add_nc_u64": lambda a, b, c: ((a + b) & M64, None),
    "s_sub_nc_u64": lambda a, b, c: ((a - b) & M64, None),
}

# SOP1 (EXEC-independent): f(a, scc) -> (d, scc | None)
SOP1 = {
    "s_mov_b32": lambda a, c: (a, None),
    "s_mov_b64": lambda a, c: (a, None),
    "s_not_b32": lambda a, c: _nz(~a & M32),
    "s_not_b64": lambda a, c: _nz(~a & M64),
    "s_brev_b32": lambda a, c: (_brev(a, 32), None),
    "s_brev_b64": lambda a, c: (_brev(a, 64), None),
    "s_ctz_i32_b32": lambda a, c: (_ctz(a, 32) & M32, None),
    "s_ctz_i32_b64": lambda a, c: (_ctz(a, 64) & M32, None),
    "s_clz_i32_u32": lambda a, c: (_clz(a, 32) & M32, None),
    "s_clz_i32_u64": lambda a, c: (_clz(a, 64) & M32, None),
    "s_cls_i32": lambda a, c: (_cls(a, 32) & M32, None),
    "s_cls_i32_i64": lambda a, c: (_cls(a, 64) & M32, None),
    "s_sext_i32_i8": lambda a, c: (sx(a, 8) & M32, None),
    "s_sext_i32_i16": lambda a, c: (sx(a, 16) & M32, None),
    "s_abs_i32": lambda a, c: _nz(abs(sx(a, 32)) & M32),
    "s_bcnt0_i32_b32": lambda a, c: _nz(32 - bin(a).count("1")),
    "s_bcnt0_i32_b64": lambda a, c: _nz(64 - bin(a).count("1")),
    "s_bcnt1_i32_b32": lambda a, c: _nz(bin(a).count("1")),
    "s_bcnt1_i32_b64": lambda a, c: _nz(bin(a).count("1")),
}

# SOP1 that read or write a register besides the destination: d = f(a, d_old) -> d
SOP1_BITSET = {
    "s_bitset0_b32": lambda a, d: d & ~(1 << (a & 31)) & M32,
    "s_bitset1_b32": lambda a, d: d | (1 << (a & 31)),
    "s_bitset0_b64": lambda a, d: d & ~(1 << (a & 63)) & M64,
    "s_bitset1_b64": lambda a, d: d | (1 << (a & 63)),
}

# saveexec family: new EXEC = f(S0, EXEC); D = old EXEC; SCC = new EXEC != 0
SAVEEXEC = {
    "and": lambda s, e: s & e,
    "or": lambda s, e: s | e,
    "xor": lambda s, e: s ^ e,
    "nand": lambda s, e: ~(s & e),
    "nor": lambda s, e: ~(s | e),
    "xnor": lambda s, e: ~(s ^ e),
    "and_not0": lambda s, e: ~s & e,
    "or_not0": lambda s, e: ~s | e,
    "and_not1": lambda s, e: s & ~e,
    "or_not1": lambda s, e: s | ~e,
}

_CMP = {
    "eq": lambda a, b: a == b, "lg": lambda a, b: a != b, "ne": lambda a, b: a != b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
}


def sopc(name: str):
    """Return f(a, b) -> SCC for an SOPC compare, or None if the name is not a compare."""
    parts = name.split("_")
    if name.startswith("s_bitcmp"):
        want = int(parts[1][-1])
        w = 64 if name.endswith("b64") else 32
        return lambda a, b: int(((a >> (b & (w - 1))) & 1) == want)
    if parts[1] != "cmp" or parts[2] not in _CMP:
        return None
    cond, typ = _CMP[parts[2]], parts[3]
    bits = int(typ[1:])
    if typ[0] == "i":
        return lambda a, b: int(cond(sx(a, bits), sx(b, bits)))
    return lambda a, b: int(cond(a, b))


def sopk(name: str):
    """Return f(d_old, imm16, scc) -> (d | None, scc | None) for an SOPK instruction."""
    if name == "s_movk_i32":
        return lambda d, k, c: (sx(k, 16) & M32, None)
    if name == "s_cmovk_i32":
        return lambda d, k, c: ((sx(k, 16) & M32) if c else d, None)
    if name == "s_addk_co_i32":
        def addk(d, k, c):
            kk = sx(k, 16) & M32
            r = (d + kk) & M32
            return r, _signed_overflow_add(d, kk, r)
        return addk
    if name == "s_mulk_i32":
        return lambda d, k, c: ((d * sx(k, 16)) & M32, None)
    if name.startswith("s_cmpk_"):
        cond, typ = _CMP[name.split("_")[2]], name.split("_")[3]
        if typ == "i32":
            return lambda d, k, c: (None, int(cond(sx(d, 32), sx(k, 16))))
        return lambda d, k, c: (None, int(cond(d, k)))
    return None
