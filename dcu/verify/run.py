"""One random program on the model and on another backend, compared; and campaigns of them.

:func:`check` builds a program (``dcu.verify.gen``), runs it on the reference (the model) and
on the candidate (``verilator``, ``rtl`` or any :data:`Runner`) and compares the output buffer
(every wave's VGPRs, SGPRs and LDS), the data buffer and the instructions issued by group
(``hdl.layouts.ISSUE_GROUPS``). :func:`campaign` runs many over worker processes; the RTL
backends share one Verilator build, made before the workers start.
"""
from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .gen import RAND_SGPRS, RAND_VGPRS, Program, generate

__all__ = ["Outcome", "Runner", "MEMORY", "PRESET", "model_runner", "backend_runner", "check", "campaign",
           "kernel_of", "describe_mismatch", "merge_reports"]

# The Verilator build parameters of tests/test_verilator.py: CI builds the design once for both.
MEMORY = {"latency": (8, 32), "reorder": True}
PRESET = "fpga"


@dataclass
class Outcome:
    """What one backend did with a program: the buffers (output, data), the instructions by
    issue group, counters, and the error if it stopped."""
    buffers: list | None
    groups: dict
    counters: dict = field(default_factory=dict)
    error: str | None = None
    lanes: dict = field(default_factory=dict)     # mnemonic -> set of active-lane buckets (model)


Runner = Callable[[object, Program], Outcome]


def kernel_of(prog: Program, folder: Path, name: str = "verify"):
    """Assemble and load ``prog`` (a ``dcu.codeobj.KernelInfo``)."""
    from dcu.launch import load_program
    path = Path(folder) / f"{name}_{prog.seed}.s"
    path.write_text(prog.source(name))
    return load_program(path).kernel(name)


def _bucket(exec_mask: int) -> str:
    n = bin(exec_mask & 0xFFFF_FFFF).count("1")
    return "none" if n == 0 else "one" if n == 1 else "all" if n == 32 else "some"


def model_runner(corrupt: dict | None = None, max_instructions: int = 2_000_000) -> Runner:
    """The reference model; ``corrupt`` maps mnemonics to a function ``(wave, inst)`` applied
    after that instruction's handler (a deliberately broken model, for testing the shrinker)."""
    def run(kernel, prog: Program) -> Outcome:
        from dcu.launch import prepare
        from sim.model import ExecutionError, Model
        from sim.wave import EXEC
        from hdl.layouts import ISSUE_GROUPS
        lanes: dict = {}

        class Watched(Model):
            def _fetch(self, pc):
                inst, handler = super()._fetch(pc)
                seen = lanes.setdefault(inst.name, set())
                fix = (corrupt or {}).get(inst.name)

                def watched(w, wg, _h=handler, _inst=inst):
                    seen.add(_bucket(int(w.s[EXEC])))
                    status = _h(w, wg)
                    if fix is not None:
                        fix(w, _inst)
                    return status
                return inst, watched
        grid, block = prog.launch_dims()
        prep = prepare(kernel, grid, block, list(prog.inputs()), max_instructions)
        model = Watched(prep.mem, prep.code, prep.code_base)
        error = None
        try:
            model.run(prep.dispatch)
        except ExecutionError as e:
            error = f"{type(e).__name__}: {e}"
        groups = Counter()
        for kind, n in model.stats.by_kind.items():
            groups[next((g for g, kinds in ISSUE_GROUPS.items() if kind in kinds), "other")] += n
        return Outcome(prep.read_back(), dict(groups), {"instructions": model.stats.instructions}, error, lanes)
    return run


