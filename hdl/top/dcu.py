"""The dual compute unit: 2 CUs x 2 SIMD32s, their memory system, dispatcher and barriers
(docs/dcu.md).

::

    dispatch -> Dispatcher -> launch x4 -> SIMD0 SIMD1 | SIMD2 SIMD3      WorkgroupBarrier
                                              |fetch  |smem  |vmem  |lds
                                    ICache  ScalarCache  VecMemUnit x2 (one per CU)  LDS
                                         \\        |         |
                                          +--------+---------+--> MemArbiter --> mem

(One transcendental unit serves the four SIMDs, ``hdl/simd/transshare.py``.)

The DCU has one external memory port (``hdl/mem/memport.py``). Every error (an illegal
instruction, a memory fault, a workgroup that can never be placed, the watchdog) stops the
DCU: the first one is latched in ``error`` and every unit's clock enable falls, so the state
stays as it was for inspection. Performance counters of every unit are readable as registers
through ``perf_addr`` / ``perf_data``; :attr:`DCU.perf_names` names them.
"""
from __future__ import annotations

from amaranth.hdl import Array, EnableInserter, MemoryInstance, Module, Mux, Signal, Value, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out, connect

from .barrier import WorkgroupBarrier
from ..config import DCUConfig
from .dispatch import DispatchLayout, Dispatcher
from ..mem.icache import ICache
from ..layouts import ADDR, WaveStatus
from ..mem.lds import LDS
from ..mem.memarb import MemArbiter
from ..mem.memport import ADDR_BITS, Client, MemReq, MemResp
from ..mem.scache import ScalarCache
from ..simd.scalar import PipeError
from ..simd.simd import SIMD
from ..simd.transshare import SharedTrans
from ..mem.vmem import OpKind, VecMemUnit

__all__ = ["DCU", "DcuErrorCause", "DcuError"]


class DcuErrorCause(enum.Enum, shape=unsigned(4)):
    NONE = 0
    ILLEGAL_INSTRUCTION = 1   # a SIMD met words that are not an instruction: simd, wave, pc
    MEMORY_FAULT = 2          # a vector access outside the aperture or the buffer map: simd, wave,
                              # lane, addr, access, size
    SCALAR_FAULT = 3          # a scalar load outside memory: simd, wave, addr
    FETCH_FAULT = 4           # an instruction fetch outside memory: simd, wave, addr
    DISPATCH = 5              # a workgroup can never be placed on this configuration
    WATCHDOG = 6              # no instruction issued for ``watchdog_cycles`` cycles
    LDS_FAULT = 7             # a misaligned LDS access or a bad LDS window: simd, wave, lane, addr
    UNSUPPORTED = 8           # an instruction the SIMD does not execute: simd, wave, pc
    # (no instruction words are kept down the pipeline: the host reads them at the pc)


def DcuError(cfg: DCUConfig) -> data.StructLayout:
    return data.StructLayout({"valid": 1, "cause": DcuErrorCause, "simd": range(cfg.simds),
                              "wave": range(cfg.wave_ids), "pc": ADDR,
                              "lane": range(32), "addr": 64, "access": OpKind, "size": range(17)})


def _leaves(prefix: str, value):
    """(name, 32-bit value) of every counter leaf in a port (a signal, view or list of them)."""
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__") and not hasattr(value, "shape"):
        for i, v in enumerate(value):
            yield from _leaves(f"{prefix}{i}", v)
        return
    layout = getattr(value, "shape", lambda: None)()
    if isinstance(layout, data.StructLayout):
        for name, _ in layout:
            yield from _leaves(f"{prefix}.{name}", value[name])
    elif isinstance(layout, data.ArrayLayout):
        for i in range(layout.length):
            yield from _leaves(f"{prefix}{i}", value[i])
    else:
        yield prefix, Value.cast(value)


class _Freeze(EnableInserter):
    """Holds every register of a unit while the enable is low, and leaves its memories' ports
    alone.

    A stopped DCU must hold its registers (the error report reads them) and send nothing out
    (the DCU gates its memory port); what its own memories hold afterwards is seen by nobody.
    Gating them would cost every granular write port a multiplexer on each of its enable bits
    (``EnableInserter``'s ``Mux(en, port.en, 0)``), which Amaranth's simulator evaluates once
    per data bit, every cycle: a fifth of the DCU's simulation time (docs/dcu.md).
    """

    def on_fragment(self, fragment):
        if isinstance(fragment, MemoryInstance):
            return fragment
        return super().on_fragment(fragment)


