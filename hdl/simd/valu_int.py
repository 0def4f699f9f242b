"""Vector integer ALU of the SIMD32 (docs/simd.md, "vector integer ALU").

One unit computes every integer VALU operation of the model for the lanes of a wave (or of
a lane group): the ``VINT`` table of ``sim/execute.py`` (adds, multiplies, shifts, bit-field
and bit-count ops, min/max/med3, perm), the 16-bit ops with ``op_sel`` halves,
``v_add_nc_i32``/``v_sub_nc_i32``, the carry ops, ``v_mad_co_u64_u32``/``v_mad_co_i64_i32``,
``v_cndmask_b32``, the integer compares (``v_cmp_*``/``v_cmpx_*`` on i16/u16/i32/u32/i64/u64) and
``v_mbcnt_lo/hi_u32_b32``, and the packed 16-bit integer ops (``v_pk_*_[iu]16``, VOP3P). Float
ops and the lane-crossing ``v_readlane``/``v_readfirstlane``/``v_writelane`` belong to other
units: they raise ``illegal``.

Every operation runs on one 32-bit datapath per lane that a control word decoded from
``op`` steers (a table of the ops, :data:`Control`), not an adder, a shifter or a compare per
operation; each unit's result is chosen among a handful of unit outputs, not per opcode.
An operation with a 64-bit source or result (the 64-bit shifts, compares and multiply-adds:
:func:`two_passes`) runs as two passes on consecutive cycles, ``hi`` low then high, each
computing one word of the result; the SIMD's vector pipe reads such a row in two cycles
anyway, so the passes cost no throughput. A packed 16-bit op runs its halves the same way, as
the 16-bit op of the same math on the source halves ``op_sel`` (low pass) and ``op_sel_hi``
(high pass) pick; the high pass's result keeps the low pass's half below its own.

- **operands**: each source's word of the pass extended to 34 bits (a 16-bit half picked by
  ``op_sel``, or 24 or 32 bits, sign- or zero-extended by the op's type; a 64-bit source's
  low word unsigned, its high word by the type); a 64-bit shift's two words in place of S1
  and S2: the word the pass shifts and the one beside it, chosen by the pass and bit 5 of
  the amount;
- **a bitwise unit**: any function of three bits (an 8-entry truth table, a multiplexer
  tree with the table as data) over S0, S1 and S2 (moves, logic ops, ``v_bfi``;
  ``v_cndmask`` takes the table of S0 or of S1 by the lane's mask bit);
- **one 34-bit adder** ``(X or ~X) + (Y or ~Y) + carry``, each input an AND-OR of its few
  sources: adds, subtractions, carries, every compare (the sign and zero of ``S0 - S1``),
  multiply-adds (``X`` the product, its high half in a high pass), ``v_add3`` (a
  carry-save step in front), ``v_xad``, bit counts plus ``S1``. A high pass takes the low
  pass's carry out of bit 31 as its carry in, and a 64-bit compare is equal where both
  passes' differences are 0 (a register per lane for each);
- **one funnel shifter** in the last stage: 63 bits right into 32 by 0 to 31, one level per
  bit of the amount, widest first. A right shift of the word ``v`` by ``k`` shifts
  ``{other, v}`` by ``k``, a left shift ``{v, other}`` by ``31 - k``; ``other`` is the
  fill (the source's sign or 0), S0 for ``v_alignbit/byte`` or a 64-bit shift's other word.
  An op that does not shift passes with ``k = 0``. What it shifts is the result of the
  stage before: S0 or S1 from the bitwise unit, ``v_bfm``'s low mask,
  ``v_add_lshl_u32``'s sum; after it, ``v_bfe``'s mask (the sign bit of ``v_bfe_i32``'s
  field picked from S0 in the stage before). ``v_lshl_add_u32`` and ``v_lshl_or_b32`` shift
  on the lane's multiplier instead (times ``1 << S1``);
- **one signed 33 x 33 multiplier** for the 19 multiply ops (32-bit, 24-bit and 16-bit
  operands extended to 33 bits: synthesis would keep one per op and lane), or the product
  from ``hdl/simd/lanemul.py``;
- **min/max**: S0, S1 or S2, picked by a small table of the mode and three compares made at
  once (``S0 < S1`` from the adder, ``S2 < S1``, ``S2 < S0``);
- a leading-zero counter (``v_clz``, ``v_ctz`` on the reversed value, ``v_cls``; ``v_bfrev``
  is its reversed input) and ``v_perm``'s byte selects;
- the result: one of eight unit outputs, the word beside it in the funnel, and what
  ``clamp`` needs beyond the word: the adder's two top bits, and whether a product leaves
  33 bits (then no sum of it and a 32-bit addend fits the destination);
- a finishing stage after the shifter: saturation (``clamp``) of the exact result, the
  16-bit half merge.

Semantics are bit-exact with the model (``sim/execute.py``, ``sim/vector.py``), including
its choices documented in ``docs/model.md``: 16-bit ops merge into the untouched half of the
old destination, ``clamp`` saturates the ops the model saturates (:data:`CLAMP_SATURATES`:
the exact result clipped to the destination's range; a carry-out is the unclamped one), and
an integer op that the model rejects with ``clamp`` or ``op_sel`` set (:data:`PLAIN32`)
raises ``illegal``. So does ``clamp`` on ``v_mad_co_u64_u32``/``v_mad_co_i64_i32``
(:data:`CLAMP_REFUSED`), whose saturation would change the low word after it was written.

The unit is a pipeline of three stages: the control word and the extended operands are
registered, then the selected result, the shift amount and the lane mask, so ``d`` and
``mask_out`` answer the inputs of two cycles before; ``illegal`` answers the current ones,
and the multiplier's operands leave (``mul_x``/``mul_y``) and its product returns in the
middle stage.

Amaranth's simulator evaluates a module's logic whole whenever a signal it reads changes,
so each step of the datapath is a module of its own, and an idle unit (``op`` NONE) holds
its extended operands at 0. The bit-count helpers here (nibble lookup tables combined by
balanced trees, :func:`select` for a plain-expression multiplexer) serve ``hdl/simd/scalar_alu.py``
too.
"""
from __future__ import annotations

import itertools
import operator

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from ..isa_tables import OpId, info_of
from . import lanemul

__all__ = ["VALUInt", "IMPLEMENTED", "CLAMP_SATURATES", "CLAMP_REFUSED", "PACKED", "PLAIN32", "two_passes",
           "select", "popcount", "count_leading_zeros", "low_mask", "fit", "balanced"]


# --------------------------------------------------------------------------------------
# Bit-count building blocks (shared with hdl/simd/scalar_alu.py).
def _nibble_table(fn) -> Const:
    """A 16-entry, 3-bit-per-entry constant table indexed by a nibble."""
    return Const(sum(fn(n) << (3 * n) for n in range(16)), 48)


_POP4 = _nibble_table(lambda n: bin(n).count("1"))
_CLZ4 = _nibble_table(lambda n: 4 - n.bit_length())


def balanced(items, fn):
    """Combine ``items`` pairwise with ``fn`` as a balanced tree (not a chain)."""
    items = list(items)
    while len(items) > 1:
        items = [fn(items[k], items[k + 1]) if k + 1 < len(items) else items[k]
                 for k in range(0, len(items), 2)]
    return items[0]


