"""The mnemonics the RTL SIMD executes, for the decoder (which the SIMD imports).

The same set as ``hdl.simd.IMPLEMENTED`` (tests/test_decoder.py checks that they are equal):
its units' operations, the control flow and waits the SIMD handles itself, and the memory
instructions it issues through its ports. The RTL decoder decodes these opcodes alone.
"""
from __future__ import annotations

from ..isa_tables import OpId, info_of, rtl_memory_op

__all__ = ["IMPLEMENTED"]

_OWN_KINDS = {"smem", "vmem_load", "vmem_store", "vmem_atomic", "ds_load", "ds_store", "ds_atomic", "cache",
              "sbranch", "swait", "shint", "sbarrier", "sendpgm"}


def _implemented() -> frozenset:
    from .salu import IMPLEMENTED as salu_ops
    from .trans import CLS_OF as trans_ops
    from .valu_fp import FP_OPS
    from .valu_int import IMPLEMENTED as int_ops
    names = set(salu_ops) | set(int_ops) | {o.name.lower() for o in FP_OPS} | {o.name.lower() for o in trans_ops}
    names |= {"v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32", "s_getpc_b64"}
    names |= {op.name.lower() for op in OpId if op is not OpId.NONE
              and info_of(op).kind in _OWN_KINDS and rtl_memory_op(info_of(op))}
    return frozenset(names)


#: Mnemonics the RTL SIMD executes.
IMPLEMENTED = _implemented()
