"""dcu/vpost/vclock.py: a register's next-state process written as its clocked block, and the
hardware unchanged.

Registers updated in slices under several conditions, with a synchronous reset, every
cycle, or from their own value go through :func:`dcu.vpost.vopt.simulation_verilog`: their
processes become clocked blocks, the result lints, and Icarus gives the same outputs on
every cycle of a random stimulus as for Amaranth's own Verilog. A next state that anything
else reads, and a process that also computes a value read elsewhere, stay as they are.
"""

import random
import re
import shutil

import pytest
from amaranth.back import verilog
from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from dcu.vpost.vclock import clock_verilog
from dcu.vpost.vopt import simulation_verilog
from tests.iverilog_tb import same_as_amaranths_verilog, simulate_regs
from tests.lint import lint_text


class Regs(wiring.Component):
    a: In(8)
    b: In(8)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        wide, count, every, acc = Signal(200), Signal(8), Signal(8), Signal(8)
        with m.If(self.a[0]):                   # slices, under two conditions
            m.d.sync += wide[:8].eq(self.b + wide[8:16])
            with m.If(self.a[1]):
                m.d.sync += wide[100:108].eq(self.a ^ self.b)
        with m.Elif(self.a[2]):
            m.d.sync += wide.eq(Cat(self.b, wide[:192]))
        with m.If(self.b[7]):                   # from its own value
            m.d.sync += count.eq(count + self.a[3:5])
        m.d.sync += every.eq(self.a * self.b)   # every cycle
        with m.If(self.b[0]):                   # an accumulator, as the LDS's result
            with m.If(self.a[5]):
                m.d.sync += acc.eq(self.a)
            with m.Else():
                m.d.sync += acc.eq(acc | self.b)
        m.d.comb += self.y.eq(wide[:8] ^ wide[100:108] ^ wide[192:] ^ count ^ every ^ acc)
        return m


def test_next_states_move_and_the_design_behaves_the_same(tmp_path):
    stats = {}
    text = simulation_verilog(Regs(), "regs", keep_depth=None, stats=stats)
    assert stats["registers_clocked"] == 4, stats
    assert len(re.findall(r"^  always @\(posedge clk\) begin$", text, re.M)) >= 2
    assert re.search(r"^      \S+ *\[7:0\] <= ", text, re.M), text      # a slice, non-blocking
    assert re.search(r"^ +(\S+) *<= \1 *\| b;$", text, re.M), text   # its temporary inlined
    # count's temporary reads count (t = count + a[4:3]; count <= t[7:0]): it stays in a
    # process of its own, and the clocked block only updates count
    t = re.search(r"^ +(\S+) *= *(\S+) *\+ a\[4:3\];$", text, re.M)
    assert t and text.rfind("always @*", 0, t.start()) > text.rfind("always @(posedge", 0, t.start()), text
    assert re.search(rf"^ +{re.escape(t.group(2))} *<= {re.escape(t.group(1))} *\[7:0\];$", text, re.M), text
    lint_text(text, tmp_path / "regs.v")
    if not shutil.which("iverilog"):
        pytest.skip("iverilog not found: apt-get install -y iverilog")
    rng = random.Random(5)
    stimulus = [(rng.randrange(256), rng.randrange(256)) for _ in range(300)]
    want = simulate_regs(tmp_path, verilog.convert(Regs(), name="regs", emit_src=False), "original", stimulus)
    got = simulate_regs(tmp_path, text, "clocked", stimulus)
    assert want.count("\n") == 300 and "x" not in want
    assert len(set(want.splitlines())) > 50
    assert got == want


_MODULE = """module t(clk, c, x, q, y);
  input clk;
  wire clk;
  input c;
  wire c;
  input [7:0] x;
  wire [7:0] x;
  output [7:0] q;
  reg [7:0] q = 8'h00;
  output [7:0] y;
  wire [7:0] y;
  reg [7:0] n;
  reg [7:0] t;
  always @* begin
    if (\\$auto ) begin end
    n = q;
    if (c) begin
      t = x + 8'h01;
      n = t;
    end
  end
  always @(posedge clk)
    q <= n;
  assign y = {use};
endmodule
"""


