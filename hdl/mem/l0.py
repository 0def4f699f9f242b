"""The storage of one CU's vector L0 cache: tags, data, valid bits and LRU order.

``L0Array`` is the array only; the pipeline around it (coalescing, misses, write-through,
return queues) is :class:`hdl.mem.vmem.VecMemUnit` (docs/memory.md, "Vector memory path").
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..config import DCUConfig
from .memport import ADDR_BITS, LINE_BYTES

__all__ = ["L0Array", "LINE_BITS", "onehot_index", "lowest_one", "or_tree"]

#: Bits of a line number (a 48-bit byte address without its 7 offset bits).
LINE_BITS = ADDR_BITS - 7


def lowest_one(x):
    """The lowest set bit of ``x`` alone (0 if none)."""
    return (x & (~x + 1))[:len(x)]


def onehot_index(x):
    """Index of the set bit of a one-hot (or zero) value: an OR per index bit, no chain."""
    n = len(x)
    if n <= 1:
        return Const(0, 1)
    bits = (n - 1).bit_length()
    return Cat(*[(x & Const(sum(1 << i for i in range(n) if i >> b & 1), n)).any()
                 for b in range(bits)])


def or_tree(values):
    """OR of a list of values as a balanced tree (a chain would be as deep as the list)."""
    while len(values) > 1:
        values = [values[i] | values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


class L0Array(wiring.Component):
    """Tags, data, valid bits and LRU state of a ``config.l0_ways``-way L0 of 128-byte lines.

    A lookup takes three cycles. Stage 0: ``lookup`` names a line and its set's tags are read.
    Stage 1 (the next cycle): ``line`` names the same line; ``hit`` and ``way`` answer, and the
    owner may act on the line with the stage-1 commands below. Stage 2: ``data`` is the line
    on a stage-1 hit. A stage-1 command is seen by every later stage-1 lookup (tags are read
    through a transparent port; valid bits and LRU ages are flip-flops).

    The tags and the data live in ``Memory``s (one tag word per set, one data word per line);
    the valid bits and the LRU ages (a permutation of ``0..ways-1`` per set, 0 = most
    recently used) are flip-flops, so ``flush`` clears the whole cache in one cycle.

    Parameters
    ----------
    config : DCUConfig
        ``l0_bytes``, ``l0_ways`` and ``l0_line`` (which must be 128) size the array.

    Members
    -------
    lookup : In(LINE_BITS)
        Stage 0: the line number whose set is read.
    line : In(LINE_BITS)
        Stage 1: the line number looked up in the previous cycle.
    hit, way : Out(1), Out(range(ways))
        Stage 1: the line is present, and in which way.
    touch : In(1)
        Stage 1: make the hit line the most recently used (ignored on a miss).
    write : In(1)
        Stage 1: write ``wdata`` into the hit line's bytes selected by ``wmask`` (ignored on a miss).
    invalidate : In(1)
        Stage 1: drop the hit line.
    fill : In(1)
        Stage 1: install ``line`` with data ``wdata`` in the set's first invalid way, else in
        its least recently used way; it becomes the most recently used. The owner guarantees
        the line is not present.
    flush : In(1)
        Stage 1: drop every line.
    wdata : In(8 * 128), wmask : In(128)
        Data of ``write`` and ``fill`` (byte ``i`` in bits ``[8i, 8i + 8)``); the byte mask of ``write``.
    data : Out(8 * 128)
        Stage 2: the line that hit in stage 1.
    """

    def __init__(self, config: DCUConfig):
        if config.l0_line != LINE_BYTES:
            raise ValueError(f"the L0 line must be the memory port's {LINE_BYTES} bytes, got {config.l0_line}")
        self.config = config
        self.ways = config.l0_ways
        self.sets = config.l0_sets
        super().__init__({
            "lookup": In(LINE_BITS), "line": In(LINE_BITS),
            "hit": Out(1), "way": Out(range(self.ways)),
            "touch": In(1), "write": In(1), "invalidate": In(1), "fill": In(1), "flush": In(1),
            "wdata": In(8 * LINE_BYTES), "wmask": In(LINE_BYTES),
            "data": Out(8 * LINE_BYTES),
        })

    def elaborate(self, platform):
        ways, sets = self.ways, self.sets
        set_bits = (sets - 1).bit_length()
        tag_bits = LINE_BITS - set_bits
        age_bits = max(1, (ways - 1).bit_length())
        m = Module()

        m.submodules.tags = tags = memory.Memory(shape=unsigned(ways * tag_bits), depth=sets, init=[])
        tag_w = tags.write_port(granularity=tag_bits)
        tag_r = tags.read_port(transparent_for=(tag_w,))
        m.submodules.lines = lines = memory.Memory(shape=unsigned(8 * LINE_BYTES), depth=sets * ways, init=[])
        data_w = lines.write_port(granularity=8)
        data_r = lines.read_port()

        valid = Signal(sets * ways)
        ages_init = sum(w << (w * age_bits) for w in range(ways))
        lru = Signal(sets * ways * age_bits, init=sum(ages_init << (s * ways * age_bits) for s in range(sets)))

        set0 = self.lookup[:set_bits]
        set1 = self.line[:set_bits]
        tag1 = self.line[set_bits:]
        m.d.comb += tag_r.addr.eq(set0)

        def frag(name):
            # separate fragments: the simulator re-evaluates a fragment when any input changes
            sub = Module()
            m.submodules[name] = sub
            return sub

        # ---- stage 1: compare, pick the victim --------------------------------------------
        vbits, ages, hits = Signal(ways), Signal(ways * age_bits), Signal(ways)
        f = frag("compare")
        f.d.comb += [vbits.eq(valid.word_select(set1, ways)), ages.eq(lru.word_select(set1, ways * age_bits)),
                     hits.eq(Cat(*[valid.word_select(set1, ways)[w]
                                   & (tag_r.data[w * tag_bits:(w + 1) * tag_bits] == tag1)
                                   for w in range(ways)]))]
        f = frag("hit")
        f.d.comb += [self.hit.eq(hits.any()), self.way.eq(onehot_index(hits))]
        age = [ages[w * age_bits:(w + 1) * age_bits] for w in range(ways)]
        victim = Signal(ways)
        f = frag("victim")
        f.d.comb += victim.eq(Mux(vbits.all(), Cat(*[a == ways - 1 for a in age]), lowest_one(~vbits)))

        # ---- stage 1: commands ----------------------------------------------------------
        act = Signal(ways)          # the way a touch or fill makes most recently used
        act_age = Signal(age_bits)
        f = frag("act")
        f.d.comb += act.eq(Mux(self.fill, victim, Mux(self.touch, hits, 0)))
        f.d.comb += act_age.eq(or_tree([Mux(Mux(self.fill, victim[w], self.touch & hits[w]), age[w], 0)
                                         for w in range(ways)]))
        with m.If(act.any()):
            new_ages = Cat(*[Mux(act[w], 0, Mux(age[w] < act_age, age[w] + 1, age[w]))[:age_bits]
                             for w in range(ways)])
            m.d.sync += lru.word_select(set1, ways * age_bits).eq(new_ages)
        with m.If(self.flush):
            m.d.sync += valid.eq(0)
        with m.Elif(self.fill):
            m.d.sync += valid.word_select(set1, ways).eq(vbits | victim)
        with m.Elif(self.invalidate):
            m.d.sync += valid.word_select(set1, ways).eq(vbits & ~hits)

        f = frag("ports")
        way_sel = Mux(self.fill, onehot_index(victim), self.way)
        f.d.comb += [tag_w.addr.eq(set1), tag_w.data.eq(tag1.replicate(ways)),
                     tag_w.en.eq(Mux(self.fill, victim, 0)),
                     data_w.addr.eq(Cat(way_sel, set1) if ways > 1 else set1), data_w.data.eq(self.wdata),
                     data_w.en.eq(Mux(self.fill, ~0, Mux(self.write & self.hit, self.wmask, 0))),
                     data_r.addr.eq(Cat(self.way, set1) if ways > 1 else set1),
                     self.data.eq(data_r.data)]
        return m

