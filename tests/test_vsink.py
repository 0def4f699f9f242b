"""dcu/vpost/vsink.py and dcu/vpost/vopt.py: logic moved into the process branches that use it, the
design flattened below the kept depth, and the hardware unchanged.

A small ALU (a ``Switch`` over operations of a submodule's results, registers with enables,
a memory) through :func:`dcu.vpost.vopt.simulation_verilog`: assigns move into branches, the
result lints, and Icarus gives the same outputs on every cycle of a random stimulus as for
Amaranth's own Verilog. A value that several statements of one branch read moves to the top
of the innermost branch that holds them all (a case item's single statement becomes a block);
one that several processes read, each under the same ``if``, gets a process of that ``if``;
slices of one wire assigned together (``assign { w [7:4], w [1:0] } = ...``) move as one.
"""

import random
import re
import shutil
import subprocess

import pytest
from amaranth.back import verilog
from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from dcu.vpost.vopt import simulation_verilog
from dcu.vpost.vsink import sink_verilog
from tests.lint import lint_text
from tests.iverilog_tb import simulate_top


class Lanes(wiring.Component):
    """Per-lane results of a few operations (a submodule: flattened into its parent)."""
    a: In(32)
    b: In(32)
    add: Out(32)
    mul: Out(32)
    shl: Out(32)

    def elaborate(self, platform):
        m = Module()
        for i in range(4):
            x, y = self.a[8 * i:8 * i + 8], self.b[8 * i:8 * i + 8]
            m.d.comb += [self.add[8 * i:8 * i + 8].eq(x + y), self.mul[8 * i:8 * i + 8].eq(x * y),
                         self.shl[8 * i:8 * i + 8].eq(x << y[:3])]
        return m


class Alu(wiring.Component):
    a: In(8)
    addr: In(2)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        m.submodules.lanes = lanes = Lanes()
        m.submodules.mem = mem = memory.Memory(shape=32, depth=4, init=[1, 2, 3, 4])
        w, r = mem.write_port(), mem.read_port()
        acc, res, op, prod = Signal(32), Signal(32), Signal(2), Signal(32)
        m.d.comb += prod.eq(lanes.mul ^ (lanes.mul >> 5))
        m.d.comb += [lanes.a.eq(Cat(self.a, self.a + 1, acc[:16])), lanes.b.eq(r.data),
                     r.addr.eq(self.addr), w.addr.eq(self.addr + 1), w.data.eq(res), w.en.eq(self.a[7]),
                     op.eq(self.a[:2])]
        with m.Switch(op):
            with m.Case(0):
                m.d.comb += res.eq(lanes.add ^ (lanes.add >> 3))
            with m.Case(1):      # one value read by two statements of one branch
                with m.If(self.a[3]):
                    m.d.comb += res.eq(prod + acc)
                with m.Else():
                    m.d.comb += res.eq(prod - acc)
            with m.Case(2):
                with m.If(self.a[2]):
                    m.d.comb += res.eq(lanes.shl)
                with m.Else():
                    m.d.comb += res.eq(~lanes.add)
            with m.Default():
                m.d.comb += res.eq(r.data - acc)
        with m.If(self.a[6]):
            m.d.sync += acc.eq(res + (acc >> 1))
        m.d.comb += self.y.eq(res[:8] ^ res[8:16] ^ res[16:24] ^ res[24:])
        return m


class Top(wiring.Component):
    a: In(8)
    addr: In(2)
    y0: Out(8)
    y1: Out(8)
    y2: Out(8)

    def elaborate(self, platform):
        m = Module()
        for i, y in enumerate((self.y0, self.y1, self.y2)):
            m.submodules[f"u{i}"] = u = Alu()
            m.d.comb += [u.a.eq(self.a + i), u.addr.eq(self.addr), y.eq(u.y)]
        return m


