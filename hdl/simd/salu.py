"""Scalar ALU of the SIMD32 (docs/simd.md, "scalar ALU").

Combinational: every scalar integer opcode of the model (``sim/scalar.py`` SOP1/SOP2/SOPC/
SOPK tables and the saveexec/wrexec, s_cmov and s_bitset handlers of ``sim/execute.py``),
bit-exact with it, on one datapath that a control word decoded from ``op`` steers:

- **operands**: X is S0, the old destination (SOPK) or the sign-extended simm16; Y is S1,
  simm16, EXEC, the old destination or a one-hot bit at S0;
- **one 66-bit adder** ``X + (Y or ~Y) + carry`` on X and Y extended from 32 or 64 bits:
  adds, subtractions, carries and borrows, every compare (the sign and zero of ``X - Y``),
  the min/max selects, ``s_lshl<n>_add`` (X shifted by n first);
- **one funnel shifter**, 127 bits right into 64 by 0 to 63, a level per bit of the amount,
  widest first (a left shift by ``n`` is the value above 63 zeros shifted right by
  ``63 - n``): the shifts, ``s_bfe`` (a mask after it), ``s_bfm``, ``s_bitcmp`` (its bit 0);
- **a bitwise unit**, any function of two bits over X and Y: the logic ops, moves, selects
  (``s_cselect``, ``s_cmov``: the table picked by SCC), saveexec/wrexec, ``s_bitset``;
- a leading-zero counter (``s_clz``, ``s_ctz`` on the reversed value, ``s_cls``), a bit
  count, a 32-bit negation (``s_abs``, ``s_absdiff``) and one 33 x 33 multiplier for the
  multiplies (``s_mul_u64`` adds the low halves of the two cross products).

One shared path rather than an adder, shifter or compare per opcode: 5,406 LUT4 on the ECP5
against 8,646 (docs/fpga.md).

Not here: branches, waits, barriers and memory (the SIMD's), ``s_getpc_b64`` (needs the
PC, which the SALU does not see: the scalar pipe writes PC + 4), the SALU float ops
(``s_add_f32``, ``s_cmp_*_f32``, ``s_cvt_*``, ...: a floating-point unit's) and
``s_round_mode``/``s_denorm_mode``. These, and every non-SALU opcode, raise ``illegal``.
"""
from __future__ import annotations

import operator

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from . import lanemul
from ..isa_tables import OpId
from .valu_int import balanced, count_leading_zeros, low_mask, popcount

__all__ = ["SALU", "IMPLEMENTED"]

WIDE = 66       # the adder: a 64-bit operand and its sign, exact


class XSrc(enum.Enum, shape=2):
    A = 0
    D = 1           # the old destination (SOPK's register operand, s_bitset's kept bits)
    K = 2           # simm16 sign-extended to 32 bits
    A_SHL = 3       # S0 shifted left by ``shl`` (s_lshl<n>_add)


class YSrc(enum.Enum, shape=3):
    B = 0
    K = 1           # simm16 sign-extended to 32 bits
    EXEC = 2
    D = 3
    BIT = 4         # 1 << S0 (s_bitset)


class CarryIn(enum.Enum, shape=2):
    ZERO = 0
    ONE = 1
    SCC = 2
    NSCC = 3


class ShiftIn(enum.Enum, shape=1):
    A = 0
    MASK = 1        # the low mask of S0's ones (s_bfm)


class Result(enum.Enum, shape=4):
    SUM = 0
    NEG = 1         # |SUM or S0| (s_absdiff, s_abs)
    SHIFT = 2
    FIELD = 3       # the shift masked to S1's field, sign-extended for the signed forms (s_bfe)
    LOGIC = 4
    MINMAX = 5
    COUNT = 6
    POP = 7
    MUL_LO = 8
    MUL_HI = 9
    MUL_64 = 10
    EXEC_IN = 11
    BREV = 12
    SEXT8 = 13
    SEXT16 = 14
    PACK = 15       # s_pack_*: a 16-bit half of S0 below a half of S1 (``pk``)


class SccSrc(enum.Enum, shape=3):
    NONE = 0        # SCC not written
    D_NZ = 1        # the result is not zero
    HI_NZ = 2       # bits [63:32] of the exact sum: a carry or a borrow
    OVF = 3         # signed overflow of a 32-bit add or subtract
    LT = 4          # the min/max compare (inverted for max)
    COND = 5        # a compare: ``cond`` over (lt, eq) of X - Y
    BIT = 6         # the shifter's bit 0 (s_bitcmp), inverted by ``want0``
    LOGIC_NZ = 7    # the new EXEC is not zero (saveexec)


