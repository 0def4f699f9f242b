"""hdl.simd.transshare.SharedTrans: one transcendental unit behind a round-robin arbiter.

* Four ports send waves with random gaps and take results with random back-pressure: every
  port gets exactly its own results, in its own order, bit-exact against ``sim.fp32``. A
  port drives its payload only while valid and ready, zero otherwise, as a SIMD does.
* A port's ``ready`` never depends on its own ``valid`` (a SIMD reads it at issue, before
  it sends), checked every cycle by offering and withdrawing the wave.
* With every port always sending, the unit takes them in turn: each run of four takes serves
  every port once.
* Verilog conversion and ``verilator --lint-only``.
"""
from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator

from hdl.config import DCUConfig
from hdl.simd.transshare import SharedTrans
from tests.lint import convert_and_lint
from tests.bitpack import pack_lanes, unpack_lanes
from tests.trans_inputs import OPS, make_waves, random_inputs

PORTS = 4
SEED = 20261125


def _port_waves(port: int, waves_per_op: int):
    per_op = {op: random_inputs(op, 32 * waves_per_op, SEED + 10 * port + k) for k, op in enumerate(OPS)}
    return make_waves(per_op)


def _run(dut, waves, *, valid_p, ready_p, seed, probe_ready=True):
    """``waves[p]``: port p's list of ``(op, a[32], tag)``. Returns per port the results
    ``d[32]`` in arrival order, and the port of every take in take order."""
    rng = np.random.default_rng(seed)
    got = [[] for _ in waves]
    takes = []
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        nxt = [0] * len(waves)
        offered = [False] * len(waves)
        cyc = 0
        while any(len(g) < len(w) for g, w in zip(got, waves)):
            for p, req in enumerate(dut.req):
                if not offered[p] and nxt[p] < len(waves[p]) and rng.random() < valid_p:
                    offered[p] = True          # held until taken, as a SIMD holds its EX
                ctx.set(req.payload.op, 0)
                ctx.set(req.payload.a, 0)
            if probe_ready:
                for p, req in enumerate(dut.req):
                    ctx.set(req.valid, 0)
                    without = ctx.get(req.ready)
                    ctx.set(req.valid, 1)
                    assert ctx.get(req.ready) == without, f"port {p}: ready follows its own valid (cycle {cyc})"
            for p, req in enumerate(dut.req):
                ctx.set(req.valid, offered[p])
            for p, req in enumerate(dut.req):
                if offered[p] and ctx.get(req.ready):  # a SIMD drives its wave only then
                    op, a, _ = waves[p][nxt[p]]
                    ctx.set(req.payload.op, op)
                    ctx.set(req.payload.a, pack_lanes(a))
            ready = [bool(rng.random() < ready_p) for _ in dut.resp]
            for p, resp in enumerate(dut.resp):
                ctx.set(resp.ready, ready[p])
            taken = [p for p, req in enumerate(dut.req) if offered[p] and ctx.get(req.ready)]
            assert len(taken) <= 1, f"two ports taken in one cycle: {taken}"
            for p, resp in enumerate(dut.resp):
                if ctx.get(resp.valid) and ready[p]:
                    got[p].append(unpack_lanes(ctx.get(resp.payload.d)))
            for p in taken:
                takes.append(p)
                offered[p] = False
                nxt[p] += 1
            await ctx.tick()
            cyc += 1
            assert cyc < 120 * sum(map(len, waves)) + 200, "no progress"

    sim.add_testbench(bench)
    sim.run()
    return got, takes


def test_each_port_gets_its_own_results_in_order():
    dut = SharedTrans(DCUConfig(), PORTS)
    made = [_port_waves(p, 3) for p in range(PORTS)]
    waves = [w for w, _ in made]
    got, takes = _run(dut, waves, valid_p=0.4, ready_p=0.6, seed=SEED)
    for p, (_, expected) in enumerate(made):
        assert len(got[p]) == len(expected)
        for k, (d, want) in enumerate(zip(got[p], expected)):
            bad = np.nonzero(d != want)[0]
            assert not len(bad), f"port {p} wave {k} lane {bad[0]}: {d[bad[0]]:#x} != {want[bad[0]]:#x}"
    assert sorted(set(takes)) == list(range(PORTS))


def test_round_robin_when_every_port_sends():
    dut = SharedTrans(DCUConfig(), PORTS)
    waves = [_port_waves(p, 1)[0][:4] for p in range(PORTS)]
    _, takes = _run(dut, waves, valid_p=1.0, ready_p=1.0, seed=SEED + 1, probe_ready=False)
    assert len(takes) == 4 * PORTS
    for k in range(0, len(takes), PORTS):
        assert sorted(takes[k:k + PORTS]) == list(range(PORTS)), takes
    assert takes[:PORTS] == [1, 2, 3, 0]       # after reset the port after port 0 comes first


def test_verilog_lint(tmp_path):
    convert_and_lint(SharedTrans(DCUConfig(trans_lanes=4), PORTS), "shared_trans", tmp_path)
