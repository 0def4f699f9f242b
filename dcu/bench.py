"""Benchmarks (``dcu bench NAME``): results go to bench/results/NAME.json and bench/RESULTS.md.

Speed figures are measured here, never asserted in tests: these machines are shared and
noisy, so each benchmark measures what it compares in one run.
"""
from __future__ import annotations

import inspect
import json
import math
import os
import platform
import random
import re
import shutil
import tempfile
import time
from collections import deque
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

MODEL_SPEED_TESTS = ("saxpy_cl", "matmul_tile_cl", "lds_reduce_cl", "divergence_cl", "int_alu_cl")


def _model_speed(repeats: int = 3) -> dict:
    """Wave-instructions per second of the reference model on several firmware kernels."""
    from firmware_tests.manifest import TESTS, get
    from dcu.firmware import run_firmware
    names = [n for n in MODEL_SPEED_TESTS if any(t.name == n for t in TESTS)]
    rows = []
    for name in names:
        test = get(name)
        run_firmware(test)  # warm the build cache so the timing is the model alone
        best = None
        for _ in range(repeats):
            t0 = time.perf_counter()
            result = run_firmware(test)
            dt = time.perf_counter() - t0
            if not result.ok:
                raise RuntimeError(result.describe())
            best = dt if best is None else min(best, dt)
        n = result.run.report.instructions
        rows.append({"test": name, "wave_instructions": n, "seconds": round(best, 4),
                     "wave_instructions_per_s": round(n / best)})
    total_n = sum(r["wave_instructions"] for r in rows)
    total_t = sum(r["seconds"] for r in rows)
    return {"benchmark": "model-speed", "rows": rows,
            "overall_wave_instructions_per_s": round(total_n / total_t) if total_t else None,
            "note": "best of %d runs each, including launch set-up (build cached)" % repeats}


def _asm_kernel(name: str, body: str, vgprs: int = 16, buffers: int = 0):
    """Assemble a bare kernel for the benchmarks; with ``buffers``, s[0:1] is the kernarg
    pointer to that many buffer addresses and ttmp9 the workgroup id."""
    from .launch import load_program
    src = ROOT / "build" / "bench" / f"{name}.s"
    src.parent.mkdir(parents=True, exist_ok=True)
    args = (f"  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n"
            f"  .amdhsa_kernarg_size {8 * buffers}\n  .amdhsa_system_sgpr_workgroup_id_x 1\n") if buffers else ""
    src.write_text(f""".text\n.globl {name}\n.p2align 8\n.type {name},@function\n{name}:\n{body}\n  s_endpgm
.rodata\n.p2align 6\n.amdhsa_kernel {name}\n  .amdhsa_next_free_vgpr {vgprs}\n  .amdhsa_next_free_sgpr 8
{args}  .amdhsa_wavefront_size32 1\n  .amdhsa_workgroup_processor_mode 0\n  .amdhsa_float_denorm_mode_32 3
.end_amdhsa_kernel\n""")
    return load_program(src).kernel(name)


def _fma_body(reps: int) -> str:
    init = [f"  v_cvt_f32_u32 v{r}, v0" for r in range(1, 11)]
    chains = [f"  v_fmac_f32 v{1 + k}, v9, v10" for k in range(8)]
    return "\n".join(init + chains * reps)


def _lanes_config(lanes: int):
    """The default preset with ``lanes`` physical lanes (everything else equal)."""
    import dataclasses
    from hdl.config import get_config
    return dataclasses.replace(get_config("default"), name=f"default-{lanes}-lanes", lanes=lanes)


def _simd_run(kernel, waves: int, config, more: int = 0):
    """Run ``kernel`` with ``waves`` waves (then ``more`` times again) on one simulated SIMD."""
    from .lockstep import SimdRun
    runs = [SimdRun(kernel, (1,), (32 * waves,), [], config, latency=(1, 1), lockstep=False)
            for _ in range(1 + more)]
    t0 = time.perf_counter()
    runs[0].run(more=runs[1:])
    return runs, time.perf_counter() - t0


def _valu_ipc() -> dict:
    """VALU instructions per cycle on one SIMD with independent FMAs, per physical lane width,
    and the dependent-chain issue latency."""
    kernel = _asm_kernel("valu_ipc", _fma_body(16))
    dep = _asm_kernel("valu_dep", "\n".join(["  v_mov_b32 v1, v0"] + ["  v_add_nc_u32 v1, v1, v0"] * 64))
    from .lockstep import SimdRun
    rows = []
    for lanes in (32, 16, 8):
        cfg = _lanes_config(lanes)
        runs = [SimdRun(kernel, (1,), (32 * waves,), [], cfg, latency=(1, 1), lockstep=False) for waves in (1, 2, 4)]
        chain = SimdRun(dep, (1,), (32,), [], cfg, latency=(1, 1), lockstep=False)
        runs[0].run(more=runs[1:] + [chain])   # one elaboration per lane width
        c = chain.valu_cycles
        latency = round((c[-1] - c[1]) / (len(c) - 2), 2)
        for waves, run in zip((1, 2, 4), runs):
            c = run.valu_cycles
            rows.append({"lanes": lanes, "waves": waves, "valu_instructions": len(c), "cycles": c[-1] - c[0] + 1,
                         "valu_ipc": round(len(c) / (c[-1] - c[0] + 1), 3),
                         "expected_ipc": round(1 / cfg.valu_cycles, 3),
                         "valu_busy": run.perf["valu_busy"], "dependent_issue_latency": latency})
    return {"benchmark": "valu-ipc", "rows": rows,
            "goal": "valu_ipc near 1 / valu_cycles (32 // lanes) with 2 or more waves; dependent issue latency "
                    "max(5, valu_cycles) (RDNA: 5)"}


def _valu_peak_kernel(iterations: int):
    """Eight independent FMA chains, 32 FMAs per loop iteration; each lane stores its first
    chain. Every value is a multiple of 0.5 below 2^24: exact, so the model checks it."""
    init = [f"  v_cvt_f32_u32 v{r}, v0" for r in range(1, 9)]
    body = [f"  v_fmac_f32 v{1 + k % 8}, 0.5, v9" for k in range(32)]
    text = "\n".join([
        "  s_load_b64 s[2:3], s[0:1], 0x0", *init, "  v_mov_b32 v9, 1.0", f"  s_mov_b32 s4, {iterations}",
        ".Lloop:", *body, "  s_add_co_i32 s4, s4, -1", "  s_cmp_lg_u32 s4, 0", "  s_cbranch_scc1 .Lloop",
        "  v_lshl_or_b32 v10, ttmp9, 6, v0", "  v_lshlrev_b32 v10, 2, v10", "  s_wait_kmcnt 0",
        "  global_store_b32 v10, v1, s[2:3]"])
    return _asm_kernel("valu_peak", text, buffers=1)


