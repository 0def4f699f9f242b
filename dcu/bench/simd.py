"""SIMD and VALU benchmarks: the VALU's issue rate per physical lane width (``valu-ipc``), the
whole DCU on an FMA-bound loop against its peak (``valu-peak``), one SIMD's speed in Amaranth's
simulator (``sim-speed-simd``) and the reference model's (``model-speed``)."""
from __future__ import annotations

import time

import numpy as np

from firmware_tests.manifest import TESTS, get
from hdl.config import WAVE_POLICIES, get_config

from ..firmware import run_firmware
from ..launch import launch, load_program
from ..backends.lockstep import SimdRun
from . import BUILD

MODEL_SPEED_TESTS = ("saxpy_cl", "matmul_tile_cl", "lds_reduce_cl", "divergence_cl", "int_alu_cl")


def model_speed(repeats: int = 3) -> dict:
    """Wave-instructions per second of the reference model on several firmware kernels."""
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
    src = BUILD / f"{name}.s"
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
    """The default preset with ``lanes`` physical lanes; below 32, vector memory requests and
    return beats in rows of ``lanes`` (the SIMD reads and writes them a row at a time)."""
    base = get_config("default")
    rows = {} if lanes == 32 else dict(shared_mem_request=True, coalesce_in_place=True, lds_in_place=True,
                                       request_in_rows=True, coalesce_lanes=min(base.coalesce_lanes, lanes),
                                       lds_banks=min(base.lds_banks, lanes))
    return base.replace(name=f"default-{lanes}-lanes", lanes=lanes, **rows)


def _steady_ipc(run) -> float:
    """VALU instructions a cycle while every wave runs: from the last wave's first issue to the
    first wave's last (the launch ramp and the drain left out)."""
    by_slot = {}
    for cyc, slot, _ in run.issue_log:
        by_slot.setdefault(slot, []).append(cyc)
    lo, hi = max(c[0] for c in by_slot.values()), min(c[-1] for c in by_slot.values())
    return round(sum(lo <= c <= hi for c in run.valu_cycles) / (hi - lo + 1), 3)


def _simd_run(kernel, waves: int, config, more: int = 0):
    """Run ``kernel`` with ``waves`` waves (then ``more`` times again) on one simulated SIMD."""
    runs = [SimdRun(kernel, (1,), (32 * waves,), [], config, latency=(1, 1), lockstep=False)
            for _ in range(1 + more)]
    t0 = time.perf_counter()
    runs[0].run(more=runs[1:])
    return runs, time.perf_counter() - t0


def valu_ipc() -> dict:
    """VALU instructions per cycle on one SIMD with independent FMAs, per physical lane width
    (over the whole run and while every wave runs), and the dependent-chain issue latency.
    ``expected_ipc``: the bound the pipe (an instruction every ``valu_cycles`` cycles) and the
    front end (a wave's instruction every four cycles) set (docs/simd.md, "Pipelines")."""
    kernel = _asm_kernel("valu_ipc", _fma_body(16))
    dep = _asm_kernel("valu_dep", "\n".join(["  v_mov_b32 v1, v0"] + ["  v_add_nc_u32 v1, v1, v0"] * 64))
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
                         "valu_ipc": round(len(c) / (c[-1] - c[0] + 1), 3), "steady_ipc": _steady_ipc(run),
                         "expected_ipc": round(min(1 / cfg.valu_cycles, waves / 4), 3),
                         "valu_busy": run.perf["valu_busy"], "dependent_issue_latency": latency})
    return {"benchmark": "valu-ipc", "rows": rows,
            "goal": "valu_ipc near 1 / valu_cycles (32 // lanes) with enough waves; dependent issue latency "
                    "max(5, valu_cycles) (RDNA: 5)",
            "note": "a wave's instructions reach issue four cycles apart at the least (the front end holds "
                    "one of a wave between selection and issue); one that reads the VGPR result of the one "
                    "before waits a cycle more at issue (reads are not transparent). valu_ipc includes the "
                    "launch ramp (waves start a few cycles apart) and the drain; steady_ipc leaves them out"}


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


def valu_peak(config: str = "default", iterations=(32, 96), groups: int = 8) -> dict:
    """The whole DCU on an FMA-bound loop: ``groups`` workgroups of two waves fill every wave
    slot of the four SIMDs; VALU wave-instructions per cycle against the peak of one per SIMD
    per cycle (RDNA: 4 per DCU, 256 FP32 FLOP per cycle counting an FMA as 2). Two loop
    lengths, each run whole (launch to the last wave's end), under each wave-issue policy;
    the difference between the lengths is the steady state, without the launch ramp, cold
    instruction misses and the final store."""
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


def sim_speed_simd(repeats: int = 3) -> dict:
    """Cycles per second of one SIMD in Amaranth's simulator on a VALU-heavy kernel (4 waves),
    the best of ``repeats`` dispatches on one elaborated SIMD."""
    kernel = _asm_kernel("sim_speed_simd", _fma_body(64))
    rows = []
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
