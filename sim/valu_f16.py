"""Handlers for the 16-bit float VALU opcodes (sim.fp16 semantics) and the 16-bit integer
compares, with gfx1200's operand rules for 16-bit values in 32-bit VGPRs:

* VOP3 (_e64 and native) forms: op_sel[i] picks the high half of source i, op_sel[3] the
  destination's half (LLVM 19 prints these "fake16" forms with plain vN registers);
* VOP1/VOP2/VOPC (_e32) forms: a VGPR number of 128 or more names the high half of
  v(N-128) (RDNA 4 16-bit operand encoding; LLVM 19 only uses v0-v127 there);
* a 16-bit result replaces its half of the destination and keeps the other half
  (as the 16-bit integer ops, docs/model.md);
* neg/abs act on bit 15 of an f16 source, omod and clamp on an f16 result (in f16).

``BUILDERS`` maps mnemonics to builders; sim.valu_ext merges it into its table.
"""
from __future__ import annotations

import numpy as np

from isa import Fmt
from . import fp16 as H
from . import valu_common as X
from .wave import EXEC, LANES, VCC, ModelError

U32, I64 = np.uint32, np.int64
_VOP3 = (Fmt.VOP3, Fmt.VOP3SD)


# name -> (fn, source kinds, result kind). Sources: h = f16, u = 16-bit integer, f = f32.
# Results: h = f16, i = 16-bit integer, f = f32, w = 32 bits (two packed halves).
OPS = {
    "v_cvt_f16_f32": (H.cvt_f16_f32, "f", "h"),
    "v_cvt_f32_f16": (H.cvt_f32_f16, "h", "f"),
    "v_cvt_f16_u16": (lambda a: H.cvt_f16_int(a, False), "u", "h"),
    "v_cvt_f16_i16": (lambda a: H.cvt_f16_int(a, True), "u", "h"),
    "v_cvt_u16_f16": (lambda a: H.cvt_int_f16(a, False), "h", "i"),
    "v_cvt_i16_f16": (lambda a: H.cvt_int_f16(a, True), "h", "i"),
    "v_rcp_f16": (H.rcp, "h", "h"), "v_sqrt_f16": (H.sqrt, "h", "h"), "v_rsq_f16": (H.rsq, "h", "h"),
    "v_log_f16": (H.log, "h", "h"), "v_exp_f16": (H.exp, "h", "h"),
    "v_sin_f16": (H.sin, "h", "h"), "v_cos_f16": (H.cos, "h", "h"),
    "v_frexp_mant_f16": (H.frexp_mant, "h", "h"), "v_frexp_exp_i16_f16": (H.frexp_exp, "h", "i"),
    "v_floor_f16": (H.floor, "h", "h"), "v_ceil_f16": (H.ceil, "h", "h"),
    "v_trunc_f16": (H.trunc, "h", "h"), "v_rndne_f16": (H.rndne, "h", "h"),
    "v_fract_f16": (H.fract, "h", "h"),
    "v_cvt_pk_rtz_f16_f32": (H.cvt_pk_rtz, "ff", "w"),
    "v_min_num_f16": (H.min_num, "hh", "h"), "v_max_num_f16": (H.max_num, "hh", "h"),
    "v_add_f16": (H.add, "hh", "h"), "v_sub_f16": (H.sub, "hh", "h"),
    "v_subrev_f16": (lambda a, b: H.sub(b, a), "hh", "h"), "v_mul_f16": (H.mul, "hh", "h"),
    "v_ldexp_f16": (H.ldexp, "hu", "h"),
    "v_fma_f16": (H.fma, "hhh", "h"), "v_div_fixup_f16": (H.div_fixup, "hhh", "h"),
    "v_min3_num_f16": (lambda a, b, c: H.min_num(H.min_num(a, b), c), "hhh", "h"),
    "v_max3_num_f16": (lambda a, b, c: H.max_num(H.max_num(a, b), c), "hhh", "h"),
    "v_minimum3_f16": (lambda a, b, c: H.minimum(H.minimum(a, b), c), "hhh", "h"),
    "v_maximum3_f16": (lambda a, b, c: H.maximum(H.maximum(a, b), c), "hhh", "h"),
    "v_med3_num_f16": (H.med3_num, "hhh", "h"),
    "v_minmax_num_f16": (lambda a, b, c: H.max_num(H.min_num(a, b), c), "hhh", "h"),
    "v_maxmin_num_f16": (lambda a, b, c: H.min_num(H.max_num(a, b), c), "hhh", "h"),
    "v_minimum_f16": (H.minimum, "hh", "h"), "v_maximum_f16": (H.maximum, "hh", "h"),
    "v_pack_b32_f16": (lambda a, b: a | (b << U32(16)), "hh", "w"),
}
_SCALAR = {"v_s_exp_f16": H.exp, "v_s_log_f16": H.log, "v_s_rcp_f16": H.rcp,
           "v_s_rsq_f16": H.rsq, "v_s_sqrt_f16": H.sqrt}
