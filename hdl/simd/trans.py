"""The transcendental unit's definitions: v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32, v_log_f32.

The unit (:class:`~hdl.simd.transseq.TransSeq`, one per DCU behind
:class:`~hdl.simd.transshare.SharedTrans`, or one in a SIMD built alone) implements the integer
(fixed-point) algorithms of ``docs/fp32.md`` §5 bit for bit: the same ROM tables, the same
Newton-Raphson / Horner steps with the same truncations, the same exact remainder corrections
and the same ``round_pack`` back end, so that every result equals ``sim.fp32`` (special cases
and NaN payloads included). ``v_rcp_iflag_f32`` returns the same value as ``v_rcp_f32`` (the
ISA pseudocode differs only in the exception it may raise) and shares its datapath.

This module holds what the unit and the SIMD share: the tables, generated here from their
defining formulas (docs/fp32.md §5.3; ``tests/test_trans.py`` checks that they equal the
literals of ``sim/fp32.py``), the operation classes and the opcodes of each, the stream
payloads, and the special-case and ``round_pack`` expressions.
"""
from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction

from amaranth.hdl import Cat, Const, Mux, unsigned
from amaranth.lib import data, enum

from ..isa_tables import OpId

__all__ = [
    "TransIn", "TransOut", "Cls", "CLS_OF", "RCP_T0", "RSQ_T0", "EXP2_T", "EXP2_C", "LOG2_C",
    "LOG2_L", "LOG2_P", "lzc", "sel", "round_pack_final", "specials",
]

WAVE = 32


