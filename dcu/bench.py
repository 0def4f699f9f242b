"""Benchmarks (``dcu bench NAME``): results go to bench/results/NAME.json and bench/RESULTS.md.

Speed figures are measured here, never asserted in tests: these machines are shared and
noisy, so each benchmark measures what it compares in one run.
"""
from __future__ import annotations

import json
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

MODEL_SPEED_TESTS = ("saxpy_cl", "matmul_tile_cl", "lds_reduce_cl", "divergence_cl", "int_alu_cl")


def _model_speed(repeats: int = 3) -> dict:
    """Wave-instructions per second of the reference model on several firmware kernels."""
    from firmware_tests.manifest import TESTS, get
    from firmware_tests.runner import run_firmware
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


def _asm_kernel(name: str, body: str, vgprs: int = 16):
    """Assemble a bare kernel (no arguments) for the SIMD benchmarks."""
    from .launch import load_program
    src = ROOT / "build" / "bench" / f"{name}.s"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(f""".text\n.globl {name}\n.p2align 8\n.type {name},@function\n{name}:\n{body}\n  s_endpgm
.rodata\n.p2align 6\n.amdhsa_kernel {name}\n  .amdhsa_next_free_vgpr {vgprs}\n  .amdhsa_next_free_sgpr 8
  .amdhsa_wavefront_size32 1\n  .amdhsa_workgroup_processor_mode 0\n.end_amdhsa_kernel\n""")
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
                         "valu_ipc": round(len(c) / (c[-1] - c[0] + 1), 3), "expected_ipc": round(1 / cfg.valu_cycles, 3),
                         "valu_busy": run.perf["valu_busy"], "dependent_issue_latency": latency})
    return {"benchmark": "valu-ipc", "rows": rows,
            "goal": "valu_ipc near 1 / valu_cycles (32 // lanes) with 2 or more waves; dependent issue latency "
                    "max(5, valu_cycles) (RDNA: 5)"}


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


BENCHMARKS = {"model-speed": _model_speed, "valu-ipc": _valu_ipc, "sim-speed-simd": _sim_speed_simd}


def _markdown(result: dict) -> str:
    rows = result.get("rows", [])
    cols = list(rows[0].keys()) if rows else []
    out = [f"## {result.get('benchmark', 'results')}", ""]
    if rows:
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    extra = {k: v for k, v in result.items() if k not in ("benchmark", "rows", "machine")}
    out += [""] + [f"- {k}: {v}" for k, v in extra.items()] + [""]
    return "\n".join(out)


def run(name: str, json_path: str | None = None) -> dict:
    if name not in BENCHMARKS:
        raise SystemExit(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    result = BENCHMARKS[name]()
    result["machine"] = {"python": platform.python_version(), "processor": platform.processor() or platform.machine()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
    sections = sorted(RESULTS.glob("*.json"))
    md = ["# Benchmark results", "", "Written by `dcu bench NAME`; README quotes these figures.", ""]
    md += [_markdown(json.loads(p.read_text())) for p in sections]
    (ROOT / "bench" / "RESULTS.md").write_text("\n".join(md))
    print(_markdown(result))
    return result
