"""The SIMD's vector pipe: VGPRs in banks of RAM and the VALU lanes (docs/simd.md).

An instruction the issue stage sends (:class:`~hdl.layouts.VectorPort`) runs as ``P = 32 / lanes``
passes of one row of ``lanes`` lanes each. Pass *p* of an instruction issued at *t*:

* **RD** (*t* + 1 + *p*): the three VGPR read addresses (src0, src1, and src2 or the old
  destination of a multiply-accumulate), from the instruction's register;
* **OPR** (*t* + 2 + *p*): each operand the row read or its scalar value (SGPR, constant or
  literal, which the issue stage selects the cycle after issue) broadcast, ``v_fmamk_f32``'s
  and ``v_fmaak_f32``'s constant placed, the row's EXEC and lane-mask bits; registered;
* **EX1..EX3** (*t* + 3 + *p* .. *t* + 5 + *p*): the FP32 lane (:class:`~hdl.simd.valu_fp.VALUFloat`)
  or the integer lane (:class:`~hdl.simd.valu_int.VALUInt`), both with three stages; at the end
  of EX3 the row is written to the VGPRs (EXEC lanes) and its lane-mask bits collected.

The next instruction issues when the last pass reads (*t* + *P*). Reads are not transparent,
so an instruction of the wave that reads the result waits until *t* + 5 (``unwritten``): the
dependent-issue latency is 5, as RDNA's, and an independent instruction of the wave issues at
*t* + 4 (its next turn at issue) or *t* + *P*. A lane
mask (compares, carries, ``v_cmpx``) leaves on ``mask`` with the last pass; the issue stage
keeps the wave from issuing until it is written.

A VALU instruction with 64-bit operands or packed 16-bit halves (VOP3P), and a memory
instruction, reads each row in two cycles (:class:`~hdl.simd.memreq.MemRequest` forms the
request); the integer lane runs such a VALU row in two passes. A transcendental's rows go to
the DCU's unit as one wave. Executed here: :data:`VECTOR_OPS` and :data:`TRANS_OPS` (the issue
stage splits a VOPD pair). Not yet: f16, packed f16 and FP64 operations, DPP.
"""
from __future__ import annotations

from amaranth.hdl import C, Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from isa import OPCODES

from ..config import DCUConfig
from ..isa_tables import Kind, OpId
from ..isa_tables import FmtId
from ..layouts import VecMemResp, VectorPort
from .memreq import MemRequest
from .trans import CLS_OF, TransIn, TransOut
from .lanemul import FP_WIDTH, WIDTH as MUL_W, LaneMultiplier
from .valu_fp import FP_OPS, VALUFloat
from .valu_int import CLAMP_REFUSED, CLAMP_SATURATES, IMPLEMENTED as INT_OPS, PLAIN32, VALUInt
from .vgpr import VgprBanks, VgprWrite

__all__ = ["VectorPipe", "VECTOR_OPS", "TRANS_OPS", "NO_CLAMP", "NO_OMOD", "NO_OPSEL"]

_FP = frozenset(o.name.lower() for o in FP_OPS)
#: Mnemonics the vector pipe executes: the lane units' VALU opcodes (but the 16-bit multiply-adds
#: ``v_mad_u16``/``v_mad_i16``, which would need four reads: src2 and the old destination),
#: and the lane moves (``v_readlane_b32``, ``v_readfirstlane_b32``: a lane to an SGPR;
#: ``v_writelane_b32``: an SGPR to a lane).
_LANE_MOVES = frozenset({"v_readlane_b32", "v_readfirstlane_b32", "v_writelane_b32"})
VECTOR_OPS = frozenset(i.name for i in OPCODES if i.kind == "valu" and i.name in _FP | INT_OPS | _LANE_MOVES
                       and not (i.dst_bits == 16 and len(i.src_bits) == 3))
