"""Per-lane FP32 datapath builders for :class:`hdl.simd.valu_fp.VALUFloat`.

Every function here builds the Amaranth expressions (or ``Module`` statements) of ONE lane from
slices of the stage signals of ``VALUFloat``; the component calls them once per lane and the
lanes share nothing.  The semantics are those of ``sim/fp32.py`` (docs/fp32.md), bit for bit.

Simulation-speed rules followed here:

* Amaranth's Python simulator compiles an expression tree literally: a sub-expression used
  twice is evaluated twice.  Values that are needed several times are therefore kept in stage
  signals (slices of a signal are cheap) and the datapath is cut into stages; inside a stage,
  ``m.If``/``m.Switch`` evaluate a test once and guard several assignments.
* ``Mux`` and ``Switch`` evaluate only the selected branch, so special cases cost nothing
  on the common path.
* Wide operators (a 24 x 24 multiply, a variable shift) are one Python operation each.

Number representation between stages: a finite result that still needs rounding is carried
as the two terms of a signed integer ``V = a +- b`` (stage 3; one adder sums them for every
class, :func:`fma_sum`), then as V, with an exponent ``T`` (value = V x 2^T, exact, except
that bits of the fma's addend below the window are ORed into V's lsb, which rounds
identically -- see :func:`fma_rec`).  T is stored biased by ``T_BIAS`` so that the exponent
arithmetic stays unsigned.  ``round_lane`` rounds it to float32 with ties to even, gradual
underflow and overflow to infinity (docs/fp32.md §5.2).

The datapath of a lane is the textbook single-path FMA: the 24 x 24 significand product at a
fixed place of a 77-bit window; one alignment shifter (:func:`align`) that places the addend
in it with a sticky bit below, and also serves fract (the fraction bits), ldexp (the
significand) and the float -> int conversions (the integer part); one adder for the fma, the
int -> float conversions, fract and ldexp; a bit-length encoder (:func:`lzc_lane`); one
rounding shifter for normal and denormal results (:func:`round_lane`).  Min/max, min3/max3/med3
and the compares share one set of three comparators (:func:`order_bits`).
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Mux, Value, signed

__all__ = [
    "VW", "TW", "T_BIAS", "BLW", "MW", "REC_W", "NORM_W", "R_T", "R_ZS", "R_FIN", "R_NEG",
    "R_V", "RECV_W", "FIN_REC", "record", "terms_of", "A_W", "B_W", "fit", "rep", "swar_unpack", "swar_spec",
    "Opnd", "fma_special", "fma_lane", "fma_shift", "align", "ALIGN_W",
    "jammed", "f2i_shift", "fract_shift", "LDEXP_SHIFT", "fma_sum", "TERMS_W", "minmax_lane", "order_bits",
    "MINMAX_OPS", "cmp_bit", "class_bit",
    "f2i_bits", "rint_bits", "RINT_OPS", "fract_lane", "ldexp_lane", "LDEXP", "FREXP_MANT", "FREXP_EXP",
    "i2f_terms", "I2F_REC",
    "lzc_lane", "round_shift", "round_lane", "omod_lane", "clamp_lane",
]

# ---------------------------------------------------------------------------------------
# Widths of the pre-rounding record (one per lane, see VALUFloat stage 3).
VW = 78             #: signed width of V (|V| < 2^77, see fma_lane)
TW = 10             #: width of T + T_BIAS (-512 <= T <= 511)
T_BIAS = 512
BLW = 7             #: width of the bit length of |V| (0 .. 77)
MW = VW - 1         #: width of |V|
# Pre-rounding record (stage 3 -> 5), LSB first: T + T_BIAS, zsign (sign of an exact zero),
# fin (the lane's result is final, in the bits vector), neg (negate V), and from the adder
# stage on V (two's complement).
R_T, R_ZS, R_FIN, R_NEG, R_V = 0, TW, TW + 1, TW + 2, TW + 3
REC_W = R_V         #: stage 3's record, without V
RECV_W = R_V + VW   #: the record with V (from the adder stage on)
A_W, B_W = 51, 77   #: widths of the terms a (below 2^51) and b (below 2^77) of V = a +- b
TERMS_W = A_W + B_W + 1  #: the terms of V, per lane: a, b, sub
NORM_W = MW + 1  #: stage 4 record, LSB first: |V|, sign of the result

QUIET = 0x0040_0000
SIGN = 0x8000_0000
INF = 0x7F80_0000
DEFAULT_NAN = 0xFFC0_0000
ONE = 0x3F80_0000
ALMOST_ONE = 0x3F7F_FFFF

# fma_lane's window: the product's lsb at bit 3, the addend's at bit s <= 53 (the product,
# below 2^51, stays under a quarter of the addend's lsb there).
_P_SHIFT = 3
_S_MAX = 53


def fit(v: Value, width: int) -> Value:
    """``v`` as exactly ``width`` bits: truncated, or sign-/zero-extended by its own signedness
    (``Cat`` packs its parts at their own widths, so record fields must be exact)."""
    v = Value.cast(v)
    if len(v) >= width:
        return v[:width]
    if v.shape().signed:
        return (v + Const(0, signed(width)))[:width]
    return Cat(v, Const(0, width - len(v)))


#: The record of a lane whose result is final.
FIN_REC = 1 << R_FIN


def record(t: Value, zsign=0, neg=0) -> Value:
    """Stage 3's record of a value (-1)^neg x V x 2^(t - T_BIAS), V the sum of its terms."""
    return Cat(fit(t, TW), zsign, Const(0, 1), neg)


