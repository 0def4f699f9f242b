"""The SIMD's memory requests: a vector memory or LDS request formed a row at a time
(docs/simd.md: ``MemRequest``).

The vector pipe reads a memory instruction's VGPRs in two cycles a row (:mod:`hdl.simd.vector`):
the address registers and the first data dword, then the other three data dwords. Each row's
lane addresses are formed as its first read arrives (global: the 64-bit ``vaddr``, or
``saddr`` + the 32-bit ``vaddr``, plus the instruction's offset; LDS: the 32-bit ``vaddr``,
the offsets going with the request), and with the second the row is written to a RAM of a row
per pass (a register when a row is the whole wave). After the last row the request is offered
on ``vmem_req`` or ``lds_req``; the reader names the row its port carries (``*_req_row``, read
from the RAM in place), and the RAM is free again when the reader takes the request
(``ready``).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from isa import OPCODES, Fmt

from ..config import DCUConfig
from ..isa_tables import rtl_memory_op
from ..layouts import SEQ, DecodedInst, ReqRow, VecMemReq

__all__ = ["MemRequest", "MemRows", "MEMORY_OPS"]

SADDR_OFF = 0x7C        # VGLOBAL ``saddr``: none, the address is the 64-bit ``vaddr``
#: Mnemonics the SIMD sends to the vector memory unit and the LDS: global and LDS
#: accesses those units execute.
MEMORY_OPS = frozenset(i.name for i in OPCODES if i.fmt in (Fmt.VGLOBAL, Fmt.DS) and rtl_memory_op(i)
                       and i.kind in ("vmem_load", "vmem_store", "vmem_atomic", "cache", "ds_load", "ds_store",
                                      "ds_atomic"))


def MemRows(cfg: DCUConfig) -> data.StructLayout:
    """What the vector pipe hands on for a memory instruction's row: the three registers
    read in one of its two cycles (``second``)."""
    return data.StructLayout({"valid": 1, "row": range(max(32 // cfg.lanes, 2)), "second": 1,
                              "data": data.ArrayLayout(32 * cfg.lanes, 3)})


class MemRequest(wiring.Component):
    """Requests to the vector memory unit and the LDS, one at a time.

    Parameters
    ----------
    config : DCUConfig
        ``lanes`` (a row), ``wave_slots``; ``request_lanes`` must equal ``lanes``.

    Attributes
    ----------
    start : In
        ``valid`` one cycle: wave ``wave`` issues memory instruction ``inst`` with ``exec``;
        ``lds`` for the LDS.
    saddr : In(64)
        The cycle after ``start``: the ``saddr`` pair's value.
    rows : In(MemRows(config))
        The instruction's VGPRs, a row in two cycles, rows in order.
    busy : Out(1)
        A request is being formed or offered: no other memory instruction may start.
    vmem_req, lds_req : Out(stream.Signature(VecMemReq(config)))
    vmem_req_row, lds_req_row : In(ReqRow(config))
    """

    def __init__(self, config: DCUConfig):
        if config.request_lanes != config.lanes:
            raise ValueError("a request row is a VGPR row: request_lanes must equal lanes")
        self.config = config
        w = range(max(config.wave_slots, 2))
        super().__init__({
            "start": In(data.StructLayout({"valid": 1, "wave": w, "lds": 1, "exec": 32, "inst": DecodedInst})),
            "saddr": In(64),
            "rows": In(MemRows(config)),
            "busy": Out(1),
            "vmem_req": Out(stream.Signature(VecMemReq(config))),
            "vmem_req_row": In(ReqRow(config)),
            "lds_req": Out(stream.Signature(VecMemReq(config))),
            "lds_req_row": In(ReqRow(config)),
        })

    def elaborate(self, platform):
        m = Module()
        cfg, L = self.config, self.config.lanes
        P, W = 32 // L, cfg.wave_slots
        st = self.start

        # the request's header, from issue; a per-wave sequence number
        hdr = Signal(data.StructLayout({"lds": 1, "saddr_off": 1, "offset": 24, "saddr": 64}))
        req = Signal(VecMemReq(cfg))
        seq = Array(Signal(SEQ, name=f"seq{w}") for w in range(W))
        forming, offered, took_saddr = Signal(), Signal(), Signal()
        m.d.comb += self.busy.eq(forming | offered)
        with m.If(st.valid):
            i = st.inst
            m.d.sync += [forming.eq(1), took_saddr.eq(1), hdr.lds.eq(st.lds), hdr.saddr_off.eq(i.saddr == SADDR_OFF),
                         hdr.offset.eq(i.offset), req.wave.eq(st.wave), req.seq.eq(seq[st.wave]), req.op.eq(i.op),
                         req.exec.eq(st.exec), req.offset0.eq(Mux(st.lds, i.offset0, 0)),
                         req.offset1.eq(Mux(st.lds, i.offset1, 0)), req.vdst.eq(i.vdst), req.returns.eq(i.vdst_dw != 0),
                         seq[st.wave].eq(seq[st.wave] + 1)]
        with m.If(took_saddr):
            m.d.sync += [took_saddr.eq(0), hdr.saddr.eq(self.saddr)]

        # a row: addresses and the first data dword from the first cycle, the rest from the second
        r = self.rows
        # (a statement a lane: one expression over all lanes would nest as deep as the lanes)
        lane = lambda v, n: v[32 * n:32 * n + 32]       # noqa: E731
        addr = Signal(data.ArrayLayout(64, L))
        d0 = Signal(data.ArrayLayout(32, L))
        with m.If(r.valid & ~r.second):
            lo, hi = r.data[0], r.data[1]
            for n in range(L):
                a32 = Mux(hdr.saddr_off, Cat(lane(lo, n), lane(hi, n)), hdr.saddr + lane(lo, n))
                m.d.sync += [addr[n].eq(Mux(hdr.lds, lane(lo, n), (a32 + hdr.offset.as_signed())[:64])),
                             d0[n].eq(lane(r.data[2], n))]
        row = data.StructLayout({"addr": data.ArrayLayout(64, L), "data": data.ArrayLayout(data.ArrayLayout(32, 4), L)})
        new = Signal(row)
        m.d.comb += new.addr.eq(addr)
        for n in range(L):
            m.d.comb += [new.data[n][0].eq(d0[n])] + [new.data[n][k + 1].eq(lane(r.data[k], n)) for k in range(3)]
        if P > 1:       # LUT RAM, read where the reader names
            m.submodules.rows = rows = memory.Memory(shape=row, depth=P, init=[], attrs={"ram_style": "distributed"})
            wr, rd = rows.write_port(), rows.read_port(domain="comb")
            m.d.comb += [wr.addr.eq(r.row), wr.data.eq(new), wr.en.eq(r.valid & r.second)]
            m.d.comb += rd.addr.eq(Mux(hdr.lds, self.lds_req_row, self.vmem_req_row))
            held = rd.data
        else:           # the whole wave in one row: a register
            held = Signal(row)
            with m.If(r.valid & r.second):
                m.d.sync += held.eq(new)
        with m.If(r.valid & r.second & (r.row == P - 1)):
            m.d.sync += [forming.eq(0), offered.eq(1)]

        # offered to the port of its kind; each reader names the row it reads
        vq, lq = self.vmem_req, self.lds_req
        for port in (vq, lq):
            m.d.comb += [port.payload.eq(req), port.payload.addr.eq(held.addr), port.payload.data.eq(held.data)]
        m.d.comb += [vq.valid.eq(offered & ~hdr.lds), lq.valid.eq(offered & hdr.lds)]
        with m.If((vq.valid & vq.ready) | (lq.valid & lq.ready)):
            m.d.sync += offered.eq(0)
        return m