def _valu_peak(config: str = "default", iterations=(32, 96), groups: int = 8) -> dict:
    """The whole DCU on an FMA-bound loop: ``groups`` workgroups of two waves fill every wave
    slot of the four SIMDs; VALU wave-instructions per cycle against the peak of one per SIMD
    per cycle (RDNA: 4 per DCU, 256 FP32 FLOP per cycle counting an FMA as 2). Two loop
    lengths, each run whole (launch to the last wave's end), under each wave-issue policy;
    the difference between the lengths is the steady state, without the launch ramp, cold
    instruction misses and the final store."""
    import numpy as np
    from hdl.config import WAVE_POLICIES, get_config
    from .launch import launch
    base = get_config(config)
    peak = base.simds * base.lanes / 32   # wave32 VALU instructions per cycle
    n = 64 * groups
    rows, steady, t0 = [], {}, time.perf_counter()
    for policy in WAVE_POLICIES:
        cfg = base.replace(name=f"{config}-{policy}", wave_policy=policy)
        mine = []
        for its in iterations:
            kern = _valu_peak_kernel(its)
            want = launch(kern, (groups,), (64,), [np.zeros(n, np.float32)], backend="model", config=base)
            run = launch(kern, (groups,), (64,), [np.zeros(n, np.float32)], backend="rtl", config=cfg, progress=False)
            if not np.array_equal(run.buffers[0], want.buffers[0]):
                raise RuntimeError("valu-peak: the RTL's results differ from the model's")
            r, c = run.report, run.report.counters
            total = {k: sum(c[f"simd{s}.{k}"] for s in range(base.simds))
                     for k in ("issued.valu", "issued.salu", "issued.branch", "stall.fetch", "stall.held",
                               "stall.dependency", "stall.storecnt")}
            valu = total["issued.valu"]
            mine.append({"wave_policy": policy, "iterations": its, "waves": c["dispatch.waves"],
                         "max_resident": c["dispatch.max_resident"], "cycles": r.cycles, "valu": valu,
                         "salu_and_branch": total["issued.salu"] + total["issued.branch"],
                         "valu_ipc": round(valu / r.cycles, 3), "fraction_of_peak": round(valu / r.cycles / peak, 4),
                         **{k.replace("stall.", "stall_"): v for k, v in total.items() if k.startswith("stall.")}})
        a, b = mine[0], mine[-1]
        ipc = (b["valu"] - a["valu"]) / (b["cycles"] - a["cycles"])
        steady[policy] = {"valu_ipc": round(ipc, 3), "fraction_of_peak": round(ipc / peak, 4),
                          "flop_per_cycle": round(ipc * 64, 1)}
        rows += mine
    return {"benchmark": "valu-peak", "config": config, "rows": rows, "peak_ipc": peak,
            "peak_flop_per_cycle": peak * 64, "steady": steady,
            "goal": ">= 0.95 of peak (>= 243 of 256 FLOP/cycle)",
            "note": "loop of 32 v_fmac_f32 (8 independent chains) + s_add/s_cmp/s_cbranch per iteration; rows: "
                    "whole dispatches, stalls summed over the SIMDs (cycles in which neither issue pipe issued); "
                    "steady: the difference of a policy's two rows (within about 1 %: the tails of the two runs "
                    "differ); results checked equal to the model's. Oldest-first lets the oldest wave run "
                    "ahead, so the SIMD's last wave runs alone: each iteration then costs one cycle more "
                    "(the loop branch resolving; the loop line spares the refetch)",
            "wall_s": round(time.perf_counter() - t0, 1)}


def _sim_speed_simd(repeats: int = 3) -> dict:
    """Cycles per second of one SIMD in Amaranth's simulator on a VALU-heavy kernel (4 waves),
    the best of ``repeats`` dispatches on one elaborated SIMD."""
    kernel = _asm_kernel("sim_speed_simd", _fma_body(64))
    rows = []
    from hdl.config import get_config
    for preset in ("default", "fpga"):
        cfg = get_config(preset)
        runs, seconds = _simd_run(kernel, cfg.wave_slots, cfg, more=repeats - 1)
        best = max(runs, key=lambda r: r.cycles / r.sim_cpu_seconds)
        rows.append({"preset": preset, "lanes": cfg.lanes, "waves": cfg.wave_slots, "cycles": best.cycles,
                     "sim_seconds": round(best.sim_seconds, 2), "cycles_per_s": round(best.cycles / best.sim_seconds),
                     "cycles_per_cpu_s": round(best.cycles / best.sim_cpu_seconds), "signals": runs[0].signal_count,
                     "with_setup_seconds": round(seconds, 2)})
    return {"benchmark": "sim-speed-simd", "rows": rows,
            "goal": ">= 1,000 cycles/s",
            "note": "best of %d dispatches; simulation time includes the Python testbench that serves memory "
                    "(set-up: elaboration and model run excluded); cycles_per_cpu_s uses this process's CPU "
                    "time, steadier than wall time on a shared machine" % repeats}


# ---- memory system: unit-level drivers ------------------------------------------------------
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
    from hdl.layouts import VecMemReq
    return VecMemReq(cfg).const({
        "wave": wave, "seq": seq & 0xFFFF, "op": op, "exec": exec_mask,
        "addr": sum((a & (2 ** 64 - 1)) << (64 * i) for i, a in enumerate(addrs)), "data": 0,
        "offset0": 0, "offset1": 0, "vdst": vdst, "returns": 1})


def _simulate(dut, testbench, processes=()) -> dict:
    """Run ``testbench`` (async, ctx) on ``dut``; -> seconds of set-up and of simulation."""
    from amaranth.sim import Simulator
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
    from hdl.mem.lds import LDS
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
    import numpy as np
    from hdl.mem.vmem import VecMemUnit
    from .memmodel import PyMemory
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
    from hdl.mem.vmem import COUNTERS
    c = ctx.get(dut.counters)
    return {n: int(getattr(c, n)) for n in COUNTERS}


# ---- lds-stride -------------------------------------------------------------------------------
def _lds_stride(strides=range(65), per_stride: int = 8, stream: int = 64) -> dict:
    """ds_load_b32 at lane strides of 0..64 dwords on the LDS alone (default preset): bank
    passes per access from the unit's counters and from the spacing of back-to-back
    acceptances, beside the model's ``sim.memory_ops.lds_conflict_cycles``; then the bandwidth
    of a stream of conflict-free loads on both halves."""
    import numpy as np
    from hdl.config import get_config
    from hdl.isa_tables import OpId
    from sim.memory_ops import lds_conflict_cycles
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


