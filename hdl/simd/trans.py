"""The transcendental unit: v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32, v_log_f32.

:class:`TransUnit` implements the integer (fixed-point) algorithms of ``docs/fp32.md`` §5 bit
for bit: the same ROM tables, the same Newton-Raphson / Horner steps with the same truncations,
the same exact remainder corrections and the same ``round_pack`` back end, so that every result
equals ``sim.fp32`` (special cases and NaN payloads included). ``v_rcp_iflag_f32`` returns the
same value as ``v_rcp_f32`` (the ISA pseudocode differs only in the exception it may raise) and
shares its datapath.

Organisation
------------
``config.trans_lanes`` (8) physical lanes; a wave32 enters as one stream beat and is fed to the
lanes one *chunk* of 8 lanes per cycle, so a wave occupies the datapath for 4 cycles and the
unit accepts one wave every 4 cycles. The per-lane datapath is a 13-register pipeline with one
multiplier per stage that all operations share (its operands are selected by the operation):

====  =====================================================================================
reg   contents (written by the step that precedes it)
====  =====================================================================================
S0    the chunk's raw operands
S1    unpacked operand, ROM index, specials (a denormal operand reads as a signed zero)
S2    the ROM word (read as S1 is written, registered beside S2); exp: first Horner step
S3    step M1 (rcp ``M R0``, rsq ``Y0^2``, exp ``A2 r``, log ``M C``)
S4    M2 (rcp ``R0 E0``, rsq ``N Y0sq``, exp ``A1 r``, log ``P3 T``)
S5    M3 (rcp ``M R1``, rsq ``Y0 Eas``, exp ``T P`` = result significand, log ``A2 T``)
S6    M4 (rcp ``R1 E1s``, rsq ``Y1^2``, log ``A1 T``)
S7    M5 (rcp ``M Q``, rsq ``N Y1sq``, log ``T P``)
S8    rcp remainder correction; log result assembly; rsq M6 (``Y1 Ebs``)
S9    M7 (sqrt ``N Y2``, rsq ``Q N``)
S10   M8 (sqrt ``S^2``, rsq ``Q QN``)
S11   sqrt / rsq exact corrections: every operation now holds ``(sign, sig, scale, sticky)``
S12   ``round_pack`` part 1: leading-zero count and normalisation
out   ``round_pack`` part 2 (rounding, overflow, denormal flush), special-case mux
====  =====================================================================================

Timing: a wave accepted (``i.valid & i.ready``) in cycle *t* presents its result
(``o.valid``) in cycle *t* + :data:`LATENCY` (17 with 8 lanes: chunk 0 reaches the output
register after 14 cycles, chunk 3 three cycles later). With the output always ready and the
input always valid the unit accepts a wave every ``32 // trans_lanes`` cycles (4) and
delivers one every 4 cycles. ``o.valid & ~o.ready`` freezes the whole pipeline (one global
enable) and drops ``i.ready``. ``config.trans_mul_regs`` (the ``fpga`` preset's) puts
registers around each multiply of steps 1-9: its operands (1), and its product too (2), so
that neither the operand select nor the result's adders share a cycle with the multiply; each
adds 9 cycles to the latency.

ROM: one word of 128 bits per index (:data:`ROM_LAYOUT`, 128 words = 16 Kibit): the rcp seed,
the rsq seed, the 2^(j/64) entry and the log2 reciprocal and its logarithm, read through one
synchronous read port per lane (a block RAM per lane after synthesis). The tables are
generated here from their defining formulas (docs/fp32.md §5.3); ``tests/test_trans.py``
checks that they equal the literals of ``sim/fp32.py``.
"""
from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..isa_tables import OpId

__all__ = [
    "TransUnit", "TransIn", "TransOut", "Cls", "LATENCY", "ROM_LAYOUT", "FIELDS",
    "RCP_T0", "RSQ_T0", "EXP2_T", "EXP2_C", "LOG2_C", "LOG2_L", "LOG2_P", "rom_words", "CLS_OF",
]

WAVE = 32


