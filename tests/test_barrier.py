"""The DCU-wide workgroup barrier.

Unit tests drive the slot map directly: a barrier across SIMDs, two workgroups' barriers
independent, an ended wave counting as arrived, an open workgroup never completing, one
strobe per barrier, the counters. An integration test runs the dispatcher, the barrier and
fake SIMDs whose waves meet at several barriers (some waves exit early) and checks that
every release comes exactly one cycle after the last wave of the workgroup arrived or ended.
"""
from __future__ import annotations

from collections import defaultdict

import pytest
from amaranth.sim import Simulator

from hdl.top.barrier import WorkgroupBarrier
from hdl.config import get_config
from tests.fake_simd import FakeDCU
from tests.lint import convert_and_lint
from tests.test_dispatch import check_abi, check_resources, make_dispatch

CFG = get_config("default")
W = CFG.wave_slots


def run_unit(body, cycles=200):
    """Run ``body(ctx, dut, tick)`` against a fresh WorkgroupBarrier; ``tick`` advances one
    cycle and returns the released (simd, slot) pairs seen in the new cycle."""
    dut = WorkgroupBarrier(CFG)
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    count = [0]

    async def tick(ctx):
        count[0] += 1
        assert count[0] < cycles, "watchdog: unit test ran too long"
        waits = sum(ctx.get(dut.bar_wait[s]) << (s * W) for s in range(CFG.simds))
        tick.waited += bin(waits & ctx.get(dut.slot_live)).count("1")
        await ctx.tick()
        return {(s, i) for s in range(CFG.simds) for i in range(W) if ctx.get(dut.bar_release[s]) >> i & 1}

    async def bench(ctx):
        await body(ctx, dut, tick)

    tick.waited = 0       # the sum over cycles of live waiting waves

    sim.add_testbench(bench)
    sim.run()


def set_slots(ctx, dut, slots, open_wg=None):
    """``slots``: {(simd, slot): wg} of live waves."""
    live = sum(1 << (s * W + i) for s, i in slots)
    wgs = [0] * (CFG.simds * W)
    for (s, i), g in slots.items():
        wgs[s * W + i] = g
    ctx.set(dut.slot_live, live)
    ctx.set(dut.slot_wg, dut.slot_wg.shape().const(wgs))
    ctx.set(dut.open_wg, dut.open_wg.shape().const({"valid": open_wg is not None, "wg": open_wg or 0}))


def set_waiting(ctx, dut, waiting):
    for s in range(CFG.simds):
        ctx.set(dut.bar_wait[s], sum(1 << i for t, i in waiting if t == s))


def test_across_simds_and_independent():
    async def body(ctx, dut, tick):
        slots = {(0, 1): 3, (2, 0): 3, (1, 0): 5, (3, 2): 5}
        set_slots(ctx, dut, slots)
        waiting = {(0, 1), (1, 0)}            # one wave of each workgroup
        set_waiting(ctx, dut, waiting)
        for _ in range(5):
            assert await tick(ctx) == set()
        waiting.add((2, 0))                   # workgroup 3 complete
        set_waiting(ctx, dut, waiting)
        assert await tick(ctx) == {(0, 1), (2, 0)}
        # the SIMD clears bar_wait after the cycle of the strobe: one strobe only
        assert await tick(ctx) == set()
        waiting -= {(0, 1), (2, 0)}
        set_waiting(ctx, dut, waiting)
        for _ in range(3):
            assert await tick(ctx) == set()
        # workgroup 5's other wave ends: it counts as arrived
        ctx.set(dut.ended[3], 1 << 2)
        assert await tick(ctx) == {(1, 0)}
        ctx.set(dut.ended[3], 0)
        del slots[(3, 2)]
        set_slots(ctx, dut, slots)
        set_waiting(ctx, dut, set())
        assert await tick(ctx) == set()
        c = ctx.get(dut.counters)
        assert (c.barriers, c.wait_cycles) == (2, tick.waited)
    run_unit(body)


def test_open_workgroup_waits():
    async def body(ctx, dut, tick):
        set_slots(ctx, dut, {(0, 0): 7, (1, 0): 7}, open_wg=7)
        set_waiting(ctx, dut, {(0, 0), (1, 0)})
        for _ in range(4):
            assert await tick(ctx) == set()
        set_slots(ctx, dut, {(0, 0): 7, (1, 0): 7, (3, 1): 7})   # the last wave launched
        for _ in range(4):
            assert await tick(ctx) == set()
        set_waiting(ctx, dut, {(0, 0), (1, 0), (3, 1)})
        assert await tick(ctx) == {(0, 0), (1, 0), (3, 1)}
    run_unit(body)


def test_all_ended_but_one():
    """A workgroup whose other waves have all ended: its last wave's barrier completes alone."""
    async def body(ctx, dut, tick):
        set_slots(ctx, dut, {(2, 3): 1})
        set_waiting(ctx, dut, {(2, 3)})
        assert await tick(ctx) == {(2, 3)}
    run_unit(body)


# ---- dispatcher + barrier + fake SIMDs running waves that meet at barriers ------------------
def barrier_program(barriers, p_exit):
    def program(rng, w):
        n = barriers + 1
        if rng.random() < p_exit:
            n = rng.randint(1, barriers)   # this wave exits before the remaining barriers
        return [rng.randint(1, 25) for _ in range(n)]
    return program


@pytest.mark.parametrize("wgp", [False, True], ids=["cu", "wgp"])
def test_barriers_with_dispatcher(wgp):
    barriers = 3
    d = make_dispatch((6,), (96 if not wgp else 160,), vgprs=64, id_dims=1)
    fake = FakeDCU(CFG, seed=21 + wgp, barrier=True, program=barrier_program(barriers, 0.25))
    (res,) = fake.run([(d, wgp)])
    check_abi(d, res)
    check_resources(CFG, d, wgp, res)
    by_wg = defaultdict(list)
    for w in res.waves:
        by_wg[w.coords].append(w)
    assert wgp or all(len({w.simd for w in ws}) == 2 for ws in by_wg.values())
    assert not wgp or any(len({w.simd for w in ws}) >= 3 for ws in by_wg.values())
    completed = 0
    for coords, ws in by_wg.items():
        for p in range(barriers):
            part = [w for w in ws if len(w.segments) > p + 1]   # waves that wait at barrier p
            if not part:
                continue
            completed += 1
            release = {w.releases[p] for w in part}
            assert len(release) == 1, f"workgroup {coords} barrier {p}: released over cycles {sorted(release)}"
            (r,) = release
            # the last event: a participant arriving, or a wave that exits before this barrier
            # ending; the release strobe is the cycle after (bar_wait visible the cycle after
            # the wave's segment ended: its arrival cycle is the cycle it started waiting + 1)
            arrivals = [w.arrivals[p] for w in part]
            exits = [w.ended_cycle for w in ws if len(w.segments) <= p + 1 and w.ended_cycle < r]
            late = [w for w in ws if len(w.segments) <= p + 1 and w.ended_cycle >= r]
            assert not late, f"workgroup {coords} barrier {p} released at {r} before a wave ended"
            assert r == max(arrivals + exits) + 1, \
                f"workgroup {coords} barrier {p}: released at {r}, last arrival/exit {max(arrivals + exits)}"
    bc = res.barrier_counters
    assert bc["barriers"] == completed and bc["wait_cycles"] == res.wait_cycles


@pytest.mark.parametrize("preset", ["default", "rdna1"])
def test_verilog_lint(preset, tmp_path):
    convert_and_lint(WorkgroupBarrier(get_config(preset)), f"barrier_{preset}", tmp_path)
