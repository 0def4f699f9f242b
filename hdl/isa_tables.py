"""Enumerations for the RTL, generated at import time from the ISA tables in ``isa``.

``isa.OPCODES`` is the one source of truth: the Python decoder, the model and the RTL
decoder all derive from it, so adding an opcode there adds it everywhere.
"""
from __future__ import annotations

from amaranth.lib import enum

from amaranth.hdl import unsigned

from isa import OPCODES, Fmt

__all__ = ["OpId", "Kind", "FmtId", "ops_of", "info_of", "rtl_memory_op"]

def _make_enum(name: str, members, width: int):
    """An ``amaranth.lib.enum.Enum`` with an explicit shape, built from a member list."""
    ns = enum.EnumType.__prepare__(name, (enum.Enum,), shape=unsigned(width))
    for member, value in members:
        ns[member] = value
    cls = enum.EnumType(name, (enum.Enum,), ns, shape=unsigned(width))
    cls.__module__ = __name__
    return cls


_NAMES = sorted({o.name for o in OPCODES})
_INFO = {o.name: o for o in OPCODES}

#: One member per mnemonic, e.g. ``OpId.V_ADD_NC_U32``; value 0 is reserved for "no operation".
OpId = _make_enum("OpId", [("NONE", 0)] + [(n.upper(), i + 1) for i, n in enumerate(_NAMES)],
                  len(_NAMES).bit_length())

_KINDS = sorted({o.kind for o in OPCODES})
#: The issue class of an instruction (``isa.OpInfo.kind``); ``ILLEGAL`` for undecodable words.
Kind = _make_enum("Kind", [("ILLEGAL", 0)] + [(k.upper(), i + 1) for i, k in enumerate(_KINDS)],
                  len(_KINDS).bit_length())

#: The encoding format actually used by an instruction.
FmtId = _make_enum("FmtId", [(f.name, i) for i, f in enumerate(Fmt)], len(Fmt).bit_length())


def info_of(op: "OpId"):
    """The ``isa.OpInfo`` behind an OpId."""
    return _INFO[op.name.lower()]


def rtl_memory_op(info) -> bool:
    """False for the memory opcodes the RTL decodes but its memory units do not execute:
    private (VSCRATCH) and flat (VFLAT) accesses, the d16 forms and the atomics beyond
    ``hdl.mem.atomic.AtomicOp`` (64-bit, mask-or, float); launches refuse them (``dcu.backends.rtlcheck``)."""
    if info.fmt in (Fmt.VSCRATCH, Fmt.VFLAT) or "d16" in info.flags:
        return False
    if {"lanes", "buffer"} & info.flags:   # ds_swizzle/permute/bpermute (lane moves, no LDS
        return False                       # access); s_buffer_* (a buffer resource's address)
    if info.kind in ("ds_atomic", "vmem_atomic"):
        return info.data_bits == 32 and "mskor" not in info.name and not info.name.endswith("_f32")
    return True


def ops_of(kind: str) -> list:
    """OpIds of every opcode of one ``OpInfo.kind`` (e.g. ``"salu"``)."""
    return [OpId[n.upper()] for n in _NAMES if _INFO[n].kind == kind]
