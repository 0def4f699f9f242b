"""The float MODE of a wave: rounding and denormal handling (gfx1200 MODE register bits 7:0).

Layout (LLVM AMDGPUUsage, "compute_pgm_rsrc1" and the MODE register; RDNA 4 ISA guide):

* FP_ROUND, MODE[3:0]: [1:0] single precision, [3:2] double and half precision; each 0 round
  to nearest even, 1 toward +inf, 2 toward -inf, 3 toward zero
  (FLOAT_ROUND_MODE_NEAR_EVEN / PLUS_INFINITY / MINUS_INFINITY / ZERO);
* FP_DENORM, MODE[7:4]: [5:4] single, [7:6] double and half; bit 0 of each keeps source
  denormals, bit 1 keeps result denormals (FLOAT_DENORM_MODE_FLUSH_SRC_DST 0, FLUSH_DST 1,
  FLUSH_SRC 2, FLUSH_NONE 3).

A wave starts with the kernel descriptor's FLOAT_ROUND_MODE_32 (rsrc1[13:12]),
FLOAT_ROUND_MODE_16_64 ([15:14]), FLOAT_DENORM_MODE_32 ([17:16]) and FLOAT_DENORM_MODE_16_64
([19:18]); clang-19 builds OpenCL C for gfx1200 with 0, 0, 3, 3 (``DEFAULT_MODE``), and with
``-cl-denorms-are-zero`` FLOAT_DENORM_MODE_32 0. ``s_round_mode``/``s_denorm_mode`` write
FP_ROUND/FP_DENORM from simm16[3:0]; ``s_setreg*``/``s_getreg_b32`` reach MODE (hwreg 1).

The engine (sim.model) runs an instruction of a wave whose MODE is not ``DEFAULT_MODE`` through
:func:`wrap`, which publishes the mode in ``STATE`` for the instruction's duration; the float
primitives (sim.fp32, sim.fp32ext, sim.fp16, sim.fp64) read ``STATE`` to flush denormal
sources and results and to round in the directed modes. Flushing keeps the sign; a result is
flushed when its rounded value is denormal. Operations whose directed rounding the model
does not implement are refused (:class:`ModelError` naming the operation and the mode).
"""
from __future__ import annotations

import re

import numpy as np

from isa.abi import DEFAULT_MODE

from .wave import ModelError

U32, U64, F32, F64 = np.uint32, np.uint64, np.float32, np.float64

MODE_BITS = 0xFF                    # the MODE bits the model keeps
HW_REG_MODE = 1
ROUND_NAMES = ("round to nearest even", "round toward +inf", "round toward -inf",
               "round toward zero")
RNE, UP, DOWN, ZERO = 0, 1, 2, 3


def describe(mode: int) -> str:
    """The non-default parts of ``mode``, in words."""
    parts = []
    for name, r in (("f32", mode & 3), ("f16/f64", mode >> 2 & 3)):
        if r:
            parts.append(f"{name} {ROUND_NAMES[r]}")
    for name, d in (("f32", mode >> 4 & 3), ("f16/f64", mode >> 6 & 3)):
        if d != 3:
            parts.append(f"{name} FP_DENORM {d} ({'kept' if d & 1 else 'flushed'} source and "
                         f"{'kept' if d & 2 else 'flushed'} result denormals)")
    return ", ".join(parts) or "the default mode"


class _State:
    """The mode of the instruction being executed: rounding per width, flush flags."""

    def __init__(self):
        self.set(DEFAULT_MODE)

    def set(self, mode: int) -> None:
        self.round = {32: mode & 3, 16: mode >> 2 & 3, 64: mode >> 2 & 3}
        d32, d16 = mode >> 4 & 3, mode >> 6 & 3
        self.flush_in = {32: not d32 & 1, 16: not d16 & 1, 64: not d16 & 1}
        self.flush_out = {32: not d32 & 2, 16: not d16 & 2, 64: not d16 & 2}


STATE = _State()

_EXP = {16: 0x7C00, 32: 0x7F80_0000, 64: 0x7FF0_0000_0000_0000}
_SIGN = {16: 0x8000, 32: 0x8000_0000, 64: 0x8000_0000_0000_0000}


def flush(x, width: int) -> np.ndarray:
    """Denormals of ``width``-bit patterns to zero of the same sign."""
    dt = U64 if width == 64 else U32
    x = np.asarray(x, dt)
    den = ((x & dt(_EXP[width])) == 0) & ((x & dt(_SIGN[width] - 1)) != 0)
    return np.where(den, x & dt(_SIGN[width]), x).astype(dt, copy=False)


def src(width: int, *xs):
    """Sources as the mode reads them (flushed when the mode flushes source denormals)."""
    if not STATE.flush_in[width]:
        return xs if len(xs) != 1 else xs[0]
    out = tuple(flush(x, width) for x in xs)
    return out if len(out) != 1 else out[0]


def result(r, width: int) -> np.ndarray:
    """A result as the mode writes it (flushed when the mode flushes result denormals)."""
    return flush(r, width) if STATE.flush_out[width] else r