def terms_of(a: Value, b: Value = Const(0, 1), sub=0) -> Value:
    """The terms of V = a + b, or a - b when ``sub`` (non-negative a < 2^51, b < 2^77)."""
    return Cat(fit(a, A_W), fit(b, B_W), sub)


def rep(value: int, lanes: int, width: int = 32) -> int:
    """The integer with ``value`` in every ``width``-bit lane slot (a SWAR constant)."""
    return sum(value << (width * i) for i in range(lanes))


def _tree(op, items):
    """Balanced reduction (keeps the expression depth logarithmic)."""
    items = list(items)
    while len(items) > 1:
        items = [op(items[k], items[k + 1]) if k + 1 < len(items) else items[k]
                 for k in range(0, len(items), 2)]
    return items[0]


def swar_unpack(v: Value, lanes: int) -> Value:
    """Per 32-bit lane of ``v`` (float32 bits): ``M | E << 24`` with bitwise logic only.

    ``M`` (24 bits) is the significand with the hidden bit (0 for zero and denormals) and ``E``
    (8 bits) the exponent field with 0 replaced by 1, so that a finite x = M x 2^(E - 150).
    No carries cross lane boundaries (only AND/OR/shifts by constants).
    """
    e = v & rep(0x7F80_0000, lanes)
    hid = _tree(lambda p, q: p | q, [e >> k for k in range(8)]) & rep(0x0080_0000, lanes)
    lo = (v & rep(0x007F_FFFF, lanes)) | hid
    hi = ((v << 1) & rep(0xFF00_0000, lanes)) | ((hid ^ rep(0x0080_0000, lanes)) << 1)
    return (lo | hi)[:32 * lanes]


def swar_spec(v: Value, lanes: int) -> Value:
    """Bit 23 of every 32-bit lane: the exponent field of ``v`` is 255 (inf or NaN)."""
    e = v & rep(0x7F80_0000, lanes)
    return _tree(lambda p, q: p & q, [e >> k for k in range(8)]) & rep(0x0080_0000, lanes)


class Opnd:
    """Slices of one float32 operand of one lane.

    Parameters
    ----------
    word : Signal
        All lanes of the operand (lane ``i`` at bits ``[32 i + 31 : 32 i]``).
    unpacked : Signal or None
        The :func:`swar_unpack` of ``word`` (significand and exponent), if available.
    lane : int
        Lane index.
    """

    def __init__(self, word, unpacked, lane: int):
        self._w, self._u, self._b = word, unpacked, 32 * lane

    def bits(self, lo: int, width: int) -> Value:
        """Bits ``[lo + width - 1 : lo]`` of the operand."""
        return self._w[self._b + lo: self._b + lo + width]

    @property
    def word(self):
        return self.bits(0, 32)

    @property
    def mag(self):
        return self.bits(0, 31)

    @property
    def exp(self):
        return self.bits(23, 8)

    @property
    def frac(self):
        return self.bits(0, 23)

    @property
    def sign(self):
        return self.bits(31, 1)

    @property
    def quiet_bit(self):
        return self.bits(22, 1)

    @property
    def m(self):
        """Significand with hidden bit (24 bits)."""
        return self._u[self._b: self._b + 24]

    @property
    def E(self):
        """Exponent field, 0 replaced by 1 (8 bits)."""
        return self._u[self._b + 24: self._b + 32]

    def is_nan(self):
        return self.mag > INF

    def is_inf(self):
        return self.mag == INF

    def is_zero(self):
        return self.mag == 0

    def is_snan(self):
        return (self.mag > INF) & ~self.quiet_bit

    def quieted(self):
        return self.word | QUIET


