"""gfx1200 operand encodings: source codes, inline constants, register names.

Source operand codes (8-bit scalar, 9-bit vector; RDNA 4 ISA guide, operand encodings):
  0-105 s0-s105, 106/107 vcc_lo/hi, 108-123 ttmp0-15, 124 null, 125 m0,
  126/127 exec_lo/hi, 128-192 ints 0..64, 193-208 ints -1..-16,
  235-238 the LDS and private aperture registers (src_shared_base ...),
  240-248 float constants, 251 src_vccz, 252 src_execz, 253 src_scc,
  255 32-bit literal follows, 256-511 v0-v255.

Names follow LLVM 19's AMDGPU instruction printer (gfx1200, wave32).
"""
from __future__ import annotations

import struct

SGPR_MAX = 105
VCC_LO, VCC_HI = 106, 107
TTMP0 = 108
NULL = 124
M0 = 125
EXEC_LO, EXEC_HI = 126, 127
INT_ZERO = 128
FLOAT_FIRST, FLOAT_LAST = 240, 248
SRC_VCCZ, SRC_EXECZ, SRC_SCC = 251, 252, 253
APERTURE_NAMES = {235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base",
                  238: "src_private_limit"}
LITERAL = 255
VGPR0 = 256
SOFFSET_NONE = 0x7C     # SMEM soffset / VGLOBAL saddr: "null" / "off"

# code -> (f32 bits, f64 bits, LLVM text for a 32-bit operand, LLVM text for a 64-bit operand)
_FLOATS = {
    240: (0x3F000000, 0x3FE0000000000000, "0.5"),
    241: (0xBF000000, 0xBFE0000000000000, "-0.5"),
    242: (0x3F800000, 0x3FF0000000000000, "1.0"),
    243: (0xBF800000, 0xBFF0000000000000, "-1.0"),
    244: (0x40000000, 0x4000000000000000, "2.0"),
    245: (0xC0000000, 0xC000000000000000, "-2.0"),
    246: (0x40800000, 0x4010000000000000, "4.0"),
    247: (0xC0800000, 0xC010000000000000, "-4.0"),
    248: (0x3E22F983, 0x3FC45F306DC9C882, "0.15915494"),   # 1/(2*pi)
}
_F16 = {240: 0x3800, 241: 0xB800, 242: 0x3C00, 243: 0xBC00, 244: 0x4000, 245: 0xC000,
        246: 0x4400, 247: 0xC400, 248: 0x3118}
_INV2PI_64_TEXT = "0.15915494309189532"
_F32_INLINE_TEXT = {v[0]: v[2] for v in _FLOATS.values()}
_F64_INLINE_TEXT = {v[1]: (_INV2PI_64_TEXT if c == 248 else v[2]) for c, v in _FLOATS.items()}


def is_inline_constant(code: int) -> bool:
    return 128 <= code <= 208 or FLOAT_FIRST <= code <= FLOAT_LAST


def is_immediate(code: int) -> bool:
    """An inline constant or the literal (LLVM prints a negated one as neg(x))."""
    return is_inline_constant(code) or code == LITERAL


def inline_constant(code: int, bits: int = 32) -> int | None:
    """Bit pattern (unsigned, `bits` wide) of an inline-constant source code, else None.

    Integers sign-extend to the operand width; for 64-bit operands the float
    constants are f64 patterns, for 16-bit operands f16 patterns.
    """
    mask = (1 << bits) - 1
    if 128 <= code <= 192:
        return code - 128
    if 193 <= code <= 208:
        return (-(code - 192)) & mask
    if code in _FLOATS:
        if bits == 16:
            return _F16[code]
        return _FLOATS[code][1] if bits == 64 else _FLOATS[code][0]
    return None


def _sreg_name(code: int, nregs: int) -> str | None:
    """Name of a scalar register operand of `nregs` dwords, or None if code is not a register."""
    if code <= SGPR_MAX:
        return f"s{code}" if nregs == 1 else f"s[{code}:{code + nregs - 1}]"
    if code in (VCC_LO, VCC_HI):
        if nregs == 1:
            return "vcc_lo" if code == VCC_LO else "vcc_hi"
        return "vcc" if code == VCC_LO and nregs == 2 else None
    if TTMP0 <= code < TTMP0 + 16:
        t = code - TTMP0
        return f"ttmp{t}" if nregs == 1 else f"ttmp[{t}:{t + nregs - 1}]"
    if code == NULL:
        return "null"
    if code == M0:
        return "m0" if nregs == 1 else None
    if code in (EXEC_LO, EXEC_HI):
        if nregs == 1:
            return "exec_lo" if code == EXEC_LO else "exec_hi"
        return "exec" if code == EXEC_LO and nregs == 2 else None
    return None


