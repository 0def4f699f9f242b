"""Vector integer ALU with one datapath per lane shared by all operations
(``config.shared_int_datapath``; docs/simd.md, "The shared integer datapath").

:class:`hdl.simd.valu_int.VALUInt` writes each operation as a ``Case`` of its own, which keeps
Amaranth's simulator fast (it evaluates only the current ``Case``) but gives synthesis an
adder, a shifter or a compare per operation and lane: 31,031 LUT4 equivalents for the 4-lane
unit on the ECP5 (docs/fpga.md). This unit implements the same operations, bit for bit, on
one datapath per lane that a decoded control word steers:

- **operands**: each source extended to 66 bits (a 16-bit half picked by ``op_sel``, or 32
  or 64 bits; sign- or zero-extended by the op's type);
- **a bitwise unit**: any function of three bits (an 8-entry truth table) over S0, S1 and S2
  or the lane's mask bit (moves, logic ops, ``v_cndmask``, ``v_bfi``);
- **one 66-bit adder** ``X + (Y or ~Y) + carry``: adds, subtractions, carries, every
  compare (the sign and zero of ``S0 - S1``), the min/max selects, multiply-adds (``X`` the
  product), ``v_add3`` (a carry-save step in front), ``v_xad``, bit counts plus ``S1``;
- **one funnel shifter**, 128 bits right into 64 by 0 to 64 (a right shift fills from
  the high half, a left shift by ``n`` is the value in the high half shifted right by
  ``64 - n``; alone, a third fewer LUTs than reversing the input and output of a right
  shifter, though within the whole unit ABC9's count barely differs): every shift,
  ``v_alignbit/byte``, ``v_bfe`` (with a mask after it), ``v_bfm``, ``v_bfrev`` (its input
  reversed, shifted by 0), ``v_lshl_or`` and ``v_add_lshl`` (the adder's sum shifted);
  ``v_lshl_add_u32`` multiplies by ``1 << S1`` on the lane's multiplier instead, so the
  adder never follows the shifter;
- the multiplier (or the product from ``hdl/simd/lanemul.py``), a leading-zero counter, the
  3-operand min/max stage and ``v_perm``'s byte selects, as in ``VALUInt``;
- a finishing stage: saturation (``clamp``) of the exact result, the 16-bit half merge.

The interface is ``VALUInt``'s, so the SIMD takes either. With ``stages=3`` the unit is a
pipeline (``config.valu_stages``): the control word and the extended operands are
registered, then the selected result and the lane mask, so ``d`` and ``mask_out`` answer
the inputs of two cycles before; ``illegal`` answers the current ones, and the multiplier's
operands leave (``mul_x``/``mul_y``) and its product returns in the middle stage.
"""
from __future__ import annotations

import operator

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, wiring

from ..isa_tables import OpId, info_of
from .valu_int import (CLAMP_SATURATES, IMPLEMENTED, CMP, balanced, COMPARES, MINMAX, MM_MODES,
                       MUL_OPERANDS, MAD, PLAIN32, V16, V16_TO_32, perm, count_leading_zeros,
                       int_valu_signature, low_mask, popcount)
from . import lanemul

__all__ = ["VALUIntShared"]

WIDE = 66       # the adder: a 64-bit operand plus product or compare sign, exact


class Width(enum.Enum, shape=2):
    """How much of a source an operation reads: a 16-bit half (``op_sel``), 32 or 64 bits."""
    W16 = 0
    W32 = 1
    W64 = 2


class AddX(enum.Enum, shape=3):
    ZERO = 0
    A = 1
    B = 2
    P = 3           # the product
    LOGIC = 4       # the bitwise unit's result
    POP = 5         # the bit count


class AddY(enum.Enum, shape=3):
    ZERO = 0
    A = 1
    B = 2
    C = 3
    MAJ = 4         # the carries of S0 + S1 + S2 (v_add3's carry-save step)


class CarryIn(enum.Enum, shape=2):
    ZERO = 0
    ONE = 1
    MASK = 2
    NMASK = 3


class ShiftIn(enum.Enum, shape=3):
    A = 0
    B = 1
    BA = 2          # {S0, S1}: v_alignbit/byte
    MASK = 3        # the low mask of S0[4:0] ones: v_bfm
    SUM = 4         # the adder's low 32 bits: v_add_lshl
    REV_A = 5       # S0 bit-reversed: v_bfrev (shifted by 0)


