"""Memory-system benchmarks on the units alone in Amaranth's simulator: LDS bank conflicts per
lane stride (``lds-stride``), the vector memory unit's line requests per access pattern
(``coalescing``) and load-to-use latency (``latency``). Each checks its cycle figures against
the model's (``sim.memory_ops``) or the documented ones."""
from __future__ import annotations

import math
import random
import time
from collections import deque

import numpy as np
from amaranth.sim import Simulator

from hdl.config import get_config
from hdl.isa_tables import OpId
from hdl.layouts import VecMemReq
from hdl.mem.lds import LDS
from hdl.mem.vmem import COUNTERS, VecMemUnit
from sim.memory_ops import lds_conflict_cycles, lines_touched

from ..memmodel import PyMemory

# ---- unit-level drivers ----------------------------------------------------------------------
_M32 = 0xFFFF_FFFF


class _StreamDriver:
    """Requests on a unit's ``req`` stream ports, every response beat taken at once, from one
    testbench. ``cycle`` counts clock edges; a transfer happens at the edge where valid and
    ready are both high, so a latency is ``answer - accept`` in the unit's cycles (the
    convention of tests/test_lds.py and tests/test_vmem.py: an LDS load answers 4 cycles after
    it is accepted, an L0 hit 5)."""

    def __init__(self, ctx, reqs, resps, ports):
        self.ctx, self.reqs, self.resps, self.ports = ctx, reqs, resps, tuple(ports)
        self.cycle = 0
        self.queues = {p: deque() for p in self.ports}
        self.inflight = {p: deque() for p in self.ports}
        self.records = []            # (port, tag, accept cycle, cycle of the last beat)
        for p in self.ports:
            ctx.set(resps[p].ready, 1)

    def push(self, port, payload, tag=None):
        self.queues[port].append((payload, tag))

    async def idle(self, cycles):
        for _ in range(cycles):
            await self.ctx.tick()
            self.cycle += 1

    async def run(self, sequential=False, max_cycles=200_000):
        """Clock until every queued request is answered (``sequential``: a port offers its
        next request only once the previous one is answered); -> this call's records."""
        ctx, start, first = self.ctx, self.cycle, len(self.records)
        cur = {p: None for p in self.ports}
        while any(self.queues.values()) or any(c is not None for c in cur.values()) \
                or any(self.inflight.values()):
            for p in self.ports:
                if cur[p] is None and self.queues[p] and not (sequential and self.inflight[p]):
                    cur[p] = self.queues[p].popleft()
                    ctx.set(self.reqs[p].payload, cur[p][0])
                    ctx.set(self.reqs[p].valid, 1)
            fired = [p for p in self.ports if cur[p] is not None and ctx.get(self.reqs[p].ready)]
            for p in self.ports:
                r = self.resps[p]
                if ctx.get(r.valid) and ctx.get(r.payload.last):
                    tag, accepted = self.inflight[p].popleft()
                    self.records.append((p, tag, accepted, self.cycle))
            await ctx.tick()
            for p in fired:
                self.inflight[p].append((cur[p][1], self.cycle))
                cur[p] = None
                ctx.set(self.reqs[p].valid, 0)
            self.cycle += 1
            if self.cycle - start > max_cycles:
                raise RuntimeError(f"unit bench: requests unanswered after {max_cycles} cycles")
        return self.records[first:]


def _mem_payload(cfg, op, addrs, *, seq=0, wave=0, vdst=0, exec_mask=_M32):
    """A ``hdl.layouts.VecMemReq`` of a returning load: per-lane byte addresses, no data."""
    return VecMemReq(cfg).const({
        "wave": wave, "seq": seq & 0xFFFF, "op": op, "exec": exec_mask,
        "addr": sum((a & (2 ** 64 - 1)) << (64 * i) for i, a in enumerate(addrs)), "data": 0,
        "offset0": 0, "offset1": 0, "vdst": vdst, "returns": 1})


def _simulate(dut, testbench, processes=()) -> dict:
    """Run ``testbench`` (async, ctx) on ``dut``; -> seconds of set-up and of simulation."""
    t0 = time.perf_counter()
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for p in processes:
        sim.add_process(p)
    sim.add_testbench(testbench)
    t1 = time.perf_counter()
    sim.run()
    return {"setup_s": round(t1 - t0, 2), "sim_s": round(time.perf_counter() - t1, 2)}


