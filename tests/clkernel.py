"""Compile a self-contained OpenCL C test kernel with stock clang-19 and extra options, and
run it on the model. The kernel uses clang builtins only (no device header or library), so
the code under test is exactly what clang emits for it."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from dcu import toolchain

BASE_FLAGS = ("-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1200",
              "-O2", "-nogpulib", "-mcumode")
# the global work-item index of a 1-D launch, from clang builtins
GID = "(__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())"


def build(source: str, options=()) -> Path:
    """The linked code object of ``source`` (the kernel text), compiled with ``options``."""
    try:
        clang = toolchain.find_tool("clang")
    except toolchain.ToolNotFoundError as e:
        pytest.skip(str(e))
    with tempfile.TemporaryDirectory(prefix="dcu-test-cl-") as td:
        src, obj = Path(td) / "k.cl", Path(td) / "k.o"
        src.write_text(source.replace("GID", GID))
        p = subprocess.run([clang, *BASE_FLAGS, *options, "-c", str(src), "-o", str(obj)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return toolchain.link(obj)


def disassembly(path: Path) -> str:
    return toolchain.objdump(path)


def run(path: Path, name: str, n: int, args, block: int = 32) -> list:
    """Launch kernel ``name`` over ``n`` work-items on the model; the buffers read back."""
    import dcu
    from dcu.codeobj import CodeObject
    kernel = CodeObject(path).kernel(name)
    assert n % block == 0
    return dcu.launch(kernel, n // block, block, args).buffers


def f32(bits) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)
