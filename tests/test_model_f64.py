"""FP64 on the model (sim/fp64.py, sim/valu64.py).

Goldens are independent of the model's methods: numpy float64 (IEEE binary64) for add, mul,
sqrt, rcp, the rounding functions, the conversions and the compares; exact rationals
(fractions.Fraction, whose float() rounds correctly) for fma, ldexp and rsq; fdlibm's table of
2/pi for v_trig_preop_f64. The division and square-root sequences clang-19 emits must give
numpy's correctly rounded results, and OpenCL C kernels using double, long and ulong,
compiled by stock clang-19 and run through the launch API, must match numpy bit for bit.
"""
from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np

import isa
from sim import execute
from sim import fp64 as D
from sim.wave import EXEC, VCC, Wave
from tests.asmutil import assemble, needs_llvm

U32, U64, I64 = np.uint32, np.uint64, np.int64
SEED = 20250720
NEG = U64(1 << 63)
ONE, HALF = U64(0x3FF0_0000_0000_0000), U64(0x3FE0_0000_0000_0000)
QNAN = U64(0x7FF8_0000_0000_0000)
DNAN = U64(D.DEFAULT_NAN)
INF = U64(0x7FF0_0000_0000_0000)
SPECIALS = np.array([0, 1 << 63, 1, (1 << 63) | 1, (1 << 52) - 1, 1 << 52, 0x7FEF_FFFF_FFFF_FFFF,
                     0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x7FF8_0000_0000_0000,
                     0x7FF4_0000_0000_0001, 0xFFF8_0000_0000_1234, 0x3FF0_0000_0000_0000,
                     0x3FEF_FFFF_FFFF_FFFF, 0x3FF0_0000_0000_0001, 0x4008_0000_0000_0000,
                     0xBFE0_0000_0000_0000, 0x4330_0000_0000_0000, 0x4330_0000_0000_0001], U64)


def operands(rng: np.random.Generator, n: int) -> np.ndarray:
    """binary64 patterns of every class: random bits, exponents near both ends of the range,
    mid-range, short significands (exact results and ties) and the specials."""
    def parts(lo, hi, k, mant_bits=52):
        e = rng.integers(lo, hi + 1, k).astype(U64)
        m = rng.integers(0, 1 << mant_bits, k, dtype=np.uint64) << U64(52 - mant_bits)
        return (rng.integers(0, 2, k).astype(U64) << U64(63)) | (e << U64(52)) | m
    k = n // 8
    out = np.concatenate([rng.integers(0, 1 << 64, k, dtype=np.uint64), parts(0, 3, k),
                          parts(0, 60, k), parts(1900, 2046, k), parts(900, 1150, k),
                          parts(0, 2046, k, 3), parts(1, 100, k, 2), parts(1950, 2046, k, 2)])
    out = np.concatenate([out, rng.choice(SPECIALS, n - out.size)])
    return out[rng.permutation(out.size)]


def is_nan(x) -> np.ndarray:
    return (np.asarray(x, U64) & U64(0x7FFF_FFFF_FFFF_FFFF)) > INF


def nan_rule(result, *srcs) -> np.ndarray:
    """The NaN rules on an IEEE result: the first NaN operand quieted, else the default NaN."""
    r = np.where(is_nan(result), DNAN, np.asarray(result, U64))
    for s in reversed(srcs):
        r = np.where(is_nan(s), np.asarray(s, U64) | U64(D.QUIET_BIT), r)
    return r.astype(U64)


def f64(bits) -> np.ndarray:
    return np.asarray(bits, U64).view(np.float64)


def bits(values) -> np.ndarray:
    return np.asarray(values, np.float64).view(U64)


def mismatches(got, want, *ins) -> list[str]:
    bad = np.nonzero(np.asarray(got) != np.asarray(want))[0]
    return [" ".join(f"{int(x[i]):#x}" for x in ins) + f": got {int(got[i]):#x}, want {int(want[i]):#x}"
            for i in bad[:20]]


def rational(b: int) -> Fraction:
    return Fraction(float(np.uint64(b).view(np.float64)))


def rounded(q: Fraction, neg_zero: bool = False) -> int:
    """binary64 bits of the rational q rounded to nearest even (float(Fraction) rounds
    correctly, with gradual underflow); overflow gives inf."""
    try:
        v = float(q)
    except OverflowError:
        v = math.inf if q > 0 else -math.inf
    if v == 0 and (q < 0 or (q == 0 and neg_zero)):
        v = -0.0
    return int(np.float64(v).view(U64))


# ----------------------------------------------------------------------------- arithmetic

def test_add_mul_are_ieee():
    rng = np.random.default_rng(SEED)
    a, b = operands(rng, 20000), operands(rng, 20000)
    with np.errstate(all="ignore"):
        for fn, ref in ((D.add, np.add), (D.mul, np.multiply)):
            want = nan_rule(bits(ref(f64(a), f64(b))), a, b)
            assert not mismatches(fn(a, b), want, a, b), fn.__name__


def test_fma_rounds_once():
    """fma against exact rationals: cancellation, products far above or below the addend,
    denormal and overflowing results, exact zeros (-0 only for (-0) + (-0))."""
    rng = np.random.default_rng(SEED + 1)
    n = 3000
    a, b = operands(rng, n), operands(rng, n)
    with np.errstate(all="ignore"):
        near = bits(-(f64(a) * f64(b)) * (1 + rng.uniform(-1e-12, 1e-12, n)))   # cancels most bits
    c = np.where(rng.random(n) < 0.5, near, operands(rng, n))
    got = D.fma(a, b, c)
    finite = ~(is_nan(a) | is_nan(b) | is_nan(c)) & np.isfinite(f64(a)) & np.isfinite(f64(b)) \
        & np.isfinite(f64(c))
    want = []
    for x, y, z, fin in zip(a.tolist(), b.tolist(), c.tolist(), finite):
        if not fin:
            want.append(None)
            continue
        q = rational(x) * rational(y) + rational(z)
        p_neg = (x >> 63) != (y >> 63)
        both_zero = rational(x) * rational(y) == 0 and rational(z) == 0
        want.append(rounded(q, neg_zero=both_zero and p_neg and (z >> 63) == 1))
    idx = np.nonzero(finite)[0]
    w = np.array([want[i] for i in idx], U64)
    assert not mismatches(got[idx], w, a[idx], b[idx], c[idx])
    assert finite.sum() > n // 2