# ---------------------------------------------------------------------------------------
# Stage 3: add / sub / mul / fma (one fused datapath)
def fma_special(x: Opnd, y: Opnd, z: Opnd, sp, zneg) -> Value:
    """Result of x * y + z when an operand is inf or NaN (docs/fp32.md §2 rules 1-2).

    ``zneg`` undoes the negation of src1 that v_sub/v_subrev apply to z, so that a NaN there
    keeps its own sign; ``sp`` is the sign of the product.
    """
    p_inf = x.is_inf() | y.is_inf()
    invalid = (p_inf & (x.is_zero() | y.is_zero())) | (p_inf & z.is_inf() & (sp ^ z.sign))
    return Mux(x.is_nan(), x.quieted(),
           Mux(y.is_nan(), y.quieted(),
           Mux(z.is_nan(), z.quieted() ^ Cat(Const(0, 31), zneg),
           Mux(invalid, DEFAULT_NAN,
           Mux(p_inf, Cat(Const(INF, 31), sp), z.word)))))


def fma_lane(m, rec, terms, x: Opnd, y: Opnd, z: Opnd, B, hi, sp, sub, zsign, P=None):
    """Statements that fill the pre-rounding record ``rec`` of x*y + z, but for its V, and
    ``terms``, the two terms whose sum (:func:`fma_sum`, a stage later) is V.

    Finite operands only (the caller handles inf/NaN).  With M the significands and
    E the exponents (:func:`swar_unpack`), P = Mx*My (48 bits) weighs 2^ep, ep = Ex+Ey-300,
    and the addend Mz weighs 2^ec, ec = Ez-150; d = ec - ep.  The textbook single-path
    alignment: the product sits at a fixed place of a window, a = P << 3 (T = ep - 3), and one
    shifter places the addend at s = d + 3 in it, b = Mz << s, clamped to 0 <= s + 24 <= 77
    (``B`` = :func:`align` by :func:`fma_shift`, ``hi`` its clamp bit):

    * 0 <= s <= 53: exact; |V| < 2^77.
    * s < 0: the bits of Mz shifted out are ORed into b's lsb (a sticky bit; s <= -24
      leaves b = 1).
    * s > 53, or a zero product (a zero addend excepted): b = Mz << 53, T = ec - 53; a stays
      P << 3, below 2^51 (the product's true place is lower still).

    Why the sticky bit rounds alike: let u = 2^T. The small term's lost part f lies in
    (0, 1) u, so the exact sum lies strictly between two consecutive multiples of u, n u and
    (n + 1) u; the large term is a multiple of 2u, so the term with its lsb set makes V the
    odd one of n and n + 1. If the result's rounding bit weighs at least 2u, every rounding
    boundary (a representable value or a midpoint) is a multiple of 2u, and no multiple of
    2u lies strictly between (n - 1) u and (n + 1) u for odd n: the exact sum and V round
    alike. The rounding bit does weigh that much: bits are lost only when ec < ep - 3, which
    (ec >= -149) makes ep > -146, so at most one of x, y is denormal and P >= 2^23; the addend
    is below 2^(ec+24) <= 2^(ep+20), the sum above 2^(ep+22), its ulp at least 2^(ep-1), the
    rounding bit 2^(ep-2) = 2u.

    Why the clamp rounds alike: for s > 53 the true product and P << 3 (in units of u) both
    lie in (0, 1/4) Mz's ulp; so do their effects on the sum, which is at least Mz's ulp times
    2^23 - 1/4 (a normal addend: its rounding bit weighs at least a quarter of Mz's ulp) or is
    rounded at 2^-150 = half Mz's ulp (a denormal one): the same rounding for both, and no
    boundary (a multiple of that quarter) between them.

    The sign of an exact zero (``zsign``) is that of the IEEE sum of two zeros: negative only
    when the product and the addend are both negative (x - x = +0 in round to nearest).
    ``sp`` is the sign of the product, ``sub`` = sp xor sign(z) (an effective subtraction);
    the record holds V / (-1)^sp = a +- b and neg = sp. ``P``: the product of the
    significands when a multiplier outside the unit computes it (``hdl/simd/lanemul.py``).
    The adder is in the next stage, which reads the terms from signals (``TERMS_W`` bits per
    lane: a, b, sub).
    """
    P = x.m * y.m if P is None else P
    t = Mux(hi, z.E + (T_BIAS - 150 - _S_MAX), x.E + y.E + (T_BIAS - 300 - _P_SHIFT))
    m.d.comb += [terms.eq(terms_of(P << _P_SHIFT, jammed(B), sub)), rec.eq(record(t, zsign, sp))]


