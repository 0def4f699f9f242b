"""dcu/vpost/vdedup.py: identical instances share one Verilog module, and the design is unchanged.

A small design with two identical units, a third that differs only in a constant and
nested submodules: after deduplication it has fewer modules, lints, and Icarus gives the
same outputs on every cycle of a random stimulus as for the original Verilog.
"""

import random
import re
import shutil
import subprocess

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from dcu.vpost.vdedup import dedup_modules
from tests.iverilog_tb import simulate_top
from tests.lint import LINT_FLAGS


class Inner(wiring.Component):
    a: In(8)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        acc = Signal(8)
        m.d.sync += acc.eq(acc + self.a)
        m.d.comb += self.y.eq(acc ^ self.a)
        return m


class Unit(wiring.Component):
    """A register file and an accumulator; ``k`` changes the hardware."""
    a: In(8)
    addr: In(2)
    y: Out(8)

    def __init__(self, k: int):
        self.k = k
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=8, depth=4, init=[1, 2, 3, self.k])
        w, r = mem.write_port(), mem.read_port()
        m.submodules.inner = inner = Inner()
        m.d.comb += [w.addr.eq(self.addr), w.data.eq(self.a + self.k), w.en.eq(self.a[0]),
                     r.addr.eq(self.addr + 1), inner.a.eq(r.data), self.y.eq(inner.y + self.k)]
        return m


class Top(wiring.Component):
    a: In(8)
    addr: In(2)
    y0: Out(8)
    y1: Out(8)
    y2: Out(8)

    def elaborate(self, platform):
        m = Module()
        units = [Unit(5), Unit(5), Unit(9)]
        for i, (u, y) in enumerate(zip(units, (self.y0, self.y1, self.y2))):
            m.submodules[f"u{i}"] = u
            m.d.comb += [u.a.eq(self.a + i), u.addr.eq(self.addr), y.eq(u.y)]
        return m


def _modules(text: str) -> list[str]:
    return re.findall(r"^module (\\\S+|\w+)", text, re.M)


def test_identical_units_share_a_module_and_behave_the_same(tmp_path):
    original = verilog.convert(Top(), name="top", emit_src=False)
    shared = dedup_modules(original)
    before, after = _modules(original), _modules(shared)
    # u0 and u1 (and their Inner) collapse; u2 differs in its constant, its Inner does not
    assert len(after) == len(before) - 3, (before, after)
    assert len(re.findall(r"^  (\S+) +u[012] \(", shared, re.M)) == 3
    if shutil.which("verilator"):
        (tmp_path / "shared.v").write_text(shared)
        r = subprocess.run(["verilator", *LINT_FLAGS, str(tmp_path / "shared.v")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    if not shutil.which("iverilog"):
        pytest.skip("iverilog not found: apt-get install -y iverilog")
    rng = random.Random(1)
    stimulus = [(rng.randrange(256), rng.randrange(4)) for _ in range(200)]
    want = simulate_top(tmp_path, original, "original", stimulus)
    got = simulate_top(tmp_path, shared, "shared", stimulus)
    assert want.count("\n") == 200 and "x" not in want
    assert got == want


def test_different_modules_are_kept():
    text = verilog.convert(Unit(3), name="top", emit_src=False)
    assert sorted(_modules(dedup_modules(text))) == sorted(_modules(text))
