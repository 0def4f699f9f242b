"""16-bit float VALU opcodes on the model (sim/fp16.py, sim/valu_f16.py), through llvm-mc,
the decoder and the handlers: exact goldens from fractions / 70-digit decimals (one rounding
to binary16 from the exact value), the op_sel and e32 high-half operand rules, the kept
destination half, and a kernel of clang-19 ``half`` code run on the model."""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from isa import decode
from sim import execute
from sim.wave import EXEC, Wave
from tests import clkernel, laneops
from tests.asmutil import needs_llvm
from tests.fpexact import sin_turns, to_bits, value
from tests.fpgolden import exact_or_special16, fl16, fma16, is_nan16

pytestmark = needs_llvm
U32 = np.uint32
SEED = 20250704
LANES = 32
DNAN = 0xFE00
INF = 0x7C00
SPECIAL = [0, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00,
           0x7C01, 0xFE55, 0x3C00, 0xBC00, 0x3BFF, 0x3C01, 0x3800, 0x4200, 0x5640]


def halves(rng, n):
    """Random binary16 patterns: raw bits, moderate exponents, denormals, specials."""
    k = n // 4
    e = rng.integers(10, 21, k)
    mid = (rng.integers(0, 2, k) << 15) | (e << 10) | rng.integers(0, 1024, k)
    den = (rng.integers(0, 2, k) << 15) | rng.integers(0, 0x800, k)
    out = np.concatenate([rng.integers(0, 1 << 16, k), mid, den, rng.choice(SPECIAL, n - 3 * k)])
    return [int(x) for x in out[rng.permutation(n)]]


def run_op(op, srcs, tail="", dst_old=0):
    """``op v40, v0[, v1, v2]`` (low halves) over the lane values; the results' low halves."""
    out = []
    for k in range(0, len(srcs[0]), LANES):
        regs = {i: np.resize(np.array(x[k:k + LANES], np.uint64), LANES) for i, x in enumerate(srcs)}
        regs[40] = dst_old
        names = ", ".join(f"v{i}" for i in range(len(srcs)))
        w = laneops.run(f"{op} v40, {names}{tail}", v=regs)
        out += [int(x) for x in w.v[40][: min(LANES, len(srcs[0]) - k)]]
    return out


