#!/usr/bin/env python3
"""Long verification campaign for the RTL FP32 unit; writes bench/results/fp32_rtl_campaign.json.

1. Every operation of ``hdl.simd.valu_fp.VALUFloat`` (``FP_OPS``): ``--vectors`` random 32-lane
   vectors (default 4,000 = 128,000 operand triples per op), drawn by the biased generators of
   tests/test_valu_fp.py (denormals, near-overflow, cancellation, rounding ties, NaN payloads,
   infinities; a quarter with random abs/neg/omod/clamp), plus the corner-case grids and, for
   the fused add/sub/mul/fma datapath, a sweep over the alignment windows (sweep_jobs), each
   result compared bit for bit with the model (sim.execute.VFLOAT / sim.fp32) through Amaranth's
   simulator.  Records per op: vectors, lane results, mismatches (with examples), CPU seconds,
   vectors/s, and the classes of the expected results (NaN / inf / zero / denormal / normal,
   compare true / false) to show what the vectors covered.
2. The 32-lane unit converted to Verilog and linted with ``verilator --lint-only
   -Wno-CASEINCOMPLETE -Wno-WIDTH`` (tests/test_valu_fp.py lints a 4-lane build to stay fast).

Usage: python3 bench/fp32_rtl_campaign.py [--vectors N] [--jobs J] [--seed S] [--no-lint]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import test_valu_fp as T           # noqa: E402  (generators, model oracle, RTL harness)
from hdl.isa_tables import OpId    # noqa: E402

U32 = np.uint32
#: ops of the fused datapath: also swept over the alignment windows (tests: sweep_jobs)
FMA_CLASS = ("v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32", "v_fma_f32", "v_fmac_f32",
             "v_fmaak_f32", "v_fmamk_f32")


def _classes(d, mask, op):
    """Counts of the expected results by class."""
    if T.cmp_cond(op.name.lower()) is not None:
        return {"true": int(mask.sum()), "false": int(mask.size - mask.sum())}
    mag = d & U32(0x7FFF_FFFF)
    return {"nan": int((mag > 0x7F80_0000).sum()), "inf": int((mag == 0x7F80_0000).sum()),
            "zero": int((mag == 0).sum()),
            "denormal": int(((mag > 0) & (mag < 0x0080_0000)).sum()),
            "normal": int(((mag >= 0x0080_0000) & (mag < 0x7F80_0000)).sum())}


def run_ops(args):
    """Worker: random vectors and corner grids for a list of op names."""
    names, vectors, seed = args
    rng = np.random.default_rng(seed)
    jobs = []
    for name in names:
        op = OpId[name]
        a, b, c = T.gen_operands(rng, op, vectors)
        jobs.append((("random", op), (op, a, b, c, *T.gen_mods(rng, vectors))))
        jobs += [(("corner", op), j) for j in T.corner_jobs(op)]
        if T.info_of(op).name in FMA_CLASS:
            jobs += [(("sweep", op), j) for j in T.sweep_jobs(op, rng, per_d=8)]
    outputs = T.run_rtl([j for _, j in jobs])
    res = {}
    for (label, job), (d, mk, ill, secs) in zip(jobs, outputs):
        op = job[0]
        ed, emk, eill = T.model(*job)
        bad = np.nonzero((d != ed) | (mk != emk))
        r = res.setdefault(op.name.lower(), {"vectors": 0, "lane_results": 0, "random_triples": 0,
                                             "mismatches": 0, "illegal_flag_errors": 0,
                                             "cpu_s": 0.0, "examples": [], "expected_classes": {}})
        n = d.shape[0]
        r["vectors"] += n
        r["lane_results"] += d.size
        if label[0] == "random":
            r["random_triples"] += d.size
        r["mismatches"] += int(bad[0].size)
        r["illegal_flag_errors"] += int((ill != eill).sum())
        r["cpu_s"] += secs
        for v, lane in list(zip(*bad))[: max(0, 5 - len(r["examples"]))]:
            r["examples"].append({k: f"{int(x[v, lane]):#010x}" for k, x in
                                  (("a", job[1]), ("b", job[2]), ("c", job[3]), ("rtl", d), ("model", ed))}
                                 | {"abs": int(job[4][v]), "neg": int(job[5][v]),
                                    "clamp": int(job[6][v]), "omod": int(job[7][v])})
        for k, cnt in _classes(ed, emk, op).items():
            r["expected_classes"][k] = r["expected_classes"].get(k, 0) + cnt
    for r in res.values():
        r["vectors_per_s"] = round(r["vectors"] / r["cpu_s"], 1)
        r["cpu_s"] = round(r["cpu_s"], 2)
    return res


def lint_32_lanes():
    """Convert the 32-lane unit and run Verilator lint; returns a result dict."""
    from amaranth.back import verilog
    from hdl.simd.valu_fp import VALUFloat
    tool = shutil.which("verilator")
    t = time.time()
    text = verilog.convert(VALUFloat(), name="valu_fp", emit_src=False)
    conv = time.time() - t
    out = {"lanes": 32, "verilog_lines": len(text.splitlines()), "convert_s": round(conv, 1)}
    if tool is None:
        out["lint"] = "verilator not found"
        return out
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "valu_fp.v")
        with open(path, "w") as f:
            f.write(text)
        t = time.time()
        r = subprocess.run([tool, "--lint-only", "-Wno-CASEINCOMPLETE", "-Wno-WIDTH", path],
                           capture_output=True, text=True)
    out["lint_s"] = round(time.time() - t, 1)
    out["lint"] = "clean" if r.returncode == 0 else r.stderr[-2000:]
    out["verilator"] = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", type=int, default=4000, help="random 32-lane vectors per op")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=20260522)
    ap.add_argument("--no-lint", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "fp32_rtl_campaign.json"))
    args = ap.parse_args()

    names = [op.name for op in T.sorted_ops()]
    chunks = [names[k::args.jobs] for k in range(args.jobs)]
    t0 = time.time()
    with Pool(args.jobs) as pool:
        parts = pool.map(run_ops, [(c, args.vectors, args.seed + k) for k, c in enumerate(chunks) if c])
    ops = {}
    for p in parts:
        ops.update(p)
    wall = time.time() - t0
    total_vec = sum(r["vectors"] for r in ops.values())
    total_cpu = sum(r["cpu_s"] for r in ops.values())
    res = {
        "what": "VALUFloat (hdl/simd/valu_fp.py) vs the model (sim.execute.VFLOAT / sim.fp32), bit for bit",
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "seed": args.seed,
        "random_vectors_per_op": args.vectors,
        "random_triples_per_op": args.vectors * T.LANES,
        "ops": len(ops),
        "total_vectors": total_vec,
        "total_lane_results": total_vec * T.LANES,
        "total_mismatches": sum(r["mismatches"] for r in ops.values()),
        "simulation_cpu_s": round(total_cpu, 1),
        "vectors_per_s_overall": round(total_vec / total_cpu, 1),
        "wall_s": round(wall, 1),
        "per_op": dict(sorted(ops.items())),
    }
    print(f"{res['ops']} ops, {total_vec} vectors ({res['total_lane_results']} lane results), "
          f"{res['total_mismatches']} mismatches, {res['vectors_per_s_overall']} vectors/s (CPU), "
          f"{wall:.0f} s wall", flush=True)
    if not args.no_lint:
        res["verilog_32_lanes"] = lint_32_lanes()
        print("verilog:", res["verilog_32_lanes"], flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)
    return 0 if res["total_mismatches"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
