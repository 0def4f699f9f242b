"""Scalar ALU of the SIMD32 (docs/simd.md, "scalar ALU").

Combinational: every scalar integer opcode of the model (``sim/scalar.py`` SOP1/SOP2/SOPC/
SOPK tables and the saveexec/wrexec, s_cmov and s_bitset handlers of ``sim/execute.py``),
bit-exact with it. One ``Case`` per opcode of a ``Switch`` on ``op`` sets the destination,
SCC and EXEC results and their write enables.

Not here: branches, waits, barriers and memory (the SIMD's), ``s_getpc_b64`` (needs the
PC, which the SALU does not see: the scalar pipe writes PC + 4), the SALU float ops
(``s_add_f32``, ``s_cmp_*_f32``, ``s_cvt_*``, ...: a floating-point unit's) and
``s_round_mode``/``s_denorm_mode``. These, and every non-SALU opcode, raise ``illegal``.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import lanemul
from ..isa_tables import OpId
from .valu_int import count_leading_zeros, count_trailing_zeros, fit, low_mask, popcount, select

__all__ = ["SALU", "IMPLEMENTED", "salu_signature", "SAVEEXEC"]

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _s(x):
    return x.as_signed()


def _ovf_add(a, b, r):
    """Signed overflow of ``r = a + b`` (32-bit)."""
    return (a[31] == b[31]) & (a[31] != r[31])


def _ovf_sub(a, b, r):
    """Signed overflow of ``r = a - b`` (32-bit)."""
    return (a[31] != b[31]) & (a[31] != r[31])


def _bfe(a, b, w: int, signed: bool):
    """s_bfe_*: offset ``b[log2 w - 1:0]``, width ``b[22:16]``, as ``sim.scalar._bfe``: the
    field is taken after a logical shift (an arithmetic one for the signed forms, as the ISA
    shifts S0 as a signed value), a width of ``w`` or more keeps every shifted bit, a signed
    field narrower than ``w`` is sign-extended from its top bit, a width of 0 gives 0."""
    lg = w.bit_length() - 1
    off, width = b[:lg], b[16:23]
    big = width[lg:] != 0                         # width >= w
    mask = select(big, (1 << w) - 1, low_mask(width[:lg], w))
    if not signed:
        return (a >> off) & mask
    v = fit(_s(a) >> off, w) & mask
    sign = (v >> (width[:lg] - 1)[:lg])[0]        # bit width-1 (v is 0 when width is 0)
    return select(~big & sign, v | ~mask, v)


def _cmp(cond: str, x, y):
    return {"eq": x == y, "lg": x != y, "ne": x != y, "gt": x > y, "ge": x >= y,
            "lt": x < y, "le": x <= y}[cond]


# s_<op>_saveexec_b32/b64 and s_<op>_wrexec_b32/b64: <op> -> f(S0, EXEC), the new EXEC.
SAVEEXEC = {
    "and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
    "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
    "and_not0": lambda s, e: ~s & e, "or_not0": lambda s, e: ~s | e,
    "and_not1": lambda s, e: s & ~e, "or_not1": lambda s, e: s | ~e,
}


def _semantics(a64, b64, scc_in, d_in, k16, exec_in, p):
    """Mnemonic -> dict of results for every implemented opcode.

    Keys of a result: ``d`` (value, fitted to 64 bits), ``d_we`` (default 1 when ``d`` is
    given), ``scc`` (None: SCC unchanged), ``exec`` (None: EXEC unchanged), ``mul`` (the
    operands ``(x, y)`` of the shared multiplier, whose exact signed product is ``p``).
    """
    a, b, d32 = a64[:32], b64[:32], d_in[:32]
    t = {}

    def nz(name, r):
        t[name] = {"d": r, "scc": fit(r, 64) != 0}

    def plain(name, r):
        t[name] = {"d": r}

    # -- SOP2 ---------------------------------------------------------------------
    add, sub = a + b, a - b
    t["s_add_co_u32"] = {"d": add[:32], "scc": add[32]}
    t["s_sub_co_u32"] = {"d": sub[:32], "scc": sub[32]}                  # borrow
    t["s_add_co_i32"] = {"d": add[:32], "scc": _ovf_add(a, b, add[:32])}
    t["s_sub_co_i32"] = {"d": sub[:32], "scc": _ovf_sub(a, b, sub[:32])}
    addc, subc = a + b + scc_in, a - b - scc_in
    t["s_add_co_ci_u32"] = {"d": addc[:32], "scc": addc[32]}
    t["s_sub_co_ci_u32"] = {"d": subc[:32], "scc": subc[32]}
    diff = _s(fit(a - b, 32))      # the ISA takes |S0 - S1| of the wrapped 32-bit difference
    nz("s_absdiff_i32", fit(select(diff < 0, -diff, diff), 32))
    nz("s_lshl_b32", fit(a << b[:5], 32))
    nz("s_lshl_b64", fit(a64 << b[:6], 64))
    nz("s_lshr_b32", a >> b[:5])
    nz("s_lshr_b64", a64 >> b[:6])
    nz("s_ashr_i32", fit(_s(a) >> b[:5], 32))
    nz("s_ashr_i64", fit(_s(a64) >> b[:6], 64))
    for n in (1, 2, 3, 4):
        s = (a << n) + b
        t[f"s_lshl{n}_add_u32"] = {"d": s[:32], "scc": s[32:] != 0}
    for name, lt in (("i32", _s(a) < _s(b)), ("u32", a < b)):
        t[f"s_min_{name}"] = {"d": select(lt, a, b), "scc": lt}
        t[f"s_max_{name}"] = {"d": select(lt, b, a), "scc": ~lt}
    for w, (x, y) in ((32, (a, b)), (64, (a64, b64))):
        nz(f"s_and_b{w}", x & y)
        nz(f"s_or_b{w}", x | y)
        nz(f"s_xor_b{w}", x ^ y)
        nz(f"s_nand_b{w}", fit(~(x & y), w))
        nz(f"s_nor_b{w}", fit(~(x | y), w))
        nz(f"s_xnor_b{w}", fit(~(x ^ y), w))
        nz(f"s_and_not1_b{w}", x & ~y)
        nz(f"s_or_not1_b{w}", fit(x | ~y, w))
        t[f"s_cselect_b{w}"] = {"d": select(scc_in, x, y)}
    nz("s_bfe_u32", _bfe(a, b, 32, False))
    nz("s_bfe_i32", _bfe(a, b, 32, True))
    nz("s_bfe_u64", _bfe(a64, b, 64, False))
    nz("s_bfe_i64", _bfe(a64, b, 64, True))
    plain("s_bfm_b32", fit(low_mask(a[:5], 32) << b[:5], 32))
    plain("s_bfm_b64", fit(low_mask(a[:6], 64) << b[:6], 64))
    # one 33 x 33 multiplier serves the multiplies (docs/fpga.md: each would be DSP blocks);
    # s_mul_u64 adds the two cross products' low halves: (a_lo b_lo + (a_lo b_hi + a_hi b_lo) 2^32) mod 2^64
    t["s_mul_i32"] = {"d": fit(p, 32), "mul": (a, b)}
    t["s_mul_hi_u32"] = {"d": p[32:64], "mul": (a, b)}
    t["s_mul_hi_i32"] = {"d": p[32:64], "mul": (_s(a), _s(b))}
    cross = (a * b64[32:])[:32] + (a64[32:] * b)[:32]
    t["s_mul_u64"] = {"d": fit(p + (cross[:32] << 32), 64), "mul": (a, b)}
    plain("s_pack_ll_b32_b16", Cat(a[:16], b[:16]))
    plain("s_pack_lh_b32_b16", Cat(a[:16], b[16:32]))
    plain("s_pack_hh_b32_b16", Cat(a[16:32], b[16:32]))
    plain("s_pack_hl_b32_b16", Cat(a[16:32], b[:16]))
    plain("s_add_nc_u64", fit(a64 + b64, 64))
    plain("s_sub_nc_u64", fit(a64 - b64, 64))

    # -- SOP1 ---------------------------------------------------------------------
    plain("s_mov_b32", a)
    plain("s_mov_b64", a64)
    nz("s_not_b32", ~a)
    nz("s_not_b64", ~a64)
    plain("s_brev_b32", a[::-1])
    plain("s_brev_b64", a64[::-1])
    plain("s_ctz_i32_b32", select(a == 0, M32, count_trailing_zeros(a)))
    plain("s_ctz_i32_b64", select(a64 == 0, M32, count_trailing_zeros(a64)))
    plain("s_clz_i32_u32", select(a == 0, M32, count_leading_zeros(a)))
    plain("s_clz_i32_u64", select(a64 == 0, M32, count_leading_zeros(a64)))
    for name, x, w in (("s_cls_i32", a, 32), ("s_cls_i32_i64", a64, 64)):
        # bits equal to the sign, after it: the leading zeros of x ^ sign
        xs = (x ^ -x[-1])[:w]
        plain(name, select(xs == 0, M32, count_leading_zeros(xs)))
    plain("s_sext_i32_i8", fit(_s(a[:8]), 32))
    plain("s_sext_i32_i16", fit(_s(a[:16]), 32))
    nz("s_abs_i32", fit(select(a[31], -_s(a), a), 32))
    nz("s_bcnt0_i32_b32", 32 - popcount(a))
    nz("s_bcnt0_i32_b64", 64 - popcount(a64))
    nz("s_bcnt1_i32_b32", popcount(a))
    nz("s_bcnt1_i32_b64", popcount(a64))
    plain("s_bitset0_b32", d32 & ~(Const(1, 32) << a[:5])[:32])
    plain("s_bitset1_b32", d32 | (Const(1, 32) << a[:5])[:32])
    plain("s_bitset0_b64", d_in & ~(Const(1, 64) << a[:6])[:64])
    plain("s_bitset1_b64", d_in | (Const(1, 64) << a[:6])[:64])
    # s_cmov writes only when SCC is set; d is also right if the SIMD writes d_in back
    t["s_cmov_b32"] = {"d": select(scc_in, a, d32), "d_we": scc_in}
    t["s_cmov_b64"] = {"d": select(scc_in, a64, d_in), "d_we": scc_in}
    for k, f in SAVEEXEC.items():
        new = fit(f(a, exec_in), 32)
        t[f"s_{k}_saveexec_b32"] = {"d": exec_in, "exec": new, "scc": new != 0}
        t[f"s_{k}_wrexec_b32"] = {"d": new, "exec": new, "scc": new != 0}

    # -- SOPC (SCC only) ----------------------------------------------------------
    for cond in ("eq", "lg", "gt", "ge", "lt", "le"):
        t[f"s_cmp_{cond}_i32"] = {"scc": _cmp(cond, _s(a), _s(b))}
        t[f"s_cmp_{cond}_u32"] = {"scc": _cmp(cond, a, b)}
        t[f"s_cmp_{cond}_u64"] = {"scc": _cmp(cond, a64, b64)}
    for want in (0, 1):
        t[f"s_bitcmp{want}_b32"] = {"scc": (a >> b[:5])[0] == want}
        t[f"s_bitcmp{want}_b64"] = {"scc": (a64 >> b[:6])[0] == want}

    # -- SOPK (operand: the old destination d_in and simm16) ------------------------
    k = fit(_s(k16), 32)
    plain("s_movk_i32", k)
    t["s_cmovk_i32"] = {"d": select(scc_in, k, d32), "d_we": scc_in}
    addk = (d32 + k)[:32]
    t["s_addk_co_i32"] = {"d": addk, "scc": _ovf_add(d32, k, addk)}
    t["s_mulk_i32"] = {"d": fit(p, 32), "mul": (d32, k)}
    for cond in ("eq", "lg", "gt", "ge", "lt", "le"):
        t[f"s_cmpk_{cond}_i32"] = {"scc": _cmp(cond, _s(d32), _s(k16))}
        t[f"s_cmpk_{cond}_u32"] = {"scc": _cmp(cond, d32, k16)}
    return t


_ALL_OPS = {op.name.lower(): op for op in OpId if op is not OpId.NONE}


def salu_signature() -> wiring.Signature:
    """The members of :class:`SALU` (and of ``hdl.simd.salu_shared.SALUShared``)."""
    return wiring.Signature({
        "op": In(OpId), "a": In(64), "b": In(64), "scc_in": In(1), "exec_in": In(32),
        "d_in": In(64), "simm16": In(16),
        "d": Out(64), "d_we": Out(1), "scc": Out(1), "scc_we": Out(1), "exec": Out(32),
        "exec_we": Out(1), "illegal": Out(1),
    })


class SALU(wiring.Component):
    """Combinational scalar ALU (docs/simd.md).

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
        register operand of SOPK (s_addk_co_i32, s_mulk_i32, s_cmpk_*).
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
        super().__init__(salu_signature())

    def elaborate(self, platform):
        m = Module()
        w = lanemul.WIDTH
        mul_x, mul_y, mul_on = Signal(w), Signal(w), Signal()
        p = Signal(signed(2 * w))
        table = _semantics(self.a, self.b, self.scc_in, self.d_in, self.simm16, self.exec_in, p)
        m.d.comb += [self.scc.eq(self.scc_in), self.exec.eq(self.exec_in)]
        with m.If(mul_on):
            m.d.comb += p.eq(mul_x.as_signed() * mul_y.as_signed())
        with m.Switch(self.op):
            for name, r in table.items():
                if name not in _ALL_OPS:       # e.g. s_cmpk_*: not in gfx1200's table
                    continue
                with m.Case(_ALL_OPS[name]):
                    if "mul" in r:
                        m.d.comb += [mul_x.eq(fit(r["mul"][0], w)), mul_y.eq(fit(r["mul"][1], w)), mul_on.eq(1)]
                    if "d" in r:
                        m.d.comb += [self.d.eq(fit(r["d"], 64)), self.d_we.eq(r.get("d_we", 1))]
                    if r.get("scc") is not None:
                        m.d.comb += [self.scc.eq(r["scc"]), self.scc_we.eq(1)]
                    if r.get("exec") is not None:
                        m.d.comb += [self.exec.eq(r["exec"]), self.exec_we.eq(1)]
            with m.Default():
                m.d.comb += self.illegal.eq(1)
        return m


#: Mnemonics the SALU implements (everything else raises ``illegal``).
IMPLEMENTED = frozenset(n for n in _semantics(*(Const(0, 64),) * 2, Const(0, 1), Const(0, 64),
                                               Const(0, 16), Const(0, 32), Const(0, signed(2 * lanemul.WIDTH)))
                        if n in _ALL_OPS)
