"""The SIMD's issue stage and scalar pipe: SGPRs in RAM, the scalar ALU, branches
(docs/simd.md).

It takes the front end's decoded instructions, answers each with a
:class:`~hdl.layouts.Steer`, runs the scalar ones and hands the vector and memory ones to
the vector pipe (:class:`~hdl.layouts.VectorPort`), in three stages:

* **ISS** (*t*): legality, the wait counters and hazards; the SGPR read addresses (src0 or a
  global access's ``saddr``, src1, src2 or the old destination; for a scalar load its base
  pair and ``soffset``). SALU, vector and memory instructions, hints and barriers answer
  ``NEXT``; ``s_branch`` and ``s_cbranch_*`` (on SCC, VCC or EXEC, flip-flops) ``JUMP`` or
  ``NEXT``; ``s_endpgm`` ``STOP``. What must wait is replayed (``NEXT`` to its own PC: the
  front end selects it again four cycles later): ``s_wait_*`` above its count, ``s_endpgm``
  with memory traffic or vector results outstanding, a scalar load while the request port
  is taken or ``kmcnt`` is full, a vector instruction the vector pipe cannot take, any
  instruction of a wave whose lane mask is pending, ``s_barrier_wait`` before the wave's
  barrier is released, a SALU instruction while the scalar ALU is busy.
* **OPR** (*t* + 1): the pairs read, each operand selected (SGPR, inline constant, literal,
  VCC, EXEC, SCC): into :class:`~hdl.simd.scalar_alu.ScalarALU` (``start``), or to the vector
  pipe; ``s_setpc_b64`` and ``s_swappc_b64`` answer ``JUMP`` to the pair read (ISS takes
  nothing that cycle); a scalar load's address (base + offset + ``soffset``) into the
  ``smem_req`` register, held until taken.
* **EX** (*t* + 2 .. *t* + 4): the ALU's passes (one, two for 64-bit operations, three for
  ``s_mul_u64``), and its SGPR, SCC, EXEC and VCC writes at the end of the last;
  ``s_getpc_b64`` and ``s_swappc_b64`` write the next PC at *t* + 2.

Barriers are the DCU's (a workgroup spans SIMDs): ``s_barrier_signal`` raises the wave's
``bar_wait`` bit, and ``bar_release`` lets its ``s_barrier_wait`` pass once.

Scalar loads count in the wave's ``kmcnt`` from ISS to the response's last dword; response
dwords are written to the SGPR file in the cycles EX and the lane masks do not write it.
Vector memory instructions count in ``loadcnt``, ``storecnt`` or ``dscnt`` until the vector
pipe retires them.

A wave has one instruction between selection and issue at a time, and its next one reaches
ISS four cycles after this one at the earliest (:mod:`hdl.simd.fetch`): by then a scalar
result of one or two passes has landed, so the pipe needs no scoreboard (a wave waits for
three). A vector or memory instruction that reads a VGPR its wave's VALU instruction of four
cycles before writes is held at ISS for one cycle (``vector.unwritten``) rather than replayed:
a dependent VALU instruction issues five cycles after the one it reads, an independent one
four. A word that does not decode, or an instruction this SIMD does not execute, stops its
wave and is reported on ``error`` with the wave and PC.

The SGPR file holds 64 pairs of 32-bit registers a wave (s0..s105, ttmp, M0 at code 125;
VCC and EXEC are flip-flops, read by branches and the vector pipe): a RAM with three read
ports and one write port of two 32-bit halves.
"""
from __future__ import annotations

from amaranth.hdl import C, Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from isa import OPCODES, by_name as isa_info
from isa import operands as O
from isa.operands import inline_constant

from ..config import DCUConfig
from ..isa_tables import Kind, OpId
from ..isa_tables import FmtId
from ..layouts import (ADDR, ISSUE_GROUPS, SEQ, DecodedInst, DecodeOut, LaunchLayout, PerfEvents, SmemReq, SmemResp,
                       StallReason, Steer, SteerLayout, VectorPort, WaveStart, WaveStatus)
from .scalar_alu import IMPLEMENTED as SALU_OPS, PASSES, ScalarALU
from .scalar_float import ACCUMULATES, SCALAR_COMPARES, SCALAR_FLOAT, SCALAR_TRANS
from .memreq import MEMORY_OPS
from .vector import NO_CLAMP, NO_OMOD, NO_OPSEL, TRANS_OPS, VECTOR_OPS
from .valu_int import PACKED
from .vgpr import VgprWrite

__all__ = ["ScalarPipe", "PipeError"]

VCCZ, EXECZ, SCC = 251, 252, 253
TTMP = 108      # ttmp0's code


class PipeError(enum.Enum, shape=2):
    """Why a wave was stopped."""
    NONE = 0
    ILLEGAL = 1         # the words at its PC are not an instruction the SIMD executes
    UNSUPPORTED = 2     # an instruction of a kind this pipe does not execute


def ErrorLayout(cfg):
    return data.StructLayout({"wave": range(cfg.wave_ids), "pc": ADDR, "cause": PipeError})


_DS_KINDS = (Kind.DS_LOAD, Kind.DS_STORE, Kind.DS_ATOMIC)
_MEM_KINDS = (Kind.VMEM_LOAD, Kind.VMEM_STORE, Kind.VMEM_ATOMIC, Kind.CACHE, *_DS_KINDS)
_KINDS = (Kind.SALU, Kind.SBRANCH, Kind.SWAIT, Kind.SHINT, Kind.SBARRIER, Kind.SENDPGM, Kind.SMEM, Kind.VALU,
          Kind.VTRANS, *_MEM_KINDS)
