"""VOP3P on the model: packed 16-bit math (v_pk_*), v_dot2_f32_f16 and the mixed-precision
FMAs v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16 (RDNA 4 ISA guide pseudocode).

Operand rules (docs/model.md, "Packed 16-bit"):

* source i is a 32-bit value: a VGPR or SGPR, a literal, or an inline constant, which is the
  16-bit constant in the low half (0 in the high half; an f32 constant where the operand is a
  32-bit float: v_dot2's S2, a v_fma_mix source with op_sel_hi[i] = 0);
* the low result takes half op_sel[i] of each source, the high result half op_sel_hi[i];
  neg_lo[i] / neg_hi[i] flip the sign of the half that feeds the low / high result (float
  ops only);
* v_fma_mix*: op_sel_hi[i] = 0 reads source i as f32, 1 as the f16 half op_sel[i]; neg_lo[i]
  negates and neg_hi[i] takes the absolute value of the source;
* clamp: f16 halves into [0, 1]; f32 results likewise; the integer add/sub/mad saturate.
"""
from __future__ import annotations

import numpy as np

from isa.operands import inline_constant, is_inline_constant
from . import fp16 as H
from . import fp32 as F
from . import fp32ext as E
from . import valu_common as X
from .wave import LANES, ModelError

U32, I64 = np.uint32, np.int64
M16 = U32(0xFFFF)


def _s16(x):
    return (x.astype(I64) ^ 0x8000) - 0x8000


# name -> (f(a, b[, c]) on 16-bit halves (uint32 arrays), signed?, saturating clamp range)
_INT = {
    "v_pk_mad_i16": (lambda a, b, c: a * b + c, True, True),
    "v_pk_mad_u16": (lambda a, b, c: a * b + c, False, True),
    "v_pk_add_i16": (lambda a, b: a + b, True, True), "v_pk_add_u16": (lambda a, b: a + b, False, True),
    "v_pk_sub_i16": (lambda a, b: a - b, True, True), "v_pk_sub_u16": (lambda a, b: a - b, False, True),
    "v_pk_mul_lo_u16": (lambda a, b: a * b, False, False),
    "v_pk_lshlrev_b16": (lambda a, b: b << (a & 15), False, False),
    "v_pk_lshrrev_b16": (lambda a, b: b >> (a & 15), False, False),
    "v_pk_ashrrev_i16": (lambda a, b: b >> (a & 15), True, False),
    "v_pk_max_i16": (np.maximum, True, False), "v_pk_min_i16": (np.minimum, True, False),
    "v_pk_max_u16": (np.maximum, False, False), "v_pk_min_u16": (np.minimum, False, False),
}
_FLOAT = {
    "v_pk_fma_f16": H.fma, "v_pk_add_f16": H.add, "v_pk_mul_f16": H.mul,
    "v_pk_min_num_f16": H.min_num, "v_pk_max_num_f16": H.max_num,
    "v_pk_minimum_f16": H.minimum, "v_pk_maximum_f16": H.maximum,
}


def _raw(inst, i: int, f32: bool = False):
    """Reader of source i as 32 bits per lane (see the module docstring for constants)."""
    code, lit = inst.f[f"src{i}"], inst.literal
    full = X.as_lanes
    if is_inline_constant(code):
        value = np.full(LANES, inline_constant(code, 32 if f32 else 16), U32)
        return lambda w: value
    return lambda w: full(w.vread(code, 32, lit))


def _halves(inst, i: int, float_op: bool):
    """Reader of (low-result half, high-result half) of source i, with neg_lo/neg_hi."""
    f = inst.f
    raw = _raw(inst, i)
    lo_sh, hi_sh = U32(16 * (f["opsel"] >> i & 1)), U32(16 * (f["opsel_hi"] >> i & 1))
    nlo, nhi = f["neg"] >> i & 1, f["neg_hi"] >> i & 1
    if (nlo or nhi) and not float_op:
        raise ModelError(f"{inst.name}: neg_lo/neg_hi on an integer operation")
    flip_lo, flip_hi = U32(0x8000 * nlo), U32(0x8000 * nhi)

    def read(w):
        x = raw(w)
        return ((x >> lo_sh) & M16) ^ flip_lo, ((x >> hi_sh) & M16) ^ flip_hi
    return read


def _build_int(inst):
    fn, signed, saturates = _INT[inst.name]
    n = len(inst.info.src_bits)
    reads = [_halves(inst, i, False) for i in range(n)]
    clamp = inst.f["clamp"]
    if clamp and not saturates:
        raise ModelError(f"{inst.name}: clamp is not modelled on this operation")
    lo, hi = (-(1 << 15), (1 << 15) - 1) if signed else (0, 0xFFFF)
    ext = _s16 if signed else (lambda x: x.astype(I64))
    d = inst.f["vdst"]

    def half(xs):
        r = fn(*[ext(x) for x in xs])
        return ((np.clip(r, lo, hi) if clamp else r) & 0xFFFF).astype(U32)

    def h(w, ctx):
        pairs = [r(w) for r in reads]
        w.vwrite(d, half([p[0] for p in pairs]) | (half([p[1] for p in pairs]) << U32(16)))
    return h


