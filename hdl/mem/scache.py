"""The scalar data cache shared by the DCU's four SIMDs (docs/memory.md, "Scalar cache").

Direct-mapped 64-byte lines (``config.scalar_cache_bytes``), filled two sibling lines per
128-byte memory read (:mod:`hdl.mem.linecache`). Each accepted request takes a *slot* that
holds it until its last beat has left; a request whose lines are present completes while
older requests still wait for memory (hit under miss), so requests complete out of order,
as ``kmcnt`` allows, while the beats of one request leave back to back on its SIMD's port.

Pipeline: cycle 0 the round-robin arbiter accepts one request into a free slot and
addresses the line banks; cycle 1 (lookup) the pair of lines around the address is
compared, present lines are written into the slot's memory word and missing memory lines
are read (or joined, if already being read); a completed slot moves to its port's beat
register, which sends one dword per cycle.

A slot holds the 64 bytes a request can read, not its two lines: byte ``j`` comes from the
first line when ``j`` is at or above the request's offset in it, else from the second, so
the request's bytes are the slot rotated by the offset. A line that was missing is not
copied into the slot: the slot reads it from its miss entry's kept fill as it completes
(:class:`hdl.mem.linecache.MissTable`).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..bitops import rr_grant, tree_or
from ..config import DCUConfig
from ..isa_tables import OpId
from .linecache import (LINE, LINE_ADDR, ErrorLayout, LinePairs, MissTable, check_geometry, check_reads,
                        lowest, round_robin)
from .memport import ADDR_BITS, MemReq, MemResp
from ..layouts import SEQ, SmemReq, SmemResp

__all__ = ["ScalarCache"]


class Width(enum.Enum, shape=2):
    """What a load returns: whole dwords, or one byte / halfword extended to a dword."""
    DWORD = 0
    BYTE = 1
    HALF = 2


def _slot_layout(cfg: DCUConfig) -> data.StructLayout:
    return data.StructLayout({
        "simd": range(cfg.simds), "wave": range(cfg.wave_ids), "seq": SEQ, "sdst": 7,
        "beats": range(17), "width": Width, "signed": 1,
        "offset": 6,        # byte offset of the (aligned) address in its first line
        "odd": 1,           # the first line's address is odd (it is the upper half of a memory line)
        "addr": 64,         # the request's address, for the fault report
    })


def _merge(offset, first, second):
    """A slot's 64 bytes: byte ``j`` of ``first`` (the first line) when ``j >= offset``, else
    of ``second``."""
    from_first = (Const(2 ** LINE - 1, LINE) << offset)[:LINE]
    return Cat(*[Mux(from_first[j], first.word_select(j, 8), second.word_select(j, 8)) for j in range(LINE)])


class ScalarCache(wiring.Component):
    """Scalar data cache of the DCU: ``s_load_*`` for the four SIMDs.

    Loads of ``dwords`` dwords read from ``addr & ~3``; ``s_load_u16``/``i16`` from
    ``addr & ~1`` and ``s_load_u8``/``i8`` from ``addr``, zero- or sign-extended to a dword
    (the model's ``build_smem``). A load may straddle two lines. An address outside the
    memory (a faulting fill, or one above the 48-bit port) answers zeros and latches
    ``error``.

    Parameters
    ----------
    config : DCUConfig
        Size (``scalar_cache_bytes``, ``scalar_cache_line`` = 64), SIMDs, wave slots and
        ``scalar_hit_latency``: a hit's first beat leaves ``max(3, scalar_hit_latency)``
        cycles after its request is accepted (``max(4, scalar_hit_latency)`` with
        ``scalar_cache_stage``).
    slots : int, optional
        Requests in the cache at once (waiting out the hit latency, waiting for memory or
        sending); by default ``max(8, scalar_hit_latency + 4)``, enough to accept one
        request per cycle.
    mshrs : int
        Memory reads in flight at once.

    Members
    -------
    req : In(stream.Signature(SmemReq(config))) array of ``config.simds``
        Requests, one port per SIMD; ``op`` selects byte/halfword loads and the alignment,
        ``dwords`` the number of dwords of a dword load.
    resp : Out(stream.Signature(SmemResp(config))) array of ``config.simds``
        One beat per dword (``sdst`` = first + k), ``last`` on the final beat.
    mem : Out(stream.Signature(MemReq()))
        128-byte reads, tag = miss table entry.
    mem_resp : In(stream.Signature(MemResp()))
        Their responses, in any order.
    flush : In(1)
        Invalidate every line (reads in flight are delivered but not kept).
    hits, misses : Out(32)
        Requests whose every line was present at lookup / the others (counted per request).
    error : Out(ErrorLayout)
        Latched at the first fault: the requesting SIMD, wave and request address.
    """

    def __init__(self, config: DCUConfig, slots: int | None = None, mshrs: int = 4):
        self.config = config
        self._sets = check_geometry("scalar cache", config.scalar_cache_bytes, config.scalar_cache_line)
        self._slots = slots or max(8, config.scalar_hit_latency + 4)
        self._mshrs = check_reads("scalar cache", mshrs)
        P = config.simds
        super().__init__({
            "req": In(stream.Signature(SmemReq(config))).array(P),
            "resp": Out(stream.Signature(SmemResp(config))).array(P),
            "mem": Out(stream.Signature(MemReq())),
            "mem_resp": In(stream.Signature(MemResp())),
            "flush": In(1),
            "hits": Out(32), "misses": Out(32),
            "error": Out(ErrorLayout(config, 64)),
        })

    def elaborate(self, platform):
        cfg = self.config
        P, N = cfg.simds, self._slots
        stage = cfg.scalar_cache_stage
        delay = max(0, cfg.scalar_hit_latency - (3 if stage else 2))   # cycles a slot waits after acceptance
        m = Module()
        pairs = LinePairs(m, "lines", self._sets)
        misses = MissTable(m, "mshr", self._mshrs, self.mem, self.mem_resp, self.flush)
        SlotInfo = _slot_layout(cfg)

        # ---- slots ------------------------------------------------------------------------
        info = [Signal(SlotInfo, name=f"slot{i}") for i in range(N)]
        m.submodules.slot_data = slot_data = memory.Memory(shape=8 * LINE, depth=N, init=[])  # bytes of both lines
        waits0 = [Signal(range(self._mshrs), name=f"slot{i}_wait0") for i in range(N)]
        waits1 = [Signal(range(self._mshrs), name=f"slot{i}_wait1") for i in range(N)]
        wait0, wait1 = Array(waits0), Array(waits1)
        busy, looked = Signal(N), Signal(N)       # allocated; lookup done
        waiting0, waiting1 = Signal(N), Signal(N)  # the line is awaited from memory
        kept0, kept1 = Signal(N), Signal(N)        # the line is the miss entry's kept fill
        timer = [Signal(range(delay + 1), name=f"slot{i}_timer") for i in range(N)]

        def slot_info(idx, name):   # the fields of the slot ``idx`` selects
            view = Signal(SlotInfo, name=name)
            m.d.comb += view.eq(Array(Value.cast(x) for x in info)[idx])
            return view

        # ---- cycle 0: accept one request (round robin) into a free slot ---------------------
        valid = Cat(r.valid for r in self.req)
        last_port = Signal(range(P))
        port = round_robin(m, valid, last_port, "arb")
        head = Signal(SmemReq(cfg))
        for p in range(P):
            with m.If(port == p):
                m.d.comb += head.eq(self.req[p].payload)
        width, signed = Signal(Width), Signal()
        with m.Switch(head.op):
            for op, w, s in ((OpId.S_LOAD_U8, Width.BYTE, 0), (OpId.S_LOAD_I8, Width.BYTE, 1),
                             (OpId.S_LOAD_U16, Width.HALF, 0), (OpId.S_LOAD_I16, Width.HALF, 1)):
                with m.Case(op):
                    m.d.comb += [width.eq(w), signed.eq(s)]
        addr = Signal(64)
        m.d.comb += addr.eq(Mux(width == Width.BYTE, head.addr,
                                Mux(width == Width.HALF, head.addr & ~1, head.addr & ~3)))
        nbytes = Mux(width == Width.DWORD, head.dwords << 2, Mux(width == Width.HALF, 2, 1))

        slot = lowest(m, ~busy, "free_slot")
        stall = Signal()          # the lookup cannot finish this cycle
        accept = Signal()
        m.d.comb += accept.eq(valid.any() & (~busy).any() & ~stall)
        for p in range(P):
            m.d.comb += self.req[p].ready.eq(accept & (port == p))

        # lookup stage register
        s1 = Signal(data.StructLayout({"valid": 1, "slot": range(N), "line": LINE_ADDR, "succ": LINE_ADDR,
                                       "offset": 6, "straddle": 1, "bad": 1}))
        succ = Signal(LINE_ADDR)                  # the request's line + 1, registered with it
        m.d.comb += succ.eq(addr[6:ADDR_BITS] + 1)
        with m.If(~stall):
            m.d.sync += s1.valid.eq(accept)
        with m.If(accept):
            m.d.sync += [last_port.eq(port),
                         s1.slot.eq(slot), s1.line.eq(addr[6:ADDR_BITS]), s1.succ.eq(succ), s1.offset.eq(addr[:6]),
                         s1.straddle.eq(addr[:6] + nbytes > LINE), s1.bad.eq(addr[ADDR_BITS:].any())]
        # the free slot's fields are written whenever a request is offered, accepted or not
        # (``busy`` marks them taken only at ``accept``): their enables stay off ``stall``
        with m.If(valid.any() & (~busy).any()):
            for i in range(N):
                with m.If(slot == i):
                    m.d.sync += [info[i].simd.eq(port), info[i].wave.eq(head.wave),
                                 info[i].seq.eq(head.seq), info[i].sdst.eq(head.sdst),
                                 info[i].beats.eq(Mux(width == Width.DWORD, head.dwords, 1)),
                                 info[i].width.eq(width), info[i].signed.eq(signed),
                                 info[i].offset.eq(addr[:6]), info[i].odd.eq(addr[6]),
                                 info[i].addr.eq(head.addr)]
                    if delay:
                        m.d.sync += timer[i].eq(delay)

        # ---- cycle 1: lookup ----------------------------------------------------------------
        L = s1.line
        hit0, hit1, data0, data1 = pairs.lookup(m, Mux(stall, L, addr[6:ADDR_BITS]),
                                                Mux(stall, s1.succ, succ), L, s1.succ)
        blk0, blk1 = L[1:], s1.succ[1:]
        same = ~L[0]                      # both lines in one memory line
        fill_now0 = misses.fill & (misses.fill_block == blk0)
        fill_now1 = misses.fill & (misses.fill_block == blk1)
        found0, idx0 = misses.find(blk0, "find0")
        found1, idx1 = misses.find(blk1, "find1")
        have0 = hit0 | fill_now0 | s1.bad
        have1 = ~s1.straddle | hit1 | fill_now1 | s1.bad
        alloc0 = ~have0 & ~found0
        alloc1 = ~have1 & ~found1 & ~same
        m.d.comb += stall.eq(s1.valid & Mux(alloc0 & alloc1, ~misses.has[1], (alloc0 | alloc1) & ~misses.has[0]))
        go = s1.valid & ~stall
        misses.alloc(0, go & alloc0, blk0)
        misses.alloc(1, go & alloc1, blk1)

        w0 = Mux(alloc0, misses.entry[0], idx0)
        w1 = Mux(same, w0, Mux(alloc1, misses.entry[1], idx1))
        # written in every lookup cycle, the last (``go``) one counting: nothing reads them
        # before ``waiting`` or ``kept``, and their enables stay off the path through ``stall``
        with m.If(s1.valid):
            m.d.sync += [wait0[s1.slot].eq(w0), wait1[s1.slot].eq(w1)]
        with m.If(go):
            with m.If(hit0 & (~s1.straddle | hit1) & ~s1.bad):
                m.d.sync += self.hits.eq(self.hits + 1)
            with m.Else():
                m.d.sync += self.misses.eq(self.misses + 1)

        # ---- the slot's bytes: the present lines' at lookup, into the slot memory; a missing
        # line's stay in its miss entry's kept fill, which the slot reads as it completes
        take0, take1 = Signal(N), Signal(N)       # slots whose read is answered this cycle
        m.d.comb += [take0.eq(Cat(misses.fill & waiting0[i] & (waits0[i] == misses.fill_idx) for i in range(N))),
                     take1.eq(Cat(misses.fill & waiting1[i] & (waits1[i] == misses.fill_idx) for i in range(N)))]
        misses.hold([(kept0[i], waits0[i]) for i in range(N)] + [(kept1[i], waits1[i]) for i in range(N)])
        looked_up = [Signal(8 * LINE, name=f"looked_up{k}") for k in range(2)]
        # (0 when no slot reads them, as for a bad address: a compiled simulator skips them).
        # A fill's bytes when it brings the line this cycle, else the cache's: a line is never
        # both present and being read (as in hdl/mem/icache.py), and ``fill_now`` is a shorter
        # path than ``hit`` (the tag memory and its compare), which reaches 512 bits here
        with m.If(s1.valid & ~s1.bad):
            m.d.comb += [looked_up[0].eq(Mux(fill_now0, misses.half(L[0]), data0)),
                         looked_up[1].eq(Mux(fill_now1, misses.half(~L[0]), data1))]
        # written in every lookup cycle, like ``wait0``/``wait1``: the ``go`` one counts (the slot
        # is read only once looked up), and ``stall`` stays off the write enable and data
        sw = slot_data.write_port()
        m.d.comb += [sw.addr.eq(s1.slot), sw.en.eq(s1.valid)]
        with m.If(s1.valid):    # (the merges only in lookup cycles: a compiled simulator skips them)
            m.d.comb += sw.data.eq(_merge(s1.offset, looked_up[0], looked_up[1]))
        pairs.fill(m, misses.fill_install, misses.fill_block, misses.fill_data, self.flush)

        # ---- completion: one finished slot per cycle moves to its port's beat register ------
        out_valid = Signal(P)
        out_info = [Signal(SlotInfo, name=f"out{p}") for p in range(P)]
        out_beat = [Signal(range(16), name=f"out{p}_beat") for p in range(P)]
        out_data = [Signal(16 * 32, name=f"out{p}_data") for p in range(P)]
        out_word = [Signal(4, name=f"out{p}_word") for p in range(P)]   # out_data's dword of the beat
        out_last = Signal(P)    # the beat register's beat is its last: a register, as it decides
        port_free = Signal(P)   # which ports are offered to the choice of the next answer
        for p in range(P):
            r, o = self.resp[p], out_info[p]
            # the beat's dword; a byte or halfword (one beat, never straddling) is picked from
            # its dword and extended here, after the register rather than ahead of it
            word = out_data[p].word_select(out_word[p], 32)
            byte, half = word.word_select(o.offset[:2], 8), word.word_select(o.offset[1], 16)
            ext = Mux(o.width == Width.BYTE, Cat(byte, Mux(o.signed & byte[7], 0xFFFFFF, 0)),
                      Cat(half, Mux(o.signed & half[15], 0xFFFF, 0)))
            m.d.comb += [port_free[p].eq(~out_valid[p] | (r.ready & out_last[p])),
                         r.valid.eq(out_valid[p]), r.payload.wave.eq(o.wave),
                         r.payload.seq.eq(o.seq), r.payload.sdst.eq(o.sdst + out_beat[p]),
                         r.payload.data.eq(Mux(o.width == Width.DWORD, word, ext)),
                         r.payload.last.eq(out_last[p])]
            with m.If(r.valid & r.ready):
                m.d.sync += [out_beat[p].eq(out_beat[p] + 1), out_word[p].eq(out_word[p] + 1),
                             out_last[p].eq(out_beat[p] + 2 == o.beats)]
                with m.If(out_last[p]):
                    m.d.sync += out_valid[p].eq(0)

        # with ``stage``, the finished slot is chosen into ``chosen`` and its bytes formed in the
        # next cycle; a port is not offered while ``chosen`` holds a slot for it, so the chosen
        # slot always finds its port free
        Chosen = data.StructLayout({"valid": 1, "slot": range(N), "info": SlotInfo, "wait0": range(self._mshrs),
                                    "wait1": range(self._mshrs), "kept0": 1, "kept1": 1})
        chosen = Signal(Chosen)
        if stage:
            chosen_port = Signal(P)    # ``chosen``'s SIMD one-hot, 0 when it is empty
            offered = port_free & ~chosen_port
        else:
            offered = port_free
        ready_at = Cat(busy[i] & looked[i] & ~waiting0[i] & ~waiting1[i]
                       & ((timer[i] == 0) if delay else 1)
                       & offered.bit_select(info[i].simd, 1) for i in range(N))
        done = Signal(N)
        m.d.comb += done.eq(ready_at)
        # the chosen slot's fields through AND-OR selects of the round robin's one-hot grant
        # rather than through its encoded index: the choice is on the path from ``chosen``
        # back to itself
        last_done = Signal(range(N))
        grant, pick = rr_grant(m, done, last_done, "done")

        def granted(values):
            return tree_or([Mux(grant[i], Value.cast(v), 0) for i, v in enumerate(values)])
        picked = Signal(Chosen)
        m.d.comb += [picked.valid.eq(done.any()), picked.slot.eq(pick), picked.wait0.eq(granted(waits0)),
                     picked.wait1.eq(granted(waits1)), picked.kept0.eq((kept0 & grant).any()),
                     picked.kept1.eq((kept1 & grant).any()), picked.info.eq(granted(info))]
        if stage:
            m.d.sync += [chosen.eq(picked),
                         chosen_port.eq(granted([(Const(1, P) << x.simd)[:P] for x in info]))]
        else:
            m.d.comb += chosen.eq(picked)
        cinfo = chosen.info
        sr = slot_data.read_port(domain="comb")
        m.d.comb += sr.addr.eq(chosen.slot)
        fill0 = misses.kept_line(chosen.wait0, cinfo.odd, chosen.kept0, "kept_first")
        fill1 = misses.kept_line(chosen.wait1, ~cinfo.odd, chosen.kept1, "kept_second")
        bytes_ = Signal(8 * LINE)
        # gated by a register, not by ``done``: dcu/vpost/vsink.py would move ``done`` and ``pick``
        # into a branch on ``done`` (a combinational loop to Verilator)
        with m.If(chosen.valid if stage else busy.any()):
            m.d.comb += bytes_.eq(_merge(cinfo.offset, Mux(chosen.kept0, fill0, sr.data),
                                         Mux(chosen.kept1, fill1, sr.data)))
        # the bytes go to the beat register as they are, its beats reading dwords from the one
        # at ``offset`` on (wrapping: the merge put the second line's bytes below ``offset``)
        with m.If(done.any()):
            m.d.sync += last_done.eq(pick)
        with m.If(chosen.valid):
            for p in range(P):
                with m.If(cinfo.simd == p):
                    m.d.sync += [out_valid[p].eq(1), out_info[p].eq(cinfo), out_beat[p].eq(0),
                                 out_last[p].eq(cinfo.beats == 1),
                                 out_word[p].eq(cinfo.offset[2:]), out_data[p].eq(bytes_)]

        # ---- slot bookkeeping ---------------------------------------------------------------
        alloc = Signal(N)
        freed = Signal(N)
        with m.If(accept):
            m.d.comb += alloc.bit_select(slot, 1).eq(1)
        m.d.comb += freed.eq(grant)
        lookup = Signal(N)
        with m.If(go):
            m.d.comb += lookup.bit_select(s1.slot, 1).eq(1)
        m.d.sync += [busy.eq((busy | alloc) & ~freed), looked.eq((looked | lookup) & ~freed),
                     waiting0.eq((waiting0 & ~take0) | Mux(~have0, lookup, 0)),
                     waiting1.eq((waiting1 & ~take1) | Mux(~have1, lookup, 0)),
                     kept0.eq((kept0 & ~freed) | Mux(~have0, lookup, 0)),
                     kept1.eq((kept1 & ~freed) | Mux(~have1, lookup, 0))]
        if delay:
            for i in range(N):
                with m.If(~alloc[i] & (timer[i] != 0)):
                    m.d.sync += timer[i].eq(timer[i] - 1)

        # ---- error: the first fault ---------------------------------------------------------
        bad_info = slot_info(s1.slot, "bad_info")
        fault_info = slot_info(lowest(m, take0 | take1, "fault_slot"), "fault_info")
        err = self.error
        with m.If(~err.valid):
            # (a bad address never stalls the lookup: ``s1.valid`` is its ``go``)
            for cond, who in ((s1.valid & s1.bad, bad_info), (misses.fill_fault & (take0 | take1).any(), fault_info)):
                with m.If(cond):
                    m.d.sync += [err.valid.eq(1), err.simd.eq(who.simd), err.wave.eq(who.wave),
                                 err.addr.eq(who.addr)]
        return m