def test_fma_special_operands():
    big, m1, two = bits(1e300), bits(-1.0), bits(2.0)
    cases = [  # (a, b, c, want)
        (big, big, INF | NEG, 0xFFF0_0000_0000_0000),          # finite product, infinite addend
        (INF, bits(0.0), bits(1.0), int(DNAN)),            # 0 * inf
        (INF, two, INF | NEG, int(DNAN)),                       # inf - inf
        (INF, m1, bits(5.0), 0xFFF0_0000_0000_0000),
        (bits(0.0) | NEG, two, bits(0.0) | NEG, 1 << 63),  # -0 + -0 = -0
        (bits(0.0) | NEG, two, bits(0.0), 0),              # -0 + +0 = +0
        (two, bits(0.5), m1, 0),                           # exact cancellation: +0
        (U64(0x7FF4_0000_0000_0001), QNAN | NEG, two, 0x7FFC_0000_0000_0001),   # first NaN, quieted
        (two, two, U64(0xFFF0_0000_0000_0007), 0xFFF8_0000_0000_0007),
    ]
    got = D.fma(*(np.array([c[i] for c in cases], U64) for i in range(3)))
    assert [hex(x) for x in got] == [hex(c[3]) for c in cases]


def test_ldexp_rounds_denormal_results_once():
    rng = np.random.default_rng(SEED + 2)
    a = operands(rng, 4000)
    k = rng.integers(-1200, 1200, a.size).astype(np.int32)
    k[:50] = [2 ** 31 - 1, -2 ** 31] * 25
    got = D.ldexp(a, k.view(U32))
    fin = np.isfinite(f64(a))
    # beyond +-2200 every finite non-zero double over- or underflows: the same as +-2200
    want = np.array([rounded(rational(x) * Fraction(2) ** max(-2200, min(n, 2200)), neg_zero=bool(x >> 63))
                     if f else 0 for x, n, f in zip(a.tolist(), k.tolist(), fin)], U64)
    want = np.where(fin, want, nan_rule(a, a))
    assert not mismatches(got, want, a, k.view(U32))


def test_rcp_sqrt_rsq_are_correctly_rounded():
    rng = np.random.default_rng(SEED + 3)
    a = operands(rng, 6000)
    with np.errstate(all="ignore"):
        assert not mismatches(D.rcp(a), nan_rule(bits(1.0 / f64(a)), a), a)
        assert not mismatches(D.sqrt(a), nan_rule(bits(np.sqrt(f64(a))), a), a)
    got = D.rsq(a)
    # y = rsq(x) is right iff the midpoints around it bracket x^-1/2: lo^2 x <= 1 <= hi^2 x
    pos = (f64(a) > 0) & np.isfinite(f64(a))
    for x, y in zip(a[pos].tolist(), got[pos].tolist()):
        fy, fx = rational(y), rational(x)
        ulp = Fraction(2) ** (math.frexp(float(fy))[1] - 53)
        lo = fy - (ulp / 2 if (y & ((1 << 52) - 1)) else ulp / 4)   # a power of two: half below
        hi = fy + ulp / 2
        assert lo * lo * fx <= 1 <= hi * hi * fx, (hex(x), hex(y))
    specials = np.array([0, 1 << 63, int(INF), int(INF | NEG), int(ONE | NEG), 0x7FF4_0000_0000_0000], U64)
    assert [hex(v) for v in D.rsq(specials)] == [
        "0x7ff0000000000000", "0xfff0000000000000", "0x0", hex(int(DNAN)), hex(int(DNAN)),
        "0x7ffc000000000000"]


# ----------------------------------------------------------------------------- min / max / compare

def test_min_max_nan_and_signed_zero_rules():
    pz, nz, one, snan, qnan = U64(0), NEG, ONE, U64(0x7FF4_0000_0000_0001), U64(0xFFF8_0000_0000_0002)
    a = np.array([pz, nz, one, snan, one, qnan, snan, qnan], U64)
    b = np.array([nz, pz, snan, one, qnan, one, qnan, snan], U64)
    assert [hex(x) for x in D.min_num(a, b)] == [hex(x) for x in (nz, nz, one, one, one, one,
                                                                  0x7FFC_0000_0000_0001, 0xFFF8_0000_0000_0002)]
    assert [hex(x) for x in D.max_num(a, b)] == [hex(x) for x in (pz, pz, one, one, one, one,
                                                                  0x7FFC_0000_0000_0001, 0xFFF8_0000_0000_0002)]
    assert [hex(x) for x in D.minimum(a, b)] == [hex(x) for x in (nz, nz, 0x7FFC_0000_0000_0001,
                                                                  0x7FFC_0000_0000_0001, qnan, qnan,
                                                                  0x7FFC_0000_0000_0001, 0x7FFC_0000_0000_0001)]
    assert [hex(x) for x in D.clamp01(np.array([NEG | ONE, nz, bits(0.25), bits(7.0), qnan], U64))] == \
        ["0x0", hex(nz), hex(int(bits(0.25))), hex(int(ONE)), "0x0"]        # -0 stays -0 (docs/model.md)