def _lds_unit(cfg, body) -> tuple:
    """``await body(ctx, lds, driver)`` on one LDS in CU mode: SIMD 0 (wave 0) owns half 0,
    SIMD 2 (wave 0) half 1, each a whole-half window. -> (body's result, timing)."""
    dut, half, out = LDS(cfg), cfg.lds_bytes_per_half, {}

    async def testbench(ctx):
        ctx.set(dut.wgp, 0)
        for simd, base in ((0, 0), (2, half)):
            ctx.set(dut.alloc.payload, {"simd": simd, "wave": 0, "base": base, "size": half})
            ctx.set(dut.alloc.valid, 1)
            await ctx.tick()
        ctx.set(dut.alloc.valid, 0)
        out["result"] = await body(ctx, dut, _StreamDriver(ctx, dut.req, dut.resp, (0, 2)))
        err = ctx.get(dut.error)
        if err.valid:
            raise RuntimeError(f"LDS error latched: {err}")
    timing = _simulate(dut, testbench)
    return out["result"], timing


_VM_BASE, _VM_BYTES = 0x10_0000, 64 * 1024


def _vmem_unit(cfg, body, latency=None) -> tuple:
    """``await body(ctx, unit, driver, memory)`` on one VecMemUnit (ports 0 and 1: the CU's
    two SIMDs, wave 0 each) with ``dcu.memmodel.PyMemory`` behind its memory port (its
    default latency unless ``latency``), aperture ``[_VM_BASE, _VM_BASE + _VM_BYTES)``."""
    dut, out = VecMemUnit(cfg), {}
    image = np.frombuffer(random.Random(7).randbytes(_VM_BYTES), np.uint8).copy()
    mem = PyMemory(image, _VM_BASE, tag_bits=6, **({} if latency is None else {"latency": latency}))

    async def testbench(ctx):
        ctx.set(dut.aperture_base, _VM_BASE)
        ctx.set(dut.aperture_size, _VM_BYTES)
        out["result"] = await body(ctx, dut, _StreamDriver(ctx, dut.req, dut.resp, (0, 1)), mem)
        err = ctx.get(dut.error)
        if err.valid:
            raise RuntimeError(f"VecMemUnit error latched: {err}")
    timing = _simulate(dut, testbench, [mem.process(dut.mem, dut.mem_resp)])
    return out["result"], timing


def _vmem_counters(ctx, dut) -> dict:
    c = ctx.get(dut.counters)
    return {n: int(getattr(c, n)) for n in COUNTERS}


