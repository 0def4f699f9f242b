"""VOP3P on the model (sim/packed.py): packed 16-bit integer and f16 math with op_sel,
op_sel_hi, neg_lo, neg_hi and clamp, v_dot2_f32_f16, v_fma_mix_f32/lo/hi, through llvm-mc,
the decoder and the handlers; goldens from Python integers and exact fractions; and a kernel
of clang-19 half2/short2/ushort2 code run on the model."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from tests import clkernel, laneops
from tests.asmutil import needs_llvm
from tests.fpexact import to_bits, value
from tests.fpgolden import (exact_or_special16, fl16, fma16, is_nan16, ieee_max_num, ieee_maximum,
                            ieee_min_num, ieee_minimum)
from tests.test_model_f16 import halves

pytestmark = needs_llvm
SEED = 20250705
M16 = 0xFFFF


def _s16(x):
    return x - 0x10000 if x >> 15 else x


INT_OPS = {  # name -> (f on Python ints, signed, saturating clamp)
    "v_pk_add_u16": (lambda a, b: a + b, False), "v_pk_add_i16": (lambda a, b: a + b, True),
    "v_pk_sub_u16": (lambda a, b: a - b, False), "v_pk_sub_i16": (lambda a, b: a - b, True),
    "v_pk_mul_lo_u16": (lambda a, b: a * b, False),
    "v_pk_lshlrev_b16": (lambda a, b: b << (a & 15), False),
    "v_pk_lshrrev_b16": (lambda a, b: b >> (a & 15), False),
    "v_pk_ashrrev_i16": (lambda a, b: b >> (a & 15), True),
    "v_pk_max_i16": (max, True), "v_pk_min_i16": (min, True),
    "v_pk_max_u16": (max, False), "v_pk_min_u16": (min, False),
    "v_pk_mad_u16": (lambda a, b, c: a * b + c, False), "v_pk_mad_i16": (lambda a, b, c: a * b + c, True),
}
SATURATING = {"v_pk_add_u16", "v_pk_add_i16", "v_pk_sub_u16", "v_pk_sub_i16", "v_pk_mad_u16", "v_pk_mad_i16"}


def _half(x, sel):
    return (x >> (16 * sel)) & M16


def _lists(rng, n):
    return [rng.getrandbits(1) for _ in range(n)]


def _text(key, bits):
    return f" {key}:[{','.join(map(str, bits))}]"


@pytest.mark.parametrize("name", sorted(INT_OPS))
def test_packed_integer(name):
    fn, signed = INT_OPS[name]
    n = 3 if "mad" in name else 2
    rng = random.Random(SEED)
    edge = [0, 1, 0x7FFF, 0x8000, 0xFFFF, 15, 16, 17]
    for trial in range(6):
        srcs = [[(rng.choice(edge) if rng.random() < 0.5 else rng.getrandbits(16)) |
                 (rng.choice(edge) if rng.random() < 0.5 else rng.getrandbits(16)) << 16
                 for _ in range(32)] for _ in range(n)]
        sel, sel_hi = _lists(rng, n), _lists(rng, n)
        clamp = name in SATURATING and trial % 2 == 1
        tail = _text("op_sel", sel) + _text("op_sel_hi", sel_hi) + (" clamp" if clamp else "")
        regs = ", ".join(f"v{i}" for i in range(n))
        w = laneops.run(f"{name} v10, {regs}{tail}", v=dict(enumerate(srcs)))
        ext = _s16 if signed else (lambda x: x)
        lo_r, hi_r = ((-(1 << 15), (1 << 15) - 1) if signed else (0, M16))
        for k in range(32):
            want = 0
            for part, sels in ((0, sel), (1, sel_hi)):
                r = fn(*[ext(_half(srcs[i][k], sels[i])) for i in range(n)])
                if clamp:
                    r = max(lo_r, min(hi_r, r))
                want |= (r & M16) << (16 * part)
            assert int(w.v[10][k]) == want, (name, k, [hex(s[k]) for s in srcs], sel, sel_hi)


F_OPS = {"v_pk_add_f16": lambda a, b: a + b, "v_pk_mul_f16": lambda a, b: a * b}


@pytest.mark.parametrize("name", ["v_pk_add_f16", "v_pk_mul_f16", "v_pk_fma_f16"])
def test_packed_f16(name):
    """Each half rounded once from the exact value; neg_lo/neg_hi flip the sign of the half
    that feeds the low/high result; clamp into [0, 1]."""
    n = 3 if "fma" in name else 2
    rng = random.Random(SEED + 1)
    nrng = np.random.default_rng(SEED + 1)
    for trial in range(6):
        srcs = [[a | b << 16 for a, b in zip(halves(nrng, 32), halves(nrng, 32))] for _ in range(n)]
        sel, sel_hi, nlo, nhi = (_lists(rng, n) for _ in range(4))
        clamp = trial % 3 == 2
        tail = (_text("op_sel", sel) + _text("op_sel_hi", sel_hi) + _text("neg_lo", nlo)
                + _text("neg_hi", nhi) + (" clamp" if clamp else ""))
        regs = ", ".join(f"v{i}" for i in range(n))
        w = laneops.run(f"{name} v10, {regs}{tail}", v=dict(enumerate(srcs)))
        for k in range(32):
            want = 0
            for part, sels, negs in ((0, sel, nlo), (1, sel_hi, nhi)):
                xs = [_half(srcs[i][k], sels[i]) ^ (0x8000 * negs[i]) for i in range(n)]
                if n == 3:
                    r = fma16(*xs)
                else:
                    fn = F_OPS[name]
                    r = exact_or_special16(xs, [fl16(x) for x in xs], fn, fn)
                if clamp:
                    r = 0 if is_nan16(r) or r > 0x8000 else r if r == 0x8000 else min(r, 0x3C00)  # -0 kept
                want |= r << (16 * part)
            assert int(w.v[10][k]) == want, (name, k, [hex(s[k]) for s in srcs])


def test_packed_min_max():
    """v_pk_max_num_f16 / v_pk_min_num_f16 / v_pk_maximum_f16 / v_pk_minimum_f16 per half."""
    from sim import fp16 as H
    wide = lambda h: int(H.to_f32(np.array([h], np.uint32))[0])
    narrow = lambda x: int(H.from_f32_exact(np.array([x], np.uint32))[0])
    specials = [0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E01, 0x7C05, 0x0001]
    rng = random.Random(SEED + 2)
    a = [rng.choice(specials) | rng.choice(specials) << 16 for _ in range(32)]
    b = [rng.choice(specials) | rng.choice(specials) << 16 for _ in range(32)]
    for name, fn in (("v_pk_max_num_f16", ieee_max_num), ("v_pk_min_num_f16", ieee_min_num),
                     ("v_pk_maximum_f16", ieee_maximum), ("v_pk_minimum_f16", ieee_minimum)):
        w = laneops.run(f"{name} v10, v0, v1", v={0: a, 1: b})
        for k in range(32):
            want = sum(narrow(fn(wide(_half(a[k], p)), wide(_half(b[k], p)))) << (16 * p) for p in (0, 1))
            assert int(w.v[10][k]) == want, (name, hex(a[k]), hex(b[k]))


def test_inline_constants_and_literals():
    """An inline constant is the 16-bit value in the low half (0 above: with op_sel_hi = 1 the
    high result adds 0); a literal is one dword whose halves op_sel picks."""
    w = laneops.run("v_pk_add_u16 v10, 1, v0\nv_pk_add_u16 v11, 1, v0 op_sel_hi:[0,1]\n"
                    "v_pk_add_f16 v12, 1.0, v0 op_sel_hi:[0,1]\nv_pk_add_u16 v13, 0x20003, v0\n"
                    "v_pk_add_u16 v14, 0x20003, v0 op_sel:[1,0] op_sel_hi:[0,1]",
                    v={0: 0x0005_0004})
    assert int(w.v[10][0]) == 0x0005_0005
    assert int(w.v[11][0]) == 0x0006_0005
    assert int(w.v[12][0]) == 0x3C00_3C00                 # 1.0 + a denormal, in both halves
    assert int(w.v[13][0]) == 0x0007_0007
    assert int(w.v[14][0]) == 0x0008_0006


def _f32(bits):
    return value(bits) if (bits & 0x7F80_0000) != 0x7F80_0000 else None


def test_dot2_and_fma_mix():
    nrng = np.random.default_rng(SEED + 3)
    a = [x | y << 16 for x, y in zip(halves(nrng, 32), halves(nrng, 32))]
    b = [x | y << 16 for x, y in zip(halves(nrng, 32), halves(nrng, 32))]
    c = [int(v) for v in np.concatenate([nrng.uniform(-100, 100, 28).astype(np.float32).view(np.uint32),
                                         np.array([0, 0x7F80_0000, 0x7FC0_0000, 0x0000_0001], np.uint32)])]
    w = laneops.run("v_dot2_f32_f16 v10, v0, v1, v2\n"
                    "v_fma_mix_f32 v11, v0, v1, v2 op_sel:[1,0,0] op_sel_hi:[1,1,0]\n"
                    "v_fma_mixlo_f16 v12, -v0, |v1|, v2 op_sel_hi:[1,1,0]\n"
                    "v_fma_mixhi_f16 v13, v2, v1, v0 op_sel:[0,1,1] op_sel_hi:[0,1,1]",
                    v={0: a, 1: b, 2: c, 12: 0xAAAA_0000, 13: 0x0000_5555})
    F = np.float32
    for k in range(32):
        x0, x1 = _half(a[k], 0), _half(a[k], 1)
        y0, y1 = _half(b[k], 0), _half(b[k], 1)
        vals = [fl16(x0), fl16(x1), fl16(y0), fl16(y1)]
        cf = float(np.uint32(c[k]).view(np.float32))
        if all(math.isfinite(v) for v in vals) and math.isfinite(cf):
            t = F(F(cf) + F(vals[0] * vals[2]))              # products exact in float32
            want = F(t + F(vals[1] * vals[3]))
            assert int(w.v[10][k]) == int(want.view(np.uint32)), k
            # mix_f32: hi(a) * lo(b) + c (f32), one rounding
            exact = value(x1, 16) * value(y0, 16) + value(c[k])
            if exact != 0:
                assert int(w.v[11][k]) == to_bits(exact), k
                # mixlo: -lo(a) * |lo(b)| + c rounded once to f16; high half kept
                e2 = -value(x0, 16) * abs(value(y0, 16)) + value(c[k])
                assert int(w.v[12][k]) == 0xAAAA_0000 | (to_bits(e2, 16) if e2 else 0), k
            # mixhi: c.f32 * hi(b) + hi(a), into the high half
            e3 = value(c[k]) * value(y1, 16) + value(x1, 16)
            if e3 != 0:
                assert int(w.v[13][k]) == 0x5555 | to_bits(e3, 16) << 16, k


PACKED_CL = """
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half half2 __attribute__((ext_vector_type(2)));
typedef short short2 __attribute__((ext_vector_type(2)));
typedef ushort ushort2 __attribute__((ext_vector_type(2)));
__kernel void pk(__global const half2 *a, __global const half2 *b, __global half2 *c,
                 __global const short2 *p, __global const short2 *q, __global short2 *r,
                 __global const ushort2 *u, __global ushort2 *v)
{
    uint i = GID;
    half2 x = a[i], y = b[i];
    c[i] = x + y;
    c[i + COUNT] = x * y;
    c[i + 2 * COUNT] = x - y;
    short2 s = p[i], t = q[i];
    r[i] = s + t;
    r[i + COUNT] = s * t;
    r[i + 2 * COUNT] = s << (t & (short2)15);
    r[i + 3 * COUNT] = __builtin_elementwise_max(s, t);
    ushort2 m = u[i];
    v[i] = m + m;
    v[i + COUNT] = __builtin_elementwise_min(m, u[i ^ 1]);
}
"""


def test_compiled_packed_kernel():
    """clang-19's half2/short2/ushort2 code (v_pk_add/mul_f16, v_pk_add_f16 with neg_lo/neg_hi,
    v_pk_add_u16, v_pk_mul_lo_u16, v_pk_lshlrev_b16, v_pk_max_i16, v_pk_min_u16) on the model."""
    n = 128
    path = clkernel.build(PACKED_CL.replace("COUNT", str(n)), ["-cl-ext=+cl_khr_fp16"])
    text = clkernel.disassembly(path)
    for op in ("v_pk_add_f16", "v_pk_mul_f16", "v_pk_add_u16", "v_pk_mul_lo_u16", "v_pk_min_u16"):
        assert op in text, op
    nrng = np.random.default_rng(SEED + 4)
    a = np.array(halves(nrng, 2 * n), np.uint16)
    b = np.array(halves(nrng, 2 * n), np.uint16)
    p, q, u = (nrng.integers(0, 1 << 16, 2 * n).astype(np.uint16) for _ in range(3))
    out = clkernel.run(path, "pk", n, [a.view(np.float16), b.view(np.float16),
                                       np.zeros(6 * n, np.float16), p.view(np.int16), q.view(np.int16),
                                       np.zeros(8 * n, np.int16), u, np.zeros(4 * n, np.uint16)])
    c, r, v = out[2].view(np.uint16), out[5].view(np.uint16), out[7]
    for j in range(2 * n):
        x, y = int(a[j]), int(b[j])
        fx, fy = fl16(x), fl16(y)
        assert c[j] == exact_or_special16([x, y], [fx, fy], lambda s, t: s + t, lambda s, t: s + t), j
        assert c[j + 2 * n] == exact_or_special16([x, y], [fx, fy], lambda s, t: s * t, lambda s, t: s * t), j
        if not (is_nan16(x) or is_nan16(y)):       # x - y is emitted as x + (-y): NaN sign differs
            assert c[j + 4 * n] == exact_or_special16([x, y], [fx, fy], lambda s, t: s - t, lambda s, t: s - t), j
        s, t = _s16(int(p[j])), _s16(int(q[j]))
        assert r[j] == (s + t) & M16 and r[j + 2 * n] == (s * t) & M16, j
        assert r[j + 4 * n] == (s << (t & 15)) & M16 and r[j + 6 * n] == max(s, t) & M16, j
        assert v[j] == (2 * int(u[j])) & M16 and v[j + 2 * n] == min(int(u[j]), int(u[j ^ 2])), j