def _coalescing(per_pattern: int = 16, stream: int = 64) -> dict:
    """global_load_b32 patterns on VecMemUnit alone (default preset): line requests per
    instruction (the unit's ``lines`` counter) beside ``sim.memory_ops.lines_touched``, and the
    cycles per instruction of a stream of such loads once their lines are in the L0; then the
    L0 hit bandwidth of a stream of one-line loads."""
    import numpy as np
    from hdl.config import get_config
    from hdl.isa_tables import OpId
    from sim.memory_ops import lines_touched
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
def _latency(samples: int = 8) -> dict:
    """Load-to-use latency at unit level: a request accepted by the unit to its (last) answer
    beat, one load at a time on an otherwise idle unit."""
    from hdl.config import get_config
    from hdl.isa_tables import OpId
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


# ---- ooo: the seed's out-of-order experiment on the whole DCU -------------------------------
class _TracedDCU:
    """Backend ``rtl``'s DCU (a :class:`dcu.rtl.RtlSession`: the same host and memory model)
    plus a monitor of the vector memory requests the two VecMemUnits accept. One simulator
    per configuration, reset for each dispatch."""

    def __init__(self, config, watchdog_cycles: int = 50_000):
        from .rtl import RtlSession
        self.config = config
        self.session = RtlSession(config, watchdog_cycles=watchdog_cycles)
        dcu = self.session.dcu
        ports = [(c * config.simds_per_cu + k, v.req[k]) for c, v in enumerate(dcu.vmem)
                 for k in range(config.simds_per_cu)]
        watched = []
        for _, p in ports:
            watched += [p.valid & p.ready, p.payload.wave, p.payload.addr[:64]]
        self.accesses: list = []

        async def monitor(ctx):          # one sample per cycle: about 1% of the DCU's own cost
            self.accesses = accesses = []
            cycle = 0
            async for _, _, *v in ctx.tick().sample(*watched):
                cycle += 1
                for i, (simd, _) in enumerate(ports):
                    if v[3 * i]:
                        accesses.append((cycle, simd, v[3 * i + 1], v[3 * i + 2]))

        self.session.sim.add_process(monitor)

    def run(self, kernel, grid, block, args, *, latency, seed=0, reorder=True, max_cycles=200_000):
        """One dispatch; -> (prepared dispatch, cycles, counters, accesses [(cycle, simd, wave
        slot, lane-0 address)], seconds)."""
        from .prepare import launch_dims, prepare
        self.config.check_kernel(kernel, launch_dims(block))
        prep = prepare(kernel, grid, block, args)
        res = self.session.run(prep, kernel, bool(kernel.wgp_mode), latency=latency, seed=seed, reorder=reorder,
                               max_cycles=max_cycles, progress=False)
        return prep, res.cycles, res.counters, self.accesses, res.seconds


def _xy_alone_kernel(test):
    """The experiment's kernel with wave Y leaving right after the barrier: no chase and no
    flag, so wave X runs its unchanged loop alone until ``cap`` iterations."""
    from firmware_tests.manifest import path
    from .launch import load_program
    src = Path(path(test)).read_text()
    mark = "\t; ---------------- wave Y: pointer chase\n"
    if src.count(mark) != 1:
        raise RuntimeError(f"ooo: cannot find wave Y's section in {path(test)}")
    out = ROOT / "build" / "bench" / f"{test.kernel}_alone.s"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(src.replace(mark, mark + "\ts_endpgm                                 ; (bench: X alone)\n"))
    return load_program(out).kernel(test.kernel)


def _xy_run(dcu, test, kernel, args, latency):
    """One run; -> dict of X's and Y's accesses (cycles) and the kernel's outputs."""
    prep, cycles, counters, acc, seconds = dcu.run(kernel, test.grid, test.block, args, latency=latency)
    chain_alloc, x_alloc = prep.buffers[0][0], prep.buffers[1][0]
    ys = [c for c, s, w, a in acc if chain_alloc.base <= a < chain_alloc.end]
    xs = [c for c, s, w, a in acc if x_alloc.base <= a < x_alloc.end]
    x_waves = {(s, w) for c, s, w, a in acc if x_alloc.base <= a < x_alloc.end}
    y_waves = {(s, w) for c, s, w, a in acc if chain_alloc.base <= a < chain_alloc.end}
    out = prep.read_back()[2]
    return {"cycles": cycles, "seconds": round(seconds, 1), "x": xs, "y": ys, "count": int(out[2]),
            "out": out, "buffers": prep.read_back(), "x_waves": sorted(x_waves), "y_waves": sorted(y_waves),
            "counters": counters}


def _rate(times, per_iter):
    """X's loads per cycle in its loop, the first (cold: its lines miss) iteration left out:
    loads of iterations 2..n-1 over the cycles from iteration 2's first load to iteration n's."""
    starts = times[per_iter::per_iter]
    if len(starts) < 2:
        raise RuntimeError("ooo: X made too few iterations to measure its rate")
    return per_iter * (len(starts) - 1) / (starts[-1] - starts[0])