def _window(v, lo, n):
    v = Value.cast(v)
    n = len(v) - lo if n is None else n
    if lo < 0 or lo + n > len(v):
        raise ValueError(f"bits [{lo + n}:{lo}] are outside a {len(v)}-bit value")
    return v, n


def popcount(v, lo: int = 0, n: int | None = None) -> Value:
    """Number of set bits in bits ``[lo + n - 1:lo]`` of ``v``.

    Parameters
    ----------
    v : Value-like
    lo, n : int
        The window (default: all of ``v``); slicing here rather than passing ``v[lo:]``
        keeps each leaf a single slice of ``v``.

    Returns
    -------
    Value
        Unsigned count: 4-bit table lookups summed by a balanced adder tree.
    """
    v, n = _window(v, lo, n)
    if n == 0:
        return Const(0, 1)
    leaves = []
    for k in range(lo, lo + n, 4):
        nib = v[k:min(k + 4, lo + n)]
        if len(nib) < 4:
            nib = Cat(nib, Const(0, 4 - len(nib)))
        leaves.append(_POP4.word_select(nib, 3))
    return balanced(leaves, lambda x, y: x + y)


def _check_pow2(n: int) -> None:
    if n < 4 or n & (n - 1):
        raise ValueError(f"bit counts need a power-of-two width >= 4, not {n}")


def count_leading_zeros(v, lo: int = 0, n: int | None = None) -> Value:
    """Leading zeros of bits ``[lo + n - 1:lo]`` of ``v`` (``n`` when they are all 0).

    Parameters
    ----------
    v : Value-like
    lo, n : int
        The window (default: all of ``v``); ``n`` a power of two, at least 4.

    Returns
    -------
    Value
        Unsigned count from a balanced tree: at each level the upper half's zero test
        picks ``half + clz(lower)`` or ``clz(upper)``; the leaves are nibble lookups.
    """
    v, n = _window(v, lo, n)
    _check_pow2(n)
    if n == 4:
        return _CLZ4.word_select(v[lo:lo + 4], 3)
    h = n // 2
    return select(v[lo + h:lo + n] == 0, h + count_leading_zeros(v, lo, h),
                  count_leading_zeros(v, lo + h, h))


def low_mask(width, n: int) -> Value:
    """``(1 << width) - 1`` as ``n`` bits, for a run-time ``width`` below ``n``.

    Parameters
    ----------
    width : Value
        Number of low ones.
    n : int
        Result width.

    Returns
    -------
    Value
        ``unsigned(n)``.
    """
    return (~(Const((1 << n) - 1, n) << width))[:n]


def fit(v, n: int) -> Value:
    """The low ``n`` bits of ``v``, sign- or zero-extended (by the shape of ``v``) when
    ``v`` is narrower.

    Parameters
    ----------
    v : Value-like
    n : int

    Returns
    -------
    Value
        ``unsigned(n)`` bit pattern.
    """
    v = Value.cast(v)
    k = len(v)
    if k >= n:
        return v[:n]
    if v.shape().signed:        # an arithmetic shift: wiring, and short simulator code
        return (Cat(Const(0, n - k), v).as_signed() >> (n - k))[:n]
    return Cat(v, Const(0, n - k))


def select(cond, x, y) -> Value:
    """``x`` if ``cond`` else ``y``: a multiplexer written as a ``Part`` of ``Cat(y, x)``.

    ``Mux`` lowers to a ``SwitchValue``, which Amaranth's simulator compiles into statements
    with two local variables; thousands of them in one process make every evaluation slow
    (CPython sets up and clears each local per call). A ``Part`` with a 1-bit offset is a
    plain expression and synthesizes to the same 2:1 multiplexer.

    Parameters
    ----------
    cond : Value-like
        1-bit select.
    x, y : Value-like
        The choices (an int counts with the width of ``Const(int)``).

    Returns
    -------
    Value
        Signed when either choice is a signed value, wide enough for both.
    """
    vx, vy = Value.cast(x), Value.cast(y)
    sgn = vx.shape().signed or vy.shape().signed
    n = max(len(v) + (sgn and not v.shape().signed) for v in (vx, vy))

    def part(v, value):
        return Const(v & ((1 << n) - 1), n) if isinstance(v, int) else fit(value, n)
    r = Cat(part(y, vy), part(x, vx)).word_select(Value.cast(cond)[0], n)
    return r.as_signed() if sgn else r


def _s(x):
    return x.as_signed()


def _perm(a, b, c) -> Value:
    """v_perm_b32 on one lane's 32-bit sources: each result byte picks, by its selector byte
    of S2, a byte of {S0, S1} (0-7, S1 in bytes 0-3), the sign of byte 1/3/5/7 (8-11), 0 (12)
    or 0xFF (13 and up): below 8 a byte of the pool, from 8 on a byte of copies of one bit."""
    signs = Cat(b[15], b[31], a[15], a[31], Const(0b1110, 4))
    out = []
    for k in range(4):
        sel = c[8 * k:8 * k + 8]
        bit = signs.bit_select(sel[:3], 1) | (sel[4:] != 0)
        out.append(select(sel[3:] != 0, fit(_s(bit), 8), Cat(b, a).word_select(sel[:3], 8)))
    return Cat(*out)


# --------------------------------------------------------------------------------------
# The operations, as the model groups them (sim/execute.py, sim/valu_ext.py).

# The min/max modes: the value each picks of S0, S1, S2 (the 2-operand ones ignore S2).
_MM_MODES = {"min": lambda a, b, c: min(a, b), "max": lambda a, b, c: max(a, b),
             "min3": lambda a, b, c: min(a, b, c), "max3": lambda a, b, c: max(a, b, c),
             "maxmin": lambda a, b, c: min(max(a, b), c), "minmax": lambda a, b, c: max(min(a, b), c),
             "med3": lambda a, b, c: sorted((a, b, c))[1]}
_MM = {mode: k for k, mode in enumerate(_MM_MODES)}
# The 3-operand ones: name -> mode.
_MINMAX = {f"v_{op}_{t}": op for op in ("min3", "max3", "maxmin", "minmax", "med3") for t in ("i32", "u32")}


def _mm_picks() -> Const:
    """Which source each min/max mode picks, by the compares S0 < S1, S2 < S1, S2 < S0: entry
    ``8 mode + 4 (S0 < S1) + 2 (S2 < S1) + (S2 < S0)`` is 0, 1 or 2 (an order no three values
    have: 0), one that holds the picked value for any sources with those compares (ties too)."""
    picks = {}
    for (mode, f), (a, b, c) in itertools.product(_MM_MODES.items(), itertools.product(range(3), repeat=3)):
        key = 8 * _MM[mode] + 4 * (a < b) + 2 * (c < b) + (c < a)
        picks[key] = picks.get(key, {0, 1, 2}) & {k for k, v in enumerate((a, b, c)) if v == f(a, b, c)}
    assert all(picks.values())
    return Const(sum(min(picks.get(k, {0})) << (2 * k) for k in range(64)), 128)

