"""Backend ``verilator`` (dcu/backends/verilator.py): HostTop (hdl/top/hosttop.py) compiled by Verilator.

* Firmware kernels give the golden results, the model's instruction counts, and the same
  cycles and counters as the ``rtl`` backend simulating the same HostTop in Amaranth's
  simulator (``memory="rtl"``) with the same memory seed, latency and ordering.
* Errors come back as the ``rtl`` backend reports them, with the buffers kept.
* The build's Verilog lints; a missing Verilator is a clear launch error.

The CI set runs on the ``fpga`` preset (``PRESET``): the DCU that goes on the board, and the
cheapest build of the whole topology (14 minutes, Verilog conversion and C++, against 34 for
``tiny`` on a busier machine; docs/toolflow.md); ``DCU_VERILATOR_PRESET=tiny`` runs it on
another. The first test builds it, later tests reuse the cached build. The ``default`` and
``tiny`` builds and the whole firmware set against ``rtl`` are under ``-m slow``.
"""
from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import pytest

import dcu
from dcu.admission import ResourceError, occupancy, occupancy_limits
from dcu.backends import pgo, verilator as vl
from dcu.hostimage import MIN_MEMORY_BYTES
from dcu.launch import LaunchError
from dcu.backends.rtl import RtlError
from dcu.launch import LaunchUnsupported
from firmware_tests.manifest import TESTS, get, path
from dcu.firmware import issue_mismatches, run_firmware
from hdl.config import get_config
from tests.asmutil import needs_llvm
from tests.lint import LINT_FLAGS
from tests.test_dcu import HEADER, TRAILER, asm_kernel, store_then

# one worker builds and runs them all (scripts/test.sh runs xdist with --dist loadgroup)
pytestmark = [needs_llvm, pytest.mark.skipif(not vl.available(), reason=vl.INSTALL_HINT),
              pytest.mark.xdist_group("verilator")]

# the rtl backend's memory-model defaults, spelled out: both backends must use the same
MEMORY = {"memory_seed": 3, "latency": (8, 32), "reorder": True}
PRESET = os.environ.get("DCU_VERILATOR_PRESET", "fpga")   # e.g. tiny: the 32-lane DCU


def _run(name: str, config: str, backend: str, **options):
    res = run_firmware(get(name), backend=backend, config=config, **options)
    assert res.ok, f"{backend}: {res.describe()}"
    return res.run.report


def _same_as_rtl(name: str, config: str):
    v = _run(name, config, "verilator", **MEMORY)
    r = _run(name, config, "rtl", memory="rtl", reuse=True, **MEMORY)   # one HostTop build per preset
    assert v.cycles == r.cycles, f"cycles: verilator {v.cycles}, rtl {r.cycles}"
    assert v.counters == r.counters, {k: (v.counters[k], r.counters.get(k)) for k in v.counters
                                      if v.counters[k] != r.counters.get(k)}
    assert not (bad := issue_mismatches(get(name), config, v)), bad
    return v


def test_vector_add_same_cycles_and_counters_as_rtl():
    _same_as_rtl("vector_add_asm", PRESET)


def test_firmware_set_matches_model():
    """Every firmware kernel the preset holds, on the compiled DCU: golden results and
    the model's instruction counts (the compiled simulation makes the whole set cheap)."""
    ran = []
    for t in TESTS:
        try:
            report = _run(t.name, PRESET, "verilator", **MEMORY)
        except (ResourceError, LaunchUnsupported):
            continue
        assert not (bad := issue_mismatches(t, PRESET, report)), f"{t.name}: {bad}"
        ran.append(t.name)
    assert len(ran) >= 20, ran


def test_seed_changes_timing_not_results():
    a = _run("vector_add_asm", PRESET, "verilator", **MEMORY)
    b = _run("vector_add_asm", PRESET, "verilator", **{**MEMORY, "memory_seed": 11})
    assert a.counters["dispatch.waves"] == b.counters["dispatch.waves"]
    assert a.cycles != b.cycles     # different latencies drawn: a dead seed would not change them


def test_a_wrapper_runs_the_simulation_program(tmp_path):
    """``wrapper`` (valgrind for ``dcu bench sim-instructions``, a debugger) runs the same
    program on the same input: it runs, and the cycles and counters are the plain run's."""
    from dcu.launch import load_program, prepare
    t = get("vector_add_asm")
    kern = load_program(path(t)).kernel(t.kernel)

    def run(**options):
        prep = prepare(kern, t.grid, t.block, t.make_args(np.random.default_rng(0)))
        return vl.run_dispatch(prep, kern, PRESET, bool(kern.wgp_mode), seed=3, **options)
    marker = tmp_path / "ran"
    plain, wrapped = run(), run(wrapper=["sh", "-c", f'touch "{marker}" && exec "$@"', "wrapper"])
    assert marker.exists()
    assert (wrapped.cycles, wrapped.counters) == (plain.cycles, plain.counters)


