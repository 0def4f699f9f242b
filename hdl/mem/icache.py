"""The instruction cache shared by the DCU's four SIMDs (docs/memory.md, "Instruction cache").

Direct-mapped 64-byte lines (``config.icache_bytes``), filled two sibling lines per 128-byte
memory read (:mod:`hdl.mem.linecache`), with next-line prefetch. A fetch answers
``config.fetch_bytes`` of a line: by default the whole line (16 dwords: 4 to 16
instructions), so one fetch a cycle feeds four SIMDs that each issue up to two instructions
a cycle (RDNA's cache delivers 32 bytes a clock to each SIMD: 128 in all; this one 64); the
``fpga`` preset's 32 bytes halve the queues below. Each SIMD's port has a queue
of ``depth`` requests answered in request order (so in order per wave, as the SIMD's fetch
buffer needs); a miss on one port does not hold up the others.

Pipeline: cycle 0 the round-robin arbiter accepts one line fetch into the tail of its
port's queue and addresses the line banks; cycle 1 (lookup) the line and its successor are
compared: a hit writes the chunk into its port's queue memory, a miss reads the memory
line (or joins a read in flight) and answers from the read's kept fill, and an absent
successor that starts the next memory line is prefetched; cycle 2 the queue head answers.
A hit therefore answers 2 cycles after it is accepted.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..config import ConfigError, DCUConfig
from .linecache import (LINE, LINE_ADDR, ErrorLayout, LinePairs, MissTable, check_geometry, check_reads,
                        lowest, round_robin)
from .memport import ADDR_BITS, MemReq, MemResp
from ..layouts import FetchReq, FetchResp

__all__ = ["ICache"]


class ICache(wiring.Component):
    """Instruction cache of the DCU: 64-byte line fetches for the four SIMDs.

    Parameters
    ----------
    config : DCUConfig
        Size (``icache_bytes``, ``icache_line`` = 64), SIMDs and wave slots.
    depth : int
        Requests queued per port (a power of two, at least 2): accepted, looked up or
        waiting for memory, not yet answered.
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
        128-byte reads, tag = miss table entry.
    mem_resp : In(stream.Signature(MemResp()))
        Their responses, in any order.
    flush : In(1)
        Invalidate every line (reads in flight are delivered but not kept).
    hits, misses : Out(32)
        Fetches whose line was present at lookup / the others.
    prefetches : Out(32)
        Memory reads issued by next-line prefetch.
    error : Out(ErrorLayout)
        Latched at the first fetch outside memory (which answers zeros): SIMD, wave and the
        line's address. A prefetch, or a SIMD's speculative ``target`` fetch, that faults is
        dropped silently (the ``target`` fetch still answers zeros).
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
        P, Q = cfg.simds, self._depth
        E, qb = P * Q, exact_log2(Q)
        m = Module()
        pairs = LinePairs(m, "lines", self._sets)
        misses = MissTable(m, "mshr", self._mshrs, self.mem, self.mem_resp, self.flush)

        # ---- per-port queues: entry p * depth + i ------------------------------------------
        # a fetch smaller than a line is its chunk ``part`` (no zero-width field otherwise:
        # Verilog has none)
        fb, lb = cfg.fetch_bytes, exact_log2(cfg.fetch_bytes)
        part = {"part": 6 - lb} if fb < LINE else {}

        def chunk_of(line, view):   # the fetch's bytes of ``line``
            return line.word_select(view.part, 8 * fb) if part else line

        EntryInfo = data.StructLayout({"wave": range(cfg.wave_ids), "epoch": 2, "target": 1, "line": LINE_ADDR,
                                       **part})
        info = [Signal(EntryInfo, name=f"entry{e}") for e in range(E)]
        waits = [Signal(range(self._mshrs), name=f"entry{e}_wait") for e in range(E)]
        wait = Array(waits)
        looked, waiting = Signal(E), Signal(E)    # lookup done; the line is awaited from memory
        kept = Signal(E)                          # the bytes are the miss entry's kept fill
        head = [Signal(qb, name=f"head{p}") for p in range(P)]
        tail = Array(Signal(qb, name=f"tail{p}") for p in range(P))
        count = [Signal(range(Q + 1), name=f"count{p}") for p in range(P)]

        def entry_info(idx, name, entries=info):   # the fields of the entry ``idx`` selects
            view = Signal(EntryInfo, name=name)
            m.d.comb += view.eq(Array(Value.cast(x) for x in entries)[idx])
            return view

        # ---- cycle 0: accept one fetch (round robin) into its port's queue -----------------
        valid = Cat(self.req[p].valid & (count[p] != Q) for p in range(P))
        last_port = Signal(range(P))
        port = round_robin(m, valid, last_port, "arb")
        fetch = Signal(FetchReq(cfg))
        for p in range(P):
            with m.If(port == p):
                m.d.comb += fetch.eq(self.req[p].payload)
        stall = Signal()
        accept = Signal()
        m.d.comb += accept.eq(valid.any() & ~stall)
        for p in range(P):
            m.d.comb += self.req[p].ready.eq(accept & (port == p))
        new = Signal(range(E))
        m.d.comb += new.eq(Cat(tail[port], port))

        # the fetch's fields are registered whenever the lookup moves on (``~stall``), not only at
        # ``accept``, and its queue entry is written from them in the lookup cycle (before the
        # entry can answer): the enables then come from registers rather than from the lookup's
        # hit compares through ``stall`` and the arbiter
        s1 = Signal(data.StructLayout({"valid": 1, "entry": range(E), "info": EntryInfo, "succ": LINE_ADDR}))
        succ = Signal(LINE_ADDR)                  # the fetch's line + 1, registered with it
        m.d.comb += succ.eq(fetch.addr[6:ADDR_BITS] + 1)
        with m.If(~stall):
            m.d.sync += [s1.valid.eq(accept), s1.entry.eq(new), s1.succ.eq(succ),
                         s1.info.eq(Cat(fetch.wave, fetch.epoch, fetch.target, fetch.addr[6:ADDR_BITS],
                                        fetch.addr[lb:6]))]
        with m.If(accept):
            m.d.sync += [last_port.eq(port), tail[port].eq(tail[port] + 1)]
        with m.If(s1.valid):
            for e in range(E):
                with m.If(s1.entry == e):
                    m.d.sync += info[e].eq(s1.info)

        # ---- cycle 1: lookup of the line and its successor ----------------------------------
        L = s1.info.line
        hit, hit_next, line_data, _ = pairs.lookup(m, Mux(stall, L, fetch.addr[6:ADDR_BITS]),
                                                   Mux(stall, s1.succ, succ), L, s1.succ)
        blk, blk_next = L[1:], s1.succ[1:]
        fill_now = misses.fill & (misses.fill_block == blk)
        fill_now_next = misses.fill & (misses.fill_block == blk_next)
        found, found_idx = misses.find(blk, "find")
        found_next, _ = misses.find(blk_next, "find_next")
        have = hit | fill_now
        alloc = ~have & ~found
        # an even line's successor comes with its own memory line: only an odd line prefetches
        prefetch = (L[0] & ~hit_next & ~fill_now_next & ~found_next
                    & Mux(alloc, misses.has[1], misses.has[0]))
        m.d.comb += stall.eq(s1.valid & alloc & ~misses.has[0])
        go = s1.valid & ~stall
        misses.alloc(0, go & alloc, blk)
        misses.alloc(1, go & prefetch, blk_next)

        lookup = Signal(E)
        # the miss entry an entry reads is written in every lookup cycle, the last (``go``) one
        # counting: nothing reads it before ``waiting`` or ``kept``, and its enable stays off the
        # path from the hit compares through ``stall``
        with m.If(s1.valid):
            m.d.sync += wait[s1.entry].eq(Mux(alloc, misses.entry[0], found_idx))
        with m.If(go):
            m.d.comb += lookup.bit_select(s1.entry, 1).eq(1)
            with m.If(hit):
                m.d.sync += self.hits.eq(self.hits + 1)
            with m.Else():
                m.d.sync += self.misses.eq(self.misses + 1)
            with m.If(prefetch):
                m.d.sync += self.prefetches.eq(self.prefetches + 1)

        # ---- the bytes: a hit's (or a fill's in the lookup cycle) go into the port's queue
        # memory at lookup; an entry that waits for memory reads its miss entry's kept fill
        # when it answers, so a fill writes nothing per entry
        take = Signal(E)                          # entries whose read is answered this cycle
        m.d.comb += take.eq(Cat(misses.fill & waiting[e] & (waits[e] == misses.fill_idx) for e in range(E)))
        misses.hold([(kept[e], waits[e]) for e in range(E)])
        looked_up = Signal(8 * fb)
        # only in the cycles that use it (a compiled simulation skips it otherwise). The fill's
        # bytes when it brings the line this cycle, else the cache's: a line is never both
        # present and being read (its memory line's two lines are installed and flushed
        # together, and a read is sent only for an absent one), and ``fill_now`` is a compare
        # with the fill's block, shorter than ``hit`` (the tag memory and its compare)
        with m.If(s1.valid):
            m.d.comb += looked_up.eq(chunk_of(Mux(fill_now, misses.half(L[0]), line_data), s1.info))
        queue_data = []
        for p in range(P):
            mem = memory.Memory(shape=8 * fb, depth=Q, init=[])
            m.submodules[f"queue{p}_data"] = mem
            wp = mem.write_port()
            # written in every lookup cycle, like ``wait``: the ``go`` one counts (the entry
            # answers only once looked up), and ``stall`` stays off the write enable
            m.d.comb += [wp.addr.eq(s1.entry[:qb]), wp.en.eq(s1.valid & (s1.entry[qb:] == p)),
                         wp.data.eq(looked_up)]
            queue_data.append(mem.read_port(domain="comb"))
        pairs.fill(m, misses.fill_install, misses.fill_block, misses.fill_data, self.flush)

        # ---- answers: the head of each port's queue, in order --------------------------------
        popped = Signal(E)
        for p in range(P):
            r = self.resp[p]
            e = Cat(head[p], Const(p, range(P)))
            # among the port's own entries: a select over all of them with a constant part
            # is a full case Verilator 5.048 cannot see, and lints as a latch
            h = entry_info(head[p], f"head{p}_info", info[p * Q: (p + 1) * Q])
            m.d.comb += [r.valid.eq((count[p] != 0) & looked.bit_select(e, 1) & ~waiting.bit_select(e, 1)),
                         r.payload.wave.eq(h.wave), r.payload.epoch.eq(h.epoch), r.payload.target.eq(h.target)]
            from_fill = kept.bit_select(e, 1)
            fill_line = misses.kept_line(Array(waits[p * Q: (p + 1) * Q])[head[p]], h.line[0],
                                         r.valid & from_fill, f"head{p}_fill")
            m.d.comb += queue_data[p].addr.eq(head[p])
            with m.If(r.valid):
                m.d.comb += r.payload.data.eq(Mux(from_fill, chunk_of(fill_line, h), queue_data[p].data))
            pushed = accept & (port == p)
            with m.If(r.valid & r.ready):
                m.d.comb += popped.bit_select(e, 1).eq(1)
                m.d.sync += [head[p].eq(head[p] + 1), count[p].eq(count[p] + pushed - 1)]
            with m.Else():
                m.d.sync += count[p].eq(count[p] + pushed)
        m.d.sync += [looked.eq((looked | lookup) & ~popped),
                     waiting.eq((waiting & ~take) | Mux(~have, lookup, 0)),
                     kept.eq((kept & ~popped) | Mux(~have, lookup, 0))]

        # ---- error: the first demand fetch that faulted --------------------------------------
        demand = Signal(E)
        m.d.comb += demand.eq(take & ~Cat(x.target for x in info))
        who = lowest(m, demand, "fault_entry")
        fi = entry_info(who, "fault_info")
        err = self.error
        with m.If(~err.valid & misses.fill_fault & demand.any()):
            m.d.sync += [err.valid.eq(1), err.simd.eq(who[qb:]), err.wave.eq(fi.wave),
                         err.addr.eq(Cat(Const(0, 6), fi.line))]
        return m