class ShiftBy(enum.Enum, shape=3):
    A4 = 0
    A5 = 1
    A6 = 2
    B5 = 3
    C5 = 4
    C_BYTES = 5     # S2[1:0] bytes
    ZERO = 6


class Post(enum.Enum, shape=2):
    """What follows the shifter."""
    NONE = 0
    AND_MASK = 1    # v_bfe_u32: the low S2[4:0] bits
    SIGNED_FIELD = 2    # v_bfe_i32: those bits sign-extended
    OR_C = 3        # v_lshl_or_b32


class Result(enum.Enum, shape=3):
    SUM = 0
    SHIFT = 1
    LOGIC = 2
    P_HI = 3        # product bits [63:32]
    MINMAX = 4      # S0 or S1 by the compare
    MINMAX3 = 5
    COUNT = 6
    PERM = 7


class MaskOut(enum.Enum, shape=2):
    NONE = 0
    CARRY32 = 1
    CARRY64 = 2
    COMPARE = 3


Control = data.StructLayout({
    "legal": 1,
    "plain": 1,         # a VINT op: op_sel, or clamp unless ``sat``, make it illegal (as the model)
    "wa": Width, "wb": Width, "wc": Width,
    "sgn": 1,           # sources (and multiplier operands) sign-extended
    "mul24": 1,         # multiplier operands: the low 24 bits of S0 and S1
    "mul_shl": 1,       # multiplier: S0 times 1 << S1[4:0] (v_lshl_add_u32)
    "ax": AddX, "ay": AddY, "inv": 1, "cin": CarryIn,
    "tt": 8,            # bitwise unit: bit 4a + 2b + c is f(a, b, c)
    "tt_mask": 1,       # its third input is the lane's mask bit, not S2
    "pop_below": 1,     # the bit count counts the lanes below this one (v_mbcnt_lo)
    "cnt": 2,           # leading zeros of: 0 S0, 1 S0 reversed, 2 S0 ^ its sign
    "sv": ShiftIn, "sn": ShiftBy, "left": 1, "arith": 1, "post": Post,
    "mask_a": 1,        # the low mask counts S0[4:0] (v_bfm), else S2[4:0] (v_bfe)
    "mm_max": 1,        # MINMAX: the larger
    "mm3_med": 1, "mm3_lo": 1, "mm3_max": 1,    # MINMAX3 (see _minmax3)
    "rs": Result,
    "sat": 1,           # clamp saturates the exact result...
    "sat_to": Width,    # ...to a 16-, 32- or 64-bit destination, signed by ``sgn``
    "half": 1,          # a 16-bit result: merged into the op_sel[3] half of the old value
    "dst64": 1,
    "mo": MaskOut,
    "cond": 4,          # COMPARE: bit 2 lt + eq
})


def _tt(f) -> int:
    return sum(f((k >> 2) & 1, (k >> 1) & 1, k & 1) << k for k in range(8))


_LOGIC = {
    "v_mov_b32": lambda a, b, c: a, "v_not_b32": lambda a, b, c: 1 - a,
    "v_and_b32": lambda a, b, c: a & b, "v_or_b32": lambda a, b, c: a | b,
    "v_xor_b32": lambda a, b, c: a ^ b, "v_xnor_b32": lambda a, b, c: 1 - (a ^ b),
    "v_and_or_b32": lambda a, b, c: (a & b) | c, "v_or3_b32": lambda a, b, c: a | b | c,
    "v_xor3_b32": lambda a, b, c: a ^ b ^ c, "v_bfi_b32": lambda a, b, c: b if a else c,
    "v_and_b16": lambda a, b, c: a & b, "v_or_b16": lambda a, b, c: a | b,
    "v_xor_b16": lambda a, b, c: a ^ b, "v_mbcnt_hi_u32_b32": lambda a, b, c: b,
}
_SUB = {"ax": AddX.A, "ay": AddY.B, "inv": 1, "cin": CarryIn.ONE}      # S0 - S1
_SUBREV = {"ax": AddX.B, "ay": AddY.A, "inv": 1, "cin": CarryIn.ONE}
_ADD = {"ax": AddX.A, "ay": AddY.B}
_LEFT = {"left": 1}
# compare conditions as truth tables over the index 2 lt + eq of S0 - S1 (gt, eq, lt)
_COND = {c: sum(int(f(x, y)) << k for k, (x, y) in enumerate(((1, 0), (0, 0), (0, 1))))
         for c, f in CMP.items()}