def backend_runner(backend: str, config: str = PRESET, memory_seed: int | None = None) -> Runner:
    """An RTL backend (``verilator`` or ``rtl``) with the memory model of :data:`MEMORY`; the
    latencies' seed is ``memory_seed`` (default: the program's seed)."""
    def run(kernel, prog: Program) -> Outcome:
        from dcu.launch import LaunchError, launch
        grid, block = prog.launch_dims()
        try:
            r = launch(kernel, grid, block, list(prog.inputs()), backend=backend, config=config,
                       seed=prog.seed if memory_seed is None else memory_seed, progress=False,
                       max_cycles=20_000 + 200 * prog.model_instructions, **MEMORY)
        except LaunchError as e:
            return Outcome(getattr(e, "buffers", None), {}, {}, f"{type(e).__name__}: {e}")
        except Exception as e:   # an RTL error latched mid-run: a finding, with its report
            report = getattr(e, "report", None)
            return Outcome(getattr(e, "buffers", None), dict(report.instructions_by_kind) if report else {},
                           dict(report.counters) if report else {}, f"{type(e).__name__}: {e}")
        groups = {g: n for g, n in r.report.instructions_by_kind.items() if n}
        return Outcome(r.buffers, groups, dict(r.report.counters))
    return run


def describe_mismatch(prog: Program, which: str, ref: np.ndarray, got: np.ndarray) -> list[str]:
    """Where two copies of a buffer differ, named by wave, register and lane (the output
    buffer) or by wave slice and byte offset (the data buffer); at most 8 places."""
    bad = np.flatnonzero(ref != got)
    L = prog.layout
    out = []
    for i in bad[:8]:
        i = int(i)
        if which == "out":
            wave, d = divmod(i, L.record_dwords)
            nv = len(RAND_VGPRS)
            if d < nv * 32:
                where = f"v{RAND_VGPRS[d // 32]} lane {d % 32}"
            elif d < (nv + 1) * 32:
                lane = d - nv * 32
                names = [f"s{k}" for k in RAND_SGPRS] + ["scc", "exec_lo", "vcc_lo", "m0"]
                where = names[lane] if lane < len(names) else f"sgpr dump lane {lane}"
            elif d < (nv + 1) * 32 + L.lds_slice // 4:
                where = f"LDS slice byte {4 * (d - (nv + 1) * 32):#x}"
            else:
                where = f"shared LDS byte {4 * (d - (nv + 1) * 32 - L.lds_slice // 4):#x}"
            place = f"wave {wave}: {where}"
        else:
            wave, off = divmod(4 * i, L.data_slice)
            place = f"data slice of wave {wave} byte {off:#x}" if wave < L.total_waves else \
                f"shared data byte {4 * i - L.total_waves * L.data_slice:#x}"
        out.append(f"{place}: expected 0x{int(ref[i]):08x}, got 0x{int(got[i]):08x}")
    if len(bad) > 8:
        out.append(f"... {len(bad)} dwords differ in all")
    return out


def compare(prog: Program, ref: Outcome, got: Outcome) -> list[str]:
    """The differences between the reference's and the candidate's outcomes, in words."""
    if ref.error:
        return [f"reference failed: {ref.error}"]
    if got.error:
        return [f"candidate failed: {got.error}"]
    out = []
    for idx, which in ((0, "out"), (1, "data")):
        out += describe_mismatch(prog, which, ref.buffers[idx], got.buffers[idx])
    if {g: n for g, n in ref.groups.items() if n} != {g: n for g, n in got.groups.items() if n}:
        out.append(f"instructions by group: expected {dict(sorted(ref.groups.items()))}, "
                   f"got {dict(sorted(got.groups.items()))}")
    return out


def check(prog: Program, candidate: Runner, reference: Runner | None = None, folder: Path | None = None) -> dict:
    """Run ``prog`` on both and compare: a dict with the seed, the shape, the mismatches, the
    instructions, and the coverage the program gave (``dcu.verify.coverage``)."""
    from .coverage import program_coverage
    reference = reference or model_runner()
    with tempfile.TemporaryDirectory(prefix="dcu-verify-") as tmp:
        kernel = kernel_of(prog, Path(folder or tmp))
        t0 = time.perf_counter()
        ref = reference(kernel, prog)
        prog.model_instructions = ref.counters.get("instructions", prog.model_instructions)
        got = candidate(kernel, prog)
    mismatches = compare(prog, ref, got)
    return {"seed": prog.seed, "waves": prog.layout.waves, "groups": prog.layout.groups,
            "instructions": ref.counters.get("instructions", 0), "mismatches": mismatches,
            "seconds": round(time.perf_counter() - t0, 3),
            "coverage": program_coverage(prog, ref.lanes, got.counters)}