def test_cycle_accounting():
    """The program counts every cycle it simulates (``dcu bench sim-speed`` divides them by
    its CPU time): 4 to reset and set up, one per image dword loaded and one per dword read
    back, one per counter read, and the dispatch phase, which it also times on its own."""
    from dcu.launch import load_program, prepare
    t = get("vector_add_asm")
    kern = load_program(path(t)).kernel(t.kernel)
    prep = prepare(kern, t.grid, t.block, t.make_args(np.random.default_rng(0)))
    dwords = vl.host_image(prep, get_config(PRESET), bool(kern.wgp_mode)).words.size
    r = vl.run_dispatch(prep, kern, PRESET, bool(kern.wgp_mode), seed=3)
    # the dispatch phase: the handshake, the cycles the DCU counts, the cycle done is seen in
    assert r.cycles <= r.run_cycles <= r.cycles + 3
    assert r.harness_cycles == 4 + 2 * dwords + len(r.counters) + r.run_cycles
    assert 0 < r.run_cpu_seconds < r.cpu_seconds


@pytest.mark.parametrize("vgprs,limit", [(8, "wave_slots"), (72, "vgprs")])
def test_occupancy_and_queued_workgroups(tmp_path, vgprs, limit):
    """16 one-wave workgroups on the preset's DCU (2 slots, 128 VGPRs per SIMD): the most waves
    resident at once equals the occupancy formula times the SIMDs, the rest queue, and the
    dispatcher counts the cycles the resource that limits held the next workgroup back."""
    from hdl.config import get_config
    cfg = get_config(PRESET)
    p = tmp_path / "k.s"
    trailer = TRAILER.replace(".amdhsa_next_free_vgpr 8", f".amdhsa_next_free_vgpr {vgprs}")
    p.write_text(HEADER + store_then("") + trailer)
    k = dcu.load_program(p).kernel("k")
    limits = occupancy_limits(cfg, k.vgpr_count)
    occ = occupancy(cfg, k.vgpr_count)
    assert min(limits, key=limits.get) == limit and occ == {8: 2, 72: 1}[vgprs]
    out = np.zeros(32, np.uint32)
    run = dcu.launch(k, 16, 32, [out], backend="verilator", config=PRESET, seed=3)
    c = run.report.counters
    assert np.array_equal(run.buffers[0], np.arange(1, 33))
    assert c["dispatch.workgroups"] == 16 and c["dispatch.waves"] == 16
    assert c["dispatch.max_resident"] == cfg.simds * occ
    assert c["dispatch.blocked_" + ("slots" if limit == "wave_slots" else "vgprs")] > 0


def test_illegal_instruction_reported_with_buffers(tmp_path):
    k = asm_kernel(tmp_path, store_then("\t.long 0xffffffff"))
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlError, match=r"verilator .*illegal instruction at SIMD \d, wave slot \d, "
                                       r"PC 0x[0-9a-f]+: .*ffffffff") as e:
        dcu.launch(k, 1, 32, [out], backend="verilator", config=PRESET, seed=3)
    assert np.array_equal(e.value.buffers[0], np.arange(1, 33))


def test_watchdog_reported(tmp_path):
    k = asm_kernel(tmp_path, store_then("\ts_barrier_wait -1"))
    out = np.zeros(32, np.uint32)
    # the watchdog's limit is hardware (a new build per value): the backend's default here
    with pytest.raises(RtlError, match=r"watchdog: no instruction issued for 50000 cycles") as e:
        dcu.launch(k, 1, 32, [out], backend="verilator", config=PRESET)
    assert np.array_equal(e.value.buffers[0], np.arange(1, 33))
    # the resident wave, read back from the compiled DCU, waits at s_barrier_wait unsignalled
    assert re.search(r"resident waves:\n +SIMD \d slot \d: PC 0x[0-9a-f]+ \(s_barrier_wait .*barrier-signalled 0",
                     str(e.value)), str(e.value)


def test_cycle_limit_lists_the_spinning_wave(tmp_path):
    """A wave that branches to itself forever issues all the time (the watchdog never fires):
    the cycle limit stops it, and the report lists the resident wave with its PC in the loop
    (the ``s_branch``, or the word after it while the branch resolves), the instruction there
    and its counters, as the ``rtl`` backend's does."""
    k = asm_kernel(tmp_path, "\tv_mov_b32 v1, 0\nspin:\n\ts_branch spin\n\ts_endpgm\n")
    with pytest.raises(RtlError, match="did not finish within 20000 cycles") as e:
        dcu.launch(k, 1, 32, [np.zeros(32, np.uint32)], backend="verilator", config=PRESET, max_cycles=20_000)
    f = e.value.fault
    assert (f.what, e.value.category) == ("cycle limit", "timeout")
    assert len(f.waves) == 1 and re.fullmatch(
        r"SIMD \d slot \d: PC 0x[0-9a-f]+ \((s_branch .*|s_endpgm)\) loadcnt 0 storecnt 0 dscnt 0 kmcnt 0 "
        r"barrier-signalled 0",
        f.waves[0]), f.waves


