"""VALU operand plumbing shared by :mod:`sim.execute` and the VALU modules it consults
(:mod:`sim.valu_ext`, :mod:`sim.valu64`, :mod:`sim.valu_f16`, :mod:`sim.packed`): source
readers with the VOP3 ``abs``/``neg`` modifiers, ``omod``/``clamp``, lane masks, the
handler builders of lane-wise, carry and 64-bit multiply-add operations, and the table of
the integer operations built lane-wise (:data:`VINT`).
"""
from __future__ import annotations

import numpy as np

from isa import Fmt, Inst
from . import fp32 as F
from . import vector as V
from .scalar import M32
from .wave import LANES, VCC, ModelError

U32, U64 = np.uint32, np.uint64
SIGN32 = U32(0x8000_0000)


# Integer VALU operations: name -> f(*sources) on full lane arrays (32-bit, and the 64-bit
# shifts). Their clamp and op_sel bits are refused (sim.valu_ext saturates the few with clamp).
VINT = {
    "v_mov_b32": lambda a: a,
    "v_not_b32": lambda a: ~a,
    "v_bfrev_b32": V.brev,
    "v_ctz_i32_b32": V.ctz,
    "v_clz_i32_u32": V.clz,
    "v_cls_i32": V.cls,
    "v_add_nc_u32": lambda a, b: a + b,
    "v_sub_nc_u32": lambda a, b: a - b,
    "v_subrev_nc_u32": lambda a, b: b - a,
    "v_mul_lo_u32": V.mul_lo,
    "v_mul_hi_u32": V.mul_hi_u32,
    "v_mul_hi_i32": V.mul_hi_i32,
    "v_mul_u32_u24": lambda a, b: V.mul_lo(V.u24(a), V.u24(b)),
    "v_mul_hi_u32_u24": lambda a, b: V.mul_hi_u32(V.u24(a), V.u24(b)),
    "v_mul_i32_i24": lambda a, b: (V.i24(a) * V.i24(b)).astype(U64).astype(U32),
    "v_mul_hi_i32_i24": lambda a, b: ((V.i24(a) * V.i24(b)) >> 32).astype(U64).astype(U32),
    "v_mad_u32_u24": lambda a, b, c: V.mul_lo(V.u24(a), V.u24(b)) + c,
    "v_mad_i32_i24": lambda a, b, c: (V.i24(a) * V.i24(b)).astype(U64).astype(U32) + c,
    "v_add3_u32": lambda a, b, c: a + b + c,
    "v_xad_u32": lambda a, b, c: (a ^ b) + c,
    "v_lshl_add_u32": lambda a, b, c: (a << (b & U32(31))) + c,
    "v_add_lshl_u32": lambda a, b, c: (a + b) << (c & U32(31)),
    "v_lshl_or_b32": lambda a, b, c: (a << (b & U32(31))) | c,
    "v_and_or_b32": lambda a, b, c: (a & b) | c,
    "v_or3_b32": lambda a, b, c: a | b | c,
    "v_xor3_b32": lambda a, b, c: a ^ b ^ c,
    "v_and_b32": lambda a, b: a & b,
    "v_or_b32": lambda a, b: a | b,
    "v_xor_b32": lambda a, b: a ^ b,
    "v_xnor_b32": lambda a, b: ~(a ^ b),
    "v_lshlrev_b32": lambda a, b: b << (a & U32(31)),
    "v_lshrrev_b32": lambda a, b: b >> (a & U32(31)),
    "v_ashrrev_i32": lambda a, b: (b.view(np.int32) >> (a & U32(31)).astype(np.int32)).view(U32),
    "v_lshlrev_b64": lambda a, b: b << (a & U32(63)).astype(U64),
    "v_lshrrev_b64": lambda a, b: b >> (a & U32(63)).astype(U64),
    "v_ashrrev_i64": lambda a, b: (b.view(np.int64) >> (a & U32(63)).astype(np.int64)).view(U64),
    "v_bfe_u32": V.bfe_u32,
    "v_bfe_i32": V.bfe_i32,
    "v_bfi_b32": lambda a, b, c: (a & b) | (~a & c),
    "v_bfm_b32": lambda a, b: ((U32(1) << (a & U32(31))) - U32(1)) << (b & U32(31)),
    "v_bcnt_u32_b32": lambda a, b: V.popcount(a) + b,
    "v_alignbit_b32": V.alignbit,
    "v_alignbyte_b32": V.alignbyte,
    "v_min_i32": V.smin,
    "v_max_i32": V.smax,
    "v_min_u32": np.minimum,
    "v_max_u32": np.maximum,
    "v_min3_i32": lambda a, b, c: V.smin(V.smin(a, b), c),
    "v_max3_i32": lambda a, b, c: V.smax(V.smax(a, b), c),
    "v_min3_u32": lambda a, b, c: np.minimum(np.minimum(a, b), c),
    "v_max3_u32": lambda a, b, c: np.maximum(np.maximum(a, b), c),
    "v_med3_i32": V.med3_i32,
    "v_maxmin_i32": lambda a, b, c: V.smin(V.smax(a, b), c),
    "v_minmax_i32": lambda a, b, c: V.smax(V.smin(a, b), c),
    "v_maxmin_u32": lambda a, b, c: np.minimum(np.maximum(a, b), c),
    "v_minmax_u32": lambda a, b, c: np.maximum(np.minimum(a, b), c),
    "v_perm_b32": V.perm,
    "v_med3_u32": V.med3_u32,
}


def as_lanes(x, bits=32):
    """Broadcast a scalar source to a lane array (so numpy wraps instead of warning)."""
    if isinstance(x, np.ndarray) and x.shape == (LANES,):
        return x
    return np.full(LANES, x, dtype=U64 if bits == 64 else U32)