def _ooo(tests=("wave_xy_asm", "wave_xy_u8_asm"), K: int = 32, latency: int = 200, cap_alone: int = 48,
         png: bool = True) -> dict:
    """The seed's experiment on the DCU (backend rtl, preset default): wave Y chases K pointers
    (each load a miss to memory of fixed ``latency``), wave X loops over loads that hit, until
    Y is done. For return_order ``in_order`` and ``per_wave``: X's accesses over Y's; and X
    alone (Y leaves at once; X runs ``cap_alone`` iterations) as the baseline of X's rate."""
    import numpy as np
    from firmware_tests.manifest import get, path
    from hdl.config import get_config
    from .launch import load_program
    base = get_config("default")
    if base.return_order != "per_wave":
        raise RuntimeError("ooo: the default preset's return order is not per_wave")
    dcus = {order: _TracedDCU(base.replace(return_order=order)) for order in ("in_order", "per_wave")}
    rows, all_runs, waves = [], {}, {}

    def copy(args):
        return [a.copy() if isinstance(a, np.ndarray) else a for a in args]

    for name in tests:
        test = get(name)
        per_iter = 8 if "u8" in name else 4
        kernel = load_program(path(test), vopd=False).kernel(test.kernel)
        args = test.make_args(np.random.default_rng(0))
        args[3] = np.uint32(K)
        runs = {}
        for order in ("in_order", "per_wave"):
            runs[order] = r = _xy_run(dcus[order], test, kernel, copy(args), latency)
            test.check(copy(args), r["buffers"])           # the manifest's own check of the results
        alone_args = copy(args)
        alone_args[4] = np.uint32(cap_alone)
        # the default preset is per_wave: the same simulator, reset
        runs["alone"] = r = _xy_run(dcus["per_wave"], test, _xy_alone_kernel(test), alone_args, latency)
        if r["count"] != cap_alone or r["y"]:
            raise RuntimeError(f"ooo {name} alone: X made {r['count']} iterations (cap {cap_alone}), "
                               f"Y {len(r['y'])} loads")
        alone_rate = _rate(r["x"], per_iter)
        for order in ("in_order", "per_wave", "alone"):
            r = runs[order]
            xs, ys = r["x"], r["y"]
            x_acc = per_iter * r["count"]
            if len(xs) != x_acc:
                raise RuntimeError(f"ooo {name} {order}: the monitor saw {len(xs)} X loads, the kernel counted {x_acc}")
            if order != "alone" and len(ys) != K:
                raise RuntimeError(f"ooo {name} {order}: the monitor saw {len(ys)} Y loads, K = {K}")
            rate = _rate(xs, per_iter)
            step = (ys[-1] - ys[0]) / (K - 1) if order != "alone" and K > 1 else None
            c = r["counters"]
            rows.append({"kernel": name, "return_order": order if order != "alone" else "X alone (Y leaves)",
                         "K": K if order != "alone" else 0, "x_iterations": r["count"], "x_accesses": x_acc,
                         "x_per_y": round(x_acc / K, 2) if order != "alone" else None,
                         "alone_x_per_y": round(alone_rate * step, 2) if step else None,
                         "x_per_y_vs_alone": round(x_acc / K / (alone_rate * step), 3) if step else None,
                         "y_cycles_per_access": round(step, 1) if step else None,
                         "x_loads_per_kcycle": round(1000 * rate, 1),
                         "x_rate_vs_alone": round(rate / alone_rate, 3),
                         "cycles": r["cycles"], "sim_seconds": r["seconds"],
                         "l0_hits": c.get("vmem0.hits", 0) + c.get("vmem1.hits", 0),
                         "l0_misses": c.get("vmem0.misses", 0) + c.get("vmem1.misses", 0)})
            all_runs[(name, order)] = r
            waves[f"{name} {order}"] = {"x": r["x_waves"], "y": r["y_waves"]}
    per_wave = {r["kernel"]: {"rate": r["x_rate_vs_alone"], "x_per_y": r["x_per_y_vs_alone"]}
                for r in rows if r["return_order"] == "per_wave"}
    result = {"benchmark": "ooo", "rows": rows,
              "per_wave_x_vs_alone": per_wave,
              "goal": "per_wave: X makes >= 90% of its alone figure, both its rate and its accesses per Y access "
                      "(in_order: X waits behind Y's misses)",
              "met": all(min(v.values()) >= 0.9 for v in per_wave.values()),
              "config": {"preset": "default", "memory_latency": latency, "reorder": True, "K": K,
                         "cap_alone": cap_alone, "waves (simd, slot)": waves},
              "note": "backend rtl's DCU (hdl/top/dcu.py, built as dcu.rtl does) with dcu.memmodel.PyMemory at a fixed "
                      f"latency of {latency} cycles (the rtl default is a random (8, 32)), so each of Y's loads (one "
                      "chain node per 128-byte line, K distinct lines) misses the L0; X's xbuf lines stay in it. "
                      "Accesses: the global loads the VecMemUnits accept, recorded per cycle by a monitor process "
                      "(X's count equals 4 (u8: 8) * out[2] and Y's K, checked; the manifest's check passes). "
                      "x_per_y: X's accesses / K (the seed's figure). x_loads_per_kcycle: X's rate in its loop "
                      "without its first (cold) iteration: loads of iterations 2..n-1 per 1,000 cycles from "
                      "iteration 2's first load to iteration n's. Baseline 'X alone': the same kernel with Y ending "
                      "right after the barrier (no chase, no flag; build/bench/*_alone.s), so X runs its unchanged "
                      f"loop, LDS flag poll included, for cap = {cap_alone} iterations while no other wave uses "
                      "memory; alone_x_per_y: that rate times the row's Y cycles per chase step, i.e. X's accesses "
                      "per Y access had Y's misses not slowed X; x_per_y_vs_alone: x_per_y / alone_x_per_y (below 1 "
                      "also because x_per_y counts X's cold first iteration and the loop's lag in seeing Y's flag). "
                      "x_rate_vs_alone: the row's X rate / the alone rate."}
    if png:
        RESULTS.mkdir(parents=True, exist_ok=True)
        _ooo_png(RESULTS / "ooo.png", all_runs, latency, K)
        result["plot"] = "bench/results/ooo.png (cumulative loads over cycles per run: X blue, Y red)"
    return result


def _ooo_png(path, runs, latency, K):
    """Cumulative loads over cycles, one panel per run ({(kernel, order): run}): X blue (full
    scale: the most X loads of any run), Y red (full scale K), from each run's first load."""
    import numpy as np
    from .timeline import draw_text, write_png
    W, PH, PAD, LEFT = 900, 120, 24, 40
    keys = list(runs)
    t0 = {k: min(runs[k]["x"] + runs[k]["y"]) for k in keys}
    span = max(max(runs[k]["x"] + runs[k]["y"]) - t0[k] for k in keys) + 1
    xmax = max(len(runs[k]["x"]) for k in keys)
    img = np.full((PAD + len(keys) * (PH + PAD) + 8, W, 3), 255, np.uint8)
    draw_text(img, LEFT, 6, f"ooo: cumulative global loads over cycles, memory latency {latency}, K {K}.  "
                             f"blue: X (full scale {xmax}), red: Y (full scale {K}), ticks every 1000 cycles")
    plot_w = W - LEFT - 10
    for i, key in enumerate(keys):
        top = PAD + i * (PH + PAD)
        img[top:top + PH, LEFT:LEFT + plot_w] = 245
        img[top + PH - 1, LEFT:LEFT + plot_w] = 120
        img[top:top + PH, LEFT] = 120
        label = key[1] if key[1] != "alone" else "X alone"
        draw_text(img, LEFT + 4, top + 3, f"{key[0]}  {label}: X {len(runs[key]['x'])} loads, Y {len(runs[key]['y'])}")
        for times, full, colour in ((runs[key]["y"], K, (200, 30, 30)), (runs[key]["x"], xmax, (30, 60, 200))):
            for n, t in enumerate(times, 1):
                x = LEFT + int((t - t0[key]) * (plot_w - 1) / span)
                y = top + PH - 2 - int(n * (PH - 14) / full)
                img[max(y - 1, top):y + 2, x:x + 2] = colour
        for c in range(0, span, 1000):
            x = LEFT + int(c * (plot_w - 1) / span)
            img[top + PH:top + PH + 4, x] = 80
            if c % 5000 == 0:
                draw_text(img, x - 2, top + PH + 6, str(c))
    write_png(path, img)


def _compiled_backend() -> str:
    """``verilator`` when it can build here, else ``rtl`` (Amaranth's simulator)."""
    from . import verilator
    return "verilator" if verilator.available() else "rtl"


_KERNEL_COUNTERS = ("valu_busy", "stall.dependency", "stall.loadcnt", "stall.storecnt", "stall.dscnt",
                    "stall.kmcnt", "stall.barrier", "stall.fetch", "stall.structural")


