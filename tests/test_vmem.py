"""hdl.mem.vmem.VecMemUnit (with hdl.mem.l0.L0Array) in Amaranth's simulator, against the model.

The unit is driven directly: one Python process per SIMD issues requests, one per SIMD takes
the response beats (random back-pressure), and a memory responder of this file serves the
``mem`` port from its own byte image (random ``ready``, configurable latency, responses out of
order). Every expectation comes from the model: the instructions accepted by the unit are
replayed in acceptance order by ``sim.memory_ops.build_global`` on a ``sim.memory.GlobalMemory``
(the unit processes memory in that order, so each load, atomic and the final memory equal the
model's), and line counts come from ``sim.memory_ops.lines_touched``.
"""
from __future__ import annotations

import dataclasses
import random
import time

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.config import PRESETS
from hdl.isa_tables import OpId, info_of
from hdl.mem.l0 import L0Array
from hdl.mem.memport import MemKind
from dcu.memmodel import map_words
from hdl.mem.vmem import COUNTERS, ErrorCause, Ext, OpKind, VecMemUnit, op_table, rtl_ops
from isa import Fmt, Inst, by_name
from sim.memory import GlobalMemory
from sim.memory_ops import ATOMIC_OPS, build_global, lines_touched
from sim.wave import NULL, Wave
from tests.lint import convert_and_lint
from tests.reqrows import RequestRows, whole_layout

U32 = np.uint32
M32 = 0xFFFF_FFFF
LANES = 32
LINE = 128
BUF = 32 * 1024                          # the test buffer (the aperture)
TABLE = op_table()
LOADS = sorted(rtl_ops("vmem_load"), key=lambda o: o.name)
STORES = sorted(rtl_ops("vmem_store"), key=lambda o: o.name)
ATOMICS = sorted(rtl_ops("vmem_atomic"), key=lambda o: o.name)
CFG = PRESETS["default"]
BEATS4 = CFG.replace(lanes=4, coalesce_lanes=4)   # 4-lane response beats, as on fpga


# --------------------------------------------------------------------------------------
# Instructions and the model's answer
@dataclasses.dataclass
class VInst:
    simd: int
    wave: int
    op: OpId
    exec: int
    addrs: list                      # 32 byte addresses (the SIMD's per-lane addresses)
    data: np.ndarray                 # (32, 4) uint32: up to four data dwords per lane
    returns: bool = False
    vdst: int = 0
    at: int = 0                      # issue no earlier than this cycle
    seq: int = 0
    accepted: int | None = None      # cycle the unit took it
    beats: list = dataclasses.field(default_factory=list)   # (cycle, payload)
    counters: dict | None = None     # after it retired (serial runs)

    @property
    def done(self):
        return bool(self.beats) and self.beats[-1][1].last

    @property
    def name(self):
        return self.op.name.lower()


class _Ctx:
    def __init__(self, mem, group):
        self.mem, self.lines, self.coalesce_lanes = mem, None, group

    def record(self, w, counter, lines=None, ds_cycles=None):
        self.lines = lines


def model_exec(mem: GlobalMemory, ins: VInst, exec_mask: int, group: int = LANES):
    """Run ``ins`` with the model's handler; returns (result dwords (4, 32), line requests of a
    coalescer merging ``group`` lanes)."""
    f = dict(saddr=NULL, ioffset=0, vaddr=0, vsrc=4, vdst=16, th=int(ins.returns), scope=0, sve=0, nv=0)
    inst = Inst(info=by_name(ins.name), fmt=Fmt.VGLOBAL, pc=0, words=(0, 0, 0), size=12, literal=None, f=f)
    w = Wave(0, 32, 0)
    w.s[126] = exec_mask
    a = np.array(ins.addrs, dtype=np.uint64)
    w.v[0], w.v[1] = (a & M32).astype(U32), (a >> np.uint64(32)).astype(U32)
    w.v[4:8] = ins.data.T
    ctx = _Ctx(mem, group)
    build_global(inst)(w, ctx)
    return w.v[16:20].copy(), ctx.lines


