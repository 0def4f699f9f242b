"""ScalarALU (hdl/simd/scalar_alu.py, 32-bit datapath, 64-bit operations in two passes)
against the reference model, bit for bit, and its timing.

Every implemented opcode runs ``VECTORS`` operand sets (edge values, shift amounts and field
widths past the operand width, random SCC/EXEC/old destination/simm16) through Amaranth's
simulator, back to back: each ``start`` is given in the ``done`` cycle of the operation
before. Destination, SCC, EXEC and their write enables must agree with the model's handler
(:func:`model_result`, :func:`expected_enables`), and every operation must take its latency:
``done`` exactly that many cycles after ``start``, ``busy`` in each cycle before it, no write
enable before ``done``. Also: the implemented set is the model's integer SALU, every other
opcode is ``illegal`` with nothing written, a ``start`` while ``busy`` is not taken, and
Verilator lints the Verilog.
"""
from __future__ import annotations

import random

import pytest
from amaranth.hdl import Cat, Module, Signal
from amaranth.sim import Simulator

from isa import Fmt, Inst, by_name
from hdl.isa_tables import OpId, info_of, ops_of
from hdl.simd.scalar_alu import IMPLEMENTED, ScalarALU
from sim import execute as X
from sim import scalar as S
from sim.wave import EXEC, Wave
from tests.lint import convert_and_lint

SEED = 20250623
VECTORS = 200
EDGE32 = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFE, 0x7FFF, 0x8000, 0xFFFF,
          0x1_0000, 31, 32, 33, 63, 64, 65, 127]
EDGE64 = [0, 1, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, 0xFFFF_FFFF, 1 << 32, 0xFFFF_FFFF_0000_0000]
_FLOAT_PREFIXES = ("s_cvt_", "s_floor_", "s_ceil_", "s_trunc_", "s_rndne_")


def _model_integer_salu() -> set[str]:
    out = set()
    for op in ops_of("salu"):
        n = op.name.lower()
        if n in X.IMPLEMENTED and "_f32" not in n and "_f16" not in n and not n.startswith(_FLOAT_PREFIXES) \
                and n not in ("s_getpc_b64", "s_round_mode", "s_denorm_mode",
                              "s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32",
                              "s_barrier_signal_isfirst"):    # mode, hwregs, barrier: not SALU datapath
            out.add(n)
    return out


# -------------------------------------------------------------------------- the model side
D, A, B = 0, 2, 4          # SGPRs of the destination and of S0, S1 (pairs for 64-bit)


def _inst(name: str, simm16: int) -> Inst:
    info = by_name(name)
    f = {Fmt.SOP2: {"sdst": D, "ssrc0": A, "ssrc1": B}, Fmt.SOP1: {"sdst": D, "ssrc0": A},
         Fmt.SOPC: {"ssrc0": A, "ssrc1": B}, Fmt.SOPK: {"sdst": D, "simm16": simm16}}[info.fmt]
    return Inst(info=info, fmt=info.fmt, pc=0, words=(0,), size=4, literal=None, f=f)


def model_result(name, a, b, scc_in, exec_in, d_in, simm16):
    """-> (d, scc, exec) after the model's handler; the state starts as the RTL inputs."""
    w = Wave(0, 1, 0)
    w.s[D], w.s[D + 1] = d_in & S.M32, d_in >> 32
    w.s[A], w.s[A + 1] = a & S.M32, a >> 32
    w.s[B], w.s[B + 1] = b & S.M32, b >> 32
    w.s[EXEC] = exec_in
    w.scc = scc_in
    X.build(_inst(name, simm16))(w, None)
    return w.s[D] | (w.s[D + 1] << 32), w.scc, w.s[EXEC]


def expected_enables(name, a, b, scc_in, d_in, simm16):
    """(d_we, scc_we, exec_we) the model implies."""
    info = by_name(name)
    if info.fmt == Fmt.SOPC:
        return 0, 1, 0
    if name.endswith(("_saveexec_b32", "_wrexec_b32")):
        return 1, 1, 1
    if name in ("s_cmov_b32", "s_cmov_b64"):
        return scc_in, 0, 0
    if name in S.SOP1_BITSET:
        return 1, 0, 0
    m32, m64 = S.M32, S.M64
    if info.fmt == Fmt.SOP2:
        (b0, b1) = info.src_bits
        _, scc = S.SOP2[name](a & (m64 if b0 == 64 else m32), b & (m64 if b1 == 64 else m32), scc_in)
        return 1, int(scc is not None), 0
    if info.fmt == Fmt.SOP1:
        _, scc = S.SOP1[name](a & (m64 if info.src_bits[0] == 64 else m32), scc_in)
        return 1, int(scc is not None), 0
    d, scc = S.sopk(name)(d_in & m32, simm16, scc_in)
    d_we = scc_in if name == "s_cmovk_i32" else int(d is not None)
    return d_we, int(scc is not None), 0


# -------------------------------------------------------------------------- stimulus
def _operand(rnd: random.Random, wide: bool) -> int:
    r = rnd.random()
    if r < 0.3:
        return rnd.choice(EDGE64) if wide and rnd.random() < 0.6 else rnd.choice(EDGE32)
    if r < 0.45:
        return rnd.randrange(130)
    if r < 0.6:          # a bit-field descriptor: width in [22:16], offset in the low bits
        return (rnd.choice([0, 1, 31, 32, 33, 63, 64, 65, 127, rnd.randrange(128)]) << 16) \
            | rnd.randrange(64) | (rnd.getrandbits(9) << 23 if rnd.random() < 0.3 else 0)
    return rnd.getrandbits(64 if wide else 32) | (rnd.getrandbits(32) << 32 if rnd.random() < 0.5 else 0)


def random_vector(rnd: random.Random):
    a, b = _operand(rnd, True), _operand(rnd, True)
    if rnd.random() < 0.1:
        b = a
    scc_in = rnd.getrandbits(1)
    exec_in = rnd.choice([0, S.M32, rnd.getrandbits(32), rnd.getrandbits(32)])
    d_in = rnd.choice([0, S.M64, rnd.getrandbits(64), rnd.getrandbits(64)])
    simm16 = rnd.choice([0, 1, 0x7FFF, 0x8000, 0xFFFF, rnd.getrandbits(16), rnd.getrandbits(16)])
    return a, b, scc_in, exec_in, d_in, simm16

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


def test_implemented_set_is_the_models_integer_salu():
    assert set(IMPLEMENTED) == _model_integer_salu()


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
