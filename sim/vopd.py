"""VOPD execution: the X and Y operations of one dual-issue instruction.

Each half is the VOP1/VOP2 operation it names (isa/vopd.py), executed by that operation's own
handler. Both halves read their operands before either writes (RDNA 4 ISA guide, VOPD): Y sees
the value X's destination had before the instruction. The destinations always differ (vdsty[0]
is the complement of vdstx[0]), so running X, setting its destination aside, running Y and then
committing X's result is exactly that rule. The model counts a VOPD as one VALU instruction.
"""
from __future__ import annotations

from isa import Inst
from isa.vopd import Half

from .wave import ModelError


def as_valu(inst: Inst, half: Half) -> Inst:
    """The VOP1/VOP2 (_e32) instruction one half performs, sharing the VOPD's literal."""
    info = half.info
    f = {"vdst": half.vdst, "src0": half.src0, "vsrc1": half.vsrc1}
    return Inst(info, info.fmt, inst.pc, inst.words, inst.size, inst.literal, f)


def build_vopd(inst: Inst, build):
    """Handler of a VOPD instruction; ``build`` (sim.execute.build) makes each half's."""
    try:
        hx, hy = (build(as_valu(inst, h)) for h in inst.vopd)
    except ModelError as e:
        raise ModelError(f"{inst.name}: {e}") from None
    dx = inst.vopd[0].vdst

    def h(w, ctx):
        before = w.v[dx].copy()
        hx(w, ctx)
        after = w.v[dx].copy()
        w.v[dx] = before
        hy(w, ctx)
        w.v[dx] = after
    return h
