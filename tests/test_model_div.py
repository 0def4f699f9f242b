"""FP32 division on the model: the v_div_scale_f32 / v_rcp_f32 / v_fma_f32 / v_div_fmas_f32 /
v_div_fixup_f32 sequence stock clang-19 emits for an IEEE ``a / b`` must give the correctly
rounded quotient (numpy float32 division, RNE, denormals kept) for every input class, and the
three helper opcodes follow the ISA guide's special cases (sim/fp32ext.py, docs/model.md)."""
from __future__ import annotations

import numpy as np

from sim import fp32 as F
from sim import fp32ext as E
from tests import clkernel

U32 = np.uint32
SEED = 20250701
NEG = U32(0x8000_0000)
ONE = U32(0x3F80_0000)
QNAN_BIT = 0x0040_0000

DIV_CL = """
__kernel void divk(__global const float *a, __global const float *b, __global float *c)
{
    uint i = GID;
    c[i] = a[i] / b[i];
}
"""


def operands(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 patterns of every class: random bits, exponents near both ends of the range
    (denormals, the smallest normals, near overflow), mid-range, short significands (exact
    quotients and ties) and the specials."""
    def parts(lo, hi, k, mant_bits=23):
        e = rng.integers(lo, hi + 1, k).astype(U32)
        m = rng.integers(0, 1 << mant_bits, k).astype(U32) << U32(23 - mant_bits)
        return (rng.integers(0, 2, k).astype(U32) << U32(31)) | (e << U32(23)) | m
    k = n // 8
    specials = np.array([0, 0x8000_0000, 1, 0x8000_0001, 0x007F_FFFF, 0x0080_0000, 0x7F7F_FFFF,
                         0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7FA0_0001, 0xFFC0_1234, ONE,
                         0x3F7F_FFFF, 0x3F80_0001, 0x4040_0000], U32)
    out = np.concatenate([rng.integers(0, 1 << 32, k, dtype=np.uint64).astype(U32),
                          parts(0, 3, k), parts(0, 30, k), parts(220, 254, k), parts(100, 154, k),
                          parts(0, 254, k, 3), parts(1, 60, k, 2), parts(190, 254, k, 2)])
    out = np.concatenate([out, rng.choice(specials, n - out.size)])
    return out[rng.permutation(out.size)]


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's IEEE quotient; NaN results as the model's NaN rules give them: the first NaN
    operand quieted, else the default NaN (0/0, inf/inf)."""
    with np.errstate(all="ignore"):
        q = (a.view(np.float32) / b.view(np.float32)).view(U32)
    nan_a = (a & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
    nan_b = (b & U32(0x7FFF_FFFF)) > U32(0x7F80_0000)
    q = np.where((q & U32(0x7FFF_FFFF)) > U32(0x7F80_0000), U32(F.DEFAULT_NAN), q)
    q = np.where(nan_b, b | U32(QNAN_BIT), q)
    return np.where(nan_a, a | U32(QNAN_BIT), q).astype(U32)


def llvm_sequence(n: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The instruction sequence of the compiled kernel, on the model's semantic functions."""
    ds, _ = E.div_scale(d, d, n)
    ns, vcc = E.div_scale(n, d, n)
    r = F.rcp(ds)
    r = F.fma(F.fma(ds ^ NEG, r, ONE), r, r)
    q = F.mul(ns, r)
    q = F.fma(F.fma(ds ^ NEG, q, ns), r, q)
    q = E.div_fmas(F.fma(ds ^ NEG, q, ns), r, q, vcc)
    return E.div_fixup(q, d, n)


def _mismatches(a, b, got, want):
    bad = np.nonzero(got != want)[0]
    return [f"{a[i]:08x} / {b[i]:08x}: got {got[i]:08x}, want {want[i]:08x}" for i in bad[:20]]


def test_sequence_is_correctly_rounded():
    """400,000 operand pairs through the compiler's sequence (semantic functions)."""
    rng = np.random.default_rng(SEED)
    a, b = operands(rng, 400_000), operands(rng, 400_000)
    got = llvm_sequence(a, b)
    bad = _mismatches(a, b, got, expected(a, b))
    assert not bad, "\n".join(bad)


def test_quotients_at_the_edges():
    """Quotients that are denormal ties, just below/above the overflow threshold, exactly the
    smallest denormal, and the cases the scaling branches exist for."""
    pairs = [
        (0x0000_0003, 0x4000_0000),   # 1.5 denormal ulps: tie to even -> 2 ulps
        (0x0000_0001, 0x4000_0000),   # 0.5 ulp: tie to even -> 0
        (0x0000_0001, 0x3FC0_0000),   # 2/3 ulp -> 1 ulp
        (0x0080_0000, 0x4B80_0000),   # 2^-126 / 2^24: below the denormal range
        (0x7F7F_FFFF, 0x3F7F_FFFF),   # MAX / (1 - 2^-24): overflows to inf
        (0x7F7F_FFFF, 0x3F80_0001),   # MAX / (1 + 2^-23): finite
        (0x7F7F_FFFF, 0x0000_0001),   # huge / tiny
        (0x0000_0001, 0x7F7F_FFFF),   # tiny / huge -> 0
        (0x3F80_0000, 0x7F7F_FFFF),   # 1 / MAX: denormal quotient, divisor above 2^126
        (0x4000_0000, 0x7F00_0000),   # 2 / 2^127: divisor above 2^126, normal quotient
        (0x0C00_0000, 0x0080_0001),   # tiny numerator, smallest-normal divisor
        (0x0040_0000, 0x0020_0000),   # denormal / denormal
        (0x1F80_0000, 0x5F80_0000),   # quotient 2^-128
        (0x6F80_0000, 0x0F80_0000),   # quotient 2^192: inf
    ]
    a = np.array([p[0] for p in pairs], U32)
    b = np.array([p[1] for p in pairs], U32)
    a, b = np.concatenate([a, a ^ NEG, a]), np.concatenate([b, b, b ^ NEG])
    bad = _mismatches(a, b, llvm_sequence(a, b), expected(a, b))
    assert not bad, "\n".join(bad)


def test_div_fixup_special_cases():
    """v_div_fixup_f32(q, den, num) per the ISA guide: NaN operands (num first), 0/0 and
    inf/inf the default NaN, x/0 and inf/y infinity, x/inf and 0/y zero, all with the sign
    den ^ num; otherwise +-|q| (a NaN q, from an overflowed iteration, +-inf)."""
    q, one, inf, z = U32(0x4040_0000), ONE, U32(0x7F80_0000), U32(0)
    cases = [  # (q, den, num, want)
        (q, one, U32(0x7FA0_0000), 0x7FE0_0000), (q, U32(0xFFA0_0001), U32(0x7FC0_0000), 0x7FC0_0000),
        (q, U32(0xFFA0_0001), one, 0xFFE0_0001), (q, z, z, F.DEFAULT_NAN), (q, inf, inf ^ NEG, F.DEFAULT_NAN),
        (q, z ^ NEG, one, 0xFF80_0000), (q, one, inf, 0x7F80_0000), (q, inf, one ^ NEG, 0x8000_0000),
        (q, one, z, 0), (q ^ NEG, one, one, int(q)), (q, one ^ NEG, one, int(q ^ NEG)),
        (U32(0x7FC0_0000), one, one ^ NEG, 0xFF80_0000), (q, U32(0x4B80_0000), U32(0x0000_0001), 0),
    ]
    got = E.div_fixup(*(np.array([c[i] for c in cases], U32) for i in range(3)))
    assert [hex(x) for x in got] == [hex(c[3]) for c in cases]


def test_div_scale_cases():
    """v_div_scale_f32(S0, den, num): which operand is scaled and when VCC is set."""
    one, two, four = ONE, U32(0x4000_0000), U32(0x4080_0000)
    tiny_den = U32(0x0000_0100)                                     # a denormal
    up = lambda x: int(F.ldexp(np.array([x], U32), np.array([64], U32))[0])
    down = lambda x: int(F.ldexp(np.array([x], U32), np.array([(-64) & 0xFFFF_FFFF], U32))[0])
    cases = [  # (s0, den, num, D, VCC)
        (one, one, two, int(one), False),                               # nothing to do
        (one, one, U32(0), F.DEFAULT_NAN, False),                       # zero operand
        (one, one, U32(0x7000_0000), up(one), True),                    # quotient >= 2^95: scale den
        (U32(0x7000_0000), one, U32(0x7000_0000), 0x7000_0000, True),   # ... not num
        (tiny_den, tiny_den, U32(0x2000_0000), up(tiny_den), False),   # denormal den: both up
        (U32(0x7F00_0000), U32(0x7F00_0000), two, down(0x7F00_0000), False),   # 1/den denormal: both down
        (U32(0x7F00_0000), U32(0x7F00_0000), U32(0x0080_0000), down(0x7F00_0000), True),  # and q denormal
        (U32(0x0080_0000), U32(0x7F00_0000), U32(0x0080_0000), 0x0080_0000, True),
        (U32(0x0100_0000), four, U32(0x0100_0000), up(0x0100_0000), True),   # q denormal: num up
        (four, four, U32(0x0100_0000), int(four), True),
        (U32(0x0B00_0000), U32(0x0B00_0000), U32(0x0B00_0000), up(0x0B00_0000), False),  # tiny num: both up
    ]
    d, vcc = E.div_scale(*(np.array([c[i] for c in cases], U32) for i in range(3)))
    assert [hex(x) for x in d] == [hex(c[3]) for c in cases]
    assert vcc.tolist() == [c[4] for c in cases]


def test_div_fmas_scales_inside_the_rounding():
    """With VCC the fma is scaled by 2^-64 (S2 below 2.0) or 2^+64 and rounded once: a value
    just above a denormal tie after scaling rounds up (rounding the fma first would drop the
    excess and the tie would go to even)."""
    a = np.array([ONE, ONE, ONE, ONE], U32)
    b = np.array([0x2000_0001, 0x2000_0001, ONE, 0x1F40_0000], U32)      # (1 + 2^-23) 2^-63
    c = np.array([0x0380_0000, 0x0000_0000, 0x5F80_0000, 0x3F80_0000], U32)   # 2^-120, 0, 2^64, 1
    vcc = np.array([True, True, True, False])
    got = E.div_fmas(a, b, c, vcc)
    # (2^23 + 1 + eps) 2^-150 -> 2^22 + 1 denormal ulps; the exact tie -> 2^22 (even);
    # (2^64 + 1) 2^64 -> 2^128 = inf; without VCC a plain fma (1 + 1.5 2^-65 -> 1)
    assert [hex(x) for x in got] == ["0x400001", "0x400000", "0x7f800000", "0x3f800000"]


def test_compiled_kernel_divides_correctly():
    """c[i] = a[i] / b[i] compiled by clang-19 (-cl-fp32-correctly-rounded-divide-sqrt) and run
    on the model gives numpy's quotient, bit for bit."""
    path = clkernel.build(DIV_CL, ["-cl-fp32-correctly-rounded-divide-sqrt"])
    text = clkernel.disassembly(path)
    for op in ("v_div_scale_f32", "v_rcp_f32", "v_div_fmas_f32", "v_div_fixup_f32"):
        assert op in text, op
    rng = np.random.default_rng(SEED + 1)
    n = 8192
    a, b = operands(rng, n), operands(rng, n)
    a[:256], b[:256] = 0x7F7F_FFFF, 0x3F7F_FFFF - np.arange(256, dtype=U32)   # near overflow
    out = clkernel.run(path, "divk", n, [a.view(np.float32), b.view(np.float32),
                                         np.zeros(n, np.float32)])[2].view(U32)
    bad = _mismatches(a, b, out, expected(a, b))
    assert not bad, "\n".join(bad)
