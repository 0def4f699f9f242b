"""Simulator speed: the whole DCU's cycles per second in Amaranth's simulator and compiled by
Verilator (``sim-speed``), and the instructions the compiled program executes per cycle,
counted by valgrind (``sim-instructions``)."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from amaranth.hdl import Fragment, Shape
from amaranth.lib.memory import Memory

from firmware_tests.manifest import get, path
from hdl.config import get_config
from hdl.top.dcu import DCU

from ..backends import rtl, verilator
from ..launch import load_program, prepare


def _design_size(top) -> dict:
    """Signals (and their bits) and memories (and their bits) of an elaborated design: what
    Amaranth's simulator updates."""
    design = Fragment.get(top, None).prepare()
    signals = list(design.signal_lca)
    mems = [e for e in design.elaboratables if isinstance(e, Memory)]
    return {"signals": len(signals), "signal_bits": sum(len(s) for s in signals),
            "memories": len(mems), "memory_bits": sum(m.depth * Shape.cast(m.shape).width for m in mems)}


def sim_speed(configs=("default", "fpga"), compiled=("default", "fpga"), test: str = "divergence_cl", seed: int = 0,
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
    t = get(test)
    kern = load_program(path(t)).kernel(t.kernel)
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
                    "Verilator found (dcu.backends.verilator.toolchains) or the one $DCU_VERILATOR names; "
                    "Verilator rows: "
                    "cycles_per_cpu_s is the dispatch phase's run_cycles over the CPU time the program measured "
                    "for that phase, the best of 'runs' runs, and its median; harness_cycles_per_cpu_s: every "
                    "cycle simulated (loading and reading back included) over the program's CPU time, best run; "
                    "ratio: against Amaranth, per CPU second (best); trained_on: the kernels the build's "
                    "profile came from (dcu/backends/pgo.py; empty: a build without one)",
            "compiled": list(compiled)}


@contextlib.contextmanager
def setenv(name: str, value: str):
    """``$name`` set to ``value`` for the block, then restored (or unset) as it was: the
    Verilator build reads its target from the environment."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def sim_instructions(configs=("default", "fpga"), test: str = "divergence_cl", seed: int = 0) -> dict:
    """Instructions the compiled model (``dcu.backends.verilator``) executes for one kernel, counted by
    valgrind's callgrind: exact and the same on every run, where CPU seconds on a shared
    machine vary by 30 % (docs/toolflow.md). Per harness cycle (loading and reading back
    included) and per dispatch cycle. The builds target x86-64-v3 (``DCU_VERILATOR_MARCH``):
    valgrind cannot decode the AVX-512 that ``-march=native`` may use, so they are not
    ``sim-speed``'s programs; each is cached likewise."""
    if not shutil.which("valgrind"):
        raise RuntimeError("sim-instructions needs valgrind: apt-get install -y valgrind")
    t = get(test)
    kern = load_program(path(t)).kernel(t.kernel)
    rows = []
    march = "x86-64-v3"     # valgrind decodes AVX2, not AVX-512
    with setenv("DCU_VERILATOR_MARCH", march), tempfile.TemporaryDirectory(prefix="dcu-cg-") as tmp:
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
