"""Global memory of the reference model: a flat byte array with named allocations.

Every access is checked against the allocations, so a kernel that strays outside its
buffers stops with the lane, the address and the nearest buffer instead of silently
reading zeros or corrupting a neighbour.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Allocation", "GlobalMemory", "MemoryFault"]

NULL_PAGE = 0x1000            # an address below this is a null pointer plus an offset
WILD_DISTANCE = 1 << 20       # farther than this from every allocation: a wild address


def _bytes(n: int) -> str:
    return f"{n} byte{'' if n == 1 else 's'}"


class MemoryFault(Exception):
    """An access outside every allocation (or misaligned beyond what the ISA allows).

    ``lane`` (None for a host access), ``addr`` (an unsigned 64-bit address), ``size`` (bytes)
    and ``where`` (:meth:`GlobalMemory.nearest`) describe it for a report.
    """

    def __init__(self, message: str, *, lane: int | None = None, addr: int | None = None,
                 size: int | None = None, where: str | None = None):
        super().__init__(message)
        self.lane, self.addr, self.size, self.where = lane, addr, size, where


@dataclass(frozen=True)
class Allocation:
    name: str
    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size


class GlobalMemory:
    """Byte-addressed global memory holding the kernel's buffers.

    Allocations are placed from ``base`` upwards, each aligned to ``align`` bytes and
    separated by an unmapped guard gap, so an off-by-one access faults.
    """

    def __init__(self, base: int = 0x1000_0000, align: int = 256, guard: int = 256):
        self.base = base
        self.align = align
        self.guard = guard
        self.allocations: list[Allocation] = []
        self._data = np.zeros(0, dtype=np.uint8)
        self._next = base

    def allocate(self, size: int, name: str) -> Allocation:
        size = max(int(size), 1)
        start = -(-self._next // self.align) * self.align
        alloc = Allocation(name, start, size)
        self.allocations.append(alloc)
        self._next = start + size + self.guard
        need = self._next - self.base
        if need > self._data.size:
            grown = np.zeros(max(need, 2 * self._data.size), dtype=np.uint8)
            grown[: self._data.size] = self._data
            self._data = grown
        return alloc

    def write_bytes(self, addr: int, data: bytes | np.ndarray) -> None:
        if isinstance(data, np.ndarray):
            raw = data.view(np.uint8).ravel()
        else:
            raw = np.frombuffer(bytes(data), dtype=np.uint8)
        self._check_range(addr, raw.size, lane=None)
        off = addr - self.base
        self._data[off: off + raw.size] = raw

    def read_bytes(self, addr: int, size: int) -> np.ndarray:
        self._check_range(addr, size, lane=None)
        off = addr - self.base
        return self._data[off: off + size].copy()

    # -- checks ---------------------------------------------------------------------
    def nearest(self, addr: int, size: int = 1) -> str:
        """Where an access of ``size`` bytes at ``addr`` lies relative to the allocations:
        inside one, running past its end, N bytes before or past one, a null pointer, or far
        from every one."""
        addr %= 1 << 64
        if addr < NULL_PAGE:
            return f"a null pointer{f' + {addr:#x}' if addr else ''}"
        if not self.allocations:
            return "no buffers are allocated"
        # in a tie between the end of one buffer and the start of the next, the next
        best = min(self.allocations,
                   key=lambda a: (0 if a.base <= addr < a.end else min(abs(addr - a.base), abs(addr - a.end)), -a.base))
        name = f"buffer '{best.name}' [{best.base:#x}, {best.end:#x})"
        if best.base <= addr < best.end:
            over = addr + size - best.end
            return f"runs {_bytes(over)} past the end of {name}" if over > 0 else f"inside {name}"
        gap = best.base - addr if addr < best.base else addr - best.end
        if gap > WILD_DISTANCE:
            return f"far from every buffer (the nearest is {name})"
        return f"{_bytes(gap)} {'before' if addr < best.base else 'past the end of'} {name}"

    def _find(self, addr: int, size: int) -> Allocation | None:
        for a in self.allocations:
            if a.base <= addr and addr + size <= a.end:
                return a
        return None

    def _check_range(self, addr: int, size: int, lane: int | None) -> None:
        if self._find(addr, size) is None:
            who = f"lane {lane}: " if lane is not None else ""
            addr %= 1 << 64
            where = self.nearest(addr, size)
            raise MemoryFault(f"{who}access of {size} bytes at {addr:#x} is outside every buffer ({where})",
                              lane=lane, addr=addr, size=size, where=where)

    def check_lanes(self, addrs: np.ndarray, size: int, lanes: np.ndarray) -> np.ndarray:
        """Check per-lane accesses of ``size`` bytes; return the offsets into the backing array."""
        addrs = addrs.astype(np.int64)
        ok = np.zeros(addrs.shape, dtype=bool)
        for a in self.allocations:
            ok |= (addrs >= a.base) & (addrs + size <= a.end)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            self._check_range(int(addrs[i]), size, lane=int(lanes[i]))
        return addrs - self.base

    # -- lane accesses (addresses already checked and converted to offsets) --------------
    def gather(self, offsets: np.ndarray, size: int) -> np.ndarray:
        """Read ``size`` bytes per offset; returns an (n, size) uint8 array."""
        idx = offsets[:, None] + np.arange(size)[None, :]
        return self._data[idx]

    def scatter(self, offsets: np.ndarray, data: np.ndarray) -> None:
        """Write rows of ``data`` (n, size) uint8; later rows win, as later lanes do in hardware."""
        size = data.shape[1]
        if np.unique(offsets).size == offsets.size and size <= 16:
            self._data[(offsets[:, None] + np.arange(size)[None, :]).ravel()] = data.ravel()
            return
        for off, row in zip(offsets.tolist(), data):
            self._data[off: off + size] = row

    @property
    def data(self) -> np.ndarray:
        return self._data
