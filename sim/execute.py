"""Turns a decoded instruction into a handler ``fn(wave, ctx) -> status``.

A handler is built once per static instruction (the model caches it by PC) with the
instruction's fields captured, so executing it costs only the numpy work of its
semantics. ``status`` is None to continue, ``"wait"`` when the wave blocks on the
workgroup barrier, and ``"end"`` at s_endpgm. The engine sets ``wave.pc`` to the next
instruction before calling a handler; branches overwrite it.
"""
from __future__ import annotations

import numpy as np

from isa import Fmt, Inst
from . import fp32 as F
from . import vector as V
from .memory_ops import build_ds, build_global, build_smem
from .scratch import build_flat, build_scratch
from .scalar import M32, SAVEEXEC, SOP1, SOP1_BITSET, SOP2, sopc, sopk, sx
from .dpp import build_dpp
from .lanes import BUILDERS as LANE_BUILDERS
from .salu_f16 import BUILDERS as SALU_F16_BUILDERS
from .valu_ext import BUILDERS as EXT_BUILDERS
from .valu64 import BUILDERS as F64_BUILDERS
from .vopd import build_vopd
from .valu_common import (VINT, as_lanes, build_carry, build_lanewise, build_mad64, lane_bits,
                          omod_clamp, source_readers, valu_sources, vdst_of)
from .wave import EXEC, LANES, VCC, ModelError

U32, U64 = np.uint32, np.uint64
SIGN32 = U32(0x8000_0000)
ONE_F32 = U32(0x3F80_0000)

# --------------------------------------------------------------------------------------
# Vector semantics tables: name -> f(*sources) on full lane arrays.
# 16-bit integer ops (gfx12 "fake16": halves of 32-bit VGPRs picked by op_sel):
# name -> (f on int64 lane arrays of the extended 16-bit sources, signed?)
V16 = {
    "v_add_nc_u16": (lambda a, b: a + b, False), "v_add_nc_i16": (lambda a, b: a + b, True),
    "v_sub_nc_u16": (lambda a, b: a - b, False), "v_sub_nc_i16": (lambda a, b: a - b, True),
    "v_mul_lo_u16": (lambda a, b: a * b, False),
    "v_mad_u16": (lambda a, b, c: a * b + c, False), "v_mad_i16": (lambda a, b, c: a * b + c, True),
    "v_max_u16": (np.maximum, False), "v_max_i16": (np.maximum, True),
    "v_min_u16": (np.minimum, False), "v_min_i16": (np.minimum, True),
    "v_lshlrev_b16": (lambda a, b: b << (a & 15), False),
    "v_lshrrev_b16": (lambda a, b: b >> (a & 15), False),
    "v_ashrrev_i16": (lambda a, b: b >> (a & 15), True),
    "v_and_b16": (lambda a, b: a & b, False), "v_or_b16": (lambda a, b: a | b, False),
    "v_xor_b16": (lambda a, b: a ^ b, False), "v_not_b16": (lambda a: ~a, False),
}
# 16-bit sources, 32-bit result: name -> (f, signed?)
V16_TO_32 = {
    "v_cvt_u32_u16": (lambda a: a, False), "v_cvt_i32_i16": (lambda a: a, True),
    "v_mad_u32_u16": (lambda a, b, c: a * b + c, False), "v_mad_i32_i16": (lambda a, b, c: a * b + c, True),
}

VFLOAT = {}  # filled from sim.fp32 below; kept apart so clamp/omod apply only to float results


