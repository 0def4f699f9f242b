"""The LDS (hdl/mem/lds.py) driven directly, against the reference model's DS semantics.

Every request the RTL accepts is replayed, in the order the halves took them, through
the model's own DS handlers (``sim.memory_ops.build_ds``) on a numpy image of the physical
LDS, with the model's window rule (``sim.model.Workgroup.lds_read`` and friends: reads past
the window give 0, writes there are dropped). The response beats (a beat per lane group of
``resp_lanes`` lanes of each destination register, in order: destination, group, the group's
exec bits, data of its active lanes, ``write``/``last``), the per-wave response order and the
final contents of all the bank RAMs must match; so must the bank-pass counters: a
non-atomic instruction costs ``lds_conflict_cycles`` of the dwords it touches (the cost the
model records), an atomic one pass per access in its busiest bank (the LDS serialises lanes
that hit one bank, so that each sees the previous lane's result); both summed over the
windows of ``lds_banks`` dwords (``sim.memory_ops.lds_window_lanes``), and counting only
dwords with a byte inside the wave's window.
``ds_storexchg_2addr`` (not in the model) is checked against the ISA pseudocode.
"""
from __future__ import annotations

import dataclasses
import math
import random
from collections import defaultdict, deque

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.config import get_config
from hdl.isa_tables import OpId
from hdl.mem.lds import IMPLEMENTED, LDS, LdsErrorCause
from isa import Inst, by_name
from sim.memory_ops import build_ds, lds_conflict_cycles, lds_window_lanes
from sim.model import Workgroup
from sim.wave import EXEC, Wave
from tests.bitpack import pack_fields
from tests.lint import convert_and_lint
from tests.reqrows import RequestRows

CFG = get_config("default")
# 8 banks a half: windows of 8 dwords, four or more a wave, registered whole at take
VARIANTS = {"default_b8": CFG.replace(name="default_b8", lds_banks=8)}


def _config(name):
    return VARIANTS[name] if name in VARIANTS else get_config(name)
H = CFG.lds_bytes_per_half
LANES, M32 = 32, 0xFFFF_FFFF
ALL = M32
SEED = 20251124

LOADS = sorted(n for n in IMPLEMENTED if n.startswith("ds_load"))
STORES = sorted(n for n in IMPLEMENTED if n.startswith("ds_store") and "xchg" not in n)
ATOMICS = sorted(n for n in IMPLEMENTED if n not in LOADS and n not in STORES)


# ---- requests and the model's answer ----------------------------------------------------------
@dataclasses.dataclass
class Req:
    op: str
    simd: int
    wave: int
    addr: list                   # 32 lane byte addresses (the instruction's offsets are separate)
    data: list                   # 32 lanes x 4 dwords, as the SIMD packs them (data1 at dword 2)
    exec: int = ALL
    offset0: int = 0
    offset1: int = 0
    vdst: int = 0
    seq: int = 0

    @property
    def atomic(self) -> bool:
        return self.op in ATOMICS


class _Window(Workgroup):
    """The model's LDS access rules on the window ``[base, base + size)`` of the physical image."""

    def __init__(self, image, base, size, banks):   # only the LDS of a workgroup: no model, no waves
        self.lds = image[base: base + size]   # a view: the model's writes land in the image
        self.lds_banks = banks                # the cost counts the LDS's banks, per window
        self.ds_cycles = None

    def record(self, w, counter, lines=None, ds_cycles=None):
        self.ds_cycles = ds_cycles


def result_regs(op: str) -> int:
    info = by_name(op)
    if op in STORES or (op in ATOMICS and "_rtn" not in op):
        return 0
    return info.dst_bits // 32


def _elem_stride(op: str) -> int:
    return (8 if op.endswith("b64") else 4) * (64 if "stride64" in op else 1)


