"""hdl.simd.regfile.VgprFile in Amaranth's simulator, both organisations.

* Random traffic against a Python model of the registers: lane-group writes every cycle,
  whole-register writes taken when ``ready``, reads on every port with random enables. A
  ``"wide"`` read returns the register including the writes of its own cycle (transparent);
  a ``"banked"`` read returns lane group ``grp`` as it was before its cycle's writes, and is
  checked whenever ``busy`` was low when it was addressed. A port with its enable low keeps
  its data.
* The banked buffer: a whole-register write takes one cycle per lane group with enabled
  lanes, only in cycles without a group write (the VALU's port wins a collision), ``done``
  marks the cycle of its last group, and the next write is taken in that cycle.
* ``cells`` reaches every row of a register; the banked file converts to Verilog and lints.
* SgprFile: random writes (several ports a cycle for ``"wide"``, one for ``"banked"``) and
  transparent reads against a model of the pairs.
"""
from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from hdl.config import get_config
from hdl.simd.regfile import LANES, SgprFile, VgprFile
from tests.lint import convert_and_lint

M32 = 0xFFFF_FFFF


def _config(regfile, lanes, vgprs=16):
    # a banked file's SIMD answers memory a lane group at a time, so it coalesces no more lanes
    return get_config("tiny").replace(regfile=regfile, lanes=lanes, vgprs_per_simd=vgprs,
                                      coalesce_lanes=lanes if regfile == "banked" else 32)


def _run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def _lanes_of(value, n):
    return [(value >> (32 * k)) & M32 for k in range(n)]


@pytest.mark.parametrize("regfile,lanes", [("wide", 32), ("wide", 8), ("banked", 8), ("banked", 16),
                                           ("banked", 32)])
