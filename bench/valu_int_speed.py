"""Amaranth-simulator evaluation rate of VALUInt (hdl/simd/valu_int.py), in 32-lane vectors/s.

For each opcode, a testbench sets the op once, then applies random vectors: every data
input of the unit is driven from one packed signal, so a vector is one ``ctx.set`` (one
settle of the combinational logic) plus reading ``d`` and ``mask_out``. Prints, does not
assert. Also prints the elaboration/compile time of the simulation.

    .venv/bin/python bench/valu_int_speed.py [vectors-per-op]
"""
from __future__ import annotations

import random
import sys
import time

from amaranth.hdl import Cat, Module, Signal
from amaranth.sim import Simulator

from hdl.isa_tables import OpId
from hdl.simd.valu_int import VALUInt

OPS = ["v_nop", "v_mov_b32", "v_add_nc_u32", "v_add_co_u32", "v_add_co_ci_u32", "v_mul_lo_u32",
       "v_mad_co_u64_u32", "v_lshlrev_b32", "v_lshlrev_b64", "v_and_b32", "v_cmp_lt_i32",
       "v_cmp_gt_u64", "v_cndmask_b32", "v_bfe_u32", "v_add3_u32", "v_xad_u32",
       "v_mbcnt_lo_u32_b32", "v_clz_i32_u32", "v_med3_i32", "v_perm_b32", "v_mad_u16",
       "v_add_nc_i16", "v_bfrev_b32", "v_add_f32 (illegal)"]


def main(n: int = 2000) -> None:
    t0 = time.perf_counter()
    dut = VALUInt()
    m = Module()
    m.submodules.dut = dut
    fields = [dut.a, dut.b, dut.c, dut.mask_in, dut.d_old]
    stim = Signal(sum(len(f) for f in fields))
    m.d.comb += Cat(*fields).eq(stim)
    sim = Simulator(m)
    rates = {}
    rnd = random.Random(1)

    async def bench(ctx):
        rates["compile"] = time.perf_counter() - t0
        for label in OPS:
            ctx.set(dut.op, OpId[label.split()[0].upper()])
            values = [rnd.getrandbits(len(stim)) for _ in range(n)]
            t = time.perf_counter()
            for v in values:
                ctx.set(stim, v)
                ctx.get(dut.d)
                ctx.get(dut.mask_out)
            rates[label] = n / (time.perf_counter() - t)

    sim.add_testbench(bench)
    sim.run()
    print(f"VALUInt, 32 lanes: elaboration + simulator compile {rates.pop('compile'):.1f} s")
    for label, r in rates.items():
        print(f"  {label:24s} {r:9.0f} vectors/s")
    common = [rates[k] for k in OPS[1:17]]
    print(f"  {'mean (common ops)':24s} {sum(common) / len(common):9.0f} vectors/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