def _dwords(r: Req, lanes) -> np.ndarray:
    """Logical dwords the instruction's ``lanes`` touch, for the atomic cost."""
    if "2addr" in r.op:
        st = _elem_stride(r.op)
        return np.array([(r.addr[n] + o * st) // 4 for n in lanes for o in (r.offset0, r.offset1)], np.int64)
    return np.array([(r.addr[n] + (r.offset0 | r.offset1 << 8)) // 4 for n in lanes], np.int64)


def _atomic_cost(r: Req, banks: int, size: int) -> int:
    """An atomic's bank passes: per window (of ``banks`` dwords), its accesses in its busiest
    bank (lanes are serialised per bank); dwords past the wave's ``size`` bytes occupy no
    bank."""
    window_lanes = lds_window_lanes(banks, 2 if "2addr" in r.op else 1)
    cost = 0
    for w0 in range(0, LANES, window_lanes):
        dws = _dwords(r, [n for n in range(w0, w0 + window_lanes) if r.exec >> n & 1])
        dws = dws[4 * dws < size]
        if dws.size:
            cost += int(np.bincount(dws % banks, minlength=banks).max())
    return cost


def model_exec(r: Req, image: np.ndarray, base: int, size: int, banks: int = 32):
    """Execute ``r`` on ``image`` with the model; -> (registers [(vdst, 32 lane values)], cost in
    bank passes of an LDS with ``banks`` banks per half)."""
    win = _Window(image, base, size, banks)
    if r.op.startswith("ds_storexchg_2addr"):
        return _xchg2(r, win), _atomic_cost(r, banks, size)
    info = by_name(r.op)
    f = {"addr": 0, "data0": 4, "data1": 8, "vdst": 16, "offset0": r.offset0, "offset1": r.offset1}
    inst = Inst(info=info, fmt=info.fmt, pc=0, words=(0,), size=8, literal=None, f=f)
    w = Wave(0, 32, 0)
    w.s[EXEC] = r.exec
    w.v[0] = np.array(r.addr, np.uint32)
    dw = [np.array([r.data[n][j] for n in range(LANES)], np.uint32) for j in range(4)]
    regs = (4, 5, 8, 9) if len(info.src_bits) == 3 else (4, 5, 6, 7)   # data1 follows at dword 2
    for reg, v in zip(regs, dw):
        w.v[reg] = v
    build_ds(inst)(w, win)
    cost = _atomic_cost(r, banks, size) if r.atomic else win.ds_cycles
    return [(r.vdst + j, w.v[16 + j].copy()) for j in range(result_regs(r.op))], cost


def _xchg2(r: Req, win: _Window):
    """ds_storexchg_2addr[_stride64]_rtn_b32 per the ISA pseudocode, lane by lane."""
    st = _elem_stride(r.op)
    old = [np.zeros(LANES, np.uint32), np.zeros(LANES, np.uint32)]
    for n in range(LANES):
        if r.exec >> n & 1:
            a1, a2 = r.addr[n] + r.offset0 * st, r.addr[n] + r.offset1 * st
            t1, t2 = win.lds_load_dword(a1), win.lds_load_dword(a2)
            win.lds_store_dword(a1, r.data[n][0])
            win.lds_store_dword(a2, r.data[n][2])
            old[0][n], old[1][n] = t1, t2
    return [(r.vdst, old[0]), (r.vdst + 1, old[1])]


# ---- the bench ----------------------------------------------------------------------------
_SIMS: dict = {}


def _simulator(cfg):
    """One LDS and its simulator per configuration, shared by the tests: building the simulator
    takes longer than most tests run. Each run resets it and installs its own testbench."""
    if cfg not in _SIMS:
        dut = LDS(cfg)
        top = RequestRows(cfg, dut)     # the SIMDs' requests, served a row at a time
        sim = Simulator(top)
        sim.add_clock(1e-6)
        _SIMS[cfg] = (dut, top, sim, {})
    return _SIMS[cfg]


class Bench:
    """One LDS in Amaranth's simulator, a physical image, the waves' windows, and the replay."""

    def __init__(self, cfg=CFG, wgp=False, seed=SEED, image=None):
        self.cfg, self.wgp = cfg, wgp
        self.rng = random.Random(seed)
        self.dut, self.top, self.sim, self.job = _simulator(cfg)
        self.image = image if image is not None else \
            np.frombuffer(self.rng.randbytes(cfg.lds_bytes_total), np.uint8).copy()
        self.windows = {}            # (simd, wave) -> (base, size)
        self.accepted = []           # (cycle, request): the cycle a half took it
        self.handed = []             # the cycles the requests were handed back (``ready``)
        self.beats = defaultdict(list)   # simd -> beats in arrival order
        self.costs = {}              # id(request) -> bank passes seen (sequential runs)
        self.counters = None
        self.final = None

    def window(self, simd, wave, base, size):
        self.windows[(simd, wave)] = (base, size)

    def half_of(self, r: Req) -> int:
        base, size = self.windows[(r.simd, r.wave)]
        return base // self.cfg.lds_bytes_per_half if self.wgp else r.simd // 2

    def run(self, queues, ready=1.0, sequential=False, max_cycles=20000):
        """Issue ``queues`` ({simd: [Req]}, in order per SIMD) and collect everything.

        ``ready``: probability that a SIMD takes a response beat in a cycle; ``sequential``:
        a SIMD issues its next request only once the previous one is answered."""
        dut, cfg = self.dut, self.cfg
        nb = cfg.lds_banks
        rows = cfg.lds_bytes_per_half // (4 * nb)
        words = self.image.view("<u4")

        async def bench(ctx):
            for h, pipe in enumerate(dut.pipes):          # physical dword d: bank d % nb, row d // nb
                for b in range(nb):
                    for row in range(rows):
                        ctx.set(pipe.banks[b].data[row], int(words[(h * rows + row) * nb + b]))
            ctx.set(dut.wgp, int(self.wgp))
            for (simd, wave), (base, size) in self.windows.items():
                ctx.set(dut.alloc.valid, 1)
                for k, v in dict(simd=simd, wave=wave, base=base, size=size).items():
                    ctx.set(getattr(dut.alloc.payload, k), v)
                await ctx.tick()
            ctx.set(dut.alloc.valid, 0)
            pending = {s: deque(queues.get(s, [])) for s in range(4)}
            current = {s: None for s in range(4)}
            inflight = {s: deque() for s in range(4)}
            last_count = [0, 0]
            taken = {}                # simd -> the cycle a half took its current request
            total = sum(len(q) for q in pending.values())
            cycle = 0
            while len(self.accepted) < total or any(inflight.values()):
                for s in range(4):
                    port = dut.req[s]
                    if current[s] is None and pending[s] and not (sequential and inflight[s]):
                        r = current[s] = pending[s].popleft()
                        p = self.top.whole[s]
                        ctx.set(p.op, OpId[r.op.upper()])
                        for k in ("wave", "seq", "exec", "offset0", "offset1", "vdst"):
                            ctx.set(getattr(p, k), getattr(r, k))
                        ctx.set(p.returns, int(result_regs(r.op) != 0))
                        ctx.set(p.addr, pack_fields(r.addr, 64))
                        ctx.set(p.data, pack_fields([pack_fields(d, 32) for d in r.data], 128))
                        ctx.set(port.valid, 1)
                    ctx.set(dut.resp[s].ready, int(self.rng.random() < ready))
                fired = [s for s in range(4) if current[s] is not None and ctx.get(dut.req[s].ready)]
                for pipe in dut.pipes:    # the model replays requests in the order the halves take them
                    if ctx.get(pipe.take):    # (in place, a request is handed back after its passes)
                        taken.setdefault(ctx.get(pipe.simd), cycle + 1)
                for s in range(4):
                    rp = dut.resp[s]
                    if ctx.get(rp.valid) and ctx.get(rp.ready):
                        b = ctx.get(rp.payload)
                        beat = dict(wave=b.wave, seq=b.seq, vdst=b.vdst, grp=b.grp, data=b.data, mask=b.mask,
                                    write=b.write, last=b.last, store=b.store, cycle=cycle)
                        self.beats[s].append(beat)
                        if b.last:
                            r = inflight[s].popleft()
                            assert (r.wave, r.seq) == (b.wave, b.seq) or not sequential
                            if sequential:
                                h = self.half_of(r)
                                now = ctx.get(dut.bank_cycles[h])
                                self.costs[id(r)] = now - last_count[h]
                                last_count[h] = now
                await ctx.tick()
                cycle += 1
                for s in fired:
                    self.accepted.append((taken.pop(s), current[s]))
                    self.handed.append(cycle)
                    inflight[s].append(current[s])
                    current[s] = None
                    ctx.set(dut.req[s].valid, 0)
                if cycle > max_cycles:
                    stuck = {s: [(r.op, r.wave, r.seq) for r in inflight[s]] for s in range(4) if inflight[s]}
                    waiting = {s: (current[s].op, current[s].wave) for s in range(4) if current[s]}
                    raise AssertionError(f"LDS watchdog: {cycle} cycles; unanswered {stuck}, "
                                         f"not accepted {waiting}")
            for _ in range(3):          # let the last writes reach the banks
                await ctx.tick()
            self.counters = {k: [ctx.get(getattr(dut, k)[h]) for h in range(2)]
                             for k in ("accesses", "bank_cycles", "conflict_cycles")}
            self.error = ctx.get(dut.error)
            got = np.zeros(cfg.lds_bytes_total // 4, np.uint32)
            for h, pipe in enumerate(dut.pipes):
                for b in range(nb):
                    for row in range(rows):
                        got[(h * rows + row) * nb + b] = ctx.get(pipe.banks[b].data[row])
            self.final = got.view(np.uint8)
            self.cycles = cycle

        if "run" not in self.job:
            async def testbench(ctx):
                await self.job["run"](ctx)
            self.sim.add_testbench(testbench)
        else:
            self.sim.reset()
        self.job["run"] = bench
        self.sim.run()
        return self

    def check(self, check_costs=True):
        """Replay the accepted requests through the model and compare everything."""
        image = self.image.copy()
        expect, cost_by_half = {}, [0, 0]
        for _, r in sorted(self.accepted, key=lambda x: x[0]):
            base, size = self.windows[(r.simd, r.wave)]
            regs, cost = model_exec(r, image, base, size, self.cfg.lds_banks)
            expect[(r.simd, r.wave, r.seq)] = (r, regs, cost)
            cost_by_half[self.half_of(r)] += cost
            if id(r) in self.costs:
                assert self.costs[id(r)] == cost, (f"{r.op} simd {r.simd}: {self.costs[id(r)]} bank passes, "
                                                   f"model {cost} (addresses {r.addr}, exec {r.exec:#x})")
        R = self.cfg.resp_lanes
        G = LANES // R                   # beats per destination register
        for s, beats in self.beats.items():
            order = defaultdict(list)
            k = 0
            while k < len(beats):
                b = beats[k]
                r, regs, _ = expect[(s, b["wave"], b["seq"])]
                order[b["wave"]].append(b["seq"])
                # each register's groups in order, registers in order; without one, one beat (group 0)
                want = [(vdst, vals, g) for vdst, vals in regs for g in range(G)] or [(None, None, 0)]
                n = len(want)
                group = beats[k: k + n]
                assert len(group) == n and [g["last"] for g in group] == [0] * (n - 1) + [1], \
                    f"{r.op}: {len(group)} beats {group}, expected {n}"
                for g, (vdst, vals, grp) in zip(group, want):
                    assert (g["wave"], g["seq"], g["store"]) == (b["wave"], b["seq"], 0)
                    assert g["write"] == int(bool(regs)), f"{r.op}: write flag"
                    emask = r.exec >> (R * grp) & ((1 << R) - 1)
                    assert g["grp"] == grp and g["mask"] == emask, \
                        f"{r.op}: beat group {g['grp']}, mask {g['mask']:#x}; expected {grp}, {emask:#x}"
                    if vals is None:
                        continue
                    assert g["vdst"] == vdst, f"{r.op}: beat v{g['vdst']}, expected v{vdst}"
                    for i in range(R):
                        n_ = R * grp + i
                        if r.exec >> n_ & 1:
                            got = (g["data"] >> (32 * i)) & M32
                            assert got == int(vals[n_]), (
                                f"{r.op} simd {s} wave {r.wave} seq {r.seq} v{vdst} lane {n_}: {got:#010x}, "
                                f"model {int(vals[n_]):#010x} "
                                f"(address {r.addr[n_]:#x}, offsets {r.offset0}/{r.offset1})")
                k += n
            for wave, seqs in order.items():
                issued = [r.seq for _, r in sorted(self.accepted, key=lambda x: x[0]) if r.simd == s and r.wave == wave]
                assert seqs == issued, f"simd {s} wave {wave}: responses {seqs}, issued {issued}"
        answered = sum(1 for s in self.beats for b in self.beats[s] if b["last"])
        assert answered == len(self.accepted)
        bad = np.nonzero(self.final != image)[0]
        assert bad.size == 0, (f"{bad.size} LDS bytes differ, first at physical {bad[0]:#x}: "
                               f"RTL {self.final[bad[0]]:#04x}, model {image[bad[0]]:#04x}")
        if check_costs:
            assert self.counters["bank_cycles"] == cost_by_half, (self.counters, cost_by_half)
        assert sum(self.counters["accesses"]) >= len(self.accepted)
        assert not self.error.valid, f"unexpected error {self.error}"
        return self

    def registers(self, simd):
        """The registers SIMD ``simd`` was sent, reassembled from their group beats (which
        :meth:`check` checks), in arrival order: ``[(vdst, 32 lane values)]``."""
        R = self.cfg.resp_lanes
        regs = []
        for b in self.beats[simd]:
            if b["write"]:
                if b["grp"] == 0:
                    regs.append((b["vdst"], [0] * LANES))
                for i in range(R):
                    regs[-1][1][R * b["grp"] + i] = b["data"] >> (32 * i) & M32
        return regs


# ---- request generators -----------------------------------------------------------------------
def _align(op: str) -> int:
    if op.endswith(("u8", "i8", "b8")):
        return 1
    if op.endswith(("u16", "i16", "b16")):
        return 2
    return 4


def _span(op: str) -> int:
    """Bytes one lane's access (or one element of a 2addr form) covers."""
    for suffix, n in (("b128", 16), ("b96", 12), ("b64", 8), ("8", 1), ("16", 2)):
        if op.endswith(suffix):
            return n
    return 4


def rand_req(rng: random.Random, op: str, simd: int, wave: int, size: int, seq: int, vdst=None) -> Req:
    """A request of ``op`` for a window of ``size`` bytes: strided, broadcast-heavy or scattered
    lane addresses, now and then lanes past the window, random EXEC and data."""
    al, span = _align(op), _span(op)
    limit = max(size - span, al)
    kind = rng.random()
    if "2addr" in op:
        st = _elem_stride(op)
        o0, o1 = rng.randrange(min(256, max(limit // st, 1))), rng.randrange(min(256, max(limit // st, 1)))
        top = max(limit - max(o0, o1) * st, 4)
        if op.endswith("b64") and rng.random() < 0.7:
            al = 8
    else:
        o0 = rng.randrange(0, min(256, limit), al) if rng.random() < 0.3 else 0
        o1 = rng.randrange(0, 4) if rng.random() < 0.1 and limit > 2048 else 0
        top = max(limit - (o0 | o1 << 8), al)
        if span > 4 and rng.random() < 0.7:
            al = 8 if span == 8 else 16
    if kind < 0.3:                         # strided
        stride = rng.choice([1, 2, 3, 4, 8, 16, 32, 0]) * al
        start = rng.randrange(0, max(top - 31 * stride, 1), al) if top > 31 * stride else 0
        addr = [(start + n * stride) % max(top, 1) // al * al for n in range(LANES)]
    elif kind < 0.6:                       # a few addresses shared by many lanes (broadcast)
        pool = [rng.randrange(0, top, al) // al * al for _ in range(rng.randint(1, 6))]
        addr = [rng.choice(pool) for _ in range(LANES)]
    else:
        addr = [rng.randrange(0, top, al) // al * al for _ in range(LANES)]
    if rng.random() < 0.2:                 # some lanes on the window's last (maybe partial) dword
        for n in rng.sample(range(LANES), rng.randint(1, 4)):
            addr[n] = max(size - 1 - (o0 | o1 << 8 if "2addr" not in op else 0), 0) // al * al
    if rng.random() < 0.25:                # some lanes past the window
        for n in rng.sample(range(LANES), rng.randint(1, 6)):
            addr[n] = (size + rng.randrange(0, 4096, al)) // al * al
    ex = rng.choice([ALL, ALL, ALL, rng.getrandbits(32), rng.getrandbits(32) & rng.getrandbits(32), 0])
    data = [[rng.getrandbits(32) for _ in range(4)] for _ in range(LANES)]
    return Req(op, simd, wave, addr, data, ex, o0, o1, vdst if vdst is not None else rng.randrange(0, 200), seq)


def _queues(reqs):
    q = defaultdict(list)
    for r in reqs:
        q[r.simd].append(r)
    return q


# ---- tests ------------------------------------------------------------------------------------
def _conflict_patterns(rng, n_random):
    """ds_load_b32 address patterns: strides 0..64 dwords, then random ones with repeats."""
    pats = []
    for stride in range(65):
        start = rng.randrange(0, 512) * 4
        pats.append([start + 4 * stride * n for n in range(LANES)])
    for _ in range(n_random):
        pool = [rng.randrange(0, H // 4) * 4 for _ in range(rng.randint(1, 40))]
        pats.append([rng.choice(pool) for _ in range(LANES)])
    return pats


def _run_conflicts(n_random, seed, cfg=CFG):
    rng = random.Random(seed)
    b = Bench(cfg, seed=seed)
    H, banks, wl = cfg.lds_bytes_per_half, cfg.lds_banks, lds_window_lanes(cfg.lds_banks, 1)
    b.window(0, 0, 0, H)
    b.window(2, 1, H, H)
    reqs = []
    for k, addrs in enumerate(_conflict_patterns(rng, n_random)):
        simd = 2 * (k % 2)
        ex = ALL if k < 65 or rng.random() < 0.7 else rng.getrandbits(32)
        reqs.append(Req("ds_load_b32", simd, simd // 2, [a % H for a in addrs],
                        [[0] * 4] * LANES, ex, vdst=7, seq=k // 2))
    b.run(_queues(reqs), sequential=True, max_cycles=40 * len(reqs) + 2000)
    b.check()
    assert len(b.costs) == len(reqs)
    conflicts = sum(max(c - 1, 0) for c in b.costs.values())
    assert sum(b.counters["conflict_cycles"]) == conflicts
    assert b.counters["accesses"] == [sum(1 for r in reqs if r.simd == 0), sum(1 for r in reqs if r.simd == 2)]
    for r in reqs:                    # the model's cost function on the dwords the lanes touch
        lanes = np.array([n for n in range(LANES) if r.exec >> n & 1], np.int64)
        active = np.array([r.addr[n] // 4 for n in lanes], np.int64)
        assert b.costs[id(r)] == lds_conflict_cycles(active, banks, lanes // wl), (r.addr, r.exec)
    for r in reqs[:65]:               # the stride rule: gcd(S, 32) passes at 32 banks
        stride = (r.addr[1] - r.addr[0]) % H // 4
        if len(set(r.addr)) == LANES and wl % banks == 0:   # 32 / (banks / gcd(S, banks)) per bank
            assert b.costs[id(r)] == LANES * math.gcd(stride, banks) // banks
        elif not stride:              # a broadcast: one pass per window
            assert b.costs[id(r)] == LANES // wl


@pytest.mark.parametrize("preset", ["default", "fpga", *VARIANTS])
def test_conflict_cycles_match_model(preset):
    """Strides 0..64 and 300 random patterns: bank passes = lds_conflict_cycles, data right;
    on ``fpga``, with 4 banks per half."""
    _run_conflicts(300, SEED, _config(preset))


@pytest.mark.slow
def test_conflict_cycles_match_model_long():
    _run_conflicts(2000, SEED + 1)


def _mixed(seed, n, ops, ready, cfg=CFG):
    rng = random.Random(seed)
    b = Bench(cfg, seed=seed)
    h, last = cfg.lds_bytes_per_half, cfg.wave_slots - 1
    k = min(h / 16384, 1)            # the windows below are for 16 KiB halves; smaller ones scale
    # CU mode: two windows per half; one of them ends in a partial dword
    b.window(0, 0, 0, int(6000 * k))
    b.window(1, 0, 0, int(6000 * k))          # the same workgroup as SIMD 0 wave 0
    b.window(1, last, h // 2, int(4093 * k))
    b.window(2, 0, h + int(512 * k), int(9000 * k))
    b.window(3, last, h + int(10240 * k), int(6144 * k))
    reqs, seq = [], defaultdict(int)
    keys = list(b.windows)
    for _ in range(n):
        simd, wave = rng.choice(keys)
        size = b.windows[(simd, wave)][1]
        reqs.append(rand_req(rng, rng.choice(ops), simd, wave, size, seq[(simd, wave)]))
        seq[(simd, wave)] += 1
    b.run(_queues(reqs), ready=ready, max_cycles=60 * n + 2000)
    return b.check()


@pytest.mark.parametrize("preset", ["default", "fpga", *VARIANTS])
def test_loads_and_stores_of_every_width(preset):
    """Every load and store width, the 2addr forms, narrow sign/zero extension, windows with a
    partial last dword, lanes past the window, four SIMDs at once, random back-pressure; on
    ``fpga`` with 4 banks of 256 rows per half."""
    b = _mixed(SEED + 2, 160, LOADS + STORES, ready=0.7, cfg=_config(preset))
    assert b.counters["conflict_cycles"][0] + b.counters["conflict_cycles"][1] > 0


@pytest.mark.slow
def test_loads_and_stores_long():
    _mixed(SEED + 3, 1500, LOADS + STORES, ready=0.5)


def test_rdna1_sizes():
    """The rdna1 preset: 64 KiB halves (512 rows per bank), 20 wave slots."""
    _mixed(SEED + 13, 150, LOADS + STORES + ATOMICS, ready=0.7, cfg=get_config("rdna1"))


def _atomics(seed, n, hot, cfg=CFG):
    """Atomics of every kind from all SIMDs and several waves; ``hot`` addresses take most lanes."""
    rng = random.Random(seed)
    b = Bench(cfg, seed=seed)
    H, last = cfg.lds_bytes_per_half, cfg.wave_slots - 1
    b.window(0, 0, 0, 4096)
    b.window(1, min(1, last), 0, 4096)
    b.window(2, 0, H, 2048)
    b.window(3, min(3, last), H, 2048)
    reqs, seq = [], defaultdict(int)
    keys = list(b.windows)
    for _ in range(n):
        simd, wave = rng.choice(keys)
        size = b.windows[(simd, wave)][1]
        op = rng.choice(ATOMICS)
        r = rand_req(rng, op, simd, wave, size, seq[(simd, wave)])
        if rng.random() < 0.6:       # many lanes on a few hot dwords
            spots = rng.sample(hot, rng.randint(1, 3))
            r.addr = [rng.choice(spots) if rng.random() < 0.8 else a for a in r.addr]
        if op.startswith("ds_cmpstore") and rng.random() < 0.5:
            for n_ in range(LANES):   # compare values that often match: small values both sides
                r.data[n_][0], r.data[n_][2] = rng.randrange(4), rng.randrange(4)
        if op.startswith(("ds_inc", "ds_dec")):
            for n_ in range(LANES):
                r.data[n_][0] = rng.choice([0, 1, 5, 100, M32, rng.getrandbits(32)])
        reqs.append(r)
        seq[(simd, wave)] += 1
    image = np.frombuffer(rng.randbytes(cfg.lds_bytes_total), np.uint8).copy()
    for spot in hot:                 # small values, so inc/dec/cmpstore/min/max do interesting things
        for base in (0, H):
            image[base + spot: base + spot + 4] = np.array([rng.randrange(8)], "<u4").view(np.uint8)
    b.image = image
    b.run(_queues(reqs), ready=0.8, max_cycles=80 * n + 2000)
    return b.check()


@pytest.mark.parametrize("preset", ["default", "fpga", *VARIANTS])
def test_atomics_from_many_lanes_waves_and_simds(preset):
    _atomics(SEED + 4, 120, hot=[0, 4, 128, 132, 256, 1020], cfg=_config(preset))


@pytest.mark.slow
def test_atomics_long():
    _atomics(SEED + 5, 1000, hot=[0, 4, 8, 128, 132, 256, 1020, 2044])


# small windows: the fpga preset's 4 banks, read from request rows of 4 lanes; 8 banks from
# rows of 8; 4 banks from rows of 8 (two windows of b32 lanes a row); 4 banks with the whole
# request registered at take
_FPGA8 = get_config("fpga").replace(lanes=8, coalesce_lanes=8)
WINDOWED = {"fpga": get_config("fpga"), "fpga_b8": _FPGA8.replace(name="fpga_b8", lds_banks=8),
            "fpga_b4_r8": _FPGA8.replace(name="fpga_b4_r8"),
            "default_b4": CFG.replace(name="default_b4", lds_banks=4)}


@pytest.mark.parametrize("name", list(WINDOWED))
def test_windows_keep_the_write_order(name):
    """Lanes of different windows that write the same bytes: the last lane wins (windows go in
    lane order; a 2addr store writes lane by lane, each lane's first address before its
    second); a broadcast load costs a pass per window."""
    cfg = WINDOWED[name]
    wl = lds_window_lanes(cfg.lds_banks, 1)
    b = Bench(cfg, seed=SEED + 12)
    b.window(0, 0, 0, 2048)
    data = [[0x1000 * n + 1, 0x1000 * n + 2, 0x1000 * n + 3, 0x1000 * n + 4] for n in range(LANES)]
    reqs = [Req("ds_store_b32", 0, 0, [64] * LANES, data),
            Req("ds_store_b8", 0, 0, [128 + n % 6 for n in range(LANES)], data, seq=1),
            Req("ds_store_b16", 0, 0, [192 + 2 * (n % 5) for n in range(LANES)], data, seq=2),
            # lane n's second address is lane n + 4's first (offset1 = 4 elements)
            Req("ds_store_2addr_b32", 0, 0, [256 + 4 * n for n in range(LANES)], data, offset1=4, seq=3),
            Req("ds_store_2addr_b64", 0, 0, [512 + 8 * n for n in range(LANES)], data, offset1=5, seq=4),
            Req("ds_store_b64", 0, 0, [1024 + 8 * (n % 3) for n in range(LANES)], data, seq=5),
            Req("ds_load_b32", 0, 0, [64] * LANES, data, vdst=10, seq=6),
            Req("ds_load_b128", 0, 0, [256 + 16 * (n % 7) for n in range(LANES)], data, vdst=11, seq=7)]
    b.run(_queues(reqs), sequential=True, max_cycles=4000).check()
    assert b.costs[id(reqs[0])] == LANES // wl        # one dword: a pass per window
    assert b.costs[id(reqs[6])] == LANES // wl


@pytest.mark.parametrize("name", list(WINDOWED))
def test_windowed_random_accesses(name):
    """Random loads, stores and atomics against the model, with its windowed cost."""
    cfg = WINDOWED[name]
    _mixed(SEED + 13, 80, LOADS + STORES, ready=0.7, cfg=cfg)
    _atomics(SEED + 14, 50, hot=[0, 4, 128, 132, 256, 1020], cfg=cfg)


@pytest.mark.parametrize("preset", ["default", "fpga"])
def test_atomic_lane_order_and_returns(preset):
    """32 lanes on one dword: each lane sees the previous lane's result (the model's lane order);
    on ``fpga`` across the 4-lane windows, the results in 4-lane group beats."""
    b = Bench(_config(preset), seed=SEED + 6)
    b.window(0, 0, 0, 1024)
    b.image[0:4] = np.array([10], "<u4").view(np.uint8)
    reqs = [Req("ds_add_rtn_u32", 0, 0, [0] * LANES, [[n + 1, 0, 0, 0] for n in range(LANES)], vdst=3),
            Req("ds_cmpstore_rtn_b32", 0, 0, [0] * LANES,
                [[1000 + n, 0, 538 if n == 0 else 1000 + n - 1, 0] for n in range(LANES)], vdst=4, seq=1),
            Req("ds_storexchg_2addr_rtn_b32", 0, 0, [4 * n for n in range(LANES)],
                [[n, 0, 100 + n, 0] for n in range(LANES)], offset0=1, offset1=0, vdst=5, seq=2),
            Req("ds_storexchg_2addr_rtn_b32", 0, 0, [0] * LANES, [[n, 0, 100 + n, 0] for n in range(LANES)],
                offset0=3, offset1=3, vdst=7, seq=3)]
    b.run(_queues(reqs), max_cycles=2000).check()
    regs = b.registers(0)
    assert regs[0][1][:4] == [10, 11, 13, 16]   # running sums
    # cmpstore: lane 0 finds 538 (10 + 1 + ... + 32), each later lane the previous lane's store
    assert regs[1][1] == [538] + [1000 + n - 1 for n in range(1, LANES)]


def test_window_rules_and_cu_isolation():
    """Reads past the window give 0, writes there are dropped; in CU mode the same lane address
    from CU 0 and CU 1 reaches two different halves; a window's last partial dword."""
    b = Bench(seed=SEED + 7, image=np.full(CFG.lds_bytes_total, 0x5A, np.uint8))
    b.window(0, 0, 256, 1022)         # CU 0, ends two bytes into a dword
    b.window(2, 0, H + 256, 1024)     # CU 1, the same offsets
    lanes = [4 * n * 9 for n in range(LANES)]          # lane 31 at 1116: past both windows
    ones = [[0x11111111 * (1 + n % 15), 0, 0, 0] for n in range(LANES)]
    twos = [[0x22222222, 0, 0, 0] for _ in range(LANES)]
    reqs = [Req("ds_store_b32", 0, 0, lanes, ones),
            Req("ds_store_b32", 2, 0, lanes, twos),
            Req("ds_load_b32", 0, 0, lanes, twos, vdst=1, seq=1),
            Req("ds_load_b32", 2, 0, lanes, twos, vdst=1, seq=1),
            Req("ds_store_b8", 0, 0, [1020, 1021, 1022, 1023] * 8, twos, seq=2),
            Req("ds_load_b32", 0, 0, [1020] * LANES, twos, vdst=2, seq=3),
            Req("ds_load_u16", 0, 0, [1020, 1022] * 16, twos, vdst=3, seq=4)]
    b.run(_queues(reqs), max_cycles=2000).check()
    img = b.final
    assert (img[:256] == 0x5A).all() and (img[256 + 1022: H] == 0x5A).all() and (img[H + 256 + 1024:] == 0x5A).all()
    regs0 = b.registers(0)
    assert regs0[0][1][31] == 0                            # lane 31: past the window
    assert regs0[1][1][0] == 0x2222                        # bytes 1022, 1023 are outside


@pytest.mark.parametrize("name", ["default", "default_in_place", "fpga", *VARIANTS])
def test_wgp_mode(name):
    """WGP mode: a window across both halves used by all four SIMDs (served by both halves,
    results merged), another that lies in CU 1's half for SIMD 0. In place, a request served
    by both halves is handed back when the later one is done with it; on ``fpga`` (in place)
    the halves' group beats are merged."""
    rng = random.Random(SEED + 8)
    cfg = {"default": CFG, "default_in_place": CFG.replace(name="default_in_place", lds_in_place=True),
           "fpga": get_config("fpga"), **VARIANTS}[name]
    h = cfg.lds_bytes_per_half
    b = Bench(cfg, seed=SEED + 8, wgp=True)
    for s in range(4):
        b.window(s, 0, h - 2048, 4096)
    b.window(0, 1, h + h // 4, h // 4)
    reqs, seq = [], defaultdict(int)
    keys = list(b.windows)
    for _ in range(90):
        simd, wave = rng.choice(keys)
        op = rng.choice(LOADS + STORES + ATOMICS)
        reqs.append(rand_req(rng, op, simd, wave, b.windows[(simd, wave)][1], seq[(simd, wave)]))
        seq[(simd, wave)] += 1
    b.run(_queues(reqs), ready=0.7, max_cycles=8000).check(check_costs=False)
    single = [r for _, r in b.accepted if r.wave == 1]
    pair = [r for _, r in b.accepted if r.wave == 0]
    assert b.counters["accesses"] == [len(pair), len(pair) + len(single)]


@pytest.mark.parametrize("in_place", [False, True])
def test_request_is_handed_back_after_its_passes(in_place):
    """With ``lds_in_place`` a half reads each window of a request from the SIMD's register,
    so the SIMD has it back (``ready``) only in the cycle of the last pass, and its next request
    is taken after that; with the copy the register is free at take, and the next request
    waits in it for the half's last pass. The load's register goes out in a beat per 4-lane
    group, one per cycle after its last pass (the store's single beat holds nothing up)."""
    # the copy takes the whole request at once: one row
    cfg = get_config("fpga").replace(name=f"fpga_in_place_{in_place}", lds_in_place=in_place,
                                     request_in_rows=in_place)
    b = Bench(cfg, seed=SEED + 15)
    b.window(0, 0, 0, 2048)
    data = [[n + 1, 0, 0, 0] for n in range(LANES)]
    reqs = [Req("ds_store_b32", 0, 0, [4 * n for n in range(LANES)], data),
            Req("ds_load_b32", 0, 0, [4 * n for n in range(LANES)], data, vdst=1, seq=1)]
    b.run(_queues(reqs), max_cycles=500).check()
    passes = LANES // lds_window_lanes(cfg.lds_banks, 1)   # a conflict-free pass per window
    (t0, _), (t1, _) = b.accepted
    if in_place:
        assert b.handed == [t0 + passes, t1 + passes] and t1 == t0 + passes + 1, (b.accepted, b.handed)
    else:
        assert b.handed == [t0, t1] and t1 == t0 + passes, (b.accepted, b.handed)
    groups = LANES // cfg.resp_lanes
    # lds_latency - 1 cycles after its last pass, t1 + passes - 1
    first = t1 + passes - 2 + cfg.lds_latency
    assert [x["cycle"] for x in b.beats[0][1:]] == [first + g for g in range(groups)], b.beats[0]


@pytest.mark.parametrize("op, stride, per_window, lanes",
                         [("ds_load_b32", 4, 1, 4), ("ds_load_b32", 0, 1, 4), ("ds_store_b32", 0, 1, 4),
                          ("ds_load_b32", 8, 2, 4), ("ds_load_b32", 16, 4, 4), ("ds_add_u32", 0, 4, 4),
                          ("ds_load_b64", 8, 1, 2), ("ds_load_b128", 16, 1, 1), ("ds_load_b128", 0, 1, 1),
                          ("ds_load_2addr_b32", 4, 1, 2)],
                         ids=["free", "broadcast", "store-same-dword", "2-way", "4-way", "atomic-same-dword",
                              "b64", "b128", "b128-broadcast", "2addr"])
def test_each_window_costs_its_passes(op, stride, per_window, lanes):
    """A window holds as many dwords as a half has banks, whole lanes (fpga: 4 lanes of a b32
    access, 2 of a b64 or 2addr b32, 1 of a b128), and costs exactly its passes, with no
    cycle between windows: lanes in different banks or on one dword (a broadcast) one pass,
    in conflict more (on fpga's 4 banks a stride of 8 bytes is a 2-way conflict, 16 a 4-way
    one; an atomic serves a lane per pass). In place, the request is handed back in the
    cycle of its last pass."""
    cfg = get_config("fpga")
    b = Bench(cfg, seed=SEED + 16)
    b.window(0, 0, 0, 2048)
    data = [[n + 1, 0, 0, 0] for n in range(LANES)]
    b.run({0: [Req(op, 0, 0, [stride * n for n in range(LANES)], data, offset1=1)]}, max_cycles=500).check()
    (t0, _), = b.accepted
    assert b.handed == [t0 + LANES // lanes * per_window], (b.accepted, b.handed)


def test_in_order_under_back_pressure():
    """One SIMD, four waves, multi-beat and conflicting requests, a SIMD that takes a beat only
    one cycle in four: responses stay in issue order per wave (and correct)."""
    rng = random.Random(SEED + 9)
    b = Bench(seed=SEED + 9)
    for w in range(4):
        b.window(1, w, 1024 * w, 1024)
    ops = ["ds_load_b128", "ds_load_2addr_b64", "ds_load_b32", "ds_store_b64", "ds_add_rtn_u32", "ds_load_u8"]
    reqs = [rand_req(rng, rng.choice(ops), 1, k % 4, 1024, k // 4) for k in range(48)]
    b.run(_queues(reqs), ready=0.25, max_cycles=8000).check()


def test_latency_and_throughput():
    """Conflict-free ds_load_b32: the answer is valid 4 cycles after the request, and each
    half takes one such load per cycle."""
    b = Bench(seed=SEED + 10)
    b.window(0, 0, 0, H)
    b.window(2, 0, H, H)
    n = 40
    reqs = [Req("ds_load_b32", s, 0, [4 * (k + l) for l in range(LANES)], [[0] * 4] * LANES, seq=k)
            for s in (0, 2) for k in range(n)]
    b.run(_queues(reqs), max_cycles=500).check()
    assert [c for c, _ in b.accepted] == [k + 1 for k in range(n) for _ in (0, 2)]   # one per cycle per half
    for s in (0, 2):                 # request k is valid from cycle k; its answer arrives 4 cycles later
        assert [x["cycle"] for x in b.beats[s]] == [k + CFG.lds_latency for k in range(n)]


@pytest.mark.parametrize("preset", ["default", "fpga", *VARIANTS])
def test_errors_are_reported(preset):
    """The lowest misaligned lane is named, also when the passes find it a window of 4 lanes
    at a time (fpga) and a later window has one too."""
    cfg = _config(preset)
    b = Bench(cfg, seed=SEED + 11)
    b.window(0, 0, 0, 1024)
    addr = [4 * n for n in range(LANES)]
    addr[5], addr[30] = 22, 121                                 # not dword aligned
    b.run({0: [Req("ds_load_b32", 0, 0, addr, [[0] * 4] * LANES)]}, max_cycles=200)
    e = b.error
    assert (e.valid, e.cause, e.simd, e.wave, e.lane, e.addr) == (1, LdsErrorCause.MISALIGNED, 0, 0, 5, 22)
    b = Bench(seed=SEED + 12)
    b.window(2, 1, 1024, 1024)                                  # CU 1 wave with a window in half 0
    b.run({2: [Req("ds_load_b32", 2, 1, [0] * LANES, [[0] * 4] * LANES)]}, max_cycles=100)
    e = b.error
    assert (e.valid, e.cause, e.simd, e.wave, e.addr) == (1, LdsErrorCause.BAD_ALLOC, 2, 1, 1024)


@pytest.mark.parametrize("preset", ["default", "fpga", pytest.param("rdna1", marks=pytest.mark.slow)])
def test_verilog_lint(preset, tmp_path):
    """Conversion to Verilog and Verilator lint (about 45 s: the 128-access selections are wide)."""
    convert_and_lint(LDS(_config(preset)), f"lds_{preset}", tmp_path)
