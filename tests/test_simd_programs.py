"""The SIMD (hdl/simd/simd.py) alone, its memories answered by Python, running random
programs against the model.

Scalar programs: each is random SALU instructions of every opcode the scalar ALU executes and
of the scalar float ones the vector pipe runs on lane 0 (the decoder tests' bit-packed
encodings with random fields, those ``isa.decode`` accepts), in a
loop counted down in s100, with conditional and unconditional branches over single
instructions, ``s_getpc_b64``, scalar loads of 1, 2, 4 and 8 dwords from a table whose
address is in s[102:103] (waited for with ``s_wait_kmcnt``, answered out of order after a
random latency), and at the end VCC, EXEC and SCC copied into SGPRs. Every wave slot runs
it, launched with its own EXEC, s[0:3], ttmp7 and ttmp9. The model (``sim.execute``) runs
the same program from the same state; afterwards every SGPR of every wave must be equal.
Words the SIMD cannot run stop the wave with an error naming its PC.

Vector programs: random float, integer (64-bit, 16-bit, packed, lane moves) and VOPD instructions
among SALU ones, branches on VCC and EXEC and ``v_cmpx``; random global and LDS loads and
stores of every width answered out of order. Every VGPR, SGPR, LDS and buffer byte must equal
the model's.
"""
from __future__ import annotations

import random
from collections import deque

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

import isa
from hdl.config import PRESETS
from hdl.isa_tables import OpId
from hdl.simd.scalar_alu import IMPLEMENTED as SALU_OPS
from hdl.simd.scalar import PipeError
from hdl.simd.scalar_float import SCALAR_FLOAT
from hdl.simd.simd import SIMD
from hdl.simd.transseq import TransSeq
from hdl.simd.vgpr import place
from sim.execute import build
from sim.memory import GlobalMemory
from sim.model import Workgroup
from sim.wave import Wave
from tests.codemem import CodeMemory
from tests.lint import convert_and_lint
from tests.decode_vectors import packed_vectors, vopd_half

BASE = 0x2000
GBUF = 0x4000_0000       # the vector memory tests' buffers, a wave's address in its s0
LDS_BYTES = 1024
EXEC_LO = 126
TTMP = 108
COUNTER = 100
TABLE = 0x1000_0000      # the scalar loads' data, its address in s[102:103]
TABLE_DWORDS = 64


def _sop2(name, sdst, s0, s1):
    return [0x8000_0000 | isa.by_name(name).op << 23 | sdst << 16 | s1 << 8 | s0]


def _sop1(name, sdst, s0):
    return [0xBE80_0000 | sdst << 16 | isa.by_name(name).op << 8 | s0]


def _sopk(name, sdst, k):
    return [0xB000_0000 | isa.by_name(name).op << 23 | sdst << 16 | k]


def _sopc(name, s0, s1):
    return [0xBF00_0000 | isa.by_name(name).op << 16 | s1 << 8 | s0]


def _sopp(name, k=0):
    return [0xBF80_0000 | isa.by_name(name).op << 16 | (k & 0xFFFF)]


