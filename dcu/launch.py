"""Launch API in the style of PyOpenCL/HIP: load a program, launch a kernel, read buffers back.

Example
-------
>>> prog = load_program("firmware_tests/vector_add.cl")
>>> run = launch(prog.kernel("vector_add"), grid=(4,), block=(64,), args=[a, b, out, np.uint32(256)])
>>> run.buffers[2], run.report.instructions
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .codeobj import CodeObject, KernelArg, KernelInfo
from .toolchain import build

__all__ = ["Program", "RunReport", "Run", "LaunchError", "LaunchUnsupported", "load_program", "launch", "BACKENDS"]

BACKENDS = ("model", "rtl", "verilator")


class LaunchError(ValueError):
    """A launch that cannot be made: wrong arguments, unsupported ABI feature, resources."""


class LaunchUnsupported(LaunchError):
    """A launch of a kernel that needs what this device or backend does not have."""


class Program:
    """A built code object and its kernels."""

    def __init__(self, path: str | os.PathLike, wgp: bool = False, vopd: bool = True, options: Sequence[str] = ()):
        self.source = Path(path)
        self.wgp = wgp
        self.binary = build(self.source, wgp=wgp, vopd=vopd, options=options)
        self.code_object = CodeObject(self.binary)

    @property
    def kernels(self) -> dict[str, KernelInfo]:
        return self.code_object.kernels

    def kernel(self, name: str | None = None) -> KernelInfo:
        """The kernel ``name``; with no name, the only kernel (an error lists them if there are several)."""
        if name is None:
            if len(self.kernels) != 1:
                raise KeyError(f"{self.source} has {len(self.kernels)} kernels, name one of: {', '.join(sorted(self.kernels))}")
            return next(iter(self.kernels.values()))
        return self.code_object.kernel(name)


def load_program(path: str | os.PathLike, wgp: bool = False, vopd: bool = True,
                 options: Sequence[str] = ()) -> Program:
    """Build (if needed) and load ``path``: a ``.s``, ``.cl``, ``.o`` or ``.hsaco``. For OpenCL C,
    ``vopd=False`` builds without VOPD dual-issue words (for the RTL, which does not execute them)
    and ``options`` are further clang options (:func:`dcu.toolchain.compile_cl`)."""
    return Program(path, wgp=wgp, vopd=vopd, options=options)


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


# --------------------------------------------------------------------------------------
def _dims(v) -> tuple[int, int, int]:
    t = (int(v),) if np.isscalar(v) else tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise LaunchError(f"grid and block need 1 to 3 positive sizes, got {v!r}")
    return t + (1,) * (3 - len(t))


def _is_buffer(a) -> bool:
    return isinstance(a, np.ndarray) and a.ndim >= 1


_HIDDEN_U16 = {"hidden_group_size_x": 0, "hidden_group_size_y": 1, "hidden_group_size_z": 2}
_HIDDEN_REM = {"hidden_remainder_x": 0, "hidden_remainder_y": 1, "hidden_remainder_z": 2}
_HIDDEN_COUNT = {"hidden_block_count_x": 0, "hidden_block_count_y": 1, "hidden_block_count_z": 2}


def _hidden_value(arg: KernelArg, grid, block) -> int:
    kind = arg.value_kind
    if kind in _HIDDEN_COUNT:
        return grid[_HIDDEN_COUNT[kind]]
    if kind in _HIDDEN_U16:
        return block[_HIDDEN_U16[kind]]
    if kind in _HIDDEN_REM:
        return 0  # the grid counts whole workgroups, so no workgroup is partial
    if kind == "hidden_grid_dims":
        return 3 if grid[2] > 1 or block[2] > 1 else (2 if grid[1] > 1 or block[1] > 1 else 1)
    return 0  # global offsets, printf/hostcall buffers, queue pointers: none on this device


def _pack_scalar(value, size: int, name: str) -> bytes:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise LaunchError(f"argument {name}: expected a scalar")
    raw = arr.tobytes()
    if len(raw) != size:
        raise LaunchError(f"argument {name}: kernel expects {size} bytes, got a {arr.dtype} ({len(raw)} bytes)")
    return raw


def _kernarg_layout(kernel: KernelInfo, args: Sequence):
    """[(offset, size, arg index or None, KernelArg or None)] for explicit and hidden arguments."""
    explicit = kernel.explicit_args
    if kernel.args:
        if len(explicit) != len(args):
            names = ", ".join(a.name or a.value_kind for a in explicit)
            raise LaunchError(f"kernel {kernel.name} takes {len(explicit)} arguments ({names}), got {len(args)}")
        layout = [(a.offset, a.size, i, a) for i, a in enumerate(explicit)]
        layout += [(a.offset, a.size, None, a) for a in kernel.hidden_args]
        return layout
    # No metadata (a bare .s): natural alignment from offset 0, buffers as 8-byte addresses.
    layout, off = [], 0
    for i, a in enumerate(args):
        size = 8 if _is_buffer(a) else np.asarray(a).itemsize
        off = -(-off // size) * size
        layout.append((off, size, i, None))
        off += size
    return layout


# Private bytes per lane a kernel with a dynamic stack gets beyond its fixed size: HIP's default
# stack limit (hipLimitStackSize, 1 KiB per work-item).
DYNAMIC_STACK_BYTES = 1024


def private_lane_bytes(kernel: KernelInfo) -> int:
    """Private (scratch) bytes each lane gets: the descriptor's fixed size (+4) rounded up to a
    dword, as the command processor rounds it (LLVM AMDGPUUsage, "Private Segment Size"), or at
    least ``DYNAMIC_STACK_BYTES`` when the kernel has a dynamic stack."""
    size = kernel.private_segment_size
    if kernel.uses_dynamic_stack:
        size = max(size, DYNAMIC_STACK_BYTES)
    return -(-size // 4) * 4


def _user_sgprs(kernel: KernelInfo, kernarg_addr: int, dispatch_addr: int) -> dict[int, int]:
    """Initial user SGPRs in the order the descriptor's enable bits define (AMDGPU ABI)."""
    props, regs, n = kernel.properties, {}, 0
    order = [(0, "private_segment_buffer", 4), (1, "dispatch_ptr", 2), (2, "queue_ptr", 2),
             (3, "kernarg_segment_ptr", 2), (4, "dispatch_id", 2), (5, "flat_scratch_init", 2),
             (6, "private_segment_size", 1)]
    for bit, what, size in order:
        if not props >> bit & 1:
            continue
        if what == "dispatch_ptr":
            regs[n], regs[n + 1] = dispatch_addr & 0xFFFF_FFFF, dispatch_addr >> 32
        elif what == "kernarg_segment_ptr":
            regs[n], regs[n + 1] = kernarg_addr & 0xFFFF_FFFF, kernarg_addr >> 32
        elif what == "dispatch_id":
            for k in range(size):
                regs[n + k] = 0
        elif what == "private_segment_size":
            regs[n] = private_lane_bytes(kernel)
        else:
            raise LaunchUnsupported(f"kernel {kernel.name} asks for the {what} user SGPRs, which this device does not provide")
        n += size
    return regs