def test_sunk_design_behaves_the_same(tmp_path):
    original = verilog.convert(Top(), name="top", emit_src=False)
    stats = {}
    sunk = simulation_verilog(Top(), "top", keep_depth=1, stats=stats)
    assert stats["assigns_moved"] >= 15, stats
    # the units are kept (depth 1) and shared; the lanes are flattened into them
    mods = re.findall(r"^module (\\\S+|\w+)", sunk, re.M)
    assert len(mods) == 2, mods
    assert re.search(r"^\s+begin\n", sunk, re.M)
    lint_text(sunk, tmp_path / "sunk.v")
    if not shutil.which("iverilog"):
        pytest.skip("iverilog not found: apt-get install -y iverilog")
    rng = random.Random(2)
    stimulus = [(rng.randrange(256), rng.randrange(4)) for _ in range(300)]
    want = simulate_top(tmp_path, original, "original", stimulus)
    got = simulate_top(tmp_path, sunk, "sunk", stimulus)
    assert want.count("\n") == 300 and "x" not in want
    assert got == want


def test_nothing_to_sink_is_unchanged():
    text = "module top(a, y);\n  input [7:0] a;\n  wire [7:0] a;\n  output [7:0] y;\n  wire [7:0] y;\n" \
           "  assign y = a + 8'h01;\nendmodule\n"
    assert sink_verilog(text) == (text, 0)


class Shared(wiring.Component):
    a: In(8)
    b: In(8)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        p = Signal(8)                     # named, but Yosys reads the product directly
        m.d.comb += p.eq(self.a * self.b)
        with m.Switch(self.a[:2]):
            with m.Case(1):
                with m.If(self.a[3]):
                    m.d.comb += self.y.eq(p + 1)
                with m.Else():
                    m.d.comb += self.y.eq(p - 1)
            with m.Case(2):
                m.d.comb += self.y.eq(self.b)
        return m


def test_value_read_in_two_branches_moves_to_their_common_branch():
    eager = simulation_verilog(Shared(), "t", keep_depth=None, sink=False)
    stats = {}
    sunk = simulation_verilog(Shared(), "t", keep_depth=None, stats=stats)
    assert stats["assigns_moved"] == 3, stats       # the product, p + 1, p - 1
    assert re.search(r"^  assign \S+ += a \* b;", eager, re.M)
    item = sunk[sunk.index("2'h1:"):sunk.index("2'h2:")]
    # the product at the top of case item 1, before the if that reads it in both branches
    assert re.search(r"begin\n +\S+ += a \* b;\n", item) and item.index(" * ") < item.index("if (")


class Guarded(wiring.Component):
    """``p = a * b``, read by two processes (one per output), each under the same ``if``
    or, with ``case``, in the same case item (the default item reads the inputs)."""
    a: In(8)
    b: In(8)
    y1: Out(8)
    y2: Out(8)

    def __init__(self, case: bool = False):
        self.case = case
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        p = Signal(16)
        m.d.comb += p.eq(self.a * self.b)
        uses = [self.y1.eq(p + 1), self.y2.eq(p ^ self.b)]
        if self.case:
            with m.Switch(self.a[6:]):
                with m.Case(2):
                    m.d.comb += uses
                with m.Default():
                    m.d.comb += [self.y1.eq(self.b), self.y2.eq(self.a)]
        else:
            with m.If(self.a[7]):
                m.d.comb += uses
        return m


def test_value_read_by_two_processes_under_one_condition_gets_a_process_of_its_own(tmp_path):
    stats = {}
    sunk = simulation_verilog(Guarded(), "g", keep_depth=None, stats=stats)
    assert stats["assigns_moved"] == 3, stats
    assert not re.search(r"^  assign p = ", sunk, re.M)
    assert re.search(r"^  always @\* begin\n    if \(a\[7\]\) begin\n      p = a \* b;\n"
                     r"    end\n  end$", sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, Guarded, "g", sunk, ("y1", "y2"), seed=3)


def test_value_read_by_two_processes_in_one_case_item_gets_a_process_of_that_item(tmp_path):
    sunk = simulation_verilog(Guarded(case=True), "cg", keep_depth=None)
    assert not re.search(r"^  assign p = ", sunk, re.M)
    assert re.search(r"^  always @\* begin\n    casez \(a\[7:6\]\)\n      2'h2:\n        begin\n"
                     r"          p = a \* b;\n        end\n    endcase\n  end$", sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, lambda: Guarded(case=True), "cg", sunk, ("y1", "y2"), seed=4)