def _control(name: str) -> dict:
    """The control word of one implemented op, as a dict of :data:`Control` fields."""
    op = OpId[name.upper()]
    dst64 = info_of(op).dst_bits == 64
    ctl = {"legal": 1, "plain": int(name in PLAIN32), "wa": Width.W32, "wb": Width.W32,
           "wc": Width.W32, "dst64": int(dst64), "sat": int(name in CLAMP_SATURATES),
           "sat_to": Width.W64 if dst64 else Width.W32}
    if name in MUL_OPERANDS:
        bits, sgn = MUL_OPERANDS[name]
        ctl.update(mul24=int(bits == 24), sgn=int(sgn))
    if name in _LOGIC:
        ctl.update(rs=Result.LOGIC, tt=_tt(_LOGIC[name]))
    if name in MINMAX:
        mode = MM_MODES[MINMAX[name]]
        ctl.update(_SUB, rs=Result.MINMAX3, sgn=int(name.endswith("i32")), mm3_med=int(mode == "med3"),
                   mm3_lo=int(mode in ("min3", "minmax", "med3")), mm3_max=int(mode in ("max3", "minmax", "med3")))
    if name in COMPARES:
        _, kind, cond, typ = name.split("_")
        w = Width.W64 if typ.endswith("64") else Width.W32
        ctl.update(_SUB, wa=w, wb=w, sgn=int(typ[0] == "i"), mo=MaskOut.COMPARE, cond=_COND[cond])
    for table, wide in ((V16, False), (V16_TO_32, True)):
        if name in table:
            f, sgn = table[name]
            ctl.update(sgn=int(sgn), sat_to=Width.W32 if wide else Width.W16, half=int(not wide),
                       **{w: Width.W16 if bits == 16 else Width.W32
                          for w, bits in zip(("wa", "wb", "wc"), info_of(op).src_bits)})
            if f is MAD:
                ctl.update(ax=AddX.P, ay=AddY.C if len(info_of(op).src_bits) > 2 else AddY.ZERO)
    ctl.update(_EXTRA.get(name, {}))
    return ctl