# ---- lds-stride -------------------------------------------------------------------------------
def lds_stride(strides=range(65), per_stride: int = 8, stream: int = 64) -> dict:
    """ds_load_b32 at lane strides of 0..64 dwords on the LDS alone (default preset): bank
    passes per access from the unit's counters and from the spacing of back-to-back
    acceptances, beside the model's ``sim.memory_ops.lds_conflict_cycles``; then the bandwidth
    of a stream of conflict-free loads on both halves."""
    cfg = get_config("default")
    half = cfg.lds_bytes_per_half
    op = OpId.DS_LOAD_B32

    def counters(ctx, dut, h):
        return [ctx.get(getattr(dut, k)[h]) for k in ("accesses", "bank_cycles", "conflict_cycles")]

    async def body(ctx, dut, drv):
        rows, seq, bad = [], 0, []
        for stride in strides:
            pats = [[(4 * k + 4 * stride * n) % half for n in range(32)] for k in range(per_stride)]
            model = [lds_conflict_cycles(np.array(a, np.int64) // 4) for a in pats]
            before = counters(ctx, dut, 0)
            for k, a in enumerate(pats):
                drv.push(0, _mem_payload(cfg, op, a, seq=seq + k, vdst=8), k)
            seq += per_stride
            recs = await drv.run()
            acc, passes, conflicts = (x - y for x, y in zip(counters(ctx, dut, 0), before))
            accepts = sorted(r[2] for r in recs)
            spacing = [b - a for a, b in zip(accepts, accepts[1:])]
            if acc != per_stride or passes != sum(model) or conflicts != sum(m - 1 for m in model) \
                    or spacing != model[:-1]:
                bad.append(f"stride {stride}: {acc} accesses, {passes} bank cycles, {conflicts} conflict "
                           f"cycles, acceptance spacing {spacing}; model {model}")
            rows.append({"stride_dwords": stride, "model_cycles": model[0],
                         "bank_cycles_per_access": round(passes / per_stride, 3),
                         "conflict_cycles_per_access": round(conflicts / per_stride, 3),
                         "issue_interval": round(sum(spacing) / len(spacing), 3) if spacing else None,
                         "latency": min(r[3] - r[2] for r in recs)})
            await drv.idle(2)
        # bandwidth: conflict-free loads back to back on both halves
        for k in range(stream):
            for port in (0, 2):
                drv.push(port, _mem_payload(cfg, op, [4 * ((k + n) % (half // 4)) for n in range(32)],
                                            seq=seq + k, vdst=9), k)
        recs = await drv.run()
        bw = {}
        for port, h in ((0, 0), (2, 1)):
            answers = sorted(r[3] for r in recs if r[0] == port)
            accepts = sorted(r[2] for r in recs if r[0] == port)
            span = answers[-1] - answers[0] + 1
            bw[f"half{h}"] = {"loads": stream, "cycles": span,
                              "loads_per_cycle": round(stream / span, 3),
                              "bytes_per_cycle": round(128 * stream / span, 1),
                              "accept_cycles": accepts[-1] - accepts[0] + 1}
        return rows, bw, bad, drv.cycle

    (rows, bw, bad, cycles), timing = _lds_unit(cfg, body)
    if bad:
        raise RuntimeError("lds-stride: the LDS's bank cycles disagree with sim.memory_ops."
                           "lds_conflict_cycles:\n  " + "\n  ".join(bad))
    per_half = min(v["bytes_per_cycle"] for v in bw.values())
    return {"benchmark": "lds-stride", "rows": rows,
            "bandwidth": bw,
            "bandwidth_bytes_per_cycle_per_half": per_half,
            "goal": "bank cycles per access = lds_conflict_cycles (gcd(S, 32) for S > 0; checked, the bench "
                    "fails otherwise); conflict-free stream 128 B/cycle per half",
            "met": per_half >= 128,
            "note": f"hdl.mem.lds.LDS alone, preset default, CU mode, {per_stride} loads per stride issued back to "
                    "back by SIMD 0 (half 0), every lane active, load k at dword k + S * lane; "
                    "bank_cycles/conflict_cycles per access from the unit's counters, issue_interval: cycles "
                    "between acceptances of consecutive loads (a half accepts the next instruction in its "
                    "predecessor's last pass); latency: acceptance to answer; bandwidth: "
                    f"{stream} conflict-free b32 loads per half (SIMDs 0 and 2) back to back, 128 bytes each, "
                    "over the cycles from the first answer to the last",
            "simulation": {"cycles": cycles, **timing}}


# ---- coalescing -------------------------------------------------------------------------------
_PATTERNS = (("unit stride", 1), ("unit stride, +64 B", "mis"), ("stride 2", 2), ("stride 4", 4),
             ("stride 8", 8), ("stride 32", 32), ("random", "rand"))


def _pattern_addrs(kind, k, rng, region):
    """Lane byte addresses (offsets in ``region`` bytes) of load ``k`` of a pattern."""
    if kind == "mis":
        return [(128 * k + 64 + 4 * n) % region for n in range(32)]
    if kind == "rand":
        return [4 * rng.randrange(region // 4) for _ in range(32)]
    return [(128 * k + 4 * kind * n) % region for n in range(32)]


def coalescing(per_pattern: int = 16, stream: int = 64) -> dict:
    """global_load_b32 patterns on VecMemUnit alone (default preset): line requests per
    instruction (the unit's ``lines`` counter) beside ``sim.memory_ops.lines_touched``, and the
    cycles per instruction of a stream of such loads once their lines are in the L0; then the
    L0 hit bandwidth of a stream of one-line loads."""
    cfg = get_config("default")
    region = cfg.l0_bytes                  # every pattern stays in it: after warming, all hits
    op = OpId.GLOBAL_LOAD_B32
    rng = random.Random(11)

    async def body(ctx, dut, drv, mem):
        for line in range(region // 128):     # warm: every line of the region in the L0
            drv.push(line % 2, _mem_payload(cfg, op, [_VM_BASE + 128 * line + 4 * n for n in range(32)]), line)
        await drv.run()
        warm = _vmem_counters(ctx, dut)
        if warm["misses"] != region // 128:
            raise RuntimeError(f"coalescing: warming {region // 128} lines gave {warm}")
        rows, bad, seq = [], [], 1
        for name, kind in _PATTERNS:
            pats = [[_VM_BASE + a for a in _pattern_addrs(kind, k, rng, region)] for k in range(per_pattern)]
            model = [lines_touched(np.array(a, np.int64), 4) for a in pats]
            before = _vmem_counters(ctx, dut)
            for k, a in enumerate(pats):
                drv.push(k % 2, _mem_payload(cfg, op, a, seq=seq + k // 2), k)
            seq += per_pattern
            recs = await drv.run()
            after = _vmem_counters(ctx, dut)
            d = {n: after[n] - before[n] for n in after}
            if d["lines"] != sum(model) or d["hits"] != sum(model) or d["misses"] or d["instructions"] != per_pattern:
                bad.append(f"{name}: counters {d}, model lines {model}")
            answers = sorted(r[3] for r in recs)
            span = answers[-1] - answers[0]
            cpi = span / (per_pattern - 1)
            rows.append({"pattern": name, "lines_per_instruction": round(d["lines"] / per_pattern, 3),
                         "model_lines_touched": round(sum(model) / per_pattern, 3),
                         "hit_cycles_per_instruction": round(cpi, 3),
                         "useful_bytes_per_cycle": round(128 / cpi, 1),
                         "line_bytes_per_cycle": round(128 * d["lines"] / per_pattern / cpi, 1)})
            await drv.idle(4)
        # L0 hit bandwidth: one-line loads back to back from both SIMDs
        for k in range(stream):
            line = k % (region // 128)
            drv.push(k % 2, _mem_payload(cfg, op, [_VM_BASE + 128 * line + 4 * ((n + k) % 32) for n in range(32)],
                                         seq=seq + k // 2), k)
        before = _vmem_counters(ctx, dut)
        recs = await drv.run()
        after = _vmem_counters(ctx, dut)
        if after["hits"] - before["hits"] != stream:
            bad.append(f"hit stream: {after['hits'] - before['hits']} hits of {stream}")
        answers = sorted(r[3] for r in recs)
        accepts = sorted(r[2] for r in recs)
        span = answers[-1] - answers[0] + 1
        bw = {"loads": stream, "cycles": span, "lines_per_cycle": round(stream / span, 3),
              "bytes_per_cycle": round(128 * stream / span, 1), "accept_cycles": accepts[-1] - accepts[0] + 1,
              "rq_max": after["rq_max"]}
        return rows, bw, bad, drv.cycle

    (rows, bw, bad, cycles), timing = _vmem_unit(cfg, body)
    if bad:
        raise RuntimeError("coalescing: the unit's line requests disagree with sim.memory_ops.lines_touched:\n  "
                           + "\n  ".join(bad))
    return {"benchmark": "coalescing", "rows": rows, "hit_bandwidth": bw,
            "hit_bandwidth_bytes_per_cycle": bw["bytes_per_cycle"],
            "goal": "lines per instruction = lines_touched (checked, the bench fails otherwise); a stream of "
                    "hitting loads: one 128-byte line per cycle (128 B/cycle)",
            "met": bw["bytes_per_cycle"] >= 128,
            "note": f"hdl.mem.vmem.VecMemUnit alone, preset default, dcu.memmodel.PyMemory behind it; {per_pattern} "
                    f"global_load_b32 per pattern, all lanes active, alternating between the CU's two SIMD ports, "
                    f"addresses inside one {region}-byte region (the L0's size) warmed first, so every line hits; "
                    "load k of a strided pattern starts at line k; random: dword-aligned lanes anywhere in the "
                    "region; hit_cycles_per_instruction: spacing of the answers in the stream; useful bytes: the "
                    "128 bytes the 32 lanes load; hit bandwidth: one-line loads back to back from both SIMDs, "
                    "over the cycles from the first answer to the last",
            "simulation": {"cycles": cycles, **timing}}


# ---- latency ----------------------------------------------------------------------------------
def latency(samples: int = 8) -> dict:
    """Load-to-use latency at unit level: a request accepted by the unit to its (last) answer
    beat, one load at a time on an otherwise idle unit."""
    cfg = get_config("default")
    rows = []

    async def vmem_body(ctx, dut, drv, mem):
        op, seq = OpId.GLOBAL_LOAD_B32, 0
        out = {name: [] for name in ("L0 miss, 1 line", "L0 hit, 1 line", "L0 miss, 2 lines (unit stride +64 B)",
                                     "L0 hit, 2 lines (unit stride +64 B)")}
        for k in range(samples):             # each miss, then a hit on the lines it brought
            for lines, shift in ((1, 0), (2, 64)):
                start = _VM_BASE + 128 * (16 * k + 4 * lines) + shift
                for kind, rot in (("miss", 0), ("hit", 3)):
                    drv.push(0, _mem_payload(cfg, op, [start + 4 * ((n + rot) % 32) for n in range(32)], seq=seq), k)
                    seq += 1
                    before = _vmem_counters(ctx, dut)
                    (rec,) = await drv.run(sequential=True)
                    after = _vmem_counters(ctx, dut)
                    got = after["hits"] - before["hits"], after["misses"] - before["misses"]
                    want = (0, lines) if kind == "miss" else (lines, 0)
                    name = f"L0 {kind}, {lines} line" + ("s (unit stride +64 B)" if lines == 2 else "")
                    if got != want:
                        raise RuntimeError(f"latency: {name}: (hits, misses) {got}, expected {want}")
                    out[name].append(rec[3] - rec[2])
                    await drv.idle(3)
        return out, mem.lo

    async def lds_body(ctx, dut, drv):
        op, out = OpId.DS_LOAD_B32, {}
        for name, stride in (("LDS, conflict-free", 1), ("LDS, broadcast (stride 0)", 0),
                             ("LDS, stride 2 dwords (2 passes)", 2), ("LDS, stride 32 dwords (32 passes)", 32)):
            lat = []
            for k in range(samples):
                drv.push(0, _mem_payload(cfg, op, [4 * k + 4 * stride * n for n in range(32)], seq=k), k)
                (rec,) = await drv.run(sequential=True)
                lat.append(rec[3] - rec[2])
                await drv.idle(2)
            out[name] = (lat, math.gcd(stride, 32) if stride else 1)
        return out

    (vm, mem_latency), t_vmem = _vmem_unit(cfg, vmem_body)
    lds, t_lds = _lds_unit(cfg, lds_body)
    for name, (lat, passes) in lds.items():
        rows.append({"unit": "LDS", "access": "ds_load_b32, " + name.split(", ", 1)[1], "cycles_min": min(lat),
                     "cycles_max": max(lat), "samples": len(lat),
                     "documented": cfg.lds_latency + passes - 1})
    doc_hit = max(5, cfg.l0_hit_latency)
    for name, lat in vm.items():
        lines = 2 if "2 lines" in name else 1
        doc = doc_hit + lines - 1 if "hit" in name else 3 + mem_latency + 5 if lines == 1 else None
        rows.append({"unit": "VecMemUnit", "access": "global_load_b32, " + name, "cycles_min": min(lat),
                     "cycles_max": max(lat), "samples": len(lat), "documented": doc})
    return {"benchmark": "latency", "rows": rows,
            "memory_latency": mem_latency,
            "goal": f"measure: LDS {cfg.lds_latency} (config.lds_latency), L0 hit max(5, l0_hit_latency) = {doc_hit}, "
                    f"miss 3 + memory latency + 5 (docs/memory.md)",
            "note": "cycles from the unit accepting the request (valid and ready at a clock edge) to the edge that "
                    "takes the instruction's last answer beat, one load at a time on an idle unit, every lane "
                    "active, preset default; miss: dcu.memmodel.PyMemory with its default fixed latency "
                    f"({mem_latency} cycles, = config.memory_latency) and the arbiter-free port of the unit alone "
                    "(on the DCU the MemArbiter adds no cycle); 'documented' is the figure docs/memory.md gives "
                    "(an extra line or bank pass adds a cycle; it gives none for a two-line miss); the SIMD adds its "
                    "own issue and write-back cycles on top (not measured here)",
            "simulation": {"vmem": t_vmem, "lds": t_lds}}
