"""hdl.simd.trans.TransUnit in Amaranth's simulator, bit for bit against sim.fp32.

* ROM tables generated in hdl/ equal the model's literals; every datapath register field holds
  the model's intermediates over every significand (both exponent parities for sqrt/rsq).
* One long back-to-back run: special inputs (signed zeros, infinities, NaN payloads, denormals,
  powers of two, values next to every ROM interval boundary, exp's integer/j boundaries and
  underflow/overflow edges, log's near-1 path) and >= 24,000 random inputs per op, waves of the
  six ops interleaved; every result bit-exact, one wave accepted and one delivered every 4
  cycles, the same latency for every wave.
* Random input gaps and output back-pressure (payload held while stalled), tags in order, an
  unsupported op gives 0; other lane counts (4, 32).
* Verilog conversion and ``verilator --lint-only``.
"""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.simd import trans
from hdl.config import DCUConfig
from hdl.isa_tables import OpId
from hdl.simd.trans import FIELDS, TransUnit
from sim import fp32 as F
from tests.bitpack import pack_lanes, unpack_lanes
from tests.lint import convert_and_lint

U32 = np.uint32
SEED = 20250612
N_RANDOM = 24_000                                   # random inputs per op (main run)
OPS = {
    OpId.V_RCP_F32: F.rcp, OpId.V_RSQ_F32: F.rsq, OpId.V_SQRT_F32: F.sqrt,
    OpId.V_EXP_F32: F.exp, OpId.V_LOG_F32: F.log,
    OpId.V_RCP_IFLAG_F32: F.rcp,                    # same value as v_rcp_f32 (ISA pseudocode)
}


# --------------------------------------------------------------------------------------
# Tables and widths
def test_tables_equal_model():
    assert trans.RCP_T0 == F.RCP_T0
    assert trans.RSQ_T0 == F.RSQ_T0
    assert trans.EXP2_T == F.EXP2_T
    assert trans.EXP2_C == (F.EXP2_C1, F.EXP2_C2, F.EXP2_C3)
    assert trans.LOG2_C == F.LOG2_C
    assert trans.LOG2_L == F.LOG2_L
    assert trans.LOG2_P == (F.LOG2_P0, F.LOG2_P1, F.LOG2_P2, F.LOG2_P3)
    words = trans.rom_words()
    assert len(words) == trans.ROM_DEPTH == 128 and trans.ROM_LAYOUT.size == 128
    for name, shape in trans.ROM_LAYOUT:
        assert max(w[name] for w in words) < 1 << shape.width, name


def _fits(values, shape, what):
    lo, hi = int(values.min()), int(values.max())
    if shape.signed:
        ok = -(1 << (shape.width - 1)) <= lo and hi < 1 << (shape.width - 1)
    else:
        ok = 0 <= lo and hi < 1 << shape.width
    assert ok, f"{what}: range [{lo}, {hi}] does not fit {shape}"


def _significands(step=1 << 21):
    for start in range(1 << 23, 1 << 24, step):
        yield np.arange(start, start + step, dtype=np.int64)