def test_build_verilog_lints():
    """The Verilog the backend compiles (the DCU with its memory) is lint-clean, except
    for the "latches" dcu/vpost/vsink.py makes on purpose: a value computed inside the process
    branch that uses it is a reg assigned on some paths only (read on those paths only)."""
    b = vl.build(PRESET, MIN_MEMORY_BYTES, 0x1000_0000)
    r = subprocess.run(["verilator", *LINT_FLAGS, "-Wno-LATCH", str(b.directory / f"{vl.TOP}.v")],
                       capture_output=True, text=True, env={**os.environ, **vl.toolchain()[1]})
    assert r.returncode == 0, r.stderr[-4000:]


def test_build_is_profile_guided_where_clang_can():
    """With clang and its profile runtime (scripts/setup.sh installs both), the program the
    firmware set runs on was compiled from a profile of the training kernels this preset
    holds (dcu/backends/pgo.py), so that set checks a profile-guided program against the model."""
    if pgo.tools(vl.make_variables().get("CXX")) is None:
        pytest.skip(f"no profile-guided build here: {pgo.INSTALL_HINT}")
    b = vl.build(PRESET, MIN_MEMORY_BYTES, 0x1000_0000)
    want = tuple(n for n, _ in pgo.training_images(get_config(PRESET), MIN_MEMORY_BYTES, 0x1000_0000))
    assert want and b.trained_on == want
    assert (b.binary.parent / "profile.profdata").stat().st_size > 0


def test_toolchain_choice(monkeypatch):
    """The first Verilator found builds unless one is named; an unknown name is refused with
    the names there are."""
    tools = vl.toolchains()
    monkeypatch.delenv("DCU_VERILATOR", raising=False)
    assert vl.toolchain() == next(iter(tools.items()))
    for name, env in tools.items():
        assert vl.toolchain(name) == (name, env)
        monkeypatch.setenv("DCU_VERILATOR", name)
        assert vl.toolchain() == (name, env)
    monkeypatch.setenv("DCU_VERILATOR", "no-such")
    with pytest.raises(vl.VerilatorError, match=r"'no-such' is not available here \(found: "):
        vl.toolchain()


def test_compiler_choice(monkeypatch):
    """clang++-19 compiles the model when it is on PATH (the project installs it), g++
    (make's default) otherwise; the optimisation levels are the same either way."""
    monkeypatch.delenv("DCU_VERILATOR_MARCH", raising=False)
    monkeypatch.setattr(vl.shutil, "which", lambda name: "/usr/bin/" + name)
    fast = {"OPT_FAST": "-O2 -march=native"}
    assert vl.make_variables() == {**vl.MAKE_ENV, **fast, "CXX": "clang++-19", "LINK": "clang++-19"}
    monkeypatch.setattr(vl.shutil, "which", lambda name: None)
    assert vl.make_variables() == {**vl.MAKE_ENV, **fast}
    monkeypatch.setenv("DCU_VERILATOR_MARCH", "x86-64-v3")      # what sim-instructions builds for valgrind
    assert vl.make_variables()["OPT_FAST"] == "-O2 -march=x86-64-v3"


def test_sources_changed_under_the_process_is_refused(monkeypatch, tmp_path):
    """A process that imported the design converts its own (stale) modules: once the sources
    differ from those it started with, it is refused rather than caching its design under
    the new sources' key."""
    import sys
    monkeypatch.setattr(vl, "BUILD_DIR", tmp_path)
    monkeypatch.setattr(vl, "_digest_seen", None)
    digest = ["a" * 64]
    monkeypatch.setattr(vl, "_source_digest", lambda: digest[0])
    monkeypatch.setitem(sys.modules, "hdl.top.hosttop", sys.modules.get("hdl.top.hosttop") or object())
    cfg = get_config(PRESET)
    params = vl.design_params(cfg, MIN_MEMORY_BYTES, 0x1000_0000, 50_000)
    first = vl.design_dir(cfg, params)
    assert vl.design_dir(cfg, params) == first
    digest[0] = "b" * 64
    with pytest.raises(RuntimeError, match="sources changed after this process imported them"):
        vl.design_dir(cfg, params)


def test_missing_verilator_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(vl, "available", lambda: False)
    t = get("vector_add_asm")
    kern = dcu.load_program(path(t)).kernel(t.kernel)
    with pytest.raises(LaunchError, match="apt-get install -y verilator"):
        dcu.launch(kern, t.grid, t.block, t.make_args(np.random.default_rng(0)), backend="verilator", config=PRESET)


@pytest.mark.slow
@pytest.mark.parametrize("config", ["default", "tiny", "fpga"])
@pytest.mark.parametrize("name", [t.name for t in TESTS])
def test_every_kernel_same_as_rtl(name, config):
    try:
        _same_as_rtl(name, config)
    except (ResourceError, LaunchUnsupported) as e:
        pytest.skip(str(e))
