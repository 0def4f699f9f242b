"""The SIMD's scalar ALU: a 32-bit datapath, 64-bit operations in two passes (docs/simd.md).

Every integer SALU opcode of gfx1200 (:data:`IMPLEMENTED`), bit-exact with the model (``sim/scalar.py``
and the saveexec/wrexec, s_cmov and s_bitset handlers of ``sim/execute.py``), as a pipeline
stage: ``start`` takes the operation and its operands into the unit's registers, then one
*pass* a cycle runs on 32 bits, and the results are valid with ``done`` in the last pass.
A 64-bit operation takes two passes, a word each, the carry, the non-zero flag and a kept
word passing from the first to the second. The datapath of a pass:

- **the load**: the SOPK register operand and s_bitset's kept value enter as S0, simm16
  (sign-extended) and S0 (s_bitset's bit index, s_abs's operand) as S1, S1 as the sum
  register (s_lshl<n>_add): one operand select at the registers, not one in each unit;
- **one signed 34 x 34 multiplier** (four MULT18X18D) for the multiplies and every shift:
  a left shift by ``n`` is the low word of a word of S0 times ``2^n`` (its high word the
  bits shifted out), a right shift the high word of S0's word times ``2^(32 - n)`` (signed
  for ``s_ashr``; its low word the bits shifted out). A 64-bit shift takes a word of S0
  each pass and ORs in the bits the other word's product shifted out (a right shift gives
  its high word first); ``s_bfe`` masks the shifted word to its field and extends its top
  bit (``s_sext_*`` are fields at offset 0), ``s_bfm`` shifts a mask, ``s_bitcmp`` takes
  bit 0 of a right shift of the word holding the bit, ``s_mul_u64`` sums its three
  products on the adder. A one-hot factor costs far fewer LUTs than a barrel shifter;
- **one 33-bit adder** ``X + (Y or ~Y) + carry`` (bit 32 the operands' sign or zero for the
  compares): adds, subtractions, compares, the min/max compare, ``s_abs``/``s_absdiff``
  (``(v ^ s) + s``, ``s`` the sign of ``v``), the shifted word of s_lshl<n>_add, and
  ``X - 1`` for the trailing-zero counts;
- **a bitwise unit**, any function of two bits (for the selects, the min/max and
  ``s_cmov``: X or Y) on X, S0's word reversed (``s_brev``, the leading-bit counts),
  inverted (``s_bcnt0``) or XORed with its sign (``s_cls``): the logic ops, moves,
  saveexec/wrexec, s_bitset, and the bit count's input;
- **one bit count** (``popcount`` of :mod:`hdl.simd.valu_int`), summed over the passes:
  ``s_bcnt``, and the trailing zeros of X as the ones of ``~X & (X - 1)`` (the leading ones
  of S0 reversed), -1 when X - 1 borrows out of the last pass.

Latency, from ``start`` to ``done`` (``busy`` in all cycles but the last):

=========================================================================  ======
operations                                                                 cycles
=========================================================================  ======
32-bit operands and result: add, compare, logic, shift, bfe, count,         1
s_mul_i32, s_mul_hi_*, s_lshl<n>_add, s_pack; s_bitcmp*_b64
64-bit operand or result: s_*_b64/u64/i64 logic, shifts, bfe/bfm, counts,   2
add/sub, compares, cselect, cmov, bitset, mov; s_absdiff_i32
s_mul_u64                                                                   3
=========================================================================  ======
"""
from __future__ import annotations

import operator

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from ..isa_tables import OpId
from .valu_int import balanced, low_mask, popcount

__all__ = ["ScalarALU", "IMPLEMENTED", "PASSES", "CMP_FLAGS", "LOGIC_OPS", "SAVEEXEC_OPS", "truth_table"]


def truth_table(f) -> int:
    """The 4-bit table of a function of two bits, indexed by 2 x + y."""
    return sum(f((k >> 1) & 1, k & 1) << k for k in range(4))


LOGIC_OPS = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
             "nand": lambda x, y: 1 - (x & y), "nor": lambda x, y: 1 - (x | y), "xnor": lambda x, y: 1 - (x ^ y),
             "and_not1": lambda x, y: x & (1 - y), "or_not1": lambda x, y: x | (1 - y)}