def _register_float_ops():
    table = {
        "v_add_f32": F.add, "v_sub_f32": F.sub, "v_subrev_f32": lambda a, b: F.sub(b, a),
        "v_mul_f32": F.mul, "v_fma_f32": F.fma,
        "v_min_num_f32": F.min_num, "v_max_num_f32": F.max_num,
        "v_minimum_f32": getattr(F, "minimum", None), "v_maximum_f32": getattr(F, "maximum", None),
        "v_min3_num_f32": lambda a, b, c: F.min_num(F.min_num(a, b), c),
        "v_max3_num_f32": lambda a, b, c: F.max_num(F.max_num(a, b), c),
        "v_med3_num_f32": getattr(F, "med3_num", None),
        "v_ldexp_f32": getattr(F, "ldexp", None),
        "v_cvt_f32_i32": F.cvt_f32_i32, "v_cvt_f32_u32": F.cvt_f32_u32,
        "v_cvt_i32_f32": F.cvt_i32_f32, "v_cvt_u32_f32": F.cvt_u32_f32,
        "v_cvt_f32_ubyte0": lambda a: F.cvt_f32_u32(a & U32(0xFF)),
        "v_cvt_f32_ubyte1": lambda a: F.cvt_f32_u32((a >> U32(8)) & U32(0xFF)),
        "v_cvt_f32_ubyte2": lambda a: F.cvt_f32_u32((a >> U32(16)) & U32(0xFF)),
        "v_cvt_f32_ubyte3": lambda a: F.cvt_f32_u32(a >> U32(24)),
        "v_floor_f32": F.floor, "v_ceil_f32": F.ceil, "v_trunc_f32": F.trunc, "v_rndne_f32": F.rndne,
        "v_fract_f32": F.fract,
        "v_rcp_f32": F.rcp, "v_rcp_iflag_f32": F.rcp, "v_rsq_f32": F.rsq, "v_sqrt_f32": F.sqrt,
        "v_exp_f32": F.exp, "v_log_f32": F.log,
    }
    VFLOAT.update({k: v for k, v in table.items() if v is not None})


_register_float_ops()

# Operations whose VOP3 clamp bit saturates an integer result instead of clamping a float.
_INT_CLAMP_OK = set()

IMPLEMENTED: set[str] = set()  # completed at the end of this module


# --------------------------------------------------------------------------------------
def build(inst: Inst):
    """Return the handler for ``inst`` or raise ModelError if the model cannot execute it."""
    fmt, name = inst.info.fmt, inst.name
    if inst.vopd is not None:
        return build_vopd(inst, build)
    if inst.dpp is not None:
        return build_dpp(inst, build)
    if name in LANE_BUILDERS:
        return LANE_BUILDERS[name](inst)
    if name in EXT_BUILDERS:
        return EXT_BUILDERS[name](inst)
    if name in F64_BUILDERS:
        return F64_BUILDERS[name](inst)
    if name in SALU_F16_BUILDERS:
        return SALU_F16_BUILDERS[name](inst)
    if fmt == Fmt.SOP2:
        return _build_sop2(inst)
    if fmt == Fmt.SOP1:
        return _build_sop1(inst)
    if fmt == Fmt.SOPC:
        return _build_sopc(inst)
    if fmt == Fmt.SOPK:
        return _build_sopk(inst)
    if fmt == Fmt.SOPP:
        return _build_sopp(inst)
    if fmt == Fmt.SMEM:         # the prefetch, probe and cache hints have no effect here
        return _build_nop(inst) if inst.info.kind == "shint" else build_smem(inst)
    if fmt == Fmt.DS:
        return build_ds(inst)
    if fmt == Fmt.VGLOBAL:
        return build_global(inst)
    if fmt == Fmt.VSCRATCH:
        return build_scratch(inst)
    if fmt == Fmt.VFLAT:
        return build_flat(inst)
    if name.startswith(("v_cmp_", "v_cmpx_")):
        return _build_vcmp(inst)
    if name in _SPECIAL_VALU:
        return _SPECIAL_VALU[name](inst)
    if name in V16 or name in V16_TO_32:
        return _build_valu16(inst)
    if name in ("v_add_nc_i32", "v_sub_nc_i32"):
        return _build_add_i32(inst)
    if name in VINT or name in VFLOAT:
        return _build_valu(inst)
    raise ModelError(f"{name} is decoded but not implemented by the model")


def _unsupported(inst):
    raise ModelError(f"{inst.name} is decoded but not implemented by the model")


# -- scalar -----------------------------------------------------------------------------
def _sfloat(vname):
    """A VALU float function applied to one scalar bit pattern."""
    fn = VFLOAT[vname]
    return lambda *xs: int(fn(*[np.full(1, x, U32) for x in xs])[0])


