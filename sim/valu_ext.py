"""Handlers for the VALU and mode opcodes added beside sim.execute's core tables: the FP32
division helpers, sin/cos, the rounding conversions and three-operand min/max forms
(sim.fp32ext), the scalar-destination transcendentals v_s_*_f32, s_code_end, the MODE
instructions (sim.fpmode), the VOP3 ``clamp`` bit on 32/64-bit integer arithmetic, the
16-bit float ops and 16-bit integer compares (sim.valu_f16) and VOP3P (sim.packed).

``BUILDERS`` maps a mnemonic to ``build(inst) -> handler``; sim.execute.build consults it
first. The builders reuse sim.execute's operand plumbing (imported when a handler is built,
as execute imports this module).
"""
from __future__ import annotations

import numpy as np

from . import fp32 as F
from . import fp32ext as E
from . import vector as V
from .valu_f16 import BUILDERS as F16_BUILDERS
from .packed import BUILDERS as PACKED_BUILDERS
from .fpmode import MODE_BUILDERS
from . import valu_common as X
from .wave import LANES, VCC, ModelError

U32, U64, I64 = np.uint32, np.uint64, np.int64


# --------------------------------------------------------------------------------------
# FP32 ops with the ordinary VALU operand plumbing
_FLOAT = {
    "v_sin_f32": E.sin, "v_cos_f32": E.cos,
    "v_frexp_mant_f32": F.frexp_mant,
    "v_mul_dx9_zero_f32": E.mul_dx9_zero,
    "v_div_fixup_f32": E.div_fixup,
    "v_minimum3_f32": E.minimum3, "v_maximum3_f32": E.maximum3,
    "v_minmax_num_f32": E.minmax_num, "v_maxmin_num_f32": E.maxmin_num,
}
# float sources, int32 result: clamp/omod are refused (no float result to clamp)
_TO_INT = {
    "v_cvt_nearest_i32_f32": E.cvt_nearest_i32, "v_cvt_floor_i32_f32": E.cvt_floor_i32,
    "v_frexp_exp_i32_f32": F.frexp_exp,
}


def _float_op(fn, is_float):
    return lambda inst: X.build_lanewise(inst, fn, is_float)


def _build_div_scale(inst):
    """VOP3SD: D = scaled S0, SDST (the lane mask, bit = scale applied) for active lanes."""
    r0, r1, r2 = X.source_readers(inst)
    post = X.omod_clamp(inst, True)
    d, sd = inst.f["vdst"], inst.f["sdst"]

    def h(w, ctx):
        x, vcc = E.div_scale(r0(w), r1(w), r2(w))
        m = w.mask()
        w.vwrite(d, post(x) if post else x, mask=m)
        w.swrite(sd, 32, w.lane_mask_bits(vcc & m))
    return h


def _build_div_fmas(inst):
    """D = fma(S0, S1, S2), rescaled by 2^+-64 on the lanes whose VCC bit is set."""
    r0, r1, r2 = X.source_readers(inst)
    post = X.omod_clamp(inst, True)
    d = inst.f["vdst"]

    def h(w, ctx):
        vcc = X.lane_bits(w.s[VCC])
        x = E.div_fmas(r0(w), r1(w), r2(w), vcc)
        w.vwrite(d, post(x) if post else x)
    return h


# --------------------------------------------------------------------------------------
# v_s_*_f32: one scalar source, an SGPR destination (VOP3 with vdst naming the SGPR)
_SCALAR_TRANS = {"v_s_exp_f32": F.exp, "v_s_log_f32": F.log, "v_s_rcp_f32": F.rcp,
                 "v_s_rsq_f32": F.rsq, "v_s_sqrt_f32": F.sqrt}


def _build_scalar_trans(inst):
    """The same math as the vector form on one value; written whatever EXEC holds (the
    result is scalar)."""
    fn = _SCALAR_TRANS[inst.name]
    code, lit = inst.f["src0"], inst.literal
    if code >= 256:
        raise ModelError(f"{inst.name}: source must be scalar, got v{code - 256}")
    neg, absf = inst.f["neg"] & 1, inst.f["abs"] & 1
    post = X.omod_clamp(inst, True)
    d = inst.f["vdst"]

    def h(w, ctx):
        x = np.full(1, w.sread(code, 32, lit), U32)
        if absf:
            x &= U32(0x7FFF_FFFF)
        if neg:
            x ^= U32(0x8000_0000)
        r = fn(x)
        w.swrite(d, 32, int((post(r) if post else r)[0]))
    return h


# --------------------------------------------------------------------------------------
# VOP3 clamp on integer arithmetic: the exact result saturates to the destination's range
# (LLVM AMDGPU modifier syntax, "clamp"); carry-outs are those of the unclamped operation.
_U32_MAX, _I32 = (1 << 32) - 1, (-(1 << 31), (1 << 31) - 1)


