"""The SIMD's instruction fetch and buffer (docs/simd.md: ``Fetch``).

Each wave slot has a PC and an instruction buffer of ``lines`` fetch lines (``fetch_bytes``
each) in four dword banks of RAM: dword *k* of a wave's ring is in bank *k* mod 4, so the
three dwords at any PC are one read of each of three banks and a rotate. The ring position of
a line is its address's line number modulo ``lines``, so a buffered dword stays where it was
written while the PC moves through it.

Per wave, in flip-flops: the PC, how many lines from the PC's line on have been requested
(``req``) and have arrived (``arr``), a 2-bit epoch and whether its last window is still
being decoded or issued (``busy``). A wave is ready when it is not busy and the buffer holds
three dwords from its PC; :class:`~hdl.simd.select.WaveSelect` takes one ready wave a cycle
and the banks are read for it; the next cycle its window (three dwords, PC, wave) goes to the
decode stage. The issue stage answers each window with a :class:`~hdl.layouts.Steer`: ``NEXT``
(the PC moves on in the buffer, or stays for a replay), ``JUMP`` (the buffer is dropped and
fetch restarts at the new PC; responses of the old epoch are discarded) or ``STOP``, and says
whether a VOPD instruction at the PC is wanted as its second half next (a bit per wave, carried
with the window).

Requests go out one a cycle, round robin over the waves with room in their ring, and
responses (in request order per wave) are written a row of four dwords a cycle straight from
the response, which is taken with its last row: a line takes ``fetch_bytes / 16`` cycles (2 on
``fpga``, 4 on ``default``).

A wave has one window between selection and issue at a time, so it issues at most one
instruction every four cycles (select, bank read, two decode cycles), and a SIMD one a cycle
from four waves (0.98 measured, ``tests/test_frontend.py``).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..config import DCUConfig
from ..layouts import ADDR, DecodeIn, FetchReq, FetchResp, Steer, SteerLayout, WaveStart
from .select import WaveSelect

__all__ = ["Fetch"]


class Fetch(wiring.Component):
    """Per-wave PCs and instruction buffers, one instruction window a cycle.

    Parameters
    ----------
    config : DCUConfig
        ``wave_slots``, ``wave_ids``, ``fetch_bytes``.
    lines : int
        Fetch lines buffered per wave (a power of two, at least 2).

    Attributes
    ----------
    fetch_req : Out(stream.Signature(FetchReq(config)))
    fetch_resp : In(stream.Signature(FetchResp(config)))
        The instruction cache's ports (in request order per wave).
    start : In(stream.Signature(WaveStart(config)))
        Launch a wave into a free slot; always ready.
    steer : In(stream.Signature(SteerLayout(config)))
        The issue stage's answer for a wave's last window; always ready.
    window : Out(stream.Signature(DecodeIn(wave bits)))
        Three dwords at a wave's PC, the PC, and the wave as the tag.
    active : Out(config.wave_slots)
        The waves running.
    pcs : Out(ArrayLayout(ADDR, config.wave_slots))
        Each wave's PC: its next instruction's, or the one being decoded or issued.
    """

    def __init__(self, config: DCUConfig, lines: int = 4):
        if lines < 2 or lines & (lines - 1):
            raise ValueError(f"lines must be a power of two, at least 2, got {lines}")
        self.config, self.lines = config, lines
        self.wave_bits = (config.wave_ids - 1).bit_length()
        super().__init__({
            "fetch_req": Out(stream.Signature(FetchReq(config))),
            "fetch_resp": In(stream.Signature(FetchResp(config))),
            "start": In(stream.Signature(WaveStart(config))),
            "steer": In(stream.Signature(SteerLayout(config))),
            "window": Out(stream.Signature(DecodeIn(self.wave_bits))),
            "active": Out(config.wave_slots),
            "pcs": Out(data.ArrayLayout(ADDR, config.wave_slots)),
        })

    def elaborate(self, platform):
        m = Module()
        cfg, L = self.config, self.lines
        W, lb = cfg.wave_slots, exact_log2(cfg.fetch_bytes)
        LD = cfg.fetch_bytes // 4            # dwords a line
        BEATS = LD // 4                      # bank rows a line
        ROWS = L * BEATS                     # bank rows a wave
        ring_bits = exact_log2(L * LD)       # a PC's dword position in its wave's ring: pc[2:2 + ring_bits]

        active = Signal(W)
        busy = Signal(W)
        pc = Array(Signal(ADDR, name=f"pc{w}") for w in range(W))
        req = Array(Signal(range(L + 1), name=f"req{w}") for w in range(W))
        arr = Array(Signal(range(L + 1), name=f"arr{w}") for w in range(W))
        epoch = Array(Signal(2, name=f"epoch{w}") for w in range(W))
        second = Array(Signal(name=f"second{w}") for w in range(W))    # a VOPD's second half is next
        m.d.comb += [self.active.eq(active), self.start.ready.eq(1), self.steer.ready.eq(1)]
        m.d.comb += [self.pcs[w].eq(pc[w]) for w in range(W)]

        banks = []
        for b in range(4):
            m.submodules[f"bank{b}"] = mem = memory.Memory(shape=32, depth=W * ROWS, init=[])
            banks.append((mem.read_port(), mem.write_port()))

        # ---- selection and the window read
        m.submodules.select = sel = WaveSelect(W)
        for w in range(W):
            off = pc[w][2:lb]
            m.d.comb += sel.want[w].eq(active[w] & ~busy[w] & ((arr[w] << exact_log2(LD)) >= off + 3))
        win = Signal(data.StructLayout({"valid": 1, "wave": range(max(W, 2)), "pc": ADDR, "second": 1}))
        can_take = ~win.valid | self.window.ready
        take = sel.valid & can_take
        m.d.comb += sel.take.eq(take)
        r = pc[sel.wave][2:2 + ring_bits]
        for b, (rd, _) in enumerate(banks):
            k = (b - r[:2])[:2]              # which dword of the window bank b holds
            row = ((r + k) >> 2)[:exact_log2(ROWS)]
            m.d.comb += [rd.addr.eq(sel.wave * ROWS + row), rd.en.eq(can_take)]
        with m.If(take):
            m.d.sync += [win.valid.eq(1), win.wave.eq(sel.wave), win.pc.eq(pc[sel.wave]),
                         win.second.eq(second[sel.wave])]
        with m.Elif(self.window.ready):
            m.d.sync += win.valid.eq(0)
        data_ = [rd.data for rd, _ in banks]
        rot = win.pc[2:4]
        words = [Array(data_)[(rot + k)[:2]] for k in range(3)]
        m.d.comb += [self.window.valid.eq(win.valid), self.window.payload.words.eq(Cat(*words)),
                     self.window.payload.pc.eq(win.pc), self.window.payload.tag.eq(win.wave),
                     self.window.payload.second.eq(win.second)]

        # ---- requests, one a cycle, round robin over the waves with room
        m.submodules.fetch_select = fsel = WaveSelect(W)
        for w in range(W):
            m.d.comb += fsel.want[w].eq(active[w] & (req[w] < L))
        fw = fsel.wave
        fr = self.fetch_req.payload
        m.d.comb += [self.fetch_req.valid.eq(fsel.valid), fsel.take.eq(self.fetch_req.ready),
                     fr.wave.eq(fw), fr.addr.eq(((pc[fw] >> lb) + req[fw]) << lb), fr.epoch.eq(epoch[fw])]
        req_fire = self.fetch_req.valid & self.fetch_req.ready

        # ---- responses, written a row of four dwords a cycle from the held response (taken
        # with its last row); one of a stopped wave or an old epoch is dropped at once
        rp = self.fetch_resp.payload
        beat = Signal(range(BEATS))
        wanted = self.fetch_resp.valid & active.bit_select(rp.wave, 1) & (rp.epoch == epoch[rp.wave])
        last = beat == BEATS - 1
        m.d.comb += self.fetch_resp.ready.eq(~wanted | last)
        slot = ((pc[rp.wave] >> lb) + arr[rp.wave])[:exact_log2(L)]     # the line's place in the ring
        for b, (_, wp) in enumerate(banks):
            m.d.comb += [wp.addr.eq(rp.wave * ROWS + slot * BEATS + beat), wp.en.eq(wanted),
                         wp.data.eq(rp.data.word_select(beat * 4 + b, 32))]
        with m.If(wanted):
            m.d.sync += beat.eq(beat + 1)
        with m.If(self.fetch_resp.valid & self.fetch_resp.ready):
            m.d.sync += beat.eq(0)
        done = wanted & last

        # ---- per wave: starts, the issue stage's answers, requests and arrivals
        st, sp = self.steer, self.steer.payload
        for w in range(W):
            launch = self.start.valid & (self.start.payload.wave == w)
            answer = st.valid & (sp.wave == w)
            jump = launch | (answer & (sp.steer == Steer.JUMP))
            # NEXT moves at most 12 bytes, into the next line at most: its line bit tells
            cross = answer & (sp.steer == Steer.NEXT) & (sp.pc[lb] != pc[w][lb])
            fired = req_fire & (fw == w)
            arrived = done & (rp.wave == w)
            with m.If(jump):
                m.d.sync += [req[w].eq(0), arr[w].eq(0), epoch[w].eq(epoch[w] + 1)]
            with m.Else():
                m.d.sync += [req[w].eq(req[w] - cross + fired), arr[w].eq(arr[w] - cross + arrived)]
            with m.If(launch):
                m.d.sync += [pc[w].eq(self.start.payload.pc), active[w].eq(1), busy[w].eq(0), second[w].eq(0)]
            with m.If(answer):
                m.d.sync += [pc[w].eq(sp.pc), busy[w].eq(0), second[w].eq(sp.second)]
                with m.If(sp.steer == Steer.STOP):
                    m.d.sync += active[w].eq(0)
            with m.If(take & (sel.wave == w)):
                m.d.sync += busy[w].eq(1)
        return m