def _build_sop2_float(inst):
    name, lit = inst.name, inst.literal
    s0, s1, d = inst.f["ssrc0"], inst.f["ssrc1"], inst.f["sdst"]
    if name in ("s_fmac_f32", "s_fmaak_f32", "s_fmamk_f32"):
        fma = _sfloat("v_fma_f32")
        order = {"s_fmac_f32": lambda a, b, dd: (a, b, dd), "s_fmaak_f32": lambda a, b, dd: (a, b, lit),
                 "s_fmamk_f32": lambda a, b, dd: (a, lit, b)}[name]
        return lambda w, ctx: w.swrite(d, 32, fma(*order(w.sread(s0, 32, lit), w.sread(s1, 32, lit), w.s[d])))
    fn = _sfloat("v" + name[1:])
    return lambda w, ctx: w.swrite(d, 32, fn(w.sread(s0, 32, lit), w.sread(s1, 32, lit)))


def _build_sop2(inst):
    if inst.name.endswith("_f32") and inst.name not in SOP2:
        return _build_sop2_float(inst)
    fn = SOP2.get(inst.name) or _unsupported(inst)
    (b0, b1), db = inst.info.src_bits, inst.info.dst_bits
    s0, s1, d, lit = inst.f["ssrc0"], inst.f["ssrc1"], inst.f["sdst"], inst.literal

    def h(w, ctx):
        r, scc = fn(w.sread(s0, b0, lit), w.sread(s1, b1, lit), w.scc)
        w.swrite(d, db, r)
        if scc is not None:
            w.scc = scc
    return h


def _build_sop1(inst):
    name, lit = inst.name, inst.literal
    s0, d = inst.f["ssrc0"], inst.f["sdst"]
    b0 = inst.info.src_bits[0] if inst.info.src_bits else 32
    db = inst.info.dst_bits
    if name.endswith("_saveexec_b32"):
        op = SAVEEXEC[name[2:-len("_saveexec_b32")]]

        def h(w, ctx):
            src, old = w.sread(s0, 32, lit), w.s[EXEC]
            new = op(src, old) & M32
            w.s[EXEC] = new
            w.swrite(d, 32, old)
            w.scc = int(new != 0)
        return h
    if name.endswith("_wrexec_b32"):  # EXEC = op(S0, EXEC); D = the new EXEC
        op = SAVEEXEC[name[2:-len("_wrexec_b32")]]

        def h(w, ctx):
            new = op(w.sread(s0, 32, lit), w.s[EXEC]) & M32
            w.s[EXEC] = new
            w.swrite(d, 32, new)
            w.scc = int(new != 0)
        return h
    if name == "s_barrier_signal":
        def h(w, ctx):
            ctx.barrier_signal(w)
        return h
    if name == "s_barrier_signal_isfirst":
        if s0 != 0xC1:       # -1, the workgroup barrier: the only one the model keeps
            raise ModelError(f"{name}: only barrier -1 (the workgroup's) is modelled")

        def h(w, ctx):       # SCC: no other wave has signalled this phase of the barrier yet
            w.scc = int(not any(v.barrier_phase == ctx.phase for v in ctx.waves if v is not w))
            ctx.barrier_signal(w)
        return h
    if name in ("s_cmov_b32", "s_cmov_b64"):
        def h(w, ctx):
            if w.scc:
                w.swrite(d, db, w.sread(s0, b0, lit))
        return h
    if name in SOP1_BITSET:
        fn = SOP1_BITSET[name]

        def h(w, ctx):
            w.swrite(d, db, fn(w.sread(s0, 32, lit), w.sread(d, db, None)))
        return h
    if name == "s_getpc_b64":
        def h(w, ctx):
            w.swrite(d, 64, inst.pc + inst.size)
        return h
    if name == "s_setpc_b64":
        def h(w, ctx):
            w.pc = w.sread(s0, 64, lit)
        return h
    if name == "s_swappc_b64":
        def h(w, ctx):
            target = w.sread(s0, 64, lit)
            w.swrite(d, 64, inst.pc + inst.size)
            w.pc = target
        return h
    if name.startswith(("s_cvt_", "s_floor_", "s_ceil_", "s_trunc_", "s_rndne_")) \
            and name.endswith(("f32", "i32", "u32")) and "v" + name[1:] in VFLOAT:
        fn1 = _sfloat("v" + name[1:])
        return lambda w, ctx: w.swrite(d, 32, fn1(w.sread(s0, 32, lit)))
    fn = SOP1.get(name) or _unsupported(inst)

    def h(w, ctx):
        r, scc = fn(w.sread(s0, b0, lit), w.scc)
        w.swrite(d, db, r)
        if scc is not None:
            w.scc = scc
    return h


