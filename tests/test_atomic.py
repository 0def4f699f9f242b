"""hdl.mem.atomic.atomic_result against the model's ATOMIC_OPS (sim/memory_ops.py), and the
OpId -> AtomicOp table against the opcode list."""
from __future__ import annotations

import random

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hdl.mem.atomic import ATOMIC_OF, AtomicOp, atomic_result
from hdl.isa_tables import info_of, ops_of, rtl_memory_op
from sim.memory_ops import ATOMIC_OPS

MODEL_NAME = {AtomicOp.ADD: "add", AtomicOp.SUB: "sub", AtomicOp.RSUB: "rsub", AtomicOp.INC: "inc",
              AtomicOp.DEC: "dec", AtomicOp.MIN_I32: "min_i32", AtomicOp.MAX_I32: "max_i32",
              AtomicOp.MIN_U32: "min_u32", AtomicOp.MAX_U32: "max_u32", AtomicOp.AND: "and",
              AtomicOp.OR: "or", AtomicOp.XOR: "xor", AtomicOp.SWAP: "swap", AtomicOp.CMPSWAP: "cmpswap"}
EDGES = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFE, 0xFFFF_FFFF]


def test_every_atomic_opcode_has_an_op():
    atomics = {op for k in ("ds_atomic", "vmem_atomic") for op in ops_of(k) if rtl_memory_op(info_of(op))}
    assert set(ATOMIC_OF) == atomics


def test_atomic_result_matches_model():
    rng = random.Random(7)
    cases = [(op, a, b, c) for op in AtomicOp for a in EDGES for b in EDGES for c in (a, b)]
    cases += [(rng.choice(list(AtomicOp)), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32))
              for _ in range(2000)]
    op, old, d, cmp = Signal(AtomicOp), Signal(32), Signal(32), Signal(32)
    out = Signal(32)
    m = Module()
    m.d.comb += out.eq(atomic_result(op, old, d, cmp))
    sim = Simulator(m)
    bad = []

    async def bench(ctx):
        for o, a, b, c in cases:
            ctx.set(op, o)
            ctx.set(old, a)
            ctx.set(d, b)
            ctx.set(cmp, c)
            want = ATOMIC_OPS[MODEL_NAME[o]](a, b, c)
            got = ctx.get(out)
            if got != want:
                bad.append((o, hex(a), hex(b), hex(c), hex(got), hex(want)))

    sim.add_testbench(bench)
    sim.run()
    assert not bad, bad[:10]