def _kernels(config: str = "tiny", backend: str | None = None, seed: int = 0) -> dict:
    """Every firmware kernel the preset holds on the whole DCU: cycles, wave-instructions
    (and the model's count), IPC (over the four SIMDs) and the main counters summed over the
    SIMDs, checked against the golden output on the way. ``backend``: ``verilator`` when it
    can build here, else ``rtl`` (on one reused simulator)."""
    from firmware_tests.manifest import TESTS
    from dcu.firmware import issue_mismatches, run_firmware
    from hdl.config import ResourceError
    from .rtl import RtlError
    from .rtlcheck import RtlUnsupportedError
    backend = backend or _compiled_backend()
    rows, skipped, failed, t0 = [], [], [], time.perf_counter()
    for t in TESTS:
        try:
            res = run_firmware(t, backend=backend, config=config, memory_seed=seed, vopd=False,
                               **({"reuse": True} if backend == "rtl" else {}))
        except (ResourceError, RtlUnsupportedError) as e:
            skipped.append(f"{t.name}: {e}")
            continue
        except RtlError as e:           # the DCU stopped it: a failure of the row, not the table
            failed.append(f"{t.name}: {e}")
            continue
        r = res.run.report
        problems = res.mismatches + issue_mismatches(t, config, r)
        if problems:
            failed.append(f"{t.name}: {'; '.join(problems)}")
        c = r.counters
        simds = sorted({k.split(".")[0] for k in c if k.startswith("simd")})
        total = {name: sum(c[f"{s}.{name}"] for s in simds) for name in _KERNEL_COUNTERS}
        rows.append({"kernel": t.name, "cycles": r.cycles, "instructions": r.instructions, "checked": not problems,
                     "ipc": round(r.instructions / r.cycles, 3),
                     **{k.replace("stall.", ""): v for k, v in total.items()},
                     "lds_conflicts": c["lds.conflict_cycles0"] + c["lds.conflict_cycles1"],
                     "l0_hits": c["vmem0.hits"] + c["vmem1.hits"], "l0_misses": c["vmem0.misses"] + c["vmem1.misses"],
                     "scache_miss": c["scache.misses"], "icache_miss": c["icache.misses"],
                     "max_resident": c["dispatch.max_resident"]})
    return {"benchmark": "kernels", "backend": backend, "config": config, "memory_seed": seed,
            "note": "checked: outputs equal the golden ones, and the instructions issued (by group), waves and "
                    "workgroups equal the model's (dcu.firmware.issue_mismatches; tests/test_dcu.py's "
                    "checks); counters summed over the four SIMDs",
            "seconds": round(time.perf_counter() - t0, 1), "failed": failed, "skipped": skipped, "rows": rows}


def _design_size(top) -> dict:
    """Signals (and their bits) and memories (and their bits) of an elaborated design: what
    Amaranth's simulator updates."""
    from amaranth.hdl import Fragment, Shape
    from amaranth.lib.memory import Memory
    design = Fragment.get(top, None).prepare()
    signals = list(design.signal_lca)
    mems = [e for e in design.elaboratables if isinstance(e, Memory)]
    return {"signals": len(signals), "signal_bits": sum(len(s) for s in signals),
            "memories": len(mems), "memory_bits": sum(m.depth * Shape.cast(m.shape).width for m in mems)}


