"""Smoke tests of the memory-system benchmarks of ``dcu bench`` (dcu/bench/memory.py and
dcu/bench/ooo.py) at tiny sizes.

The benchmarks drive the units in Amaranth's simulator, so their cycle figures are exact and
checked here; nothing is timed. The functions are called directly: bench/results is not
written.
"""
from __future__ import annotations

import pytest

from dcu.bench import memory, ooo


def test_lds_stride_small():
    r = memory.lds_stride(strides=[0, 1, 2, 3, 8, 32, 64], per_stride=2, stream=8)
    by = {row["stride_dwords"]: row for row in r["rows"]}
    for s, row in by.items():               # the bench itself fails if the counters disagree
        assert row["bank_cycles_per_access"] == row["model_cycles"] == (1 if s == 0 else min(s & -s, 32))
        assert row["issue_interval"] == row["model_cycles"]
    assert by[1]["latency"] == 4 and by[32]["latency"] == 35
    assert r["bandwidth_bytes_per_cycle_per_half"] == 128.0 and r["met"]


def test_coalescing_small():
    r = memory.coalescing(per_pattern=3, stream=8)
    by = {row["pattern"]: row for row in r["rows"]}
    for name, lines in (("unit stride", 1), ("unit stride, +64 B", 2), ("stride 2", 2), ("stride 4", 4),
                        ("stride 8", 8), ("stride 32", 32)):
        assert by[name]["lines_per_instruction"] == by[name]["model_lines_touched"] == lines
        assert by[name]["hit_cycles_per_instruction"] == lines
    assert by["random"]["lines_per_instruction"] == by["random"]["model_lines_touched"]
    assert r["hit_bandwidth_bytes_per_cycle"] == 128.0 and r["met"]


def test_latency_small():
    r = memory.latency(samples=1)
    rows = {row["access"]: row for row in r["rows"]}
    assert rows["ds_load_b32, conflict-free"]["cycles_min"] == 4
    assert rows["global_load_b32, L0 hit, 1 line"]["cycles_min"] == 5
    assert rows["global_load_b32, L0 miss, 1 line"]["cycles_min"] == 3 + r["memory_latency"] + 5
    for row in r["rows"]:
        if row["documented"] is not None:
            assert row["cycles_min"] == row["cycles_max"] == row["documented"], row


@pytest.mark.slow
def test_ooo_small():
    """Two DCU simulators (about 40 s each to build), K = 3."""
    r = ooo.ooo(tests=("wave_xy_asm",), K=3, cap_alone=8, png=False)
    rows = {row["return_order"]: row for row in r["rows"]}
    assert rows["in_order"]["x_accesses"] < rows["per_wave"]["x_accesses"]
    assert rows["per_wave"]["x_rate_vs_alone"] >= 0.9