def _same_outputs_as_amaranth(tmp_path, component, name, sunk, outputs, seed):
    """Icarus gives the same outputs for ``sunk`` as for Amaranth's own Verilog of
    ``component()``, on 200 random values of its 8-bit inputs ``a`` and ``b``."""
    if not shutil.which("iverilog"):
        pytest.skip("iverilog not found: apt-get install -y iverilog")
    rng = random.Random(seed)
    vectors = [(rng.randrange(256), rng.randrange(256)) for _ in range(200)]
    shown = ", ".join(outputs)
    formats = " ".join(["%h"] * len(outputs))
    tb = ["module tb;", f"reg [7:0] a = 0, b = 0; wire [7:0] {shown};",
          f"{name} dut(.a(a), .b(b), " + ", ".join(f".{y}({y})" for y in outputs) + ");", "initial begin"] + \
         [f"a = {a}; b = {b}; #1 $display(\"{formats}\", {shown});" for a, b in vectors] + \
         ["$finish;", "end", "endmodule"]
    outs = []
    for tag, text in (("original", verilog.convert(component(), name=name, emit_src=False)), ("sunk", sunk)):
        (tmp_path / f"{tag}.v").write_text(text)
        (tmp_path / f"tb_{tag}.v").write_text("\n".join(tb))
        exe = tmp_path / f"{tag}.vvp"
        subprocess.run(["iverilog", "-o", str(exe), str(tmp_path / f"tb_{tag}.v"), str(tmp_path / f"{tag}.v")],
                       check=True)
        outs.append(subprocess.run(["vvp", "-n", str(exe)], capture_output=True, text=True, check=True).stdout)
    assert outs[0].count("\n") == 200 and "x" not in outs[0]
    assert outs[1] == outs[0]


class Selected(wiring.Component):
    """``r``, one of four values chosen by ``b[:2]`` (a process of its own), read by two
    processes under the same ``if`` (with ``case``, in the same case item; with ``other``, in
    the same ``else``); with ``loop``,
    that condition is computed from ``r``."""
    a: In(8)
    b: In(8)
    y1: Out(8)
    y2: Out(8)

    def __init__(self, loop: bool = False, case: bool = False, other: bool = False):
        self.loop, self.case, self.other = loop, case, other
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        r, c = Signal(8, name="r"), Signal(name="c")
        with m.Switch(self.b[:2]):
            for k, value in enumerate((self.a, self.a + self.b, self.a ^ self.b, ~self.a)):
                with m.Case(k):
                    m.d.comb += r.eq(value)
        m.d.comb += c.eq((r[0] if self.loop else self.b[5]) ^ self.a[7])
        uses = [self.y1.eq(r + 1), self.y2.eq(r ^ self.b)]
        if self.case:
            with m.Switch(self.a[5:]):
                with m.Case(3):
                    m.d.comb += uses
                with m.Default():
                    m.d.comb += [self.y1.eq(self.b), self.y2.eq(self.a)]
        elif self.other:         # read only in the else branch
            with m.If(c):
                m.d.comb += [self.y1.eq(self.b), self.y2.eq(self.a)]
            with m.Else():
                m.d.comb += uses
        else:
            with m.If(c):
                m.d.comb += uses
        return m


def test_a_process_read_only_under_one_condition_runs_under_it(tmp_path):
    sunk = simulation_verilog(Selected(), "sel", keep_depth=None)
    assert re.search(r"^  always @\* begin\n    if \(c\) begin\n(      .*\n)*?        2'h3:\n"
                     r"( .*\n)*? +r = ", sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, Selected, "sel", sunk, ("y1", "y2"), seed=5)
    # a condition computed from the process's output would make a loop: the process stays
    sunk = simulation_verilog(Selected(loop=True), "sell", keep_depth=None)
    assert re.search(r"^  always @\* begin\n    if \(auto_verilog_backend\S+ \) begin end\n"
                     r"    \(\* full_case = 32'd1 \*\)\n    casez \(b\[1:0\]\)\n", sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, lambda: Selected(loop=True), "sell", sunk, ("y1", "y2"), seed=6)


def test_a_process_read_only_in_an_else_branch_runs_under_the_negation(tmp_path):
    sunk = simulation_verilog(Selected(other=True), "sele", keep_depth=None)
    assert re.search(r"^  always @\* begin\n    if \(!\(c\)\) begin\n(      .*\n)*?        2'h3:\n( .*\n)*? +r = ",
                     sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, lambda: Selected(other=True), "sele", sunk, ("y1", "y2"), seed=8)