# 16-bit ops (sim/execute.py V16; V16_TO_32 with a 32-bit destination): name -> (a multiply
# or multiply-add, on the lane's multiplier; signed). The others' datapath is in _EXTRA/_LOGIC.
_V16 = {
    "v_add_nc_u16": (False, False), "v_add_nc_i16": (False, True),
    "v_sub_nc_u16": (False, False), "v_sub_nc_i16": (False, True),
    "v_mul_lo_u16": (True, False), "v_mad_u16": (True, False), "v_mad_i16": (True, True),
    "v_max_u16": (False, False), "v_max_i16": (False, True),
    "v_min_u16": (False, False), "v_min_i16": (False, True),
    "v_lshlrev_b16": (False, False), "v_lshrrev_b16": (False, False), "v_ashrrev_i16": (False, True),
    "v_and_b16": (False, False), "v_or_b16": (False, False), "v_xor_b16": (False, False),
    "v_not_b16": (False, False),
}
_V16_TO_32 = {
    "v_cvt_u32_u16": (False, False), "v_cvt_i32_i16": (False, True),
    "v_mad_u32_u16": (True, False), "v_mad_i32_i16": (True, True),
}

# The 32-bit multiplies: name -> (bits, signed): the multiplier takes the low ``bits`` bits
# of S0 and S1, sign- or zero-extended.
_MUL_OPERANDS = {
    "v_mul_lo_u32": (32, False), "v_mul_hi_u32": (32, False), "v_mul_hi_i32": (32, True),
    "v_mul_u32_u24": (24, False), "v_mul_hi_u32_u24": (24, False), "v_mul_i32_i24": (24, True),
    "v_mul_hi_i32_i24": (24, True), "v_mad_u32_u24": (24, False), "v_mad_i32_i24": (24, True),
    "v_mad_co_u64_u32": (32, False), "v_mad_co_i64_i32": (32, True),
}

# The integer compare conditions: <cond> of v_cmp_<cond>_<type> -> f(x, y).
_CMP = {"lt": lambda x, y: x < y, "eq": lambda x, y: x == y, "le": lambda x, y: x <= y,
        "gt": lambda x, y: x > y, "ne": lambda x, y: x != y, "lg": lambda x, y: x != y,
        "ge": lambda x, y: x >= y}


def _is_compare(name: str) -> bool:
    parts = name.split("_")
    return len(parts) == 4 and parts[:2] in (["v", "cmp"], ["v", "cmpx"]) and parts[2] in _CMP \
        and parts[3] in ("i16", "u16", "i32", "u32", "i64", "u64")


# Every integer v_cmp_*/v_cmpx_* of gfx1200.
_COMPARES = frozenset(n for n in (op.name.lower() for op in OpId) if _is_compare(n))

# The plain 32-bit ops whose ``clamp`` saturates the exact result (sim/valu_ext.py).
_CLAMP32 = frozenset({"v_add_nc_u32", "v_sub_nc_u32", "v_subrev_nc_u32", "v_mul_u32_u24", "v_mul_i32_i24",
                      "v_mad_u32_u24", "v_mad_i32_i24"})
# The carry ops: bit 32 of the exact result (bit 64 of v_mad_co_*) is the carry or borrow out.
_CARRY = frozenset({"v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_add_co_ci_u32", "v_sub_co_ci_u32",
                    "v_subrev_co_ci_u32", "v_mad_co_u64_u32", "v_mad_co_i64_i32"})
# The rest that are not the model's VINT ops.
_OTHER = frozenset({"v_add_nc_i32", "v_sub_nc_i32", "v_cndmask_b32", "v_mbcnt_lo_u32_b32",
                    "v_mbcnt_hi_u32_b32", "v_nop"})

# The packed 16-bit integer ops (VOP3P): name -> the 16-bit op each half runs.
_PACKED = {"v_pk_mad_i16": "v_mad_i16", "v_pk_mad_u16": "v_mad_u16", "v_pk_mul_lo_u16": "v_mul_lo_u16",
           "v_pk_add_i16": "v_add_nc_i16", "v_pk_add_u16": "v_add_nc_u16",
           "v_pk_sub_i16": "v_sub_nc_i16", "v_pk_sub_u16": "v_sub_nc_u16",
           "v_pk_lshlrev_b16": "v_lshlrev_b16", "v_pk_lshrrev_b16": "v_lshrrev_b16",
           "v_pk_ashrrev_i16": "v_ashrrev_i16", "v_pk_max_i16": "v_max_i16", "v_pk_min_i16": "v_min_i16",
           "v_pk_max_u16": "v_max_u16", "v_pk_min_u16": "v_min_u16"}
# Of those, the ones whose clamp saturates (the model refuses it on the others).
_PACKED_CLAMP = frozenset({"v_pk_mad_i16", "v_pk_mad_u16", "v_pk_add_i16", "v_pk_add_u16",
                           "v_pk_sub_i16", "v_pk_sub_u16"})

#: The packed 16-bit integer ops.
PACKED = frozenset(_PACKED)
#: Refused with ``clamp``: the 64-bit multiply-adds, whose saturation would change a low word
#: written before the high word is known, and the packed ops the model refuses it on.
CLAMP_REFUSED = frozenset({"v_mad_co_u64_u32", "v_mad_co_i64_i32"} | (set(_PACKED) - _PACKED_CLAMP))

WIDE = 34       # a word extended by two bits: sums and differences of two extended words are exact


class Width(enum.Enum, shape=2):
    """How much of a source an operation reads: a 16-bit half (``op_sel``), 32 or 64 bits, or
    the low 24 (the 24-bit multiplies' operands)."""
    W32 = 0         # (most ops: 0 keeps the decoder small)
    W16 = 1
    W64 = 2
    W24 = 3


class AddX(enum.Enum, shape=3):
    ZERO = 0
    A = 1
    P = 2           # the product
    LOGIC = 3       # the bitwise unit's result
    POP = 4         # the bit count


class AddY(enum.Enum, shape=2):
    ZERO = 0
    B = 1
    C = 2
    MAJ = 3         # the carries of S0 + S1 + S2 (v_add3's carry-save step)


class CarryIn(enum.Enum, shape=2):
    ZERO = 0
    ONE = 1
    MASK = 2
    NMASK = 3


class Other(enum.Enum, shape=3):
    """The word beside the result in the shifter's funnel: above it for a right shift (what
    comes in from the left), below it for a left one."""
    ZERO = 0
    A_EXT = 1       # S0's extension (v_bfe_i32: its sign)
    B_EXT = 2       # S1's extension (v_ashrrev: its sign)
    A = 3           # S0: {S0, S1} for v_alignbit/byte
    C = 4           # a 64-bit shift's other word, which the operand stage put in S2's place


class ShiftBy(enum.Enum, shape=3):
    ZERO = 0        # every op that does not shift: its result passes the shifter
    A4 = 1
    A5 = 2
    A6 = 3          # the 64-bit shifts: S0[5] picks the words, S0[4:0] shifts them
    B5 = 4
    C5 = 5
    C_BYTES = 6     # S2[1:0] bytes


class Post(enum.Enum, shape=2):
    """What follows the shifter."""
    NONE = 0
    AND_MASK = 1    # v_bfe_u32: the low S2[4:0] bits
    SIGNED_FIELD = 2    # v_bfe_i32: those bits sign-extended


