"""The checks, arbiters and miss table the scalar and instruction caches share (docs/memory.md).

Both caches hold direct-mapped 64-byte lines and fill them from the external port's 128-byte
reads, two sibling lines per read. The helpers add their logic to the caller's module
instead of being components of their own: a shallow hierarchy keeps Amaranth's simulator
fast.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Mux, Signal
from amaranth.lib import data, memory

from ..config import ConfigError
from .memport import ADDR_BITS, CLIENT_TAG_BITS, LINE_BYTES, MemKind

__all__ = ["LINE", "LINE_ADDR", "BLOCK_ADDR", "check_geometry", "check_reads", "ErrorLayout",
           "lowest", "round_robin", "MissTable"]

LINE = LINE_BYTES // 2                 # bytes in one cache line
LINE_ADDR = ADDR_BITS - 6              # a line's address: byte address >> 6
BLOCK_ADDR = ADDR_BITS - 7             # a memory line's (pair of cache lines) address


def check_geometry(what: str, size: int, line: int) -> int:
    """Sets (lines) of a cache of ``size`` bytes; a clear error for a geometry we do not build."""
    if line != LINE:
        raise ConfigError(f"{what}: lines of {line} bytes are not supported; the cache fills "
                          f"two {LINE}-byte lines from each {LINE_BYTES}-byte memory read")
    sets = size // line
    if sets < 4:
        raise ConfigError(f"{what}: {size} bytes is fewer than 4 lines of {line} bytes")
    return sets


def check_reads(what: str, reads: int) -> int:
    """Memory reads a cache keeps in flight: each needs a tag of its own."""
    if not 1 <= reads <= 1 << CLIENT_TAG_BITS:
        raise ConfigError(f"{what}: {reads} reads in flight; the port's tag allows 1 to "
                          f"{1 << CLIENT_TAG_BITS}")
    return reads


def ErrorLayout(config, addr_bits: int) -> data.StructLayout:
    """A cache's latched fault report: the first request that touched memory outside the map."""
    return data.StructLayout({"valid": 1, "simd": range(config.simds),
                              "wave": range(config.wave_ids), "addr": addr_bits})


def lowest(m, mask, name: str) -> Signal:
    """Index of the lowest set bit of ``mask`` (0 when no bit is set)."""
    n = len(mask)
    idx = Signal(range(max(n, 2)), name=name)
    pick = Const(0, idx.shape())
    for i in reversed(range(n)):
        pick = Mux(mask[i], i, pick)
    # one assignment, not an If chain: the chains of several calls share one process in the
    # Verilog, which Verilator reports as a combinational loop (UNOPTFLAT) across them
    m.d.comb += idx.eq(pick)
    return idx


def round_robin(m, want, last, name: str) -> Signal:
    """Index of the first set bit of ``want`` after position ``last``, wrapping around."""
    n = len(want)
    after = Signal(n, name=f"{name}_after")
    m.d.comb += after.eq(want & ~((Const(2, n + 1) << last) - 1)[:n])
    pick = lowest(m, want, f"{name}_pick")
    for i in reversed(range(n)):   # a wanted bit above ``last`` takes precedence
        with m.If(after[i]):
            m.d.comb += pick.eq(i)
    return pick