def test_a_process_moves_only_when_nothing_else_reads_its_values():
    text, n = clock_verilog(_MODULE.format(use="q"))
    assert n == 1
    assert "always @*" not in text and "reg [7:0] n;" not in text
    # the temporary's expression goes into the update (a temporary would cost a shadow copy)
    assert re.search(r"  always @\(posedge clk\) begin\n    if \(c\) begin\n"
                     r"      q <= x \+ 8'h01;\n    end\n  end\n", text), text
    assert "reg [7:0] t;" not in text
    for use in ("n", "t"):     # the next state, or a temporary, read outside the process
        src = _MODULE.format(use=use)
        assert clock_verilog(src) == (src, 0)


def test_a_temporary_stays_where_it_may_not_have_run():
    """``t`` set in one branch and given to ``q`` in another keeps its last value there:
    its expression may not replace it."""
    src = _MODULE.format(use="q").replace("      n = t;\n    end\n",
                                          "    end\n    if (x[0]) begin\n      n = t;\n    end\n")
    text, n = clock_verilog(src)
    assert n == 1
    assert re.search(r"      t = x \+ 8'h01;\n    end\n    if \(x\[0\]\) begin\n      q <= t;\n", text), text


def test_an_escaped_name_keeps_the_space_that_ends_it():
    """Inlined at the end of an update, ``\\a.b `` still ends with its space (``\\a.b;``
    would be another name)."""
    src = _MODULE.format(use="q").replace("  input [7:0] x;\n  wire [7:0] x;\n",
                                          "  input [7:0] x;\n  wire [7:0] x;\n  wire [7:0] \\x.y ;\n"
                                          "  assign \\x.y  = x;\n").replace("t = x + 8'h01;", "t = 8'h01 + \\x.y ;")
    text, n = clock_verilog(src)
    assert n == 1 and "      q <= 8'h01 + \\x.y ;\n" in text, text


class Ram(wiring.Component):
    """A memory written by a port with an enable per 4 bits (Yosys: a test per enable bit),
    and with ``ports=2`` by a second such port that can write the same word in the same cycle."""
    a: In(8)
    b: In(8)
    y: Out(8)

    def __init__(self, ports=1):
        self.ports = ports
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=16, depth=4, init=[])
        wp, rp = mem.write_port(granularity=4), mem.read_port()
        m.d.comb += [wp.addr.eq(self.a[:2]), wp.en.eq(self.a[2:6]), wp.data.eq(Cat(self.b, self.b ^ self.a)),
                     rp.addr.eq(self.a[6:]), self.y.eq(rp.data[:8] ^ rp.data[8:])]
        if self.ports == 2:
            wp2 = mem.write_port(granularity=4)
            m.d.comb += [wp2.addr.eq(self.b[:2]), wp2.en.eq(self.b[4:]), wp2.data.eq(Cat(self.a, self.b))]
        return m


def test_a_write_port_with_enables_is_one_masked_write_under_a_test_of_any_enable(tmp_path):
    stats = {}
    text = simulation_verilog(Ram(), "regs", keep_depth=None, stats=stats)
    assert stats["memory_writes_guarded"] == 1 and stats["memory_writes_masked"] == 1, stats
    # the enables a[5:2], each over its 4 bits; the data, b and b ^ a, as two runs of 8 bits
    mask = "{{4{a[5]}}, {4{a[4]}}, {4{a[3]}}, {4{a[2]}}}"
    assert ("  always @(posedge clk) begin\n    if (|a) begin\n"
            f"      mem [a[1:0]] <= mem [a[1:0]] & ~{mask} | {{n_ddd0_0 [7:0], b [7:0]}} & {mask};\n"
            "    end\n  end\n") in text, text
    same_as_amaranths_verilog(tmp_path, Ram(), text)


def test_two_write_ports_keep_their_slices(tmp_path):
    """Masking both would let the second port's write put back the old value of a slice that
    the first wrote in the same cycle; each stays a test per enable bit."""
    stats = {}
    text = simulation_verilog(Ram(ports=2), "regs", keep_depth=None, stats=stats)
    assert stats["memory_writes_guarded"] == 2 and stats["memory_writes_masked"] == 0, stats
    assert len(re.findall(r"^      if \(\S+ *\[\d\]\)\n        .* <= .*;$", text, re.M)) == 8, text
    same_as_amaranths_verilog(tmp_path, Ram(ports=2), text)