# --------------------------------------------------------------------------------------
# Source operand plumbing for the VALU encodings.
def valu_sources(inst: Inst):
    """The 9-bit source codes of a VALU instruction in operand order."""
    f, fmt = inst.f, inst.fmt
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        codes = [f["src0"], f["src1"], f["src2"]]
    elif fmt == Fmt.VOP1:
        codes = [f["src0"]]
    else:  # VOP2, VOPC
        codes = [f["src0"], 256 + f["vsrc1"]]
    return codes[: len(inst.info.src_bits)]


def make_reader(code: int, bits: int, lit, neg: bool, absf: bool):
    """w -> the lanes of source ``code`` (``bits`` wide), its abs and neg modifiers applied."""
    sign = (U64(1) << U64(63)) if bits == 64 else SIGN32

    def read(w):
        x = as_lanes(w.vread(code, bits, lit), bits)
        if absf:
            x = x & ~sign
        if neg:
            x = x ^ sign
        return x
    return read


def source_readers(inst: Inst):
    """One :func:`make_reader` per source operand of a VALU instruction, in operand order."""
    codes = valu_sources(inst)
    f = inst.f
    neg = f.get("neg", 0)
    absm = f.get("abs", 0) if inst.fmt == Fmt.VOP3 else 0
    return [make_reader(c, b, _literal(inst, b), bool(neg >> i & 1), bool(absm >> i & 1))
            for i, (c, b) in enumerate(zip(codes, inst.info.src_bits))]


def _literal(inst: Inst, bits: int):
    """The literal as a `bits`-wide source: a 64-bit float operand takes it as its high half."""
    if bits == 64 and inst.literal is not None and "_f64" in inst.name:
        return inst.literal << 32
    return inst.literal


def omod_clamp(inst: Inst, is_float: bool):
    """Return a post-processing function for VOP3 omod/clamp, or None."""
    f = inst.f
    omod, clamp = f.get("omod", 0), f.get("clamp", 0)
    if not omod and not clamp:
        return None
    if not is_float:
        raise ModelError(f"{inst.name}: clamp/omod on an integer operation is not supported by the model")
    scale = {1: U32(0x4000_0000), 2: U32(0x4080_0000), 3: U32(0x3F00_0000)}.get(omod)

    def post(x):
        if scale is not None:
            x = F.mul(x, np.full(LANES, scale, U32))
        if clamp:
            x = F.clamp01(x)
        return x
    return post


def vdst_of(inst: Inst) -> int:
    """The destination VGPR's number."""
    return inst.f["vdst"]


def build_lanewise(inst, fn, is_float: bool):
    """A VALU op computed by ``fn`` on whole lanes; ``is_float``: omod/clamp apply to its result."""
    name = inst.name
    reads = source_readers(inst)
    post = omod_clamp(inst, is_float)
    if inst.fmt == Fmt.VOP3 and inst.f.get("opsel", 0):
        raise ModelError(f"{name}: op_sel on a 32-bit operation is not supported by the model")
    d, db = vdst_of(inst), inst.info.dst_bits
    n = len(reads)
    if n == 1:
        r0 = reads[0]

        def h(w, ctx):
            x = fn(r0(w))
            w.vwrite(d, post(x) if post else x, db)
    elif n == 2:
        r0, r1 = reads

        def h(w, ctx):
            x = fn(r0(w), r1(w))
            w.vwrite(d, post(x) if post else x, db)
    else:
        r0, r1, r2 = reads

        def h(w, ctx):
            x = fn(r0(w), r1(w), r2(w))
            w.vwrite(d, post(x) if post else x, db)
    return h


def lane_bits(value: int) -> np.ndarray:
    """A 32-bit lane mask (an SGPR value) as one bool per lane."""
    return ((np.uint32(value & M32) >> np.arange(LANES, dtype=U32)) & U32(1)).astype(bool)


def build_carry(inst):
    """v_add/sub/subrev_co_u32 and the _co_ci_ forms: carry in/out through VCC or SGPRs."""
    name = inst.name
    reads = source_readers(inst)
    r0, r1 = reads[0], reads[1]
    d = vdst_of(inst)
    vop3 = inst.fmt in (Fmt.VOP3, Fmt.VOP3SD)
    cout = inst.f["sdst"] if vop3 else VCC
    with_ci = "_co_ci_" in name
    cin_code = (inst.f["src2"] if vop3 else VCC) if with_ci else None
    op = name.split("_")[1]  # add, sub, subrev

    def h(w, ctx):
        a, b = r0(w), r1(w)
        cin = lane_bits(w.sread(cin_code, 32, inst.literal)) if with_ci else None
        if op == "add":
            r, c = V.add_co(a, b, cin)
        elif op == "sub":
            r, c = V.sub_co(a, b, cin)
        else:
            r, c = V.sub_co(b, a, cin)
        m = w.mask()
        w.vwrite(d, r, mask=m)
        w.swrite(cout, 32, w.lane_mask_bits(c & m))
    return h


def build_mad64(inst):
    """v_mad_co_u64_u32 / v_mad_co_i64_i32: the 64-bit result and the carry out to an SGPR."""
    r0, r1, r2 = source_readers(inst)
    d, sd = vdst_of(inst), inst.f["sdst"]
    fn = V.mad_u64_u32 if inst.name == "v_mad_co_u64_u32" else V.mad_i64_i32

    def h(w, ctx):
        r, c = fn(r0(w), r1(w), r2(w))
        m = w.mask()
        w.vwrite(d, r, 64, mask=m)
        w.swrite(sd, 32, w.lane_mask_bits(c & m))
    return h
