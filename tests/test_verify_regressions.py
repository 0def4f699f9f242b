"""Shrunk random programs that once made the RTL differ from the model (``dcu verify
--shrink``), each rerun on the RTL against the model with the memory timing that exposed it.

- 101031, 101168, 101386: a wave's ``s_swappc_b64`` wrote its return address in the cycle
  another wave's VALU instruction wrote an SGPR result (``v_cmp_*_e64 sN``,
  ``v_readfirstlane_b32``) through the banked register file's one SGPR write port; the VALU
  result was lost.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import dcu.backends.verilator as vl
from dcu.launch import launch, load_program
from dcu.verify.run import MEMORY

HERE = Path(__file__).parent / "verify_regressions"
CASES = sorted(int(p.stem.split("_")[1]) for p in HERE.glob("verify_*.s"))


def _case(seed: int):
    """The kernel, grid, block and input buffers of reproducer ``seed`` (from its header)."""
    path = HERE / f"verify_{seed}.s"
    cmd = re.search(r"dcu run \S+ --grid (\d+) --block (\d+) --arg zeros:(\d+):u32", path.read_text())
    grid, block, words = map(int, cmd.groups())
    inputs = [np.zeros(words, np.uint32), np.load(HERE / f"verify_{seed}_data.npy"),
              np.load(HERE / f"verify_{seed}_const.npy")]
    return load_program(path).kernel("verify"), grid, block, inputs


def _compare(seed: int, backend: str):
    kernel, grid, block, inputs = _case(seed)
    want = launch(kernel, grid, block, [a.copy() for a in inputs], backend="model").buffers
    got = launch(kernel, grid, block, [a.copy() for a in inputs], backend=backend, config="fpga",
                 seed=seed, progress=False, **MEMORY).buffers
    for k in (0, 1):
        bad = np.flatnonzero(want[k] != got[k])
        assert not len(bad), f"seed {seed}, buffer {k}: {len(bad)} dwords differ, first at {bad[0]}"


def test_the_regression_set_is_here():
    assert CASES == [101031, 101168, 101386]


@pytest.mark.skipif(not vl.available(), reason=vl.INSTALL_HINT)
@pytest.mark.xdist_group("verilator")
@pytest.mark.parametrize("seed", CASES)
def test_reproducer_matches_the_model_on_verilator(seed):
    _compare(seed, "verilator")


def test_swappc_beside_a_valu_sgpr_write_on_rtl():
    """The case that shows the lost write in Amaranth's simulator too (about 75 s)."""
    _compare(101386, "rtl")
