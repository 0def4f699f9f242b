"""hdl/top/hosttop.py SimTop: the compiled simulators' top around HostTop, checked on a small
component with the same kinds of ports (HostTop itself is covered by test_verilator, whose
runs count the same cycles as the rtl backend's HostTop without the wrapper).

* ``rst`` resets the design one cycle later; registered inputs arrive one cycle later;
  direct inputs, outputs and streams pass through in the same cycle.
* In the Verilog, the ports keep their names (``clk``, ``rst``, the members), and ``rst``
  and the registered inputs feed nothing but their registers.
"""
from __future__ import annotations

import re

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hdl.top.hosttop import SimTop


class _Small(wiring.Component):
    """A counter with a static input, a direct input and an input stream."""

    def __init__(self):
        super().__init__({"base": In(8), "step": In(8), "count": Out(8), "sum": Out(8),
                          "cmd": In(stream.Signature(8))})
        self.perf_names = ("count",)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.count.eq(self.count + self.step)
        m.d.comb += [self.sum.eq(self.count + self.base), self.cmd.ready.eq(self.count[0])]
        return m


def test_reset_and_registered_inputs_arrive_a_cycle_later():
    top = SimTop(_Small(), registered=("base",))
    assert top.perf_names == ("count",)
    seen = []

    async def bench(ctx):
        ctx.set(top.step, 1)
        ctx.set(top.base, 100)
        assert ctx.get(top.sum) == 0                 # base not yet registered
        await ctx.tick()
        assert ctx.get(top.count) == 1 and ctx.get(top.sum) == 101
        ctx.set(top.rst, 1)
        await ctx.tick()                             # rst registered: the counter still counts
        assert ctx.get(top.count) == 2
        ctx.set(top.rst, 0)
        await ctx.tick()                             # reset applied in this cycle
        assert ctx.get(top.count) == 0
        await ctx.tick()
        assert ctx.get(top.count) == 1
        ctx.set(top.cmd.valid, 1)
        seen.append(ctx.get(top.host.cmd.valid))     # the stream passes through at once
        seen.append(ctx.get(top.cmd.ready))
        ctx.set(top.step, 0)
        assert ctx.get(top.host.step) == 0           # so does a direct input
    async def clock(ctx):        # the clk port drives the wrapper's sync domain
        while True:
            await ctx.delay(0.5e-6)
            ctx.set(top.clk, 1)
            await ctx.delay(0.5e-6)
            ctx.set(top.clk, 0)
    sim = Simulator(top)
    sim.add_process(clock)
    sim.add_testbench(bench)
    sim.run()
    assert seen == [1, 1]


def test_verilog_ports_and_what_reads_them():
    text = verilog.convert(SimTop(_Small(), registered=("base",)), name="simtop", emit_src=False)
    head = text[text.index("module simtop"):]
    head = head[:head.index(");")]
    ports = {p.strip().lstrip("\\") for p in head[head.index("(") + 1:].split(",")}
    assert ports == {"clk", "rst", "base", "step", "count", "sum", "cmd__payload", "cmd__valid", "cmd__ready"}, ports
    body = text[text.index("module simtop"):]
    body = body[body.index(");") + 2:body.index("endmodule")]
    for name in ("rst", "base"):         # read only by a register (not by the design's logic)
        readers = [ln for ln in body.splitlines()
                   if re.search(rf"(=|<=|\() *{name}(?![\w$])", ln)]
        assert readers and all(re.fullmatch(rf" *\\\S+ +<= {name};", ln) for ln in readers), readers


def test_registered_must_name_an_input():
    with pytest.raises(ValueError, match="'count' is not a port input"):
        SimTop(_Small(), registered=("count",))
    with pytest.raises(ValueError, match="'cmd' is not a port input"):
        SimTop(_Small(), registered=("cmd",))