# compare conditions as truth tables over the index 2 lt + eq of X - Y
CMP_FLAGS = {"eq": (0, 1, 0), "lg": (1, 0, 1), "gt": (1, 0, 0), "ge": (1, 1, 0), "lt": (0, 0, 1), "le": (0, 1, 1)}
# s_<op>_saveexec_b32 and s_<op>_wrexec_b32: <op> -> f(S0, EXEC), the new EXEC.
SAVEEXEC_OPS = {
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
    "and_not0": lambda s, e: ~s & e, "or_not0": lambda s, e: ~s | e,
    "and_not1": lambda s, e: s & ~e, "or_not1": lambda s, e: s | ~e,
}


class Seq(enum.Enum, shape=3):
    """The passes of an operation and what each takes."""
    ONE = 0         # one pass, the low words
    HALVES = 1      # low word, then high word with the carry and flags of the first
    SWAP = 2        # high word, then low word (leading-bit counts, s_brev_b64: S0 reversed)
    ABSDIFF = 3     # S0 - S1, then |the difference|
    MUL64 = 4       # S0.lo * S1.lo, + S0.lo * S1.hi, + S0.hi * S1.lo
    SHIFT = 5       # a 64-bit shift: a product of each word of S0 (a right shift high word first)


class XSrc(enum.Enum, shape=2):
    A = 0           # S0's word of the pass (the bitwise unit's X: reversed, inverted)
    ACC = 1         # the adder's sum of the pass before
    ZERO = 2


class YSrc(enum.Enum, shape=2):
    B = 0
    ACC = 1
    P = 2           # a product word: the one a first pass keeps, the one later passes add
    ZERO = 3


class LSrc(enum.Enum, shape=2):
    """The bitwise unit's second operand."""
    B = 0
    EXEC = 1
    BIT = 2         # 1 << S1 (s_bitset: S1 holds the bit index)
    SUM = 3         # X - 1 (the trailing zeros of X are the ones of ~X & (X - 1))


class CarryIn(enum.Enum, shape=2):
    ZERO = 0
    ONE = 1
    SCC = 2
    NSCC = 3


class Result(enum.Enum, shape=3):
    SUM = 0
    LOGIC = 1
    POP = 2         # the bitwise unit's ones, summed over the passes (-1 for ``ff`` when X is 0)
    MUL = 4         # the product's word ``phi`` (| the word kept; s_mul_u64's later passes: the sum)
    EXEC = 5        # the old EXEC (saveexec)
    PACK = 6


class SccSrc(enum.Enum, shape=3):
    NONE = 0
    D_NZ = 1        # the result is not zero (both halves of a 64-bit one)
    CARRY = 2       # carry or borrow out of 32 bits (and the bits s_lshl<n>_add shifts out:
                    # the product's high word)
    OVF = 3         # signed overflow of a 32-bit add or subtract
    LT = 4          # the min/max compare (inverted for max)
    COND = 5        # a compare: ``cond`` over (lt, eq)
    BIT = 6         # bit 0 of the shifted word (s_bitcmp), inverted by ``want0``
    LOGIC_NZ = 7    # the new EXEC is not zero (saveexec)


class DWe(enum.Enum, shape=2):
    NO = 0
    YES = 1
    SCC = 2         # s_cmov/s_cmovk: only when SCC is set


Control = data.StructLayout({
    "legal": 1,
    "seq": Seq,
    "w64": 1,               # 64-bit S0 and S1 (amounts, field widths, signs, bit indices)
    "xd": 1, "yk": 1, "ya": 1,    # load: S0 from the old destination; S1 from simm16; S1 from S0
    # shifts: S0's word times a power of two
    "sh": 1, "left": 1, "arith": 1, "bfm": 1, "field": 1, "sgn_field": 1,
    "kamt": 1, "shl": 3,    # shift by ``shl``, not by S1
    "sext": 2,              # s_sext_i32_i8/i16: the field's width 8 (1) or 16 (2), not S1's
    # adder
    "x": XSrc, "accb": 1, "y": YSrc,     # accb: the sum register starts as S1 (s_lshl<n>_add)
    "inv": 1, "cin": CarryIn, "sgn": 1, "abs": 1,
    # bitwise unit
    "tt": 4, "csel": 1, "mm": 1, "mm_max": 1, "rev": 1, "nx": 1, "cls": 1, "l": LSrc, "ff": 1,
    "mul_sgn": 1, "phi": 1,
    "rs": Result, "pk": 2,
    "dst64": 1,             # a 64-bit result
    "scc": SccSrc, "cond": 3, "want0": 1,
    "d_we": DWe,
    "exec_we": 1,
})

