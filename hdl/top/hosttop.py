"""The DCU with its memory inside the hardware: the top that compiled simulators (Verilator,
Icarus under cocotb) and the FPGA build run, so that a whole kernel runs with no Python on
any cycle (docs/toolflow.md).

::

    host port ──> ExtMemory (RAM, latency, reordering) <── mem ── DCU <── dispatch
                                                                   └──> done, error, cycles,
                                                                        perf_addr/perf_data

A host loads code, kernarg and buffers through the host port (one dword per cycle), starts
a dispatch, waits for ``done``, then reads the buffers and the counters back. Host accesses
are for when the DCU is idle: they take the memory's RAM for their cycle, so during a run
they would only slow it down.

Each dispatch starts the memory model's pseudo-random state (latency and reordering
choices) afresh from the ``seed`` input, so a run's cycle count depends on the seed and not
on how many cycles the host spent loading memory: every backend that simulates this top
counts the same cycles for the same seed, and a new seed needs no new build. With
``runtime_memory`` (the simulation tops') the same goes for the memory's latency range,
ordering and back-pressure (``mem_knobs``, loaded with the seed), and a scoreboard in the
memory counts its requests and responses for the host to check after the run.

Compiled simulators run HostTop inside :class:`SimTop`, which registers its reset and the
inputs that hold still during a run (Verilator re-evaluates whatever reads a top-level
input on every evaluation).
"""
from __future__ import annotations

from amaranth.hdl import ClockDomain, ClockSignal, Module, ResetSignal, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out, connect

from ..config import DCUConfig
from .dcu import DCU, DcuError
from .dispatch import DispatchLayout
from ..mem.extmem import ExtMemory
from ..mem.memport import ADDR_BITS, CLIENT_TAG_BITS

__all__ = ["HostTop", "SimTop", "CYCLE_BITS", "MAX_LATENCY"]

CYCLE_BITS = 32
#: the longest memory latency a ``runtime_memory`` top's knobs select (cycles)
MAX_LATENCY = 500