def _ds(x: Opnd, y: Opnd, z: Opnd) -> Value:
    # ds = s + 512 in [158, 917] = Ez - Ex - Ey + 665, written without a subtraction
    # (~E = 255 - E) so that the simulator keeps to unsigned arithmetic
    return (z.E + ~x.E + ~y.E + 155)[:10]


def fma_shift(m, out, x: Opnd, y: Opnd, z: Opnd):
    """Statements: ``out`` = the addend's shift in :func:`fma_lane`, s + 24 clamped to
    [0, 77] (7 bits), and above it the clamp bit ``hi``: s > 53, or a zero product (a zero
    addend excepted)."""
    ds = _ds(x, y, z)
    with m.If(((ds >= 512 + _S_MAX) | x.is_zero() | y.is_zero()) & (z.m != 0)):
        m.d.comb += out.eq(Cat(Const(_S_MAX + 24, 7), 1))
    with m.Elif(ds >= 512 - 24):            # s + 24 = ds - 488, modulo 128
        m.d.comb += out.eq((ds + (1024 - 488))[:7])


#: Width of the alignment shifter's result: Mz shifted up by 0 .. 77.
ALIGN_W = _S_MAX + 48


def align(z: Opnd, sh: Value) -> Value:
    """The one alignment shifter of the unit: Mz << ``sh`` (``ALIGN_W`` bits).  The fma's
    addend, fract's fraction bits, ldexp's significand and the float -> int conversions' integer
    part all come out of it (the caller chooses ``sh`` by operation class)."""
    return (z.m << sh)[:ALIGN_W]


def jammed(B: Value) -> Value:
    """The aligned addend in units of bit 24 of ``B`` (:func:`align`), the bits below ORed into
    its lsb (the sticky bit of :func:`fma_lane`)."""
    return Cat(B[24] | (B[:24] != 0), B[25:])


def fma_sum(terms: Value) -> Value:
    """V = a + b, or a - b when ``sub``, in VW-bit two's complement, from one lane's
    ``terms`` (:func:`fma_lane`): one adder for every alignment case."""
    a, b, sub = terms[:A_W], terms[A_W:A_W + B_W], terms[A_W + B_W]
    return (a + (Cat(b, Const(0, VW - B_W)) ^ Mux(sub, (1 << VW) - 1, 0)) + sub)[:VW]


# ---------------------------------------------------------------------------------------
# Stage 3: min / max / med3
def _key(v: Opnd) -> Value:
    """Unsigned 32-bit key ordered like the float value (-0 < +0)."""
    return Mux(v.sign, v.word ^ 0xFFFF_FFFF, v.word ^ 0x8000_0000)


def _nkey(v: Opnd, for_max) -> Value:
    """33-bit key with NaN above every number (a NaN never wins a *_num selection), reversed
    but for NaN when ``for_max`` (a run-time bit): the max key is the min key inverted."""
    return Mux(v.is_nan(), 1 << 32, _key(v) ^ Mux(for_max, 0xFFFF_FFFF, 0))


#: The selections :func:`minmax_lane` makes, and the bit of its ``kind`` each sets.
MINMAX_OPS = {"min_num": 0, "max_num": 0, "minimum": 1, "maximum": 1, "min3": 2, "max3": 2, "med3": 3}


def order_bits(for_max, x: Opnd, y: Opnd, z: Opnd):
    """The three compares of :func:`minmax_lane`, x before y, y before z, x before z, in the
    order of :func:`_nkey` (``cmp_bit`` takes the first, with ``for_max`` 0)."""
    kx, ky, kz = (_nkey(v, for_max) for v in (x, y, z))
    return kx < ky, ky < kz, kx < kz