_OMOD16 = {1: 0x4000, 2: 0x4400, 3: 0x3800}        # *2, *4, *0.5


def _codes(inst):
    f = inst.f
    if inst.fmt in _VOP3:
        return [f["src0"], f["src1"], f["src2"]]
    return [f["src0"], 256 + f.get("vsrc1", 0)]


def _source(inst, i: int, kind: str):
    """Reader of source i as a lane array: a 16-bit pattern (h, u) or float32 bits (f)."""
    f, lit = inst.f, inst.literal
    code = _codes(inst)[i]
    vop3 = inst.fmt in _VOP3
    neg = vop3 and bool(f.get("neg", 0) >> i & 1)
    absf = vop3 and bool(f.get("abs", 0) >> i & 1)
    if kind == "f":
        return X.make_reader(code, 32, lit, neg, absf)
    if kind == "u" and (neg or absf):
        raise ModelError(f"{inst.name}: neg/abs on the 16-bit integer source {i}")
    hi = vop3 and bool(f.get("opsel", 0) >> i & 1)
    if not vop3 and code >= 256 + 128:
        code, hi = code - 128, True
    full = X.as_lanes
    shift = U32(16 if hi else 0)

    def read(w):
        x = (full(w.vread(code, 16, lit)) >> shift) & U32(0xFFFF)
        if absf:
            x = x & U32(0x7FFF)
        if neg:
            x = x ^ U32(0x8000)
        return x
    return read


def _dest(inst):
    """(VGPR, high half?) of a 16-bit destination."""
    d = inst.f["vdst"]
    if inst.fmt in _VOP3:
        return d, bool(inst.f.get("opsel", 0) >> 3 & 1)
    return (d - 128, True) if d >= 128 else (d, False)


def _post16(inst):
    """omod then clamp on an f16 result, or None."""
    omod, clamp = inst.f.get("omod", 0), inst.f.get("clamp", 0)
    if not omod and not clamp:
        return None
    scale = _OMOD16.get(omod)

    def post(x):
        if scale is not None:
            x = H.mul(x, np.full(LANES, scale, U32))
        return H.clamp01(x) if clamp else x
    return post


def _writer(inst, kind: str):
    """write(w, result) for a result kind, with the output modifiers applied."""
    if kind in ("i", "w") and (inst.f.get("omod", 0) or inst.f.get("clamp", 0)):
        raise ModelError(f"{inst.name}: clamp/omod on an integer or packed result is not modelled")
    if kind == "f":
        post, d = X.omod_clamp(inst, True), inst.f["vdst"]
        return lambda w, r: w.vwrite(d, post(r) if post else r)
    if kind == "w":
        d = inst.f["vdst"]
        return lambda w, r: w.vwrite(d, r)
    post = _post16(inst) if kind == "h" else None
    d, hi = _dest(inst)

    def write(w, r):
        r = (post(r) if post else r) & U32(0xFFFF)
        old = w.v[d]
        w.vwrite(d, (old & U32(0xFFFF)) | (r << U32(16)) if hi else (old & U32(0xFFFF_0000)) | r)
    return write