class HostTop(wiring.Component):
    """A DCU and an RTL external memory with a host port.

    Parameters
    ----------
    config : DCUConfig
    mem_bytes : int
        Size of the memory (a multiple of 128), from byte address ``mem_base``.
    mem_base : int
        Byte address of the memory's first byte (a multiple of 128).
    latency : int or (int, int)
        Memory latency in cycles, fixed or an LFSR-drawn range (:class:`hdl.mem.extmem.ExtMemory`).
    reorder : bool
        Responses whose latency has elapsed may leave out of order.
    watchdog_cycles : int
        The DCU's watchdog (:class:`hdl.top.dcu.DCU`).
    init : bytes
        Initial memory contents from ``mem_base`` (a simulation's shortcut for loading
        through the host port).
    registered_read : bool
        The memory's FPGA pipeline (:class:`hdl.mem.extmem.ExtMemory`; ``latency >= 3``).
    map_ranges : int
        The memory holds a buffer map of this many ranges, set per run (``map_base``,
        ``map_end``): an access outside every buffer faults there, and the first faulting
        request of each memory client is kept in ``mem_faults`` (0: no map, no such ports).
        The DCU's vector memory units check each lane's bytes against the same map.
    runtime_memory : bool
        The memory's latency range (at most the upper end of ``latency``), ordering and
        back-pressure are set per dispatch (``mem_knobs``), it has a slot for every request
        the DCU can have outstanding, and a scoreboard (``mem_scoreboard``, ``mem_idle``).

    Members
    -------
    host_addr : In(range(mem_bytes // 4))
        Dword index (from ``mem_base``) of a host access.
    host_wdata : In(32); host_we : In(1)
        Write ``host_wdata`` at ``host_addr``.
    host_re : In(1); host_rdata : Out(32)
        Read ``host_addr``; ``host_rdata`` holds the dword in the next cycle only.
    dispatch : In(stream of hdl.top.dispatch.DispatchLayout)
        Start a kernel dispatch (taken when the DCU is idle).
    aperture_base, aperture_size : In(48)
        The global memory the dispatch's vector accesses may touch.
    seed : In(32)
        The memory model's LFSR seed, loaded when a dispatch starts.
    busy, done : Out(1)
        As :class:`hdl.top.dcu.DCU`: ``done`` when every wave ended or an error stopped the DCU.
    error : Out(hdl.top.dcu.DcuError)
        The first error, latched until reset.
    waves : Out
        The DCU's ``waves``: every wave slot's residency, PC, counters and barrier wait.
    cycles : Out(32)
        Cycles of the last dispatch: counts from its acceptance to the first cycle ``done``
        is seen, both included (the ``rtl`` backend's count), then holds.
    perf_addr, perf_data
        The DCU's counters (:attr:`perf_names`), ``perf_data`` one cycle after ``perf_addr``.
    map_base, map_end : In(ArrayLayout(48, map_ranges)); mem_faults : Out(ArrayLayout(FaultRecord, 4))
        With ``map_ranges``: the buffer map, and the first faulting request of each client
        (``hdl.mem.memport.Client`` order), cleared when a dispatch starts.
    mem_knobs : In(hdl.mem.extmem.Knobs(latency))
        With ``runtime_memory``: the memory's settings (:func:`hdl.mem.extmem.knob_values`),
        loaded when a dispatch starts.
    mem_scoreboard : Out(hdl.mem.extmem.ScoreboardLayout); mem_idle : Out(1)
        With ``runtime_memory``: the memory's scoreboard (from reset), and whether it has
        nothing in flight (a host waits for it before reading the scoreboard).
    """

    def __init__(self, config: DCUConfig, mem_bytes: int, mem_base: int = 0, latency=32,
                 reorder: bool = False, watchdog_cycles: int = 50_000, init: bytes = b"",
                 registered_read: bool = False, map_ranges: int = 0, runtime_memory: bool = False):
        self.config = config
        self.dcu = DCU(config, watchdog_cycles=watchdog_cycles, map_ranges=map_ranges)
        arb = self.dcu.arbiter
        tag_bits = arb.tag_bits
        # every request the DCU can have outstanding holds a slot: long latencies do not throttle it
        slots = {"slots": 1 << (arb.n_clients * arb.resp_depth - 1).bit_length()} if runtime_memory else {}
        self.memory = ExtMemory(mem_bytes, base=mem_base, latency=latency, reorder=reorder,
                                tag_bits=tag_bits, init=init, runtime_seed=True,
                                registered_read=registered_read, idle_merge_zero=True, map_ranges=map_ranges,
                                fault_groups=1 << (tag_bits - CLIENT_TAG_BITS) if map_ranges else 1,
                                runtime_knobs=runtime_memory, scoreboard=runtime_memory, **slots)
        self.map_ranges, self.runtime_memory = map_ranges, runtime_memory
        self.mem_bytes, self.mem_base = mem_bytes, mem_base
        self.perf_names = self.dcu.perf_names
        super().__init__({
            "host_addr": In(range(mem_bytes // 4)), "host_wdata": In(32),
            "host_we": In(1), "host_re": In(1), "host_rdata": Out(32),
            "dispatch": In(stream.Signature(DispatchLayout(config))),
            "aperture_base": In(ADDR_BITS), "aperture_size": In(ADDR_BITS), "seed": In(32),
            "busy": Out(1), "done": Out(1), "error": Out(DcuError(config)),
            "cycles": Out(CYCLE_BITS),
            "perf_addr": In(range(len(self.perf_names))), "perf_data": Out(32),
            "waves": Out(self.dcu.waves.shape()),
            **({"map_base": In(data.ArrayLayout(ADDR_BITS, map_ranges)),
                "map_end": In(data.ArrayLayout(ADDR_BITS, map_ranges)),
                "mem_faults": Out(self.memory.fault_log.shape())} if map_ranges else {}),
            **({"mem_knobs": In(self.memory.knobs.shape()), "mem_scoreboard": Out(self.memory.board.shape()),
                "mem_idle": Out(1)} if runtime_memory else {}),
        })

    def elaborate(self, platform):
        m = Module()
        dcu = self.dcu
        start = Signal()
        m.d.comb += start.eq(self.dispatch.valid & self.dispatch.ready)
        m.submodules.dcu = dcu
        m.submodules.memory = mem = self.memory
        m.d.comb += [mem.reseed.eq(start), mem.seed.eq(self.seed)]

        connect(m, wiring.flipped(self.dispatch), dcu.dispatch)
        connect(m, dcu.mem, mem.req)
        connect(m, mem.resp, dcu.mem_resp)
        m.d.comb += [
            mem.host_addr.eq(self.host_addr), mem.host_wdata.eq(self.host_wdata),
            mem.host_we.eq(self.host_we), mem.host_re.eq(self.host_re), self.host_rdata.eq(mem.host_rdata),
            dcu.aperture_base.eq(self.aperture_base), dcu.aperture_size.eq(self.aperture_size),
            self.busy.eq(dcu.busy), self.done.eq(dcu.done), self.error.eq(dcu.error),
            dcu.perf_addr.eq(self.perf_addr), self.perf_data.eq(dcu.perf_data), self.waves.eq(dcu.waves),
        ]
        if self.map_ranges:
            m.d.comb += [mem.map_base.eq(self.map_base), mem.map_end.eq(self.map_end),
                         dcu.map_base.eq(self.map_base), dcu.map_end.eq(self.map_end),
                         self.mem_faults.eq(mem.fault_log)]
        if self.runtime_memory:
            m.d.comb += [mem.knobs.eq(self.mem_knobs), self.mem_scoreboard.eq(mem.board), self.mem_idle.eq(mem.idle)]

        running = Signal()
        with m.If(start):
            m.d.sync += [self.cycles.eq(1), running.eq(1)]
        with m.Elif(running):
            m.d.sync += self.cycles.eq(self.cycles + 1)
            with m.If(dcu.done):
                m.d.sync += running.eq(0)
        return m


class SimTop(wiring.Component):
    """A top (:class:`HostTop`) as compiled simulators run it: the same ports plus ``clk`` and ``rst``,
    with the reset and the inputs that hold still during a run registered.

    Verilator evaluates the logic that reads a top-level input on every ``eval()``, twice a
    cycle (its ``ico`` region), whether the input changed or not. Amaranth's synchronous
    reset is read by the next-state logic of every register, so with ``rst`` a port that is
    most of the design; and HostTop's aperture feeds the vector memory units' address
    checks: 13 % of the ``tiny`` DCU's time under Verilator 5.048. Here ``rst`` and the
    ``registered`` inputs reach ``host`` through one register each, a cycle later (long
    before a dispatch: a host sets them first), so only the inputs a host moves during a
    run (the host port, the dispatch handshake, the counter address) stay direct.

    Parameters
    ----------
    host : wiring.Component
        Driven in this module's ``sync`` domain.
    registered : tuple of str
        Input members of ``host`` to register.

    Members
    -------
    clk : In(1)
        The clock of ``host``'s ``sync`` domain.
    rst : In(1)
        Reset, applied to ``host`` one cycle later.
    (every member of ``host``'s signature)
    """

    def __init__(self, host, registered=("aperture_base", "aperture_size", "seed")):
        self.host, self.registered = host, tuple(registered)
        self.perf_names = getattr(host, "perf_names", ())
        members = dict(host.signature.members.items())
        for name in self.registered:
            if members.get(name) is None or members[name].flow != In or members[name].is_signature:
                raise ValueError(f"{name!r} is not a port input of {type(host).__name__}")
        super().__init__({"clk": In(1), "rst": In(1), **members})

    def elaborate(self, platform):
        m = Module()
        m.submodules.host = host = self.host
        m.domains.sync = ClockDomain("sync")
        m.domains.inputs = ClockDomain("inputs", reset_less=True)
        rst_q = Signal()
        m.d.comb += [ClockSignal("sync").eq(self.clk), ClockSignal("inputs").eq(self.clk),
                     ResetSignal("sync").eq(rst_q)]
        m.d.inputs += rst_q.eq(self.rst)
        for name, member in host.signature.members.items():
            outer, inner = getattr(self, name), getattr(host, name)
            if member.is_signature:         # a stream: wired through
                connect(m, wiring.flipped(outer), inner)
            elif name in self.registered:
                m.d.inputs += inner.eq(outer)
            elif member.flow == In:
                m.d.comb += inner.eq(outer)
            else:
                m.d.comb += outer.eq(inner)
        return m