def _exact32(name, a, b, c):
    """Exact (int64) result of a 32-bit integer op with clamp, and its (lo, hi) range."""
    ua, ub = a.astype(I64), b.astype(I64)
    u24 = lambda x: x.astype(I64) & 0xFF_FFFF
    i24 = lambda x: V.i24(x).astype(I64)
    table = {
        "v_add_nc_u32": lambda: (ua + ub, (0, _U32_MAX)),
        "v_sub_nc_u32": lambda: (ua - ub, (0, _U32_MAX)),
        "v_subrev_nc_u32": lambda: (ub - ua, (0, _U32_MAX)),
        "v_mul_u32_u24": lambda: (u24(a) * u24(b), (0, _U32_MAX)),
        "v_mul_i32_i24": lambda: (i24(a) * i24(b), _I32),
        "v_mad_u32_u24": lambda: (u24(a) * u24(b) + c.astype(I64), (0, _U32_MAX)),
        "v_mad_i32_i24": lambda: (i24(a) * i24(b) + c.view(np.int32).astype(I64), _I32),
    }
    return table[name]()


def _build_int_clamp(inst):
    if not inst.f.get("clamp"):
        return X.build_lanewise(inst, X.VINT[inst.name], False)
    if inst.f.get("omod") or inst.f.get("opsel"):
        raise ModelError(f"{inst.name}: omod/op_sel on a 32-bit integer operation")
    reads = X.source_readers(inst)
    d, name = inst.f["vdst"], inst.name

    def h(w, ctx):
        xs = [X.as_lanes(r(w)) for r in reads] + [None] * (3 - len(reads))
        r, (lo, hi) = _exact32(name, *xs)
        w.vwrite(d, (np.clip(r, lo, hi) & _U32_MAX).astype(U32))
    return h


def _build_carry_clamp(inst):
    """v_add/sub/subrev_co[_ci]_u32 with clamp: the sum saturates at 0xffffffff, the difference
    at 0; the carry/borrow out is unchanged."""
    if not inst.f.get("clamp"):
        return X.build_carry(inst)
    reads = X.source_readers(inst)
    r0, r1 = reads[0], reads[1]
    d, cout = inst.f["vdst"], inst.f["sdst"]
    name = inst.name
    with_ci = "_co_ci_" in name
    cin_code = inst.f["src2"] if with_ci else None
    op = name.split("_")[1]

    def h(w, ctx):
        a, b = X.as_lanes(r0(w)), X.as_lanes(r1(w))
        cin = X.lane_bits(w.sread(cin_code, 32, inst.literal)) if with_ci else np.zeros(LANES, bool)
        if op == "add":
            r, c = V.add_co(a, b, cin)
            r = np.where(c, U32(_U32_MAX), r)
        else:
            x, y = (a, b) if op == "sub" else (b, a)
            r, c = V.sub_co(x, y, cin)
            r = np.where(c, U32(0), r)
        m = w.mask()
        w.vwrite(d, r, mask=m)
        w.swrite(cout, 32, w.lane_mask_bits(c & m))
    return h


def _build_mad64_clamp(inst):
    """v_mad_co_u64_u32 / v_mad_co_i64_i32 with clamp: the 65-bit result saturates to 64 bits."""
    if not inst.f.get("clamp"):
        return X.build_mad64(inst)
    r0, r1, r2 = X.source_readers(inst)
    d, sd = inst.f["vdst"], inst.f["sdst"]
    signed = inst.name == "v_mad_co_i64_i32"

    def h(w, ctx):
        a, b, c = r0(w), r1(w), X.as_lanes(r2(w), 64)
        if signed:
            r, neg = V.mad_i64_i32(a, b, c)
            p_neg = (X.as_lanes(a).view(np.int32).astype(I64) * X.as_lanes(b).view(np.int32).astype(I64)) < 0
            over = (p_neg == (c.view(I64) < 0)) & ((r.view(I64) < 0) != p_neg)
            sat = np.where(p_neg, U64(1 << 63), U64((1 << 63) - 1))
            r, flag = np.where(over, sat, r), neg
        else:
            r, flag = V.mad_u64_u32(a, b, c)
            r = np.where(flag, U64((1 << 64) - 1), r)
        m = w.mask()
        w.vwrite(d, r, 64, mask=m)
        w.swrite(sd, 32, w.lane_mask_bits(flag & m))
    return h


BUILDERS = {name: _float_op(fn, True) for name, fn in _FLOAT.items()}
BUILDERS.update({name: _float_op(fn, False) for name, fn in _TO_INT.items()})
BUILDERS.update({name: _build_scalar_trans for name in _SCALAR_TRANS})
BUILDERS.update({
    "v_div_scale_f32": _build_div_scale, "v_div_fmas_f32": _build_div_fmas,
    "s_code_end": lambda inst: (lambda w, ctx: None),
})
_CLAMP_BUILDERS = {n: _build_int_clamp for n in (
    "v_add_nc_u32", "v_sub_nc_u32", "v_subrev_nc_u32", "v_mul_u32_u24", "v_mul_i32_i24",
    "v_mad_u32_u24", "v_mad_i32_i24")}
_CLAMP_BUILDERS.update({n: _build_carry_clamp for n in (
    "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32",
    "v_add_co_ci_u32", "v_sub_co_ci_u32", "v_subrev_co_ci_u32")})
_CLAMP_BUILDERS.update({"v_mad_co_u64_u32": _build_mad64_clamp, "v_mad_co_i64_i32": _build_mad64_clamp})
#: 32/64-bit integer ops whose clamp bit this module implements (saturation)
INT_CLAMP_OPS = frozenset(_CLAMP_BUILDERS)
BUILDERS.update(_CLAMP_BUILDERS)
BUILDERS.update(F16_BUILDERS)
BUILDERS.update(PACKED_BUILDERS)
BUILDERS.update(MODE_BUILDERS)