#: The vector opcodes whose source k is 16 bits wide, or packed 16-bit halves (an inline
#: constant is then its 16-bit form, the high half 0).
_HALF = [[n for n in VECTOR_OPS if len(isa_info(n).src_bits) > k and (isa_info(n).src_bits[k] == 16 or n in PACKED)]
         for k in range(3)]
CNT_MAX = 63    # loadcnt's, storecnt's and dscnt's largest count (RDNA 4: 6 bits)
_NOT_IN_FILE = (O.NULL, O.VCC_LO, O.VCC_HI, O.EXEC_LO, O.EXEC_HI)     # flip-flops, or nothing
_VECTOR_FORMATS = (FmtId.VOP1, FmtId.VOP2, FmtId.VOPC, FmtId.VOP3, FmtId.VOP3SD, FmtId.VOP3P)
KM_MAX = 31     # kmcnt's largest count (RDNA 4: 5 bits)
_LOADS = [i.name for i in OPCODES if i.kind == "smem" and i.name.startswith("s_load_")]
_CONDITIONS = {OpId.S_CBRANCH_SCC0: ("scc", 0), OpId.S_CBRANCH_SCC1: ("scc", 1),
               OpId.S_CBRANCH_VCCZ: ("vccz", 1), OpId.S_CBRANCH_VCCNZ: ("vccz", 0),
               OpId.S_CBRANCH_EXECZ: ("execz", 1), OpId.S_CBRANCH_EXECNZ: ("execz", 0)}


def _source_codes(inst, smem, vglobal):
    """The codes src0's and src1's reads and selects take: a scalar load's base pair and
    ``soffset``, a global access's ``saddr``, or the instruction's src0 and src1."""
    return (Mux(smem, Cat(Const(0, 1), inst.sbase, Const(0, 2)), Mux(vglobal, Cat(inst.saddr, Const(0, 2)), inst.src0)),
            Mux(smem, Cat(inst.soffset, Const(0, 2)), inst.src1))


def _member(op, names) -> Signal:
    """``op`` is one of the mnemonics ``names`` (a table of one bit per OpId)."""
    table = sum(1 << OpId[n.upper()].value for n in names)
    return Const(table, 1 << len(op.as_value())).bit_select(op.as_value(), 1)


def _reads_unwritten(inst, wave, w) -> Signal:
    """Instruction ``inst`` of ``wave`` reads a VGPR of the write ``w``
    (:class:`~hdl.layouts.VectorPort` ``unwritten``): its sources, the old destination it
    keeps half of or accumulates into, a memory instruction's address and data."""
    def meets(reg, n):
        return (n != 0) & (reg < w.vdst + w.dw) & (w.vdst < reg + n)
    reads = [(src[:8], Mux(src[8], n, 0)) for src, n in ((inst.src0, inst.src0_dw), (inst.src1, inst.src1_dw),
                                                         (inst.src2, inst.src2_dw))]
    reads += [(inst.vdst, Mux(inst.reads_dst, inst.vdst_dw, 0)), (inst.vaddr, inst.vaddr_dw),
              (inst.data0, inst.data0_dw), (inst.data1, inst.data1_dw)]
    return w.valid & (w.wave == wave) & Cat(*(meets(r, n) for r, n in reads)).any()


