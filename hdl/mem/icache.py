"""The instruction cache shared by the DCU's four SIMDs (docs/memory.md, "Instruction cache").

Built as block RAM with a little control around it: direct-mapped 64-byte lines whose bytes
sit in one ``Memory`` of ``config.fetch_bytes`` words (one word per fetch), with a tag
``Memory`` of 128-byte memory lines (a read fills both cache lines it holds) and a valid
register that a flush clears at once. A fill is written one word per cycle, so the only
wide path is the choice of a 1,024-bit response's word; next-line prefetch reads the
following memory line when a fetch of an odd line finds it absent.

Pipeline: cycle 0 picks one fetch (a port's head to look up again first, else a new fetch,
round robin) and addresses the memories; cycle 1 (lookup) compares the tags, and a fetch at
the head of its port's queue that hits is copied into the port's answer register, which
answers in cycle 2. A fetch that cannot answer at its lookup (a miss, or a fetch behind an
unanswered one) keeps its place in the queue and is looked up again when it reaches the head
and its line has been installed: so a hit answers 2 cycles after it is accepted, and the
cache never holds a copy of a line outside the line memory.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..config import ConfigError, DCUConfig
from ..bitops import mux_tree
from ..layouts import FetchReq, FetchResp
from .linecache import BLOCK_ADDR, ErrorLayout, MissTable, check_geometry, check_reads, round_robin
from .memport import ADDR_BITS, LINE_BYTES, MemReq, MemResp

__all__ = ["ICache"]

#: Bits of a memory-line address the miss table compares (an 8 MiB window). A fetch that
#: matches a read of another line only waits for it and is looked up again: the tags, not
#: the miss table, decide what is present.
FIND_BITS = 16


class ICache(wiring.Component):
    """Instruction cache of the DCU: fetches of ``config.fetch_bytes`` for the four SIMDs.

    Parameters
    ----------
    config : DCUConfig
        Size (``icache_bytes``, ``icache_line`` = 64), fetch size, SIMDs and wave slots.
    depth : int
        Fetches queued per port (a power of two, at least 2): accepted and not yet taken
        from the port's answer.
    mshrs : int
        Memory reads (demand and prefetch) in flight at once.

    Members
    -------
    req : In(stream.Signature(FetchReq(config))) array of ``config.simds``
        Fetches of ``config.fetch_bytes`` (the address's bits below that are ignored), one
        port per SIMD.
    resp : Out(stream.Signature(FetchResp(config))) array of ``config.simds``
        The fetched bytes, with the request's ``wave``, ``epoch`` and ``target``; in request
        order per port.
    mem : Out(stream.Signature(MemReq()))
        128-byte reads, tag = miss entry.
    mem_resp : In(stream.Signature(MemResp()))
        Their responses, in any order; each is held (``ready`` low) while its words are
        written, one per cycle.
    flush : In(1)
        Invalidate every line (reads in flight are delivered but not installed).
    hits, misses : Out(32)
        Fetches whose line was present at their first lookup / the others.
    prefetches : Out(32)
        Memory reads issued by next-line prefetch.
    error : Out(ErrorLayout)
        Latched at the first demand fetch answered from a read that faulted (zeros): SIMD,
        wave and the line's address. A prefetch, or a SIMD's speculative ``target`` fetch,
        that faults raises nothing (the ``target`` fetch still answers zeros).
    """

    def __init__(self, config: DCUConfig, depth: int = 4, mshrs: int = 4):
        if depth < 2 or depth & (depth - 1):
            raise ConfigError(f"icache depth must be a power of two >= 2, got {depth}")
        self.config = config
        self._sets = check_geometry("instruction cache", config.icache_bytes, config.icache_line)
        self._depth, self._mshrs = depth, check_reads("instruction cache", mshrs)
        P = config.simds
        super().__init__({
            "req": In(stream.Signature(FetchReq(config))).array(P),
            "resp": Out(stream.Signature(FetchResp(config))).array(P),
            "mem": Out(stream.Signature(MemReq())),
            "mem_resp": In(stream.Signature(MemResp())),
            "flush": In(1),
            "hits": Out(32), "misses": Out(32), "prefetches": Out(32),
            "error": Out(ErrorLayout(config, ADDR_BITS)),
        })

    def elaborate(self, platform):
        cfg = self.config
        P, Q, M = cfg.simds, self._depth, self._mshrs
        qb, lb = exact_log2(Q), exact_log2(cfg.fetch_bytes)
        beats = LINE_BYTES // cfg.fetch_bytes          # words of one memory line
        ib = exact_log2(self._sets // 2)               # memory-line slot index bits
        wb = exact_log2(beats)
        m = Module()

        # a fetch as the cache keeps it: ``word`` is its address above the fetch size, so
        # ``word[:wb + ib]`` is its word in the line memory and ``word[wb:]`` its memory line
        Fetch = data.StructLayout({"wave": range(cfg.wave_ids), "epoch": 2, "target": 1,
                                   "word": ADDR_BITS - lb})
        Tag = data.StructLayout({"tag": BLOCK_ADDR - ib, "fault": 1})
        # a word read in the cycle it is written is never used (its line is not valid from
        # its first word's write until after its last): so block RAM need not order a read
        # against a write to the same word. Yosys takes that from ``no_rw_check`` when it
        # merges a register into an asynchronous read port (for a synchronous port it would
        # add a register and a multiplexer per bit to return the old word)
        lines = memory.Memory(shape=8 * cfg.fetch_bytes, depth=beats << ib, init=[],
                              attrs={"no_rw_check": 1})
        tags = memory.Memory(shape=Tag, depth=1 << ib, init=[])
        queue = memory.Memory(shape=Fetch, depth=P * Q, init=[])   # entry Cat(slot, port)
        m.submodules.lines, m.submodules.tags, m.submodules.queue = lines, tags, queue
        line_rd, tag_rd, tag_rd_next = lines.read_port(domain="comb"), tags.read_port(), tags.read_port()
        line_data = Signal(8 * cfg.fetch_bytes, reset_less=True)   # the line memory's registered output
        m.d.sync += line_data.eq(line_rd.data)
        queue_rd = queue.read_port(domain="comb")
        valid = Signal(1 << ib)                        # per memory-line slot
        fill = MissTable(m, M, self.mem, self.mem_resp, self.flush, find_bits=FIND_BITS)
        wake = Signal(M, name="mshr_wake")   # an entry's last word is written

        # ---- per-port state --------------------------------------------------------------
        count = [Signal(range(Q + 1), name=f"count{p}") for p in range(P)]    # not yet taken
        unloaded = [Signal(range(Q + 1), name=f"unloaded{p}") for p in range(P)]  # not yet answered
        head = [Signal(qb, name=f"head{p}") for p in range(P)]      # oldest not answered
        tail = [Signal(qb, name=f"tail{p}") for p in range(P)]
        waits = [Signal(M, name=f"wait{p}") for p in range(P)]       # reads the head awaits
        blocked = [Signal(name=f"blocked{p}") for p in range(P)]    # head hit, answer was full
        popped = [r.valid & r.ready for r in self.resp]

        # ---- cycle 0: a head to look up again, else a new fetch ---------------------------
        s1 = Signal(data.StructLayout({"valid": 1, "again": 1, "port": range(P), "slot": qb,
                                       "fetch": Fetch}))
        # a head in the lookup now is assumed answered there: the entry after it may go next
        s1_head = [s1.valid & (s1.port == p) & (s1.slot == head[p]) for p in range(P)]
        again_slot = [(head[p] + s1_head[p])[:qb] for p in range(P)]
        again_ok = Cat(~waits[p].any() & ~blocked[p] & (unloaded[p] > s1_head[p]) for p in range(P))
        last_again, last_port = Signal(range(P)), Signal(range(P))
        again_port = round_robin(m, again_ok, last_again, "again")
        new_ok = Cat(self.req[p].valid & (count[p] != Q) for p in range(P))
        new_port = round_robin(m, new_ok, last_port, "arb")
        again = again_ok.any()
        accept = new_ok.any() & ~again
        for p in range(P):
            m.d.comb += self.req[p].ready.eq(accept & (new_port == p))

        s0 = Signal(Fetch)
        s0_port, s0_slot = Signal(range(P)), Signal(qb)
        m.d.comb += queue_rd.addr.eq(Cat(Array(again_slot)[again_port], again_port))
        with m.If(again):
            m.d.comb += [s0.eq(queue_rd.data), s0_port.eq(again_port),
                         s0_slot.eq(Array(again_slot)[again_port])]
            m.d.sync += last_again.eq(again_port)
        with m.Else():
            m.d.comb += [s0_port.eq(new_port), s0_slot.eq(Array(tail)[new_port])]
            for p in range(P):
                with m.If(new_port == p):
                    req = self.req[p].payload
                    m.d.comb += [s0.wave.eq(req.wave), s0.epoch.eq(req.epoch), s0.target.eq(req.target),
                                 s0.word.eq(req.addr[lb:ADDR_BITS])]
        with m.If(accept):
            m.d.sync += last_port.eq(new_port)
        slot0 = s0.word[wb:wb + ib]
        m.d.comb += [line_rd.addr.eq(s0.word[:wb + ib]), tag_rd.addr.eq(slot0), tag_rd_next.addr.eq(slot0 + 1)]
        m.d.sync += [s1.valid.eq(again | accept), s1.again.eq(again), s1.port.eq(s0_port),
                     s1.slot.eq(s0_slot), s1.fetch.eq(s0)]

        # ---- cycle 1: lookup of the memory line and the next one --------------------------
        f = s1.fetch
        block = f.word[wb:]
        succ = Signal(BLOCK_ADDR)
        m.d.comb += succ.eq(block + 1)
        hit = valid.bit_select(block[:ib], 1) & (tag_rd.data.tag == block[ib:])
        hit_next = valid.bit_select(succ[:ib], 1) & (tag_rd_next.data.tag == succ[ib:])
        found, found_idx = fill.find(block, "find")
        found_next, _ = fill.find(succ, "find_next")
        first = s1.valid & ~s1.again                   # a new fetch's lookup: counted
        demand = s1.valid & ~hit & ~found & fill.has
        # the fill of an even line brings its successor: only an odd line prefetches, and
        # only when its own line needs no read (one read is allocated per cycle; a line that
        # missed prefetches when it is looked up again, present)
        prefetch = s1.valid & f.word[wb - 1] & ~hit_next & ~found_next & (hit | found) & fill.has
        fill.alloc(demand | prefetch, Mux(demand, block, succ))
        with m.If(first):
            with m.If(hit):
                m.d.sync += self.hits.eq(self.hits + 1)
            with m.Else():
                m.d.sync += self.misses.eq(self.misses + 1)
        with m.If(prefetch):
            m.d.sync += self.prefetches.eq(self.prefetches + 1)
        qw = queue.write_port()
        m.d.comb += [qw.addr.eq(Cat(s1.slot, s1.port)), qw.data.eq(f), qw.en.eq(first)]

        # what a head that missed waits for: the read of its line, else (none free) any read;
        # nothing when that read is in its last two cycles (it looks up again at once)
        awaited = Signal(M)
        m.d.comb += awaited.eq(Mux(found, Const(1, M) << found_idx,
                                   Mux(demand, Const(1, M) << fill.entry, (1 << M) - 1)))
        awaited_now = Mux((awaited & (wake | fill.done)).any(), 0, awaited)

        err = self.error
        for p in range(P):
            r = self.resp[p]
            at_head = s1_head[p]
            load = at_head & hit & (~r.valid | r.ready)
            pushed = accept & (new_port == p)
            m.d.sync += [count[p].eq(count[p] + pushed - popped[p]),
                         unloaded[p].eq(unloaded[p] + pushed - load)]
            with m.If(pushed):
                m.d.sync += tail[p].eq(tail[p] + 1)
            # the answer register: every port's takes the same inputs, only the enables differ
            answer = Signal(FetchResp(cfg), name=f"answer{p}", reset_less=True)
            m.d.comb += r.payload.eq(answer)
            with m.If(load):
                m.d.sync += [head[p].eq(head[p] + 1), r.valid.eq(1), answer.wave.eq(f.wave),
                             answer.epoch.eq(f.epoch), answer.target.eq(f.target), answer.data.eq(line_data)]
            with m.Elif(popped[p]):
                m.d.sync += r.valid.eq(0)
            with m.If(at_head & hit & ~load):
                m.d.sync += blocked[p].eq(1)
            with m.Elif(popped[p]):
                m.d.sync += blocked[p].eq(0)
            with m.If(at_head & ~hit):
                m.d.sync += waits[p].eq(awaited_now)
            with m.Elif((waits[p] & wake).any()):
                m.d.sync += waits[p].eq(0)
            with m.If(load & tag_rd.data.fault & ~f.target & ~err.valid):
                m.d.sync += [err.valid.eq(1), err.simd.eq(p), err.wave.eq(f.wave),
                             err.addr.eq(Cat(Const(0, 6), f.word[wb - 1:]))]

        # ---- fills: one word per cycle, then the line is valid -----------------------------
        beat = Signal(wb)
        last_beat = beat == beats - 1
        slot = fill.fill_block[:ib]
        keep = self.mem_resp.valid & ~fill.noinstall.bit_select(fill.fill_idx, 1)
        lw, tw = lines.write_port(), tags.write_port()
        words = [self.mem_resp.payload.data.word_select(k, 8 * cfg.fetch_bytes) for k in range(beats)]
        m.d.comb += [lw.addr.eq(Cat(beat, slot)), lw.en.eq(keep),
                     lw.data.eq(mux_tree(beat, words)),
                     tw.addr.eq(slot), tw.en.eq(keep & last_beat),
                     tw.data.tag.eq(fill.fill_block[ib:]), tw.data.fault.eq(self.mem_resp.payload.fault),
                     self.mem_resp.ready.eq(last_beat)]
        with m.If(self.mem_resp.valid):
            m.d.sync += beat.eq(Mux(last_beat, 0, beat + 1))
        # the line becomes valid the cycle after its last word is written: a lookup then
        # reads every word written (the line memory answers the previous cycle's address)
        # (and the entry stays busy until then, so that a lookup finds the read); the fetches
        # that wait for it are woken with the last word: their lookup comes a cycle later
        fin = Signal(data.StructLayout({"valid": 1, "idx": range(M), "slot": ib}))
        m.d.sync += [fin.valid.eq(self.mem_resp.valid & last_beat), fin.idx.eq(fill.fill_idx), fin.slot.eq(slot)]
        with m.If(self.mem_resp.valid & last_beat):
            m.d.comb += wake.bit_select(fill.fill_idx, 1).eq(1)
        fill.free(fin.valid, fin.idx)
        cleared = Mux(keep & (beat == 0), Const(1, len(valid)) << slot, 0)
        installed = Mux(fin.valid & ~fill.noinstall.bit_select(fin.idx, 1), Const(1, len(valid)) << fin.slot, 0)
        with m.If(self.flush):
            m.d.sync += valid.eq(0)
        with m.Else():
            m.d.sync += valid.eq((valid | installed) & ~cleared)
        return m

