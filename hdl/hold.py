"""Clock enables for whole units."""
from __future__ import annotations

from amaranth.hdl import EnableInserter, MemoryInstance

__all__ = ["Hold"]


class Hold(EnableInserter):
    """``Hold(en)(unit)``: every register of ``unit`` (submodules included) keeps its value
    while ``en`` is low; its memories' ports are left alone.

    The DCU holds its units this way when an error stops it (the error report reads them).
    Memory ports are not gated: what a stopped DCU's own memories hold afterwards is seen by
    nobody, and gating them would cost every granular write port a multiplexer on each of
    its enable bits (``EnableInserter``'s ``Mux(en, port.en, 0)``), which Amaranth's
    simulator evaluates once per data bit, every cycle: a fifth of the DCU's simulation time
    (docs/dcu.md).
    """

    def on_fragment(self, fragment):
        if isinstance(fragment, MemoryInstance):
            return fragment
        return super().on_fragment(fragment)
