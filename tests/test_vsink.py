"""hdl/vsink.py and hdl/vopt.py: logic moved into the process branches that use it, the
design flattened below the kept depth, and the hardware unchanged.

A small ALU (a ``Switch`` over operations of a submodule's results, registers with enables,
a memory) through :func:`hdl.vopt.simulation_verilog`: assigns move into branches, the
result lints, and Icarus gives the same outputs on every cycle of a random stimulus as for
Amaranth's own Verilog.
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

from hdl.vopt import simulation_verilog
from hdl.vsink import sink_verilog
from tests.lint import LINT_FLAGS
from tests.test_vdedup import _simulate


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
        acc, res, op = Signal(32), Signal(32), Signal(2)
        m.d.comb += [lanes.a.eq(Cat(self.a, self.a + 1, acc[:16])), lanes.b.eq(r.data),
                     r.addr.eq(self.addr), w.addr.eq(self.addr + 1), w.data.eq(res), w.en.eq(self.a[7]),
                     op.eq(self.a[:2])]
        with m.Switch(op):
            with m.Case(0):
                m.d.comb += res.eq(lanes.add ^ (lanes.add >> 3))
            with m.Case(1):
                m.d.comb += res.eq(lanes.mul + acc)
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
    if shutil.which("verilator"):
        (tmp_path / "sunk.v").write_text(sunk)
        r = subprocess.run(["verilator", *LINT_FLAGS, "-Wno-LATCH", str(tmp_path / "sunk.v")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    if not shutil.which("iverilog"):
        pytest.skip("iverilog not found: apt-get install -y iverilog")
    rng = random.Random(2)
    stimulus = [(rng.randrange(256), rng.randrange(4)) for _ in range(300)]
    want = _simulate(tmp_path, original, "original", stimulus)
    got = _simulate(tmp_path, sunk, "sunk", stimulus)
    assert want.count("\n") == 300 and "x" not in want
    assert got == want


def test_nothing_to_sink_is_unchanged():
    text = "module top(a, y);\n  input [7:0] a;\n  wire [7:0] a;\n  output [7:0] y;\n  wire [7:0] y;\n" \
           "  assign y = a + 8'h01;\nendmodule\n"
    assert sink_verilog(text) == (text, 0)