class DWe(enum.Enum, shape=2):
    NO = 0
    YES = 1
    SCC = 2         # s_cmov/s_cmovk: only when SCC is set


Control = data.StructLayout({
    "legal": 1,
    "w64": 1,           # 64-bit operands (and, for the counts, shifts and masks, widths)
    "sgn": 1,           # the adder's operands sign-extended
    "x": XSrc, "y": YSrc, "shl": 3, "inv": 1, "cin": CarryIn,
    "x64": 1,           # X extended from 64 bits whatever ``w64`` (S0 shifted by ``shl``)
    "tt": 4,            # bitwise unit: bit 2x + y is f(x, y)
    "csel": 1,          # ... f is x when SCC is set, else y
    "sv": ShiftIn, "left": 1, "arith": 1, "sgn_field": 1,
    "mm_max": 1,
    "neg_a": 1,         # NEG takes S0, not the sum
    "cnt": 2,           # leading zeros of: 0 S0, 1 S0 reversed, 2 S0 ^ its sign
    "pop0": 1,          # the zero bits, not the ones
    "mul_sgn": 1, "mul_xd": 1, "mul_yk": 1,    # multiplier operands: signed; old destination; simm16
    "pk": 2,            # s_pack_*: bit 0 takes S0's high half, bit 1 S1's
    "rs": Result,
    "dst64": 1,
    "scc": SccSrc, "cond": 3, "want0": 1,
    "d_we": DWe,
    "exec_we": 1,
})


def truth_table(f) -> int:
    return sum(f((k >> 1) & 1, k & 1) << k for k in range(4))


_TT_X, _TT_Y = truth_table(lambda x, y: x), truth_table(lambda x, y: y)
LOGIC_OPS = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
          "nand": lambda x, y: 1 - (x & y), "nor": lambda x, y: 1 - (x | y), "xnor": lambda x, y: 1 - (x ^ y),
          "and_not1": lambda x, y: x & (1 - y), "or_not1": lambda x, y: x | (1 - y)}
# compare conditions as truth tables over the index 2 lt + eq of X - Y
CMP_FLAGS = {"eq": (0, 1, 0), "lg": (1, 0, 1), "gt": (1, 0, 0), "ge": (1, 1, 0), "lt": (0, 0, 1), "le": (0, 1, 1)}
_SUB = {"inv": 1, "cin": CarryIn.ONE}
# s_<op>_saveexec_b32 and s_<op>_wrexec_b32: <op> -> f(S0, EXEC), the new EXEC.
SAVEEXEC_OPS = {
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
    "and_not0": lambda s, e: ~s & e, "or_not0": lambda s, e: ~s | e,
    "and_not1": lambda s, e: s & ~e, "or_not1": lambda s, e: s | ~e,
}


