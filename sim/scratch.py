"""Private (scratch) memory and flat addressing of the reference model.

Private segment (LLVM AMDGPUUsage, "Private Segment"; gfx12 has architected flat scratch:
the hardware gives every wave its scratch base, the kernel reads no SGPR for it). Each lane
owns ``Wave.scratch_lane_bytes`` bytes; the lanes of a wave are interleaved dword by dword in
backing memory, so private byte ``p`` of lane ``l`` lives at

    wave scratch base + (p // 4) * 4 * 32 + l * 4 + p % 4.

A scratch_* instruction's private address is ``ioffset`` plus the 32-bit SGPR ``saddr`` and,
when ``sve`` is set, the lane's VGPR ``vaddr`` (each term optional; sums wrap at 32 bits). An
access that does not lie wholly inside the lane's segment stops the wave with a fault naming
the lane and the private address.

Flat (flat_*): a 64-bit address inside the shared aperture is an LDS address (its low 32
bits; past the allocation reads give 0 and writes are dropped, as for DS), inside the private
aperture a private address, anywhere else a global one (checked against the buffers).
"""
from __future__ import annotations

import numpy as np

from isa import Inst
from .memory import MemoryFault
from .memory_ops import LANE_IDS, access_bytes, rmw_lanes, stored_bytes, write_loaded
from .wave import (APERTURE_SIZE, LANES, NULL, PRIVATE_APERTURE, SHARED_APERTURE, ModelError,
                   Wave)

__all__ = ["build_scratch", "build_flat", "private_addresses", "scratch_index"]

M32 = 0xFFFF_FFFF


def private_addresses(inst: Inst, w: Wave) -> np.ndarray:
    """Each lane's private byte address of a scratch_* instruction (int64, all 32 lanes)."""
    f = inst.f
    addr = np.full(LANES, f["ioffset"], dtype=np.int64)
    if f["saddr"] != NULL:
        addr += w.sread(f["saddr"], 32, None)
    if f["sve"]:
        addr += w.v[f["vaddr"]].astype(np.int64)
    return addr & M32


def scratch_index(w: Wave, mem, lanes: np.ndarray, addrs: np.ndarray, nbytes: int) -> np.ndarray:
    """(lanes, nbytes) indices into ``mem.data`` of the private bytes ``addrs[k]..+nbytes`` of
    lane ``lanes[k]``; raises MemoryFault for the first lane whose access leaves its segment."""
    size = w.scratch_lane_bytes
    bad = np.flatnonzero(addrs + nbytes > size)
    if bad.size:
        k = int(bad[0])
        lane, addr = int(lanes[k]), int(addrs[k])
        seg = f"its {size}-byte private segment" if size else "a private segment (the kernel has none)"
        fault = MemoryFault(f"lane {lane}: scratch access of {nbytes} bytes at private address "
                            f"{addr:#x} is outside {seg}")
        fault.lane, fault.addr, fault.size, fault.where = lane, addr, nbytes, None
        raise fault
    byte = addrs[:, None] + np.arange(nbytes)[None, :]
    where = w.scratch_base + (byte // 4) * (4 * LANES) + lanes[:, None] * 4 + byte % 4
    return where - mem.base


def _lds_index(ctx, addrs: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices into the workgroup's LDS, bytes that lie inside it) of LDS accesses."""
    idx = addrs[:, None] + np.arange(nbytes)[None, :]
    inside = (idx >= 0) & (idx < ctx.lds.size)
    return np.where(inside, idx, 0), inside


def _global_index(ctx, addrs: np.ndarray, lanes: np.ndarray, nbytes: int) -> np.ndarray:
    return ctx.mem.check_lanes(addrs, nbytes, lanes)[:, None] + np.arange(nbytes)[None, :]


def _places(inst: Inst, w: Wave, ctx, m: np.ndarray, addrs: np.ndarray, nbytes: int):
    """Split the active lanes by address space: [(lane mask, backing bytes, indices, inside)]."""
    out = []
    rel = addrs - SHARED_APERTURE
    lds = m & (rel >= 0) & (rel < APERTURE_SIZE)
    if lds.any():
        idx, inside = _lds_index(ctx, rel[lds], nbytes)
        out.append((lds, ctx.lds, idx, inside))
    rel = addrs - PRIVATE_APERTURE
    priv = m & (rel >= 0) & (rel < APERTURE_SIZE)
    if priv.any():
        out.append((priv, ctx.mem.data, scratch_index(w, ctx.mem, LANE_IDS[priv], rel[priv], nbytes), None))
    glob = m & ~lds & ~priv
    if glob.any():
        out.append((glob, ctx.mem.data, _global_index(ctx, addrs[glob], LANE_IDS[glob], nbytes), None))
    return out


def _flat_addresses(inst: Inst, w: Wave) -> np.ndarray:
    f = inst.f
    lo = w.v[f["vaddr"]].astype(np.int64)
    hi = w.v[f["vaddr"] + 1].astype(np.int64)
    return (hi << 32) + lo + f["ioffset"]


def _gather(backing, idx, inside) -> np.ndarray:
    raw = backing[idx]
    return raw if inside is None else np.where(inside, raw, 0).astype(np.uint8)


def _scatter(backing, idx, data, inside) -> None:
    """Store rows of bytes in lane order (a later lane wins where lanes overlap)."""
    if inside is None and np.unique(idx).size == idx.size:
        backing[idx.ravel()] = data.ravel()
        return
    for row, val, ok in zip(idx, data, inside if inside is not None else [None] * len(idx)):
        backing[row if ok is None else row[ok]] = val if ok is None else val[ok]


def _build(inst: Inst, places, counter_of):
    """The handler of a load, store or atomic whose lanes' bytes ``places(w, ctx, m, nbytes)``
    locates (see ``_places``)."""
    kind, nbytes = inst.info.kind, access_bytes(inst)
    src = inst.f["vsrc"]

    def h(w, ctx):
        m = w.mask()
        for lanes, backing, idx, inside in places(w, ctx, m, nbytes):
            if kind == "vmem_load":
                write_loaded(w, inst, lanes, _gather(backing, idx, inside))
            elif kind == "vmem_store":
                _scatter(backing, idx, stored_bytes(w, inst, lanes, src, nbytes), inside)
            else:
                rmw_lanes(w, inst, LANE_IDS[lanes], backing, idx, inside)
        ctx.record(w, counter_of(inst))
    return h


def _counter(inst: Inst) -> str:
    returns = inst.info.kind == "vmem_load" or (inst.info.kind == "vmem_atomic" and inst.returns)
    return "loadcnt" if returns else "storecnt"


def build_scratch(inst: Inst):
    """Handler of a scratch_* load or store."""
    def places(w, ctx, m, nbytes):
        lanes = LANE_IDS[m]
        idx = scratch_index(w, ctx.mem, lanes, private_addresses(inst, w)[m], nbytes)
        return [(m, ctx.mem.data, idx, None)]
    if inst.info.kind not in ("vmem_load", "vmem_store"):
        raise ModelError(f"{inst.name} is decoded but not implemented by the model")
    return _build(inst, places, _counter)


def build_flat(inst: Inst):
    """Handler of a flat_* load, store or atomic."""
    def places(w, ctx, m, nbytes):
        return _places(inst, w, ctx, m, _flat_addresses(inst, w), nbytes)
    return _build(inst, places, _counter)
