"""The model's scalar f16 opcodes (sim.salu_f16) against numpy float16 goldens written from the
RDNA 4 ISA pseudocode: NaN, infinities, signed zeros, denormals, rounding ties, the min/max
number rules, the compares, the MODE's flushing and rounding, and bits 31:16 of the destination
(kept: the pseudocode assigns D0.f16 only)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.asmutil import needs_llvm
from tests.test_model_floatmode import run

pytestmark = needs_llvm

H16, F32 = np.float16, np.float32
QNAN, SNAN, PINF, NINF, NZERO = 0x7E00, 0x7C01, 0x7C00, 0xFC00, 0x8000
ONE, MAXH, DEN1, MINN = 0x3C00, 0x7BFF, 0x0001, 0x0400
HIGH = 0xABCD_0000                 # s0's high half before each instruction


def h(x: float) -> int:
    return int(np.array(x, H16).view(np.uint16))


def val(b: int) -> float:
    return float(np.array(b & 0xFFFF, np.uint16).view(H16))


def is_nan(b: int) -> bool:
    return (b & 0x7FFF) > 0x7C00


def nan_or(r: float, *srcs: int) -> int:
    """The result's bits; a NaN result is the first NaN source quieted, else 0xFE00."""
    if not np.isnan(r):
        return h(r)
    return next((s | 0x200 for s in srcs if is_nan(s)), 0xFE00)


def arith(op: str, a: int, b: int) -> int:
    with np.errstate(all="ignore"):
        x, y = np.float64(val(a)), np.float64(val(b))
        r = {"add": x + y, "sub": x - y, "mul": x * y}[op]      # exact in float64
        return nan_or(float(np.float16(r)), a, b)


def minmax_num(op: str, a: int, b: int) -> int:
    """s_min_num/s_max_num: a NaN operand yields the other (unquieted); two NaNs quiet S0;
    -0 < +0."""
    if is_nan(a) and is_nan(b):
        return a | 0x200
    if is_nan(a) or is_nan(b):
        return b if is_nan(a) else a
    less = val(a) < val(b) or (val(a) == val(b) == 0 and a & 0x8000 and not b & 0x8000)
    more = val(a) > val(b) or (val(a) == val(b) == 0 and b & 0x8000 and not a & 0x8000)
    return a if (less if op == "min" else more) else b


def minmax_imum(op: str, a: int, b: int) -> int:
    """s_minimum/s_maximum: a signalling NaN (S0 first) quieted, else a quiet NaN as it is."""
    for s in (a, b):
        if is_nan(s) and not s & 0x200:
            return s | 0x200
    for s in (a, b):
        if is_nan(s):
            return s
    return minmax_num(op, a, b)


def sop2(name: str, a: int, b: int, d: int = HIGH, pre: str = "") -> int:
    w = run(f"{pre}\n{name} s0, s1, s2", s={0: d, 1: a, 2: b})
    return w.s[0]


CASES = [(ONE, ONE), (ONE, 0x1000), (0x3C01, 0x1000), (MAXH, 0x4C00), (MAXH, MAXH),
         (DEN1, DEN1), (MINN, 0x3800), (NZERO, NZERO), (NZERO, 0), (0, NZERO), (ONE, 0xBC00),
         (PINF, NINF), (PINF, 0), (QNAN, ONE), (ONE, SNAN), (SNAN, QNAN | 0x8000), (NINF, 0x4200),
         (0x3555, 0xB555), (0x0200, 0x8200), (0x8001, 0x0001), (0x5BFF, 0x3C00)]


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_add_sub_mul(op):
    got = [sop2(f"s_{op}_f16", a, b) for a, b in CASES]
    want = [HIGH | arith(op, a, b) for a, b in CASES]
    assert [hex(x) for x in got] == [hex(x) for x in want]


@pytest.mark.parametrize("name", ["s_min_num_f16", "s_max_num_f16", "s_minimum_f16", "s_maximum_f16"])
def test_min_max(name):
    kind = "min" if "min" in name else "max"
    ref = minmax_num if "_num_" in name else minmax_imum
    got = [sop2(name, a, b) for a, b in CASES]
    assert [hex(x) for x in got] == [hex(HIGH | ref(kind, a, b)) for a, b in CASES]
    assert sop2(name, SNAN, ONE) == HIGH | (ONE if "_num_" in name else 0x7E01)


def test_fmac_rounds_once():
    """(1 + 2^-10)^2 - (1 + 2^-9) = 2^-20, a denormal; rounding the product first gives 0."""
    assert sop2("s_fmac_f16", 0x3C01, 0x3C01, d=HIGH | 0xBC02) == HIGH | 0x0010
    assert sop2("s_mul_f16", 0x3C01, 0x3C01) == HIGH | 0x3C02
    # the addend is D0's low half; a tie rounds to even
    assert sop2("s_fmac_f16", ONE, 0x1000, d=0x1234_3C00) == 0x1234_3C00
    assert sop2("s_fmac_f16", PINF, 0, d=HIGH | ONE) == HIGH | 0xFE00


def sop1(name: str, x: int, d: int = HIGH) -> int:
    return run(f"{name} s0, s1", s={0: d, 1: x}).s[0]


def f32b(x: float) -> int:
    return int(np.array(x, F32).view(np.uint32))


