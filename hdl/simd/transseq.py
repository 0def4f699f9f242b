"""The transcendental unit, sequential: one multiplier per lane group, stepped.

:class:`TransSeq` computes v_rcp_f32, v_rcp_iflag_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32 and
v_log_f32 with the integer algorithms of ``docs/fp32.md`` §5, bit for bit equal to
``sim.fp32`` (its tables, classes and payloads: ``hdl/simd/trans.py``). Each of its
``trans_lanes`` datapaths has one 35 × 52-bit signed multiplier (six 18 × 18 tiles) through
which every step of every operation passes. A DCU has one, which its four SIMDs take in turn
(``hdl/simd/transshare.py``); a SIMD built alone has its own.

Organisation
------------
A wave's 32 operands are captured in one register. The lanes are taken ``trans_lanes`` at a
time (a *group*, ``G = 32 / trans_lanes`` groups); a *pass* feeds every group once through
the datapath, one group a cycle, and runs one step of the operation (one multiply and the
addition that follows it). The step's results go to two small memories indexed by group
(``sx``, 35 bits, and ``sy``, 52 bits: distributed RAM), where the next pass reads them. The
operation takes its passes back to back: rcp 5, rsq and sqrt 8, exp 5, log 5 (an
unsupported op 1, giving 0). The last pass's results go through the exact corrections and
``round_pack`` and shift into the output register.

Per group, stage by stage (one cycle each):

====  ==================================================================================
st0   the group's operands (an AND-OR of the capture register with the group's one-hot),
      its ``sx``/``sy`` words (read asynchronously) and the ROM address
st1   ROM word; the step's multiplier operands and post-addition terms, chosen by op and pass
st2   six 18 × 18 partial products; ``x`` shifted into ``AB`` where the step adds it
st3   their sum: the product ``p``
st4   ``(p or ~p) + AB`` shifted right by 0, 13, 23 or 33: the step's result, written to
      ``sx``/``sy`` (read by the same group's next pass, at least 5 cycles later)
st5   last pass: remainder corrections (rcp, sqrt, rsq) and sign, into ``(sign, sig, scale,
      sticky)``
st6   ``round_pack`` normalisation (a nonzero ``sig`` leads at bit 32 or above: 5 shift levels)
st7   ``round_pack`` rounding and the special-case result, shifted into the output
====  ==================================================================================

Timing: a pass lasts ``P = max(G, 5)`` cycles. A wave accepted in cycle *t* presents its
result (``o.valid``) in cycle *t* + ``passes × P + G - P + 8`` (:func:`latency`; the
``default`` preset's eight datapaths: 47 cycles for rsq and sqrt, 32 for rcp, exp and log; the
``fpga`` preset's one: 264 and 168; an unsupported op 40 with one). The unit computes one
wave at a time: ``i.ready`` rises again with ``o.valid``, so it takes one wave per latency.
The next wave's last pass waits while the previous result is still in the output register.

ROM: 512 words of 64 bits (two block RAMs), addressed by table and index: rcp and rsq seeds,
2^(j/64), and log2's ``(C, L)`` pair, read through one synchronous port per lane.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .trans import (CLS_OF, EXP2_C, EXP2_T, LOG2_C, LOG2_L, LOG2_P, RCP_T0, RSQ_T0, Cls, TransIn,
                    TransOut, lzc, round_pack_final, sel, specials)

__all__ = ["TransSeq", "PASSES", "latency", "rom_words"]

WAVE = 32
XW, YW, AW = 35, 52, 76                 # multiplier operands (signed) and the post-addition width
_RP = data.StructLayout({"sign": 1, "sig": 63, "scale": signed(10), "sticky": 1})

#: Passes of each operation class.
PASSES = {Cls.NONE: 1, Cls.RCP: 5, Cls.RSQ: 8, Cls.SQRT: 8, Cls.EXP: 5, Cls.LOG: 5}
_SHIFTS = (0, 13, 23, 33)               # the post-addition's right shifts
_ABX = (0, 33, 37, 39)                  # shifts of x added into the post-addition's term
_DEPTH = 5                              # cycles from a group's issue to its result in sx/sy


def _or(values):
    out = values[0]
    for v in values[1:]:
        out = out | v
    return out


# round_pack's input: rcp, sqrt and rsq give sig in [2^23, 2^26), shifted up by _ALIGN; exp
# sig in [2^61, 2^63); log |S52| >= 2^44 (|log2 a| > 1/128 off the near-1 path) and the near-1
# path's |V| >= 2^41 (|T| >= 2^9). So every nonzero sig has its leading one at bit 32 or above.
_ALIGN = 36


def _normalise(rp):
    """``round_pack`` part 1, normalisation, for a ``sig`` that is 0 or has its leading one at
    bit 32 or above: a 32-bit leading-zero count, a 5-level shift."""
    v = Cat(rp.sig, Const(0, 1))                           # 64 bits, bit 63 clear
    top = v[32:64]
    lz = lzc(top)[0:5]
    return {"sign": rp.sign, "x": (v << lz)[0:64], "E": rp.scale + 63 - lz, "sticky": rp.sticky,
            "zero": top == 0}


def _period(lanes: int) -> int:
    return max(WAVE // lanes, _DEPTH)


def latency(lanes: int, cls: Cls) -> int:
    """Cycles from ``i.valid & i.ready`` to ``o.valid`` of a wave of class ``cls``."""
    return PASSES[cls] * _period(lanes) + WAVE // lanes - _period(lanes) + 8


def rom_words() -> list[int]:
    """The ROM: 128 words per table (rcp, rsq, exp, log), index in the low 7 address bits.
    A log word is ``C | L << 11``."""
    words = list(RCP_T0) + list(RSQ_T0) + list(EXP2_T) + [0] * 64
    return words + [c | (v << 11) for c, v in zip(LOG2_C, LOG2_L)]


class TransSeq(wiring.Component):
    """The sequential transcendental unit: ``config.trans_lanes`` datapaths, a pass per step.

    Parameters
    ----------
    config : hdl.config.DCUConfig
        ``trans_lanes`` (a divisor of 32) sets the datapaths.

    Attributes
    ----------
    i : In(stream.Signature(TransIn))
        Waves to compute (:data:`~hdl.simd.trans.TransIn`: ``op``, the 32 operands ``a``,
        ``tag``). ``ready`` does not depend on ``valid``: it is high while no wave is being
        computed (from the cycle a result appears).
    o : Out(stream.Signature(TransOut))
        Results with their ``tag``, one wave at a time; the payload is held while stalled.
    """

    def __init__(self, config):
        lanes = config.trans_lanes
        if lanes < 1 or WAVE % lanes:
            self._MustUse__silence = True
            raise ValueError(f"trans_lanes must divide {WAVE}, got {lanes}")
        self.lanes = lanes
        self.groups = WAVE // lanes
        self.period = _period(lanes)
        super().__init__({"i": In(stream.Signature(TransIn)), "o": Out(stream.Signature(TransOut))})

    def latency(self, cls: Cls) -> int:
        return latency(self.lanes, cls)

    def elaborate(self, platform):
        m = Module()
        L, G, P = self.lanes, self.groups, self.period
        W = 32 * L

        # ---- sequencer: one wave at a time
        busy = Signal()
        cap = Signal(32 * WAVE)
        cls_r = Signal(Cls)
        tag_r = Signal(16)
        pss = Signal(4)
        cnt = Signal(range(P))
        last_pass = Signal(4)
        m.d.comb += last_pass.eq(sel([(cls_r == c, n - 1) for c, n in PASSES.items()]))
        running = busy & (pss <= last_pass)
        final = pss == last_pass
        hold = final & self.o.valid                        # the previous result is not taken yet
        advance = running & ~hold
        issue = advance & (cnt < G)
        m.d.comb += self.i.ready.eq(~busy)
        op = self.i.payload.op
        with m.If(self.i.valid & ~busy):
            m.d.sync += [busy.eq(1), cap.eq(self.i.payload.a), tag_r.eq(self.i.payload.tag),
                         cls_r.eq(sel([(op == o, c) for o, c in CLS_OF.items()], Cls.NONE)),
                         pss.eq(0), cnt.eq(0)]
        with m.If(advance):
            m.d.sync += cnt.eq(Mux(cnt == P - 1, 0, cnt + 1))
            with m.If(cnt == P - 1):
                m.d.sync += pss.eq(pss + 1)

        hdr = data.StructLayout({"valid": 1, "cls": Cls, "pss": 4, "final": 1, "g": range(G)})

        def stage(name, lane_fields):
            return (Signal(hdr, name=f"{name}_hdr"),
                    [Signal(data.StructLayout(lane_fields), name=f"{name}_l{l}") for l in range(L)])

        # ---- st0: operands, state words, ROM address
        h1, s1 = stage("st1", {"a": 32, "sx": XW, "sy": YW})
        sx_mem = [Memory(shape=XW, depth=G, init=[]) for _ in range(L)]
        sy_mem = [Memory(shape=YW, depth=G, init=[]) for _ in range(L)]
        rom = Memory(shape=64, depth=512, init=rom_words())
        m.submodules.rom = rom
        roms = [rom.read_port(domain="sync") for _ in range(L)]
        # the group's operands: an AND-OR of the groups with the one-hot of ``cnt`` (LUT4s of
        # two AND terms each; a binary multiplexer tree takes one LUT4 per 2:1 step)
        group = cap
        if G > 1:
            hot = Signal(G, name="group_hot")
            m.d.comb += hot.eq(Cat(*[cnt == k for k in range(G)]))
            group = _or([cap[k * W:(k + 1) * W] & hot[k].replicate(W) for k in range(G)])
        m.d.sync += [h1.valid.eq(issue), h1.cls.eq(cls_r), h1.pss.eq(pss), h1.final.eq(final),
                     h1.g.eq(cnt)]
        rd_x, rd_y = [], []
        for l in range(L):
            m.submodules[f"sx{l}"] = sx_mem[l]
            m.submodules[f"sy{l}"] = sy_mem[l]
            rx, ry = sx_mem[l].read_port(domain="comb"), sy_mem[l].read_port(domain="comb")
            m.d.comb += [rx.addr.eq(cnt), ry.addr.eq(cnt)]
            rd_x.append(rx.data)
            rd_y.append(ry.data)
            a = group[32 * l:32 * l + 32]
            m.d.sync += [s1[l].a.eq(a), s1[l].sx.eq(rx.data), s1[l].sy.eq(ry.data)]
            par = ~a[23]                                   # parity of the exponent e = ef - 127
            m.d.comb += roms[l].addr.eq(sel([
                (cls_r == Cls.RCP, Cat(a[16:23], Const(0, 2))),
                ((cls_r == Cls.RSQ) | (cls_r == Cls.SQRT), Cat(a[17:23], par, Const(1, 2))),
                (cls_r == Cls.EXP, Cat(ry.data[26:32], Const(0, 1), Const(2, 2))),
            ], Cat(a[16:23], Const(3, 2))))

        # ---- st1: the step's operands and terms
        lane2 = {"a": 32, "x": signed(XW), "y": signed(YW), "nm": 1, "ab": AW, "abx": 2, "sh": 2,
                 "wsx": 2, "wsy": 1, "scale": signed(10)}
        h2, s2 = stage("st2", lane2)
        m.d.sync += h2.eq(h1)
        for l in range(L):
            self._operands(m, h1, s1[l], roms[l].data, s2[l])

        # ---- st2: partial products; st3: the product
        lane3 = {k: v for k, v in lane2.items()}
        lane3.update({f"p{i}{j}": signed(36) for i in range(2) for j in range(3)})
        del lane3["x"], lane3["y"]
        lane3.update({"x": signed(XW), "y": signed(YW)})
        h3, s3 = stage("st3", lane3)
        m.d.sync += h3.eq(h2)
        lane4 = {k: v for k, v in lane2.items()}
        lane4["p"] = signed(AW)
        h4, s4 = stage("st4", lane4)
        m.d.sync += h4.eq(h3)
        for l in range(L):
            src, dst = s2[l], s3[l]
            x, y = src.x, src.y
            xs = [Cat(x[0:17], Const(0, 1)).as_signed(), x[17:35].as_signed()]
            ys = [Cat(y[0:17], Const(0, 1)).as_signed(), Cat(y[17:34], Const(0, 1)).as_signed(),
                  y[34:52].as_signed()]
            m.d.sync += [getattr(dst, k).eq(getattr(src, k)) for k in lane2 if k != "ab"]
            # ``x`` shifted into ``ab`` here, off st1's operand selection
            m.d.sync += dst.ab.eq(src.ab | sel([(src.abx == k, x << s) for k, s in enumerate(_ABX) if s], 0))
            m.d.sync += [getattr(dst, f"p{i}{j}").eq(xs[i] * ys[j]) for i in range(2) for j in range(3)]
            q = s3[l]
            prod = ((q.p00 + (q.p01 << 17)) + ((q.p10 << 17) + (q.p02 << 34))
                    + ((q.p11 << 34) + (q.p12 << 51)))
            m.d.sync += [getattr(s4[l], k).eq(getattr(q, k)) for k in lane2]
            m.d.sync += s4[l].p.eq(prod[0:AW])

        # ---- st4: post-addition, state write
        lane5 = {"a": 32, "x": signed(XW), "y": signed(YW), "res": signed(AW), "scale": signed(10)}
        h5, s5 = stage("st5", lane5)
        m.d.sync += h5.eq(h4)
        for l in range(L):
            v = s4[l]
            pin = v.p ^ Mux(v.nm, (1 << AW) - 1, 0)
            tot = (pin + v.ab)[0:AW].as_signed()
            res = Signal(signed(AW), name=f"st4_res{l}")
            with m.Switch(v.sh):
                for k, s in enumerate(_SHIFTS):
                    with m.Case(k):
                        m.d.comb += res.eq(tot >> s)
            wx, wy = sx_mem[l].write_port(), sy_mem[l].write_port()
            write = h4.valid & ~h4.final
            m.d.comb += [wx.addr.eq(h4.g), wy.addr.eq(h4.g),
                         wx.data.eq(sel([(v.wsx == 1, res), (v.wsx == 2, v.x)], v.y)),
                         wy.data.eq(res), wx.en.eq(write & (v.wsx != 0)), wy.en.eq(write & v.wsy)]
            m.d.sync += [s5[l].a.eq(v.a), s5[l].x.eq(v.x), s5[l].y.eq(v.y), s5[l].res.eq(res),
                         s5[l].scale.eq(v.scale)]

        # ---- st5: corrections and sign; st6: normalisation; st7: rounding, specials, output
        h6, s6 = stage("st6", {"a": 32, "rp": _RP})
        h7, s7 = stage("st7", {"a": 32, "n": data.StructLayout({
            "sign": 1, "x": 64, "E": signed(11), "sticky": 1, "zero": 1})})
        m.d.sync += [h6.eq(h5), h7.eq(h6)]
        for l in range(L):
            self._finish(m, h5, s5[l], s6[l])
            m.d.sync += [s7[l].a.eq(s6[l].a)]
            norm = _normalise(s6[l].rp)
            m.d.sync += [getattr(s7[l].n, k).eq(val) for k, val in norm.items()]
        res = []
        for l in range(L):
            a = s7[l].a
            spec, sval = Signal(name=f"spec{l}"), Signal(32, name=f"sval{l}")
            with m.Switch(h7.cls):
                for c in (Cls.RCP, Cls.RSQ, Cls.SQRT, Cls.EXP, Cls.LOG):
                    with m.Case(c):
                        f, val = specials(c, a)
                        m.d.comb += [spec.eq(f), sval.eq(val)]
                with m.Default():
                    m.d.comb += [spec.eq(1), sval.eq(0)]
            res.append(Mux(spec, sval, round_pack_final(s7[l].n)))
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(h7.valid & h7.final):
            m.d.sync += self.o.payload.d.eq(Cat(self.o.payload.d[W:], *res) if G > 1 else Cat(*res))
            with m.If(h7.g == G - 1):
                m.d.sync += [self.o.valid.eq(1), self.o.payload.tag.eq(tag_r), busy.eq(0)]
        return m

    # ----------------------------------------------------------------------------------
    def _operands(self, m, h, v, word, out):
        """st1: the multiplier operands ``x``, ``y``, the post-addition terms (``nm``: add
        ``~p`` instead of ``p``; ``ab``; ``sh``: index into :data:`_SHIFTS`), what to write to
        ``sx`` (``wsx``: 1 the result, 2 ``x``, 3 ``y``) and to ``sy`` (``wsy``: the result),
        and the last pass's ``round_pack`` scale, by op and pass."""
        a = v.a
        sign = a[31]
        M = Cat(a[0:23], Const(1, 1))
        name = out.as_value().name
        e = Signal(signed(9), name=f"{name}_e")
        m.d.comb += e.eq(a[23:31] - 127)
        hh = e >> 1
        N = Mux(e[0], M << 1, M)
        sx, sy = v.sx.as_signed(), v.sy.as_signed()
        r2 = Cat(Const(0, 1), sy[0:26])                    # exp: r << 1
        k = e + 42                                         # exp: M 2^(e + 42) >> 33 = M 2^(e + 9)
        onehot = Mux((k >= 0) & (k <= 50), Const(1, YW - 1) << k[0:6], 0)
        idx = a[16:23]
        near1 = ((e == 0) & (idx == 0)) | ((e == -1) & (idx == 127))
        rom32 = word[0:32]
        Lw = word[11:64]
        log_top = Signal(signed(11), name=f"{name}_log_top")   # e + the top bit of L
        m.d.comb += log_top.eq(e + Lw[52])
        C1, C2, C3 = EXP2_C
        P0, P1, P2, P3 = LOG2_P
        sh = {s: i for i, s in enumerate(_SHIFTS)}
        cx = Signal(signed(XW), name=f"{name}_x")
        ch = Signal(data.StructLayout({"y": signed(YW), "nm": 1, "ab": AW, "abx": 2, "sh": 2,
                                       "wsx": 2, "wsy": 1, "scale": signed(10)}), name=f"{name}_choice")

        def step(k, x, y, *, nm=0, ab=0, abx=0, s=0, wsx=0, wsy=1):
            """``abx``: ``ab`` gets ``x << abx`` too (added at st2; ``ab`` is 0 then)."""
            with m.Case(k):
                m.d.comb += [cx.eq(x), ch.y.eq(y), ch.nm.eq(nm), ch.wsx.eq(wsx), ch.wsy.eq(wsy),
                             ch.ab.eq(Const(ab % (1 << AW), AW) if isinstance(ab, int) else ab),
                             ch.abx.eq(_ABX.index(abx)), ch.sh.eq(sh[s] if isinstance(s, int) else s)]

        with m.Switch(h.cls):
            with m.Case(Cls.RCP):
                m.d.comb += ch.scale.eq(-25 - _ALIGN - e)
                with m.Switch(h.pss):
                    step(0, M, rom32, nm=1, ab=(1 << 39) + 1)                 # E0 = 2^39 - M R0
                    step(1, rom32, sy, abx=39, s=23)           # R1
                    step(2, M, sy, nm=1, ab=(1 << 55) + 1, s=23, wsx=3)      # E1s; sx = R1
                    step(3, sx, sy << 1, abx=33, s=33)         # R2 = R1 + R1 E1s / 2^32
                    step(4, M, sy >> 7, nm=1, ab=(1 << 48) + 1, wsy=0)       # 2^48 - M Q
            for c in (Cls.RSQ, Cls.SQRT):
                with m.Case(c):
                    m.d.comb += ch.scale.eq(-25 - _ALIGN - hh if c == Cls.RSQ else hh - 24 - _ALIGN)
                    with m.Switch(h.pss):
                        step(0, rom32, rom32)                                # Y0sq
                        step(1, N, sy, nm=1, ab=(1 << 55) + 1, s=23)         # Eas
                        step(2, rom32, sy << 4, abx=37, s=23)  # Y1
                        step(3, sy, sy << 5, s=33, wsx=2)                    # Y1sq; sx = Y1
                        step(4, N, sy, nm=1, ab=(1 << 55) + 1, s=23)         # Ebs
                        step(5, sx, sy, abx=33, s=33)          # Y2
                        if c == Cls.SQRT:
                            step(6, N, sy << 4, s=33, wsx=1)                 # S = N Y2 / 2^29
                            step(7, sx, sy, nm=1, ab=Cat(Const(1, 25), N), wsy=0)   # N 2^25 - S^2
                        else:
                            step(6, N, sy >> 5, wsx=3)                       # Q N; sx = Q
                            step(7, sx, sy, nm=1, ab=(1 << 73) + 1, wsy=0)   # 2^73 - Q^2 N
            with m.Case(Cls.EXP):
                m.d.comb += ch.scale.eq((sy >> 32) - 61)
                with m.Switch(h.pss):
                    step(0, M, onehot, nm=sign, ab=Cat(Const(0, 33), sign), s=33)    # X
                    step(1, C3, r2, ab=(1 << 32) + (C2 << 33), s=33, wsx=1, wsy=0)   # A2
                    step(2, sx, r2, ab=(1 << 32) + (C1 << 33), s=33, wsx=1, wsy=0)   # A1
                    step(3, sx, r2, ab=(1 << 32) + (1 << 63), s=33, wsx=1, wsy=0)    # P
                    step(4, sx, rom32, wsy=0)                                        # T P
            with m.Case(Cls.LOG):
                m.d.comb += ch.scale.eq(Mux(near1, -65, -52))
                with m.Switch(h.pss):
                    step(0, M, word[0:11], ab=-(1 << 33))                            # T
                    step(1, P3, sy, ab=P2 << 33, s=33, wsx=1, wsy=0)                 # A2
                    step(2, sx, sy, ab=P1 << 33, s=33, wsx=1, wsy=0)                 # A1
                    step(3, sx, sy, ab=P0 << 33, s=33, wsx=1, wsy=0)                 # P
                    # V = T P (near 1), else e + L + V / 2^13 in 9.52 fixed
                    step(4, sx, sy, wsy=0, ab=Mux(near1, 0, Cat(Const(0, 13), Lw[0:52], log_top)),
                         s=Mux(near1, sh[0], sh[13]))
        m.d.sync += [out.a.eq(a), out.x.eq(cx)] + [getattr(out, f).eq(getattr(ch, f)) for f, _ in ch.shape()]

    def _finish(self, m, h, v, out):
        """st5: ``(sign, sig, scale, sticky)`` of the last pass (rcp/sqrt/rsq: the exact
        remainder corrections on ``R``, the remainder of the candidate ``c``)."""
        m.d.sync += out.a.eq(v.a)
        R = v.res[0:56].as_signed()
        x, y = v.x, v.y
        M = Cat(v.a[0:23], Const(1, 1))
        N = Mux(~v.a[23], M << 1, M)
        base = sel([(h.cls == Cls.RCP, x), (h.cls == Cls.SQRT, x << 1)], y << 1)
        delta = sel([(h.cls == Cls.RCP, 0), (h.cls == Cls.SQRT, 1)], N)
        negu = (delta - base)[0:56].as_signed()
        vv = (base + delta)[0:56].as_signed()
        c = Mux(h.cls == Cls.RCP, y, x)
        lo = R < 0
        hi = (R - vv) >= 0
        sticky = Mux(lo, R != negu, Mux(hi, R != vv, R != 0))
        rp = out.rp
        m.d.sync += rp.scale.eq(v.scale)
        with m.Switch(h.cls):
            with m.Case(Cls.RCP, Cls.RSQ, Cls.SQRT):
                m.d.sync += [rp.sign.eq(Mux(h.cls == Cls.RCP, v.a[31], 0)),
                             rp.sig.eq(Cat(Const(0, _ALIGN), (c + hi - lo)[0:63 - _ALIGN])),
                             rp.sticky.eq(sticky)]
            with m.Case(Cls.LOG):
                neg = v.res < 0
                m.d.sync += [rp.sign.eq(neg), rp.sig.eq(Mux(neg, -v.res, v.res)[0:63]), rp.sticky.eq(0)]
            with m.Default():
                m.d.sync += [rp.sign.eq(0), rp.sig.eq(v.res[0:63]), rp.sticky.eq(0)]
