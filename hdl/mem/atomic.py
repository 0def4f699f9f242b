"""32-bit read-modify-write operations, shared by the LDS bank ALUs and the memory side of
global atomics (RDNA 4 ISA guide, DS_* and GLOBAL_ATOMIC_* pseudocode)."""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Mux, Value, unsigned
from amaranth.lib import enum

from ..isa_tables import OpId

__all__ = ["AtomicOp", "atomic_result", "ATOMIC_OF"]


class AtomicOp(enum.Enum, shape=unsigned(4)):
    ADD = 0
    SUB = 1
    RSUB = 2
    INC = 3
    DEC = 4
    MIN_I32 = 5
    MAX_I32 = 6
    MIN_U32 = 7
    MAX_U32 = 8
    AND = 9
    OR = 10
    XOR = 11
    SWAP = 12
    CMPSWAP = 13      # new = data if old == cmp


def atomic_result(op, old: Value, d: Value, cmp: Value) -> Value:
    """The value written back: ``op`` applied to the old dword, operand ``d`` and ``cmp``.

    One adder, one magnitude compare and, per bit, the sum or a logic function (AND, OR, XOR
    or ``old``) of ``old`` and ``d``, not an ALU per operation. The adder gives every result
    that is not a logic function: ADD, SUB, RSUB, INC and DEC as ``old`` or ``~old`` plus
    ``d``, ``~d``, 0 or -1 plus a carry, and the operand ``d`` (SWAP, the min/max, CMPSWAP
    and DEC when they take it) or 0 (INC at its limit) as 0 plus ``d`` or 0. The min/max,
    INC and DEC conditions come from ``old >= d`` (signed for the I32 forms by flipping both
    sign bits) and ``old == d``."""
    old, d, cmp = old[:32], d[:32], cmp[:32]
    O = AtomicOp
    flip = Cat(Const(0, 31), (op == O.MIN_I32) | (op == O.MAX_I32))
    ge = (old ^ flip) >= (d ^ flip)                        # old >= d
    d_lt = ge & (old != d)                                 # d < old
    take_d = Mux(op == O.DEC, (old == 0) | d_lt,
             Mux((op == O.MIN_I32) | (op == O.MIN_U32), d_lt,
             Mux((op == O.MAX_I32) | (op == O.MAX_U32), ~d_lt,
             Mux(op == O.CMPSWAP, old == cmp, op == O.SWAP))))
    inc = (op == O.INC) & ~ge                              # INC wraps to 0 at d
    arith = (op == O.ADD) | (op == O.SUB) | (op == O.RSUB) | (op == O.DEC) | (op == O.INC)
    a = Mux(arith & ~take_d & ((op != O.INC) | inc), Mux(op == O.RSUB, ~old, old), 0)
    y = Mux(op == O.INC, 0, Mux((op == O.DEC) & ~take_d, 0xFFFF_FFFF, Mux(op == O.SUB, ~d, d)))
    total = (a + y + ((op == O.SUB) | (op == O.RSUB) | inc))[:32]
    logic = Mux(op == O.AND, old & d, Mux(op == O.OR, old | d, Mux(op == O.XOR, old ^ d, old)))
    return Mux(arith | take_d, total, logic)


def _atomic_of() -> dict:
    """OpId of every DS and global atomic -> its AtomicOp."""
    table = {"add_u32": "ADD", "sub_u32": "SUB", "rsub_u32": "RSUB", "inc_u32": "INC",
             "dec_u32": "DEC", "min_i32": "MIN_I32", "max_i32": "MAX_I32", "min_u32": "MIN_U32",
             "max_u32": "MAX_U32", "and_b32": "AND", "or_b32": "OR", "xor_b32": "XOR",
             "swap_b32": "SWAP", "cmpswap_b32": "CMPSWAP", "storexchg_b32": "SWAP",
             "storexchg_2addr_b32": "SWAP", "storexchg_2addr_stride64_b32": "SWAP",
             "cmpstore_b32": "CMPSWAP"}
    out = {}
    for op in OpId:
        name = op.name.lower()
        for prefix in ("ds_", "global_atomic_"):
            if name.startswith(prefix):
                key = name[len(prefix):].replace("_rtn", "")
                if key in table:
                    out[op] = AtomicOp[table[key]]
    return out


#: ``{OpId: AtomicOp}`` for every DS and global atomic opcode.
ATOMIC_OF = _atomic_of()
