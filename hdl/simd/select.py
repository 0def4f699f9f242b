"""Round-robin selection of one of ``n`` requesters (docs/simd.md: ``WaveSelect``).

The SIMD picks one wave a cycle for its decode stage and one for its instruction
fetch; both use this arbiter.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["WaveSelect"]


class WaveSelect(wiring.Component):
    """Grant one of ``n`` requesters a cycle, the first after the last one taken.

    Parameters
    ----------
    n : int
        Requesters (wave slots).

    Attributes
    ----------
    want : In(n)
        Bit ``w``: requester ``w`` wants a grant.
    valid : Out(1)
        Some requester wants one.
    wave : Out(range(n))
        The granted requester, when ``valid``.
    take : In(1)
        The grant is used this cycle: the next search starts after ``wave``.
    """

    def __init__(self, n: int):
        self.n = n
        super().__init__({"want": In(n), "valid": Out(1), "wave": Out(range(max(n, 2))), "take": In(1)})

    def elaborate(self, platform):
        m = Module()
        n = self.n
        last = Signal(range(max(n, 2)), init=n - 1)
        # the wants rotated so that the one after ``last`` is bit 0: a priority encoder over it
        rot = Signal(n)
        both = Cat(self.want, self.want)
        m.d.comb += rot.eq(Mux(last == n - 1, self.want, both.bit_select(last + 1, n)) if n > 1 else self.want)
        first = Signal(range(max(n, 2)))
        for k in reversed(range(n)):
            with m.If(rot[k]):
                m.d.comb += first.eq(k)
        pos = last + 1 + first
        m.d.comb += [self.valid.eq(self.want.any()), self.wave.eq(Mux(pos >= n, pos - n, pos))]
        with m.If(self.take & self.valid):
            m.d.sync += last.eq(self.wave)
        return m