def _build_op(inst):
    fn, kinds, out = OPS[inst.name]
    reads = [_source(inst, i, k) for i, k in enumerate(kinds)]
    write = _writer(inst, out)
    return lambda w, ctx: write(w, fn(*[r(w) for r in reads]))


def _build_fmac(inst):
    """v_fmac_f16: D.f16 = S0 * S1 + D.f16 (the destination's half)."""
    r0, r1 = _source(inst, 0, "h"), _source(inst, 1, "h")
    d, hi = _dest(inst)
    write = _writer(inst, "h")
    shift = U32(16 if hi else 0)
    return lambda w, ctx: write(w, H.fma(r0(w), r1(w), (w.v[d] >> shift) & U32(0xFFFF)))


def _build_fmak(inst):
    """v_fmamk_f16 D = S0 * K + S1; v_fmaak_f16 D = S0 * S1 + K (K: the literal's low half)."""
    r0, r1 = _source(inst, 0, "h"), _source(inst, 1, "h")
    k = np.full(LANES, inst.literal & 0xFFFF, U32)
    write = _writer(inst, "h")
    if inst.name == "v_fmamk_f16":
        return lambda w, ctx: write(w, H.fma(r0(w), k, r1(w)))
    return lambda w, ctx: write(w, H.fma(r0(w), r1(w), k))


_INT_CMP = {"lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
            "ne": np.not_equal, "ge": np.greater_equal}


def _build_cmp(inst):
    """v_cmp[x]_<cond>_{f16,i16,u16}: the lane mask to VCC / the SGPR named by vdst (VOP3) or,
    for v_cmpx, to EXEC; inactive lanes' bits are 0."""
    _, cmp, cond, typ = inst.name.split("_")
    if typ == "f16":
        kinds = "hu" if cond == "class" else "hh"
        fn = H.cmp_class if cond == "class" else (lambda a, b: H.compare(cond, a, b))
    else:
        kinds = "uu"
        ext = (lambda x: (x.astype(I64) ^ 0x8000) - 0x8000) if typ == "i16" else (lambda x: x)
        fn = lambda a, b: _INT_CMP[cond](ext(a), ext(b))
    r0, r1 = (_source(inst, i, k) for i, k in enumerate(kinds))
    dst = EXEC if cmp == "cmpx" else (inst.f["vdst"] if inst.fmt in _VOP3 else VCC)

    def h(w, ctx):
        w.swrite(dst, 32, w.lane_mask_bits(fn(r0(w), r1(w)) & w.mask()))
    return h


def _build_scalar(inst):
    """v_s_*_f16: one scalar source's low half; the f16 result zero-extended into the SGPR."""
    fn = _SCALAR[inst.name]
    code, lit = inst.f["src0"], inst.literal
    if code >= 256:
        raise ModelError(f"{inst.name}: source must be scalar, got v{code - 256}")
    neg, absf = inst.f["neg"] & 1, inst.f["abs"] & 1
    post, d = _post16(inst), inst.f["vdst"]

    def h(w, ctx):
        x = np.full(1, w.sread(code, 16, lit) & 0xFFFF, U32)
        if absf:
            x &= U32(0x7FFF)
        if neg:
            x ^= U32(0x8000)
        r = fn(x)
        w.swrite(d, 32, int((post(r) if post else r)[0]) & 0xFFFF)
    return h


BUILDERS = {name: _build_op for name in OPS}
BUILDERS.update({name: _build_scalar for name in _SCALAR})
BUILDERS.update({"v_fmac_f16": _build_fmac, "v_fmamk_f16": _build_fmak, "v_fmaak_f16": _build_fmak})


def _register_compares():
    from isa import OPCODES
    for info in OPCODES:
        parts = info.name.split("_")
        if parts[:2] in (["v", "cmp"], ["v", "cmpx"]) and len(parts) == 4 and parts[3] in ("f16", "i16", "u16"):
            BUILDERS[info.name] = _build_cmp


_register_compares()
