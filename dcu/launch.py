"""Launch API in the style of PyOpenCL/HIP: load a program, launch a kernel, read buffers back.

Example
-------
>>> prog = load_program("firmware_tests/vector_add.cl")
>>> run = launch(prog.kernel("vector_add"), grid=(4,), block=(64,), args=[a, b, out, np.uint32(256)])
>>> run.buffers[2], run.report.instructions
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .admission import check_kernel
from .codeobj import KernelInfo
from .launch_errors import LaunchError, LaunchUnsupported, RtlError, VerilatorError
from .prepare import Prepared, Program, image_base, launch_dims, load_program, prepare, private_lane_bytes

__all__ = ["Program", "RunReport", "Run", "LaunchError", "LaunchUnsupported", "load_program", "launch", "BACKENDS",
           "Prepared", "prepare", "private_lane_bytes", "image_base"]

BACKENDS = ("model", "rtl", "verilator")


@dataclass
class RunReport:
    """What a run did: instruction counts, cycles (None on the model) and counters."""
    kernel: str
    backend: str
    config: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    instructions: int
    instructions_by_kind: dict[str, int]
    cycles: int | None
    counters: dict[str, int] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)   # what the run verified, in words

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "backend": self.backend, "config": self.config,
                "grid": list(self.grid), "block": list(self.block),
                "instructions": self.instructions, "instructions_by_kind": dict(self.instructions_by_kind),
                "cycles": self.cycles, "counters": dict(self.counters), "checks": list(self.checks)}

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.instructions_by_kind.items(), key=lambda kv: -kv[1]))
        lines = [f"{self.kernel} on {self.backend} ({self.config}): grid {self.grid} x block {self.block}"]
        lines += [f"  checked: {c}" for c in self.checks]
        lines += [f"  wave-instructions: {self.instructions} ({kinds})",
                  f"  cycles: {self.cycles if self.cycles is not None else 'n/a on the model backend'}"]
        if self.counters:
            lines.append("  counters: " + ", ".join(f"{k}={v}" for k, v in _digest(self.counters).items()))
        return "\n".join(lines)


def _digest(counters: dict, limit: int = 16) -> dict:
    """Few counters as they are; many (the RTL's per-unit counters) summed over the units of
    one kind (``simd0.stall.fetch`` + ... -> ``simd.stall.fetch``), zeros left out."""
    if len(counters) <= limit:
        return dict(counters)
    import re
    out: dict = {}
    for k, v in counters.items():
        key = re.sub(r"^(simd|vmem)\d+\.", r"\1.", re.sub(r"(accesses|cycles)\d+$", r"\1", k))
        if "requests" in key:
            key = "mem.requests"
        out[key] = max(out.get(key, 0), v) if key.endswith("max") else out.get(key, 0) + v
    return {k: v for k, v in out.items() if v and not k.endswith(("resident", "rq_occupancy"))}


@dataclass
class Run:
    buffers: list            # numpy array per buffer argument, None for scalars
    report: RunReport


def launch(kernel: KernelInfo, grid, block, args: Sequence, backend: str = "model",
           config: str = "default", vcd: str | None = None, max_instructions: int = 50_000_000,
           seed: int = 0, max_wave_instructions: int | None = None, progress=None, **rtl_options) -> Run:
    """Run ``kernel`` over ``grid`` workgroups of ``block`` work-items.

    Parameters
    ----------
    kernel : KernelInfo
        From :meth:`Program.kernel`.
    grid, block : int or tuple of int
        Workgroups per dimension and work-items per workgroup per dimension.
    args : sequence
        numpy arrays (buffers, passed as global addresses and read back after the run)
        and numpy scalars (np.uint32, np.int32, np.float32, np.uint64, np.int64, ...).
    backend : {"model", "rtl", "verilator"}
    config : str or DCUConfig
        Configuration preset (``hdl.config.PRESETS``); the kernel is refused before launch
        if it needs more than the preset has.
    vcd : str, optional
        ``rtl``, ``verilator``: write a waveform there and a GTKWave save file beside it.
    seed : int
        ``rtl``, ``verilator``: seed of the memory model's latency, reordering and back-pressure.
    max_instructions, max_wave_instructions : int
        ``model``: the budget of wave-instructions of the whole dispatch, and of each wave
        (None: none); a run past either raises :class:`sim.model.Watchdog`.
    progress : bool or dcu.progress.Progress, optional
        Progress lines on stderr (the model: a :class:`dcu.progress.Progress` only; the RTL
        backends: True, or by default when stderr is a terminal).
    **rtl_options
        Further options of :func:`dcu.backends.rtl.run_dispatch` (``latency``, ``reorder``,
        ``backpressure``, ``max_cycles``, ``watchdog_cycles``, ``progress``, ``timeline``, ``memory``) or, for
        ``verilator``, of :func:`dcu.backends.verilator.run_dispatch` (the same less ``timeline``
        and ``memory``: it always simulates the RTL memory model).

    Returns
    -------
    Run
        ``buffers`` (a numpy array per buffer argument, None for scalars) and ``report``.
    """
    if backend not in BACKENDS:
        raise LaunchError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if vcd and backend == "model":
        raise LaunchError("a waveform (vcd) needs an RTL backend")
    grid, block = launch_dims(grid), launch_dims(block)
    if backend in ("rtl", "verilator") and private_lane_bytes(kernel):
        raise LaunchUnsupported(f"kernel {kernel.name} cannot run on backend {backend!r}: it uses "
                          f"{private_lane_bytes(kernel)} bytes of private (scratch) memory per lane, which "
                          "the RTL does not implement; backend 'model' runs it")
    if kernel.reqd_workgroup_size and tuple(kernel.reqd_workgroup_size) != block:
        raise LaunchError(f"kernel {kernel.name} requires block {tuple(kernel.reqd_workgroup_size)}, got {block}")
    from hdl.config import get_config
    cfg = get_config(config)
    occupancy = check_kernel(cfg, kernel, block)
    if backend in ("rtl", "verilator"):
        from .backends.rtlcheck import refuse_unsupported
        refuse_unsupported(kernel, backend)
    prep = prepare(kernel, grid, block, args, max_instructions)
    fits = (f"fits preset '{cfg.name}' ({kernel.vgpr_count} VGPRs, {kernel.group_segment_size} B LDS; "
            f"occupancy {occupancy} waves per SIMD)")
    if backend in ("rtl", "verilator"):
        return _launch_rtl(kernel, prep, cfg, grid, block, fits, backend, vcd=vcd, seed=seed, progress=progress,
                           **rtl_options)
    from sim.model import ExecutionError, Model

    from .progress import as_progress
    prep.dispatch.max_wave_instructions = max_wave_instructions
    progress = as_progress(progress) if progress is not None else None
    model = Model(prep.mem, prep.code, prep.code_base,
                  progress=progress.model_callback(max_wave_instructions) if progress else None)
    try:
        stats = model.run(prep.dispatch)
    except ExecutionError as e:
        e.buffers = prep.read_back()  # nothing is lost: the buffers as the failed run left them
        e.report = RunReport(kernel.name, backend, cfg.name, grid, block, model.stats.instructions,
                             dict(model.stats.by_kind), None, _model_counters(model.stats))
        raise
    finally:
        if progress:
            progress.close()
    out = prep.read_back()
    counters = _model_counters(stats)
    checks = [fits,
              f"all {stats.waves} waves of {stats.workgroups} workgroups reached s_endpgm; "
              f"every one of {stats.global_accesses} global accesses fell inside its buffer"]
    if prep.dispatch.scratch_lane_bytes:
        checks.append(f"every private (scratch) access fell inside its lane's "
                      f"{prep.dispatch.scratch_lane_bytes}-byte segment")
    report = RunReport(kernel.name, backend, cfg.name, grid, block, stats.instructions,
                       dict(stats.by_kind), None, counters, checks)
    return Run(out, report)


def _model_counters(stats) -> dict:
    return {"waves": stats.waves, "workgroups": stats.workgroups,
            **{k: stats.counters[k] for k in ("loadcnt", "storecnt", "dscnt", "kmcnt")},
            "ds_accesses": stats.ds_accesses, "ds_conflict_cycles": stats.ds_cycles,
            "global_accesses": stats.global_accesses, "global_lines": stats.global_lines}


def _launch_rtl(kernel: KernelInfo, prep: Prepared, cfg, grid, block, fits: str, backend: str, **options) -> Run:
    """The RTL backends: the DCU in Amaranth's simulator (``dcu.backends.rtl``) or compiled by
    Verilator (``dcu.backends.verilator``)."""
    if backend == "rtl":
        from .backends.rtl import run_dispatch
    else:
        from .backends.verilator import run_dispatch
        for opt in ("timeline", "memory"):
            if options.get(opt) is not None:
                raise LaunchError(f"option {opt!r} is for backend 'rtl' only")
            options.pop(opt, None)
    try:
        res = run_dispatch(prep, kernel, cfg, bool(kernel.wgp_mode), **options)
    except RtlError as e:
        e.buffers = prep.read_back()   # nothing is lost: the buffers as the failed run left them
        if e.result is not None:
            e.report = RunReport(kernel.name, backend, cfg.name, grid, block, sum(e.result.issued.values()),
                                 dict(e.result.issued), e.result.cycles, dict(e.result.counters))
        raise
    except VerilatorError as e:   # Verilator missing or its build failed: say so, as a launch error
        raise LaunchError(str(e)) from e
    c = res.counters
    waves = c.get("dispatch.waves", 0)
    checks = [fits, f"all {waves} waves of {c.get('dispatch.workgroups', 0)} workgroups ended; "
              f"no error latched in {res.cycles} cycles ({res.cycles / max(res.run_seconds, 1e-9):.0f} cycles/s "
              f"simulated, elaboration apart)"]
    report = RunReport(kernel.name, backend, cfg.name, grid, block, sum(res.issued.values()),
                       dict(res.issued), res.cycles, dict(c), checks)
    return Run(prep.read_back(), report)
