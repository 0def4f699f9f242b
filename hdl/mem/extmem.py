"""An RTL model of the external memory, for Verilog and FPGA runs where no Python runs per
cycle (docs/memory.md, "External memory and its models").

Pipeline: a request is accepted in cycle ``t`` (stage A: the RAM line is addressed), its
effect on the RAM happens in cycle ``t + 1`` (stage B: the line arrives, a WRITE merges its
bytes, an ATOMIC computes ``hdl.mem.atomic.atomic_result``, the line is written back and the
response is stored in a slot), and the response is offered from cycle ``t + latency``
(``lo`` plus an LFSR-chosen extra up to ``hi``) onwards. Effects therefore take place in
acceptance order whatever order the responses leave in: a request sees every request
accepted before it. With ``reorder=False`` the slots form a queue and leave in order; with
``reorder=True`` any slot whose latency has elapsed may leave, picked from a rotation chosen
by the LFSR.

With ``registered_read`` (the FPGA build) the RAM's output (and the addressed dword) is
registered before the merge, so stage B becomes two cycles: the line arrives in ``t + 1``
and is merged and written back in ``t + 2``. The memory then accepts a request every other
cycle, so that no read can miss a write still in flight; the one-cycle path from a block
RAM's output through the dword select and the atomic adder back into the RAM is what kept
the bring-up bitstream at 37 MHz.

With ``runtime_knobs`` the latency range, the ordering and the back-pressure rate are inputs
(``knobs``) loaded with the seed, so one build serves every setting; with ``scoreboard`` a
:class:`Scoreboard` counts the requests accepted and the responses taken, by kind, and
latches a response for a tag with no request outstanding (a duplicate).
"""
from __future__ import annotations

from functools import reduce
from operator import or_

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .atomic import AtomicOp, atomic_result
from .memport import ADDR_BITS, LINE_BYTES, MemKind, MemReq, MemResp

__all__ = ["ExtMemory", "FaultRecord", "Knobs", "Scoreboard", "ScoreboardLayout", "latency_range",
           "knob_values"]

LINE_BITS = 8 * LINE_BYTES
_NONZERO_SEED = 0x2545_F491     # the LFSR's state for a zero seed (xorshift stays at zero)
DWORDS = LINE_BYTES // 4


def FaultRecord(tag_bits: int) -> data.StructLayout:
    """A faulting request as a memory with a buffer map records it (``valid``: one was seen)."""
    return data.StructLayout({"valid": 1, "kind": MemKind, "addr": ADDR_BITS, "mask": LINE_BYTES, "tag": tag_bits})


def Knobs(max_latency: int) -> data.StructLayout:
    """The run-time settings of a memory with ``runtime_knobs``: the latency range (clamped
    into the memory's ``[min, max_latency]``, ``latency_hi`` to at least ``latency_lo``), the
    ordering, and the back-pressure rate (``req.ready`` withheld with probability
    ``backpressure / 256``)."""
    return data.StructLayout({"latency_lo": range(max_latency + 1), "latency_hi": range(max_latency + 1),
                              "reorder": 1, "backpressure": 8})


def knob_values(latency, reorder: bool, backpressure: float) -> dict:
    """:func:`Knobs` field values for a latency (int or ``(lo, hi)``), an ordering and a
    back-pressure probability in [0, 1); ValueError if malformed."""
    lo, hi = latency_range(latency)
    if not 0.0 <= backpressure < 1.0:
        raise ValueError(f"backpressure must be in [0, 1), got {backpressure}")
    return {"latency_lo": lo, "latency_hi": hi, "reorder": int(bool(reorder)),
            "backpressure": round(backpressure * 256)}


def ScoreboardLayout(tag_bits: int) -> data.StructLayout:
    """What a :class:`Scoreboard` holds: requests accepted and responses taken by kind (index:
    ``MemKind`` value, 3 for an unknown kind), and the first response for a tag with no
    request outstanding (``duplicate``) and the first request accepted for a tag still
    outstanding (``reused``), each with its tag."""
    return data.StructLayout({"accepted": data.ArrayLayout(32, 4), "answered": data.ArrayLayout(32, 4),
                              "duplicate": 1, "duplicate_tag": tag_bits, "reused": 1, "reused_tag": tag_bits})


