"""The vector memory path of one compute unit: coalescer, L0 vector cache, return queues.

``VecMemUnit`` serves the global loads, stores, atomics, ``global_inv`` and ``global_wb`` of
the CU's SIMDs (docs/memory.md, "Vector memory path"):

* **Accept.** One instruction per cycle, round robin between the SIMDs, into a free entry of
  the instruction table (``entries``); it then waits only for its own data.
* **Coalescer.** Splits the instruction into one request per distinct 128-byte line of each
  group of ``config.coalesce_lanes`` lanes (32: the whole wave), lines in the order of the
  lowest lane touching them (a lane's access of 1 to 16 bytes may straddle two lines), or one
  request per active lane for atomics. A lane outside the aperture, or with a buffer map
  whose bytes ``[addr, addr + size)`` are not all inside one of its ranges (or an atomic
  not 4-byte aligned) is dropped and reported on ``error``.
* **L0 pipeline** (stages S0, S1, S2; one operation per cycle, never stalls: S0 takes a
  request only when the miss register, parked-line slot, write slot and memory-queue entry it
  may need in S1 are free): S0 picks, in this priority, a READ response or a returning atomic's
  old value, a replay of a missed line whose data has returned, or the coalescer's next
  request, and reads the tags (WRITE and non-returning ATOMIC acknowledgements retire their
  request beside the pipeline); S1 compares the tags and acts: a load hit reads the
  line, a load miss merges into the miss already in flight for that line or allocates one of
  ``mshrs`` miss registers and sends a READ, and parks until the line returns (``waits`` slots);
  a store writes through (a masked line WRITE) and updates the line if present (no allocation);
  an atomic goes to memory as one ATOMIC per lane, in lane order, and drops the line; a returned
  line is installed (unless a later store, atomic or ``global_inv`` made it stale). S2 places
  the bytes of the request's lanes (one group's) into the instruction's result buffer.
* **Return queues.** An instruction retires when all its requests are answered (stores and
  atomics when memory acknowledges them), in issue order per wave and counter (loads with
  loads, stores with stores; ``config.return_order == "per_wave"``) or in the CU's issue order
  (``"in_order"``), one response beat per cycle on each SIMD's port: per destination register
  in order, its lane groups of ``config.resp_lanes`` lanes in order (32, the whole wave; with
  the banked register file a SIMD's lane group, 4 lanes on ``fpga``: a beat reads one row of the
  result buffer and extends narrow loads for its lanes only, and the SIMDs share the buffer's
  one read port, taking turns); one beat for an instruction without a destination register.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Shape, Signal, Value, signed
from amaranth.lib import data, enum, fifo, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from .atomic import ATOMIC_OF, AtomicOp
from ..bitops import rr_grant
from ..config import DCUConfig
from ..isa_tables import OpId, info_of, ops_of, rtl_memory_op
from .l0 import LINE_BITS, L0Array, lowest_one, onehot_index, or_tree
from .memport import ADDR_BITS, CLIENT_TAG_BITS, LINE_BYTES, MemKind, MemReq, MemResp
from ..layouts import SEQ, ReqRow, VecMemReq, VecMemResp

__all__ = ["VecMemUnit", "OpKind", "Ext", "ErrorCause", "ErrorLayout", "COUNTERS", "CountersLayout", "op_table"]

LANES = 32
LINE_DATA = 8 * LINE_BYTES
GROUP = 8                      # most lanes per result-buffer memory (8 lanes x 16 bytes = one 1,024-bit word)


class OpKind(enum.Enum, shape=3):
    NONE = 0        # not a vector memory instruction: reported, answered without effect
    LOAD = 1
    STORE = 2
    ATOMIC = 3
    INV = 4
    WB = 5


class Ext(enum.Enum, shape=3):
    """How a load's first dword is extended: RAW (32 bits and wider), U8, I8, U16, I16."""
    RAW = 0
    U8 = 1
    I8 = 2
    U16 = 3
    I16 = 4


class ErrorCause(enum.Enum, shape=3):
    NONE = 0
    APERTURE = 1      # a lane's access is not inside [aperture_base, aperture_base + aperture_size),
                      # or, with a buffer map, inside no range of it
    MISALIGNED = 2    # an atomic whose address is not 4-byte aligned
    MEMORY = 3        # the memory answered with ``fault``
    OPCODE = 4        # the request's op is not a global memory instruction


def ErrorLayout(config: DCUConfig):
    """The latched first error: ``seq`` is set for the instruction-level causes (APERTURE,
    MISALIGNED, OPCODE); ``addr`` is the lane's byte address, or for MEMORY the request's;
    ``kind`` and ``size`` (bytes per lane) are the faulting lane's access (APERTURE,
    MISALIGNED; NONE otherwise)."""
    return data.StructLayout({"valid": 1, "cause": ErrorCause, "simd": range(config.simds_per_cu),
                              "wave": range(config.wave_ids), "seq": SEQ, "lane": 5, "addr": 64,
                              "kind": OpKind, "size": range(17)})


COUNTERS = ("instructions", "lines", "hits", "misses", "atomics", "rq_occupancy", "rq_max", "rq_sum")
#: instructions accepted; line requests after coalescing (loads and stores); L0 load hits and
#: misses (per line); atomic lane requests; instruction-table occupancy now, its maximum, and
#: its sum over cycles (mean = rq_sum / cycles).
CountersLayout = data.StructLayout({name: 32 for name in COUNTERS})


def rtl_ops(kind: str) -> list:
    """The OpIds of one kind of global memory instruction that the unit executes."""
    return [op for op in ops_of(kind) if rtl_memory_op(info_of(op))]


