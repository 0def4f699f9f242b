"""VOPD: two VALU operations, X and Y, issued as one instruction (dual issue).

Encoding (64 bits, then one 32-bit literal when either half needs one):
  dword 0: [31:26] 110010, [25:22] opx, [21:17] opy, [16:9] vsrcx1, [8:0] srcx0
  dword 1: [31:24] vdstx, [23:17] vdsty[7:1], [16:9] vsrcy1, [8:0] srcy0
vdsty[0] is not encoded: it is the complement of vdstx[0], so the two destinations differ.
src*0 are 9-bit source codes (VGPR, SGPR, inline constant or the literal); vsrc*1 are VGPRs.
The fmaak/fmamk halves take the literal as their K constant; X and Y share that one literal.

Each VOPD opcode performs an existing VOP1/VOP2 operation (``v_dual_mul_f32`` is ``v_mul_f32``,
``v_dual_cndmask_b32`` reads VCC as ``v_cndmask_b32_e32`` does); :data:`BASE` maps them.

Sources: RDNA 4 ISA guide, "VOPD" (opcode table, dual-issue rules); the encoding and the
checks below are LLVM 19's (``llvm-mc -mcpu=gfx1200``): it rejects the dot2acc opcodes and a
v_dual_mov_b32 half whose vsrc1 field is not 0.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

from . import operands as O
from .dpp import CODES as DPP_CODES
from .opcodes import Fmt, OpInfo, by_name

# VOPD opcode -> the VALU operation it performs. X takes opcodes 0..15 (4 bits), Y 0..31.
BASE = {0: "v_fmac_f32", 1: "v_fmaak_f32", 2: "v_fmamk_f32", 3: "v_mul_f32", 4: "v_add_f32",
        5: "v_sub_f32", 6: "v_subrev_f32", 7: "v_mul_dx9_zero_f32", 8: "v_mov_b32",
        9: "v_cndmask_b32", 10: "v_max_num_f32", 11: "v_min_num_f32", 16: "v_add_nc_u32",
        17: "v_lshlrev_b32", 18: "v_and_b32"}
Y_ONLY = frozenset({16, 17, 18})
_MOV = 8


@dataclass(frozen=True)
class Half:
    """One operation of a VOPD instruction."""
    code: int            # VOPD opcode
    info: OpInfo         # the VOP1/VOP2 operation it performs
    vdst: int            # VGPR index
    src0: int            # 9-bit source code
    vsrc1: int           # VGPR index (unused by v_dual_mov_b32)

    @property
    def name(self) -> str:
        return "v_dual_" + self.info.name[2:]

    @property
    def uses_literal(self) -> bool:
        return self.src0 == O.LITERAL or "literal_k" in self.info.flags


def fields(words: Sequence[int]) -> dict:
    """Raw fields of a VOPD instruction (dword 0 and 1)."""
    w0, w1 = words[0], words[1]
    vdstx = w1 >> 24
    return {"opx": (w0 >> 22) & 0xF, "opy": (w0 >> 17) & 0x1F, "srcx0": w0 & 0x1FF,
            "vsrcx1": (w0 >> 9) & 0xFF, "vdstx": vdstx, "srcy0": w1 & 0x1FF,
            "vsrcy1": (w1 >> 9) & 0xFF, "vdsty": ((w1 >> 17) & 0x7F) << 1 | (~vdstx & 1)}


def halves(f: dict) -> tuple[Half, Half]:
    """The X and Y operations of the fields ``f``; ValueError names what LLVM rejects."""
    out = []
    for side in ("x", "y"):
        code, src0, vsrc1 = f[f"op{side}"], f[f"src{side}0"], f[f"vsrc{side}1"]
        if code not in BASE or (side == "x" and code in Y_ONLY):
            raise ValueError(f"VOPD op{side} {code} is not a gfx1200 VOPD operation of LLVM 19")
        if src0 in DPP_CODES:
            raise ValueError(f"VOPD src{side}0 0x{src0:x} is a DPP code")
        if code == _MOV and vsrc1:
            raise ValueError(f"v_dual_mov_b32 ({side}) with vsrc{side}1 field {vsrc1} (must be 0)")
        out.append(Half(code, by_name(BASE[code]), f[f"vdst{side}"], src0, vsrc1))
    return out[0], out[1]


@functools.cache
def pair_info(x: int, y: int) -> OpInfo:
    """The OpInfo of a VOPD instruction: one VALU instruction named after both halves."""
    name = f"v_dual_{BASE[x][2:]} :: v_dual_{BASE[y][2:]}"
    return OpInfo(name, Fmt.VOPD, x << 5 | y, None, 32, (), 0, "valu")


def half_text(h: Half, literal: int | None) -> str:
    """LLVM's text of one half (v_dual_cndmask_b32 does not print its VCC operand)."""
    d, s0, v1 = f"v{h.vdst}", O.operand_name(h.src0, 32, literal), f"v{h.vsrc1}"
    base = h.info.name
    if base == "v_mov_b32":
        return f"{h.name} {d}, {s0}"
    if base == "v_fmaak_f32":
        return f"{h.name} {d}, {s0}, {v1}, 0x{literal:x}"
    if base == "v_fmamk_f32":
        return f"{h.name} {d}, {s0}, 0x{literal:x}, {v1}"
    return f"{h.name} {d}, {s0}, {v1}"


def text(x: Half, y: Half, literal: int | None) -> str:
    return f"{half_text(x, literal)} :: {half_text(y, literal)}"
