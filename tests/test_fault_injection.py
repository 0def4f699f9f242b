"""Fault injection in the memory model: firmware kernels on the compiled DCU (backend
``verilator``, HostTop with the RTL memory) under 20 memory seeds each, every seed with its
own latency range (up to 500 cycles), ordering and back-pressure rate
(``dcu.memmodel.stress_settings``), all run-time settings of one build.

* Every run gives the golden results, and kernels whose results do not depend on timing
  give the same buffers under every seed.
* The memory's scoreboard (requests accepted and responses taken, by kind, and no
  response for a tag with none outstanding) is read after every run: the backend raises
  ``dcu.memmodel.ScoreboardError`` on a lost or duplicated response.
* The settings take effect: the cycle counts spread with the latencies drawn.

The CI set runs a few kernels on the preset and build of tests/test_verilator.py (``fpga``;
``DCU_VERILATOR_PRESET`` picks another), which it reuses. The whole firmware set under 20
seeds each runs under ``-m slow``::

    .venv/bin/python -m pytest -q -m slow tests/test_fault_injection.py

The scoreboard's own checks (fed a duplicated, reused or lost response) are in
tests/test_extmem.py and tests/test_memmodel.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from dcu.admission import ResourceError
from dcu.backends import verilator as vl
from dcu.firmware import run_firmware
from dcu.memmodel import stress_settings
from dcu.backends.rtlcheck import RtlUnsupportedError
from firmware_tests.manifest import TESTS, get
from tests.asmutil import needs_llvm
from tests.test_verilator import PRESET

pytestmark = [needs_llvm, pytest.mark.skipif(not vl.available(), reason=vl.INSTALL_HINT),
              pytest.mark.xdist_group("verilator")]

SEEDS = range(20)
#: global loads and stores, global atomics with return, scalar loads, partial waits on loadcnt
CI_KERNELS = ("vector_add_asm", "global_atomics_asm", "scalar_loads_asm", "partial_wait_asm")


def _under_seeds(name: str) -> list:
    """The kernel under every seed of :data:`SEEDS`: the reports (the backend checks the
    memory's scoreboard after each run); fails on a wrong result or on buffers that differ
    between seeds for a kernel whose results do not depend on timing."""
    test = get(name)
    timing_free = test.check is None and "ooo" not in test.tags
    reports, first = [], None
    for seed in SEEDS:
        settings = stress_settings(seed, min_latency=2)
        res = run_firmware(test, backend="verilator", config=PRESET, memory_seed=seed, **settings)
        assert res.ok, f"{name}, memory seed {seed} {settings}: {res.describe()}"
        buffers = [b for b in res.run.buffers if isinstance(b, np.ndarray)]
        if first is None:
            first = buffers
        elif timing_free:
            assert all(np.array_equal(a, b) for a, b in zip(first, buffers)), \
                f"{name}: memory seed {seed} {settings} gave other buffers than seed {SEEDS[0]}"
        reports.append((settings, res.run.report))
    return reports


@pytest.mark.parametrize("name", CI_KERNELS)
def test_kernel_under_20_memory_settings(name):
    runs = _under_seeds(name)
    cycles = [r.cycles for _, r in runs]
    assert len(set(cycles)) >= len(runs) // 2, cycles          # the settings change the timing
    long = [r.cycles for s, r in runs if s["latency"][0] >= 100]
    short = [r.cycles for s, r in runs if s["latency"][1] <= 40]
    assert long and short and min(long) > max(short), (long, short)


@pytest.mark.slow
@pytest.mark.parametrize("name", [t.name for t in TESTS])
def test_every_kernel_under_20_memory_settings(name):
    try:
        _under_seeds(name)
    except (ResourceError, RtlUnsupportedError) as e:
        pytest.skip(str(e))