def expected_beats(ins: VInst, result, group: int = LANES):
    """(vdst, grp, register's 32 dwords or None, write, store) per beat: each destination
    register's lane groups of ``group`` lanes in order, or one beat without a register."""
    kind, _, _, beats, _ = TABLE[ins.op]
    regs = beats if kind == OpKind.LOAD else int(kind == OpKind.ATOMIC and ins.returns)
    if regs:
        return [(ins.vdst + k, g, result[k], 1, 0) for k in range(regs) for g in range(LANES // group)]
    store = kind in (OpKind.STORE, OpKind.ATOMIC, OpKind.WB)
    return [(ins.vdst, 0, None, 0, int(store))]


def register(ins: VInst, group: int, k: int = 0):
    """Register ``vdst + k`` of an answer, 32 lanes reassembled from its beats of ``group``
    lanes, which must have come in lane-group order."""
    beats = [p for _, p in ins.beats if p.vdst == ins.vdst + k]
    assert [p.grp for p in beats] == list(range(LANES // group)), f"{ins.name}: groups {[p.grp for p in beats]}"
    return np.array([(p.data >> (32 * i)) & M32 for p in beats for i in range(group)], dtype=U32)


# --------------------------------------------------------------------------------------
# The harness
class Run:
    """One simulation of a VecMemUnit serving ``instrs`` (see module docstring).

    ``serial``: one instruction in flight at a time, the counters recorded after each.
    ``lat``: (min, max) memory latency in cycles, or a function (request) -> latency.
    """

    def __init__(self, cfg, instrs, *, seed=1, lat=(1, 24), mem_ready=0.8, resp_ready=0.8, gap=0.3,
                 serial=False, max_cycles=20_000, unit=None, image=None, aperture=None, poke=None,
                 buffer_map=None):
        self.cfg, self.instrs, self.serial = cfg, instrs, serial
        self.rng = random.Random(seed)
        self.lat, self.mem_ready, self.resp_ready, self.gap = lat, mem_ready, resp_ready, gap
        self.max_cycles = max_cycles
        self.dut = VecMemUnit(cfg, **(unit or {}))
        self.top = RequestRows(cfg, self.dut)      # the SIMDs' requests, served a row at a time
        self.gm = GlobalMemory()
        self.alloc = self.gm.allocate(BUF, "buf")
        self.base = self.alloc.base
        init = image if image is not None else np.frombuffer(random.Random(seed + 7).randbytes(BUF), np.uint8)
        self.gm.write_bytes(self.base, init)
        self.image = np.array(init, dtype=np.uint8)        # the memory behind the unit's port
        self.aperture = aperture or (self.base, BUF)
        self.buffer_map = buffer_map                       # [(base, end)]: the unit's map_ranges
        self.poke = poke or {}                             # edge -> fn(run): change memory behind the unit
        self.mem_log = []                                  # [edge accepted, edge answered, kind, tag, addr]
        seqs = {}
        for ins in instrs:
            key = (ins.simd, ins.wave)
            ins.seq = seqs.get(key, 0)
            seqs[key] = ins.seq + 1
        self.by_key = {(i.simd, i.wave, i.seq): i for i in instrs}
        self.elapsed = None

    # -- processes ----------------------------------------------------------------------
    def _payload(self, ins):
        return whole_layout(self.cfg).const({
            "wave": ins.wave, "seq": ins.seq, "op": ins.op, "exec": ins.exec,
            "addr": sum((a & (2 ** 64 - 1)) << (64 * i) for i, a in enumerate(ins.addrs)),
            "data": sum(int(ins.data[i, j]) << (128 * i + 32 * j) for i in range(LANES) for j in range(4)),
            "offset0": 0, "offset1": 0, "vdst": ins.vdst, "returns": int(ins.returns)})

    async def _issue(self, ctx, s, queue, edge=0):
        port = self.dut.req[s]
        for ins in queue:
            while edge < ins.at or self.gap and self.rng.random() < self.gap:
                await ctx.tick()
                edge += 1
            ctx.set(self.top.whole[s], self._payload(ins))
            ctx.set(port.valid, 1)
            while True:
                _, _, ready = await ctx.tick().sample(port.ready)
                edge += 1
                if ready:
                    break
            ins.accepted = edge
            ctx.set(port.valid, 0)
            if self.serial:
                while not ins.done:
                    await ctx.tick()
                    edge += 1
                ins.counters = {n: getattr(ctx.get(self.dut.counters), n) for n in COUNTERS}
        return edge

    async def _collect(self, ctx, s):
        port, edge, held = self.dut.resp[s], 0, None
        while True:
            ready = self.rng.random() < self.resp_ready
            ctx.set(port.ready, ready)
            _, _, valid, p = await ctx.tick().sample(port.valid, port.payload)
            edge += 1
            # stream rules: a beat offered and not taken stays offered, unchanged
            assert held is None or (valid and p == held), f"SIMD {s}: response withdrawn or changed while stalled"
            held = p if valid and not ready else None
            if valid and ready:
                key = (s, p.wave, p.seq)
                assert key in self.by_key, f"SIMD {s}: response for wave {p.wave} seq {p.seq}, which was not issued"
                ins = self.by_key[key]
                assert not ins.done, f"SIMD {s} wave {p.wave} seq {p.seq}: a beat after the last one"
                ins.beats.append((edge, p))

    def _latency(self, req):
        if callable(self.lat):
            return self.lat(req)
        return self.rng.randint(*self.lat)

    def _serve(self, req):
        """Apply one request to the image (in the order accepted); return (data, fault)."""
        off = req.addr - self.base
        size = 4 if req.kind == MemKind.ATOMIC else LINE
        if off < 0 or off + size > BUF:
            return 0, 1
        if req.kind == MemKind.READ:
            return int.from_bytes(self.image[off:off + LINE].tobytes(), "little"), 0
        if req.kind == MemKind.WRITE:
            for b in range(LINE):
                if req.mask >> b & 1:
                    self.image[off + b] = (req.data >> (8 * b)) & 0xFF
            return 0, 0
        old = int.from_bytes(self.image[off:off + 4].tobytes(), "little")
        fn = ATOMIC_OPS[req.atomic.name.lower()]
        new = fn(old, req.data & M32, (req.data >> 32) & M32) & M32
        self.image[off:off + 4] = np.frombuffer(new.to_bytes(4, "little"), np.uint8)
        return old, 0

    async def _memory(self, ctx):
        dut, inflight, edge, held, pick = self.dut, [], 0, None, None
        while True:
            if edge in self.poke:
                self.poke[edge](self)
            due = [x for x in inflight if x[0] <= edge]
            if pick is None and due:                       # a response offered stays offered until taken
                pick = self.rng.choice(due)
            if pick:
                ctx.set(dut.mem_resp.valid, 1)
                ctx.set(dut.mem_resp.payload, {"tag": pick[1], "data": pick[2], "fault": pick[3]})
            else:
                ctx.set(dut.mem_resp.valid, 0)
            ready = self.rng.random() < self.mem_ready
            ctx.set(dut.mem.ready, ready)
            _, _, valid, req, rready = await ctx.tick().sample(dut.mem.valid, dut.mem.payload, dut.mem_resp.ready)
            edge += 1
            assert held is None or (valid and req == held), "memory request withdrawn or changed while stalled"
            held = req if valid and not ready else None
            if pick and rready:
                inflight.remove(pick)
                self.mem_log[pick[4]][1] = edge
                pick = None
            if valid and ready:
                d, fault = self._serve(req)
                self.mem_log.append([edge, None, req.kind, req.tag, req.addr])
                assert not any(x[1] == req.tag for x in inflight), f"tag {req.tag} reused while in flight"
                inflight.append((edge + self._latency(req), req.tag, d, fault, len(self.mem_log) - 1))

    async def _main(self, ctx):
        ctx.set(self.dut.aperture_base, self.aperture[0])
        ctx.set(self.dut.aperture_size, self.aperture[1])
        if self.buffer_map is not None:
            base, end = map_words(self.buffer_map, self.dut.map_ranges)
            ctx.set(self.dut.map_base.as_value(), base)
            ctx.set(self.dut.map_end.as_value(), end)
        edge = 0
        while not all(i.done for i in self.instrs):
            await ctx.tick()
            edge += 1
            if edge > self.max_cycles:
                stuck = [f"SIMD {i.simd} wave {i.wave} seq {i.seq} {i.name} (accepted at {i.accepted}, "
                         f"{len(i.beats)} beats)" for i in self.instrs if not i.done]
                raise AssertionError(f"watchdog: {len(stuck)} instructions not retired after {self.max_cycles} "
                                     f"cycles: {stuck[:6]}; counters {ctx.get(self.dut.counters)}")
        await ctx.tick()
        self.cycles = edge + 1
        self.counters = {n: getattr(ctx.get(self.dut.counters), n) for n in COUNTERS}
        self.error = ctx.get(self.dut.error)

    @staticmethod
    def _bind(fn, *args):
        async def process(ctx):
            await fn(ctx, *args)
        return process

    def run(self):
        sim = Simulator(self.top)
        sim.add_clock(1e-8)
        sim.add_testbench(self._main)
        sim.add_testbench(self._memory, background=True)
        S = self.cfg.simds_per_cu
        if self.serial:
            async def serial(ctx):
                edge = 0
                for ins in self.instrs:
                    edge = await self._issue(ctx, ins.simd, [ins], edge)
            sim.add_testbench(serial, background=True)
        else:
            for s in range(S):
                sim.add_testbench(self._bind(self._issue, s, [i for i in self.instrs if i.simd == s]), background=True)
        for s in range(S):
            sim.add_testbench(self._bind(self._collect, s), background=True)
        t = time.process_time()
        sim.run()
        self.elapsed = time.process_time() - t
        return self

    # -- checks ----------------------------------------------------------------------------
    def check(self, faults=None):
        """Compare every instruction's beats (per destination register, its lane groups of
        ``resp_lanes`` lanes in order, each with its group's mask and lanes) and the final memory
        with the model, replaying the instructions in acceptance order; per-wave retirement order;
        returns the model's lines touched per instruction. ``faults``: {instruction index: lanes
        the unit must drop}."""
        faults = faults or {}
        R = self.cfg.resp_lanes
        order = sorted(range(len(self.instrs)), key=lambda k: self.instrs[k].accepted)
        lines = {}
        for k in order:
            ins = self.instrs[k]
            mask = ins.exec & ~faults.get(k, 0)
            result, lines[k] = model_exec(self.gm, ins, mask, self.cfg.coalesce_lanes)
            want = expected_beats(ins, result, R)
            where = f"instruction {k} ({ins.name}, SIMD {ins.simd} wave {ins.wave} seq {ins.seq})"
            assert len(ins.beats) == len(want), f"{where}: {len(ins.beats)} beats, expected {len(want)}"
            # the beats in order (registers, each one's lane groups), each with its group's lanes
            for n, ((_, got), (vdst, grp, value, write, store)) in enumerate(zip(ins.beats, want)):
                gmask = mask >> (R * grp) & ((1 << R) - 1)
                assert (got.vdst, got.grp, got.write, got.store, got.last, got.mask) == \
                    (vdst, grp, write, store, int(n == len(want) - 1), gmask), f"{where} beat {n}: {got}"
                if value is not None:
                    for i in range(R):
                        lane = R * grp + i
                        if gmask >> i & 1:
                            g = (got.data >> (32 * i)) & M32
                            assert g == int(value[lane]), (f"{where} beat {n} lane {lane} (address "
                                                           f"{ins.addrs[lane]:#x}): {g:#010x}, "
                                                           f"model {int(value[lane]):#010x}")
        got = self.image
        want = self.gm.read_bytes(self.base, BUF)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"memory differs at {bad.size} bytes, first at {self.base + int(bad[0]):#x}: " \
                              f"{int(got[bad[0]]):#x}, model {int(want[bad[0]]):#x}"
        # loads retire in issue order with the wave's loads, stores with its stores (the counters)
        for key in {(i.simd, i.wave, i.beats[-1][1].store) for i in self.instrs}:
            wave = [i for i in self.instrs if (i.simd, i.wave, i.beats[-1][1].store) == key]
            ends = [i.beats[-1][0] for i in wave]
            assert ends == sorted(ends), \
                f"SIMD {key[0]} wave {key[1]} store={key[2]} retired out of issue order: {ends}"
        return lines


# --------------------------------------------------------------------------------------
# Instruction generators
def _data(rng):
    return np.array([[rng.getrandbits(32) for _ in range(4)] for _ in range(LANES)], dtype=U32)


def make(rng, base, simd, wave, op, pattern, exec_mask=None, returns=False, vdst=None, span=BUF):
    """An instruction with lane addresses from ``pattern``: "unit" (consecutive), ("stride", n),
    "random" (any byte, so unaligned and line-straddling accesses), "aligned" (random, aligned
    to the access size), ("same", addr) for every lane, or a list of 32 offsets."""
    size = TABLE.get(op, (0, 4))[1] or 4
    top = span - 16
    if pattern == "unit":
        start = rng.randrange(0, top - LANES * size) // size * size
        offs = [start + size * i for i in range(LANES)]
    elif pattern == "random":
        offs = [rng.randrange(0, top) for _ in range(LANES)]
    elif pattern == "aligned":
        offs = [rng.randrange(0, top) // size * size for _ in range(LANES)]
    elif isinstance(pattern, tuple) and pattern[0] == "stride":
        n = pattern[1]
        start = rng.randrange(0, max(1, top - LANES * n))
        offs = [start + n * i for i in range(LANES)]
    elif isinstance(pattern, tuple) and pattern[0] == "same":
        offs = [pattern[1]] * LANES
    else:
        offs = list(pattern)
    ex = rng.getrandbits(32) if exec_mask is None else exec_mask
    return VInst(simd, wave, op, ex, [base + o for o in offs], _data(rng), returns,
                 rng.randrange(0, 200) if vdst is None else vdst)


def base_of():
    return GlobalMemory().allocate(BUF, "buf").base


def line_load(rng, base, line, simd=0, wave=0, op=OpId.GLOBAL_LOAD_B32, shift=0):
    """A fully coalesced load of one line (lanes rotated by ``shift`` dwords)."""
    return make(rng, base, simd, wave, op, [LINE * line + 4 * ((i + shift) % LANES) for i in range(LANES)],
                exec_mask=M32)


# --------------------------------------------------------------------------------------
# Tables
def test_op_table_matches_isa():
    assert set(TABLE) == set(LOADS + STORES + ATOMICS + [OpId.GLOBAL_INV, OpId.GLOBAL_WB])
    for op in LOADS:
        info = info_of(op)
        kind, size, ext, beats, _ = TABLE[op]
        assert kind == OpKind.LOAD and size == info.data_bits // 8 and beats == max(1, info.dst_bits // 32)
        suffix = op.name.rsplit("_", 1)[1]
        assert ext == (Ext[suffix] if suffix in ("U8", "I8", "U16", "I16") else Ext.RAW)
    for op in STORES:
        assert TABLE[op][:2] == (OpKind.STORE, info_of(op).data_bits // 8)
    for op in ATOMICS:
        assert TABLE[op][0] == OpKind.ATOMIC and TABLE[op][4].name.lower() in ATOMIC_OPS


def test_rejects_bad_sizes():
    with pytest.raises(ValueError, match="tag bits"):
        VecMemUnit(CFG, mshrs=16, write_slots=60)
    with pytest.raises(ValueError, match="at least 2"):
        VecMemUnit(CFG, entries=1)
    with pytest.raises(ValueError, match="128 bytes"):
        VecMemUnit(CFG.replace(l0_line=64))


# --------------------------------------------------------------------------------------
# Everything at once, against the model
PATTERNS = ["unit", "random", "aligned", ("stride", 4), ("stride", 8), ("stride", 3), ("stride", 132),
            ("stride", 0), ("stride", 1)]


def random_program(rng, base, n, span=4096, simds=2, waves=4, ops=None):
    ops = ops or LOADS + STORES + ATOMICS + [OpId.GLOBAL_INV, OpId.GLOBAL_WB]
    prog = []
    for k in range(n):
        op = ops[k % len(ops)] if k < len(ops) else rng.choice(ops)
        simd, wave = rng.randrange(simds), rng.randrange(waves)
        if op in ATOMICS:
            pat = rng.choice(["aligned", ("same", rng.randrange(0, span - 4) & ~3), ("stride", 4), ("stride", 8)])
            ins = make(rng, base, simd, wave, op, pat, span=span, returns=rng.random() < 0.5)
            ins.addrs = [a & ~3 for a in ins.addrs]
        else:
            ins = make(rng, base, simd, wave, op, rng.choice(PATTERNS), span=span)
        if rng.random() < 0.15:
            ins.exec = rng.choice([0, M32, 1 << rng.randrange(32)])
        prog.append(ins)
    return prog


@pytest.mark.parametrize("order, group, in_place, beat, stage", [
    ("per_wave", 32, False, 32, False), ("in_order", 32, False, 32, False), ("per_wave", 8, True, 32, False),
    ("in_order", 4, False, 32, False), ("per_wave", 4, True, 4, False), ("in_order", 8, False, 8, False),
    ("per_wave", 4, False, 16, False), ("per_wave", 4, True, 4, True), ("in_order", 32, False, 32, True)])
def test_random_against_model(order, group, in_place, beat, stage):
    """Every load/store width, all atomics, global_inv/wb; random, strided, unaligned and
    line-straddling addresses with partial EXEC from 2 SIMDs x 4 waves; memory latency 1-40
    cycles with responses out of order; random back-pressure on ``mem`` and ``resp``; the
    coalescer merging the whole wave or groups of 8 or 4 lanes, from a copy of the request
    or (as on the ``fpga`` preset) from the SIMD's request in place; response beats of the
    whole wave or (banked register files) of 4 lanes as on ``fpga``, 8 (one result-buffer
    memory) or 16 (two side by side, each written by two 4-lane request groups); the group's
    lane fields registered a cycle ahead (``coalesce_stage``, as on ``fpga``) or not."""
    rng = random.Random(11)
    prog = random_program(rng, base_of(), 60)
    cfg = CFG.replace(return_order=order, coalesce_lanes=group, coalesce_in_place=in_place, coalesce_stage=stage)
    if beat < LANES:
        cfg = cfg.replace(lanes=beat)
    r = Run(cfg, prog, seed=3, lat=(1, 40)).run()
    lines = r.check()
    assert not r.error.valid
    assert r.counters["instructions"] == len(prog)
    assert r.counters["atomics"] == sum(bin(i.exec).count("1") for i in prog if i.op in ATOMICS)
    loads = [k for k, i in enumerate(prog) if i.op in LOADS]
    assert r.counters["hits"] + r.counters["misses"] == sum(lines[k] for k in loads)
    assert r.counters["rq_occupancy"] == 0 and 1 < r.counters["rq_max"] <= 16
    # responses came back out of order at the memory port
    answered = [e[1] for e in sorted(r.mem_log)]
    assert answered != sorted(answered)


def test_random_on_fpga_preset():
    """The ``fpga`` preset itself: 4-lane beats and request groups split in place, its small
    L0 and two wave slots."""
    cfg = PRESETS["fpga"]
    rng = random.Random(28)
    prog = random_program(rng, base_of(), 60, waves=cfg.wave_slots)
    r = Run(cfg, prog, seed=5, lat=(1, 40)).run()
    r.check()
    assert not r.error.valid and r.counters["instructions"] == len(prog)


ROWS4 = BEATS4.replace(shared_mem_request=True, lds_in_place=True, lds_banks=4, coalesce_in_place=True,
                       request_in_rows=True)


@pytest.mark.parametrize("cfg, in_place", [(CFG, False), (CFG, True), (BEATS4, True), (ROWS4, True),
                                           (ROWS4.replace(coalesce_stage=True), True)],
                         ids=["32", "32-in-place", "4-in-place", "4-rows", "4-rows-staged"])
def test_small_tables_and_heavy_backpressure(cfg, in_place):
    """Two entries, miss registers, parked lines and write slots, and a two-deep memory
    queue: every resource runs out and the unit waits for it; ``mem`` ready 30% of the
    time, ``resp`` 40% (4-lane beats: a stalled beat keeps its row; the request read a
    4-lane row at a time)."""
    rng = random.Random(12)
    prog = random_program(rng, base_of(), 30)
    unit = dict(entries=2, mshrs=2, waits=2, write_slots=2, mem_queue=2)
    r = Run(cfg.replace(coalesce_in_place=in_place), prog, seed=4, lat=(1, 30), mem_ready=0.3, resp_ready=0.4,
            unit=unit).run()
    r.check()
    assert r.counters["rq_max"] == 2


# --------------------------------------------------------------------------------------
# Coalescing, hits, misses, LRU
@pytest.mark.parametrize("group", [32, 8])
def test_lines_touched_per_instruction(group):
    """One request per distinct line of each group of ``coalesce_lanes`` lanes (the whole wave,
    or 8 lanes as on the ``fpga`` preset), equal to the model's ``lines_touched``, for unit and
    misaligned unit strides, wide strides, random, straddling and partial-EXEC accesses."""
    rng = random.Random(13)
    B = base_of()
    # (op, addresses, EXEC, line requests with 32-lane groups, with 8-lane groups)
    cases = [(OpId.GLOBAL_LOAD_B32, [4 * i for i in range(LANES)], M32, 1, 4),    # fully coalesced: one line
             (OpId.GLOBAL_LOAD_B32, [64 + 4 * i for i in range(LANES)], M32, 2, 4),
             (OpId.GLOBAL_STORE_B32, [256 + 4 * i for i in range(LANES)], M32, 1, 4),
             (OpId.GLOBAL_LOAD_B128, [16 * i for i in range(LANES)], M32, 4, 4),
             (OpId.GLOBAL_LOAD_B64, [1024 + 8 * i + 4 for i in range(LANES)], M32, 3, 6),
             (OpId.GLOBAL_LOAD_U8, [2048 + i for i in range(LANES)], M32, 1, 4),
             (OpId.GLOBAL_LOAD_B32, [128 * i for i in range(LANES)], M32, 32, 32),
             (OpId.GLOBAL_LOAD_B32, [126 + 128 * i for i in range(LANES)], M32, 33, 36),   # every lane straddles
             (OpId.GLOBAL_STORE_B96, [120 + 128 * i for i in range(LANES)], 0x0F0F_0F0F, 20, 20),
             (OpId.GLOBAL_LOAD_B32, [4 * i for i in range(LANES)], 0, 0, 0),
             (OpId.GLOBAL_LOAD_I16, [128 * (i % 3) + 2 * i for i in range(LANES)], 0x8000_0001, 2, 2),
             (OpId.GLOBAL_STORE_B64, [4 * i for i in range(LANES)], M32, 2, 5)]    # lanes overlap: see below
    prog = [make(rng, B, 0, 0, op, pat, exec_mask=ex) for op, pat, ex, _, _ in cases]
    prog += [make(rng, B, 1, 1, rng.choice(LOADS), rng.choice(PATTERNS)) for _ in range(8)]
    r = Run(CFG.replace(coalesce_lanes=group), prog, serial=True, seed=5).run()
    lines = r.check()
    before = 0
    for k, ins in enumerate(prog):
        got = ins.counters["lines"] - before
        before = ins.counters["lines"]
        if k < len(cases):
            assert lines[k] == cases[k][3 if group == 32 else 4]
        if k == len(cases) - 1:
            # stores whose lanes write the same bytes go one lane per request (the later lane
            # wins); lane 31 also writes the next line
            assert got == 33, got
        else:
            assert got == lines[k], f"instruction {k} ({ins.name}): {got} line requests, model {lines[k]}"
    assert lines_touched(np.array([B + 4 * i for i in range(LANES)]), 4) == 1


class LRUModel:
    """A set-associative cache of line numbers with least-recently-used replacement."""

    def __init__(self, sets, ways):
        self.sets, self.ways = [[] for _ in range(sets)], ways

    def access(self, line):
        s = self.sets[line % len(self.sets)]
        hit = line in s
        if hit:
            s.remove(line)
        elif len(s) == self.ways:
            s.pop(0)
        s.append(line)
        return hit


def test_hits_misses_and_lru():
    """A known sequence of single-line loads over two sets, one at a time: each hits or
    misses exactly as an LRU cache of the configuration's geometry; a store does not allocate
    but updates a present line, and global_inv empties the cache."""
    rng = random.Random(14)
    B = base_of()
    sets, ways = CFG.l0_sets, CFG.l0_ways
    seq = [0, 1, 2, 3, 0, 4, 0, 1, 3, 2, 4, 0, 5, 6, 2, 3]           # line indices within set 0
    seq += [rng.randrange(7) for _ in range(14)]
    lines = [x * sets + (k % 2) * (x % 2) for k, x in enumerate(seq)]  # some in set 1
    prog = [line_load(rng, B, ln, shift=k) for k, ln in enumerate(lines)]
    cold = 7 * sets
    prog += [make(rng, B, 0, 0, OpId.GLOBAL_STORE_B32, [LINE * cold + 4 * i for i in range(LANES)], exec_mask=M32),
             line_load(rng, B, cold),                                  # no-write-allocate: a miss
             make(rng, B, 0, 0, OpId.GLOBAL_STORE_B16, [LINE * cold + 2 * i for i in range(LANES)], exec_mask=M32),
             line_load(rng, B, cold),                                  # updated on hit: a hit, new data
             make(rng, B, 0, 0, OpId.GLOBAL_INV, "unit", exec_mask=M32),
             line_load(rng, B, cold)]                                   # invalidated: a miss
    r = Run(CFG, prog, serial=True, seed=6).run()
    r.check()
    model = LRUModel(sets, ways)
    want = [model.access(ln) for ln in lines] + [None, False, None, True, None, False]
    hits = misses = 0
    for k, ins in enumerate(prog):
        dh, dm = ins.counters["hits"] - hits, ins.counters["misses"] - misses
        hits, misses = ins.counters["hits"], ins.counters["misses"]
        if want[k] is not None:
            line = lines[k] if k < len(lines) else cold
            assert (dh, dm) == ((1, 0) if want[k] else (0, 1)), \
                f"load {k} of line {line}: {dh} hits, {dm} misses; LRU model: {'hit' if want[k] else 'miss'}"
    assert sum(w is False for w in want) == misses and sum(w is True for w in want) == hits


# --------------------------------------------------------------------------------------
# Atomics
@pytest.mark.parametrize("cfg", [CFG, BEATS4], ids=["32", "4"])
def test_atomics_every_op(cfg):
    """Every global atomic, returning and not, with all 32 lanes on one address (performed in
    lane order), on distinct addresses and with partial EXEC; old values and memory equal the
    model's (each old value in its lane's row of the result buffer with 4-lane beats)."""
    rng = random.Random(15)
    B = base_of()
    prog = []
    for k, op in enumerate(ATOMICS):
        for returns in (True, False):
            same = make(rng, B, k % 2, k % 4, op, ("same", 64 * k), exec_mask=M32, returns=returns)
            if op == OpId.GLOBAL_ATOMIC_CMPSWAP_B32:       # make some compares succeed
                same.data[:, 1] = same.data[np.arange(LANES) - 1, 0]
            prog.append(same)
            prog.append(make(rng, B, k % 2, k % 4, op, [2048 + 64 * k + 4 * i for i in range(LANES)], returns=returns))
    for ins in prog:
        if ins.op in (OpId.GLOBAL_ATOMIC_INC_U32, OpId.GLOBAL_ATOMIC_DEC_U32):
            ins.data[:, 0] &= 7                             # wrap limits that are reached
    r = Run(cfg, prog, seed=7).run()
    r.check()
    assert r.counters["atomics"] == sum(bin(i.exec).count("1") for i in prog)
    assert sum(e[2] == MemKind.ATOMIC for e in r.mem_log) == r.counters["atomics"]


def test_atomic_invalidates_line():
    """An atomic drops its line from the L0: the next load of it misses and sees the result."""
    rng = random.Random(16)
    B = base_of()
    prog = [line_load(rng, B, 3), line_load(rng, B, 3, shift=1),
            make(rng, B, 0, 0, OpId.GLOBAL_ATOMIC_ADD_U32, ("same", 3 * LINE + 8), exec_mask=0x11),
            line_load(rng, B, 3, shift=2)]
    r = Run(CFG, prog, serial=True, seed=8).run()
    r.check()
    assert [i.counters["hits"] for i in prog] == [0, 1, 1, 1]
    assert [i.counters["misses"] for i in prog] == [1, 1, 1, 2]


# --------------------------------------------------------------------------------------
# global_inv, global_wb
@pytest.mark.parametrize("cfg", [CFG, BEATS4], ids=["32", "4"])
def test_global_inv_sees_other_writers(cfg):
    """Memory changed behind the unit's back (another CU) is not seen by hits until
    global_inv, which answers once the L0 is empty; the next load misses and gets the new
    bytes."""
    rng = random.Random(17)
    B = base_of()
    prog = [line_load(rng, B, 5), line_load(rng, B, 5, shift=7),
            make(rng, B, 0, 0, OpId.GLOBAL_INV, "unit", exec_mask=M32), line_load(rng, B, 5, shift=9)]
    prog[1].at, prog[2].at = 300, 310

    def other_cu(run):
        run.image[5 * LINE:6 * LINE] ^= 0xFF
    r = Run(cfg, prog, serial=True, seed=9, lat=(5, 10), poke={200: other_cu}).run()
    stale = register(prog[1], cfg.resp_lanes)
    old = r.gm.read_bytes(B + 5 * LINE, LINE).view("<u4")
    assert (stale == old[(np.arange(LANES) + 7) % LANES]).all(), "the hit must return the L0's copy"
    other_cu_model = old ^ U32(M32)
    r.gm.write_bytes(B + 5 * LINE, other_cu_model.view(np.uint8))
    new = register(prog[3], cfg.resp_lanes)
    assert (new == other_cu_model[(np.arange(LANES) + 9) % LANES]).all()
    n = LANES // cfg.coalesce_lanes                                   # line requests per load
    assert [i.counters["misses"] for i in prog] == [n, n, n, 2 * n]
    assert (prog[2].beats[0][1].write, prog[2].beats[0][1].store) == (0, 0)


def test_global_wb_waits_for_write_acks():
    """global_wb answers (storecnt) only after memory acknowledged every earlier write of the
    CU, from either SIMD; with no write in flight it answers at once."""
    rng = random.Random(18)
    B = base_of()
    stores = [make(rng, B, s, w, OpId.GLOBAL_STORE_B32, "random", exec_mask=M32) for s in (0, 1) for w in (0, 1)]
    wb = make(rng, B, 0, 2, OpId.GLOBAL_WB, "unit", exec_mask=M32)
    wb.at = 8
    wb2 = make(rng, B, 1, 3, OpId.GLOBAL_WB, "unit", exec_mask=M32)
    wb2.at = 600
    lat = lambda req: 150 if req.kind == MemKind.WRITE else 3          # noqa: E731
    r = Run(CFG, stores + [wb, wb2], seed=10, lat=lat, gap=0, mem_ready=1, resp_ready=1).run()
    r.check()
    acks = [e[1] for e in r.mem_log if e[2] == MemKind.WRITE]
    assert len(acks) > 4 and wb.beats[0][0] > max(acks)
    assert (wb.beats[0][1].store, wb.beats[0][1].write) == (1, 0)
    assert wb2.beats[0][0] - wb2.accepted <= 6


# --------------------------------------------------------------------------------------
# Errors
@pytest.mark.parametrize("group, stage", [(32, False), (4, False), (1, False), (4, True), (32, True)])
def test_aperture_error_lane_and_address(group, stage):
    """Lanes outside the aperture (below it, or straddling its end) are dropped: memory is
    untouched for them, they leave the response mask, the error names the first such lane of
    the first faulting instruction, and every instruction still completes. Lanes whose last
    byte is the aperture's last are inside. Split a group at a time (4 or 1 lanes), faults are
    found group by group: a group whose every lane faults is passed over, and the error still
    names the lowest faulting lane; also with the group's lanes registered a cycle ahead."""
    rng = random.Random(19)
    B = base_of()
    offs = [4 * i for i in range(LANES)]
    offs[5], offs[7], offs[9] = BUF - 2, BUF - 4, -4                   # straddles the end; ends at it; below
    offs[12:16] = [BUF + 4 * i for i in range(4)]                      # a whole 4-lane group outside
    load = make(rng, B, 1, 2, OpId.GLOBAL_LOAD_B32, offs, exec_mask=M32)
    offs = [8 * i for i in range(LANES)]
    offs[0], offs[3] = BUF, BUF - 8
    store = make(rng, B, 0, 1, OpId.GLOBAL_STORE_B64, offs, exec_mask=M32)
    after = line_load(rng, B, 1)
    r = Run(CFG.replace(coalesce_lanes=group, coalesce_stage=stage), [load, store, after], serial=True, seed=11).run()
    r.check(faults={0: (1 << 5) | (1 << 9) | (0xF << 12), 1: 1})
    e = r.error
    assert (e.valid, e.cause, e.simd, e.wave, e.seq, e.lane, e.addr) == \
        (1, ErrorCause.APERTURE, 1, 2, 0, 5, B + BUF - 2)


@pytest.mark.parametrize("stage", [False, True])
def test_misaligned_atomic_and_bad_opcode(stage):
    CFG_ = CFG.replace(coalesce_stage=stage)
    rng = random.Random(20)
    B = base_of()
    offs = [4 * i for i in range(LANES)]
    offs[3] = 14
    at = make(rng, B, 0, 3, OpId.GLOBAL_ATOMIC_ADD_U32, offs, exec_mask=M32, returns=True)
    r = Run(CFG_, [at], serial=True, seed=12).run()
    r.check(faults={0: 1 << 3})
    assert (r.error.valid, r.error.cause, r.error.lane, r.error.addr) == (1, ErrorCause.MISALIGNED, 3, B + 14)
    bad = make(rng, B, 1, 1, OpId.V_ADD_NC_U32, "unit", exec_mask=M32)
    r = Run(CFG_, [bad], serial=True, seed=13).run()
    assert (r.error.valid, r.error.cause, r.error.simd, r.error.wave) == (1, ErrorCause.OPCODE, 1, 1)
    assert [(b.write, b.store, b.last) for _, b in bad.beats] == [(0, 0, 1)]


@pytest.mark.parametrize("group, stage", [(32, False), (4, True)])
def test_buffer_map_faults_at_byte_granularity(group, stage):
    """With a buffer map, a lane faults when any byte of ``[addr, addr + size)`` lies outside
    every range, also within a line that holds bytes of a range (the memory's READ check is
    per line); a lane whose last byte is a range's last is inside. Loads, stores and atomics;
    the error names the first faulting lane, its byte address, the access and its size."""
    rng = random.Random(23)
    B = base_of()
    ranges = [(B, B + 200), (B + 1024, B + 2048)]            # the first ends mid-line (line 1)
    offs = [4 * i for i in range(LANES)]
    offs[3], offs[6] = 196, 198                             # ends at the range's end; 2 bytes past it
    offs[10], offs[11] = 1020, 1024                         # in the gap before the second; at its start
    offs[20], offs[25] = 2046, 2044                         # straddles the second's end; ends at it
    load = make(rng, B, 1, 2, OpId.GLOBAL_LOAD_B32, offs, exec_mask=M32)
    offs = [8 * i for i in range(LANES)]
    offs[2], offs[5] = 192, 196                             # 8 bytes: ends at the end; 4 past it
    load64 = make(rng, B, 0, 1, OpId.GLOBAL_LOAD_B64, offs, exec_mask=M32)
    offs = [4 * i for i in range(LANES)]
    offs[4], offs[7] = 199, 197                             # one byte past; the last byte
    store = make(rng, B, 0, 1, OpId.GLOBAL_STORE_B16, offs, exec_mask=M32)
    offs = [4 * i for i in range(LANES)]
    offs[8], offs[9] = 196, 200                             # the last dword; the first past the end
    atomic = make(rng, B, 1, 0, OpId.GLOBAL_ATOMIC_ADD_U32, offs, exec_mask=M32, returns=True)
    cfg = CFG.replace(coalesce_lanes=group, coalesce_stage=stage)
    r = Run(cfg, [load, load64, store, atomic], serial=True, seed=17, unit={"map_ranges": 3},
            buffer_map=ranges).run()
    # lanes 16..31 of the b64 load (offsets 128..255 past 200) and the lanes of the others past
    # the first range (offsets 200..): only the listed edge lanes differ from "outside"
    past = lambda offs_of, size: sum(1 << i for i, o in enumerate(offs_of)        # noqa: E731
                                     if not any(B + o >= lo and B + o + size <= hi for lo, hi in ranges))
    want = {k: past([a - B for a in ins.addrs], TABLE[ins.op][1]) for k, ins in enumerate(r.instrs)}
    assert want[0] >> 6 & 1 and want[0] >> 20 & 1 and not want[0] >> 3 & 1 and not want[0] >> 25 & 1
    assert want[1] >> 5 & 1 and not want[1] >> 2 & 1
    assert want[2] >> 4 & 1 and not want[2] >> 7 & 1 and want[3] >> 9 & 1 and not want[3] >> 8 & 1
    r.check(faults=want)
    e = r.error
    assert (e.valid, e.cause, e.simd, e.wave, e.seq, e.lane, e.addr, e.kind, e.size) == \
        (1, ErrorCause.APERTURE, 1, 2, 0, 6, B + 198, OpKind.LOAD, 4)


def test_memory_fault_reported():
    """A response with ``fault`` (the memory's own check) is reported with the line address."""
    rng = random.Random(21)
    B = base_of()
    prog = [line_load(rng, B, 2)]
    r = Run(CFG, prog, serial=True, seed=14, aperture=(B, 2 * BUF))
    r.instrs[0].addrs = [B + BUF + 4 * i for i in range(LANES)]
    r.run()
    assert (r.error.valid, r.error.cause, r.error.addr, r.error.lane) == (1, ErrorCause.MEMORY, B + BUF, 0)
    assert prog[0].done


# --------------------------------------------------------------------------------------
# Return order: the seed experiment at unit level, hit latency and throughput
def _x_and_y(order, rng, B):
    """Wave X (SIMD 0) warms four lines; later wave Y (SIMD 1) misses (memory answers in 120
    cycles) and X issues four loads that hit."""
    warm = [line_load(rng, B, 8 * k) for k in range(4)]
    y = line_load(rng, B, 64, simd=1)
    y.at = 60
    hits = [line_load(rng, B, 8 * k, shift=k + 1) for k in range(4)]
    for h in hits:
        h.at = 64
    lat = lambda req: 120 if req.addr == B + 64 * LINE else 10        # noqa: E731
    r = Run(CFG.replace(return_order=order), warm + [y] + hits, lat=lat, gap=0, mem_ready=1, resp_ready=1).run()
    r.check()
    assert r.counters["hits"] == 4 and r.counters["misses"] == 5
    return y, hits


def test_per_wave_hits_do_not_wait_for_other_waves_misses():
    y, hits = _x_and_y("per_wave", random.Random(22), base_of())
    assert all(h.beats[-1][0] < y.accepted + 20 for h in hits)
    assert max(h.beats[-1][0] for h in hits) < y.beats[-1][0]


def test_in_order_hits_retire_behind_another_waves_miss():
    y, hits = _x_and_y("in_order", random.Random(22), base_of())
    assert min(h.beats[0][0] for h in hits) > y.beats[-1][0]


@pytest.mark.parametrize("order", ["per_wave", "in_order"])
def test_loads_pass_the_waves_own_stores(order):
    """Per wave, loads and stores retire in order on their own counters: a hitting load does
    not wait for an older store's slow acknowledgement (in_order: it does)."""
    rng = random.Random(26)
    B = base_of()
    warm = line_load(rng, B, 2)
    store = make(rng, B, 0, 0, OpId.GLOBAL_STORE_B32, [LINE * 30 + 4 * i for i in range(LANES)], exec_mask=M32)
    store.at = 40
    load = line_load(rng, B, 2, shift=5)
    load.at = 41
    lat = lambda req: 100 if req.kind == MemKind.WRITE else 5         # noqa: E731
    r = Run(CFG.replace(return_order=order), [warm, store, load], lat=lat, gap=0, mem_ready=1, resp_ready=1).run()
    r.check()
    if order == "per_wave":
        assert load.beats[-1][0] < load.accepted + 8 < store.beats[0][0]
    else:
        assert load.beats[0][0] > store.beats[0][0]


@pytest.mark.parametrize("latency, stage", [(4, False), (12, False), (73, False), (4, True), (12, True)])
def test_hit_latency_and_one_line_per_cycle(latency, stage):
    """A single-line load that hits answers max(5, l0_hit_latency) cycles after it is
    accepted; hits from both SIMDs stream at one line (one instruction) per cycle while the
    table's 16 entries cover the latency (with 73 cycles, 16 instructions are in flight).
    With ``coalesce_stage``: max(6, l0_hit_latency), and an instruction every three cycles
    (a cycle to read its lanes, one to split them, and the next is accepted after the split)."""
    rng = random.Random(23)
    B = base_of()
    warm = [line_load(rng, B, k) for k in range(8)]
    hits = [line_load(rng, B, k % 8, simd=k % 2, wave=k % 4, shift=k) for k in range(32)]
    for h in hits:
        h.at = 80
    r = Run(CFG.replace(l0_hit_latency=latency, coalesce_stage=stage), warm + hits, lat=(3, 6), gap=0, mem_ready=1,
            resp_ready=1).run()
    r.check()
    assert r.counters["hits"] == 32
    lat = [h.beats[0][0] - h.accepted for h in hits]
    assert set(lat) == {max(5 + stage, latency)}, lat
    acc = sorted(h.accepted for h in hits)
    if latency < 16:
        assert acc[-1] - acc[0] == (len(hits) - 1) * (1 + 2 * stage), \
            "one instruction accepted per cycle (three staged)"
        ends = sorted(h.beats[-1][0] for h in hits)
        assert ends[-1] - ends[0] <= len(hits) * (1 + 2 * stage)
    else:
        assert acc[16] - acc[0] >= latency and r.counters["rq_max"] == 16


@pytest.mark.parametrize("op, stage", [(OpId.GLOBAL_LOAD_B32, False), (OpId.GLOBAL_LOAD_I8, False),
                                       (OpId.GLOBAL_LOAD_B128, False), (OpId.GLOBAL_LOAD_B32, True),
                                       (OpId.GLOBAL_LOAD_B128, True)])
def test_group_beats_stream(op, stage):
    """With 4-lane response beats a load answers 8 beats per register, the first one
    max(5, l0_hit_latency) cycles after its last line request as with whole-wave beats, and a
    SIMD's port streams one beat per cycle: within an instruction (the next group's row is read
    as a beat is taken) and from one instruction to the next (hits of four waves, whose 8 line
    requests, one per 4-lane group, take as long as a register's 8 beats). With
    ``coalesce_stage`` the next group's lanes are read while a group is split, so the line
    requests still leave one per cycle; an instruction takes two cycles more (its first
    group's read, and its acceptance after the split before it ends), which a one-register
    load's 8 beats no longer cover."""
    rng = random.Random(27)
    B = base_of()
    warm = [line_load(rng, B, k) for k in range(9)]
    hits = [line_load(rng, B, k % 8, wave=k % 4, op=op, shift=k) for k in range(12)]
    for h in hits:
        h.at = 200
    prog = warm + hits
    cfg = BEATS4.replace(coalesce_stage=stage)
    r = Run(cfg, prog, lat=(3, 6), gap=0, mem_ready=1, resp_ready=1).run()
    lines = r.check()
    assert all(len(h.beats) == 8 * TABLE[op][3] for h in hits)
    k = len(warm)          # the coalescer issues a line request per cycle
    assert prog[k].beats[0][0] - prog[k].accepted == max(5 + stage, cfg.l0_hit_latency) + lines[k] - 1
    cycles = sorted(c for h in hits for c, _ in h.beats)
    gaps = sum(b - a - 1 for a, b in zip(cycles, cycles[1:]))
    if stage and TABLE[op][3] == 1:    # 10 cycles of requests per 8 beats
        assert 0 < gaps <= 2 * len(hits), gaps
    else:
        assert gaps == 0, "a cycle without a beat"


# --------------------------------------------------------------------------------------
# Verilog
@pytest.mark.parametrize("preset", ["default", "rdna1", "fpga"])   # fpga: 4-lane groups and beats, split in place
def test_verilog_lint(preset, tmp_path):
    text = convert_and_lint(VecMemUnit(PRESETS[preset]), f"vmem_{preset}", tmp_path)
    assert "module vmem_" in text


def test_l0_array_lint(tmp_path):
    text = convert_and_lint(L0Array(PRESETS["rdna1"]), "l0_rdna1", tmp_path)
    assert "module l0_rdna1" in text


# --------------------------------------------------------------------------------------
# Longer campaigns
@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_random_campaign(seed):
    rng = random.Random(100 + seed)
    cfg = [CFG, PRESETS["rdna1"], PRESETS["tiny"]][seed % 3]
    prog = random_program(rng, base_of(), 200, span=rng.choice([2048, 8192, BUF]), waves=min(4, cfg.wave_slots))
    r = Run(cfg, prog, seed=seed, lat=(1, 80), mem_ready=rng.choice([0.5, 1.0]),
            resp_ready=rng.choice([0.5, 1.0]), max_cycles=100_000).run()
    r.check()


def test_stores_stream_one_line_per_cycle():
    """Single-line stores from both SIMDs leave as one WRITE per cycle (acknowledgements do
    not take a pipeline slot), and each retires when memory acknowledges it."""
    rng = random.Random(24)
    B = base_of()
    prog = [make(rng, B, k % 2, k % 4, OpId.GLOBAL_STORE_B32, [LINE * k + 4 * i for i in range(LANES)], exec_mask=M32)
            for k in range(32)]
    r = Run(CFG, prog, lat=(4, 4), gap=0, mem_ready=1, resp_ready=1).run()
    r.check()
    writes = [e for e in r.mem_log if e[2] == MemKind.WRITE]
    assert len(writes) == 32 and writes[-1][0] - writes[0][0] == 31
    for ins in prog:
        ack = next(e[1] for e in writes if e[4] == ins.addrs[0])
        assert ins.beats[0][0] > ack


@pytest.mark.parametrize("in_place", [False, True])
def test_request_is_handed_back_when_split(in_place):
    """With ``coalesce_in_place`` the unit splits a SIMD's request from the SIMD's own
    register and takes it (``ready``) only when its last line request has been issued: a
    load of 32 lines holds SIMD 0's register until its last READ is on its way (SIMD 1's
    load, offered meanwhile, is taken after it). With the copy the register is free at once."""
    rng = random.Random(26)
    B = base_of()
    wide = make(rng, B, 0, 0, OpId.GLOBAL_LOAD_B32, [LINE * i for i in range(LANES)], exec_mask=M32)
    other = line_load(rng, B, 40, simd=1)
    other.at = 1
    r = Run(CFG.replace(coalesce_in_place=in_place), [wide, other], lat=(8, 8), gap=0, mem_ready=1,
            resp_ready=1).run()
    r.check()
    reads = sorted(e[0] for e in r.mem_log if e[2] == MemKind.READ and e[4] != other.addrs[0])
    assert len(reads) == 32
    if in_place:   # the last READ leaves three cycles (S0, S1, the queue) after its request is split
        assert reads[-1] - 3 <= wide.accepted < other.accepted, (wide.accepted, other.accepted, reads[-1])
    else:
        assert wide.accepted == 1 < reads[-1] - 3, (wide.accepted, reads[-1])


def test_misses_to_one_line_merge():
    """Loads of a line already being fetched (from other waves and SIMDs) wait for the same
    READ: one request to memory, every load counted as an L0 miss, all answered by it."""
    rng = random.Random(25)
    B = base_of()
    prog = [line_load(rng, B, 9, simd=k % 2, wave=k // 2, shift=k) for k in range(6)]
    r = Run(CFG, prog, lat=(60, 60), gap=0, mem_ready=1, resp_ready=1).run()
    r.check()
    assert [e[2] for e in r.mem_log] == [MemKind.READ]
    assert (r.counters["misses"], r.counters["hits"]) == (6, 0)