def test_a_process_read_only_in_one_case_item_runs_in_it(tmp_path):
    sunk = simulation_verilog(Selected(case=True), "selc", keep_depth=None)
    assert re.search(r"^  always @\* begin\n    casez \(a\[7:5\]\)\n      3'h3:\n        begin\n"
                     r"( .*\n)*? +casez \(b\[1:0\]\)\n( .*\n)*? +r = .*\n( .*\n)*?        end\n    endcase\n  end$",
                     sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, lambda: Selected(case=True), "selc", sunk, ("y1", "y2"), seed=7)


class Chained(wiring.Component):
    """``t``, a process, read only by values that move into another process ``r``, which is
    read only under ``if (b[7])``: as the decoder's temporaries and its instruction."""
    a: In(8)
    b: In(8)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        t, r = Signal(8, name="t"), Signal(8, name="r")
        with m.Switch(self.b[:2]):
            for k, value in enumerate((self.a, self.a + 3, self.a ^ 0x5A, ~self.a)):
                with m.Case(k):
                    m.d.comb += t.eq(value)
        with m.Switch(self.b[2:4]):
            with m.Case(0):
                m.d.comb += r.eq(t * 3 + self.b)
            with m.Case(1):
                m.d.comb += r.eq(t ^ self.b)
            with m.Default():
                m.d.comb += r.eq(self.b)
        with m.If(self.b[7]):
            m.d.comb += self.y.eq(r + 1)
        return m


def test_a_process_read_by_values_moved_into_a_guarded_process_runs_under_its_guard(tmp_path):
    sunk = simulation_verilog(Chained(), "chain", keep_depth=None)
    for name in ("t", "r"):
        assert re.search(rf"^  always @\* begin\n    if \(b\[7\]\) begin\n(      .*\n)*? +{name} = ", sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, Chained, "chain", sunk, ("y",), seed=9)


class Shuffle(wiring.Component):
    a: In(8)
    b: In(8)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        t = Signal(8)
        with m.If(self.b[0]):    # masks and shifts by constants: Yosys assigns slices of one wire together
            m.d.comb += [t.eq((self.a & 0xCC) | (self.a.shift_right(2) & 0x33)), self.y.eq(t + self.b)]
        return m


def test_slices_of_one_wire_assigned_together_move_too(tmp_path):
    eager = simulation_verilog(Shuffle(), "sh", keep_depth=None, sink=False)
    assert re.search(r"^  assign \{ (\S+) \[[0-9:]+\], \1 \[[0-9:]+\] \} = ", eager, re.M), eager
    stats = {}
    sunk = simulation_verilog(Shuffle(), "sh", keep_depth=None, stats=stats)
    assert not re.search(r"^  assign ", sunk, re.M), sunk         # every value under ``if (b[0])``
    assert re.search(r"^ +\{ (\S+) \[[0-9:]+\], \1 \[[0-9:]+\] \} = ", sunk, re.M), sunk
    _same_outputs_as_amaranth(tmp_path, Shuffle, "sh", sunk, ("y",), seed=4)


def test_a_copy_is_read_as_its_original():
    """``assign a = b;`` of the same width: the process and the instance read ``b`` (a copy
    moved into a branch would be copied each time the branch runs); ``a`` stays, unread;
    a pin named ``a`` keeps its name; a narrower copy is a truncation and stays one."""
    text = ("module top(c, b, y, z);\n  input c;\n  wire c;\n  input [63:0] b;\n  wire [63:0] b;\n"
            "  output [63:0] y;\n  reg [63:0] y;\n  output [31:0] z;\n  wire [31:0] z;\n"
            "  wire [63:0] a;\n  wire [31:0] n;\n  assign a = b;\n  assign n = b;\n"
            "  always @* begin\n    y = 64'h0;\n    if (c) begin\n      y = a;\n    end\n  end\n"
            "  sub u (\n    .a(a),\n    .n(n),\n    .z(z)\n  );\nendmodule\n")
    out, _ = sink_verilog(text)
    assert "      y = b;\n" in out and "    .a(b),\n" in out, out
    assert "  assign a = b;\n" in out and "    .n(n),\n" in out, out