class MissTable:
    """A cache's reads in flight (miss status holding registers), added to the caller's module.

    Entry ``i`` reads with tag ``i``. A request that misses on a memory line already being read
    waits for that read instead of reading again. One entry, the lowest free one, is allocated
    per cycle; it is busy until the cache frees it (``free``). A flush marks the busy entries
    ``noinstall``: their data may predate it.

    The low ``find_bits`` bits of each entry's memory line are registers, compared all at once
    (``find``); the whole line address is in a ``Memory`` that the request and the fill read
    (LUT RAM on an FPGA, instead of a multiplexer over registers for each).

    Members
    -------
    busy, noinstall, done : Signal(entries)
        Entries reading; reading a line a flush made stale; freed this cycle.
    entry, has :
        The entry ``alloc`` takes; whether one is free.
    fill_idx, fill_block :
        The entry the response on ``mem_resp`` answers, and its memory line.
    """

    def __init__(self, m, entries: int, mem, mem_resp, flush, find_bits: int = BLOCK_ADDR):
        M = entries
        self._m, self._find_bits = m, find_bits
        self.busy = Signal(M, name="mshr_busy")
        sent = Signal(M, name="mshr_sent")
        self.noinstall = Signal(M, name="mshr_noinstall")
        self.done = Signal(M, name="mshr_done")
        self.block = [Signal(find_bits, name=f"mshr_block{i}", reset_less=True) for i in range(M)]
        blocks = memory.Memory(shape=BLOCK_ADDR, depth=M, init=[])
        m.submodules.mshr_blocks = blocks
        self.entry = lowest(m, ~self.busy, "mshr_free")
        self.has = (~self.busy).any()
        self._en = Signal(name="mshr_alloc")
        self._blk = Signal(BLOCK_ADDR, name="mshr_alloc_block")

        # the free entry's block is written every cycle, allocated or not (nothing reads an
        # idle entry): the enables come from registers, not from the lookup's compares
        with m.If(self.has):
            for i in range(M):
                with m.If(self.entry == i):
                    m.d.sync += self.block[i].eq(self._blk[:find_bits])
        bw = blocks.write_port()
        m.d.comb += [bw.addr.eq(self.entry), bw.data.eq(self._blk), bw.en.eq(self.has)]

        # issue: the lowest allocated entry not yet sent; only the entry is registered (the
        # request's other fields are constants)
        todo = Signal(M, name="mshr_todo")
        m.d.comb += todo.eq(self.busy & ~sent)
        nxt = lowest(m, todo, "mshr_next")
        sending = Signal(M, name="mshr_sending")
        req_entry = Signal.like(nxt, name="mshr_req_entry")
        with m.If(~mem.valid | mem.ready):
            m.d.sync += mem.valid.eq(todo.any())
            with m.If(todo.any()):
                m.d.sync += req_entry.eq(nxt)
                m.d.comb += sending.bit_select(nxt, 1).eq(1)
        req_block = blocks.read_port(domain="comb")
        m.d.comb += [req_block.addr.eq(req_entry), mem.payload.kind.eq(MemKind.READ),
                     mem.payload.tag.eq(req_entry), mem.payload.addr.eq(Cat(Const(0, 7), req_block.data))]
        self.fill_idx = mem_resp.payload.tag[:max(1, (M - 1).bit_length())]
        fill_block = blocks.read_port(domain="comb")
        m.d.comb += fill_block.addr.eq(self.fill_idx)
        self.fill_block = fill_block.data

        new = Signal(M, name="mshr_new")
        with m.If(self._en):
            m.d.comb += new.bit_select(self.entry, 1).eq(1)
        m.d.sync += [self.busy.eq((self.busy & ~self.done) | new), sent.eq((sent | sending) & ~self.done),
                     self.noinstall.eq(Mux(flush, self.noinstall | self.busy, self.noinstall) & ~new)]

    def alloc(self, en, block):
        """Allocate ``entry`` for a read of memory line ``block`` when ``en``."""
        self._m.d.comb += [self._en.eq(en), self._blk.eq(block)]

    def free(self, en, idx):
        """Entry ``idx`` is free from the next cycle when ``en`` (its line installed, dropped,
        or faulted)."""
        with self._m.If(en):
            self._m.d.comb += self.done.bit_select(idx, 1).eq(1)

    def find(self, block, name: str):
        """``(found, idx)``: entry ``idx`` is reading memory line ``block``, or one that shares
        its low ``find_bits`` bits (its fill may end this cycle)."""
        m, M = self._m, len(self.busy)
        match = Signal(M, name=f"{name}_match")
        m.d.comb += match.eq(Cat(self.busy[i] & (self.block[i] == block[:self._find_bits]) for i in range(M)))
        return match.any(), lowest(m, match, f"{name}_idx")
