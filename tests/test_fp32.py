"""Tests of sim/fp32.py against exact references written independently here.

* Arithmetic (add, sub, mul, fma, ldexp, conversions, rounding): exact rational value with
  fractions.Fraction, rounded once to float32 with ties to even by ``round_f32`` below.
* rcp, sqrt, rsq: correctly rounded, checked exactly (Fraction midpoint tests), and within 1 ulp
  of float64 math on 200,000+ inputs.
* exp, log: within 1 ulp of float64 math (math.exp2 / math.log2) on 200,000+ inputs, every power
  of two and the edge inputs.
* The ROM tables of the transcendental unit are regenerated from their defining formulas.
"""
import math
from decimal import Decimal, getcontext
from fractions import Fraction
from math import isqrt

import numpy as np
import pytest

from sim import fp32 as F

U32 = np.uint32
QNAN = 0x7FC00000
DNAN = F.DEFAULT_NAN           # 0xFFC00000
PINF, NINF = 0x7F800000, 0xFF800000
PZERO, NZERO = 0x00000000, 0x80000000
ONE, MONE = 0x3F800000, 0xBF800000
MAXF, MINN, MIND = 0x7F7FFFFF, 0x00800000, 0x00000001
SNAN = 0x7F800001
SEED = 20250611


# --------------------------------------------------------------------------------------
# Independent exact reference
def b2f(b: int) -> float:
    return float(np.array(b, U32).view(np.float32))


def f2b(x: float) -> int:
    return int(np.array(x, np.float32).view(U32))


def is_nan(b):
    return (b & 0x7FFFFFFF) > 0x7F800000


def is_inf(b):
    return (b & 0x7FFFFFFF) == 0x7F800000


def to_frac(b: int) -> Fraction:
    """Exact value of finite float32 bits."""
    s, e, f = b >> 31, (b >> 23) & 0xFF, b & 0x7FFFFF
    v = Fraction(f, 1 << 149) if e == 0 else Fraction((f | 0x800000) << max(e - 150, 0), 1 << max(150 - e, 0))
    return -v if s else v


def round_f32(v: Fraction, zero_sign: int = 0) -> int:
    """Round an exact rational to float32 bits, ties to even, with gradual underflow."""
    if v == 0:
        return zero_sign << 31
    s = 1 if v < 0 else 0
    v = -v if s else v
    n, d = v.numerator, v.denominator
    E = n.bit_length() - d.bit_length()               # floor(log2 v) or one more
    if (n << max(-E, 0)) < (d << max(E, 0)):
        E -= 1
    E = max(E, -126)                                    # quantum 2^(E-23)
    k = 23 - E
    num, den = (n << k, d) if k >= 0 else (n, d << -k)
    q, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and q & 1):
        q += 1
    bits = q if q < (1 << 23) else ((E + 126) << 23) + q  # q = 2^24 carries into the exponent
    if bits >= 0x7F800000:
        bits = 0x7F800000
    return bits | (s << 31)


def quiet(b):
    return b | 0x00400000


def ref_arith(op, *ops):
    """Exact reference for add/sub/mul/fma on bits, with the documented NaN rules."""
    for b in ops:
        if is_nan(b):
            return quiet(b)
    if any(is_inf(b) for b in ops):
        x = [b2f(b) for b in ops]
        r = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "fma": lambda a, b, c: a * b + c}[op](*x)
        return DNAN if math.isnan(r) else f2b(r)
    fr = [to_frac(b) for b in ops]
    sg = [b >> 31 for b in ops]
    if op == "add":
        v, zs = fr[0] + fr[1], sg[0] & sg[1]
    elif op == "sub":
        v, zs = fr[0] - fr[1], sg[0] & (1 - sg[1])
    elif op == "mul":
        v, zs = fr[0] * fr[1], sg[0] ^ sg[1]
    else:
        p = fr[0] * fr[1]
        v = p + fr[2]
        zs = (sg[0] ^ sg[1]) & sg[2] if p == 0 else 0
    return round_f32(v, zs)