def test_compares_match_numpy():
    rng = np.random.default_rng(SEED + 4)
    a = operands(rng, 4000)
    b = np.where(rng.random(a.size) < 0.3, a ^ np.where(rng.random(a.size) < 0.5, NEG, U64(0)), operands(rng, 4000))
    x, y = f64(a), f64(b)
    with np.errstate(all="ignore"):
        ref = {"lt": x < y, "eq": x == y, "le": x <= y, "gt": x > y, "lg": (x < y) | (x > y),
               "ge": x >= y, "o": ~np.isnan(x) & ~np.isnan(y), "u": np.isnan(x) | np.isnan(y)}
    for c in list(ref):
        ref["n" + c if c != "eq" else "neq"] = ~ref[c]
    ref.pop("no"), ref.pop("nu")
    for cond, want in ref.items():
        assert (D.compare(cond, a, b) == want).all(), cond


def test_cmp_class_every_class():
    vals = np.array([0x7FF4_0000_0000_0000, 0x7FF8_0000_0000_0000, 0xFFF0_0000_0000_0000,
                     int(bits(-3.5)), (1 << 63) | 5, 1 << 63, 0, 5, int(bits(3.5)), int(INF)], U64)
    for k, v in enumerate(vals):
        got = D.cmp_class(np.full(10, v, U64), (U32(1) << np.arange(10, dtype=U32)))
        assert got.tolist() == [i == k for i in range(10)], k


# ----------------------------------------------------------------------------- conversions, rounding

def test_conversions_match_numpy():
    rng = np.random.default_rng(SEED + 5)
    a = operands(rng, 8000)
    x = f64(a)
    with np.errstate(all="ignore"):
        t = np.where(np.isnan(x), 0, np.trunc(x))
        want_i = np.clip(t, -2.0 ** 31, 2.0 ** 31 - 1).astype(I64).astype(U32)
        want_u = np.clip(t, 0, 2.0 ** 32 - 1).astype(I64).astype(U32)
        want_f = x.astype(np.float32).view(U32)
    assert not mismatches(D.cvt_i32_f64(a), want_i, a)
    assert not mismatches(D.cvt_u32_f64(a), want_u, a)
    fin = ~is_nan(a)
    assert not mismatches(D.cvt_f32_f64(a)[fin], want_f[fin], a[fin])
    nans = np.array([0x7FF4_0000_2000_0000, 0xFFFF_FFFF_FFFF_FFFF], U64)
    assert [hex(v) for v in D.cvt_f32_f64(nans)] == ["0x7fe00001", "0xffffffff"]
    i = rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(U32)
    assert (D.cvt_f64_i32(i) == bits(i.view(np.int32).astype(np.float64))).all()
    assert (D.cvt_f64_u32(i) == bits(i.astype(np.float64))).all()
    f = np.concatenate([i, np.array([1, 0x8000_0001, 0x7F80_0000, 0x7FA0_0001, 0xFFC0_0003], U32)])
    with np.errstate(invalid="ignore"):
        ieee = bits(f.view(np.float32).astype(np.float64))
    want = np.where((f & U32(0x7FFF_FFFF)) > U32(0x7F80_0000),
                    (f.astype(U64) & U64(0x8000_0000)) << U64(32) | U64(0x7FF8_0000_0000_0000)
                    | (f.astype(U64) & U64(0x7F_FFFF)) << U64(29), ieee)
    assert not mismatches(D.cvt_f64_f32(f), want, f)


def test_rounding_fract_frexp():
    rng = np.random.default_rng(SEED + 6)
    a = operands(rng, 6000)
    x = f64(a)
    with np.errstate(all="ignore"):
        for fn, ref in ((D.trunc, np.trunc), (D.ceil, np.ceil), (D.floor, np.floor), (D.rndne, np.rint)):
            assert not mismatches(fn(a), nan_rule(bits(ref(x)), a), a), fn.__name__
    fin = np.isfinite(x)
    fr = D.fract(a)
    for v, r in zip(x[fin].tolist(), fr[fin].tolist()):
        want = min(rational(int(np.float64(v).view(U64))) - math.floor(v), Fraction(1) - Fraction(1, 2 ** 53))
        assert rational(r) == Fraction(float(want)) and not (r >> 63), (v, hex(r))
    assert [hex(v) for v in D.fract(np.array([INF, NEG, bits(-1e-300)], U64))] == [
        hex(int(DNAN)), "0x0", "0x3fefffffffffffff"]
    mant, exp = D.frexp_mant(a), D.frexp_exp(a).view(np.int32)
    for v, m, e in zip(x[fin].tolist(), mant[fin].tolist(), exp[fin].tolist()):
        wm, we = math.frexp(v)
        assert (rational(m), e) == (Fraction(wm), we) and (m >> 63) == (np.float64(v).view(U64) >> 63), v
    assert [int(e) for e in D.frexp_exp(np.array([INF, QNAN, 0, 1], U64)).view(np.int32)] == [0, 0, 0, -1073]


# ----------------------------------------------------------------------------- trig_preop

# 2/pi in hexadecimal (fdlibm, k_rem_pio2.c, table ipio2: 24 bits an entry)
TWO_OVER_PI_HEX = (
    "A2F9836E4E441529FC2757D1F534DDC0DB6295993C439041FE5163ABDEBBC561B7246E3A424DD2E006492EEA09D1921C"
    "FE1DEB1CB129A73EE88235F52EBB4484E99C7026B45F7E413991D639835339F49C845F8BBDF9283B1FF897FFDE05980F"
    "EF2F118B5A0A6D1F6D367ECF27CB09B74F463F669E5FEA2D7527BAC7EBE5F17B3D0739F78A5292EA6BFB5FB11F8D5D08"
    "56033046FC7B6BABF0CFBC209AF4361DA9E391615EE61B086599855F14A068408DFFD8804D73273106061556CA73A8C9")