class ScalarPipe(wiring.Component):
    """Scalar instructions of the SIMD's waves, one issued a cycle.

    Parameters
    ----------
    config : DCUConfig
        ``wave_slots``, ``wave_ids``.
    wave_bits : int
        Width of the wave tag of ``inst``.

    Attributes
    ----------
    inst : In(stream.Signature(DecodeOut(wave_bits)))
        Decoded instructions; taken at ISS (not while an OPR branch answers).
    steer : Out(stream.Signature(SteerLayout(config)))
        One answer per instruction taken.
    launch : In(stream.Signature(LaunchLayout(config)))
        A wave for a free slot (the first): its SGPRs s[0:3], ttmp7 and ttmp9 are written in the
        write port's free cycles, EXEC set, SCC and VCC cleared; then ``started`` names it. Ready
        while a slot is free and no launch is being written. The waves of a workgroup (``wg``)
        issue nothing until the one marked ``wg_last`` has arrived, so a barrier never
        completes without all of them.
    started : Out(stream.Signature(WaveStart(config)))
        The launched wave and its PC, for the front end (which is always ready).
    error : Out(stream.Signature(ErrorLayout(config)))
        A wave stopped on an instruction it cannot run (one cycle, not held).
    smem_req : Out(stream.Signature(SmemReq(config)))
    smem_resp : In(stream.Signature(SmemResp(config)))
        Scalar loads: one request per load, one response beat per dword (``last`` on the last).
    bar_wait : Out(config.wave_slots)
        Bit ``w``: wave ``w`` has signalled the workgroup barrier and is not released yet.
    bar_release : In(config.wave_slots)
        A strobe: each wave whose ``bar_wait`` is set is released.
    vector : Out(VectorPort(config))
        The vector pipe.
    v0 : Out(stream.Signature(VgprWrite))
        A launch's v0 (the work-item IDs), a row at a time, before the launch is taken.
    pcs : In(ArrayLayout(ADDR, wave_slots))
        Each wave's PC (the front end's), for ``waves``.
    launched_slot : Out(range(wave_ids))
        The slot the next launch takes.
    idle : Out(1)
        No wave is resident.
    ended : Out(wave_slots)
        A strobe, bit ``w``: wave ``w``'s ``s_endpgm`` issued (its memory traffic and register
        writes done) and its slot is free from this cycle. A wave stopped by an error stays
        resident.
    waves : Out(ArrayLayout(WaveStatus, wave_slots))
        Each slot's residency, PC, counters and barrier wait, for a report.
    events : Out(PerfEvents)
        What the performance counters count this cycle.
    sgprs : memory.Memory
        The SGPR file.
    """

    def __init__(self, config: DCUConfig, wave_bits: int):
        self.config = config
        #: 64-bit pairs, 64 a wave slot (register ``2k`` low, ``2k + 1`` high)
        self.sgprs = memory.Memory(shape=64, depth=config.wave_slots * 64, init=[])
        self.trace = {}         # filled by elaborate
        super().__init__({
            "inst": In(stream.Signature(DecodeOut(wave_bits))),
            "steer": Out(stream.Signature(SteerLayout(config))),
            "launch": In(stream.Signature(LaunchLayout(config))),
            "started": Out(stream.Signature(WaveStart(config))),
            "error": Out(stream.Signature(ErrorLayout(config))),
            "smem_req": Out(stream.Signature(SmemReq(config))),
            "smem_resp": In(stream.Signature(SmemResp(config))),
            "bar_wait": Out(config.wave_slots),
            "bar_release": In(config.wave_slots),
            "vector": Out(VectorPort(config)),
            "v0": Out(stream.Signature(VgprWrite(config.vgprs_per_simd, 32 // config.lanes, config.lanes))),
            "pcs": In(data.ArrayLayout(ADDR, config.wave_slots)),
            "launched_slot": Out(range(config.wave_ids)),
            "idle": Out(1),
            "ended": Out(config.wave_slots),
            "waves": Out(data.ArrayLayout(WaveStatus, config.wave_slots)),
            "events": Out(PerfEvents),
        })

    def elaborate(self, platform):
        m = Module()
        W = self.config.wave_slots
        exec_ = [Signal(64, name=f"exec{w}") for w in range(W)]
        vcc = [Signal(64, name=f"vcc{w}") for w in range(W)]
        scc = Signal(W)
        kmcnt = Array(Signal(range(KM_MAX + 1), name=f"kmcnt{w}") for w in range(W))
        cnt = {c: Array(Signal(range(CNT_MAX + 1), name=f"{c}cnt{w}") for w in range(W))
               for c in ("load", "store", "ds")}
        seq = Array(Signal(SEQ, name=f"seq{w}") for w in range(W))
        bar_sig, bar_pass = Signal(W), Signal(W)
        m.d.comb += self.bar_wait.eq(bar_sig)
        held = Signal(W)                        # launched; its workgroup's last wave is not yet
        wg = Array(Signal(8, name=f"wg{w}") for w in range(W))
        m.submodules.sgprs = sgprs = self.sgprs
        reads = [sgprs.read_port() for _ in range(3)]            # src0, src1, old destination
        wport = sgprs.write_port(granularity=32)

        # ---- ISS
        x = self.inst.payload
        xw = x.tag
        xi, sres, scc_res = self._as_issued(m, x.inst)
        opr = Signal(data.StructLayout({"valid": 1, "valu": 1, "vglobal": 1, "salu": 1, "jump_pair": 1, "getpc": 1,
                                        "smem": 1,
                                        "wave": range(max(W, 2)),
                                        "inst": DecodedInst,
                                        "next_pc": ADDR}))
        ans = self.steer.payload
        known = Cat(*(xi.kind == k for k in _KINDS)).any()
        vp = self.vector
        is_valu = xi.kind == Kind.VALU
        valu_ok = (_member(xi.op, VECTOR_OPS) & (Cat(*(xi.fmt == f for f in _VECTOR_FORMATS)).any() | sres) &
                   ~(xi.clamp & _member(xi.op, NO_CLAMP)) & ~((xi.opsel != 0) & _member(xi.op, NO_OPSEL)) &
                   ~((xi.omod != 0) & _member(xi.op, NO_OMOD)) &
                   ~(((xi.neg | xi.abs) != 0) & _member(xi.op, PACKED)))    # VOP3P neg_lo/neg_hi
        is_trans = xi.kind == Kind.VTRANS       # the unit has no output modifiers
        trans_ok = (_member(xi.op, TRANS_OPS) & ((xi.fmt == FmtId.VOP1) | (xi.fmt == FmtId.VOP3)) & ~xi.clamp &
                    (xi.omod == 0))
        mask_busy = Signal(W)                   # a VALU lane mask of the wave is not written yet
        salu_ok = _member(xi.op, SALU_OPS)
        jump_pair = (xi.op == OpId.S_SETPC_B64) | (xi.op == OpId.S_SWAPPC_B64)
        getpc = xi.op == OpId.S_GETPC_B64
        is_smem = xi.kind == Kind.SMEM
        # a load's dwords go to the SGPR file: not into VCC, EXEC or beyond
        load_bad = is_smem & (~_member(xi.op, _LOADS) | (xi.sdst + xi.sdst_dw > O.VCC_LO))
        is_mem = Cat(*(xi.kind == k for k in _MEM_KINDS)).any()
        is_ds = Cat(*(xi.kind == k for k in _DS_KINDS)).any()
        # OPR's answer has the port. What can issue sooner than a replay would return waits
        # here: a VGPR read too soon after its write (a cycle), a VALU instruction while the
        # pipe's last rows are read (three cycles at most).
        raw = (is_valu | is_mem | is_trans) & _reads_unwritten(xi, xw, vp.unwritten)
        pipe_soon = is_valu & ~vp.ready & vp.ready_soon
        take = self.inst.valid & ~(opr.valid & opr.jump_pair) & ~raw & ~pipe_soon
        m.d.comb += self.inst.ready.eq(take)
        counts = {"load": ((((xi.kind == Kind.VMEM_LOAD) | (xi.kind == Kind.VMEM_ATOMIC)) & (xi.vdst_dw != 0)) |
                           (xi.op == OpId.GLOBAL_INV))}
        counts.update(ds=is_ds, store=is_mem & ~is_ds & ~counts["load"])
        bad = (xi.illegal | ~known | ((xi.kind == Kind.SALU) & ~salu_ok & ~getpc) | load_bad | (is_valu & ~valu_ok) |
               (is_mem & ~_member(xi.op, MEMORY_OPS)) | (is_trans & ~trans_ok))
        km = kmcnt[xw]
        lc, sc, dc = (cnt[c][xw] for c in ("load", "store", "ds"))
        imm = xi.simm16
        port_taken = self.smem_req.valid | (opr.valid & opr.smem)
        # The scalar ALU takes 1 to 3 passes (``passes``: one-hot); a SALU instruction issues
        # once the ALU is free for its start at OPR, and not when its result would meet a lane
        # mask at the SGPR write port (``vp.soon``). A wave's next instruction comes 4 cycles
        # later at the earliest, after the result of 1 or 2 passes: after 3 it waits (``hold3``).
        alu_wait = Signal(2)
        hold3 = Signal(data.StructLayout({"valid": 1, "wave": range(max(W, 2))}))
        two = _member(xi.op, [n for n, k in PASSES.items() if k == 2])
        three = _member(xi.op, [n for n, k in PASSES.items() if k == 3])
        passes = Cat(~two & ~three, two, three)
        ends = xi.kind == Kind.SENDPGM
        to_ex = (xi.kind == Kind.SALU) | (xi.op == OpId.S_SWAPPC_B64)      # writes in EX
        # why an instruction waits, by counter and in the order a stall is attributed
        ds_waits = (xi.op == OpId.S_WAIT_DSCNT) | (xi.op == OpId.S_WAIT_LOADCNT_DSCNT) | \
            (xi.op == OpId.S_WAIT_STORECNT_DSCNT)
        waits = {
            StallReason.HELD: held.bit_select(xw, 1),
            StallReason.DEPENDENCY: (mask_busy.bit_select(xw, 1) | (ends & vp.busy.bit_select(xw, 1)) |
                                     ((is_valu | is_mem | is_trans) & vp.blocked.bit_select(xw, 1)) |
                                     (hold3.valid & (hold3.wave == xw))),
            StallReason.LOADCNT: (((xi.op == OpId.S_WAIT_LOADCNT) & (lc > imm[:6])) |
                                  ((xi.op == OpId.S_WAIT_LOADCNT_DSCNT) & (lc > imm[8:14])) | (ends & (lc != 0))),
            StallReason.STORECNT: (((xi.op == OpId.S_WAIT_STORECNT) & (sc > imm[:6])) |
                                   ((xi.op == OpId.S_WAIT_STORECNT_DSCNT) & (sc > imm[8:14])) | (ends & (sc != 0))),
            StallReason.DSCNT: (ds_waits & (dc > imm[:6])) | (ends & (dc != 0)),
            StallReason.KMCNT: ((xi.op == OpId.S_WAIT_KMCNT) & (km > imm[:5])) | (ends & (km != 0)),
            StallReason.BARRIER: (xi.op == OpId.S_BARRIER_WAIT) & ~bar_pass.bit_select(xw, 1),
            StallReason.STRUCTURAL: ((is_mem & (~vp.mem_ready | Mux(is_ds, dc == CNT_MAX,
                                                                    (lc == CNT_MAX) | (sc == CNT_MAX)))) |
                                     (is_valu & ~vp.ready) | (is_trans & ~(vp.ready & vp.trans_ready)) |
                                     (to_ex & (alu_wait != 0)) | (to_ex & (vp.soon & passes).any()) |
                                     (is_smem & (port_taken | (km == KM_MAX)))),
        }
        wait = Cat(*waits.values()).any()
        issue = take & ~bad & ~wait
        w_exec, w_vcc, w_scc = (Cat(*exec_).word_select(xw, 64), Cat(*vcc).word_select(xw, 64),
                                scc.bit_select(xw, 1))
        cond = Signal()
        for op, (what, want) in _CONDITIONS.items():
            v = {"scc": w_scc, "vccz": w_vcc[:32] == 0, "execz": w_exec[:32] == 0}[what]
            with m.If(xi.op == op):
                m.d.comb += cond.eq(v == want)
        taken = (xi.op == OpId.S_BRANCH) | cond
        # a VOPD's first half moves the wave on to its second at the same PC
        m.d.comb += [ans.wave.eq(xw), ans.pc.eq(x.next_pc), ans.steer.eq(Steer.NEXT),
                     ans.second.eq(x.dual & (issue ^ x.second))]
        with m.If(take):
            # an issued s_setpc/s_swappc answers from OPR; one that waits is replayed now
            m.d.comb += self.steer.valid.eq(~jump_pair | bad | wait)
            with m.If(bad):
                m.d.comb += [ans.pc.eq(x.pc), ans.steer.eq(Steer.STOP)]
            with m.Elif(wait):                  # replayed
                m.d.comb += ans.pc.eq(x.pc)
            with m.Elif(ends):
                m.d.comb += [ans.pc.eq(x.pc), ans.steer.eq(Steer.STOP)]
            with m.Elif((xi.kind == Kind.SBRANCH) & taken):
                m.d.comb += [ans.pc.eq(x.target), ans.steer.eq(Steer.JUMP)]
        m.d.comb += [self.error.valid.eq(take & bad), self.error.payload.wave.eq(xw),
                     self.error.payload.pc.eq(x.pc),
                     self.error.payload.cause.eq(Mux(xi.illegal, PipeError.ILLEGAL, PipeError.UNSUPPORTED))]

        # each port reads the pair holding its code's register (a 64-bit operand names an even one)
        vglobal = xi.fmt == FmtId.VGLOBAL
        for port, code in zip(reads, (*_source_codes(xi, is_smem, vglobal),
                                      Mux(is_valu, xi.src2, Cat(xi.sdst, Const(0, 2))))):
            m.d.comb += [port.addr.eq(xw * 64 + code[1:7]), port.en.eq(1)]
        vgpr_base = Array(Signal(range(self.config.vgprs_per_simd), name=f"vgpr_base{w}") for w in range(W))
        m.d.comb += [vp.issue.valid.eq(issue & (is_valu | is_mem | is_trans)), vp.issue.wave.eq(xw),
                     vp.issue.base.eq(vgpr_base[xw]),
                     vp.issue.exec.eq(Mux(sres, 1, w_exec[:32])), vp.issue.inst.eq(xi),
                     vp.issue.sres.eq(sres & ~scc_res), vp.issue.scc.eq(scc_res)]
        m.d.sync += [opr.valid.eq(issue), opr.valu.eq(is_valu | is_trans), opr.vglobal.eq(vglobal), opr.salu.eq(to_ex),
                     opr.jump_pair.eq(issue & jump_pair), opr.getpc.eq(getpc), opr.smem.eq(is_smem),
                     opr.wave.eq(xw), opr.inst.eq(xi), opr.next_pc.eq(x.next_pc)]

        # ---- OPR: operands into the SALU's registers; s_setpc/s_swappc answer
        oi, ow = opr.inst, opr.wave
        o_exec, o_vcc = Cat(*exec_).word_select(ow, 64), Cat(*vcc).word_select(ow, 64)
        o_scc = scc.bit_select(ow, 1)

        def operand(code, wide, data_, half=C(0, 1)):
            """Source ``code``: an SGPR (the pair read), VCC, EXEC, NULL, an inline constant, SCC,
            VCCZ, EXECZ or the literal. For a 16-bit operand (``half``) an inline constant is its
            16-bit form (FP16 for a float) zero-extended, as the ISA reads it. The inline integers
            are an 8-bit difference sign-extended to the width, the nine float constants a table:
            a multiplexer by kind of source, not one input per code."""
            v = Signal(64)
            # 128..192: 0..64; 193..208: -1..-16
            small = Signal(8)
            m.d.comb += small.eq(Mux(code <= 192, code - 128, 192 - code))
            flt = Array(Cat(C(inline_constant(c, 16), 16), C(inline_constant(c, 32), 32), C(inline_constant(c, 64), 64))
                        for c in range(240, 249))[(code - 240)[:4]]
            with m.If((code >= 128) & (code <= 208)):
                m.d.comb += v.eq(Mux(wide, Cat(small, small[7].replicate(56)),
                                     Mux(half, Cat(small, small[7].replicate(8)), Cat(small, small[7].replicate(24)))))
            with m.Elif((code >= 240) & (code <= 248)):
                m.d.comb += v.eq(Mux(wide, flt[48:], Mux(half, flt[:16], flt[16:48])))
            with m.Else():
                with m.Switch(code):
                    with m.Case(O.VCC_LO):
                        m.d.comb += v.eq(Mux(wide, o_vcc, o_vcc[:32]))
                    with m.Case(O.VCC_HI):
                        m.d.comb += v.eq(o_vcc[32:])
                    with m.Case(O.EXEC_LO):
                        m.d.comb += v.eq(Mux(wide, o_exec, o_exec[:32]))
                    with m.Case(O.EXEC_HI):
                        m.d.comb += v.eq(o_exec[32:])
                    with m.Case(O.NULL):
                        m.d.comb += v.eq(0)
                    with m.Case(SCC):
                        m.d.comb += v.eq(o_scc)
                    with m.Case(VCCZ):
                        m.d.comb += v.eq(o_vcc[:32] == 0)
                    with m.Case(EXECZ):
                        m.d.comb += v.eq(o_exec[:32] == 0)
                    with m.Case(O.LITERAL):
                        m.d.comb += v.eq(oi.literal)
                    with m.Default():
                        m.d.comb += v.eq(Mux(wide, data_, Mux(code[0], data_[32:], data_[:32])))
            return v
        ex = Signal(data.StructLayout({"valid": 1, "getpc": 1, "swap": 1, "wave": range(max(W, 2)), "sdst": 7,
                                       "wide": 1, "next_pc": ADDR}))
        a_code, b_code = _source_codes(oi, opr.smem, opr.vglobal)
        half = [opr.valu & _member(oi.op, _HALF[k]) for k in range(3)]
        a = operand(a_code, opr.smem | opr.vglobal | (oi.src0_dw == 2), reads[0].data, half[0])
        b = operand(b_code, ~opr.smem & (oi.src1_dw == 2), reads[1].data, half[1])
        d = operand(Mux(opr.valu, oi.src2, Cat(oi.sdst, Const(0, 2))),
                    Mux(opr.valu, oi.src2_dw == 2, oi.sdst_dw == 2), reads[2].data, half[2])
        m.d.comb += [vp.scalar[0].eq(a), vp.scalar[1].eq(b), vp.scalar[2].eq(d)]
        # a SALU instruction starts the ALU at OPR; EX keeps its destination until the result
        m.submodules.alu = alu = ScalarALU()
        swap = oi.op == OpId.S_SWAPPC_B64
        to_alu = opr.valid & opr.salu & ~opr.getpc & ~swap
        m.d.comb += [alu.start.eq(to_alu), alu.op.eq(Mux(to_alu, oi.op, OpId.NONE)), alu.a.eq(a), alu.b.eq(b),
                     alu.d_in.eq(d), alu.simm16.eq(oi.simm16), alu.scc_in.eq(o_scc), alu.exec_in.eq(o_exec[:32])]
        special = ex.getpc | ex.swap
        ex_done = ex.valid & (special | alu.done)
        with m.If(ex_done):
            m.d.sync += ex.valid.eq(0)
        with m.If(opr.valid & opr.salu):
            m.d.sync += [ex.valid.eq(1), ex.getpc.eq(opr.getpc), ex.swap.eq(swap), ex.wave.eq(ow),
                         ex.sdst.eq(oi.sdst), ex.wide.eq(oi.sdst_dw == 2), ex.next_pc.eq(opr.next_pc)]
        took = issue & to_ex
        m.d.sync += alu_wait.eq(Mux(took, Mux(three, 2, Mux(two, 1, 0)), Mux(alu_wait != 0, alu_wait - 1, 0)))
        with m.If(ex_done & (ex.wave == hold3.wave)):
            m.d.sync += hold3.valid.eq(0)
        with m.If(took & three):
            m.d.sync += [hold3.valid.eq(1), hold3.wave.eq(xw)]
        with m.If(opr.jump_pair):
            m.d.comb += [self.steer.valid.eq(1), ans.wave.eq(ow), ans.pc.eq(a[:ADDR]), ans.steer.eq(Steer.JUMP),
                         ans.second.eq(0)]
        req, rq = self.smem_req, self.smem_req.payload
        with m.If(req.valid & req.ready):
            m.d.sync += req.valid.eq(0)
        with m.If(opr.valid & opr.smem):
            m.d.sync += [req.valid.eq(1), rq.wave.eq(ow), rq.seq.eq(seq[ow]), rq.op.eq(oi.op),
                         rq.addr.eq((a + oi.offset + b[:32])[:64]), rq.sdst.eq(oi.sdst), rq.dwords.eq(oi.sdst_dw),
                         seq[ow].eq(seq[ow] + 1)]

        # ---- EX: the ALU's result and the writes
        result = Mux(special, ex.next_pc, alu.d)
        we = ex.valid & (special | alu.d_we)
        code = ex.sdst
        m.d.comb += [wport.addr.eq(ex.wave * 64 + code[1:]), wport.data.eq(Mux(ex.wide, result, Cat(result[:32],
                                                                                                  result[:32])))]
        ex_file = we & ~Cat(*(code == c for c in _NOT_IN_FILE)).any()
        with m.If(ex_file):
            m.d.comb += wport.en.eq(Mux(ex.wide, 0b11, Mux(code[0], 0b10, 0b01)))
        # a VALU lane mask: no instruction is in EX then (``soon``)
        mk = vp.mask
        mask_file = mk.valid & ~mk.scc & ~Cat(*(mk.sdst == c for c in _NOT_IN_FILE)).any()
        with m.If(mask_file):
            m.d.comb += [wport.addr.eq(mk.wave * 64 + mk.sdst[1:]), wport.data.eq(Cat(mk.value, mk.value)),
                         wport.en.eq(Mux(mk.sdst[0], 0b10, 0b01))]
        taken_port = ex_file | mask_file
        # a scalar transcendental's result, then a scalar load's dwords, in the cycles EX and
        # the lane masks do not write the file
        sr = vp.sres
        m.d.comb += sr.ready.eq(~taken_port)
        sres_file = sr.valid & ~taken_port & ~Cat(*(sr.payload.sdst == c for c in _NOT_IN_FILE)).any()
        with m.If(sres_file):
            m.d.comb += [wport.addr.eq(sr.payload.wave * 64 + sr.payload.sdst[1:]),
                         wport.data.eq(Cat(sr.payload.value, sr.payload.value)),
                         wport.en.eq(Mux(sr.payload.sdst[0], 0b10, 0b01))]
        resp, rp = self.smem_resp, self.smem_resp.payload
        m.d.comb += resp.ready.eq(~taken_port & ~sr.valid)
        with m.If(resp.valid & resp.ready):
            m.d.comb += [wport.addr.eq(rp.wave * 64 + rp.sdst[1:]), wport.data.eq(Cat(rp.data, rp.data)),
                         wport.en.eq(Mux(rp.sdst[0], 0b10, 0b01))]
        retired = resp.valid & resp.ready & rp.last

        # a launch: four pair writes in the cycles EX and the loads leave free, then the start
        resident = Signal(W)
        slot = Signal(range(max(W, 2)))
        for w in reversed(range(W)):
            with m.If(~resident[w]):
                m.d.comb += slot.eq(w)
        lp = self.launch.payload
        hold = Signal(data.StructLayout({"slot": range(max(W, 2)), "pc": ADDR, "exec": 32,
                                         "sgpr": data.ArrayLayout(32, 4), "ttmp7": 32, "ttmp9": 32}))
        step = Signal(range(5))                  # 0: idle; k: writing pair k - 1 of the four
        # v0 first, a row at a time, while the launch is offered; then the launch is taken
        P, L = 32 // self.config.lanes, self.config.lanes
        v0_row = Signal(range(P + 1))
        v0 = self.v0
        m.d.comb += [v0.valid.eq(self.launch.valid & (step == 0) & ~resident.all() & (v0_row != P)),
                     v0.payload.reg.eq(lp.vgpr_base), v0.payload.row.eq(v0_row),
                     v0.payload.data.eq(lp.v0.word_select(v0_row, 32 * L)), v0.payload.mask.eq((1 << L) - 1)]
        with m.If(v0.valid & v0.ready):
            m.d.sync += v0_row.eq(v0_row + 1)
        m.d.comb += self.launch.ready.eq((step == 0) & ~resident.all() & (v0_row == P))
        with m.If(self.launch.valid & self.launch.ready):
            m.d.sync += [hold.slot.eq(slot), hold.pc.eq(lp.pc), hold.exec.eq(lp.exec), hold.sgpr.eq(lp.sgpr),
                         hold.ttmp7.eq(lp.ttmp7), hold.ttmp9.eq(lp.ttmp9), step.eq(1), v0_row.eq(0),
                         vgpr_base[slot].eq(lp.vgpr_base)]
        pairs = Array([C(0, 6), C(1, 6), C((TTMP + 6) // 2, 6), C((TTMP + 8) // 2, 6)])
        values = Array([Cat(hold.sgpr[0], hold.sgpr[1]), Cat(hold.sgpr[2], hold.sgpr[3]),
                        Cat(C(0, 32), hold.ttmp7), Cat(C(0, 32), hold.ttmp9)])
        writes = (step != 0) & ~taken_port & ~sr.valid & ~resp.valid
        with m.If(writes):
            m.d.comb += [wport.addr.eq(hold.slot * 64 + pairs[step - 1]), wport.data.eq(values[step - 1]),
                         wport.en.eq(Mux(step >= 3, 0b10, 0b11))]
            m.d.sync += step.eq(Mux(step == 4, 0, step + 1))
        launched = writes & (step == 4)
        m.d.comb += [self.started.valid.eq(launched), self.started.payload.wave.eq(hold.slot),
                     self.started.payload.pc.eq(hold.pc)]
        finished = take & ~bad & ends & ~wait       # a stopped wave stays resident: the DCU reports it
        m.d.sync += self.ended.eq(Cat(*(finished & (xw == w) for w in range(W))))
        m.d.comb += [self.launched_slot.eq(slot), self.idle.eq(~resident.any())]
        for w in range(W):
            st = self.waves[w]
            m.d.comb += [st.resident.eq(resident[w]), st.pc.eq(self.pcs[w]), st.loadcnt.eq(cnt["load"][w]),
                         st.storecnt.eq(cnt["store"][w]), st.dscnt.eq(cnt["ds"][w]), st.kmcnt.eq(kmcnt[w]),
                         st.barrier.eq(bar_sig[w])]
        self._events(m, issue, x.dual & ~x.second, take, raw, pipe_soon, bad, waits, x.inst.kind, resident)
        # for a testbench's per-wave timeline: the wave at ISS, whether it issued, its stall
        self.trace = {"take": take, "issue": issue, "wave": xw, "stall": self.events.stall, "resident": resident,
                      # and for a lock-step check: the PC at ISS (a VOPD's first half), EX's completion and
                      # its wave, the SGPR write port and which of EX and a lane mask drives it, the flip-flops
                      "pc": x.pc, "first_half": x.dual & ~x.second, "ex_done": ex_done, "ex_wave": ex.wave,
                      "sgpr_write": wport, "ex_write": ex_file, "mask_write": mask_file, "sres_write": sres_file,
                      "exec": exec_, "vcc": vcc,
                      "scc": scc}
        for w in range(W):
            here = ex.valid & (ex.wave == w)
            for reg, lo_code in ((vcc[w], O.VCC_LO), (exec_[w], O.EXEC_LO)):
                with m.If(here & we & (code == lo_code)):
                    m.d.sync += reg.eq(Mux(ex.wide, result, Cat(result[:32], reg[32:])))
                with m.If(here & we & (code == lo_code + 1)):
                    m.d.sync += reg[32:].eq(result[:32])
            with m.If(here & ~special & alu.exec_we):
                m.d.sync += exec_[w][:32].eq(alu.exec)
            with m.If(here & ~special & alu.scc_we):
                m.d.sync += scc[w].eq(alu.scc)
            mine = mk.valid & (mk.wave == w)
            s_mine = sr.valid & sr.ready & (sr.payload.wave == w)
            for reg, lo_code in ((vcc[w], O.VCC_LO), (exec_[w], O.EXEC_LO)):
                with m.If(mine & ~mk.scc & (mk.sdst == lo_code)):
                    m.d.sync += reg[:32].eq(mk.value)
                with m.If(mine & ~mk.scc & (mk.sdst == lo_code + 1)):
                    m.d.sync += reg[32:].eq(mk.value)
                with m.If(s_mine & (sr.payload.sdst == lo_code)):
                    m.d.sync += reg[:32].eq(sr.payload.value)
                with m.If(s_mine & (sr.payload.sdst == lo_code + 1)):
                    m.d.sync += reg[32:].eq(sr.payload.value)
            with m.If(mine & mk.scc):
                m.d.sync += scc[w].eq(mk.value[0])
            with m.If(issue & (is_valu | is_trans) & ((xi.sdst_dw != 0) | xi.writes_exec) & (xw == w)):
                m.d.sync += mask_busy[w].eq(1)
            with m.If(mine | s_mine):
                m.d.sync += mask_busy[w].eq(0)
            m.d.sync += kmcnt[w].eq(kmcnt[w] + (issue & is_smem & (xw == w)) - (retired & (rp.wave == w)))
            for c, counted in counts.items():
                m.d.sync += cnt[c][w].eq(cnt[c][w] + (issue & counted & (xw == w)) - getattr(vp.retired, c)[w])
            with m.If(bar_sig[w] & self.bar_release[w]):
                m.d.sync += [bar_sig[w].eq(0), bar_pass[w].eq(1)]
            with m.If(issue & (xw == w) & (xi.op == OpId.S_BARRIER_SIGNAL)):
                m.d.sync += bar_sig[w].eq(1)
            with m.If(issue & (xw == w) & (xi.op == OpId.S_BARRIER_WAIT)):
                m.d.sync += bar_pass[w].eq(0)
            with m.If(finished & (xw == w)):
                m.d.sync += [resident[w].eq(0), bar_sig[w].eq(0), bar_pass[w].eq(0)]
            took = self.launch.valid & self.launch.ready
            with m.If(took & lp.wg_last & (wg[w] == lp.wg)):
                m.d.sync += held[w].eq(0)
            with m.If(took & (slot == w)):
                m.d.sync += [resident[w].eq(1), held[w].eq(~lp.wg_last), wg[w].eq(lp.wg)]
            with m.If(launched & (hold.slot == w)):
                m.d.sync += [exec_[w].eq(hold.exec), vcc[w].eq(0), scc[w].eq(0), kmcnt[w].eq(0), seq[w].eq(0)]
        return m

    @staticmethod
    def _as_issued(m, d):
        """The instruction as it issues: a scalar float one (``hdl.simd.scalar_float``) as the
        VALU or transcendental opcode of the same math, with its result for the SGPR file (its
        ``sdst``, one dword) and not a VGPR; ``s_fmac_f32`` reads its destination as source 2.
        Returns it, whether it is such an instruction (``sres``) and whether its result is SCC."""
        xi = Signal(DecodedInst, name="as_issued")
        m.d.comb += xi.eq(d)
        salu_f = _member(d.op, SCALAR_FLOAT)
        trans_s = _member(d.op, SCALAR_TRANS)
        with m.If(salu_f | trans_s):
            m.d.comb += [xi.kind.eq(Mux(salu_f, Kind.VALU, Kind.VTRANS)), xi.vdst_dw.eq(0), xi.sdst_dw.eq(1),
                         xi.reads_dst.eq(0)]
            with m.Switch(d.op):
                for s, v in (*SCALAR_FLOAT.items(), *SCALAR_TRANS.items()):
                    with m.Case(OpId[s.upper()]):
                        m.d.comb += xi.op.eq(OpId[v.upper()])
        with m.If(_member(d.op, ACCUMULATES)):
            m.d.comb += xi.src2.eq(d.sdst)
        return xi, salu_f | trans_s, _member(d.op, SCALAR_COMPARES)

    def _events(self, m, issue, first_half, take, raw, pipe_soon, bad, waits, kind, resident):
        """What the counters count: the issued instruction's group (a VOPD once, with its second
        half), or why nothing issued (the instruction at ISS waits: its first reason, or held
        at ISS for a VGPR read (``DEPENDENCY``) or the VALU pipe (``STRUCTURAL``); none there:
        ``FETCH``; one that stops its wave: ``HELD``)."""
        ev = self.events
        m.d.comb += [ev.issued.eq(issue & ~first_half), ev.valu.eq(self.vector.valu_row)]
        m.d.comb += ev.group.eq(list(ISSUE_GROUPS).index("other"))
        for k, kinds in enumerate(ISSUE_GROUPS.values()):
            if kinds:
                with m.If(Cat(*(kind == Kind[n.upper()] for n in kinds)).any()):
                    m.d.comb += ev.group.eq(k)
        with m.If(resident.any() & ~issue):
            with m.If(raw):
                m.d.comb += ev.stall.eq(StallReason.DEPENDENCY)
            with m.Elif(pipe_soon):
                m.d.comb += ev.stall.eq(StallReason.STRUCTURAL)
            with m.Elif(~take):
                m.d.comb += ev.stall.eq(StallReason.FETCH)
            with m.Elif(bad):
                m.d.comb += ev.stall.eq(StallReason.HELD)
            with m.Else():
                for reason, cond in reversed(waits.items()):
                    with m.If(cond):
                        m.d.comb += ev.stall.eq(reason)