# --------------------------------------------------------------------------------------
# ROM tables and coefficients (docs/fp32.md §5.3), computed with exact integer arithmetic or
# 80-digit decimals (no rounding ties occur).
def _tables():
    ctx = Context(prec=80)
    ln2 = ctx.ln(Decimal(2))

    def rnd(d: Decimal) -> int:
        return int(ctx.add(d, Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR"))

    def iroot(n: int, k: int) -> int:
        lo, hi = 0, 1 << (n.bit_length() // k + 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if mid ** k <= n else (lo, mid - 1)
        return lo

    # rcp seed: round(2^16 * 2/(lo + hi)) over [1 + i/128, 1 + (i+1)/128]
    rcp = tuple(round(Fraction(1 << 24, 257 + 2 * i)) for i in range(128))
    # rsq seed: round(2^16 * sqrt(2/(lo + hi))) over (1 + p) * [1 + j/64, 1 + (j+1)/64]
    rsq = []
    for p in range(2):
        for j in range(64):
            four_v = (4 << 39) // ((129 + 2 * j) * (1 + p))        # floor(4 * 2^32 * 2/(lo+hi))
            rsq.append((math.isqrt(four_v) + 1) // 2)              # round(sqrt(v))
    # 2^(j/64) in 1.31 fixed: round(x) = (floor(2x) + 1) // 2, 2x = (2^(2048 + j))^(1/64)
    exp2 = tuple((iroot(1 << (32 * 64 + j), 64) + 1) // 2 for j in range(64))
    exp2_c = tuple(rnd(ctx.multiply(ctx.power(ln2, k) / math.factorial(k), 1 << 30))
                   for k in (1, 2, 3))
    logc = (1024,) + tuple(round(Fraction(1 << 18, 257 + 2 * i)) for i in range(1, 127)) + (512,)
    logl = tuple(rnd(ctx.multiply(10 - ctx.divide(ctx.ln(Decimal(c)), ln2), 1 << 52))
                 for c in logc)
    logp = tuple(rnd(ctx.divide(Decimal((-1) ** k), (k + 1) * ln2) * (1 << 32)) for k in range(4))
    return rcp, tuple(rsq), exp2, exp2_c, logc, logl, logp


#: ``RCP_T0[i]`` = round(2^24 / (257 + 2i)): 1/m seed (0.16 fixed) for m in [1 + i/128, 1 + (i+1)/128].
#: ``RSQ_T0[64p + j]``: 1/sqrt(m') seed (0.16) for m' in (1 + p) [1 + j/64, 1 + (j+1)/64].
#: ``EXP2_T[j]`` = round(2^31 2^(j/64)). ``EXP2_C`` = round(2^30 ln2^k / k!), k = 1..3.
#: ``LOG2_C[i]`` ~ 1/m (1.10 fixed), ``LOG2_L[i]`` = -log2(LOG2_C[i] / 1024) (0.52 fixed),
#: ``LOG2_P`` = round(2^32 (-1)^k / ((k + 1) ln 2)), k = 0..3.
RCP_T0, RSQ_T0, EXP2_T, EXP2_C, LOG2_C, LOG2_L, LOG2_P = _tables()

#: One ROM word: every table's entry at one index (exp uses indices 0..63 only).
ROM_LAYOUT = data.StructLayout({
    "rcp": unsigned(16), "rsq": unsigned(16), "exp": unsigned(32),
    "logc": unsigned(11), "logl": unsigned(53),
})
ROM_DEPTH = 128


def rom_words() -> list[dict]:
    """The ROM contents, one dict of :data:`ROM_LAYOUT` fields per index.

    Returns
    -------
    list of dict
        128 words; ``exp`` is 0 above index 63.
    """
    return [{"rcp": RCP_T0[i], "rsq": RSQ_T0[i], "exp": EXP2_T[i] if i < 64 else 0,
             "logc": LOG2_C[i], "logl": LOG2_L[i]} for i in range(ROM_DEPTH)]


# --------------------------------------------------------------------------------------
# Operation classes and register layouts
class Cls(enum.Enum, shape=unsigned(3)):
    """Internal operation class (the datapath a wave takes)."""
    NONE = 0        # not a transcendental op: the result is 0
    RCP = 1
    RSQ = 2
    SQRT = 3
    EXP = 4
    LOG = 5


# The opcodes the unit executes, each with its class (the SIMD and the refusal list read it too).
CLS_OF = {
    OpId.V_RCP_F32: Cls.RCP, OpId.V_RCP_IFLAG_F32: Cls.RCP, OpId.V_RSQ_F32: Cls.RSQ,
    OpId.V_SQRT_F32: Cls.SQRT, OpId.V_EXP_F32: Cls.EXP, OpId.V_LOG_F32: Cls.LOG,
}

S10 = signed(10)

#: Shapes of every datapath register field, by datapath (``rp`` is the common round-pack input
#: ``(sign, sig, scale, sticky)``). The widths hold the ranges given in docs/fp32.md §5 (checked
#: over every significand by tests/test_trans.py against the model's intermediates).
FIELDS = {
    "rcp": {"idx": unsigned(7), "sign": unsigned(1), "M": unsigned(24), "scale": S10,
            "R0": unsigned(16), "E0": signed(32), "R1": unsigned(32), "E1s": unsigned(17),
            "Q": unsigned(25), "MQ": unsigned(49)},
    "rsq": {"idx": unsigned(7), "N": unsigned(25), "scale": S10, "Y0": unsigned(16),
            "Y0sq": unsigned(32), "Eas": signed(26), "Y1": unsigned(30), "Y1sq": unsigned(32),
            "Ebs": unsigned(18), "Y2": unsigned(31), "S": unsigned(26), "SS": unsigned(52),
            "Q": unsigned(26), "QN": unsigned(51), "Q2N": unsigned(77)},
    "exp": {"idx": unsigned(7), "r": unsigned(26), "n": signed(9), "A2": unsigned(29),
            "T": unsigned(32), "A1": unsigned(31), "P": unsigned(31)},
    "log": {"idx": unsigned(7), "M": unsigned(24), "e": signed(9), "near1": unsigned(1),
            "L": unsigned(53), "T": signed(28), "A2": signed(33), "A1": signed(34),
            "P": signed(35), "V": signed(60)},
    "rp": {"sign": unsigned(1), "sig": unsigned(63), "scale": S10, "sticky": unsigned(1)},
}


def _st(fam: str, names: str) -> data.StructLayout:
    return data.StructLayout({n: FIELDS[fam][n] for n in names.split()})


_RP = _st("rp", "sign sig scale sticky")

# Per-lane layout of S1 .. S11 (unions over the datapaths; "idx" first = ROM address at bit 0).
_LANE = [
    None,
    data.UnionLayout({"rcp": _st("rcp", "idx sign M scale"), "rsq": _st("rsq", "idx N scale"),
                      "exp": _st("exp", "idx r n"), "log": _st("log", "idx M e near1")}),
    data.UnionLayout({"rcp": _st("rcp", "sign M scale"), "rsq": _st("rsq", "N scale"),
                      "exp": _st("exp", "r n A2"), "log": _st("log", "M e near1")}),
    data.UnionLayout({"rcp": _st("rcp", "sign M scale R0 E0"), "rsq": _st("rsq", "N scale Y0 Y0sq"),
                      "exp": _st("exp", "r n T A1"), "log": _st("log", "e near1 L T")}),
    data.UnionLayout({"rcp": _st("rcp", "sign M scale R1"), "rsq": _st("rsq", "N scale Y0 Eas"),
                      "exp": _st("exp", "n T P"), "log": _st("log", "e near1 L T A2")}),
    data.UnionLayout({"rcp": _st("rcp", "sign M scale R1 E1s"), "rsq": _st("rsq", "N scale Y1"),
                      "exp": _RP, "log": _st("log", "e near1 L T A1")}),
    data.UnionLayout({"rcp": _st("rcp", "sign M scale Q"), "rsq": _st("rsq", "N scale Y1 Y1sq"),
                      "exp": _RP, "log": _st("log", "e near1 L T P")}),
    data.UnionLayout({"rcp": _st("rcp", "sign M scale Q MQ"), "rsq": _st("rsq", "N scale Y1 Ebs"),
                      "exp": _RP, "log": _st("log", "e near1 L V")}),
    data.UnionLayout({"rcp": _RP, "rsq": _st("rsq", "N scale Y2"), "exp": _RP, "log": _RP}),
    data.UnionLayout({"rp": _RP, "sqrt": _st("rsq", "N scale S"), "rsq": _st("rsq", "N scale Q QN")}),
    data.UnionLayout({"rp": _RP, "sqrt": _st("rsq", "N scale S SS"),
                      "rsq": _st("rsq", "N scale Q QN Q2N")}),
    _RP,
    data.StructLayout({"sign": 1, "x": 64, "E": signed(11), "sticky": 1, "zero": 1}),
]
_NSTAGES = len(_LANE)                   # S0 .. S12

_MUL_STEPS = 9                          # steps 1 .. 9 multiply


def latency(lanes: int, mul_regs: int = 0) -> int:
    """Cycles from ``i.valid & i.ready`` to ``o.valid`` of the same wave.

    Parameters
    ----------
    lanes : int
        Physical lanes (``config.trans_lanes``).
    mul_regs : int
        Registers around each step's multiply (``config.trans_mul_regs``).

    Returns
    -------
    int
        ``_NSTAGES + 1`` cycles for the first chunk, ``mul_regs`` more per multiplying step,
        plus one per further chunk.
    """
    return _NSTAGES + 1 + mul_regs * _MUL_STEPS + WAVE // lanes - 1


LATENCY = latency(8)

_INF = 0x7F800000
_DEFAULT_NAN = 0xFFC00000
_ONE = 0x3F800000
_QUIET = 0x00400000

#: Input and output stream payloads.
TransIn = data.StructLayout({"op": OpId, "a": unsigned(32 * WAVE), "tag": unsigned(16)})
TransOut = data.StructLayout({"d": unsigned(32 * WAVE), "tag": unsigned(16)})


# --------------------------------------------------------------------------------------
# Expression helpers (balanced trees: the simulator evaluates only the taken Mux branch).
def lzc(v):
    """Leading zeros of ``v`` within its width (the width itself when ``v`` is 0)."""
    w = len(v)
    if w == 1:
        return ~v[0]
    lw = w // 2
    hi, lo = v[lw:], v[:lw]
    return Mux(hi == 0, (w - lw) + lzc(lo), lzc(hi))


def sel(choices, default=0):
    """Mux chain: the value of the first ``(condition, value)`` pair whose condition holds."""
    out = default
    for cond, val in reversed(choices):
        out = Mux(cond, val, out)
    return out


def _unpack(a):
    """Split float32 bits into ``sign, M, e`` with |a| = M 2^(e - 23), M in [2^23, 2^24).

    Zero and denormals (read as zeros, docs/fp32.md §5.1), inf and NaN give meaningless values
    (the special-case mux overrides them).
    """
    return a[31], Cat(a[0:23], Const(1, 1)), a[23:31] - 127


def _round_pack_norm(rp):
    """``round_pack`` part 1: normalise ``sig`` so that bit 63 is its leading one."""
    sig = rp.sig
    v = Cat(sig, Const(0, 1))                              # 64 bits, bit 63 clear
    lz = lzc(v)
    x = (v << lz)[0:64]
    return {"sign": rp.sign, "x": x, "E": rp.scale + 63 - lz, "sticky": rp.sticky,
            "zero": sig == 0}


def round_pack_final(n):
    """``round_pack`` part 2: float32 bits of sign * x 2^(E - 63) (+ sticky), ties to even.

    Results below 2^-126 are rounded on the denormal grid (2^-149) and flushed to a zero of
    their sign unless they round up to 2^-126 (only from E = -127); overflow gives inf.
    """
    E = n.E
    normal = E >= -126
    # bits of x shifted out below the round bit: 39 (normal), 40 (E = -127, denormal grid)
    amt = Mux(normal, 39, 40)
    qr = n.x >> amt                                        # kept significand and round bit
    rest = (n.x & Mux(normal, (1 << 39) - 1, (1 << 40) - 1)) != 0
    q = qr[1:26]
    up = qr[0] & (rest | n.sticky | q[0])
    bits = (Mux(normal, E + 126, 0) << 23) + q + up
    ovf = (E > 127) | (bits >= _INF)
    flushed = n.zero | (E < -127) | ~(normal | bits[23])
    mag = Mux(flushed, 0, Mux(ovf, _INF, bits[0:31]))
    return Cat(mag[0:31], n.sign)


def specials(cls, a):
    """Special-case flag and result of one lane (docs/fp32.md §5.4-5.7); a denormal ``a``
    reads as a zero of its sign."""
    sign = a[31]
    mag = a[0:31]
    zero = a[23:31] == 0
    inf = mag == _INF
    nan = mag > _INF
    quiet = a | _QUIET
    pinf = inf & ~sign
    big = a[23:31] >= 135                                  # |a| >= 256 (exp)
    sgn = Cat(Const(0, 31), sign)
    table = {
        Cls.RCP: (zero | inf | nan,
                  sel([(nan, quiet), (zero, sgn | _INF)], sgn)),
        Cls.RSQ: (zero | inf | nan | sign,
                  sel([(nan, quiet), (pinf, 0), (zero, sgn | _INF)], _DEFAULT_NAN)),
        Cls.SQRT: (zero | inf | nan | sign,
                   sel([(nan, quiet), (pinf, _INF), (zero, sgn)], _DEFAULT_NAN)),
        Cls.EXP: (zero | big,
                  sel([(nan, quiet), (zero, _ONE), (sign, 0)], _INF)),
        Cls.LOG: (zero | inf | nan | sign,
                  sel([(nan, quiet), (pinf, _INF), (zero, 0xFF800000)], _DEFAULT_NAN)),
    }
    return table[cls]


# --------------------------------------------------------------------------------------
class TransUnit(wiring.Component):
    """The transcendental unit: ``config.trans_lanes`` lanes, one wave32 every 32 / lanes cycles.

    Parameters
    ----------
    config : hdl.config.DCUConfig
        ``trans_lanes`` (a divisor of 32) and ``trans_mul_regs`` (0 to 2) are used.

    Attributes
    ----------
    i : In(stream.Signature(TransIn))
        Waves to compute: ``op`` (an :class:`~hdl.isa_tables.OpId`: v_rcp_f32,
        v_rcp_iflag_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32 or v_log_f32; any other op gives
        0 in every lane), ``a`` the 32 operands (lane ``k`` in bits ``[32k + 31 : 32k]``,
        float32 bits after input modifiers) and ``tag``, returned with the result.
        ``ready`` does not depend on ``valid``; it is low while a wave is being fed to the
        lanes and while the output is stalled.
    o : Out(stream.Signature(TransOut))
        Results in input order: ``d`` (32 float32 results, same lane order) and ``tag``.
        ``o.valid`` rises :func:`latency` cycles after the wave was accepted.
    """

    def __init__(self, config):
        lanes = config.trans_lanes
        if lanes < 1 or WAVE % lanes:
            self._MustUse__silence = True                  # never elaborated
            raise ValueError(f"trans_lanes must divide {WAVE}, got {lanes}")
        self.lanes = lanes
        self.chunks = WAVE // lanes
        self.mul_regs = config.trans_mul_regs
        #: Cycles from an accepted wave to its ``o.valid``.
        self.latency = latency(lanes, self.mul_regs)
        super().__init__({
            "i": In(stream.Signature(TransIn)),
            "o": Out(stream.Signature(TransOut)),
        })

    # ----------------------------------------------------------------------------------
    def _hdr_layout(self, first: bool) -> data.StructLayout:
        f = {"valid": 1, "cls": Cls, "oh": len(Cls), "last": 1, "tag": 16}
        if not first:
            f.update({"spec": self.lanes, "sval": 32 * self.lanes})
        return data.StructLayout(f)

    def elaborate(self, platform):
        m = Module()
        L, W = self.lanes, 32 * self.lanes

        # ---- pipeline registers: one signal per stage (header + L lanes)
        layouts = [data.StructLayout({"hdr": self._hdr_layout(True), "a": unsigned(W)})]
        layouts += [data.StructLayout({"hdr": self._hdr_layout(False),
                                       "lanes": data.ArrayLayout(_LANE[k], L)})
                    for k in range(1, _NSTAGES)]
        S = [Signal(lay, name=f"s{k}") for k, lay in enumerate(layouts)]

        # ---- output and global stall
        o_valid = self.o.valid
        stall = o_valid & ~self.o.ready
        run = ~stall

        # ---- ROM: one synchronous read port per lane, addressed by the index step 0 writes into
        # S1, so that the word is read while S1 holds the lane and registered for step 2: the
        # block RAM's clock-to-output then ends at a register instead of leading step 2's multiply
        rom = Memory(shape=ROM_LAYOUT, depth=ROM_DEPTH, init=rom_words())
        ports = [rom.read_port(domain="sync") for _ in range(L)]
        m.submodules.rom = rom
        rom_idx = Signal(data.ArrayLayout(7, L), name="rom_idx")
        romd = [Signal(ROM_LAYOUT, name=f"rom{l}_word") for l in range(L)]
        for l, port in enumerate(ports):
            m.d.comb += [port.addr.eq(rom_idx[l]), port.en.eq(run)]

        # ---- issue: chunk 0 straight from the payload, chunks 1.. from a shift buffer
        busy = Signal()
        left = Signal(range(max(self.chunks, 2)))          # chunks still to issue from the buffer
        buf = Signal(W * (self.chunks - 1)) if self.chunks > 1 else None
        buf_cls = Signal(Cls)
        buf_tag = Signal(16)
        m.d.comb += self.i.ready.eq(~busy & run)

        op = self.i.payload.op
        in_cls = sel([(op == o, c) for o, c in CLS_OF.items()], Cls.NONE)
        h0 = S[0].hdr

        def onehot(c):
            return Cat(*[c == v for v in Cls])

        with m.If(run):
            with m.If(self.i.valid & self.i.ready):
                m.d.sync += [h0.valid.eq(1), h0.cls.eq(in_cls), h0.oh.eq(onehot(in_cls)),
                             h0.last.eq(self.chunks == 1), h0.tag.eq(self.i.payload.tag),
                             S[0].a.eq(self.i.payload.a[0:W])]
                if self.chunks > 1:
                    m.d.sync += [busy.eq(1), left.eq(self.chunks - 1), buf.eq(self.i.payload.a[W:]),
                                 buf_cls.eq(in_cls), buf_tag.eq(self.i.payload.tag)]
            if self.chunks > 1:
                with m.Elif(busy):
                    m.d.sync += [h0.valid.eq(1), h0.cls.eq(buf_cls), h0.oh.eq(onehot(buf_cls)),
                                 h0.last.eq(left == 1), h0.tag.eq(buf_tag), S[0].a.eq(buf[0:W]),
                                 buf.eq(buf >> W), left.eq(left - 1), busy.eq(left != 1)]
            with m.Else():
                m.d.sync += h0.valid.eq(0)

        # ---- the datapath, one step per register
        with m.If(o_valid & self.o.ready):
            m.d.sync += o_valid.eq(0)                      # (a completing wave below overrides)
        with m.If(run):
            m.d.sync += [getattr(S[1].hdr, n).eq(getattr(h0, n))
                         for n in ("valid", "cls", "oh", "last", "tag")]
            # A step runs only for a valid stage: an empty one keeps its lanes (nothing reads
            # them), so a compiled simulation skips the idle unit's arithmetic. Steps 1.. pass
            # the header on themselves (through their multiply's registers, if any).
            with m.If(S[0].hdr.valid):
                self._step0(m, S[0], S[1], rom_idx)
            self._mul_steps = 0
            for k in range(1, _NSTAGES - 1):
                # the ROM words beside the stage: read while S1 holds the lanes, carried through
                # step 1's multiply registers (if any) and registered beside S2
                words = {1: [port.data for port in ports], 2: romd}.get(k)
                src, words = getattr(self, f"_step{k}")(m, S[k], S[k + 1], words)
                if k == 1:
                    with m.If(src.hdr.valid):
                        m.d.sync += [romd[l].eq(words[l]) for l in range(L)]
            assert self._mul_steps == _MUL_STEPS, "latency() counts the multiplying steps"

            # ---- output assembly: chunks shift in from the top
            last = S[-1]
            res = Cat(*[Mux(last.hdr.spec[l], last.hdr.sval[32 * l:32 * l + 32],
                            round_pack_final(last.lanes[l])) for l in range(L)])
            with m.If(last.hdr.valid):
                m.d.sync += self.o.payload.d.eq(Cat(self.o.payload.d[W:], res))
                with m.If(last.hdr.last):
                    m.d.sync += [o_valid.eq(1), self.o.payload.tag.eq(last.hdr.tag)]
        return m

    # ----------------------------------------------------------------------------------
    # Steps. Each selects the shared multiplier's operands by class, then writes the next
    # register's union member for the active class (only that branch is evaluated).
    def _operands(self, hdr, choices):
        """The stage's multiplier operands ``(x, y)`` for the active class.

        ``choices`` maps a tuple of classes to an ``(x, y)`` pair.
        """
        oh = hdr.oh
        conds = [(Cat(*[oh[c.value] for c in cls]).any(), xy) for cls, xy in choices.items()]
        return sel([(c, xy[0]) for c, xy in conds]), sel([(c, xy[1]) for c, xy in conds])

    def _assign(self, m, dst, fields):
        m.d.sync += [getattr(dst, n).eq(v) for n, v in fields.items()]

    def _assign_s1(self, m, rom_addr, dst, fields):
        """Write a lane's S1 member and address its ROM port (``rom_addr``) with its index."""
        self._assign(m, dst, fields)
        m.d.comb += rom_addr.eq(fields["idx"])

    def _step0(self, m, cur, nxt, rom_idx):
        """S0 -> S1: specials, unpack, ROM index, exp fixed-point conversion."""
        hdr = nxt.hdr
        # unpacked operands, computed once per lane
        unp = Signal(data.ArrayLayout(data.StructLayout({"sign": 1, "M": 24, "e": signed(9)}),
                                      self.lanes), name="s0_unpacked")
        for l in range(self.lanes):
            sign, M, e = _unpack(cur.a[32 * l:32 * l + 32])
            m.d.comb += [unp[l].sign.eq(sign), unp[l].M.eq(M), unp[l].e.eq(e)]
        with m.Switch(cur.hdr.cls):
            for cls in (Cls.RCP, Cls.RSQ, Cls.SQRT, Cls.EXP, Cls.LOG):
                with m.Case(cls):
                    spec, sval = [], []
                    for l in range(self.lanes):
                        a = cur.a[32 * l:32 * l + 32]
                        f, v = specials(cls, a)
                        spec.append(f)
                        sval.append(v)
                        lane = nxt.lanes[l]
                        sign, M, e = unp[l].sign, unp[l].M, unp[l].e
                        if cls == Cls.RCP:
                            self._assign_s1(m, rom_idx[l], lane.rcp, {"idx": M[16:23], "sign": sign, "M": M,
                                                       "scale": -25 - e})
                        elif cls in (Cls.RSQ, Cls.SQRT):
                            par = e[0]
                            h = e >> 1                     # ep / 2 (ep = e - par is even)
                            self._assign_s1(m, rom_idx[l], lane.rsq, {
                                "idx": Cat(M[17:23], par), "N": M << par,
                                "scale": h - 24 if cls == Cls.SQRT else -25 - h})
                        elif cls == Cls.EXP:
                            # X = +-floor(M 2^(e + 9)): a in signed 9.32 fixed, truncated to 0.
                            # Normal inputs only (zeros and denormals are specials).
                            ef = a[23:31]
                            mag = (Cat(Const(0, 16), a[0:23], Const(1, 1))
                                   >> (134 - ef).as_unsigned()[0:8])
                            X = Mux(sign, -mag, mag)
                            self._assign_s1(m, rom_idx[l], lane.exp, {"idx": X[26:32], "r": X[0:26],
                                                       "n": X >> 32})
                        else:
                            idx = M[16:23]
                            self._assign_s1(m, rom_idx[l], lane.log, {
                                "idx": idx, "M": M, "e": e,
                                "near1": ((e == 0) & (idx == 0)) | ((e == -1) & (idx == 127))})
                    m.d.sync += [hdr.spec.eq(Cat(*spec)), hdr.sval.eq(Cat(*sval))]
            with m.Default():
                m.d.sync += [hdr.spec.eq(-1), hdr.sval.eq(0)]

    def _steps(self, m, cur, nxt, mul, cases, rom=None):
        """Generic step: ``mul(lane) -> {classes: (x, y)}``; ``cases`` maps a tuple of classes
        to ``(src_member, dst_member, fn(src, p, lane_index) -> fields)``.

        With ``config.trans_mul_regs`` a multiplying step takes that many more cycles: its
        operands are registered (1), and its product too (2), each register with a copy of the
        stage and of ``rom`` (the lanes' ROM words beside the stage, if given). ``cases`` may
        instead be a function of the ROM words beside the register the results are computed
        from (step 2's results keep words of the ROM).

        Returns
        -------
        (src, rom)
            That register (``cur`` without multiply registers) and the ROM words beside it.
        """
        src, prods = cur, [None] * self.lanes
        if mul is not None:
            self._mul_steps += 1
            ops = [self._operands(cur.hdr, mul(cur.lanes[l], l)) for l in range(self.lanes)]
            if self.mul_regs:
                src, prods = self._mul_registers(m, cur, ops, rom)
                rom = None if rom is None else src.rom
            else:
                # one product per lane, held in one signal so that every use shares the multiplier
                prods = self._products(m, cur, [x * y for x, y in ops])
        if callable(cases):
            cases = cases(rom)
        m.d.sync += nxt.hdr.eq(src.hdr)
        with m.If(src.hdr.valid):
            with m.Switch(src.hdr.cls):
                for classes, (member, dst, fn) in cases.items():
                    with m.Case(*classes):
                        for l in range(self.lanes):
                            s = src.lanes[l] if member is None else getattr(src.lanes[l], member)
                            d = nxt.lanes[l] if dst is None else getattr(nxt.lanes[l], dst)
                            fields = fn(s, prods[l], l)
                            if fields is None:
                                m.d.sync += d.eq(s)
                            else:
                                self._assign(m, d, fields)
        return src, rom

    def _products(self, m, reg, exprs):
        """The lanes' products in one signal (named after ``reg``), one multiplier per lane."""
        shape = exprs[0].shape()
        psig = Signal(data.ArrayLayout(shape, self.lanes), name=f"{reg.as_value().name}_prod")
        m.d.comb += psig.eq(Cat(*[p.as_unsigned()[:shape.width] for p in exprs]))
        return [psig[l] for l in range(self.lanes)]

    def _mul_registers(self, m, cur, ops, rom):
        """Register the operands (and, with 2 ``trans_mul_regs``, the product) of a step.

        Returns the last register (``hdr``, ``lanes`` and ``rom`` as in the stage) and the
        lanes' products.
        """
        name = cur.as_value().name
        keep = {"hdr": cur.hdr.shape(), "lanes": cur.lanes.shape()}
        if rom is not None:
            keep["rom"] = data.ArrayLayout(ROM_LAYOUT, self.lanes)

        def copy(dst, src):
            m.d.sync += dst.hdr.eq(src.hdr)
            with m.If(src.hdr.valid):
                m.d.sync += dst.lanes.eq(src.lanes)
                if rom is not None:
                    m.d.sync += dst.rom.eq(Cat(*rom) if src is cur else src.rom)

        x0, y0 = ops[0]
        opr = Signal(data.StructLayout({**keep, "x": data.ArrayLayout(x0.shape(), self.lanes),
                                        "y": data.ArrayLayout(y0.shape(), self.lanes)}),
                     name=f"{name}_operands")
        copy(opr, cur)
        with m.If(cur.hdr.valid):
            m.d.sync += [opr.x.eq(Cat(*[x for x, _ in ops])), opr.y.eq(Cat(*[y for _, y in ops]))]
        prods = self._products(m, opr, [opr.x[l] * opr.y[l] for l in range(self.lanes)])
        if self.mul_regs == 1:
            return opr, prods
        shape = prods[0].shape()
        pr = Signal(data.StructLayout({**keep, "p": data.ArrayLayout(shape, self.lanes)}),
                    name=f"{name}_product")
        copy(pr, opr)
        with m.If(opr.hdr.valid):
            m.d.sync += pr.p.eq(Cat(*prods))
        return pr, [pr.p[l] for l in range(self.lanes)]

    _RCP = (Cls.RCP,)
    _RSQ = (Cls.RSQ, Cls.SQRT)
    _EXP = (Cls.EXP,)
    _LOG = (Cls.LOG,)
    _H = 1 << 31                                            # exp Horner rounding constant

    def _step1(self, m, cur, nxt, rom):
        """S1 -> S2 (the ROM word is registered beside S2): copy; exp ``A2 = C2 + rnd(C3 r)``."""
        C2, C3 = EXP2_C[1], EXP2_C[2]

        def copy(names):
            return lambda s, p, l: {n: getattr(s, n) for n in names.split()}
        return self._steps(m, cur, nxt, lambda v, l: {self._EXP: (C3, v.exp.r)}, {
            self._RCP: ("rcp", "rcp", copy("sign M scale")),
            self._RSQ: ("rsq", "rsq", copy("N scale")),
            self._EXP: ("exp", "exp", lambda s, p, l: {"r": s.r, "n": s.n,
                                                       "A2": C2 + ((p + self._H) >> 32)}),
            self._LOG: ("log", "log", copy("M e near1")),
        }, rom=rom)

    def _step2(self, m, cur, nxt, rom):
        """S2 -> S3 (M1): ``E0 = 2^39 - M R0``; ``Y0sq = Y0^2``; exp ``A1``; ``T = M C - 2^33``."""
        C1 = EXP2_C[0]
        return self._steps(m, cur, nxt, lambda v, l: {
            self._RCP: (v.rcp.M, rom[l].rcp), self._RSQ: (rom[l].rsq, rom[l].rsq),
            self._EXP: (v.exp.A2, v.exp.r), self._LOG: (v.log.M, rom[l].logc)}, lambda words: {
            self._RCP: ("rcp", "rcp", lambda s, p, l: {
                "sign": s.sign, "M": s.M, "scale": s.scale, "R0": words[l].rcp,
                "E0": (1 << 39) - p}),
            self._RSQ: ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Y0": words[l].rsq, "Y0sq": p}),
            self._EXP: ("exp", "exp", lambda s, p, l: {
                "r": s.r, "n": s.n, "T": words[l].exp, "A1": C1 + ((p + self._H) >> 32)}),
            self._LOG: ("log", "log", lambda s, p, l: {
                "e": s.e, "near1": s.near1, "L": words[l].logl, "T": p - (1 << 33)}),
        }, rom=rom)

    def _step3(self, m, cur, nxt, rom):
        """S3 -> S4 (M2): ``R1``; ``Eas``; exp ``P``; log ``A2``."""
        P3, P2 = LOG2_P[3], LOG2_P[2]
        return self._steps(m, cur, nxt, lambda v, l: {
            self._RCP: (v.rcp.R0, v.rcp.E0), self._RSQ: (v.rsq.N, v.rsq.Y0sq),
            self._EXP: (v.exp.A1, v.exp.r), self._LOG: (Const(P3, signed(32)), v.log.T)}, {
            self._RCP: ("rcp", "rcp", lambda s, p, l: {
                "sign": s.sign, "M": s.M, "scale": s.scale, "R1": (s.R0 << 16) + (p >> 23)}),
            self._RSQ: ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Y0": s.Y0, "Eas": ((1 << 55) - p) >> 23}),
            self._EXP: ("exp", "exp", lambda s, p, l: {
                "n": s.n, "T": s.T, "P": (1 << 30) + ((p + self._H) >> 32)}),
            self._LOG: ("log", "log", lambda s, p, l: {
                "e": s.e, "near1": s.near1, "L": s.L, "T": s.T, "A2": P2 + (p >> 33)}),
        })

    def _step4(self, m, cur, nxt, rom):
        """S4 -> S5 (M3): ``E1s``; ``Y1``; exp significand ``T P``; log ``A1``."""
        P1 = LOG2_P[1]
        return self._steps(m, cur, nxt, lambda v, l: {
            self._RCP: (v.rcp.M, v.rcp.R1), self._RSQ: (v.rsq.Y0, v.rsq.Eas),
            self._EXP: (v.exp.T, v.exp.P), self._LOG: (v.log.A2, v.log.T)}, {
            self._RCP: ("rcp", "rcp", lambda s, p, l: {
                "sign": s.sign, "M": s.M, "scale": s.scale, "R1": s.R1,
                "E1s": ((1 << 55) - p) >> 23}),
            self._RSQ: ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Y1": (s.Y0 << 14) + (p >> 19)}),
            self._EXP: ("exp", "exp", lambda s, p, l: {
                "sign": 0, "sig": p, "scale": s.n - 61, "sticky": 0}),
            self._LOG: ("log", "log", lambda s, p, l: {
                "e": s.e, "near1": s.near1, "L": s.L, "T": s.T, "A1": P1 + (p >> 33)}),
        })

    def _step5(self, m, cur, nxt, rom):
        """S5 -> S6 (M4): ``Q = (R1 + R1 E1s / 2^32) / 2^7``; ``Y1sq``; log ``P``."""
        P0 = LOG2_P[0]
        return self._steps(m, cur, nxt, lambda v, l: {
            self._RCP: (v.rcp.R1, v.rcp.E1s), self._RSQ: (v.rsq.Y1, v.rsq.Y1),
            self._LOG: (v.log.A1, v.log.T)}, {
            self._RCP: ("rcp", "rcp", lambda s, p, l: {
                "sign": s.sign, "M": s.M, "scale": s.scale, "Q": (s.R1 + (p >> 32)) >> 7}),
            self._RSQ: ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Y1": s.Y1, "Y1sq": p >> 28}),
            self._EXP: ("exp", "exp", lambda s, p, l: None),
            self._LOG: ("log", "log", lambda s, p, l: {
                "e": s.e, "near1": s.near1, "L": s.L, "T": s.T, "P": P0 + (p >> 33)}),
        })

    def _step6(self, m, cur, nxt, rom):
        """S6 -> S7 (M5): ``M Q``; ``Ebs``; log ``V = T P``."""
        return self._steps(m, cur, nxt, lambda v, l: {
            self._RCP: (v.rcp.M, v.rcp.Q), self._RSQ: (v.rsq.N, v.rsq.Y1sq),
            self._LOG: (v.log.T, v.log.P)}, {
            self._RCP: ("rcp", "rcp", lambda s, p, l: {
                "sign": s.sign, "M": s.M, "scale": s.scale, "Q": s.Q, "MQ": p}),
            self._RSQ: ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Y1": s.Y1, "Ebs": ((1 << 55) - p) >> 23}),
            self._EXP: ("exp", "exp", lambda s, p, l: None),
            self._LOG: ("log", "log", lambda s, p, l: {
                "e": s.e, "near1": s.near1, "L": s.L, "V": p}),
        })

    def _step7(self, m, cur, nxt, rom):
        """S7 -> S8: rcp remainder correction; log result; rsq M6 ``Y2``."""
        def rcp_fix(s, p, l):
            rem = (1 << 48) - s.MQ                         # exact remainder of 2^48 / M
            lo = rem < 0
            hi = rem >= s.M
            remf = Mux(lo, rem + s.M, Mux(hi, rem - s.M, rem))
            return {"sign": s.sign, "sig": s.Q + hi - lo, "scale": s.scale, "sticky": remf != 0}

        def log_fix(s, p, l):
            val = Mux(s.near1, s.V, (s.e << 52) + s.L + (s.V >> 13))
            neg = val < 0
            return {"sign": neg, "sig": Mux(neg, -val, val), "scale": Mux(s.near1, -65, -52),
                    "sticky": 0}

        return self._steps(m, cur, nxt, lambda v, l: {self._RSQ: (v.rsq.Y1, v.rsq.Ebs)}, {
            self._RCP: ("rcp", "rcp", rcp_fix),
            self._RSQ: ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Y2": s.Y1 + (p >> 33)}),
            self._EXP: ("exp", "exp", lambda s, p, l: None),
            self._LOG: ("log", "log", log_fix),
        })

    def _step8(self, m, cur, nxt, rom):
        """S8 -> S9 (M7): sqrt ``S = N Y2 / 2^29``; rsq ``Q = Y2 / 2^5``, ``Q N``."""
        return self._steps(m, cur, nxt, lambda v, l: {
            (Cls.SQRT,): (v.rsq.N, v.rsq.Y2), (Cls.RSQ,): (v.rsq.N, v.rsq.Y2 >> 5)}, {
            self._RCP: ("rcp", "rp", lambda s, p, l: None),
            self._EXP: ("exp", "rp", lambda s, p, l: None),
            self._LOG: ("log", "rp", lambda s, p, l: None),
            (Cls.SQRT,): ("rsq", "sqrt", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "S": p >> 29}),
            (Cls.RSQ,): ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Q": s.Y2 >> 5, "QN": p}),
        })

    def _step9(self, m, cur, nxt, rom):
        """S9 -> S10 (M8): sqrt ``S^2``; rsq ``Q^2 N``."""
        return self._steps(m, cur, nxt, lambda v, l: {
            (Cls.SQRT,): (v.sqrt.S, v.sqrt.S), (Cls.RSQ,): (v.rsq.Q, v.rsq.QN)}, {
            (Cls.RCP, Cls.EXP, Cls.LOG): ("rp", "rp", lambda s, p, l: None),
            (Cls.SQRT,): ("sqrt", "sqrt", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "S": s.S, "SS": p}),
            (Cls.RSQ,): ("rsq", "rsq", lambda s, p, l: {
                "N": s.N, "scale": s.scale, "Q": s.Q, "QN": s.QN, "Q2N": p}),
        })

    def _step10(self, m, cur, nxt, rom):
        """S10 -> S11: exact floor and sticky bit of sqrt and rsq."""
        def sqrt_fix(s, p, l):
            rem = (s.N << 25) - s.SS                       # N 2^25 - S^2
            two_s = s.S << 1
            lo = rem < 0
            hi = rem > two_s
            remf = Mux(lo, rem + two_s - 1, Mux(hi, rem - two_s - 1, rem))
            return {"sign": 0, "sig": s.S + hi - lo, "scale": s.scale, "sticky": remf != 0}

        def rsq_fix(s, p, l):
            D = s.Q2N - (1 << 73)                          # Q^2 N - 2^73
            two_qn = s.QN << 1
            gt = D > 0                                     # Q too large: Q - 1
            inc = ~gt & (D + two_qn + s.N <= 0)            # (Q + 1)^2 N <= 2^73: Q + 1
            sticky = Mux(gt, D - two_qn + s.N != 0, Mux(inc, D + two_qn + s.N != 0, D != 0))
            return {"sign": 0, "sig": s.Q + inc - gt, "scale": s.scale, "sticky": sticky}

        return self._steps(m, cur, nxt, None, {
            (Cls.RCP, Cls.EXP, Cls.LOG): ("rp", None, lambda s, p, l: None),
            (Cls.SQRT,): ("sqrt", None, sqrt_fix),
            (Cls.RSQ,): ("rsq", None, rsq_fix),
        })

    def _step11(self, m, cur, nxt, rom):
        """S11 -> S12: ``round_pack`` normalisation (all classes)."""
        m.d.sync += nxt.hdr.eq(cur.hdr)
        with m.If(cur.hdr.valid):
            for l in range(self.lanes):
                self._assign(m, nxt.lanes[l], _round_pack_norm(cur.lanes[l]))
        return cur, None
