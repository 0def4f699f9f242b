"""Assemble gfx1200 snippets with llvm-mc-19 for tests that drive the model directly."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

LLVM_MC = shutil.which("llvm-mc-19")
OBJCOPY = shutil.which("llvm-objcopy-19")
needs_llvm = pytest.mark.skipif(LLVM_MC is None, reason="llvm-mc-19 missing: apt-get install -y llvm-19")


def assemble(text: str) -> bytes:
    """Raw machine code of ``text`` (labels and branches resolved), placed at address 0."""
    with tempfile.TemporaryDirectory() as tmp:
        src, obj, raw = Path(tmp, "a.s"), Path(tmp, "a.o"), Path(tmp, "a.bin")
        src.write_text(".text\n" + text + "\n")
        subprocess.run([LLVM_MC, "-arch=amdgcn", "-mcpu=gfx1200", "-filetype=obj", str(src), "-o", str(obj)],
                       check=True, capture_output=True, text=True)
        subprocess.run([OBJCOPY, "-O", "binary", "--only-section=.text", str(obj), str(raw)],
                       check=True, capture_output=True, text=True)
        return raw.read_bytes()