def _one(args) -> dict:
    seed, backend, config, target, *length = args
    prog = generate(seed, target, *length)
    cand = model_runner() if backend == "model" else backend_runner(backend, config)
    try:
        return check(prog, cand)
    except Exception as e:            # a program that does not build is a generator bug: report it
        return {"seed": seed, "waves": prog.layout.waves, "groups": prog.layout.groups, "instructions": 0,
                "mismatches": [f"could not run: {type(e).__name__}: {e}"], "seconds": 0.0, "coverage": {}}


def prebuild(backend: str, config: str) -> None:
    """Build (or find) the Verilator design once, before the worker processes share it: run one
    short program, which builds it the way every later launch looks it up."""
    if backend == "verilator":
        _one((0, backend, config, "rtl", 1))   # its result does not matter, the build does


def campaign(programs: int, seed: int = 0, backend: str = "verilator", jobs: int = 1, config: str = PRESET,
             progress=None, target: str | None = None, length: int | None = None) -> dict:
    """Run ``programs`` programs (seeds ``seed``, ``seed + 1``, ...; ``length`` instructions
    each, default drawn from the seed) on ``backend`` against the model over ``jobs``
    processes; the report: results per failing seed, totals and coverage."""
    from .coverage import merge
    target = target or ("model" if backend == "model" else "rtl")
    prebuild(backend, config)
    work = [(s, backend, config, target, length) for s in range(seed, seed + programs)]
    results = []
    t0 = time.perf_counter()
    if progress:
        progress.count(f"verify on {backend}", "programs", programs)
    if jobs > 1:
        import multiprocessing as mp
        with mp.get_context("spawn").Pool(jobs) as pool:
            for res in pool.imap_unordered(_one, work):
                results.append(res)
                if progress:
                    progress.update(len(results), f"{sum(bool(r['mismatches']) for r in results)} failing")
    else:
        for w in work:
            results.append(_one(w))
            if progress:
                progress.update(len(results), f"{sum(bool(r['mismatches']) for r in results)} failing")
    if progress:
        progress.close()
    results.sort(key=lambda r: r["seed"])
    failing = [{k: r[k] for k in ("seed", "waves", "groups", "mismatches")} for r in results if r["mismatches"]]
    return {"backend": backend, "config": config, "target": target, "seeds": [seed, seed + programs - 1],
            "programs": programs, "passed": programs - len(failing), "failed": len(failing),
            "instructions": sum(r["instructions"] for r in results),
            "seconds": round(time.perf_counter() - t0, 1), "failures": failing,
            "coverage": merge([r["coverage"] for r in results], target)}


def merge_reports(reports: list[dict]) -> dict:
    """One report from campaigns run in parts (same backend, configuration and target): the
    totals summed, the seed ranges and failures joined, the coverage merged."""
    from .coverage import merge
    first = reports[0]
    keys = ("backend", "config", "target")
    if any(tuple(r[k] for k in keys) != tuple(first[k] for k in keys) for r in reports):
        raise ValueError("the reports ran on different backends, configurations or targets")
    total = lambda k: sum(r[k] for r in reports)
    return {**{k: first[k] for k in keys},
            "seeds": [min(r["seeds"][0] for r in reports), max(r["seeds"][1] for r in reports)],
            "programs": total("programs"), "passed": total("passed"), "failed": total("failed"),
            "instructions": total("instructions"), "seconds": round(total("seconds"), 1),
            "failures": [f for r in reports for f in r["failures"]],
            "coverage": merge([r["coverage"] for r in reports], first["target"])}


def write_report(report: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(report, indent=1, sort_keys=False) + "\n")


def fails_on(candidate: Runner, reference: Runner | None = None) -> Callable[[Program], bool]:
    """The predicate a shrink keeps: the program builds, the reference runs it and the candidate
    differs from it."""
    def fails(prog: Program) -> bool:
        try:
            mism = check(prog, candidate, reference)["mismatches"]
        except Exception:           # a reduction that no longer assembles or loads
            return False
        return bool(mism) and not mism[0].startswith("reference failed")
    return fails