def test_trig_preop_segments_of_two_over_pi():
    ref = int(TWO_OVER_PI_HEX, 16) >> (len(TWO_OVER_PI_HEX) * 4 - 1201)
    assert D.TWO_OVER_PI_1201 == ref
    one = np.full(22, ONE, U64)
    sel = np.arange(22, dtype=U32)
    got = D.trig_preop(one, sel)
    for k, g in enumerate(got.tolist()):
        seg = Fraction((ref >> (1201 - 53 * (k + 1))) & ((1 << 53) - 1), 2 ** (53 * (k + 1)))
        if seg < Fraction(1, 2 ** 1022):                  # denormal: rounded toward zero
            seg = Fraction(math.floor(seg * 2 ** 1074), 2 ** 1074)
        assert rational(g) == seg, k
    # exponent field 1100 skips 23 more bits; 1970 also scales the result by 2^128
    big = np.array([1100 << 52, 1970 << 52], U64)
    got = D.trig_preop(big, np.zeros(2, U32))
    for g, skip, scale in zip(got.tolist(), (23, 893), (0, 128)):
        seg = (ref >> (1201 - 53 - skip)) & ((1 << 53) - 1)
        assert rational(g) == Fraction(seg * 2 ** scale, 2 ** (53 + skip))
    assert abs(float(sum(rational(g) for g in D.trig_preop(one[:3], sel[:3]).tolist())) - 2 / math.pi) < 1e-30


# ----------------------------------------------------------------------------- division helpers

def div_sequence(n, d):
    """The instructions clang-19 emits for an IEEE ``n / d`` on doubles."""
    ds, _ = D.div_scale(d, d, n)
    r = D.rcp(ds)
    r = D.fma(r, D.fma(ds ^ NEG, r, ONE), r)
    r = D.fma(r, D.fma(ds ^ NEG, r, ONE), r)
    ns, vcc = D.div_scale(n, d, n)
    q = D.mul(ns, r)
    q = D.div_fmas(D.fma(ds ^ NEG, q, ns), r, q, vcc)
    return D.div_fixup(q, d, n)


def sqrt_sequence(x):
    """The instructions clang-19 emits for ``sqrt`` of a double: scale tiny inputs by 2^256,
    v_rsq_f64 and two Newton-Raphson steps on the root, scale back, pass +-0 and +inf."""
    small = D.compare("gt", U64(0x1000_0000_0000_0000), x)
    x = D.ldexp(x, np.where(small, 256, 0).astype(U32))
    r = D.rsq(x)
    g, h = D.mul(x, r), D.mul(HALF, r)
    e = D.fma(h ^ NEG, g, HALF)
    g, h = D.fma(g, e, g), D.fma(h, e, h)
    for _ in range(2):
        g = D.fma(D.fma(g ^ NEG, g, x), h, g)
    g = D.ldexp(g, np.where(small, -128, 0).astype(np.int32).view(U32))
    return np.where(D.cmp_class(x, U32(0x260)), x, g)


def test_division_sequence_is_correctly_rounded():
    rng = np.random.default_rng(SEED + 7)
    a, b = operands(rng, 60000), operands(rng, 60000)
    with np.errstate(all="ignore"):
        want = nan_rule(bits(f64(a) / f64(b)), a, b)
    assert not mismatches(div_sequence(a, b), want, a, b)


def test_division_at_the_edges():
    """Quotients that are denormal ties, at the overflow threshold, and the scaling branches."""
    pairs = [
        (3, 0x4000_0000_0000_0000), (1, 0x4000_0000_0000_0000), (1, 0x3FF8_0000_0000_0000),
        (0x0010_0000_0000_0000, 0x4340_0000_0000_0000), (0x7FEF_FFFF_FFFF_FFFF, 0x3FEF_FFFF_FFFF_FFFF),
        (0x7FEF_FFFF_FFFF_FFFF, 0x3FF0_0000_0000_0001), (0x7FEF_FFFF_FFFF_FFFF, 1),
        (1, 0x7FEF_FFFF_FFFF_FFFF), (ONE, 0x7FEF_FFFF_FFFF_FFFF), (0x4000_0000_0000_0000, 0x7FE0_0000_0000_0000),
        (0x0180_0000_0000_0000, 0x0010_0000_0000_0001), (0x0008_0000_0000_0000, 0x0004_0000_0000_0000),
        (0x2000_0000_0000_0000, 0x6000_0000_0000_0000), (0x6000_0000_0000_0000, 0x1000_0000_0000_0000),
    ]
    a = np.array([p[0] for p in pairs], U64)
    b = np.array([p[1] for p in pairs], U64)
    a, b = np.concatenate([a, a ^ NEG, a]), np.concatenate([b, b, b ^ NEG])
    with np.errstate(all="ignore"):
        want = nan_rule(bits(f64(a) / f64(b)), a, b)
    assert not mismatches(div_sequence(a, b), want, a, b)


def test_sqrt_sequence_is_correctly_rounded():
    rng = np.random.default_rng(SEED + 8)
    x = np.concatenate([operands(rng, 60000), SPECIALS])
    with np.errstate(all="ignore"):
        want = nan_rule(bits(np.sqrt(f64(x))), x)
    assert not mismatches(sqrt_sequence(x), want, x)


def test_div_scale_cases():
    """v_div_scale_f64(S0, den, num): which operand is scaled and when VCC is set."""
    one, two, four = ONE, U64(0x4000_0000_0000_0000), U64(0x4010_0000_0000_0000)
    tiny_den = U64(0x0000_0000_0000_0100)
    up = lambda x: rounded(rational(int(x)) * Fraction(2) ** 128)
    down = lambda x: rounded(rational(int(x)) / Fraction(2) ** 128)
    cases = [  # (s0, den, num, D, VCC)
        (one, one, two, int(one), False),                                      # nothing to do
        (one, one, U64(0), int(DNAN), False),                                  # zero operand
        (one, one, U64(0x7000_0000_0000_0000), up(one), True),                 # quotient >= 2^767: den up
        (U64(0x7000_0000_0000_0000), one, U64(0x7000_0000_0000_0000), 0x7000_0000_0000_0000, True),
        (tiny_den, tiny_den, U64(0x2000_0000_0000_0000), up(tiny_den), False),  # denormal den: both up
        (U64(0x7FE0_0000_0000_0000), U64(0x7FE0_0000_0000_0000), two, down(0x7FE0_0000_0000_0000), False),
        (U64(0x7FE0_0000_0000_0000), U64(0x7FE0_0000_0000_0000), U64(0x0010_0000_0000_0000),
         down(0x7FE0_0000_0000_0000), True),                                   # 1/den and q denormal
        (U64(0x0010_0000_0000_0000), U64(0x7FE0_0000_0000_0000), U64(0x0010_0000_0000_0000),
         0x0010_0000_0000_0000, True),
        (U64(0x0020_0000_0000_0000), four, U64(0x0020_0000_0000_0000), up(0x0020_0000_0000_0000), True),
        (four, four, U64(0x0020_0000_0000_0000), int(four), True),             # q denormal: num up only
        (U64(0x0300_0000_0000_0000), U64(0x0300_0000_0000_0000), U64(0x0300_0000_0000_0000),
         up(0x0300_0000_0000_0000), False),                                    # tiny num: both up
    ]
    d, vcc = D.div_scale(*(np.array([c[i] for c in cases], U64) for i in range(3)))
    assert [hex(x) for x in d] == [hex(c[3]) for c in cases]
    assert vcc.tolist() == [c[4] for c in cases]