# --------------------------------------------------------------------------------------
# ROM tables and coefficients (docs/fp32.md §5.3), computed with exact integer arithmetic or
# 80-digit decimals (no rounding ties occur).
def _tables():
    ctx = Context(prec=80)
    ln2 = ctx.ln(Decimal(2))

    def rnd(d: Decimal) -> int:
        return int(ctx.add(d, Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR"))

    def iroot(n: int, k: int) -> int:
        lo, hi = 0, 1 << (n.bit_length() // k + 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if mid ** k <= n else (lo, mid - 1)
        return lo

    # rcp seed: round(2^16 * 2/(lo + hi)) over [1 + i/128, 1 + (i+1)/128]
    rcp = tuple(round(Fraction(1 << 24, 257 + 2 * i)) for i in range(128))
    # rsq seed: round(2^16 * sqrt(2/(lo + hi))) over (1 + p) * [1 + j/64, 1 + (j+1)/64]
    rsq = []
    for p in range(2):
        for j in range(64):
            four_v = (4 << 39) // ((129 + 2 * j) * (1 + p))        # floor(4 * 2^32 * 2/(lo+hi))
            rsq.append((math.isqrt(four_v) + 1) // 2)              # round(sqrt(v))
    # 2^(j/64) in 1.31 fixed: round(x) = (floor(2x) + 1) // 2, 2x = (2^(2048 + j))^(1/64)
    exp2 = tuple((iroot(1 << (32 * 64 + j), 64) + 1) // 2 for j in range(64))
    exp2_c = tuple(rnd(ctx.multiply(ctx.power(ln2, k) / math.factorial(k), 1 << 30))
                   for k in (1, 2, 3))
    logc = (1024,) + tuple(round(Fraction(1 << 18, 257 + 2 * i)) for i in range(1, 127)) + (512,)
    logl = tuple(rnd(ctx.multiply(10 - ctx.divide(ctx.ln(Decimal(c)), ln2), 1 << 52))
                 for c in logc)
    logp = tuple(rnd(ctx.divide(Decimal((-1) ** k), (k + 1) * ln2) * (1 << 32)) for k in range(4))
    return rcp, tuple(rsq), exp2, exp2_c, logc, logl, logp


#: ``RCP_T0[i]`` = round(2^24 / (257 + 2i)): 1/m seed (0.16 fixed) for m in [1 + i/128, 1 + (i+1)/128].
#: ``RSQ_T0[64p + j]``: 1/sqrt(m') seed (0.16) for m' in (1 + p) [1 + j/64, 1 + (j+1)/64].
#: ``EXP2_T[j]`` = round(2^31 2^(j/64)). ``EXP2_C`` = round(2^30 ln2^k / k!), k = 1..3.
#: ``LOG2_C[i]`` ~ 1/m (1.10 fixed), ``LOG2_L[i]`` = -log2(LOG2_C[i] / 1024) (0.52 fixed),
#: ``LOG2_P`` = round(2^32 (-1)^k / ((k + 1) ln 2)), k = 0..3.
RCP_T0, RSQ_T0, EXP2_T, EXP2_C, LOG2_C, LOG2_L, LOG2_P = _tables()


# --------------------------------------------------------------------------------------
# Operation classes and stream payloads
class Cls(enum.Enum, shape=unsigned(3)):
    """Internal operation class (the datapath a wave takes)."""
    NONE = 0        # not a transcendental op: the result is 0
    RCP = 1
    RSQ = 2
    SQRT = 3
    EXP = 4
    LOG = 5


# The opcodes the unit executes, each with its class (the SIMD and the refusal list read it too).
CLS_OF = {
    OpId.V_RCP_F32: Cls.RCP, OpId.V_RCP_IFLAG_F32: Cls.RCP, OpId.V_RSQ_F32: Cls.RSQ,
    OpId.V_SQRT_F32: Cls.SQRT, OpId.V_EXP_F32: Cls.EXP, OpId.V_LOG_F32: Cls.LOG,
}

_INF = 0x7F800000
_DEFAULT_NAN = 0xFFC00000
_ONE = 0x3F800000
_QUIET = 0x00400000

#: Input and output stream payloads: ``op`` (an opcode of :data:`CLS_OF`; any other gives 0 in
#: every lane), ``a`` the 32 operands (lane ``k`` in bits ``[32k + 31 : 32k]``, float32 bits
#: after input modifiers) and ``tag``, returned with the results ``d`` (same lane order).
TransIn = data.StructLayout({"op": OpId, "a": unsigned(32 * WAVE), "tag": unsigned(16)})
TransOut = data.StructLayout({"d": unsigned(32 * WAVE), "tag": unsigned(16)})


# --------------------------------------------------------------------------------------
# Expression helpers (balanced trees: the simulator evaluates only the taken Mux branch).
def lzc(v):
    """Leading zeros of ``v`` within its width (the width itself when ``v`` is 0)."""
    w = len(v)
    if w == 1:
        return ~v[0]
    lw = w // 2
    hi, lo = v[lw:], v[:lw]
    return Mux(hi == 0, (w - lw) + lzc(lo), lzc(hi))


def sel(choices, default=0):
    """Mux chain: the value of the first ``(condition, value)`` pair whose condition holds."""
    out = default
    for cond, val in reversed(choices):
        out = Mux(cond, val, out)
    return out


def round_pack_final(n):
    """``round_pack`` part 2 (part 1, the normalisation, is ``hdl.simd.transseq._normalise``):
    float32 bits of sign * x 2^(E - 63) (+ sticky), ties to even.

    Results below 2^-126 are rounded on the denormal grid (2^-149) and flushed to a zero of
    their sign unless they round up to 2^-126 (only from E = -127); overflow gives inf.
    """
    E = n.E
    normal = E >= -126
    # bits of x shifted out below the round bit: 39 (normal), 40 (E = -127, denormal grid)
    amt = Mux(normal, 39, 40)
    qr = n.x >> amt                                        # kept significand and round bit
    rest = (n.x & Mux(normal, (1 << 39) - 1, (1 << 40) - 1)) != 0
    q = qr[1:26]
    up = qr[0] & (rest | n.sticky | q[0])
    bits = (Mux(normal, E + 126, 0) << 23) + q + up
    ovf = (E > 127) | (bits >= _INF)
    flushed = n.zero | (E < -127) | ~(normal | bits[23])
    mag = Mux(flushed, 0, Mux(ovf, _INF, bits[0:31]))
    return Cat(mag[0:31], n.sign)


def specials(cls, a):
    """Special-case flag and result of one lane (docs/fp32.md §5.4-5.7); a denormal ``a``
    reads as a zero of its sign."""
    sign = a[31]
    mag = a[0:31]
    zero = a[23:31] == 0
    inf = mag == _INF
    nan = mag > _INF
    quiet = a | _QUIET
    pinf = inf & ~sign
    big = a[23:31] >= 135                                  # |a| >= 256 (exp)
    sgn = Cat(Const(0, 31), sign)
    table = {
        Cls.RCP: (zero | inf | nan,
                  sel([(nan, quiet), (zero, sgn | _INF)], sgn)),
        Cls.RSQ: (zero | inf | nan | sign,
                  sel([(nan, quiet), (pinf, 0), (zero, sgn | _INF)], _DEFAULT_NAN)),
        Cls.SQRT: (zero | inf | nan | sign,
                   sel([(nan, quiet), (pinf, _INF), (zero, sgn)], _DEFAULT_NAN)),
        Cls.EXP: (zero | big,
                  sel([(nan, quiet), (zero, _ONE), (sign, 0)], _INF)),
        Cls.LOG: (zero | inf | nan | sign,
                  sel([(nan, quiet), (pinf, _INF), (zero, 0xFF800000)], _DEFAULT_NAN)),
    }
    return table[cls]