def test_field_widths_hold_every_significand():
    """Every register field holds the model's intermediate for every significand."""
    rcp, rsq, exp, log = (FIELDS[k] for k in ("rcp", "rsq", "exp", "log"))
    for M in _significands():
        t = F.rcp_core(M)
        for name in ("R0", "E0", "R1", "E1s", "Q"):
            _fits(t[name], rcp[name], f"rcp {name}")
        _fits(M * t["Q"], rcp["MQ"], "rcp MQ")
        for e in (0, 1):                                   # exponent parity
            t = F.rsqrt_core(M, np.full_like(M, e))
            for name in ("N", "Y0", "Y0sq", "Eas", "Y1", "Y1sq", "Ebs", "Y2", "S", "Q"):
                _fits(t[name], rsq[name], f"rsq {name}")
            _fits(t["S"] * t["S"], rsq["SS"], "sqrt S^2")
            QN = t["Q"] * t["N"]
            _fits(QN, rsq["QN"], "rsq QN")
        t = F.log2_core(M, np.zeros_like(M))
        for name in ("T", "A2", "A1", "P", "V"):
            _fits(t[name], log[name], f"log {name}")
    # exp: the Horner chain depends on r only and increases with it; T P < 2^62
    r = np.concatenate([np.arange(0, 1 << 16), np.arange((1 << 26) - (1 << 16), 1 << 26),
                        np.random.default_rng(SEED).integers(0, 1 << 26, 1 << 20)])
    one = np.ones_like(r, dtype=np.int64)
    for j in (0, 63):
        X = (j << 26) + r
        t = F.exp2_core(0 * one, X.astype(np.int64), -9 * one)   # a * 2^32 = X exactly
        assert (t["r"] == r).all() and (t["j"] == j).all()
        for name in ("A2", "A1", "P", "T"):
            _fits(t[name], exp[name], f"exp {name}")
        _fits(t["sig"].astype(np.int64), FIELDS["rp"]["sig"], "exp sig")
    # Q^2 N exceeds int64: Q < 2^26 and Q N < 2^51 (checked above) bound it
    assert FIELDS["rsq"]["Q"].width + FIELDS["rsq"]["QN"].width <= FIELDS["rsq"]["Q2N"].width


# --------------------------------------------------------------------------------------
# Input sets
def _bits(x):
    return np.asarray(x, np.float32).view(U32)


def _both_signs(v):
    v = np.asarray(v, dtype=np.int64) & 0x7FFFFFFF
    return np.concatenate([v, v | 0x80000000]).astype(U32)


def special_inputs(op) -> np.ndarray:
    """Edge inputs for one op (both signs everywhere)."""
    rng = np.random.default_rng(SEED + 1)
    s = [0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF, 0x7FA5A5A5, 0x7FC12345,
         1, 2, 3, 0x7FFFFF, 0x400000, 0x400001, 0x3FFFFF, 0x800000, 0x800001, 0x7F7FFFFF,
         0x7F7FFFFE, 0x00FFFFFF]
    s += list(rng.integers(1, 1 << 23, 300))                        # denormals
    s += [ef << 23 for ef in range(1, 255)]                          # powers of two
    s += [1 << k for k in range(23)]                                 # denormal powers of two
    for center in (0x3F800000, 0x40000000, 0x3F000000):              # 1, 2, 0.5 +- 64 ulps
        s += list(range(center - 64, center + 65))
    # next to every ROM interval boundary (i/128 of the significand), both exponent parities
    for ef in (1, 2, 100, 126, 127, 128, 129, 200, 253, 254):
        for i in range(128):
            base = (ef << 23) | (i << 16)
            s += [base, base + 1, base - 1 if i else base + 2, base + 0xFFFF]
    if op == OpId.V_EXP_F32:
        # n + j/64 +- 1 ulp around the interesting integer parts, and the range edges
        for n in (-160, -151, -150, -149, -127, -126, -125, -64, -2, -1, 0, 1, 2, 64, 126, 127, 128):
            for j in range(64):
                x = _bits(np.float32(n + j / 64))
                s += [int(x) - 1, int(x), int(x) + 1]
        s += list(_bits(np.arange(-200, 200, dtype=np.float32)))    # integers
        s += list(_bits(np.float32([255.99998, 256.0, 256.00003, 149.5, -149.5, -150.5,
                                    127.99999, 128.00002, 1e-30, 1e-45, 5e-8, 2.0 ** -26])))
    if op == OpId.V_LOG_F32:
        s += list(range(0x3F800000, 0x3F810000, 37))                 # near-1 path, c = 1
        s += list(range(0x3F7F0000, 0x3F800000, 37))                 # near-1 path, c = 1/2
    return _both_signs(s)


