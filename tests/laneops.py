"""Run a few assembled VALU/SALU instructions on one model wave with chosen register
contents: the instructions go through llvm-mc-19, isa.decode and sim.execute.build, so a test
covers the encoding, the operand plumbing and the semantics together."""
from __future__ import annotations

import numpy as np

import isa
from sim import execute
from sim.wave import EXEC, Wave
from tests.asmutil import assemble

LANES = 32


def run(text: str, v: dict | None = None, s: dict | None = None, exec_mask: int = 0xFFFF_FFFF,
        vgprs: int = 64) -> Wave:
    """Execute ``text`` (instructions, one per line) on a fresh wave32.

    ``v`` maps a VGPR index to its 32 lane values (or one value for every lane), ``s`` an
    SGPR/VCC/EXEC operand code to its 32-bit value."""
    w = Wave(0, vgprs, 0)
    for r, x in (v or {}).items():
        w.v[r] = np.broadcast_to(np.asarray(x, dtype=np.uint64).astype(np.uint32), (LANES,))
    for code, x in (s or {}).items():
        w.s[code] = int(x) & 0xFFFF_FFFF
    w.s[EXEC] = exec_mask
    for inst in isa.decode_program(assemble(text)):
        w.pc = inst.pc + inst.size
        execute.build(inst)(w, None)
    return w
