"""The repository's Python passes ``ruff check`` under pyproject.toml's configuration."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_check_is_clean():
    found = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True, text=True)
    assert found.returncode == 0, ("ruff is missing: bash scripts/setup.sh installs it "
                                   "(the `test` extra of pyproject.toml)")
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