class Result(enum.Enum, shape=3):
    SUM = 0
    LOGIC = 1       # (also S0 or S1 for a shift)
    P_HI = 2        # product bits [63:32]
    MINMAX = 3      # the min/max stage
    COUNT = 4       # (or S0 reversed: v_bfrev)
    PERM = 5
    P_OR_C = 6      # the product's low half OR S2: v_lshl_or (S0 times 1 << S1)
    MASK = 7        # the low mask of S0[4:0] ones: v_bfm (shifted)


class MaskOut(enum.Enum, shape=2):
    NONE = 0
    CARRY = 1       # bit 32 of the pass's exact sum: bit 32, or bit 64 in a high pass
    COMPARE = 2


Control = data.StructLayout({
    "legal": 1,
    "plain": 1,         # a VINT op: op_sel, or clamp unless ``sat``, make it illegal (as the model)
    "no_clamp": 1,      # CLAMP_REFUSED
    "wide": 1,          # a 64-bit source or result: a low pass, then a high one with its carry
    "packed": 1,        # VOP3P: each pass one half, its sources' halves by op_sel / op_sel_hi
    "wa": Width, "wb": Width, "wc": Width,
    "sgn": 1,           # sources sign-extended
    "mul_shl": 1,       # multiplier: S0 times 1 << S1[4:0] (v_lshl_add_u32, v_lshl_or_b32)
    "ax": AddX, "ay": AddY, "inv_x": 1, "inv_y": 1, "cin": CarryIn,
    "tt": 8,            # bitwise unit: bit 4a + 2b + c is f(a, b, c)
    "tt_mask": 1,       # v_cndmask: S1 where the lane's mask bit is set, else S0
    "pop_below": 1,     # the bit count counts the lanes below this one (v_mbcnt_lo)
    "cnt": 2,           # leading zeros of: 0 S0, 1 S0 reversed, 2 S0 ^ its sign; 3: S0 reversed
    "other": Other, "sn": ShiftBy, "left": 1, "post": Post,
    "mm": 3,            # MINMAX: the mode (an index of _MM_MODES)
    "rs": Result,
    "sat": 1,           # clamp saturates the exact result...
    "sat_to": Width,    # ...to a 16- or 32-bit destination, signed by ``sgn``
    "half": 1,          # a 16-bit result: merged into the op_sel[3] half of the old value
    "mo": MaskOut,
    "cond": 4,          # COMPARE: bit 2 lt + eq
})


def _tt(f) -> int:
    return sum(f((k >> 2) & 1, (k >> 1) & 1, k & 1) << k for k in range(8))


_TT_A, _TT_B = _tt(lambda a, b, c: a), _tt(lambda a, b, c: b)


_LOGIC = {
    "v_mov_b32": lambda a, b, c: a, "v_not_b32": lambda a, b, c: 1 - a,
    "v_and_b32": lambda a, b, c: a & b, "v_or_b32": lambda a, b, c: a | b,
    "v_xor_b32": lambda a, b, c: a ^ b, "v_xnor_b32": lambda a, b, c: 1 - (a ^ b),
    "v_and_or_b32": lambda a, b, c: (a & b) | c, "v_or3_b32": lambda a, b, c: a | b | c,
    "v_xor3_b32": lambda a, b, c: a ^ b ^ c, "v_bfi_b32": lambda a, b, c: b if a else c,
    "v_and_b16": lambda a, b, c: a & b, "v_or_b16": lambda a, b, c: a | b,
    "v_xor_b16": lambda a, b, c: a ^ b, "v_mbcnt_hi_u32_b32": lambda a, b, c: b,
}
_SUB = {"ax": AddX.A, "ay": AddY.B, "inv_y": 1, "cin": CarryIn.ONE}    # S0 - S1
_SUBREV = {"ax": AddX.A, "inv_x": 1, "ay": AddY.B, "cin": CarryIn.ONE}  # ~S0 + S1 + 1
_ADD = {"ax": AddX.A, "ay": AddY.B}
_LEFT = {"left": 1}
_SH_B = {"rs": Result.LOGIC, "tt": _TT_B, "other": Other.B_EXT}     # shifts of S1
_SH_A = {"rs": Result.LOGIC, "tt": _TT_A, "other": Other.A_EXT}
# compare conditions as truth tables over the index 2 lt + eq of S0 - S1 (gt, eq, lt)
_COND = {c: sum(int(f(x, y)) << k for k, (x, y) in enumerate(((1, 0), (0, 0), (0, 1))))
         for c, f in _CMP.items()}


def _control(name: str) -> dict:
    """The control word of one implemented op, as a dict of :data:`Control` fields."""
    op = OpId[name.upper()]
    dst64 = info_of(op).dst_bits == 64
    ctl = {"legal": 1, "plain": int(name in PLAIN32), "no_clamp": int(name in CLAMP_REFUSED),
           "wa": Width.W32, "wb": Width.W32, "wc": Width.W32, "sat": int(name in CLAMP_SATURATES),
           "sat_to": Width.W32}
    if name in _MUL_OPERANDS:
        bits, sgn = _MUL_OPERANDS[name]
        ctl.update(sgn=int(sgn), **({"wa": Width.W24, "wb": Width.W24} if bits == 24 else {}))
    if name in _LOGIC:
        ctl.update(rs=Result.LOGIC, tt=_tt(_LOGIC[name]))
    if name in _MINMAX:
        ctl.update(_SUB, rs=Result.MINMAX, sgn=int(name.endswith("i32")), mm=_MM[_MINMAX[name]])
    if name in _COMPARES:
        _, kind, cond, typ = name.split("_")
        w = {"64": Width.W64, "32": Width.W32, "16": Width.W16}[typ[1:]]     # a 16-bit half by op_sel
        ctl.update(_SUB, wa=w, wb=w, sgn=int(typ[0] == "i"), mo=MaskOut.COMPARE, cond=_COND[cond])
    for table, wide in ((_V16, False), (_V16_TO_32, True)):
        if name in table:
            mad, sgn = table[name]
            ctl.update(sgn=int(sgn), sat_to=Width.W32 if wide else Width.W16, half=int(not wide),
                       **{w: Width.W16 if bits == 16 else Width.W32
                          for w, bits in zip(("wa", "wb", "wc"), info_of(op).src_bits)})
            if mad:
                ctl.update(ax=AddX.P, ay=AddY.C if len(info_of(op).src_bits) > 2 else AddY.ZERO)
    ctl.update(_EXTRA.get(name, {}))
    if ctl.get("rs") in (Result.LOGIC, Result.MINMAX) and not ctl.get("left"):
        ctl["sat"] = 0      # clamp cannot change a result that always fits its destination
    ctl["wide"] = int(dst64 or Width.W64 in (ctl["wa"], ctl["wb"], ctl["wc"]))
    return ctl