def _dispatch_packet(grid, block, kernel: KernelInfo, kernarg_addr: int) -> bytes:
    """An HSA kernel dispatch packet, for kernels that read the dispatch pointer."""
    dims = 3 if grid[2] * block[2] > 1 else (2 if grid[1] * block[1] > 1 else 1)
    return (struct.pack("<HHHHHH", 0, dims, *block, 0)
            + struct.pack("<III", *(g * b for g, b in zip(grid, block)))
            + struct.pack("<II", kernel.private_segment_size, kernel.group_segment_size)
            + struct.pack("<QQQQ", kernel.descriptor_address, kernarg_addr, 0, 0))


def image_base() -> int:
    """The address :func:`prepare` loads a code object's image at (its first allocation), so the
    PC of the instruction at offset ``x`` of a code object is ``image_base() + x``."""
    from sim.memory import GlobalMemory
    return GlobalMemory().allocate(1, "code_object").base


@dataclass
class Prepared:
    """A dispatch ready to run: memory holding the image, buffers and kernarg; the model's Dispatch."""
    mem: object
    code: bytes
    code_base: int
    dispatch: object
    buffers: dict
    args: list

    def read_back(self) -> list:
        """Every buffer argument as it is in memory now (None for scalars)."""
        out = []
        for i, _ in enumerate(self.args):
            if i in self.buffers:
                alloc, arr = self.buffers[i]
                out.append(self.mem.read_bytes(alloc.base, arr.nbytes).view(arr.dtype).reshape(arr.shape))
            else:
                out.append(None)
        return out