def minmax_lane(m, out, kind: Value, order, x: Opnd, y: Opnd, z: Opnd):
    """Statements: ``out`` = v_min_num / max_num / minimum / maximum / min3_num / max3_num /
    med3_num, ``kind`` one-hot (:data:`MINMAX_OPS`: num, IEEE, three operands, median),
    ``order`` the :func:`order_bits` of the operands (reversed for the max ops).

    NaN rules of docs/fp32.md §2 rules 3-5: *_num return the non-NaN operand (the first
    operand's quiet NaN when all are NaN); minimum/maximum propagate sNaN(x), sNaN(y),
    qNaN(x), qNaN(y) in that order; med3 with a NaN operand is min3_num.

    All seven share the three compares of the keys (NaN above every number; reversed for the
    max ops). Without NaNs those keys order the operands as the plain keys do, so med3's median
    and the IEEE minimum/maximum (which decide NaNs first) take the same compares.  The
    selections decide only which operand is the result and whether it is quieted (a quiet
    NaN is unchanged by it): one three-way multiplexer of words (a ``Switch``: the simulator
    evaluates the index once).
    """
    xy, yz, xz = order
    two, ieee, three, med = (kind[k] for k in range(4))
    xn, yn, zn = x.is_nan(), y.is_nan(), z.is_nan()
    # operand index (0 x, 1 y, 2 z) of each selection
    pick2 = Mux(xy, 0, 1)
    pick3 = Mux(xy, Mux(xz, 0, 2), Mux(yz, 1, 2))
    # med3 without NaNs: the median; but the pseudocode compares max3 with S0, then S1, as
    # floats (+0 == -0): when the maximum is a zero, the result is max_num of the two operands
    # after the first zero (med3(-0, +0, -1) = +0)
    median = Mux(xy, Mux(yz, 1, Mux(xz, 2, 0)), Mux(yz, Mux(xz, 0, 2), 1))
    top_zero = Mux(xy, Mux(yz, z.is_zero(), y.is_zero()), Mux(xz, z.is_zero(), x.is_zero()))
    later = Mux(x.is_zero(), Mux(yz, 2, 1), Mux(y.is_zero(), Mux(xz, 2, 0), Mux(xy, 1, 0)))
    # a NaN result is x's when every operand is NaN (*_num), else the NaN order of
    # minimum/maximum
    ieee_pick = Mux(x.is_snan() | (xn & ~y.is_snan()), 0, Mux(yn, 1, pick2))
    pick = Mux(two, Mux(xn & yn, 0, pick2),
           Mux(ieee, ieee_pick,
           Mux(three | xn | yn | zn, Mux(xn & yn & zn, 0, pick3),
               Mux(top_zero, later, median))))
    quiet = Cat(Const(0, 22), Mux(two, xn & yn, Mux(ieee, xn | yn, xn & yn & zn)))
    with m.Switch(pick):
        for k, v in enumerate((x, y, z)):
            with m.Case(k):
                m.d.comb += out.eq(v.word | quiet)


# ---------------------------------------------------------------------------------------
# Stage 3: compares, class
def cmp_bit(cond: Value, lt: Value, x: Opnd, y: Opnd) -> Value:
    """v_cmp_<cond>_f32: ``cond`` is the 4-bit condition index (VOPC opcode - 16), ``lt`` the
    first of :func:`order_bits` (the min/max unit's compare of x and y, not reversed).

    Its bits are the answers for (lt, eq, gt, unordered): f=0000, lt=0001, eq=0010, ...,
    t=1111, so the result is one bit of ``cond`` chosen by the relation of x and y.
    -0 == +0; any NaN makes the relation unordered.
    """
    return Mux(x.is_nan() | y.is_nan(), cond[3],
           Mux((x.word == y.word) | ((x.mag | y.mag) == 0), cond[1],
           Mux(lt, cond[0], cond[2])))


def class_bit(x: Opnd, y: Opnd) -> Value:
    """v_cmp_class_f32: bit class(x) of the mask y (0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
    4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf)."""
    def yb(k):
        return y.bits(k, 1)
    return Mux(x.is_nan(), Mux(x.quiet_bit, yb(1), yb(0)),
           Mux(x.is_inf(), Mux(x.sign, yb(2), yb(9)),
           Mux(x.is_zero(), Mux(x.sign, yb(5), yb(6)),
           Mux(x.exp == 0, Mux(x.sign, yb(4), yb(7)),
               Mux(x.sign, yb(3), yb(8))))))


# ---------------------------------------------------------------------------------------
# Stage 3: conversions and rounding to integral values
def f2i_shift(x: Opnd) -> Value:
    """The alignment shift of the float -> int conversions: Mx << (E - 127), so that the
    integer part of |x| in [1, 2^32) is bits [23, 55) of :func:`align`."""
    return (x.E + 1)[:7]


