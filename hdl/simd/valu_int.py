"""Vector integer ALU of the SIMD32 (docs/simd.md, "vector integer ALU").

One combinational unit computes every integer VALU operation of the model for all lanes of
a wave at once: the ``VINT`` table of ``sim/execute.py`` (adds, multiplies, shifts, bit-field
and bit-count ops, min/max/med3, perm), the 16-bit ops with ``op_sel`` halves,
``v_add_nc_i32``/``v_sub_nc_i32``, the carry ops, ``v_mad_co_u64_u32``/``v_mad_co_i64_i32``,
``v_cndmask_b32``, the integer compares (``v_cmp_*``/``v_cmpx_*`` on i32/u32/i64/u64) and
``v_mbcnt_lo/hi_u32_b32``. Float ops and the lane-crossing ``v_readlane``/
``v_readfirstlane``/``v_writelane`` belong to other units: they raise ``illegal``.

Structure (for Amaranth's simulator speed): the lanes of an operand travel in one wide
port; each operation is one ``Case`` of a ``Switch`` on ``op`` whose result is a ``Cat`` of
per-lane expressions written once in a loop (no per-lane ``Signal``). The simulator only
evaluates the ``Case`` of the current ``op``, so the cost of an evaluation is that of one
operation. Four families share a datapath behind a few wide signals (:class:`_Stages`):
the 16-bit ops and the 32-bit ones with ``clamp`` one saturate-and-merge stage (it takes
their exact results), v_clz/v_ctz/v_cls one leading-zero counter,
the 3-operand min/max/med3 ops one min/max combiner, the 16 multiply ops one multiplier per
lane; their ``Case`` fills the stage's input and the stage computes ``d`` or the product the
``Case`` uses (one more settle in simulation, less logic in hardware).

Simulator code size matters as much as operation count: Amaranth compiles all of a module's
combinational logic into one Python function, turns every ``Mux`` into two local variables
and every sub-expression longer than 1000 characters into one, and CPython pays for each
local of that function on every call (past about 2,000 it allocates a new stack chunk per
call). So multiplexers here are :func:`select` (a ``Part``, a plain expression), bit counts
use nibble lookup tables combined by balanced trees (a 32-bit leading-zero count is a
three-level tree of 2:1 selects over eight nibbles, not a 32-deep chain), bit fields are
sliced from the ports directly, and no expression is referenced more than a few times.
The compiled process has about 240 locals.

Semantics are bit-exact with the model (``sim/execute.py``, ``sim/vector.py``), including
its choices documented in ``docs/model.md``: 16-bit ops merge into the untouched half of the
old destination, ``clamp`` saturates the ops the model saturates (:data:`CLAMP_SATURATES`:
the exact result clipped to the destination's range; a carry-out is the unclamped one), and
an integer op that the model rejects with ``clamp`` or ``op_sel`` set (a ``VINT`` op) raises
``illegal``.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import lanemul
from ..isa_tables import OpId, info_of

__all__ = ["VALUInt", "IMPLEMENTED", "CLAMP_SATURATES", "int_valu_signature", "select", "popcount",
           "count_leading_zeros", "count_trailing_zeros", "low_mask", "fit", "clip",
           "balanced", "perm", "MM_MODES", "MINMAX", "MAD", "V16", "V16_TO_32", "MUL_OPERANDS", "CMP",
           "COMPARES", "PLAIN32"]


# --------------------------------------------------------------------------------------
# Bit-count building blocks (shared with hdl/simd/salu.py).
def _nibble_table(fn) -> Const:
    """A 16-entry, 3-bit-per-entry constant table indexed by a nibble."""
    return Const(sum(fn(n) << (3 * n) for n in range(16)), 48)


_POP4 = _nibble_table(lambda n: bin(n).count("1"))
_CLZ4 = _nibble_table(lambda n: 4 - n.bit_length())
_CTZ4 = _nibble_table(lambda n: (n & -n).bit_length() - 1 if n else 4)


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


def count_trailing_zeros(v, lo: int = 0, n: int | None = None) -> Value:
    """Trailing zeros of bits ``[lo + n - 1:lo]`` of ``v`` (``n`` when they are all 0); the
    mirror of :func:`count_leading_zeros`.

    Parameters
    ----------
    v : Value-like
    lo, n : int
        The window (default: all of ``v``); ``n`` a power of two, at least 4.

    Returns
    -------
    Value
        Unsigned count.
    """
    v, n = _window(v, lo, n)
    _check_pow2(n)
    if n == 4:
        return _CTZ4.word_select(v[lo:lo + 4], 3)
    h = n // 2
    return select(v[lo:lo + h] == 0, h + count_trailing_zeros(v, lo + h, h),
                  count_trailing_zeros(v, lo, h))


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


def _min(x, y):
    return select(x < y, x, y)


def _max(x, y):
    return select(x < y, y, x)


def clip(r, bits: int, signed: bool) -> Value:
    """The exact value ``r`` saturated to the range of a ``bits``-bit destination, signed or
    unsigned: its low ``bits`` bits.

    The test is on the bits above the destination (all copies of the sign when ``r`` fits; an
    unsigned destination also refuses a negative ``r``), not two comparisons with the limits:
    a few OR gates per bit. The limit is the sign's complement in every bit but the top one
    of a signed destination."""
    r = Value.cast(r)
    if not r.shape().signed:
        r = Cat(r, Const(0, 1)).as_signed()
    n = len(r)
    if signed and n <= bits:
        return fit(r, bits)
    neg = r[n - 1]
    k = bits - signed                    # the bits from k up must all equal the sign
    over = Const(0, 1) if signed else neg
    if n > k:
        over = over | ((r[k:n] ^ neg.replicate(n - k)) != 0)
    limit = Cat((~neg).replicate(bits - 1), neg if signed else ~neg)
    return select(over, limit, fit(r, bits))


# --------------------------------------------------------------------------------------
class _Lane:
    """The operand slices of one lane: ``a``, ``b``, ``c`` (low 32 bits), ``a64``/``b64``/
    ``c64`` (the whole 64-bit lane), ``mask`` (bit of ``mask_in``), ``old`` (``d_old``),
    ``p`` (the lane's product from the shared multiplier, signed)."""

    def __init__(self, unit: "VALUInt", st: "_Stages", i: int):
        lo, hi = 64 * i, 64 * i + 64
        self.i = i
        self.p = st.prod_lane(i)
        self.a, self.b, self.c = unit.a[lo:lo + 32], unit.b[lo:lo + 32], unit.c[lo:lo + 32]
        self.a64, self.b64, self.c64 = unit.a[lo:hi], unit.b[lo:hi], unit.c[lo:hi]
        self.mask = unit.mask_in[i]
        self.old = unit.d_old[32 * i:32 * i + 32]
        self.ports, self.base = (unit.a, unit.b, unit.c), lo

    def field(self, src: int, lo: int, hi: int):
        """Bits ``[hi:lo]`` of source ``src`` (0-2) of this lane, sliced from the port itself
        (a slice of a slice costs the simulator one more shift and mask)."""
        return self.ports[src][self.base + lo:self.base + hi]


def _s(x):
    return x.as_signed()


def perm(L):
    """v_perm_b32 as four byte parts: each result byte picks, by its selector byte of S2,
    a byte of {S0, S1} (0-7, S1 in bytes 0-3), the sign of byte 1/3/5/7 (8-11), 0 (12) or
    0xFF (13 and up): below 8 a byte of the pool, from 8 on a byte of copies of one bit."""
    signs = Cat(L.field(1, 15, 16), L.field(1, 31, 32), L.field(0, 15, 16), L.field(0, 31, 32),
                Const(0b1110, 4))
    out = []
    for k in range(4):
        lo3 = L.field(2, 8 * k, 8 * k + 3)
        bit = signs.bit_select(lo3, 1) | (L.field(2, 8 * k + 4, 8 * k + 8) != 0)
        out.append(select(L.field(2, 8 * k + 3, 8 * k + 8) != 0, fit(_s(bit), 8),
                          Cat(L.b, L.a).word_select(lo3, 8)))
    return out


# name -> f(lane) -> value whose low dst_bits bits are the lane result, or a list of parts
# (sim/execute.py VINT; the bit counts and 3-operand min/max are in _COUNT and MINMAX)
_VINT = {
    "v_mov_b32": lambda L: L.a,
    "v_not_b32": lambda L: ~L.a,
    "v_bfrev_b32": lambda L: [L.a[31 - k] for k in range(32)],
    "v_add_nc_u32": lambda L: L.a + L.b,
    "v_sub_nc_u32": lambda L: L.a - L.b,
    "v_subrev_nc_u32": lambda L: L.b - L.a,
    # L.p: the lane's product of S0 and S1 as MUL_OPERANDS gives them (the shared multiplier)
    "v_mul_lo_u32": lambda L: L.p,
    "v_mul_hi_u32": lambda L: L.p[32:64],
    "v_mul_hi_i32": lambda L: L.p[32:64],
    "v_mul_u32_u24": lambda L: L.p,
    "v_mul_hi_u32_u24": lambda L: L.p[32:48],
    "v_mul_i32_i24": lambda L: L.p,
    "v_mul_hi_i32_i24": lambda L: L.p >> 32,
    "v_mad_u32_u24": lambda L: L.p + L.c,
    "v_mad_i32_i24": lambda L: L.p[:32] + L.c,
    "v_add3_u32": lambda L: L.a + L.b + L.c,
    "v_xad_u32": lambda L: (L.a ^ L.b) + L.c,
    "v_lshl_add_u32": lambda L: (L.a << L.b[:5])[:32] + L.c,
    "v_add_lshl_u32": lambda L: (L.a + L.b)[:32] << L.c[:5],
    "v_lshl_or_b32": lambda L: (L.a << L.b[:5])[:32] | L.c,
    "v_and_or_b32": lambda L: (L.a & L.b) | L.c,
    "v_or3_b32": lambda L: L.a | L.b | L.c,
    "v_xor3_b32": lambda L: L.a ^ L.b ^ L.c,
    "v_and_b32": lambda L: L.a & L.b,
    "v_or_b32": lambda L: L.a | L.b,
    "v_xor_b32": lambda L: L.a ^ L.b,
    "v_xnor_b32": lambda L: ~(L.a ^ L.b),
    "v_lshlrev_b32": lambda L: L.b << L.a[:5],
    "v_lshrrev_b32": lambda L: L.b >> L.a[:5],
    "v_ashrrev_i32": lambda L: _s(L.b) >> L.a[:5],
    "v_lshlrev_b64": lambda L: L.b64 << L.a[:6],
    "v_lshrrev_b64": lambda L: L.b64 >> L.a[:6],
    "v_ashrrev_i64": lambda L: _s(L.b64) >> L.a[:6],
    "v_bfe_u32": lambda L: (L.a >> L.b[:5]) & low_mask(L.c[:5], 32),
    "v_bfe_i32": lambda L: _bfe_i32(L.a, L.b[:5], L.c[:5]),
    "v_bfi_b32": lambda L: (L.a & L.b) | (~L.a & L.c),
    "v_bfm_b32": lambda L: low_mask(L.a[:5], 32) << L.b[:5],
    "v_alignbit_b32": lambda L: Cat(L.b, L.a) >> L.c[:5],
    "v_alignbyte_b32": lambda L: Cat(L.b, L.a) >> Cat(Const(0, 3), L.c[:2]),
    "v_min_i32": lambda L: _min(_s(L.a), _s(L.b)),
    "v_max_i32": lambda L: _max(_s(L.a), _s(L.b)),
    "v_min_u32": lambda L: _min(L.a, L.b),
    "v_max_u32": lambda L: _max(L.a, L.b),
    "v_perm_b32": perm,
    "v_bcnt_u32_b32": lambda L: popcount(L.a) + L.b,
}


def _bfe_i32(a, off, width):
    """Signed field of ``width`` bits at ``off`` of ``a``, taken after an arithmetic shift
    (bits past bit 31 are copies of the sign); 0 when ``width`` is 0."""
    sh = (32 - width)[:6]                       # 32 for width 0: the field shifts out
    t = ((_s(a) >> off)[:32] << sh)[:32]
    return _s(t) >> sh


# The shared leading-zero counter: name -> (minus one?, f(lane) -> the 32-bit value counted).
# Result: leading zeros, -1 for 0; v_ctz counts the leading zeros of the reversed value;
# v_cls those of S0 XORed with its sign, minus one (as sim.vector.cls).
_COUNT = {
    "v_clz_i32_u32": (0, lambda L: L.a),
    "v_ctz_i32_b32": (0, lambda L: [L.a[31 - k] for k in range(32)]),
    "v_cls_i32": (0, lambda L: (L.a ^ -L.a[31])[:32]),
}

# The shared 3-operand min/max stage: name -> mode. The Case puts min(S0, S1) and
# max(S0, S1) into lo/hi; the stage combines them with S2.
MM_MODES = ("min3", "max3", "maxmin", "minmax", "med3")
MINMAX = {f"v_{op}_{t}": mode for mode, op in enumerate(MM_MODES) for t in ("i32", "u32")}


# 16-bit ops (sim/execute.py V16, V16_TO_32): name -> (f on exact integers, signed?); MAD:
# S0 * S1 (+ S2 when the op has one) on the shared multiplier
MAD = "mad"
V16 = {
    "v_add_nc_u16": (lambda a, b: a + b, False), "v_add_nc_i16": (lambda a, b: a + b, True),
    "v_sub_nc_u16": (lambda a, b: a - b, False), "v_sub_nc_i16": (lambda a, b: a - b, True),
    "v_mul_lo_u16": (MAD, False),
    "v_mad_u16": (MAD, False), "v_mad_i16": (MAD, True),
    "v_max_u16": (_max, False), "v_max_i16": (_max, True),
    "v_min_u16": (_min, False), "v_min_i16": (_min, True),
    "v_lshlrev_b16": (lambda a, b: b << a[:4], False),
    "v_lshrrev_b16": (lambda a, b: b >> a[:4], False),
    "v_ashrrev_i16": (lambda a, b: b >> a[:4], True),
    "v_and_b16": (lambda a, b: a & b, False), "v_or_b16": (lambda a, b: a | b, False),
    "v_xor_b16": (lambda a, b: a ^ b, False),
    "v_not_b16": (lambda a: -a - 1, False),   # ~a on an exact integer (negative: clamps to 0)
}
V16_TO_32 = {
    "v_cvt_u32_u16": (lambda a: a, False), "v_cvt_i32_i16": (lambda a: a, True),
    "v_mad_u32_u16": (MAD, False),
    "v_mad_i32_i16": (MAD, True),
}

# carry ops: name -> f(lane) -> the exact result, whose bit 32 (bit 64 for v_mad_co_*) is the
# carry/borrow out (a negative difference is a borrow)
_CARRY = {
    "v_add_co_u32": lambda L: L.a + L.b,
    "v_sub_co_u32": lambda L: L.a - L.b,
    "v_subrev_co_u32": lambda L: L.b - L.a,
    "v_add_co_ci_u32": lambda L: L.a + L.b + L.mask,
    "v_sub_co_ci_u32": lambda L: L.a - L.b - L.mask,
    "v_subrev_co_ci_u32": lambda L: L.b - L.a - L.mask,
    # {carry, D} = S0 * S1 + S2 (u64), {D1, D} = the 65-bit signed sum (i64)
    "v_mad_co_u64_u32": lambda L: L.p + L.c64,
    "v_mad_co_i64_i32": lambda L: L.p + _s(L.c64),
}

# The plain 32-bit ops whose ``clamp`` saturates (sim/valu_ext.py): name -> (f(lane) -> the
# exact result, signed destination?); the wrapped result is its low 32 bits.
_CLAMP32 = {
    "v_add_nc_u32": (lambda L: L.a + L.b, False),
    "v_sub_nc_u32": (lambda L: L.a - L.b, False),
    "v_subrev_nc_u32": (lambda L: L.b - L.a, False),
    "v_mul_u32_u24": (lambda L: L.p, False),
    "v_mul_i32_i24": (lambda L: L.p, True),
    "v_mad_u32_u24": (lambda L: L.p + L.c, False),
    "v_mad_i32_i24": (lambda L: L.p + _s(L.c), True),
}

# The 32-bit multiplies: name -> (bits, signed): the shared multiplier takes the low ``bits``
# bits of S0 and S1, sign- or zero-extended (the 16-bit ones are the V16 entries marked MAD).
MUL_OPERANDS = {
    "v_mul_lo_u32": (32, False), "v_mul_hi_u32": (32, False), "v_mul_hi_i32": (32, True),
    "v_mul_u32_u24": (24, False), "v_mul_hi_u32_u24": (24, False), "v_mul_i32_i24": (24, True),
    "v_mul_hi_i32_i24": (24, True), "v_mad_u32_u24": (24, False), "v_mad_i32_i24": (24, True),
    "v_mad_co_u64_u32": (32, False), "v_mad_co_i64_i32": (32, True),
}


# The integer compare conditions: <cond> of v_cmp_<cond>_<type> -> f(x, y).
CMP = {"lt": lambda x, y: x < y, "eq": lambda x, y: x == y, "le": lambda x, y: x <= y,
        "gt": lambda x, y: x > y, "ne": lambda x, y: x != y, "lg": lambda x, y: x != y,
        "ge": lambda x, y: x >= y}


def _compare(name: str):
    """f(lane) -> bit for an integer ``v_cmp_*``/``v_cmpx_*``, or None."""
    parts = name.split("_")
    if len(parts) != 4 or parts[0] != "v" or parts[1] not in ("cmp", "cmpx") or parts[2] not in CMP:
        return None
    cond, typ = CMP[parts[2]], parts[3]
    if typ not in ("i32", "u32", "i64", "u64"):
        return None
    wide, sgn = typ.endswith("64"), typ[0] == "i"

    def f(L):
        x, y = (L.a64, L.b64) if wide else (L.a, L.b)
        return cond(_s(x), _s(y)) if sgn else cond(x, y)
    return f


_ALL_OPS = {op.name.lower(): op for op in OpId if op is not OpId.NONE}
# Every integer v_cmp_*/v_cmpx_*: name -> f(lane) -> the compare bit.
COMPARES = {n: f for n, f in ((n, _compare(n)) for n in _ALL_OPS) if f is not None}
_OTHER = {"v_add_nc_i32", "v_sub_nc_i32", "v_cndmask_b32", "v_mbcnt_lo_u32_b32",
          "v_mbcnt_hi_u32_b32", "v_nop"}
#: The model's VINT ops: ``op_sel`` on them is illegal, and so is ``clamp`` but on the
#: ``_CLAMP32`` ones (the model rejects both).
PLAIN32 = frozenset(set(_VINT) | set(_COUNT) | set(MINMAX))
assert set(_CLAMP32) <= PLAIN32

#: Mnemonics whose VOP3 ``clamp`` saturates the exact result to the destination's range.
CLAMP_SATURATES = frozenset(set(_CLAMP32) | set(_CARRY) | set(V16) | set(V16_TO_32)
                            | {"v_add_nc_i32", "v_sub_nc_i32"})

#: Mnemonics VALUInt implements (everything else raises ``illegal``).
IMPLEMENTED = frozenset(set(_VINT) | set(_COUNT) | set(MINMAX) | set(V16) | set(V16_TO_32)
                        | set(_CARRY) | set(COMPARES) | _OTHER)
assert IMPLEMENTED <= set(_ALL_OPS), sorted(IMPLEMENTED - set(_ALL_OPS))


class _Stages:
    """Wide signals between the Cases of op families and the stages they share.

    Sharing one saturate-and-merge stage among the 16-bit ops and the 32-bit ops with
    ``clamp``, one leading-zero counter
    among v_clz/v_ctz/v_cls and one min/max combiner among the 3-operand min/max ops saves
    logic, and keeps the simulator code of each Case short
    (references to a signal are cheap; to a long expression, not). One multiplier per lane,
    signed 33 x 33 bits, serves all 16 multiply ops (32-bit, 24-bit and 16-bit, signed and
    unsigned, their operands extended to 33 bits): without it synthesis keeps a multiplier
    per op and lane (18 DSP blocks a lane on the ECP5 against 4).
    """
    EXACT_WIDTH = 50    # exact results of the saturating ops fit in 50 bits signed (v_mad_u32_u24)
    MUL_WIDTH = lanemul.WIDTH   # a 32-bit operand, zero- or sign-extended

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.exact = Signal(self.EXACT_WIDTH * lanes, name="exact")
        self.exact_on = Signal(name="exact_on")
        self.exact_signed = Signal(name="exact_signed")
        self.exact_wide = Signal(name="exact_wide")
        self.cnt = Signal(32 * lanes, name="cnt_value")
        self.cnt_on = Signal(name="cnt_on")
        self.cnt_minus1 = Signal(name="cnt_minus1")
        self.mm_lo = Signal(32 * lanes, name="mm_lo")
        self.mm_hi = Signal(32 * lanes, name="mm_hi")
        self.mm_on = Signal(name="mm_on")
        self.mm_signed = Signal(name="mm_signed")
        self.mm_mode = Signal(3, name="mm_mode")
        self.mul_x = Signal(self.MUL_WIDTH * lanes, name="mul_x")
        self.mul_y = Signal(self.MUL_WIDTH * lanes, name="mul_y")
        self.mul_on = Signal(name="mul_on")
        self.prod = Signal(2 * self.MUL_WIDTH * lanes, name="mul_prod")

    def prod_lane(self, i: int):
        w = 2 * self.MUL_WIDTH
        return self.prod[w * i:w * (i + 1)].as_signed()

    def feed_mul(self, lanes, x, y) -> list:
        """Statements giving the multiplier ``x(lane)`` and ``y(lane)`` (exact values of at
        most 33 bits, signed or unsigned)."""
        w = self.MUL_WIDTH
        return [self.mul_x.eq(Cat(*[fit(x(L), w) for L in lanes])),
                self.mul_y.eq(Cat(*[fit(y(L), w) for L in lanes])), self.mul_on.eq(1)]

    def exact_lane(self, i: int):
        w = self.EXACT_WIDTH
        return self.exact[w * i:w * (i + 1)].as_signed()

    def feed_exact(self, lanes, f, sgn: bool, wide: bool) -> list:
        """Statements giving the saturate-and-merge stage each lane's exact result ``f(lane)``
        of a 16-bit (``wide``: 32-bit) destination, signed or unsigned."""
        return [self.exact.eq(Cat(*[fit(f(L), self.EXACT_WIDTH) for L in lanes])), self.exact_on.eq(1),
                self.exact_signed.eq(sgn), self.exact_wide.eq(wide)]


def int_valu_signature(lanes: int, external_mul: bool) -> wiring.Signature:
    """The ports of an integer VALU (:class:`VALUInt`, ``hdl.simd.valu_int_shared.VALUIntShared``)."""
    w = _Stages.MUL_WIDTH
    mul = {"mul_x": Out(w * lanes), "mul_y": Out(w * lanes), "mul_p": In(2 * w * lanes)} if external_mul else {}
    return wiring.Signature({
        "op": In(OpId), "a": In(64 * lanes), "b": In(64 * lanes), "c": In(64 * lanes),
        "mask_in": In(lanes), "lane_base": In(5), "opsel": In(4), "clamp": In(1), "d_old": In(32 * lanes),
        "d": Out(64 * lanes), "mask_out": Out(lanes), "illegal": Out(1), **mul,
    })


class VALUInt(wiring.Component):
    """Combinational vector integer ALU for one wave (docs/simd.md).

    Parameters
    ----------
    lanes : int
        Lanes per wave (32; the ``fpga`` preset's SIMD may use fewer).
    external_mul : bool
        Leave the multiplier out: the unit presents its operands on ``mul_x``/``mul_y`` and
        takes the products from ``mul_p`` in the same cycle (``hdl/simd/lanemul.py``, shared with
        the FP32 unit).

    Attributes
    ----------
    op : In(OpId)
        The operation.
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
        destination half of 16-bit results.
    clamp : In(1)
        VOP3 ``clamp``: saturates the ops of :data:`CLAMP_SATURATES` (16-bit ops, adds and
        subtractions, the 24-bit multiplies and multiply-adds, carry ops, ``v_mad_co_*``).
    d_old : In(unsigned(32 * lanes))
        Old destination (32-bit lanes), whose other half a 16-bit result keeps.
    d : Out(unsigned(64 * lanes))
        Result, lane ``i`` in ``[64i+63:64i]``; the high half is 0 for 32-bit results.
    mask_out : Out(unsigned(lanes))
        Carry/borrow-out of the carry ops, bit 64 of ``v_mad_co_*``, compare results; before
        EXEC masking.
    illegal : Out(1)
        ``op`` is not an integer VALU op, or a plain 32-bit op (``VINT``) has ``op_sel``
        set, or ``clamp`` when the op does not saturate (the model rejects both).
    mul_x, mul_y : Out(unsigned(33 * lanes)); mul_p : In(unsigned(66 * lanes))
        With ``external_mul`` only: each lane's multiplier operands (two's complement) and
        their signed product.
    """

    def __init__(self, lanes: int = 32, external_mul: bool = False):
        self.lanes = lanes
        self.external_mul = external_mul
        super().__init__(int_valu_signature(lanes, external_mul))

    def elaborate(self, platform):
        m = Module()
        st = _Stages(self.lanes)
        lanes = [_Lane(self, st, i) for i in range(self.lanes)]

        def put(f, bits=32):
            """d <- for each lane f(lane) (a value fitted to ``bits``, or a list of parts
            ``bits`` wide), zero-padded to 64 bits."""
            parts = []
            for L in lanes:
                r = f(L)
                parts.extend(r if isinstance(r, list) else [fit(r, bits)])
                if bits < 64:
                    parts.append(Const(0, 64 - bits))
            m.d.comb += self.d.eq(Cat(*parts))

        def put_mask(f):
            m.d.comb += self.mask_out.eq(Cat(*[f(L) for L in lanes]))

        def lanes_of(f):
            parts = []
            for L in lanes:
                r = f(L)
                parts.extend(r if isinstance(r, list) else [r])
            return Cat(*parts)

        def feed_mul(name):
            if name in MUL_OPERANDS:
                bits, sgn = MUL_OPERANDS[name]
                ext = _s if sgn else (lambda v: v)
                m.d.comb += st.feed_mul(lanes, lambda L: ext(L.a[:bits]), lambda L: ext(L.b[:bits]))

        plain_illegal = self.clamp | (self.opsel != 0)
        with m.Switch(self.op):
            for name, f in _VINT.items():
                with m.Case(_ALL_OPS[name]):
                    feed_mul(name)
                    if name in _CLAMP32:      # with clamp: the exact result to the saturating stage
                        exact, sgn = _CLAMP32[name]
                        with m.If(self.clamp):
                            m.d.comb += st.feed_exact(lanes, exact, sgn, wide=True)
                        with m.Else():
                            put(f)
                        m.d.comb += self.illegal.eq(self.opsel != 0)
                    else:
                        put(f, info_of(_ALL_OPS[name]).dst_bits)
                        m.d.comb += self.illegal.eq(plain_illegal)
            for name, (minus1, f) in _COUNT.items():
                with m.Case(_ALL_OPS[name]):
                    m.d.comb += [st.cnt.eq(lanes_of(f)), st.cnt_on.eq(1), st.cnt_minus1.eq(minus1),
                                 self.illegal.eq(plain_illegal)]
            for name, mode in MINMAX.items():
                with m.Case(_ALL_OPS[name]):
                    sgn = name.endswith("i32")
                    lt = [(_s(L.a) < _s(L.b)) if sgn else (L.a < L.b) for L in lanes]
                    m.d.comb += [
                        st.mm_lo.eq(Cat(*[select(t, L.a, L.b) for t, L in zip(lt, lanes)])),
                        st.mm_hi.eq(Cat(*[select(t, L.b, L.a) for t, L in zip(lt, lanes)])),
                        st.mm_on.eq(1), st.mm_signed.eq(sgn), st.mm_mode.eq(mode),
                        self.illegal.eq(plain_illegal)]
            for table, wide in ((V16, False), (V16_TO_32, True)):
                for name, (f, sgn) in table.items():
                    with m.Case(_ALL_OPS[name]):
                        self._v16_exact(m, lanes, st, _ALL_OPS[name], f, sgn, wide)
            for name in ("v_add_nc_i32", "v_sub_nc_i32"):
                with m.Case(_ALL_OPS[name]):
                    sub = name == "v_sub_nc_i32"

                    def r(L, sub=sub):
                        return _s(L.a) - _s(L.b) if sub else _s(L.a) + _s(L.b)
                    with m.If(self.clamp):
                        m.d.comb += st.feed_exact(lanes, r, sgn=True, wide=True)
                    with m.Else():
                        put(r)
            for name, f in _CARRY.items():
                op = _ALL_OPS[name]
                bits = info_of(op).dst_bits
                with m.Case(op):
                    feed_mul(name)
                    put_mask(lambda L, f=f, bits=bits: f(L)[bits])
                    if bits == 64:          # v_mad_co_*: saturates here, on the bits above 63
                        put(lambda L, f=f, sgn=name.endswith("i32"): self._mad64(f(L), sgn), 64)
                    else:
                        with m.If(self.clamp):
                            m.d.comb += st.feed_exact(lanes, f, sgn=False, wide=True)
                        with m.Else():
                            put(f)
            for name, f in COMPARES.items():
                with m.Case(_ALL_OPS[name]):
                    put_mask(f)
            with m.Case(OpId.V_CNDMASK_B32):
                put(lambda L: select(L.mask, L.b, L.a))
            with m.Case(OpId.V_MBCNT_LO_U32_B32):
                # lane i counts the set bits of S0 below its wave lane (the lanes before it)
                put(lambda L: popcount(L.a & ((Const(1, 33) << (self.lane_base + L.i)) - 1)[:32]) + L.b)
            with m.Case(OpId.V_MBCNT_HI_U32_B32):
                put(lambda L: L.b)      # wave32: no lane below has an index >= 32
            with m.Case(OpId.V_NOP):
                pass
            with m.Default():
                m.d.comb += self.illegal.eq(1)

        if self.external_mul:
            m.d.comb += [self.mul_x.eq(st.mul_x), self.mul_y.eq(st.mul_y), st.prod.eq(self.mul_p)]
        else:
            with m.If(st.mul_on):
                w = st.MUL_WIDTH
                m.d.comb += st.prod.eq(Cat(*[st.mul_x[w * i:w * (i + 1)].as_signed() *
                                             st.mul_y[w * i:w * (i + 1)].as_signed() for i in range(self.lanes)]))
        self._count_stage(m, lanes, st, put)
        self._minmax_stage(m, lanes, st, put)
        self._exact_stage(m, lanes, st)
        return m

    def _count_stage(self, m, lanes, st, put):
        """Leading zeros of each lane of ``cnt`` (-1 for 0), minus one for v_cls_i32."""
        with m.If(st.cnt_on):
            put(lambda L: select(st.cnt[32 * L.i:32 * L.i + 32] == 0, 0xFFFF_FFFF,
                                 count_leading_zeros(st.cnt, 32 * L.i, 32) - st.cnt_minus1))

    def _minmax_stage(self, m, lanes, st, put):
        """Combine min(S0, S1) (``mm_lo``) and max(S0, S1) (``mm_hi``) with S2. Signed
        compares flip the sign bits and compare unsigned."""
        bias = Cat(Const(0, 31), st.mm_signed)

        def lo(L):
            return st.mm_lo[32 * L.i:32 * L.i + 32]

        def hi(L):
            return st.mm_hi[32 * L.i:32 * L.i + 32]

        def mn(x, y):
            return select((x ^ bias) < (y ^ bias), x, y)

        def mx(x, y):
            return select((x ^ bias) < (y ^ bias), y, x)

        modes = {"min3": lambda L: mn(lo(L), L.c), "max3": lambda L: mx(hi(L), L.c),
                 "maxmin": lambda L: mn(hi(L), L.c), "minmax": lambda L: mx(lo(L), L.c),
                 "med3": lambda L: mx(lo(L), mn(hi(L), L.c))}
        with m.If(st.mm_on):
            with m.Switch(st.mm_mode):
                for mode, name in enumerate(MM_MODES):
                    with m.Case(mode):
                        put(modes[name])

    def _mad64(self, r, sgn: bool):
        """The 64-bit result of v_mad_co_*: the exact sum ``r``, saturated with ``clamp``
        (unsigned: a carry makes it all ones; signed: bit 64 unlike bit 63 overflows)."""
        return select(self.clamp, clip(r, 64, sgn), r[:64])

    def _v16_exact(self, m, lanes, st, op, f, sgn, wide):
        """The Case of one 16-bit op: exact per-lane results into the saturate-and-merge
        stage. Sources are the ``op_sel``-chosen halves (a 32-bit source, S2 of
        v_mad_*32_*16, is whole), signed or unsigned as the op; Amaranth's arithmetic on them
        is exact like the model's Python integers (``-`` of unsigned values is signed;
        v_not_b16 is written ``-a - 1``)."""
        src_bits = info_of(op).src_bits

        def sources(L):
            srcs = []
            for k, (x, bits) in enumerate(zip((L.a, L.b, L.c), src_bits)):
                if bits == 16:
                    x = x.word_select(self.opsel[k], 16)
                srcs.append(_s(x) if sgn else x)
            return srcs

        def result(L):
            srcs = sources(L)
            if f is not MAD:
                return f(*srcs)
            return L.p + srcs[2] if len(srcs) > 2 else L.p

        if f is MAD:
            m.d.comb += st.feed_mul(lanes, lambda L: sources(L)[0], lambda L: sources(L)[1])
        m.d.comb += st.feed_exact(lanes, result, sgn, wide)

    def _exact_stage(self, m, lanes, st):
        """The shared stage of the 16-bit ops and the 32-bit ones with ``clamp``: with
        ``clamp`` the exact result saturates to the destination type; a 16-bit result goes
        into the half ``op_sel[3]`` names, the other half keeps ``d_old``; a 32-bit one
        (v_cvt_*32_*16, v_mad_*32_*16, the clamped 32-bit ops) is whole."""
        dst_shift = Cat(Const(0, 4), self.opsel[3])          # 0 or 16
        keep = ~(Const(0xFFFF, 32) << dst_shift)[:32]

        def put(value):
            m.d.comb += self.d.eq(Cat(*[Cat(value(L, st.exact_lane(L.i)), Const(0, 32))
                                        for L in lanes]))

        def merge16(L, r):
            return (L.old & keep) | (fit(r, 16) << dst_shift)[:32]

        with m.If(st.exact_on):
            with m.If(~self.clamp):
                with m.If(st.exact_wide):
                    put(lambda L, r: fit(r, 32))
                with m.Else():
                    put(merge16)
            for wide in (False, True):
                for sgn in (False, True):
                    with m.If(self.clamp & (st.exact_wide == wide) & (st.exact_signed == sgn)):
                        if wide:
                            put(lambda L, r, sgn=sgn: clip(r, 32, sgn))
                        else:
                            put(lambda L, r, sgn=sgn: merge16(L, clip(r, 16, sgn)))