def _build_sopc(inst):
    if inst.name.endswith("_f32"):
        cond = inst.name.split("_")[2]
        fcmp = lambda a, b: int(F.compare(cond, np.full(1, a, U32), np.full(1, b, U32))[0])
        s0, s1, lit = inst.f["ssrc0"], inst.f["ssrc1"], inst.literal

        def hf(w, ctx):
            w.scc = fcmp(w.sread(s0, 32, lit), w.sread(s1, 32, lit))
        return hf
    fn = sopc(inst.name) or _unsupported(inst)
    (b0, b1), lit = inst.info.src_bits, inst.literal
    s0, s1 = inst.f["ssrc0"], inst.f["ssrc1"]

    def h(w, ctx):
        w.scc = fn(w.sread(s0, b0, lit), w.sread(s1, b1, lit))
    return h


def _build_sopk(inst):
    fn = sopk(inst.name) or _unsupported(inst)
    d, k = inst.f["sdst"], inst.f["simm16"]

    def h(w, ctx):
        r, scc = fn(w.sread(d, 32, None), k, w.scc)
        if r is not None:
            w.swrite(d, 32, r)
        if scc is not None:
            w.scc = scc
    return h


_BRANCH_COND = {
    "s_branch": lambda w: True,
    "s_cbranch_scc0": lambda w: w.scc == 0,
    "s_cbranch_scc1": lambda w: w.scc == 1,
    "s_cbranch_vccz": lambda w: w.s[VCC] == 0,
    "s_cbranch_vccnz": lambda w: w.s[VCC] != 0,
    "s_cbranch_execz": lambda w: w.s[EXEC] == 0,
    "s_cbranch_execnz": lambda w: w.s[EXEC] != 0,
}

# SOPP instructions with no architectural effect in an ISA-level model: the waits are
# satisfied because the model completes every memory access at issue; the rest are hints.
_SOPP_NOP = {
    "s_nop", "s_clause", "s_delay_alu", "s_wait_alu", "s_sendmsg", "s_setprio", "s_sleep",
    "s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt", "s_wait_bvhcnt", "s_wait_expcnt",
    "s_wait_dscnt", "s_wait_kmcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_idle",
    "s_icache_inv",
}


def _build_sopp(inst):
    name = inst.name
    if name in _BRANCH_COND:
        cond = _BRANCH_COND[name]
        target = inst.pc + 4 + sx(inst.f["simm16"], 16) * 4

        def h(w, ctx):
            if cond(w):
                w.pc = target
        return h
    if name == "s_endpgm":
        return lambda w, ctx: "end"
    if name == "s_barrier_wait":
        return lambda w, ctx: ctx.barrier_wait(w)
    if name in _SOPP_NOP:
        return lambda w, ctx: None
    _unsupported(inst)


# -- vector ALU -----------------------------------------------------------------------
def _build_valu(inst, fn=None, is_float=False):
    """A VALU op computed by ``fn`` (default: its VFLOAT or VINT entry) on whole lanes."""
    if fn is None:
        is_float = inst.name in VFLOAT
        fn = VFLOAT[inst.name] if is_float else VINT[inst.name]
    return build_lanewise(inst, fn, is_float)


def _build_valu16(inst):
    """16-bit ops: op_sel[i] picks the high half of source i, op_sel[3] the destination half.
    The other half of the destination is preserved (see docs/model.md)."""
    name = inst.name
    wide = name in V16_TO_32
    fn, signed = V16_TO_32[name] if wide else V16[name]
    opsel = inst.f.get("opsel", 0) if inst.fmt == Fmt.VOP3 else 0
    clamp = inst.f.get("clamp", 0) if inst.fmt == Fmt.VOP3 else 0
    if inst.f.get("neg", 0) or inst.f.get("abs", 0) or inst.f.get("omod", 0):
        raise ModelError(f"{name}: float modifiers on an integer operation")
    codes, bits = valu_sources(inst), inst.info.src_bits
    d = vdst_of(inst)

    def source(w, i):
        # a 16-bit operand takes an inline constant's 16-bit form, zero-extended: FP16 for the
        # float constants (1.0 -> 0x3c00; docs/model.md, "Inline constants in 16-bit operands")
        x = as_lanes(w.vread(codes[i], bits[i], inst.literal)).astype(np.int64)
        if bits[i] == 32:
            return x - ((x >> 31 & 1) << 32) if signed else x
        h = (x >> (16 * (opsel >> i & 1))) & 0xFFFF
        return h - ((h >> 15 & 1) << 16) if signed else h

    lo, hi = (-(1 << 15), (1 << 15) - 1) if signed else (0, 0xFFFF)
    if wide:
        lo, hi = (-(1 << 31), (1 << 31) - 1) if signed else (0, M32)

    def h(w, ctx):
        r = fn(*[source(w, i) for i in range(len(codes))])
        if clamp:
            r = np.clip(r, lo, hi)
        if wide:
            w.vwrite(d, (r & M32).astype(U32))
            return
        r = (r & 0xFFFF).astype(U32)
        old = w.v[d]
        merged = (old & U32(0xFFFF)) | (r << U32(16)) if opsel >> 3 & 1 else (old & U32(0xFFFF_0000)) | r
        w.vwrite(d, merged)
    return h


