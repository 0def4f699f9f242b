"""ScalarALU (hdl/simd/scalar_alu.py, 32-bit datapath, 64-bit operations in two passes)
against the reference model, bit for bit, and its timing.

Every implemented opcode runs ``VECTORS`` operand sets from ``tests/test_salu.py``'s
generator (edge values, shift amounts and field widths past the operand width, random
SCC/EXEC/old destination/simm16) through Amaranth's simulator, back to back: each ``start``
is given in the ``done`` cycle of the operation before. Destination, SCC, EXEC and their
write enables must agree with the model's handler (``tests/test_salu.py``'s ``model_result`` and
``expected_enables``), and every operation must take its latency: ``done`` exactly that
many cycles after ``start``, ``busy`` in each cycle before it, no write enable before
``done``. Also: the implemented set is the old SALU's, every other opcode is ``illegal`` with
nothing written, a ``start`` while ``busy`` is not taken, and Verilator lints the Verilog.
"""
from __future__ import annotations

import random

import pytest
from amaranth.hdl import Cat, Module, Signal
from amaranth.sim import Simulator

from hdl.isa_tables import OpId, info_of
from hdl.simd import salu
from hdl.simd.scalar_alu import IMPLEMENTED, ScalarALU
from tests.lint import convert_and_lint
from tests.test_salu import SEED, VECTORS, expected_enables, model_result, random_vector

_OUTS = ("d", "d_we", "scc", "scc_we", "exec", "exec_we", "illegal")


def latency(name: str) -> int:
    """Cycles from ``start`` to ``done``: two passes for 64-bit operands or results."""
    if name == "s_mul_u64":
        return 3
    if name == "s_absdiff_i32":
        return 2
    if name.startswith("s_bitcmp"):
        return 1                # the low word of a right shift: one pass
    info = info_of(OpId[name.upper()])
    return 2 if max(info.dst_bits, *info.src_bits, 0) == 64 else 1


class Harness:
    """ScalarALU with every data input driven from one packed signal ``stim``."""

    def __init__(self):
        self.dut = d = ScalarALU()
        self.m = Module()
        self.m.submodules.dut = d
        self.fields = [d.a, d.b, d.scc_in, d.exec_in, d.d_in, d.simm16]
        self.stim = Signal(sum(len(f) for f in self.fields))
        self.m.d.comb += Cat(*self.fields).eq(self.stim)

    def pack(self, vec) -> int:
        out, off = 0, 0
        for f, v in zip(self.fields, vec):
            out |= v << off
            off += len(f)
        return out


def _run(jobs):
    """Run ``[(name, vectors)]`` back to back -> {name: [(outputs, cycles)]}."""
    h = Harness()
    dut = h.dut
    sim = Simulator(h.m)
    sim.add_clock(1e-6)
    out = {}
    flat = [(name, vec) for name, vectors in jobs for vec in vectors]

    async def bench(ctx):
        for name, vec in flat:
            ctx.set(dut.op, OpId[name.upper()])
            ctx.set(h.stim, h.pack(vec))
            ctx.set(dut.start, 1)
            assert ctx.get(dut.busy) == 0
            await ctx.tick()
            ctx.set(dut.start, 0)
            cycles = 1
            while not ctx.get(dut.done):
                assert ctx.get(dut.busy) == 1, name
                assert (ctx.get(dut.d_we), ctx.get(dut.scc_we), ctx.get(dut.exec_we)) == (0, 0, 0), name
                await ctx.tick()
                cycles += 1
                assert cycles <= 4, name
            out.setdefault(name, []).append(({k: ctx.get(getattr(dut, k)) for k in _OUTS}, cycles))

    sim.add_testbench(bench)
    sim.run()
    return out


def test_implemented_set_is_the_salus():
    assert IMPLEMENTED == salu.IMPLEMENTED


@pytest.fixture(scope="module")
def results():
    rnd = random.Random(SEED)
    jobs = [(n, [random_vector(rnd) for _ in range(VECTORS)]) for n in sorted(IMPLEMENTED)]
    return dict(jobs), _run(jobs)


@pytest.mark.parametrize("name", sorted(IMPLEMENTED))
def test_op_matches_model(results, name):
    vectors, out = results
    vectors = vectors[name]
    assert len(vectors) >= 200
    dbits = info_of(OpId[name.upper()]).dst_bits
    dmask = (1 << dbits) - 1
    for vec, (got, cycles) in zip(vectors, out[name], strict=True):
        a, b, scc_in, exec_in, d_in, simm16 = vec
        ctx = f"{name} a={a:#x} b={b:#x} scc={scc_in} exec={exec_in:#x} d_in={d_in:#x} k={simm16:#x}"
        assert cycles == latency(name), ctx
        assert got["illegal"] == 0, ctx
        d, scc, exec_ = model_result(name, a, b, scc_in, exec_in, d_in, simm16)
        d_we, scc_we, exec_we = expected_enables(name, a, b, scc_in, d_in, simm16)
        assert (got["d_we"], got["scc_we"], got["exec_we"]) == (d_we, scc_we, exec_we), ctx
        if d_we:
            assert got["d"] & dmask == d & dmask, f"{ctx}: d {got['d']:#x}, model {d & dmask:#x}"
        else:
            assert d == d_in, ctx            # the model did not write it either
        if scc_we:
            assert got["scc"] == scc, f"{ctx}: scc {got['scc']}, model {scc}"
        else:
            assert scc == scc_in and got["scc"] == scc_in, ctx
        if exec_we:
            assert got["exec"] == exec_, f"{ctx}: exec {got['exec']:#x}, model {exec_:#x}"
        else:
            assert exec_ == exec_in, ctx        # the model did not write it either


def test_illegal():
    """Every opcode that is not an integer SALU op: one cycle, ``illegal``, nothing written."""
    rnd = random.Random(SEED + 1)
    others = [op.name.lower() for op in OpId if op.name.lower() not in IMPLEMENTED]
    assert "s_add_f32" in others and "s_getpc_b64" in others and "none" in others
    out = _run([(n, [random_vector(rnd)]) for n in others])
    bad = [n for n in others
           if (out[n][0][0]["illegal"], out[n][0][1]) != (1, 1)
           or any(out[n][0][0][k] for k in ("d_we", "scc_we", "exec_we"))]
    assert not bad, bad


def test_start_while_busy_is_not_taken():
    """s_mul_u64 with ``start`` held high over its passes: its result stands, and the
    s_add_co_u32 offered all along starts in its ``done`` cycle."""
    h = Harness()
    dut = h.dut
    sim = Simulator(h.m)
    sim.add_clock(1e-6)
    a, b = 0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321
    seen = []

    async def bench(ctx):
        ctx.set(dut.op, OpId.S_MUL_U64)
        ctx.set(h.stim, h.pack((a, b, 0, 0, 0, 0)))
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.op, OpId.S_ADD_CO_U32)
        ctx.set(h.stim, h.pack((0xFFFF_FFFF, 2, 0, 0, 0, 0)))
        for _ in range(5):
            seen.append((ctx.get(dut.busy), ctx.get(dut.done), ctx.get(dut.d), ctx.get(dut.scc)))
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    assert [s[:2] for s in seen] == [(1, 0), (1, 0), (0, 1), (0, 1), (0, 1)]
    assert seen[2][2] == (a * b) & ((1 << 64) - 1)
    assert (seen[3][2] & 0xFFFF_FFFF, seen[3][3]) == (1, 1)        # 0xffffffff + 2: 1, carry out


def test_verilog_lint(tmp_path):
    convert_and_lint(ScalarALU(), "scalar_alu", tmp_path)
