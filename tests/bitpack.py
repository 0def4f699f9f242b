"""Values packed into the wide integers of the RTL's ports and payloads, for the tests'
simulations and testbenches."""
from __future__ import annotations

import numpy as np


def pack_fields(values, width):
    """``values`` as consecutive ``width``-bit fields of one integer, the first lowest."""
    out = 0
    for i, v in enumerate(values):
        out |= (int(v) & ((1 << width) - 1)) << (width * i)
    return out


def pack_lanes(a: np.ndarray) -> int:
    """32 lanes of 32 bits as one 1024-bit integer, lane 0 lowest."""
    return int.from_bytes(a.astype("<u4").tobytes(), "little")


def unpack_lanes(d: int) -> np.ndarray:
    """The 32 uint32 lanes of a 1024-bit integer, lane 0 lowest."""
    return np.frombuffer(d.to_bytes(128, "little"), "<u4").astype(np.uint32)


def pack96(dwords) -> int:
    """The first three dwords of an instruction as one 96-bit integer, dword 0 lowest."""
    return dwords[0] | dwords[1] << 32 | dwords[2] << 64