# --------------------------------------------------------------------------------------
# Directed rounding from a round-to-nearest-even result
def fma_odd64(fa, fb, fc) -> np.ndarray:
    """fa*fb + fc (float64 arrays holding float32 or narrower values) rounded to float64 with
    round-to-odd: its comparison with any float32 or float16 value is that of the exact value,
    and one further RNE rounding to 24 or fewer bits is the correctly rounded fma. The float64
    product is exact and TwoSum gives s + err exactly; s steps to its odd neighbour toward err."""
    with np.errstate(all="ignore"):
        p = fa * fb
        s = p + fc
        bp = s - p
        err = (p - (s - bp)) + (fc - bp)
        finite = np.isfinite(fa) & np.isfinite(fb) & np.isfinite(fc)
        sb = s.view(U64)
        fix = finite & (err != 0) & ((sb & U64(1)) == 0)
        away = (err > 0) == (s > 0)
        return np.where(fix, np.where(away, sb + U64(1), sb - U64(1)), sb).view(F64)


def _value(r, width: int) -> np.ndarray:
    if width == 32:
        return r.astype(U32).view(F32).astype(F64)
    return (r & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(F64)


def directed(r, x64, mode: int, width: int, neg_zero=None) -> np.ndarray:
    """Round-to-nearest-even result bits ``r`` (16 or 32 bits in uint32) re-rounded in ``mode``.

    ``x64`` compares with every ``width``-bit float as the exact result does (the exact value,
    or its round-to-odd float64). ``neg_zero`` marks the lanes whose exact result is a zero sum
    of addends that are not all zeros of one sign: IEEE 754 gives them -0 toward -inf.
    """
    r = np.asarray(r, U32)
    if mode == RNE:
        return r
    sign = U32(_SIGN[width])
    with np.errstate(invalid="ignore"):
        d = np.asarray(x64, F64) - _value(r, width)
    above, below = d > 0, d < 0                  # NaN (NaN or infinite exact result): neither
    neg = (r & sign) != 0
    mag0 = (r & (sign - U32(1))) == 0
    tiny_up, tiny_down = U32(1), sign | U32(1)   # the smallest denormals
    if mode == UP:
        out = np.where(above, np.where(mag0, tiny_up, np.where(neg, r - U32(1), r + U32(1))), r)
    elif mode == DOWN:
        out = np.where(below, np.where(mag0, tiny_down, np.where(neg, r + U32(1), r - U32(1))), r)
        if neg_zero is not None:
            out = np.where(neg_zero & mag0, sign, out)
    else:
        shrink = (above & neg) | (below & ~neg)
        out = np.where(shrink & ~mag0, r - U32(1), r)
    return out.astype(U32)


def finish(r, width: int, exact=None, addends=()) -> np.ndarray:
    """A round-to-nearest-even result re-rounded in the mode's rounding for ``width``, then its
    denormal flushed if the mode says so. ``exact()`` gives a float64 that compares with every
    ``width``-bit float as the exact result does; ``addends`` are the bit patterns whose exact
    zero sum is -0 toward -inf (None: the result is no sum)."""
    rm = STATE.round[width]
    if rm and exact is not None:
        x64 = exact()
        nz = neg_zero_sum(x64, *addends, width=width) if addends else None
        r = directed(r, x64, rm, width, nz)
    return result(r, width)


def neg_zero_sum(x64, *addends_bits, width: int) -> np.ndarray:
    """Lanes whose exact sum ``x64`` is zero while the addends are not all zeros of one sign."""
    sign = _SIGN[width]
    mags = [(np.asarray(a, U32) & U32(sign - 1)) == 0 for a in addends_bits]
    signs = [(np.asarray(a, U32) & U32(sign)) != 0 for a in addends_bits]
    all_zero = np.logical_and.reduce(mags)
    same = np.logical_and.reduce(signs) | ~np.logical_or.reduce(signs)
    return (np.asarray(x64) == 0) & ~(all_zero & same)


# --------------------------------------------------------------------------------------
# Which operations round, which are exact, which the model refuses in a directed mode
_FLOAT_TYPE = re.compile(r"_(f16|f32|f64|bf16)(?:_|$)")
_EXACT = re.compile(
    r"^[vs]_(cmp|cmpx)_|_(min|max|minimum|maximum|min3|max3|minimum3|maximum3|med3|minmax|maxmin)"
    r"(_num)?_f|_(floor|ceil|trunc|rndne|fract|frexp_mant|frexp_exp)_|^v_cvt_(i32|u32|i16|u16)_f"
    r"|^v_cvt_floor_|^[vs]_cvt_(hi_)?f32_f16|^v_cvt_f64_f32|_cvt_pk_rtz_|_pack_b32_f16|_cmp_class_")
_ROUNDED = {
    "v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32", "v_fma_f32", "v_fmac_f32",
    "v_fmamk_f32", "v_fmaak_f32", "v_ldexp_f32", "v_cvt_f32_i32", "v_cvt_f32_u32",
    "v_cvt_f32_ubyte0", "v_cvt_f32_ubyte1", "v_cvt_f32_ubyte2", "v_cvt_f32_ubyte3",
    "s_add_f32", "s_sub_f32", "s_mul_f32", "s_fmac_f32", "s_fmaak_f32", "s_fmamk_f32",
    "s_cvt_f32_i32", "s_cvt_f32_u32",
    "s_add_f16", "s_sub_f16", "s_mul_f16", "s_fmac_f16", "s_cvt_f16_f32",
    "v_add_f16", "v_sub_f16", "v_subrev_f16", "v_mul_f16", "v_fma_f16", "v_fmac_f16",
    "v_fmamk_f16", "v_fmaak_f16", "v_ldexp_f16", "v_cvt_f16_f32", "v_cvt_f16_i16",
    "v_cvt_f16_u16", "v_pk_add_f16", "v_pk_mul_f16", "v_pk_fma_f16",
    "v_add_f64", "v_mul_f64", "v_fma_f64", "v_cvt_f32_f64", "v_cvt_f64_i32", "v_cvt_f64_u32",
}


# sim.packed widens their halves itself: the mode's flushing does not reach them
_NO_FLUSH = ("v_fma_mix", "v_dot2")


def _dual(name: str) -> str:
    return "v_" + name[len("v_dual_"):] if name.startswith("v_dual_") else name


def check_rounding(name: str, mode: int) -> None:
    """Raise ModelError if ``name`` rounds its result and the model lacks ``mode``'s rounding."""
    name = _dual(name)
    m = _FLOAT_TYPE.search(name)
    if m is None or name in _ROUNDED or _EXACT.search(name):
        return
    r = mode & 3 if m.group(1) == "f32" else mode >> 2 & 3
    if r:
        field = "f32" if m.group(1) == "f32" else "f16/f64"
        raise ModelError(f"{name}: {ROUND_NAMES[r]} ({field} FP_ROUND {r}) is not implemented "
                         "by the model for this operation")


def wrap(inst, handler, mode: int):
    """``handler`` run with ``mode`` published in STATE (refused if it cannot round so)."""
    names = [h.info.name for h in inst.vopd] if inst.vopd is not None else [inst.name]
    for name in names:
        check_rounding(name, mode)
    if inst.f.get("omod") and not mode & 0x80 and "_f64" in inst.name:
        # sim.valu64 ignores omod as hardware does while FP64 result denormals are kept
        raise ModelError(f"{inst.name}: omod with FP64 result denormals flushed is not modelled")
    if inst.name.startswith(_NO_FLUSH) and mode & 0xF0 != DEFAULT_MODE & 0xF0:
        raise ModelError(f"{inst.name}: FP_DENORM {mode >> 4 & 0xF:#x} (denormals flushed) is not "
                         "implemented by the model for this operation")

    def h(w, ctx):
        STATE.set(mode)
        try:
            return handler(w, ctx)
        finally:
            STATE.set(DEFAULT_MODE)
    return h


# --------------------------------------------------------------------------------------
# The MODE-writing and -reading instructions
def _build_mode_field(inst):
    """s_round_mode: FP_ROUND = simm16[3:0]; s_denorm_mode: FP_DENORM = simm16[3:0]."""
    v = inst.f["simm16"] & 0xF
    shift = 0 if inst.name == "s_round_mode" else 4

    def h(w, ctx):
        w.mode = (w.mode & ~(0xF << shift)) | (v << shift)
    return h


def _hwreg(inst):
    """(offset, size) of a MODE field named by simm16; other hardware registers are refused."""
    k = inst.f["simm16"]
    reg, offset, size = k & 0x3F, (k >> 6) & 0x1F, ((k >> 11) & 0x1F) + 1
    if reg != HW_REG_MODE:
        raise ModelError(f"{inst.name}: hardware register {reg} is not modelled (only MODE, 1)")
    return offset, size


def _build_getreg(inst):
    offset, size = _hwreg(inst)
    d = inst.f["sdst"]

    def h(w, ctx):
        w.swrite(d, 32, (w.mode >> offset) & ((1 << size) - 1))
    return h


def _build_setreg(inst):
    """HW_REGISTERS[MODE] bits [offset + size - 1: offset] = value; bits above 7 are refused."""
    offset, size = _hwreg(inst)
    mask = ((1 << size) - 1) << offset & 0xFFFF_FFFF
    imm = inst.name == "s_setreg_imm32_b32"
    code = inst.f["sdst"]

    def h(w, ctx):
        value = inst.literal if imm else w.sread(code, 32, inst.literal)
        bits = (value << offset) & mask
        if bits & ~MODE_BITS:
            raise ModelError(f"{inst.name}: MODE bits {bits & ~MODE_BITS:#x} (above FP_ROUND and "
                             "FP_DENORM) are not modelled")
        w.mode = (w.mode & ~mask) | bits
    return h


MODE_BUILDERS = {
    "s_round_mode": _build_mode_field, "s_denorm_mode": _build_mode_field,
    "s_getreg_b32": _build_getreg, "s_setreg_b32": _build_setreg,
    "s_setreg_imm32_b32": _build_setreg,
}
