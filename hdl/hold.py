"""Clock enables for whole units."""
from __future__ import annotations

from amaranth.hdl import EnableInserter, MemoryInstance

__all__ = ["Hold"]


class Hold(EnableInserter):
    """``Hold(en)(unit)``: every register of ``unit`` (submodules included) keeps its value
    while ``en`` is low; its memories' ports are left alone.

    The DCU holds its units this way when an error stops it (the error report reads them),
    and a unit with nothing to do holds itself (``hdl/vmem.py``), as clock gating would in
    silicon; on an FPGA the enable goes to the flip-flops' clock-enable pins. A compiled
    simulator then skips the unit's register updates while it is idle (docs/toolflow.md).
    Memory ports are not gated: what the unit does not write while it holds costs nothing,
    and gating them would cost every granular write port a multiplexer on each of its enable
    bits (``EnableInserter``'s ``Mux(en, port.en, 0)``), which Amaranth's simulator evaluates
    once per data bit, every cycle: a fifth of the DCU's simulation time (docs/dcu.md).
    """

    def on_fragment(self, fragment):
        if isinstance(fragment, MemoryInstance):
            return fragment
        return super().on_fragment(fragment)