def _build_add_i32(inst):
    """v_add_nc_i32 / v_sub_nc_i32: wrap, or saturate to the int32 range with clamp."""
    r0, r1 = source_readers(inst)
    sub = inst.name == "v_sub_nc_i32"
    clamp = inst.f.get("clamp", 0)
    d = vdst_of(inst)

    def h(w, ctx):
        a = r0(w).view(np.int32).astype(np.int64)
        b = r1(w).view(np.int32).astype(np.int64)
        r = a - b if sub else a + b
        if clamp:
            r = np.clip(r, -(1 << 31), (1 << 31) - 1)
        w.vwrite(d, (r & M32).astype(U32))
    return h


def _float_compare(cond):
    return lambda a, b: F.compare(cond, a, b)


def _build_vcmp(inst):
    name = inst.name
    cmpx = name.startswith("v_cmpx_")
    parts = name.split("_")  # v, cmp(x), cond, type
    cond, typ = parts[2], parts[3]
    if cond == "class":
        fn = F.cmp_class
    elif typ in ("f32",):
        fn = _float_compare(cond)
    elif typ in ("i32", "u32", "i64", "u64"):
        fn = V.int_compare(cond, typ)
    else:
        _unsupported(inst)
    reads = source_readers(inst)
    if inst.fmt == Fmt.VOP3:
        dst = EXEC if cmpx else inst.f["vdst"]
    else:
        dst = EXEC if cmpx else VCC
    r0, r1 = reads

    def h(w, ctx):
        bools = fn(r0(w), r1(w)) & w.mask()
        w.swrite(dst, 32, w.lane_mask_bits(bools))
    return h


def _build_cndmask(inst):
    r0, r1 = source_readers(inst)[:2]
    d = vdst_of(inst)
    sel_code = inst.f["src2"] if inst.fmt == Fmt.VOP3 else VCC

    def h(w, ctx):
        sel = lane_bits(w.sread(sel_code, 32, inst.literal))
        w.vwrite(d, np.where(sel, r1(w), r0(w)))
    return h


def _build_fmac(inst):
    r0, r1 = source_readers(inst)[:2]
    d = vdst_of(inst)
    post = omod_clamp(inst, True)

    def h(w, ctx):
        x = F.fma(r0(w), r1(w), w.v[d])
        w.vwrite(d, post(x) if post else x)
    return h


def _build_fmak(inst):
    """v_fmamk_f32 D = S0 * K + S1; v_fmaak_f32 D = S0 * S1 + K (K is the literal)."""
    r0, r1 = source_readers(inst)[:2]
    d, k = vdst_of(inst), np.full(LANES, inst.literal, U32)
    if inst.name == "v_fmamk_f32":
        return lambda w, ctx: w.vwrite(d, F.fma(r0(w), k, r1(w)))
    return lambda w, ctx: w.vwrite(d, F.fma(r0(w), r1(w), k))


def _first_active(w) -> int:
    e = w.s[EXEC]
    return (e & -e).bit_length() - 1 if e else 0


def _build_readfirstlane(inst):
    src, d = valu_sources(inst)[0], vdst_of(inst)

    def h(w, ctx):
        x = w.vread(src, 32, inst.literal)
        w.swrite(d, 32, int(x[_first_active(w)]) if isinstance(x, np.ndarray) else int(x))
    return h