def test_div_fmas_scales_inside_the_rounding():
    """With VCC the fma is scaled by 2^-128 (S2 below 2.0) or 2^+128 and rounded once: a value
    just above a denormal tie after scaling rounds up (rounding the fma first would leave an
    exact tie, which goes to even)."""
    a = np.full(4, ONE, U64)
    b = np.array([0x04C0_0000_0000_0001, 0x04C0_0000_0000_0000, ONE, 0x37F8_0000_0000_0000], U64)
    c = np.array([0x0800_0000_0000_0000, 0x0800_0000_0000_0000, 0x7E70_0000_0000_0000, ONE], U64)
    got = D.div_fmas(a, b, c, np.array([True, True, True, False]))
    # (2^-895 + 2^-947 + 2^-999) 2^-128 -> 2^51 + 1 denormal ulps; the exact tie -> 2^51;
    # (2^1000 + 1) 2^128 -> inf; without VCC a plain fma (1 + 1.5 2^-128 -> 1)
    assert [hex(x) for x in got] == ["0x8000000000001", "0x8000000000000", "0x7ff0000000000000",
                                     hex(int(ONE))]
    want = [rounded((rational(int(x)) * rational(int(y)) + rational(int(z))) * Fraction(2) ** s)
            for x, y, z, s in zip(a, b, c, (-128, -128, 128, 0))]
    assert [hex(x) for x in got] == [hex(x) for x in want]


def test_div_fixup_special_cases():
    q, one, inf, z = U64(0x4008_0000_0000_0000), ONE, INF, U64(0)
    cases = [  # (q, den, num, want)
        (q, one, U64(0x7FF4_0000_0000_0000), 0x7FFC_0000_0000_0000),
        (q, U64(0xFFF4_0000_0000_0001), QNAN, int(QNAN)),
        (q, U64(0xFFF4_0000_0000_0001), one, 0xFFFC_0000_0000_0001),
        (q, z, z, int(DNAN)), (q, inf, inf ^ NEG, int(DNAN)),
        (q, z ^ NEG, one, 0xFFF0_0000_0000_0000), (q, one, inf, int(INF)), (q, inf, one ^ NEG, 1 << 63),
        (q, one, z, 0), (q ^ NEG, one, one, int(q)), (q, one ^ NEG, one, int(q ^ NEG)),
        (QNAN, one, one ^ NEG, 0xFFF0_0000_0000_0000),
        (q, U64(0x4430_0000_0000_0000), U64(1), 0),            # exponent gap below -1075: +-0
    ]
    got = D.div_fixup(*(np.array([c[i] for c in cases], U64) for i in range(3)))
    assert [hex(x) for x in got] == [hex(c[3]) for c in cases]


# ----------------------------------------------------------------------------- encodings on the model

def run_one(text: str, sgprs=None, vgprs=None, exec_mask=0xFFFF_FFFF) -> Wave:
    """Assemble one instruction, build its handler and run it on a fresh wave."""
    words = np.frombuffer(assemble(text), dtype="<u4").tolist()
    inst = isa.decode(words + [0], pc=0)
    w = Wave(0, 64, 0)
    for r, v in (sgprs or {}).items():
        w.s[r] = v
    for r, v in (vgprs or {}).items():
        w.v[r] = v
    w.s[EXEC] = exec_mask
    execute.build(inst)(w, None)
    return w


def pair(w: Wave, r: int) -> np.ndarray:
    return w.v[r].astype(U64) | (w.v[r + 1].astype(U64) << U64(32))


def split(x) -> tuple[np.ndarray, np.ndarray]:
    x = np.broadcast_to(np.asarray(x, U64), (32,))
    return (x & U64(0xFFFF_FFFF)).astype(U32), (x >> U64(32)).astype(U32)


@needs_llvm
def test_operand_forms():
    """A literal on a double operand is its high half; inline constants are f64; an SGPR pair
    and the neg/abs modifiers; EXEC masks both halves; omod has no effect, clamp does."""
    x = bits(np.linspace(-3, 3, 32))
    lo, hi = split(x)
    w = run_one("v_add_f64 v[4:5], 0x40080000, v[2:3]", vgprs={2: lo, 3: hi}, exec_mask=0x0000_FFFF)
    want = bits(f64(x) + 3.0)
    assert (pair(w, 4)[:16] == want[:16]).all() and (pair(w, 4)[16:] == 0).all()
    w = run_one("v_fma_f64 v[4:5], -|v[2:3]|, s[6:7], 0.5 mul:2",
                sgprs={6: int(bits(2.0)) & 0xFFFF_FFFF, 7: int(bits(2.0)) >> 32}, vgprs={2: lo, 3: hi})
    assert (pair(w, 4) == bits(-np.abs(f64(x)) * 2.0 + 0.5)).all()
    w = run_one("v_mul_f64_e64 v[4:5], v[2:3], 0.15915494309189532 clamp", vgprs={2: lo, 3: hi})
    assert (pair(w, 4) == bits(np.clip(f64(x) * 0.15915494309189532, 0, 1))).all()
    w = run_one("v_cvt_f32_f64_e32 v4, v[2:3]", vgprs={2: lo, 3: hi, 5: np.full(32, 7, U32)})
    assert (w.v[4] == f64(x).astype(np.float32).view(U32)).all() and (w.v[5] == 7).all()


