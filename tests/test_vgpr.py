"""The SIMD's VGPR banks (hdl/simd/vgpr.py) under random traffic, against a dictionary.

Every cycle: a VALU row write at random (always taken), a side row offered at random (taken
when ``ready``), and three reads of random rows. VALU and side writes go to separate halves
of the file, as the scoreboard keeps a register from being both a VALU destination and a
memory destination at once. A read of a VALU-written row must return what was written by
the cycle before its address; at the end every row of the file must hold the last value
written to each lane, side rows included, and no side row may be lost. Run on 1, 4, 16 and 32
lanes (32, 8, 2 and 1 rows a register).
"""
from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from hdl.config import PRESETS
from hdl.simd.vgpr import VgprBanks
from tests.lint import convert_and_lint


def _merge(old: int, new: int, mask: int, lanes: int) -> int:
    keep = sum(0xFFFF_FFFF << (32 * i) for i in range(lanes) if not mask >> i & 1)
    return (old & keep) | (new & ~keep & ((1 << (32 * lanes)) - 1))


@pytest.mark.parametrize("lanes", [1, 4, 16, 32])
def test_random_traffic(lanes):
    cfg = (PRESETS["default"].replace(lanes=lanes, vgprs_per_simd=64, coalesce_lanes=lanes) if lanes >= 16 else
           PRESETS["fpga"].replace(lanes=lanes, vgprs_per_simd=64, coalesce_lanes=1, request_in_rows=False))
    dut = VgprBanks(cfg)
    P, R = dut.passes, dut.regs
    rng = random.Random(lanes)
    ref: dict[tuple[int, int], int] = {}
    checked = [0]

    def rand_row(lo, hi):
        return rng.randrange(lo, hi), rng.randrange(P)

    async def bench(ctx):
        pending = []                                    # reads: (port, key, expected) due next cycle
        offer = None
        for cycle in range(1500):
            for k, key, want in pending:
                assert ctx.get(dut.rd[k].data) == want, (cycle, k, key)
                checked[0] += 1
            pending = []
            # VALU writes rows of registers [0, R/2), side writes [R/2, R)
            v = rng.random() < 0.7
            ctx.set(dut.valu.valid, v)
            if v:
                reg, row = rand_row(0, R // 2)
                val, mask = rng.getrandbits(32 * lanes), rng.getrandbits(lanes) | 1
                for f, x in (("reg", reg), ("row", row), ("data", val), ("mask", mask)):
                    ctx.set(getattr(dut.valu.w, f), x)
            if offer is None and rng.random() < 0.6:
                reg, row = rand_row(R // 2, R)
                offer = {"reg": reg, "row": row, "data": rng.getrandbits(32 * lanes), "mask": rng.getrandbits(lanes)}
            ctx.set(dut.side.valid, offer is not None)
            if offer:
                for f, x in offer.items():
                    ctx.set(getattr(dut.side.payload, f), x)
            for k, rd in enumerate(dut.rd):       # reads of VALU rows: exact timing
                reg, row = rand_row(0, R // 2)
                ctx.set(rd.reg, reg)
                ctx.set(rd.row, row)
                pending.append((k, (reg, row), ref.get((reg, row), 0)))
            took = offer is not None and ctx.get(dut.side.ready)
            await ctx.tick()
            if v:
                key = (ctx.get(dut.valu.w.reg), ctx.get(dut.valu.w.row))
                ref[key] = _merge(ref.get(key, 0), ctx.get(dut.valu.w.data), ctx.get(dut.valu.w.mask), lanes)
            if took:
                key = (offer["reg"], offer["row"])
                ref[key] = _merge(ref.get(key, 0), offer["data"], offer["mask"], lanes)
                offer = None
        ctx.set(dut.valu.valid, 0)
        ctx.set(dut.side.valid, 0)
        for _ in range(3):                           # the buffer drains
            await ctx.tick()
        for reg in range(R):
            for row in range(P):
                ctx.set(dut.rd[0].reg, reg)
                ctx.set(dut.rd[0].row, row)
                await ctx.tick()
                assert ctx.get(dut.rd[0].data) == ref.get((reg, row), 0), (reg, row)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert checked[0] > 3000


def test_verilog_lint(tmp_path):
    convert_and_lint(VgprBanks(PRESETS["fpga"]), "vgpr_banks", tmp_path)
