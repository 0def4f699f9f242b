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


BENCHMARKS = {"model-speed": _model_speed}


def _markdown(result: dict) -> str:
    rows = result["rows"]
    cols = list(rows[0].keys()) if rows else []
    out = [f"## {result['benchmark']}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
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
