"""A SIMD's vector memory and LDS requests as their readers see them, for unit testbenches.

With ``config.request_in_rows`` a reader (the vector memory unit, the LDS) names a row of
the request (``req_row``) and the request port carries that row's lanes, combinationally, as
the SIMD's request memory does. :class:`RequestRows` wraps a reader so that a testbench can
set each port's whole request (``whole[port]``, the 32-lane layout) and have the rows served;
with one row it is the reader's own payload.
"""
from __future__ import annotations

from amaranth.hdl import Elaboratable, Module, Signal
from amaranth.lib import data

from hdl.layouts import VecMemReq

__all__ = ["RequestRows", "whole_layout"]


def whole_layout(cfg) -> data.StructLayout:
    """``VecMemReq`` with the whole wave's lanes (one row)."""
    return VecMemReq(cfg.replace(request_in_rows=False))


class RequestRows(Elaboratable):
    """``reader`` (a submodule) with its ``req`` ports fed from ``whole``, a row at a time.

    ``whole``: one signal per ``reader.req`` port, the whole request; a testbench sets it
    (and the port's ``valid``) instead of the port's payload."""

    def __init__(self, cfg, reader):
        self.cfg, self.reader = cfg, reader
        if cfg.request_rows > 1:
            self.whole = [Signal(whole_layout(cfg), name=f"whole{i}") for i in range(len(reader.req))]
        else:
            self.whole = [port.payload for port in reader.req]

    def elaborate(self, platform):
        m = Module()
        m.submodules.reader = self.reader
        RQ = self.cfg.request_lanes
        if self.cfg.request_rows > 1:
            for whole, port, row in zip(self.whole, self.reader.req, self.reader.req_row):
                p = port.payload
                m.d.comb += [getattr(p, name).eq(getattr(whole, name)) for name, _ in p.shape()
                             if name not in ("addr", "data")]
                m.d.comb += [p.addr.eq(whole.addr.word_select(row, 64 * RQ)),
                             p.data.eq(whole.data.word_select(row, 128 * RQ))]
        return m
