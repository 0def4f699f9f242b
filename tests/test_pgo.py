"""Profile-guided builds of the verilator backend (dcu/backends/pgo.py): when they are made, and what
they are trained on. That a profile-guided program computes what the model does is the
Verilator firmware set's work (tests/test_verilator.py), which runs on one."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dcu.admission import ResourceError, check_kernel
from dcu.backends import pgo
from dcu.hostimage import MIN_MEMORY_BYTES, memory_size_for
from hdl.config import get_config
from tests.asmutil import needs_llvm

BASE = 0x1000_0000      # where dcu.launch.prepare places a dispatch's image


def test_only_clang_builds_with_a_profile(monkeypatch):
    """gcc's profile-guided program gave wrong results (docs/toolflow.md), so only clang's
    are made, and ``DCU_VERILATOR_PGO=0`` makes none."""
    monkeypatch.delenv("DCU_VERILATOR_PGO", raising=False)
    assert pgo.tools("g++") is None and pgo.tools(None) is None
    monkeypatch.setenv("DCU_VERILATOR_PGO", "0")
    assert pgo.tools("clang++-19") is None


@pytest.mark.skipif(not shutil.which("clang++-19"), reason="needs clang++-19 (scripts/setup.sh)")
def test_clang_profile_tools_found(monkeypatch):
    """With clang, the profile runtime is the one for this machine's architecture, linked by
    path, beside an llvm-profdata; the instrumented build's flags name both."""
    monkeypatch.delenv("DCU_VERILATOR_PGO", raising=False)
    t = pgo.tools("clang++-19")
    if t is None:
        pytest.skip(pgo.INSTALL_HINT)
    assert t.runtime.is_file() and t.runtime.name.startswith("libclang_rt.profile")
    assert shutil.which(t.profdata)
    gen = t.generate("-O2", Path("/tmp/p"))
    assert gen["OPT_FAST"] == "-O2 -fprofile-generate=/tmp/p" and str(t.runtime) in gen["USER_LDLIBS"]
    assert t.use("-O2", Path("/tmp/p.profdata"))["OPT_FAST"].startswith("-O2 -fprofile-use=/tmp/p.profdata ")


@needs_llvm
def test_training_kernels_that_fit_the_top():
    """Every training kernel that the configuration holds, in order, each image inside the
    top's memory; none for a memory at another base or smaller than an image needs;
    divergence_cl (the kernel ``dcu bench sim-speed`` times) is never one."""
    assert "divergence_cl" not in pgo.TRAINING
    cfg = get_config("default")
    got = pgo.training_images(cfg, MIN_MEMORY_BYTES, BASE)
    assert [n for n, _ in got] == list(pgo.TRAINING)
    assert all(img.base == BASE and memory_size_for(img.used_bytes) <= MIN_MEMORY_BYTES for _, img in got)
    assert pgo.training_images(cfg, MIN_MEMORY_BYTES, BASE + 0x1000) == []
    assert pgo.training_images(cfg, MIN_MEMORY_BYTES // 2, BASE) == []


@needs_llvm
def test_training_skips_kernels_the_configuration_cannot_hold():
    """The fpga preset's smaller LDS and register files refuse some kernels: those are left
    out, the rest kept."""
    cfg = get_config("fpga")
    from firmware_tests.manifest import get, path
    from dcu.launch import load_program

    def holds(name):
        t = get(name)
        try:
            check_kernel(cfg, load_program(path(t)).kernel(t.kernel), t.block)
            return True
        except ResourceError:
            return False
    want = [n for n in pgo.TRAINING if holds(n)]
    assert 0 < len(want) < len(pgo.TRAINING), want     # the test needs both kinds
    assert [n for n, _ in pgo.training_images(cfg, MIN_MEMORY_BYTES, BASE)] == want
