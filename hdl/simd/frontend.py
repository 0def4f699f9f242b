"""The SIMD's front end: fetch, wave selection and decode (docs/simd.md).

:class:`~hdl.simd.fetch.Fetch` picks a ready wave a cycle and reads its instruction window;
:class:`~hdl.simd.decode.DecodeStage` decodes it. A window selected at cycle *t* leaves decoded
at *t* + 3 (its bank read, then the decode stage's two cycles).
"""
from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..config import DCUConfig
from ..layouts import ADDR, DecodeOut, FetchReq, FetchResp, SteerLayout, WaveStart
from .decode import DecodeStage
from .fetch import Fetch

__all__ = ["FrontEnd"]


class FrontEnd(wiring.Component):
    """Instruction fetch, buffers, wave selection and decode for one SIMD.

    Parameters
    ----------
    config : DCUConfig
    lines : int
        Fetch lines buffered per wave (:class:`~hdl.simd.fetch.Fetch`).

    Attributes
    ----------
    fetch_req, fetch_resp, start, steer, active, pcs
        As :class:`~hdl.simd.fetch.Fetch`'s.
    inst : Out(stream.Signature(DecodeOut(wave bits)))
        One decoded instruction a cycle at most, its fall-through PC, branch target and wave (the tag).
    fetch : Fetch
        The fetch unit (its ``wave_bits`` is the tag's width).
    """

    def __init__(self, config: DCUConfig, lines: int = 4):
        self.fetch = Fetch(config, lines)
        wave_bits = self.fetch.wave_bits
        super().__init__({
            "fetch_req": Out(stream.Signature(FetchReq(config))),
            "fetch_resp": In(stream.Signature(FetchResp(config))),
            "start": In(stream.Signature(WaveStart(config))),
            "steer": In(stream.Signature(SteerLayout(config))),
            "active": Out(config.wave_slots),
            "pcs": Out(data.ArrayLayout(ADDR, config.wave_slots)),
            "inst": Out(stream.Signature(DecodeOut(wave_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.fetch = fetch = self.fetch
        m.submodules.decode = decode = DecodeStage(tag_width=fetch.wave_bits)
        for name in ("fetch_req", "fetch_resp", "start", "steer"):
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(fetch, name))
        wiring.connect(m, fetch.window, decode.i)
        wiring.connect(m, decode.o, wiring.flipped(self.inst))
        m.d.comb += [self.active.eq(fetch.active), self.pcs.eq(fetch.pcs)]
        return m
