"""Scalar float instructions, run on the vector pipe's lane 0 (docs/simd.md).

RDNA 4's SALU float opcodes (``s_add_f32``, ``s_fmac_f32``, ``s_cmp_lt_f32``, ...) and the
scalar-destination transcendentals (``v_s_rcp_f32``, ...) compute what a VALU opcode computes,
on one value. The SIMD has no float datapath in its scalar ALU: the issue stage sends such an
instruction to the vector pipe as the VALU opcode of the same math, with EXEC lane 0 alone and
its scalar sources broadcast, and lane 0's result comes back to the SGPR file (or SCC, for a
compare) through the vector pipe's lane-mask port; a transcendental's through ``sres``.
"""
from __future__ import annotations

from isa import OPCODES, Fmt

from .vector import TRANS_OPS, VECTOR_OPS

__all__ = ["SCALAR_FLOAT", "SCALAR_COMPARES", "SCALAR_TRANS", "ACCUMULATES"]


def _valu_form(info) -> str | None:
    name = info.name
    if "_f32" not in name or info.kind != "salu":
        return None
    if name == "s_fmac_f32":            # D = S0 * S1 + D: the three-source form reads D as S2
        return "v_fma_f32"
    if info.fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC):
        v = "v" + name[1:]
        return v if v in VECTOR_OPS else None
    return None


#: SALU float mnemonic -> the VALU mnemonic that computes it (compares included).
SCALAR_FLOAT = {i.name: v for i in OPCODES if (v := _valu_form(i))}
#: Those whose result is SCC: the SOPC compares.
SCALAR_COMPARES = frozenset(i.name for i in OPCODES if i.name in SCALAR_FLOAT and i.fmt == Fmt.SOPC)
#: ``s_fmac_f32``: its destination is also its third source.
ACCUMULATES = frozenset({"s_fmac_f32"})
#: ``v_s_*_f32`` -> the vector transcendental of the same math.
SCALAR_TRANS = {i.name: "v" + i.name[3:] for i in OPCODES
                if i.name.startswith("v_s_") and "v" + i.name[3:] in TRANS_OPS}