def f2i_bits(is_signed: Value, x: Opnd, B: Value) -> Value:
    """v_cvt_i32_f32 (``is_signed``) / v_cvt_u32_f32: truncate toward zero, saturate, NaN -> 0.
    ``B`` is :func:`align` by :func:`f2i_shift` (a signed result saturates from 2^31)."""
    t = B[23:55]
    signed_r = Mux(x.is_nan() | (x.exp < 127), 0,
                   Mux(x.exp >= 158, Mux(x.sign, 0x8000_0000, 0x7FFF_FFFF), Mux(x.sign, -t, t)))[:32]
    unsigned_r = Mux(x.is_nan() | x.sign | (x.exp < 127), 0, Mux(x.exp >= 159, 0xFFFF_FFFF, t))[:32]
    return Mux(is_signed, signed_r, unsigned_r)


#: The roundings :func:`rint_bits` makes, in the order of its ``sub`` index.
RINT_OPS = ("floor", "ceil", "trunc", "rndne")


def rint_bits(sub: Value, x: Opnd) -> Value:
    """v_floor / v_ceil / v_trunc / v_rndne_f32 (roundToIntegral; zero keeps the input sign),
    ``sub`` the run-time index into :data:`RINT_OPS`.

    For 1 <= |x| < 2^23 the f = 150 - exp fraction bits are dropped from the bit pattern
    after adding 0 (trunc), 2^f - 1 (away from zero: floor of a negative, ceil of a positive)
    or 2^(f-1) - 1 + lsb (ties to even: 2^(f-1) = 2^f - 1 xor 2^(f-1) - 1 when the lsb is
    set); a carry ripples into the exponent field. One adder and one mask serve the four.
    """
    f = (150 - x.exp)[:5]
    signed0 = x.word & SIGN
    trunc, rndne = sub == RINT_OPS.index("trunc"), sub == RINT_OPS.index("rndne")
    away = Mux(sub == RINT_OPS.index("floor"), x.sign, ~x.sign)     # (ceil: a positive x)
    low = ~(Const(0xFFFF_FFFF, 32) << f)[:32]       # the f fraction bits
    addend = Mux(trunc, 0, Mux(rndne, Mux((x.word >> f)[0], low ^ (low >> 1), low >> 1), Mux(away, low, 0)))
    mid = (x.word + addend)[:32] & ~low
    up = Mux(rndne, (x.exp == 126) & (x.frac != 0), away & (x.mag != 0))
    small = Mux(~trunc & up, ONE | signed0, signed0)
    return Mux(x.exp >= 150, Mux(x.is_nan(), x.quieted(), x.word),
               Mux(x.exp < 127, small, mid))


def fract_shift(x: Opnd) -> Value:
    """The alignment shift of v_fract: 72 - s, s = 150 - E (x's fraction bits) clamped to
    [0, 48], so that bits [24, 72) of :func:`align` are the fraction bits times 2^(48 - s)."""
    return Mux(x.exp >= 150, 72, Mux(x.exp <= 102, 24, (x.E + 50)[:7]))


def fract_lane(m, rec, terms, bits, x: Opnd, B: Value, fin_rec):
    """v_fract_f32 = minimum(x - floor(x), 0x3F7FFFFF), the subtraction rounded once.

    ``B`` = :func:`align` by :func:`fract_shift`: f = B[24:72] is frac(|x|) in units of
    2^-48 (of 2^(E-150) when E <= 102, a number below 2^-24).  x >= 0: f (exact).  x < 0:
    1 - frac(|x|) = 2^48 - f units, 0 for f = 0 (an integer x); stage 5 rounds it.
    For -2^-24 < x < 0 the result is 0x3F7FFFFF whichever way 1 - |x| rounds (1.0 is capped).
    NaN -> quiet, +-inf -> DEFAULT_NAN.
    """
    with m.If(x.exp == 255):
        m.d.comb += [rec.eq(fin_rec), bits.eq(Mux(x.frac != 0, x.quieted(), DEFAULT_NAN))]
    with m.Elif(x.sign & (x.exp <= 102) & (x.mag != 0)):
        m.d.comb += [rec.eq(fin_rec), bits.eq(ALMOST_ONE)]
    with m.Else():
        f = B[24:72]
        up = x.sign & (f != 0)
        m.d.comb += [rec.eq(record(Mux(x.exp <= 102, x.E + (T_BIAS - 150), T_BIAS - 48))),
                     terms.eq(terms_of(Cat(Const(0, 48), up), f, up))]


