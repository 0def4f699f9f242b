"""Backend ``rtl``: a dispatch on the DCU (``hdl/top/dcu.py``) in Amaranth's simulator, with the
Python memory model (``dcu/memmodel.py``) behind its external port.

The launcher lays out memory exactly as for the model (``dcu.launch.prepare``); the memory
model serves the DCU's requests from that same image, so buffers are read back the same
way. Errors the DCU latches (illegal instruction, memory fault, watchdog, ...) become an
:class:`RtlError` naming the SIMD, wave, PC and cause; nothing hangs: a cycle budget backs
the DCU's own watchdog.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from isa import DecodeError, decode, disassemble

from ..launch_errors import RtlError

__all__ = ["RtlError", "RtlResult", "RtlSession", "describe_waves", "issued_by_group", "run_dispatch", "SESSIONS"]


@dataclass
class RtlResult:
    cycles: int
    counters: dict[str, int] = field(default_factory=dict)
    issued: dict[str, int] = field(default_factory=dict)     # per SIMD issue group, summed
    seconds: float = 0.0         # the simulation's wall time
    cpu_seconds: float = 0.0     # and the CPU time this process spent on it
    run_seconds: float = 0.0     # the dispatch's wall time alone (no elaboration, no compiling)


def issued_by_group(counters: dict[str, int]) -> dict[str, int]:
    """The DCU's ``simdN.issued.GROUP`` counters summed over the SIMDs, by issue group."""
    issued: dict[str, int] = {}
    for name, v in counters.items():
        if ".issued." in name:
            g = name.rsplit(".", 1)[1]
            issued[g] = issued.get(g, 0) + v
    return issued


STOPPED_WATCH_CYCLES = 32    # after an error: cycles in which the DCU must request no memory