def op_table() -> dict:
    """``{OpId: (OpKind, bytes per lane, Ext, result dwords, AtomicOp or None)}`` for every
    global memory instruction, from the ISA tables."""
    table = {}
    for op in rtl_ops("vmem_load"):
        info = info_of(op)
        ext = Ext[op.name.rsplit("_", 1)[1]] if op.name.rsplit("_", 1)[1] in Ext.__members__ else Ext.RAW
        table[op] = (OpKind.LOAD, info.data_bits // 8, ext, max(1, info.dst_bits // 32), None)
    for op in rtl_ops("vmem_store"):
        table[op] = (OpKind.STORE, info_of(op).data_bits // 8, Ext.RAW, 0, None)
    for op in rtl_ops("vmem_atomic"):
        table[op] = (OpKind.ATOMIC, 4, Ext.RAW, 1, ATOMIC_OF[op])
    table[OpId.GLOBAL_INV] = (OpKind.INV, 0, Ext.RAW, 0, None)
    table[OpId.GLOBAL_WB] = (OpKind.WB, 0, Ext.RAW, 0, None)
    return table


class Src(enum.Enum, shape=2):
    """Where a pipeline operation came from."""
    COAL = 0        # the coalescer: a line (load/store), a lane (atomic), global_inv or global_wb
    FILL = 1        # a READ response: the line of a miss register
    ACK = 2         # a WRITE or ATOMIC response
    REPLAY = 3      # a parked load line whose miss register has its data


def _sum_tree(values):
    while len(values) > 1:
        values = [values[i] + values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def _rep(value, n):
    return Cat(*([value] * n))


def at_or_after(j: int, r):
    """``j >= r`` for a byte ``j`` of 16 (true for the last: no comparison with a constant result)."""
    return Const(1) if j == 15 else Const(j, 4) >= r


def rotate_bytes(m, x, r, *, left: bool, name: str):
    """``x`` rotated by ``r`` bytes (a Value): one 2-way select per bit and bit of ``r``, each
    step a signal (an expression of the last would name it twice, and so on)."""
    for k in range(len(r)):
        step = Signal(len(x), name=f"{name}_rot{k}")
        m.d.comb += step.eq(Mux(r[k], x.rotate_left(8 << k) if left else x.rotate_right(8 << k), x))
        x = step
    return x


class VecMemUnit(wiring.Component):
    """The vector memory path of one CU (its SIMDs' ``vmem`` ports, its L0, its memory port).

    Parameters
    ----------
    config : DCUConfig
        ``simds_per_cu``, ``wave_slots``, the L0 geometry, ``l0_hit_latency`` and ``return_order``.
    entries : int
        Instructions in flight (accepted and not yet retired); each has a result buffer of
        32 lanes x 16 bytes.
    mshrs : int
        Line misses in flight (READ tags ``0 .. mshrs-1``).
    waits : int
        Load line requests parked on a miss.
    write_slots : int
        WRITEs and ATOMICs in flight (tags ``mshrs .. mshrs+write_slots-1``); ``mshrs +
        write_slots`` must fit the ``CLIENT_TAG_BITS`` tag.
    mem_queue : int
        Requests queued for the memory port (registers; 3 sustain one request per cycle).
    map_ranges : int
        Hold a buffer map of this many ranges (``map_base``, ``map_end``): a lane whose bytes
        are not all inside one range faults, as in the model (``sim.memory``); 0: none.

    Members
    -------
    req : In(stream.Signature(VecMemReq)).array(simds_per_cu)
        Requests of each SIMD of the CU (index = SIMD within the CU).
    req_row : Out(ReqRow).array(simds_per_cu)
        The row of the request whose lanes ``req`` is to carry (``config.request_in_rows``):
        the row of the group being split, combinationally from registers.
    resp : Out(stream.Signature(VecMemResp)).array(simds_per_cu)
        Responses: per destination register in order, one beat per lane group
        (``config.resp_lanes`` lanes, ``grp`` 0 .. 32 / resp_lanes - 1 in order; ``mask`` the
        group's lanes of EXEC less the faulting ones), ``last`` on the final one; every group is
        sent, also with an empty ``mask``. Stores, non-returning atomics and ``global_wb`` answer
        one beat (group 0) with ``store``; ``global_inv`` one beat without data.
    mem : Out(stream.Signature(MemReq()))
        This CU's requests to the memory (128-byte line READs, masked line WRITEs, ATOMICs).
    mem_resp : In(stream.Signature(MemResp()))
        Memory responses, any order, matched by tag; taken at once, except that a READ
        response waits while the lines parked on the previous one replay (a few cycles).
    aperture_base, aperture_size : In(48)
        The global memory the dispatch may touch.
    map_base, map_end : In(ArrayLayout(48, map_ranges))
        With ``map_ranges``: range ``r`` is ``[map_base[r], map_end[r])``; an unused one is
        empty. Held still while the unit works (a host sets it before a dispatch).
    error : Out(ErrorLayout)
        The first error, latched (``valid``): cause, SIMD, wave, seq, lane and byte address. The
        faulting lane is left out of memory and of the response mask; the instruction completes.
    counters : Out(CountersLayout)
        Performance counters (see ``COUNTERS``).
    """

    def __init__(self, config: DCUConfig, *, entries: int = 16, mshrs: int = 8, waits: int = 16,
                 write_slots: int = 32, mem_queue: int = 3, map_ranges: int = 0):
        if mshrs + write_slots > 1 << CLIENT_TAG_BITS:
            raise ValueError(f"mshrs ({mshrs}) + write_slots ({write_slots}) must fit {CLIENT_TAG_BITS} tag bits")
        if config.l0_line != LINE_BYTES:
            raise ValueError(f"the L0 line must be the memory port's {LINE_BYTES} bytes, got {config.l0_line}")
        if min(entries, mshrs, waits, write_slots, mem_queue) < 2:
            raise ValueError("entries, mshrs, waits, write_slots and mem_queue must be at least 2")
        self.config = config
        (self.entries, self.mshrs, self.waits,
         self.write_slots, self.mem_queue) = entries, mshrs, waits, write_slots, mem_queue
        self.map_ranges = map_ranges
        S = config.simds_per_cu
        super().__init__({
            "req": In(stream.Signature(VecMemReq(config))).array(S),
            "req_row": Out(ReqRow(config)).array(S),
            "resp": Out(stream.Signature(VecMemResp(config))).array(S),
            "mem": Out(stream.Signature(MemReq())),
            "mem_resp": In(stream.Signature(MemResp())),
            "aperture_base": In(ADDR_BITS),
            "aperture_size": In(ADDR_BITS),
            **({"map_base": In(data.ArrayLayout(ADDR_BITS, map_ranges)),
                "map_end": In(data.ArrayLayout(ADDR_BITS, map_ranges))} if map_ranges else {}),
            "error": Out(ErrorLayout(config)),
            "counters": Out(CountersLayout),
        })

    def _outside_map(self, f, addrs, size, lanes: int) -> list:
        """Per lane of ``addrs`` (64 bits each): its ``size`` bytes are inside no range of the
        buffer map (constant 0 without a map). ``addr + size <= end`` as ``addr <= end -
        size``: one subtraction per range for the instruction, two compares per lane and range
        (an empty range, or one shorter than the access, holds no lane)."""
        if not self.map_ranges:
            return [Const(0)] * lanes
        last = [Signal(signed(ADDR_BITS + 2), name=f"map{r}_last") for r in range(self.map_ranges)]
        f.d.comb += [last[r].eq(self.map_end[r] - size) for r in range(self.map_ranges)]
        out = []
        for i in range(lanes):
            a = addrs[64 * i:64 * i + 64]
            low = a[:ADDR_BITS]
            inside = or_tree([(low >= self.map_base[r]) & (low <= last[r]) for r in range(self.map_ranges)])
            out.append(a[ADDR_BITS:].any() | ~inside)
        return out

    # ------------------------------------------------------------------------------------
    def elaborate(self, platform):
        cfg = self.config
        S, WID = cfg.simds_per_cu, cfg.wave_ids
        G, NG = cfg.coalesce_lanes, LANES // cfg.coalesce_lanes   # lanes per group, groups
        GS = (G - 1).bit_length()                                  # lane = group << GS | lane in group
        R, NR = cfg.resp_lanes, LANES // cfg.resp_lanes            # lanes per response beat, beats per register
        RB, GB = (R - 1).bit_length(), (NR - 1).bit_length()       # lane = response group << RB | lane in it
        RL, NM = min(GROUP, R), max(1, R // GROUP)                 # a result row: NM memories of RL lanes
        RLB = (RL - 1).bit_length()
        E, M, P, WS, Q = self.entries, self.mshrs, self.waits, self.write_slots, self.mem_queue
        m = Module()

        def frag(name):
            # The simulator re-evaluates a fragment whenever one of its inputs changes: each
            # wide datapath gets its own, fed by registers or by the fragment before it.
            sub = Module()
            m.submodules[name] = sub
            return sub

        def bit(n, i):
            return Const(1, n) << i

        # a load line's lanes: their group, and per lane of the group its offset and whether
        # this is its first (h1) or second (h2) line
        Gather = data.StructLayout({"entry": range(E), "offs": 7 * G, "h1": G, "h2": G, "size": range(17),
                                    **({"grp": range(NG)} if NG > 1 else {})})
        Meta = data.StructLayout({"wave": range(WID), "seq": SEQ, "vdst": 8, "beats": range(5), "write": 1,
                                  "store": 1, "ext": Ext, "mask": 32})
        Slot = data.StructLayout({"entry": range(E), "lane": 5, "atomic": 1, "returns": 1, "addr": ADDR_BITS})
        S1Ctl = data.StructLayout({"valid": 1, "src": Src, "kind": OpKind, "entry": range(E), "lane": 5,
                                   "line": LINE_BITS, "mshr": range(M), "wait": range(P), "wslot": range(WS),
                                   "fault": 1, "returns": 1, "aop": AtomicOp})
        S2Ctl = data.StructLayout({"valid": 1, "write": 1, "aret": 1, "entry": range(E), "lane": 5, "replay": 1})

        # ---- storage ----------------------------------------------------------------------
        m.submodules.l0 = l0 = L0Array(cfg)
        m.submodules.meta = meta_mem = memory.Memory(shape=Meta, depth=E, init=[])
        meta_w = meta_mem.write_port()
        meta_r = [meta_mem.read_port() for _ in range(S)]
        # result buffers: row Cat(response group, entry) holds the group's lanes, 16 bytes each,
        # lanes RL j .. RL j + RL - 1 of it in memory j, so that a response beat reads one row
        rbuf_w, rbuf_r = [], []
        for j in range(NM):
            m.submodules[f"rbuf{j}"] = rb = memory.Memory(shape=16 * 8 * RL, depth=E * NR, init=[])
            rbuf_w.append(rb.write_port(granularity=8))
            rbuf_r.append([rb.read_port() for _ in range(S if NR == 1 else 1)])   # see "retire"
        m.submodules.waitq = wait_mem = memory.Memory(shape=Gather, depth=P, init=[])
        wait_w, wait_r = wait_mem.write_port(), wait_mem.read_port()
        m.submodules.wslots = slot_mem = memory.Memory(shape=Slot, depth=WS, init=[])
        slot_w, slot_r = slot_mem.write_port(), slot_mem.read_port()

        # ---- state ----------------------------------------------------------------------
        # Per-entry and per-register fields are packed into one signal each (``field``): the
        # simulator's cost grows with the number of signals a process drives.
        def width(shape):
            return Shape.cast(shape).width

        def field(packed, i, w):
            return packed[i * w:(i + 1) * w] if isinstance(i, int) else packed.word_select(i, w)

        SB, WB, PB, EB, MB, CB, WSB = (width(range(S)), width(range(WID)), width(range(2 * LANES + 1)), width(range(E)),
                                       width(range(M)), width(range(P + 1)), width(range(WS)))
        valid, issuing = Signal(E), Signal(E)                  # instruction table
        ent_simd, ent_wave = Signal(E * SB), Signal(E * WB)
        ent_store = Signal(E)                                  # retires on storecnt (else loadcnt)
        pending = Signal(E * PB)                               # per entry: requests issued and not answered
        older = Signal(E * E)                                  # per entry: the entries that must retire first
        gate = cfg.l0_hit_latency > 5 + cfg.coalesce_stage    # the pipeline alone answers in 5 cycles (6 staged)
        ripe = Signal(E, init=0 if gate else (1 << E) - 1)
        m_alloc, m_stale = Signal(M), Signal(M)                # miss registers
        m_line, m_entry, m_lane = Signal(M * LINE_BITS), Signal(M * EB), Signal(M * 5)
        m_count = Signal(M * CB)                               # parked lines waiting on each
        # The line of the last READ response, kept while the lines parked on its miss register
        # replay (one response at a time: the next waits until they are done).
        fbuf, f_busy, f_mshr = Signal(LINE_DATA), Signal(), Signal(range(M))
        w_valid, w_mshr = Signal(P), Signal(P * MB)
        ws_valid, ws_ret = Signal(WS), Signal(WS)              # write slots; those of returning atomics
        a1_valid, a1_fault, a1_slot = Signal(), Signal(), Signal(range(WS))   # an acknowledgement beside the pipeline
        # requests to memory: a FIFO in a memory (LUT RAM on an FPGA; as registers it was Q x 1,212
        # flip-flops and a multiplexer per bit and entry)
        m.submodules.mem_queue = queue = fifo.SyncFIFO(width=MemReq().size, depth=Q)
        q_n, q_in = queue.level, data.View(MemReq(), queue.w_data)
        err = Signal(ErrorLayout(cfg))

        c_valid, c_fresh = Signal(), Signal()                   # coalescer: the instruction being split
        c_simd, c_entry = Signal(range(S)), Signal(range(E))
        c_req = Signal(VecMemReq(cfg))
        if cfg.coalesce_in_place:   # the SIMD's request register, handed back when the split is done
            # selected once: each field read straight from the Array multiplexed the whole
            # request again (386 copies in the fpga Verilog, Verilator's V3MergeCond stalled)
            m.d.comb += c_req.eq(Array(r.payload for r in self.req)[c_simd])
        # otherwise a copy: the SIMD's register is free once the unit accepts
        c_kind, c_size, c_ext, c_beats, c_aop = (Signal(OpKind), Signal(range(17)), Signal(Ext), Signal(range(5)),
                                                 Signal(AtomicOp))
        done1, done2 = Signal(G), Signal(G)                     # the group's lanes whose first / second line is issued

        s1 = Signal(S1Ctl)
        s1_g, s1_data, s1_mask, s1_aaddr = Signal(Gather), Signal(LINE_DATA), Signal(LINE_BYTES), Signal(ADDR_BITS)
        s2 = Signal(S2Ctl)
        s2_g, s2_aval = Signal(Gather), Signal(32)

        # ---- the group being split: its lane fields ------------------------------------------
        # The coalescer works on one group of G lanes at a time, the groups with EXEC lanes in
        # order; it reads only that group's addresses and data. Its lanes' lines, straddles and
        # faults are computed for the group alone (4 aperture compares on ``fpga``, not 32), so
        # a fault is found when its group is reached: the instruction's lowest faulting lane is
        # in the first group with one, and the response mask is written when the split ends.
        c_grp = Signal(range(NG)) if NG > 1 else Const(0, 1)   # the group being split

        def exec_groups(exec_mask):
            """The groups with EXEC lanes, a bit each."""
            return Cat(*[exec_mask[G * k:G * (k + 1)].any() for k in range(NG)])

        # the instruction's EXEC mask: in place, a copy taken at acceptance, since the SIMD's
        # request (one signal in the Verilog) carries the row that the next group names
        # (Verilator would see a combinational loop through it)
        c_exec = Signal(LANES) if cfg.coalesce_in_place else c_req.exec
        c_fault = Signal(LANES)                                 # faulting lanes of the groups before it (NG > 1)
        g_fresh = Signal()                                      # the group's first cycle
        g_done = Signal()                                      # the group's last request leaves, or it has none
        is_ls = (c_kind == OpKind.LOAD) | (c_kind == OpKind.STORE)
        is_mem = is_ls | (c_kind == OpKind.ATOMIC)
        # the next group with EXEC lanes, if any (none for global_inv, global_wb and bad
        # opcodes: they have no lanes to split)
        has_nxt = Const(0)
        if NG > 1:
            nxt, has_nxt = Signal(range(NG)), Signal()
            f = frag("coal_next")
            later = exec_groups(c_exec) & ~((Const(2, NG + 1) << c_grp) - 1)[:NG]
            f.d.comb += [nxt.eq(onehot_index(lowest_one(later))), has_nxt.eq(is_mem & later.any())]
        # With ``coalesce_stage`` the lane fields are computed a cycle ahead into registers: the
        # first group's in the cycle after acceptance (``loading``, no request then), the next
        # group's while the current one is split; otherwise in the cycle the group is split.
        staged = cfg.coalesce_stage
        loading = c_fresh if staged else Const(0)
        l_grp = Mux(c_fresh, c_grp, nxt) if staged and NG > 1 else c_grp   # the group read
        # the group is in row l_grp / SUBS of the request, at position l_grp % SUBS
        SUBS = cfg.request_lanes // G
        sub = l_grp[:exact_log2(SUBS)]
        l_addr = c_req.addr.word_select(sub, 64 * G) if SUBS > 1 else c_req.addr
        l_data = c_req.data.word_select(sub, 128 * G) if SUBS > 1 else c_req.data
        if cfg.request_rows > 1:
            m.d.comb += [r.eq(l_grp[exact_log2(SUBS):]) for r in self.req_row]
        l_exec = c_exec.word_select(l_grp, G) if NG > 1 else c_exec
        fields = dict(first=G * LINE_BITS, straddle=G, fault=G, misal=G, active=G, offs=7 * G)
        if staged:   # a lane's second line too: no adder between the registers and the line compares
            fields.update(second=G * LINE_BITS, addr=64 * G, data=128 * G, one=1)
            # and, for each pair of the group's lanes (i, j), whether lane i's first or second
            # line is lane j's first or second (``same``: four G x G matrices, row i), and whether
            # their bytes there overlap (``over``, for stores): so the coalescer finds the
            # request's lanes by the leader's row, not by comparing lines after picking it
            fields.update(same=4 * G * G, over=4 * G * G)
        lf = {k: Signal(w, name=f"l_{k}") for k, w in fields.items()}
        f = frag("lanes")
        # a + size > base + aperture_size as a > top: one subtraction for the wave, not an
        # adder per lane (top < 0, an aperture smaller than the access, faults every lane)
        top = Signal(signed(ADDR_BITS + 3))
        f.d.comb += top.eq(self.aperture_base + self.aperture_size - c_size)
        outside = self._outside_map(f, l_addr, c_size, G)
        first, cross, bad, mis = [], [], [], []
        for i in range(G):
            a = l_addr[64 * i:64 * i + 64]
            first.append(a[7:ADDR_BITS])
            cross.append((a[:7] + c_size - 1)[7])       # its last byte (of 1 to 16) in the next line
            mis.append((c_kind == OpKind.ATOMIC) & a[:2].any())
            bad.append((a < self.aperture_base) | (a > top) | mis[-1] | outside[i])
        with f.If(c_valid):         # idle logic held at 0: a compiled simulator skips it (docs/toolflow.md)
            f.d.comb += [lf["first"].eq(Cat(*first)), lf["misal"].eq(Cat(*mis)),
                         lf["straddle"].eq(Mux(is_ls, Cat(*cross), 0)),
                         lf["offs"].eq(Cat(*[l_addr[64 * i:64 * i + 7] for i in range(G)])),
                         lf["fault"].eq(Mux(is_mem, l_exec & Cat(*bad), 0)),
                         lf["active"].eq(Mux(is_mem, l_exec & ~Cat(*bad), 0))]
            if staged:
                f.d.comb += [lf["second"].eq(Cat(*[(x + 1)[:LINE_BITS] for x in first])), lf["addr"].eq(l_addr),
                             lf["data"].eq(l_data)]
        if staged:
            # whether the group goes out in one request: its active lanes are in one line, none
            # straddles, a store's lanes write no byte twice, an atomic has one lane. Known a
            # cycle ahead, it tells the coalescer that a group's first request is its last
            # before the request's lanes are found (below, ``co_end``)
            act, lo = lf["active"], [lf["offs"][7 * i:7 * i + 7] for i in range(G)]
            lane_lines = [lf["first"][LINE_BITS * i:LINE_BITS * (i + 1)] for i in range(G)]
            apart = [act[i] & act[j] & ((c_kind == OpKind.ATOMIC) | (lane_lines[i] != lane_lines[j]) |
                                        (c_kind == OpKind.STORE) & (lo[i] < lo[j] + c_size) & (lo[j] < lo[i] + c_size))
                     for i in range(G) for j in range(i + 1, G)]
            f = frag("lanes_one")
            with f.If(c_valid):
                f.d.comb += lf["one"].eq(~(act & lf["straddle"]).any() & ~Cat(0, *apart).any())
            f = frag("lanes_pairs")
            # lines: a second line is the first + 1, so two lanes' second lines are equal when
            # their first are; ``after[i][j]``: lane i's first line is lane j's second
            first_l, second_l = ([lf[k][LINE_BITS * i:LINE_BITS * (i + 1)] for i in range(G)]
                                 for k in ("first", "second"))
            eq = {(i, j): first_l[i] == first_l[j] for i in range(G) for j in range(i + 1, G)}
            after = {(i, j): first_l[i] == second_l[j] for i in range(G) for j in range(G) if i != j}
            same = (lambda i, j: Const(1) if i == j else eq[min(i, j), max(i, j)],       # first, first
                    lambda i, j: Const(0) if i == j else after[i, j],                    # first, second
                    lambda i, j: Const(0) if i == j else after[j, i],                    # second, first
                    lambda i, j: Const(1) if i == j else eq[min(i, j), max(i, j)])       # second, second
            # a lane's bytes in its first line are [o, o + size), in its second [0, o + size - 128)
            end = [lo[i] + c_size for i in range(G)]
            part_over = (lambda i, j: (lo[i] < end[j]) & (lo[j] < end[i]),          # first, first
                         lambda i, j: lo[i] + LINE_BYTES < end[j],                   # first, second
                         lambda i, j: lo[j] + LINE_BYTES < end[i],                   # second, first
                         lambda i, j: Const(1))                                      # second, second
            with f.If(c_valid):
                for k in range(4):
                    f.d.comb += [lf["same"][G * G * k:G * G * (k + 1)].eq(Cat(*[
                                    same[k](i, j) for i in range(G) for j in range(G)])),
                                 lf["over"][G * G * k:G * G * (k + 1)].eq(Cat(*[
                                    part_over[k](i, j) for i in range(G) for j in range(G)]))]
            gf = {k: Signal(w, name=f"g_{k}") for k, w in fields.items()}
            g_load = Signal()                                   # the registers take the group read
            m.d.comb += g_load.eq(c_fresh | g_done & has_nxt)
            with m.If(g_load):
                m.d.sync += [gf[k].eq(lf[k]) for k in fields]
            g_addr, g_data = gf["addr"], gf["data"]
        else:
            gf = lf
            g_addr, g_data = l_addr, l_data
        g_first, straddle, fault, misal, active, g_offs = (gf[k] for k in ("first", "straddle", "fault", "misal",
                                                                           "active", "offs"))

        # ---- coalescer: the next request ---------------------------------------------------
        rem1, rem2 = Signal(G), Signal(G)                      # lanes whose first / second line is not issued
        f = frag("coal_rem")
        f.d.comb += [rem1.eq(active & ~done1), rem2.eq(active & straddle & ~done2)]
        p_oh, p_lig, p_use1, p_line = Signal(G), Signal(max(1, GS)), Signal(), Signal(LINE_BITS)
        f = frag("coal_lane")                                  # the lowest lane still to issue
        f.d.comb += [p_oh.eq(lowest_one(rem1 | rem2)), p_lig.eq(onehot_index(lowest_one(rem1 | rem2))),
                     p_use1.eq((rem1 & lowest_one(rem1 | rem2)).any())]
        lig = p_lig[:GS]                                       # ... as a lane of the group (no bits if G is 1)
        p_lane = Cat(lig, c_grp) if NG > 1 else p_lig          # ... as a lane of the wave
        f = frag("coal_line")                                  # ... and the line it needs next
        with f.If(c_valid):
            if staged:
                f.d.comb += p_line.eq(Mux(p_use1, g_first, gf["second"]).word_select(lig, LINE_BITS))
            else:
                f.d.comb += p_line.eq(g_first.word_select(lig, LINE_BITS) + ~p_use1)
        # lanes of the group whose first / second line is p_line (a second line is the first + 1)
        h1, h2 = Signal(G), Signal(G)
        f = frag("coal_hits")

        def pair_row(matrix, x, y):
            """Row of the leader (``p_oh``) of pair matrix ``(x, y)`` (x: 0 its first line, 1
            its second; y the same for the other lane): one bit per lane of the group."""
            k = 2 * x + y
            rows = [matrix[G * G * k + G * i:G * G * k + G * (i + 1)] for i in range(G)]
            return or_tree([Mux(p_oh[i], r, 0) for i, r in enumerate(rows)])
        with f.If(c_valid):
            if staged:   # the leader's row of the registered line matrices: its line is p_line
                at1 = Mux(p_use1, pair_row(gf["same"], 0, 0), pair_row(gf["same"], 1, 0))
                at2 = Mux(p_use1, pair_row(gf["same"], 0, 1), pair_row(gf["same"], 1, 1))
            else:
                g_lines = [g_first[LINE_BITS * i:LINE_BITS * (i + 1)] for i in range(G)]
                at1 = Cat(*[x == p_line for x in g_lines])
                at2 = Cat(*[x == (p_line - 1)[:LINE_BITS] for x in g_lines])
            f.d.comb += [h1.eq(Mux(c_kind == OpKind.ATOMIC, p_oh, at1 & rem1)), h2.eq(at2 & rem2)]

        # Two lanes of one store that write the same byte: the later lane must win, so such a
        # line is written one lane at a time. Found as a byte of a lane that an earlier lane
        # writes too: ANDs and ORs (the masks' sum, 128-bit carry chains, was on the unit's
        # critical path on the ECP5).
        overlap = Signal()
        f = frag("coal_overlap")
        if staged and G > 1:   # from the registered pair bits: two of the request's lanes overlap
            ov = gf["over"]
            hs = (h1, h2)
            pairs = [hs[x][i] & hs[y][j] & ov[G * G * (2 * x + y) + G * i + j]
                     for i in range(G) for j in range(i + 1, G) for x in range(2) for y in range(2)]
            with f.If(c_valid & (c_kind == OpKind.STORE)):
                f.d.comb += overlap.eq(Cat(*pairs).any())
        elif G > 1:
            full = Signal(16)                                  # the access size as a byte mask
            SPAN = LINE_BYTES + 15
            spans = Signal(G * SPAN)                           # per lane of the group: its bytes from its line's start
            f.d.comb += full.eq(((Const(1, 17) << c_size) - 1)[:16])
            with f.If(c_valid):
                f.d.comb += spans.eq(Cat(*[(full << g_offs[7 * i:7 * i + 7])[:SPAN] for i in range(G)]))
            bmb = [Mux(h1[i], spans[SPAN * i:SPAN * i + LINE_BYTES],
                       Mux(h2[i], spans[SPAN * i + LINE_BYTES:SPAN * (i + 1)], 0)) for i in range(G)]
            shared, seen = [], bmb[0]
            for b in bmb[1:]:
                shared.append(b & seen)
                seen = seen | b
            with f.If(c_valid & (c_kind == OpKind.STORE)):
                f.d.comb += overlap.eq(or_tree(shared).any())
        gh1, gh2, co_last = Signal(G), Signal(G), Signal()   # the request's lanes of the group
        f = frag("coal_final")
        f.d.comb += [gh1.eq(Mux(overlap, Mux(p_use1, p_oh, 0), h1)), gh2.eq(Mux(overlap, Mux(p_use1, 0, p_oh), h2)),
                     co_last.eq(((rem1 & ~gh1) | (rem2 & ~gh2)) == 0)]
        if staged:
            # the request is the group's last, known from registers: the first request of a group
            # that goes out in one, or a request with one lane left. A group that ends otherwise
            # (lanes in two lines) ends a cycle later, when nothing is left. So the load of the
            # next group's lanes does not wait for this request's lanes and overlaps (that was
            # the unit's critical path)
            left = Cat(rem1, rem2)
            co_end = Signal()
            f.d.comb += co_end.eq(((done1 | done2) == 0) & gf["one"] | (left == lowest_one(left)))
        else:
            co_end = co_last
        sdata, smask = Signal(LINE_DATA), Signal(LINE_BYTES)   # a store's line: lane data at its offset
        # A lane at line offset 16 q + r: its 16 bytes rotated left by r (a log rotator) put its
        # byte k at position (r + k) % 16 of a 16-byte slot, in slot q where that is >= r, else
        # in slot q + 1 (past the line: slot 0 of its second line). So byte j of slot s takes
        # rotated byte j of the lane whose access covers it: an AND-OR per bit, where a lane's
        # 1,152-bit placement and an OR of them was 21,000 LUTs on ``fpga``.
        rot = [Signal(128, name=f"store_rot{i}") for i in range(G)]
        f = frag("store_rot")
        with f.If(c_valid & (c_kind == OpKind.STORE)):
            f.d.comb += [rot[i].eq(rotate_bytes(f, g_data[128 * i:128 * i + 128], g_offs[7 * i:7 * i + 4], left=True,
                                                 name=f"store{i}"))
                         for i in range(G)]
        f = frag("store_bytes")
        lane_en = [Signal(LINE_BYTES, name=f"store_en{i}") for i in range(G)]   # the line's bytes each lane writes
        with f.If(c_valid & (c_kind == OpKind.STORE)):
            for i in range(G):
                r, q = g_offs[7 * i:7 * i + 4], g_offs[7 * i + 4:7 * i + 7]
                lo = [at_or_after(j, r) for j in range(16)]                        # in slot q (else q + 1)
                mine = [(Const(j, 4) - r)[:4] < c_size for j in range(16)]        # one of the access's bytes
                at_q = [gh1[i] & (q == s) for s in range(8)]
                at_q1 = [gh1[i] & (q + 1 == s) | (gh2[i] if s == 0 else Const(0)) for s in range(8)]
                f.d.comb += lane_en[i].eq(Cat(*[mine[j] & Mux(lo[j], at_q[s], at_q1[s])
                                                for s in range(8) for j in range(16)]))
        f = frag("coal_store")
        with f.If(c_valid & (c_kind == OpKind.STORE)):
            f.d.comb += [sdata.eq(or_tree([rot[i].replicate(8) & Cat(*[b.replicate(8) for b in lane_en[i]])
                                           for i in range(G)])),
                         smask.eq(or_tree(lane_en))]

        # ---- S0: pick this cycle's operation ------------------------------------------------
        s1_coal = s1.valid & (s1.src == Src.COAL)
        s1_load = s1_coal & (s1.kind == OpKind.LOAD)
        s1_write = s1_coal & ((s1.kind == OpKind.STORE) | (s1.kind == OpKind.ATOMIC))
        ready_w, rp_oh, rp = Signal(P), Signal(P), Signal(range(P))   # parked lines whose data is back
        f = frag("replay")
        f.d.comb += ready_w.eq(Mux(f_busy, Cat(*[w_valid[i] & (field(w_mshr, i, MB) == f_mshr) for i in range(P)]), 0))
        f = frag("replay_pick")
        f.d.comb += [rp_oh.eq(lowest_one(ready_w)), rp.eq(onehot_index(lowest_one(ready_w)))]
        # resources a request may need in S1 (what the operation now in S1 may take is excluded)
        res_m, res_w, res_s = Signal(range(M)), Signal(range(P)), Signal(range(WS))
        have_m, have_w, have_s, room = Signal(), Signal(), Signal(), Signal()
        f = frag("reserve")
        free_m = ~m_alloc & ~Mux(s1_load, bit(M, s1.mshr), 0)
        free_w = ~w_valid & ~Mux(s1_load, bit(P, s1.wait), 0)
        free_s = ~ws_valid & ~Mux(s1_write, bit(WS, s1.wslot), 0)
        f.d.comb += [res_m.eq(onehot_index(lowest_one(free_m))), res_w.eq(onehot_index(lowest_one(free_w))),
                     res_s.eq(onehot_index(lowest_one(free_s))), have_m.eq(free_m.any()), have_w.eq(free_w.any()),
                     have_s.eq(free_s.any()), room.eq(q_n + (s1_load | s1_write) < Q)]
        take_fill, take_ack, take_wack, take_replay, take_coal, c_finish = (Signal(), Signal(), Signal(), Signal(),
                                                                            Signal(), Signal())
        f = frag("s0")
        res_ok = Signal()
        with f.Switch(c_kind):
            with f.Case(OpKind.LOAD):
                f.d.comb += res_ok.eq(have_m & have_w & room)
            with f.Case(OpKind.STORE, OpKind.ATOMIC):
                f.d.comb += res_ok.eq(have_s & room)
            with f.Case(OpKind.INV):
                f.d.comb += res_ok.eq(1)
            with f.Case(OpKind.WB):   # every earlier write acknowledged
                f.d.comb += res_ok.eq((ws_valid == 0) & ~s1_write)
        single_op = (c_kind == OpKind.INV) | (c_kind == OpKind.WB)
        co_valid = c_valid & ~loading & (single_op | (rem1 | rem2).any())
        # A READ response (fill) or a returning atomic's old value takes the pipeline; a WRITE or
        # non-returning ATOMIC acknowledgement only retires its request, beside it.
        is_fill = self.mem_resp.payload.tag < M
        is_aret = ~is_fill & ws_ret.bit_select((self.mem_resp.payload.tag - M)[:WSB], 1)
        resp_v = self.mem_resp.valid & ~f_busy & (is_fill | is_aret)
        f.d.comb += [take_fill.eq(resp_v & is_fill), take_ack.eq(resp_v & ~is_fill),
                     take_wack.eq(self.mem_resp.valid & ~f_busy & ~is_fill & ~is_aret),
                     take_replay.eq(~resp_v & ready_w.any()),
                     take_coal.eq(~resp_v & ~ready_w.any() & co_valid & res_ok),
                     g_done.eq(c_valid & ~loading & (~co_valid | take_coal & (single_op | co_end))),
                     c_finish.eq(g_done & ~has_nxt)]

        rsp = self.mem_resp.payload
        f = frag("s0_ports")
        f.d.comb += [self.mem_resp.ready.eq(~f_busy), slot_r.addr.eq(rsp.tag - M), wait_r.addr.eq(rp),
                     l0.lookup.eq(p_line)]
        m.d.sync += [s1.valid.eq(take_fill | take_ack | take_replay | take_coal), a1_valid.eq(take_wack),
                     a1_fault.eq(rsp.fault), a1_slot.eq(rsp.tag - M)]
        with m.If(take_fill | take_ack):
            m.d.sync += [s1.src.eq(Mux(take_fill, Src.FILL, Src.ACK)), s1.mshr.eq(rsp.tag), s1.wslot.eq(rsp.tag - M),
                         s1.line.eq(field(m_line, rsp.tag[:MB], LINE_BITS)), s1.fault.eq(rsp.fault),
                         s1_data.eq(rsp.data)]
        with m.Elif(take_replay):
            m.d.sync += [s1.src.eq(Src.REPLAY), s1.wait.eq(rp), s1.mshr.eq(field(w_mshr, rp, MB))]
        with m.Elif(take_coal):
            m.d.sync += [s1.src.eq(Src.COAL), s1.kind.eq(c_kind), s1.entry.eq(c_entry), s1.lane.eq(p_lane),
                         s1.line.eq(p_line), s1.mshr.eq(res_m), s1.wait.eq(res_w), s1.wslot.eq(res_s),
                         s1.returns.eq(c_req.returns), s1.aop.eq(c_aop), done1.eq(done1 | gh1), done2.eq(done2 | gh2)]
            with m.Switch(c_kind):
                with m.Case(OpKind.LOAD):
                    m.d.sync += [s1_g.entry.eq(c_entry), s1_g.offs.eq(g_offs), s1_g.h1.eq(gh1), s1_g.h2.eq(gh2),
                                 s1_g.size.eq(c_size)]
                    if NG > 1:
                        m.d.sync += s1_g.grp.eq(c_grp)
                with m.Case(OpKind.STORE):
                    m.d.sync += [s1_data.eq(sdata), s1_mask.eq(smask)]
                with m.Case(OpKind.ATOMIC):
                    m.d.sync += [s1_data.eq(g_data.word_select(Cat(Const(0, 1), lig), 64)),
                                 s1_aaddr.eq(g_addr.word_select(lig, 64)[:ADDR_BITS])]
        if NG > 1:   # the next group: its lanes start with nothing issued
            with m.If(g_done & has_nxt):
                m.d.sync += [c_grp.eq(nxt), done1.eq(0), done2.eq(0), c_fault.eq(c_fault | (fault << (c_grp * G)))]

        # ---- S1: act on the lookup ----------------------------------------------------------
        wq, slot = wait_r.data, slot_r.data
        ld, st = s1_load, s1_coal & (s1.kind == OpKind.STORE)
        at, inv = s1_coal & (s1.kind == OpKind.ATOMIC), s1_coal & (s1.kind == OpKind.INV)
        wb = s1_coal & (s1.kind == OpKind.WB)
        fill = s1.valid & (s1.src == Src.FILL)
        ack = s1.valid & (s1.src == Src.ACK)                  # a returning atomic's old value
        rep = s1.valid & (s1.src == Src.REPLAY)
        mm, miss, alloc, target = Signal(M), Signal(), Signal(), Signal(range(M))
        f = frag("s1")
        f.d.comb += [l0.line.eq(s1.line), l0.touch.eq(ld | st), l0.write.eq(st), l0.wdata.eq(s1_data),
                     l0.wmask.eq(s1_mask), l0.invalidate.eq(at), l0.flush.eq(inv),
                     l0.fill.eq(fill & ~m_stale.bit_select(s1.mshr, 1))]
        # the miss register already fetching this line (a store, atomic or global_inv makes it stale)
        f.d.comb += mm.eq(Mux(s1_coal, Cat(*[m_alloc[i] & ~m_stale[i] & (field(m_line, i, LINE_BITS) == s1.line)
                                             for i in range(M)]), 0))
        f = frag("s1_miss")
        f.d.comb += [miss.eq(ld & ~l0.hit), alloc.eq(ld & ~l0.hit & ~mm.any()),
                     target.eq(Mux(mm.any(), onehot_index(mm), s1.mshr))]
        f = frag("s1_ports")
        f.d.comb += [wait_w.addr.eq(s1.wait), wait_w.data.eq(s1_g), wait_w.en.eq(miss),
                     slot_w.addr.eq(s1.wslot), slot_w.en.eq(st | at), slot_w.data.entry.eq(s1.entry),
                     slot_w.data.lane.eq(s1.lane), slot_w.data.atomic.eq(at), slot_w.data.returns.eq(s1.returns),
                     slot_w.data.addr.eq(Mux(at, s1_aaddr, Cat(Const(0, 7), s1.line)))]

        # requests to memory, filled from S1
        push = alloc | st | at
        f = frag("mem_requests")
        f.d.comb += [self.mem.valid.eq(queue.r_rdy), self.mem.payload.eq(queue.r_data), queue.r_en.eq(self.mem.ready),
                     queue.w_en.eq(push)]
        # the entry's fields from S1's registers alone, not from the lookup that decides the push:
        # a READ's data is unused (memport), and each of the 1,212 bits under ``push`` was a copy
        # of the tag compare and the miss-register match (9,150 LUTs on ``fpga``)
        f.d.comb += [q_in.kind.eq(Mux(st, MemKind.WRITE, Mux(at, MemKind.ATOMIC, MemKind.READ))),
                     q_in.atomic.eq(s1.aop), q_in.addr.eq(Mux(at, s1_aaddr, Cat(Const(0, 7), s1.line))),
                     q_in.data.eq(s1_data), q_in.mask.eq(Mux(st, s1_mask, 0)),
                     q_in.tag.eq(Mux(ld, s1.mshr, M + s1.wslot))]

        # miss registers, parked lines, write slots
        m_free = Signal(M)
        inc_m = [miss & (target == i) for i in range(M)]
        dec_m = [take_replay & (field(w_mshr, rp, MB) == i) for i in range(M)]
        f = frag("m_free")
        f.d.comb += m_free.eq(Mux(f_busy & (field(m_count, f_mshr, CB) == 0) & ~Cat(*inc_m).bit_select(f_mshr, 1),
                                  bit(M, f_mshr), 0))
        set_alloc = Mux(alloc, bit(M, s1.mshr), 0)
        m.d.sync += m_alloc.eq((m_alloc | set_alloc) & ~m_free)
        with m.If(take_fill):
            m.d.sync += [fbuf.eq(rsp.data), f_busy.eq(1), f_mshr.eq(rsp.tag)]
        with m.Elif(m_free.any()):       # every line parked on it has replayed
            m.d.sync += f_busy.eq(0)
        with m.If(s1.valid):
            m.d.sync += [m_stale.eq(Mux(inv, m_alloc, m_stale | Mux(st | at, mm, 0)) & ~set_alloc),
                         ws_ret.eq(Mux(st | at,
                                       ws_ret & ~bit(WS, s1.wslot) | Mux(at & s1.returns, bit(WS, s1.wslot), 0),
                                       ws_ret))]
        with m.If(st | at | ack | a1_valid):
            wfree = Mux(ack | a1_valid, bit(WS, Mux(ack, s1.wslot, a1_slot)), 0)
            m.d.sync += ws_valid.eq((ws_valid | Mux(st | at, bit(WS, s1.wslot), 0)) & ~wfree)
        with m.If(miss | take_replay):
            m.d.sync += w_valid.eq((w_valid | Mux(miss, bit(P, s1.wait), 0)) & ~Mux(take_replay, rp_oh, 0))
            for i in range(M):
                with m.If(inc_m[i] != dec_m[i]):
                    c = field(m_count, i, CB)
                    m.d.sync += c.eq(Mux(inc_m[i], c + 1, c - 1))
        with m.If(alloc):
            m.d.sync += [field(m_line, s1.mshr, LINE_BITS).eq(s1.line), field(m_entry, s1.mshr, EB).eq(s1.entry),
                         field(m_lane, s1.mshr, 5).eq(s1.lane)]
        with m.If(miss):
            m.d.sync += field(w_mshr, s1.wait, MB).eq(target)

        # S1 -> S2
        hit_ld = ld & l0.hit
        aret = ack & slot.atomic & slot.returns
        with m.If(s1.valid | s2.valid):
            m.d.sync += [s2.valid.eq(hit_ld | rep | inv | wb | ack), s2.write.eq(hit_ld | rep | aret), s2.aret.eq(aret),
                         s2.replay.eq(rep), s2.entry.eq(Mux(ack, slot.entry, Mux(rep, wq.entry, s1.entry))),
                         s2.lane.eq(slot.lane)]
        with m.If(hit_ld | rep):
            m.d.sync += s2_g.eq(Mux(rep, wq, s1_g))
        with m.If(ack):
            m.d.sync += s2_aval.eq(s1_data[:32])

        # ---- S2: bytes into the result buffer ---------------------------------------------
        line = Signal(LINE_DATA)
        full2 = Signal(16)
        f = frag("s2_line")
        f.d.comb += [line.eq(Mux(s2.replay, fbuf, l0.data)), full2.eq(((Const(1, 17) << s2_g.size) - 1)[:16])]
        f = frag("s2_gather")
        # per lane of the group: its bytes of the line, and which of them are its access's
        chunks = [Signal(128, name=f"s2_chunk{i}") for i in range(G)]
        enables = [Signal(16, name=f"s2_en{i}") for i in range(G)]
        with f.If(s2.valid & s2.write):
            for i in range(G):
                off = s2_g.offs[7 * i:7 * i + 7]
                # bytes of the lane in this line: the first 128 - off of its access, or the rest
                low = Mux(off > LINE_BYTES - 16, ((Const(1, 16) << (LINE_BYTES - off)[:4]) - 1)[:16], 0xFFFF)
                # bytes [off, off + 16) of the line (wrapping: a second line's are from byte 0):
                # with off = 16 q + r, byte j of the 16 is byte j of slot q where j >= r, else of
                # slot q + 1; rotated right by r (an 8-way select and a log rotator per bit, a
                # fifth fewer LUTs than a 32-way and a 4-way select on ``fpga``)
                r, q = off[:4], off[4:]
                ring = Cat(*[line.word_select(Cat(Const(j, 4), Mux(at_or_after(j, r), q, q + 1)[:3]), 8)
                             for j in range(16)])
                f.d.comb += [chunks[i].eq(rotate_bytes(f, ring, r, left=False, name=f"s2_chunk{i}")),
                             enables[i].eq(Mux(s2_g.h1[i], full2 & low, Mux(s2_g.h2[i], full2 & ~low, 0)))]
            # the row of the response group holding the request's lanes (one: coalesce_lanes <=
            # resp_lanes), or the atomic's lane
            RGB = (R // G - 1).bit_length()                   # log2 of request groups per response group
            wrow = s2.entry if NR == 1 else Cat(Mux(s2.aret, s2.lane[RB:], s2_g.grp[RGB:]), s2.entry)
            for j in range(NM):
                # lane i of the row takes lane i % G of the request's group, if it is in that group
                lanes = range(RL * j, RL * (j + 1))
                aen = Mux(s2.lane[RLB:RB] == j, Const(0xF, 16 * RL) << Cat(Const(0, 4), s2.lane[:RLB]), 0)
                en = Cat(*[Mux(s2_g.grp[:RGB] == i // G, enables[i % G], 0) if RGB else enables[i] for i in lanes])
                f.d.comb += [rbuf_w[j].addr.eq(wrow),
                             rbuf_w[j].data.eq(Mux(s2.aret, _rep(Cat(s2_aval, Const(0, 96)), RL),
                                                   Cat(*[chunks[i % G] for i in lanes]))),
                             rbuf_w[j].en.eq(Mux(s2.aret, aen, en))]

        # ---- accept: a free entry, round robin between the SIMDs --------------------------
        last_sel, sel = Signal(range(S)), Signal(range(S))
        fire, free_oh = Signal(), Signal(E)
        freeing = Signal(E)
        f = frag("accept")
        # the SIMDs with a new request (in place, the one being split still holds its request)
        want = Cat(*[r.valid & ~(c_valid & (c_simd == i)) if cfg.coalesce_in_place else r.valid
                     for i, r in enumerate(self.req)])
        for k in reversed(range(S)):                 # the first requesting SIMD after the last served
            idx = (last_sel + 1 + k) % S if S > 1 else Const(0)
            with f.If(want.bit_select(idx, 1)):
                f.d.comb += sel.eq(idx)
        # staged, the next instruction is taken in the cycle after the split ends: the end
        # (the last group's request leaving) is not on the path to acceptance and its enables
        acc_ok = (~c_valid | (Const(0) if staged else c_finish)) & (~valid).any()
        f.d.comb += [free_oh.eq(lowest_one(~valid)), fire.eq(acc_ok & want.any())]
        for i, r in enumerate(self.req):
            f.d.comb += r.ready.eq(c_finish & (c_simd == i) if cfg.coalesce_in_place else acc_ok & (sel == i))
        # the selected request's fields that steer acceptance; the whole request (6,228 bits
        # on `default`) is copied only when one is accepted, not multiplexed every cycle
        g_op, g_wave, g_returns, a_exec = (Array(Value.cast(getattr(r.payload, name)) for r in self.req)[sel]
                                           for name in ("op", "wave", "returns", "exec"))
        d_kind, d_size, d_ext, d_beats, d_aop = (Signal(OpKind), Signal(range(17)), Signal(Ext), Signal(range(5)),
                                                 Signal(AtomicOp))
        f = frag("decode")
        with f.Switch(g_op):
            for op, (kind, size, ext, beats, aop) in op_table().items():
                with f.Case(op):
                    f.d.comb += [d_kind.eq(kind), d_size.eq(size), d_ext.eq(ext), d_beats.eq(beats)]
                    if aop is not None:
                        f.d.comb += d_aop.eq(aop)
        new = onehot_index(free_oh)
        m.d.sync += [c_fresh.eq(fire), g_fresh.eq((c_fresh if staged else fire) | g_done & has_nxt),
                     c_valid.eq(fire | c_valid & ~c_finish)]
        with m.If(fire | c_finish | freeing.any()):
            m.d.sync += [valid.eq((valid | Mux(fire, free_oh, 0)) & ~freeing),
                         issuing.eq((issuing | Mux(fire, free_oh, 0)) & ~Mux(c_finish, bit(E, c_entry), 0))]
        with m.If(freeing.any()):
            m.d.sync += older.eq(older & ~_rep(freeing, E))
        with m.If(fire):
            # the instructions this one retires after: per wave and per counter (loads with
            # loads, stores with stores), or every instruction of the CU
            d_store = (d_kind == OpKind.STORE) | (d_kind == OpKind.WB) | (d_kind == OpKind.ATOMIC) & ~g_returns
            same = Cat(*[Const(1) if cfg.return_order == "in_order" else
                         (field(ent_simd, e, SB) == sel) & (field(ent_wave, e, WB) == g_wave) &
                         (ent_store[e] == d_store) for e in range(E)])
            if not cfg.coalesce_in_place:
                with m.Switch(sel):
                    for i, r in enumerate(self.req):
                        with m.Case(i):
                            m.d.sync += c_req.eq(r.payload)
            m.d.sync += [c_simd.eq(sel), c_entry.eq(new), last_sel.eq(sel),
                         c_kind.eq(d_kind), c_size.eq(d_size), c_ext.eq(d_ext), c_beats.eq(d_beats), c_aop.eq(d_aop),
                         done1.eq(0), done2.eq(0), field(ent_simd, new, SB).eq(sel),
                         field(ent_wave, new, WB).eq(g_wave), ent_store.bit_select(new, 1).eq(d_store),
                         field(older, new, E).eq(valid & ~freeing & same)]
            if cfg.coalesce_in_place:
                m.d.sync += c_exec.eq(a_exec)
            if NG > 1:   # the first group with EXEC lanes (0 if none)
                m.d.sync += c_fault.eq(0)
                m.d.sync += c_grp.eq(onehot_index(lowest_one(exec_groups(a_exec))))

        # the response metadata, written when the split ends (the mask then knows every fault);
        # an error, latched in the first cycle of the instruction (bad opcode) or of a group
        writes = (c_kind == OpKind.LOAD) | (c_kind == OpKind.ATOMIC) & c_req.returns
        stores = (c_kind == OpKind.STORE) | (c_kind == OpKind.ATOMIC) & ~c_req.returns | (c_kind == OpKind.WB)
        mw = meta_w.data
        f = frag("meta_w")
        faults = c_fault | (fault << (c_grp * G)) if NG > 1 else fault
        f.d.comb += [meta_w.addr.eq(c_entry), meta_w.en.eq(c_finish), mw.wave.eq(c_req.wave), mw.seq.eq(c_req.seq),
                     mw.vdst.eq(c_req.vdst), mw.beats.eq(Mux(c_kind == OpKind.LOAD, c_beats, 1)), mw.write.eq(writes),
                     mw.store.eq(stores), mw.ext.eq(c_ext), mw.mask.eq(c_exec & ~faults)]
        with m.If(~err.valid & (g_fresh & fault.any() | c_fresh & (c_kind == OpKind.NONE))):
            f_lig = onehot_index(lowest_one(fault))[:GS]        # the group's lowest faulting lane
            m.d.sync += [err.valid.eq(1), err.simd.eq(c_simd), err.wave.eq(c_req.wave), err.seq.eq(c_req.seq),
                         err.cause.eq(Mux(c_kind == OpKind.NONE, ErrorCause.OPCODE,
                                          Mux(misal.bit_select(f_lig, 1), ErrorCause.MISALIGNED, ErrorCause.APERTURE))),
                         err.lane.eq(Mux(c_kind == OpKind.NONE, 0, Cat(f_lig, c_grp) if NG > 1 else f_lig)),
                         err.addr.eq(Mux(c_kind == OpKind.NONE, 0, g_addr.word_select(f_lig, 64))),
                         err.kind.eq(c_kind), err.size.eq(c_size)]
        with m.Elif((fill | ack | a1_valid) & Mux(a1_valid, a1_fault, s1.fault) & ~err.valid):
            e = Mux(fill, field(m_entry, s1.mshr, EB), slot.entry)
            m.d.sync += [err.valid.eq(1), err.cause.eq(ErrorCause.MEMORY), err.simd.eq(field(ent_simd, e, SB)),
                         err.wave.eq(field(ent_wave, e, WB)),
                         err.lane.eq(Mux(fill, field(m_lane, s1.mshr, 5), slot.lane)),
                         err.addr.eq(Mux(fill, Cat(Const(0, 7), s1.line), slot.addr))]

        # ---- requests outstanding per entry: +1 per request issued, -1 per S2 operation and
        # per write acknowledgement ---------------------------------------------------------
        with m.If(take_coal | s2.valid | a1_valid):
            for e in range(E):
                inc_e = take_coal & (c_entry == e)
                dec_e = Cat(s2.valid & (s2.entry == e), a1_valid & (slot.entry == e))
                with m.If(inc_e | dec_e.any()):
                    c = field(pending, e, PB)
                    m.d.sync += c.eq(c + inc_e - dec_e[0] - dec_e[1])

        # ---- hit latency: an entry may retire l0_hit_latency cycles after it was accepted ----
        if gate:
            now = Signal(16)
            stamp = Signal(E * 16)
            m.d.sync += now.eq(now + 1)
            with m.If(fire):
                m.d.sync += field(stamp, new, 16).eq(now)
            ripe_now = Cat(*[(now - field(stamp, e, 16))[:16] == cfg.l0_hit_latency - 2 for e in range(E)])
            m.d.sync += ripe.eq((ripe | ripe_now) & ~Mux(fire, free_oh, 0))

        # ---- retire: per SIMD, one beat per cycle --------------------------------------------
        retirable = Signal(E)
        f = frag("retirable")
        f.d.comb += retirable.eq(valid & ripe & ~issuing & Cat(*[(field(pending, e, PB) == 0) &
                                                                  ((field(older, e, E) & ~freeing) == 0)
                                                                  for e in range(E)]))
        # A lane-group beat (resp_lanes < 32) reads a narrow row: the CU's SIMDs then share one
        # read port of the result buffer, taking turns when both have beats to send, so that the
        # buffer is one block-RAM copy (16 DP16KD on ``fpga``), not one per SIMD.
        shared = NR > 1
        frees, wants, rows_at, ks, exts, busys = [], [], [], [], [], []
        if shared:
            rd_valid, rd_for = Signal(name="rt_rd_valid"), Signal(range(S), name="rt_rd_for")   # last cycle's read
            beats = [Signal(32 * R, name="rt_beat")] * S
        else:
            beats = [Signal(32 * R, name=f"rt_beat{s}") for s in range(S)]
        for s in range(S):
            busy, cur = Signal(name=f"rt_busy{s}"), Signal(range(E), name=f"rt_cur{s}")
            kg = Signal(2 + GB, name=f"rt_kg{s}")        # the beat: register k, its lane group g
            k, g = kg[GB:], kg[:GB]
            port = self.resp[s]
            md = data.View(Meta, meta_r[s].data)
            pick, take, done = (Signal(range(E), name=f"rt_pick{s}"), Signal(name=f"rt_take{s}"),
                                Signal(name=f"rt_done{s}"))
            f = frag(f"retire{s}")
            elig = retirable & Cat(*[field(ent_simd, e, SB) == s for e in range(E)]) & ~Mux(busy, bit(E, cur), 0)
            is_last = k + 1 >= md.beats
            if NR > 1:     # a register's last group; an instruction without one answers one beat
                is_last &= (g == NR - 1) | ~md.write
            sent = port.valid & port.ready
            f.d.comb += [pick.eq(onehot_index(lowest_one(elig))), done.eq(sent & is_last),
                         take.eq(elig.any() & (~busy | done))]
            # the ports read only for a beat to come: the beat reads nothing when not busy; the
            # result row is the next beat's group when a beat is taken
            entry = Mux(take, pick, cur)
            row = entry if NR == 1 else Cat(Mux(take, 0, (kg + sent)[:GB]), entry)
            f.d.comb += [meta_r[s].addr.eq(entry), meta_r[s].en.eq(take | busy)]
            if shared:
                wants.append(take | busy & ~done)
                rows_at.append(row)
            else:
                f.d.comb += [x for j in range(NM) for x in (rbuf_r[j][s].addr.eq(row), rbuf_r[j][s].en.eq(take | busy))]
            with m.If(take):
                m.d.sync += [busy.eq(1), cur.eq(pick), kg.eq(0)]
            with m.Elif(done):
                m.d.sync += busy.eq(0)
            with m.Elif(sent):
                m.d.sync += kg.eq(kg + 1)
            frees.append(Mux(done, bit(E, cur), 0))
            ks.append(k)
            exts.append(md.ext)
            busys.append(busy)
            p = port.payload
            f = frag(f"resp{s}")
            # shared: a beat only in the cycle after the port read its row for this SIMD
            f.d.comb += [port.valid.eq(busy & (rd_valid & (rd_for == s) if shared else 1)), p.wave.eq(md.wave),
                         p.seq.eq(md.seq), p.vdst.eq(md.vdst + k), p.data.eq(beats[s]),
                         p.mask.eq(md.mask.word_select(g, R) if NR > 1 else md.mask),
                         p.write.eq(md.write), p.last.eq(is_last), p.store.eq(md.store)]
            if NR > 1:
                f.d.comb += p.grp.eq(g)
        if shared:
            f = frag("rt_read")
            # a beat offered and not taken stays offered (stream rules): its SIMD keeps the port
            # and reads the same row again; otherwise the SIMDs with beats to come take turns
            held = Cat(*[r.valid & ~r.ready for r in self.resp]).any()
            grant, gi = rr_grant(f, Mux(held, 0, Cat(*wants)), rd_for, "rt_grant")
            who = Mux(held, rd_for, gi)
            f.d.comb += [x for j in range(NM) for x in (rbuf_r[j][0].addr.eq(Array(rows_at)[who]),
                                                         rbuf_r[j][0].en.eq(held | grant.any()))]
            m.d.sync += [rd_valid.eq(held | grant.any()), rd_for.eq(who)]

        def beat_of(beat, rdata, k, ext, reading, name):
            """``beat``: dword k of the group's lanes, the first one extended for narrow loads
            (0 while nothing is being read: a compiled simulation skips it then)."""
            rows = Signal(32 * R, name=f"rt_rows{name}")
            f = frag(f"rows{name}")
            with f.If(reading):
                f.d.comb += rows.eq(Cat(*[rdata[j].word_select(Cat(k, Const(i, RLB)), 32)
                                          for j in range(NM) for i in range(RL)]))
            f = frag(f"beat{name}")

            def extend(n):
                return Cat(*[Mux(rows[32 * i + n - 1], Cat(rows[32 * i:32 * i + n], Const(-1, 32 - n)),
                                 rows[32 * i:32 * i + n])
                             for i in range(R)])
            with f.Switch(Mux(k == 0, ext, Ext.RAW)):
                with f.Case(Ext.U8):
                    f.d.comb += beat.eq(rows & _rep(Const(0xFF, 32), R))
                with f.Case(Ext.I8):
                    f.d.comb += beat.eq(extend(8))
                with f.Case(Ext.U16):
                    f.d.comb += beat.eq(rows & _rep(Const(0xFFFF, 32), R))
                with f.Case(Ext.I16):
                    f.d.comb += beat.eq(extend(16))
                with f.Default():
                    f.d.comb += beat.eq(rows)
        if shared:
            beat_of(beats[0], [rbuf_r[j][0].data for j in range(NM)], Array(ks)[rd_for], Array(exts)[rd_for],
                    rd_valid, "")
        else:
            for s in range(S):
                beat_of(beats[s], [rbuf_r[j][s].data for j in range(NM)], ks[s], exts[s], busys[s], s)
        f = frag("freeing")
        f.d.comb += freeing.eq(or_tree(frees))

        # ---- counters ----------------------------------------------------------------------
        cnt = Signal(CountersLayout)
        f = frag("outputs")
        f.d.comb += [self.counters.eq(cnt), self.error.eq(err)]
        retired = _sum_tree([Mux(fr.any(), 1, 0) for fr in frees])
        occ = cnt.rq_occupancy + fire - retired
        m.d.sync += cnt.rq_sum.eq(cnt.rq_sum + cnt.rq_occupancy)
        with m.If(fire | freeing.any()):
            m.d.sync += cnt.rq_occupancy.eq(occ)
            with m.If(occ > cnt.rq_max):
                m.d.sync += cnt.rq_max.eq(occ)
        with m.If(fire | take_coal | ld):
            m.d.sync += [cnt.instructions.eq(cnt.instructions + fire),
                         cnt.lines.eq(cnt.lines + (take_coal & ((c_kind == OpKind.LOAD) | (c_kind == OpKind.STORE)))),
                         cnt.atomics.eq(cnt.atomics + (take_coal & (c_kind == OpKind.ATOMIC))),
                         cnt.hits.eq(cnt.hits + hit_ld), cnt.misses.eq(cnt.misses + miss)]
        return m