def _build_float(inst):
    fn = _FLOAT[inst.name]
    reads = [_halves(inst, i, True) for i in range(len(inst.info.src_bits))]
    post = H.clamp01 if inst.f["clamp"] else (lambda x: x)
    d = inst.f["vdst"]

    def h(w, ctx):
        pairs = [r(w) for r in reads]
        lo = post(fn(*[p[0] for p in pairs]))
        hi = post(fn(*[p[1] for p in pairs]))
        w.vwrite(d, lo | (hi << U32(16)))
    return h


def _build_dot2(inst):
    """v_dot2_f32_f16: tmp = S2.f32; tmp += lo0*lo1; tmp += hi0*hi1 (each an f32 addition of an
    exact product of widened halves). neg_lo[2] negates S2; neg_hi[2] is refused."""
    f = inst.f
    a, b = _halves(inst, 0, True), _halves(inst, 1, True)
    if f["neg_hi"] >> 2 & 1:
        raise ModelError(f"{inst.name}: neg_hi on the f32 source S2 is not modelled")
    c = _raw(inst, 2, f32=True)
    neg_c = U32(0x8000_0000 * (f["neg"] >> 2 & 1))
    post = F.clamp01 if f["clamp"] else (lambda x: x)
    d = f["vdst"]

    def h(w, ctx):
        (a0, a1), (b0, b1) = a(w), b(w)
        t = F.add(c(w) ^ neg_c, F.mul(H.to_f32(a0), H.to_f32(b0)))
        w.vwrite(d, post(F.add(t, F.mul(H.to_f32(a1), H.to_f32(b1)))))
    return h


def _mix_sources(inst):
    """Readers of the three v_fma_mix sources as f32 bits (f16 halves widened exactly)."""
    f = inst.f
    out = []
    for i in range(3):
        wide = not f["opsel_hi"] >> i & 1
        raw = _raw(inst, i, f32=wide)
        sh = U32(16 * (f["opsel"] >> i & 1))
        absf, neg = bool(f["neg_hi"] >> i & 1), U32(0x8000_0000 * (f["neg"] >> i & 1))

        def read(w, raw=raw, wide=wide, sh=sh, absf=absf, neg=neg):
            x = raw(w) if wide else H.to_f32((raw(w) >> sh) & M16)
            return ((x & U32(0x7FFF_FFFF)) if absf else x) ^ neg
        out.append(read)
    return out


def _build_mix(inst):
    """v_fma_mix_f32: fma rounded to f32; mixlo/mixhi: the exact fma rounded once to f16 into
    the low/high half (the other half kept)."""
    r0, r1, r2 = _mix_sources(inst)
    d, clamp, name = inst.f["vdst"], inst.f["clamp"], inst.name
    if name == "v_fma_mix_f32":
        post = F.clamp01 if clamp else (lambda x: x)
        return lambda w, ctx: w.vwrite(d, post(F.fma(r0(w), r1(w), r2(w))))
    hi = name == "v_fma_mixhi_f16"

    def h(w, ctx):
        a, b, c = r0(w), r1(w), r2(w)
        with np.errstate(invalid="ignore"):
            wide = [x.view(np.float32).astype(np.float64) for x in (a, b, c)]
        r = H.from_f64(E.fma_odd64(*wide))
        r = _first_nan16(np.where(H.is_nan(r), U32(H.DEFAULT_NAN), r), a, b, c)
        r = H.clamp01(r) if clamp else r
        old = w.v[d]
        w.vwrite(d, (old & M16) | (r << U32(16)) if hi else (old & U32(0xFFFF_0000)) | r)
    return h


def _first_nan16(r, *srcs32):
    """The NaN rule for an f16 result of f32 operands: the first NaN operand, quieted and
    narrowed (sign, top payload bits)."""
    for s in reversed(srcs32):
        narrowed = ((s >> U32(16)) & U32(0x8000)) | U32(0x7E00) | ((s >> U32(13)) & U32(0x3FF))
        r = np.where(F.is_nan(s), narrowed, r)
    return r.astype(U32)


BUILDERS = {name: _build_int for name in _INT}
BUILDERS.update({name: _build_float for name in _FLOAT})
BUILDERS.update({"v_dot2_f32_f16": _build_dot2, "v_fma_mix_f32": _build_mix,
                 "v_fma_mixlo_f16": _build_mix, "v_fma_mixhi_f16": _build_mix})
