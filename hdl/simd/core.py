"""One SIMD32 of the dual compute unit: wave slots, fetch, issue, register files, ALUs, memory ports.

Pipeline (docs/simd.md): each wave prefetches its instruction stream in lines of
``config.fetch_bytes`` (64, or 32 on ``fpga``) through ``fetch_req`` / ``fetch_resp`` into a
two-line buffer, and a decoder per wave
decodes the instruction at the wave's PC from that buffer. A line that holds a backward
branch also has the branch target's line fetched into a per-wave loop line, so a taken loop
branch refills the buffer at once instead of waiting for the instruction cache. Each cycle two issue pipes each
pick one ready wave (oldest first or round robin): the scalar pipe one with a SALU
instruction, branch, wait or hint, the main pipe one with anything else; each addresses its
register-file ports, and the next cycle (its EX) the operands arrive, the ALUs compute
combinationally and the results are written back (with ``config.valu_stages`` 3 the VALU
units are pipelined and a lane group's results are written two cycles after its EX cycle).
A VALU instruction stays in EX for ``config.valu_cycles`` (32 // lanes)
cycles, one lane group of ``config.lanes`` lanes per cycle, and twice that when it writes a
64-bit VGPR result (low, then high register). The scoreboard keeps VALU destinations busy
for ``max(config.valu_dep_latency, config.valu_cycles)`` cycles (staged: a VGPR at least
``valu_stages + 1``, a scalar destination until its write) and memory destinations until
their data returns, so results never depend on ``s_delay_alu`` or ``s_nop``. Memory
instructions leave through ``smem_req``, ``vmem_req`` and ``lds_req`` with the wave and a
per-wave sequence tag, and retire through the matching responses in per-wave order
(``kmcnt`` in any order).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from isa.operands import inline_constant
from ..bitops import mux_tree
from ..config import DCUConfig
from .decoder import Decoder, is_branch_word
from .executed import IMPLEMENTED as EXECUTED
from ..isa_tables import Kind, OpId, info_of
from .salu import SALU
from .valu_fp import VALUFloat
from .lanemul import FP_WIDTH as FP_MUL_W, WIDTH as MUL_W, LaneMultiplier
from ..layouts import (ADDR, ISSUE_GROUPS, LANES, SEQ, DecodedInst, FetchReq, FetchResp, LaunchLayout, ReqRow,
                      SimdPerf, SmemReq, SmemResp, StallReason, VecMemReq, VecMemResp, WaveStatus)
from .regfile import SgprFile, VgprFile
from .trans import CLS_OF as _TRANS_OPS, TransIn, TransOut
from .transseq import TransSeq
from .valu_int import VALUInt

__all__ = ["SIMD", "IMPLEMENTED", "NO_CLAMP", "NO_OMOD", "ErrorCause", "ErrorLayout", "WaveStatus", "SCALAR_PIPE_KINDS"]

VCC_LO, VCC_HI, NULL, M0, EXEC_LO, EXEC_HI = 106, 107, 124, 125, 126, 127
SCC_CODE, VCCZ, EXECZ, LITERAL = 253, 251, 252, 255


# -- port layouts -------------------------------------------------------------------------
class ErrorCause(enum.Enum, shape=unsigned(2)):
    """Why the SIMD stopped a wave (``error.cause``)."""
    NONE = 0
    #: Found at issue: the words at the PC are not an instruction this SIMD executes
    #: (undecodable, or an operation it has no unit for); ``error.words`` holds them.
    ILLEGAL_INSTRUCTION = 1
    #: Found at execute: a unit refused the operation or a modifier of the instruction at the
    #: PC (the integer or FP32 VALU's, the SALU's ``illegal``; ``clamp``/``omod`` on a
    #: transcendental). The words are not kept down the pipeline: the host reads them at the PC.
    REFUSED_AT_EXECUTE = 2


def ErrorLayout(cfg):
    """``error``: ``valid`` (sticky) once a wave has been stopped; its slot, PC, the raw
    instruction dwords (``ILLEGAL_INSTRUCTION``, found at issue, only) and the ``cause``."""
    return data.StructLayout({"valid": 1, "wave": range(cfg.wave_ids), "pc": ADDR, "words": 96,
                              "cause": ErrorCause})


#: Kinds that issue through the scalar pipe. RDNA issues up to one instruction of each kind
#: per cycle (from different waves); here a second issue pipe takes SALU instructions,
#: branches, waits and hints beside the main pipe's VALU, memory and everything else.
SCALAR_PIPE_KINDS = ("salu", "sbranch", "swait", "shint")


class SIMD(wiring.Component):
    """A wave32 SIMD with ``config.wave_slots`` wave slots.

    Parameters
    ----------
    config : DCUConfig
        ``lanes`` of 32, 16 or 8 (any divisor of 32): physical VALU lanes; a VALU instruction
        occupies EX for ``valu_cycles`` cycles. ``regfile``: the register files'
        organisation (``hdl/simd/regfile.py``).
    external_barrier : bool
        False: the SIMD completes a workgroup barrier when every live wave of the workgroup on
        this SIMD has signalled. True: it leaves that to the DCU (``bar_wait`` /
        ``bar_release``), for workgroups that span SIMDs.
    external_trans : bool
        False: the SIMD has its own transcendental unit (:class:`~hdl.simd.transseq.TransSeq`).
        True: it sends transcendental waves out through ``trans_req`` and takes their results
        from ``trans_resp``, for the unit the DCU shares among its SIMDs
        (``hdl/simd/transshare.py``).

    Members
    -------
    launch : In(stream of LaunchLayout)
        Start a wave in a free slot (PC, VGPR allocation, EXEC, user SGPRs, ttmp7/9, v0). The
        waves of a workgroup are launched back to back and start together when the one marked
        ``wg_last`` arrives, so a barrier never completes before the whole workgroup is here.
    launched_slot : Out(range(wave_slots))
        The slot the next launch takes.
    fetch_req, fetch_resp : instruction fetch, lines of ``config.fetch_bytes``, in order per wave.
    smem_req, smem_resp : scalar memory; one response beat per dword, ``last`` retires.
    vmem_req, vmem_resp : global memory; one response beat per lane group
        (``config.resp_lanes`` lanes) of each destination register.
    trans_req : Out(stream of hdl.simd.trans.TransIn); trans_resp : In(stream of hdl.simd.trans.TransOut)
        With ``external_trans`` only: transcendental waves, held until taken (``trans_req``'s
        ``ready`` must not depend on its ``valid``: issue reads it; the payload is zero unless
        ``valid & ready``), and their results, in the order sent.
    vmem_req_row, lds_req_row : In(ReqRow)
        The row of the request whose lanes ``vmem_req`` and ``lds_req`` carry
        (``config.request_in_rows``: the rows are a memory, read combinationally).
    lds_req, lds_resp : LDS, the same layouts as ``vmem``. ``lds_resp`` is not ready while
        ``vmem_resp`` is valid. ``"wide"`` register file: the response ports are not ready
        during a launch or while a transcendental result is being written (they share a VGPR
        write port). ``"banked"``: they are ready in the cycles in which the VGPR file's
        write port is free (no VALU result, nothing buffered: ``VgprFile.wr_side``), and
        ``smem_resp`` not while a SALU or VALU result goes to the SGPR file.
    idle : Out(1)
        No wave is resident.
    ended : Out(wave_slots)
        One-cycle strobe, bit i: slot i's wave has finished (its ``s_endpgm`` issued after all
        its memory traffic and register writes retired) and the slot is free from this cycle.
    bar_wait : Out(wave_slots)
        Bit i is 1 from the cycle after slot i's ``s_barrier_signal`` executes until the barrier
        is released (driven in both modes; internally released barriers clear it themselves).
    bar_release : In(wave_slots)
        With ``external_barrier``: a one-cycle strobe per slot; each slot whose ``bar_wait`` is 1
        in that cycle (the first such cycle included) is released, and its ``s_barrier_wait``
        may pass. Bits of slots not waiting are ignored, as is the whole port without
        ``external_barrier``. An ended wave no longer waits: the DCU counts it as arrived.
    waves : Out(ArrayLayout(WaveStatus, wave_slots))
        Each slot's residency, PC, counters and barrier wait (wires from their registers, for
        a report).
    error : Out(ErrorLayout)
        ``valid`` once a wave has been stopped (it stays resident and issues nothing more):
        its slot, PC, raw dwords and :class:`ErrorCause`.
    perf : Out(SimdPerf)
        Counters. ``issued.<group>`` counts issued instructions by :data:`ISSUE_GROUPS`;
        ``valu_busy`` the cycles a VALU instruction occupies EX (``valu_cycles`` per
        instruction, twice that for a 64-bit VGPR result); ``stall.<reason>`` the cycles in
        which a wave is resident and nothing issues, each attributed to the
        :class:`StallReason` of the oldest resident wave (docs/simd.md, "stall rule").
    """

    def __init__(self, config: DCUConfig, external_barrier: bool = False, external_trans: bool = False):
        self.config = config
        self.external_barrier = external_barrier
        self.external_trans = external_trans
        W, WID = config.wave_slots, config.wave_ids
        trans = {"trans_req": Out(stream.Signature(TransIn)),
                 "trans_resp": In(stream.Signature(TransOut))} if external_trans else {}
        super().__init__({
            "launch": In(stream.Signature(LaunchLayout(config))),
            "launched_slot": Out(range(WID)),
            "fetch_req": Out(stream.Signature(FetchReq(config))),
            "fetch_resp": In(stream.Signature(FetchResp(config))),
            "smem_req": Out(stream.Signature(SmemReq(config))),
            "smem_resp": In(stream.Signature(SmemResp(config))),
            "vmem_req": Out(stream.Signature(VecMemReq(config))),
            "vmem_req_row": In(ReqRow(config)),
            "vmem_resp": In(stream.Signature(VecMemResp(config))),
            "lds_req": Out(stream.Signature(VecMemReq(config))),
            "lds_req_row": In(ReqRow(config)),
            "lds_resp": In(stream.Signature(VecMemResp(config))),
            "idle": Out(1),
            "ended": Out(W),
            "bar_wait": Out(W),
            "bar_release": In(W),
            "waves": Out(data.ArrayLayout(WaveStatus, W)),
            "error": Out(ErrorLayout(config)),
            "perf": Out(SimdPerf),
            **trans,
        })
        # Internal signals a lock-step testbench observes (see ``trace``); created in elaborate.
        self.trace = {}


    # ------------------------------------------------------------------------------------
    def elaborate(self, platform):
        cfg = self.config
        W, WID, V = cfg.wave_slots, cfg.wave_ids, cfg.vgprs_per_simd
        G, C = cfg.lanes, cfg.valu_cycles         # physical lanes; EX cycles of a VALU instruction
        D = cfg.valu_stages - 1                   # cycles from a VALU EX cycle to its writes
        # VALU issue to dependent issue (a VGPR read follows the staged write of its group)
        lat = max(cfg.valu_dep_latency, C, D + 2 if D else 1)
        m = Module()

        def fragment(name):
            """A submodule for one group of combinational logic. Amaranth's simulator
            re-evaluates a fragment whenever any of its inputs changes, so logic is grouped by
            when its inputs change; sequential logic stays in the top module."""
            sub = Module()
            m.submodules[name] = sub
            return sub

        # ---- register files ------------------------------------------------------------
        # VGPRs (hdl/simd/regfile.py): VALU results go through ``vw_alu`` a lane group at a time,
        # the rest through ``vw_mem`` a whole register at a time in priority order (the wave
        # launch's v0, transcendental results, memory returns; ``banked``: memory returns a
        # lane group at a time through ``vgprs.wr_side``). Six reads per instruction:
        # 0/1 src0 low/high, 2/3 src1, 4/5 src2 (or the old destination); memory: 0/1 vaddr,
        # 2-5 the data dwords. ``banked`` (config.regfile): three read ports, each returning one
        # lane group: reads 0, 2, 4 (memory: 0, 1, 2) then, if needed, 1, 3, 5 (3, 4, 5);
        # ``vw_mem`` is buffered (``vgprs.done``).
        banked = cfg.regfile == "banked"
        m.submodules.vgprs = vgprs = VgprFile(cfg, reads=3 if banked else 6)
        vw_alu, vw_mem, vr = vgprs.wr_group, vgprs.wr_reg, vgprs.rd
        RL = vgprs.read_lanes   # lanes of a VGPR read: 32, or the EX cycle's lane group
        # SGPRs (and ttmp): 64 even/odd pairs per wave slot; VCC, EXEC and M0 live in flip-flops.
        # Write ports: VALU scalar results (lane masks, readlane), scalar loads and the wave
        # launch, the scalar pipe's SALU results (banked: one at a time, ``s_taken``); three
        # transparent read ports per pipe.
        m.submodules.sgprs = sgprs = SgprFile(cfg)
        sw_alu, sw_mem, sw_s = sgprs.wr
        sr, ss = sgprs.rd[:3], sgprs.rd[3:]

        # ---- wave slot state -------------------------------------------------------------
        def slots(shape, name):
            return Array(Signal(shape, name=f"{name}{i}") for i in range(W))

        resident, halted = slots(1, "resident"), slots(1, "halted")
        pc, base, wg = slots(ADDR, "pc"), slots(range(V), "vbase"), slots(8, "wg")
        exec_, vcc, m0, scc = slots(64, "exec"), slots(64, "vcc"), slots(32, "m0"), slots(1, "scc")
        br_pending = slots(1, "br_pending")
        fb, lb = cfg.fetch_bytes, exact_log2(cfg.fetch_bytes)   # a fetch chunk: its bytes, address bits
        chunks, nvalid, infl = slots(2 * 8 * fb, "chunks"), slots(range(3), "nvalid"), slots(range(3), "infl")
        fetch_addr, epoch = slots(ADDR, "fetch_addr"), slots(2, "epoch")
        # the loop line: the target chunk of the last backward branch seen in the stream
        loop_line, loop_addr = slots(8 * fb, "loop_line"), slots(ADDR - lb, "loop_addr")
        loop_known, loop_want, loop_valid = slots(1, "loop_known"), slots(1, "loop_want"), slots(1, "loop_valid")
        loop_epoch = slots(2, "loop_epoch")
        loadcnt, storecnt, dscnt, kmcnt = (slots(6, "loadcnt"), slots(6, "storecnt"), slots(6, "dscnt"),
                                           slots(5, "kmcnt"))
        seq = slots(SEQ, "seq")
        vbusy, sbusy = slots(V, "vbusy"), slots(128, "sbusy")
        bar_sig, bar_pass = slots(1, "bar_sig"), slots(1, "bar_pass")
        held = slots(1, "held")   # launched, waiting for the rest of its workgroup (barriers count on it)
        older = [[Signal(name=f"older_{i}_{j}") for j in range(W)] for i in range(W)]  # i launched before j

        # ---- launch: a free slot; four cycles write s[0:3], ttmp7, ttmp9 and v0 ------------
        ms = fragment("slot_state")    # changes when a wave launches or ends
        launch_slot = Signal(range(WID))
        for i in reversed(range(W)):
            with ms.If(~resident[i]):
                ms.d.comb += launch_slot.eq(i)
        launch_step = Signal(range(5))
        # what the launch's later cycles write: the SGPRs (and, with the wide file, v0); the
        # rest goes to the slot's state as the launch is taken
        hold_fields = ["sgpr", "ttmp7", "ttmp9"] + ([] if banked else ["vgpr_base", "v0"])
        launch_layout = LaunchLayout(cfg)
        hold = Signal(data.StructLayout({f: launch_layout[f].shape for f in hold_fields}))
        hold_slot = Signal(range(WID))
        launching = Signal()
        launch_ready = ~Cat(*resident).all() & ~launching
        if banked:   # v0 goes to the VGPR file's write buffer as the launch is taken
            launch_ready &= vw_mem.ready
        ms.d.comb += [launching.eq(launch_step != 0), self.idle.eq(~Cat(*resident).any()),
                      self.launch.ready.eq(launch_ready), self.launched_slot.eq(launch_slot),
                      self.bar_wait.eq(Cat(*bar_sig))]
        for i, w in enumerate(self.waves):
            ms.d.comb += [w.resident.eq(resident[i]), w.pc.eq(pc[i]), w.loadcnt.eq(loadcnt[i]),
                          w.storecnt.eq(storecnt[i]), w.dscnt.eq(dscnt[i]), w.kmcnt.eq(kmcnt[i]),
                          w.barrier.eq(bar_sig[i])]
        launch_fire = self.launch.valid & self.launch.ready
        with m.If(launch_fire):   # (banked VGPR file: v0 is busy until its buffered write is done)
            p, i = self.launch.payload, launch_slot
            m.d.sync += [hold[f].eq(p[f]) for f in hold_fields]
            m.d.sync += [launch_step.eq(1), hold_slot.eq(i), resident[i].eq(1), halted[i].eq(0),
                         pc[i].eq(p.pc), base[i].eq(p.vgpr_base), wg[i].eq(p.wg), exec_[i].eq(p.exec),
                         vcc[i].eq(0), m0[i].eq(0), scc[i].eq(0), nvalid[i].eq(0), infl[i].eq(0),
                         fetch_addr[i].eq(p.pc & ~(fb - 1)), epoch[i].eq(epoch[i] + 1), br_pending[i].eq(0),
                         loop_known[i].eq(0), loop_want[i].eq(0), loop_valid[i].eq(0),
                         loop_epoch[i].eq(loop_epoch[i] + 1),
                         loadcnt[i].eq(0), storecnt[i].eq(0), dscnt[i].eq(0), kmcnt[i].eq(0),
                         seq[i].eq(0), vbusy[i].eq(1 if banked else 0), sbusy[i].eq(0), bar_sig[i].eq(0),
                         bar_pass[i].eq(0),
                         held[i].eq(~p.wg_last)]
            with m.If(p.wg_last):   # the workgroup is complete: its waves may start
                for j in range(W):
                    with m.If(resident[j] & (wg[j] == p.wg)):
                        m.d.sync += held[j].eq(0)
            for j in range(W):
                with m.If(launch_slot == j):   # the new wave is the youngest
                    m.d.sync += [older[j][k].eq(0) for k in range(W) if k != j]
                    m.d.sync += [older[k][j].eq(1) for k in range(W) if k != j]
        # banked SGPR file: the launch's SGPR writes (and scalar loads) wait for cycles without
        # SALU or VALU ones
        if banked:
            s_taken = sw_alu.en.any() | sw_s.en.any()
            launch_go = launching & ~s_taken
        else:
            launch_go = launching
        with m.If(launch_go):
            m.d.sync += launch_step.eq(Mux(launch_step == 4, 0, launch_step + 1))

        # ---- fetch: each wave keeps up to two lines buffered or in flight, and its loop line
        mf = fragment("fetch")
        want, stream_want = Signal(W), Signal(W)
        mf.d.comb += [stream_want.eq(Cat(*[resident[i] & ~halted[i] & (nvalid[i] + infl[i] < 2) for i in range(W)])),
                      want.eq(stream_want | Cat(*[resident[i] & ~halted[i] & loop_want[i] for i in range(W)]))]
        fetch_last, fetch_pick, fetch_any = Signal(range(WID)), Signal(range(WID)), Signal()
        self._round_robin(mf, want, fetch_last, fetch_pick, fetch_any, "fetch")
        fetch_go, loop_go = Signal(W), Signal(W)   # a stream / loop-line request for wave i leaves this cycle
        pick_stream = stream_want.bit_select(fetch_pick, 1)   # the stream's next line before the loop line
        with mf.If((~self.fetch_req.valid | self.fetch_req.ready) & fetch_any & ~launching):
            with mf.If(pick_stream):
                mf.d.comb += fetch_go.bit_select(fetch_pick, 1).eq(1)
            with mf.Else():
                mf.d.comb += loop_go.bit_select(fetch_pick, 1).eq(1)
        with m.If(~self.fetch_req.valid | self.fetch_req.ready):
            m.d.sync += self.fetch_req.valid.eq(fetch_any & ~launching)
            with m.If(fetch_any & ~launching):
                m.d.sync += [self.fetch_req.payload.wave.eq(fetch_pick), fetch_last.eq(fetch_pick),
                             self.fetch_req.payload.addr.eq(Mux(pick_stream, fetch_addr[fetch_pick],
                                                                Cat(Const(0, lb), loop_addr[fetch_pick]))),
                             self.fetch_req.payload.epoch.eq(Mux(pick_stream, epoch[fetch_pick],
                                                                 loop_epoch[fetch_pick])),
                             self.fetch_req.payload.target.eq(~pick_stream)]
        fr = self.fetch_resp.payload
        mfill = fragment("fetch_fill")   # follows the fetch response input
        mfill.d.comb += self.fetch_resp.ready.eq(1)
        fill, loop_fill = Signal(W), Signal(W)   # a current stream / loop-line response for wave i arrives
        with mfill.If(self.fetch_resp.valid & ~fr.target & (fr.epoch == epoch[fr.wave])):
            mfill.d.comb += fill.bit_select(fr.wave, 1).eq(1)
        with mfill.If(self.fetch_resp.valid & fr.target & (fr.epoch == loop_epoch[fr.wave])):
            mfill.d.comb += loop_fill.bit_select(fr.wave, 1).eq(1)
        # a stream line with a backward branch names the wave's next loop line; responses come
        # in request order, so the arriving line is the oldest in flight
        fill_addr = Signal(ADDR)
        mfill.d.comb += fill_addr.eq(fetch_addr[fr.wave] - (infl[fr.wave] << lb))
        has_loop, new_loop_addr = self._loop_target(mfill, fr.data, fill_addr, lb,
                                                    self.fetch_resp.valid & ~fr.target)
        for i in range(W):
            with m.If(loop_go[i]):
                m.d.sync += loop_want[i].eq(0)
            with m.If(loop_fill[i]):   # a fetch outside memory answers zeros: never a loop line
                m.d.sync += [loop_line[i].eq(fr.data), loop_valid[i].eq(fr.data.any())]
            with m.If(fill[i] & has_loop & (~loop_known[i] | (loop_addr[i] != new_loop_addr))):
                m.d.sync += [loop_addr[i].eq(new_loop_addr), loop_known[i].eq(1), loop_want[i].eq(1),
                             loop_valid[i].eq(0), loop_epoch[i].eq(loop_epoch[i] + 1)]

        # the instruction at each wave's PC, decoded from its buffered lines
        ib, ib_valid, ib_words = [], [], []
        for i in range(W):
            m.submodules[f"decoder{i}"] = dec = Decoder(pc_width=ADDR)
            mw_i = fragment(f"window{i}")
            off = pc[i][2:lb]
            window = Signal(96, name=f"window{i}")
            avail = Signal(range(33), name=f"avail{i}")
            v = Signal(name=f"ib_valid{i}")
            starts = [chunks[i][32 * k: 32 * k + 96] for k in range(fb // 4)]   # not a shift of both lines
            mw_i.d.comb += [window.eq(mux_tree(off, starts)), dec.words.eq(window)]
            if cfg.decode_memo:
                # the decoder's result only when the window differs from the last cycle's: in
                # this branch alone, the compiled model evaluates the decoder on those cycles only
                inst = Signal(DecodedInst, name=f"ib{i}")
                seen, seen_ok = Signal(96, name=f"seen{i}"), Signal(name=f"seen_ok{i}")
                seen_inst = Signal(DecodedInst, name=f"seen_inst{i}")
                with mw_i.If(seen_ok & (window == seen)):
                    mw_i.d.comb += inst.eq(seen_inst)
                with mw_i.Else():
                    mw_i.d.comb += inst.eq(dec.inst)
                m.d.sync += [seen.eq(window), seen_inst.eq(inst), seen_ok.eq(1)]
            else:
                inst = dec.inst
            mw_i.d.comb += [avail.eq(Mux(nvalid[i] == 0, 0, (nvalid[i] << (lb - 2)) - off)),
                            v.eq((avail != 0) & (inst.size <= avail) & ~br_pending[i])]
            ib.append(inst)
            ib_valid.append(v)
            ib_words.append(window)

        # ---- what a VALU EX cycle writes (``wx``): written in that cycle or, with the units
        # in stages, D cycles later from ``valu_w[-1]`` (``wb``), when the units' results for
        # it arrive: a lane group of a VGPR and the group's lane mask, and with the last group
        # the scalar destination
        ValuWrite = data.StructLayout({
            "valu": 1, "last": 1, "wave": range(WID), "grp": range(max(C, 2)), "fp": 1, "half": 1,
            "v_addr": range(V), "v_en": G, "writelane": 1, "exec": G,
            "special": 1, "value": 32, "s_we": 1, "sdst": 7, "sn": range(3)})
        wx = Signal(ValuWrite, name="valu_wx")
        valu_w = [wx]
        for k in range(D):
            valu_w.append(Signal(ValuWrite, name=f"valu_w{k + 1}"))
            m.d.sync += valu_w[-1].eq(valu_w[-2])
        wb = valu_w[-1]

        # ---- VALU results in flight: their destinations stay busy (vbusy/sbusy) for ``lat``
        # cycles; the entry leaving the end of this pipe clears them (a scalar destination,
        # with the units in stages, its write: ``valu_w``).
        Flight = data.StructLayout({"valid": 1, "wave": range(WID), "vdst": 8, "vn": range(3),
                                    "sdst": 7, "sn": range(3)})
        flight = [Signal(Flight, name=f"flight{k}") for k in range(lat - 1)]

        # EX: the instruction issued last cycle. A VALU instruction stays for C cycles, one
        # lane group each (two cycles a group, low then high register, when it writes a 64-bit
        # result), while issue waits and the register-file read ports hold its operands.
        # With the banked VGPR file the read ports return one group, read the cycle before
        # it is used, and so vector memory and transcendental instructions, which need every
        # lane, stay for C cycles too (``ex_hold``); a transcendental one also until the unit
        # takes it. An instruction with a 64-bit VGPR source or a vector memory instruction
        # with more than one data dword reads each group twice (``lo``: the cycle that brings
        # the first three reads and computes nothing; then the other three).
        ex = Signal(data.StructLayout({"valid": 1, "wave": range(WID), "pc": ADDR, "seq": SEQ, "inst": DecodedInst}))
        xi, xw, xk = ex.inst, ex.wave, ex.inst.kind
        grp = Signal(range(C)) if C > 1 else Const(0)
        half, valu_hold = Signal(), Signal()    # half: the high register's cycle of a 64-bit result
        wide = xi.vdst_dw == 2
        if banked:
            lo = Signal()
            last_grp = (grp == C - 1) & ~lo
        else:
            last_grp = grp == C - 1
        fragment("valu_hold").d.comb += valu_hold.eq(ex.valid & (xk == Kind.VALU) & ~(last_grp & (half | ~wide)))
        # a transcendental instruction also stays until the unit takes it (a shared unit may
        # be taken by another SIMD; a private one is stalled while its result waits)
        ex_hold, trans_ready = Signal(), Signal()
        trans_wait = ex.valid & (xk == Kind.VTRANS) & ~trans_ready
        if banked:
            x_is_mem = _is_kind(xk, Kind.VMEM_LOAD, Kind.VMEM_STORE, Kind.VMEM_ATOMIC,
                                Kind.DS_LOAD, Kind.DS_STORE, Kind.DS_ATOMIC)
            x_twice = _reads_twice(xi, x_is_mem)
            m.d.comb += ex_hold.eq(valu_hold | ex.valid & (x_is_mem | (xk == Kind.VTRANS)) & ~last_grp | trans_wait)
        else:
            m.d.comb += ex_hold.eq(valu_hold | trans_wait)
            with m.If(valu_hold & wide & ~half):
                m.d.sync += half.eq(1)
            with m.Else():
                m.d.sync += half.eq(0)
                if C > 1:
                    m.d.sync += grp.eq(Mux(valu_hold, grp + 1, 0))
        ex_last = ~ex_hold

        # ---- issue: per wave, is its buffered instruction free of hazards? ----------------
        trans_free = Signal()   # the transcendental unit can take an instruction issued now
        # A memory port's request register is taken when it holds a request or when the
        # instruction in EX is about to fill it: issue must not overwrite a request that the
        # memory side has not accepted yet.
        # With ``config.shared_mem_request`` the vector memory and LDS requests share one
        # register (``mreq``; ``mreq_lds`` picks the port): either port is taken then.
        vmem_kinds = (Kind.VMEM_LOAD, Kind.VMEM_STORE, Kind.VMEM_ATOMIC, Kind.CACHE)
        ds_kinds = (Kind.DS_LOAD, Kind.DS_STORE, Kind.DS_ATOMIC)
        if cfg.shared_mem_request:
            mreq, mreq_valid, mreq_lds = (Signal(VecMemReq(cfg), name="mreq"), Signal(name="mreq_valid"),
                                          Signal(name="mreq_lds"))
            m.d.comb += [self.vmem_req.payload.eq(mreq), self.lds_req.payload.eq(mreq),
                         self.vmem_req.valid.eq(mreq_valid & ~mreq_lds), self.lds_req.valid.eq(mreq_valid & mreq_lds)]
            req_held = {"vmem": mreq_valid, "lds": mreq_valid}
            if cfg.request_rows > 1:
                # the lanes in a memory of a row per lane group (LUT RAM: 6,144 flip-flops on
                # fpga otherwise), written a group per EX cycle, read at the row the reader names
                RQ = cfg.request_lanes
                m.submodules.mreq_rows = rows_mem = memory.Memory(shape=192 * RQ, depth=cfg.request_rows, init=[],
                                                                  attrs={"ram_style": "distributed"})
                mreq_w, mreq_r = rows_mem.write_port(), rows_mem.read_port(domain="comb")
                m.d.comb += mreq_r.addr.eq(Mux(mreq_lds, self.lds_req_row, self.vmem_req_row))
                for port in (self.vmem_req, self.lds_req):
                    m.d.comb += [port.payload.addr.eq(mreq_r.data[:64 * RQ]),
                                 port.payload.data.eq(mreq_r.data[64 * RQ:])]
            kinds_of = {"vmem": vmem_kinds + ds_kinds, "lds": vmem_kinds + ds_kinds}
        else:
            req_held = {"vmem": self.vmem_req.valid, "lds": self.lds_req.valid}
            kinds_of = {"vmem": vmem_kinds, "lds": ds_kinds}
        req_held["smem"], kinds_of["smem"] = self.smem_req.valid, (Kind.SMEM,)
        port_busy = {}
        for name in ("smem", "vmem", "lds"):
            port_busy[name] = Signal(name=f"{name}_port_busy")
            m.d.comb += port_busy[name].eq(req_held[name] | (ex.valid & _is_kind(xk, *kinds_of[name])))
        self._port_busy = port_busy
        ready_w, reason_w = [], []
        for i in range(W):
            # a staged VALU write of the wave still to come (its destinations may no longer be busy)
            writing = Cat(*[w.valu & (w.wave == i) for w in valu_w[:-1]]).any() if D else Const(0)
            r, why = self._ready(fragment(f"hazard{i}"), i, ib[i], vbusy[i], sbusy[i], loadcnt[i], storecnt[i],
                                 dscnt[i], kmcnt[i], bar_pass[i], resident[i] & ~halted[i] & ~held[i] & ~launching,
                                 ib_valid[i], trans_free, writing)
            ready_w.append(r)
            reason_w.append(why)
        # Two pipes, each picking one wave a cycle: the scalar pipe (SCALAR_PIPE_KINDS) and the
        # main pipe (the rest). A wave whose multi-cycle instruction holds EX issues nothing
        # more until it leaves: that instruction reads the wave's EXEC, VCC and SCC every cycle.
        mq = fragment("issue")
        to_s = Signal(W)   # wave i's buffered instruction goes to the scalar pipe
        ready, ready_s = Signal(W), Signal(W)
        mq.d.comb += [to_s.eq(Cat(*[_is_kind(ib[i].kind, *[Kind[k.upper()] for k in SCALAR_PIPE_KINDS]) &
                                    ~ib[i].illegal for i in range(W)])),
                      ready.eq(Cat(*ready_w) & ~to_s & ~ex_hold.replicate(W))]
        if banked:
            # one SGPR write a cycle: a scalar-pipe instruction with a destination does not issue
            # when its result would meet a VALU instruction's scalar result (written in its last
            # EX cycle)
            s_block = Signal(W)
            mq.d.comb += ready_s.eq(Cat(*ready_w) & to_s & ~Mux(ex_hold, Const(1, W) << xw, 0) & ~s_block)
        else:
            mq.d.comb += ready_s.eq(Cat(*ready_w) & to_s & ~Mux(ex_hold, Const(1, W) << xw, 0))
        sel, issue = self._pick(m, mq, ready, older, "sel", "issue")
        sel_s, issue_s = self._pick(m, mq, ready_s, older, "sel_s", "issue_s")
        # the issuing wave's instruction and state, selected once
        mqs = fragment("issue_select")
        si = Signal(DecodedInst)
        sel_pc, sel_base, sel_seq = Signal(ADDR), Signal(range(V)), Signal(SEQ)
        with mqs.Switch(sel):
            for i in range(W):
                with mqs.Case(i):
                    mqs.d.comb += [si.eq(ib[i]), sel_pc.eq(pc[i]), sel_base.eq(base[i]), sel_seq.eq(seq[i])]
        sk = si.kind
        if banked:
            if D:   # the staged scalar write due next cycle
                valu_sw = valu_w[-2].s_we
            else:
                valu_sw = ex.valid & (xk == Kind.VALU) & (xi.sdst_dw != 0) & ex_hold
                if C == 1:   # a VALU instruction issuing now writes its scalar result next cycle
                    valu_sw = valu_sw | issue & (sk == Kind.VALU) & (si.sdst_dw != 0)
            # every scalar-pipe write (SALU results, s_swappc_b64's return address) shares the
            # SGPR write port with the VALU's scalar results (ready_s keeps scalar-pipe kinds)
            mq.d.comb += s_block.eq(Cat(*[ib[i].sdst_dw != 0 for i in range(W)]) & valu_sw.replicate(W))
        mss = fragment("issue_select_s")
        si_s = Signal(DecodedInst)
        sel_s_pc, sel_s_seq = Signal(ADDR), Signal(SEQ)
        with mss.Switch(sel_s):
            for i in range(W):
                with mss.Case(i):
                    mss.d.comb += [si_s.eq(ib[i]), sel_s_pc.eq(pc[i]), sel_s_seq.eq(seq[i])]
        mss.d.comb += [ss[0].addr.eq(sel_s * 64 + si_s.src0[1:7]), ss[1].addr.eq(sel_s * 64 + si_s.src1[1:7]),
                       ss[2].addr.eq(sel_s * 64 + si_s.sdst[1:])]
        mqp = fragment("issue_effects")   # register-file addresses, counters, busy bits

        # register-file reads for the issuing instruction; the data arrives in EX.
        # ALU: reads 0/1 src0 lo/hi, 2/3 src1, 4/5 src2 (or the old destination: at read 5 for
        # a 16-bit result with a src2, at read 4 for the others).
        # Memory: reads 0/1 vaddr, 2-5 the data dwords (DS: data1 at read 4 when data0 fits in 2).
        is_mem = Signal()
        mqp.d.comb += is_mem.eq(_is_kind(sk, Kind.VMEM_LOAD, Kind.VMEM_STORE, Kind.VMEM_ATOMIC,
                                        Kind.DS_LOAD, Kind.DS_STORE, Kind.DS_ATOMIC))
        data1_at4 = (si.data1_dw != 0)
        dst_at5 = _dst_at_read5(si.op)
        regs_alu = [si.src0[:8], si.src0[:8] + 1, si.src1[:8], si.src1[:8] + 1,
                    Mux(si.reads_dst & ~dst_at5, si.vdst, si.src2[:8]), Mux(dst_at5, si.vdst, si.src2[:8] + 1)]
        regs_mem = [si.vaddr, si.vaddr + 1, si.data0, si.data0 + 1,
                    Mux(data1_at4, si.data1, si.data0 + 2), Mux(data1_at4, si.data1 + 1, si.data0 + 3)]
        addrs = [sel_base + Mux(is_mem, regs_mem[k], regs_alu[k]) for k in range(6)]
        if banked:
            # EX's group and phase next cycle, and the reads it needs: at issue group 0's
            # first three (the addresses kept in ``vr_addr`` for the later groups); after a
            # ``lo`` cycle the same group's other three; after the last cycle of a group the
            # next group's first three.
            with m.If(~ex_hold):
                m.d.sync += [half.eq(0), lo.eq(issue & _reads_twice(si, is_mem))]
                if C > 1:
                    m.d.sync += grp.eq(0)
            with m.Elif(lo):
                m.d.sync += lo.eq(0)
            with m.Elif(valu_hold & wide & ~half):
                m.d.sync += half.eq(1)
            with m.Elif(grp != C - 1):   # (a transcendental instruction waits in its last group)
                m.d.sync += [half.eq(0), lo.eq(x_twice)]
                if C > 1:
                    m.d.sync += grp.eq(grp + 1)
            vr_addr = [Signal(range(V), name=f"vr_addr{k}") for k in range(6)]
            with m.If(~ex_hold):
                m.d.sync += [h.eq(a) for h, a in zip(vr_addr, addrs)]
            for k in range(3):
                first = Mux(x_is_mem, vr_addr[k], vr_addr[2 * k])
                second = Mux(x_is_mem, vr_addr[3 + k], vr_addr[2 * k + 1])
                at_issue = Mux(is_mem, addrs[k], addrs[2 * k])
                mqp.d.comb += [vr[k].addr.eq(Mux(~ex_hold, at_issue, Mux(lo, second, first))),
                               vr[k].grp.eq(Mux(~ex_hold, 0, Mux(lo, grp, grp + 1)))]
        else:
            mqp.d.comb += [vr[k].addr.eq(addrs[k]) for k in range(6)]
        srow = sel * 64
        mqp.d.comb += [
            sr[0].addr.eq(srow + Mux(sk == Kind.SMEM, si.sbase, Mux(is_mem, si.saddr[1:], si.src0[1:7]))),
            sr[1].addr.eq(srow + Mux(sk == Kind.SMEM, si.soffset[1:], si.src1[1:7])),
            sr[2].addr.eq(srow + si.src2[1:7]),
        ]
        # a read port with its enable low keeps its data: the EX operands (banked VGPR file:
        # the group, read again only when the next cycle moves on to the next group)
        mhp = fragment("hold_ports")
        if banked:
            vr_en = ~ex_hold | lo | ~(valu_hold & wide & ~half | (grp == C - 1))
            mhp.d.comb += [port.en.eq(vr_en) for port in vr]
            mhp.d.comb += [port.en.eq(~ex_hold) for port in sr]
        else:
            mhp.d.comb += [port.en.eq(~ex_hold) for port in list(vr) + sr]

        m.d.sync += self.ended.eq(0)
        with m.If(issue):
            m.d.sync += [seq[sel].eq(sel_seq + 1), pc[sel].eq(sel_pc + (si.size << 2))]
            with m.If(si.illegal):
                m.d.sync += [halted[sel].eq(1), self.error.valid.eq(1), self.error.wave.eq(sel),
                             self.error.pc.eq(sel_pc), self.error.words.eq(Array(ib_words)[sel]),
                             self.error.cause.eq(ErrorCause.ILLEGAL_INSTRUCTION)]
            with m.If(si.op == OpId.S_ENDPGM):   # it issued after every write retired: the slot is free
                m.d.sync += [resident[sel].eq(0), self.ended.bit_select(sel, 1).eq(1)]
            with m.If(si.op == OpId.S_BARRIER_WAIT):
                m.d.sync += bar_pass[sel].eq(0)
        with m.If(issue_s):
            m.d.sync += [seq[sel_s].eq(sel_s_seq + 1), pc[sel_s].eq(sel_s_pc + (si_s.size << 2))]
            with m.If(si_s.kind == Kind.SBRANCH):
                m.d.sync += br_pending[sel_s].eq(1)
        if flight:
            m.d.sync += [flight[0].valid.eq(issue & (sk == Kind.VALU)), flight[0].wave.eq(sel),
                         flight[0].vdst.eq(si.vdst), flight[0].vn.eq(si.vdst_dw[:2]),
                         flight[0].sdst.eq(si.sdst), flight[0].sn.eq(si.sdst_dw[:2])]
            m.d.sync += [flight[k].eq(flight[k - 1]) for k in range(1, len(flight))]

        # ---- performance counters ------------------------------------------------------------
        perf = self.perf
        mperf = fragment("issue_groups")
        groups = list(ISSUE_GROUPS)
        in_group = [Signal(len(groups), name=f"issued_{p}") for p in ("main", "scalar")]   # one-hot
        for bits, go, kind in zip(in_group, (issue, issue_s), (sk, si_s.kind)):
            with mperf.If(go), mperf.Switch(kind):
                for g, kinds in ISSUE_GROUPS.items():
                    if kinds:
                        with mperf.Case(*[Kind[k.upper()] for k in kinds]):
                            mperf.d.comb += bits[groups.index(g)].eq(1)
                with mperf.Default():
                    mperf.d.comb += bits[groups.index("other")].eq(1)
        with m.If(issue | issue_s):
            m.d.sync += [perf.issued[g].eq(perf.issued[g] + in_group[0][n] + in_group[1][n])
                         for n, g in enumerate(groups)]
        # a stall cycle counts against the oldest resident wave's reason (a resident wave
        # that could issue only loses to a multi-cycle VALU instruction in EX)
        why = Signal(StallReason)
        mwhy = fragment("stall_reason")
        for i in range(W):
            oldest_res = resident[i] & Cat(*[~resident[j] | older[i][j] for j in range(W) if j != i]).all()
            with mwhy.If(oldest_res):
                mwhy.d.comb += why.eq(Mux(ready_w[i], StallReason.STRUCTURAL, reason_w[i]))
        with m.If(~issue & ~issue_s & ~self.idle):
            with m.Switch(why):
                for r in StallReason:
                    if r is not StallReason.NONE:
                        with m.Case(r):
                            field = perf.stall[r.name.lower()]
                            m.d.sync += field.eq(field + 1)

        # line buffers: drop a line once the PC has moved past it, append arriving lines
        crossing = Signal(W)
        mqp.d.comb += crossing.eq(
            Mux(issue & ((sel_pc + (si.size << 2))[lb:] != sel_pc[lb:]), Const(1, W) << sel, 0) |
            Mux(issue_s & ((sel_s_pc + (si_s.size << 2))[lb:] != sel_s_pc[lb:]), Const(1, W) << sel_s, 0))
        for i in range(W):
            kept = nvalid[i] - crossing[i]
            with m.If(~(launch_fire & (launch_slot == i)) & (crossing[i] | fill[i] | fetch_go[i])):
                m.d.sync += [nvalid[i].eq(kept + fill[i]), infl[i].eq(infl[i] + fetch_go[i] - fill[i])]
                with m.If(fetch_go[i]):
                    m.d.sync += fetch_addr[i].eq(fetch_addr[i] + fb)

        # ---- EX ----------------------------------------------------------------------------
        with m.If(~ex_hold):
            m.d.sync += ex.valid.eq(issue)
        with m.If(issue):   # (EX keeps the last instruction otherwise: fewer changes to simulate)
            m.d.sync += [ex.wave.eq(sel), ex.pc.eq(sel_pc), ex.seq.eq(sel_seq), ex.inst.eq(si)]
        # which vector ALU takes EX's instruction, and the op each sees (NONE: idle), decided
        # at issue: in EX the units' own decode starts from registers, not from EX's op
        # through this decode (on the SIMD's deepest path, into the multiplier)
        s_is_fp = _in_set(mqs, si.op, _ops(_is_float_op), "s_is_fp")
        x_is_fp, int_op, fp_op = Signal(name="x_is_fp"), Signal(OpId, name="int_op"), Signal(OpId, name="fp_op")
        with m.If(issue):
            m.d.sync += x_is_fp.eq(s_is_fp)
        with m.If(~ex_hold):
            m.d.sync += [int_op.eq(Mux(issue & (sk == Kind.VALU) & ~s_is_fp, si.op, OpId.NONE)),
                         fp_op.eq(Mux(issue & (sk == Kind.VALU) & s_is_fp, si.op, OpId.NONE))]
        # the scalar pipe's EX: one cycle per instruction
        exs = Signal(ex.shape(), name="ex_s")
        ys, yi = exs.wave, exs.inst
        m.d.sync += exs.valid.eq(issue_s)
        with m.If(issue_s):
            m.d.sync += [ys.eq(sel_s), exs.pc.eq(sel_s_pc), exs.seq.eq(sel_s_seq), yi.eq(si_s)]
        # the EX wave's state, selected once
        x_valid, x_exec64, x_vcc, x_scc, x_m0, x_base = (Signal(), Signal(64), Signal(64), Signal(), Signal(32),
                                                        Signal(range(V)))
        mxs = fragment("ex_state")
        mxs.d.comb += x_valid.eq(ex.valid & ~xi.illegal)
        with mxs.Switch(xw):
            for i in range(W):
                with mxs.Case(i):
                    mxs.d.comb += [x_exec64.eq(exec_[i]), x_vcc.eq(vcc[i]), x_scc.eq(scc[i]), x_m0.eq(m0[i]),
                                   x_base.eq(base[i])]
        x_exec = x_exec64[:32]
        y_exec64, y_vcc, y_scc, y_m0 = Signal(64), Signal(64), Signal(), Signal(32)
        mys = fragment("ex_s_state")
        with mys.Switch(ys):
            for i in range(W):
                with mys.Case(i):
                    mys.d.comb += [y_exec64.eq(exec_[i]), y_vcc.eq(vcc[i]), y_scc.eq(scc[i]), y_m0.eq(m0[i])]

        def scalar_value(mx, name, code, pair, bits, state, literal, half=None):
            """Scalar, inline-constant or literal source ``code`` as a ``bits``-wide value
            (0 for a VGPR source, whose value comes from the VGPR file); ``pair`` is the SGPR
            pair read for it, ``state`` the wave's (VCC, EXEC, M0, SCC). While ``half`` (a
            16-bit operand) an inline constant is its 16-bit form zero-extended, FP16 for a float
            (docs/model.md, "Inline constants in 16-bit operands")."""
            x_vcc, x_exec64, x_m0, x_scc = state
            x_exec = x_exec64[:32]
            v = Signal(bits, name=f"{name}_{bits}")
            with mx.If(code[8]):
                pass
            with mx.Elif((code >= 128) & (code <= 208)):   # integer constants 0..64, -1..-16
                iv = Mux(code <= 192, code - 128, 192 - code)
                mx.d.comb += v.eq(iv if half is None else Mux(half, iv & 0xFFFF, iv))
            with mx.Else(), mx.Switch(code):
                with mx.Case(VCC_LO):
                    mx.d.comb += v.eq(x_vcc if bits == 64 else x_vcc[:32])
                with mx.Case(VCC_HI):
                    mx.d.comb += v.eq(x_vcc[32:])
                with mx.Case(EXEC_LO):
                    mx.d.comb += v.eq(x_exec64 if bits == 64 else x_exec)
                with mx.Case(EXEC_HI):
                    mx.d.comb += v.eq(x_exec64[32:])
                with mx.Case(M0):
                    mx.d.comb += v.eq(x_m0)
                with mx.Case(NULL):
                    mx.d.comb += v.eq(0)
                with mx.Case(SCC_CODE):
                    mx.d.comb += v.eq(x_scc)
                with mx.Case(VCCZ):
                    mx.d.comb += v.eq(x_vcc[:32] == 0)
                with mx.Case(EXECZ):
                    mx.d.comb += v.eq(x_exec == 0)
                with mx.Case(LITERAL):
                    mx.d.comb += v.eq(literal)
                for c in range(240, 249):   # float constants
                    with mx.Case(c):
                        f = inline_constant(c, bits)
                        mx.d.comb += v.eq(f if half is None else Mux(half, inline_constant(c, 16), f))
                with mx.Default():
                    mx.d.comb += v.eq(pair if bits == 64 else Mux(code[0], pair[32:], pair[:32]))
            return v

        mx = fragment("ex_operands")
        codes = [xi.src0, xi.src1, xi.src2]
        x_state = (x_vcc, x_exec64, x_m0, x_scc)
        src16 = [_in_set(mx, xi.op, _ops(lambda i, k=k: i.name in IMPLEMENTED and i.src_bits[k:k + 1] == (16,)),
                         f"src{k}_16") for k in range(3)]
        s32 = [scalar_value(mx, f"sval{k}", codes[k], sr[k].data, 32, x_state, xi.literal, src16[k])
               for k in range(3)]
        s64 = [scalar_value(mx, f"sval{k}", codes[k], sr[k].data, 64, x_state, xi.literal) for k in range(3)]
        dws = [xi.src0_dw, xi.src1_dw, xi.src2_dw]
        if banked:   # the first three reads, of a ``lo`` cycle, are kept for the cycle that brings the others
            first, second = [], [port.data for port in vr]
            for k in range(3):
                kept = Signal(32 * RL, name=f"vr_lo{k}")
                with m.If(lo):
                    m.d.sync += kept.eq(vr[k].data)
                first.append(Mux(x_twice, kept, vr[k].data))
            alu_order = [first[0], second[0], first[1], second[1], first[2], second[2]]
            vdata = [Mux(x_is_mem, a, b) for a, b in zip(first + second, alu_order)]
        else:
            vdata = [port.data for port in vr]
        op64, op32 = [], []
        for k in range(3):
            lo_k, hi = vdata[2 * k], vdata[2 * k + 1]
            if k == 2:   # the old destination (MAC, writelane, 16-bit merges) comes through read 4
                lo_k = vdata[4]
            wide = dws[k] == 2
            vec64 = Cat(*[Cat(lo_k[32 * n: 32 * n + 32], Mux(wide, hi[32 * n: 32 * n + 32], 0)) for n in range(RL)])
            sc = Mux(wide, s64[k], s32[k])
            o64, o32 = Signal(64 * RL, name=f"op{k}_64"), Signal(32 * RL, name=f"op{k}_32")
            # held at 0 unless a VALU or transcendental instruction is in EX: a compiled
            # simulation then skips the lane operands and the units behind them while idle
            with mx.If(ex.valid & ((xk == Kind.VALU) | (xk == Kind.VTRANS))):
                mx.d.comb += o32.eq(Mux(codes[k][8], lo_k, Cat(*[s32[k]] * RL)))
            with mx.If(ex.valid & (xk == Kind.VALU) & ~x_is_fp):   # 64-bit lanes: the integer unit's operands
                mx.d.comb += o64.eq(Mux(codes[k][8], vec64, Cat(*[sc] * RL)))
            op64.append(o64)
            op32.append(o32)
        old_dst = Mux(_dst_at_read5(xi.op), vdata[5], vdata[4])
        k_lanes = Cat(*[xi.literal] * RL)
        x_is_mac = xi.reads_dst & (xk == Kind.VALU)

        def group(v, bits):
            """Lane group ``grp`` of ``v`` (``bits`` per lane): what the G-lane units see."""
            return v if C == 1 else v.word_select(grp, bits * G)

        def vgroup(v, bits):
            """The same for a value made of VGPR reads (``RL`` lanes: already the group when banked)."""
            return v if RL == G else group(v, bits)

        # all 32 lanes of src0 (transcendentals, v_readlane): the banked file's groups of the
        # cycles before the last, kept here
        if RL == LANES:
            src0_all = op32[0]
        else:
            src0_seen = Signal(32 * RL * (C - 1))
            with m.If(ex_hold & (grp != C - 1)):
                m.d.sync += src0_seen.word_select(grp, 32 * RL).eq(op32[0])
            src0_all = Cat(src0_seen, op32[0])

        stages = {"stages": cfg.valu_stages} if D else {}
        mx.submodules.valu_int = vint = VALUInt(G, external_mul=cfg.shared_multiplier, **stages)
        mx.submodules.valu_fp = vfp = VALUFloat(G, external_mul=cfg.shared_multiplier, **stages)
        if cfg.shared_multiplier:   # one multiplier per lane for both units (hdl/simd/lanemul.py)
            mx.submodules.lane_mul = lmul = LaneMultiplier(G)
            mul_fp = x_is_fp
            if D:   # the units use it in their second stage
                mul_fp = Signal(name="mul_fp")
                m.d.sync += mul_fp.eq(x_is_fp)
            mx.d.comb += [lmul.int_x.eq(vint.mul_x), lmul.int_y.eq(vint.mul_y), lmul.fp_x.eq(vfp.mul_x),
                          lmul.fp_y.eq(vfp.mul_y), lmul.fp.eq(mul_fp), vint.mul_p.eq(lmul.p),
                          vfp.mul_p.eq(Cat(*[lmul.p[2 * MUL_W * n:2 * MUL_W * n + 2 * FP_MUL_W] for n in range(G)]))]
        mx.d.comb += [
            # a unit with no instruction of its kind in EX sees OpId.NONE, which is cheap to simulate
            vint.op.eq(int_op),
            vint.c.eq(vgroup(op64[2], 64)),
            vint.mask_in.eq(group(s32[2], 1)), vint.opsel.eq(xi.opsel), vint.clamp.eq(xi.clamp),
            vint.d_old.eq(vgroup(old_dst, 32)),
            vfp.op.eq(fp_op),
            vfp.abs.eq(xi.abs), vfp.neg.eq(xi.neg), vfp.clamp.eq(xi.clamp), vfp.omod.eq(xi.omod),
            vfp.a.eq(vgroup(op32[0], 32)),
            vfp.b.eq(vgroup(Mux(xi.op == OpId.V_FMAMK_F32, k_lanes, op32[1]), 32)),
            vfp.c.eq(vgroup(Mux(x_is_mac, old_dst, Mux(xi.op == OpId.V_FMAMK_F32, op32[1],
                                                        Mux(xi.op == OpId.V_FMAAK_F32, k_lanes, op32[2]))), 32)),
        ]
        # v_mbcnt_lo counts S0's bits below each lane's index in the wave: the unit adds the
        # group's first lane to its own (not a count and an adder in front of its operands,
        # which were on every operation's path into the multiplier and the adder)
        mx.d.comb += [vint.a.eq(_cndmask_mods(xi, 0, vgroup(op64[0], 64), G)),
                      vint.b.eq(_cndmask_mods(xi, 1, vgroup(op64[1], 64), G)), vint.lane_base.eq(grp * G)]

        # the scalar pipe's operands (src0, src1 and the old destination) and its SALU
        my = fragment("ex_s_operands")
        y_state = (y_vcc, y_exec64, y_m0, y_scc)
        y_codes = [yi.src0, yi.src1, Cat(yi.sdst, Const(0, 2))]
        t32 = [scalar_value(my, f"ssval{k}", y_codes[k], ss[k].data, 32, y_state, yi.literal) for k in range(3)]
        t64 = [scalar_value(my, f"ssval{k}", y_codes[k], ss[k].data, 64, y_state, yi.literal) for k in range(3)]
        my.submodules.salu = salu = SALU()
        my.d.comb += [
            salu.op.eq(Mux(yi.kind == Kind.SALU, yi.op, OpId.NONE)),
            salu.a.eq(Mux(yi.src0_dw == 2, t64[0], t32[0])), salu.b.eq(Mux(yi.src1_dw == 2, t64[1], t32[1])),
            salu.scc_in.eq(y_scc), salu.exec_in.eq(y_exec64[:32]), salu.simm16.eq(yi.simm16),
            salu.d_in.eq(Mux(yi.sdst_dw == 2, t64[2], t32[2])),
        ]

        # ---- write-back (its own fragment: it follows the units' results) ------------------
        # What EX writes is ``wx`` (above), written from ``wb``: VALU results, the integer
        # unit's 64-bit lanes split into the low and high registers; lane-mask results
        # (compares, carries) collect over the lane groups in ``mask_acc``
        mw = fragment("writeback")
        res_lo, res_hi = Signal(32 * G), Signal(32 * G)
        lane_mask, scalar_result, unit_illegal = Signal(G), Signal(32), Signal()
        lanes_special = _is_op(xi.op, OpId.V_READFIRSTLANE_B32, OpId.V_READLANE_B32, OpId.V_WRITELANE_B32)
        if C == 1:
            mask_all = lane_mask
        else:
            mask_acc = Signal(32)
            mask_all = mask_acc | (lane_mask << (wb.grp * G))[:32]
            with m.If(wb.valu):
                m.d.sync += mask_acc.eq(Mux(wb.last, 0, mask_all))
        with mw.If(xk == Kind.VALU):
            first = Signal(range(LANES))
            for n in reversed(range(LANES)):
                with mw.If(x_exec[n]):
                    mw.d.comb += first.eq(n)
            lane_sel = Mux(xi.op == OpId.V_READLANE_B32, s32[1][:5], first)
            mw.d.comb += [
                unit_illegal.eq(Mux(x_is_fp, vfp.illegal, vint.illegal) & ~lanes_special),
                wx.special.eq(lanes_special), wx.fp.eq(x_is_fp), wx.half.eq(half), wx.exec.eq(group(x_exec, 1)),
                wx.value.eq(Mux(xi.src0[8], src0_all.word_select(lane_sel, 32), s32[0])),
            ]
        with mw.If(wb.valu):
            mw.d.comb += [
                res_lo.eq(Mux(wb.fp, vfp.d, Cat(*[vint.d[64 * n: 64 * n + 32] for n in range(G)]))),
                res_hi.eq(Cat(*[vint.d[64 * n + 32: 64 * n + 64] for n in range(G)])),
                lane_mask.eq(Mux(wb.fp, vfp.mask_out, vint.mask_out) & wb.exec),
                scalar_result.eq(Mux(wb.special, wb.value, mask_all)),
            ]

        def fault(cond, wave=xw, at=ex.pc):
            with m.If(cond):
                m.d.sync += [halted[wave].eq(1), self.error.valid.eq(1), self.error.wave.eq(wave), self.error.pc.eq(at),
                             self.error.cause.eq(ErrorCause.REFUSED_AT_EXECUTE)]

        def write_scalar(code, value, nregs, we, wave=xw, port=sw_alu, mw=mw):
            """Write a scalar destination of ``wave``: VCC, EXEC and M0 are flip-flops
            (registered here), the rest the SGPR file (``port``, driven from fragment ``mw``)."""
            with m.If(we):
                with m.Switch(code):
                    with m.Case(VCC_LO):
                        m.d.sync += (vcc[wave] if nregs == 2 else vcc[wave][:32]).eq(value)
                    with m.Case(VCC_HI):
                        m.d.sync += vcc[wave][32:].eq(value[:32])
                    with m.Case(EXEC_LO):
                        m.d.sync += (exec_[wave] if nregs == 2 else exec_[wave][:32]).eq(value)
                    with m.Case(EXEC_HI):
                        m.d.sync += exec_[wave][32:].eq(value[:32])
                    with m.Case(M0):
                        m.d.sync += m0[wave].eq(value[:32])
            with mw.If(we):
                with mw.Switch(code):
                    with mw.Case(VCC_LO, VCC_HI, EXEC_LO, EXEC_HI, M0, NULL):
                        pass
                    with mw.Default():
                        mw.d.comb += port.addr.eq(wave * 64 + code[1:7])
                        if nregs == 2:
                            mw.d.comb += [port.data.eq(value), port.en.eq(0b11)]
                        else:
                            mw.d.comb += [port.data.eq(Cat(value[:32], value[:32])),
                                          port.en.eq(Mux(code[0], 0b10, 0b01))]

        vdst_addr = x_base + xi.vdst
        x_valu = Signal()
        mw.d.comb += x_valu.eq((x_valid & (xk == Kind.VALU) & ~lo) if banked else (x_valid & (xk == Kind.VALU)))
        mws = fragment("s_writeback")
        y_salu = Signal()
        y_getpc = yi.op == OpId.S_GETPC_B64     # a SALU opcode, but its operand is the PC
        mws.d.comb += y_salu.eq(exs.valid & (yi.kind == Kind.SALU) & ~y_getpc)
        with m.If(y_salu):
            fault(salu.illegal, ys, exs.pc)
            with m.If(salu.scc_we):
                m.d.sync += scc[ys].eq(salu.scc)
            with m.If(salu.exec_we):
                m.d.sync += exec_[ys][:32].eq(salu.exec)
        write_scalar(yi.sdst, salu.d, 2, y_salu & salu.d_we & (yi.sdst_dw == 2), ys, sw_s, mws)
        write_scalar(yi.sdst, salu.d, 1, y_salu & salu.d_we & (yi.sdst_dw == 1), ys, sw_s, mws)
        # s_getpc_b64 and s_swappc_b64 write the return address: the next instruction's
        link = Signal(64)
        mws.d.comb += link.eq((exs.pc + 4)[:ADDR])
        write_scalar(yi.sdst, link, 2, exs.valid & (y_getpc | (yi.op == OpId.S_SWAPPC_B64)), ys, sw_s, mws)
        with m.If(x_valid & (xi.op == OpId.S_BARRIER_SIGNAL)):
            m.d.sync += bar_sig[xw].eq(1)
        # each EX cycle of a VALU instruction writes its lane group, the scalar result goes with
        # the last group
        with m.If(x_valu):
            m.d.sync += perf.valu_busy.eq(perf.valu_busy + 1)
            fault(unit_illegal)
        mw.d.comb += [wx.valu.eq(x_valu), wx.last.eq(ex_last), wx.wave.eq(xw), wx.grp.eq(grp),
                      wx.sdst.eq(xi.sdst), wx.sn.eq(xi.sdst_dw[:2]), wx.s_we.eq(x_valu & (xi.sdst_dw != 0) & ex_last)]
        with mw.If(x_valu):
            with mw.If(xi.op == OpId.V_WRITELANE_B32):
                mw.d.comb += [wx.writelane.eq(1), wx.v_addr.eq(vdst_addr),
                              wx.v_en.eq(group(Const(1, 32) << s32[1][:5], 1))]
            with mw.Elif(xi.vdst_dw != 0):
                mw.d.comb += [wx.v_addr.eq(vdst_addr + half), wx.v_en.eq(group(x_exec, 1))]
        write_scalar(wb.sdst, scalar_result, 1, wb.s_we, wb.wave)
        if C > 1:
            mw.d.comb += vw_alu.grp.eq(wb.grp)
        with mw.If(wb.valu):
            mw.d.comb += [vw_alu.addr.eq(wb.v_addr), vw_alu.en.eq(wb.v_en),
                          vw_alu.data.eq(Mux(wb.writelane, Cat(*[wb.value] * G), Mux(wb.half, res_hi, res_lo)))]
        # transcendental unit (hdl/simd/transseq.py): results return in order, so a FIFO keeps
        # each instruction's wave, destination, EXEC and sequence number, two deep: the unit
        # takes a wave when the previous one's result appears, so it holds at most that result
        # and the wave it computes (shared, at most two of this SIMD's). A result waits
        # (the unit stalls) while the launch sequence writes v0 through the shared port (banked
        # VGPR file: while the port's buffer is full).
        if self.external_trans:
            trans_i, trans_o = self.trans_req, self.trans_resp
        else:
            m.submodules.trans = trans = TransSeq(cfg)
            trans_i, trans_o = trans.i, trans.o
        Pending = data.StructLayout({"wave": range(WID), "vdst": 8, "exec": 32, "seq": SEQ})
        tq = Array(Signal(Pending, name=f"trans_q{k}") for k in range(2))
        tq_head, tq_tail = Signal(1), Signal(1)
        sign = Const(sum(1 << (32 * n + 31) for n in range(LANES)), 32 * LANES)
        t_src = Mux(xi.abs[0], src0_all & ~sign, src0_all)
        x_trans, trans_take = Signal(), Signal()
        # (banked VGPR file: with the last group of its source)
        mx.d.comb += [x_trans.eq(x_valid & (xk == Kind.VTRANS) & ((grp == C - 1) if banked else 1)),
                      trans_ready.eq(trans_i.ready), trans_take.eq(x_trans & trans_i.ready),
                      trans_i.valid.eq(x_trans)]
        # the payload only while a transcendental is offered and the unit is ready (0
        # otherwise): a shared unit ORs its SIMDs' payloads (hdl/simd/transshare.py), and a
        # compiled simulation skips the source modifiers' 32 lanes on other cycles. Every field is
        # assigned here (tag 0: a shared unit sets its own): one left out would be a constant
        # process of its own, which Verilator's lint rejects (ALWNEVER).
        with mx.If(x_trans & trans_i.ready):
            mx.d.comb += [trans_i.payload.op.eq(xi.op), trans_i.payload.a.eq(Mux(xi.neg[0], t_src ^ sign, t_src)),
                          trans_i.payload.tag.eq(0)]
        with m.If(trans_take):
            fault(xi.clamp | (xi.omod != 0))   # output modifiers on transcendentals are not implemented
            m.d.sync += [tq[tq_tail].wave.eq(xw), tq[tq_tail].vdst.eq(xi.vdst), tq[tq_tail].exec.eq(x_exec),
                         tq[tq_tail].seq.eq(ex.seq), tq_tail.eq(tq_tail + 1)]
        fragment("trans_free").d.comb += trans_free.eq(trans_i.ready & ~(ex.valid & (xk == Kind.VTRANS)))
        mt = fragment("trans_wb")
        trans_wb, trans_done = Signal(Pending), Signal()
        mt.d.comb += [trans_wb.eq(tq[tq_head]), trans_done.eq(trans_o.valid & trans_o.ready)]
        if banked:   # the launch's v0 goes first
            mt.d.comb += trans_o.ready.eq(~launch_fire & vw_mem.ready)
        else:
            mt.d.comb += trans_o.ready.eq(launch_step != 4)
        with m.If(trans_done):
            m.d.sync += tq_head.eq(tq_head + 1)
        # branches resolve in the scalar pipe's EX
        taken, target = Signal(), Signal(ADDR)
        y_branch = exs.valid & (yi.kind == Kind.SBRANCH)
        with mws.If(y_branch):
            with mws.Switch(yi.op):
                with mws.Case(OpId.S_BRANCH):
                    mws.d.comb += taken.eq(1)
                with mws.Case(OpId.S_CBRANCH_SCC0):
                    mws.d.comb += taken.eq(~y_scc)
                with mws.Case(OpId.S_CBRANCH_SCC1):
                    mws.d.comb += taken.eq(y_scc)
                with mws.Case(OpId.S_CBRANCH_VCCZ):
                    mws.d.comb += taken.eq(y_vcc[:32] == 0)
                with mws.Case(OpId.S_CBRANCH_VCCNZ):
                    mws.d.comb += taken.eq(y_vcc[:32] != 0)
                with mws.Case(OpId.S_CBRANCH_EXECZ):
                    mws.d.comb += taken.eq(y_exec64[:32] == 0)
                with mws.Case(OpId.S_CBRANCH_EXECNZ):
                    mws.d.comb += taken.eq(y_exec64[:32] != 0)
                with mws.Case(OpId.S_SETPC_B64, OpId.S_SWAPPC_B64):
                    mws.d.comb += taken.eq(1)
            by_register = _is_op(yi.op, OpId.S_SETPC_B64, OpId.S_SWAPPC_B64)
            mws.d.comb += target.eq(Mux(by_register, t64[0], exs.pc + 4 + (yi.simm16.as_signed() << 2)))
        loop_hit = Signal()     # a taken branch to the wave's loop line: no refetch
        mws.d.comb += loop_hit.eq(loop_valid[ys] & (loop_addr[ys] == target[lb:]))
        with m.If(y_branch):
            with m.If(taken):   # redirect: drop the buffered chunks and any in flight (new epoch)
                m.d.sync += [pc[ys].eq(target), infl[ys].eq(0), epoch[ys].eq(epoch[ys] + 1)]
                with m.If(loop_hit):
                    m.d.sync += [nvalid[ys].eq(1), fetch_addr[ys].eq(Cat(Const(0, lb), loop_addr[ys] + 1))]
                with m.Else():
                    m.d.sync += [nvalid[ys].eq(0), fetch_addr[ys].eq(target & ~(fb - 1))]
            m.d.sync += br_pending[ys].eq(0)

        # The line buffers, written in one place (a write under each condition would cost a
        # multiplexer per bit and condition: 2 x 7 x 1,024): a redirect loads the loop line or
        # empties them; otherwise a PC crossing into line 1 drops line 0, and an arriving line
        # fills the first free one.
        line_bits = 8 * fb
        for i in range(W):
            lines = [chunks[i][:line_bits], chunks[i][line_bits:]]
            kept = nvalid[i] - crossing[i]
            shifted = [Mux(crossing[i], lines[1], lines[0]), Mux(crossing[i], 0, lines[1])]
            with m.If(y_branch & taken & (ys == i)):
                m.d.sync += chunks[i].eq(Mux(loop_hit, loop_line[i], 0))
            with m.Elif(~(launch_fire & (launch_slot == i)) & (crossing[i] | fill[i])):
                m.d.sync += chunks[i].eq(Cat(*[Mux(fill[i] & (kept[:1] == k), fr.data, shifted[k]) for k in range(2)]))

        # ---- memory requests: registered; an instruction issues only into an empty buffer --
        if cfg.shared_mem_request:
            with m.If(self.vmem_req.valid & self.vmem_req.ready | self.lds_req.valid & self.lds_req.ready):
                m.d.sync += mreq_valid.eq(0)
            ports = (self.smem_req,)
        else:
            ports = (self.smem_req, self.vmem_req, self.lds_req)
        for port in ports:
            with m.If(port.ready):
                m.d.sync += port.valid.eq(0)
        lane = lambda v, n: v[32 * n: 32 * n + 32]   # noqa: E731
        vaddr_lanes = Cat(*[(Mux(xi.saddr == NULL, Cat(lane(vdata[0], n), lane(vdata[1], n)),
                                                     sr[0].data + lane(vdata[0], n)) + xi.offset)[:64]
                            for n in range(RL)])
        ds_lanes = Cat(*[Cat(lane(vdata[0], n), Const(0, 32)) for n in range(RL)])
        data_lanes = Cat(*[Cat(*[lane(vdata[2 + d], n) for d in range(4)]) for n in range(RL)])

        def per_lane(field, value, bits):
            """Fill a request's per-lane field (``bits`` per lane): at once, or (banked VGPR
            file) the EX cycle's lane group; the request leaves with the last group."""
            return field.eq(value) if RL == LANES else field.word_select(grp, bits * RL).eq(value)
        with m.If(x_valid & (xk == Kind.SMEM)):
            soff = Mux(xi.soffset == NULL, 0, Mux(xi.soffset[0], sr[1].data[32:], sr[1].data[:32]))
            p = self.smem_req.payload
            m.d.sync += [self.smem_req.valid.eq(1), p.wave.eq(xw), p.seq.eq(ex.seq), p.op.eq(xi.op),
                         p.addr.eq((sr[0].data + xi.offset + soff)[:64]), p.sdst.eq(xi.sdst), p.dwords.eq(xi.sdst_dw)]
        x_req = (x_valid & ex_last) if banked else x_valid
        if cfg.shared_mem_request:
            # one write of the shared register, its address picked by the kind: a write in
            # each kind's If would cost a multiplexer per bit and kind (4 x 6,227 on the fpga SIMD)
            is_ds = _is_kind(xk, *ds_kinds)
            requests = [(mreq, mreq_valid, vmem_kinds + ds_kinds, Mux(is_ds, ds_lanes, vaddr_lanes),
                         (Mux(is_ds, xi.offset0, 0), Mux(is_ds, xi.offset1, 0)))]
        else:
            requests = [(self.vmem_req.payload, self.vmem_req.valid, vmem_kinds, vaddr_lanes, (0, 0)),
                        (self.lds_req.payload, self.lds_req.valid, ds_kinds, ds_lanes, (xi.offset0, xi.offset1))]
        for p, valid, kinds, lanes_addr, offsets in requests:
            with m.If(x_valid & _is_kind(xk, *kinds)):
                if cfg.request_rows > 1:   # a row per EX cycle (request_lanes == lanes)
                    m.d.comb += [mreq_w.addr.eq(grp), mreq_w.data.eq(Cat(lanes_addr, data_lanes)), mreq_w.en.eq(1)]
                else:
                    m.d.sync += [per_lane(p.addr, lanes_addr, 64), per_lane(p.data, data_lanes, 128)]
            with m.If(x_req & _is_kind(xk, *kinds)):
                m.d.sync += [valid.eq(1), p.wave.eq(xw), p.seq.eq(ex.seq), p.op.eq(xi.op), p.exec.eq(x_exec),
                             p.vdst.eq(xi.vdst), p.returns.eq(xi.vdst_dw != 0),
                             p.offset0.eq(offsets[0]), p.offset1.eq(offsets[1])]
                if cfg.shared_mem_request:
                    m.d.sync += mreq_lds.eq(is_ds)

        # ---- counters and busy bits: up at issue, down on the last response beat ------------
        inc = {c: Signal(W, name=f"inc_{c}") for c in ("load", "store", "ds", "km")}
        dec_ = {c: Signal(W, name=f"dec_{c}") for c in ("load", "store", "ds", "km")}
        vset, vclr = (Array(Signal(V, name=f"vset{i}") for i in range(W)),
                      Array(Signal(V, name=f"vclr{i}") for i in range(W)))
        sset, sclr = (Array(Signal(128, name=f"sset{i}") for i in range(W)),
                      Array(Signal(128, name=f"sclr{i}") for i in range(W)))
        valu_busy = (sk == Kind.VALU) if lat > 1 else Const(0)   # VALU destinations wait for ``lat``
        with mqp.If(issue & ~si.illegal):
            with mqp.If(sk == Kind.SMEM):
                mqp.d.comb += inc["km"].bit_select(sel, 1).eq(1)
            with mqp.If((sk == Kind.SMEM) | valu_busy):
                mqp.d.comb += sset[sel].eq(((Const(1, 17) << si.sdst_dw) - 1) << si.sdst)
            with mqp.If(_is_kind(sk, Kind.VMEM_LOAD, Kind.VMEM_ATOMIC) & (si.vdst_dw != 0)
                        | (si.op == OpId.GLOBAL_INV)):
                mqp.d.comb += inc["load"].bit_select(sel, 1).eq(1)
            with mqp.Elif(_is_kind(sk, Kind.VMEM_STORE, Kind.VMEM_ATOMIC, Kind.CACHE)):
                mqp.d.comb += inc["store"].bit_select(sel, 1).eq(1)
            with mqp.If(_is_kind(sk, Kind.DS_LOAD, Kind.DS_STORE, Kind.DS_ATOMIC)):
                mqp.d.comb += inc["ds"].bit_select(sel, 1).eq(1)
            with mqp.If(is_mem | (sk == Kind.VTRANS) | valu_busy):
                mqp.d.comb += vset[sel].eq(((Const(1, 5) << si.vdst_dw) - 1) << si.vdst)

        # returns: scalar and vector memory responses, and the launch sequence's writes
        mr = fragment("returns")
        sresp = self.smem_resp
        mr.d.comb += sresp.ready.eq((~launching & ~s_taken) if banked else ~launching)
        with mr.If(sresp.valid & sresp.ready):
            sp = sresp.payload
            mr.d.comb += [sw_mem.addr.eq(sp.wave * 64 + sp.sdst[1:]), sw_mem.data.eq(Cat(sp.data, sp.data)),
                          sw_mem.en.eq(Mux(sp.sdst[0], 0b10, 0b01)), sclr[sp.wave].eq(Const(1, 128) << sp.sdst)]
            with mr.If(sp.last):
                mr.d.comb += dec_["km"].bit_select(sp.wave, 1).eq(1)
        # the register pairs a launch writes: s[0:1] s[2:3] ttmp[6:7] ttmp[8:9]
        launch_pairs = Array([Const(0, 6), Const(1, 6), Const(57, 6), Const(58, 6)])
        launch_vals = Array([Cat(hold.sgpr[0], hold.sgpr[1]), Cat(hold.sgpr[2], hold.sgpr[3]),
                             Cat(Const(0, 32), hold.ttmp7), Cat(Const(0, 32), hold.ttmp9)])
        with mr.If(launch_go):
            mr.d.comb += [sw_mem.addr.eq(hold_slot * 64 + launch_pairs[launch_step - 1]),
                          sw_mem.data.eq(launch_vals[launch_step - 1]),
                          sw_mem.en.eq(Mux(launch_step >= 3, 0b10, 0b11))]
            if not banked:
                with mr.If(launch_step == 4):
                    mr.d.comb += [vw_mem.addr.eq(hold.vgpr_base), vw_mem.data.eq(hold.v0), vw_mem.en.eq(~0)]
        if banked:
            vw_who = Signal(data.StructLayout({"wave": range(WID), "vdst": 8}))   # whose register vw_mem writes
            with mr.If(launch_fire):
                lp = self.launch.payload
                mr.d.comb += [vw_mem.addr.eq(lp.vgpr_base), vw_mem.data.eq(lp.v0), vw_mem.en.eq(~0),
                              vw_who.wave.eq(launch_slot)]
        with mr.If(trans_done):
            mr.d.comb += [vw_mem.addr.eq(base[trans_wb.wave] + trans_wb.vdst), vw_mem.data.eq(trans_o.payload.d),
                          vw_mem.en.eq(trans_wb.exec)]
            if banked:
                mr.d.comb += [vw_who.wave.eq(trans_wb.wave), vw_who.vdst.eq(trans_wb.vdst)]
        vresp, lresp = self.vmem_resp, self.lds_resp
        if banked:   # a lane group per beat, written as it comes (config.resp_lanes)
            vw_side = vgprs.wr_side
            vw_free = vw_side.ready
        else:
            vw_free = ~launching & ~trans_o.valid
        mr.d.comb += [vresp.ready.eq(vw_free), lresp.ready.eq(vw_free & ~vresp.valid)]
        for resp, is_lds in ((vresp, False), (lresp, True)):
            with mr.If(resp.valid & resp.ready):
                rp = resp.payload
                with mr.If(rp.write):
                    if banked:
                        mr.d.comb += [vw_side.addr.eq(base[rp.wave] + rp.vdst), vw_side.grp.eq(rp.grp),
                                      vw_side.data.eq(rp.data), vw_side.en.eq(rp.mask)]
                        with mr.If(rp.grp == LANES // cfg.resp_lanes - 1):   # the register's last group
                            mr.d.comb += vclr[rp.wave].eq(Const(1, V) << rp.vdst)
                    else:
                        mr.d.comb += [vw_mem.addr.eq(base[rp.wave] + rp.vdst), vw_mem.data.eq(rp.data),
                                      vw_mem.en.eq(rp.mask), vclr[rp.wave].eq(Const(1, V) << rp.vdst)]
                with mr.If(rp.last):
                    if is_lds:
                        mr.d.comb += dec_["ds"].bit_select(rp.wave, 1).eq(1)
                    else:
                        with mr.If(rp.store):
                            mr.d.comb += dec_["store"].bit_select(rp.wave, 1).eq(1)
                        with mr.Else():
                            mr.d.comb += dec_["load"].bit_select(rp.wave, 1).eq(1)
        vclr_trans = Array(Signal(V, name=f"vclr_trans{i}") for i in range(W))
        with mt.If((trans_done & (trans_wb.exec == 0)) if banked else trans_done):
            mt.d.comb += vclr_trans[trans_wb.wave].eq(Const(1, V) << trans_wb.vdst)
        if banked:
            # the destination of a buffered whole-register write (a launch's v0, which the
            # launch marks busy, a memory return, a transcendental result) stays busy until
            # the VGPR file has written its last group
            vclr_buf = Array(Signal(V, name=f"vclr_buf{i}") for i in range(W))
            buffered = Signal(vw_who.shape())
            with m.If(vw_mem.en.any() & vw_mem.ready):
                m.d.sync += buffered.eq(vw_who)
            with mr.If(vgprs.done):
                mr.d.comb += vclr_buf[buffered.wave].eq(Const(1, V) << buffered.vdst)
        vclr_valu = Array(Signal(V, name=f"vclr_valu{i}") for i in range(W))
        sclr_valu = Array(Signal(128, name=f"sclr_valu{i}") for i in range(W))
        if flight:
            done = flight[-1]   # issued lat - 1 cycles ago: its dependants may issue next cycle
            mdone = fragment("valu_done")
            with mdone.If(done.valid):
                mdone.d.comb += vclr_valu[done.wave].eq(((Const(1, 3) << done.vn) - 1) << done.vdst)
                if not D:
                    mdone.d.comb += sclr_valu[done.wave].eq(((Const(1, 3) << done.sn) - 1) << done.sdst)
            if D:   # a staged scalar destination: its readers may issue in the cycle it is written
                s_done = valu_w[-2]
                with mdone.If(s_done.s_we):
                    mdone.d.comb += sclr_valu[s_done.wave].eq(((Const(1, 3) << s_done.sn) - 1) << s_done.sdst)
        for i in range(W):
            v_done = vclr[i] | vclr_trans[i] | vclr_valu[i]
            if banked:
                v_done = v_done | vclr_buf[i]
            with m.If(~(launch_fire & (launch_slot == i))):   # a launch resets them instead
                m.d.sync += [loadcnt[i].eq(loadcnt[i] + inc["load"][i] - dec_["load"][i]),
                             storecnt[i].eq(storecnt[i] + inc["store"][i] - dec_["store"][i]),
                             dscnt[i].eq(dscnt[i] + inc["ds"][i] - dec_["ds"][i]),
                             kmcnt[i].eq(kmcnt[i] + inc["km"][i] - dec_["km"][i]),
                             vbusy[i].eq((vbusy[i] | vset[i]) & ~v_done),
                             sbusy[i].eq((sbusy[i] | sset[i]) & ~(sclr[i] | sclr_valu[i]))]

        # ---- workgroup barrier -----------------------------------------------------------------
        for i in range(W):
            if self.external_barrier:   # the DCU releases it
                complete = bar_sig[i] & self.bar_release[i]
            else:   # among this SIMD's waves; a wave that has ended has arrived
                complete = resident[i] & bar_sig[i]
                for j in range(W):
                    if j != i:
                        complete = complete & (~resident[j] | (wg[j] != wg[i]) | bar_sig[j])
            with m.If(complete):
                m.d.sync += [bar_sig[i].eq(0), bar_pass[i].eq(1)]

        self.trace = dict(vgprs=vgprs, sgprs=sgprs, ex=ex, issue=issue, sel=sel, pc=pc, base=base, vw_ex=vw_alu,
                          ex_s=exs, issue_s=issue_s, sel_s=sel_s, sw_s=sw_s,
                          vw_trans=vw_mem, trans_valid=trans_done, trans_wb=trans_wb,
                          sw=[sw_alu, sw_mem], exec=exec_, vcc=vcc, scc=scc, m0=m0, resident=resident,
                          loadcnt=loadcnt, storecnt=storecnt, dscnt=dscnt, kmcnt=kmcnt, ex_last=ex_last,
                          why=reason_w)
        return m

    # ------------------------------------------------------------------------------------
    def _pick(self, m, frag, ready, older, sel_name, issue_name):
        """One issue pipe's choice among the ``ready`` waves (``config.wave_policy``): the
        slot and whether anything issues."""
        W, WID = len(ready), self.config.wave_ids
        sel, issue = Signal(range(WID), name=sel_name), Signal(name=issue_name)
        if self.config.wave_policy == "oldest":
            for i in range(W):
                oldest = ready[i]
                for j in range(W):
                    if j != i:
                        oldest = oldest & (~ready[j] | older[i][j])
                with frag.If(oldest):
                    frag.d.comb += [sel.eq(i), issue.eq(1)]
        else:
            last = Signal(range(WID), name=f"{issue_name}_last")
            self._round_robin(frag, ready, last, sel, issue, issue_name)
            with m.If(issue):
                m.d.sync += last.eq(sel)
        return sel, issue

    @staticmethod
    def _loop_target(m, line, line_addr, lb, valid):
        """Whether the fetch chunk ``line`` (``2 ** lb`` bytes) at ``line_addr`` holds a backward
        branch (a dword with the SOPP branch encoding and a negative offset; the last one wins)
        and its target's chunk address; 0 unless ``valid``. A literal or a second dword may look
        like one: that only costs a fetch."""
        found, target_line = Signal(name="loop_found"), Signal(ADDR - lb, name="loop_target")
        # the scan under ``valid``: a compiled simulation decodes the chunk's dwords only in
        # the cycles a line arrives, not on every cycle
        with m.If(valid):
            for k in range(len(line) // 32):
                d = line[32 * k: 32 * k + 32]
                with m.If(is_branch_word(d) & d[15]):
                    m.d.comb += [found.eq(1),
                                 target_line.eq((line_addr + 4 * k + 4 + (d[0:16].as_signed() << 2))[lb:])]
        return found, target_line

    @staticmethod
    def _round_robin(m, want, last, pick, any_, name):
        """``pick`` = the first set bit of ``want`` after position ``last`` (wrapping)."""
        W = len(want)
        rot = Cat(want, want)
        for k in reversed(range(W)):
            idx = Signal(range(2 * W + 1), name=f"{name}_rr{k}")
            m.d.comb += idx.eq(last + 1 + k)
            with m.If(rot.bit_select(idx, 1)):
                m.d.comb += [pick.eq(Mux(idx >= W, idx - W, idx)), any_.eq(1)]

    def _ready(self, m, i, inst, vbusy, sbusy, loadcnt, storecnt, dscnt, kmcnt, bar_pass, started, ib_valid,
               trans_free, writing):
        """Wave i's buffered instruction has no hazard and its unit can take it: a ``ready``
        signal, and the :class:`StallReason` when it is not. ``writing``: a VALU write of
        the wave is still in the units' stages (s_endpgm waits for it)."""
        k = inst.kind
        vregs = [(inst.src0[:8], Mux(inst.src0[8], inst.src0_dw, 0)),
                 (inst.src1[:8], Mux(inst.src1[8], inst.src1_dw, 0)),
                 (inst.src2[:8], Mux(inst.src2[8], inst.src2_dw, 0)),
                 (inst.vaddr, inst.vaddr_dw), (inst.data0, inst.data0_dw), (inst.data1, inst.data1_dw),
                 (inst.vdst, inst.vdst_dw)]
        is_vmem = _is_kind(k, Kind.VMEM_LOAD, Kind.VMEM_STORE, Kind.VMEM_ATOMIC)
        sregs = [(inst.src0[:7], Mux(~inst.src0[8] & (inst.src0 < 128), inst.src0_dw, 0)),
                 (inst.src1[:7], Mux(~inst.src1[8] & (inst.src1 < 128), inst.src1_dw, 0)),
                 (inst.src2[:7], Mux(~inst.src2[8] & (inst.src2 < 128), inst.src2_dw, 0)),
                 (inst.saddr, Mux(is_vmem & (inst.saddr != NULL), 2, 0)),
                 (Cat(Const(0, 1), inst.sbase), Mux(k == Kind.SMEM, 2, 0)),
                 (inst.soffset, Mux((k == Kind.SMEM) & (inst.soffset != NULL), 1, 0)),
                 (Const(VCC_LO, 7), inst.reads_vcc),
                 (inst.sdst, inst.sdst_dw)]
        # busy bits cover VALU results in flight as well as memory and transcendental returns;
        # every instruction reads EXEC (an in-flight v_cmpx holds the whole wave)
        def busy_in(busy, r, n):
            """Any of ``busy[r : r + n]`` (0 beyond ``busy``), a window only as wide as ``n``
            can count: ``r``'s 32-bit word and the next ``w - 1`` bits (:func:`mux_tree`), then a
            shift by ``r % 32``, instead of a shift of the whole vector."""
            w = min(16, (1 << len(n)) - 1)
            nw = 1 << max(0, len(r) - 5)                 # the words that ``r`` can address
            padded = Cat(busy, Const(0, 32 * (nw + 1)))[:32 * (nw + 1)]   # no empty word past ``busy``
            words = [padded[32 * k: 32 * k + 31 + w] for k in range(nw)]   # what the shift can reach
            pair = mux_tree(r[5:], words) if nw > 1 else words[0]
            return ((pair >> r[:5])[:w] & ((Const(1, w + 1) << n) - 1)[:w]).any()
        terms = [sbusy[EXEC_LO]]
        terms += [busy_in(vbusy, r, n) for r, n in vregs]
        terms += [busy_in(sbusy, r, n) for r, n in sregs]
        hazard = Signal(name=f"hazard{i}")
        wait_ok = Signal(name=f"wait_ok{i}")
        wait_why = Signal(StallReason, name=f"wait_why{i}")   # what an unsatisfied wait waits for
        port_ok = Signal(name=f"port_ok{i}")
        # checked only for a started wave with an instruction (``ready`` and ``why`` look no
        # further otherwise): a compiled simulator skips the checks of empty wave slots
        with m.If(started & ib_valid):
            m.d.comb += hazard.eq(Cat(*terms).any())

            imm = inst.simm16
            with m.Switch(inst.op):
                with m.Case(OpId.S_WAIT_LOADCNT):
                    m.d.comb += [wait_ok.eq(loadcnt <= imm[:6]), wait_why.eq(StallReason.LOADCNT)]
                with m.Case(OpId.S_WAIT_STORECNT):
                    m.d.comb += [wait_ok.eq(storecnt <= imm[:6]), wait_why.eq(StallReason.STORECNT)]
                with m.Case(OpId.S_WAIT_DSCNT):
                    m.d.comb += [wait_ok.eq(dscnt <= imm[:6]), wait_why.eq(StallReason.DSCNT)]
                with m.Case(OpId.S_WAIT_KMCNT):
                    m.d.comb += [wait_ok.eq(kmcnt <= imm[:5]), wait_why.eq(StallReason.KMCNT)]
                with m.Case(OpId.S_WAIT_LOADCNT_DSCNT):
                    load_ok = loadcnt <= imm[8:14]
                    m.d.comb += [wait_ok.eq(load_ok & (dscnt <= imm[:6])),
                                 wait_why.eq(Mux(load_ok, StallReason.DSCNT, StallReason.LOADCNT))]
                with m.Case(OpId.S_WAIT_STORECNT_DSCNT):
                    store_ok = storecnt <= imm[8:14]
                    m.d.comb += [wait_ok.eq(store_ok & (dscnt <= imm[:6])),
                                 wait_why.eq(Mux(store_ok, StallReason.DSCNT, StallReason.STORECNT))]
                with m.Case(OpId.S_ENDPGM):   # a wave ends once its memory traffic and register writes have retired
                    m.d.comb += [wait_ok.eq((loadcnt == 0) & (storecnt == 0) & (dscnt == 0) & (kmcnt == 0) &
                                            (vbusy == 0) & (sbusy == 0) & ~writing),
                                 wait_why.eq(Mux(loadcnt != 0, StallReason.LOADCNT,
                                             Mux(storecnt != 0, StallReason.STORECNT,
                                             Mux(dscnt != 0, StallReason.DSCNT,
                                             Mux(kmcnt != 0, StallReason.KMCNT, StallReason.DEPENDENCY)))))]
                with m.Case(OpId.S_BARRIER_WAIT):
                    m.d.comb += [wait_ok.eq(bar_pass), wait_why.eq(StallReason.BARRIER)]
                with m.Default():
                    m.d.comb += wait_ok.eq(1)
            # a memory instruction needs its port's buffer free and room in its counter
            is_ds = _is_kind(k, Kind.DS_LOAD, Kind.DS_STORE, Kind.DS_ATOMIC)
            busy = self._port_busy
            m.d.comb += port_ok.eq(Mux(k == Kind.SMEM, ~busy["smem"] & (kmcnt != 31),
                                   Mux(is_vmem | (k == Kind.CACHE), ~busy["vmem"] & (loadcnt != 63) & (storecnt != 63),
                                   Mux(is_ds, ~busy["lds"] & (dscnt != 63),
                                   Mux(k == Kind.VTRANS, trans_free, 1)))))
        ready = Signal(name=f"ready{i}")
        dep = hazard & ~inst.illegal
        m.d.comb += ready.eq(started & ib_valid & ~dep & wait_ok & port_ok)
        why = Signal(StallReason, name=f"why{i}")
        m.d.comb += why.eq(Mux(~started, StallReason.HELD, Mux(~ib_valid, StallReason.FETCH,
                           Mux(dep, StallReason.DEPENDENCY, Mux(~wait_ok, wait_why,
                           Mux(~port_ok, StallReason.STRUCTURAL, StallReason.NONE))))))
        return ready, why


def _is_kind(kind, *kinds):
    return Cat(*[kind == k for k in kinds]).any()


def _reads_twice(inst, is_mem):
    """With the banked VGPR file: ``inst`` needs more than three reads, two cycles per lane
    group (a VALU instruction with a 64-bit VGPR source: reads 1, 3 or 5; a vector memory one
    with more than one data dword: reads 3 to 5; a 16-bit result with a src2: the old
    destination at read 5)."""
    wide_src = Cat(*[src[8] & (n == 2) for src, n in ((inst.src0, inst.src0_dw), (inst.src1, inst.src1_dw),
                                                       (inst.src2, inst.src2_dw))]).any()
    return (is_mem & ((inst.data0_dw >= 2) | (inst.data1_dw != 0))
            | (inst.kind == Kind.VALU) & (wide_src | _dst_at_read5(inst.op)))


def _cndmask_mods(inst, k, v, lanes):
    """Source ``k`` of v_cndmask_b32 (``v``: ``lanes`` 64-bit lanes) with its VOP3 abs/neg, the
    float modifiers LLVM accepts on it: bit 31 of each lane cleared, then flipped."""
    bit31 = Const(sum(1 << (31 + 64 * n) for n in range(lanes)), 64 * lanes)
    cnd = inst.op == OpId.V_CNDMASK_B32
    v = Mux(cnd & inst.abs[k], v & ~bit31, v)
    return Mux(cnd & inst.neg[k], v ^ bit31, v)


def _dst_at_read5(op):
    """``op`` merges a 16-bit result into the old destination and has a src2 (v_mad_u16,
    v_mad_i16): read 4 brings src2, read 5 (src2's high dword, unused) the old destination."""
    return _is_op(op, *_ops(lambda i: i.kind == "valu" and i.dst_bits == 16 and len(i.src_bits) == 3
                            and i.name in IMPLEMENTED))


def _is_op(op, *ops):
    return Cat(*[op == o for o in ops]).any()


def _ops(pred) -> list:
    return [op for op in OpId if op is not OpId.NONE and pred(info_of(op))]


def _is_float_op(info) -> bool:
    """Executed by VALUFloat: FP32 arithmetic, conversions, float compares."""
    return info.kind == "valu" and ("f32" in info.name or "ubyte" in info.name)


def _in_set(m: Module, op, ops, name: str) -> Signal:
    """A 1-bit signal: ``op`` is one of ``ops`` (a Switch generated from the ISA tables)."""
    s = Signal(name=name)
    if ops:
        with m.Switch(op):
            with m.Case(*ops):
                m.d.comb += s.eq(1)
    return s


def _overlap(r, rn, e, en):
    """Register ranges [r, r + rn) and [e, e + en) overlap (a count of 0 is no range)."""
    return (rn != 0) & (en != 0) & (r < e + en) & (e < r + rn)


#: Mnemonics the RTL SIMD executes (docs/opcodes.md's RTL column).
IMPLEMENTED = EXECUTED


def _no_clamp() -> frozenset:
    """Executed mnemonics that fault on the VOP3 ``clamp`` bit: the transcendentals (clamp not
    implemented) and the plain 32-bit integer ops that do not saturate (the model rejects
    clamp on them too)."""
    from .trans import CLS_OF as trans_ops
    from .valu_int import PLAIN32, CLAMP_SATURATES
    return frozenset((PLAIN32 - CLAMP_SATURATES) | {o.name.lower() for o in trans_ops})


#: Mnemonics of ``IMPLEMENTED`` that the SIMD does not execute with ``clamp`` set.
NO_CLAMP = _no_clamp()

#: Mnemonics of ``IMPLEMENTED`` that the SIMD does not execute with a VOP3 ``omod`` (mul:2,
#: mul:4, div:2): the transcendentals, whose unit has no output modifiers.
NO_OMOD = frozenset(o.name.lower() for o in _TRANS_OPS)