# --------------------------------------------------------------------------------------
# Operand generators
def gen_operands(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 bit patterns drawn to hit every region: all-random bits, moderate exponents,
    denormals and the normal/denormal boundary, near overflow, specials and small integers."""
    kind = rng.integers(0, 8, n)
    sign = rng.integers(0, 2, n).astype(np.uint64) << 31
    mant = rng.integers(0, 1 << 23, n).astype(np.uint64)
    few = rng.integers(0, 4, n) == 0
    mant = np.where(few, mant & ~np.uint64(0x7FFFF), mant)             # short mantissas: ties
    exp = np.select(
        [kind == 0, kind == 1, kind == 2, kind == 3, kind == 4],
        [rng.integers(0, 256, n), rng.integers(110, 145, n), np.zeros(n, int),
         rng.integers(1, 4, n), rng.integers(240, 255, n)],
        rng.integers(60, 200, n)).astype(np.uint64)
    bits = sign | (exp << 23) | mant
    specials = np.array([PZERO, NZERO, PINF, NINF, QNAN, SNAN, 0xFFC00001, 0x7FBFFFFF, MAXF,
                         MAXF | 0x80000000, MINN, MIND, 0x80000001, ONE, MONE, 0x007FFFFF], np.uint64)
    sp = rng.integers(0, len(specials), n)
    bits = np.where(kind == 5, specials[sp], bits)
    ints = np.array(rng.integers(-40, 41, n), np.float32).view(U32).astype(np.uint64)
    bits = np.where(kind == 6, ints, bits)
    return bits.astype(U32)


def perturb(rng, bits, spread=3):
    """Move each pattern by a few ulps (integer steps of the bit pattern), staying finite."""
    d = rng.integers(-spread, spread + 1, bits.shape)
    out = (bits.astype(np.int64) + d).astype(np.uint64).astype(U32)
    bad = (out & 0x7FFFFFFF) >= 0x7F800000
    return np.where(bad, bits, out)


def gen_pairs(rng, n, op="add"):
    a, b = gen_operands(rng, n), gen_operands(rng, n)
    # cancellation: a + b or a - b within a few ulps of zero (same-exponent differences)
    m = rng.integers(0, 4, n) == 0
    near = a ^ U32(0x80000000) if op != "sub" else a
    b = np.where(m, perturb(rng, near), b)
    return a, b


def gen_triples(rng, n):
    a, b, c = gen_operands(rng, n), gen_operands(rng, n), gen_operands(rng, n)
    with np.errstate(all="ignore"):
        p = (a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64))
        negp = (-p).astype(np.float32).view(U32)
    # cancellation: c = -(a*b rounded) +- few ulps
    m = rng.integers(0, 3, n) == 0
    c = np.where(m & ~is_nan(negp), perturb(rng, negp), c)
    # product near the overflow / underflow thresholds
    k = rng.integers(0, 8, n)
    ea = rng.integers(1, 255, n)
    eb = np.where(k == 0, 254 + 127 - ea + rng.integers(-2, 3, n),
                  np.where(k == 1, 127 - 126 - ea + rng.integers(-26, 3, n), -1))
    ok = (eb >= 1) & (eb <= 254)
    a2 = (a & U32(0x807FFFFF)) | (ea.astype(U32) << U32(23))
    b2 = (b & U32(0x807FFFFF)) | (np.clip(eb, 0, 255).astype(U32) << U32(23))
    a = np.where(ok, a2, a)
    b = np.where(ok, b2, b)
    return a, b, c


# --------------------------------------------------------------------------------------
# Shape and dtype contract
def test_lane_arrays_and_broadcast():
    rng = np.random.default_rng(SEED)
    a = gen_operands(rng, 32)
    for fn in (F.add, F.sub, F.mul, F.min_num, F.max_num, F.minimum, F.maximum):
        r = fn(a, U32(ONE))
        assert r.dtype == U32 and r.shape == (32,)
    r = F.fma(a, U32(0x40000000), a)
    assert r.dtype == U32 and r.shape == (32,)
    for fn in (F.rcp, F.rsq, F.sqrt, F.exp, F.log, F.floor, F.ceil, F.trunc, F.rndne, F.fract,
               F.cvt_f32_i32, F.cvt_f32_u32, F.cvt_i32_f32, F.cvt_u32_f32, F.frexp_mant, F.frexp_exp):
        r = fn(a)
        assert r.dtype == U32 and r.shape == (32,), fn.__name__
    assert F.compare("lt", a, U32(0)).dtype == bool
    assert F.cmp_class(a, U32(0x3FF)).all()
    assert int(F.add(ONE, ONE)) == 0x40000000          # plain Python ints work too


# --------------------------------------------------------------------------------------
# Add / sub / mul / fma
N_ARITH = 50000


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_binary_random_exact(op):
    rng = np.random.default_rng(SEED + {"add": 1, "sub": 2, "mul": 3}[op])
    a, b = gen_pairs(rng, N_ARITH, op)
    got = getattr(F, op)(a, b)
    bad = [(hex(x), hex(y), hex(g), hex(ref_arith(op, x, y)))
           for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()) if g != ref_arith(op, x, y)]
    assert not bad, bad[:10]


def test_fma_random_exact():
    rng = np.random.default_rng(SEED + 7)
    a, b, c = gen_triples(rng, N_ARITH)
    got = F.fma(a, b, c)
    bad = []
    for x, y, z, g in zip(a.tolist(), b.tolist(), c.tolist(), got.tolist()):
        r = ref_arith("fma", x, y, z)
        if g != r:
            bad.append((hex(x), hex(y), hex(z), hex(g), hex(r)))
    assert not bad, bad[:10]


def h(x):
    return f2b(x) if isinstance(x, float) else x


@pytest.mark.parametrize("a,b,expect", [
    (PZERO, NZERO, PZERO), (NZERO, NZERO, NZERO), (NZERO, PZERO, PZERO),
    (ONE, MONE, PZERO), (PINF, NINF, DNAN), (PINF, PINF, PINF), (NINF, ONE, NINF),
    (MAXF, MAXF, PINF), (MAXF, 0x72FFFFFF, MAXF),
    (MAXF, 0x73000000, PINF),                  # MAXF + half ulp = 2^128 - 2^103: rounds to inf (IEEE)
    (MIND, MIND, 0x00000002), (0x807FFFFF, MIND, 0x807FFFFE), (0x00400000, 0x00400000, MINN),
    (ONE, 0x33800000, ONE), (ONE, 0x33800001, 0x3F800001),          # 1 + 2^-24: tie to even
    (0x3F800001, 0x33800000, 0x3F800002),
    (QNAN | 5, ONE, QNAN | 5), (ONE, SNAN, 0x7FC00001), (0xFF800002, SNAN, 0xFFC00002),
    (PINF, QNAN, QNAN),
])
def test_add_corners(a, b, expect):
    assert int(F.add(U32(a), U32(b))) == expect


@pytest.mark.parametrize("a,b,expect", [
    (PZERO, PZERO, PZERO), (NZERO, PZERO, NZERO), (PZERO, NZERO, PZERO), (NZERO, NZERO, PZERO),
    (ONE, ONE, PZERO), (PINF, PINF, DNAN), (ONE, QNAN | 0x80000000, 0xFFC00000),
])
def test_sub_corners(a, b, expect):
    assert int(F.sub(U32(a), U32(b))) == expect


@pytest.mark.parametrize("a,b,expect", [
    (PZERO, PINF, DNAN), (NINF, PZERO, DNAN), (NZERO, ONE, NZERO), (NZERO, NZERO, PZERO),
    (MAXF, f2b(2.0), PINF), (MIND, f2b(0.5), PZERO), (0x00000003, f2b(0.5), 0x00000002),
    (MIND, f2b(1.5), 0x00000002), (MINN, f2b(0.5), 0x00400000), (0x80000001, f2b(0.25), NZERO),
    (f2b(3.0), SNAN, 0x7FC00001), (SNAN | 0x80000000, QNAN, 0xFFC00001),
])
def test_mul_corners(a, b, expect):
    assert int(F.mul(U32(a), U32(b))) == expect


@pytest.mark.parametrize("a,b,c,expect", [
    (NZERO, ONE, PZERO, PZERO),          # -0*1 + +0 = +0
    (NZERO, ONE, NZERO, NZERO),          # -0 + -0 = -0
    (ONE, ONE, MONE, PZERO),             # exact cancellation -> +0
    (PZERO, PINF, ONE, DNAN), (PINF, ONE, NINF, DNAN), (PINF, ONE, PINF, PINF),
    (PZERO, PINF, QNAN | 3, QNAN | 3),   # a NaN operand wins over the invalid 0 * inf
    (QNAN | 1, SNAN, QNAN | 2, QNAN | 1), (ONE, SNAN | 4, QNAN | 2, 0x7FC00005),
    (ONE, ONE, SNAN, 0x7FC00001),
    (MAXF, f2b(2.0), NINF, NINF), (MAXF, f2b(2.0), 0xFF7FFFFF, MAXF),   # overflowing product, exact result
    (MAXF, f2b(1.0), 0x72FFFFFF, MAXF), (MAXF, f2b(1.0), 0x73000000, PINF),
    # double-rounding trap: (1 + 2^-23)(1 - 2^-23)... products whose float64 sum ties
    (f2b(1.0 + 2 ** -23), f2b(1.0 + 2 ** -23), f2b(-1.0), f2b(2 ** -22 + 2 ** -46)),
    (f2b(1.0 + 2 ** -12), f2b(1.0 - 2 ** -12), f2b(-(2 ** -30)), None),
    (MIND, f2b(0.5), PZERO, PZERO), (MIND, f2b(0.5), MIND, 0x00000002),  # tie at 1.5 denormal ulps
    (MIND, f2b(0.5), 0x80000000, PZERO),
])
def test_fma_corners(a, b, c, expect):
    if expect is None:
        expect = ref_arith("fma", a, b, c)
    assert int(F.fma(U32(a), U32(b), U32(c))) == expect


def test_fma_single_rounding_vs_double_rounding():
    # a*b + c whose float64 sum rounds to a float32 midpoint: a naive float64 fma double-rounds.
    a, b = 1.0 + 2 ** -23, 1.0 + 2 ** -23         # exact product 1 + 2^-22 + 2^-46
    for c in (2.0 ** -24, -(2.0 ** -24), 2.0 ** -25 + 2.0 ** -50):
        got = int(F.fma(U32(f2b(a)), U32(f2b(b)), U32(f2b(c))))
        assert got == ref_arith("fma", f2b(a), f2b(b), f2b(c))
    rng = np.random.default_rng(SEED + 11)
    # products with 48-bit significands plus addends far below: every result near a midpoint
    ma = rng.integers(1 << 23, 1 << 24, 4000)
    mb = rng.integers(1 << 23, 1 << 24, 4000)
    a = (ma.astype(np.float64) * 2.0 ** -23).astype(np.float32)
    b = (mb.astype(np.float64) * 2.0 ** -23).astype(np.float32)
    p = a.astype(np.float64) * b.astype(np.float64)
    p32 = p.astype(np.float32)
    mid = (p32.astype(np.float64) + np.nextafter(p32, np.float32(8)).astype(np.float64)) / 2
    c = ((mid - p) * rng.choice([0.999, 1.0, 1.001, 2 ** -30], 4000)).astype(np.float32)
    ab, bb, cb = a.view(U32), b.view(U32), c.view(U32)
    got = F.fma(ab, bb, cb)
    exp = [ref_arith("fma", x, y, z) for x, y, z in zip(ab.tolist(), bb.tolist(), cb.tolist())]
    assert got.tolist() == exp


# --------------------------------------------------------------------------------------
# Min / max
def ref_minmax(kind, a, b):
    fa, fb = b2f(a), b2f(b)
    na, nb = is_nan(a), is_nan(b)
    sa, sb = na and not (a & 0x400000), nb and not (b & 0x400000)
    if kind in ("min_num", "max_num"):
        if na and nb:
            return quiet(a)
        if na:
            return b
        if nb:
            return a
    else:
        if sa:
            return quiet(a)
        if sb:
            return quiet(b)
        if na:
            return a
        if nb:
            return b
    lt = fa < fb or (fa == 0 and fb == 0 and a == NZERO and b == PZERO)
    gt = fa > fb or (fa == 0 and fb == 0 and a == PZERO and b == NZERO)
    if kind in ("min_num", "minimum"):
        return a if lt else b
    return a if gt else b


EDGE = [PZERO, NZERO, PINF, NINF, QNAN, QNAN | 0x80000123, SNAN, 0xFF800009, MIND, 0x80000001,
        MINN, MAXF, 0xFF7FFFFF, ONE, MONE, f2b(0.5), f2b(-2.5), f2b(1e-30), 0x007FFFFF]


@pytest.mark.parametrize("kind", ["min_num", "max_num", "minimum", "maximum"])
def test_minmax(kind):
    a = np.array([x for x in EDGE for _ in EDGE], U32)
    b = np.array([y for _ in EDGE for y in EDGE], U32)
    rng = np.random.default_rng(SEED + 3)
    ra, rb = gen_pairs(rng, 5000)
    a, b = np.concatenate([a, ra]), np.concatenate([b, rb])
    got = getattr(F, kind)(a, b).tolist()
    exp = [ref_minmax(kind, x, y) for x, y in zip(a.tolist(), b.tolist())]
    assert got == exp


def test_minmax_signed_zero_and_nan_examples():
    assert int(F.min_num(U32(PZERO), U32(NZERO))) == NZERO
    assert int(F.min_num(U32(NZERO), U32(PZERO))) == NZERO
    assert int(F.max_num(U32(NZERO), U32(PZERO))) == PZERO
    assert int(F.min_num(U32(SNAN), U32(ONE))) == ONE          # 2019 minimumNumber: number wins
    assert int(F.max_num(U32(QNAN), U32(SNAN))) == QNAN
    assert int(F.max_num(U32(SNAN), U32(QNAN | 7))) == 0x7FC00001
    assert int(F.minimum(U32(ONE), U32(SNAN))) == 0x7FC00001
    assert int(F.minimum(U32(QNAN | 2), U32(SNAN))) == 0x7FC00001  # sNaN has priority
    assert int(F.maximum(U32(NZERO), U32(PZERO))) == PZERO
    assert int(F.minimum(U32(NZERO), U32(PZERO))) == NZERO


def test_med3_and_clamp():
    v = lambda *x: np.array([f2b(float(t)) if not isinstance(t, int) else t for t in x], U32)
    assert F.med3_num(v(1.0), v(3.0), v(2.0)).tolist() == [f2b(2.0)]
    assert F.med3_num(v(QNAN), v(3.0), v(2.0)).tolist() == [f2b(2.0)]    # min3 when a NaN is present
    # -0 is inside [0, 1] and stays -0 (docs/model.md, "VOP3 clamp of -0")
    assert F.clamp01(v(QNAN, NZERO, -3.0, 0.25, 7.0, PINF)).tolist() == [0, NZERO, 0, f2b(0.25), ONE, ONE]


# --------------------------------------------------------------------------------------
# Compares and class
def ref_cmp(cond, a, b):
    x, y = b2f(a), b2f(b)
    un = math.isnan(x) or math.isnan(y)
    base = {"f": False, "lt": x < y, "eq": x == y, "le": x <= y, "gt": x > y,
            "lg": (x < y) or (x > y), "ge": x >= y, "o": not un, "u": un, "t": True}
    if cond in base:
        return base[cond]
    return not base[{"nge": "ge", "nlg": "lg", "ngt": "gt", "nle": "le", "neq": "eq", "nlt": "lt"}[cond]]


@pytest.mark.parametrize("cond", F.CMP_CONDITIONS)
def test_compares(cond):
    a = np.array([x for x in EDGE for _ in EDGE], U32)
    b = np.array([y for _ in EDGE for y in EDGE], U32)
    rng = np.random.default_rng(SEED + 5)
    ra, rb = gen_pairs(rng, 3000)
    a, b = np.concatenate([a, ra, ra]), np.concatenate([b, rb, ra])
    got = F.compare(cond, a, b)
    assert got.dtype == bool
    assert got.tolist() == [ref_cmp(cond, x, y) for x, y in zip(a.tolist(), b.tolist())]
    assert F.compare(F.CMP_CONDITIONS.index(cond), a, b).tolist() == got.tolist()
    assert getattr(F, "cmp_" + cond)(a, b).tolist() == got.tolist()


def test_cmp_class():
    cases = {0: [SNAN, 0xFF800001, 0x7FBFFFFF], 1: [QNAN, 0xFFC00000, 0x7FFFFFFF], 2: [NINF],
             3: [MONE, 0xFF7FFFFF, 0x80800000], 4: [0x80000001, 0x807FFFFF], 5: [NZERO], 6: [PZERO],
             7: [MIND, 0x007FFFFF], 8: [ONE, MAXF, MINN], 9: [PINF]}
    for cls, vals in cases.items():
        for v in vals:
            for mask in range(0, 1 << 10, 7):
                assert bool(F.cmp_class(U32(v), U32(mask))) == bool(mask >> cls & 1), (hex(v), cls)
            assert bool(F.cmp_class(U32(v), U32(1 << cls)))
            assert not F.cmp_class(U32(v), U32(0x3FF ^ (1 << cls)))


# --------------------------------------------------------------------------------------
# Conversions and rounding
def test_cvt_f32_from_int():
    rng = np.random.default_rng(SEED + 9)
    xs = np.concatenate([rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(U32),
                         np.array([0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x7FFFFFC0, 0x7FFFFFBF,
                                   0x01000001, 0x01000003, 0xFFFFFF7F, 0xFFFFFF80], U32)])
    gi, gu = F.cvt_f32_i32(xs).tolist(), F.cvt_f32_u32(xs).tolist()
    for x, ri, ru in zip(xs.tolist(), gi, gu):
        assert ri == round_f32(Fraction(x - (1 << 32) if x >> 31 else x)), hex(x)
        assert ru == round_f32(Fraction(x)), hex(x)


def test_cvt_int_from_f32():
    rng = np.random.default_rng(SEED + 10)
    xs = np.concatenate([gen_operands(rng, 20000),
                         np.array([f2b(v) for v in (2.0 ** 31, -2.0 ** 31, 2.0 ** 32, -0.99, 0.99,
                                                    2147483520.0, 4294967040.0, -1.0, 1e30, -1e30)], U32),
                         np.array([QNAN, SNAN, PINF, NINF, NZERO, MIND, 0xFFC00000], U32)])
    gi, gu = F.cvt_i32_f32(xs).tolist(), F.cvt_u32_f32(xs).tolist()
    for x, ri, ru in zip(xs.tolist(), gi, gu):
        if is_nan(x):
            ei = eu = 0
        elif is_inf(x):
            ei, eu = (0x80000000, 0) if x >> 31 else (0x7FFFFFFF, 0xFFFFFFFF)
        else:
            t = math.trunc(to_frac(x))
            ei = min(max(t, -(1 << 31)), (1 << 31) - 1) & 0xFFFFFFFF
            eu = min(max(t, 0), (1 << 32) - 1)
        assert (ri, ru) == (ei, eu), hex(x)


def ref_round_int(kind, x):
    if is_nan(x):
        return quiet(x)
    if is_inf(x) or (x & 0x7FFFFFFF) == 0:
        return x
    v = to_frac(x)
    if kind == "floor":
        r = math.floor(v)
    elif kind == "ceil":
        r = math.ceil(v)
    elif kind == "trunc":
        r = math.trunc(v)
    else:
        r = round(v)          # Fraction.__round__ rounds half to even
    return round_f32(Fraction(r), x >> 31)   # a zero result keeps the sign of x


@pytest.mark.parametrize("kind", ["floor", "ceil", "trunc", "rndne"])
def test_round_to_integral(kind):
    rng = np.random.default_rng(SEED + 12)
    halves = np.array([f2b(k + 0.5) for k in range(-6, 6)] + [f2b(-0.3), f2b(0.49999997), f2b(-0.49999997),
                      f2b(8388607.5), f2b(-8388609.0), f2b(1e-40), f2b(-1e-40)], U32)
    xs = np.concatenate([gen_operands(rng, 10000), halves, np.array(EDGE, U32)])
    got = getattr(F, kind)(xs).tolist()
    assert got == [ref_round_int(kind, x) for x in xs.tolist()]


def test_rndne_examples():
    v = lambda *x: np.array([f2b(t) for t in x], U32)
    assert F.rndne(v(0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997)).tolist() == \
        [PZERO, f2b(2.0), f2b(2.0), NZERO, f2b(-2.0), PZERO]


def test_fract():
    rng = np.random.default_rng(SEED + 13)
    xs = np.concatenate([gen_operands(rng, 10000), np.array(EDGE, U32),
                         np.array([f2b(-1e-10), f2b(-2 ** -25), f2b(-1.25), f2b(1.25), f2b(2.0 ** 30)], U32)])
    got = F.fract(xs).tolist()
    for x, g in zip(xs.tolist(), got):
        if is_nan(x):
            e = quiet(x)
        elif is_inf(x):
            e = DNAN
        else:
            v = to_frac(x)
            d = round_f32(v - math.floor(v))          # x - floor(x) rounded once (+0 for integers)
            e = min(d, 0x3F7FFFFF)
        assert g == e, hex(x)
    assert int(F.fract(U32(f2b(-1e-10)))) == 0x3F7FFFFF
    assert int(F.fract(U32(NZERO))) == PZERO


def test_ldexp():
    rng = np.random.default_rng(SEED + 14)
    a = gen_operands(rng, 20000)
    n = rng.integers(-300, 300, 20000).astype(np.int32)
    n[:50] = [-(1 << 31), (1 << 31) - 1, 0, 1, -1] * 10
    n = n.view(U32)
    got = F.ldexp(a, n).tolist()
    for x, k, g in zip(a.tolist(), n.tolist(), got):
        k = k - (1 << 32) if k >> 31 else k
        if is_nan(x):
            e = quiet(x)
        elif is_inf(x):
            e = x
        else:
            kr = max(min(k, 400), -400)               # |x| in [2^-149, 2^128): beyond +-400 it saturates
            e = round_f32(to_frac(x) * Fraction(2) ** kr, x >> 31)
        assert g == e, (hex(x), k)
    assert int(F.ldexp(U32(0x00000003), U32(0xFFFFFFFF))) == 0x00000002       # 1.5 denormal ulps: tie to even
    assert int(F.ldexp(U32(0x00000001), U32(0xFFFFFFFF))) == PZERO


def test_frexp():
    rng = np.random.default_rng(SEED + 15)
    xs = np.concatenate([gen_operands(rng, 5000), np.array(EDGE, U32)])
    gm, ge = F.frexp_mant(xs).tolist(), F.frexp_exp(xs).tolist()
    for x, m, e in zip(xs.tolist(), gm, ge):
        if is_nan(x):
            assert (m, e) == (quiet(x), 0)
        elif is_inf(x) or (x & 0x7FFFFFFF) == 0:
            assert (m, e) == (x, 0)
        else:
            fm, fe = math.frexp(b2f(x))
            assert (m, e) == (f2b(fm), fe & 0xFFFFFFFF), hex(x)
    assert F.frexp_exp(U32(MIND)).view(np.int32) == -148


# --------------------------------------------------------------------------------------
# Transcendentals
N_TRANS = 200000


def trans_inputs(rng, positive=False):
    n = N_TRANS
    u = rng.integers(0, 1 << 32, n // 2, dtype=np.uint64).astype(U32)          # every region
    m = rng.integers(0, 1 << 23, n // 2).astype(U32)
    e = rng.integers(100, 160, n // 2).astype(U32)                              # exp's interesting range
    s = rng.integers(0, 2, n // 2).astype(U32) << U32(31)
    focus = s | (e << U32(23)) | m
    pow2 = np.arange(0, 255, dtype=U32) << U32(23)
    pow2 = np.concatenate([pow2[1:], U32(1) << np.arange(23, dtype=U32)])        # normal and denormal powers of two
    near1 = (U32(ONE) + np.arange(-300, 300).astype(np.int64)).astype(U32)
    xs = np.concatenate([u, focus, pow2, pow2 | U32(0x80000000), near1, np.array(EDGE, U32)])
    return xs & U32(0x7FFFFFFF) if positive else xs


def ulp_error(got_bits, ref):
    """|got - ref| in float32 ulps of ref (float64 reference values).

    An infinite result counts as 2^128 (one ulp above MAXF); it is exact for |ref| >= 2^128."""
    g = got_bits.view(np.float32).astype(np.float64)
    ginf = np.isinf(g)
    g = np.where(ginf, np.copysign(2.0 ** 128, g), g)
    a = np.abs(ref)
    ex = np.where(a > 0, np.floor(np.log2(np.where(a > 0, a, 1.0))), -126)
    ulp = np.exp2(np.clip(ex, -126, 127) - 23)
    err = np.abs(g - ref) / ulp
    return np.where(ginf & (a >= 2.0 ** 128) & (np.sign(g) == np.sign(ref)), 0.0, err)


def check_trans(fn, ref, xs, valid):
    with np.errstate(all="ignore"):
        got = fn(xs)
    v = valid(xs)
    refv = np.array([ref(b2f(x)) for x in xs[v].tolist()])
    err = ulp_error(got[v], refv)
    worst = int(np.argmax(err))
    assert err.max() <= 1.0, (hex(int(xs[v][worst])), float(err[worst]))
    return got, float(err.max())


def finite_pos(xs):
    return ((xs & U32(0x7FFFFFFF)) < U32(PINF)) & ((xs >> U32(31)) == 0) & ((xs & U32(0x7FFFFFFF)) != 0)


def finite_nonzero(xs):
    return ((xs & U32(0x7FFFFFFF)) < U32(PINF)) & ((xs & U32(0x7FFFFFFF)) != 0)


# The transcendental unit reads denormal sources as zeros and flushes denormal results (LLVM
# AMDGPU; tests/test_model_floatmode.py checks those cases): accuracy is checked on normals.
def normal(xs):
    return (xs & U32(0x7F800000)) != 0


def rcp_normal(xs):
    """Normal sources with a normal reciprocal (|x| <= 2^126)."""
    return finite_nonzero(xs) & normal(xs) & ((xs & U32(0x7FFFFFFF)) <= U32(0x7E800000))


def pos_normal(xs):
    return finite_pos(xs) & normal(xs)


def test_rcp_accuracy_and_exact_rounding():
    rng = np.random.default_rng(SEED + 20)
    xs = trans_inputs(rng)
    got, _ = check_trans(F.rcp, lambda x: 1.0 / x, xs, rcp_normal)
    # correctly rounded: exact rational reference on a subset covering every region
    sub = np.concatenate([xs[:20000], xs[N_TRANS:]])
    gs = F.rcp(sub).tolist()
    for x, g in zip(sub.tolist(), gs):
        if rcp_normal(np.array([x], U32))[0]:
            assert g == round_f32(1 / to_frac(x)), hex(x)


def midpoint_bracket(c):
    """Exact midpoints between positive finite float32 c and its neighbours."""
    lo = (to_frac(c - 1) + to_frac(c)) / 2 if c > 0 else Fraction(0)
    hi = (to_frac(c) + (to_frac(c + 1) if c + 1 < PINF else Fraction(2) ** 128)) / 2
    return lo, hi


def test_sqrt_accuracy_and_exact_rounding():
    rng = np.random.default_rng(SEED + 21)
    xs = trans_inputs(rng)
    got, _ = check_trans(F.sqrt, math.sqrt, xs, pos_normal)
    sub = np.concatenate([xs[:20000], xs[N_TRANS:]])
    for x, c in zip(sub.tolist(), F.sqrt(sub).tolist()):
        if pos_normal(np.array([x], U32))[0]:
            v = to_frac(x)
            lo, hi = midpoint_bracket(c)
            assert lo * lo < v < hi * hi, hex(x)     # strict: sqrt never lands on a midpoint


def test_rsq_accuracy_and_exact_rounding():
    rng = np.random.default_rng(SEED + 22)
    xs = trans_inputs(rng)
    got, _ = check_trans(F.rsq, lambda x: 1.0 / math.sqrt(x), xs, pos_normal)
    sub = np.concatenate([xs[:20000], xs[N_TRANS:]])
    for x, c in zip(sub.tolist(), F.rsq(sub).tolist()):
        if pos_normal(np.array([x], U32))[0]:
            v = to_frac(x)
            lo, hi = midpoint_bracket(c)
            if to_frac(c) ** 2 * v == 1:
                continue                             # exact result (x a power of 4)
            assert lo * lo * v < 1 < hi * hi * v, hex(x)


def test_exp_accuracy():
    rng = np.random.default_rng(SEED + 23)
    xs = trans_inputs(rng)
    extra = np.array([f2b(v) for v in np.arange(-160, 130, 0.25)], U32)          # integers and quarters
    xs = np.concatenate([xs, extra, (U32(f2b(128.0)) - np.arange(1, 200).astype(U32)),
                         (U32(f2b(-149.0)) + np.arange(0, 4000, 7).astype(U32)),
                         (U32(f2b(-126.0)) + np.arange(0, 4000, 7).astype(U32))])
    normal_result = xs.view(np.float32) >= -126.0                                 # 2^x normal
    got, _ = check_trans(F.exp, math.exp2, xs,
                         lambda x: ((x & U32(0x7FFFFFFF)) < U32(f2b(1000.0))) & normal_result)
    ints = np.array([f2b(float(k)) for k in range(-149, 128)], U32)
    assert F.exp(ints).tolist() == [round_f32(Fraction(2) ** k) if k >= -126 else 0 for k in range(-149, 128)]


def test_log_accuracy():
    rng = np.random.default_rng(SEED + 24)
    xs = trans_inputs(rng, positive=True)
    got, _ = check_trans(F.log, math.log2, xs, pos_normal)
    pows = np.concatenate([U32(1) << np.arange(23, dtype=U32), np.arange(1, 255, dtype=U32) << U32(23)])
    assert F.log(pows).tolist() == [NINF] * 23 + [f2b(float(k)) for k in range(-126, 128)]


@pytest.mark.parametrize("fn,x,expect", [
    ("rcp", PZERO, PINF), ("rcp", NZERO, NINF), ("rcp", PINF, PZERO), ("rcp", NINF, NZERO),
    ("rcp", SNAN, 0x7FC00001), ("rcp", ONE, ONE), ("rcp", f2b(-4.0), f2b(-0.25)),
    ("rcp", MIND, PINF), ("rcp", 0x00200000, PINF), ("rcp", 0x00400000, PINF),    # denormal sources
    ("rcp", MAXF, PZERO), ("rcp", 0x7F000000, PZERO), ("rcp", 0xFF7FFFFE, NZERO),   # denormal results
    ("rcp", 0x7E800000, MINN),
    ("sqrt", PZERO, PZERO), ("sqrt", NZERO, NZERO), ("sqrt", PINF, PINF), ("sqrt", NINF, DNAN),
    ("sqrt", MONE, DNAN), ("sqrt", 0x80000001, NZERO), ("sqrt", f2b(4.0), f2b(2.0)), ("sqrt", MIND, PZERO),
    ("sqrt", QNAN | 9, QNAN | 9),
    ("rsq", PZERO, PINF), ("rsq", NZERO, NINF), ("rsq", PINF, PZERO), ("rsq", NINF, DNAN),
    ("rsq", MONE, DNAN), ("rsq", f2b(4.0), f2b(0.5)), ("rsq", f2b(0.25), f2b(2.0)), ("rsq", MIND, PINF),
    ("rsq", 0x80000001, NINF),
    ("rsq", SNAN | 0x80000000, 0xFFC00001),
    ("exp", PZERO, ONE), ("exp", NZERO, ONE), ("exp", PINF, PINF), ("exp", NINF, PZERO),
    ("exp", f2b(128.0), PINF), ("exp", f2b(-150.0), PZERO), ("exp", f2b(-149.0), PZERO), ("exp", MIND, ONE),
    ("exp", f2b(-126.0), MINN), ("exp", f2b(127.0), 0x7F000000), ("exp", f2b(-1000.0), PZERO),
    ("exp", f2b(1e-30), ONE), ("exp", f2b(-1e-30), ONE), ("exp", QNAN, QNAN),
    ("log", PZERO, NINF), ("log", NZERO, NINF), ("log", PINF, PINF), ("log", NINF, DNAN),
    ("log", MONE, DNAN), ("log", 0x80000001, NINF), ("log", ONE, PZERO), ("log", MIND, NINF),
    ("log", f2b(0.5), MONE), ("log", SNAN, 0x7FC00001),
])
def test_transcendental_specials(fn, x, expect):
    got = int(getattr(F, fn)(U32(x)))
    assert got == expect, hex(got)


def test_rcp_sqrt_exhaustive_mantissas_one_binade():
    """Every mantissa in [1, 2) (and [2, 4) for sqrt): the result depends only on it."""
    m = np.arange(1 << 23, dtype=U32)
    for fn, ex, ref in ((F.rcp, 127, lambda v: 1.0 / v), (F.sqrt, 127, np.sqrt), (F.sqrt, 128, np.sqrt)):
        xs = m | U32(ex << 23)
        # float64 then float32: double rounding is innocuous for / and sqrt (53 >= 2*24 + 2)
        exp = ref(xs.view(np.float32).astype(np.float64)).astype(np.float32).view(U32)
        assert np.array_equal(fn(xs), exp)


# --------------------------------------------------------------------------------------
# ROM tables: regenerate from the defining formulas (docs/fp32.md)
def test_tables_match_formulas():
    getcontext().prec = 80
    ln2 = Decimal(2).ln()

    def rnd(d):
        return int((d + Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR"))

    def iroot(n, k):
        lo, hi = 0, 1 << (n.bit_length() // k + 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if mid ** k <= n else (lo, mid - 1)
        return lo

    # rcp seed: round(2^16 * 2/(lo+hi)) on [1 + i/128, 1 + (i+1)/128]
    assert list(F.RCP_T0) == [round(Fraction(2 ** 16 * 2 * 128, 257 + 2 * i)) for i in range(128)]
    # rsq seed: round(2^16 * sqrt(2/(lo+hi))) on [1 + j/64, ...) (p = 0) and [2 + j/32, ...) (p = 1)
    rsq = []
    for p in range(2):
        for j in range(64):
            s = Fraction((129 + 2 * j) * (1 + p), 64)
            four_v = math.floor(4 * Fraction(2 ** 33) / s)
            rsq.append((isqrt(four_v) + 1) // 2)
    assert list(F.RSQ_T0) == rsq
    assert list(F.EXP2_T) == [(iroot(2 ** (32 * 64 + j), 64) + 1) // 2 for j in range(64)]
    assert [F.EXP2_C1, F.EXP2_C2, F.EXP2_C3] == [rnd(ln2 ** k / math.factorial(k) * 2 ** 30) for k in (1, 2, 3)]
    c = [1024] + [round(Fraction(2 ** 18, 257 + 2 * i)) for i in range(1, 127)] + [512]
    assert list(F.LOG2_C) == c
    assert list(F.LOG2_L) == [rnd((10 - Decimal(v).ln() / ln2) * 2 ** 52) for v in c]
    assert [F.LOG2_P0, F.LOG2_P1, F.LOG2_P2, F.LOG2_P3] == [
        rnd(Decimal((-1) ** k) / ((k + 1) * ln2) * 2 ** 32) for k in range(4)]
    assert max(F.RCP_T0) < 1 << 16 and max(F.RSQ_T0) < 1 << 16 and max(F.EXP2_T) < 1 << 32
