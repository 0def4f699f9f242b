"""The vector FP32 unit of the SIMD32 (docs/simd.md, "vector FP32 unit"), combinational.

``VALUFloat`` computes, for all lanes at once, the FP32 VALU operations of the model's
``VFLOAT`` table (sim/execute.py) bit for bit as ``sim/fp32.py`` defines them
(docs/fp32.md): add, sub, subrev, mul and fma (one fused datapath: add = fma(a, 1.0, b),
sub = fma(a, 1.0, -b), mul = fma(a, b, -0.0)), min/max (num and IEEE 754-2019 forms),
min3/max3/med3, ldexp and frexp, the int <-> float conversions, floor/ceil/trunc/rndne/fract, and
every v_cmp(x)_*_f32 / v_cmp(x)_class_f32 (result in ``mask_out``).

The fused datapath is bit-exact for add, sub and mul as well: x * 1.0 and x * y are exact in
it, so each result is rounded once like the separate operation; the NaN operand order is kept
(add: a, then b; subrev: b, then a; a NaN in the negated src1 of sub/subrev is returned with its
own sign); an exact zero sum takes the sign of the IEEE sum of the two zero terms, so
x*1 + (+-0) and x*y + (-0) give the signed zeros of add and mul (mul(-0, 1) + (-0) = -0,
mul(+0, 1) + (-0) = +0); inf*1 - inf is the invalid case of add.

Operand conventions
-------------------
* ``a``, ``b``, ``c`` are src0, src1, src2, lane ``i`` at bits ``[32 i + 31 : 32 i]``.
* The VOP3 input modifiers are applied here to the source bits, abs first, then neg, for every
  operation (as the model's operand readers do), except that v_fmac_f32 takes ``c`` (its
  old destination, which the SIMD routes to ``c``) without modifiers, like the model.
* v_fmac_f32, v_fmaak_f32 and v_fmamk_f32 are computed as fma(a, b, c): the SIMD arranges the
  operands (fmac: c = old vdst; fmaak: c = K; fmamk: b = K, c = src1).
* ``omod`` (1: x2, 2: x4, 3: x0.5, each rounded like v_mul_f32) and then ``clamp`` are applied to
  ``d`` of every operation except the compares (whose ``d`` is 0); VOP2 encodings of fmaak/fmamk
  have neither.  As in the model, this includes v_cvt_i32_f32/v_cvt_u32_f32, whose integer
  result bits are then treated as a float.
* ``illegal`` is set for an ``op`` this unit does not execute (then ``d`` = 0, ``mask_out`` = 0):
  the transcendental ops belong to the transcendental unit, and the float ops the model does not
  execute (v_div_*, v_cvt_floor/nearest_i32_f32, v_mul_dx9_zero_f32,
  v_minimum3/maximum3_f32, v_minmax/maxmin_num_f32) are refused like the model refuses them.

Structure and simulation speed
------------------------------
The datapath is cut into seven combinational stages, each a submodule of its own (so that
Amaranth's simulator evaluates each stage's code once per input change, in order), each
reading only the previous submodule's signals (a submodule that reads two others' is
evaluated after each: the sum and the encoders pass on what the next stage needs):

1. decode ``op`` into an operation class and a few operand-select bits, then (in a submodule
   of its own) apply the modifiers and arrange the operands (whole vectors at once:
   add/sub/subrev/mul become fma operands; the users of the alignment shifter find their
   operand in z);
2. unpack significands and exponents and the inf/NaN flags with bitwise SWAR logic over the
   whole vector (no carries cross lanes);
3. the per-lane core (``hdl.simd.fp32lane``), a textbook single-path FMA: first each lane's
   alignment shift, chosen by class (a submodule of its own); then the one alignment shifter
   (the fma's addend placed in a 77-bit window around the product, with a sticky bit; also
   fract's fraction bits, ldexp's significand, float -> int's integer part), and the two
   terms of V with the exponent T for the fma, int -> float, fract and ldexp; or a final
   result (min/max, float -> int, rounding to integers, specials), the compare/class mask;
   then, in a submodule of its own, the one adder: V = a +- b;
4. |V|, then its bit length (a priority encoder, in a submodule of its own);
5. rounding to float32 (RNE, gradual underflow, overflow): the shift (a submodule of its own),
   then one shifter that keeps only the bits it brings to the result and a sticky bit;
6. ``omod`` (one datapath for its three codes);
7. ``clamp``.

With ``stages=3`` (the SIMD's) the unit is a pipeline: stage 2's outputs are
registered, then stage 3's sum (and the compare/class mask), so ``d`` and ``mask_out``
answer the inputs of two cycles before; ``illegal`` answers the current ones, and the
multiplier's operands leave and its product returns in the middle stage.

Operations share their datapath, selected at run time: the min/max selections and the
compares three comparators (the min/max ones pick an operand index, then one word
multiplexer), the four roundings to integers one adder, the fma, the conversions, fract and
ldexp one alignment shifter and one adder, normal and denormal rounding one shifter, the three
``omod`` codes one path.  One lane of the ``fpga`` preset (``dcu fpga --block valu_fp --set
lanes=1 --set coalesce_lanes=1 --set request_in_rows=false``) is about 3,000 LUT4 and 400
CCU2C.

Each lane's datapath is written once, as expressions and ``If``/``Switch`` statements on
slices of the stage signals; there are no per-lane signals (a stage's per-lane results, such as
the shifts, are slices of one signal of the stage).  Stages that an operation does not need
pass the vector through in one assignment.  Measured with Amaranth 0.5's simulator
(random operands, CPU time): about 1,300-1,500 32-lane vectors per CPU second through the
fused add/mul/fma path, 1,800-2,500 for the int -> float conversions, ldexp and fract,
3,000-7,000 for min/max/med3, compares, rounding to integers and float -> int.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from .fp32lane import (BLW, FIN_REC, FREXP_EXP, FREXP_MANT, I2F_REC, LDEXP, LDEXP_SHIFT, MINMAX_OPS, MW, NORM_W,
                       R_FIN, R_NEG, R_T, R_V, R_ZS, REC_W, RECV_W, RINT_OPS, T_BIAS, TERMS_W, TW, VW, Opnd, align,
                       class_bit, clamp_lane, cmp_bit, f2i_bits, f2i_shift, fit, fma_lane, fma_shift, fma_special,
                       fma_sum, fract_lane, fract_shift, i2f_terms, ldexp_lane, lzc_lane, minmax_lane, omod_lane,
                       order_bits, rep, rint_bits, round_shift, round_lane, swar_spec, swar_unpack)
from ..isa_tables import OpId, info_of

__all__ = ["VALUFloat", "Cls", "FP_OPS", "FUSED_OPS", "CMP_CONDITIONS"]

#: v_cmp_<cond>_f32 condition names in opcode order (VOPC opcode 16 + index; ISA guide).
CMP_CONDITIONS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u",
                  "nge", "nlg", "ngt", "nle", "neq", "nlt", "t")

_BANK = 8           # lanes per pre-rounding record signal (keeps each signal about 1 kbit)


class Cls(enum.Enum, shape=4):
    """Operation class of VALUFloat (stage 1 decodes ``op`` into it)."""
    NONE = 0     #: not an FP32 VALU op of this unit (``illegal``)
    FMA = 1      #: add, sub, subrev, mul, fma, fmac, fmaak, fmamk
    MINMAX = 2   #: min/max/min3/max3/med3 (sub: one-hot kind, MINMAX_OPS; ``mx``: a max op)
    CMP = 3      #: v_cmp(x)_<cond>_f32 (sub = condition index)
    CLASS = 4    #: v_cmp(x)_class_f32
    I2F = 5      #: cvt_f32_i32 (sub = 1), cvt_f32_u32, cvt_f32_ubyteN (sub = 0)
    F2I = 6      #: cvt_i32_f32 (sub = 1), cvt_u32_f32 (sub = 0)
    RINT = 7     #: floor, ceil, trunc, rndne (sub = index in RINT_OPS)
    FRACT = 8
    LDEXP = 9    #: ldexp, frexp_mant, frexp_exp (sub: fp32lane's LDEXP, FREXP_MANT, FREXP_EXP)


_ROUNDED = (Cls.FMA, Cls.I2F, Cls.FRACT, Cls.LDEXP)   # classes that go through stages 4-5

_Ctl = data.StructLayout({
    "cls": Cls, "sub": 4, "zneg": 1, "omod": 2, "clamp": 1, "rnd": 1,
    # decoded for stage 3 (a bit per vector rather than a test per lane): a max op of the
    # min/max unit
    "mx": 1,
})


def _decode_table() -> dict:
    """OpId -> (Cls, sub, arrangement) for every operation of the unit."""
    t = {}
    fma = {"V_ADD_F32": "add", "V_SUB_F32": "sub", "V_SUBREV_F32": "subrev", "V_MUL_F32": "mul",
           "V_FMA_F32": "abc", "V_FMAAK_F32": "abc", "V_FMAMK_F32": "abc", "V_FMAC_F32": "fmac"}
    for name, arr in fma.items():
        t[OpId[name]] = (Cls.FMA, 0, arr)
    names = {"min_num": "V_MIN_NUM_F32", "max_num": "V_MAX_NUM_F32", "minimum": "V_MINIMUM_F32",
             "maximum": "V_MAXIMUM_F32", "min3": "V_MIN3_NUM_F32", "max3": "V_MAX3_NUM_F32",
             "med3": "V_MED3_NUM_F32"}
    for sub, k in MINMAX_OPS.items():
        t[OpId[names[sub]]] = (Cls.MINMAX, 1 << k, "abc")
    for op in OpId:
        n = op.name
        if n.startswith(("V_CMP_", "V_CMPX_")) and n.endswith("_F32"):
            cond = n.split("_")[2].lower()
            if cond == "class":
                t[op] = (Cls.CLASS, 0, "abc")
            else:
                idx = info_of(op).op & 15            # VOPC 16 + cond (v_cmpx: 144 + cond)
                assert CMP_CONDITIONS[idx] == cond, n
                t[op] = (Cls.CMP, idx, "abc")
    t[OpId.V_CVT_F32_I32] = (Cls.I2F, 1, "abc")
    t[OpId.V_CVT_F32_U32] = (Cls.I2F, 0, "abc")
    for k in range(4):
        t[OpId[f"V_CVT_F32_UBYTE{k}"]] = (Cls.I2F, 0, f"ubyte{k}")
    t[OpId.V_CVT_I32_F32] = (Cls.F2I, 1, "xz")
    t[OpId.V_CVT_U32_F32] = (Cls.F2I, 0, "xz")
    for k, sub in enumerate(RINT_OPS):
        t[OpId[f"V_{sub.upper()}_F32"]] = (Cls.RINT, k, "abc")
    t[OpId.V_FRACT_F32] = (Cls.FRACT, 0, "xz")
    t[OpId.V_LDEXP_F32] = (Cls.LDEXP, LDEXP, "xz")
    t[OpId.V_FREXP_MANT_F32] = (Cls.LDEXP, FREXP_MANT, "xz")
    t[OpId.V_FREXP_EXP_I32_F32] = (Cls.LDEXP, FREXP_EXP, "xz")
    return t


_TABLE = _decode_table()
#: Operand arrangements (x, y, z of the fused datapath) as select bits: x = b (else a, or a
#: byte of a: int -> float reads only x), y = 1.0 (else b), z = a or b with its sign flipped
#: by ``zflip`` (else c), c without modifiers (``z_raw``), -0.0 (``z_m0``); ``on``: an op of
#: the unit (else the operands stay 0 and the stages after do not change: OpId.NONE is cheap
#: to simulate).
_Arr = data.StructLayout({"on": 1, "x_b": 1, "ub": 1, "byte": 2, "y_one": 1, "z_a": 1, "z_b": 1,
                          "zflip": 1, "z_raw": 1, "z_m0": 1})
_ARRANGE = {
    "abc": {},
    "xz": {"z_a": 1},          # the operand of the alignment shifter's users is z (and x)
    "fmac": {"z_raw": 1},
    "add": {"y_one": 1, "z_b": 1},
    "sub": {"y_one": 1, "z_b": 1, "zflip": 1},
    "subrev": {"x_b": 1, "y_one": 1, "z_a": 1, "zflip": 1},
    "mul": {"z_m0": 1},
    **{f"ubyte{k}": {"ub": 1, "byte": k} for k in range(4)},
}
#: Every OpId that VALUFloat executes (``illegal`` is 0 exactly for these).
FP_OPS = frozenset(_TABLE)
#: The ops of the fused datapath: those that use the significand multiplier.
FUSED_OPS = frozenset(op for op, (cls, _, _) in _TABLE.items() if cls is Cls.FMA)


class VALUFloat(wiring.Component):
    """The vector FP32 ALU: all lanes, combinational (docs/simd.md, docs/fp32.md).

    Parameters
    ----------
    lanes : int
        Number of lanes (32 for the wave32 SIMD).
    external_mul : bool
        Leave the significand multipliers out: the unit presents each lane's significands on
        ``mul_x``/``mul_y`` (fma-class ops) and takes their product from ``mul_p`` in the
        same cycle (``hdl/simd/lanemul.py``, shared with the integer unit).

    Attributes
    ----------
    op : OpId, in
        The operation.
    a, b, c : unsigned(32 * lanes), in
        src0, src1, src2 (see the module docstring for fmac/fmaak/fmamk).
    abs, neg : unsigned(3), in
        VOP3 input modifiers, bit k for source k (abs applied before neg).
    clamp : unsigned(1), in
        VOP3 clamp of the float result to [+0, 1.0] (NaN -> +0).
    omod : unsigned(2), in
        VOP3 output modifier: 0 none, 1 x2, 2 x4, 3 x0.5.
    d : unsigned(32 * lanes), out
        The result (0 for compares and illegal ops).
    mask_out : unsigned(lanes), out
        Compare / class results, bit i for lane i, before EXEC masking (0 for other ops).
    illegal : unsigned(1), out
        ``op`` is not executed by this unit.
    mul_x, mul_y : unsigned(24 * lanes), out; mul_p : unsigned(48 * lanes), in
        With ``external_mul`` only: the significands to multiply, lane ``i`` at
        ``[24 i + 23 : 24 i]``, and their products.
    """

    def __init__(self, lanes: int = 32, external_mul: bool = False, stages: int = 1):
        if stages not in (1, 3):
            raise ValueError(f"stages must be 1 or 3, got {stages}")
        self.lanes = lanes
        self.external_mul = external_mul
        self.stages = stages
        w = 32 * lanes
        mul = {"mul_x": Out(24 * lanes), "mul_y": Out(24 * lanes), "mul_p": In(48 * lanes)} if external_mul else {}
        super().__init__({
            "op": In(OpId), "a": In(w), "b": In(w), "c": In(w),
            "abs": In(3), "neg": In(3), "clamp": In(1), "omod": In(2),
            "d": Out(w), "mask_out": Out(lanes), "illegal": Out(1), **mul,
        })

    # -----------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        L = self.lanes
        W = 32 * L
        banks = [list(range(s, min(s + _BANK, L))) for s in range(0, L, _BANK)]

        def bank_of(i):
            return i // _BANK, i % _BANK

        def ctl(name):
            return Signal(_Ctl, name=name)

        def cut(*values):
            """``values`` as the next stage sees them: registered when the unit is in stages."""
            if self.stages == 1:
                return values
            regs = tuple(Signal.like(v, name=f"{Value.cast(v).name}r") for v in values)
            m.d.sync += [r.eq(v) for r, v in zip(regs, values)]
            return regs

        # ---- stage 1: decode, modifiers, operand arrangement --------------------------
        s1 = Module()
        m.submodules.s1_front = s1
        x1, y1, z1 = Signal(W, name="x1"), Signal(W, name="y1"), Signal(W, name="z1")
        c1 = ctl("ctl1")
        sign_rep, abs_rep, ones = rep(0x8000_0000, L), rep(0x7FFF_FFFF, L), (1 << W) - 1

        # the operand arrangement is decoded into a few select bits (one Switch case per
        # (class, sub, arrangement, a max op)); a submodule of its own multiplexes the vectors
        # with them
        arr = Signal(_Arr, name="arr1")
        groups = {}
        for op, key in _TABLE.items():
            groups.setdefault((*key, key[0] is Cls.MINMAX and op.name.startswith("V_MAX")), []).append(op)
        s1.d.comb += [c1.omod.eq(self.omod), c1.clamp.eq(self.clamp)]
        # OpId.NONE (no instruction) apart, so that a compiled simulation decodes only the
        # operations
        with s1.If(self.op == OpId.NONE):
            s1.d.comb += self.illegal.eq(1)
        with s1.Else(), s1.Switch(self.op):
            for (cls, sub, key, mx), ops in groups.items():
                with s1.Case(*ops):
                    s1.d.comb += [c1.cls.eq(cls), c1.sub.eq(sub), c1.rnd.eq(cls in _ROUNDED), arr.on.eq(1),
                                  c1.mx.eq(mx),
                                  *[arr[f].eq(v) for f, v in _ARRANGE[key].items()]]
                    if key in ("sub", "subrev"):
                        s1.d.comb += c1.zneg.eq(1)
            with s1.Default():
                s1.d.comb += self.illegal.eq(1)
        s1a = Module()
        m.submodules.s1_arrange = s1a

        def modified(v, k, flip=0):
            return ((v & Mux(self.abs[k], abs_rep, ones)) ^ Mux(self.neg[k] ^ flip, sign_rep, 0))[:W]

        am, bm = modified(self.a, 0), modified(self.b, 1)
        ubyte = (am >> Cat(Const(0, 3), arr.byte)) & rep(0xFF, L)
        zsrc = Mux(arr.z_a, modified(self.a, 0, arr.zflip),
                   Mux(arr.z_b, modified(self.b, 1, arr.zflip), modified(self.c, 2)))
        with s1a.If(arr.on):
            s1a.d.comb += [
                x1.eq(Mux(arr.x_b, bm, Mux(arr.ub, ubyte, am))),
                y1.eq(Mux(arr.y_one, rep(0x3F80_0000, L), bm)),
                z1.eq(Mux(arr.z_raw, self.c, Mux(arr.z_m0, sign_rep, zsrc))),
            ]

        # ---- stage 2: SWAR unpack ------------------------------------------------------
        s2 = Module()
        m.submodules.s2_unpack = s2
        x2, y2, z2 = Signal(W, name="x2"), Signal(W, name="y2"), Signal(W, name="z2")
        ux, uy, uz = Signal(W, name="ux"), Signal(W, name="uy"), Signal(W, name="uz")
        # per lane: [23] an operand is inf/NaN, [31] sign of x*y, [30] zsign (x*y and z both
        # negative), [29] effective subtraction (sign of x*y != sign of z)
        fl = Signal(W, name="flags")
        c2 = ctl("ctl2")
        s2.d.comb += [x2.eq(x1), y2.eq(y1), z2.eq(z1), c2.eq(c1)]
        with s2.Switch(c1.cls):
            with s2.Case(Cls.FMA):
                s2.d.comb += [
                    ux.eq(swar_unpack(x1, L)), uy.eq(swar_unpack(y1, L)), uz.eq(swar_unpack(z1, L)),
                    fl.eq(swar_spec(x1, L) | swar_spec(y1, L) | swar_spec(z1, L)
                          | ((x1 ^ y1) & sign_rep) | ((((x1 ^ y1) & z1) & sign_rep) >> 1)
                          | (((x1 ^ y1 ^ z1) & sign_rep) >> 2)),
                ]
            with s2.Case(Cls.FRACT, Cls.LDEXP, Cls.F2I):
                s2.d.comb += uz.eq(swar_unpack(z1, L))

        # the first register of ``stages=3``: stage 3 reads only these
        x2, y2, z2, ux, uy, uz, fl, c2 = cut(x2, y2, z2, ux, uy, uz, fl, c2)

        # ---- stage 3a: the alignment shift of each lane, chosen by class ----------------------
        # (a signal: the shifter's steps and the fma's exponent read it without recomputing it;
        # the stage passes on what stage 3 reads, so that the simulator evaluates stage 3 once)
        s3a = Module()
        m.submodules.s3_shift = s3a
        shs = Signal(8 * L, name="align_sh")        # per lane: the shift (7 bits), fma's hi
        passed = [Signal.like(v, name=f"{Value.cast(v).name}a") for v in (x2, y2, z2, ux, uy, uz, fl, c2)]
        s3a.d.comb += [p.eq(v) for p, v in zip(passed, (x2, y2, z2, ux, uy, uz, fl, c2))]
        with s3a.Switch(c2.cls):
            with s3a.Case(Cls.FMA):
                for i in range(L):
                    x, y, z = Opnd(x2, ux, i), Opnd(y2, uy, i), Opnd(z2, uz, i)
                    fma_shift(s3a, shs[8 * i: 8 * i + 8], x, y, z)
            for cls, shift in ((Cls.FRACT, fract_shift), (Cls.F2I, f2i_shift), (Cls.LDEXP, lambda z: LDEXP_SHIFT)):
                with s3a.Case(cls):
                    s3a.d.comb += shs.eq(Cat(fit(shift(Opnd(z2, uz, i)), 8) for i in range(L)))
        x2, y2, z2, ux, uy, uz, fl, c2 = passed

        # ---- stage 3: per-lane core ------------------------------------------------------
        s3 = Module()
        m.submodules.s3_core = s3
        recs = [Signal(REC_W * len(b), name=f"rec3_{k}") for k, b in enumerate(banks)]
        terms = [Signal(TERMS_W * len(b), name=f"terms3_{k}") for k, b in enumerate(banks)]
        bits3 = Signal(W, name="bits3")
        mask3 = Signal(L, name="mask3")
        c3 = ctl("ctl3")
        s3.d.comb += c3.eq(c2)
        fin_rec = Const(FIN_REC, REC_W)

        def rec_of(sigs, i, w=REC_W):
            k, j = bank_of(i)
            return sigs[k][w * j: w * (j + 1)]

        def lane_ops(i, unpacked=True):
            return (Opnd(x2, ux if unpacked else None, i), Opnd(y2, uy, i), Opnd(z2, uz, i))

        def lane_word(sig, i):
            return sig[32 * i: 32 * i + 32]

        # the min/max compares reversed for the max ops; the compares share the first, not
        # reversed (the same expression: one comparator in the netlist)
        for_max = c2.mx
        # the one alignment shifter per lane, by stage 3a's shift; each class's case uses the
        # same expression (one shifter in the netlist, only the case's use simulated)
        aligned = [align(Opnd(z2, uz, i), shs[8 * i: 8 * i + 7]) for i in range(L)]
        with s3.Switch(c2.cls):
            with s3.Case(Cls.FMA):
                if self.external_mul:
                    s3.d.comb += [self.mul_x.eq(Cat(*[lane_ops(i)[0].m for i in range(L)])),
                                  self.mul_y.eq(Cat(*[lane_ops(i)[1].m for i in range(L)]))]
                for i in range(L):
                    x, y, z = lane_ops(i)
                    with s3.If(fl[32 * i + 23]):
                        s3.d.comb += [rec_of(recs, i).eq(fin_rec),
                                      lane_word(bits3, i).eq(
                                          fma_special(x, y, z, fl[32 * i + 31], c2.zneg))]
                    with s3.Else():
                        fma_lane(s3, rec_of(recs, i), rec_of(terms, i, TERMS_W),
                                 x, y, z, aligned[i], shs[8 * i + 7], fl[32 * i + 31], fl[32 * i + 29],
                                 fl[32 * i + 30], self.mul_p[48 * i:48 * (i + 1)] if self.external_mul else None)
            with s3.Case(Cls.MINMAX):
                for i in range(L):
                    minmax_lane(s3, lane_word(bits3, i), c2.sub, order_bits(for_max, *lane_ops(i, False)),
                                *lane_ops(i, False))
            with s3.Case(Cls.CMP):
                s3.d.comb += mask3.eq(Cat(cmp_bit(c2.sub, order_bits(for_max, *lane_ops(i, False))[0],
                                                  *lane_ops(i, False)[:2]) for i in range(L)))
            with s3.Case(Cls.CLASS):
                s3.d.comb += mask3.eq(Cat(class_bit(*lane_ops(i, False)[:2])
                                                  for i in range(L)))
            with s3.Case(Cls.I2F):
                s3.d.comb += [r.eq(Cat(Const(I2F_REC, REC_W) for i in b)) for r, b in zip(recs, banks)]
                s3.d.comb += [t.eq(Cat(i2f_terms(c2.sub[0], Opnd(x2, None, i)) for i in b))
                              for t, b in zip(terms, banks)]
            with s3.Case(Cls.F2I):
                s3.d.comb += bits3.eq(Cat(fit(f2i_bits(c2.sub[0], Opnd(z2, uz, i), aligned[i]), 32)
                                          for i in range(L)))
            with s3.Case(Cls.RINT):
                s3.d.comb += bits3.eq(Cat(fit(rint_bits(c2.sub, Opnd(x2, None, i)), 32) for i in range(L)))
            with s3.Case(Cls.FRACT):
                for i in range(L):
                    fract_lane(s3, rec_of(recs, i), rec_of(terms, i, TERMS_W), lane_word(bits3, i),
                               Opnd(z2, uz, i), aligned[i], fin_rec)
            with s3.Case(Cls.LDEXP):
                for i in range(L):
                    ldexp_lane(s3, rec_of(recs, i), rec_of(terms, i, TERMS_W), lane_word(bits3, i),
                               Opnd(z2, uz, i), Opnd(y2, None, i), aligned[i], fin_rec, c2.sub)

        # the adder, a stage of its own that reads stage 3's terms: V of every rounded class
        s3s = Module()
        m.submodules.s3_sum = s3s
        sums = [Signal(RECV_W * len(b), name=f"rec3s_{k}") for k, b in enumerate(banks)]
        with s3s.If(c3.rnd):
            for r, t, sm, b in zip(recs, terms, sums, banks):
                s3s.d.comb += sm.eq(Cat(*[Cat(r[REC_W * j: REC_W * (j + 1)], fma_sum(t[TERMS_W * j: TERMS_W * (j + 1)]))
                                          for j in range(len(b))]))
        # stage 4 reads only this stage's signals, so the simulator evaluates it once
        c3s, bits3s = ctl("ctl3s"), Signal(W, name="bits3s")
        s3s.d.comb += [c3s.eq(c3), bits3s.eq(bits3)]
        recs, c3, bits3 = sums, c3s, bits3s
        # the second register of ``stages=3``: stage 4 reads only these; the mask is the output
        *recs, c3, bits3, mask3 = cut(*recs, c3, bits3, mask3)
        m.d.comb += self.mask_out.eq(mask3)

        # ---- stage 4: |V|, then its bit length ------------------------------------------
        s4 = Module()
        m.submodules.s4_norm = s4
        recs4 = [Signal(len(r), name=f"rec4_{k}") for k, r in enumerate(recs)]
        norms = [Signal(NORM_W * len(b), name=f"norm4_{k}") for k, b in enumerate(banks)]
        bits4 = Signal(W, name="bits4")
        c4 = ctl("ctl4")
        s4.d.comb += [c4.eq(c3), bits4.eq(bits3)] + [r4.eq(r3) for r4, r3 in zip(recs4, recs)]

        def rfield(sigs, i, lo, width):
            """Field [lo, lo + width) of lane i's pre-rounding record (one slice of a bank)."""
            k, j = bank_of(i)
            return sigs[k][RECV_W * j + lo: RECV_W * j + lo + width]

        def nfield(i, lo, width):
            k, j = bank_of(i)
            return norms[k][NORM_W * j + lo: NORM_W * j + lo + width]

        with s4.If(c3.rnd):
            for i in range(L):
                U = rfield(recs, i, R_V, VW)          # V as VW-bit two's complement
                vneg = rfield(recs, i, R_NEG, 1)
                with s4.If(~rfield(recs, i, R_FIN, 1)):
                    with s4.If(U[-1]):                # V < 0: |V| = ~U + 1
                        s4.d.comb += nfield(i, 0, MW + 1).eq(Cat((~U + 1)[:MW], ~vneg))
                    with s4.Else():
                        s4.d.comb += nfield(i, 0, MW + 1).eq(Cat(U[:MW], vneg))
        # one priority encoder per lane, on |V| whatever V's sign
        s4l = Module()
        m.submodules.s4_len = s4l
        lens = [Signal(BLW * len(b), name=f"len4_{k}") for k, b in enumerate(banks)]

        def lfield(i):
            k, j = bank_of(i)
            return lens[k][BLW * j: BLW * (j + 1)]

        with s4l.If(c4.rnd):
            for i in range(L):
                with s4l.If(~rfield(recs4, i, R_FIN, 1)):
                    lzc_lane(s4l, lfield(i), nfield(i, 0, MW))
        # stage 5 reads only this stage's signals, so the simulator evaluates it once per input
        # change rather than once after stage 4 and again after the encoders
        norms4, recs4l = ([Signal.like(x, name=f"{x.name}l") for x in norms],
                          [Signal.like(x, name=f"{x.name}l") for x in recs4])
        c4l, bits4l = ctl("ctl4l"), Signal(W, name="bits4l")
        s4l.d.comb += [c4l.eq(c4), bits4l.eq(bits4), *[a.eq(b) for a, b in zip(norms4 + recs4l, norms + recs4)]]
        norms, recs4, c4, bits4 = norms4, recs4l, c4l, bits4l

        # ---- stage 5: round ----------------------------------------------------------------
        # first the rounding shift of each lane (a signal: the shifter's steps read it), the
        # stage passing on what the rounding reads
        s5a = Module()
        m.submodules.s5_shift = s5a
        rsh = Signal(8 * L, name="round_sh")        # per lane: the shift - 1 (7 bits), normal
        passed = [Signal.like(v, name=f"{Value.cast(v).name}a") for v in (*norms, *recs4, *lens, c4, bits4)]
        s5a.d.comb += [p.eq(v) for p, v in zip(passed, (*norms, *recs4, *lens, c4, bits4))]
        nb, nr = len(norms), len(recs4)
        recs5 = passed[nb:nb + nr]
        # frexp_mant: V of bl bits placed in [0.5, 1), its T replaced by -bl in the record passed on
        mant = (c4.cls == Cls.LDEXP) & (c4.sub == FREXP_MANT)
        with s5a.If(c4.rnd):
            for i in range(L):
                with s5a.If(~rfield(recs4, i, R_FIN, 1)):
                    tb = Mux(mant, (T_BIAS - lfield(i))[:TW], rfield(recs4, i, R_T, TW))
                    s5a.d.comb += [rfield(recs5, i, R_T, TW).eq(tb),
                                   rsh[8 * i: 8 * i + 8].eq(round_shift(lfield(i), tb))]
        norms, recs4, lens, (c4, bits4) = passed[:nb], recs5, passed[nb + nr:-2], passed[-2:]

        s5 = Module()
        m.submodules.s5_round = s5
        r5 = Signal(W, name="r5")
        c5 = ctl("ctl5")
        s5.d.comb += c5.eq(c4)
        to_int = (c4.cls == Cls.LDEXP) & (c4.sub == FREXP_EXP)
        with s5.If(c4.rnd):
            for i in range(L):
                out = lane_word(r5, i)
                tb = rfield(recs4, i, R_T, TW)
                with s5.If(rfield(recs4, i, R_FIN, 1)):
                    s5.d.comb += out.eq(lane_word(bits4, i))
                with s5.Elif(to_int):           # frexp_exp: the exponent of V's leading bit, + 1
                    s5.d.comb += out.eq(fit((tb + lfield(i) - T_BIAS).as_signed(), 32))
                with s5.Else():
                    round_lane(s5, out, nfield(i, 0, MW), lfield(i), nfield(i, MW, 1), tb,
                               rfield(recs4, i, R_ZS, 1), rsh[8 * i: 8 * i + 8])
        with s5.Else():
            s5.d.comb += r5.eq(bits4)

        # ---- stage 6: omod; stage 7: clamp -----------------------------------------------
        s6 = Module()
        m.submodules.s6_omod = s6
        r6 = Signal(W, name="r6")
        c6 = ctl("ctl6")
        s6.d.comb += c6.eq(c5)
        with s6.If(c5.omod == 0):
            s6.d.comb += r6.eq(r5)
        with s6.Else():
            s6.d.comb += r6.eq(Cat(fit(omod_lane(c5.omod, Opnd(r5, None, i)), 32) for i in range(L)))
        s7 = Module()
        m.submodules.s7_clamp = s7
        with s7.If(c6.clamp):
            s7.d.comb += self.d.eq(Cat(fit(clamp_lane(Opnd(r6, None, i)), 32) for i in range(L)))
        with s7.Else():
            s7.d.comb += self.d.eq(r6)
        return m