#: The alignment shift of v_ldexp: Mx in units of bit 24 of :func:`align`.
LDEXP_SHIFT = 24


#: ``sub`` of the ldexp class: v_ldexp_f32, v_frexp_mant_f32, v_frexp_exp_i32_f32.
LDEXP, FREXP_MANT, FREXP_EXP = 0, 1, 2


def ldexp_lane(m, rec, terms, bits, x: Opnd, y: Opnd, B: Value, fin_rec, sub: Value):
    """v_ldexp_f32: x * 2^n rounded once, n = int32 y clamped to +-320 (from +-278 on every finite
    non-zero x over- or underflows; T stays within 10 bits).  +-0, +-inf unchanged, NaN ->
    quiet.  ``B``: :func:`align` by ``LDEXP_SHIFT``.

    The clamp needs no comparator: with m = n, or ~n = -n - 1 for a negative n, |n| > 320
    (n >= 320, n <= -321) is m >= 320 = 2^8 + 2^6, a test of m's high bits.

    The frexp ops (``sub``) take n = 0: stage 4 finds the significand's bit length bl, so
    x = V * 2^(T - T_BIAS) with V of bl bits, and stage 5 gives the exponent T - T_BIAS + bl
    (frexp_exp) or V placed in [0.5, 1) (frexp_mant, exact). For +-0, +-inf and NaN,
    frexp_mant gives x (a NaN quieted) and frexp_exp 0."""
    with m.If((x.exp == 255) | x.is_zero()):
        m.d.comb += [rec.eq(fin_rec), bits.eq(Mux(sub == FREXP_EXP, 0, Mux(x.is_nan(), x.quieted(), x.word)))]
    with m.Else():
        n, neg = y.word, y.sign
        mag = n ^ Mux(neg, 0xFFFF_FFFF, 0)
        big = (mag[9:31] != 0) | (mag[8] & (mag[7] | mag[6]))
        n = Mux(sub != LDEXP, 0, Mux(big, Mux(neg, -320 & 0x3FF, 320), n[:TW]))     # TW bits, two's complement
        m.d.comb += [rec.eq(record(x.E + (T_BIAS - 150) + n, neg=x.sign)), terms.eq(terms_of(0, B[24:48]))]


def i2f_terms(is_signed: Value, x: Opnd) -> Value:
    """Terms of v_cvt_f32_i32 (``is_signed``) / u32 / ubyteN: V = the integer (a negative
    int32 is its bits minus 2^32), T = 0 (rounded by stage 5)."""
    neg = is_signed & x.sign
    return terms_of(x.word, Cat(Const(0, 32), neg), neg)


#: Stage 3's record of an int -> float conversion (T = 0).
I2F_REC = T_BIAS


# ---------------------------------------------------------------------------------------
# Stage 4: bit length of |V|
def lzc_lane(m, out, mag: Value):
    """Statements: ``out`` = bit length of the non-negative ``mag`` (0 for 0).

    A binary search over halves aligned to powers of two (nested ``If``: only the tests on the
    taken path are evaluated); each test looks only at its half, the bits above being known
    zero, so that the tests and the constant leaves make the usual tree of a priority encoder.
    """
    w = len(mag)

    def search(lo, hi):                 # mag[lo:hi] holds the leading one (or lo = 0 and mag = 0)
        if hi - lo == 1:
            if lo:
                m.d.comb += out.eq(lo + 1)
            else:
                with m.If(mag[0]):
                    m.d.comb += out.eq(1)
            return
        mid = (lo + hi) // 2
        if mid >= w:
            search(lo, mid)
            return
        with m.If(mag[mid:min(hi, w)] != 0):
            search(mid, hi)
        with m.Else():
            search(lo, mid)

    search(0, 1 << (w - 1).bit_length())


# ---------------------------------------------------------------------------------------
# Stage 5: round to float32
_RNE_W = 26        # bits of a rounded result: a 24-bit significand, its carry, a denormal's


