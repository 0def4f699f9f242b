"""What ``dcu run`` tells a user besides its result (docs/cli.md): progress lines in a log,
silenced by ``--quiet``, and one instruction-kind and counter vocabulary in the model's and
the RTL's reports."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

import dcu
from dcu import progress
from dcu.cli import main, report_json
from dcu.launch import RunReport
from dcu.backends.rtl import issued_by_group
from firmware_tests.manifest import HERE
from tests.asmutil import needs_llvm
from tests.test_cli_errors import SPIN, asm_kernel

SPINNER = "\ts_load_b64 s[4:5], s[0:1], 0x0\n\ts_wait_kmcnt 0\n" + SPIN


# ---- progress ---------------------------------------------------------------------------------
@pytest.fixture
def fast_progress(monkeypatch):
    """Progress from the first instruction, a log line every 0.1 s (instead of 2 s and 5 s)."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.1)
    monkeypatch.setattr(progress, "TTY_INTERVAL", 0.02)


@needs_llvm
def test_model_progress_is_written_as_lines_in_a_log(tmp_path, capsys, fast_progress):
    """stderr is not a terminal here: the count comes as whole lines (no carriage returns),
    each with the running wave's instructions against the limit, rising."""
    k = asm_kernel(tmp_path, SPINNER)
    rc = main(["run", str(k), "--grid", "1", "--block", "32", "--arg", "zeros:1:u32", "--max-instructions", "30000"])
    err = capsys.readouterr().err
    assert rc == 5 and "\r" not in err
    counts = [int(m.group(1).replace(",", "")) for m in re.finditer(r"^model: .*wave 0: ([\d,]+)/30,000", err, re.M)]
    assert len(counts) >= 2, err
    assert counts == sorted(counts) and counts[-1] > counts[0]
    assert err.splitlines()[-1].startswith("dcu run: timeout: instruction limit")


@needs_llvm
def test_quiet_silences_progress(tmp_path, capsys, fast_progress):
    k = asm_kernel(tmp_path, SPINNER)
    rc = main(["run", str(k), "--grid", "1", "--block", "32", "--arg", "zeros:1:u32", "--max-instructions", "30000",
               "--quiet"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 5 and len(err) == 1 and err[0].startswith("dcu run: timeout: instruction limit"), err


def test_phases_report_their_time():
    out = io.StringIO()
    p = progress.Progress(stream=out)
    p.phase("elaborating the DCU")
    p.phase("a quick step", slow=False)         # ends the first; too short to be reported
    p.close()
    assert re.fullmatch(r"dcu: elaborating the DCU \.\.\.\ndcu: elaborating the DCU: \d+\.\d s\n", out.getvalue())
    quiet = io.StringIO()
    p = progress.Progress(enabled=False, stream=quiet)
    p.phase("elaborating the DCU")
    p.count("rtl", "cycles", 100)
    p.update(50)
    p.close()
    assert quiet.getvalue() == ""


# ---- one vocabulary ---------------------------------------------------------------------------
def _rtl_counter_names(config: str = "tiny") -> list[str]:
    """The DCU's counter registers, by the names the RTL backends read them under."""
    from hdl.config import get_config
    from hdl.top.dcu import DCU
    return DCU(get_config(config)).perf_names


@needs_llvm
def test_model_and_rtl_reports_share_their_names():
    """The model's JSON report names its instruction kinds as the RTL's issue groups and its
    counters as the RTL's counters summed over units; only the wait counters are the model's
    own (``waitcnt.*``). An RTL report, from the DCU's own counter names, has the same kinds."""
    from hdl.layouts import ISSUE_GROUPS
    kern = dcu.load_program(f"{HERE}/lds_reduce.cl").kernel("lds_reduce")
    data = np.arange(512, dtype=np.uint32)
    run = dcu.launch(kern, grid=(2,), block=(256,), args=[data, np.zeros(2, np.uint32)], backend="model")
    assert list(run.buffers[1]) == [data[:256].sum(), data[256:].sum()]
    model = json.loads(json.dumps(report_json(run.report)))          # as --json writes it
    names = _rtl_counter_names()
    rtl_counters = {name: k + 1 for k, name in enumerate(names)}
    rtl = report_json(RunReport("lds_reduce", "rtl", "tiny", (2, 1, 1), (256, 1, 1), 0,
                                issued_by_group(rtl_counters), 1000, rtl_counters))

    assert list(model["instructions_by_kind"]) == list(rtl["instructions_by_kind"]) == list(ISSUE_GROUPS)
    assert sum(model["instructions_by_kind"].values()) == model["instructions"] == run.report.instructions
    assert model["instructions_by_kind"]["lds"] > 0 and model["instructions_by_kind"]["vmem"] > 0
    own = {k for k in model["counters"] if k.startswith("waitcnt.")}
    unknown = set(model["counters"]) - own - set(rtl["counters"])
    assert own and not unknown, unknown
    for name in ("dispatch.waves", "dispatch.workgroups", "vmem.instructions", "vmem.lines", "lds.accesses",
                 "lds.conflict_cycles", "simd.issued.valu"):
        assert name in model["counters"], name
    assert model["counters"]["dispatch.waves"] == 16 and model["counters"]["dispatch.workgroups"] == 2
    for g in ISSUE_GROUPS:                       # the issue counters and the kinds agree, per group
        assert model["counters"][f"simd.issued.{g}"] == model["instructions_by_kind"][g]
        assert rtl["counters"][f"simd.issued.{g}"] == rtl["instructions_by_kind"][g]
