"""``dcu bench``'s driver (dcu/bench/__init__.py): where results go, without running a real
benchmark; and the environment setting ``sim-instructions`` builds under."""
from __future__ import annotations

import json
import os

import pytest

import dcu.bench as bench
from dcu.bench.simspeed import setenv
from dcu.errors import UsageError


def test_results_and_other_files_go_to_out_dir(tmp_path, monkeypatch):
    seen = {}

    def fake(config: str = "default", out_dir=None) -> dict:
        seen["out_dir"] = out_dir
        (out_dir / "plot.png").write_bytes(b"png")
        return {"benchmark": "fake", "rows": [{"config": config}]}
    monkeypatch.setattr(bench, "benchmark", lambda name: fake)
    summary = bench.ROOT / "bench" / "RESULTS.md"
    before = summary.stat().st_mtime_ns if summary.exists() else None
    result = bench.run("ooo", str(tmp_path / "copy.json"), out_dir=tmp_path, config="tiny", backend=None)
    assert seen["out_dir"] == tmp_path and (tmp_path / "plot.png").exists()
    assert json.loads((tmp_path / "ooo-tiny.json").read_text())["rows"] == [{"config": "tiny"}]
    assert json.loads((tmp_path / "copy.json").read_text()) == result
    assert (summary.stat().st_mtime_ns if summary.exists() else None) == before    # not bench/results


def test_unknown_benchmark_and_option(monkeypatch):
    with pytest.raises(UsageError, match="unknown benchmark 'nope'"):
        bench.run("nope")
    monkeypatch.setattr(bench, "benchmark", lambda name: lambda config="x": {})
    with pytest.raises(UsageError, match="takes no option backend"):
        bench.run("kernels", backend="rtl")


def test_every_benchmark_resolves():
    for name in bench.BENCHMARKS:
        assert callable(bench.benchmark(name)), name


@pytest.mark.parametrize("old", [None, "znver4"])
def test_environ_sets_then_restores(monkeypatch, old):
    if old is None:
        monkeypatch.delenv("DCU_VERILATOR_MARCH", raising=False)
    else:
        monkeypatch.setenv("DCU_VERILATOR_MARCH", old)
    with pytest.raises(RuntimeError):
        with setenv("DCU_VERILATOR_MARCH", "x86-64-v3"):
            assert os.environ["DCU_VERILATOR_MARCH"] == "x86-64-v3"
            raise RuntimeError("restored on the way out too")
    assert os.environ.get("DCU_VERILATOR_MARCH") == old
