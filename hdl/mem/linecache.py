"""The checks and arbiters the scalar and instruction caches share (docs/memory.md).

Both caches hold direct-mapped 64-byte lines and fill them from the external port's 128-byte
reads, two sibling lines per read. The helpers add their logic to the caller's module
instead of being components of their own: a shallow hierarchy keeps Amaranth's simulator
fast.
"""
from __future__ import annotations

from amaranth.hdl import Const, Signal
from amaranth.lib import data

from ..config import ConfigError
from .memport import ADDR_BITS, CLIENT_TAG_BITS, LINE_BYTES

__all__ = ["LINE", "LINE_ADDR", "BLOCK_ADDR", "check_geometry", "check_reads", "ErrorLayout",
           "lowest", "round_robin"]

LINE = LINE_BYTES // 2                 # bytes in one cache line
LINE_ADDR = ADDR_BITS - 6              # a line's address: byte address >> 6
BLOCK_ADDR = ADDR_BITS - 7             # a memory line's (pair of cache lines) address


def check_geometry(what: str, size: int, line: int) -> int:
    """Sets (lines) of a cache of ``size`` bytes; a clear error for a geometry we do not build."""
    if line != LINE:
        raise ConfigError(f"{what}: lines of {line} bytes are not supported; the cache fills "
                          f"two {LINE}-byte lines from each {LINE_BYTES}-byte memory read")
    sets = size // line
    if sets < 4:
        raise ConfigError(f"{what}: {size} bytes is fewer than 4 lines of {line} bytes")
    return sets


def check_reads(what: str, reads: int) -> int:
    """Memory reads a cache keeps in flight: each needs a tag of its own."""
    if not 1 <= reads <= 1 << CLIENT_TAG_BITS:
        raise ConfigError(f"{what}: {reads} reads in flight; the port's tag allows 1 to "
                          f"{1 << CLIENT_TAG_BITS}")
    return reads


def ErrorLayout(config, addr_bits: int) -> data.StructLayout:
    """A cache's latched fault report: the first request that touched memory outside the map."""
    return data.StructLayout({"valid": 1, "simd": range(config.simds),
                              "wave": range(config.wave_ids), "addr": addr_bits})


def lowest(m, mask, name: str) -> Signal:
    """Index of the lowest set bit of ``mask`` (0 when no bit is set)."""
    n = len(mask)
    idx = Signal(range(max(n, 2)), name=name)
    for i in reversed(range(n)):
        with m.If(mask[i]):
            m.d.comb += idx.eq(i)
    return idx


def round_robin(m, want, last, name: str) -> Signal:
    """Index of the first set bit of ``want`` after position ``last``, wrapping around."""
    n = len(want)
    after = Signal(n, name=f"{name}_after")
    m.d.comb += after.eq(want & ~((Const(2, n + 1) << last) - 1)[:n])
    pick = lowest(m, want, f"{name}_pick")
    for i in reversed(range(n)):   # a wanted bit above ``last`` takes precedence
        with m.If(after[i]):
            m.d.comb += pick.eq(i)
    return pick