BINARY = {
    "v_add_f16_e32": (lambda a, b: a + b, lambda a, b: a + b),
    "v_sub_f16_e32": (lambda a, b: a - b, lambda a, b: a - b),
    "v_subrev_f16_e32": (lambda a, b: b - a, lambda a, b: b - a),
    "v_mul_f16_e32": (lambda a, b: a * b, lambda a, b: a * b),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_arithmetic(op):
    rng = np.random.default_rng(SEED)
    a, b = halves(rng, 640), halves(rng, 640)
    exact_fn, float_fn = BINARY[op]
    got = run_op(op, [a, b])
    for x, y, g in zip(a, b, got):
        order = [y, x] if "subrev" in op else [x, y]
        want = exact_or_special16(order, [fl16(v) for v in order],
                                 lambda p, q: exact_fn(*([q, p] if "subrev" in op else [p, q])),
                                 lambda p, q: float_fn(*([q, p] if "subrev" in op else [p, q])))
        assert g & 0xFFFF == want, f"{op} {x:04x} {y:04x}: got {g & 0xFFFF:04x} want {want:04x}"


def test_fma_and_fmac():
    """v_fma_f16 (VOP3) and v_fmac_f16 (VOP2, the destination's low half as addend): one
    rounding of a*b + c."""
    rng = np.random.default_rng(SEED + 1)
    a, b, c = halves(rng, 512), halves(rng, 512), halves(rng, 512)
    want = [fma16(x, y, z) for x, y, z in zip(a, b, c)]
    assert [g & 0xFFFF for g in run_op("v_fma_f16", [a, b, c])] == want
    out = []
    for k in range(0, 512, LANES):
        w = laneops.run("v_fmac_f16_e32 v2, v0, v1",
                        v={0: a[k:k + LANES], 1: b[k:k + LANES], 2: [0xABCD0000 | z for z in c[k:k + LANES]]})
        out += [int(x) for x in w.v[2]]
    assert [g & 0xFFFF for g in out] == want and all(g >> 16 == 0xABCD for g in out)


def test_conversions():
    """f32 -> f16 rounds once from the float32 value (no double rounding); f16 -> f32 exact;
    16-bit integers both ways (truncation and saturation, NaN -> 0)."""
    rng = np.random.default_rng(SEED + 2)
    f32 = [int(x) for x in rng.integers(0, 1 << 32, 256, dtype=np.uint64)]
    f32 += [0x3380_0000, 0x3380_0001, 0x3370_0000, 0x477F_F000, 0x477F_EFFF, 0x477F_F001,   # ties
            0x3F80_1000, 0x3F80_3000, 0x3F80_1001, 0x7F80_0000, 0x7FC0_1234, 0xFF80_2000]
    want = []
    for x in f32:
        if (x & 0x7FFF_FFFF) > 0x7F80_0000:
            want.append((x >> 16 & 0x8000) | 0x7E00 | (x >> 13 & 0x3FF))
        elif (x & 0x7FFF_FFFF) == 0x7F80_0000:
            want.append((x >> 16 & 0x8000) | INF)
        else:
            v = value(x)
            want.append(to_bits(v, 16) if v != 0 else (x >> 16 & 0x8000))
    assert [g & 0xFFFF for g in run_op("v_cvt_f16_f32_e32", [f32])] == want
    h = halves(rng, 256)
    got = run_op("v_cvt_f32_f16_e32", [h])
    for x, g in zip(h, got):
        if is_nan16(x):
            assert g == (x & 0x8000) << 16 | 0x7FC0_0000 | (x & 0x3FF) << 13
        elif (x & 0x7FFF) == INF:
            assert g == (x & 0x8000) << 16 | 0x7F80_0000
        else:
            assert value(g) == value(x, 16) and g >> 31 == x >> 15
    ints = [int(x) for x in rng.integers(0, 1 << 16, 256)] + [0xFFFF, 0x7FFF, 0x8000, 0xFFE0, 2049]
    assert [g & 0xFFFF for g in run_op("v_cvt_f16_u16_e32", [ints])] == [to_bits(Fraction(i), 16) for i in ints]
    signed = [i - (1 << 16) if i >> 15 else i for i in ints]
    assert [g & 0xFFFF for g in run_op("v_cvt_f16_i16_e32", [ints])] == [to_bits(Fraction(i), 16) for i in signed]
    for op, lo, hi in (("v_cvt_u16_f16_e32", 0, 0xFFFF), ("v_cvt_i16_f16_e32", -(1 << 15), (1 << 15) - 1)):
        got = run_op(op, [h])
        for x, g in zip(h, got):
            want = 0 if is_nan16(x) else max(lo, min(hi, math.trunc(fl16(x)) if math.isfinite(fl16(x))
                                                    else (hi if x < 0x8000 else lo)))
            assert g & 0xFFFF == want & 0xFFFF, (op, hex(x))


def test_pack_rtz():
    """v_cvt_pk_rtz_f16_f32: both values rounded toward zero; S0 in the low half."""
    xs = [0x3F80_1FFF, 0xBF80_1FFF, 0x477F_FFFF, 0x7F80_0000, 0x3380_0001, 0x4780_0000, 0xC780_0000]
    ys = list(reversed(xs))
    got = run_op("v_cvt_pk_rtz_f16_f32_e32", [xs, ys])

    def rtz(x):
        if (x & 0x7FFF_FFFF) == 0x7F80_0000:
            return (x >> 16 & 0x8000) | INF
        v = value(x)
        r = to_bits(v, 16)
        if (r & 0x7FFF) == INF or abs(value(r, 16)) > abs(v):
            r -= 1
        return r
    assert got == [rtz(x) | rtz(y) << 16 for x, y in zip(xs, ys)]


def _cmp_golden(cond, a, b):
    if cond in ("o", "u"):
        un = is_nan16(a) or is_nan16(b)
        return un if cond == "u" else not un
    fa, fb = fl16(a), fl16(b)
    base = {"lt": fa < fb, "eq": fa == fb, "le": fa <= fb, "gt": fa > fb, "ge": fa >= fb,
            "lg": fa < fb or fa > fb}
    return base[cond] if cond in base else not base[cond[1:]]


@pytest.mark.parametrize("cond", ["lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg",
                                  "ngt", "nle", "neq", "nlt"])
def test_compares(cond):
    rng = np.random.default_rng(SEED + 3)
    pool = np.array(SPECIAL, np.uint64)
    a, b = [int(x) for x in rng.choice(pool, 32)], [int(x) for x in rng.choice(pool, 32)]
    w = laneops.run(f"v_cmp_{cond}_f16_e32 vcc_lo, v0, v1\nv_cmp_{cond}_f16_e64 s8, v0, v1",
                    v={0: a, 1: b}, exec_mask=0xFFFF_00FF)
    want = sum(1 << k for k in range(32) if _cmp_golden(cond, a[k], b[k]) and 0xFFFF_00FF >> k & 1)
    assert w.s[106] == want and w.s[8] == want


def test_class_and_int16_compares():
    vals = [0x7C01, 0x7E00, 0xFC00, 0xBC00, 0x8001, 0x8000, 0, 0x0001, 0x3C00, 0x7C00] * 3 + [0, 0]
    w = laneops.run("v_cmp_class_f16_e64 s4, v0, v1", v={0: vals, 1: [1 << (k % 10) for k in range(32)]})
    assert w.s[4] == (1 << 30) - 1                      # every value is in its own class
    a = [0x8000, 0x7FFF, 0xFFFF, 1] * 8
    b = [0x7FFF, 0x8000, 1, 0xFFFF] * 8
    w = laneops.run("v_cmp_lt_i16_e32 vcc_lo, v0, v1\nv_cmp_lt_u16_e64 s6, v0, v1\nv_cmpx_gt_i16_e32 v0, v1",
                    v={0: a, 1: b})
    s16 = lambda x: x - 0x10000 if x >> 15 else x
    assert w.s[106] == sum(1 << k for k in range(32) if s16(a[k]) < s16(b[k]))
    assert w.s[6] == sum(1 << k for k in range(32) if a[k] < b[k])
    assert w.s[126] == sum(1 << k for k in range(32) if s16(a[k]) > s16(b[k]))


def _dec(h):
    return Decimal(value(h, 16).numerator) / Decimal(value(h, 16).denominator)


def _unary_golden(op, h):
    if is_nan16(h):
        return h | 0x200
    neg = h >> 15 == 1
    zero, inf = (h & 0x7FFF) == 0, (h & 0x7FFF) == INF
    with localcontext() as ctx:
        ctx.prec = 60
        if op == "sqrt":
            if zero:
                return h
            if neg:
                return DNAN
            return INF if inf else to_bits(Fraction(_dec(h).sqrt()), 16)
        if op == "rcp":
            return (h & 0x8000) | INF if zero else (h & 0x8000) if inf else to_bits(1 / value(h, 16), 16)
        if op == "rsq":
            if zero:
                return (h & 0x8000) | INF
            if neg:
                return DNAN
            return 0 if inf else to_bits(Fraction(1 / _dec(h).sqrt()), 16)
        if op == "exp":
            if inf:
                return 0 if neg else INF
            return to_bits(Fraction((_dec(h) * Decimal(2).ln()).exp()), 16)
        if op == "log":
            if zero:
                return 0xFC00
            if neg:
                return DNAN
            return INF if inf else to_bits(Fraction(_dec(h).ln() / Decimal(2).ln()), 16)
    if op in ("sin", "cos"):
        if inf:
            return DNAN
        r = sin_turns(value(h, 16), op == "cos")
        if abs(r) < Fraction(1, 10 ** 40):
            return 0 if op == "cos" else h & 0x8000
        return to_bits(r, 16)
    if inf or zero:
        return DNAN if op == "fract" and inf else (0 if op == "fract" else h)
    v = value(h, 16)
    r = {"floor": math.floor(v), "ceil": math.ceil(v), "trunc": math.trunc(v),
         "rndne": round(v), "fract": v - math.floor(v)}[op]
    if op == "fract":
        return min(to_bits(Fraction(r), 16), 0x3BFF)
    return to_bits(Fraction(r), 16) if r != 0 else (h & 0x8000)


@pytest.mark.parametrize("op", ["sqrt", "rcp", "rsq", "exp", "log", "sin", "cos", "floor",
                                "ceil", "trunc", "rndne", "fract"])
def test_unary(op):
    rng = np.random.default_rng(SEED + 4)
    h = halves(rng, 192)
    if op in ("sin", "cos"):
        h = [x for x in h if (x & 0x7FFF) < 0x5C00 or (x & 0x7FFF) >= INF]   # |x| < 256
    got = run_op(f"v_{op}_f16_e32", [h])
    bad = [f"{x:04x}: got {g & 0xFFFF:04x} want {_unary_golden(op, x):04x}"
           for x, g in zip(h, got) if g & 0xFFFF != _unary_golden(op, x)]
    assert not bad, "\n".join(bad[:20])


def test_ldexp_frexp():
    rng = np.random.default_rng(SEED + 5)
    h = [x for x in halves(rng, 160) if (x & 0x7FFF) < INF]
    ks = [int(k) & 0xFFFF for k in rng.integers(-30, 30, len(h))]
    got = run_op("v_ldexp_f16_e32", [h, ks])
    for x, k, g in zip(h, ks, got):
        kk = k - 0x10000 if k >> 15 else k
        v = value(x, 16) * Fraction(2) ** kk
        assert g & 0xFFFF == (to_bits(v, 16) if v != 0 else x & 0x8000), (hex(x), kk)
    mant, expo = run_op("v_frexp_mant_f16_e32", [h]), run_op("v_frexp_exp_i16_f16_e32", [h])
    for x, m, e in zip(h, mant, expo):
        if (x & 0x7FFF) == 0:
            assert m & 0xFFFF == x and e & 0xFFFF == 0
            continue
        e16 = (e & 0xFFFF) - 0x10000 if e & 0x8000 else e & 0xFFFF
        assert Fraction(1, 2) <= abs(value(m & 0xFFFF, 16)) < 1
        assert value(m & 0xFFFF, 16) * Fraction(2) ** e16 == value(x, 16)


def test_min_max_family():
    """v_min/max_num_f16 (e32), the three-operand forms and v_minimum/maximum_f16 against the
    FP32 ops on the widened values (they select an operand, so widening is exact)."""
    from sim import fp32 as F
    from sim import fp16 as H
    rng = np.random.default_rng(SEED + 6)
    pool = np.array(SPECIAL, np.uint64)
    a, b, c = ([int(x) for x in rng.choice(pool, 64)] for _ in range(3))
    wide = lambda x: H.to_f32(np.array(x, U32))
    for op, fn, n in [("v_min_num_f16_e32", F.min_num, 2), ("v_max_num_f16_e32", F.max_num, 2),
                      ("v_minimum_f16", F.minimum, 2), ("v_maximum_f16", F.maximum, 2),
                      ("v_med3_num_f16", F.med3_num, 3),
                      ("v_minmax_num_f16", lambda x, y, z: F.max_num(F.min_num(x, y), z), 3)]:
        srcs = [a, b, c][:n]
        got = [g & 0xFFFF for g in run_op(op, srcs)]
        want = [int(H.from_f32_exact(v)) for v in fn(*[wide(s) for s in srcs])]
        assert got == want, op


def test_half_selection_and_kept_half():
    """op_sel picks source halves and the destination half (VOP3); in _e32 forms a VGPR number
    >= 128 names the high half of v(N-128); the other destination half is kept; neg/abs act on
    bit 15; clamp clamps to [0, 1] in f16."""
    w = laneops.run("v_add_f16_e64 v5, v1, v2\nv_fma_f16 v6, v1, v2, v3 op_sel:[1,1,0,1]\n"
                    "v_mul_f16_e64 v7, -|v1|, v2 clamp",
                    v={1: 0x4000_3C00, 2: 0x4400_B800, 3: 0x0000_3800, 5: 0x1111_2222, 6: 0x3333_4444,
                       7: 0x5555_6666})
    assert int(w.v[5][0]) == 0x1111_3800                # 1 + -0.5 = 0.5, high half kept
    assert int(w.v[6][0]) == 0x4840_4444                # hi: 2 * 4 + lo 0.5 = 8.5, low half kept
    assert int(w.v[7][0]) == 0x5555_3800                # -|1| * -0.5 = 0.5 (inside [0, 1])
    # the _e32 high-half encoding: v_add_f16_e32 v1.h-style operands (src0 = v129 -> v1.h)
    word = 0x64000000 | (1 << 17) | ((128 + 2) << 9) | (256 + 128 + 1)    # vdst v1, src0 v1.h, vsrc1 v2.h
    inst = decode([word])
    wv = Wave(0, 8, 0)
    wv.s[EXEC] = 0xFFFF_FFFF
    wv.v[1][:] = 0x4000_3C00
    wv.v[2][:] = 0x4400_B800
    execute.build(inst)(wv, None)
    assert int(wv.v[1][0]) == 0x4000_4600                # 2 + 4 = 6 into v1's low half


HALF_CL = """
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void hk(__global const half *a, __global const half *b, __global const float *f,
                 __global half *c, __global float *g, __global short *s)
{
    uint i = GID;
    half x = a[i], y = b[i];
    c[i] = x + y;
    c[i + COUNT] = x * y;
    c[i + 2 * COUNT] = x - y;
    c[i + 3 * COUNT] = x < y ? x : y;
    c[i + 4 * COUNT] = __builtin_fmaxf16(x, y);
    c[i + 5 * COUNT] = (half)f[i];
    c[i + 6 * COUNT] = __builtin_sqrtf16(y);
    c[i + 7 * COUNT] = __builtin_fmaf16(x, y, b[i ^ 1]);
    g[i] = (float)x;
    s[i] = (short)x;
}
"""


def test_compiled_half_kernel():
    """clang-19's half code (v_add/mul/sub_f16, v_cmp_lt_f16, v_max_num_f16, v_cvt_f16_f32,
    v_sqrt_f16, v_fmac/fma_f16, v_cvt_f32_f16, v_cvt_i16_f16) on the model."""
    n = 256
    path = clkernel.build(HALF_CL.replace("COUNT", str(n)), ["-cl-ext=+cl_khr_fp16"])
    text = clkernel.disassembly(path)
    for op in ("v_add_f16", "v_mul_f16", "v_cvt_f16_f32", "v_cvt_f32_f16", "v_sqrt_f16"):
        assert op in text, op
    rng = np.random.default_rng(SEED + 7)
    a = np.array(halves(rng, n), np.uint16)
    b = np.array([x if (x & 0x7FFF) <= 0x5800 else x & 0x53FF for x in halves(rng, n)], np.uint16)
    f = rng.uniform(-70000, 70000, n).astype(np.float32)
    out = clkernel.run(path, "hk", n, [a.view(np.float16), b.view(np.float16), f,
                                       np.zeros(8 * n, np.float16), np.zeros(n, np.float32),
                                       np.zeros(n, np.int16)])
    c, g, s = out[3].view(np.uint16), out[4].view(U32), out[5].view(np.uint16)
    A, B = [int(x) for x in a], [int(x) for x in b]
    for i in range(n):
        x, y = A[i], B[i]
        assert c[i] == exact_or_special16([x, y], [fl16(x), fl16(y)], lambda p, q: p + q, lambda p, q: p + q), i
        assert c[i + n] == exact_or_special16([x, y], [fl16(x), fl16(y)], lambda p, q: p * q, lambda p, q: p * q), i
        assert c[i + 2 * n] == exact_or_special16([x, y], [fl16(x), fl16(y)], lambda p, q: p - q, lambda p, q: p - q), i
        assert c[i + 3 * n] == (x if fl16(x) < fl16(y) else y), i
        qx, qy = (v | 0x200 if is_nan16(v) else v for v in (x, y))
        big = qx if is_nan16(qy) or (not is_nan16(qx) and (fl16(qx), qx < 0x8000) > (fl16(qy), qy < 0x8000)) else qy
        assert c[i + 4 * n] == big, i
        assert c[i + 7 * n] == fma16(x, y, B[i ^ 1]), i
        assert c[i + 6 * n] == _unary_golden("sqrt", y), i
        fb = int(f[i:i + 1].view(U32)[0])
        assert c[i + 5 * n] == to_bits(value(fb), 16), i
        if not is_nan16(x):
            assert g[i] == int(np.float32(fl16(x)).view(U32)), i
        if math.isfinite(fl16(x)):
            assert s[i] == max(-32768, min(32767, math.trunc(fl16(x)))) & 0xFFFF, i


def test_scalar_f16_transcendentals():
    """v_s_*_f16: the low half of a scalar source, the f16 result zero-extended into the SGPR."""
    w = laneops.run("v_s_sqrt_f16 s5, s3\nv_s_rcp_f16 s6, -s3\nv_s_exp_f16 s7, 0.5\nv_s_log_f16 s8, s3 mul:2",
                    s={3: 0xDEAD_4400, 5: 0xFFFF_FFFF})
    assert w.s[5] == 0x4000                              # sqrt(4) = 2
    assert w.s[6] == 0xB400                              # 1 / -4 = -0.25
    assert w.s[7] == _unary_golden("exp", 0x3800)        # 2^0.5
    assert w.s[8] == 0x4400                              # log2(4) * 2 = 4