def _table() -> dict[str, dict]:
    """Mnemonic -> the :data:`Control` fields of every implemented opcode."""
    t = {}
    add = {"rs": Result.SUM, "d_we": DWe.YES}
    t["s_add_co_u32"] = {**add, "scc": SccSrc.HI_NZ}
    t["s_sub_co_u32"] = {**add, **_SUB, "scc": SccSrc.HI_NZ}
    t["s_add_co_i32"] = {**add, "scc": SccSrc.OVF}
    t["s_sub_co_i32"] = {**add, **_SUB, "scc": SccSrc.OVF}
    t["s_add_co_ci_u32"] = {**add, "cin": CarryIn.SCC, "scc": SccSrc.HI_NZ}
    t["s_sub_co_ci_u32"] = {**add, "inv": 1, "cin": CarryIn.NSCC, "scc": SccSrc.HI_NZ}
    t["s_absdiff_i32"] = {**_SUB, "rs": Result.NEG, "d_we": DWe.YES, "scc": SccSrc.D_NZ}
    t["s_abs_i32"] = {"rs": Result.NEG, "neg_a": 1, "d_we": DWe.YES, "scc": SccSrc.D_NZ}
    for n in (1, 2, 3, 4):
        t[f"s_lshl{n}_add_u32"] = {**add, "x": XSrc.A_SHL, "shl": n, "x64": 1, "scc": SccSrc.HI_NZ}
    t["s_add_nc_u64"] = {**add, "w64": 1, "dst64": 1}
    t["s_sub_nc_u64"] = {**add, **_SUB, "w64": 1, "dst64": 1}
    for typ in ("i32", "u32"):
        sgn = int(typ[0] == "i")
        t[f"s_min_{typ}"] = {**_SUB, "sgn": sgn, "rs": Result.MINMAX, "d_we": DWe.YES, "scc": SccSrc.LT}
        t[f"s_max_{typ}"] = {**t[f"s_min_{typ}"], "mm_max": 1}
    for cond, bits in CMP_FLAGS.items():
        code = sum(b << k for k, b in enumerate(bits))
        cmp = {**_SUB, "scc": SccSrc.COND, "cond": code}
        t[f"s_cmp_{cond}_i32"] = {**cmp, "sgn": 1}
        t[f"s_cmp_{cond}_u32"] = cmp
        t[f"s_cmp_{cond}_u64"] = {**cmp, "w64": 1}
    t["s_addk_co_i32"] = {**add, "x": XSrc.D, "y": YSrc.K, "scc": SccSrc.OVF}

    for w in (32, 64):
        wide = {"w64": int(w == 64), "dst64": int(w == 64)}
        shift = {**wide, "rs": Result.SHIFT, "d_we": DWe.YES, "scc": SccSrc.D_NZ}
        t[f"s_lshl_b{w}"] = {**shift, "left": 1}
        t[f"s_lshr_b{w}"] = shift
        t[f"s_ashr_i{w}"] = {**shift, "arith": 1}
        t[f"s_bfe_u{w}"] = {**shift, "rs": Result.FIELD}
        t[f"s_bfe_i{w}"] = {**shift, "rs": Result.FIELD, "arith": 1, "sgn_field": 1}
        t[f"s_bfm_b{w}"] = {**shift, "left": 1, "sv": ShiftIn.MASK, "scc": SccSrc.NONE}
        for want in (0, 1):
            t[f"s_bitcmp{want}_b{w}"] = {"w64": int(w == 64), "scc": SccSrc.BIT, "want0": int(want == 0)}
        logic = {**wide, "rs": Result.LOGIC, "d_we": DWe.YES}
        for name, f in LOGIC_OPS.items():
            t[f"s_{name}_b{w}"] = {**logic, "tt": truth_table(f), "scc": SccSrc.D_NZ}
        t[f"s_not_b{w}"] = {**logic, "tt": truth_table(lambda x, y: 1 - x), "scc": SccSrc.D_NZ}
        t[f"s_mov_b{w}"] = {**logic, "tt": _TT_X}
        t[f"s_cselect_b{w}"] = {**logic, "csel": 1}
        t[f"s_cmov_b{w}"] = {**logic, "csel": 1, "y": YSrc.D, "d_we": DWe.SCC}
        t[f"s_bitset0_b{w}"] = {**logic, "x": XSrc.D, "y": YSrc.BIT, "tt": truth_table(lambda x, y: x & (1 - y))}
        t[f"s_bitset1_b{w}"] = {**logic, "x": XSrc.D, "y": YSrc.BIT, "tt": truth_table(lambda x, y: x | y)}
        t[f"s_brev_b{w}"] = {**wide, "rs": Result.BREV, "d_we": DWe.YES}
        t[f"s_bcnt0_i32_b{w}"] = {"w64": int(w == 64), "rs": Result.POP, "pop0": 1, "d_we": DWe.YES,
                                  "scc": SccSrc.D_NZ}
        t[f"s_bcnt1_i32_b{w}"] = {**t[f"s_bcnt0_i32_b{w}"], "pop0": 0}
    counts = {"rs": Result.COUNT, "d_we": DWe.YES}
    t["s_clz_i32_u32"] = counts
    t["s_clz_i32_u64"] = {**counts, "w64": 1}
    t["s_ctz_i32_b32"] = {**counts, "cnt": 1}
    t["s_ctz_i32_b64"] = {**counts, "cnt": 1, "w64": 1}
    t["s_cls_i32"] = {**counts, "cnt": 2}
    t["s_cls_i32_i64"] = {**counts, "cnt": 2, "w64": 1}
    t["s_movk_i32"] = {"rs": Result.LOGIC, "tt": _TT_X, "x": XSrc.K, "d_we": DWe.YES}
    t["s_cmovk_i32"] = {"rs": Result.LOGIC, "csel": 1, "x": XSrc.K, "y": YSrc.D, "d_we": DWe.SCC}
    t["s_sext_i32_i8"] = {"rs": Result.SEXT8, "d_we": DWe.YES}
    t["s_sext_i32_i16"] = {"rs": Result.SEXT16, "d_we": DWe.YES}
    mul = {"d_we": DWe.YES}
    t["s_mul_i32"] = {**mul, "rs": Result.MUL_LO}
    t["s_mul_hi_u32"] = {**mul, "rs": Result.MUL_HI}
    t["s_mul_hi_i32"] = {**mul, "rs": Result.MUL_HI, "mul_sgn": 1}
    t["s_mul_u64"] = {**mul, "rs": Result.MUL_64, "dst64": 1}
    t["s_mulk_i32"] = {**mul, "rs": Result.MUL_LO, "mul_xd": 1, "mul_yk": 1}
    for k, f in SAVEEXEC_OPS.items():
        tt = truth_table(lambda x, y, f=f: f(x, y) & 1)
        t[f"s_{k}_saveexec_b32"] = {"rs": Result.EXEC_IN, "y": YSrc.EXEC, "tt": tt, "d_we": DWe.YES,
                                    "exec_we": 1, "scc": SccSrc.LOGIC_NZ}
        t[f"s_{k}_wrexec_b32"] = {"rs": Result.LOGIC, "y": YSrc.EXEC, "tt": tt, "d_we": DWe.YES,
                                  "exec_we": 1, "scc": SccSrc.D_NZ}
    for halves, pk in (("ll", 0), ("hl", 1), ("lh", 2), ("hh", 3)):
        t[f"s_pack_{halves}_b32_b16"] = {"rs": Result.PACK, "pk": pk, "d_we": DWe.YES}
    # the loops above also name forms gfx1200 lacks (s_cmp_lt_u64, s_and_wrexec_b32, ...)
    ops = {op.name.lower() for op in OpId}
    return {name: {"legal": 1, **c} for name, c in t.items() if name in ops}


