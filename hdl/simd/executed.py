"""The mnemonics the SIMD executes, for the decode stage (which builds its ROMs from them) and
the launch check (``dcu.backends.rtlcheck``).

Its units' operations (the scalar ALU's, the vector pipe's VALU and lane-move opcodes, the
transcendental unit's, and the scalar float ones the vector pipe runs on lane 0), the memory
instructions its memory units execute, and the control flow, waits and barriers the issue
stage handles itself. The decode stage decodes these opcodes alone: any other word is illegal.
"""
from __future__ import annotations

from ..isa_tables import OpId, info_of, rtl_memory_op
from .memreq import MEMORY_OPS
from .scalar_alu import IMPLEMENTED as SALU_OPS
from .scalar_float import SCALAR_FLOAT, SCALAR_TRANS
from .vector import NO_CLAMP as VALU_NO_CLAMP, NO_OMOD as VALU_NO_OMOD, TRANS_OPS, VECTOR_OPS

__all__ = ["IMPLEMENTED", "NO_CLAMP", "NO_OMOD"]

_OWN_KINDS = {"sbranch", "swait", "shint", "sbarrier", "sendpgm"}


def _own(info) -> bool:
    """Control flow, waits, hints, barriers and the scalar loads (``s_load_*``) the issue stage
    runs (not the ``s_buffer_*`` forms, which take a buffer resource)."""
    scalar_load = info.kind == "smem" and info.name.startswith("s_load_")
    return rtl_memory_op(info) and (info.kind in _OWN_KINDS or scalar_load)


#: Mnemonics the SIMD executes.
IMPLEMENTED = frozenset(SALU_OPS | VECTOR_OPS | TRANS_OPS | MEMORY_OPS | {"s_getpc_b64"} | set(SCALAR_FLOAT) |
                        set(SCALAR_TRANS) |
                        {op.name.lower() for op in OpId if op is not OpId.NONE and _own(info_of(op))})

#: Mnemonics of ``IMPLEMENTED`` the SIMD does not execute with the VOP3 ``clamp`` bit set: the
#: plain 32-bit integer operations that do not saturate and ``v_frexp_exp_i32_f32`` (the model
#: refuses clamp on them too), and the transcendentals (their unit has no output modifiers).
NO_CLAMP = frozenset(VALU_NO_CLAMP | TRANS_OPS | set(SCALAR_TRANS))

#: Mnemonics of ``IMPLEMENTED`` the SIMD does not execute with a VOP3 ``omod``: the
#: transcendentals and ``v_frexp_exp_i32_f32``.
NO_OMOD = frozenset(VALU_NO_OMOD | TRANS_OPS | set(SCALAR_TRANS))
