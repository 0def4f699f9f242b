"""Verilog conversion plus Verilator lint, shared by the RTL unit tests."""
from __future__ import annotations

import shutil
import subprocess

import pytest
from amaranth.back import verilog

LINT_FLAGS = ("--lint-only", "-Wno-CASEINCOMPLETE", "-Wno-WIDTH")


def convert_and_lint(component, name: str, tmp_path, extra_flags=()) -> str:
    """Convert ``component`` to Verilog, write it under ``tmp_path`` and require a clean
    ``verilator --lint-only``; returns the Verilog text. Skips if Verilator is missing."""
    text = verilog.convert(component, name=name, emit_src=False)
    path = tmp_path / f"{name}.v"
    path.write_text(text)
    tool = shutil.which("verilator")
    if tool is None:
        pytest.skip("verilator not found: apt-get install -y verilator")
    r = subprocess.run([tool, *LINT_FLAGS, *extra_flags, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return text


def lint_text(text: str, path, extra_flags=("-Wno-LATCH",)) -> None:
    """Write Verilog ``text`` (e.g. the compiled model's, whose sunk temporaries Verilator
    calls latches) to ``path`` and require a clean ``verilator --lint-only``. Verilator is
    installed by scripts/setup.sh, so its absence fails rather than passing unseen."""
    tool = shutil.which("verilator")
    assert tool, "verilator not found: apt-get install -y verilator (scripts/setup.sh does)"
    path.write_text(text)
    r = subprocess.run([tool, *LINT_FLAGS, *extra_flags, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