@needs_llvm
def test_compare_and_division_state():
    """VOPC writes VCC (e32), an SGPR (e64) or EXEC (cmpx); v_div_scale_f64 writes its SGPR
    for the active lanes; v_div_fmas_f64 reads VCC."""
    x = bits(np.arange(32) - 16.0)
    lo, hi = split(x)
    w = run_one("v_cmp_gt_f64_e32 vcc_lo, 0, v[2:3]", vgprs={2: lo, 3: hi})
    assert w.s[VCC] == 0xFFFF
    w = run_one("v_cmp_class_f64_e64 s8, v[2:3], 0x60", vgprs={2: lo, 3: hi})     # +-0
    assert w.s[8] == 1 << 16
    w = run_one("v_cmpx_nge_f64_e32 1.0, v[2:3]", vgprs={2: lo, 3: hi}, exec_mask=0xF0F0_F0F0)
    assert w.s[EXEC] == 0xF0F0_F0F0 & ~((1 << 17) - 1)
    big = np.full(32, 0x7000_0000_0000_0000, U64)
    blo, bhi = split(big)
    w = run_one("v_div_scale_f64 v[4:5], s10, v[2:3], 1.0, v[2:3]", sgprs={10: 0xFFFF_FFFF},
                vgprs={2: blo, 3: bhi}, exec_mask=0x0000_00FF)
    assert w.s[10] == 0xFF and (pair(w, 4)[:8] == big[:8]).all()
    c = np.full(32, 0x4330_0000_0000_0000, U64)               # S2 >= 2: the VCC lanes go up by 2^128
    clo, chi = split(c)
    w = run_one("v_div_fmas_f64 v[4:5], 1.0, 1.0, v[2:3]", sgprs={VCC: 0x5}, vgprs={2: clo, 3: chi})
    s = f64(c)[0] + 1.0
    assert pair(w, 4)[:4].tolist() == [int(bits(s * 2.0 ** 128)), int(bits(s))] * 2


# ----------------------------------------------------------------------------- compiled kernels

def _program(source: str, tmp: Path):
    import dcu
    path = tmp / "f64_kernel.cl"
    path.write_text(source)
    return dcu.load_program(path)