def test_conversions():
    third = f32b(1 / 3)
    assert sop1("s_cvt_f16_f32", third) == HIGH | h(np.float16(np.float32(1 / 3)))
    assert sop1("s_cvt_f16_f32", f32b(65520.0)) == HIGH | PINF          # tie to even: inf
    assert sop1("s_cvt_f16_f32", f32b(65519.0)) == HIGH | MAXH
    assert sop1("s_cvt_f16_f32", f32b(2.0 ** -25)) == HIGH | 0             # tie below 2^-24
    assert sop1("s_cvt_f16_f32", f32b(3 * 2.0 ** -25)) == HIGH | 0x0002
    assert sop1("s_cvt_f16_f32", 0xFF80_0001) == HIGH | 0xFE00           # NaN quieted
    assert sop1("s_cvt_f16_f32", 0x8000_0000) == HIGH | NZERO
    assert sop1("s_cvt_f32_f16", 0xFFFF_0000 | DEN1) == f32b(2.0 ** -24)  # the high half unused
    assert sop1("s_cvt_f32_f16", NZERO) == 0x8000_0000
    assert sop1("s_cvt_f32_f16", SNAN) == 0x7FC0_2000
    assert sop1("s_cvt_f32_f16", NINF) == 0xFF80_0000
    assert sop1("s_cvt_hi_f32_f16", 0xC500_3C00) == f32b(-5.0)
    a, b = f32b(1 / 3), f32b(-70000.0)
    rtz = lambda x: h(np.float16(x)) - (abs(float(np.float16(x))) > abs(x))     # toward zero
    assert run("s_cvt_pk_rtz_f16_f32 s0, s1, s2", s={1: a, 2: b}).s[0] == rtz(1 / 3) | (0x8000 | MAXH) << 16


@pytest.mark.parametrize("name,fn", [("s_ceil_f16", np.ceil), ("s_floor_f16", np.floor),
                                     ("s_trunc_f16", np.trunc), ("s_rndne_f16", np.rint)])
def test_rounding_to_integers(name, fn):
    xs = [h(2.5), h(3.5), h(-2.5), h(-0.75), h(0.75), h(1000.5), DEN1, 0x8001, NZERO, PINF, NINF,
          h(-1.5), MAXH]
    want = [HIGH | h(fn(val(x))) for x in xs]
    assert [hex(sop1(name, x)) for x in xs] == [hex(x) for x in want]
    assert sop1(name, SNAN) == HIGH | 0x7E01


_CMP = {"lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b, "lg": lambda a, b: a < b or a > b, "ge": lambda a, b: a >= b,
        "o": lambda a, b: not (np.isnan(a) or np.isnan(b)), "u": lambda a, b: np.isnan(a) or np.isnan(b)}
_CMP.update({"n" + k: (lambda f: lambda a, b: not f(a, b))(_CMP[k]) for k in ("ge", "lg", "gt", "le", "lt")})
_CMP["neq"] = lambda a, b: not a == b


@pytest.mark.parametrize("cond", sorted(_CMP))
def test_compares(cond):
    pairs = [(ONE, 0x4000), (0x4000, ONE), (ONE, ONE), (NZERO, 0), (QNAN, ONE), (ONE, SNAN),
             (PINF, PINF), (NINF, MAXH), (DEN1, 0)]
    got = [run(f"s_cmp_{cond}_f16 s1, s2", s={1: HIGH | a, 2: b}).scc for a, b in pairs]
    assert got == [int(_CMP[cond](val(a), val(b))) for a, b in pairs]


def test_constants_are_f16_patterns():
    """An inline float constant on an f16 source is its f16 value; a literal gives its low half."""
    assert run("s_add_f16 s0, s1, 1.0", s={0: HIGH, 1: h(2.0)}).s[0] == HIGH | h(3.0)
    assert run("s_mul_f16 s0, 0x4200, s1", s={0: 0, 1: h(-2.0)}).s[0] == h(-6.0)
    assert run("s_cvt_f32_f16 s0, -2.0").s[0] == f32b(-2.0)
    assert run("s_cmp_gt_f16 s1, 0.5", s={1: h(0.75)}).scc == 1


def test_mode_flushes_and_rounds():
    # FP_DENORM f16/f64 = 0: denormal sources read as zero, denormal results flushed
    flush = "s_denorm_mode 3"
    assert sop2("s_add_f16", DEN1, DEN1, pre=flush) == HIGH | 0
    assert sop2("s_mul_f16", MINN, 0x3800, pre=flush) == HIGH | 0
    assert sop2("s_max_num_f16", 0x8001, 0, pre=flush) == HIGH | 0
    assert sop2("s_add_f16", DEN1, DEN1) == HIGH | 0x0002
    # FP_ROUND f16/f64 toward +inf / -inf / zero: 1 + 2^-24 and -1 - 2^-24
    for mode, up, down in ((1 << 2, 0x3C01, 0xBC00), (2 << 2, ONE, 0xBC01), (3 << 2, ONE, 0xBC00)):
        assert sop2("s_add_f16", ONE, DEN1, pre=f"s_round_mode {mode}") == HIGH | up
        assert sop2("s_sub_f16", 0xBC00, DEN1, pre=f"s_round_mode {mode}") == HIGH | down
    # -0 from an exact zero sum toward -inf
    assert sop2("s_add_f16", ONE, 0xBC00, pre="s_round_mode 8") == HIGH | NZERO
    assert run("s_round_mode 4\ns_cvt_f16_f32 s0, s1", s={1: f32b(1 / 3)}).s[0] == 0x3556