def random_inputs(op, n, seed) -> np.ndarray:
    """``n`` random inputs: a third all-random bits, the rest in the op's useful domain."""
    rng = np.random.default_rng(seed)
    k = n // 3
    raw = rng.integers(0, 1 << 32, k, dtype=np.uint64).astype(U32)
    m = n - k
    if op == OpId.V_EXP_F32:
        parts = [rng.uniform(-155.0, 130.0, m // 2).astype(np.float32).view(U32),
                 (rng.uniform(-1, 1, m - m // 2) * np.exp2(rng.uniform(-30, 7, m - m // 2)))
                 .astype(np.float32).view(U32)]
        dom = np.concatenate(parts)
    else:
        dom = rng.integers(0, 0x7F800000, m, dtype=np.uint64).astype(U32)   # positive finite
        if op in (OpId.V_RCP_F32, OpId.V_RCP_IFLAG_F32):
            dom |= (rng.integers(0, 2, m).astype(U32) << U32(31))
    return np.concatenate([raw, dom]).astype(U32)


# --------------------------------------------------------------------------------------
# Simulation harness
def run_waves(dut, waves, *, valid_p=1.0, ready_p=1.0, seed=0, cycles_per_wave=40):
    """Drive ``waves`` (list of ``(op, a[32], tag)``) through ``dut``, failing when it takes
    more than ``cycles_per_wave`` cycles a wave (and 200 more).

    Returns a dict with ``out`` (list of ``(tag, d[32])`` in output order), ``in_cycles`` and
    ``out_cycles`` (handshake cycles), ``held`` (cycles checked for a stable stalled payload)
    and ``cycles`` and ``seconds``.
    """
    rng = np.random.default_rng(seed)
    res = {"out": [], "in_cycles": [], "out_cycles": [], "held": 0}
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        wi, cyc, stalled = 0, 0, None
        while len(res["out"]) < len(waves):
            offer = wi < len(waves) and rng.random() < valid_p
            if offer:
                op, a, tag = waves[wi]
                ctx.set(dut.i.payload.op, op)
                ctx.set(dut.i.payload.a, pack_lanes(a))
                ctx.set(dut.i.payload.tag, tag)
            ctx.set(dut.i.valid, offer)
            ready = bool(rng.random() < ready_p)
            ctx.set(dut.o.ready, ready)
            accepted = offer and ctx.get(dut.i.ready)
            if ctx.get(dut.o.valid):
                now = (ctx.get(dut.o.payload.d), ctx.get(dut.o.payload.tag))
                if stalled is not None:
                    assert now == stalled, f"output payload changed while stalled (cycle {cyc})"
                    res["held"] += 1
                if ready:
                    res["out"].append((now[1], unpack_lanes(now[0])))
                    res["out_cycles"].append(cyc)
                    stalled = None
                else:
                    stalled = now
            else:
                assert stalled is None, f"o.valid dropped while stalled (cycle {cyc})"
            if accepted:
                res["in_cycles"].append(cyc)
                wi += 1
            await ctx.tick()
            cyc += 1
            assert cyc < cycles_per_wave * len(waves) + 200, "no progress"
        res["cycles"] = cyc

    sim.add_testbench(bench)
    t0 = time.perf_counter()
    sim.run()
    res["seconds"] = time.perf_counter() - t0
    return res


def make_waves(per_op: dict, first_tag=0):
    """Waves of 32 inputs per op, interleaved round-robin between ops; returns
    ``(waves, expected)``."""
    queues = {}
    for op, xs in per_op.items():
        pad = (-len(xs)) % 32
        xs = np.concatenate([xs, xs[:pad]]) if pad else xs
        queues[op] = [xs[k:k + 32] for k in range(0, len(xs), 32)]
    waves, expected = [], []
    tag = first_tag
    while any(queues.values()):
        for op, q in queues.items():
            if q:
                a = q.pop(0)
                waves.append((op, a, tag & 0xFFFF))
                expected.append(np.asarray(OPS[op](a), U32) if op in OPS else np.zeros(32, U32))
                tag += 1
    return waves, expected


# --------------------------------------------------------------------------------------
# Main run: specials + random inputs, back to back
@pytest.fixture(scope="module")
def main_run():
    per_op = {}
    for k, op in enumerate(OPS):
        n = N_RANDOM if op != OpId.V_RCP_IFLAG_F32 else 2_000
        per_op[op] = np.concatenate([special_inputs(op), random_inputs(op, n, SEED + 10 + k)])
    waves, expected = make_waves(per_op)
    dut = TransUnit(DCUConfig())
    res = run_waves(dut, waves)
    res.update(waves=waves, expected=expected, per_op=per_op, latency=dut.latency)
    n = sum(len(x) for x in per_op.values())
    print(f"\nmain run: {len(waves)} waves, {n} inputs, {res['cycles']} cycles in "
          f"{res['seconds']:.1f} s ({res['cycles'] / res['seconds']:.0f} cycles/s)")
    return res


def _check(res, op):
    n_bad, first = 0, []
    for (op_w, a, tag), exp, (tag_o, d) in zip(res["waves"], res["expected"], res["out"]):
        assert tag_o == tag, "tags out of order"
        if op_w != op:
            continue
        bad = np.nonzero(d != exp)[0]
        n_bad += len(bad)
        first += [f"a={a[k]:#010x} got {d[k]:#010x} want {exp[k]:#010x}" for k in bad[:4]]
    assert n_bad == 0, f"{op.name}: {n_bad} mismatches, e.g. " + "; ".join(first[:8])


@pytest.mark.parametrize("op", list(OPS), ids=lambda o: o.name.lower())
def test_bit_exact(main_run, op):
    """Every lane of every wave equals sim.fp32 (specials and random inputs)."""
    assert len(main_run["out"]) == len(main_run["waves"])
    _check(main_run, op)
    n_spec = len(special_inputs(op))
    assert len(main_run["per_op"][op]) >= n_spec + (20_000 if op != OpId.V_RCP_IFLAG_F32 else 0)


def test_special_results_sample(main_run):
    """A few documented results, independent of the model (docs/fp32.md §5)."""
    got = {}
    for (op, a, _), (_, d) in zip(main_run["waves"], main_run["out"]):
        for x, y in zip(a, d):
            got[(op, int(x))] = int(y)
    R, Q, S, E, L = (OpId.V_RCP_F32, OpId.V_RSQ_F32, OpId.V_SQRT_F32, OpId.V_EXP_F32,
                     OpId.V_LOG_F32)
    cases = {
        (R, 0x80000000): 0xFF800000, (R, 0x7F800000): 0, (R, 0x40000000): 0x3F000000,
        (R, 0x7F7FFFFF): 0, (R, 0x7F000000): 0, (R, 0xFF000000): 0x80000000,   # denormal: flushed
        (R, 0x7E800000): 0x00800000, (R, 0x00000001): 0x7F800000, (R, 0x807FFFFF): 0xFF800000,
        (R, 0x7FA5A5A5): 0x7FE5A5A5,
        (Q, 0x80000000): 0xFF800000, (Q, 0x7F800000): 0, (Q, 0x40800000): 0x3F000000,
        (Q, 0xBF800000): 0xFFC00000, (S, 0x80000000): 0x80000000, (S, 0x40800000): 0x40000000,
        (S, 0xFF800000): 0xFFC00000, (S, 0x00000001): 0, (S, 0x80000001): 0x80000000,
        (E, 0x80000000): 0x3F800000, (E, 0xFF800000): 0, (E, 0x7F800000): 0x7F800000,
        (E, 0x43000000): 0x7F800000, (E, 0xC3150000): 0, (E, 0x40400000): 0x41000000,
        (E, 0xC2FC0000): 0x00800000, (E, 0xC3020000): 0, (E, 0x00000001): 0x3F800000,
        (L, 0x00000000): 0xFF800000, (L, 0x3F800000): 0, (L, 0x00000001): 0xFF800000,
        (L, 0x80000001): 0xFF800000, (L, 0x00800000): 0xC2FC0000,
        (L, 0xBF800000): 0xFFC00000, (L, 0xFFC12345): 0xFFC12345, (L, 0x7F800000): 0x7F800000,
    }
    for key, want in cases.items():
        assert got[key] == want, f"{key[0].name}({key[1]:#010x}) = {got[key]:#010x}, want {want:#010x}"


def test_throughput_and_latency(main_run):
    """Full input stream, always-ready output: one wave in and one out every 4 cycles."""
    period = 32 // DCUConfig().trans_lanes
    ins, outs = np.array(main_run["in_cycles"]), np.array(main_run["out_cycles"])
    assert period == 4
    assert set(np.diff(ins)) == {period}, "input not accepted every 4 cycles"
    assert set(np.diff(outs)) == {period}, "output not delivered every 4 cycles"
    lat = set(outs - ins)
    assert lat == {main_run["latency"]} == {trans.LATENCY}, lat
    waves = len(ins)
    total = main_run["cycles"]
    print(f"\nlatency {trans.LATENCY} cycles, {(outs[-1] - outs[0]) / (waves - 1):.2f} cycles/wave32"
          f" over {waves} waves ({total} cycles)")


# --------------------------------------------------------------------------------------
def test_backpressure_gaps_and_unsupported_op():
    """Random input gaps and output stalls: same results, tags in order, payload held."""
    rng = np.random.default_rng(SEED + 2)
    per_op = {op: random_inputs(op, 32 * 24, SEED + 20 + k) for k, op in enumerate(OPS)}
    per_op[OpId.V_ADD_F32] = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(U32)
    waves, expected = make_waves(per_op, first_tag=0xFFF0)
    res = run_waves(TransUnit(DCUConfig()), waves, valid_p=0.7, ready_p=0.5, seed=SEED)
    res.update(waves=waves, expected=expected)
    assert res["held"] > 50, "back-pressure was not exercised"
    for op in list(OPS) + [OpId.V_ADD_F32]:
        _check(res, op)
    assert [t for t, _ in res["out"]] == [t for _, _, t in waves]


@pytest.mark.parametrize("lanes, mul_regs", [(4, 0), (32, 0), (4, 1), (1, 2)])
def test_other_lane_counts(lanes, mul_regs):
    """``trans_lanes`` 4, 32 and 1 (the ``fpga`` preset's, with its 2 ``trans_mul_regs``),
    and 4 with the operands registered: bit-exact, one wave every 32 / lanes cycles, and each
    register around the 9 multiplying steps' multiplies 9 cycles more latency."""
    per_op = {op: np.concatenate([random_inputs(op, 96, SEED + 30 + k), special_inputs(op)[::97]])
              for k, op in enumerate(OPS)}
    waves, expected = make_waves(per_op)
    dut = TransUnit(DCUConfig(trans_lanes=lanes, trans_mul_regs=mul_regs))
    res = run_waves(dut, waves)
    res.update(waves=waves, expected=expected)
    for op in OPS:
        _check(res, op)
    assert set(np.diff(res["in_cycles"])) == {32 // lanes}
    assert dut.latency == 13 + 1 + 9 * mul_regs + 32 // lanes - 1
    assert set(np.array(res["out_cycles"]) - np.array(res["in_cycles"])) == {dut.latency}


def test_mul_regs_backpressure():
    """Operand and product registers under random input gaps and output stalls: the stall
    freezes them with the stages (same results, tags in order)."""
    per_op = {op: random_inputs(op, 32 * 6, SEED + 40 + k) for k, op in enumerate(OPS)}
    waves, expected = make_waves(per_op)
    res = run_waves(TransUnit(DCUConfig(trans_lanes=8, trans_mul_regs=2)), waves,
                    valid_p=0.7, ready_p=0.5, seed=SEED + 3)
    res.update(waves=waves, expected=expected)
    assert res["held"] > 10, "back-pressure was not exercised"
    for op in OPS:
        _check(res, op)
    assert [t for t, _ in res["out"]] == [t for _, _, t in waves]


def test_rejects_bad_lane_count():
    with pytest.raises(ValueError):
        TransUnit(SimpleNamespace(trans_lanes=6))


# --------------------------------------------------------------------------------------
def test_verilog_lint(tmp_path):
    """The unit converts to Verilog (ROM as a memory, one multiplier per lane and stage) and
    passes Verilator's lint."""
    text = convert_and_lint(TransUnit(DCUConfig()), "trans_unit", tmp_path)
    assert "reg [127:0] rom [127:0];" in text
    assert text.count(" * ") == 8 * 9
    print(f"\ntrans_unit.v: {len(text.splitlines())} lines, verilator lint clean")