def _launch(prog, name: str, n: int, args) -> list:
    import dcu
    return dcu.launch(prog.kernel(name), grid=(n // 64,), block=(64,), backend="model", args=args).buffers


def _opcodes(prog) -> set[str]:
    from dcu import toolchain
    return {ln.split()[0] for ln in toolchain.objdump(prog.binary).splitlines()
            if ln.startswith("\t") and ln.split()}


def _same(got, want) -> np.ndarray:
    """Equal bits, or both NaN (a NaN's payload depends on the library's instruction choice)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return (bits(got) == bits(want)) | (np.isnan(got) & np.isnan(want))


def _fmin(x, y):
    """OpenCL fmin: a NaN operand is ignored; -0 < +0 (v_min_num_f64)."""
    r = np.fmin(x, y)
    return np.where((x == 0) & (y == 0), np.where(np.signbit(x) | np.signbit(y), -0.0, 0.0), r)


def _fmax(x, y):
    r = np.fmax(x, y)
    return np.where((x == 0) & (y == 0), np.where(np.signbit(x) & np.signbit(y), -0.0, 0.0), r)


ARITH_CL = """
#pragma OPENCL FP_CONTRACT OFF
__kernel void arith(__global const double *a, __global const double *b, __global const double *c,
                    __global double *sum, __global double *fused, __global double *quo,
                    __global double *root, __global float *narrow, __global long *whole)
{
    uint i = get_global_id(0);
    double x = a[i], y = b[i], z = c[i];
    sum[i] = x * y + sqrt(x) + x / z;
    fused[i] = fma(x, y, z) - fmin(x, y) * fmax(y, z) + fabs(z);
    quo[i] = y / z;
    root[i] = sqrt(fabs(y));
    float f = (float)x;
    narrow[i] = f;
    whole[i] = (long)f;
}
"""


@needs_llvm
def test_compiled_double_arithmetic(tmp_path):
    """Products, sums, sqrt, division, fma, fmin/fmax, fabs and the double -> float -> long
    conversions compiled by clang-19 and run on the model, against numpy float64 (and exact
    rationals for the fma)."""
    prog = _program(ARITH_CL, tmp_path)
    ops = _opcodes(prog)
    for op in ("v_div_scale_f64", "v_div_fmas_f64", "v_div_fixup_f64", "v_rcp_f64_e32", "v_rsq_f64_e32",
               "v_fma_f64", "v_mul_f64_e32", "v_add_f64_e32", "v_cvt_f32_f64_e32", "v_cmp_class_f64_e64"):
        assert op in ops, op
    rng = np.random.default_rng(SEED + 9)
    n = 1024
    a = bits(rng.uniform(0, 1e6, n) * rng.choice([1.0, 1e-200, 1e12], n))
    a[:8] = [0, 1 << 63, 1, int(INF), int(QNAN), 0x7FEF_FFFF_FFFF_FFFF, int(ONE), 0x000F_FFFF_FFFF_FFFF]
    b, c = operands(rng, n), operands(rng, n)
    c[64:128] = bits(rng.uniform(-1e3, 1e3, 64))
    out = _launch(prog, "arith", n, [f64(a), f64(b), f64(c)] + [np.zeros(n) for _ in range(4)]
                  + [np.zeros(n, np.float32), np.zeros(n, np.int64)])
    x, y, z = f64(a), f64(b), f64(c)
    with np.errstate(all="ignore"):
        want_sum = (x * y + np.sqrt(x)) + x / z
        finite = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
        fma_xyz = f64(np.array([rounded(rational(p) * rational(q) + rational(r)) if ok else 0
                                for p, q, r, ok in zip(a.tolist(), b.tolist(), c.tolist(), finite)], U64))
        want_fused = fma_xyz - _fmin(x, y) * _fmax(y, z) + np.abs(z)
        f = x.astype(np.float32)
        in_range = np.isfinite(f) & (np.abs(f) < 2.0 ** 63)
        assert _same(out[3], want_sum).all(), mismatches(bits(out[3]), bits(want_sum), a, b, c)
        assert _same(out[4][finite], want_fused[finite]).all()
        assert _same(out[5], y / z).all(), mismatches(bits(out[5]), bits(y / z), b, c)
        assert _same(out[6], np.sqrt(np.abs(y))).all()
        assert (out[7].view(U32) == f.view(U32)).all()
        assert (out[8][in_range] == f[in_range].astype(np.int64)).all()


CONVERT_CL = """
__kernel void cvt(__global const double *ints, __global const double *uints, __global const double *longs,
                  __global const double *ulongs, __global const double *any, __global const long *l,
                  __global const ulong *ul, __global const int *si, __global const float *fl,
                  __global int *oi, __global uint *ou, __global long *ol, __global ulong *oul,
                  __global float *of, __global double *od)
{
    uint i = get_global_id(0);
    double x = ints[i], u = uints[i], y = longs[i], v = ulongs[i], w = any[i];
    oi[5 * i + 0] = convert_int_rte(x);   oi[5 * i + 1] = convert_int_rtz(x);
    oi[5 * i + 2] = convert_int_rtp(x);   oi[5 * i + 3] = convert_int_rtn(x);
    oi[5 * i + 4] = convert_int_sat(w);
    ou[4 * i + 0] = convert_uint_rte(u);  ou[4 * i + 1] = convert_uint_rtz(u);
    ou[4 * i + 2] = convert_uint_rtp(u);  ou[4 * i + 3] = convert_uint_rtn(u);
    ol[4 * i + 0] = convert_long_rte(y);  ol[4 * i + 1] = convert_long_rtz(y);
    ol[4 * i + 2] = convert_long_rtp(y);  ol[4 * i + 3] = convert_long_rtn(y);
    oul[4 * i + 0] = convert_ulong_rte(v); oul[4 * i + 1] = convert_ulong_rtz(v);
    oul[4 * i + 2] = convert_ulong_rtp(v); oul[4 * i + 3] = convert_ulong_rtn(v);
    of[4 * i + 0] = convert_float_rte(w); of[4 * i + 1] = convert_float_rtz(w);
    of[4 * i + 2] = convert_float_rtp(w); of[4 * i + 3] = convert_float_rtn(w);
    od[8 * i + 0] = convert_double_rte(l[i]);  od[8 * i + 1] = convert_double_rtz(l[i]);
    od[8 * i + 2] = convert_double_rtp(l[i]);  od[8 * i + 3] = convert_double_rtn(l[i]);
    od[8 * i + 4] = convert_double_rtz(ul[i]); od[8 * i + 5] = convert_double_rtp(ul[i]);
    od[8 * i + 6] = (double)si[i] + (double)(uint)si[i];
    od[8 * i + 7] = (double)fl[i];
}
"""

_MODES = ("rte", "rtz", "rtp", "rtn")


def _round_int(q: Fraction, mode: str) -> int:
    if mode == "rte":
        return round(q)                      # Python rounds a Fraction half to even
    return {"rtz": math.trunc, "rtp": math.ceil, "rtn": math.floor}[mode](q)


def _round_float(q: Fraction, mode: str, dtype) -> float:
    """q rounded to float32/float64 in a rounding mode: nearest even (float(Fraction) for
    float64, then numpy's float32 cast of the exact float64 when q is a double), then a
    step toward the mode's direction when the nearest value lies on the wrong side."""
    try:
        with np.errstate(over="ignore"):
            r = dtype(float(q)) if dtype is np.float64 else np.float64(float(q)).astype(np.float32)
    except OverflowError:
        r = dtype(math.inf if q > 0 else -math.inf)
    up, down = dtype(math.inf), dtype(-math.inf)
    rv = Fraction(float(r)) if np.isfinite(r) else None
    if mode == "rtz" and (rv is None or abs(rv) > abs(q)):
        r = np.nextafter(r, dtype(0))
    elif mode == "rtp" and (rv is None and r < 0 or rv is not None and rv < q):
        r = np.nextafter(r, up)
    elif mode == "rtn" and (rv is None and r > 0 or rv is not None and rv > q):
        r = np.nextafter(r, down)
    if r == 0:                               # a zero takes the sign of the exact value
        r = dtype(-0.0) if q < 0 else dtype(0.0)
    return r


@needs_llvm
def test_compiled_conversions(tmp_path):
    """convert_{int,uint,long,ulong,float}_rt{e,z,p,n}(double), convert_int_sat and
    convert_double_rt?(long/ulong), int/uint/float -> double, against exact rationals."""
    prog = _program(CONVERT_CL, tmp_path)
    rng = np.random.default_rng(SEED + 10)
    n = 256
    halves = lambda lim: np.round(rng.uniform(-lim, lim, n) * 2) / 2     # many ties
    ints = np.where(rng.random(n) < 0.5, halves(2e9), rng.uniform(-2.1e9, 2.1e9, n)).clip(-2.1e9, 2.1e9)
    ints = np.clip(ints, -2.0 ** 31, 2.0 ** 31 - 1)
    uints = np.clip(np.abs(halves(4.2e9)), 0, 2.0 ** 32 - 1)
    longs = np.clip(rng.uniform(-9e18, 9e18, n) * rng.choice([1, 1e-12], n), -2.0 ** 63, 2.0 ** 62)
    longs[:32] = halves(1e6)[:32]
    ulongs = np.abs(longs) * 2
    anyd = f64(operands(rng, n))
    anyd[:32] = rng.uniform(-5e9, 5e9, 32)
    l = rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
    ul = rng.integers(0, 2 ** 64 - 1, n, dtype=np.uint64)
    si = rng.integers(-2 ** 31, 2 ** 31 - 1, n, dtype=np.int64).astype(np.int32)
    with np.errstate(over="ignore"):
        fl = operands(rng, n).view(np.float64).astype(np.float32)
    out = _launch(prog, "cvt", n, [ints, uints, longs, ulongs, anyd, l, ul, si, fl,
                                   np.zeros(5 * n, np.int32), np.zeros(4 * n, np.uint32),
                                   np.zeros(4 * n, np.int64), np.zeros(4 * n, np.uint64),
                                   np.zeros(4 * n, np.float32), np.zeros(8 * n)])
    oi, ou, ol, oul, of, od = (o.reshape(n, -1) for o in out[9:])
    for k, mode in enumerate(_MODES):
        for got, src in ((oi[:, k], ints), (ou[:, k], uints), (ol[:, k], longs), (oul[:, k], ulongs)):
            want = [_round_int(Fraction(float(v)), mode) for v in src]
            assert [int(g) for g in got] == want, mode
        want_f = np.array([_round_float(Fraction(float(v)), mode, np.float32) if np.isfinite(v) and v
                           else np.float32(v) for v in anyd], np.float32)
        same = (of[:, k].view(U32) == want_f.view(U32)) | (np.isnan(of[:, k]) & np.isnan(want_f))
        assert same.all(), (mode, [(float(v), float(g), float(w)) for v, g, w in
                                   zip(anyd[~same], of[~same, k], want_f[~same])][:5])
    sat = np.where(np.isnan(anyd), 0, np.clip(np.nan_to_num(anyd, posinf=2.0 ** 40, neginf=-2.0 ** 40),
                                             -2.0 ** 31, 2.0 ** 31 - 1))
    assert (oi[:, 4] == np.trunc(sat).astype(np.int64)).all()
    for col, src, mode in ((0, l, "rte"), (1, l, "rtz"), (2, l, "rtp"), (3, l, "rtn"), (4, ul, "rtz"), (5, ul, "rtp")):
        want = np.array([_round_float(Fraction(int(v)), mode, np.float64) for v in src])
        assert (bits(od[:, col]) == bits(want)).all(), mode
    assert (od[:, 6] == si.astype(np.float64) + si.view(np.uint32).astype(np.float64)).all()
    assert _same(od[:, 7], fl.astype(np.float64)).all()


LONG_CL = """
__kernel void longs(__global const long *a, __global const long *b, __global long *o, __global ulong *u)
{
    uint i = get_global_id(0);
    long x = a[i], y = b[i];
    ulong ux = (ulong)x, uy = (ulong)y;
    int ok = y != 0 && !(x == LONG_MIN && y == -1);
    o[8 * i + 0] = x * y;
    o[8 * i + 1] = ok ? x / y : 0;
    o[8 * i + 2] = ok ? x % y : 0;
    o[8 * i + 3] = x >> (y & 63);
    o[8 * i + 4] = x << (y & 63);
    o[8 * i + 5] = min(x, y) ^ (max(x, y) << 1);
    o[8 * i + 6] = (x < y) | (x <= y) << 1 | (x > y) << 2 | (x >= y) << 3 | (x == y) << 4
                 | (x != y) << 5 | (ux < uy) << 6 | (ux >= uy) << 7 | (ux > uy) << 8;
    o[8 * i + 7] = mul_hi(x, y);
    u[4 * i + 0] = uy ? ux / uy : 0;
    u[4 * i + 1] = uy ? ux % uy : 0;
    u[4 * i + 2] = (ux >> (uy & 63)) + (ux * uy);
    u[4 * i + 3] = mul_hi(ux, uy);
}
"""


@needs_llvm
def test_compiled_long_arithmetic(tmp_path):
    """64-bit integer multiply, divide, remainder, shifts, min/max, compares and mul_hi against
    Python integers (C semantics: quotients truncate, remainders take the dividend's sign)."""
    prog = _program(LONG_CL, tmp_path)
    rng = np.random.default_rng(SEED + 11)
    n = 512
    special = np.array([0, 1, -1, 2, -2, 63, 64, 2 ** 62, -2 ** 63, 2 ** 63 - 1, 2 ** 32, 2 ** 32 - 1], np.int64)
    def pick():
        v = rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)
        v = np.where(rng.random(n) < 0.3, v >> rng.integers(0, 63, n), v)
        return np.where(rng.random(n) < 0.15, rng.choice(special, n), v)
    a, b = pick(), pick()
    out = _launch(prog, "longs", n, [a, b, np.zeros(8 * n, np.int64), np.zeros(4 * n, np.uint64)])
    o, u = out[2].reshape(n, 8), out[3].reshape(n, 4)
    s64 = lambda v: ((v + 2 ** 63) % 2 ** 64) - 2 ** 63
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        ux, uy = x % 2 ** 64, y % 2 ** 64
        ok = y != 0 and not (x == -2 ** 63 and y == -1)
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) if ok else 0
        want = [s64(x * y), q, x - q * y if ok else 0, x >> (y & 63), s64(x << (y & 63)),
                s64(min(x, y) ^ (max(x, y) << 1)),
                (x < y) | (x <= y) << 1 | (x > y) << 2 | (x >= y) << 3 | (x == y) << 4 | (x != y) << 5
                | (ux < uy) << 6 | (ux >= uy) << 7 | (ux > uy) << 8,
                (x * y) >> 64]
        wu = [ux // uy if uy else 0, ux % uy if uy else 0, ((ux >> (uy & 63)) + ux * uy) % 2 ** 64,
              (ux * uy) >> 64]
        assert o[i].tolist() == want and u[i].tolist() == wu, (x, y, o[i].tolist(), want, u[i].tolist(), wu)
