"""The SIMD's decode stage (hdl/simd/decode.py) against the Python decoder and the model.

The vectors and the reference are tests/decode_vectors.py's (``isa.decode``, field by field):
LLVM-assembled instructions of every opcode, every opcode in every encoding with random
fields, random words, the words the RTL must refuse, and both halves of VOPD words. They
stream through the pipelined stage, one a cycle, while the consumer is ready only part of the
time, and every result must come out once, in order, with its tag. Every ALU opcode with
fixed register operands is run through the model (``sim.execute``) on random states: the
registers, SCC, VCC and EXEC it reads and writes must be exactly what the decoded fields say.
The ROMs' sizes are checked against the design's figures, and the stage converts to Verilog
that Verilator lints.
"""
from __future__ import annotations

import random
import shutil

import pytest
from amaranth.sim import Simulator

import isa
from isa import Fmt
from hdl.isa_tables import OpId
from hdl.simd import IMPLEMENTED
from hdl.simd.decode import DecodeStage, OpRow, PropRow, rom_a, rom_b
from tests.decode_vectors import (ALU_KINDS, EXEC_LO, ILLEGAL_WORDS, RTL_ILLEGAL_WORDS, SEED, VCC_LO, dwords,
                                  encodings, canonical, compare, expect, llvm_vectors, packed_vectors,
                                  random_word_vectors, unpack_inst, vopd_half)
from tests.lint import convert_and_lint

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
    legal, illegal = compare(vecs, run_stage(vecs), intended=names)
    assert illegal == sum(n not in IMPLEMENTED for n in names) and legal > 0


def test_packed_encodings():
    """Every opcode in every encoding, random fields: the stage == isa.decode, or both reject."""
    vecs, names = packed_vectors(random.Random(SEED))
    results = run_stage(vecs, ready_rate=0.5, seed=2)
    legal, illegal = compare(vecs, results)
    assert {r["op"] for r in results if r["valid"]} == {OpId[n.upper()] for n in IMPLEMENTED}
    assert illegal > 0 and legal > 0.6 * sum(n in IMPLEMENTED for n in names)


def test_random_and_illegal_words():
    """Random words, and the words the RTL refuses (foreign formats, unknown opcodes, DPP
    sources), with the consumer always ready: one result a cycle."""
    refused = list(RTL_ILLEGAL_WORDS.values())
    vecs = random_word_vectors() + [(w, 0) for w in (*ILLEGAL_WORDS.values(), *refused)]
    results = run_stage(vecs, ready_rate=1.0)
    legal, illegal = compare(vecs, results)
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


# -- implicit accesses and operand widths, against the model ----------------------------------
# registers whose value is perturbed to find out what an instruction reads: the operands
# above, the dword after each, and a few bystanders
_PROBE_SGPRS = (0, 4, 5, 8, 9, 12, 13, 20, 21, 22, 23, 30, 31, 77, 105, 125)
_PROBE_VGPRS = (0, 4, 5, 8, 9, 12, 13, 20, 21, 22, 23, 31)


_SPECIAL = (0, 0, 0, 0, 0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x3F800000, 0x7FC00000)


def _state(rng, valu: bool, style: int):
    """A random wave. Style bit 0: sparse values (mostly zeros, then ones, sign bits, NaNs)
    instead of random ones; bit 1: equal source operands. Both make compares, zero tests and
    absorbed addends flip when one operand changes."""
    import numpy as np
    from sim.wave import Wave
    w = Wave(0, 32, 0x1000)
    nrng = np.random.default_rng(rng.getrandbits(64))
    if style & 1:
        w.s = [rng.choice(_SPECIAL) for _ in range(128)]
        w.v[:] = nrng.choice(np.array(_SPECIAL, dtype=np.uint32), size=w.v.shape)
    else:
        w.s = [rng.getrandbits(32) for _ in range(128)]
        w.v[:] = nrng.integers(0, 1 << 32, size=w.v.shape, dtype=np.uint32)
    if style & 2:
        for a, b in ((4, 8), (4, 12), (5, 9), (5, 13)):
            w.s[b] = w.s[a]
            w.v[b] = w.v[a]
    w.s[124] = 0                            # null
    if valu:
        w.s[EXEC_LO] = 0xFFFFFFFF           # all lanes, so every lane of vdst is written
    w.scc = rng.getrandbits(1)
    return w


