"""Small bit-vector building blocks shared by the dispatcher, the barrier unit, the SIMD, the
LDS and the scalar cache.

Each is a handful of wide operations, so Amaranth's simulator evaluates it cheaply: a
priority encoder isolates the lowest set bit with ``x & -x`` and encodes it with one mask
per index bit; sums and ORs are balanced trees.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value

__all__ = ["encode_onehot", "lowest_bit", "first_set", "rr_pick", "rr_grant", "popcount", "tree_or",
           "tree_max", "onehot_or", "mux_tree"]


def encode_onehot(onehot: Value) -> Value:
    """The index of the one set bit of ``onehot`` (0 when none): one mask per index bit."""
    n = len(onehot)
    return Cat(*[(onehot & Const(sum(1 << i for i in range(n) if i >> j & 1), n)).any()
                 for j in range((n - 1).bit_length())])


def lowest_bit(x: Value) -> Value:
    """The lowest set bit of ``x`` alone (``x & -x``)."""
    return (x & (~x + 1))[:len(x)]


def _encode(m: Module, low: Value, name: str) -> Signal:
    # at least a bit, 0 for a one-bit input: a zero-width wire is written as [-1:0], which does not lint
    idx = Signal(range(max(2, len(low))), name=f"{name}_idx")
    if len(low) > 1:
        m.d.comb += idx.eq(encode_onehot(low))
    return idx


def first_set(m: Module, x: Value, name: str) -> Signal:
    """The index of the lowest set bit of ``x`` (0 when ``x`` is 0: test ``x.any()``)."""
    low = Signal(len(x), name=f"{name}_low")
    m.d.comb += low.eq(lowest_bit(x))
    return _encode(m, low, name)


def rr_grant(m: Module, mask: Value, last: Value, name: str) -> tuple[Signal, Signal]:
    """Round robin as a one-hot grant: the lowest set bit of ``mask`` above position
    ``last``, else its lowest set bit (0 when ``mask`` is 0), and that bit's index. The grant
    selects values with AND-OR terms (``tree_or``) without waiting for the index."""
    n = len(mask)
    after = Signal(n, name=f"{name}_after")
    m.d.comb += after.eq(mask & ~((Const(2, n + 1) << last) - 1)[:n])
    # one isolation of the lowest bit of ``after`` and ``mask`` side by side (one carry chain
    # on an FPGA), rather than a choice between them by ``after.any()`` ahead of it
    both = Signal(2 * n, name=f"{name}_both")
    m.d.comb += both.eq(Cat(after, mask))
    low = lowest_bit(both)
    grant = Signal(n, name=f"{name}_grant")
    m.d.comb += grant.eq(low[:n] | low[n:])
    return grant, _encode(m, grant, name)


def rr_pick(m: Module, mask: Value, last: Value, name: str) -> Signal:
    """Round robin: the first set bit of ``mask`` after position ``last``, wrapping."""
    n = len(mask)
    rot = Signal(n, name=f"{name}_rot")
    m.d.comb += rot.eq(Cat(mask, mask) >> (last + 1))
    f = first_set(m, rot, name)
    pick = Signal(range(n), name=f"{name}_pick")
    s = last + 1 + f
    m.d.comb += pick.eq(Mux(s >= n, s - n, s))
    return pick


def _tree(values: list, op):
    while len(values) > 1:
        values = [op(values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def popcount(x: Value) -> Value:
    """Number of set bits of ``x`` (a balanced adder tree)."""
    return _tree([x[i] for i in range(len(x))], lambda a, b: a + b)


def tree_or(values: list) -> Value:
    """OR of ``values`` (a balanced tree)."""
    return _tree(list(values), lambda a, b: a | b)


def tree_max(values: list) -> Value:
    """The largest of ``values`` (unsigned; a balanced tree of comparisons)."""
    return _tree(list(values), lambda a, b: Mux(a > b, a, b))


def onehot_or(conds: list, indices: list, width: int) -> Value:
    """``width`` bits: bit ``indices[k]`` set for every ``k`` whose ``conds[k]`` holds."""
    return tree_or([Mux(c, (Const(1, width) << i)[:width], 0) for c, i in zip(conds, indices)])


def mux_tree(index: Value, values: list) -> Value:
    """``values[index]`` (0 past the end) as a balanced tree of 2:1 multiplexers, one level
    per bit of ``index``: a LUT's worth of logic per bit and level on the FPGA, where Yosys
    makes an ``Array`` lookup one AND-OR term per value, and a few word selects in the
    compiled model, where a variable shift of a whole vector loops over all its words."""
    values = list(values) + [Const(0, len(values[0]))] * ((1 << len(index)) - len(values))
    for bit in index:
        values = [Mux(bit, values[k + 1], values[k]) for k in range(0, len(values), 2)]
    return values[0]
