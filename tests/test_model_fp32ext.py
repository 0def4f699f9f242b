"""FP32 VALU opcodes of sim/fp32ext.py and sim/valu_ext.py run through llvm-mc, the decoder
and the model's handlers: v_sin/v_cos, the rounding conversions, v_frexp_*, DX9 multiply,
the three-operand min/max forms, the scalar-destination transcendentals v_s_*_f32 and the
MODE instructions. Goldens are exact (fractions, decimal series) or plain Python."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from sim import fp32 as F
from tests import laneops
from tests.asmutil import needs_llvm
from tests.fpexact import sin_turns, to_bits, value
from tests.fpgolden import ieee_max_num, ieee_maximum, ieee_min_num, ieee_minimum

pytestmark = needs_llvm
U32 = np.uint32
SEED = 20250702
LANES = 32
QNAN = 0x0040_0000


def _floats(rng, n, lo=-300.0, hi=300.0):
    return np.concatenate([rng.uniform(lo, hi, n // 2), rng.uniform(-2, 2, n // 2)]).astype(np.float32).view(U32)


def _one(op: str, srcs: list, *, width=1, tail="", sdst=False) -> list[int]:
    """Results of ``op v40, v0[, v1, v2]`` for the lane values in ``srcs`` (lists of bits)."""
    out = []
    n = len(srcs[0])
    for k in range(0, n, LANES):
        regs = {i: np.resize(np.array(x[k:k + LANES], np.uint64), LANES) for i, x in enumerate(srcs)}
        names = ", ".join(f"v{i}" for i in range(len(srcs)))
        w = laneops.run(f"{op} v40, {names}{tail}", v=regs)
        out += [int(x) for x in w.v[40][: min(LANES, n - k)]]
    return out


@pytest.mark.parametrize("op", ["v_sin_f32", "v_cos_f32"])
def test_sin_cos_turns(op):
    """sin/cos(2 pi x), x in turns: the correctly rounded value for random x in [-300, 300]
    and [-2, 2], tiny x, and exact values at quarter turns (sinPi/cosPi zero signs)."""
    want_cos = op == "v_cos_f32"
    rng = np.random.default_rng(SEED)
    xs = list(_floats(rng, 256)) + [0x3E80_0000, 0x3F00_0000, 0xBE80_0000, 0x3F40_0000,  # 1/4 1/2 -1/4 3/4
                                    0x4040_0000, 0xC040_0000, 0x0000_0001, 0x8000_0100, 0x3000_0000,
                                    0, 0x8000_0000, 0x4B00_0001]
    got = _one(op + "_e32", [xs])
    for x, g in zip(xs, got):
        denormal = int(x) & 0x7F80_0000 == 0
        v = 0 if denormal else value(int(x))         # the transcendental unit reads a denormal as 0
        exact = sin_turns(v, want_cos)
        want = to_bits(exact) if abs(exact) > Fraction(1, 10 ** 50) else 0
        if want == 0 and not want_cos:
            want = int(x) & 0x8000_0000
        assert g == want, f"{op}(0x{int(x):08x}) = 0x{g:08x}, want 0x{want:08x}"


def test_sin_cos_specials():
    got = _one("v_sin_f32_e32", [[0x7F80_0000, 0xFF80_0000, 0x7F80_0001, 0xFFC0_0002]])
    assert got == [F.DEFAULT_NAN, F.DEFAULT_NAN, 0x7FC0_0001, 0xFFC0_0002]


def _cvt_golden(bits: int, nearest: bool) -> int:
    """f32_to_i32(floor(S0 [+ 0.5F, rounded to float32])) with int32 saturation, NaN -> 0."""
    if (bits & 0x7FFF_FFFF) > 0x7F80_0000:
        return 0
    if (bits & 0x7FFF_FFFF) == 0x7F80_0000:
        r = -(1 << 31) if bits >> 31 else (1 << 31) - 1
        return r & 0xFFFF_FFFF
    v = value(bits)
    if nearest:
        s = to_bits(v + Fraction(1, 2))
        v = value(s) if (s & 0x7FFF_FFFF) != 0x7F80_0000 else Fraction(2) ** 200
    r = max(-(1 << 31), min((1 << 31) - 1, math.floor(v)))
    return r & 0xFFFF_FFFF


@pytest.mark.parametrize("op", ["v_cvt_nearest_i32_f32", "v_cvt_floor_i32_f32"])
def test_rounding_conversions(op):
    nearest = "nearest" in op
    rng = np.random.default_rng(SEED + 1)
    xs = list(_floats(rng, 192, -1e3, 1e3)) + [0x3EFF_FFFF, 0xBEFF_FFFF, 0x3F00_0000, 0xBF00_0000,
                                               0x3FC0_0000, 0xBFC0_0000, 0x4F00_0000, 0xCF00_0001,
                                               0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x4B7F_FFFF]
    got = _one(op + "_e32", [xs])
    want = [_cvt_golden(int(x), nearest) for x in xs]
    assert got == want


def test_frexp():
    """v_frexp_mant_f32 in [0.5, 1) with the sign, v_frexp_exp_i32_f32 the matching exponent
    (denormals normalised); +-0/inf/NaN: mant returns the input (NaN quieted), exp 0."""
    rng = np.random.default_rng(SEED + 2)
    xs = [int(x) for x in rng.integers(0, 1 << 32, 160, dtype=np.uint64)] + \
         [0, 0x8000_0000, 1, 0x807F_FFFF, 0x7F80_0000, 0x7F80_0005, 0x3F80_0000]
    mant = _one("v_frexp_mant_f32_e32", [xs])
    expo = _one("v_frexp_exp_i32_f32_e32", [xs])
    for x, m, e in zip(xs, mant, expo):
        mag = x & 0x7FFF_FFFF
        if mag == 0 or mag >= 0x7F80_0000:
            assert m == (x | QNAN if mag > 0x7F80_0000 else x) and e == 0, hex(x)
            continue
        v = value(x)
        assert Fraction(1, 2) <= abs(value(m)) < 1 and (m >> 31) == (x >> 31), hex(x)
        ei = e - (1 << 32) if e >> 31 else e
        assert value(m) * Fraction(2) ** ei == v, hex(x)


def test_mul_dx9_zero():
    """0 times anything (NaN, inf) is +0; otherwise an ordinary multiply."""
    a = [0, 0x8000_0000, 0x7FC0_0000, 0x7F80_0000, 0x4000_0000, 0x0000_0001, 0xC040_0000]
    b = [0x7FC0_0000, 0xFF80_0000, 0, 0x8000_0000, 0x4040_0000, 0x3F00_0000, 0x7F7F_FFFF]
    got = _one("v_mul_dx9_zero_f32_e32", [a, b])
    assert got[:4] == [0, 0, 0, 0]
    assert got[4:] == [0x40C0_0000, 0x0000_0000, 0xFF80_0000]   # 6; tie to even -> 0; overflow


@pytest.mark.parametrize("op, golden", [
    ("v_minimum3_f32", lambda a, b, c: ieee_minimum(ieee_minimum(a, b), c)),
    ("v_maximum3_f32", lambda a, b, c: ieee_maximum(ieee_maximum(a, b), c)),
    ("v_minmax_num_f32", lambda a, b, c: ieee_max_num(ieee_min_num(a, b), c)),
    ("v_maxmin_num_f32", lambda a, b, c: ieee_min_num(ieee_max_num(a, b), c)),
])
def test_three_operand_min_max(op, golden):
    rng = np.random.default_rng(SEED + 3)
    pool = np.array([0, 0x8000_0000, 0x3F80_0000, 0xBF80_0000, 0x7F80_0000, 0xFF80_0000,
                     0x7FC0_0001, 0xFFA0_0002, 0x0000_0001, 0x4000_0000], U32)
    srcs = [[int(x) for x in rng.choice(pool, 320)] for _ in range(3)]
    got = _one(op, srcs)
    want = [golden(a, b, c) for a, b, c in zip(*srcs)]
    assert [hex(x) for x in got] == [hex(x) for x in want]


@pytest.mark.parametrize("op, fn", [("v_s_exp_f32", F.exp), ("v_s_log_f32", F.log),
                                    ("v_s_rcp_f32", F.rcp), ("v_s_rsq_f32", F.rsq),
                                    ("v_s_sqrt_f32", F.sqrt)])
def test_scalar_transcendentals(op, fn):
    """v_s_*_f32 s5, src: the vector form's result for that one value, with neg/abs, clamp and
    omod; written with EXEC = 0 too; an inline constant or literal source."""
    rng = np.random.default_rng(SEED + 4)
    for x in [int(v) for v in _floats(rng, 8, -20, 20)] + [0x3F80_0000, 0, 0x7F80_0000, 0x0000_0010]:
        w = laneops.run(f"{op} s5, s3\n{op} s6, -|s3| clamp\n{op} s7, s3 mul:2", s={3: x}, exec_mask=0)
        xs = np.array([x], U32)
        assert w.s[5] == int(fn(xs)[0]), (op, hex(x))
        assert w.s[6] == int(F.clamp01(fn(xs | U32(0x8000_0000)))[0]), (op, hex(x))
        assert w.s[7] == int(F.mul(fn(xs), U32(0x4000_0000))[0]), (op, hex(x))
    w = laneops.run(f"{op} s5, 4.0\n{op} s6, 0x41200000")
    assert w.s[5] == int(fn(np.array([0x4080_0000], U32))[0])
    assert w.s[6] == int(fn(np.array([0x4120_0000], U32))[0])


def test_mode_instructions():
    """s_round_mode / s_denorm_mode write MODE (tests/test_model_floatmode.py checks their
    effect); s_code_end is a no-op."""
    w = laneops.run("s_round_mode 0x3\ns_denorm_mode 0xc\ns_code_end")
    assert w.mode == 0xC3
