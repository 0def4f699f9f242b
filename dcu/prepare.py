"""Load a program and prepare a dispatch of one of its kernels, whichever backend runs it.

:func:`load_program` builds (if needed) and loads a code object; :func:`prepare` lays out the
memory of a dispatch (the code object's image, the buffers, the kernarg segment, a dispatch
packet) and the ABI state of its waves. :func:`dcu.launch.launch` runs the result on a backend;
the backends' own builds (``dcu.backends.pgo``'s training dispatches) prepare dispatches here too.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .codeobj import CodeObject, KernelArg, KernelInfo
from .launch_errors import LaunchError, LaunchUnsupported
from .toolchain import build

__all__ = ["Program", "Prepared", "load_program", "prepare", "private_lane_bytes", "image_base",
           "launch_dims", "DYNAMIC_STACK_BYTES"]


class Program:
    """A built code object and its kernels."""

    def __init__(self, path: str | os.PathLike, wgp: bool = False, options: Sequence[str] = ()):
        self.source = Path(path)
        self.wgp = wgp
        self.binary = build(self.source, wgp=wgp, options=options)
        self.code_object = CodeObject(self.binary)

    @property
    def kernels(self) -> dict[str, KernelInfo]:
        return self.code_object.kernels

    def kernel(self, name: str | None = None) -> KernelInfo:
        """The kernel ``name``; with no name, the only kernel (an error lists them if there are several)."""
        if name is None:
            if len(self.kernels) != 1:
                raise KeyError(f"{self.source} has {len(self.kernels)} kernels, "
                               f"name one of: {', '.join(sorted(self.kernels))}")
            return next(iter(self.kernels.values()))
        return self.code_object.kernel(name)


def load_program(path: str | os.PathLike, wgp: bool = False, options: Sequence[str] = ()) -> Program:
    """Build (if needed) and load ``path``: a ``.s``, ``.cl``, ``.o`` or ``.hsaco``. For OpenCL C,
    ``options`` are further clang options (:func:`dcu.toolchain.compile_cl`)."""
    return Program(path, wgp=wgp, options=options)


def launch_dims(v) -> tuple[int, int, int]:
    """A grid or block size (an int or 1 to 3 ints) as an (x, y, z) triple."""
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
            raise LaunchUnsupported(f"kernel {kernel.name} asks for the {what} user SGPRs, "
                                    "which this device does not provide")
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
    grid, block = launch_dims(grid), launch_dims(block)
    from sim.memory import GlobalMemory
    from isa.abi import Dispatch
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