_MIN = {**_SUB, "rs": Result.MINMAX, "mm": _MM["min"]}
_MAX = {**_SUB, "rs": Result.MINMAX, "mm": _MM["max"]}
_EXTRA = {
    "v_bfrev_b32": {"rs": Result.COUNT, "cnt": 3},
    "v_add_nc_u32": _ADD, "v_sub_nc_u32": _SUB, "v_subrev_nc_u32": _SUBREV,
    "v_mul_lo_u32": {"ax": AddX.P}, "v_mul_u32_u24": {"ax": AddX.P}, "v_mul_i32_i24": {"ax": AddX.P},
    "v_mul_hi_u32": {"rs": Result.P_HI}, "v_mul_hi_i32": {"rs": Result.P_HI},
    "v_mul_hi_u32_u24": {"rs": Result.P_HI}, "v_mul_hi_i32_i24": {"rs": Result.P_HI},
    "v_mad_u32_u24": {"ax": AddX.P, "ay": AddY.C}, "v_mad_i32_i24": {"ax": AddX.P, "ay": AddY.C},
    "v_add3_u32": {"ax": AddX.LOGIC, "tt": _tt(lambda a, b, c: a ^ b ^ c), "ay": AddY.MAJ},
    "v_xad_u32": {"ax": AddX.LOGIC, "tt": _tt(lambda a, b, c: a ^ b), "ay": AddY.C},
    "v_lshl_add_u32": {"mul_shl": 1, "ax": AddX.P, "ay": AddY.C},
    "v_add_lshl_u32": {**_ADD, **_LEFT, "sn": ShiftBy.C5},        # the sum shifted
    "v_lshl_or_b32": {"mul_shl": 1, "rs": Result.P_OR_C},
    "v_lshlrev_b32": {**_LEFT, **_SH_B, "sn": ShiftBy.A5},
    "v_lshrrev_b32": {**_SH_B, "sn": ShiftBy.A5},
    "v_ashrrev_i32": {**_SH_B, "sn": ShiftBy.A5, "sgn": 1},
    "v_lshlrev_b64": {**_LEFT, **_SH_B, "sn": ShiftBy.A6, "wb": Width.W64, "other": Other.C},
    "v_lshrrev_b64": {**_SH_B, "sn": ShiftBy.A6, "wb": Width.W64, "other": Other.C},
    "v_ashrrev_i64": {**_SH_B, "sn": ShiftBy.A6, "wb": Width.W64, "sgn": 1, "other": Other.C},
    "v_bfe_u32": {**_SH_A, "sn": ShiftBy.B5, "post": Post.AND_MASK},
    "v_bfe_i32": {**_SH_A, "sn": ShiftBy.B5, "post": Post.SIGNED_FIELD, "sgn": 1},
    "v_bfm_b32": {**_LEFT, "rs": Result.MASK, "sn": ShiftBy.B5},
    "v_alignbit_b32": {**_SH_B, "other": Other.A, "sn": ShiftBy.C5},
    "v_alignbyte_b32": {**_SH_B, "other": Other.A, "sn": ShiftBy.C_BYTES},
    "v_min_i32": {**_MIN, "sgn": 1}, "v_max_i32": {**_MAX, "sgn": 1},
    "v_min_u32": _MIN, "v_max_u32": _MAX,
    "v_perm_b32": {"rs": Result.PERM},
    "v_bcnt_u32_b32": {"ax": AddX.POP, "ay": AddY.B},
    "v_clz_i32_u32": {"rs": Result.COUNT, "cnt": 0}, "v_ctz_i32_b32": {"rs": Result.COUNT, "cnt": 1},
    "v_cls_i32": {"rs": Result.COUNT, "cnt": 2},
    # 16-bit ops beyond the multiply-adds and bitwise ones (_control gives widths and saturation)
    "v_add_nc_u16": _ADD, "v_add_nc_i16": _ADD, "v_sub_nc_u16": _SUB, "v_sub_nc_i16": _SUB,
    "v_max_u16": _MAX, "v_max_i16": _MAX, "v_min_u16": _MIN, "v_min_i16": _MIN,
    "v_lshlrev_b16": {**_LEFT, **_SH_B, "sn": ShiftBy.A4},
    "v_lshrrev_b16": {**_SH_B, "sn": ShiftBy.A4},
    "v_ashrrev_i16": {**_SH_B, "sn": ShiftBy.A4},
    "v_not_b16": {"ax": AddX.A, "inv_x": 1},     # -a - 1, exact
    "v_cvt_u32_u16": {"ax": AddX.A}, "v_cvt_i32_i16": {"ax": AddX.A},
    # carries: bit 32 of the exact sum (a subtraction's borrow), bit 64 of v_mad_co_*
    "v_add_co_u32": {**_ADD, "mo": MaskOut.CARRY},
    "v_sub_co_u32": {**_SUB, "mo": MaskOut.CARRY},
    "v_subrev_co_u32": {**_SUBREV, "mo": MaskOut.CARRY},
    "v_add_co_ci_u32": {**_ADD, "cin": CarryIn.MASK, "mo": MaskOut.CARRY},
    "v_sub_co_ci_u32": {**_SUB, "cin": CarryIn.NMASK, "mo": MaskOut.CARRY},
    "v_subrev_co_ci_u32": {**_SUBREV, "cin": CarryIn.NMASK, "mo": MaskOut.CARRY},
    "v_mad_co_u64_u32": {"ax": AddX.P, "ay": AddY.C, "wc": Width.W64, "mo": MaskOut.CARRY},
    "v_mad_co_i64_i32": {"ax": AddX.P, "ay": AddY.C, "wc": Width.W64, "mo": MaskOut.CARRY},
    "v_add_nc_i32": {**_ADD, "sgn": 1},
    "v_sub_nc_i32": {**_SUB, "sgn": 1},
    "v_cndmask_b32": {"rs": Result.LOGIC, "tt_mask": 1},
    "v_mbcnt_lo_u32_b32": {"ax": AddX.POP, "ay": AddY.B, "pop_below": 1},
    "v_nop": {},
}
_NAMES = set(_EXTRA) | set(_LOGIC) | set(_MINMAX) | _COMPARES | set(_V16) | set(_V16_TO_32)
#: The model's plain 32-bit ops (``VINT``): ``op_sel`` on them is illegal, and so is ``clamp``
#: but on the saturating ones (the model rejects both).
PLAIN32 = frozenset(_NAMES - set(_V16) - set(_V16_TO_32) - _CARRY - _COMPARES - _OTHER)
assert _CLAMP32 <= PLAIN32 and _CARRY | _OTHER <= _NAMES
#: Mnemonics whose VOP3 ``clamp`` saturates the exact result to the destination's range.
CLAMP_SATURATES = frozenset(_CLAMP32 | _CARRY | set(_V16) | set(_V16_TO_32) | {"v_add_nc_i32", "v_sub_nc_i32"}) \
    - CLAMP_REFUSED
_CONTROL = {name: _control(name) for name in _NAMES}
_CONTROL.update({name: {**_CONTROL[half], "packed": 1, "plain": 0, "no_clamp": int(name in CLAMP_REFUSED)}
                 for name, half in _PACKED.items()})


#: Mnemonics VALUInt implements (everything else raises ``illegal``).
IMPLEMENTED = frozenset(_CONTROL)


def _rep(bit, n: int) -> Value:
    """``n`` copies of a 1-bit value: a sign extension (wiring), which the simulator computes
    in one step where ``replicate`` is a concatenation of ``n`` parts."""
    return fit(Value.cast(bit).as_signed(), n)


def _extend(word, w, half, sgn) -> Value:
    """The 32-bit word of a source this pass reads, as ``w`` (a 16-bit half by ``half``, the
    low 24 bits, or all 32), extended to :data:`WIDE` bits by ``sgn``."""
    h = word.word_select(half, 16)
    w16, w24 = w == Width.W16, w == Width.W24
    sign = sgn & Mux(w16, h[15], Mux(w24, word[23], word[31]))
    return Cat(Mux(w16, h, word[:16]), Mux(w16, _rep(sign, 8), word[16:24]),
               Mux(w16 | w24, _rep(sign, 8), word[24:32]), _rep(sign, WIDE - 32))