def test_random_traffic_matches_a_model(regfile, lanes):
    cfg = _config(regfile, lanes)
    V, G, C = cfg.vgprs_per_simd, cfg.lanes, cfg.valu_cycles
    dut = VgprFile(cfg, reads=3)
    rng = random.Random(f"{regfile}{lanes}")
    regs = [[0] * LANES for _ in range(V)]
    checked = {"reads": 0, "taken": 0}

    async def bench(ctx):
        nonlocal regs
        # clear the storage: the model starts at zero
        for r in range(V):
            for cell in dut.cells(r):
                ctx.set(cell, 0)
        expect = [None] * len(dut.rd)       # each port's data after the next edge (None: unknown)
        for cycle in range(1500):
            # group writes to the low half of the file, whole-register writes to the high half
            # (the SIMD's scoreboard keeps the two from meeting on one register)
            gw = None
            if rng.random() < 0.5:
                gw = (rng.randrange(V // 2), rng.randrange(C), rng.getrandbits(32 * G),
                      rng.choice([0, (1 << G) - 1, rng.getrandbits(G)]))
            g_addr, g_grp, g_data, g_en = gw or (0, 0, 0, 0)
            ctx.set(dut.wr_group.addr, g_addr)
            ctx.set(dut.wr_group.grp, g_grp)
            ctx.set(dut.wr_group.data, g_data)
            ctx.set(dut.wr_group.en, g_en)
            w_addr, w_data = rng.randrange(V // 2, V), rng.getrandbits(32 * LANES)
            w_en = rng.choice([0, M32, rng.getrandbits(32), 1 << rng.randrange(32)]) if rng.random() < 0.4 else 0
            ctx.set(dut.wr_reg.addr, w_addr)
            ctx.set(dut.wr_reg.data, w_data)
            ctx.set(dut.wr_reg.en, w_en)
            reads = []
            for rd in dut.rd:
                r = (rng.randrange(V), rng.randrange(C), int(rng.random() < 0.8))
                ctx.set(rd.addr, r[0])
                ctx.set(rd.grp, r[1])
                ctx.set(rd.en, r[2])
                reads.append(r)
            busy, ready = ctx.get(dut.busy), ctx.get(dut.wr_reg.ready)
            if regfile == "wide":
                assert ready and not busy
            taken = ready and w_en != 0
            checked["taken"] += taken
            # this cycle's writes, into the model
            new = [row[:] for row in regs]
            for n in range(G):
                if g_en >> n & 1:
                    new[g_addr][g_grp * G + n] = (g_data >> (32 * n)) & M32
            if taken:
                for n in range(LANES):
                    if w_en >> n & 1:
                        new[w_addr][n] = (w_data >> (32 * n)) & M32
            seen = new if regfile == "wide" else regs
            for k, (addr, grp, en) in enumerate(reads):
                if not en:
                    continue
                if regfile == "wide":
                    expect[k] = seen[addr]
                elif busy:
                    expect[k] = None
                else:
                    expect[k] = seen[addr][grp * G: grp * G + G]
            regs = new
            await ctx.tick()
            for k, rd in enumerate(dut.rd):
                if expect[k] is not None:
                    got = _lanes_of(ctx.get(rd.data), len(expect[k]))
                    assert got == expect[k], f"cycle {cycle}: port {k} returned {got}, model {expect[k]}"
                    checked["reads"] += 1

    _run(dut, bench)
    assert checked["reads"] > 1000 and checked["taken"] > 100, checked


def test_banked_buffer_timing_and_collisions():
    cfg = _config("banked", 8)
    G, C = cfg.lanes, cfg.valu_cycles
    dut = VgprFile(cfg, reads=1)

    async def take(ctx, addr, data, en):
        """Offer a whole-register write until it is taken; the cycles it waited."""
        ctx.set(dut.wr_reg.addr, addr)
        ctx.set(dut.wr_reg.data, data)
        ctx.set(dut.wr_reg.en, en)
        waited = 0
        while not ctx.get(dut.wr_reg.ready):
            await ctx.tick()
            waited += 1
        await ctx.tick()
        ctx.set(dut.wr_reg.en, 0)
        return waited

    async def busy_cycles(ctx):
        """Cycles until ``busy`` falls; ``done`` must pulse in the last of them."""
        n = 0
        while ctx.get(dut.busy):
            done = ctx.get(dut.done)
            await ctx.tick()
            n += 1
            assert done == (not ctx.get(dut.busy))
        return n

    async def bench(ctx):
        value = sum((0x1000 + n) << (32 * n) for n in range(LANES))
        # all lanes: one cycle per group
        assert await take(ctx, 3, value, M32) == 0
        assert await busy_cycles(ctx) == C
        rows = [ctx.get(cell) for cell in dut.cells(3)]
        assert [x for row in rows for x in _lanes_of(row, G)] == [0x1000 + n for n in range(LANES)]
        # lanes of two groups only: two cycles
        assert await take(ctx, 4, value, 0x0000_00FF | 0xFF00_0000) == 0
        assert await busy_cycles(ctx) == 2
        # back to back: the second write is taken in the cycle the first one's last group goes
        assert await take(ctx, 5, value, M32) == 0
        assert await take(ctx, 6, value, M32) == C - 1
        assert await busy_cycles(ctx) == C
        # group writes win: the buffer waits while the VALU's port writes, then drains
        assert await take(ctx, 7, value, M32) == 0
        ctx.set(dut.wr_group.addr, 1)
        ctx.set(dut.wr_group.data, ~0 & ((1 << (32 * G)) - 1))
        ctx.set(dut.wr_group.en, (1 << G) - 1)
        for _ in range(10):
            assert ctx.get(dut.busy) and not ctx.get(dut.wr_reg.ready)
            await ctx.tick()
        ctx.set(dut.wr_group.en, 0)
        assert await busy_cycles(ctx) == C
        assert [ctx.get(cell) for cell in dut.cells(7)] == [ctx.get(cell) for cell in dut.cells(3)]
        assert all(ctx.get(cell) == (1 << (32 * G)) - 1 for cell in dut.cells(1)[:1])
        # a write with no lane enabled is no write
        ctx.set(dut.wr_reg.en, 0)
        await ctx.tick()
        assert not ctx.get(dut.busy)

    _run(dut, bench)


def test_banked_side_port_takes_the_free_cycles():
    """``wr_side`` (memory returns, a lane group per beat) writes in its cycle when neither the
    VALU's port nor the buffer does, and is not ready otherwise."""
    cfg = _config("banked", 8)
    G, C = cfg.lanes, cfg.valu_cycles
    dut = VgprFile(cfg, reads=1)
    full = (1 << G) - 1

    def group_value(reg, g):
        return sum((reg << 16 | g << 8 | n) << (32 * n) for n in range(G))

    async def bench(ctx):
        side = dut.wr_side
        # alone: a group per cycle, each in its cycle
        for g in range(C):
            ctx.set(side.addr, 2)
            ctx.set(side.grp, g)
            ctx.set(side.data, group_value(2, g))
            ctx.set(side.en, full if g != 1 else 0b1)   # group 1: lane 0 only
            assert ctx.get(side.ready)
            await ctx.tick()
        ctx.set(side.en, 0)
        await ctx.tick()
        rows = [ctx.get(cell) for cell in dut.cells(2)]
        assert rows[0] == group_value(2, 0) and rows[2] == group_value(2, 2)
        assert rows[1] & M32 == group_value(2, 1) & M32 and rows[1] >> 32 == 0   # lanes 1.. not written
        # the VALU's port first, then the buffer, then the side port
        ctx.set(dut.wr_group.addr, 1)
        ctx.set(dut.wr_group.en, full)
        ctx.set(side.addr, 3)
        ctx.set(side.en, full)
        assert not ctx.get(side.ready)
        await ctx.tick()
        ctx.set(dut.wr_group.en, 0)
        ctx.set(dut.wr_reg.addr, 4)
        ctx.set(dut.wr_reg.en, M32)
        assert ctx.get(dut.wr_reg.ready) and ctx.get(side.ready)   # taken into the buffer; side writes
        await ctx.tick()
        ctx.set(dut.wr_reg.en, 0)
        waited = 0
        while not ctx.get(side.ready):
            assert ctx.get(dut.busy)
            await ctx.tick()
            waited += 1
        assert waited == C and not ctx.get(dut.busy)

    _run(dut, bench)


def test_banked_file_converts_to_verilog_and_lints(tmp_path):
    convert_and_lint(VgprFile(_config("banked", 8), reads=3), "vgprs", tmp_path)


@pytest.mark.parametrize("regfile", ["wide", "banked"])
def test_sgpr_file_random_traffic(regfile):
    cfg = _config(regfile, 8)
    rows = 64 * cfg.wave_slots
    dut = SgprFile(cfg)
    rng = random.Random(regfile)
    pairs = [[0, 0] for _ in range(rows)]
    reads = {"n": 0}

    async def bench(ctx):
        nonlocal pairs
        for r in range(rows):
            for cell in dut.cells(r):
                ctx.set(cell, 0)
        expect = [None] * len(dut.rd)
        for cycle in range(1000):
            # wide: any ports, to different pairs; banked: at most one port a cycle
            ports = list(range(len(dut.wr)))
            rng.shuffle(ports)
            writers = ports[:rng.randrange(len(ports) + 1)] if regfile == "wide" else ports[:rng.randrange(2)]
            targets = rng.sample(range(rows), len(dut.wr))
            new = [p[:] for p in pairs]
            for k, w in enumerate(dut.wr):
                en = rng.randrange(1, 4) if k in writers else 0
                data = rng.getrandbits(64)
                ctx.set(w.addr, targets[k])
                ctx.set(w.data, data)
                ctx.set(w.en, en)
                for h in range(2):
                    if en >> h & 1:
                        new[targets[k]][h] = (data >> (32 * h)) & M32
            for k, rd in enumerate(dut.rd):
                addr = rng.choice(targets + [rng.randrange(rows)])   # often a pair written now
                en = rng.random() < 0.8
                ctx.set(rd.addr, addr)
                ctx.set(rd.en, en)
                if en:
                    expect[k] = new[addr][:]     # transparent: this cycle's writes included
            pairs = new
            await ctx.tick()
            for k, rd in enumerate(dut.rd):
                if expect[k] is not None:
                    assert _lanes_of(ctx.get(rd.data), 2) == expect[k], f"cycle {cycle}: port {k}"
                    reads["n"] += 1

    _run(dut, bench)
    assert reads["n"] > 4000
