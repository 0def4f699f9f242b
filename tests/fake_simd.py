"""Stand-ins for the four SIMDs and the LDS around the dispatcher (and the barrier unit), for
tests/test_dispatch.py and tests/test_barrier.py.

A fake SIMD takes launches into a random free slot (ready when a slot is free and it is not
busy writing the previous launch, four cycles like hdl.simd), holds a workgroup's waves
until the one marked ``wg_last`` arrives, then runs each wave's program: segments of
cycles separated by barriers (``bar_wait`` high until ``bar_release``), then one ``ended``
strobe, after which the slot is free. Every launch and LDS allocation is recorded, and the
invariants that hold at every cycle are checked as the run goes.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from amaranth.hdl import Elaboratable, Module
from amaranth.sim import Simulator

from hdl.top.barrier import WorkgroupBarrier
from hdl.top.dispatch import Dispatcher, DispatchLayout, dispatch_fields

LAUNCH_BUSY = 4   # cycles a SIMD spends writing a launch (hdl.simd)


@dataclass
class Wave:
    simd: int
    slot: int
    wg: int
    wg_last: int
    pc: int
    vgpr_base: int
    vgprs: int
    exec: int
    sgpr: list
    ttmp7: int
    ttmp9: int
    v0: int
    cycle: int
    segments: list = field(default_factory=list)   # run lengths; a barrier between two
    held: bool = True
    seg: int = 0
    left: int = 0
    waiting: bool = False
    ending: bool = False
    ended_cycle: int | None = None
    arrivals: list = field(default_factory=list)   # first cycle of each bar_wait
    releases: list = field(default_factory=list)   # cycles of each bar_release strobe
    lds: dict | None = None

    @property
    def coords(self):
        return (self.ttmp9, self.ttmp7 & 0xFFFF, self.ttmp7 >> 16)


@dataclass
class Result:
    """What one dispatch did."""
    waves: list            # Wave records in launch order
    allocs: list           # LDS allocations (dicts) in order
    counters: dict
    error: dict
    cycles: int
    max_resident: list     # per SIMD
    max_total: int
    done_cycle: int | None
    barrier_counters: dict | None = None
    wait_cycles: int = 0   # observed sum of waiting waves per cycle


class _Top(Elaboratable):
    """Dispatcher and barrier unit wired together (slot map and open workgroup)."""

    def __init__(self, cfg):
        self.disp = Dispatcher(cfg)
        self.bar = WorkgroupBarrier(cfg)

    def elaborate(self, platform):
        m = Module()
        m.submodules.disp, m.submodules.bar = self.disp, self.bar
        m.d.comb += [self.bar.slot_live.eq(self.disp.slot_live), self.bar.slot_wg.eq(self.disp.slot_wg),
                     self.bar.open_wg.eq(self.disp.open_wg)]
        return m


def _fields(const):
    return {name: getattr(const, name) for name in const.shape().members}


class FakeDCU:
    """Runs dispatches through a fresh Dispatcher (with ``barrier``: and a WorkgroupBarrier).

    Parameters
    ----------
    cfg : DCUConfig
    seed : int
    program : callable(rng, wave) -> list of segment lengths, optional
        Each wave's program; by default one segment of ``life`` cycles (no barrier).
    life : (int, int)
        Range of the default segment length.
    lds_ready, launch_ready : float
        Probability that the LDS takes an allocation, and that a SIMD with a free slot and
        not busy takes a launch, in a given cycle (backpressure the protocol must survive).
    """

    def __init__(self, cfg, seed=1, barrier=False, program=None, life=(4, 40), lds_ready=0.7, launch_ready=0.8):
        self.cfg, self.rng = cfg, random.Random(seed)
        self.top = _Top(cfg) if barrier else None
        self.dut = self.top.disp if barrier else Dispatcher(cfg)
        self.bar = self.top.bar if barrier else None
        self.program = program or (lambda rng, w: [rng.randint(*life)])
        self.lds_ready, self.launch_ready = lds_ready, launch_ready

    def run(self, dispatches, max_cycles=20_000):
        """``dispatches``: list of (isa.abi.Dispatch, wgp). Returns a list of Result."""
        results = []
        sim = Simulator(self.top if self.top else self.dut)
        sim.add_clock(1e-6)

        async def bench(ctx):
            for d, wgp in dispatches:
                results.append(await self._one(ctx, d, wgp, max_cycles))

        sim.add_testbench(bench)
        sim.run()
        return results

    async def _one(self, ctx, d, wgp, max_cycles):
        cfg, dut, rng, bar = self.cfg, self.dut, self.rng, self.bar
        S, W = cfg.simds, cfg.wave_slots
        ctx.set(dut.start.payload, DispatchLayout(cfg).const(dispatch_fields(d, wgp)))
        ctx.set(dut.start.valid, 1)
        await ctx.tick()
        ctx.set(dut.start.valid, 0)
        slots = [[None] * W for _ in range(S)]
        busy = [0] * S
        choice, pick = [None] * S, [None] * S
        held = [None] * (S + 1)     # payloads offered and not taken (launch per SIMD, LDS)
        waves, allocs = [], []
        max_res, max_total, wait_cycles = [0] * S, 0, 0
        n_wgs = d.grid[0] * d.grid[1] * d.grid[2]
        for cycle in range(max_cycles):
            # ---- this cycle's inputs ------------------------------------------------------
            waiting = [sum(1 << i for i in range(W) if slots[s][i] and slots[s][i].waiting) for s in range(S)]
            for s in range(S):
                free = [i for i in range(W) if slots[s][i] is None]
                if choice[s] not in free:   # a random free slot, kept until it is taken
                    choice[s] = rng.choice(free) if free else None
                pick[s] = choice[s] if not busy[s] and rng.random() < self.launch_ready else None
                ctx.set(dut.launch[s].ready, int(pick[s] is not None))
                ctx.set(dut.launched_slot[s], choice[s] or 0)
                ended = sum(1 << i for i in range(W) if slots[s][i] and slots[s][i].ending)
                ctx.set(dut.ended[s], ended)
                if bar:
                    ctx.set(bar.ended[s], ended)
                    ctx.set(bar.bar_wait[s], waiting[s])
            lds_ready = rng.random() < self.lds_ready
            ctx.set(dut.lds_alloc.ready, int(lds_ready))
            wait_cycles += sum(1 for row in slots for w in row if w and w.waiting)

            # ---- what happens in it ---------------------------------------------------------
            # a stream offered and not taken keeps valid and its payload until it is taken
            streams = [(dut.launch[s], pick[s] is not None) for s in range(S)] + [(dut.lds_alloc, lds_ready)]
            for k, (st, rdy) in enumerate(streams):
                now = ctx.get(st.payload).as_bits() if ctx.get(st.valid) else None
                assert held[k] is None or now == held[k], \
                    f"cycle {cycle}: stream {k} changed its offer while waiting ({held[k]:#x} -> {now})"
                held[k] = now if not rdy else None
            new = []
            for s in range(S):
                if pick[s] is not None and ctx.get(dut.launch[s].valid):
                    p = ctx.get(dut.launch[s].payload)
                    w = Wave(s, pick[s], p.wg, p.wg_last, p.pc, p.vgpr_base, p.vgprs, p.exec,
                             [p.sgpr[r] for r in range(4)], p.ttmp7, p.ttmp9, p.v0, cycle)
                    w.segments = list(self.program(rng, w))
                    new.append(w)
            if lds_ready and ctx.get(dut.lds_alloc.valid):
                a = _fields(ctx.get(dut.lds_alloc.payload))
                a["cycle"] = cycle
                allocs.append(a)
                wave = slots[a["simd"]][a["wave"]]
                assert wave is not None and wave.lds is None, f"LDS allocation {a} for no newly launched wave"
                wave.lds = a
            released = [ctx.get(bar.bar_release[s]) for s in range(S)] if bar else [0] * S
            for s in range(S):
                assert not released[s] & ~waiting[s], \
                    f"cycle {cycle}: SIMD {s} released slots {released[s]:#x}, waiting were {waiting[s]:#x}"
            done, err = ctx.get(dut.done), _fields(ctx.get(dut.error))
            if done:
                live = [(s, i) for s in range(S) for i in range(W) if slots[s][i]]
                assert not live, f"done at cycle {cycle} with waves still resident in (simd, slot) {live}"
                assert len({w.coords for w in waves}) == n_wgs, "done before every workgroup was launched"
            if done or err["valid"]:
                assert not ctx.get(dut.busy)
                cnt = _fields(ctx.get(dut.counters))
                bc = _fields(ctx.get(bar.counters)) if bar else None
                return Result(waves, allocs, cnt, err, cycle, max_res, max_total,
                              cycle if done else None, bc, wait_cycles)
            await ctx.tick()

            # ---- state after the clock edge -------------------------------------------------
            for s in range(S):
                busy[s] = max(0, busy[s] - 1)
                for i in range(W):
                    w = slots[s][i]
                    if w is None:
                        continue
                    if w.ending:
                        w.ended_cycle = cycle
                        slots[s][i] = None
                    elif w.waiting and released[s] >> i & 1:
                        w.waiting, w.seg = False, w.seg + 1
                        w.left = w.segments[w.seg]
                        w.releases.append(cycle)
                    elif not w.held and not w.waiting:
                        w.left -= 1
                        if w.left <= 0:
                            if w.seg + 1 < len(w.segments):
                                w.waiting = True
                                w.arrivals.append(cycle + 1)
                            else:
                                w.ending = True
            for w in new:
                s = w.simd
                slots[s][w.slot] = w
                busy[s] = LAUNCH_BUSY
                w.left = w.segments[0]
                waves.append(w)
                if w.wg_last:
                    for o in slots[s]:
                        if o and o.wg == w.wg:
                            o.held = False
            res = [sum(1 for x in row if x) for row in slots]
            max_res = [max(a, b) for a, b in zip(max_res, res)]
            max_total = max(max_total, sum(res))
        stuck = {s: [(i, w.coords, "held" if w.held else "waiting" if w.waiting else "running")
                     for i, w in enumerate(slots[s]) if w] for s in range(S)}
        raise AssertionError(f"watchdog: dispatch of grid {d.grid} block {d.block} not done after {max_cycles} "
                             f"cycles (busy={ctx.get(dut.busy)}, {len(waves)} waves launched, "
                             f"{len({w.coords for w in waves})}/{n_wgs} workgroups); resident: {stuck}")
