"""DPP source forms of the VALU encodings (data-parallel primitives: DPP16 and DPP8).

A VOP1/VOP2/VOPC instruction whose src0 field holds 0xFA (DPP16) or 0xE9/0xEA (DPP8 with
fetch-inactive off/on) is followed by one more dword; a VOP3/VOP3SD instruction with such a
src0 carries it as its third dword. That dword names the VGPR src0 really reads and how each
lane takes it from another lane of its row (DPP16: 16 lanes) or group of 8 (DPP8).

DPP16 dword: [7:0] vsrc0, [16:8] dpp_ctrl, [18] fi, [19] bound_ctrl, [20] src0 neg, [21] src0
abs, [22] src1 neg, [23] src1 abs (VOP1/VOP2/VOPC only; VOP3 uses its own modifier fields),
[27:24] bank_mask, [31:28] row_mask. DPP8 dword: [7:0] vsrc0, then eight 3-bit lane selects.

Sources: RDNA 4 ISA guide, "Data Parallel Processing"; LLVM's AMDGPU modifier syntax
(dpp16_ctrl, dpp8, row_mask, bank_mask, bound_ctrl, fi) and instruction printer.
"""
from __future__ import annotations

from dataclasses import dataclass

from .opcodes import OpInfo

DPP8, DPP8_FI, DPP16 = 0xE9, 0xEA, 0xFA
CODES = (DPP8, DPP8_FI, DPP16)

# VALU opcodes with 32-bit operands that LLVM 19 gives no DPP form on gfx1200
_NO_DPP = frozenset({
    "v_nop", "v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32",
    "v_div_fixup_f32", "v_div_fmas_f32", "v_div_scale_f32",
    "v_mul_lo_u32", "v_mul_hi_u32", "v_mul_hi_i32",
    "v_permlane16_b32", "v_permlanex16_b32", "v_permlane16_var_b32", "v_permlanex16_var_b32",
})

# dpp_ctrl values LLVM prints as a comment on gfx10+ (they are not valid there)
_CTRL_COMMENT = {0x130: "wave_shl", 0x134: "wave_rol", 0x138: "wave_shr", 0x13C: "wave_ror",
                 0x142: "row_bcast", 0x143: "row_bcast"}


def integer_src1(info: OpInfo) -> bool:
    """v_ldexp_*: src1 is an integer exponent. In a VOP1/VOP2 DPP16 form LLVM reads its neg bit
    as sext() (no effect on the 16 or 32 bits the operation uses) and ignores its abs bit."""
    return info.name.startswith("v_ldexp")


def supports(info: OpInfo) -> bool:
    """Whether the opcode has DPP16/DPP8 forms (LLVM 19, gfx1200): VALU ops with a VGPR result
    and operands of 32 bits or narrower, except the lane-access, K-literal, single-encoding
    (v_swap_b32 ...) and a few VOP3-only ops."""
    return (info.kind in ("valu", "vtrans") and info.name not in _NO_DPP
            and not {"literal_k", "sdst", "no_e64"} & info.flags and info.dst_bits <= 32
            and all(b <= 32 for b in info.src_bits))


@dataclass(frozen=True)
class Dpp:
    """The DPP dword of one instruction (see the module docstring)."""
    vsrc0: int                     # the VGPR src0 reads
    ctrl: int | None               # DPP16 dpp_ctrl (9 bits); None for DPP8
    sel: tuple[int, ...] = ()      # DPP8: the lane each lane of a group of 8 reads
    fi: int = 0                    # fetch inactive: read lanes whose EXEC bit is 0
    bound_ctrl: int = 0            # DPP16: an invalid source lane reads 0 (else: no write)
    row_mask: int = 0xF            # DPP16: rows (16 lanes) that write
    bank_mask: int = 0xF           # DPP16: banks (lanes 4k..4k+3 of each row) that write
    neg: int = 0                   # DPP16 of VOP1/VOP2/VOPC: bit i negates source i
    abs: int = 0                   # ... bit i takes the absolute value of source i

    @property
    def is_dpp8(self) -> bool:
        return self.ctrl is None


def parse(word: int, code: int, vop3: bool) -> Dpp:
    """The DPP dword ``word`` of an instruction whose src0 field is ``code`` (one of CODES)."""
    vsrc0 = word & 0xFF
    if code != DPP16:
        return Dpp(vsrc0, None, tuple((word >> (8 + 3 * i)) & 7 for i in range(8)),
                   fi=int(code == DPP8_FI))
    mods = 0 if vop3 else word >> 20
    return Dpp(vsrc0, (word >> 8) & 0x1FF, fi=(word >> 18) & 1, bound_ctrl=(word >> 19) & 1,
               row_mask=word >> 28, bank_mask=(word >> 24) & 0xF,
               neg=(mods & 1) | (mods >> 1 & 2), abs=(mods >> 1 & 1) | (mods >> 2 & 2))


def ctrl_text(ctrl: int) -> str:
    """LLVM's text of a DPP16 dpp_ctrl value on gfx1200."""
    if ctrl <= 0xFF:
        return "quad_perm:[" + ",".join(str(ctrl >> (2 * i) & 3) for i in range(4)) + "]"
    for first, name in ((0x101, "row_shl"), (0x111, "row_shr"), (0x121, "row_ror")):
        if first <= ctrl < first + 15:
            return f"{name}:{ctrl - first + 1}"
    if ctrl == 0x140:
        return "row_mirror"
    if ctrl == 0x141:
        return "row_half_mirror"
    if 0x150 <= ctrl <= 0x15F:
        return f"row_share:{ctrl - 0x150}"
    if 0x160 <= ctrl <= 0x16F:
        return f"row_xmask:{ctrl - 0x160}"
    if ctrl in _CTRL_COMMENT:
        return f"/* {_CTRL_COMMENT[ctrl]} is not supported starting from GFX10 */"
    return "/* Invalid dpp_ctrl value */"


def controls_text(d: Dpp) -> str:
    """The DPP modifiers LLVM prints after the operands (and after clamp/omod)."""
    if d.is_dpp8:
        text = "dpp8:[" + ",".join(map(str, d.sel)) + "]"
    else:
        text = f"{ctrl_text(d.ctrl)} row_mask:0x{d.row_mask:x} bank_mask:0x{d.bank_mask:x}"
        if d.bound_ctrl:
            text += " bound_ctrl:1"
    return text + (" fi:1" if d.fi else "")