def prepare(kernel: KernelInfo, grid, block, args: Sequence, max_instructions: int = 50_000_000) -> Prepared:
    """Lay out memory for a dispatch: the code object image, the buffers, the kernarg segment
    and a dispatch packet, and the ABI state of every wave (the same for every backend)."""
    grid, block = _dims(grid), _dims(block)
    from sim.memory import GlobalMemory
    from sim.model import Dispatch
    mem = GlobalMemory()
    # The whole image is mapped, not just the code: clang reaches __constant data relative to the PC.
    image = mem.allocate(len(kernel.image), "code_object")
    code = kernel.image_at(image.base)
    mem.write_bytes(image.base, code)
    buffers = {}
    for i, a in enumerate(args):
        if _is_buffer(a):
            arr = np.ascontiguousarray(a)
            alloc = mem.allocate(arr.nbytes, f"arg{i}")
            mem.write_bytes(alloc.base, arr.view(np.uint8).ravel())
            buffers[i] = (alloc, arr)

    layout = _kernarg_layout(kernel, args)
    size = max([kernel.kernarg_size] + [off + sz for off, sz, _, _ in layout] + [4])
    kernarg = bytearray(size)
    for off, sz, i, meta in layout:
        if i is None:
            kernarg[off: off + sz] = _hidden_value(meta, grid, block).to_bytes(sz, "little")
        elif i in buffers:
            if meta is not None and not meta.is_buffer:
                raise LaunchError(f"argument {i} ({meta.name}) is a {meta.value_kind}, got an array")
            kernarg[off: off + sz] = buffers[i][0].base.to_bytes(sz, "little")
        else:
            if meta is not None and meta.is_buffer:
                raise LaunchError(f"argument {i} ({meta.name}) is a buffer, got a scalar {args[i]!r}")
            kernarg[off: off + sz] = _pack_scalar(args[i], sz, meta.name if meta else f"arg{i}")
    ka = mem.allocate(len(kernarg), "kernarg")
    mem.write_bytes(ka.base, bytes(kernarg))
    packet = mem.allocate(64, "dispatch_packet")
    mem.write_bytes(packet.base, _dispatch_packet(grid, block, kernel, ka.base))
    # The model runs one workgroup at a time: its waves are the ones resident, each with a
    # private segment of 32 interleaved lanes (sim.scratch).
    lane_bytes = private_lane_bytes(kernel)
    waves = -(-block[0] * block[1] * block[2] // 32)
    scratch = mem.allocate(waves * 32 * lane_bytes, "scratch") if lane_bytes else None
    dispatch = Dispatch(entry=image.base + kernel.entry, grid=grid, block=block, vgprs=kernel.vgpr_alloc,
                        lds_bytes=kernel.group_segment_size, kernarg_addr=ka.base,
                        user_sgprs=_user_sgprs(kernel, ka.base, packet.base),
                        workitem_id_dims=kernel.workitem_id_enable + 1, max_instructions=max_instructions,
                        scratch_lane_bytes=lane_bytes, scratch_base=scratch.base if scratch else 0,
                        mode=kernel.float_mode)
    return Prepared(mem, code, image.base, dispatch, buffers, list(args))


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
        Further options of :func:`dcu.rtl.run_dispatch` (``latency``, ``reorder``,
        ``backpressure``, ``max_cycles``, ``watchdog_cycles``, ``progress``, ``timeline``, ``memory``) or, for
        ``verilator``, of :func:`dcu.verilator.run_dispatch` (the same less ``timeline``
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
    grid, block = _dims(grid), _dims(block)
    if backend in ("rtl", "verilator") and private_lane_bytes(kernel):
        raise LaunchUnsupported(f"kernel {kernel.name} cannot run on backend {backend!r}: it uses "
                          f"{private_lane_bytes(kernel)} bytes of private (scratch) memory per lane, which "
                          "the RTL does not implement; backend 'model' runs it")
    if kernel.reqd_workgroup_size and tuple(kernel.reqd_workgroup_size) != block:
        raise LaunchError(f"kernel {kernel.name} requires block {tuple(kernel.reqd_workgroup_size)}, got {block}")
    from hdl.config import get_config
    cfg = get_config(config)
    occupancy = cfg.check_kernel(kernel, block)
    if backend in ("rtl", "verilator"):
        from .rtlcheck import refuse_unsupported
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
    """The RTL backends: the DCU in Amaranth's simulator (``dcu.rtl``) or compiled by
    Verilator (``dcu.verilator``)."""
    from .rtl import RtlError
    from .verilator import VerilatorError
    if backend == "rtl":
        from .rtl import run_dispatch
    else:
        from .verilator import run_dispatch
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
