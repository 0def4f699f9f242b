"""Inputs and a stream driver for the transcendental unit's tests (tests/test_transseq.py,
tests/test_transshare.py): edge and random float32 operands per op, waves of 32 with their
``sim.fp32`` results, and a testbench that feeds waves and collects results under random input
gaps and output back-pressure.
"""
from __future__ import annotations

import time

import numpy as np
from amaranth.sim import Simulator

from hdl.isa_tables import OpId
from sim import fp32 as F
from tests.bitpack import pack_lanes, unpack_lanes

U32 = np.uint32
SEED = 20250612
#: The unit's opcodes and the model's function of each.
OPS = {
    OpId.V_RCP_F32: F.rcp, OpId.V_RSQ_F32: F.rsq, OpId.V_SQRT_F32: F.sqrt,
    OpId.V_EXP_F32: F.exp, OpId.V_LOG_F32: F.log,
    OpId.V_RCP_IFLAG_F32: F.rcp,                    # same value as v_rcp_f32 (ISA pseudocode)
}


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


# Simulation harness
def run_waves(dut, waves, *, valid_p=1.0, ready_p=1.0, seed=0, cycles_per_wave=300):
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
