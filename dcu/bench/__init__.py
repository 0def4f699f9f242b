"""Benchmarks (``dcu bench NAME``), one module per family:

- :mod:`.simd`: ``valu-ipc``, ``valu-peak``, ``sim-speed-simd``, ``model-speed``
- :mod:`.memory`: ``lds-stride``, ``coalescing``, ``latency``
- :mod:`.ooo`: ``ooo`` (out-of-order returns, and its plot)
- :mod:`.kernels`: ``kernels``
- :mod:`.simspeed`: ``sim-speed``, ``sim-instructions``
- :mod:`.fpga`: ``fpga``, ``depth``, ``fpga-budget``, ``synth``

:func:`run` writes a benchmark's results to ``OUT/NAME[-CONFIG-BACKEND].json`` (``dcu bench
--out``, the current directory by default; :func:`run`'s own default is bench/results, whose
files :func:`write_summary` gathers into bench/RESULTS.md).

Speed figures are measured here, never asserted in tests: these machines are shared and
noisy, so each benchmark measures what it compares in one run.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import platform
from pathlib import Path

from ..errors import UsageError

__all__ = ["BENCHMARKS", "RESULTS", "benchmark", "run", "write_summary"]

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
BUILD = ROOT / "build" / "bench"        # the kernels the benchmarks assemble

# name -> (family module, function). A family imports the simulators and the RTL when it
# loads: ``dcu bench --help`` lists the names without loading any.
BENCHMARKS = {
    "model-speed": ("simd", "model_speed"), "valu-ipc": ("simd", "valu_ipc"), "valu-peak": ("simd", "valu_peak"),
    "sim-speed-simd": ("simd", "sim_speed_simd"), "lds-stride": ("memory", "lds_stride"),
    "coalescing": ("memory", "coalescing"), "latency": ("memory", "latency"), "ooo": ("ooo", "ooo"),
    "kernels": ("kernels", "kernels"), "sim-speed": ("simspeed", "sim_speed"),
    "sim-instructions": ("simspeed", "sim_instructions"), "fpga": ("fpga", "fpga_build"),
    "fpga-budget": ("fpga", "fpga_budget"), "synth": ("fpga", "synth"), "depth": ("fpga", "depth"),
    "simd-units": ("fpga", "simd_units"),
}


def benchmark(name: str):
    """Benchmark ``name``'s function, its family's module loaded."""
    if name not in BENCHMARKS:
        raise UsageError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS)}")
    module, function = BENCHMARKS[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


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
    ``bench/results``, whose files make ``bench/RESULTS.md``). A benchmark that writes other
    files (``ooo``'s plot) gets ``out_dir`` too."""
    fn = benchmark(name)
    options = {k: v for k, v in options.items() if v is not None}
    takes = inspect.signature(fn).parameters
    if any(k not in takes for k in options):
        raise UsageError(f"benchmark {name!r} takes no option {', '.join(k for k in options if k not in takes)}")
    out = RESULTS if out_dir is None else Path(out_dir)
    result = fn(**options, **({"out_dir": out} if "out_dir" in takes else {}))
    result["machine"] = {"python": platform.python_version(), "processor": platform.processor() or platform.machine()}
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
