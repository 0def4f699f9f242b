"""The scalar data cache shared by the DCU's four SIMDs (docs/memory.md, "Scalar cache").

Built as block RAM with a little control around it: direct-mapped 64-byte lines whose bytes
sit in one ``Memory`` of ``scalar_cache_word``-bit words, with a tag ``Memory`` of 128-byte
memory lines (a read fills both cache lines it holds) and a valid register that a flush clears
at once. A fill is written one word per cycle, so the only wide path is the choice of a
1,024-bit response's word. Each SIMD's answer reads its dwords from the line memory as its
beats leave, through a read port of its own: no line is copied outside the line memory.

Each accepted request takes a *slot* that holds it until its answer starts; a request whose
lines are present answers while older requests still wait for memory (hit under miss), so
requests complete out of order, as ``kmcnt`` allows, while the beats of one request leave
back to back on its SIMD's port.

Pipeline: cycle 0 takes a slot to look up again, else accepts one request (round robin) into
a free slot, and addresses the tag memory; cycle 1 (lookup) compares the tags of the
request's memory line and the next one, and missing memory lines are read (or joined, if
already being read). A slot whose lines are present is chosen for its SIMD's port (round
robin over the slots) and its beats read the line memory, one dword per cycle.

A fill does not overwrite the lines of an answer: it waits (``mem_resp.ready`` low) while a
port sends from its memory line's slot or a ready request will, and a lookup of that slot
meanwhile is repeated. A request that is not ready and reads a line it evicts is looked up
again.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..bitops import rr_grant, tree_or
from ..config import DCUConfig
from ..isa_tables import OpId
from ..layouts import SEQ, SmemReq, SmemResp
from .linecache import BLOCK_ADDR, ErrorLayout, MissTable, check_geometry, check_reads, lowest, round_robin
from .memport import ADDR_BITS, LINE_BYTES, MemReq, MemResp

__all__ = ["ScalarCache"]


class Width(enum.Enum, shape=2):
    """What a load returns: whole dwords, or one byte / halfword extended to a dword."""
    DWORD = 0
    BYTE = 1
    HALF = 2


def _info_layout(cfg: DCUConfig, dword_bits: int) -> data.StructLayout:
    """A request's fields that only its answer reads (a LUT RAM of a word per slot)."""
    return data.StructLayout({
        "wave": range(cfg.wave_ids), "seq": SEQ, "sdst": 7, "beats": range(17), "width": Width,
        "signed": 1,
        "byte": 2,              # a byte or halfword's offset in its dword
        "dword": dword_bits,    # its first dword in the line memory
        "two": 1,               # it reads the next memory line too
    })


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
        ``scalar_cache_stage``). ``scalar_cache_slots``: requests in the cache at once
        (waiting out the hit latency, waiting for memory or for their port; 0: ``max(8,
        scalar_hit_latency + 4)``, enough to accept one request per cycle);
        ``scalar_cache_reads``: memory reads in flight at once; ``scalar_cache_word``: the
        bits of a line-memory word, which a fill writes one per cycle.

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
        Their responses, in any order; each is held (``ready`` low) while its words are
        written, one per cycle, and before that while an answer reads the slot it fills.
    flush : In(1)
        Invalidate every line (reads in flight answer their requests but are not kept).
    hits, misses : Out(32)
        Requests whose every line was present at lookup / the others (counted per request).
    error : Out(ErrorLayout)
        Latched at the first fault: the requesting SIMD, wave and request address.
    """

    def __init__(self, config: DCUConfig):
        self.config = config
        self._sets = check_geometry("scalar cache", config.scalar_cache_bytes, config.scalar_cache_line)
        self._slots = config.scalar_cache_slots or max(8, config.scalar_hit_latency + 4)
        self._mshrs = check_reads("scalar cache", config.scalar_cache_reads)
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
        P, N, M = cfg.simds, self._slots, self._mshrs
        stage = cfg.scalar_cache_stage
        delay = max(0, cfg.scalar_hit_latency - (3 if stage else 2))   # cycles a slot waits after acceptance
        ib = exact_log2(self._sets // 2)          # memory-line slot index bits
        db = 5 + ib                               # dword index bits in the line memory
        word = cfg.scalar_cache_word              # bits of a line-memory word
        fill_beats = 8 * LINE_BYTES // word       # cycles a fill takes to write a memory line
        wb = exact_log2(word // 32)               # dword index bits within a word
        m = Module()
        Info = _info_layout(cfg, db)
        Who = data.StructLayout({"wave": range(cfg.wave_ids), "addr": 64})

        # ---- memories -----------------------------------------------------------------------
        # a word read in the cycle it is written is never used (a fill waits while a port reads
        # its slot, and no answer from it starts while it is written): block RAM need not order
        # them (``no_rw_check``, as in hdl/mem/icache.py)
        lines = memory.Memory(shape=word, depth=self._sets * 512 // word, init=[], attrs={"no_rw_check": 1})
        tags = memory.Memory(shape=BLOCK_ADDR - ib, depth=1 << ib, init=[])
        info_mem = memory.Memory(shape=Info, depth=N, init=[])
        who_mem = memory.Memory(shape=Who, depth=N, init=[])
        m.submodules.lines, m.submodules.tags = lines, tags
        m.submodules.info, m.submodules.who = info_mem, who_mem
        valid = Signal(1 << ib)                   # per memory-line slot
        reads = MissTable(m, M, self.mem, self.mem_resp, self.flush)

        # ---- slots: the fields the control compares, in registers ---------------------------
        busy, looked, again = Signal(N), Signal(N), Signal(N)   # allocated; first lookup done; to look up again
        waiting0, waiting1 = Signal(N), Signal(N)   # the memory line (and the next) awaited from memory
        fault = Signal(N)                           # answers zeros
        two = Signal(N)                             # the request reads the next memory line too
        waits0 = [Signal(range(M), name=f"slot{i}_wait0") for i in range(N)]
        waits1 = [Signal(range(M), name=f"slot{i}_wait1") for i in range(N)]
        simd = [Signal(range(P), name=f"slot{i}_simd") for i in range(N)]
        set0 = [Signal(ib, name=f"slot{i}_set") for i in range(N)]    # its memory line's slot
        timer = [Signal(range(delay + 1), name=f"slot{i}_timer") for i in range(N)]

        # ---- cycle 0: a slot to look up again, else a new request (round robin) -------------
        s1 = Signal(data.StructLayout({"valid": 1, "again": 1, "slot": range(N), "block": BLOCK_ADDR,
                                       "succ": BLOCK_ADDR, "two": 1, "bad": 1}))
        in_s1 = Mux(s1.valid, Const(1, N) << s1.slot, 0)[:N]
        relook = Signal(N)
        m.d.comb += relook.eq(busy & again & ~waiting0 & ~waiting1 & ~in_s1)
        relooking = relook.any()
        rslot = lowest(m, relook, "relook_slot")
        who_rd = who_mem.read_port(domain="comb")
        m.d.comb += who_rd.addr.eq(rslot)

        req_valid = Cat(r.valid for r in self.req)
        last_port = Signal(range(P))
        port = round_robin(m, req_valid, last_port, "arb")
        head = Signal(SmemReq(cfg))
        # an AND-OR by the decoded index: fewer LUTs than a tree of 2:1 multiplexers here
        m.d.comb += head.eq(tree_or([Mux(port == p, Value.cast(r.payload), 0) for p, r in enumerate(self.req)]))
        width, signed = Signal(Width), Signal()
        with m.Switch(head.op):
            for op, w, s in ((OpId.S_LOAD_U8, Width.BYTE, 0), (OpId.S_LOAD_I8, Width.BYTE, 1),
                             (OpId.S_LOAD_U16, Width.HALF, 0), (OpId.S_LOAD_I16, Width.HALF, 1)):
                with m.Case(op):
                    m.d.comb += [width.eq(w), signed.eq(s)]
        addr = Signal(64)
        m.d.comb += addr.eq(Mux(width == Width.BYTE, head.addr,
                                Mux(width == Width.HALF, head.addr & ~1, head.addr & ~3)))
        new_two = (width == Width.DWORD) & (addr[2:7] + head.dwords > 32)

        slot = lowest(m, ~busy, "free_slot")
        accept = Signal()
        m.d.comb += accept.eq(req_valid.any() & (~busy).any() & ~relooking)
        for p in range(P):
            m.d.comb += self.req[p].ready.eq(accept & (port == p))
        iw, ww = info_mem.write_port(), who_mem.write_port()
        m.d.comb += [iw.addr.eq(slot), iw.en.eq(accept),
                     iw.data.wave.eq(head.wave), iw.data.seq.eq(head.seq), iw.data.sdst.eq(head.sdst),
                     iw.data.beats.eq(Mux(width == Width.DWORD, head.dwords, 1)),
                     iw.data.width.eq(width), iw.data.signed.eq(signed), iw.data.byte.eq(addr[:2]),
                     iw.data.dword.eq(addr[2:2 + db]), iw.data.two.eq(new_two),
                     ww.addr.eq(slot), ww.en.eq(accept), ww.data.wave.eq(head.wave), ww.data.addr.eq(head.addr)]
        alloc = Signal(N)
        with m.If(accept):
            m.d.comb += alloc.bit_select(slot, 1).eq(1)
            m.d.sync += last_port.eq(port)
            for i in range(N):
                with m.If(slot == i):
                    m.d.sync += [simd[i].eq(port), set0[i].eq(addr[7:7 + ib]), two[i].eq(new_two)]
                    if delay:
                        m.d.sync += timer[i].eq(delay)

        block = Signal(BLOCK_ADDR)
        m.d.comb += block.eq(Mux(relooking, who_rd.data.addr[7:ADDR_BITS], addr[7:ADDR_BITS]))
        tag_rd, tag_rd1 = tags.read_port(), tags.read_port()
        m.d.comb += [tag_rd.addr.eq(block[:ib]), tag_rd1.addr.eq(block[:ib] + 1)]
        m.d.sync += [s1.valid.eq(relooking | accept), s1.again.eq(relooking),
                     s1.slot.eq(Mux(relooking, rslot, slot)), s1.block.eq(block), s1.succ.eq(block + 1),
                     s1.two.eq(Mux(relooking, two.bit_select(rslot, 1), new_two)),
                     s1.bad.eq(~relooking & addr[ADDR_BITS:].any())]

        # ---- the fill on the port (its words are written below) --------------------------------
        resp = self.mem_resp
        fset = reads.fill_block[:ib]
        fprev = Signal(ib)                       # a slot whose next memory line is the fill's
        m.d.comb += fprev.eq(fset - 1)
        beat = Signal(range(fill_beats))
        held = Signal()                          # an answer reads ``fset``: the fill waits
        ok = resp.valid & ~resp.payload.fault
        pending = ok & (beat == 0)               # a fill that has not started
        writing = ok & ((beat != 0) | ~held)
        fill_last = Signal(name="mshr_last")    # the fill's last word is written
        m.d.comb += fill_last.eq(writing & (beat == fill_beats - 1))
        complete = fill_last | (resp.valid & resp.payload.fault)
        reads.free(complete, reads.fill_idx)

        # ---- cycle 1: lookup of the memory line and, for a load that crosses it, the next -----
        hit0 = valid.bit_select(s1.block[:ib], 1) & (tag_rd.data == s1.block[ib:])
        hit1 = valid.bit_select(s1.succ[:ib], 1) & (tag_rd1.data == s1.succ[ib:])
        found0, idx0 = reads.find(s1.block, "find0")
        found1, idx1 = reads.find(s1.succ, "find1")
        need0 = ~s1.bad & ~hit0
        need1 = ~s1.bad & s1.two & ~hit1
        alloc0, alloc1 = need0 & ~found0, need1 & ~found1
        wait0 = Mux(alloc0, reads.entry, idx0)
        wait1 = Mux(alloc1, reads.entry, idx1)
        # a read joined in the cycle its fill ends is done: the request does not wait for it
        ends0 = need0 & found0 & complete & (idx0 == reads.fill_idx)
        ends1 = need1 & found1 & complete & (idx1 == reads.fill_idx)
        # looked up again: a request that reads the slot of a fill waiting to start (so that no
        # new answer from that slot holds the fill up), one that finds no free entry, and one
        # that needs two reads (one is allocated per cycle: it joins the first when looked up
        # again, two cycles later)
        blocked = ~s1.bad & pending & ((s1.block[:ib] == fset) | (s1.two & (s1.succ[:ib] == fset)))
        room = ~blocked & (~(alloc0 | alloc1) | reads.has)
        reads.alloc(s1.valid & room & (alloc0 | alloc1), Mux(alloc0, s1.block, s1.succ))
        room = room & ~(alloc0 & alloc1)
        with m.If(s1.valid & ~s1.again):
            with m.If(~s1.bad & hit0 & (~s1.two | hit1)):
                m.d.sync += self.hits.eq(self.hits + 1)
            with m.Else():
                m.d.sync += self.misses.eq(self.misses + 1)
        looked_up, retry = Signal(N), Signal(N)
        with m.If(s1.valid):
            with m.If(room):
                m.d.comb += looked_up.bit_select(s1.slot, 1).eq(1)
            with m.Else():
                m.d.comb += retry.bit_select(s1.slot, 1).eq(1)
            m.d.sync += [Array(waits0)[s1.slot].eq(wait0), Array(waits1)[s1.slot].eq(wait1)]
        ended_faulted = Mux(resp.payload.fault & (ends0 | ends1), looked_up, 0)

        # ---- fills: one word per cycle, once no port sends from the slot ----------------------
        first = writing & (beat == 0)
        m.d.comb += resp.ready.eq(complete)
        with m.If(writing):
            m.d.sync += beat.eq(Mux(fill_last, 0, beat + 1))
        lw, tw = lines.write_port(), tags.write_port()
        words = [resp.payload.data.word_select(k, word) for k in range(fill_beats)]
        m.d.comb += [lw.addr.eq(Cat(beat, fset)), lw.en.eq(writing), lw.data.eq(Array(words)[beat]),
                     tw.addr.eq(fset), tw.en.eq(first), tw.data.eq(reads.fill_block[ib:])]
        keep = ~reads.noinstall.bit_select(reads.fill_idx, 1)
        cleared = Mux(first, Const(1, len(valid)) << fset, 0)
        installed = Mux(fill_last & keep, Const(1, len(valid)) << fset, 0)
        with m.If(self.flush):
            m.d.sync += valid.eq(0)
        with m.Else():
            m.d.sync += valid.eq((valid & ~cleared) | installed)

        # which slots read the fill's slot: a ready one holds the fill up (``held``); the others
        # that do not wait for it are looked up again when it starts (it evicts their lines)
        touches, evicts, woken0, woken1 = Signal(N), Signal(N), Signal(N), Signal(N)
        for i in range(N):
            for_it0 = waiting0[i] & (waits0[i] == reads.fill_idx)
            for_it1 = waiting1[i] & (waits1[i] == reads.fill_idx)
            on0, on1 = set0[i] == fset, two[i] & (set0[i] == fprev)
            m.d.comb += [touches[i].eq(~fault[i] & (on0 | on1)),
                         evicts[i].eq(busy[i] & ~fault[i] & ((on0 & ~for_it0) | (on1 & ~for_it1))),
                         woken0[i].eq(complete & for_it0), woken1[i].eq(complete & for_it1)]
        faulted = Mux(resp.payload.fault, woken0 | woken1, 0)

        # ---- choice: one slot whose lines are present, for a free port ------------------------
        sv = Signal(P)                           # a port is sending
        s_last = Signal(P)                       # its beat is the request's last
        port_free = Signal(P)
        m.d.comb += port_free.eq(Cat(~sv[p] | (self.resp[p].ready & s_last[p]) for p in range(P)))
        Chosen = data.StructLayout({"valid": 1, "slot": range(N), "simd": range(P), "fault": 1})
        chosen = Signal(Chosen)
        if stage:
            chosen_port = Signal(P)              # ``chosen``'s SIMD one-hot, 0 when it is empty
            offered = port_free & ~chosen_port
        else:
            offered = port_free
        ready = Signal(N)
        m.d.comb += ready.eq(Cat(busy[i] & looked[i] & ~again[i] & ~waiting0[i] & ~waiting1[i]
                                 & ((timer[i] == 0) if delay else 1) & offered.bit_select(simd[i], 1)
                                 for i in range(N)))
        last_done = Signal(range(N))
        grant, pick = rr_grant(m, ready, last_done, "done")
        picked = Signal(Chosen)
        m.d.comb += [picked.valid.eq(ready.any()), picked.slot.eq(pick), picked.fault.eq((fault & grant).any()),
                     picked.simd.eq(tree_or([Mux(grant[i], simd[i], 0) for i in range(N)]))]
        with m.If(ready.any()):
            m.d.sync += last_done.eq(pick)
        if stage:
            m.d.sync += [chosen.eq(picked), chosen_port.eq(Mux(picked.valid, Const(1, P) << picked.simd, 0))]
        else:
            m.d.comb += chosen.eq(picked)
        info_rd = info_mem.read_port(domain="comb")
        m.d.comb += info_rd.addr.eq(chosen.slot)
        ci = info_rd.data

        # ---- the ports: one dword per cycle from the line memory ------------------------------
        SenderInfo = data.StructLayout({"wave": range(cfg.wave_ids), "seq": SEQ, "sdst": 7, "width": Width,
                                        "signed": 1, "byte": 2, "fault": 1, "set": ib, "two": 1})
        conflicts = []
        if stage:
            conflicts.append(chosen.valid & ~chosen.fault
                             & ((ci.dword[5:] == fset) | (ci.two & (ci.dword[5:] == fprev))))
        for p in range(P):
            r = self.resp[p]
            o = Signal(SenderInfo, name=f"out{p}")
            cur = Signal(db, name=f"out{p}_dword")       # the dword of the beat on the port
            left = Signal(range(16), name=f"out{p}_left")  # beats after it
            load = chosen.valid & (chosen.simd == p)
            take = r.valid & r.ready
            rd = lines.read_port()
            # the memory answers the previous cycle's address: address the next beat's word,
            # which is the port's dword in the next cycle
            nxt = Signal(db, name=f"out{p}_next")
            m.d.comb += [nxt.eq(Mux(load, ci.dword, cur + take)), rd.addr.eq(nxt[wb:])]
            m.d.sync += cur.eq(nxt)
            conflicts.append(sv[p] & ~o.fault & ((o.set == fset) | (o.two & (o.set == fprev))))
            dword = self._beat_data(rd.data, cur[:wb], o)
            m.d.comb += [r.valid.eq(sv[p]), r.payload.wave.eq(o.wave), r.payload.seq.eq(o.seq),
                         r.payload.sdst.eq(o.sdst), r.payload.last.eq(s_last[p]),
                         r.payload.data.eq(Mux(o.fault, 0, dword))]
            with m.If(take):
                m.d.sync += [o.sdst.eq(o.sdst + 1), left.eq(left - 1), s_last[p].eq(left == 1)]
                with m.If(s_last[p]):
                    m.d.sync += sv[p].eq(0)
            with m.If(load):
                m.d.sync += [sv[p].eq(1), left.eq(ci.beats - 1), s_last[p].eq(ci.beats == 1),
                             o.wave.eq(ci.wave), o.seq.eq(ci.seq), o.sdst.eq(ci.sdst),
                             o.width.eq(ci.width), o.signed.eq(ci.signed), o.byte.eq(ci.byte),
                             o.fault.eq(chosen.fault), o.set.eq(ci.dword[5:]), o.two.eq(ci.two)]
        # the fill also waits for the slots that are to answer from ``fset`` (their lookup is done)
        readyish = busy & looked & ~again & ~waiting0 & ~waiting1
        m.d.comb += held.eq(Cat(*conflicts).any() | (readyish & touches).any())

        # ---- slot bookkeeping ---------------------------------------------------------------
        freed = grant
        m.d.sync += [busy.eq((busy | alloc) & ~freed), looked.eq((looked & ~alloc) | looked_up),
                     again.eq((again & ~alloc & ~looked_up) | retry | Mux(first, evicts, 0)),
                     waiting0.eq((waiting0 & ~alloc & ~woken0) | Mux(need0 & ~ends0, looked_up, 0)),
                     waiting1.eq((waiting1 & ~alloc & ~woken1) | Mux(need1 & ~ends1, looked_up, 0)),
                     fault.eq((fault & ~alloc) | faulted | ended_faulted | Mux(s1.bad, looked_up, 0))]
        if delay:
            for i in range(N):
                with m.If(~alloc[i] & (timer[i] != 0)):
                    m.d.sync += timer[i].eq(timer[i] - 1)

        # ---- error: the first fault ---------------------------------------------------------
        err = self.error
        err_slot = Signal(range(N))
        m.d.comb += err_slot.eq(Mux(faulted.any(), lowest(m, faulted, "fault_slot"), s1.slot))
        err_rd = who_mem.read_port(domain="comb")
        m.d.comb += err_rd.addr.eq(err_slot)
        with m.If(~err.valid & ((s1.valid & s1.bad) | faulted.any())):
            m.d.sync += [err.valid.eq(1), err.simd.eq(Array(simd)[err_slot]), err.wave.eq(err_rd.data.wave),
                         err.addr.eq(err_rd.data.addr)]
        return m

    @staticmethod
    def _beat_data(word, odd, o) -> Value:
        """A beat's dword from its line-memory ``word`` (``odd``: which dword of a 64-bit word;
        no bits for a 32-bit one), a byte or halfword extended. Each result byte selects among
        the word's bytes it can come from (``o.byte`` is 0 for a dword and even for a
        halfword), not a dword and then a byte."""
        lane = Cat(o.byte, odd)                             # the word's byte in result byte 0
        b0 = word.word_select(lane, 8)
        b1 = word.word_select(lane[1:], 16)[8:]             # lane + 1 unless a byte load
        sign = o.signed & Mux(o.width == Width.BYTE, b0[7], b1[7])
        ext = sign.replicate(8)
        dword = word.word_select(odd, 32) if len(odd) else word
        return Cat(b0, Mux(o.width == Width.BYTE, ext, b1),
                   Mux(o.width == Width.DWORD, dword[16:], ext.replicate(2)))
