"""DPP16 and DPP8 execution: src0 is read from another lane of the same row (16 lanes) or group
of 8, and DPP16 can keep lanes from writing.

For each lane the DPP control names a source lane. The source is *invalid* when it lies outside
the row (row_shl/row_shr) or, unless fi:1, when its EXEC bit is 0. DPP16: an invalid source
reads 0 with bound_ctrl:1, and with bound_ctrl:0 the lane does not write at all (its
destination keeps its value); lanes of a row or bank cleared in row_mask / bank_mask do not
write either. DPP8: an invalid source reads 0. A lane that does not write is treated as an
inactive lane for the whole instruction (a compare writes 0 for it, as for EXEC = 0).

Sources: RDNA 4 ISA guide, "Data Parallel Processing"; LLVM's AMDGPU modifier syntax
(dpp16_ctrl, dpp8, row_mask, bank_mask, bound_ctrl, fi).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from isa import Fmt, Inst
from isa import dpp as D
from isa.operands import VCC_LO, VGPR0

from .wave import LANES, ModelError

_LANE = np.arange(LANES)
_ROW = _LANE & ~15          # first lane of the lane's row
_IN_ROW = _LANE & 15


def source_lanes(d: D.Dpp) -> tuple[np.ndarray, np.ndarray]:
    """(source lane of each lane, whether it lies inside the lane's row) for a DPP control."""
    if d.is_dpp8:
        return (_LANE & ~7) | np.array(d.sel)[_LANE & 7], np.ones(LANES, bool)
    c = d.ctrl
    inside = np.ones(LANES, bool)
    if c <= 0xFF:                                     # quad_perm
        src = (_LANE & ~3) | (c >> (2 * (_LANE & 3)) & 3)
    elif 0x101 <= c <= 0x10F:                         # row_shl: lane i reads lane i + n
        src, inside = _LANE + (c - 0x100), _IN_ROW + (c - 0x100) < 16
    elif 0x111 <= c <= 0x11F:                         # row_shr: lane i reads lane i - n
        src, inside = _LANE - (c - 0x110), _IN_ROW >= c - 0x110
    elif 0x121 <= c <= 0x12F:                         # row_ror: rotate right within the row
        src = _ROW | ((_IN_ROW - (c - 0x120)) & 15)
    elif c == 0x140:                                  # row_mirror
        src = _ROW | (15 - _IN_ROW)
    elif c == 0x141:                                  # row_half_mirror
        src = (_LANE & ~7) | (7 - (_LANE & 7))
    elif 0x150 <= c <= 0x15F:                         # row_share: every lane reads lane n
        src = _ROW | (c - 0x150)
    elif 0x160 <= c <= 0x16F:                         # row_xmask: lane i reads lane i ^ n
        src = _ROW | (_IN_ROW ^ (c - 0x160))
    else:
        raise ModelError(f"dpp_ctrl 0x{c:x} is not valid on gfx1200 ({D.ctrl_text(c)})")
    return np.where(inside, src, _LANE), inside


def bank_row_enable(d: D.Dpp) -> np.ndarray:
    """Lanes row_mask and bank_mask let write (all lanes for DPP8)."""
    if d.is_dpp8:
        return np.ones(LANES, bool)
    return ((d.row_mask >> (_LANE >> 4)) & (d.bank_mask >> ((_LANE >> 2) & 3)) & 1).astype(bool)


class _DppWave:
    """The wave as seen by the handler of the underlying operation: a source code that is a
    DPP code reads the shuffled src0, and only the lanes DPP enables are active."""
    __slots__ = ("_w", "_src0", "_mask")

    def __init__(self, w, src0: np.ndarray, mask: np.ndarray):
        self._w, self._src0, self._mask = w, src0, mask

    def __getattr__(self, name):
        return getattr(self._w, name)

    def mask(self) -> np.ndarray:
        return self._mask

    def vread(self, code: int, bits: int, literal):
        return self._src0 if code in D.CODES else self._w.vread(code, bits, literal)

    def vwrite(self, reg: int, value, bits: int = 32, mask=None) -> None:
        self._w.vwrite(reg, value, bits, self._mask if mask is None else mask)


def _as_vop3(inst: Inst) -> Inst:
    """The operation without its DPP dword, in the VOP3 form so that the DPP16 neg/abs bits of
    an _e32 form are the VOP3 modifiers; src0 keeps the DPP code (read through _DppWave)."""
    d, f, info = inst.dpp, inst.f, inst.info
    if inst.fmt in (Fmt.VOP3, Fmt.VOP3SD):
        return replace(inst, dpp=None)
    mods = 1 if D.integer_src1(info) else 3      # sext() of an exponent changes no bit used
    g = {"vdst": VCC_LO if info.fmt == Fmt.VOPC else f.get("vdst", 0), "src0": f["src0"],
         "src1": VGPR0 + f.get("vsrc1", 0), "src2": VCC_LO, "neg": d.neg & mods, "abs": d.abs & mods,
         "opsel": 0, "clamp": 0, "omod": 0, "sdst": VCC_LO}
    fmt = Fmt.VOP3SD if "carry_out" in info.flags else Fmt.VOP3
    return replace(inst, fmt=fmt, f=g, dpp=None)


def build_dpp(inst: Inst, build):
    """Handler of a DPP form: ``build`` (sim.execute.build) makes the underlying operation's."""
    d = inst.dpp
    inner = build(_as_vop3(inst))
    src, inside = source_lanes(d)
    enable = bank_row_enable(d)
    reg = d.vsrc0

    def h(w, ctx):
        active = w.mask()
        valid = inside if d.fi else inside & active[src]
        data = np.where(valid, w.v[reg][src], np.uint32(0))
        write = active if d.is_dpp8 else active & enable & (valid | bool(d.bound_ctrl))
        return inner(_DppWave(w, data, write), ctx)
    return h
