"""Backend ``rtl``: a dispatch on the DCU (``hdl/dcu.py``) in Amaranth's simulator, with the
Python memory model (``dcu/memmodel.py``) behind its external port.

The launcher lays out memory exactly as for the model (``dcu.launch.prepare``); the memory
model serves the DCU's requests from that same image, so buffers are read back the same
way. Errors the DCU latches (illegal instruction, memory fault, watchdog, ...) become an
:class:`RtlError` naming the SIMD, wave, PC and cause; nothing hangs: a cycle budget backs
the DCU's own watchdog.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from isa import DecodeError, decode, disassemble

__all__ = ["RtlError", "RtlResult", "run_dispatch"]


class RtlError(RuntimeError):
    """The DCU stopped a dispatch: the message names the cause, SIMD, wave and PC."""

    def __init__(self, message: str, result: "RtlResult | None" = None):
        super().__init__(message)
        self.result = result
        self.buffers = None        # set by the launcher: the buffers as the run left them


@dataclass
class RtlResult:
    cycles: int
    counters: dict[str, int] = field(default_factory=dict)
    issued: dict[str, int] = field(default_factory=dict)     # per SIMD issue group, summed
    seconds: float = 0.0


def _describe_words(words: int, pc: int) -> str:
    raw = [(words >> (32 * i)) & 0xFFFF_FFFF for i in range(3)]
    try:
        text = disassemble(decode(raw, pc=pc))
    except DecodeError:
        text = "not a gfx1200 instruction this decoder knows"
    return f"{text} (dwords {' '.join(f'{w:08x}' for w in raw)})"


def run_dispatch(prep, kernel, config, wgp: bool, *, seed: int = 0, latency=(8, 32),
                 reorder: bool = True, vcd: str | None = None, max_cycles: int = 5_000_000,
                 watchdog_cycles: int = 50_000, progress: bool | None = None,
                 timeline: str | None = None, memory: str = "py") -> RtlResult:
    """Run a prepared dispatch (``dcu.launch.prepare``) on the DCU; memory is updated in place.

    Parameters
    ----------
    prep : dcu.launch.Prepared
    kernel : dcu.codeobj.KernelInfo
    config : DCUConfig
    wgp : bool
        WGP mode.
    seed, latency, reorder
        The memory model's randomness, latency range (cycles) and response reordering.
    vcd : str, optional
        Write a waveform there and a GTKWave save file beside it (``.gtkw``).
    max_cycles : int
        Cycle budget of the whole run.
    watchdog_cycles : int
        The DCU stops when no instruction issues for this many cycles.
    progress : bool, optional
        Print a progress line to stderr; default: when stderr is a terminal.
    timeline : str, optional
        Draw every wave slot's state on every cycle (issue, or why it stalls) to this PNG.
    memory : {"py", "rtl"}
        ``py``: the Python memory model (:class:`dcu.memmodel.PyMemory`) behind the DCU's
        port. ``rtl``: simulate :class:`hdl.hosttop.HostTop`, the DCU with the RTL memory
        model, exactly the design the ``verilator`` backend compiles, so the two backends
        count the same cycles for the same ``seed``, ``latency`` and ``reorder``.

    Raises
    ------
    RtlError
        When the DCU reports an error or the cycle budget runs out.
    """
    from amaranth.sim import Simulator
    from hdl.dcu import DCU
    from hdl.dispatch import DispatchLayout
    from .hostimage import host_image, memory_size_for

    if memory not in ("py", "rtl"):
        raise ValueError(f"memory must be 'py' or 'rtl', got {memory!r}")
    img = host_image(prep, config, wgp)
    if memory == "rtl":
        from hdl.hosttop import HostTop
        top = HostTop(config, memory_size_for(img.used_bytes), img.base, latency=latency, reorder=reorder,
                      watchdog_cycles=watchdog_cycles, init=img.words.tobytes())
        dcu, port = top.dcu, top
        mem = None
    else:
        from .memmodel import PyMemory
        top = port = dcu = DCU(config, watchdog_cycles=watchdog_cycles)
        mem = PyMemory(prep.mem, latency=latency, reorder=reorder, seed=seed)
    sim = Simulator(top)
    sim.add_clock(1e-8)
    if progress is None:
        progress = sys.stderr.isatty()
    state = {"cycles": 0, "error": None}

    async def serve_memory(ctx):
        await mem.serve(ctx, dcu.mem, dcu.mem_resp)

    async def host(ctx):
        ctx.set(port.aperture_base, img.aperture_base)
        ctx.set(port.aperture_size, img.aperture_size)
        if memory == "rtl":
            ctx.set(top.seed, seed & 0xFFFF_FFFF)
        ctx.set(port.dispatch.payload, DispatchLayout(config).from_bits(img.dispatch_bits))
        ctx.set(port.dispatch.valid, 1)
        await ctx.tick().until(port.dispatch.ready)
        ctx.set(port.dispatch.valid, 0)
        t0 = last = time.perf_counter()
        cycles = 1
        while True:
            _, _, done = await ctx.tick().sample(dcu.done)
            cycles += 1
            if done:
                break
            if cycles >= max_cycles:
                state["error"] = f"the dispatch did not finish within {max_cycles} cycles"
                break
            if progress and cycles % 256 == 0:
                now = time.perf_counter()
                if now - last > 2:
                    last = now
                    print(f"\r  rtl: {cycles} cycles, {cycles / (now - t0):.0f} cycles/s", end="", file=sys.stderr)
        if progress and last != t0:
            print(file=sys.stderr)
        state["cycles"] = cycles
        err = ctx.get(dcu.error)
        if err.valid:
            state["error"] = error_text(err, config, prep, watchdog_cycles, _resident_waves(ctx, dcu))
        state["counters"] = {name: ctx.get(sig) for name, sig in dcu.perf.items()}
        if memory == "rtl":
            await ctx.tick()
            if not state["error"] and ctx.get(top.cycles) != cycles:
                state["error"] = f"HostTop counted {ctx.get(top.cycles)} cycles, the testbench {cycles}"
            ram = top.memory.ram.data
            lines = [ctx.get(ram[i]) for i in range(img.words.size // 32)]
            raw = b"".join(v.to_bytes(128, "little") for v in lines)
            img.store_back(prep, np.frombuffer(raw, np.uint32))

    if mem is not None:
        sim.add_process(serve_memory)
    sim.add_testbench(host)
    tl = None
    if timeline:
        tl = _timeline_sampler(sim, dcu)
    t0 = time.perf_counter()
    if vcd:
        from .waves import gtkw_for_vcd
        with sim.write_vcd(vcd):
            sim.run()
        gtkw_for_vcd(vcd, config.wave_slots, config.simds)
    else:
        sim.run()
    if tl is not None:
        tl.to_png(timeline, title=f"{kernel.name} on the DCU ({config.name})")
    counters = state.get("counters", {})
    issued = {}
    for name, v in counters.items():
        if ".issued." in name:
            g = name.rsplit(".", 1)[1]
            issued[g] = issued.get(g, 0) + v
    result = RtlResult(state["cycles"], counters, issued, time.perf_counter() - t0)
    if mem is not None and mem.faults:
        addr, kind = mem.faults[0]
        state["error"] = state["error"] or (f"memory fault: {kind} at {addr:#x} "
                                            f"({prep.mem.nearest(addr)}); {len(mem.faults)} faulting requests")
    if state["error"]:
        raise RtlError(f"{kernel.name} on rtl ({config.name}): {state['error']}", result)
    return result


def error_text(err, config, prep, watchdog_cycles: int, waves: list[str] | None = None) -> str:
    """The report of a latched ``hdl.dcu.DcuError`` (a view or const); ``waves`` describes the
    resident waves for a watchdog report, when the backend can see them."""
    from hdl.dcu import DcuErrorCause as Cause
    cause = Cause(err.cause)
    where = f"SIMD {err.simd}, wave slot {err.wave}"
    if cause == Cause.ILLEGAL_INSTRUCTION:
        return f"illegal instruction at {where}, PC {err.pc:#x}: {_describe_words(err.words, err.pc)}"
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


def _resident_waves(ctx, dcu) -> list[str]:
    waves = []
    for s, simd in enumerate(dcu.simds):
        tr = simd.trace
        for w in range(dcu.config.wave_slots):
            if ctx.get(tr["resident"][w]):
                waves.append(f"SIMD {s} slot {w}: PC {ctx.get(tr['pc'][w]):#x} loadcnt {ctx.get(tr['loadcnt'][w])} "
                             f"storecnt {ctx.get(tr['storecnt'][w])} dscnt {ctx.get(tr['dscnt'][w])} "
                             f"kmcnt {ctx.get(tr['kmcnt'][w])} barrier-wait {ctx.get(simd.bar_wait) >> w & 1}")
    return waves


def _timeline_sampler(sim, dcu):
    """A process recording each wave slot's state every cycle into a :class:`dcu.timeline.Timeline`."""
    from hdl.simd import StallReason
    from .timeline import Timeline
    W = dcu.config.wave_slots
    tl = Timeline([f"SIMD{s} w{w}" for s in range(len(dcu.simds)) for w in range(W)])
    issue, empty, ready = tl.code("issue"), tl.code("empty"), tl.code("ready")
    by_reason = {r.value: tl.code(r.name.lower()) for r in StallReason if r is not StallReason.NONE}
    by_reason[StallReason.NONE.value] = ready
    probes = []
    for simd in dcu.simds:
        tr = simd.trace
        probes += [tr["issue"], tr["sel"], tr["issue_s"], tr["sel_s"], *tr["resident"], *[w.as_value() for w in tr["why"]]]

    async def sample(ctx):
        cycle = 0
        async for _, _, *v in ctx.tick().sample(*probes):
            codes = []
            for s in range(len(dcu.simds)):
                base = s * (4 + 2 * W)
                iss, sel, iss_s, sel_s = v[base: base + 4]
                for w in range(W):
                    if (iss and sel == w) or (iss_s and sel_s == w):
                        codes.append(issue)
                    elif not v[base + 4 + w]:
                        codes.append(empty)
                    else:
                        codes.append(by_reason[v[base + 4 + W + w]])
            tl.add_cycle(cycle, codes)
            cycle += 1

    sim.add_process(sample)
    return tl