def _shift64_words(x, k5, hi, left, sgn):
    """The two words a pass of a 64-bit shift of ``x`` by ``k5 * 32 + k`` funnels by ``k``:
    (the result's word, the one beside it). Right: the pair from {fill, fill, hi, lo} at
    ``hi + k5`` words up; left: from {hi, lo, 0, 0} at ``k5 - hi`` words down."""
    lo, up = x[:32], x[32:64]
    fill = _rep(sgn & up[31], 32)
    right = (Mux(hi & k5, fill, Mux(hi | k5, up, lo)), Mux(hi | k5, fill, up))
    left_ = (Mux(hi & ~k5, up, Mux(~hi & k5, 0, lo)), Mux(hi & ~k5, lo, 0))
    return Mux(left, left_[0], right[0]), Mux(left, left_[1], right[1])


def _overflow(e, to, sgn) -> Value:
    """Whether the exact value ``e`` (:data:`WIDE` bits, signed) lies outside the range of a
    16- or 32-bit destination (``to``), signed by ``sgn``: a bit from the destination's top
    one up (from the one above it, unsigned) differs from the sign, or an unsigned
    destination takes a negative value."""
    neg = e[WIDE - 1]
    differ = e ^ _rep(neg, WIDE)
    above = {}
    acc = Const(0, 1)
    for lo, hi in ((32, WIDE), (31, 32), (16, 31), (15, 16)):
        acc = acc | (differ[lo:hi] != 0)
        above[lo] = acc

    def over(bits):
        return Mux(sgn, above[bits - 1], above[bits] | neg)
    return Mux(to == Width.W16, over(16), over(32))