class Scoreboard(wiring.Component):
    """Counts a memory port's requests and responses and checks that each response answers an
    outstanding request: a bit per tag is set when a request is accepted and cleared when its
    response is taken.

    Members
    -------
    req_fire, req_kind, req_tag : In
        A request is accepted this cycle, its kind and tag.
    resp_fire, resp_kind, resp_tag : In
        A response is taken this cycle, the kind of its request and its tag.
    board : Out(ScoreboardLayout(tag_bits))
        The counts and latched errors, from reset on.
    """

    def __init__(self, tag_bits: int):
        self.tag_bits = tag_bits
        super().__init__({"req_fire": In(1), "req_kind": In(2), "req_tag": In(tag_bits),
                          "resp_fire": In(1), "resp_kind": In(2), "resp_tag": In(tag_bits),
                          "board": Out(ScoreboardLayout(tag_bits))})

    def elaborate(self, platform):
        m = Module()
        b = self.board
        outstanding = Signal(1 << self.tag_bits)
        set_bits = (self.req_fire << self.req_tag)[:len(outstanding)]
        clear_bits = (self.resp_fire << self.resp_tag)[:len(outstanding)]
        m.d.sync += outstanding.eq((outstanding & ~clear_bits) | set_bits)
        with m.If(self.req_fire):
            m.d.sync += b.accepted[self.req_kind].eq(b.accepted[self.req_kind] + 1)
            with m.If(~b.reused & (outstanding & ~clear_bits).bit_select(self.req_tag, 1)):
                m.d.sync += [b.reused.eq(1), b.reused_tag.eq(self.req_tag)]
        with m.If(self.resp_fire):
            m.d.sync += b.answered[self.resp_kind].eq(b.answered[self.resp_kind] + 1)
            with m.If(~b.duplicate & ~outstanding.bit_select(self.resp_tag, 1)):
                m.d.sync += [b.duplicate.eq(1), b.duplicate_tag.eq(self.resp_tag)]
        return m


def _slot_layout(tag_bits: int) -> data.StructLayout:
    """A response slot: the response and the kind of its request (for the scoreboard)."""
    return data.StructLayout({"resp": MemResp(tag_bits), "kind": MemKind})


def latency_range(latency) -> tuple[int, int]:
    """``latency`` (an int or a ``(lo, hi)`` pair) as ``(lo, hi)``; ValueError if malformed."""
    lo, hi = (latency, latency) if isinstance(latency, int) else tuple(latency)
    if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
        raise ValueError(f"latency must be an int >= 1 or a pair lo <= hi, got {latency!r}")
    return lo, hi