_EXTRA = {
    "v_bfrev_b32": {"rs": Result.SHIFT, "sv": ShiftIn.REV_A, "sn": ShiftBy.ZERO},
    "v_add_nc_u32": _ADD, "v_sub_nc_u32": _SUB, "v_subrev_nc_u32": _SUBREV,
    "v_mul_lo_u32": {"ax": AddX.P}, "v_mul_u32_u24": {"ax": AddX.P}, "v_mul_i32_i24": {"ax": AddX.P},
    "v_mul_hi_u32": {"rs": Result.P_HI}, "v_mul_hi_i32": {"rs": Result.P_HI},
    "v_mul_hi_u32_u24": {"rs": Result.P_HI}, "v_mul_hi_i32_i24": {"rs": Result.P_HI},
    "v_mad_u32_u24": {"ax": AddX.P, "ay": AddY.C}, "v_mad_i32_i24": {"ax": AddX.P, "ay": AddY.C},
    "v_add3_u32": {"ax": AddX.LOGIC, "tt": _tt(lambda a, b, c: a ^ b ^ c), "ay": AddY.MAJ},
    "v_xad_u32": {"ax": AddX.LOGIC, "tt": _tt(lambda a, b, c: a ^ b), "ay": AddY.C},
    "v_lshl_add_u32": {"mul_shl": 1, "ax": AddX.P, "ay": AddY.C},
    "v_add_lshl_u32": {**_ADD, **_LEFT, "rs": Result.SHIFT, "sv": ShiftIn.SUM, "sn": ShiftBy.C5},
    "v_lshl_or_b32": {**_LEFT, "rs": Result.SHIFT, "sv": ShiftIn.A, "sn": ShiftBy.B5, "post": Post.OR_C},
    "v_lshlrev_b32": {**_LEFT, "rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A5},
    "v_lshrrev_b32": {"rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A5},
    "v_ashrrev_i32": {"rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A5, "sgn": 1, "arith": 1},
    "v_lshlrev_b64": {**_LEFT, "rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A6, "wb": Width.W64},
    "v_lshrrev_b64": {"rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A6, "wb": Width.W64},
    "v_ashrrev_i64": {"rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A6, "wb": Width.W64,
                      "sgn": 1, "arith": 1},
    "v_bfe_u32": {"rs": Result.SHIFT, "sv": ShiftIn.A, "sn": ShiftBy.B5, "post": Post.AND_MASK},
    "v_bfe_i32": {"rs": Result.SHIFT, "sv": ShiftIn.A, "sn": ShiftBy.B5, "post": Post.SIGNED_FIELD,
                  "sgn": 1, "arith": 1},
    "v_bfm_b32": {**_LEFT, "rs": Result.SHIFT, "sv": ShiftIn.MASK, "mask_a": 1, "sn": ShiftBy.B5},
    "v_alignbit_b32": {"rs": Result.SHIFT, "sv": ShiftIn.BA, "sn": ShiftBy.C5},
    "v_alignbyte_b32": {"rs": Result.SHIFT, "sv": ShiftIn.BA, "sn": ShiftBy.C_BYTES},
    "v_min_i32": {**_SUB, "rs": Result.MINMAX, "sgn": 1},
    "v_max_i32": {**_SUB, "rs": Result.MINMAX, "sgn": 1, "mm_max": 1},
    "v_min_u32": {**_SUB, "rs": Result.MINMAX}, "v_max_u32": {**_SUB, "rs": Result.MINMAX, "mm_max": 1},
    "v_perm_b32": {"rs": Result.PERM},
    "v_bcnt_u32_b32": {"ax": AddX.POP, "ay": AddY.B},
    "v_clz_i32_u32": {"rs": Result.COUNT, "cnt": 0}, "v_ctz_i32_b32": {"rs": Result.COUNT, "cnt": 1},
    "v_cls_i32": {"rs": Result.COUNT, "cnt": 2},
    # 16-bit ops beyond the multiply-adds and bitwise ones (_control gives widths and saturation)
    "v_add_nc_u16": _ADD, "v_add_nc_i16": _ADD, "v_sub_nc_u16": _SUB, "v_sub_nc_i16": _SUB,
    "v_max_u16": {**_SUB, "rs": Result.MINMAX, "mm_max": 1},
    "v_max_i16": {**_SUB, "rs": Result.MINMAX, "mm_max": 1},
    "v_min_u16": {**_SUB, "rs": Result.MINMAX}, "v_min_i16": {**_SUB, "rs": Result.MINMAX},
    "v_lshlrev_b16": {**_LEFT, "rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A4},
    "v_lshrrev_b16": {"rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A4},
    "v_ashrrev_i16": {"rs": Result.SHIFT, "sv": ShiftIn.B, "sn": ShiftBy.A4, "arith": 1},
    "v_not_b16": {"ax": AddX.ZERO, "ay": AddY.A, "inv": 1},     # -a - 1, exact
    "v_cvt_u32_u16": {"ax": AddX.A}, "v_cvt_i32_i16": {"ax": AddX.A},
    # carries: bit 32 of the exact sum (a subtraction's borrow), bit 64 of v_mad_co_*
    "v_add_co_u32": {**_ADD, "mo": MaskOut.CARRY32},
    "v_sub_co_u32": {**_SUB, "mo": MaskOut.CARRY32},
    "v_subrev_co_u32": {**_SUBREV, "mo": MaskOut.CARRY32},
    "v_add_co_ci_u32": {**_ADD, "cin": CarryIn.MASK, "mo": MaskOut.CARRY32},
    "v_sub_co_ci_u32": {**_SUB, "cin": CarryIn.NMASK, "mo": MaskOut.CARRY32},
    "v_subrev_co_ci_u32": {**_SUBREV, "cin": CarryIn.NMASK, "mo": MaskOut.CARRY32},
    "v_mad_co_u64_u32": {"ax": AddX.P, "ay": AddY.C, "wc": Width.W64, "mo": MaskOut.CARRY64},
    "v_mad_co_i64_i32": {"ax": AddX.P, "ay": AddY.C, "wc": Width.W64, "mo": MaskOut.CARRY64},
    "v_add_nc_i32": {**_ADD, "sgn": 1},
    "v_sub_nc_i32": {**_SUB, "sgn": 1},
    "v_cndmask_b32": {"rs": Result.LOGIC, "tt": _tt(lambda a, b, c: b if c else a), "tt_mask": 1},
    "v_mbcnt_lo_u32_b32": {"ax": AddX.POP, "ay": AddY.B, "pop_below": 1},
    "v_nop": {},
}
_COVERED = set(_EXTRA) | set(_LOGIC) | set(MINMAX) | set(COMPARES) | set(V16) | set(V16_TO_32)
assert _COVERED == IMPLEMENTED, sorted(IMPLEMENTED ^ _COVERED)


def _rep(bit, n: int) -> Value:
    return Value.cast(bit).replicate(n)


def _extend(x, w, half, sgn) -> Value:
    """A 64-bit lane ``x`` of a source read as ``w`` (a 16-bit half by ``half``), extended to
    :data:`WIDE` bits (signed by ``sgn``)."""
    h = x[:32].word_select(half, 16)
    w16, w64 = w == Width.W16, w == Width.W64
    sign = sgn & Mux(w64, x[63], Mux(w16, h[15], x[31]))
    return Cat(Mux(w16, h, x[:16]), Mux(w16, _rep(sign, 16), x[16:32]),
               Mux(w64, x[32:64], _rep(sign, 32)), _rep(sign, WIDE - 64))


def _overflow(e, to, sgn) -> Value:
    """Whether the exact value ``e`` (:data:`WIDE` bits, signed) lies outside the range of a
    destination of width ``to`` (a :class:`Width`), signed by ``sgn``: a bit from the
    destination's top one up (from the one above it, unsigned) differs from the sign, or an
    unsigned destination takes a negative value. The ORs of the bits from 64, 63, 32, 31, 16
    and 15 up form one chain."""
    neg = e[WIDE - 1]
    differ = e ^ _rep(neg, WIDE)
    above = {}
    acc = Const(0, 1)
    for lo, hi in ((64, WIDE), (63, 64), (32, 63), (31, 32), (16, 31), (15, 16)):
        acc = acc | (differ[lo:hi] != 0)
        above[lo] = acc

    def over(bits):
        return Mux(sgn, above[bits - 1], above[bits] | neg)
    return Mux(to == Width.W16, over(16), Mux(to == Width.W32, over(32), over(64)))


class _Lane:
    """The raw 32-bit sources of one lane, for ``hdl.simd.valu_int.perm``."""

    def __init__(self, a, b, c):
        self.a, self.b, self.ports = a, b, (a, b, c)

    def field(self, src: int, lo: int, hi: int):
        return self.ports[src][lo:hi]


class VALUIntShared(wiring.Component):
    """Vector integer ALU for one wave, one datapath per lane (module docstring).

    Parameters
    ----------
    lanes : int
        Lanes per wave.
    external_mul : bool
        Leave the multiplier out (``hdl/simd/lanemul.py``), as :class:`hdl.simd.valu_int.VALUInt`.
    stages : int
        1: combinational. 3: registered after the operand extension and after the result
        select; ``d`` and ``mask_out`` two cycles after their inputs.

    Members
    -------
    The same as :class:`hdl.simd.valu_int.VALUInt`'s: ``op``, ``a``, ``b``, ``c``, ``mask_in``,
    ``opsel``, ``clamp``, ``d_old`` in; ``d``, ``mask_out``, ``illegal`` out; ``mul_x``,
    ``mul_y``, ``mul_p`` with ``external_mul``.
    """

    def __init__(self, lanes: int = 32, external_mul: bool = False, stages: int = 1):
        if stages not in (1, 3):
            raise ValueError(f"stages must be 1 or 3, got {stages}")
        self.lanes = lanes
        self.external_mul = external_mul
        self.stages = stages
        super().__init__(int_valu_signature(lanes, external_mul))

    def elaborate(self, platform):
        m = Module()
        n = self.lanes
        ctl = Signal(Control)
        with m.Switch(self.op):
            for name in sorted(IMPLEMENTED):
                with m.Case(OpId[name.upper()]):
                    m.d.comb += ctl.eq(Control.const(_control(name)))
        m.d.comb += self.illegal.eq(~ctl.legal | ctl.plain & ((self.clamp & ~ctl.sat) | (self.opsel != 0)))

        # Each step of the datapath is a module of its own: the simulator re-evaluates a
        # module's logic whenever a signal it reads changes, so one module would run once per
        # step of the chain, each time in full.
        def stage(name):
            m.submodules[name] = s = Module()
            return s

        def wide(st, name, width, f):
            """A signal of ``width`` bits per lane, lane ``i`` being ``f(i)``."""
            s = Signal(width * n, name=name)
            st.d.comb += s.eq(Cat(*[f(i) for i in range(n)]))
            return lambda i: s[width * i:width * (i + 1)]

        def sig(st, name, value):
            """``value`` through a signal: an expression used more than once is then built
            (and compiled by the simulator) once."""
            v = Value.cast(value)
            s = Signal(v.shape(), name=name)
            st.d.comb += s.eq(v)
            return s

        def cut(value, name):
            """``value`` as the next stage sees it: registered when the unit is in stages."""
            if self.stages == 1:
                return value
            r = Signal.like(value, name=name)
            m.d.sync += r.eq(value)
            return r

        def raw(port, i):
            return port[64 * i:64 * i + 64]

        # an idle unit (op NONE: the SIMD's other instructions) keeps its operands at 0, so
        # the simulator has nothing downstream to re-evaluate when the register reads change
        st = stage("operands")
        ext = {}
        with st.If(ctl.legal):
            for j, (k, port) in enumerate((("a", self.a), ("b", self.b), ("c", self.c))):
                ext[k] = Signal(WIDE * n, name=f"{k}_ext")
                st.d.comb += ext[k].eq(Cat(*[_extend(raw(port, i), ctl[f"w{k}"], self.opsel[j], ctl.sgn)
                                             for i in range(n)]))

        # stage 2 (``stages=3``) from here to the result select: it reads only these
        ctl = cut(ctl, "ctl2")
        A, B, C = ((lambda i, s=cut(ext[k], f"{k}_ext2"): s[WIDE * i:WIDE * (i + 1)]) for k in "abc")
        mask_in, lane_base = cut(self.mask_in, "mask_in2"), cut(self.lane_base, "lane_base2")
        finish_in = Cat(self.clamp, self.opsel[3], self.d_old)   # for the last stage
        finish_in = cut(finish_in, "finish_in2")

        # the multiplier: operands, product P
        st, w = stage("multiplier_in"), lanemul.WIDTH

        def ext24(v):
            return Cat(v[:24], _rep(ctl.sgn & v[23], w - 24))
        mul_x = wide(st, "mul_x_", w, lambda i: Mux(ctl.mul24, ext24(A(i)), A(i)[:w]))
        mul_y = wide(st, "mul_y_", w, lambda i: Mux(ctl.mul_shl, (Const(1, w) << B(i)[:5])[:w],
                                                    Mux(ctl.mul24, ext24(B(i)), B(i)[:w])))
        st = stage("multiplier")
        if self.external_mul:
            st.d.comb += [self.mul_x.eq(Cat(*[mul_x(i) for i in range(n)])),
                          self.mul_y.eq(Cat(*[mul_y(i) for i in range(n)]))]
            P = wide(st, "prod", 2 * w, lambda i: self.mul_p[2 * w * i:2 * w * (i + 1)])
        else:
            P = wide(st, "prod", 2 * w, lambda i: mul_x(i).as_signed() * mul_y(i).as_signed())

        # the bitwise unit: a truth table over S0, S1 and S2 (or the mask bit); the bit count
        st = stage("bitwise")

        def logic(i):
            a, b = A(i)[:32], B(i)[:32]
            c = sig(st, f"logic_c{i}", Mux(ctl.tt_mask, _rep(mask_in[i], 32), C(i)[:32]))
            terms = [_rep(ctl.tt[k], 32) & (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
                     for k in range(8)]
            return balanced(terms, operator.or_)
        LOG = wide(st, "logic", 32, logic)

        def pop(i):   # v_mbcnt_lo: S0's bits below the lane's index in the wave
            below = ((Const(1, 33) << (lane_base + i)) - 1)[:32]
            return popcount(A(i)[:32] & Mux(ctl.pop_below, below, Const(0xFFFF_FFFF, 32)))
        POP = wide(st, "pop", 6, pop)

        def maj(i):
            a, b, c = A(i)[:32], B(i)[:32], C(i)[:32]
            return Cat(Const(0, 1), (a & b) | (a & c) | (b & c))

        # the adder
        st = stage("adder")

        def add(i):
            x = Signal(WIDE, name=f"add_x{i}")
            y = Signal(WIDE, name=f"add_y{i}")
            with st.Switch(ctl.ax):
                for src, v in ((AddX.A, A(i)), (AddX.B, B(i)), (AddX.P, P(i)),
                               (AddX.LOGIC, LOG(i)), (AddX.POP, POP(i))):
                    with st.Case(src):
                        st.d.comb += x.eq(v)
            with st.Switch(ctl.ay):
                for src, v in ((AddY.A, A(i)), (AddY.B, B(i)), (AddY.C, C(i)), (AddY.MAJ, maj(i))):
                    with st.Case(src):
                        st.d.comb += y.eq(v)
            code = ctl.cin.as_value()     # ZERO, ONE, MASK, NMASK: bit 1 takes the mask, bit 0 inverts
            cin = Mux(code[1], mask_in[i] ^ code[0], code[0])
            return (x + (y ^ _rep(ctl.inv, WIDE)) + cin)[:WIDE]
        SUM = wide(st, "sum", WIDE, add)

        def lt(i):
            return SUM(i)[WIDE - 1]

        # the shifter: its input and amount; a funnel shifter, {hi, lo} >> k for k in 0..64
        # (a right shift: lo the value, hi its fill; a left shift by n: hi the value, lo 0,
        # k = 64 - n); what follows it
        st_in, st = stage("shift_in"), stage("shifter")

        def shift(i):
            a, b, c = A(i), B(i), C(i)
            mask = sig(st_in, f"low_mask{i}", low_mask(Mux(ctl.mask_a, a[:5], c[:5]), 32))
            v = Signal(64, name=f"shift_in{i}")
            k = Signal(6, name=f"shift_by{i}")
            with st_in.Switch(ctl.sv):
                for src, val in ((ShiftIn.A, a[:64]), (ShiftIn.B, b[:64]), (ShiftIn.BA, Cat(b[:32], a[:32])),
                                 (ShiftIn.MASK, mask), (ShiftIn.SUM, SUM(i)[:32]), (ShiftIn.REV_A, a[:32][::-1])):
                    with st_in.Case(src):
                        st_in.d.comb += v.eq(val)
            with st_in.Switch(ctl.sn):
                for src, val in ((ShiftBy.A4, a[:4]), (ShiftBy.A5, a[:5]), (ShiftBy.A6, a[:6]),
                                 (ShiftBy.B5, b[:5]), (ShiftBy.C5, c[:5]),
                                 (ShiftBy.C_BYTES, Cat(Const(0, 3), c[:2]))):
                    with st_in.Case(src):
                        st_in.d.comb += k.eq(val)
            hi = Mux(ctl.left, v, _rep(ctl.arith & v[63], 64))
            lo = Mux(ctl.left, 0, v)
            s = sig(st, f"shift_out{i}", (Cat(lo, hi) >> Mux(ctl.left, (64 - k)[:7], k))[:64])
            width = c[:5]
            field_sign = s[:32].bit_select((width - 1)[:5], 1) & (width != 0)
            with_mask = s[:32] & mask
            return Mux(ctl.post == Post.NONE, s, Mux(ctl.post == Post.AND_MASK, with_mask,
                       Mux(ctl.post == Post.SIGNED_FIELD, with_mask | (~mask & _rep(field_sign, 32)),
                           s[:32] | c[:32])))
        SH = wide(stage("shift_post"), "shift", 64, shift)

        # min/max: S0 or S1 by the compare (the adder's S0 - S1); the 3-operand stage
        st = stage("minmax")
        MM = wide(st, "minmax", 64, lambda i: Mux(lt(i) ^ ctl.mm_max, A(i)[:64], B(i)[:64]))
        bias = Cat(Const(0, 31), ctl.sgn)

        def minmax3(i):
            a, b, c = A(i)[:32], B(i)[:32], C(i)[:32]
            lo, hi = sig(st, f"mm3_lo{i}", Mux(lt(i), a, b)), sig(st, f"mm3_hi{i}", Mux(lt(i), b, a))
            u = sig(st, f"mm3_u{i}", Mux(ctl.mm3_med & ((c ^ bias) < (hi ^ bias)), c, Mux(ctl.mm3_med, hi, c)))
            x = sig(st, f"mm3_x{i}", Mux(ctl.mm3_lo, lo, hi))
            x_lt_u = (x ^ bias) < (u ^ bias)
            return Mux(x_lt_u ^ ctl.mm3_max, x, u)
        MM3 = wide(st, "minmax3", 32, minmax3)

        st = stage("count")

        def count(i):
            a = A(i)[:32]
            x = sig(st, f"count_in{i}", Mux(ctl.cnt == 0, a, Mux(ctl.cnt == 1, a[::-1], a ^ _rep(a[31], 32))))
            return Mux(x == 0, 0xFFFF_FFFF, count_leading_zeros(x))
        CNT = wide(st, "count", 32, count)

        st = stage("result")

        def pre(i):
            r = Signal(64, name=f"pre{i}")
            with st.Switch(ctl.rs):
                for src, v in ((Result.SUM, SUM(i)[:64]), (Result.SHIFT, SH(i)), (Result.LOGIC, LOG(i)),
                               (Result.P_HI, P(i)[32:64]), (Result.MINMAX, MM(i)), (Result.MINMAX3, MM3(i)),
                               (Result.COUNT, CNT(i)),
                               (Result.PERM, Cat(*perm(_Lane(A(i)[:32], B(i)[:32], C(i)[:32]))))):
                    with st.Case(src):
                        st.d.comb += r.eq(v)
            return r
        PRE = wide(st, "pre", 64, pre)
        # the exact result, 66 bits: a 64-bit one that saturates is the adder's (v_mad_co_*),
        # the others that saturate fit in 64 bits signed
        TOP = wide(st, "pre_top", 2, lambda i: Mux(ctl.dst64, SUM(i)[64:WIDE], _rep(PRE(i)[63], 2)))

        def mask_out(i):
            s = SUM(i)
            cond = ctl.cond.bit_select(Cat(s == 0, lt(i)), 1)
            return Mux(ctl.mo == MaskOut.COMPARE, cond, Mux(ctl.mo == MaskOut.CARRY32, s[32],
                       Mux(ctl.mo == MaskOut.CARRY64, s[64], 0)))
        lane_mask = sig(st, "lane_mask", Cat(*[mask_out(i) for i in range(n)]))

        # stage 3 (``stages=3``): the selected result, the lane mask and the finishing inputs
        PRE = (lambda i, s=cut(Cat(*[Cat(PRE(i), TOP(i)) for i in range(n)]), "pre3"): s[WIDE * i:WIDE * (i + 1)])
        st = stage("finish_out")
        st.d.comb += self.mask_out.eq(cut(lane_mask, "lane_mask3"))
        ctl = cut(ctl, "ctl3")
        clamp, opsel3, d_old = (lambda v: (v[0], v[1], v[2:]))(cut(finish_in, "finish_in3"))

        # finish: clamp saturates the exact result; a 16-bit result goes into the op_sel[3]
        # half, the other half keeps d_old
        st = stage("finish")
        saturate = ctl.sat & clamp
        top_bit = sig(st, "sat_top", Mux(ctl.sgn, Mux(ctl.sat_to == Width.W16, 1 << 15,
                                                    Mux(ctl.sat_to == Width.W32, 1 << 31, 1 << 63)), 0))
        shift16 = Cat(Const(0, 4), opsel3)
        keep = ~(Const(0xFFFF, 32) << shift16)[:32]

        def finish(i):
            r = PRE(i)
            over = sig(st, f"over{i}", _overflow(r, ctl.sat_to, ctl.sgn))
            limit = _rep(~r[WIDE - 1], 64) ^ top_bit
            v = sig(st, f"fin{i}", Mux(saturate & over, limit, r[:64]))
            old = d_old[32 * i:32 * i + 32]
            v = Mux(ctl.half, (old & keep) | (v[:16] << shift16)[:32], v)
            return Cat(v[:32], Mux(ctl.dst64, v[32:64], 0))
        st.d.comb += self.d.eq(Cat(*[finish(i) for i in range(n)]))
        return m