class VALUInt(wiring.Component):
    """Vector integer ALU for one wave or lane group, one 32-bit datapath per lane (module
    docstring), in three stages.

    Parameters
    ----------
    lanes : int
        Lanes of the unit (32; fewer when the SIMD steps a wave through lane groups).
    external_mul : bool
        Leave the multiplier out: the unit presents its operands on ``mul_x``/``mul_y`` and
        takes the products from ``mul_p`` in the same cycle (``hdl/simd/lanemul.py``, shared with
        the FP32 unit).

    Attributes
    ----------
    op : In(OpId)
        The operation.
    hi : In(1)
        The high pass of an operation with a 64-bit source or result, or of a packed one
        (:func:`two_passes`): the cycle after its low pass, with the same inputs.
    a, b, c : In(unsigned(64 * lanes))
        Sources 0-2, lane ``i`` in bits ``[64i+63:64i]``; 32-bit operands use the low half.
        The 64-bit sources are S1 of ``v_lshlrev/lshrrev_b64``/``v_ashrrev_i64``, S2 of
        ``v_mad_co_*`` and both sources of the 64-bit compares.
    mask_in : In(unsigned(lanes))
        Carry-in of ``_co_ci_`` ops, select of ``v_cndmask_b32`` (S1 where set).
    lane_base : In(5)
        The wave lane of the unit's lane 0 (a SIMD with fewer lanes than the wave: the lane
        group's first): ``v_mbcnt_lo_u32_b32`` in lane ``i`` counts S0's bits below
        ``lane_base + i``.
    opsel : In(4)
        VOP3 ``op_sel``: bits 0-2 pick the high half of 16-bit sources 0-2, bit 3 the
        destination half of 16-bit results. VOP3P: bits 0-2 pick the halves of the low pass.
    opsel_hi : In(3)
        VOP3P ``op_sel_hi``: the halves of the sources a packed op's high pass reads.
    clamp : In(1)
        VOP3 ``clamp``: saturates the ops of :data:`CLAMP_SATURATES` (16-bit ops, adds and
        subtractions, the 24-bit multiplies and multiply-adds, carry ops).
    d_old : In(unsigned(32 * lanes))
        Old destination, whose other half a 16-bit result keeps.
    d : Out(unsigned(32 * lanes))
        The word of the result, two cycles after its pass: the low word, then the high one
        of a 64-bit result; a packed op's high pass gives both halves.
    mask_out : Out(unsigned(lanes))
        With ``d``: carry/borrow-out of the carry ops, bit 64 of ``v_mad_co_*`` (its high
        pass), compare results (a 64-bit compare's high pass); before EXEC masking.
    illegal : Out(1)
        ``op`` is not an integer VALU op, or a plain 32-bit op (:data:`PLAIN32`) has
        ``op_sel`` set, or ``clamp`` when the op does not saturate (the model rejects both),
        or ``clamp`` on :data:`CLAMP_REFUSED`.
    mul_x, mul_y : Out(unsigned(33 * lanes)); mul_p : In(unsigned(66 * lanes))
        With ``external_mul`` only: each lane's multiplier operands (two's complement) and
        their signed product, in the middle stage.
    """

    def __init__(self, lanes: int = 32, external_mul: bool = False):
        self.lanes = lanes
        self.external_mul = external_mul
        w = lanemul.WIDTH
        mul = {"mul_x": Out(w * lanes), "mul_y": Out(w * lanes), "mul_p": In(2 * w * lanes)} if external_mul else {}
        super().__init__({
            "op": In(OpId), "hi": In(1), "a": In(64 * lanes), "b": In(64 * lanes), "c": In(64 * lanes),
            "mask_in": In(lanes), "lane_base": In(5), "opsel": In(4), "opsel_hi": In(3), "clamp": In(1),
            "d_old": In(32 * lanes),
            "d": Out(32 * lanes), "mask_out": Out(lanes), "illegal": Out(1), **mul,
        })

    def elaborate(self, platform):
        m = Module()
        n = self.lanes
        ctl = Signal(Control)
        with m.Switch(self.op):
            for name, fields in sorted(_CONTROL.items()):
                with m.Case(OpId[name.upper()]):
                    m.d.comb += ctl.eq(Control.const(fields))
        m.d.comb += self.illegal.eq(~ctl.legal | ctl.plain & ((self.clamp & ~ctl.sat) | (self.opsel != 0)) |
                                    ctl.no_clamp & self.clamp)

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
            """``value`` registered for the next stage (a signal: the simulator would inline
            the whole of an expression into each lane's slice of it)."""
            r = Signal.like(value, name=name)
            m.d.sync += r.eq(value)
            return r

        def raw(port, i):
            return port[64 * i:64 * i + 64]

        # ---- stage 1: each source's word of this pass, extended (a 64-bit source's low word
        # unsigned: a high pass completes it); a 64-bit shift's two words in S1's and S2's
        # places. An idle unit (op NONE: the SIMD's other instructions) keeps its operands at
        # 0, so the simulator has nothing downstream to re-evaluate when the reads change.
        st = stage("operands")
        hi = self.hi
        shift64 = ctl.sn == ShiftBy.A6
        pairs = [_shift64_words(raw(self.b, i), raw(self.a, i)[5], hi, ctl.left, ctl.sgn) for i in range(n)]
        ext = {}
        with st.If(ctl.legal):
            for j, (k, port) in enumerate((("a", self.a), ("b", self.b), ("c", self.c))):
                w = ctl[f"w{k}"]
                w64 = w == Width.W64
                words = [Mux(w64 & hi, raw(port, i)[32:], raw(port, i)[:32]) for i in range(n)]
                if k != "a":
                    words = [Mux(shift64, pairs[i][k == "c"], words[i]) for i in range(n)]
                ext[k] = Signal(WIDE * n, name=f"{k}_ext")
                half = Mux(ctl.packed & hi, self.opsel_hi[j], self.opsel[j])
                st.d.comb += ext[k].eq(Cat(*[_extend(words[i], w, half, ctl.sgn & ~(w64 & ~hi))
                                             for i in range(n)]))

        # ---- stage 2: the units and the result select; it reads only these
        # a packed op's high pass puts its half above the low pass's
        finish_in = cut(Cat(self.clamp, Mux(ctl.packed, self.hi, self.opsel[3]), self.d_old), "finish_in2")
        ctl = cut(ctl, "ctl2")
        hi = cut(self.hi, "hi2")
        A, B, C = ((lambda i, s=cut(ext[k], f"{k}_ext2"): s[WIDE * i:WIDE * (i + 1)]) for k in "abc")
        mask_in, lane_base = cut(self.mask_in, "mask_in2"), cut(self.lane_base, "lane_base2")

        # the multiplier: S0 and S1 as the op extends them (24-bit ones too), or S0 times
        # 1 << S1[4:0]; product P (a high pass of v_mad_co_* uses its high half)
        st, w = stage("multiplier_in"), lanemul.WIDTH
        mul_y = wide(st, "mul_y_", w, lambda i: Mux(ctl.mul_shl, (Const(1, w) << B(i)[:5])[:w], B(i)[:w]))
        st = stage("multiplier")
        if self.external_mul:
            st.d.comb += [self.mul_x.eq(Cat(*[A(i)[:w] for i in range(n)])),
                          self.mul_y.eq(Cat(*[mul_y(i) for i in range(n)]))]
            P = wide(st, "prod", 2 * w, lambda i: self.mul_p[2 * w * i:2 * w * (i + 1)])
        else:
            P = wide(st, "prod", 2 * w, lambda i: A(i)[:w].as_signed() * mul_y(i).as_signed())

        # one low mask of 0 to 31 ones: v_bfm's field (S0[4:0]), the lanes below this one
        # (v_mbcnt_lo)
        st = stage("low_mask")
        MASK = wide(st, "low_mask", 32, lambda i: low_mask(Mux(ctl.pop_below, (lane_base + i)[:5], A(i)[:5]), 32))

        # the bitwise unit: a truth table over S0, S1 and S2, a multiplexer tree with the
        # table's bits as data (v_cndmask: the table of S0 or of S1 by the lane's mask bit);
        # the bit count
        st = stage("bitwise")

        def logic(i):
            a, b, c = A(i)[:32], B(i)[:32], C(i)[:32]
            tt = sig(st, f"tt{i}", Mux(ctl.tt_mask, Mux(mask_in[i], _TT_B, _TT_A), ctl.tt))
            t = [_rep(tt[k], 32) for k in range(8)]
            g = [(c & t[2 * k + 1]) | (~c & t[2 * k]) for k in range(4)]
            h = [(b & g[2 * k + 1]) | (~b & g[2 * k]) for k in range(2)]
            return (a & h[1]) | (~a & h[0])
        LOG = wide(st, "logic", 32, logic)
        POP = wide(st, "pop", 6, lambda i: popcount(A(i)[:32] & (MASK(i) | _rep(~ctl.pop_below, 32))))

        def maj(i):
            a, b, c = A(i)[:32], B(i)[:32], C(i)[:32]
            return Cat(Const(0, 1), (a & b) | (a & c) | (b & c))

        # the adder: (X or ~X) + (Y or ~Y) + carry, X and Y each an AND-OR of its sources; a
        # high pass adds the carry out of the low pass's 32 bits, and a compare's high pass
        # is equal only where the low one was (``carry``, ``zero``: a register per lane)
        st = stage("adder")
        x_en = {src: sig(st, f"x_{src.name.lower()}", ctl.ax == src) for src in (AddX.A, AddX.P, AddX.LOGIC, AddX.POP)}
        y_en = {src: sig(st, f"y_{src.name.lower()}", ctl.ay == src) for src in (AddY.B, AddY.C, AddY.MAJ)}
        low_pass = sig(st, "low_pass", ctl.wide & ~hi)
        high = sig(st, "high_pass", ctl.wide & hi)      # (a packed op's high pass is a 16-bit one)
        carry, zero = Signal(n), Signal(n)

        def product(i):
            p = P(i)
            return Mux(high, p[32:32 + WIDE], Cat(p[:32], p[32:WIDE] & _rep(~low_pass, WIDE - 32)))

        def add(i):
            x = balanced([v & _rep(x_en[src], len(v)) for src, v in (
                (AddX.A, A(i)), (AddX.P, product(i)), (AddX.LOGIC, LOG(i)), (AddX.POP, POP(i)))], operator.or_)
            y = balanced([v & _rep(y_en[src], len(v)) for src, v in (
                (AddY.B, B(i)), (AddY.C, C(i)), (AddY.MAJ, maj(i)))], operator.or_)
            code = ctl.cin.as_value()     # ZERO, ONE, MASK, NMASK: bit 1 takes the mask, bit 0 inverts
            cin = Mux(high, carry[i], Mux(code[1], mask_in[i] ^ code[0], code[0]))
            xs = sig(st, f"add_x{i}", fit(x, WIDE) ^ _rep(ctl.inv_x, WIDE))
            ys = sig(st, f"add_y{i}", fit(y, WIDE) ^ _rep(ctl.inv_y, WIDE))
            s = sig(st, f"sum{i}", (xs + ys + cin)[:WIDE])
            with st.If(~hi):
                st.d.sync += [carry[i].eq(s[32] ^ xs[32] ^ ys[32]), zero[i].eq(s[:32] == 0)]
            return s
        SUM = wide(st, "sum", WIDE, add)

        def lt(i):
            return SUM(i)[WIDE - 1]

        # the shift amount (the shift is in the last stage, on the selected result), and
        # v_bfe's field
        st = stage("shift_in")

        def shift_in(i):
            a, b, c = A(i), B(i), C(i)
            k = Signal(5, name=f"shift_by{i}")
            with st.Switch(ctl.sn):
                for src, val in ((ShiftBy.A4, a[:4]), (ShiftBy.A5, a[:5]), (ShiftBy.A6, a[:5]),
                                 (ShiftBy.B5, b[:5]), (ShiftBy.C5, c[:5]),
                                 (ShiftBy.C_BYTES, Cat(Const(0, 3), c[:2]))):
                    with st.Case(src):
                        st.d.comb += k.eq(val)
            # v_bfe_i32's sign: bit S1[4:0] + S2[4:0] - 1 of S0 (its extension above bit 31)
            width = c[:5]
            at = (b[:5] + width - 1)[:6]
            field_sign = Mux(at[5], a[WIDE - 1], a[:32].bit_select(at[:5], 1)) & (width != 0)
            return Cat(k, width, field_sign)
        SH = wide(st, "shift_in", 5 + 5 + 1, shift_in)

        # min/max: S0, S1 or S2 by the mode and three compares at once: S0 < S1 (the adder's
        # S0 - S1), S2 < S1, S2 < S0 (signed: each with its sign bit flipped)
        st = stage("minmax")
        bias = Cat(Const(0, 31), ctl.sgn)
        picks = _mm_picks()

        def minmax(i):
            a, b, c = A(i)[:32], B(i)[:32], C(i)[:32]
            pick = picks.word_select(Cat((c ^ bias) < (a ^ bias), (c ^ bias) < (b ^ bias), lt(i), ctl.mm), 2)
            return Mux(pick[0], b, Mux(pick[1], c, a))
        MM = wide(st, "minmax", 32, minmax)

        # leading zeros of S0, S0 reversed (v_ctz; v_bfrev takes the reversed value) or S0 ^ its sign
        st = stage("count")

        def count(i):
            a = A(i)[:32]
            x = sig(st, f"count_in{i}", Mux(ctl.cnt[0], a[::-1], Mux(ctl.cnt[1], a ^ _rep(a[31], 32), a)))
            return Mux(ctl.cnt == 3, x, Mux(x == 0, 0xFFFF_FFFF, count_leading_zeros(x)))
        CNT = wide(st, "count", 32, count)

        # the result: a word from one of the units, the word beside it in the shifter's
        # funnel, and what clamp saturates beyond the word: the adder's two top bits, and
        # whether a product leaves 33 bits (no sum of it and a word fits the destination then)
        st = stage("result")

        def pre(i):
            r = Signal(32, name=f"pre{i}")
            with st.Switch(ctl.rs):
                for src, v in ((Result.SUM, SUM(i)[:32]), (Result.LOGIC, LOG(i)), (Result.P_HI, P(i)[32:64]),
                               (Result.MINMAX, MM(i)), (Result.COUNT, CNT(i)),
                               (Result.PERM, _perm(A(i)[:32], B(i)[:32], C(i)[:32])),
                               (Result.P_OR_C, P(i)[:32] | C(i)[:32]), (Result.MASK, MASK(i))):
                    with st.Case(src):
                        st.d.comb += r.eq(v)
            return r
        PRE = wide(st, "pre", 32, pre)

        def other(i):
            r = Signal(32, name=f"other{i}")
            with st.Switch(ctl.other):
                for src, v in ((Other.A_EXT, _rep(A(i)[WIDE - 1], 32)), (Other.B_EXT, _rep(B(i)[WIDE - 1], 32)),
                               (Other.A, A(i)[:32]), (Other.C, C(i)[:32])):
                    with st.Case(src):
                        st.d.comb += r.eq(v)
            return r
        OTHER = wide(st, "other", 32, other)

        def beyond(i):
            p = P(i)[32:]
            top = Mux(ctl.rs == Result.SUM, SUM(i)[32:], 0)
            out = x_en[AddX.P] & (p != 0) & (p != _rep(1, len(p)))
            return Cat(top, out, p[-1])
        EXACT = wide(st, "beyond", WIDE - 32 + 2, beyond)

        def mask_out(i):
            s = SUM(i)
            equal = (s == 0) & (zero[i] | ~high)
            cond = ctl.cond.bit_select(Cat(equal, lt(i)), 1)
            return Mux(ctl.mo == MaskOut.COMPARE, cond, Mux(ctl.mo == MaskOut.CARRY, s[32], 0))
        lane_mask = sig(st, "lane_mask", Cat(*[mask_out(i) for i in range(n)]))

        # ---- stage 3: the shift and the finish
        def per_lane(v, width, name):
            s = cut(Cat(*[v(i) for i in range(n)]), name)
            return lambda i: s[width * i:width * (i + 1)]
        PRE, OTHER = per_lane(PRE, 32, "pre3"), per_lane(OTHER, 32, "other3")
        SHIFT, EXACT = per_lane(SH, 11, "shift3"), per_lane(EXACT, WIDE - 32 + 2, "beyond3")
        st = stage("finish_out")
        st.d.comb += self.mask_out.eq(cut(lane_mask, "lane_mask3"))
        ctl = cut(ctl, "ctl3")
        clamp, opsel3, d_old = (lambda v: (v[0], v[1], v[2:]))(cut(finish_in, "finish_in3"))

        # finish: clamp saturates the exact result; a 16-bit result goes into the op_sel[3]
        # half, the other half keeps d_old
        st = stage("finish")
        saturate = ctl.sat & clamp
        top_bit = sig(st, "sat_top", Mux(ctl.sgn, Mux(ctl.sat_to == Width.W16, 1 << 15, 1 << 31), 0))
        shift16 = Cat(Const(0, 4), opsel3)
        keep = ~(Const(0xFFFF, 32) << shift16)[:32]

        # the shifter: a funnel of 63 bits shifted right by 0 to 31 into 32, one level per
        # bit of the amount, the widest first (each level only as wide as what follows
        # needs). A right shift of v by k: {other, v} by k; a left one: {v, other} by 31 - k
        # (the other word's top 31 bits). Then v_bfe's mask, sign-extended for v_bfe_i32
        st_sh = stage("shifter")
        signed_field = ctl.post == Post.SIGNED_FIELD
        masked = (ctl.post == Post.AND_MASK) | signed_field

        def shift(i):
            v, o = PRE(i), OTHER(i)
            k, width, field_sign = SHIFT(i)[:5], SHIFT(i)[5:10], SHIFT(i)[10] & signed_field
            f = sig(st_sh, f"funnel{i}", Mux(ctl.left, Cat(o[1:], v), Cat(v, o[:31])))
            by = k ^ _rep(ctl.left, 5)
            for j in reversed(range(5)):    # each level a signal: the simulator inlines an expression
                f = sig(st_sh, f"funnel{i}_{j}", select(by[j], f[1 << j:32 + (2 << j) - 1], f[:32 + (1 << j) - 1]))
            mask = low_mask(width, 32)
            return sig(st_sh, f"shifted{i}", (f & (mask | _rep(~masked, 32))) | (~mask & _rep(field_sign, 32)))

        def finish(i):
            r = shift(i)
            top, out, sign = EXACT(i)[:WIDE - 32], EXACT(i)[WIDE - 32], EXACT(i)[WIDE - 31]
            exact = Cat(r, top)
            over = sig(st, f"over{i}", out | _overflow(exact, ctl.sat_to, ctl.sgn))
            limit = _rep(~Mux(out, sign, exact[WIDE - 1]), 32) ^ top_bit
            v = sig(st, f"fin{i}", Mux(saturate & over, limit, r))
            old = Mux(ctl.packed, low_half[16 * i:16 * i + 16], d_old[32 * i:32 * i + 32])
            return Mux(ctl.half, (old & keep) | (v[:16] << shift16)[:32], v)
        # the last pass's low half: a packed op's high pass keeps it below its own
        low_half = Signal(16 * n)
        st.d.comb += self.d.eq(Cat(*[finish(i) for i in range(n)]))
        m.d.sync += low_half.eq(Cat(*[self.d[32 * i:32 * i + 16] for i in range(n)]))
        return m


def two_passes(name: str) -> bool:
    """Whether VALUInt runs ``name`` as a low pass and a high one (a 64-bit source or result;
    False for an op it does not implement)."""
    ctl = _CONTROL.get(name, {})
    return bool(ctl.get("wide") or ctl.get("packed"))