_TABLE = _table()
#: Mnemonics the SALU implements (everything else raises ``illegal``).
IMPLEMENTED = frozenset(_TABLE)


def _rep(bit, n: int) -> Value:
    return Value.cast(bit).replicate(n)


class SALU(wiring.Component):
    """Combinational scalar ALU on one datapath (module docstring).

    Attributes
    ----------
    op : In(OpId)
        The operation.
    a, b : In(unsigned(64))
        S0 and S1; 32-bit operands in the low half.
    scc_in : In(1)
        SCC before the instruction (carry-in, s_cselect, s_cmov).
    exec_in : In(unsigned(32))
        EXEC before the instruction (saveexec/wrexec).
    d_in : In(unsigned(64))
        The old destination: kept bits of s_bitset, the kept value of s_cmov/s_cmovk and the
        register operand of SOPK (s_addk_co_i32, s_mulk_i32).
    simm16 : In(unsigned(16))
        SOPK immediate.
    d : Out(unsigned(64))
        Destination value (32-bit results zero-extended).
    d_we : Out(1)
        The instruction writes its destination (0 for compares, 0 for s_cmov/s_cmovk when
        SCC is clear).
    scc, scc_we : Out(1)
        New SCC and whether it is written (``scc`` equals ``scc_in`` when not).
    exec : Out(unsigned(32))
        New EXEC (saveexec/wrexec), ``exec_in`` otherwise.
    exec_we : Out(1)
        EXEC is written.
    illegal : Out(1)
        ``op`` is not an integer scalar ALU op (see the module docstring).
    """

    def __init__(self):
        super().__init__({
            "op": In(OpId), "a": In(64), "b": In(64), "scc_in": In(1), "exec_in": In(32),
            "d_in": In(64), "simm16": In(16),
            "d": Out(64), "d_we": Out(1), "scc": Out(1), "scc_we": Out(1), "exec": Out(32),
            "exec_we": Out(1), "illegal": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        ctl = Signal(Control)
        with m.Switch(self.op):
            for name, fields in sorted(_TABLE.items()):
                with m.Case(OpId[name.upper()]):
                    m.d.comb += ctl.eq(Control.const(fields))
        m.d.comb += self.illegal.eq(~ctl.legal)

        # Each step is a module of its own: the simulator re-evaluates a module's logic
        # whenever a signal it reads changes (hdl/simd/valu_int.py).
        def stage(name):
            m.submodules[name] = s = Module()
            return s

        def sig(st, name, value):
            v = Value.cast(value)
            s = Signal(v.shape(), name=name)
            st.d.comb += s.eq(v)
            return s

        a64, b64, d64 = self.a, self.b, self.d_in
        a, b = a64[:32], b64[:32]
        k = Cat(self.simm16, _rep(self.simm16[15], 16))

        # an idle unit (op NONE: the SIMD's other instructions) keeps its operands at 0
        st = stage("operands")
        X, Y = Signal(64, name="x"), Signal(64, name="y")
        with st.If(ctl.legal):
            with st.Switch(ctl.x):
                for src, v in ((XSrc.A, Mux(ctl.w64, a64, a)), (XSrc.D, Mux(ctl.w64, d64, d64[:32])),
                               (XSrc.K, k), (XSrc.A_SHL, a << ctl.shl)):
                    with st.Case(src):
                        st.d.comb += X.eq(v)
            with st.Switch(ctl.y):
                for src, v in ((YSrc.B, Mux(ctl.w64, b64, b)), (YSrc.K, k),
                               (YSrc.EXEC, self.exec_in), (YSrc.D, Mux(ctl.w64, d64, d64[:32])),
                               (YSrc.BIT, Const(1, 64) << Mux(ctl.w64, a64[:6], a64[:5]))):
                    with st.Case(src):
                        st.d.comb += Y.eq(v)

        # the adder, on X and Y extended from 32 or 64 bits
        st = stage("adder")

        def extend(v, w64):
            sign = ctl.sgn & Mux(w64, v[63], v[31])
            return Cat(v[:32], Mux(w64, v[32:64], _rep(sign, 32)), _rep(sign, WIDE - 64))
        code = ctl.cin.as_value()       # ZERO, ONE, SCC, NSCC: bit 1 takes SCC, bit 0 inverts
        cin = Mux(code[1], self.scc_in ^ code[0], code[0])
        yi = sig(st, "y_inv", (Y ^ _rep(ctl.inv, 64))[:32])
        SUM = sig(st, "sum", (extend(X, ctl.w64 | ctl.x64) + (extend(Y, ctl.w64) ^ _rep(ctl.inv, WIDE)) + cin)[:WIDE])
        lt, eq = SUM[WIDE - 1], SUM == 0

        # the shifter: a funnel F of 127 bits shifted right by 0 to 63 into 64, one level per
        # bit of the amount, the widest first, each only as wide as what follows needs (as
        # VALUInt's). A right shift of v by n: F = {fill, v} by n; a left shift: {v, 0} by 63 - n
        st = stage("shifter")
        amount = Mux(ctl.w64, b64[:6], b64[:5])
        v = Mux(ctl.sv == ShiftIn.MASK, Mux(ctl.w64, low_mask(a64[:6], 64), low_mask(a64[:5], 32)),
                Mux(ctl.w64, a64, Cat(a, _rep(ctl.arith & a[31], 32))))
        f = sig(st, "funnel", Mux(ctl.left, Cat(Const(0, 63), v), Cat(v, _rep(ctl.arith & v[63], 63))))
        by = amount ^ _rep(ctl.left, 6)
        for j in reversed(range(6)):
            f = sig(st, f"funnel_{j}", Mux(by[j], f[1 << j:64 + (2 << j) - 1], f[:64 + (1 << j) - 1]))
        SH = f

        # s_bfe: the field of S1[22:16] bits (all of them from the operand width up), its
        # top bit extended for the signed forms
        st = stage("field")
        width = b64[16:23]
        big = Mux(ctl.w64, width[6:] != 0, width[5:] != 0)
        mask = sig(st, "field_mask", Mux(big, Mux(ctl.w64, (1 << 64) - 1, (1 << 32) - 1),
                                         Mux(ctl.w64, low_mask(width[:6], 64), low_mask(width[:5], 32))))
        field = sig(st, "field", SH & mask)
        top = Mux(ctl.w64, (width[:6] - 1)[:6], (width[:5] - 1)[:5])
        fill = ctl.sgn_field & ~big & field.bit_select(top, 1)
        FIELD = Mux(fill, field | (~mask & Mux(ctl.w64, (1 << 64) - 1, (1 << 32) - 1)), field)

        # the bitwise unit: a truth table over X and Y (for the selects, X or Y by SCC)
        st = stage("bitwise")
        tt = Mux(ctl.csel, Mux(self.scc_in, _TT_X, _TT_Y), ctl.tt)
        LOG = sig(st, "logic", balanced([_rep(tt[i], 64) & (X if i & 2 else ~X) & (Y if i & 1 else ~Y)
                                          for i in range(4)], operator.or_))

        # counts, negation, multiplier
        st = stage("count")
        sign = Mux(ctl.w64, a64[63], a[31])
        src = Mux(ctl.cnt == 1, Mux(ctl.w64, a64[::-1], a[::-1]),
                  Mux(ctl.cnt == 2, Mux(ctl.w64, a64, a) ^ _rep(sign, 64), Mux(ctl.w64, a64, a)))
        cnt_in = sig(st, "count_in", Mux(ctl.w64, src, Cat(Const(0, 32), src[:32])))
        CNT = Mux(cnt_in == 0, (1 << 32) - 1, count_leading_zeros(cnt_in))
        ones = popcount(Mux(ctl.w64, a64, a))
        POP = Mux(ctl.pop0, Mux(ctl.w64, 64, 32) - ones, ones)[:7]
        neg_in = Mux(ctl.neg_a, a, SUM[:32])
        NEG = Mux(neg_in[31], -neg_in.as_signed(), neg_in)[:32]

        st = stage("multiplier")
        w = lanemul.WIDTH
        p = Signal(signed(2 * w))
        mx = Mux(ctl.mul_xd, d64[:32], a)
        my = Mux(ctl.mul_yk, k, b)
        cross = Signal(32)
        with st.If((ctl.rs == Result.MUL_LO) | (ctl.rs == Result.MUL_HI) | (ctl.rs == Result.MUL_64)):
            st.d.comb += p.eq(Cat(mx, ctl.mul_sgn & mx[31]).as_signed() * Cat(my, ctl.mul_sgn & my[31]).as_signed())
            with st.If(ctl.rs == Result.MUL_64):
                st.d.comb += cross.eq((a * b64[32:])[:32] + (a64[32:] * b)[:32])

        st = stage("result")
        r = Signal(64)
        with st.Switch(ctl.rs):
            for src, val in ((Result.SUM, SUM[:64]), (Result.NEG, NEG), (Result.SHIFT, SH), (Result.FIELD, FIELD),
                             (Result.LOGIC, LOG), (Result.MINMAX, Mux(lt ^ ctl.mm_max, X, Y)),
                             (Result.COUNT, CNT), (Result.POP, POP),
                             (Result.MUL_LO, p[:32]), (Result.MUL_HI, p[32:64]),
                             (Result.MUL_64, p[:64] + (cross << 32)),
                             (Result.EXEC_IN, self.exec_in), (Result.BREV, Mux(ctl.w64, a64[::-1], a[::-1])),
                             (Result.SEXT8, a[:8].as_signed()), (Result.SEXT16, a[:16].as_signed()),
                             (Result.PACK, Cat(Mux(ctl.pk[0], a[16:32], a[:16]),
                                               Mux(ctl.pk[1], b[16:32], b[:16])))):
                with st.Case(src):
                    st.d.comb += r.eq(val)
        d = sig(st, "d_out", Cat(r[:32], Mux(ctl.dst64, r[32:], 0)))
        m.d.comb += self.d.eq(d)
        m.d.comb += self.d_we.eq(Mux(ctl.d_we == DWe.SCC, self.scc_in, ctl.d_we == DWe.YES))

        # SCC and EXEC
        ovf = (X[31] == yi[31]) & (X[31] != SUM[31])
        cond = ctl.cond.bit_select(Cat(eq, lt), 1)
        m.d.comb += [self.scc.eq(self.scc_in), self.exec.eq(self.exec_in), self.scc_we.eq(ctl.scc != SccSrc.NONE)]
        with m.Switch(ctl.scc):
            for src, val in ((SccSrc.D_NZ, d != 0), (SccSrc.HI_NZ, SUM[32:64] != 0), (SccSrc.OVF, ovf),
                             (SccSrc.LT, lt ^ ctl.mm_max), (SccSrc.COND, cond), (SccSrc.BIT, SH[0] ^ ctl.want0),
                             (SccSrc.LOGIC_NZ, LOG[:32] != 0)):
                with m.Case(src):
                    m.d.comb += self.scc.eq(val)
        with m.If(ctl.exec_we):
            m.d.comb += [self.exec.eq(LOG[:32]), self.exec_we.eq(1)]
        return m