def _shr_sticky(x: Value, sh: Value, width: int):
    """``(x >> sh)[:width]`` (whose bits above ``width`` must be 0) and whether a bit of ``x``
    below 2^sh is set.

    A log shifter with the large steps first: after the step by 2^k the remaining steps move
    the bits by less than 2^k, so only ``width + 2^k - 1`` bits are kept.  Each step is a shift
    by a value with one variable bit (the simulator evaluates its input once).  The sticky bit
    is in two parts: the bits below ``sh`` rounded down to a multiple of 8 (a mask with 13
    distinct groups), and those of the next 0 .. 7 bits (from the steps by 8 and more).
    """
    w = len(x)
    coarse = (x & ~(Const((1 << w) - 1, w) << Cat(Const(0, 3), sh[3:]))[:w]) != 0
    for k in reversed(range(len(sh))):
        if k == 2:
            fine = (x & ~(Const(0x7F, 7) << sh[:3])[:7])[:7] != 0
        x = (x >> Cat(Const(0, k), sh[k]))[:width + (1 << k) - 1]
    return x[:width], coarse | fine


def round_shift(bl: Value, tb: Value) -> Value:
    """The rounding shift of :func:`round_lane` minus 1 (7 bits) and above it whether the
    result is normal.

    One rounding shifter for both results, by sh - 1 (its last bit is the rounding bit): a
    normal result keeps 24 significant bits (sh = bl); a denormal one bits down to 2^-149:
    sh = -125 - T = 387 - tb, which leaves nothing when >= 128 (tb < 259; |V| < 2^77)."""
    is_normal = tb + bl >= T_BIAS - 125
    return Cat(Mux(is_normal, (bl + 127)[:7], (~tb + (T_BIAS - 125))[:7]), is_normal)


def round_lane(m, out, mag: Value, bl: Value, neg: Value, tb: Value, zsign: Value, shn: Value):
    """Statements: ``out`` = float32 bits of (-1)^neg x mag x 2^(tb - T_BIAS), RNE.

    ``mag`` = |V| with bit length ``bl`` (0: an exact zero, signed ``zsign``), ``shn`` its
    :func:`round_shift`.  Gradual underflow (the last kept bit is never below 2^-149) and
    overflow to infinity; the rounding carry ripples into the exponent field (up to infinity),
    as docs/fp32.md §5.2.
    """
    e1 = tb + bl                                # exponent of the leading bit + 1 + T_BIAS
    sh_m1, is_normal = shn[:7], shn[7]
    qr, sticky = _shr_sticky(Cat(Const(0, 24), mag), sh_m1, _RNE_W + 1)
    # ties to even: up when the rounding bit is set and so is a bit below it or the lsb
    rounded = qr[1:] + (qr[0] & (sticky | qr[1]))
    normal = ((e1 + (1024 - (T_BIAS - 125)))[:8] << 23) + rounded
    denorm = Mux(tb < T_BIAS - 253, 0, rounded)
    value = Mux(e1 > T_BIAS + 128, INF, Mux(is_normal, normal, denorm)[:31])
    with m.If(bl == 0):
        m.d.comb += out.eq(Cat(Const(0, 31), zsign))
    with m.Else():
        m.d.comb += out.eq(Cat(value[:31], neg))


# ---------------------------------------------------------------------------------------
# Stages 6-7: output modifiers
def omod_lane(code: Value, r: Opnd) -> Value:
    """r * 2^k for the VOP3 ``omod`` code (1: k = 1, 2: k = 2, 3: k = -1), rounded like
    v_mul_f32 by 2.0, 4.0 or 0.5 (NaN -> quiet); one datapath for the three codes."""
    sgn = r.word & SIGN
    times4 = code == 2
    den = Mux(times4, Mux(r.mag < (1 << 22), r.mag << 2, (r.mag << 1) + (1 << 23)), r.mag << 1)[:31]
    up = Mux(r.exp == 0, den | sgn,
         Mux(r.exp >= Mux(times4, 253, 254), INF | sgn, (r.word + Mux(times4, 2 << 23, 1 << 23))[:32]))
    half = ((r.mag >> 1) + (r.bits(0, 1) & r.bits(1, 1)))[:31]
    down = Mux(r.exp >= 2, (r.word - (1 << 23))[:32], half | sgn)
    return Mux(r.exp == 255, Mux(r.is_nan(), r.quieted(), r.word), Mux(code == 3, down, up))


def clamp_lane(r: Opnd) -> Value:
    """The VOP3 clamp bit: NaN and x < 0 -> +0, x > 1.0 -> 1.0, else x (-0 stays -0)."""
    return Mux(r.is_nan() | (r.sign & ~r.is_zero()), 0, Mux(~r.sign & (r.word >= ONE), ONE, r.word))
