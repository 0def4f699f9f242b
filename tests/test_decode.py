"""The lean SIMD's decode stage (hdl/simd/decode.py) against the Python decoder.

The vectors and the reference are tests/test_decoder.py's (``isa.decode``, field by field):
LLVM-assembled instructions of every opcode, every opcode in every encoding with random
fields, random words and the words the RTL must refuse. Here they stream through the
pipelined stage, one a cycle, while the consumer is ready only part of the time, and every
result must come out once, in order, with its tag. The ROMs' sizes are checked against the
design's figures, and the stage converts to Verilog that Verilator lints.
"""
from __future__ import annotations

import random
import shutil

import pytest
from amaranth.sim import Simulator

from hdl.isa_tables import OpId
from hdl.simd.decode import DecodeStage, OpRow, PropRow, rom_a, rom_b
from hdl.simd.decoder import IMPLEMENTED
from tests.lint import convert_and_lint
import isa
from tests.test_decoder import (ILLEGAL_WORDS, RTL_ILLEGAL_WORDS, SEED, compare, expect, llvm_vectors, packed_vectors,
                                random_word_vectors, unpack_inst, vopd_half)

TAG = 16


def run_stage(vectors: list[tuple], ready_rate: float = 0.7, seed: int = 1) -> list[dict]:
    """Stream (words, pc) pairs, or (words, pc, second) for a VOPD's second half, through a
    DecodeStage, one offered every cycle, the output taken on a random ``ready_rate`` of cycles;
    the results in input order."""
    dut = DecodeStage(tag_width=TAG, pc_width=32)     # the reference's 32-bit PCs
    rng = random.Random(seed)
    got, cycles = [], [0]

    async def bench(ctx):
        k = 0
        while len(got) < len(vectors):
            assert cycles[0] < 4 * len(vectors) + 100, "the stage stopped"
            offer = k < len(vectors)
            ctx.set(dut.i.valid, offer)
            if offer:
                words, pc, *second = vectors[k]
                ctx.set(dut.i.payload.words, words)
                ctx.set(dut.i.payload.pc, pc)
                ctx.set(dut.i.payload.second, bool(second and second[0]))
                ctx.set(dut.i.payload.tag, k % (1 << TAG))
            ready = rng.random() < ready_rate
            ctx.set(dut.o.ready, ready)
            if ready and ctx.get(dut.o.valid):
                out = dut.o.payload
                got.append((ctx.get(out.tag), ctx.get(out.inst.as_value()), ctx.get(out.next_pc),
                            ctx.get(out.target), ctx.get(out.dual), ctx.get(out.second)))
            if offer and ctx.get(dut.i.ready):
                k += 1
            cycles[0] += 1
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert [t for t, *_ in got] == [k % (1 << TAG) for k in range(len(vectors))]
    out = []
    for _, raw, next_pc, target, dual, second in got:
        d = unpack_inst(raw)
        d.update(next_pc=next_pc, target=target, dual=dual, second=second)
        out.append(d)
    return out


def test_roms_fit_the_design():
    """ROM A holds every executed opcode of every encoding in 2K rows; ROM B a row per OpId."""
    a, b = rom_a(), rom_b()
    assert len(a) <= 2048 and OpRow.size <= 27 and PropRow.size <= 36    # 3 + 2 DP16KD on the ECP5
    rows = [OpRow.from_bits(r) for r in a]
    assert {r.op.name.lower() for r in rows if r.op != OpId.NONE} == set(IMPLEMENTED)
    assert sum(r != 0 for r in b) == len(IMPLEMENTED)


@pytest.mark.skipif(shutil.which("llvm-mc-19") is None,
                    reason="llvm-mc-19 not found: apt-get install -y llvm-19 (Debian 12)")
def test_llvm_corpus():
    """LLVM-assembled instructions of every opcode decode exactly like isa.decode."""
    vecs, names = llvm_vectors()
    legal, illegal = compare(vecs, run_stage(vecs), intended=names, vopd=True)
    assert illegal == sum(n not in IMPLEMENTED for n in names) and legal > 0


def test_packed_encodings():
    """Every opcode in every encoding, random fields: the stage == isa.decode, or both reject."""
    vecs, names = packed_vectors(random.Random(SEED))
    results = run_stage(vecs, ready_rate=0.5, seed=2)
    legal, illegal = compare(vecs, results, vopd=True)
    assert {r["op"] for r in results if r["valid"]} == {OpId[n.upper()] for n in IMPLEMENTED}
    assert illegal > 0 and legal > 0.6 * sum(n in IMPLEMENTED for n in names)


