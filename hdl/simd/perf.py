"""The SIMD's performance counters (:data:`~hdl.layouts.SimdPerf`), counted from the issue
stage's :data:`~hdl.layouts.PerfEvents`."""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..layouts import ISSUE_GROUPS, PerfEvents, SimdPerf, StallReason

__all__ = ["PerfCounters"]


class PerfCounters(wiring.Component):
    """Free-running 32-bit counters (they wrap), cleared by reset.

    Attributes
    ----------
    events : In(PerfEvents)
        This cycle's events: ``issued`` counts in ``issued.<group>``, a ``stall`` reason other
        than ``NONE`` in ``stall.<reason>``, ``valu`` in ``valu_busy``.
    perf : Out(SimdPerf)
    """

    def __init__(self):
        super().__init__({"events": In(PerfEvents), "perf": Out(SimdPerf)})

    def elaborate(self, platform):
        m = Module()
        ev, perf = self.events, self.perf
        for k, g in enumerate(ISSUE_GROUPS):
            c = getattr(perf.issued, g)
            with m.If(ev.issued & (ev.group == k)):
                m.d.sync += c.eq(c + 1)
        for r in StallReason:
            if r is not StallReason.NONE:
                c = getattr(perf.stall, r.name.lower())
                with m.If(ev.stall == r):
                    m.d.sync += c.eq(c + 1)
        with m.If(ev.valu):
            m.d.sync += perf.valu_busy.eq(perf.valu_busy + 1)
        return m