#: The transcendentals, which the DCU's shared unit (``trans_req``/``trans_resp``) computes.
TRANS_OPS = frozenset(op.name.lower() for op in CLS_OF)
#: The float op with an integer result, which the model refuses with ``omod`` or ``clamp``.
NO_OMOD = frozenset({"v_frexp_exp_i32_f32"})
#: Refused with ``clamp``: the integer ops the model refuses it on, the 64-bit multiply-adds
#: (the integer lane writes a low word before the high word that would saturate it), and
#: NO_OMOD; refused with ``op_sel``: the plain 32-bit integer ops.
NO_CLAMP = frozenset((PLAIN32 - CLAMP_SATURATES) & VECTOR_OPS | CLAMP_REFUSED | NO_OMOD)
NO_OPSEL = frozenset(PLAIN32 & VECTOR_OPS)


def _fields(cfg):
    """What a pass carries from OPR on: the row's control."""
    return {"valid": 1, "wave": range(max(cfg.wave_slots, 2)), "row": range(max(32 // cfg.lanes, 2)), "last": 1,
            "fp": 1, "exec": cfg.lanes, "vdst": range(cfg.vgprs_per_simd), "vdst_we": 1, "mask_we": 1, "sdst": 7,
            "hi": 1, "packed": 1, "pick": 1, "picked": 32, "sres": 1, "scc": 1}


class VectorPipe(wiring.Component):
    """The VALU instructions of the SIMD's waves, a row of ``lanes`` lanes a cycle.

    Parameters
    ----------
    config : DCUConfig
        ``lanes``, ``vgprs_per_simd``, ``wave_slots``, ``shared_multiplier``.

    Attributes
    ----------
    port : In(VectorPort(config))
        The issue stage's side (:func:`~hdl.layouts.VectorPort`): instructions in, with their
        scalar operands the cycle after; ``ready``, ``blocked`` and ``busy`` for its issue
        decisions; the lane masks out.
    side : In(stream.Signature(VgprWrite))
        The launch's v0 rows, written after the memory returns.
    vmem_req, vmem_req_row, lds_req, lds_req_row
        :class:`~hdl.simd.memreq.MemRequest`'s.
    trans_req : Out(stream.Signature(TransIn)); trans_resp : In(stream.Signature(TransOut))
        The transcendental unit: a wave's 32 operands (src0 with its abs and neg) once its rows
        have been read; its results, in order, written a row at a time through
        ``VgprBanks.side`` after the memory returns. Two may be outstanding; a wave's VALU,
        memory and transcendental instructions wait while its result is pending. The payload is
        zero unless ``valid & ready`` (the DCU's shared unit ORs its ports'), and ``ready`` may
        not depend on ``valid``.
    vmem_resp, lds_resp : In(stream.Signature(VecMemResp(config)))
        Return beats (a beat is a row: ``resp_lanes`` equals ``lanes``), written to the VGPRs
        through ``VgprBanks.side``, vector memory first; a beat without a register write is
        taken at once. ``last`` retires the instruction (``port.retired``).
    vgprs : VgprBanks
    memreq : MemRequest
    """

    def __init__(self, config: DCUConfig):
        self.config = config
        if config.resp_lanes != config.lanes:
            raise ValueError("a return beat is a VGPR row: resp_lanes must equal lanes")
        self.vgprs = VgprBanks(config)
        self.memreq = MemRequest(config)
        self.trace = {}         # filled by elaborate
        ports = self.memreq.signature.members
        super().__init__({
            "port": In(VectorPort(config)),
            "side": In(stream.Signature(VgprWrite(self.vgprs.regs, self.vgprs.passes, config.lanes))),
            **{n: ports[n] for n in ("vmem_req", "vmem_req_row", "lds_req", "lds_req_row")},
            "vmem_resp": In(stream.Signature(VecMemResp(config))),
            "lds_resp": In(stream.Signature(VecMemResp(config))),
            "trans_req": Out(stream.Signature(TransIn)),
            "trans_resp": In(stream.Signature(TransOut)),
        })

    def elaborate(self, platform):
        m = Module()
        cfg, L = self.config, self.config.lanes
        P, W = 32 // L, cfg.wave_slots
        m.submodules.vgprs = vg = self.vgprs
        m.submodules.memreq = mq = self.memreq
        for n in ("vmem_req", "lds_req"):
            wiring.connect(m, getattr(mq, n), wiring.flipped(getattr(self, n)))
            m.d.comb += getattr(mq, f"{n}_row").eq(getattr(self, f"{n}_row"))
        port = self.port
        iss = port.issue
        # the transcendentals waiting for their results, in order
        self._pending = data.StructLayout({"wave": range(max(W, 2)), "vdst": range(cfg.vgprs_per_simd), "exec": 32,
                                           "sres": 1, "sdst": 7})
        m.submodules.trans_q = tq = fifo.SyncFIFO(width=self._pending.size, depth=2)
        t_done = self._returns(m, vg, port, tq)

        # ---- the instruction in RD: its passes read one row a cycle
        run = Signal(data.StructLayout({"valid": 1, "mem": 1, "trans": 1, "two": 1, "hi": 1, "second": 1, "tail": 1,
                                        "row": range(max(P, 2)), "wave": range(max(W, 2)),
                                        "base": range(cfg.vgprs_per_simd), "inst": iss.inst.shape(),
                                        "exec": 32, "scalar": data.ArrayLayout(64, 3), "sres": 1, "scc": 1}))
        ri = run.inst
        # A memory instruction reads each row in two cycles (its registers: vaddr, vaddr + 1
        # and data dword 0, then data dwords 1-3), so does a VALU one with 64-bit operands (the
        # low halves, then the high ones), which then takes two passes of the integer lane:
        # one idle cycle (``tail``) after the last row keeps the next instruction's first
        # pass from meeting the last row's second.
        row_end = run.valid & ~run.tail & (run.second | ~run.two)
        ends = row_end & (run.row == P - 1)
        last = run.tail | (ends & ~run.hi)
        # within three cycles: a row a cycle, the last four rows; two cycles a row, the last row
        m.d.comb += port.ready_soon.eq(~run.valid | run.tail | Mux(run.two, run.row == P - 1, run.row + 4 >= P))
        m.d.comb += [port.ready.eq(~run.valid | last), port.mem_ready.eq(port.ready & ~mq.busy),
                     port.valu_row.eq(run.valid & ~run.tail & ~run.mem & ~run.trans)]
        with m.If(run.valid):
            m.d.sync += [run.second.eq(run.two & ~run.second), run.row.eq(run.row + row_end)]
            with m.If(last):
                m.d.sync += run.valid.eq(0)
            with m.If(ends & run.hi):
                m.d.sync += run.tail.eq(1)
        mem = (iss.inst.kind != Kind.VALU) & (iss.inst.kind != Kind.VTRANS)
        i = iss.inst
        # two passes: a 64-bit operand or result, or packed 16-bit halves (read twice)
        wide = (i.src0_dw == 2) | (i.src1_dw == 2) | (i.src2_dw == 2) | (i.vdst_dw == 2) | (i.fmt == FmtId.VOP3P)
        with m.If(iss.valid):
            m.d.sync += [run.valid.eq(1), run.mem.eq(mem), run.trans.eq(i.kind == Kind.VTRANS),
                         run.two.eq(mem | wide), run.hi.eq(~mem & wide),
                         run.second.eq(0), run.tail.eq(0), run.row.eq(0), run.wave.eq(iss.wave),
                         run.base.eq(iss.base), run.inst.eq(iss.inst), run.exec.eq(iss.exec),
                         run.sres.eq(iss.sres), run.scc.eq(iss.scc)]
        m.d.comb += [mq.start.valid.eq(iss.valid & mem), mq.start.wave.eq(iss.wave), mq.start.exec.eq(iss.exec),
                     mq.start.inst.eq(iss.inst), mq.start.lds.eq(iss.inst.fmt == FmtId.DS),
                     mq.saddr.eq(port.scalar[0])]
        first = run.valid & (run.row == 0) & ~run.second
        # the scalar operands come the cycle after issue
        scalar = data.View(data.ArrayLayout(64, 3), Mux(first, port.scalar, run.scalar))
        with m.If(first):
            m.d.sync += run.scalar.eq(port.scalar)
        mac = ri.reads_dst
        pair = ri.data1_dw != 0         # DS two-operand forms: data1 at dword 2
        def regs(*rs):
            return Cat(*(r[:8] for r in rs))
        read = Mux(run.mem, Mux(run.second, regs(ri.data0 + 1, Mux(pair, ri.data1, ri.data0 + 2),
                                                 Mux(pair, ri.data1 + 1, ri.data0 + 3)),
                                regs(ri.vaddr, ri.vaddr + 1, ri.data0)),
                   Mux(run.second, regs(ri.src0 + 1, ri.src1 + 1, ri.src2 + 1),
                       regs(ri.src0, ri.src1, Mux(mac, ri.vdst, ri.src2))))
        for k, rd in enumerate(vg.rd):
            m.d.comb += [rd.reg.eq(run.base + read[8 * k:8 * k + 8]), rd.row.eq(run.row)]

        # ---- OPR: operands selected and registered for the lanes
        fp = Signal()
        with m.Switch(ri.op):
            with m.Case(*(OpId[n.upper()] for n in VECTOR_OPS & _FP)):
                m.d.comb += fp.eq(1)
        ctl = _fields(cfg)
        # the lane moves: the lane (v_readlane's and v_writelane's S1, or EXEC's first), the
        # row holding it; v_writelane is a v_mov_b32 of S0 to that lane alone
        pick = (ri.op == OpId.V_READLANE_B32) | (ri.op == OpId.V_READFIRSTLANE_B32)
        put = ri.op == OpId.V_WRITELANE_B32
        lane = Signal(5)
        with m.If(ri.op == OpId.V_READFIRSTLANE_B32):
            for n in reversed(range(32)):
                with m.If(run.exec[n]):
                    m.d.comb += lane.eq(n)
        with m.Else():
            m.d.comb += lane.eq(scalar[1][:5])
        lb = exact_log2(L)
        hit = lane[lb:] == run.row if P > 1 else C(1, 1)
        exec_row = Mux(put, Mux(hit, C(1, L) << lane[:lb], 0), run.exec.word_select(run.row, L))
        opr = Signal(data.StructLayout({**ctl, "mem": 1, "trans": 1, "two": 1, "second": 1, "vgpr": 3, "hit": 1,
                                        "sel": range(L),
                                        "scalar": data.ArrayLayout(32, 3), "literal": 32, "mask_in": L, "op": OpId,
                                        "fmamk": 1, "fmaak": 1, "abs": 3, "neg": 3, "opsel": 4, "clamp": 1,
                                        "omod": 2}))
        half = [Mux(run.second, scalar[k][32:], scalar[k][:32]) for k in range(3)]
        m.d.sync += [opr.valid.eq(run.valid & ~run.tail), opr.mem.eq(run.mem), opr.trans.eq(run.trans),
                     opr.two.eq(run.two),
                     opr.second.eq(run.second), opr.hi.eq(run.hi), opr.packed.eq(ri.fmt == FmtId.VOP3P),
                     opr.wave.eq(run.wave), opr.row.eq(run.row), opr.last.eq(ends),
                     opr.fp.eq(fp), opr.exec.eq(exec_row), opr.vdst.eq(run.base + ri.vdst),
                     opr.vdst_we.eq(ri.vdst_dw != 0), opr.mask_we.eq((ri.sdst_dw != 0) | ri.writes_exec),
                     opr.sdst.eq(ri.sdst),
                     opr.vgpr.eq(Cat(ri.src0[8], ri.src1[8], ri.src2[8] | mac)), opr.scalar.eq(Cat(*half)),
                     opr.literal.eq(ri.literal), opr.mask_in.eq(scalar[2][:32].word_select(run.row, L)),
                     opr.pick.eq(pick), opr.hit.eq(hit), opr.sel.eq(lane[:lb]), opr.sres.eq(run.sres),
                     opr.scc.eq(run.scc),
                     opr.op.eq(Mux(run.valid & ~pick, Mux(put, OpId.V_MOV_B32, ri.op), OpId.NONE)),
                     opr.fmamk.eq(ri.op == OpId.V_FMAMK_F32),
                     opr.fmaak.eq(ri.op == OpId.V_FMAAK_F32), opr.abs.eq(ri.abs), opr.neg.eq(ri.neg),
                     opr.opsel.eq(ri.opsel), opr.clamp.eq(ri.clamp), opr.omod.eq(ri.omod)]
        m.d.comb += [mq.rows.valid.eq(opr.valid & opr.mem), mq.rows.row.eq(opr.row), mq.rows.second.eq(opr.second)]
        # a lane mask three and four cycles before it is written (two: ``ex``)
        soon_opr = opr.valid & opr.last & opr.mask_we & ~opr.mem & ~opr.trans
        soon_rd = ends & ~run.mem & ~run.trans & ((ri.sdst_dw != 0) | ri.writes_exec)
        # the lane v_readlane/v_readfirstlane reads, kept until its last row goes on with it
        picked = Signal(32)
        this = Mux(opr.hit, vg.rd[0].data.word_select(opr.sel, 32), picked)
        with m.If(opr.valid & opr.pick):
            m.d.sync += picked.eq(this)
        m.d.comb += [mq.rows.data[k].eq(rd.data) for k, rd in enumerate(vg.rd)]
        src = [Mux(opr.vgpr[k], rd.data, Cat(*[opr.scalar[k]] * L)) for k, rd in enumerate(vg.rd)]
        k_lanes = Cat(*[opr.literal] * L)
        # the low halves of a 64-bit row wait here for the high ones
        low = [Signal(32 * L, name=f"low{k}") for k in range(3)]
        with m.If(opr.valid & opr.two & ~opr.second):
            m.d.sync += [lo.eq(v) for lo, v in zip(low, src)]
        ex = Signal(data.StructLayout({**ctl, "a": 32 * L, "b": 32 * L, "c": 32 * L,
                                       "high": data.ArrayLayout(32 * L, 3), "mask_in": L, "op": OpId, "abs": 3,
                                       "neg": 3, "opsel": 4, "clamp": 1, "omod": 2}))
        # A row with a 64-bit operand or result runs through the integer lane in two passes,
        # its low word and then its high one (``pass1``): ``ex`` holds the row for the second.
        # OPR has no row for EX then: the next row's low halves, or the instruction's tail.
        pass1 = Signal()
        again = ex.valid & ex.hi & ~pass1
        m.d.sync += pass1.eq(again)
        t_issue = iss.valid & (i.kind == Kind.VTRANS)
        self._trans_request(m, port, opr, src[0], tq, t_issue)
        with m.If(~again):
            m.d.sync += [getattr(ex, f).eq(getattr(opr, f)) for f in (*ctl, "mask_in", "op", "abs", "neg", "opsel",
                                                                       "clamp", "omod") if f not in ("valid", "picked")]
            m.d.sync += [ex.valid.eq(opr.valid & ~opr.mem & ~opr.trans & (opr.second | ~opr.two)),
                         ex.picked.eq(this)]
            m.d.sync += [ex.a.eq(Mux(opr.two, low[0], src[0])),
                         ex.b.eq(Mux(opr.two, low[1], Mux(opr.fmamk, k_lanes, src[1]))),
                         ex.c.eq(Mux(opr.two, low[2], Mux(opr.fmamk, src[1], Mux(opr.fmaak, k_lanes, src[2]))))]
            m.d.sync += [ex.high[k].eq(Mux(opr.two, src[k], 0)) for k in range(3)]

        # ---- EX1..EX3: the lanes; the row's control follows in two registers
        ext = {"external_mul": cfg.shared_multiplier, "stages": 3}
        m.submodules.valu_fp = vfp = VALUFloat(L, **ext)
        m.submodules.valu_int = vint = VALUInt(L, external_mul=cfg.shared_multiplier)
        m.d.comb += [vfp.op.eq(Mux(ex.fp, ex.op, OpId.NONE)), vfp.a.eq(ex.a), vfp.b.eq(ex.b), vfp.c.eq(ex.c),
                     vfp.abs.eq(ex.abs), vfp.neg.eq(ex.neg), vfp.clamp.eq(ex.clamp), vfp.omod.eq(ex.omod),
                     vint.op.eq(Mux(ex.fp, OpId.NONE, ex.op)), vint.hi.eq(pass1), vint.mask_in.eq(ex.mask_in),
                     vint.lane_base.eq(ex.row * L), vint.opsel.eq(ex.opsel), vint.clamp.eq(ex.clamp),
                     vint.opsel_hi.eq(Cat(ex.omod, ex.opsel[3])),      # VOP3P's op_sel_hi
                     vint.d_old.eq(ex.c)]            # a 16-bit result keeps the other half of c: the old destination
        for k, (a, v) in enumerate(zip((vint.a, vint.b, vint.c), (ex.a, ex.b, ex.c))):
            m.d.comb += a.eq(Cat(*[Cat(_cndmask_mods(ex, k, v[32 * n:32 * n + 32]), ex.high[k][32 * n:32 * n + 32])
                                   for n in range(L)]))
        if cfg.shared_multiplier:      # one multiplier per lane for both units, used in their EX2
            m.submodules.lane_mul = lmul = LaneMultiplier(L)
            mul_fp = Signal()
            m.d.sync += mul_fp.eq(ex.fp)
            m.d.comb += [lmul.int_x.eq(vint.mul_x), lmul.int_y.eq(vint.mul_y), lmul.fp_x.eq(vfp.mul_x),
                         lmul.fp_y.eq(vfp.mul_y), lmul.fp.eq(mul_fp), vint.mul_p.eq(lmul.p),
                         vfp.mul_p.eq(Cat(*[lmul.p[2 * MUL_W * n:2 * MUL_W * n + 2 * FP_WIDTH] for n in range(L)]))]
        # a two-pass row's low pass writes the low word; the high pass the high word, its lane
        # mask and the instruction's end
        ex2, ex3 = (Signal(data.StructLayout({**ctl, "pass1": 1}), name=n) for n in ("ex2", "ex3"))
        final = ~ex.hi | pass1
        m.d.sync += [getattr(ex2, f).eq(getattr(ex, f)) for f in ctl if f != "last"] + [ex3.eq(ex2)]
        m.d.sync += [ex2.last.eq(ex.last & final), ex2.pass1.eq(pass1)]

        # ---- write-back: the row to the VGPRs, the lane mask collected over the passes
        d = Mux(ex3.fp, vfp.d, vint.d)
        lanes_set = Mux(~ex3.hi | ex3.pass1, Mux(ex3.fp, vfp.mask_out, vint.mask_out) & ex3.exec, 0)
        # (a packed op writes its word once, from the high pass)
        m.d.comb += [vg.valu.valid.eq(ex3.valid & ex3.vdst_we & (ex3.pass1 | ~ex3.packed)),
                     vg.valu.w.reg.eq(ex3.vdst + (ex3.pass1 & ~ex3.packed)),
                     vg.valu.w.row.eq(ex3.row), vg.valu.w.data.eq(d), vg.valu.w.mask.eq(ex3.exec)]
        acc = Signal(32)
        collected = acc | (lanes_set << (ex3.row * L))[:32]
        with m.If(ex3.valid):
            m.d.sync += acc.eq(Mux(ex3.last, 0, collected))
        # a scalar float instruction's result: lane 0 of its first row
        lane0 = Signal(32)
        with m.If(ex3.valid & (ex3.row == 0)):
            m.d.sync += lane0.eq(d[:32])
        value = Mux(ex3.pick, ex3.picked, Mux(ex3.sres, Mux(ex3.row == 0, d[:32], lane0), collected))
        m.d.comb += [port.mask.valid.eq(ex3.valid & ex3.last & ex3.mask_we), port.mask.wave.eq(ex3.wave),
                     port.mask.sdst.eq(ex3.sdst), port.mask.value.eq(value), port.mask.scc.eq(ex3.scc),
                     port.soon.eq(Cat(ex.valid & ex.last & ex.mask_we & final,
                                      soon_opr & ~opr.hi | again & ex.last & ex.mask_we,
                                      soon_rd & ~run.hi | soon_opr & opr.hi))]

        # ---- per wave: instructions in flight; results a read would not see yet
        self._raw(m, port)
        # A wave waits for a VALU instruction of two cycles a row (``wide``) to write its last
        # row, and for a transcendental's result.
        done_w = ex3.wave
        done = ex3.valid & ex3.last
        for w in range(W):
            n = Signal(range(4), name=f"in_flight{w}")
            wide_w = Signal(name=f"wide{w}")
            m.d.sync += n.eq(n + (iss.valid & (i.kind == Kind.VALU) & (iss.wave == w)) - (done & (done_w == w)))
            with m.If(n == 0):
                m.d.sync += wide_w.eq(0)
            with m.If(iss.valid & ~mem & wide & (iss.wave == w)):
                m.d.sync += wide_w.eq(1)
            t = Signal(range(4), name=f"trans_pending{w}")
            m.d.sync += t.eq(t + (t_issue & (iss.wave == w)) - (t_done.valid & (t_done.wave == w)))
            m.d.comb += port.busy[w].eq((n != 0) | (t != 0))
            m.d.comb += port.blocked[w].eq((wide_w & (n != 0)) | (t != 0))
        # for a lock-step check: the VALU's VGPR write, its wave, an instruction's last write;
        # the transcendental whose result is being written, and its end
        self.trace = {"valu": vg.valu, "valu_wave": done_w, "valu_done": done,
                      "trans": data.View(self._pending, tq.r_data), "trans_done": t_done.valid}
        return m

    def _raw(self, m, port):
        """``port.unwritten``: the VGPRs of the VALU instruction issued four cycles before. Pass
        *p* of an instruction issued at *t* writes its row at the end of *t* + 5 + *p*, which
        pass *p* of one issued at *t* + 4 reads in that cycle: reads are not transparent, so it
        would get the old row, and a cycle later it gets the new one. A wave's instructions
        reach issue four cycles apart at the least (the front end), so no other instruction of
        the wave is that close."""
        i = port.issue.inst
        ago = [Signal.like(port.unwritten, name=f"wrote{k + 1}") for k in range(4)]   # issued k + 1 cycles ago
        m.d.sync += [ago[0].valid.eq(port.issue.valid & (i.kind == Kind.VALU) & (i.vdst_dw != 0)),
                     ago[0].wave.eq(port.issue.wave), ago[0].vdst.eq(i.vdst), ago[0].dw.eq(i.vdst_dw)]
        m.d.sync += [b.eq(a) for a, b in zip(ago, ago[1:])]
        m.d.comb += port.unwritten.eq(ago[3])

    def _trans_request(self, m, port, opr, src0, tq, t_issue):
        """A transcendental's rows collected as they pass OPR (src0 with abs, then neg), then
        offered to the unit; its wave, destination and EXEC queued when the unit takes it."""
        L = self.config.lanes
        sign = C(sum(1 << (32 * n + 31) for n in range(L)), 32 * L)
        a = Mux(opr.abs[0], src0 & ~sign, src0)
        a = Mux(opr.neg[0], a ^ sign, a)
        req = self.trans_req
        # the payload is zero unless taken: a shared unit ORs its ports' payloads
        held = Signal(TransIn)
        with m.If(req.valid & req.ready):
            m.d.comb += req.payload.eq(held)
        entry = Signal(self._pending)
        taking = Signal()               # issued, not yet taken by the unit
        m.d.comb += port.trans_ready.eq(~taking & tq.w_rdy)
        with m.If(t_issue):
            m.d.sync += taking.eq(1)
        with m.If(opr.valid & opr.trans):
            m.d.sync += [held.a.word_select(opr.row, 32 * L).eq(a), entry.wave.eq(opr.wave),
                         entry.vdst.eq(opr.vdst), entry.exec.word_select(opr.row, L).eq(opr.exec),
                         entry.sres.eq(opr.sres), entry.sdst.eq(opr.sdst),
                         held.op.eq(opr.op)]
            with m.If(opr.last):
                m.d.sync += req.valid.eq(1)
        with m.If(req.valid & req.ready):
            m.d.sync += [req.valid.eq(0), taking.eq(0)]
        m.d.comb += [tq.w_en.eq(req.valid & req.ready), tq.w_data.eq(entry)]

    def _returns(self, m, vg, port, tq):
        """Return beats, transcendental results and the launch's v0 into ``VgprBanks.side``;
        retirements. Returns the finished transcendental (``valid``, ``wave``)."""
        W = self.config.wave_slots
        base = Array(Signal(range(self.config.vgprs_per_simd), name=f"base{w}") for w in range(W))
        with m.If(port.issue.valid):
            m.d.sync += base[port.issue.wave].eq(port.issue.base)
        vr, lr, v0, side = self.vmem_resp, self.lds_resp, self.side, vg.side
        for resp, first in ((vr, 1), (lr, ~vr.valid)):
            b = resp.payload
            with m.If(resp.valid & first):
                m.d.comb += [side.valid.eq(b.write), resp.ready.eq(~b.write | side.ready),
                             side.payload.reg.eq(base[b.wave] + b.vdst), side.payload.row.eq(b.grp),
                             side.payload.data.eq(b.data), side.payload.mask.eq(b.mask)]
        # a transcendental's result: its rows in order, then it is taken
        L, P = self.config.lanes, 32 // self.config.lanes
        tr, head = self.trans_resp, data.View(self._pending, tq.r_data)
        row = Signal(range(max(P, 2)))
        done = Signal(data.StructLayout({"valid": 1, "wave": range(max(self.config.wave_slots, 2))}))
        m.d.comb += done.wave.eq(head.wave)
        # a scalar-destination one's lane 0 to the issue stage, not to the VGPRs
        sres = port.sres
        m.d.comb += [sres.payload.wave.eq(head.wave), sres.payload.sdst.eq(head.sdst),
                     sres.payload.value.eq(tr.payload.d[:32])]
        with m.If(tr.valid & head.sres):
            m.d.comb += [sres.valid.eq(1), tr.ready.eq(sres.ready), tq.r_en.eq(sres.ready), done.valid.eq(sres.ready)]
        with m.If(~vr.valid & ~lr.valid & tr.valid & ~head.sres):
            m.d.comb += [side.valid.eq(1), side.payload.reg.eq(head.vdst), side.payload.row.eq(row),
                         side.payload.data.eq(tr.payload.d.word_select(row, 32 * L)),
                         side.payload.mask.eq(head.exec.word_select(row, L))]
            with m.If(side.ready):
                m.d.sync += row.eq(Mux(row == P - 1, 0, row + 1))
                with m.If(row == P - 1):
                    m.d.comb += [tr.ready.eq(1), tq.r_en.eq(1), done.valid.eq(1)]
        with m.If(~vr.valid & ~lr.valid & (~tr.valid | head.sres)):
            m.d.comb += [side.valid.eq(v0.valid), side.payload.eq(v0.payload), v0.ready.eq(side.ready)]
        vb, lb = vr.payload, lr.payload
        for w in range(W):
            m.d.comb += [port.retired.load[w].eq(vr.valid & vr.ready & vb.last & ~vb.store & (vb.wave == w)),
                         port.retired.store[w].eq(vr.valid & vr.ready & vb.last & vb.store & (vb.wave == w)),
                         port.retired.ds[w].eq(lr.valid & lr.ready & lb.last & (lb.wave == w))]
        return done


def _cndmask_mods(ex, k, v):
    """Source ``k`` of ``v_cndmask_b32`` (one 32-bit lane ``v``) with its VOP3 abs/neg, the
    float modifiers LLVM accepts on it: bit 31 cleared, then flipped."""
    cnd = ex.op == OpId.V_CNDMASK_B32
    v = Mux(cnd & ex.abs[k], Cat(v[:31], Const(0, 1)), v)
    return Mux(cnd & ex.neg[k], v ^ (1 << 31), v)
