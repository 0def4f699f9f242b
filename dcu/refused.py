"""The report of an instruction a SIMD stopped at (``hdl.top.dcu.DcuErrorCause.
ILLEGAL_INSTRUCTION`` and ``UNSUPPORTED``): the DCU latches the PC but not the words, as
hardware keeps no instruction words down the pipeline; the host reads them from the dispatch's
memory image at that PC, disassembles them and names the unit that executes the operation."""
from __future__ import annotations

from isa import DecodeError, decode, disassemble

__all__ = ["unit_of", "refused_instruction"]


def unit_of(name: str) -> str:
    """The SIMD unit that executes mnemonic ``name``, in words."""
    from hdl.simd.scalar_alu import IMPLEMENTED as salu_ops
    from hdl.simd.trans import CLS_OF as trans_ops
    from hdl.simd.valu_fp import FP_OPS
    from hdl.simd.valu_int import IMPLEMENTED as int_ops
    if name in {o.name.lower() for o in trans_ops}:
        return "transcendental unit"
    if name in {o.name.lower() for o in FP_OPS}:
        return "FP32 VALU"
    if name in int_ops:
        return "integer VALU"
    if name in salu_ops:
        return "scalar ALU"
    return "SIMD"


def _words_at(prep, pc: int) -> list[int]:
    """Up to three dwords at ``pc`` in the prepared memory image (fewer at its end)."""
    mem = prep.mem
    off = pc - mem.base
    if pc % 4 or not 0 <= off < mem.data.size:
        return []
    raw = mem.data[off:off + 12].tobytes()
    return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw) - 3, 4)]


def refused_instruction(prep, pc: int) -> tuple[str, str]:
    """(unit, instruction) for a stop at ``pc``: the unit that executes its operation, and the
    instruction disassembled with its dwords, e.g. ``("integer VALU", "v_and_b32_e64 v2, v0,
    v1 clamp (dwords 00028002 00020300)")``."""
    words = _words_at(prep, pc)
    if not words:
        return "SIMD", f"outside the memory image (PC {pc:#x})"
    try:
        inst = decode(words, pc=pc)
    except DecodeError:     # words that are not an instruction
        return "SIMD", f"not an instruction the decoder knows (dwords {' '.join(f'{w:08x}' for w in words)})"
    used = words[:inst.size // 4]
    return unit_of(inst.name), f"{disassemble(inst)} (dwords {' '.join(f'{w:08x}' for w in used)})"
