#!/usr/bin/env python3
"""Long verification campaign for sim/fp32.py; writes bench/results/fp32_campaign.json.

1. add, sub, mul, fma: --triples random operand sets per op (default 1,000,000), drawn by the
   generators of tests/test_fp32.py (denormals, near-overflow, cancellation, specials), each
   checked bit for bit against the exact Fraction reference of that file.
2. rcp, sqrt, rsq: every positive finite float32 (exponent fields 0..254, all mantissas),
   checked bit for bit against the correctly rounded result (float64 / and sqrt rounded once
   more to float32, which is innocuous since 53 >= 2*24 + 2; rsq: float64 plus an exact rational
   check wherever float64 cannot decide), and the ulp error against float64 math.
   Negative inputs are the sign-symmetric (rcp) or NaN (sqrt, rsq) cases covered by the tests.
3. exp: every float32 with |x| < 256 of both signs (|x| >= 256 gives 0 or inf without any
   arithmetic); log: every positive finite float32.  Ulp error against numpy float64 exp2/log2
   (< 1 float64 ulp), count of results that differ from the float64 reference rounded to float32.
4. Datapath ranges of the fixed-point units (widths for the RTL) and, for rcp/sqrt/rsq, the
   distance of the Newton candidate from the exact floor before the final correction.

Usage: python3 bench/fp32_campaign.py [--triples N] [--quick] [--jobs J]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from multiprocessing import Pool

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from sim import fp32 as F          # noqa: E402
import test_fp32 as T              # noqa: E402  (reference and generators)

U32, U64, I64 = np.uint32, np.uint64, np.int64
F32, F64 = np.float32, np.float64
HALF = 1 << 22                     # inputs per work item (half a binade)


# --------------------------------------------------------------------------------------
def arith_campaign(op, n, seed):
    rng = np.random.default_rng(seed)
    done, bad, cats = 0, [], {"nan": 0, "inf": 0, "zero": 0, "denormal": 0, "normal": 0}
    t0 = time.time()
    while done < n:
        k = min(100000, n - done)
        if op == "fma":
            ops = T.gen_triples(rng, k)
        else:
            ops = T.gen_pairs(rng, k, op)
        got = getattr(F, op)(*ops).tolist()
        for args, g in zip(zip(*(o.tolist() for o in ops)), got):
            r = T.ref_arith(op, *args)
            if g != r and len(bad) < 20:
                bad.append([hex(v) for v in args] + [hex(g), hex(r)])
            if g != r:
                cats.setdefault("mismatch", 0)
                cats["mismatch"] += 1
            m = r & 0x7FFFFFFF
            cats["nan" if m > 0x7F800000 else "inf" if m == 0x7F800000 else "zero" if m == 0
                 else "denormal" if m < 0x00800000 else "normal"] += 1
        done += k
    return {"op": op, "operand_sets": n, "mismatches": cats.pop("mismatch", 0), "first_mismatches": bad,
            "result_classes": cats, "seconds": round(time.time() - t0, 1)}


# --------------------------------------------------------------------------------------
def ulp_err(got, ref):
    return T.ulp_error(got, ref)


def isqrt_u(v):
    """Exact floor(sqrt(v)) for int64 v < 2^52."""
    s = np.floor(np.sqrt(v.astype(F64))).astype(I64)
    s = s - (s * s > v)
    s = s + ((s + 1) * (s + 1) <= v)
    return s


def rsq_exact_check(x, c):
    """True if bits c are the correctly rounded 1/sqrt(x) (exact rational midpoint test)."""
    v = T.to_frac(x)
    if T.to_frac(c) ** 2 * v == 1:
        return True
    lo, hi = T.midpoint_bracket(c)
    return lo * lo * v < 1 < hi * hi * v


def sweep_item(item):
    """One work item: (function, first input bits, count).  Returns partial statistics."""
    fn, start, count = item
    xs = np.arange(start, start + count, dtype=np.uint64).astype(U32)
    st = {"inputs": count, "mismatch": 0, "not_cr": 0, "max_ulp": 0.0, "worst": None, "examples": []}
    with np.errstate(all="ignore"):
        got = getattr(F, fn)(xs)
        x64 = xs.view(F32).astype(F64)
        if fn == "rcp":
            ref = 1.0 / x64
        elif fn == "sqrt":
            ref = np.sqrt(x64)
        elif fn == "rsq":
            ref = 1.0 / np.sqrt(x64)
        elif fn == "exp":
            ref = np.exp2(x64)
        else:
            ref = np.log2(x64)
        cr = ref.astype(F32).view(U32)
    if fn == "rsq":
        with np.errstate(all="ignore"):
            r1 = (ref * (1 + 2.0 ** -46)).astype(F32).view(U32)
            r2 = (ref * (1 - 2.0 ** -46)).astype(F32).view(U32)
        unsure = np.nonzero((r1 != r2) | (got != cr))[0]
        bad = [i for i in unsure.tolist() if not rsq_exact_check(int(xs[i]), int(got[i]))]
        st["mismatch"] = len(bad)
        st["examples"] = [hex(int(xs[i])) for i in bad[:5]]
        st["undecided_by_float64"] = int(((r1 != r2)).sum())
    elif fn in ("rcp", "sqrt"):
        bad = np.nonzero(got != cr)[0]
        st["mismatch"] = int(bad.size)
        st["examples"] = [hex(int(xs[i])) for i in bad[:5]]
    else:
        st["not_cr"] = int((got != cr).sum())
    fin = np.isfinite(ref) if fn != "exp" else np.ones(count, bool)
    err = ulp_err(got[fin], ref[fin])
    if err.size:
        w = int(np.argmax(err))
        st["max_ulp"] = float(err[w])
        st["worst"] = hex(int(xs[fin][w]))
    st["gt_half_ulp"] = int((err > 0.5).sum())
    return fn, st


def merge(parts):
    out = {"inputs": 0, "mismatch": 0, "not_cr": 0, "max_ulp": 0.0, "worst": None, "examples": [],
           "gt_half_ulp": 0}
    for st in parts:
        out["inputs"] += st["inputs"]
        out["mismatch"] += st["mismatch"]
        out["not_cr"] += st["not_cr"]
        out["gt_half_ulp"] += st["gt_half_ulp"]
        out["examples"] = (out["examples"] + st["examples"])[:10]
        if "undecided_by_float64" in st:
            out["undecided_by_float64"] = out.get("undecided_by_float64", 0) + st["undecided_by_float64"]
        if st["max_ulp"] > out["max_ulp"]:
            out["max_ulp"], out["worst"] = st["max_ulp"], st["worst"]
    return out


def sweep_items(fn, quick):
    if fn == "exp":
        ranges = [(s << 31, 135 << 23) for s in (0, 1)]          # |x| < 256, both signs
    else:
        ranges = [(0, 255 << 23)]                                # every positive finite input
    items = []
    for base, length in ranges:
        for off in range(0, length, HALF):
            if quick and (off // HALF) % 16 != 3:
                continue
            items.append((fn, base + off, min(HALF, length - off)))
    return items


# --------------------------------------------------------------------------------------
def datapath_ranges():
    """Intermediate ranges over every significand (and exponent parity): sizes the RTL."""
    M = np.arange(1 << 23, 1 << 24, dtype=I64)
    out = {}

    def rng_of(d, keys):
        return {k: [int(d[k].min()), int(d[k].max())] for k in keys}

    t = F.rcp_core(M)
    exact = (np.int64(1) << 48) // M
    out["rcp"] = rng_of(t, ["R0", "E0", "R1", "E1", "E1s", "R2", "Q"])
    out["rcp"]["candidate_minus_floor"] = [int((t["Q"] - exact).min()), int((t["Q"] - exact).max())]
    out["rcp"]["r2_error_units_2^-32"] = float(np.abs(t["R2"] - (2.0 ** 55 / M)).max())
    for par in (0, 1):
        t = F.rsqrt_core(M, np.full(M.shape, par, I64))
        N = t["N"]
        s_exact = isqrt_u(N << 25)
        q1, r1 = np.divmod(np.full(N.shape, 1 << 63, np.uint64), N.astype(U64))
        q_exact = isqrt_u((q1.astype(I64) << 10) + ((r1.astype(I64) << 10) // N))
        d = rng_of(t, ["Y0", "Y0sq", "Ea", "Eas", "Y1", "Y1sq", "Eb", "Ebs", "Y2", "S", "Q"])
        d["sqrt_candidate_minus_floor"] = [int((t["S"] - s_exact).min()), int((t["S"] - s_exact).max())]
        d["rsq_candidate_minus_floor"] = [int((t["Q"] - q_exact).min()), int((t["Q"] - q_exact).max())]
        out["rsqrt_parity%d" % par] = d
    # log: all significands, e in {0, -1, 1} (the near-1 paths and the general path)
    for e in (0, -1, 1):
        t = F.log2_core(M, np.full(M.shape, e, I64))
        out["log_e%d" % e] = rng_of(t, ["C", "T", "A2", "A1", "P", "V", "S"])
    # exp: a dense sample of every input class that reaches the datapath (|a| < 256, both signs)
    xs = np.concatenate([np.arange(e << 23, (e + 1) << 23, 61, dtype=np.uint64) for e in range(0, 135)])
    xs = np.concatenate([xs, xs | np.uint64(1 << 31)]).astype(U32)
    sign, Mx, ex = F.unpack(xs)
    t = F.exp2_core(sign, Mx, ex)
    t["A3r"] = F.EXP2_C3 * t["r"]
    out["exp"] = rng_of(t, ["X", "n", "r", "A2", "A1", "P", "T", "sig"])
    return out


# --------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--triples", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="1/16 of the exhaustive sweeps")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "fp32_campaign.json"))
    args = ap.parse_args()
    t0 = time.time()
    try:
        commit = subprocess.check_output(["git", "-C", ROOT, "rev-parse", "HEAD"], text=True).strip()
    except Exception:
        commit = None
    res = {"numpy": np.__version__, "git_commit": commit, "seed": args.seed, "quick": args.quick}

    res["datapath_ranges"] = datapath_ranges()
    print("datapath ranges done", round(time.time() - t0, 1), flush=True)

    items = [it for fn in ("rcp", "sqrt", "rsq", "log", "exp") for it in sweep_items(fn, args.quick)]
    parts = {}
    with Pool(args.jobs) as pool:
        for k, (fn, st) in enumerate(pool.imap_unordered(sweep_item, items)):
            parts.setdefault(fn, []).append(st)
            if k % 50 == 0:
                print(f"sweep {k}/{len(items)} {round(time.time() - t0)} s", flush=True)
    res["transcendentals"] = {fn: merge(p) for fn, p in parts.items()}
    print(json.dumps(res["transcendentals"], indent=1), flush=True)

    with Pool(args.jobs) as pool:
        res["arithmetic"] = pool.starmap(arith_campaign, [(op, args.triples, args.seed + i)
                                                          for i, op in enumerate(("add", "sub", "mul", "fma"))])
    res["seconds"] = round(time.time() - t0, 1)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res["arithmetic"], indent=1))
    ok = all(a["mismatches"] == 0 for a in res["arithmetic"]) and \
        all(v["mismatch"] == 0 and v["max_ulp"] <= 1.0 for v in res["transcendentals"].values())
    print("OK" if ok else "FAIL", res["seconds"], "s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
