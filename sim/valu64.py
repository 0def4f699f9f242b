"""Handlers for the FP64 VALU opcodes, on the semantics of sim.fp64.

``BUILDERS`` maps a mnemonic to ``build(inst) -> handler``; sim.execute.build consults it.
The builders reuse sim.execute's operand plumbing (source readers with the VOP3 neg/abs
modifiers, a literal on a double operand taken as its high half), imported when a handler is
built, as execute imports this module.

VOP3 output modifiers: ``clamp`` clamps a float result to [0, 1] (NaN -> +0) and is refused
on the float -> int conversions, which have no float result to clamp. ``omod`` is accepted
and has no effect: output modifiers are ignored while output denormals are enabled, which
is the mode of FP64 (and FP32) in a kernel (docs/model.md, "FP64").
"""
from __future__ import annotations

from isa import Fmt

from . import fp32 as F
from . import fp64 as D
from . import valu_common as X
from .wave import EXEC, VCC, ModelError


# name -> (semantic function, what clamp does to its result: D.clamp01, F.clamp01 or None)
_ELEMENTWISE = {
    "v_add_f64": (D.add, D.clamp01), "v_mul_f64": (D.mul, D.clamp01),
    "v_fma_f64": (D.fma, D.clamp01),
    "v_min_num_f64": (D.min_num, D.clamp01), "v_max_num_f64": (D.max_num, D.clamp01),
    "v_minimum_f64": (D.minimum, D.clamp01), "v_maximum_f64": (D.maximum, D.clamp01),
    "v_trunc_f64": (D.trunc, D.clamp01), "v_ceil_f64": (D.ceil, D.clamp01),
    "v_floor_f64": (D.floor, D.clamp01), "v_rndne_f64": (D.rndne, D.clamp01),
    "v_fract_f64": (D.fract, D.clamp01),
    "v_rcp_f64": (D.rcp, D.clamp01), "v_rsq_f64": (D.rsq, D.clamp01),
    "v_sqrt_f64": (D.sqrt, D.clamp01),
    "v_frexp_mant_f64": (D.frexp_mant, D.clamp01), "v_ldexp_f64": (D.ldexp, D.clamp01),
    "v_trig_preop_f64": (D.trig_preop, D.clamp01),
    "v_div_fixup_f64": (D.div_fixup, D.clamp01),
    "v_cvt_f64_i32": (D.cvt_f64_i32, D.clamp01), "v_cvt_f64_u32": (D.cvt_f64_u32, D.clamp01),
    "v_cvt_f64_f32": (D.cvt_f64_f32, D.clamp01),
    "v_cvt_f32_f64": (D.cvt_f32_f64, F.clamp01),
    "v_cvt_i32_f64": (D.cvt_i32_f64, None), "v_cvt_u32_f64": (D.cvt_u32_f64, None),
    "v_frexp_exp_i32_f64": (D.frexp_exp, None),
}


def _post(inst, clamp_fn):
    """The clamp step of a VOP3 encoding (None when the bit is clear)."""
    if inst.fmt not in (Fmt.VOP3, Fmt.VOP3SD) or not inst.f.get("clamp", 0):
        return None
    if clamp_fn is None:
        raise ModelError(f"{inst.name}: clamp on an integer result is not supported by the model")
    return clamp_fn


def _check_opsel(inst):
    if inst.fmt == Fmt.VOP3 and inst.f.get("opsel", 0):
        raise ModelError(f"{inst.name}: op_sel on a 64-bit operation is not supported by the model")


def _build_elementwise(inst):
    fn, clamp_fn = _ELEMENTWISE[inst.name]
    _check_opsel(inst)
    reads = X.source_readers(inst)
    post = _post(inst, clamp_fn)
    d, db = inst.f["vdst"], inst.info.dst_bits

    def h(w, ctx):
        x = fn(*[r(w) for r in reads])
        w.vwrite(d, post(x) if post else x, db)
    return h


def _build_div_scale(inst):
    """VOP3SD: D = S0 scaled, SDST = the lanes whose quotient div_fmas must rescale."""
    r0, r1, r2 = X.source_readers(inst)
    post = _post(inst, D.clamp01)
    d, sd = inst.f["vdst"], inst.f["sdst"]

    def h(w, ctx):
        x, vcc = D.div_scale(r0(w), r1(w), r2(w))
        m = w.mask()
        w.vwrite(d, post(x) if post else x, 64, mask=m)
        w.swrite(sd, 32, w.lane_mask_bits(vcc & m))
    return h


def _build_div_fmas(inst):
    """D = fma(S0, S1, S2), rescaled by 2^+-128 on the lanes whose VCC bit is set."""
    _check_opsel(inst)
    r0, r1, r2 = X.source_readers(inst)
    post = _post(inst, D.clamp01)
    d = inst.f["vdst"]

    def h(w, ctx):
        x = D.div_fmas(r0(w), r1(w), r2(w), X.lane_bits(w.s[VCC]))
        w.vwrite(d, post(x) if post else x, 64)
    return h


def _build_compare(inst):
    """v_cmp[x]_<cond>_f64 and v_cmp[x]_class_f64: a lane mask to VCC, an SGPR or EXEC."""
    name = inst.name
    cmpx = name.startswith("v_cmpx_")
    cond = name.split("_")[2]
    fn = D.cmp_class if cond == "class" else (lambda a, b: D.compare(cond, a, b))
    r0, r1 = X.source_readers(inst)
    dst = EXEC if cmpx else (inst.f["vdst"] if inst.fmt == Fmt.VOP3 else VCC)

    def h(w, ctx):
        bools = fn(r0(w), r1(w)) & w.mask()
        w.swrite(dst, 32, w.lane_mask_bits(bools))
    return h


def _compare_names() -> list[str]:
    conds = [c for c in D.CMP_CONDITIONS if c not in ("f", "t")] + ["class"]
    return [f"v_{k}_{c}_f64" for k in ("cmp", "cmpx") for c in conds]


BUILDERS = {name: _build_elementwise for name in _ELEMENTWISE}
BUILDERS.update({name: _build_compare for name in _compare_names()})
BUILDERS.update({"v_div_scale_f64": _build_div_scale, "v_div_fmas_f64": _build_div_fmas})
