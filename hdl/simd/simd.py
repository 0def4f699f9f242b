"""The SIMD (docs/simd.md): front end, scalar pipe, vector pipe, counters.

:class:`~hdl.simd.frontend.FrontEnd` fetches, buffers, selects and decodes;
:class:`~hdl.simd.scalar.ScalarPipe` issues every instruction, runs the scalar ones (SALU,
scalar loads, branches, waits, barriers, ``s_endpgm``) and hands the vector and memory ones to
:class:`~hdl.simd.vector.VectorPipe`; :class:`~hdl.simd.perf.PerfCounters` counts.
"""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..config import DCUConfig
from ..layouts import (ADDR, FetchReq, FetchResp, LaunchLayout, ReqRow, SimdPerf, SmemReq, SmemResp, VecMemReq,
                       VecMemResp, WaveStatus)
from .frontend import FrontEnd
from .perf import PerfCounters
from .scalar import PipeError, ScalarPipe
from .trans import TransIn, TransOut
from .vector import VectorPipe

__all__ = ["SIMD", "SimdError"]


def SimdError(cfg):
    """``error``: ``valid`` (sticky) once a wave has been stopped; its slot, PC and cause."""
    return data.StructLayout({"valid": 1, "wave": range(cfg.wave_ids), "pc": ADDR, "cause": PipeError})


class SIMD(wiring.Component):
    """One SIMD32 with ``config.wave_slots`` wave slots.

    Parameters
    ----------
    config : DCUConfig

    Attributes
    ----------
    fetch_req, fetch_resp
        The instruction cache's ports.
    smem_req, smem_resp
        The scalar cache's ports.
    vmem_req, vmem_req_row, vmem_resp, lds_req, lds_req_row, lds_resp
        The vector memory unit's and the LDS's ports (:class:`~hdl.simd.vector.VectorPipe`'s).
    trans_req, trans_resp
        The DCU's transcendental unit (:class:`~hdl.simd.transseq.TransSeq`, shared).
    launch : In(stream.Signature(LaunchLayout(config)))
        A wave for the first free slot (:class:`~hdl.simd.scalar.ScalarPipe`'s ``launch``).
    launched_slot, idle, ended, waves
        :class:`~hdl.simd.scalar.ScalarPipe`'s.
    error : Out(SimdError(config))
        ``valid`` once a wave has been stopped on an instruction it cannot run (it stays
        resident and issues nothing more): the first such wave, its PC and why.
    active : Out(config.wave_slots)
        The waves running.
    perf : Out(SimdPerf)
        :class:`~hdl.simd.perf.PerfCounters`' counters.
    bar_wait, bar_release
        The workgroup barrier (:class:`~hdl.simd.scalar.ScalarPipe`'s), for the DCU's barrier unit.
    frontend : FrontEnd
    scalar : ScalarPipe
    vector : VectorPipe
    """

    def __init__(self, config: DCUConfig):
        self.config = config
        self.frontend = FrontEnd(config)
        self.scalar = ScalarPipe(config, wave_bits=len(self.frontend.inst.payload.tag))
        self.vector = VectorPipe(config)
        super().__init__({
            "fetch_req": Out(stream.Signature(FetchReq(config))),
            "fetch_resp": In(stream.Signature(FetchResp(config))),
            "smem_req": Out(stream.Signature(SmemReq(config))),
            "smem_resp": In(stream.Signature(SmemResp(config))),
            "launch": In(stream.Signature(LaunchLayout(config))),
            "launched_slot": Out(range(config.wave_ids)),
            "idle": Out(1),
            "ended": Out(config.wave_slots),
            "waves": Out(data.ArrayLayout(WaveStatus, config.wave_slots)),
            "error": Out(SimdError(config)),
            "perf": Out(SimdPerf),
            "active": Out(config.wave_slots),
            "bar_wait": Out(config.wave_slots),
            "bar_release": In(config.wave_slots),
            "vmem_req": Out(stream.Signature(VecMemReq(config))),
            "vmem_req_row": In(ReqRow(config)),
            "vmem_resp": In(stream.Signature(VecMemResp(config))),
            "lds_req": Out(stream.Signature(VecMemReq(config))),
            "lds_req_row": In(ReqRow(config)),
            "lds_resp": In(stream.Signature(VecMemResp(config))),
            "trans_req": Out(stream.Signature(TransIn)),
            "trans_resp": In(stream.Signature(TransOut)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.frontend = fe = self.frontend
        m.submodules.scalar = sp = self.scalar
        m.submodules.vector = vp = self.vector
        wiring.connect(m, sp.vector, vp.port)
        wiring.connect(m, sp.v0, vp.side)
        for n in ("vmem_req", "lds_req"):
            wiring.connect(m, getattr(vp, n), wiring.flipped(getattr(self, n)))
            m.d.comb += getattr(vp, f"{n}_row").eq(getattr(self, f"{n}_row"))
        wiring.connect(m, vp.trans_req, wiring.flipped(self.trans_req))
        for n in ("vmem_resp", "lds_resp", "trans_resp"):
            wiring.connect(m, wiring.flipped(getattr(self, n)), getattr(vp, n))
        wiring.connect(m, wiring.flipped(self.fetch_req), fe.fetch_req)
        wiring.connect(m, wiring.flipped(self.fetch_resp), fe.fetch_resp)
        wiring.connect(m, fe.inst, sp.inst)
        wiring.connect(m, sp.steer, fe.steer)
        err = sp.error
        m.d.comb += err.ready.eq(1)
        with m.If(err.valid & ~self.error.valid):
            m.d.sync += [self.error.valid.eq(1), self.error.wave.eq(err.payload.wave),
                         self.error.pc.eq(err.payload.pc), self.error.cause.eq(err.payload.cause)]
        m.submodules.perf = perf = PerfCounters()
        m.d.comb += [perf.events.eq(sp.events), self.perf.eq(perf.perf), sp.pcs.eq(fe.pcs),
                     self.launched_slot.eq(sp.launched_slot), self.idle.eq(sp.idle), self.ended.eq(sp.ended),
                     self.waves.eq(sp.waves)]
        wiring.connect(m, sp.smem_req, wiring.flipped(self.smem_req))
        wiring.connect(m, wiring.flipped(self.smem_resp), sp.smem_resp)
        wiring.connect(m, wiring.flipped(self.launch), sp.launch)
        wiring.connect(m, sp.started, fe.start)
        m.d.comb += [self.active.eq(fe.active), self.bar_wait.eq(sp.bar_wait), sp.bar_release.eq(self.bar_release)]
        return m
