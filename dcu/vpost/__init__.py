"""Verilog text post-processing for compiled simulation and synthesis.

Amaranth's Verilog is correct but costly to compile and simulate; these passes rewrite the
text without changing its behaviour: :mod:`.vdedup` shares one module among identical
instances, :mod:`.vsink` computes each value only in the process branch that uses it,
:mod:`.vcse` merges repeated expressions, :mod:`.vclock` gathers clocked processes and
:mod:`.vopt` chains them for the verilator backend.
"""
from __future__ import annotations

__all__ = ["block_verilog"]


def block_verilog(name: str, config) -> str:
    """The Verilog text of ``hdl.tops`` block ``name`` (module name ``name``), identical
    instances sharing one module (:func:`.vdedup.dedup_modules`)."""
    from amaranth.back import verilog

    from hdl.tops import make_top

    from .vdedup import dedup_modules
    return dedup_modules(verilog.convert(make_top(name, config), name=name, emit_src=False))