def sreg_name(code: int, bits: int = 32) -> str:
    """LLVM text of a scalar register (destination or source) of the given width."""
    n = _sreg_name(code, max(1, bits // 32))
    return n if n is not None else f"<sreg {code}>"


def vreg_name(index: int, bits: int = 32) -> str:
    """LLVM text of a VGPR (index 0..255) holding `bits`."""
    n = max(1, bits // 32)
    return f"v{index}" if n == 1 else f"v[{index}:{index + n - 1}]"


def literal_text(value: int, bits: int = 32, fp64: bool = False) -> str:
    """LLVM text of a 32-bit literal used as a `bits`-wide operand.

    LLVM prints a literal whose value happens to be an inline constant as that
    constant (e.g. 0x3f800000 on a 32-bit operand prints as 1.0). A literal on a
    64-bit float operand (`fp64`) is the high half of the double, the low half zero.
    """
    value &= 0xFFFFFFFF
    if bits == 64 and fp64:
        return _F64_INLINE_TEXT.get(value << 32, "0" if value == 0 else f"0x{value:x}")
    if bits == 16:
        # 16-bit operands use the low half; LLVM prints it in hex unless the whole dword
        # reads as an inline integer
        signed = value - (1 << 32) if value & 0x80000000 else value
        return str(signed) if -16 <= signed <= 64 else f"0x{value & 0xFFFF:x}"
    if bits == 64:
        # 64-bit integer operands zero-extend the literal; only 0..64 look inline.
        return str(value) if value <= 64 else f"0x{value:x}"
    signed = value - (1 << 32) if value & 0x80000000 else value
    if -16 <= signed <= 64:
        return str(signed)
    if value in _F32_INLINE_TEXT:
        return _F32_INLINE_TEXT[value]
    return f"0x{value:x}"


_F16_INLINE_TEXT = {p: _FLOATS[c][2] for c, p in _F16.items()}


def salu_f16_literal_text(value: int, compare: bool) -> str:
    """LLVM 19's text of a literal on an f16 source of a SOP2 op (``compare`` False) or of an
    s_cmp_*_f16 (True). SOP2: the low half, as an f16 inline constant's number, a 16-bit
    inline integer, else hex. SOPC: the dword as a 32-bit operand's inline value, else the low
    half in hex (llvm-mc-19 -disassemble)."""
    value &= 0xFFFFFFFF
    low = value & 0xFFFF
    if compare:
        signed = value - (1 << 32) if value & 0x80000000 else value
        if -16 <= signed <= 64:
            return str(signed)
        return _F32_INLINE_TEXT.get(value, f"0x{low:x}")
    signed = low - (1 << 16) if low & 0x8000 else low
    if low in _F16_INLINE_TEXT:
        return _F16_INLINE_TEXT[low]
    return str(signed) if -16 <= signed <= 64 else f"0x{low:x}"


def operand_name(code: int, bits: int = 32, literal: int | None = None, fp64: bool = False) -> str:
    """LLVM text of a source operand code (0..511) of the given width.

    `literal` is the instruction's literal dword, used when code == 255 (`fp64`: the
    operand is a double, see literal_text).
    """
    if code >= VGPR0:
        return vreg_name(code - VGPR0, bits)
    if 128 <= code <= 192:
        return str(code - 128)
    if 193 <= code <= 208:
        return str(192 - code)
    if code in _FLOATS:
        if bits == 16:
            return f"0x{_F16[code]:x}"     # fake16 integer operands: the f16 pattern in hex
        return _INV2PI_64_TEXT if (bits == 64 and code == 248) else _FLOATS[code][2]
    if code in APERTURE_NAMES:
        return APERTURE_NAMES[code]
    if code == SRC_VCCZ:
        return "src_vccz"
    if code == SRC_EXECZ:
        return "src_execz"
    if code == SRC_SCC:
        return "src_scc"
    if code == LITERAL:
        return literal_text(literal if literal is not None else 0, bits, fp64)
    return sreg_name(code, bits)


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]