def _build_readlane(inst):
    src, lane_code = inst.f["src0"], inst.f["src1"]
    d = vdst_of(inst)

    def h(w, ctx):
        lane = w.sread(lane_code, 32, inst.literal) & 31
        x = w.vread(src, 32, inst.literal)
        w.swrite(d, 32, int(x[lane]) if isinstance(x, np.ndarray) else int(x))
    return h


def _build_writelane(inst):
    src, lane_code = inst.f["src0"], inst.f["src1"]
    d = vdst_of(inst)

    def h(w, ctx):
        lane = w.sread(lane_code, 32, inst.literal) & 31
        w.v[d][lane] = w.sread(src, 32, inst.literal)
    return h


def _build_mbcnt(inst):
    r0, r1 = source_readers(inst)
    d = vdst_of(inst)
    below = (U64(1) << np.arange(LANES, dtype=U64)) - U64(1)
    hi = inst.name.endswith("hi_u32_b32")

    def h(w, ctx):
        m = r0(w).astype(U64)
        cnt = np.zeros(LANES, U32) if hi else V.popcount((m & below).astype(U32))  # wave32: hi half counts nothing
        w.vwrite(d, cnt + r1(w))
    return h


def _build_nop(inst):
    return lambda w, ctx: None


_SPECIAL_VALU = {
    "v_cndmask_b32": _build_cndmask,
    "v_add_co_u32": build_carry, "v_sub_co_u32": build_carry, "v_subrev_co_u32": build_carry,
    "v_add_co_ci_u32": build_carry, "v_sub_co_ci_u32": build_carry, "v_subrev_co_ci_u32": build_carry,
    "v_mad_co_u64_u32": build_mad64, "v_mad_co_i64_i32": build_mad64,
    "v_fmac_f32": _build_fmac, "v_fmamk_f32": _build_fmak, "v_fmaak_f32": _build_fmak,
    "v_readfirstlane_b32": _build_readfirstlane, "v_readlane_b32": _build_readlane,
    "v_writelane_b32": _build_writelane,
    "v_mbcnt_lo_u32_b32": _build_mbcnt, "v_mbcnt_hi_u32_b32": _build_mbcnt,
    "v_nop": _build_nop,
}


def _implemented() -> set[str]:
    from isa import OPCODES
    from .memory_ops import IMPLEMENTED_MEMORY
    names = set(VINT) | set(VFLOAT) | set(_SPECIAL_VALU) | set(V16) | set(V16_TO_32) | {"v_add_nc_i32", "v_sub_nc_i32"}
    names |= set(SOP2) | set(SOP1) | set(SOP1_BITSET)
    names |= {"s_cmov_b32", "s_cmov_b64", "s_barrier_signal", "s_getpc_b64", "s_setpc_b64", "s_swappc_b64"}
    names.add("s_barrier_signal_isfirst")
    names |= {f"s_{k}_saveexec_b32" for k in SAVEEXEC} | {"s_and_not0_wrexec_b32", "s_and_not1_wrexec_b32"}
    names |= set(_BRANCH_COND) | _SOPP_NOP | {"s_endpgm", "s_barrier_wait"} | IMPLEMENTED_MEMORY
    names |= set(F64_BUILDERS)
    names |= set(SALU_F16_BUILDERS)
    names |= set(EXT_BUILDERS) | set(LANE_BUILDERS)
    names |= {i.name for i in OPCODES if i.fmt == Fmt.SMEM and i.kind == "shint"}
    for info in OPCODES:
        n = info.name
        if info.fmt == Fmt.SOP2 and n.endswith("_f32") \
                and ("v" + n[1:] in VFLOAT or n in ("s_fmac_f32", "s_fmaak_f32", "s_fmamk_f32")):
            names.add(n)
        elif info.fmt == Fmt.SOP1 and "v" + n[1:] in VFLOAT:
            names.add(n)
        elif info.fmt == Fmt.SOPC and n.endswith("_f32"):
            names.add(n)
        elif info.fmt == Fmt.SOPC and sopc(n):
            names.add(n)
        elif info.fmt == Fmt.SOPK and sopk(n):
            names.add(n)
        elif n.startswith(("v_cmp_", "v_cmpx_")):
            typ = n.split("_")[3] if n.count("_") >= 3 else ""
            if typ in ("f32", "i32", "u32", "i64", "u64"):
                names.add(n)
    return names & {i.name for i in OPCODES}


IMPLEMENTED |= _implemented()