def _smem(name, sdata, sbase, offset, soffset=0x7C):
    return [0xF400_0000 | isa.by_name(name).op << 13 | sdata << 6 | sbase // 2, soffset << 25 | (offset & 0xFF_FFFF)]


def _loads(rng) -> list[int]:
    """A few scalar loads from the table into s[40:63], then ``s_wait_kmcnt 0``. Their
    destinations do not overlap: loads return in any order."""
    out, taken = [], set()
    for _ in range(rng.randint(1, 3)):
        name, n = rng.choice([("s_load_b32", 1), ("s_load_b64", 2), ("s_load_b128", 4), ("s_load_b256", 8)])
        dst = 40 + n * rng.randrange(24 // n)
        if taken & set(range(dst, dst + n)):
            continue
        taken |= set(range(dst, dst + n))
        out += _smem(name, dst, 102, 4 * rng.randrange(TABLE_DWORDS - n))
    return out + _sopp("s_wait_kmcnt", 0)


#: source codes the model reads (the aperture registers 235-238 are not in the scalar pipe yet)
_SOURCES = set(range(128)) | set(range(128, 209)) | set(range(240, 249)) | {251, 252, 253, 255}


def _random_salu(rng, n) -> list[list[int]]:
    """``n`` random executed SALU instructions (their dwords) that leave s100/s101 alone."""
    vecs, _ = packed_vectors(rng)
    pool = []
    for words, _ in vecs:
        dws = [(words >> (32 * k)) & 0xFFFF_FFFF for k in range(3)]
        try:
            inst = isa.decode(dws)
        except isa.DecodeError:
            continue
        info = inst.info
        srcs = [inst.f.get(k) for k in ("ssrc0", "ssrc1")]
        # 64-bit SGPR operands are even-aligned pairs (LLVM refuses others: "invalid register alignment")
        pairs = [(c, bits) for c, bits in zip(srcs, info.src_bits)] + [(inst.f.get("sdst"), info.dst_bits)]
        odd = any(c is not None and c < 128 and bits == 64 and c % 2 for c, bits in pairs)
        if (info.kind == "salu" and (inst.name in SALU_OPS | SCALAR_FLOAT.keys() or inst.name == "s_getpc_b64")
                and not odd
                and inst.f.get("sdst") not in range(COUNTER, COUNTER + 4)
                and all(c is None or c in _SOURCES for c in srcs)):
            pool.append(dws[:inst.size // 4])
    return [rng.choice(pool) for _ in range(n)]


def program(seed: int, loops: int = 3, body: int = 24, tail: int = 12) -> list[int]:
    rng = random.Random(seed)
    code = _sopk("s_movk_i32", COUNTER, loops)
    code += _sop1("s_mov_b32", 102, 255) + [TABLE] + _sop1("s_mov_b32", 103, 128)
    loop_at = len(code)

    def block(n):
        out = []
        for inst in _random_salu(rng, n):
            out += inst
            if rng.random() < 0.1:
                out += _loads(rng)
            if rng.random() < 0.2:                       # a branch over one instruction
                skip = _random_salu(rng, 1)[0]
                br = rng.choice(["s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
                                 "s_cbranch_execz", "s_cbranch_execnz", "s_branch"])
                out += _sopp(br, len(skip)) + skip
        return out
    code += block(body)
    code += _sop2("s_add_co_i32", COUNTER, COUNTER, 193)            # s100 += -1
    code += _sopc("s_cmp_lg_u32", COUNTER, 128)                      # s100 != 0
    code += _sopp("s_cbranch_scc1", loop_at - (len(code) + 1))
    code += block(tail)
    code += _sop1("s_mov_b64", 90, 106) + _sop1("s_mov_b64", 92, EXEC_LO) + _sop2("s_cselect_b32", 94, 129, 128)
    return code + _sopp("s_endpgm")


def table(seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(32) for _ in range(TABLE_DWORDS)]


class _Memory:
    """What a scalar load's handler uses: the global memory, and a counter record."""
    def __init__(self, words: list[int]):
        self.mem = GlobalMemory(base=TABLE)
        self.mem.allocate(4 * len(words), "table")
        self.mem.write_bytes(TABLE, np.array(words, dtype="<u4").tobytes())

    def record(self, *args, **kw):
        pass


def launch_state(seed: int, waves: int) -> list[dict]:
    """Each wave's launch: EXEC, s[0:3], ttmp7, ttmp9 (random)."""
    rng = random.Random(seed)
    return [{"exec": rng.getrandbits(32) | 1, "sgpr": [rng.getrandbits(32) for _ in range(4)],
             "ttmp7": rng.getrandbits(32), "ttmp9": rng.getrandbits(32)} for _ in range(waves)]


def model_run(code: list[int], launch: dict, words: list[int], limit: int = 5000) -> Wave:
    w = Wave(0, 1, BASE)
    w.s[EXEC_LO] = launch["exec"]
    w.s[0:4] = launch["sgpr"]
    w.s[TTMP + 7], w.s[TTMP + 9] = launch["ttmp7"], launch["ttmp9"]
    ctx = _Memory(words)
    for _ in range(limit):
        k = (w.pc - BASE) // 4
        inst = isa.decode(code[k:k + 3] + [0] * (3 - len(code[k:k + 3])), w.pc)
        pc, w.pc = w.pc, w.pc + inst.size
        if build(inst)(w, ctx) == "end":
            w.pc = pc
            return w
    raise AssertionError("the model did not reach s_endpgm")


class VectorMemory:
    """Serves the SIMD's vector memory and LDS requests: a global buffer at ``GBUF`` and an LDS
    of ``LDS_BYTES`` a wave (bytes past it read 0 and are not written), the accesses done in
    the order the SIMD offers them, each answered after a random latency, answers in a random
    order, each request's beats together (a register's rows in order)."""

    def __init__(self, rng, gbytes: bytes, waves: int, lanes: int):
        self.rng, self.lanes = rng, lanes
        self.glob = bytearray(gbytes)
        self.lds = [bytearray(LDS_BYTES) for _ in range(waves)]
        self.pending = {"vmem": [], "lds": []}          # [due, beats]
        self.answering = {"vmem": deque(), "lds": deque()}

    def _rows(self, ctx, port, row_port):
        """The request's lanes: (exec, [(addr, [4 data dwords])])."""
        q = port.payload
        lanes = []
        for r in range(32 // self.lanes):
            ctx.set(row_port, r)
            a, d = ctx.get(q.addr), ctx.get(q.data)
            for n in range(self.lanes):
                lanes.append(((a >> (64 * n)) & (2**64 - 1),
                              [(d >> (128 * n + 32 * k)) & 0xFFFF_FFFF for k in range(4)]))
        return lanes

    def _global(self, name, addr, data):
        """One lane's global access: the dwords it loads (None for a store)."""
        k = addr - GBUF
        assert 0 <= k < len(self.glob), f"lane address {addr:#x} outside the buffer"
        size = {"b8": 1, "u8": 1, "i8": 1, "b16": 2, "u16": 2, "i16": 2, "b32": 4, "b64": 8, "b96": 12,
                "b128": 16}[name.rsplit("_", 1)[1]]
        if "store" in name:
            self.glob[k:k + size] = b"".join(x.to_bytes(4, "little") for x in data)[:size]
            return None
        raw = int.from_bytes(self.glob[k:k + size], "little")
        if name.endswith(("i8", "i16")) and raw >> (8 * size - 1):
            raw -= 1 << (8 * size)
        return [(raw >> (32 * i)) & 0xFFFF_FFFF for i in range(max(1, size // 4))]

    def _ds(self, lds, name, addr, data, off0, off1):
        """One lane's LDS access (single-address and 2addr b32 forms)."""
        def load(a, n):
            return [int.from_bytes(bytes(lds[a + 4 * i + j] if a + 4 * i + j < len(lds) else 0 for j in range(4)),
                                   "little") for i in range(n)]

        def store(a, words):
            for i, x in enumerate(words):
                for j in range(4):
                    if a + 4 * i + j < len(lds):
                        lds[a + 4 * i + j] = (x >> (8 * j)) & 0xFF
        n = {"b32": 1, "b64": 2, "b96": 3, "b128": 4}[name.rsplit("_", 1)[1]]
        if "2addr" in name:
            a0, a1 = addr + 4 * off0, addr + 4 * off1
            if "store" in name:
                store(a0, data[:1])
                store(a1, data[2:3])
                return None
            return load(a0, 1) + load(a1, 1)
        a = addr + (off1 << 8 | off0)
        if "store" in name:
            store(a, data[:n])
            return None
        return load(a, n)

    def step(self, ctx, dut, cycle):
        for kind, port, row_port, resp in (("vmem", dut.vmem_req, dut.vmem_req_row, dut.vmem_resp),
                                          ("lds", dut.lds_req, dut.lds_req_row, dut.lds_resp)):
            ctx.set(port.ready, 0)
            if ctx.get(port.valid) and self.rng.random() < 0.7:
                q = port.payload
                wave, seq, vdst, ex = ctx.get(q.wave), ctx.get(q.seq), ctx.get(q.vdst), ctx.get(q.exec)
                name = isa.by_name(OpId(ctx.get(q.op)).name.lower()).name
                results = {}
                for lane, (addr, data) in enumerate(self._rows(ctx, port, row_port)):
                    if ex >> lane & 1:
                        results[lane] = (self._global(name, addr, data) if kind == "vmem" else
                                         self._ds(self.lds[wave], name, addr & 0xFFFF_FFFF, data,
                                                  ctx.get(q.offset0), ctx.get(q.offset1)))
                ctx.set(port.ready, 1)
                regs = max((len(r) for r in results.values() if r), default=0) if ctx.get(q.returns) else 0
                beats = []
                for k in range(regs):
                    for g in range(32 // self.lanes):
                        lanes = range(g * self.lanes, (g + 1) * self.lanes)
                        beats.append({"wave": wave, "seq": seq, "vdst": vdst + k, "grp": g, "write": 1, "store": 0,
                                      "mask": sum(1 << (n - g * self.lanes) for n in lanes if n in results),
                                      "data": sum(results[n][k] << (32 * (n - g * self.lanes))
                                                  for n in lanes if n in results),
                                      "last": 0})
                if not beats:
                    beats = [{"wave": wave, "seq": seq, "vdst": 0, "grp": 0, "write": 0, "mask": 0, "data": 0,
                              "last": 0, "store": int(kind == "vmem" and "load" not in name)}]
                beats[-1]["last"] = 1
                self.pending[kind].append([cycle + self.rng.randint(2, 20), beats])
            due = [p for p in self.pending[kind] if p[0] <= cycle]
            if not self.answering[kind] and due:
                pick = self.rng.choice(due)
                self.pending[kind].remove(pick)
                self.answering[kind].extend(pick[1])
            ctx.set(resp.valid, bool(self.answering[kind]))
            if self.answering[kind]:
                for k, v in self.answering[kind][0].items():
                    ctx.set(getattr(resp.payload, k), v)
                if ctx.get(resp.ready):
                    self.answering[kind].popleft()

    def busy(self):
        return any(self.pending.values()) or any(self.answering.values())


def rtl_run(preset: str, code: list[int], launches: list[dict], words: list[int] = (), seed: int = 1,
            starts: list[int] | None = None, log: dict | None = None, gbytes: bytes = b""):
    """Launch a wave a slot (``launches``) running ``code`` from ``starts`` (default its first
    dword), scalar loads reading ``words`` at TABLE; a barrier is released 20 cycles after every
    running wave has signalled it. Returns (per-wave 128 SGPRs, errors, cycles); ``log`` gets
    the cycles of the launches, the releases and the load requests."""
    log = {} if log is None else log
    log.update(releases=[], loads=[], launched=[])
    starts = starts or [BASE] * len(launches)
    cfg = PRESETS[preset]
    dut = SIMD(cfg)
    vgprs = cfg.vgprs_per_simd // cfg.wave_slots
    rng = random.Random(seed)
    mem = CodeMemory(code, BASE, cfg.fetch_bytes, rng, max_latency=6)
    vmem = VectorMemory(rng, gbytes, len(launches), cfg.lanes)
    errors, cycles = [], [0]

    def dword(addr):
        k = (addr - TABLE) // 4
        return words[k] if 0 <= k < len(words) else 0

    async def bench(ctx):
        lp = dut.launch.payload

        def offer(w):
            """Launch ``w`` on the port (the first free slot: wave w goes to slot w)."""
            ctx.set(lp.pc, starts[w])
            ctx.set(lp.wg_last, 1)                    # one workgroup a wave unless the launch says
            ctx.set(lp.vgpr_base, w * vgprs)
            for k, v in ((k, v) for k, v in launches[w].items() if k != "delay"):
                if k == "v0":
                    ctx.set(lp.v0, sum(x << (32 * n) for n, x in enumerate(v)))
                elif k == "sgpr":
                    for i in range(4):
                        ctx.set(lp.sgpr[i], v[i])
                else:
                    ctx.set(getattr(lp, k), v)
        nxt, launch_at = 0, launches[0].get("delay", 0)
        loads, answering = [], deque()                 # loads: [cycle due, beats]
        ctx.set(dut.smem_req.ready, 1)
        all_in = None
        # a launch takes some cycles (v0's rows, then the SGPRs) before its wave is active
        while nxt < len(launches) or ctx.get(dut.active) or cycles[0] < log["launched"][-1] + 20:
            assert cycles[0] < 40 * len(code) * 4 + 400, "the SIMD did not finish"
            # launches: each ``delay`` cycles after the one before
            go = nxt < len(launches) and cycles[0] >= launch_at
            ctx.set(dut.launch.valid, go)
            if go:
                offer(nxt)
                if ctx.get(dut.launch.ready):
                    log["launched"].append(cycles[0])
                    nxt += 1
                    launch_at = cycles[0] + 1 + (launches[nxt].get("delay", 0) if nxt < len(launches) else 0)
            waiting, active = ctx.get(dut.bar_wait), ctx.get(dut.active)
            all_in = (all_in or cycles[0]) if waiting and waiting == active else None
            release = all_in is not None and cycles[0] - all_in >= 20
            ctx.set(dut.bar_release, waiting if release else 0)
            if release:
                log["releases"].append(cycles[0])
                all_in = None
            mem.step(ctx, dut.fetch_req, dut.fetch_resp, cycles[0])
            vmem.step(ctx, dut, cycles[0])
            # scalar loads: answered whole, in a random order once due
            if ctx.get(dut.smem_req.valid):
                log["loads"].append(cycles[0])
                q = dut.smem_req.payload
                addr, n, sdst = ctx.get(q.addr) & ~3, ctx.get(q.dwords), ctx.get(q.sdst)
                beats = [{"wave": ctx.get(q.wave), "seq": ctx.get(q.seq), "sdst": sdst + i,
                          "data": dword(addr + 4 * i), "last": i == n - 1} for i in range(n)]
                loads.append([cycles[0] + rng.randint(1, 8), beats])
            due = [ld for ld in loads if ld[0] <= cycles[0]]
            if not answering and due:
                pick = rng.choice(due)
                loads.remove(pick)
                answering.extend(pick[1])
            ctx.set(dut.smem_resp.valid, bool(answering))
            if answering:
                for k, v in answering[0].items():
                    ctx.set(getattr(dut.smem_resp.payload, k), v)
                if ctx.get(dut.smem_resp.ready):
                    answering.popleft()
            if ctx.get(dut.error.valid) and not errors:     # the first error, held
                e = dut.error
                errors.append((ctx.get(e.wave), ctx.get(e.pc), ctx.get(e.cause)))
            cycles[0] += 1
            await ctx.tick()
        log["resident"] = [ctx.get(dut.waves[w].resident) for w in range(len(launches))]
        for w in range(len(launches)):
            pairs = [ctx.get(dut.scalar.sgprs.data[w * 64 + k]) for k in range(64)]
            regs.append([(p >> (32 * h)) & 0xFFFF_FFFF for p in pairs for h in (0, 1)])
            vregs.append(read_vgprs(ctx, dut, cfg, w * vgprs, vgprs))

    regs, vregs = [], []
    top = Module()                      # the SIMD and a transcendental unit of its own
    top.submodules.simd = dut
    top.submodules.trans = trans = TransSeq(cfg)
    wiring.connect(top, dut.trans_req, trans.i)
    wiring.connect(top, trans.o, dut.trans_resp)
    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    if log is not None:
        log.update(vgprs=vregs, glob=bytes(vmem.glob), lds=[bytes(x) for x in vmem.lds])
    return regs, errors, cycles[0]


def read_vgprs(ctx, dut, cfg, base: int, n: int) -> np.ndarray:
    """VGPRs ``base`` .. ``base + n - 1`` (n x 32 lanes) from the vector pipe's banks: row ``p``
    of register ``r`` is file row ``k = r * passes + p`` (``hdl.simd.vgpr.place``)."""
    L = cfg.lanes
    P = 32 // L
    banks = dut.vector.vgprs.banks
    out = np.zeros((n, 32), dtype=np.uint32)
    for r in range(n):
        for p in range(P):
            bank, addr = place((base + r) * P + p)
            row = ctx.get(banks[bank].data[addr])
            out[r, p * L:(p + 1) * L] = [(row >> (32 * i)) & 0xFFFF_FFFF for i in range(L)]
    return out


@pytest.mark.parametrize("preset,seed", [("fpga", 11), ("fpga", 12), ("default", 13), ("default", 14)])
def test_scalar_programs_match_the_model(preset, seed):
    code, words = program(seed), table(seed)
    launches = launch_state(seed, PRESETS[preset].wave_slots)
    regs, errors, cycles = rtl_run(preset, code, launches, words)
    assert errors == []
    names, k = [], 0
    while k < len(code):                 # instruction by instruction (a literal may look like one)
        inst = isa.decode(code[k:k + 3])
        names.append(inst.name)
        k += inst.size // 4
    assert any(n.startswith("s_load") for n in names) and any(n in SCALAR_FLOAT for n in names)
    for w, state in enumerate(launches):
        ref = model_run(code, state, words)
        diff = [f"s{k}: rtl {regs[w][k]:#x} model {ref.s[k]:#x}" for k in range(126)
                if k not in (106, 107) and regs[w][k] != ref.s[k]]
        assert not diff, f"wave {w}: " + ", ".join(diff[:12])
        assert [regs[w][k] for k in (90, 91, 92, 93, 94)] == [ref.s[106], ref.s[107], ref.s[126], ref.s[127], ref.scc]
    print(f"{len(code)} dwords, {len(launches)} waves: {cycles} cycles")


def test_jumps_and_calls_through_registers():
    """``s_getpc_b64``, ``s_setpc_b64`` over two instructions, and a call with
    ``s_swappc_b64`` that returns through ``s_setpc_b64``."""
    code = (_sop1("s_getpc_b64", 10, 0) + _sop2("s_add_co_u32", 10, 10, 128 + 16)     # s10 = BASE + 20
            + _sop1("s_setpc_b64", 0, 10) + _sopk("s_movk_i32", 20, 1) + _sopk("s_movk_i32", 21, 2)
            + _sopk("s_movk_i32", 22, 3)                                              # BASE + 20
            + _sop1("s_getpc_b64", 12, 0) + _sop2("s_add_co_u32", 12, 12, 128 + 16)   # s12 = BASE + 44
            + _sop1("s_swappc_b64", 14, 12) + _sopk("s_movk_i32", 23, 4) + _sopp("s_endpgm")
            + _sopk("s_movk_i32", 24, 5) + _sop1("s_setpc_b64", 0, 14))               # BASE + 44: the callee
    launches = launch_state(7, 2)
    regs, errors, _ = rtl_run("fpga", code, launches)
    ref = model_run(code, launches[0], [])
    assert errors == [] and regs[0][:126] == ref.s[:126]
    assert regs[0][20:25] == [0, 0, 3, 4, 5] and regs[0][14] == BASE + 36 and regs[0][10] == BASE + 20


def test_a_jump_through_registers_waits_for_a_lane_mask():
    """``s_setpc_b64`` right after a VALU instruction that writes an SGPR (``v_cmp_*_e64``):
    it waits for the lane mask like any instruction of its wave, and then jumps."""
    v_cmp_gt_i32 = isa.by_name("v_cmp_gt_i32_e64").op
    code = (_sop1("s_getpc_b64", 10, 0) + _sop2("s_add_co_u32", 10, 10, 128 + 20)     # s10 = BASE + 24
            + _vop3(v_cmp_gt_i32, 27, [256, 129])                                     # s27 = v0 > 1
            + _sop1("s_setpc_b64", 0, 10) + _sopk("s_movk_i32", 20, 1)
            + _sopk("s_movk_i32", 21, 2) + _sopp("s_endpgm"))                         # BASE + 24
    launches = launch_state(7, 2)
    regs, errors, _ = rtl_run("fpga", code, launches)
    ref = model_run(code, launches[0], [])
    assert errors == [] and regs[0][:126] == ref.s[:126]
    assert regs[0][20:22] == [0, 2] and regs[0][27] == ref.s[27]


def test_waves_wait_at_the_barrier_until_it_is_released():
    """Every wave signals, waits, then loads: no load leaves before the release."""
    words = table(8)
    code = (_sop1("s_mov_b32", 102, 255) + [TABLE] + _sop1("s_mov_b32", 103, 128)
            + _sop1("s_barrier_signal", 0, 193) + _sopp("s_barrier_wait", 0xFFFF)
            + _smem("s_load_b32", 40, 102, 8) + _sopp("s_wait_kmcnt", 0) + _sopp("s_endpgm"))
    assert [isa.decode(code[k:k + 3]).name for k in (3, 4)] == ["s_barrier_signal", "s_barrier_wait"]
    for preset in ("fpga", "default"):
        log = {}
        launches = launch_state(9, PRESETS[preset].wave_slots)
        regs, errors, _ = rtl_run(preset, code, launches, words, log=log)
        assert errors == [] and len(log["releases"]) == 1 and len(log["loads"]) == len(launches)
        assert min(log["loads"]) > log["releases"][0]
        assert all(r[40] == words[2] for r in regs)


def test_a_workgroup_starts_when_its_last_wave_arrives():
    """Wave 0 of a two-wave workgroup issues nothing until wave 1, launched 150 cycles later,
    has arrived: its load leaves after that."""
    words = table(10)
    code = (_sop1("s_mov_b32", 102, 255) + [TABLE] + _sop1("s_mov_b32", 103, 128)
            + _smem("s_load_b32", 40, 102, 12) + _sopp("s_wait_kmcnt", 0) + _sopp("s_endpgm"))
    launches = launch_state(10, 2)
    launches[0].update(wg=3, wg_last=0)
    launches[1].update(wg=3, wg_last=1, delay=150)
    log = {}
    regs, errors, _ = rtl_run("fpga", code, launches, words, log=log)
    assert errors == [] and len(log["loads"]) == 2 and min(log["loads"]) > log["launched"][1] >= 150
    assert regs[0][40] == regs[1][40] == words[3]


def test_a_wave_ends_after_its_loads_return():
    """Loads and no wait before ``s_endpgm``: the wave ends when the last dword has arrived."""
    words = table(5)
    code = (_sop1("s_mov_b32", 102, 255) + [TABLE] + _sop1("s_mov_b32", 103, 128) +
            _smem("s_load_b256", 8, 102, 4) + _smem("s_load_b32", 3, 102, 60) + _sopp("s_endpgm"))
    launches = launch_state(5, 2)
    regs, errors, _ = rtl_run("fpga", code, launches, words)
    ref = model_run(code, launches[0], words)
    assert errors == [] and regs[0][:16] == ref.s[:16]
    assert regs[0][3] == words[15] and regs[0][8:16] == words[1:9]


def test_words_it_cannot_run_stop_the_wave():
    """A word that is no instruction and one the SIMD does not decode (``v_mad_u16``) stop
    their wave as ``ILLEGAL``; a decoded instruction with a field its unit lacks
    (``v_exp_f32`` with an output modifier) as ``UNSUPPORTED``. The cause and PC are held on
    ``error``, the stopped wave stays resident, and a wave of good code beside it finishes."""
    bad = [0xFFFF_FFFF]                                       # no instruction
    mad16 = _vop3(isa.by_name("v_mad_u16").op, 1, [256, 256, 256])
    assert isa.decode(mad16 + [0]).name == "v_mad_u16"
    exp_omod = _vop3(isa.by_name("v_exp_f32").vop3_op, 1, [256], omod=1)
    assert isa.decode(exp_omod + [0]).name == "v_exp_f32"
    code = (_sopk("s_movk_i32", 3, 7) + bad + _sopp("s_endpgm") + mad16 + _sopp("s_endpgm")
            + exp_omod + _sopp("s_endpgm"))
    for starts, error in (([BASE, BASE + 8], (0, BASE + 4, PipeError.ILLEGAL)),
                          ([BASE + 12, BASE + 8], (0, BASE + 12, PipeError.ILLEGAL)),
                          ([BASE + 24, BASE + 8], (0, BASE + 24, PipeError.UNSUPPORTED))):
        log = {}
        regs, errors, _ = rtl_run("fpga", code, launch_state(6, 2), starts=starts, log=log)
        assert errors == [error]
        assert log["resident"] == [w == error[0] for w in range(2)]
        assert (regs[0][3] == 7) == (starts[0] == BASE)      # it ran up to the word it stopped at


def test_verilog_lint(tmp_path):
    convert_and_lint(SIMD(PRESETS["fpga"]), "simd", tmp_path)


# -- vector programs ------------------------------------------------------------------------
VG = 16                  # VGPRs a wave uses
SAVED_EXEC = 99          # the launch's EXEC, restored now and then after v_cmpx
_VCC = 106


def _vop1(op, vdst, src0):
    return [0x7E00_0000 | vdst << 17 | op << 9 | src0]


def _vop2(op, vdst, src0, vsrc1):
    return [op << 25 | vdst << 17 | vsrc1 << 9 | src0]


def _vopc(op, src0, vsrc1):
    return [0x7C00_0000 | op << 17 | vsrc1 << 9 | src0]


def _vop3(op, vdst, srcs, *, abs_=0, neg=0, opsel=0, clamp=0, omod=0, sdst=None):
    s0, s1, s2 = (list(srcs) + [0, 0, 0])[:3]
    low = sdst if sdst is not None else opsel << 3 | abs_
    return [0xD400_0000 | op << 16 | clamp << 15 | low << 8 | vdst, neg << 29 | omod << 27 | s2 << 18 | s1 << 9 | s0]


def _vop3p(op, vdst, srcs, *, opsel=0, opsel_hi=7, clamp=0):
    s0, s1, s2 = (list(srcs) + [0, 0, 0])[:3]
    return [0xCC00_0000 | op << 16 | clamp << 15 | (opsel_hi >> 2) << 14 | opsel << 11 | vdst,
            (opsel_hi & 3) << 27 | s2 << 18 | s1 << 9 | s0]


def _source(rng, vgpr_only=False, wide=False) -> int:
    """A source code: v0..v15, s0..s23, a constant, the literal, VCC or EXEC (64-bit sources:
    pairs, SGPR pairs even)."""
    x = rng.random()
    if vgpr_only or x < 0.5:
        return 256 + rng.randrange(VG - wide)
    if x < 0.65:
        return rng.randrange(0, 24, 1 + wide)
    if x < 0.8:                                     # an integer or a float constant
        return rng.choice(range(128, 209)) if rng.random() < 0.5 else rng.choice(range(240, 249))
    if x < 0.9:
        return 255
    return rng.choice([_VCC, EXEC_LO])


def _random_valu(rng, names) -> list[int]:
    """One random VALU instruction of ``names`` (its dwords): e32 or e64 form, random sources
    (VGPRs v0..v15, SGPRs, constants, the literal, VCC, EXEC), modifiers its flags allow."""
    from hdl.simd.vector import NO_CLAMP, TRANS_OPS
    compares = [n for n in names if n.startswith("v_cmp")]
    others = [n for n in names if not n.startswith("v_cmp")]
    while True:
        name = rng.choice(compares if rng.random() < 0.2 else others)
        info = isa.by_name(name)
        n = len(info.src_bits)
        vdst = rng.randrange(VG - (info.dst_bits == 64))
        sdst = rng.choice([_VCC, *range(20, 32)])
        e64 = info.fmt in (isa.Fmt.VOP3, isa.Fmt.VOP3SD) or (info.vop3_op is not None and rng.random() < 0.4)
        srcs = [_source(rng, wide=bits == 64) for bits in info.src_bits]
        if name in ("v_readlane_b32", "v_readfirstlane_b32"):      # a VGPR's lane; the lane an SGPR
            srcs[0] = _source(rng, vgpr_only=True)
            srcs[1:] = [rng.choice([*range(24), *range(128, 193)])] if n > 1 else []
        if name == "v_writelane_b32":
            srcs = [s if s < 256 else rng.randrange(24) for s in srcs]
        mods = {}
        if info.fmt == isa.Fmt.VOP3P:        # packed halves: any op_sel and op_sel_hi
            clamp = int("clamp" in info.flags and name not in NO_CLAMP and rng.random() < 0.2)
            words = _vop3p(info.op, vdst, srcs, opsel=rng.getrandbits(3) & ((1 << n) - 1),
                           opsel_hi=rng.getrandbits(3) & ((1 << n) - 1) if rng.random() < 0.6 else 7, clamp=clamp)
        elif e64:
            if "abs" in info.flags:
                mods.update(abs_=rng.getrandbits(3) if rng.random() < 0.3 else 0,
                            neg=rng.getrandbits(3) if rng.random() < 0.3 else 0)
            if "omod" in info.flags and name not in TRANS_OPS and rng.random() < 0.2:
                mods["omod"] = rng.randrange(4)
            if "opsel" in info.flags and rng.random() < 0.4:      # the halves of its sources and result
                mods["opsel"] = rng.getrandbits(4) & ((1 << n) - 1 | 8)
            if "clamp" in info.flags and name not in NO_CLAMP | TRANS_OPS and rng.random() < 0.2:
                mods["clamp"] = 1
            if "reads_vcc" in info.flags and n == 3:
                srcs[2] = rng.choice([_VCC, *range(24)])         # the lane mask: an SGPR
            op = info.op if info.fmt in (isa.Fmt.VOP3, isa.Fmt.VOP3SD) else info.vop3_op
            if info.fmt == isa.Fmt.VOPC:
                words = _vop3(op, sdst, srcs, **mods)             # the lane mask's SGPR in vdst
            elif info.fmt == isa.Fmt.VOP3SD or "carry_out" in info.flags:
                mods.pop("abs_", None)
                words = _vop3(op, vdst, srcs, sdst=sdst, **mods)
            else:
                words = _vop3(op, vdst, srcs, **mods)
        else:
            srcs[1:2] = [_source(rng, vgpr_only=True, wide=info.src_bits[1] == 64)] if n > 1 else []
            if info.fmt == isa.Fmt.VOP1:
                words = _vop1(info.op, vdst, srcs[0] if n else 0)
            elif info.fmt == isa.Fmt.VOP2:
                words = _vop2(info.op, vdst, srcs[0], srcs[1] - 256)
            else:
                words = _vopc(info.op, srcs[0], srcs[1] - 256)
        if 255 in srcs or "literal_k" in info.flags:
            words = words + [rng.getrandbits(32)]
        try:
            inst = isa.decode(words + [0, 0])
        except isa.DecodeError:
            continue
        if inst.name == name and inst.size == 4 * len(words):
            return words


def _prologue(rng) -> list[int]:
    """v1..v15 set from v0 in every lane (a random multiple, then a random XOR)."""
    code = _sop1("s_mov_b32", SAVED_EXEC, EXEC_LO) + _sop1("s_mov_b32", EXEC_LO, 193)
    mul, xor = isa.by_name("v_mul_lo_u32"), isa.by_name("v_xor_b32")
    for r in range(1, VG):
        code += _vop3(mul.op, r, [256, 255]) + [rng.getrandbits(32) | 1]
        code += _vop2(xor.op, r, 255, r) + [rng.getrandbits(32)]
    return code + _sop1("s_mov_b32", EXEC_LO, SAVED_EXEC)


def _random_vopd(rng) -> list[int]:
    """A VOPD instruction of the operations the SIMD executes, on v0..v15, SGPRs, constants and
    the literal; often one half reads the other's destination (never each the other's)."""
    from isa.vopd import BASE, Y_ONLY
    from hdl.simd.vector import VECTOR_OPS
    ops = [c for c, n in BASE.items() if n in VECTOR_OPS]
    while True:
        opx, opy = rng.choice([c for c in ops if c not in Y_ONLY]), rng.choice(ops)
        vdstx = rng.randrange(VG)
        vdsty = rng.randrange(VG // 2) << 1 | (~vdstx & 1)

        def src0(other):
            return 256 + other if rng.random() < 0.25 else _source(rng)
        w0 = 0b110010 << 26 | opx << 22 | opy << 17 | (0 if opx == 8 else rng.randrange(VG)) << 9 | src0(vdsty)
        w1 = vdstx << 24 | (vdsty >> 1) << 17 | (0 if opy == 8 else rng.randrange(VG)) << 9 | src0(vdstx)
        words = [w0, w1, rng.getrandbits(32)]
        try:
            inst = isa.decode(words, 0)
            vopd_half(words, 0, False)          # raises when each half reads the other's destination
        except isa.DecodeError:
            continue
        return words[:inst.size // 4]


def vector_program(seed: int, names, loops: int = 2, body: int = 30, vopd: float = 0.0) -> list[int]:
    """Every VGPR v1..v15 set from v0 (all lanes), then a loop of random VALU instructions of
    ``names`` (a ``vopd`` share of them VOPD) mixed with SALU ones, branches on VCC and EXEC,
    and EXEC restored now and then."""
    rng = random.Random(seed)
    code = _prologue(rng) + _sop1("s_mov_b32", _VCC, 255) + [rng.getrandbits(32)]
    code += _sopk("s_movk_i32", COUNTER, loops)
    loop_at = len(code)
    for _ in range(body):
        x = rng.random()
        if x < 0.7:
            code += _random_vopd(rng) if vopd and rng.random() < vopd else _random_valu(rng, names)
        elif x < 0.85:
            code += _random_salu(rng, 1)[0]
        elif x < 0.9:
            skip = _random_valu(rng, names)
            code += _sopp(rng.choice(["s_cbranch_vccz", "s_cbranch_vccnz", "s_cbranch_execz"]), len(skip)) + skip
        else:
            code += _sop1("s_mov_b32", EXEC_LO, SAVED_EXEC)
    code += _sop2("s_add_co_i32", COUNTER, COUNTER, 193)
    code += _sopc("s_cmp_lg_u32", COUNTER, 128)
    code += _sopp("s_cbranch_scc1", loop_at - (len(code) + 1))
    code += _sop1("s_mov_b64", 90, 106) + _sop1("s_mov_b64", 92, EXEC_LO) + _sop2("s_cselect_b32", 94, 129, 128)
    return code + _sopp("s_endpgm")


def vector_launches(seed: int, waves: int) -> list[dict]:
    rng = random.Random(seed)
    return [dict(state, v0=[rng.getrandbits(32) for _ in range(32)]) for state in launch_state(seed, waves)]


def model_vector_run(code, launch, limit=20000, ctx=None) -> tuple[Wave, int]:
    """The model's wave at ``s_endpgm``, and how many VALU instructions ran with lanes on."""
    w = Wave(0, VG, BASE)
    w.v[0] = launch["v0"]
    w.s[EXEC_LO] = launch["exec"]
    w.s[0:4] = launch["sgpr"]
    w.s[TTMP + 7], w.s[TTMP + 9] = launch["ttmp7"], launch["ttmp9"]
    ctx = ctx or _Memory([])
    active = 0
    for _ in range(limit):
        k = (w.pc - BASE) // 4
        inst = isa.decode(code[k:k + 3] + [0] * (3 - len(code[k:k + 3])), w.pc)
        pc, w.pc = w.pc, w.pc + inst.size
        active += inst.info.kind == "valu" and w.s[EXEC_LO] != 0
        if build(inst)(w, ctx) == "end":
            w.pc = pc
            return w, active
    raise AssertionError("the model did not reach s_endpgm")


def _check_vector(preset, code, launches, seed, active=40):
    log = {}
    regs, errors, cycles = rtl_run(preset, code, launches, seed=seed, log=log)
    assert errors == []
    ran = []
    for w, state in enumerate(launches):
        ref, ran_on = model_vector_run(code, state)
        ran.append(ran_on)
        bad = [f"v{r}[{n}]: rtl {log['vgprs'][w][r, n]:#x} model {ref.v[r, n]:#x}"
               for r in range(VG) for n in range(32) if log["vgprs"][w][r, n] != ref.v[r, n]]
        assert not bad, f"wave {w}: {len(bad)} lanes differ: " + ", ".join(bad[:8])
        diff = [f"s{k}: rtl {regs[w][k]:#x} model {ref.s[k]:#x}" for k in range(126)
                if k not in (106, 107) and regs[w][k] != ref.s[k]]
        assert not diff, f"wave {w}: " + ", ".join(diff[:12])
    assert sum(ran) >= active * len(launches), f"too few VALU instructions ran with lanes on: {ran}"
    return cycles


def _names(pred):
    from hdl.simd.vector import VECTOR_OPS
    return sorted(n for n in VECTOR_OPS if pred(isa.by_name(n)))


@pytest.mark.parametrize("preset,seed", [("fpga", 21), ("default", 22)])
def test_float_programs_match_the_model(preset, seed):
    """Float VALU instructions and the transcendentals (on a unit of the SIMD's own)."""
    from hdl.simd.vector import TRANS_OPS
    names = _names(lambda i: "f32" in i.name or "ubyte" in i.name) + 4 * sorted(TRANS_OPS)
    code = vector_program(seed, names)
    _check_vector(preset, code, vector_launches(seed, PRESETS[preset].wave_slots), seed)


@pytest.mark.parametrize("preset,seed", [("fpga", 25), ("default", 26)])
def test_vopd_programs_match_the_model(preset, seed):
    """VOPD dual-issue instructions among float VALU ones: each runs as its two halves, both
    reading before either writes, and counts once."""
    code = vector_program(seed, _names(lambda i: "f32" in i.name), vopd=0.5)
    _check_vector(preset, code, vector_launches(seed, PRESETS[preset].wave_slots), seed)


@pytest.mark.parametrize("preset", ["fpga", "default"])
def test_sixteen_bit_halves_and_constants_match_the_model(preset):
    """16-bit operations with every op_sel of their sources and result (the other half of the
    destination kept) and the float inline constants, which a 16-bit operand reads as FP16."""
    rng = random.Random(41)
    code = _prologue(rng)
    for name in ("v_add_nc_u16", "v_sub_nc_i16", "v_lshlrev_b16", "v_max_i16", "v_mul_lo_u16", "v_mad_u32_u16"):
        info = isa.by_name(name)
        n = len(info.src_bits)
        for opsel in range(16):
            if opsel & ~((1 << n) - 1 | 8):
                continue
            srcs = [rng.choice([*range(240, 249), 193, 256 + rng.randrange(VG)]) for _ in range(n - 1)]
            code += _vop3(info.op, 1 + opsel % 15, [256 + rng.randrange(VG)] + srcs, opsel=opsel)
    code += _sopp("s_endpgm")
    _check_vector(preset, code, vector_launches(41, PRESETS[preset].wave_slots), 41, active=30)


@pytest.mark.parametrize("preset", ["fpga", pytest.param("default", marks=pytest.mark.slow)])
def test_packed_halves_and_constants_match_the_model(preset):
    """Every packed 16-bit integer op (two passes of the integer lane) with random op_sel and
    op_sel_hi, sources among the VGPRs, SGPRs and the inline constants (a packed operand reads
    a constant's 16-bit form in its low half, 0 in its high one), clamp where it saturates."""
    from hdl.simd.valu_int import CLAMP_REFUSED, PACKED
    rng = random.Random(43)
    code = _prologue(rng)
    for name in sorted(PACKED):
        info = isa.by_name(name)
        n = len(info.src_bits)
        for k in range(4):
            srcs = [rng.choice([*range(128, 209), *range(240, 249), *range(24), 256 + rng.randrange(VG)])
                    for _ in range(n)]
            srcs[k % n] = 256 + rng.randrange(VG)
            code += _vop3p(info.op, 1 + rng.randrange(VG - 1), srcs, opsel=rng.getrandbits(n),
                           opsel_hi=rng.getrandbits(n), clamp=int(name not in CLAMP_REFUSED and k == 3))
    code += _sopp("s_endpgm")
    _check_vector(preset, code, vector_launches(43, PRESETS[preset].wave_slots), 43, active=30)


@pytest.mark.parametrize("preset,seed", [("fpga", 23), ("default", 24)])
def test_integer_programs_match_the_model(preset, seed):
    """Integer VALU instructions, 64-bit, 16-bit and packed ones and the lane moves more often
    than the rest."""
    names = _names(lambda i: not ("f32" in i.name or "ubyte" in i.name))
    names += 4 * [n for n in names if ({16, 64} & {isa.by_name(n).dst_bits, *isa.by_name(n).src_bits}
                                       or isa.by_name(n).fmt == isa.Fmt.VOP3P)
                  and not n.startswith("v_cmpx_")]     # (more EXEC writes would leave few lanes on)
    names += 8 * ["v_readlane_b32", "v_readfirstlane_b32", "v_writelane_b32"]
    code = vector_program(seed, names)
    _check_vector(preset, code, vector_launches(seed, PRESETS[preset].wave_slots), seed)


# -- vector memory programs -----------------------------------------------------------------
GBUF_BYTES = 4096 + 64
BUF_SGPR = 102           # the buffer's address, in a pair the random instructions leave alone
_GLOBAL = {"global_load_b32": 1, "global_load_b64": 2, "global_load_b96": 3, "global_load_b128": 4,
           "global_load_u8": 1, "global_load_i8": 1, "global_load_u16": 1, "global_load_i16": 1,
           "global_store_b8": 1, "global_store_b16": 1, "global_store_b32": 1, "global_store_b64": 2,
           "global_store_b96": 3, "global_store_b128": 4}
_DS = {"ds_load_b32": 1, "ds_load_b64": 2, "ds_load_b128": 4, "ds_store_b32": 1, "ds_store_b64": 2,
       "ds_store_b128": 4, "ds_load_2addr_b32": 2, "ds_store_2addr_b32": 1}


def _vglobal(name, vdst, data, vaddr, saddr, offset):
    return [0xEE00_0000 | isa.by_name(name).op << 14 | saddr, data << 23 | vdst, (offset & 0xFF_FFFF) << 8 | vaddr]


def _ds(name, vdst, addr, data0, data1, offset0, offset1):
    return [0xD800_0000 | isa.by_name(name).op << 18 | offset1 << 8 | offset0,
            vdst << 24 | data1 << 16 | data0 << 8 | addr]


def _random_memory(rng) -> tuple[list[int], set]:
    """A global or LDS access at a lane's 16-byte slot of one of the buffer's 512-byte regions
    (of the LDS's, some past its end): s[102:103] + v2 or the 64-bit v[3:4], v2 for the LDS.
    Returns its dwords and the data or destination VGPRs."""
    if rng.random() < 0.6:
        name = rng.choice(sorted(_GLOBAL))
        n = _GLOBAL[name]
        reg = rng.randrange(5, VG - n + 1)
        size = {"8": 1, "16": 2}.get(name.rsplit("_", 1)[1][1:], 4)       # b8/u8/i8, b16/u16/i16
        offset = 512 * rng.randrange(8) + size * rng.randrange(4 // size)
        vaddr, saddr = (2, BUF_SGPR) if rng.random() < 0.5 else (3, 0x7C)
        load = "load" in name
        words = _vglobal(name, reg if load else 0, 0 if load else reg, vaddr, saddr, offset)
        regs = set(range(reg, reg + n))
    else:
        name = rng.choice(sorted(_DS))
        n = _DS[name]
        reg = rng.randrange(5, VG - n + 1)
        load = "load" in name
        if "2addr" in name:
            off0, off1 = rng.randrange(256), rng.randrange(256)
            data1 = 0 if load else rng.randrange(5, VG)
        else:
            off = rng.choice([0, 256, 512, 1008])
            off0, off1, data1 = off & 0xFF, off >> 8, 0
        words = _ds(name, reg if load else 0, 2, 0 if load else reg, data1, off0, off1)
        regs = set(range(reg, reg + n)) | ({data1} if data1 else set())
    inst = isa.decode(words + [0])
    assert inst.name == name, (inst.name, name)
    return words, regs


def memory_program(seed: int, body: int = 40) -> list[int]:
    """Lane addresses in v2 (lane * 16) and v[3:4] (s[102:103], the buffer, + v2), v5..v15 set from v0, then
    random accesses mixed with VALU and SALU instructions, loads waited for before their
    registers are used again."""
    rng = random.Random(seed)
    code = _sop1("s_mov_b32", BUF_SGPR, 0) + _sop1("s_mov_b32", BUF_SGPR + 1, 128)   # the wave's buffer: s0
    code += _sop1("s_mov_b32", SAVED_EXEC, EXEC_LO) + _sop1("s_mov_b32", EXEC_LO, 193)
    code += _vop3(isa.by_name("v_mbcnt_lo_u32_b32").op, 1, [193, 128])
    code += _vop2(isa.by_name("v_lshlrev_b32").op, 2, 132, 1)
    code += _vop2(isa.by_name("v_add_nc_u32").op, 3, BUF_SGPR, 2) + _vop1(isa.by_name("v_mov_b32").op, 4, BUF_SGPR + 1)
    mul, xor = isa.by_name("v_mul_lo_u32"), isa.by_name("v_xor_b32")
    for r in range(5, VG):
        code += _vop3(mul.op, r, [256, 255]) + [rng.getrandbits(32) | 1]
        code += _vop2(xor.op, r, 255, r) + [rng.getrandbits(32)]
    code += _sop1("s_mov_b32", EXEC_LO, SAVED_EXEC)
    names = _names(lambda i: True)
    # a store of the VALU result just computed, a load of it back, and an add of what came
    code += _vop2(isa.by_name("v_add_nc_u32").op, 8, 256 + 5, 6)
    code += _vglobal("global_store_b32", 0, 8, 2, BUF_SGPR, 0) + _vglobal("global_load_b32", 9, 0, 2, BUF_SGPR, 0)
    code += _sopp("s_wait_loadcnt", 0) + _vop2(isa.by_name("v_add_nc_u32").op, 10, 256 + 9, 9)
    loading = set()         # registers a load in flight writes
    for _ in range(body):
        x = rng.random()
        if x < 0.5:
            words, regs = _random_memory(rng)
            if regs & loading:
                code += _sopp("s_wait_loadcnt_dscnt", 0)
                loading = set()
            code += words
            if "load" in isa.decode(words + [0]).name:
                loading |= regs
            if rng.random() < 0.5:
                code += _sopp(rng.choice(["s_wait_loadcnt", "s_wait_dscnt", "s_wait_storecnt"]), 0)
                code += _sopp("s_wait_loadcnt_dscnt", 0)
                loading = set()
        elif x < 0.85:
            code += _sopp("s_wait_loadcnt_dscnt", 0)
            loading = set()
            inst = _random_valu(rng, sorted(names))
            while isa.decode(inst + [0, 0]).f.get("vdst") in (1, 2, 3, 4):   # keep the addresses
                inst = _random_valu(rng, sorted(names))
            code += inst
        elif x < 0.93:
            code += _random_salu(rng, 1)[0]
        else:
            code += _sop1("s_mov_b32", EXEC_LO, SAVED_EXEC)
    code += _sopp("s_wait_loadcnt_dscnt", 0)
    code += _sop1("s_mov_b64", 90, 106) + _sop1("s_mov_b64", 92, EXEC_LO) + _sop2("s_cselect_b32", 94, 129, 128)
    return code + _sopp("s_endpgm")


class _ModelMemory(Workgroup):
    """The model's context for a wave alone: the global buffer and its own LDS."""

    def __init__(self, gbytes: bytes):
        self.mem = GlobalMemory(base=GBUF)
        assert self.mem.allocate(len(gbytes), "buffer").base == GBUF
        self.mem.write_bytes(GBUF, gbytes)
        self.lds = np.zeros(LDS_BYTES, dtype=np.uint8)

    def record(self, *args, **kw):
        pass


@pytest.mark.parametrize("preset,seed", [("fpga", 31), ("default", 32)])
def test_memory_programs_match_the_model(preset, seed):
    """Global and LDS loads and stores of every width, both address forms, with VALU and SALU
    instructions between: every wave's VGPRs and SGPRs, its LDS and the buffer equal the
    model's (each wave has a buffer of its own, at s0; the model runs them one after another)."""
    rng = random.Random(seed)
    launches = vector_launches(seed, PRESETS[preset].wave_slots)
    for w, state in enumerate(launches):
        state["sgpr"][0] = GBUF + w * GBUF_BYTES
    gbytes = bytes(rng.getrandbits(8) for _ in range(GBUF_BYTES * len(launches)))
    code = memory_program(seed)
    log = {}
    regs, errors, cycles = rtl_run(preset, code, launches, seed=seed, log=log, gbytes=gbytes)
    assert errors == []
    glob = gbytes
    for w, state in enumerate(launches):
        ctx = _ModelMemory(glob)
        ref = model_vector_run(code, state, ctx=ctx)[0]
        glob = ctx.mem.read_bytes(GBUF, len(glob)).tobytes()
        bad = [f"v{r}[{n}]: rtl {log['vgprs'][w][r, n]:#x} model {ref.v[r, n]:#x}"
               for r in range(VG) for n in range(32) if log["vgprs"][w][r, n] != ref.v[r, n]]
        assert not bad, f"wave {w}: {len(bad)} lanes differ: " + ", ".join(bad[:8])
        assert regs[w][:100] == ref.s[:100]
        assert log["lds"][w] == bytes(ctx.lds)
    assert log["glob"] == bytes(glob)
