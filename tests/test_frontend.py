"""The SIMD's front end (hdl/simd/fetch.py, select.py, frontend.py) on instruction streams.

A program of LLVM-assembled instructions (every opcode the SIMD executes) sits in a memory
that answers fetch requests in order after a random latency. Waves start at different
instructions; a stand-in issue stage answers each decoded instruction after a random delay:
go on to the next instruction, replay the same one, jump to another instruction, or stop the
wave after its quota. Every decoded instruction must be the one at the wave's PC as
``isa.decode`` reads it (tests/decode_vectors.py's field-by-field check), with its fall-through
PC, and each wave must see exactly the PCs its answers named. The consumer of the decoded
stream stalls at random. A straight-line run measures the rate: one instruction a cycle from
four waves.
"""
from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

import isa
from hdl.config import PRESETS
from hdl.layouts import Steer
from hdl.simd import IMPLEMENTED
from hdl.simd.frontend import FrontEnd
from tests.bitpack import pack96
from tests.codemem import CodeMemory
from tests.lint import convert_and_lint
from tests.decode_vectors import compare, llvm_vectors, unpack_inst

BASE = 0x1000


def _program() -> tuple[list[int], list[int]]:
    """The dwords of a program of the executed LLVM-corpus instructions, and each one's byte address."""
    vecs, names = llvm_vectors()
    dwords, starts = [], []
    for (words, _), name in zip(vecs, names):
        dws = [(words >> (32 * k)) & 0xFFFF_FFFF for k in range(3)]
        try:
            inst = isa.decode(dws)
        except isa.DecodeError:
            continue
        if name not in IMPLEMENTED or inst.dpp is not None or inst.vopd is not None:
            continue
        starts.append(BASE + 4 * len(dwords))
        dwords += dws[:inst.size // 4]             # Inst.size is in bytes
    return dwords, starts


def run(preset: str, waves: int, quota: int, p_replay: float, p_jump: float, ready_rate: float,
        max_delay: int, max_latency: int, seed: int):
    """Drive a FrontEnd; returns (vectors, decoded results, cycles, instructions decoded)."""
    cfg = PRESETS[preset]
    dut = FrontEnd(cfg)
    rng = random.Random(seed)
    prog, starts = _program()
    mem = CodeMemory(prog, BASE, cfg.fetch_bytes, rng, max_latency)

    def at(pc):
        k = (pc - BASE) // 4
        return pack96([prog[k + i] if k + i < len(prog) else 0 for i in range(3)])

    first = [rng.randrange(len(starts) // 2) for _ in range(waves)]
    expect_pc = {w: starts[first[w]] for w in range(waves)}
    left = {w: quota for w in range(waves)}
    vectors, results, answers = [], [], []            # answers: [cycle due, wave, pc, steer]
    cycle = [0]

    async def bench(ctx):
        for w in range(waves):                         # one launch a cycle
            ctx.set(dut.start.valid, 1)
            ctx.set(dut.start.payload.wave, w)
            ctx.set(dut.start.payload.pc, expect_pc[w])
            await ctx.tick()
        ctx.set(dut.start.valid, 0)
        while any(left.values()) or ctx.get(dut.active):
            assert cycle[0] < 200 * waves * quota, "the front end stopped"
            mem.step(ctx, dut.fetch_req, dut.fetch_resp, cycle[0])
            # issue: take a decoded instruction, answer it later
            ready = rng.random() < ready_rate
            ctx.set(dut.inst.ready, ready)
            if ready and ctx.get(dut.inst.valid):
                o = dut.inst.payload
                w, pc = ctx.get(o.tag), ctx.get(o.pc)
                assert left[w] > 0 and pc == expect_pc[w], (w, hex(pc), hex(expect_pc[w]))
                d = unpack_inst(ctx.get(o.inst.as_value()))
                # the reference's branch targets wrap at 32 bits, the SIMD's at 48
                d["next_pc"], d["target"] = ctx.get(o.next_pc), ctx.get(o.target) & 0xFFFF_FFFF
                vectors.append((at(pc), pc))
                results.append(d)
                x = rng.random()
                if x < p_replay:
                    steer, nxt = Steer.NEXT, pc
                else:
                    left[w] -= 1
                    if left[w] == 0:
                        steer, nxt = Steer.STOP, pc
                    elif x < p_replay + p_jump:
                        steer, nxt = Steer.JUMP, rng.choice(starts[:len(starts) // 2])
                    else:
                        steer, nxt = Steer.NEXT, d["next_pc"]
                expect_pc[w] = nxt
                answers.append([cycle[0] + rng.randint(0, max_delay), w, nxt, steer])
            now = [a for a in answers if a[0] <= cycle[0]][:1]          # one answer a cycle
            ctx.set(dut.steer.valid, bool(now))
            if now:
                answers.remove(now[0])
                _, w, nxt, steer = now[0]
                ctx.set(dut.steer.payload.wave, w)
                ctx.set(dut.steer.payload.pc, nxt)
                ctx.set(dut.steer.payload.steer, steer)
            cycle[0] += 1
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return vectors, results, cycle[0]


@pytest.mark.parametrize("preset", ["fpga", "default"])
def test_streams_replays_and_jumps(preset):
    """Every decoded instruction is the one at its wave's PC, whatever the answers and stalls."""
    waves = PRESETS[preset].wave_slots
    vectors, results, cycles = run(preset, waves, quota=150, p_replay=0.1, p_jump=0.08, ready_rate=0.7,
                                   max_delay=3, max_latency=8, seed=7)
    legal, illegal = compare(vectors, results)
    assert illegal == 0 and legal >= waves * 150
    assert all(r["next_pc"] == pc + 4 * r["size"] for (_, pc), r in zip(vectors, results))


def test_one_instruction_a_cycle_from_four_waves():
    """Straight-line code, an issue stage that answers at once and a memory of 2 cycles: four
    waves decode at least 0.85 instructions a cycle."""
    vectors, results, cycles = run("default", 4, quota=400, p_replay=0.0, p_jump=0.0, ready_rate=1.0,
                                   max_delay=0, max_latency=2, seed=3)
    compare(vectors, results)
    rate = len(results) / cycles
    print(f"{len(results)} instructions in {cycles} cycles: {rate:.2f} a cycle")
    assert rate >= 0.85


def test_verilog_lint(tmp_path):
    """The front end converts to Verilog that Verilator lints cleanly."""
    convert_and_lint(FrontEnd(PRESETS["fpga"]), "frontend", tmp_path)