def _clone(w):
    import copy
    c = copy.copy(w)
    c.s, c.v = list(w.s), w.v.copy()
    return c


def _run(h, w):
    c = _clone(w)
    h(c, None)
    return c


def _same(a, b) -> bool:
    return a.s == b.s and a.scc == b.scc and a.pc == b.pc and (a.v == b.v).all()


def _observe(inst, handler, rng, trials=32) -> dict:
    """What the model reads and writes, from runs on random and perturbed states."""
    valu = inst.info.kind in ("valu", "vtrans")
    obs = {"sgprs_written": set(), "vgprs_written": set(), "writes_scc": False,
           "reads_scc": False, "reads_vcc": False, "reads_dst": False,
           "reads": set(), "dst_regs": None}
    for trial in range(trials):
        base = _state(rng, valu, trial % 4)       # every (style, delta) pair twice
        delta = (0x5A5A5A5A, 1, 0x80000000, 0xFFFFFFFF)[trial // 4 % 4]
        if rng.random() < 0.3:
            base.s[VCC_LO] = 0              # s_cbranch_vcc* see both outcomes
        out = _run(handler, base)
        obs["sgprs_written"] |= {i for i in range(128) if out.s[i] != base.s[i]}
        obs["vgprs_written"] |= {i for i in range(len(out.v)) if (out.v[i] != base.v[i]).any()}
        obs["writes_scc"] |= out.scc != base.scc

        def reads(file: str, reg: int, delta: int) -> bool:
            """Does the result depend on register `reg`? XOR `delta` into it first. A
            non-reader either overwrites it (result == out) or leaves it alone (result ==
            out with the same change)."""
            p, o = _clone(base), _clone(out)
            regs_p, regs_o = (p.s, o.s) if file == "s" else (p.v, o.v)
            regs_p[reg] ^= delta
            regs_o[reg] ^= delta
            r = _run(handler, p)
            return not _same(r, out) and not _same(r, o)

        # SCC: a non-writer copies it through, so compare the rest of the state
        p = _clone(base)
        p.scc ^= 1
        q = _run(handler, p)
        rest_differs = q.s != out.s or q.pc != out.pc or not (q.v == out.v).all()
        wrote = out.scc != base.scc or q.scc != p.scc
        obs["reads_scc"] |= rest_differs or (wrote and q.scc != out.scc)
        # VCC: also make it zero / non-zero for s_cbranch_vcc*
        obs["reads_vcc"] |= reads("s", VCC_LO, base.s[VCC_LO] or 0xFFFFFFFF)
        for reg in _PROBE_SGPRS:
            if reads("s", reg, delta):
                obs["reads"].add(("s", reg))
        for reg in _PROBE_VGPRS:
            if reads("v", reg, delta):
                obs["reads"].add(("v", reg))
    return obs


def _check_against_model(inst, rtl: dict, obs: dict) -> list[str]:
    errs = []
    valu = inst.info.kind in ("valu", "vtrans")
    # scalar registers written: sdst range, EXEC
    want_s = set(range(rtl["sdst"], rtl["sdst"] + rtl["sdst_dw"]))
    if rtl["writes_exec"]:
        want_s.add(EXEC_LO)
    if obs["sgprs_written"] | _HALF_WRITTEN.get(inst.name, set()) != want_s:
        errs.append(f"writes SGPRs {sorted(obs['sgprs_written'])}, decoder says {sorted(want_s)}")
    want_v = set(range(rtl["vdst"], rtl["vdst"] + rtl["vdst_dw"]))
    if obs["vgprs_written"] != want_v:
        errs.append(f"writes VGPRs {sorted(obs['vgprs_written'])}, decoder says {sorted(want_v)}")
    if obs["writes_scc"] != bool(rtl["writes_scc"]):
        errs.append(f"writes SCC {obs['writes_scc']}, decoder says {rtl['writes_scc']}")
    if obs["reads_scc"] != bool(rtl["reads_scc"]):
        errs.append(f"reads SCC {obs['reads_scc']}, decoder says {rtl['reads_scc']}")
    # registers read: the sources (with their widths) and, if reads_dst, the destination
    want_r = set()
    for i in range(3):
        code, n = rtl[f"src{i}"], rtl[f"src{i}_dw"]
        for k in range(n):
            if code >= 256:
                want_r.add(("v", code - 256 + k))
            elif code + k < 108:
                want_r.add(("s", code + k))
    reads_vcc = bool(rtl["reads_vcc"]) or any(("s", r) in want_r for r in (VCC_LO, 107))
    want_r -= {("s", VCC_LO), ("s", 107)}
    if rtl["reads_dst"] and not inst.name.startswith("s_cmov"):
        # (s_cmov*: the SALU reads the old destination to write it back when SCC = 0; the
        # model just skips the write, so the read is not observable there)
        if valu and rtl["vdst_dw"]:
            want_r |= {("v", rtl["vdst"] + k) for k in range(rtl["vdst_dw"])}
        else:
            want_r |= {("s", rtl["sdst"] + k) for k in range(rtl["sdst_dw"])}
    got_r = set(obs["reads"]) | _UNOBSERVABLE.get(inst.name, set())
    if got_r != want_r:
        errs.append(f"reads {sorted(got_r)}, decoder says {sorted(want_r)}")
    if obs["reads_vcc"] != reads_vcc:
        errs.append(f"reads VCC {obs['reads_vcc']}, decoder says {reads_vcc}")
    return errs


# operands an opcode encodes but cannot depend on: mbcnt_hi counts lanes 32-63 of its mask
# operand, which a wave32 does not have
_UNOBSERVABLE = {"v_mbcnt_hi_u32_b32": {("v", 4)}}
# v_trig_preop_f64 reads only the exponent of its double S0, not the low dword v4; the low
# dwords of these doubles decide the result only for values random states do not reach
# (inf against NaN, integer parts beyond 2^20)
_UNOBSERVABLE.update({"v_trig_preop_f64": {("v", 4)}, "v_cvt_i32_f64": {("v", 4)},
                      "v_cvt_u32_f64": {("v", 4)}, "v_cmp_class_f64": {("v", 4)},
                      "v_cmpx_class_f64": {("v", 4)}})
_UNOBSERVABLE.update({f"v_{c}_{k}_f64": {("v", 4), ("v", 8)} for c in ("cmp", "cmpx") for k in "ou"})
# destinations only partly changed: s_bitset0/1_b64 set or clear one bit of s[20:21]
_HALF_WRITTEN = {"s_bitset0_b64": {20, 21}, "s_bitset1_b64": {20, 21}}

# ops the model runs only with a scheduler context (barriers) or with hidden state (PC)
_NO_ORACLE = {"s_barrier_signal", "s_barrier_signal_isfirst", "s_barrier_wait", "s_endpgm"}


def test_implicit_accesses_match_model():
    """For every SALU/VALU/branch opcode in every encoding, the registers the model reads and
    writes are exactly those named by the decoder's operand fields and widths plus its
    implicit-access flags (reads_vcc, writes_exec, reads_scc, writes_scc, reads_dst)."""
    execute = pytest.importorskip("sim.execute")
    rng = random.Random(SEED + 2)
    items = []
    for info in isa.OPCODES:
        if info.kind not in ALU_KINDS or info.fmt == Fmt.SMEM or info.name not in IMPLEMENTED:
            continue        # (SMEM hints: no effect; the RTL decodes what the SIMD executes)
        for fmt, op in encodings(info):
            items.append((info, canonical(info, fmt, op, rng)))
    vecs = [(w, 0x1000) for _, w in items]
    results = run_stage(vecs)
    fails, checked, skipped = [], 0, []
    for (info, words), rtl in zip(items, results):
        inst = isa.decode(dwords(words), pc=0x1000)
        assert inst.name == info.name and rtl["op"] == OpId[info.name.upper()]
        if info.name in _NO_ORACLE or info.name not in execute.IMPLEMENTED:
            skipped.append(info.name)
            continue
        try:
            handler = execute.build(inst)
        except execute.ModelError:
            skipped.append(info.name)
            continue
        # a generator per opcode and encoding: adding opcodes leaves the others' states alone
        obs = _observe(inst, handler, random.Random(f"{SEED}:{info.name}:{inst.fmt.name}"))
        errs = _check_against_model(inst, rtl, obs)
        checked += 1
        if errs:
            fails.append(f"{isa.disassemble(inst)}: " + "; ".join(errs))
    assert not fails, f"{len(fails)}/{checked} disagree with the model:\n" + "\n".join(fails[:40])
    assert checked > 450, (checked, sorted(set(skipped)))
    print(f"{checked} opcode encodings checked against the model; skipped {sorted(set(skipped))}")