_TT_X, _TT_Y = truth_table(lambda x, y: x), truth_table(lambda x, y: y)


def _table() -> dict[str, dict]:
    """Mnemonic -> the :data:`Control` fields of every implemented opcode."""
    t = {}
    sub = {"inv": 1, "cin": CarryIn.ONE}
    add = {"rs": Result.SUM, "d_we": DWe.YES}
    t["s_add_co_u32"] = {**add, "scc": SccSrc.CARRY}
    t["s_sub_co_u32"] = {**add, **sub, "scc": SccSrc.CARRY}
    t["s_add_co_i32"] = {**add, "scc": SccSrc.OVF}
    t["s_sub_co_i32"] = {**add, **sub, "scc": SccSrc.OVF}
    t["s_add_co_ci_u32"] = {**add, "cin": CarryIn.SCC, "scc": SccSrc.CARRY}
    t["s_sub_co_ci_u32"] = {**add, "inv": 1, "cin": CarryIn.NSCC, "scc": SccSrc.CARRY}
    t["s_absdiff_i32"] = {**add, **sub, "seq": Seq.ABSDIFF, "scc": SccSrc.D_NZ}
    t["s_abs_i32"] = {**add, "ya": 1, "x": XSrc.ZERO, "abs": 1, "scc": SccSrc.D_NZ}
    for n in (1, 2, 3, 4):
        t[f"s_lshl{n}_add_u32"] = {**add, "sh": 1, "left": 1, "kamt": 1, "shl": n, "phi": 1, "accb": 1,
                                   "x": XSrc.ACC, "y": YSrc.P, "scc": SccSrc.CARRY}
    t["s_add_nc_u64"] = {**add, "seq": Seq.HALVES, "w64": 1, "dst64": 1}
    t["s_sub_nc_u64"] = {**t["s_add_nc_u64"], **sub}
    for typ in ("i32", "u32"):
        mm = {**add, **sub, "sgn": int(typ[0] == "i"), "rs": Result.LOGIC, "mm": 1, "scc": SccSrc.LT}
        t[f"s_min_{typ}"] = mm
        t[f"s_max_{typ}"] = {**mm, "mm_max": 1}
    for cond, bits in CMP_FLAGS.items():
        cmp = {**sub, "scc": SccSrc.COND, "cond": sum(b << k for k, b in enumerate(bits))}
        t[f"s_cmp_{cond}_i32"] = {**cmp, "sgn": 1}
        t[f"s_cmp_{cond}_u32"] = cmp
        t[f"s_cmp_{cond}_u64"] = {**cmp, "seq": Seq.HALVES, "w64": 1}
    t["s_addk_co_i32"] = {**add, "xd": 1, "yk": 1, "scc": SccSrc.OVF}

    for w in (32, 64):
        wide = {"w64": 1, "dst64": 1, "seq": Seq.HALVES} if w == 64 else {}
        w64 = {"w64": 1, "seq": Seq.HALVES} if w == 64 else {}
        # a right shift: the high word of S0 * 2^(32 - n); a left one: the low word of S0 * 2^n
        shift = {**wide, "sh": 1, "rs": Result.MUL, "phi": 1, "x": XSrc.ACC, "y": YSrc.P, "d_we": DWe.YES,
                 "scc": SccSrc.D_NZ, **({"seq": Seq.SHIFT} if w == 64 else {})}
        t[f"s_lshl_b{w}"] = {**shift, "left": 1, "phi": 0}
        t[f"s_lshr_b{w}"] = shift
        t[f"s_ashr_i{w}"] = {**shift, "arith": 1}
        t[f"s_bfe_u{w}"] = {**shift, "field": 1}
        t[f"s_bfe_i{w}"] = {**shift, "field": 1, "arith": 1, "sgn_field": 1}
        t[f"s_bfm_b{w}"] = {**shift, "left": 1, "phi": 0, "bfm": 1, "scc": SccSrc.NONE}
        for want in (0, 1):      # bit 0 of a right shift of the word holding the bit: one pass
            t[f"s_bitcmp{want}_b{w}"] = {"w64": int(w == 64), "sh": 1, "rs": Result.MUL, "phi": 1,
                                         "scc": SccSrc.BIT, "want0": int(want == 0)}
        logic = {**wide, "rs": Result.LOGIC, "d_we": DWe.YES}
        for name, f in LOGIC_OPS.items():
            t[f"s_{name}_b{w}"] = {**logic, "tt": truth_table(f), "scc": SccSrc.D_NZ}
        t[f"s_not_b{w}"] = {**logic, "tt": truth_table(lambda x, y: 1 - x), "scc": SccSrc.D_NZ}
        t[f"s_mov_b{w}"] = {**logic, "tt": _TT_X}
        t[f"s_cselect_b{w}"] = {**logic, "csel": 1}
        t[f"s_cmov_b{w}"] = {**logic, "tt": _TT_X, "d_we": DWe.SCC}
        t[f"s_bitset0_b{w}"] = {**logic, "xd": 1, "ya": 1, "l": LSrc.BIT, "tt": truth_table(lambda x, y: x & (1 - y))}
        t[f"s_bitset1_b{w}"] = {**logic, "xd": 1, "ya": 1, "l": LSrc.BIT, "tt": truth_table(lambda x, y: x | y)}
        t[f"s_brev_b{w}"] = {**logic, "seq": Seq.SWAP if w == 64 else Seq.ONE, "rev": 1, "tt": _TT_X}
        t[f"s_bcnt0_i32_b{w}"] = {**w64, "rs": Result.POP, "tt": _TT_X, "nx": 1,
                                  "d_we": DWe.YES, "scc": SccSrc.D_NZ}
        t[f"s_bcnt1_i32_b{w}"] = {**t[f"s_bcnt0_i32_b{w}"], "nx": 0}
    # trailing zeros of X: the ones of ~X & (X - 1), X - 1 carried over the passes; leading
    # ones of S0 reversed (the high half first)
    counts = {"rs": Result.POP, "ff": 1, "l": LSrc.SUM, "tt": truth_table(lambda x, y: (1 - x) & y), "y": YSrc.ZERO,
              "inv": 1, "d_we": DWe.YES}
    t["s_clz_i32_u32"] = {**counts, "rev": 1}
    t["s_clz_i32_u64"] = {**counts, "rev": 1, "w64": 1, "seq": Seq.SWAP}
    t["s_ctz_i32_b32"] = counts
    t["s_ctz_i32_b64"] = {**counts, "w64": 1, "seq": Seq.HALVES}
    t["s_cls_i32"] = {**counts, "rev": 1, "cls": 1}
    t["s_cls_i32_i64"] = {**counts, "rev": 1, "cls": 1, "w64": 1, "seq": Seq.SWAP}
    t["s_movk_i32"] = {"yk": 1, "rs": Result.LOGIC, "tt": _TT_Y, "d_we": DWe.YES}
    t["s_cmovk_i32"] = {"yk": 1, "rs": Result.LOGIC, "tt": _TT_Y, "d_we": DWe.SCC}
    for n, sext in ((8, 1), (16, 2)):
        t[f"s_sext_i32_i{n}"] = {"sh": 1, "rs": Result.MUL, "phi": 1, "kamt": 1, "sext": sext, "field": 1,
                                 "sgn_field": 1, "d_we": DWe.YES}
    mul = {"d_we": DWe.YES}
    t["s_mul_i32"] = {**mul, "rs": Result.MUL}
    t["s_mul_hi_u32"] = {**mul, "rs": Result.MUL, "phi": 1}
    t["s_mul_hi_i32"] = {**mul, "rs": Result.MUL, "phi": 1, "mul_sgn": 1}
    t["s_mul_u64"] = {**mul, "rs": Result.MUL, "seq": Seq.MUL64, "x": XSrc.ACC, "y": YSrc.P, "dst64": 1}
    t["s_mulk_i32"] = {**mul, "rs": Result.MUL, "xd": 1, "yk": 1}
    for k, f in SAVEEXEC_OPS.items():
        ex = {"l": LSrc.EXEC, "tt": truth_table(lambda x, y, f=f: f(x, y) & 1), "d_we": DWe.YES, "exec_we": 1}
        t[f"s_{k}_saveexec_b32"] = {**ex, "rs": Result.EXEC, "scc": SccSrc.LOGIC_NZ}
        t[f"s_{k}_wrexec_b32"] = {**ex, "rs": Result.LOGIC, "scc": SccSrc.D_NZ}
    for halves, pk in (("ll", 0), ("hl", 1), ("lh", 2), ("hh", 3)):
        t[f"s_pack_{halves}_b32_b16"] = {"rs": Result.PACK, "pk": pk, "d_we": DWe.YES}
    # the loops above also name forms gfx1200 lacks (s_cmp_lt_u64, s_and_wrexec_b32, ...)
    ops = {op.name.lower() for op in OpId}
    return {name: {"legal": 1, **c} for name, c in t.items() if name in ops}