def test_random_and_illegal_words():
    """Random words, and the words the RTL refuses (foreign formats, unknown opcodes, DPP
    sources), with the consumer always ready: one result a cycle."""
    refused = [w for name, w in RTL_ILLEGAL_WORDS.items() if name != "VOPD"]
    vecs = random_word_vectors() + [(w, 0) for w in (*ILLEGAL_WORDS.values(), *refused)]
    results = run_stage(vecs, ready_rate=1.0)
    legal, illegal = compare(vecs, results, vopd=True)
    assert legal > 100 and illegal > 500
    assert all(r["illegal"] and not r["valid"] for r in results[-len(ILLEGAL_WORDS) - len(refused):])


def _vopd_words(rng: random.Random) -> int:
    """A VOPD instruction: opcodes LLVM 19 assembles (now and then one it does not), random
    operands, often a VGPR source naming the other half's destination."""
    opx = rng.choice([*range(12), *([rng.randrange(16)] * 2)])
    opy = rng.choice([*range(12), 16, 17, 18, rng.randrange(32)])
    vdstx, vdsty = rng.randrange(256), rng.randrange(128)

    def src0(other):
        return rng.choice([256 + other, 256 + rng.randrange(256), rng.randrange(106), 128 + rng.randrange(65),
                           255, rng.randrange(512)])

    def vsrc1(other):
        return rng.choice([other, rng.randrange(256), 0])
    vdsty_full = vdsty << 1 | (~vdstx & 1)
    w0 = 0b110010 << 26 | opx << 22 | opy << 17 | vsrc1(vdsty_full) << 9 | src0(vdsty_full)
    w1 = vdstx << 24 | vdsty << 17 | vsrc1(vdstx) << 9 | src0(vdstx)
    return w0 | w1 << 32 | rng.getrandbits(32) << 64


def test_vopd_halves():
    """A VOPD instruction decodes as two, each the VOP1/VOP2 operation of one half, X first
    unless Y reads X's destination (both halves read before either writes); the first's
    fall-through PC is its own, the second's the next instruction's. A pair in which each
    half reads the other's destination, opcodes LLVM does not assemble and operations the SIMD
    does not execute are illegal."""
    rng = random.Random(SEED)
    words = [_vopd_words(rng) for _ in range(1500)]
    vecs = [(w, 4 * rng.randrange(1 << 20), second) for w in words for second in (False, True)]
    results = run_stage(vecs, ready_rate=0.6, seed=3)
    fails, kinds = [], {"legal": 0, "illegal": 0, "y first": 0}
    for (w, pc, second), got in zip(vecs, results):
        dws = [(w >> (32 * i)) & 0xFFFF_FFFF for i in range(3)]
        try:
            half, next_pc = vopd_half(dws, pc, second)
            if half.name not in IMPLEMENTED:
                raise isa.DecodeError("the SIMD does not execute it", pc, dws)
        except isa.DecodeError:
            kinds["illegal"] += 1
            if got["valid"] or not got["illegal"]:
                fails.append(f"{dws} second={second}: should be illegal")
            continue
        kinds["legal"] += 1
        kinds["y first"] += (not second) and half.name == isa.decode(dws, pc=pc).vopd[1].info.name
        exp = expect(half)
        diff = {k: (got[k], v) for k, v in exp.items() if got[k] != v and k not in
                ("reads_vcc", "writes_exec", "reads_scc", "writes_scc", "reads_dst")}
        if (got["next_pc"], got["dual"], got["second"]) != (next_pc, 1, second):
            diff["next_pc, dual, second"] = ((got["next_pc"], got["dual"], got["second"]), (next_pc, 1, second))
        if diff:
            fails.append(f"{[f'{d:08x}' for d in dws]} second={second} {isa.disassemble(half)}: {diff}")
    assert not fails, f"{len(fails)} mismatches:\n" + "\n".join(fails[:20])
    assert kinds["legal"] > 800 and kinds["illegal"] > 200 and kinds["y first"] > 50, kinds


def test_verilog_lint(tmp_path):
    """The stage converts to Verilog that Verilator lints cleanly."""
    text = convert_and_lint(DecodeStage(tag_width=2), "decode_stage", tmp_path)
    assert "rom_a" in text and "rom_b" in text