class DCU(wiring.Component):
    """One RDNA dual compute unit.

    Parameters
    ----------
    config : DCUConfig
    watchdog_cycles : int
        Cycles without an issued instruction, while the dispatch is busy, after which the
        DCU stops with ``DcuErrorCause.WATCHDOG``.

    Members
    -------
    dispatch : In(stream of hdl.top.dispatch.DispatchLayout)
        Start a kernel dispatch (taken when idle); the caches are invalidated at its start.
    aperture_base, aperture_size : In(48)
        The global memory the dispatch may touch with vector accesses.
    mem : Out(stream of MemReq(8)); mem_resp : In(stream of MemResp(8))
        The external memory port.
    busy, done : Out(1)
        ``done``: every wave of the dispatch has ended, or an error stopped it.
    error : Out(DcuError)
        The first error, latched until reset.
    map_base, map_end : In(ArrayLayout(48, map_ranges))
        With ``map_ranges``: the buffer map the vector memory units check each lane's bytes
        against (:class:`hdl.mem.vmem.VecMemUnit`).
    waves : Out(ArrayLayout(hdl.layouts.WaveStatus, simds * wave_slots))
        Every wave slot's state (SIMD ``s`` slot ``w`` at ``s * wave_slots + w``), for a report.
    perf_addr : In(range(len(perf_names))); perf_data : Out(32)
        Counter ``perf_names[perf_addr]``, one cycle later.
    """

    def __init__(self, config: DCUConfig, watchdog_cycles: int = 100_000, map_ranges: int = 0):
        self.config = config
        self.watchdog_cycles = watchdog_cycles
        cfg = config
        self.simds = [SIMD(cfg) for _ in range(cfg.simds)]
        self.trans = SharedTrans(cfg, cfg.simds)
        self.icache = ICache(cfg)
        self.scache = ScalarCache(cfg)
        self.vmem = [VecMemUnit(cfg, map_ranges=map_ranges) for _ in range(cfg.cus)]
        self.map_ranges = map_ranges
        self.lds = LDS(cfg)
        self.arbiter = MemArbiter(len(Client))
        self.dispatcher = Dispatcher(cfg)
        self.barrier = WorkgroupBarrier(cfg)
        self.perf = dict(self._counters())
        self.perf_names = list(self.perf)
        super().__init__({
            "dispatch": In(stream.Signature(DispatchLayout(cfg))),
            "aperture_base": In(ADDR_BITS), "aperture_size": In(ADDR_BITS),
            "mem": Out(stream.Signature(MemReq(self.arbiter.tag_bits))),
            "mem_resp": In(stream.Signature(MemResp(self.arbiter.tag_bits))),
            "busy": Out(1), "done": Out(1),
            "error": Out(DcuError(cfg)),
            "perf_addr": In(range(len(self.perf_names))), "perf_data": Out(32),
            "waves": Out(data.ArrayLayout(WaveStatus, cfg.simds * cfg.wave_slots)),
            **({"map_base": In(data.ArrayLayout(ADDR_BITS, map_ranges)),
                "map_end": In(data.ArrayLayout(ADDR_BITS, map_ranges))} if map_ranges else {}),
        })

    def _counters(self):
        for s, simd in enumerate(self.simds):
            yield from _leaves(f"simd{s}", simd.perf)
        for c, v in enumerate(self.vmem):
            yield from _leaves(f"vmem{c}", v.counters)
        for name in ("accesses", "bank_cycles", "conflict_cycles"):
            yield from _leaves(f"lds.{name}", getattr(self.lds, name))
        for name in ("hits", "misses", "prefetches"):
            yield from _leaves(f"icache.{name}", getattr(self.icache, name))
        for name in ("hits", "misses"):
            yield from _leaves(f"scache.{name}", getattr(self.scache, name))
        yield from _leaves("mem.requests", self.arbiter.requests)
        yield from _leaves("dispatch", self.dispatcher.counters)
        yield from _leaves("barrier", self.barrier.counters)

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        stop = Signal()          # an error froze the DCU
        run = ~stop

        def add(name, unit):
            m.submodules[name] = _Freeze(run)(unit)

        for s, simd in enumerate(self.simds):
            add(f"simd{s}", simd)
        for name in ("icache", "scache", "lds", "arbiter", "dispatcher", "barrier", "trans"):
            add(name, getattr(self, name))
        for c, v in enumerate(self.vmem):
            add(f"vmem{c}", v)
        disp, bar, lds = self.dispatcher, self.barrier, self.lds

        # ---- dispatch --------------------------------------------------------------------
        connect(m, wiring.flipped(self.dispatch), disp.start)
        start = Signal()
        m.d.comb += [start.eq(self.dispatch.valid & self.dispatch.ready),
                     self.icache.flush.eq(start), self.scache.flush.eq(start)]
        connect(m, disp.lds_alloc, lds.alloc)
        m.d.comb += lds.wgp.eq(disp.wgp)
        m.d.comb += [bar.slot_live.eq(disp.slot_live), bar.slot_wg.eq(disp.slot_wg), bar.open_wg.eq(disp.open_wg)]

        # ---- the SIMDs and their memory ports ----------------------------------------------
        for s, simd in enumerate(self.simds):
            cu, k = divmod(s, cfg.simds_per_cu)
            connect(m, disp.launch[s], simd.launch)
            m.d.comb += [disp.launched_slot[s].eq(simd.launched_slot), disp.ended[s].eq(simd.ended),
                         bar.ended[s].eq(simd.ended), bar.bar_wait[s].eq(simd.bar_wait),
                         simd.bar_release.eq(bar.bar_release[s])]
            connect(m, simd.fetch_req, self.icache.req[s])
            connect(m, self.icache.resp[s], simd.fetch_resp)
            connect(m, simd.smem_req, self.scache.req[s])
            connect(m, self.scache.resp[s], simd.smem_resp)
            connect(m, simd.vmem_req, self.vmem[cu].req[k])
            connect(m, self.vmem[cu].resp[k], simd.vmem_resp)
            connect(m, simd.lds_req, lds.req[s])
            m.d.comb += [simd.vmem_req_row.eq(self.vmem[cu].req_row[k]), simd.lds_req_row.eq(lds.req_row[s])]
            connect(m, lds.resp[s], simd.lds_resp)
            connect(m, simd.trans_req, self.trans.req[s])
            connect(m, self.trans.resp[s], simd.trans_resp)
        for v in self.vmem:
            m.d.comb += [v.aperture_base.eq(self.aperture_base), v.aperture_size.eq(self.aperture_size)]
            if self.map_ranges:
                m.d.comb += [v.map_base.eq(self.map_base), v.map_end.eq(self.map_end)]
        m.d.comb += [self.waves[s * cfg.wave_slots + w].eq(simd.waves[w])
                     for s, simd in enumerate(self.simds) for w in range(cfg.wave_slots)]

        # ---- external memory ---------------------------------------------------------------
        arb = self.arbiter
        clients = {Client.ICACHE: self.icache, Client.SCACHE: self.scache,
                   Client.L0_CU0: self.vmem[0], Client.L0_CU1: self.vmem[1]}
        for idx, unit in clients.items():
            connect(m, unit.mem, arb.clients[idx])
            connect(m, arb.client_resp[idx], unit.mem_resp)
        # Stopped, the DCU's port goes quiet: a request held there would be taken again every
        # cycle (an atomic applied again), and a response taken would be lost.
        m.d.comb += [self.mem.valid.eq(arb.mem.valid & run), self.mem.payload.eq(arb.mem.payload),
                     arb.mem.ready.eq(self.mem.ready & run),
                     arb.mem_resp.valid.eq(self.mem_resp.valid & run), arb.mem_resp.payload.eq(self.mem_resp.payload),
                     self.mem_resp.ready.eq(arb.mem_resp.ready & run)]

        # ---- status, errors and the watchdog ---------------------------------------------
        m.d.comb += [self.busy.eq(disp.busy & ~stop), self.done.eq(disp.done | stop)]
        err = self.error
        m.d.comb += stop.eq(err.valid)
        found = Signal(DcuError(cfg))   # the highest-priority error this cycle
        cases = []
        for s, simd in enumerate(self.simds):
            e = simd.error
            cause = Mux(e.cause == PipeError.UNSUPPORTED, DcuErrorCause.UNSUPPORTED, DcuErrorCause.ILLEGAL_INSTRUCTION)
            cases.append((e.valid, {"cause": cause, "simd": s, "wave": e.wave, "pc": e.pc}))
        for c, v in enumerate(self.vmem):
            e = v.error
            cases.append((e.valid, {"cause": DcuErrorCause.MEMORY_FAULT, "simd": c * cfg.simds_per_cu + e.simd,
                                    "wave": e.wave, "lane": e.lane, "addr": e.addr, "access": e.kind,
                                    "size": e.size}))
        for unit, cause in ((self.scache, DcuErrorCause.SCALAR_FAULT), (self.icache, DcuErrorCause.FETCH_FAULT)):
            e = unit.error
            cases.append((e.valid, {"cause": cause, "simd": e.simd, "wave": e.wave, "addr": e.addr}))
        e = lds.error
        cases.append((e.valid, {"cause": DcuErrorCause.LDS_FAULT, "simd": e.simd, "wave": e.wave,
                                "lane": e.lane, "addr": e.addr}))
        cases.append((disp.error.valid, {"cause": DcuErrorCause.DISPATCH}))

        issued = Signal(32)       # instructions issued by all SIMDs (wraps)
        m.d.comb += issued.eq(sum(v for name, v in self.perf.items() if ".issued." in name))
        last_issued = Signal(32)
        idle_cycles = Signal(range(self.watchdog_cycles + 1))
        m.d.sync += last_issued.eq(issued)
        with m.If(~disp.busy | (issued != last_issued) | stop):
            m.d.sync += idle_cycles.eq(0)
        with m.Elif(idle_cycles != self.watchdog_cycles):
            m.d.sync += idle_cycles.eq(idle_cycles + 1)
        cases.append((idle_cycles == self.watchdog_cycles, {"cause": DcuErrorCause.WATCHDOG}))

        with m.If(~stop):
            for cond, fields in reversed(cases):   # the first case wins
                with m.If(cond):
                    m.d.comb += found.eq(0)
                    for name, value in fields.items():
                        m.d.comb += found[name].eq(value)
                    m.d.comb += found.valid.eq(1)
            with m.If(found.valid):
                m.d.sync += err.eq(found)

        # ---- counters as registers -----------------------------------------------------------
        table = Array(self.perf.values())
        m.d.sync += self.perf_data.eq(table[self.perf_addr])
        return m