_TABLE = _table()
#: Mnemonics the scalar ALU executes.
IMPLEMENTED = frozenset(_TABLE)
#: Cycles from ``start`` to ``done`` of each implemented mnemonic.
PASSES = {name: {Seq.ONE: 1, Seq.MUL64: 3}.get(f.get("seq", Seq.ONE), 2) for name, f in _TABLE.items()}


def _rep(bit, n: int) -> Value:
    return Value.cast(bit).replicate(n)


class ScalarALU(wiring.Component):
    """Scalar ALU on a 32-bit datapath, one pass a cycle (module docstring).

    ``start`` (taken while ``busy`` is 0) loads ``op`` and the operands into the unit's
    registers; the passes run in the following cycles, ``busy`` set in all but the last,
    and ``done`` with the results in the last: the cycle after ``start`` for a one-pass
    operation. A ``start`` in a ``done`` cycle begins the next operation at once (one
    operation a cycle for one-pass operations). The latency table is in the module
    docstring.

    In the scalar pipe (:class:`~hdl.simd.scalar.ScalarPipe`) OPR drives ``start`` with its
    operands (``a``, ``b``, the old destination as ``d_in``, SCC and EXEC of the wave), EX
    keeps the wave, ``sdst`` and width and writes ``d``, SCC and EXEC with ``done``, and ISS
    issues no SALU instruction whose start would find the unit ``busy``.

    Attributes
    ----------
    start : In(1)
        Take ``op`` and the operands.
    op : In(OpId)
    a, b : In(unsigned(64))
        S0 and S1; 32-bit operands in the low half.
    scc_in : In(1)
        SCC before the instruction (carry-in, s_cselect, s_cmov).
    exec_in : In(unsigned(32))
        EXEC before the instruction (saveexec/wrexec).
    d_in : In(unsigned(64))
        The old destination: kept bits of s_bitset and the register operand of SOPK
        (s_addk_co_i32, s_mulk_i32).
    simm16 : In(unsigned(16))
        SOPK immediate.
    busy : Out(1)
        A pass that is not the operation's last runs: ``start`` is not taken.
    done : Out(1)
        The last pass: the outputs below are valid (write enables are 0 otherwise).
    d : Out(unsigned(64))
        Destination value; of a 32-bit result only the low word is defined.
    d_we : Out(1)
        The destination is written (not by compares, nor by s_cmov/s_cmovk with SCC clear).
    scc, scc_we : Out(1)
        New SCC and whether it is written (``scc`` is the SCC taken when not).
    exec : Out(unsigned(32))
        New EXEC (saveexec/wrexec), valid with ``exec_we``.
    exec_we : Out(1)
    illegal : Out(1)
        ``op`` is not one of :data:`IMPLEMENTED` (with ``done``, nothing written).
    """

    def __init__(self):
        super().__init__({
            "start": In(1), "op": In(OpId), "a": In(64), "b": In(64), "scc_in": In(1), "exec_in": In(32),
            "d_in": In(64), "simm16": In(16),
            "busy": Out(1), "done": Out(1),
            "d": Out(64), "d_we": Out(1), "scc": Out(1), "scc_we": Out(1), "exec": Out(32),
            "exec_we": Out(1), "illegal": Out(1),
        })

    def elaborate(self, platform):
        m = Module()

        # ---- the registers: the operation, its operands, the pass and what passes carry
        ctl = Signal(Control)
        a, b = Signal(64), Signal(64)
        scc_i, exec_i = Signal(), Signal(32)
        run, ph = Signal(), Signal(2)
        lo, acc = Signal(32), Signal(32)        # the first pass's result; the sum of the pass before
        carry, nz = Signal(), Signal()

        dec = Signal(Control)
        with m.Switch(self.op):
            for name, fields in sorted(_TABLE.items()):
                with m.Case(OpId[name.upper()]):
                    m.d.comb += dec.eq(Control.const(fields))
        last = Signal(2)
        with m.Switch(ctl.seq):
            with m.Case(Seq.HALVES, Seq.SWAP, Seq.ABSDIFF, Seq.SHIFT):
                m.d.comb += last.eq(1)
            with m.Case(Seq.MUL64):
                m.d.comb += last.eq(2)
        done = run & (ph == last)
        m.d.comb += [self.done.eq(done), self.busy.eq(run & ~done)]
        k = Cat(self.simm16, _rep(self.simm16[15], 16))
        with m.If(self.start & ~self.busy):
            m.d.sync += [ctl.eq(dec), run.eq(1), ph.eq(0), acc.eq(Mux(dec.accb, self.b[:32], 0)), nz.eq(0),
                         scc_i.eq(self.scc_in),
                         exec_i.eq(self.exec_in), a.eq(Mux(dec.xd, self.d_in, self.a)),
                         # simm16 and S0 as S1 serve 32-bit operations only
                         b.eq(Cat(Mux(dec.yk, k, Mux(dec.ya, self.a[:32], self.b[:32])), self.b[32:]))]
        with m.Elif(done):
            m.d.sync += run.eq(0)

        # Each unit is a module of its own: the simulator re-evaluates a module's logic
        # whenever a signal it reads changes (hdl/simd/valu_int.py).
        def stage(name):
            m.submodules[name] = s = Module()
            return s

        def sig(st, name, value):
            v = Value.cast(value)
            s = Signal(v.shape(), name=name)
            st.d.comb += s.eq(v)
            return s

        # ---- the halves of the pass
        st = stage("halves")
        later = ph != 0
        off = sig(st, "offset", Mux(ctl.kamt, ctl.shl, Mux(ctl.w64, b[:6], b[:5])))   # shift amount, field offset
        n5 = off[5]
        ha, hb = Signal(), Signal()
        with st.Switch(ctl.seq):
            with st.Case(Seq.HALVES):
                st.d.comb += [ha.eq(ph[0]), hb.eq(ph[0])]
            with st.Case(Seq.SWAP):
                st.d.comb += ha.eq(~ph[0])
            with st.Case(Seq.MUL64):
                st.d.comb += [ha.eq(ph[1]), hb.eq(ph[0])]
            with st.Case(Seq.SHIFT):    # right: high word, then the low one (the high one from 32 up)
                st.d.comb += ha.eq(Mux(later, n5 ^ ctl.left, ~ctl.left))
            with st.Case(Seq.ONE):      # s_bitcmp_b64: the word holding the bit
                st.d.comb += ha.eq(ctl.sh & n5)
        A = sig(st, "a_half", Mux(ha, a[32:], a[:32]))
        B = sig(st, "b_half", Mux(hb, b[32:], b[:32]))

        # ---- shifts on the multiplier: a word of S0 (or of s_bfm's mask) times 2^n for a left
        # shift (the low word of the product is S0 << n, the high one the bits shifted out), or
        # times 2^(32 - n) for a right one (the high word is S0 >> n, the low one the bits
        # shifted out, which the next pass ORs into its word). A barrel shifter costs more LUTs
        # than the one-hot factor, and the product's words are the two halves of a funnel.
        st = stage("shifter")
        sign = Mux(ctl.w64, a[63], a[31])
        # a word of a mask of ``width`` ones: s_bfm's multiplicand (S0 ones), s_bfe's field
        # (S1[22:16] ones) in this pass's word of the result, a right shift's high one first
        width = Mux(ctl.bfm, Cat(a[:5], ctl.w64 & a[5], 0),
                    Mux(ctl.sext == 0, b[16:23], Mux(ctl.sext[1], 16, 8)))
        fh = Mux(ctl.bfm, ha, (ctl.seq == Seq.SHIFT) & ~ph[0])
        ones = sig(st, "mask_word", Mux(width[5:] > fh, 0xFFFF_FFFF, Mux(width[5:] == fh, low_mask(width[:5], 32), 0)))
        first64 = (ctl.seq == Seq.SHIFT) & ~later
        big = first64 & n5      # 32 and up, first pass: right, the fill (times 1); left, 0
        oh = (Const(1, 32) << off[:5])[:32]
        factor = sig(st, "factor", Mux(ctl.left, Cat(oh & _rep(~big, 32), 0), Cat(big, oh[::-1] & _rep(~big, 32))))
        top = ha | ~ctl.w64                          # S0's sign word: signed for arithmetic shifts
        mx = Mux(ctl.bfm, ones, A)
        mx_s = (ctl.mul_sgn | (ctl.arith & top)) & mx[31]
        my_s = ctl.mul_sgn & B[31]
        my = Mux(ctl.sh, Cat(factor, 0), Cat(B, my_s, my_s))       # 2^32 needs 34 signed bits
        P = Signal(68)
        with st.If(ctl.sh | (ctl.rs == Result.MUL)):
            st.d.comb += P.eq(Cat(mx, mx_s, mx_s).as_signed() * my.as_signed())

        # ---- the bitwise unit: a truth table over X and Y (for the selects, X or Y); X is
        # S0, reversed (s_brev, s_clz, s_cls), inverted (s_bcnt0) or XORed with its sign
        # (s_cls), and also the adder's
        st = stage("bitwise")
        X = sig(st, "lx", Mux(ctl.rev, A[::-1], A) ^ _rep(ctl.nx | (ctl.cls & sign), 32))

        # ---- the adder
        st = stage("adder")
        fix = (ctl.seq == Seq.ABSDIFF) & later     # s_absdiff's second pass: |the difference|
        XA = Signal(32, name="ax")
        YA = Signal(32, name="ay")
        with st.Switch(Mux(fix, XSrc.ZERO, ctl.x)):
            with st.Case(XSrc.A):
                st.d.comb += XA.eq(X)
            with st.Case(XSrc.ACC):
                st.d.comb += XA.eq(acc)
        with st.Switch(Mux(fix, YSrc.ACC, ctl.y)):
            with st.Case(YSrc.B):
                st.d.comb += YA.eq(B)
            with st.Case(YSrc.ACC):
                st.d.comb += YA.eq(acc)
            with st.Case(YSrc.P):       # the first pass keeps the other word (none for the fill)
                st.d.comb += YA.eq(Mux(big, 0, Mux(ctl.phi == later, P[32:64], P[:32])))
        absn = (ctl.abs | fix) & YA[31]    # |v|: (v ^ s) + s
        inv = Mux(fix, absn, ctl.inv | absn)
        code = ctl.cin.as_value()       # ZERO, ONE, SCC, NSCC: bit 1 takes SCC, bit 0 inverts
        cin = Mux(fix | ctl.abs, absn, Mux(((ctl.seq == Seq.HALVES) | (ctl.seq == Seq.SWAP)) & later, carry,
                                           Mux(code[1], scc_i ^ code[0], code[0])))
        xe = Cat(XA, ctl.sgn & XA[31])
        ye = Cat(YA, ctl.sgn & YA[31]) ^ _rep(inv, 33)
        SUM = sig(st, "sum", (xe + ye + cin)[:33])
        lt = SUM[32]

        st = stage("logic")
        Y = Signal(32, name="ly")
        with st.Switch(ctl.l):
            with st.Case(LSrc.B):
                st.d.comb += Y.eq(B)
            with st.Case(LSrc.EXEC):
                st.d.comb += Y.eq(exec_i)
            with st.Case(LSrc.BIT):
                st.d.comb += Y.eq(Mux(~ctl.w64 | (b[5] == ha), oh, 0))     # the multiplier's one-hot
            with st.Case(LSrc.SUM):
                st.d.comb += Y.eq(SUM[:32])

        tt = Mux(ctl.csel, Mux(scc_i, _TT_X, _TT_Y), Mux(ctl.mm, Mux(lt ^ ctl.mm_max, _TT_X, _TT_Y), ctl.tt))
        LOG = sig(st, "logic", balanced([_rep(tt[i], 32) & (X if i & 2 else ~X) & (Y if i & 1 else ~Y)
                                          for i in range(4)], operator.or_))

        # ---- the bit count, summed over the passes; X is 0 when X - 1 borrows out of the last
        st = stage("count")
        none = ctl.ff & (ph == last) & ~(SUM[32] ^ inv)
        POP = sig(st, "pop", Mux(none, 0xFFFF_FFFF, popcount(LOG) + Mux(later, lo[:7], 0)))

        # ---- s_bfe's field: the bits of S1[22:16] in this pass's word of the result, the
        # field's top bit extended above it (a field ending in the low word of a 64-bit
        # right shift, which comes last, gives its high word at the output)
        st = stage("field")
        mask = ones | _rep(~ctl.field, 32)
        p = sig(st, "field_top", (width - 1)[:7])

        # a shift's word: the product's, or (later passes) with the other word of the pass
        # before (disjoint bits), then masked to the field
        sh_word = Mux(ctl.phi, P[32:64], P[:32]) | (acc & _rep(later, 32))
        fbit = sh_word.bit_select(p[:5], 1)
        fill = ctl.sgn_field & (p[5:] == fh) & fbit
        hi_fill = _rep(ctl.sgn_field & ctl.w64 & (p[5:] == 0) & fbit, 32)
        FIELD = sig(st, "field", (sh_word & mask) | (~mask & _rep(fill, 32)))

        # ---- the result of the pass
        st = stage("result")
        r = Signal(32)
        rs = Mux((ctl.seq == Seq.MUL64) & later, Result.SUM, ctl.rs)     # s_mul_u64 sums its words
        with st.Switch(rs):
            for src, val in ((Result.SUM, SUM[:32]), (Result.LOGIC, LOG), (Result.POP, POP),
                             (Result.MUL, FIELD), (Result.EXEC, exec_i),
                             (Result.PACK, Cat(Mux(ctl.pk[0], A[16:], A[:16]), Mux(ctl.pk[1], B[16:], B[:16])))):
                with st.Case(src):
                    st.d.comb += r.eq(val)
        r_nz = r != 0
        with m.If(run & ~done):
            m.d.sync += [ph.eq(ph + 1), acc.eq(SUM[:32]), carry.eq(SUM[32] ^ inv), nz.eq(nz | r_nz)]
            with m.If(~later):          # s_mul_u64's low word is its first pass's
                m.d.sync += lo.eq(r)

        # ---- outputs
        swap = ctl.sh & ~ctl.left      # a 64-bit right shift has its high word first
        # (the high word of a 32-bit result is left as it falls: the SGPR write takes the low one)
        m.d.comb += self.d.eq(Cat(Mux(ctl.dst64 & ~swap, lo, r), Mux(swap, lo | hi_fill, r)))
        m.d.comb += self.d_we.eq(done & ctl.legal & Mux(ctl.d_we == DWe.SCC, scc_i, ctl.d_we == DWe.YES))
        m.d.comb += self.illegal.eq(done & ~ctl.legal)
        shifted_out = ctl.sh & (P[32:64] != 0)      # s_lshl<n>_add's carry: a bit shifted out
        ovf = (XA[31] == ye[31]) & (XA[31] != SUM[31])
        d_nz = r_nz | nz
        cond = ctl.cond.bit_select(Cat(~d_nz, lt), 1)
        scc = Signal()
        with m.Switch(ctl.scc):
            for src, val in ((SccSrc.D_NZ, d_nz), (SccSrc.CARRY, lt | shifted_out), (SccSrc.OVF, ovf),
                             (SccSrc.LT, lt ^ ctl.mm_max), (SccSrc.COND, cond), (SccSrc.BIT, sh_word[0] ^ ctl.want0),
                             (SccSrc.LOGIC_NZ, LOG != 0)):
                with m.Case(src):
                    m.d.comb += scc.eq(val)
        scc_we = done & ctl.legal & (ctl.scc != SccSrc.NONE)
        exec_we = done & ctl.legal & ctl.exec_we
        m.d.comb += [self.scc.eq(Mux(scc_we, scc, scc_i)), self.scc_we.eq(scc_we),
                     self.exec.eq(LOG), self.exec_we.eq(exec_we)]
        return m
