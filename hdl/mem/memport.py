"""The DCU's external memory port: layouts shared by the caches, the arbiter and the
memory models (docs/memory.md).

Every request gets exactly one response, with the request's tag; responses may return in
any order. A client (instruction cache, scalar cache, one L0 per CU) owns
``CLIENT_TAG_BITS`` of tag; the arbiter (:class:`hdl.mem.memarb.MemArbiter`) puts the client's
index above them on the external port and routes each response back by it.

=========  =============================================================================
kind       meaning
=========  =============================================================================
``READ``   ``addr`` is 128-byte aligned; the response carries the 128-byte line
           (byte ``i`` of the line in ``data[8*i : 8*i+8]``).
``WRITE``  ``addr`` is 128-byte aligned; bytes whose ``mask`` bit is set are written from
           ``data``; the response (data unused) says the write is complete and visible.
``ATOMIC`` ``addr`` is 4-byte aligned; the memory performs ``atomic`` on that dword with
           ``data[0:32]`` as the operand and ``data[32:64]`` as the compare value
           (``CMPSWAP``); the response carries the old value in ``data[0:32]``.
=========  =============================================================================

A request whose address is outside the memory gets a response with ``fault`` set (a read
returns zeros, a write or atomic does nothing): the client reports it, nothing hangs.
"""
from __future__ import annotations

from amaranth.hdl import unsigned
from amaranth.lib import data, enum

from .atomic import AtomicOp

__all__ = ["LINE_BYTES", "ADDR_BITS", "CLIENT_TAG_BITS", "MemKind", "Client", "MemReq", "MemResp"]

LINE_BYTES = 128          # one L0 line; the scalar and instruction caches use half of one
ADDR_BITS = 48
CLIENT_TAG_BITS = 6       # outstanding requests a client can tell apart


class MemKind(enum.Enum, shape=unsigned(2)):
    READ = 0
    WRITE = 1
    ATOMIC = 2


class Client(enum.IntEnum):
    """Arbiter port of each client; the external tag is ``client << CLIENT_TAG_BITS | tag``."""
    ICACHE = 0
    SCACHE = 1
    L0_CU0 = 2
    L0_CU1 = 3


def MemReq(tag_bits: int = CLIENT_TAG_BITS) -> data.StructLayout:
    """A request of one client (``tag_bits`` = ``CLIENT_TAG_BITS``) or of the external port."""
    return data.StructLayout({
        "kind": MemKind, "atomic": AtomicOp, "addr": ADDR_BITS,
        "data": 8 * LINE_BYTES, "mask": LINE_BYTES, "tag": tag_bits,
    })


def MemResp(tag_bits: int = CLIENT_TAG_BITS) -> data.StructLayout:
    return data.StructLayout({"tag": tag_bits, "data": 8 * LINE_BYTES, "fault": 1})
