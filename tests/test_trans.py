"""hdl/simd/trans.py, the transcendental unit's definitions: the ROM tables and coefficients it
generates from their defining formulas equal the literals of sim/fp32.py (the unit's
bit-exactness: tests/test_transseq.py)."""
from __future__ import annotations

from hdl.simd import trans
from sim import fp32 as F


def test_tables_equal_model():
    assert trans.RCP_T0 == F.RCP_T0
    assert trans.RSQ_T0 == F.RSQ_T0
    assert trans.EXP2_T == F.EXP2_T
    assert trans.EXP2_C == (F.EXP2_C1, F.EXP2_C2, F.EXP2_C3)
    assert trans.LOG2_C == F.LOG2_C
    assert trans.LOG2_L == F.LOG2_L
    assert trans.LOG2_P == (F.LOG2_P0, F.LOG2_P1, F.LOG2_P2, F.LOG2_P3)