def _sim_speed(configs=("default", "fpga"), compiled=("default", "fpga"), test: str = "divergence_cl", seed: int = 0,
               verilator_runs: int = 5) -> dict:
    """Cycles per second of the whole DCU (HostTop: the DCU and its RTL memory) in Amaranth's
    simulator, for each preset in ``configs``, with the DCU's size in signals and memories;
    and compiled by Verilator for the presets in ``compiled`` (a build takes 15 minutes or
    more and several GB), all in one run on one busy kernel. Amaranth: the dispatch's cycles
    over the simulation's seconds (elaboration apart), per wall and per CPU second;
    Verilator (its build cached): the dispatch phase's cycles over the CPU time the program
    measured for that phase, and every cycle it simulated (loading and reading back
    included) over its whole CPU time. The compiled program runs ``verilator_runs`` times,
    and the row gives the best run and the median. CPU seconds are the figure to compare on
    a shared, loaded machine."""
    import numpy as np
    from firmware_tests.manifest import get, path
    from hdl.config import get_config
    from hdl.top.dcu import DCU
    from .launch import load_program, prepare
    from . import rtl, verilator
    t = get(test)
    kern = load_program(path(t), vopd=False).kernel(t.kernel)
    rows = []

    def prep():
        return prepare(kern, t.grid, t.block, t.make_args(np.random.default_rng(seed)))
    for config in configs:
        cfg = get_config(config)
        size = _design_size(DCU(cfg))
        t0 = time.perf_counter()
        a = rtl.run_dispatch(prep(), kern, cfg, bool(kern.wgp_mode), seed=seed, memory="rtl")
        rows.append({"config": config, "simulator": "amaranth", "cycles": a.cycles, "seconds": round(a.seconds, 1),
                     "cycles_per_s": round(a.cycles / a.seconds), "cycles_per_cpu_s": round(a.cycles / a.cpu_seconds),
                     "setup_s": round(time.perf_counter() - t0 - a.seconds, 1),
                     "wave_instructions_per_cycle": round(sum(a.issued.values()) / a.cycles, 2), **size})
        amaranth_row = rows[-1]
        tools = [os.environ["DCU_VERILATOR"]] if os.environ.get("DCU_VERILATOR") else verilator.toolchains()
        for tool in (tools if config in compiled and verilator.available() else ()):
            t0 = time.perf_counter()
            v = verilator.run_dispatch(prep(), kern, cfg, bool(kern.wgp_mode), seed=seed, tool=tool)
            setup = time.perf_counter() - t0 - v.seconds
            # a run takes a second or two: repeat it, so that one slow moment of the shared
            # machine does not decide the figure (the best is the program's own speed)
            runs = [v] + [verilator.run_dispatch(prep(), kern, cfg, bool(kern.wgp_mode), seed=seed, tool=tool)
                          for _ in range(verilator_runs - 1)]
            if any(r.cycles != a.cycles for r in runs):
                raise RuntimeError(f"{config}: verilator ({tool}) counted {[r.cycles for r in runs]} cycles, "
                                   f"Amaranth {a.cycles}")
            # the dispatch phase alone, timed by the program itself: the kernel's speed
            per_cpu = sorted(r.run_cycles / r.run_cpu_seconds for r in runs)
            best = max(runs, key=lambda r: r.run_cycles / r.run_cpu_seconds)
            whole = max(r.harness_cycles / r.cpu_seconds for r in runs)
            rows.append({"config": config, "simulator": "verilator", "verilator": v.verilator,
                         "trained_on": list(v.trained_on), "cycles": v.cycles, "run_cycles": v.run_cycles,
                         "harness_cycles": v.harness_cycles, "seconds": round(best.seconds, 2),
                         "cycles_per_cpu_s": round(per_cpu[-1]),
                         "median_cycles_per_cpu_s": round(per_cpu[len(per_cpu) // 2]),
                         "harness_cycles_per_cpu_s": round(whole),
                         "runs": len(runs), "setup_s": round(setup, 1)})
            rows[-1]["ratio"] = round(rows[-1]["cycles_per_cpu_s"] / amaranth_row["cycles_per_cpu_s"], 1)
    return {"benchmark": "sim-speed", "kernel": test, "rows": rows,
            "note": "signals, signal_bits, memories, memory_bits: the DCU as Amaranth's simulator sees it "
                    "(HostTop adds the memory model); Verilator only for the presets in 'compiled', once per "
                    "Verilator found (dcu.verilator.toolchains) or the one $DCU_VERILATOR names; Verilator rows: "
                    "cycles_per_cpu_s is the dispatch phase's run_cycles over the CPU time the program measured "
                    "for that phase, the best of 'runs' runs, and its median; harness_cycles_per_cpu_s: every "
                    "cycle simulated (loading and reading back included) over the program's CPU time, best run; "
                    "ratio: against Amaranth, per CPU second (best); trained_on: the kernels the build's "
                    "profile came from (dcu/pgo.py; empty: a build without one)",
            "compiled": list(compiled)}


PLACE_SHARE = 0.75   # the largest share of the 85F's LUTs that `dcu bench fpga` places a block alone at
# a block that does not fit alone is placed (not routed: its routing did not converge) as a
# variant with one lane, for the placer's estimate of its control paths
ONE_LANE = {"simd": ("lanes=1", "trans_lanes=1", "coalesce_lanes=1", "request_in_rows=false")}


def _fpga(board: str = "ulx3s", config: str = "fpga", clock_mhz: float = 50.0) -> dict:
    """The ECP5-85F build (``dcu fpga``, docs/fpga.md): resources and Fmax from nextpnr's
    report, cells from Yosys, stage times. Always the bring-up build (UART link and block-RAM
    memory); the whole DCU only with ``DCU_FPGA_FULL=1`` (hours, and it does not fit). Then
    each block of the DCU that needs at most :data:`PLACE_SHARE` of the device, placed and
    routed alone, out of context, at ``clock_mhz`` (``dcu.fpga.place_block``, reusing a result
    for the same RTLIL): its own Fmax; a larger block has its Yosys counts and no Fmax, and
    one in :data:`ONE_LANE` is also placed (not routed) with one lane: the placer's estimate."""
    from hdl.config import get_config
    from . import fpga
    from .budget import ECP5_85F
    missing = fpga.missing_tools()
    if missing:
        raise RuntimeError(f"missing FPGA tools: {', '.join(missing)}; install them with: {fpga.INSTALL_HINT}")
    builds = [False] + ([True] if os.environ.get("DCU_FPGA_FULL") == "1" else [])
    rows = []
    for with_dcu in builds:
        rep = fpga.build_board(board, config, clock_mhz=clock_mhz, with_dcu=with_dcu)
        util = rep.get("nextpnr", {}).get("utilisation", {})
        fmax = rep.get("nextpnr", {}).get("fmax", {})
        row = {"design": "DCU + link + memory" if with_dcu else "link + memory (bring-up)", "rc": rep["rc"]}
        for cell, key in (("TRELLIS_COMB", "luts"), ("TRELLIS_FF", "ffs"), ("DP16KD", "bram"),
                          ("MULT18X18D", "dsp")):
            row[key] = util.get(cell, {}).get("used")
        row["fmax_mhz"] = min((v["mhz"] for v in fmax.values()), default=None)
        row["target_mhz"] = clock_mhz
        row.update({k: rep.get(k) for k in ("convert_s", "yosys_s", "nextpnr_s", "ecppack_s")})
        row["bitstream_bytes"] = rep.get("bitstream_bytes")
        rows.append(row)
    for top, n in fpga.dcu_blocks(get_config(config)):
        r = fpga.synth_block(top, config, quiet=True, reuse_result=True)
        e = r.get("ecp5") or {}
        # a block that fills most of the device (the LDS, 0.93 x) would take nextpnr an hour or
        # more here, if it routes at all: it keeps its Yosys counts only (the vector memory
        # unit, 0.73 x, is under the share: 24 minutes in nextpnr)
        fits = r["rc"] == 0 and e["lut_equiv"] <= PLACE_SHARE * ECP5_85F["lut"]
        row = {"design": f"block {top} ({n} in the DCU), out of context", "rc": r["rc"], "luts": e.get("lut_equiv"),
               "ffs": e.get("ff"), "bram": e.get("dp16kd"), "dsp": e.get("mult18x18d"), "fmax_mhz": None,
               "target_mhz": clock_mhz, "yosys_s": r.get("synth_s"), "rtlil_sha256": r.get("rtlil_sha256")}
        if fits:
            p = fpga.place_block(top, config, clock_mhz=clock_mhz, quiet=True, reuse_result=True)
            pnr = p.get("nextpnr") or {}
            util = pnr.get("utilisation", {})
            row.update({"rc": pnr.get("rc", p["rc"]), "luts": util.get("TRELLIS_COMB", {}).get("used"),
                        "ffs": util.get("TRELLIS_FF", {}).get("used"), "fmax_mhz": p["fmax_mhz"],
                        "nextpnr_s": pnr.get("seconds"), "critical_path": pnr.get("critical_path")})
        else:
            share = e["lut_equiv"] / ECP5_85F["lut"] if r["rc"] == 0 else None
            row["note"] = (r.get("error") if share is None else
                           f"not placed: {share:.2f} x the LUTs" + (" (does not fit alone)" if share > 1 else
                                                                     f" (above {PLACE_SHARE} x, see dcu fpga --place)"))
        rows.append(row)
        if not fits and top in ONE_LANE:
            variant = get_config(config).with_settings(ONE_LANE[top])
            p = fpga.place_block(top, variant, clock_mhz=clock_mhz, quiet=True, reuse_result=True, route=False)
            pnr, e = p.get("nextpnr") or {}, p.get("ecp5") or {}
            rows.append({"design": f"block {top}, one lane ({variant.name}), out of context, placed only",
                         "rc": pnr.get("rc", p["rc"]), "luts": e.get("lut_equiv"), "ffs": e.get("ff"),
                         "bram": e.get("dp16kd"), "dsp": e.get("mult18x18d"), "fmax_mhz": p["fmax_mhz"],
                         "target_mhz": clock_mhz, "yosys_s": p.get("synth_s"), "nextpnr_s": pnr.get("seconds"),
                         "rtlil_sha256": p.get("rtlil_sha256"),
                         "note": "not routed (router2 did not converge): fmax_mhz is the placer's estimate"})
    return {"benchmark": "fpga", "board": board, "device": "LFE5U-85F (83,640 LUT4/FF, 208 DP16KD, 156 MULT18X18D)",
            "config": config, "rows": rows,
            "dcu_built": len(builds) > 1,
            "note": "luts = TRELLIS_COMB (nextpnr) or, for a block that was not placed, LUT4 + 2 per CCU2C + 4 per "
                    "DPR16X4 (Yosys); a block 'out of context': nextpnr-ecp5 --out-of-context, no I/O buffers and "
                    "its clock on general routing, the block alone on the 85F"}


def _depth(config: str = "fpga", paths: int = 3) -> dict:
    """Each block of the DCU through ``synth_ecp5`` and its deepest register-to-register paths
    in cells (``dcu fpga --block NAME --depth``, ``dcu/depth.py``), beside the Fmax and
    critical path nextpnr found for the same RTLIL placed alone (``dcu bench fpga``), where
    there is one; then the SIMD's combinational units from their inputs to their outputs:
    where in the SIMD its depth is."""
    from hdl.config import get_config
    from . import fpga
    from .depth import HARD_LEVELS
    cfg = get_config(config)
    runs = [(top, n, False) for top, n in fpga.dcu_blocks(cfg)]
    runs += [("valu_int", 0, True), ("valu_fp", 0, True), ("salu", 0, True)]
    rows = []
    for top, n, ports in runs:
        r = fpga.depth_block(top, cfg, paths=paths, ports=ports, quiet=True, reuse_result=True)
        d = r.get("depth") or {}
        unit = f"{top} (in each SIMD's EX, inputs to outputs" + (
            ", and its stages)" if top != "salu" and cfg.valu_stages > 1 else ")")
        row = {"block": top if n else unit, "rc": r["rc"],
               "lut_equiv": (r.get("ecp5") or {}).get("lut_equiv"), "levels": d.get("levels"),
               "deepest": [f"{p['levels']}: {p['from']} -> {p['to']}" for p in d.get("paths", [])]}
        placed = fpga.PROJECT / "build/fpga/blocks" / f"{cfg.name}_{top}.place.json"
        if n and placed.exists():
            pl = json.loads(placed.read_text())
            if (pl.get("rtlil_sha256") == r.get("rtlil_sha256") and pl.get("script") == r.get("script")
                    and pl.get("routed", True)):
                cp = (pl.get("nextpnr") or {}).get("critical_path") or {}
                row.update({"fmax_mhz": pl.get("fmax_mhz"), "critical_path_cells": cp.get("cells"),
                            "critical_path": f"{cp.get('from')} -> {cp.get('to')}" if cp else None})
        rows.append(row)
    return {"benchmark": "depth", "config": config, "rows": rows,
            "note": "levels: LUT4s, carry cells entered through their logic inputs, wide multiplexers "
                    "through their selects, LUT RAM reads; an unregistered multiplier and a block RAM's read "
                    f"data count {HARD_LEVELS} (dcu/depth.py); fmax_mhz and critical_path: nextpnr's, the block "
                    "placed and routed alone at 50 MHz from the same RTLIL and synthesis (dcu bench fpga), "
                    "where it was"}


def _sim_instructions(configs=("default", "fpga"), test: str = "divergence_cl", seed: int = 0) -> dict:
    """Instructions the compiled model (``dcu.verilator``) executes for one kernel, counted by
    valgrind's callgrind: exact and the same on every run, where CPU seconds on a shared
    machine vary by 30 % (docs/toolflow.md). Per harness cycle (loading and reading back
    included) and per dispatch cycle. The builds target x86-64-v3 (``DCU_VERILATOR_MARCH``):
    valgrind cannot decode the AVX-512 that ``-march=native`` may use, so they are not
    ``sim-speed``'s programs; each is cached likewise."""
    import numpy as np
    from firmware_tests.manifest import get, path
    from hdl.config import get_config
    from .launch import load_program, prepare
    from . import verilator
    if not shutil.which("valgrind"):
        raise RuntimeError("sim-instructions needs valgrind: apt-get install -y valgrind")
    t = get(test)
    kern = load_program(path(t), vopd=False).kernel(t.kernel)
    rows = []
    march = "x86-64-v3"     # valgrind decodes AVX2, not AVX-512
    with mock.patch.dict(os.environ, {"DCU_VERILATOR_MARCH": march}), \
            tempfile.TemporaryDirectory(prefix="dcu-cg-") as tmp:
        for config in configs:
            cfg = get_config(config)
            out = Path(tmp) / f"{config}.callgrind"
            prep = prepare(kern, t.grid, t.block, t.make_args(np.random.default_rng(seed)))
            v = verilator.run_dispatch(prep, kern, cfg, bool(kern.wgp_mode), seed=seed,
                                       tool=os.environ.get("DCU_VERILATOR") or None,
                                       wrapper=["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"])
            # callgrind's file ends with the run's total: "totals: N" (or "summary: N")
            total = int(re.findall(r"^(?:totals|summary): (\d+)", out.read_text(), re.M)[-1])
            rows.append({"config": config, "cycles": v.cycles, "harness_cycles": v.harness_cycles,
                         "instructions": total, "per_harness_cycle": round(total / v.harness_cycles),
                         "verilator": v.verilator, "trained_on": list(v.trained_on), "march": march})
    return {"benchmark": "sim-instructions", "kernel": test, "rows": rows,
            "note": "instructions: valgrind --tool=callgrind on the compiled program (Ir), the whole run; "
                    "per_harness_cycle: over every cycle the program simulates (loading and reading back included)"}


def _fpga_budget(config: str = "fpga") -> dict:
    """The whole DCU's register bits, DSP blocks and memory bits counted in its RTLIL
    (``dcu/budget.py``; no FPGA tools, minutes instead of a synthesis that does not finish)
    against the ECP5-85F: the preset, the preset without its three sharing options
    (``trans_shared``, ``shared_multiplier``, ``shared_mem_request``, and with it ``request_in_rows``),
    and other lane counts."""
    from hdl.config import get_config
    from .budget import budget
    base = get_config(config)
    variants = {config: base,
                "without sharing": base.replace(trans_shared=False, shared_multiplier=False, shared_mem_request=False,
                                                request_in_rows=False),
                "lanes 8, trans_lanes 8": base.replace(lanes=8, trans_lanes=8),
                # LDS windows are at least 4 lanes: wider than a 2-lane request row
                "lanes 2, trans_lanes 1, coalesce_lanes 2": base.replace(lanes=2, trans_lanes=1, coalesce_lanes=2,
                                                                         request_in_rows=False)}
    rows, blocks = [], {}
    for label, cfg in variants.items():
        t0 = time.perf_counter()
        res = budget(cfg)
        rows.append({"variant": label, **res["total"], "fits": res["fits"], "seconds": round(time.perf_counter() - t0)})
        blocks[label] = {k: {"ff": b["ff"], "dsp": b["dsp"], "memory_bits": b["memory_bits"]}
                         for k, b in res["blocks"].items() if b["ff"] or b["dsp"] or b["memory_bits"]}
    return {"benchmark": "fpga-budget", "config": config, "device": res["device"], "rows": rows, "blocks": blocks,
            "note": "RTLIL counts: register bits of flip-flop cells; DSP = MULT18X18D tiles of each multiplier of "
                    "two operands of 8 bits or more (ceil(a/18) * ceil(b/18)); synthesis may trim some of both, "
                    "and adds memories it maps to flip-flops or LUTs"}


def _synth(config: str | None = None, timeout: float = 4 * 3600) -> dict:
    """The DCU through Yosys (natively, ``dcu-yosys``: the WebAssembly Yosys stops at 4 GiB),
    block by block, and the blocks summed over the DCU's instances: the ``fpga`` preset's with
    ``synth_ecp5`` to the ECP5's cells, against the 85F; the ``default`` preset's with the
    generic ``synth`` (memories kept as memories). With ``DCU_SYNTH_WHOLE=1`` also each whole
    DCU in one run (the ``fpga`` one's ABC9 did not finish in two hours; the ``default`` one's
    ``techmap`` ran out of 24 GB). ``config`` runs one preset's rows. An earlier result is
    reused when the block's RTLIL is unchanged (``dcu.fpga.synth_block``)."""
    from hdl.config import get_config
    from . import fpga
    from .budget import ECP5_85F
    whole = os.environ.get("DCU_SYNTH_WHOLE") == "1"
    blocks = {c: fpga.dcu_blocks(get_config(c)) for c in ("fpga", "default")}
    runs = [("fpga", top, False) for top, _ in blocks["fpga"]] + ([("fpga", "dcu", False)] if whole else [])
    runs += [("default", top, True) for top, _ in blocks["default"]] + ([("default", "dcu", True)] if whole else [])

    def share(e):
        return {"lut": round(e["lut_equiv"] / ECP5_85F["lut"], 2), "ff": round(e["ff"] / ECP5_85F["ff"], 2),
                "dp16kd": round(e["dp16kd"] / ECP5_85F["bram"], 2),
                "mult18x18d": round(e["mult18x18d"] / ECP5_85F["dsp"], 2)}
    keys = ("lut_equiv", "lut4", "ccu2c", "dpr16x4", "ff", "dp16kd", "mult18x18d")
    rows = []
    for cfg, top, generic in runs:
        if config and cfg != config:
            continue
        r = fpga.synth_block(top, cfg, generic=generic, timeout=timeout, quiet=True, reuse_result=True)
        row = {"config": cfg, "top": top, "flow": r["flow"], "rc": r["rc"], "yosys_s": r["synth_s"],
               "reused": r.get("reused", False), "cells": r["cells"]}
        if r["rc"] != 0:
            row["error"] = r.get("error")
        elif generic:
            t = r["by_type"]
            row.update({"flip_flops": sum(n for k, n in t.items() if "DFF" in k.upper()),
                        "memories": t.get("$mem_v2", 0),
                        "gates": sum(n for k, n in t.items() if k.startswith("$_") and "DFF" not in k.upper())})
        else:
            row.update({k: r["ecp5"][k] for k in keys})
            row["of_85f"] = share(r["ecp5"])
        row["rtlil_sha256"] = r.get("rtlil_sha256")     # what dcu.fpga.fit_check matches a block by
        rows.append(row)
    for c, generic in (("fpga", False), ("default", True)):
        done = {r["top"]: r for r in rows if r["config"] == c and r["rc"] == 0}
        if not all(top in done for top, _ in blocks[c]):
            continue
        sums = ("cells", "flip_flops", "memories", "gates") if generic else keys
        total = {k: sum(n * done[top][k] for top, n in blocks[c]) for k in sums}
        at = max(i for i, r in enumerate(rows) if r["config"] == c) + 1      # after the preset's rows
        rows.insert(at, {"config": c, "top": "dcu: its blocks summed",
                         "flow": " + ".join(f"{n} x {top}" for top, n in blocks[c]), **total,
                         **({} if generic else {"of_85f": share(total)})})
    return {"benchmark": "synth", "device": "LFE5U-85F (83,640 LUT4/FF, 208 DP16KD, 156 MULT18X18D)", "rows": rows,
            "note": "lut_equiv = LUT4 + 2 per CCU2C + 4 per TRELLIS_DPR16X4 (before packing: nextpnr may merge a "
                    "few); of_85f: the share of the device; 'its blocks summed': each block's row times its "
                    "instances in the DCU (without the DCU's memory arbiter and counter select); default: Yosys's "
                    "generic cells, flip-flops as bits ($_DFF_* cells), memories as $mem_v2 cells"}


BENCHMARKS = {"model-speed": _model_speed, "valu-ipc": _valu_ipc, "valu-peak": _valu_peak,
              "sim-speed-simd": _sim_speed_simd, "lds-stride": _lds_stride, "coalescing": _coalescing,
              "latency": _latency, "ooo": _ooo, "kernels": _kernels, "sim-speed": _sim_speed,
              "sim-instructions": _sim_instructions,
              "fpga": _fpga, "fpga-budget": _fpga_budget, "synth": _synth, "depth": _depth}


def _markdown(result: dict) -> str:
    rows = result.get("rows", [])
    cols = list(dict.fromkeys(k for r in rows for k in r))     # every row's fields, first seen first
    out = [f"## {result.get('benchmark', 'results')}", ""]
    if rows:
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    extra = {k: v for k, v in result.items() if k not in ("benchmark", "rows", "machine")}
    out += [""] + [f"- {k}: {v}" for k, v in extra.items()] + [""]
    return "\n".join(out)


def run(name: str, json_path: str | None = None, out_dir: str | os.PathLike | None = None, **options) -> dict:
    """Run one benchmark; ``options`` (``config``, ``backend``) go to the benchmarks that take
    them, and name its results file ``out_dir/NAME-CONFIG-BACKEND.json`` (default
    ``bench/results``, whose files make ``bench/RESULTS.md``)."""
    from .errors import UsageError
    if name not in BENCHMARKS:
        raise UsageError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    fn = BENCHMARKS[name]
    options = {k: v for k, v in options.items() if v is not None}
    takes = inspect.signature(fn).parameters
    if any(k not in takes for k in options):
        raise UsageError(f"benchmark {name!r} takes no option {', '.join(k for k in options if k not in takes)}")
    result = fn(**options)
    result["machine"] = {"python": platform.python_version(), "processor": platform.processor() or platform.machine()}
    out = RESULTS if out_dir is None else Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = "-".join([name, *options.values()])
    (out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
    if out.resolve() == RESULTS.resolve():
        write_summary()
    print(_markdown(result))
    return result


def write_summary() -> None:
    """bench/RESULTS.md from every results file in bench/results/."""
    md = ["# Benchmark results", "", "Written by `dcu bench NAME`; README quotes these figures.", ""]
    md += [_markdown(json.loads(p.read_text())) for p in sorted(RESULTS.glob("*.json"))]
    (ROOT / "bench" / "RESULTS.md").write_text("\n".join(md))