class ExtMemory(wiring.Component):
    """RAM-backed external memory with latency, reordering and back-pressure.

    Parameters
    ----------
    size_bytes : int
        Memory size, a multiple of 128.
    base : int
        Byte address of the first byte, a multiple of 128.
    latency : int or (int, int)
        Cycles from a request's acceptance to its response being offered: fixed, or a range
        ``(lo, hi)`` from which the LFSR picks per request (``lo >= 2``).
    reorder : bool
        Responses whose latency has elapsed leave in an LFSR-chosen order (else in order).
    seed : int
        LFSR seed (a zero LFSR state is replaced by a fixed nonzero one).
    runtime_seed : bool
        Add the ``reseed`` and ``seed`` inputs, so that a host can choose the seed per run
        without a new build.
    runtime_knobs : bool
        With ``runtime_seed``: add the ``knobs`` input (:func:`Knobs`), loaded with the seed,
        so that a host chooses the latency range, the ordering and the back-pressure per run.
        ``latency``, ``reorder`` and ``backpressure`` are then the settings until the first
        ``reseed``, and the upper end of ``latency`` is the longest latency a knob can select.
    scoreboard : bool
        Add a :class:`Scoreboard` on the ports (``board``) and the ``idle`` output.
    backpressure : float
        Probability in [0, 1) that ``req.ready`` is withheld in a cycle (in 1/256 steps).
    slots : int
        Responses in flight, a power of two; a full memory withholds ``req.ready``. A slot is
        taken from acceptance until the response is offered, so one request per cycle flows
        while ``slots >= latency``.
    tag_bits : int
        Tag width of the port.
    init : bytes
        Initial contents from ``base`` (zeros after).
    registered_read : bool
        Register the RAM's output before the merge (needs ``latency >= 3``); a request is
        accepted at most every other cycle, and a host access must not come in the cycle
        after an accepted request or a host write (a host loads and reads back while the
        DCU is idle, and the link's writes are cycles apart).
    idle_merge_zero : bool
        Compute the merge and the response only in cycles that write the RAM or store a
        response, and hold them at zero otherwise, so that a compiled simulator skips the
        1,024-bit merge on idle cycles (the simulation top's choice); in hardware this costs
        an AND per bit of the RAM's write data.
    map_ranges : int
        Hold a buffer map of this many ranges (``map_base``, ``map_end``), set by the host per
        run: a request outside every range faults too (a READ whose line holds no byte of any
        range, a WRITE with a masked byte outside every range, an ATOMIC whose dword is not
        inside one), as in :class:`dcu.memmodel.PyMemory`. 0: no map.
    fault_groups : int
        With a map: keep the first faulting request of each group of tags (``tag`` divided
        into this many equal groups: the arbiter's clients) in ``fault_log``, cleared by
        ``reseed``, so that a host can report what a client's refused request was.

    Members
    -------
    req : In(stream.Signature(MemReq(tag_bits)))
        Requests (:mod:`hdl.mem.memport`). A request outside ``[base, base + size_bytes)``,
        misaligned (READ/WRITE to 128 bytes, ATOMIC to 4), of an unknown kind or atomic op
        gets a ``fault`` response with zero data and changes nothing.
    resp : Out(stream.Signature(MemResp(tag_bits)))
        Responses: READ the line, ATOMIC the old dword in ``data[0:32]``, WRITE zeros.
    host_addr : In(range(size_bytes // 4))
        Dword index (from ``base``) of a host access.
    host_wdata : In(32)
    host_we : In(1)
        Write ``host_wdata`` at ``host_addr``.
    host_re : In(1)
        Read ``host_addr``: ``host_rdata`` holds the dword in the next cycle only.
    host_rdata : Out(32)
        A host access takes the RAM for the cycle (``req.ready`` is low) and is ordered with
        the requests: it sees every request accepted before it.
    reads, writes, atomics : Out(32)
        Requests accepted, by kind (faulting ones included).
    faults : Out(32)
        Requests answered with ``fault``.
    reseed : In(1); seed : In(32)
        With ``runtime_seed``: ``reseed`` loads the LFSR with ``seed`` (zero: the fixed
        nonzero state); only when nothing is in flight, since it changes pending choices.
    knobs : In(Knobs(max latency))
        With ``runtime_knobs``: the settings ``reseed`` loads.
    board : Out(ScoreboardLayout(tag_bits)); idle : Out(1)
        With ``scoreboard``: the counts and checks of the ports, and whether no request is
        in flight (every one accepted has been answered, or its answer is lost).
    map_base, map_end : In(ArrayLayout(48, map_ranges))
        With ``map_ranges``: range ``r`` is ``[map_base[r], map_end[r])``; an unused one is empty.
    fault_log : Out(ArrayLayout(FaultRecord, fault_groups))
        With ``map_ranges``: the first faulting request of each tag group.
    """

    def __init__(self, size_bytes: int, base: int = 0, latency=32, reorder: bool = False,
                 seed: int = 1, backpressure: float = 0.0, slots: int = 16, tag_bits: int = 8,
                 init: bytes = b"", runtime_seed: bool = False, registered_read: bool = False,
                 idle_merge_zero: bool = False, map_ranges: int = 0, fault_groups: int = 1,
                 runtime_knobs: bool = False, scoreboard: bool = False):
        if size_bytes < LINE_BYTES or size_bytes % LINE_BYTES:
            raise ValueError(f"size_bytes must be a positive multiple of {LINE_BYTES}, got {size_bytes}")
        if base < 0 or base % LINE_BYTES or base + size_bytes > 1 << ADDR_BITS:
            raise ValueError(f"base must be a multiple of {LINE_BYTES} with the memory inside "
                             f"{ADDR_BITS} address bits, got {base:#x} + {size_bytes:#x}")
        self.lo, self.hi = latency_range(latency)
        if self.lo < 2 + registered_read:
            raise ValueError(f"ExtMemory needs latency >= {2 + registered_read} (the RAM read takes a cycle"
                             f"{', its register another' if registered_read else ''}), got {latency!r}")
        if slots < 2 or slots & (slots - 1):
            raise ValueError(f"slots must be a power of two >= 2, got {slots}")
        if not 0.0 <= backpressure < 1.0:
            raise ValueError(f"backpressure must be in [0, 1), got {backpressure}")
        if len(init) > size_bytes:
            raise ValueError(f"init has {len(init)} bytes, the memory {size_bytes}")
        self.size_bytes, self.base, self.reorder, self.slots = size_bytes, base, reorder, slots
        self.init_seed = seed & 0xFFFF_FFFF or _NONZERO_SEED
        self.runtime_seed, self.registered_read = runtime_seed, registered_read
        if runtime_knobs and not runtime_seed:
            raise ValueError("runtime_knobs needs runtime_seed: the knobs are loaded with the seed")
        self.runtime_knobs, self.scoreboard = runtime_knobs, scoreboard
        self.min_latency = 2 + registered_read
        self.idle_merge_zero = idle_merge_zero
        if fault_groups < 1 or fault_groups & (fault_groups - 1) or fault_groups > 1 << tag_bits:
            raise ValueError(f"fault_groups must be a power of two <= 2**tag_bits, got {fault_groups}")
        self.map_ranges, self.fault_groups = map_ranges, fault_groups
        self.stall_threshold = round(backpressure * 256)
        self.tag_bits = tag_bits
        init = bytes(init)
        self.init_lines = [int.from_bytes(init[i:i + LINE_BYTES], "little")
                           for i in range(0, len(init), LINE_BYTES)]
        # The RAM, one 128-byte line per row; a simulation may read it back (``ram.data``).
        self.ram = memory.Memory(shape=LINE_BITS, depth=size_bytes // LINE_BYTES, init=self.init_lines)
        super().__init__({
            "req": In(stream.Signature(MemReq(tag_bits))),
            "resp": Out(stream.Signature(MemResp(tag_bits))),
            "host_addr": In(range(size_bytes // 4)),
            "host_wdata": In(32),
            "host_we": In(1),
            "host_re": In(1),
            "host_rdata": Out(32),
            "reads": Out(32), "writes": Out(32), "atomics": Out(32), "faults": Out(32),
            **({"reseed": In(1), "seed": In(32)} if runtime_seed else {}),
            **({"knobs": In(Knobs(self.hi))} if runtime_knobs else {}),
            **({"board": Out(ScoreboardLayout(tag_bits)), "idle": Out(1)} if scoreboard else {}),
            **({"map_base": In(data.ArrayLayout(ADDR_BITS, map_ranges)),
                "map_end": In(data.ArrayLayout(ADDR_BITS, map_ranges)),
                "fault_log": Out(data.ArrayLayout(FaultRecord(tag_bits), fault_groups))} if map_ranges else {}),
        })

    def elaborate(self, platform):
        lines, slots, lo, hi = self.size_bytes // LINE_BYTES, self.slots, self.lo, self.hi
        slot_bits = (slots - 1).bit_length()
        m = Module()

        m.submodules.ram = ram = self.ram
        ram_w = ram.write_port()
        ram_r = ram.read_port(transparent_for=(ram_w,))
        m.submodules.resp_slots = resp_ram = memory.Memory(shape=_slot_layout(self.tag_bits), depth=slots, init=[])
        slot_w = resp_ram.write_port()
        slot_r = resp_ram.read_port(transparent_for=(slot_w,))

        # ---- run-time settings, loaded with the seed --------------------------------------
        if self.runtime_knobs:
            base_delay, span, reorder_on, stall = self._knob_registers(m)
        else:
            base_delay, span = Const(lo - 2, range(hi)), Const(hi - lo + 1, range(hi + 1))
            reorder_on, stall = Const(int(self.reorder)), Const(self.stall_threshold, 8)
        reorder_hw = self.reorder or self.runtime_knobs
        random_delay = hi > (self.min_latency if self.runtime_knobs else lo)

        # ---- LFSR (xorshift32), only when something is random -----------------------------
        rnd = Signal(32, init=self.init_seed)
        if reorder_hw or random_delay or self.stall_threshold:
            x1 = rnd ^ (rnd << 13)[:32]
            x2 = x1 ^ (x1 >> 17)
            m.d.sync += rnd.eq(x2 ^ (x2 << 5)[:32])
            if self.runtime_seed:
                with m.If(self.reseed):
                    m.d.sync += rnd.eq(Mux(self.seed == 0, _NONZERO_SEED, self.seed))

        # ---- response slots ---------------------------------------------------------------
        busy = Signal(slots)
        timers = Array(Signal(range(hi), name=f"timer{i}") for i in range(slots))
        ripe = Signal(slots)
        m.d.comb += ripe.eq(busy & Cat(t == 0 for t in timers))
        alloc, sel = Signal(range(slots)), Signal(range(slots))
        can_alloc, can_sel = Signal(), Signal()
        take = Signal()
        out_valid = Signal()
        out_en = ~out_valid | self.resp.ready       # the output register may load
        do_sel = out_en & can_sel
        # in order: the slots are a queue (with the reordering logic, it takes over when
        # ``reorder_on`` is low; a reseed, with nothing in flight, empties the queue)
        if not self.reorder or self.runtime_knobs:
            head, tail = Signal(range(slots)), Signal(range(slots))
            q_alloc, q_sel, q_can_alloc, q_can_sel = tail, head, ~busy.bit_select(tail, 1), ripe.bit_select(head, 1)
            with m.If(take):
                m.d.sync += tail.eq(tail + 1)
            with m.If(do_sel):
                m.d.sync += head.eq(head + 1)
            if self.runtime_knobs:
                with m.If(self.reseed):
                    m.d.sync += [head.eq(0), tail.eq(0)]
        if reorder_hw:
            free = ~busy
            r_alloc = Signal(range(slots))
            for i in reversed(range(slots)):
                with m.If(free[i]):
                    m.d.comb += r_alloc.eq(i)
            rot_by = rnd[24:24 + slot_bits]
            rot = Signal(slots)
            first = Signal(range(slots))
            m.d.comb += rot.eq((Cat(ripe, ripe) >> rot_by)[:slots])
            for i in reversed(range(slots)):
                with m.If(rot[i]):
                    m.d.comb += first.eq(i)
            r_sel = (first + rot_by)[:slot_bits]
            if self.runtime_knobs:
                m.d.comb += [alloc.eq(Mux(reorder_on, r_alloc, q_alloc)),
                             can_alloc.eq(Mux(reorder_on, free.any(), q_can_alloc)),
                             can_sel.eq(Mux(reorder_on, ripe.any(), q_can_sel)),
                             sel.eq(Mux(reorder_on, r_sel, q_sel))]
            else:
                m.d.comb += [alloc.eq(r_alloc), can_alloc.eq(free.any()), can_sel.eq(ripe.any()), sel.eq(r_sel)]
        else:
            m.d.comb += [alloc.eq(q_alloc), sel.eq(q_sel), can_alloc.eq(q_can_alloc), can_sel.eq(q_can_sel)]
        m.d.sync += busy.eq((busy | (take << alloc)[:slots]) & ~(do_sel << sel)[:slots])
        for t in timers:
            with m.If(t != 0):
                m.d.sync += t.eq(t - 1)
        delay = base_delay
        if random_delay:
            delay = delay + ((rnd[8:24] * span) >> 16)
        with m.If(take):
            m.d.sync += timers[alloc].eq(delay)
        m.d.comb += [slot_r.en.eq(out_en), slot_r.addr.eq(sel),
                     self.resp.valid.eq(out_valid), self.resp.payload.eq(slot_r.data.resp)]
        with m.If(out_en):
            m.d.sync += out_valid.eq(can_sel)

        # ---- stage A: acceptance, fault check, RAM read -----------------------------------
        p = self.req.payload
        host = self.host_we | self.host_re
        ready = can_alloc & ~host
        s_req, s_host, s_hwe = Signal(), Signal(), Signal()
        if self.registered_read:     # the line read last cycle is merged only next cycle
            ready = ready & ~s_req & ~s_hwe
        if self.stall_threshold or self.runtime_knobs:
            ready = ready & (rnd[:8] >= stall)
        m.d.comb += [self.req.ready.eq(ready), take.eq(self.req.valid & ready)]
        off = (p.addr - self.base)[:(self.size_bytes - 1).bit_length()]
        in_range = p.addr < self.base + self.size_bytes
        if self.base:                    # (a comparison with 0 would be constant: lint)
            in_range &= p.addr >= self.base
        aligned = Mux(p.kind == MemKind.ATOMIC, p.addr[:2] == 0, p.addr[:7] == 0)
        known = (p.kind.as_value() <= MemKind.ATOMIC.value) & (
            (p.kind != MemKind.ATOMIC) | (p.atomic.as_value() <= AtomicOp.CMPSWAP.value))
        fault = ~(in_range & aligned & known & self._in_map(m, p))
        m.d.comb += [ram_r.en.eq(take | host),
                     ram_r.addr.eq(Mux(host, self.host_addr[5:], off[7:]))]

        s_fault = Signal()
        s_kind, s_atomic = Signal(MemKind), Signal(AtomicOp)
        s_line, s_dword, s_slot = Signal(range(lines)), Signal(range(DWORDS)), Signal(range(slots))
        s_data, s_mask, s_tag = Signal(LINE_BITS), Signal(LINE_BYTES), Signal(self.tag_bits)
        m.d.sync += [s_req.eq(take), s_host.eq(host), s_hwe.eq(self.host_we)]
        with m.If(host):
            m.d.sync += [s_line.eq(self.host_addr[5:]), s_dword.eq(self.host_addr[:5]),
                         s_data.eq(self.host_wdata), s_fault.eq(0)]
        with m.Elif(take):
            m.d.sync += [s_kind.eq(p.kind), s_atomic.eq(p.atomic), s_line.eq(off[7:]),
                         s_dword.eq(off[2:7]), s_data.eq(p.data), s_mask.eq(p.mask), s_tag.eq(p.tag),
                         s_fault.eq(fault), s_slot.eq(alloc)]
        if self.map_ranges:
            self._log_faults(m, p, take & fault)
        counts = ((self.reads, p.kind == MemKind.READ), (self.writes, p.kind == MemKind.WRITE),
                  (self.atomics, p.kind == MemKind.ATOMIC), (self.faults, fault))
        for counter, cond in counts:
            with m.If(take & cond):
                m.d.sync += counter.eq(counter + 1)

        # ---- stage B: merge and write back, store the response -----------------------------
        # Its own fragment: it changes once per request, the slot logic above every cycle.
        b = Module()
        m.submodules.stage_b = b
        # the addressed dword, a signal of its own: the atomic ops read it a dozen times, and
        # each use of an expression is its own 1,024-bit shift in the Verilog
        line, old = ram_r.data, Signal(32)
        b.d.comb += old.eq(ram_r.data.word_select(s_dword, 32))
        m.d.comb += self.host_rdata.eq(old)
        if self.registered_read:     # stage B's fields, the line and its dword, one cycle later
            stage = [s_req, s_hwe, s_fault, s_kind, s_atomic, s_line, s_dword, s_slot, s_data, s_mask, s_tag]
            delayed = [Signal.like(x, name_suffix="_q") for x in stage]
            line_q, old_q = Signal(LINE_BITS), Signal(32)
            b.d.sync += [line_q.eq(line), old_q.eq(old), *[q.eq(x) for q, x in zip(delayed, stage)]]
            line, old = line_q, old_q
            s_req, s_hwe, s_fault, s_kind, s_atomic, s_line, s_dword, s_slot, s_data, s_mask, s_tag = delayed
            s_host = s_hwe   # only a host write reaches the merge: a host read is answered above
        new, dword_sel = Signal(32), Signal(DWORDS)
        byte_mask = Cat(bit.replicate(8) for bit in s_mask)
        dword_mask = Cat(bit.replicate(32) for bit in dword_sel)
        is_write = s_req & (s_kind == MemKind.WRITE)
        merged = Mux(is_write, (line & ~byte_mask) | (s_data & byte_mask),
                     (line & ~dword_mask) | (new.replicate(DWORDS) & dword_mask))
        writes = Mux(s_req, ~s_fault & ((s_kind == MemKind.WRITE) | (s_kind == MemKind.ATOMIC)), s_hwe)
        data = Mux(s_fault, 0, Mux(s_kind == MemKind.READ, line, Mux(s_kind == MemKind.ATOMIC, old, 0)))
        statements = [
            new.eq(Mux(s_host, s_data[:32], atomic_result(s_atomic, old, s_data[:32], s_data[32:64]))),
            dword_sel.eq(Const(1, 1) << s_dword),
            ram_w.addr.eq(s_line), ram_w.data.eq(merged), ram_w.en.eq(writes),
            slot_w.addr.eq(s_slot), slot_w.en.eq(s_req),
            slot_w.data.resp.tag.eq(s_tag), slot_w.data.resp.data.eq(data), slot_w.data.resp.fault.eq(s_fault),
            slot_w.data.kind.eq(s_kind),
        ]
        if self.idle_merge_zero:     # nothing is written or stored in other cycles
            with b.If(s_req | s_hwe):
                b.d.comb += statements
        else:
            b.d.comb += statements
        if self.scoreboard:
            m.submodules.scoreboard = sb = Scoreboard(self.tag_bits)
            m.d.comb += [sb.req_fire.eq(take), sb.req_kind.eq(p.kind), sb.req_tag.eq(p.tag),
                         sb.resp_fire.eq(self.resp.valid & self.resp.ready),
                         sb.resp_kind.eq(slot_r.data.kind), sb.resp_tag.eq(self.resp.payload.tag),
                         self.board.eq(sb.board), self.idle.eq(~busy.any() & ~out_valid)]
        return m

    def _knob_registers(self, m: Module):
        """The settings ``reseed`` loads from ``knobs``: the smallest extra delay (cycles beyond
        the pipeline's two), the number of latencies to draw from, whether to reorder, and the
        back-pressure threshold. Their reset values are the elaboration's settings."""
        lo_min, hi = self.min_latency, self.hi
        base_delay = Signal(range(hi), init=self.lo - 2)
        span = Signal(range(hi + 1), init=self.hi - self.lo + 1)
        reorder_on = Signal(init=int(self.reorder))
        stall = Signal(8, init=self.stall_threshold)
        k = self.knobs
        k_lo, k_hi = Signal(range(hi + 1)), Signal(range(hi + 1))
        m.d.comb += [k_lo.eq(Mux(k.latency_lo < lo_min, lo_min, Mux(k.latency_lo > hi, hi, k.latency_lo))),
                     k_hi.eq(Mux(k.latency_hi < k_lo, k_lo, Mux(k.latency_hi > hi, hi, k.latency_hi)))]
        with m.If(self.reseed):
            m.d.sync += [base_delay.eq(k_lo - 2), span.eq(k_hi - k_lo + 1),
                         reorder_on.eq(k.reorder), stall.eq(k.backpressure)]
        return base_delay, span, reorder_on, stall

    def _in_map(self, m: Module, p):
        """Whether request ``p`` stays inside the buffer map (1 without a map): the bytes of its
        line inside each range, as a mask, ORed over the ranges and compared with what it touches."""
        if not self.map_ranges:
            return Const(1)
        line = Cat(Const(0, 7), p.addr[7:])
        full = Const((1 << LINE_BYTES) - 1, LINE_BYTES + 1)
        masks = []
        for r in range(self.map_ranges):
            lo, hi = self.map_base[r], self.map_end[r]
            first = Signal(range(LINE_BYTES + 1), name=f"map{r}_first")
            last = Signal(range(LINE_BYTES + 1), name=f"map{r}_last")
            m.d.comb += [first.eq(Mux(lo > line, lo - line, 0)),
                         last.eq(Mux(hi < line + LINE_BYTES, hi - line, LINE_BYTES))]
            overlap = (lo < line + LINE_BYTES) & (hi > line)
            masks.append(Mux(overlap, ((full << first) & full & ~(full << last))[:LINE_BYTES], 0))
        mapped = Signal(LINE_BYTES)
        m.d.comb += mapped.eq(reduce(or_, masks))
        dword = (Const(0xF, LINE_BYTES) << Cat(Const(0, 2), p.addr[2:7]))[:LINE_BYTES]
        return Mux(p.kind == MemKind.READ, mapped.any(),
                   Mux(p.kind == MemKind.WRITE, (p.mask & ~mapped) == 0, (dword & ~mapped) == 0))

    def _log_faults(self, m: Module, p, faulting):
        """The first faulting request of each tag group into ``fault_log``; ``reseed`` clears it."""
        shift = self.tag_bits - (self.fault_groups - 1).bit_length()
        for g in range(self.fault_groups):
            rec = self.fault_log[g]
            with m.If(faulting & ~rec.valid & ((p.tag >> shift) == g if self.fault_groups > 1 else 1)):
                m.d.sync += [rec.valid.eq(1), rec.kind.eq(p.kind), rec.addr.eq(p.addr), rec.mask.eq(p.mask),
                             rec.tag.eq(p.tag)]
            if self.runtime_seed:
                with m.If(self.reseed):
                    m.d.sync += rec.valid.eq(0)
