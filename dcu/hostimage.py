"""What a host puts into :class:`hdl.top.hosttop.HostTop` for one dispatch and takes back after
it: shared by every backend and link that drives that top (Verilator, cocotb, the FPGA's
UART host link).

A prepared dispatch (``dcu.launch.prepare``) is a memory image from ``mem.base`` (code
object, buffers, kernarg, dispatch packet) plus the dispatch itself. The top's memory is
a power of two of bytes from the same base, so the image's addresses are the top's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["HostImage", "host_image", "memory_size_for", "simulation_hosttop", "MIN_MEMORY_BYTES"]

#: Every firmware kernel fits (the largest, ``wave_xy_*``, uses 272 KiB), so one compiled
#: Verilator build of a preset serves them all (builds are keyed by the memory size).
MIN_MEMORY_BYTES = 512 * 1024


def simulation_hosttop(config, mem_bytes: int, mem_base: int, watchdog_cycles: int, init: bytes = b""):
    """The :class:`hdl.top.hosttop.HostTop` the simulation backends run (``verilator``, ``rtl`` with
    ``memory="rtl"``, cocotb): the buffer map, and the memory's latency (2 to
    ``hdl.top.hosttop.MAX_LATENCY`` cycles), ordering and back-pressure set per dispatch, so one
    build serves every setting."""
    from hdl.top.hosttop import MAX_LATENCY, HostTop
    from .memmodel import HOST_MAP_RANGES
    return HostTop(config, mem_bytes, mem_base, latency=(2, MAX_LATENCY), reorder=True, watchdog_cycles=watchdog_cycles,
                   init=init, map_ranges=HOST_MAP_RANGES, runtime_memory=True)


def memory_size_for(used_bytes: int) -> int:
    """The top's memory size for an image of ``used_bytes``: a power of two, at least
    ``MIN_MEMORY_BYTES``."""
    size = MIN_MEMORY_BYTES
    while size < used_bytes:
        size *= 2
    return size


@dataclass
class HostImage:
    """One dispatch as the host port sees it.

    Attributes
    ----------
    base : int
        Byte address of the image's first byte (the top's ``mem_base``).
    words : numpy.ndarray of uint32
        The image, dword ``i`` at ``base + 4 * i`` (whole 128-byte lines).
    dispatch_bits : int
        The packed ``hdl.top.dispatch.DispatchLayout`` value.
    aperture_base, aperture_size : int
        The range the dispatch's vector accesses may touch (every allocation).
    """
    base: int
    words: np.ndarray
    dispatch_bits: int
    aperture_base: int
    aperture_size: int

    @property
    def used_bytes(self) -> int:
        return 4 * self.words.size

    def store_back(self, prep, words: np.ndarray) -> None:
        """Write the dwords read back from the top into the prepared memory image: every
        allocation (what lies between them, the guard gaps, cannot have changed)."""
        raw = np.asarray(words, dtype=np.uint32).view(np.uint8)
        if raw.size != 4 * self.words.size:
            raise ValueError(f"read back {raw.size // 4} dwords, the image has {self.words.size}")
        for a in prep.mem.allocations:
            prep.mem.write_bytes(a.base, raw[a.base - self.base: a.end - self.base])


def host_image(prep, config, wgp: bool) -> HostImage:
    """The :class:`HostImage` of a prepared dispatch for ``config`` (an ``hdl.config.DCUConfig``)."""
    from hdl.top.dispatch import DispatchLayout, dispatch_fields

    mem = prep.mem
    end = max(a.end for a in mem.allocations)
    nbytes = -(-(end - mem.base) // 128) * 128
    raw = np.zeros(nbytes, np.uint8)
    have = min(nbytes, mem.data.size)
    raw[:have] = mem.data[:have]
    bits = DispatchLayout(config).const(dispatch_fields(prep.dispatch, wgp)).as_bits()
    return HostImage(mem.base, raw.view(np.uint32).copy(), bits, mem.base, end - mem.base)
