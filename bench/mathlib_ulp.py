#!/usr/bin/env python3
"""Measured accuracy of AMD's device-library math functions on the model; writes
bench/results/mathlib_ulp.json (rows: function, OpenCL C limit, max and mean ulp error, the
argument of the largest error).

The kernel is firmware_tests/corpus_math.cl (single precision, built by dcu.toolchain with
stock flags and rocm-device-libs), run on the reference model over --items work-items whose
arguments firmware_tests.corpus.math_inputs draws; each result's error is measured in
float32 ulps of the exact result, taken from float64 (firmware_tests.corpus.ulp_error). The
corpus test (firmware_tests.corpus.math_check) holds the same functions to the limits of
OpenCL C 3.0 section 7.4 on 128 work-items.

Usage: python3 bench/mathlib_ulp.py [--items N] [--seed S]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dcu import launch, load_program, toolchain  # noqa: E402
from firmware_tests.corpus import MATH_FUNCS, MATH_ULP, math_errors, math_inputs  # noqa: E402

OUT = ROOT / "bench" / "results" / "mathlib_ulp.json"
ARGS = {"exp": "x", "exp2": "x", "exp10": "0.4x", "expm1": "x", "log": "p", "log2": "p", "log10": "p",
        "log1p": "p", "sin": "x", "cos": "x", "tan": "x", "asin": "u", "acos": "u", "atan": "x",
        "atan2": "x, y", "sinh": "x", "cosh": "x", "tanh": "x", "asinh": "x", "acosh": "p + 1",
        "atanh": "0.99u", "pow": "p, y", "powr": "p, y", "pown": "p, n", "rootn": "p, n", "cbrt": "x",
        "erf": "x", "erfc": "x", "tgamma": "p", "hypot": "x, y", "fmod": "x, y", "remainder": "x, y",
        "sqrt": "p", "rsqrt": "p", "sinpi": "x", "cospi": "x", "ldexp": "x, n", "logb+ilogb": "p, x",
        "rounding": "x, y", "atanpi": "x"}


def measure(items: int, seed: int) -> dict:
    inputs = math_inputs(np.random.default_rng(seed), items)
    out = np.zeros(items * len(MATH_FUNCS), np.float32)
    kernel = load_program(ROOT / "firmware_tests" / "corpus_math.cl").kernel("corpus_math")
    t0 = time.perf_counter()
    run = launch(kernel, items // 64, 64, inputs + [out])
    seconds = time.perf_counter() - t0
    errors = math_errors(inputs, run.buffers[5])
    names = ("x", "p", "u", "y", "n")
    rows = []
    for f in MATH_FUNCS:
        err = errors[f]
        worst = int(np.argmax(err))
        used = [n.strip() for n in ARGS[f].replace("0.4", "").replace("0.99", "").replace(" + 1", "").split(",")]
        at = ", ".join(f"{n}={float(inputs[names.index(n)][worst]):.9g}" for n in used)
        rows.append({"function": f, "arguments": ARGS[f], "limit_ulp": MATH_ULP[f],
                     "max_ulp": round(float(err.max()), 3), "mean_ulp": round(float(err.mean()), 4),
                     "worst_at": at, "within_limit": bool(err.max() <= MATH_ULP[f])})
    return {"benchmark": "mathlib_ulp", "rows": rows, "items": items, "seed": seed,
            "model_seconds": round(seconds, 1), "clang": toolchain.tool_version("clang"),
            "device_library": str(toolchain.device_library()[0].parent),
            "note": "float32 ulps of the exact result (float64 reference); limits: OpenCL C 3.0 section 7.4; "
                    "x in [-12, 12] (1 in 9 in [-1000, 1000]), p in [1e-3, 60], u in [-1, 1], y in [-4, 4], "
                    "n in [-20, 20]"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=4096, help="work-items (a multiple of 64; default 4096)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.items <= 0 or a.items % 64:
        ap.error("--items must be a positive multiple of 64")
    result = measure(a.items, a.seed)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    for r in result["rows"]:
        print(f"{r['function']:>11}  max {r['max_ulp']:8.3f} ulp  (limit {r['limit_ulp']})")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0 if all(r["within_limit"] for r in result["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
