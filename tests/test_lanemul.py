"""hdl.simd.lanemul.LaneMultiplier: exact signed 33 x 33-bit products of the integer unit's
operands, or unsigned 24 x 24-bit ones of the FP32 unit's, per lane; Verilog lint."""
from __future__ import annotations

import random

from amaranth.sim import Simulator

from hdl.simd.lanemul import FP_WIDTH, WIDTH, LaneMultiplier
from tests.lint import convert_and_lint

LANES = 4
EDGES = [0, 1, -1, (1 << 32) - 1, -(1 << 32), (1 << 31), -(1 << 31), 0xFFFFFF]


def _pack(values, width):
    return sum((v & ((1 << width) - 1)) << (width * i) for i, v in enumerate(values))


def _lane(p, i):
    v = (p >> (2 * WIDTH * i)) & ((1 << 2 * WIDTH) - 1)
    return v - (1 << 2 * WIDTH) if v >> (2 * WIDTH - 1) else v


def test_products():
    rnd = random.Random(7)
    dut = LaneMultiplier(LANES)
    lo, hi = -(1 << (WIDTH - 1)), (1 << (WIDTH - 1)) - 1
    cases = [(rnd.choice(EDGES + [rnd.randint(lo, hi)]), rnd.choice(EDGES + [rnd.randint(lo, hi)]))
             for _ in range(400)]
    fps = [(rnd.getrandbits(FP_WIDTH), rnd.getrandbits(FP_WIDTH)) for _ in range(400)]

    async def bench(ctx):
        for k in range(0, len(cases), LANES):
            xs, ys = zip(*cases[k:k + LANES])
            fx, fy = zip(*fps[k:k + LANES])
            ctx.set(dut.int_x, _pack(xs, WIDTH))
            ctx.set(dut.int_y, _pack(ys, WIDTH))
            ctx.set(dut.fp_x, _pack(fx, FP_WIDTH))
            ctx.set(dut.fp_y, _pack(fy, FP_WIDTH))
            ctx.set(dut.fp, 0)
            p = ctx.get(dut.p)
            assert [_lane(p, i) for i in range(LANES)] == [x * y for x, y in zip(xs, ys)]
            ctx.set(dut.fp, 1)
            p = ctx.get(dut.p)
            assert [_lane(p, i) for i in range(LANES)] == [x * y for x, y in zip(fx, fy)]

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


def test_verilog_lint(tmp_path):
    convert_and_lint(LaneMultiplier(LANES), "lane_mul", tmp_path)