class RtlSession:
    """One DCU built for Amaranth's simulator that runs dispatches one after another.

    Building the simulator of a whole DCU costs 30–50 s (elaboration, then compiling its
    processes), often more than the dispatch. A session builds it once;
    ``Simulator.reset()`` before each further dispatch returns every signal and memory to its
    initial value and restarts every process, so each dispatch sees the DCU a new simulator
    would (tests/test_dcu.py: a kernel run before and after another counts the same).

    Parameters
    ----------
    config : DCUConfig
    watchdog_cycles : int
        The DCU stops when no instruction issues for this many cycles.
    host_top : hdl.top.hosttop.HostTop, optional
        Simulate this top (the DCU with the RTL memory model: a dispatch's image as its
        memory's initial contents, or, built without contents, each dispatch's image written
        into it first) instead of the DCU with :class:`dcu.memmodel.PyMemory` behind its port.

    Members
    -------
    sim : amaranth.sim.Simulator
        Processes added to it (``sim.add_process``) run again in every dispatch.
    dcu : hdl.top.dcu.DCU
    """

    def __init__(self, config, *, watchdog_cycles: int = 50_000, host_top=None):
        from amaranth.sim import Simulator
        self.config, self.watchdog_cycles = config, watchdog_cycles
        if host_top is None:
            from hdl.top.dcu import DCU
            from ..memmodel import HOST_MAP_RANGES
            self.top = self.dcu = DCU(config, watchdog_cycles=watchdog_cycles, map_ranges=HOST_MAP_RANGES)
        else:
            self.top, self.dcu = host_top, host_top.dcu
        self.sim = Simulator(self.top)
        self.sim.add_clock(1e-8)
        self._job: dict | None = None
        self._used = False
        self.sim.add_process(self._serve_memory)
        self.sim.add_process(self._sample_timeline)
        self.sim.add_testbench(self._host)

    async def _serve_memory(self, ctx):
        if self._job["mem"] is not None:
            await self._job["mem"].serve(ctx, self.dcu.mem, self.dcu.mem_resp)

    async def _sample_timeline(self, ctx):
        if self._job["timeline"] is not None:
            await _sample_timeline(ctx, self.dcu, self._job["timeline"])

    async def _host(self, ctx):
        job, dcu, config = self._job, self.dcu, self.config
        port, img, prep = self.top, job["img"], job["prep"]
        from ..memmodel import OPEN_APERTURE
        ctx.set(port.aperture_base, OPEN_APERTURE[0])
        ctx.set(port.aperture_size, OPEN_APERTURE[1])
        from ..memmodel import HOST_MAP_RANGES, buffer_ranges, map_words
        base, end = map_words(buffer_ranges(prep.mem.allocations, HOST_MAP_RANGES))
        ctx.set(port.map_base.as_value(), base)      # the memory's and the vector memory units' map
        ctx.set(port.map_end.as_value(), end)
        if job["mem"] is None:
            ctx.set(port.seed, job["seed"] & 0xFFFF_FFFF)
            ctx.set(port.mem_knobs, job["knobs"])
            if job["load"]:     # a reused HostTop: its memory was reset to zeros
                ram, line_words = port.memory.ram.data, 32
                for i in range(img.words.size // line_words):
                    line = img.words[i * line_words:(i + 1) * line_words]
                    if line.any():
                        ctx.set(ram[i], int.from_bytes(line.astype("<u4").tobytes(), "little"))
        from hdl.top.dispatch import DispatchLayout
        ctx.set(port.dispatch.payload, DispatchLayout(config).from_bits(img.dispatch_bits))
        ctx.set(port.dispatch.valid, 1)
        await ctx.tick().until(port.dispatch.ready)
        ctx.set(port.dispatch.valid, 0)
        t0 = time.perf_counter()
        cycles, max_cycles, progress = 1, job["max_cycles"], job["progress"]
        progress.count(f"{job['backend']} ({config.name})", "cycles", max_cycles)
        while True:
            _, _, done = await ctx.tick().sample(dcu.done)
            cycles += 1
            if done:
                break
            if cycles >= max_cycles:
                job["error"] = f"the dispatch did not finish within {max_cycles} cycles"
                job["waves"] = _resident_waves(ctx, dcu, prep)
                break
            if cycles % 256 == 0:
                progress.update(cycles)
        progress.update(cycles)
        progress.close()
        job["cycles"], job["run_seconds"] = cycles, time.perf_counter() - t0
        err = ctx.get(dcu.error)
        if err.valid:
            job["waves"] = _resident_waves(ctx, dcu, prep)
            job["error"] = error_text(err, config, prep, self.watchdog_cycles, job["waves"])
            job["dcu_error"] = err
            # a stopped DCU holds its state: nothing may leave it (an atomic request held
            # at its port would otherwise be applied again every cycle)
            for _ in range(STOPPED_WATCH_CYCLES):
                _, _, leaving = await ctx.tick().sample(dcu.mem.valid)
                if leaving:
                    job["error"] += "; the DCU requested memory after it stopped"
                    break
        job["counters"] = {name: ctx.get(sig) for name, sig in dcu.perf.items()}
        if job["mem"] is None:
            job["mem_faults"] = mem_faults(ctx.get(port.mem_faults))
            await ctx.tick()
            if not job["error"] and ctx.get(port.cycles) != cycles:
                job["error"] = f"HostTop counted {ctx.get(port.cycles)} cycles, the testbench {cycles}"
        job["scoreboard"] = await _drained_scoreboard(ctx, port, job["mem"], job["drain"])
        if job["mem"] is None:
            ram = port.memory.ram.data
            lines = [ctx.get(ram[i]) for i in range(img.words.size // 32)]
            raw = b"".join(v.to_bytes(128, "little") for v in lines)
            img.store_back(prep, np.frombuffer(raw, np.uint32))

    def run(self, prep, kernel, wgp: bool, *, seed: int = 0, latency=(8, 32), reorder: bool = True,
            backpressure: float = 0.0,
            vcd: str | None = None, max_cycles: int = 5_000_000, progress: bool | None = None,
            timeline: str | None = None, img=None) -> RtlResult:
        """Run one prepared dispatch (``dcu.launch.prepare``); memory is updated in place. The
        parameters are :func:`run_dispatch`'s; ``img`` is the host image of a ``host_top``
        session's dispatch: the contents the top was built with, or, for a top built without
        them, written into its memory before the dispatch starts."""
        from ..hostimage import host_image
        from hdl.mem.extmem import latency_range
        from ..memmodel import PyMemory, buffer_ranges, check_scoreboard, hosttop_knobs
        rtl_memory = self.top is not self.dcu
        if rtl_memory and img is None:
            raise ValueError("a HostTop session runs the image it was built with: pass it as img")
        img = img or host_image(prep, self.config, wgp)
        tl = None
        if timeline:
            from ..timeline import Timeline
            W = self.config.wave_slots
            tl = Timeline([f"SIMD{s} w{w}" for s in range(len(self.dcu.simds)) for w in range(W)])
        from ..progress import as_progress
        buffers = buffer_ranges(prep.mem.allocations)
        self._job = {"prep": prep, "img": img, "seed": seed, "max_cycles": max_cycles, "timeline": tl,
                     "load": rtl_memory and not self.top.memory.init_lines,   # a top built empty
                     "progress": as_progress(progress), "error": None, "backend": "rtl",
                     "cycles": 0, "counters": {}, "run_seconds": 0.0, "waves": None, "dcu_error": None,
                     "mem_faults": [], "buffers": buffers,
                     "knobs": hosttop_knobs(latency, reorder, backpressure) if rtl_memory else None,
                     "drain": 2 * (latency_range(latency)[1] + 64) + 64,
                     "mem": None if rtl_memory else PyMemory(prep.mem, latency=latency, reorder=reorder, seed=seed,
                                                             backpressure=backpressure,
                                                             buffers=buffers)}
        if self._used:
            self.sim.reset()
        self._used = True
        t0, c0 = time.perf_counter(), time.process_time()
        if vcd:
            from ..waves import gtkw_for_vcd
            with self.sim.write_vcd(vcd):
                self.sim.run()
            gtkw_for_vcd(vcd, self.config.wave_slots, self.config.simds)
        else:
            self.sim.run()
        job = self._job
        if tl is not None:
            tl.to_png(timeline, title=f"{kernel.name} on the DCU ({self.config.name})")
        result = RtlResult(job["cycles"], job["counters"], issued_by_group(job["counters"]), time.perf_counter() - t0,
                           time.process_time() - c0, job["run_seconds"])
        if job["mem"] is not None:
            job["mem_faults"] = job["mem"].fault_log
        check_scoreboard(job["scoreboard"], f"{kernel.name} on rtl ({self.config.name})",
                         stopped=job["dcu_error"] is not None)
        if job["error"]:
            from ..errors import rtl_fault
            fault, category = rtl_fault(job["dcu_error"], self.config, prep, kernel.name, "rtl", job["buffers"],
                                        mem_faults=job["mem_faults"], waves=job["waves"],
                                        watchdog_cycles=self.watchdog_cycles, max_cycles=max_cycles)
            raise RtlError(f"{kernel.name} on rtl ({self.config.name}): {job['error']}", result, fault, category)
        return result


# The simulators ``run_dispatch(reuse=True)`` keeps, by what they were built for.
SESSIONS: dict[tuple, RtlSession] = {}


def run_dispatch(prep, kernel, config, wgp: bool, *, seed: int = 0, latency=(8, 32),
                 reorder: bool = True, backpressure: float = 0.0, vcd: str | None = None, max_cycles: int = 5_000_000,
                 watchdog_cycles: int = 50_000, progress: bool | None = None,
                 timeline: str | None = None, memory: str = "py", reuse: bool = False) -> RtlResult:
    """Run a prepared dispatch (``dcu.launch.prepare``) on the DCU; memory is updated in place.

    Parameters
    ----------
    prep : dcu.launch.Prepared
    kernel : dcu.codeobj.KernelInfo
    config : DCUConfig
    wgp : bool
        WGP mode.
    seed, latency, reorder, backpressure
        The memory model's randomness, latency range (cycles; 2 to
        ``hdl.top.hosttop.MAX_LATENCY`` with ``memory="rtl"``), response reordering, and the
        probability that it refuses a request in a cycle. Either memory keeps a scoreboard of
        its port, checked after the run.
    vcd : str, optional
        Write a waveform there and a GTKWave save file beside it (``.gtkw``).
    max_cycles : int
        Cycle budget of the whole run.
    watchdog_cycles : int
        The DCU stops when no instruction issues for this many cycles.
    progress : bool or dcu.progress.Progress, optional
        Progress lines on stderr (phases, then cycles against ``max_cycles``); default: when
        stderr is a terminal.
    timeline : str, optional
        Draw every wave slot's state on every cycle (issue, or why it stalls) to this PNG.
    memory : {"py", "rtl"}
        ``py``: the Python memory model (:class:`dcu.memmodel.PyMemory`) behind the DCU's
        port. ``rtl``: simulate :class:`hdl.top.hosttop.HostTop`, the DCU with the RTL memory
        model, exactly the design the ``verilator`` backend compiles, so the two backends
        count the same cycles for the same ``seed``, ``latency``, ``reorder`` and
        ``backpressure`` (run-time settings of one build).
    reuse : bool
        Run on this process's :class:`RtlSession` for the configuration and watchdog (and,
        with ``memory="rtl"``, the memory's size and base), built by the
        first such call: a test or benchmark running many kernels saves the 30–80 s of
        building each. A reused HostTop is built with an empty memory and each dispatch's
        image is written into it before the dispatch starts.

    Raises
    ------
    RtlError
        When the DCU reports an error or the cycle budget runs out.
    dcu.memmodel.ScoreboardError
        When the memory model lost or duplicated a response.
    """
    from ..hostimage import host_image, memory_size_for
    from ..progress import as_progress

    if memory not in ("py", "rtl"):
        raise ValueError(f"memory must be 'py' or 'rtl', got {memory!r}")
    progress = as_progress(progress)
    options = dict(seed=seed, latency=latency, reorder=reorder, backpressure=backpressure, vcd=vcd,
                   max_cycles=max_cycles, progress=progress, timeline=timeline)
    if memory == "rtl":
        from ..hostimage import simulation_hosttop
        from ..memmodel import hosttop_knobs
        hosttop_knobs(latency, reorder, backpressure)     # settings it takes, before minutes of elaboration
        img = host_image(prep, config, wgp)
        mem_bytes = memory_size_for(img.used_bytes)

        def session():
            # reused: built empty, the testbench writes each dispatch's image (as the
            # verilator harness loads it); otherwise the image is the memory's contents
            top = simulation_hosttop(config, mem_bytes, img.base, watchdog_cycles,
                                     init=b"" if reuse else img.words.tobytes())
            return RtlSession(config, watchdog_cycles=watchdog_cycles, host_top=top)
        key = (repr(config), watchdog_cycles, mem_bytes, img.base)
    else:
        def session():
            return RtlSession(config, watchdog_cycles=watchdog_cycles)
        key = (repr(config), watchdog_cycles)
    if not reuse or key not in SESSIONS:
        progress.phase(f"elaborating the DCU ({config.name})")
        built = session()
        if not reuse:
            return built.run(prep, kernel, wgp, img=img if memory == "rtl" else None, **options)
        SESSIONS[key] = built
    return SESSIONS[key].run(prep, kernel, wgp, img=img if memory == "rtl" else None, **options)


async def _drained_scoreboard(ctx, port, mem, max_cycles: int):
    """The memory's scoreboard (:class:`dcu.memmodel.Scoreboard`) once it has nothing in flight,
    at most ``max_cycles`` after the run: an instruction fill may be outstanding when the last
    wave ends, and a stopped DCU's requests are still answered."""
    from ..memmodel import Scoreboard
    for _ in range(max_cycles):
        if mem.idle if mem is not None else ctx.get(port.mem_idle):
            break
        await ctx.tick()
    return mem.scoreboard if mem is not None else Scoreboard.from_record(ctx.get(port.mem_scoreboard))


def error_text(err, config, prep, watchdog_cycles: int, waves: list[str] | None = None) -> str:
    """The report of a latched ``hdl.top.dcu.DcuError`` (a view or const); ``waves`` describes the
    resident waves for a watchdog report, when the backend can see them."""
    from hdl.top.dcu import DcuErrorCause as Cause
    cause = Cause(err.cause)
    where = f"SIMD {err.simd}, wave slot {err.wave}"
    if cause in (Cause.ILLEGAL_INSTRUCTION, Cause.UNSUPPORTED):
        from ..refused import refused_instruction
        unit, inst = refused_instruction(prep, int(err.pc))
        if cause == Cause.ILLEGAL_INSTRUCTION:
            return f"illegal instruction at {where}, PC {err.pc:#x}: {inst}"
        return f"unsupported instruction at {where}, PC {err.pc:#x}: the RTL's {unit} does not execute {inst}"
    if cause == Cause.MEMORY_FAULT:
        return (f"memory fault at {where}, lane {err.lane}: address {err.addr:#x} is outside global memory "
                f"({prep.mem.nearest(err.addr)})")
    if cause in (Cause.SCALAR_FAULT, Cause.FETCH_FAULT):
        what = "scalar load" if cause == Cause.SCALAR_FAULT else "instruction fetch"
        return f"{what} fault at {where}: address {err.addr:#x} ({prep.mem.nearest(err.addr)})"
    if cause == Cause.LDS_FAULT:
        return f"LDS fault at {where}, lane {err.lane}: LDS address {err.addr:#x} is misaligned or outside the window"
    if cause == Cause.DISPATCH:
        return "a workgroup can never be placed on this configuration"
    text = f"watchdog: no instruction issued for {watchdog_cycles} cycles"
    if waves is None:
        return text
    return text + "; resident waves:\n    " + "\n    ".join(waves or ["none"])


def mem_faults(records) -> list:
    """HostTop's ``mem_faults`` (a const of its layout) as :class:`dcu.memmodel.MemFault` records."""
    from hdl.mem.memport import MemKind
    from ..memmodel import MemFault
    return [MemFault(int(r.addr), MemKind(r.kind), int(r.mask), int(r.tag)) for r in records if r.valid]


def instruction_at(prep, pc: int) -> str:
    """The instruction at ``pc`` in a prepared dispatch's memory, disassembled (for a report)."""
    off, data = pc - prep.mem.base, prep.mem.data
    if pc % 4 or not 0 <= off < data.size:
        return "outside the memory image"
    raw = data[off: off + 12].tobytes()
    try:
        return disassemble(decode([int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw) - 3, 4)], pc=pc))
    except DecodeError:
        return "not an instruction the decoder knows"


def _resident_waves(ctx, dcu, prep=None) -> list[str]:
    return describe_waves(ctx.get(dcu.waves), dcu.config, prep)


def describe_waves(waves, config, prep=None) -> list[str]:
    """The resident waves of a DCU's ``waves`` (a value of its layout: every SIMD's slots),
    one line each: SIMD, slot, PC (the next instruction the wave issues, with its text given the
    dispatch; after a branch issues, the one after the branch until the branch resolves), the
    outstanding-access counters an ``s_wait_*`` waits on, and whether it has signalled the
    workgroup barrier (``s_barrier_signal``) and waits for the others."""
    out = []
    for i, w in enumerate(waves):
        if not w.resident:
            continue
        s, slot = divmod(i, config.wave_slots)
        pc = int(w.pc)
        at = f" ({instruction_at(prep, pc)})" if prep is not None else ""
        out.append(f"SIMD {s} slot {slot}: PC {pc:#x}{at} loadcnt {int(w.loadcnt)} storecnt {int(w.storecnt)} "
                   f"dscnt {int(w.dscnt)} kmcnt {int(w.kmcnt)} barrier-signalled {int(w.barrier)}")
    return out


async def _sample_timeline(ctx, dcu, tl) -> None:
    """Record each wave slot's state every cycle into ``tl`` (a :class:`dcu.timeline.Timeline`)."""
    from hdl.layouts import StallReason
    W = dcu.config.wave_slots
    issue, empty, ready = tl.code("issue"), tl.code("empty"), tl.code("ready")
    by_reason = {r.value: tl.code(r.name.lower()) for r in StallReason if r is not StallReason.NONE}
    by_reason[StallReason.NONE.value] = ready
    # the issue stage sees one wave a cycle: a wave's state is its last stall reason there
    # until it issues
    probes = []
    for simd in dcu.simds:
        tr = simd.scalar.trace
        probes += [tr["take"], tr["issue"], tr["wave"], tr["stall"].as_value(), tr["resident"]]
    state = [[ready] * W for _ in dcu.simds]
    cycle = 0
    async for _, _, *v in ctx.tick().sample(*probes):
        codes = []
        for s in range(len(dcu.simds)):
            take, iss, wave, stall, resident = v[5 * s: 5 * s + 5]
            for w in range(W):
                if take and wave == w:
                    state[s][w] = issue if iss else by_reason[stall]
                code = state[s][w] if resident >> w & 1 else empty
                codes.append(code)
                if code == issue:
                    state[s][w] = ready
        tl.add_cycle(cycle, codes)
        cycle += 1
