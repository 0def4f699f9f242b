"""Building blocks of the scalar cache, and the checks and arbiters the instruction cache
shares with it (docs/memory.md).

The scalar cache holds direct-mapped 64-byte lines and fills them from the external port's
128-byte reads, two sibling lines per read. The lines live in two banks, even and odd line
addresses, so the pair ``(L, L + 1)`` around any line is read in one cycle, for loads that
straddle two lines.

The helpers add their logic to the caller's module instead of being components of their
own: a shallow hierarchy keeps Amaranth's simulator fast.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Mux, Signal, unsigned
from amaranth.lib import data, memory
from amaranth.utils import exact_log2

from ..config import ConfigError
from .memport import ADDR_BITS, CLIENT_TAG_BITS, LINE_BYTES, MemKind

__all__ = ["LINE", "LINE_ADDR", "BLOCK_ADDR", "check_geometry", "check_reads", "ErrorLayout",
           "lowest", "round_robin", "LinePairs", "MissTable"]

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
    for i in reversed(range(n)):
        with m.If(mask[i]):
            m.d.comb += idx.eq(i)
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


class LinePairs:
    """Direct-mapped 64-byte lines in an even and an odd bank, filled in sibling pairs.

    Each bank is one ``lib.memory.Memory`` of ``sets // 2`` words holding a line's data
    and tag side by side; the valid bits are one register of ``sets`` bits, so a flush
    clears every line at once. Line ``L`` sits in bank ``L % 2`` at word
    ``(L >> 1) % (sets // 2)``; both lines of a 128-byte memory line share the word index
    and the tag, and a fill writes both banks.

    Parameters
    ----------
    m : Module
        The module the memories and logic are added to.
    name : str
        Prefix of the submodule and signal names.
    sets : int
        Lines in the cache (a power of two, at least 4).

    Members
    -------
    valid : Signal(sets)
        Bit ``L % sets`` is set while line ``L``'s slot holds a line.
    """

    def __init__(self, m, name: str, sets: int):
        self._s = exact_log2(sets)
        self._ib = self._s - 1           # bank word index bits
        self._tag_bits = LINE_ADDR - self._s
        self.valid = Signal(sets, name=f"{name}_valid")
        self._read, self._write = [], []
        for parity in ("even", "odd"):
            mem = memory.Memory(shape=unsigned(8 * LINE + self._tag_bits), depth=sets // 2, init=[])
            m.submodules[f"{name}_{parity}"] = mem
            wp = mem.write_port()
            self._write.append(wp)
            # transparent: a fill in the cycle a line is addressed is seen by the lookup
            self._read.append(mem.read_port(transparent_for=(wp,)))

    def lookup(self, m, line_next, succ_next, line, succ):
        """Look up the pair ``(line, line + 1)``; the banks are addressed with ``line_next``.

        The memories answer one cycle after they are addressed: ``line`` must be the value
        ``line_next`` had in the previous cycle (the caller's stage register). ``succ`` and
        ``succ_next`` are ``line + 1`` and ``line_next + 1`` (``LINE_ADDR`` bits), which the
        caller registers beside ``line``: no adder then lies between its register and the
        hit compares.

        Returns
        -------
        (hit_first, hit_second, data_first, data_second)
            Presence and 512-bit data of ``line`` and ``line + 1``.
        """
        s, ib = self._s, self._ib
        m.d.comb += [self._read[0].addr.eq(Mux(line_next[0], succ_next, line_next)[1:1 + ib]),
                     self._read[1].addr.eq(line_next[1:1 + ib])]
        even_line, odd_line = Mux(line[0], succ, line), line | 1
        hits = []
        for port, ln in zip(self._read, (even_line, odd_line)):
            hits.append(self.valid.bit_select(ln[:s], 1) & (port.data[8 * LINE:] == ln[s:LINE_ADDR]))
        d_even, d_odd = self._read[0].data[:8 * LINE], self._read[1].data[:8 * LINE]
        odd = line[0]
        return (Mux(odd, hits[1], hits[0]), Mux(odd, hits[0], hits[1]),
                Mux(odd, d_odd, d_even), Mux(odd, d_even, d_odd))

    def fill(self, m, en, block, line_data, flush):
        """Install a 128-byte memory line (two cache lines) when ``en``; ``flush`` clears every
        valid bit (it wins over a fill in the same cycle)."""
        ib = self._ib
        for k, wp in enumerate(self._write):
            m.d.comb += [wp.addr.eq(block[:ib]), wp.en.eq(en),
                         wp.data.eq(Cat(line_data[8 * LINE * k: 8 * LINE * (k + 1)], block[ib:BLOCK_ADDR]))]
        with m.If(en):
            m.d.sync += self.valid.eq(self.valid | (Const(3, 2) << Cat(Const(0, 1), block[:ib])))
        with m.If(flush):
            m.d.sync += self.valid.eq(0)


class MissTable:
    """Outstanding 128-byte reads of one cache (miss status holding registers).

    Entry ``i`` reads with tag ``i``; its response is the *fill*. A requester that misses
    on a memory line already being read waits for that entry instead of reading again.
    Up to two entries are allocated per cycle: ``alloc(0, ...)`` takes the lowest free
    entry, ``alloc(1, ...)`` the next one (the lowest when ``alloc(0, ...)`` is idle). A flush
    marks the reads in flight as not to be installed: their data went out before the flush.

    Each entry keeps its fill in a memory (``kept_line``) until the requesters that waited
    for it have read it; the cache marks those entries with ``hold``, and a held entry is not
    allocated again. So a requester keeps only the entry's index, not a copy of the line:
    any number of them take one fill in the same cycle, and the cache's per-requester data
    is a memory with one write port (LUT RAM on an FPGA) instead of registers that each
    take a fill (docs/memory.md).

    Parameters
    ----------
    m : Module
    name : str
    entries : int
        Reads in flight at most (at most ``2 ** CLIENT_TAG_BITS``).
    mem, mem_resp : the cache's external port (``MemReq`` out, ``MemResp`` in).
    flush : Value

    Members
    -------
    entry : list of Value
        ``entry[k]``: the entry ``alloc(k, ...)`` takes.
    has : list of Value
        ``has[k]``: at least ``k + 1`` entries are free.
    fill, fill_idx, fill_block, fill_data, fill_fault, fill_install :
        A response this cycle, its entry, the memory line it answers, the 1,024 data bits,
        its fault flag, and whether the cache should keep it.
    fill_lines : list of Signal
        ``fill_lines[k]``: the cache line of parity ``k`` in a fill without a fault, 0 in
        other cycles (so a compiled simulation forms them only in the cycles of a fill). A
        faulting fill is kept as zeros.
    """

    def __init__(self, m, name: str, entries: int, mem, mem_resp, flush):
        M = entries
        self._m = m
        self.busy = Signal(M, name=f"{name}_busy")
        sent = Signal(M, name=f"{name}_sent")
        noinstall = Signal(M, name=f"{name}_noinstall")
        self._held = Signal(M, name=f"{name}_held")
        self.block = Array(Signal(BLOCK_ADDR, name=f"{name}_block{i}") for i in range(M))
        idle = ~(self.busy | self._held)
        idle_but_lowest = (idle & (idle - 1))[:M]    # the lowest free bit cleared
        free = [lowest(m, idle, f"{name}_free0"), lowest(m, idle_but_lowest, f"{name}_free1")]
        self.has = [idle.any(), idle_but_lowest.any()]
        self._en = [Signal(name=f"{name}_alloc{k}") for k in range(2)]
        self.entry = [free[0], Mux(self._en[0], free[1], free[0])]
        self._blk = [Signal(BLOCK_ADDR, name=f"{name}_alloc{k}_block") for k in range(2)]

        # issue: the lowest allocated entry not yet sent, through a registered stream. Only
        # the entry is registered: a read's other fields are constants (the request's write
        # data and mask would be 1,152 flip-flops that never change)
        todo = Signal(M, name=f"{name}_todo")
        m.d.comb += todo.eq(self.busy & ~sent)
        nxt = lowest(m, todo, f"{name}_next")
        sending = Signal(M, name=f"{name}_sending")
        req_entry = Signal.like(nxt, name=f"{name}_req_entry")
        with m.If(~mem.valid | mem.ready):
            m.d.sync += mem.valid.eq(todo.any())
            with m.If(todo.any()):
                m.d.sync += req_entry.eq(nxt)
                m.d.comb += sending.bit_select(nxt, 1).eq(1)
        m.d.comb += [mem.payload.kind.eq(MemKind.READ), mem.payload.tag.eq(req_entry),
                     mem.payload.addr.eq(Cat(Const(0, 7), self.block[req_entry]))]

        # fill
        p = mem_resp.payload
        self.fill = mem_resp.valid
        self.fill_idx = p.tag[:max(1, (M - 1).bit_length())]
        self.fill_block = self.block[self.fill_idx]
        self.fill_data, self.fill_fault = p.data, p.fault
        self.fill_install = self.fill & ~p.fault & ~noinstall.bit_select(self.fill_idx, 1)
        self.fill_lines = [Signal(8 * LINE, name=f"{name}_fill_line{k}") for k in range(2)]
        with m.If(self.fill & ~p.fault):
            m.d.comb += [line.eq(self.half(k)) for k, line in enumerate(self.fill_lines)]
        m.d.comb += mem_resp.ready.eq(1)
        # LUT RAM on an FPGA even with a read port per requester: Yosys built the instruction
        # cache's four as flip-flops and multiplexers (4,096 and 13,568)
        self._kept = memory.Memory(shape=16 * LINE, depth=M, init=[], attrs={"ram_style": "distributed"})
        m.submodules[f"{name}_kept"] = self._kept
        kw = self._kept.write_port()
        m.d.comb += [kw.addr.eq(self.fill_idx), kw.en.eq(self.fill), kw.data.eq(Cat(*self.fill_lines))]
        done = Signal(M, name=f"{name}_done")
        with m.If(self.fill):
            m.d.comb += done.bit_select(self.fill_idx, 1).eq(1)

        new = Signal(M, name=f"{name}_new")
        for k in range(2):
            with m.If(self._en[k]):
                m.d.comb += new.bit_select(self.entry[k], 1).eq(1)
        # the free entries' blocks are written in every cycle, allocated or not (nothing reads
        # an idle entry's block): their enables come from registers, not from the cache's
        # lookup through ``alloc``. The lowest free entry takes the first allocation's block,
        # or the second's when it is the only one; the next free entry the second's.
        with m.If(self.has[0]):
            m.d.sync += self.block[free[0]].eq(Mux(self._en[0], self._blk[0], self._blk[1]))
        with m.If(self.has[1]):
            m.d.sync += self.block[free[1]].eq(self._blk[1])
        m.d.sync += [self.busy.eq((self.busy & ~done) | new), sent.eq((sent | sending) & ~done),
                     noinstall.eq(Mux(flush, noinstall | self.busy, noinstall) & ~new)]

    def half(self, odd):
        """The cache line of parity ``odd`` in this cycle's response data."""
        return Mux(odd, self.fill_data[8 * LINE:], self.fill_data[:8 * LINE])

    def kept_line(self, idx, odd, en, name: str) -> Signal:
        """The cache line of parity ``odd`` of entry ``idx``'s last fill (zeros if it faulted),
        through a read port of its own; 0 unless ``en``. A fill is readable from the next
        cycle on, and stays until the entry is allocated again: ``hold`` it until then."""
        rp = self._kept.read_port(domain="comb")
        line = Signal(8 * LINE, name=name)
        self._m.d.comb += rp.addr.eq(idx)
        with self._m.If(en):
            self._m.d.comb += line.eq(Mux(odd, rp.data[8 * LINE:], rp.data[:8 * LINE]))
        return line

    def hold(self, waiters):
        """Keep entries from being allocated while requesters still have their fills to read:
        ``waiters`` is a list of ``(kept, idx)``, a requester that reads entry ``idx``'s fill
        while ``kept``. The compares run only while one is kept (a compiled simulation skips
        them otherwise)."""
        m, M = self._m, len(self._held)
        kept = Cat(*[k for k, _ in waiters])
        with m.If(kept.any()):
            m.d.comb += self._held.eq(Cat(*[Cat(*[k & (idx == i) for k, idx in waiters]).any()
                                            for i in range(M)]))

    def alloc(self, k: int, en, block):
        """Allocate ``entry[k]`` for a read of memory line ``block`` when ``en``."""
        self._m.d.comb += [self._en[k].eq(en), self._blk[k].eq(block)]

    def find(self, block, name: str):
        """``(found, idx)``: an entry is reading ``block`` and its fill is not this cycle's."""
        m, M = self._m, len(self.busy)
        match = Signal(M, name=f"{name}_match")
        m.d.comb += match.eq(Cat(self.busy[i] & (self.block[i] == block) for i in range(M))
                             & ~Mux(self.fill, Const(1, M) << self.fill_idx, 0))
        return match.any(), lowest(m, match, f"{name}_idx")
