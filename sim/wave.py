"""Architectural state of one wave32 and the operand access rules of gfx1200.

The scalar operand space is kept as one list indexed by the operand code (0–105 SGPRs,
106/107 VCC, 108–123 ttmp, 124 null, 125 M0, 126/127 EXEC), so an SGPR, VCC or EXEC
source or destination is a single index. VGPRs are a (registers, 32) uint32 array: one
row is one register across the 32 lanes.
"""
from __future__ import annotations

import numpy as np

from isa.operands import inline_constant

__all__ = ["LANES", "Wave", "ModelError", "VCC", "EXEC", "M0", "NULL", "SCC", "TTMP"]

LANES = 32
VCC, TTMP, NULL, M0, EXEC = 106, 108, 124, 125, 126
# Flat addresses whose upper half selects the LDS or the private segment (the amdgpu
# driver's gfx9+ apertures), read through src_shared_base ... src_private_limit (codes 235-238)
SHARED_APERTURE, PRIVATE_APERTURE = 1 << 48, 2 << 48
APERTURE_SIZE = 1 << 32
_APERTURE_REGS = {235: SHARED_APERTURE, 236: SHARED_APERTURE + APERTURE_SIZE - 1,
                  237: PRIVATE_APERTURE, 238: PRIVATE_APERTURE + APERTURE_SIZE - 1}
VCCZ, EXECZ, SCC, LITERAL = 251, 252, 253, 255
LANE_BITS = np.uint32(1) << np.arange(LANES, dtype=np.uint32)
M32 = 0xFFFF_FFFF
M64 = 0xFFFF_FFFF_FFFF_FFFF


class ModelError(Exception):
    """An instruction the model cannot execute (unknown opcode, unsupported operand)."""


class Wave:
    """One wave32: PC, SGPRs/VCC/EXEC/M0/ttmp, SCC and its VGPR allocation."""

    def __init__(self, wave_id: int, vgprs: int, pc: int):
        self.id = wave_id
        self.s = [0] * 128
        self.scc = 0
        self.v = np.zeros((max(vgprs, 1), LANES), dtype=np.uint32)
        self.pc = pc
        self.scratch_base = 0         # address of the wave's private segment (lanes interleaved)
        self.scratch_lane_bytes = 0   # private bytes per lane: scratch accesses beyond fault
        self.mode = 0xF0              # MODE[7:0]: FP_ROUND, FP_DENORM (sim.fpmode)
        self.done = False
        self.waiting_barrier = False
        self.barrier_phase = None  # barrier phase this wave signalled and has not yet waited for
        self.instructions = 0
        self._mask_exec = -1
        self._mask = None

    # -- EXEC ------------------------------------------------------------------------
    @property
    def exec(self) -> int:
        return self.s[EXEC]

    def mask(self) -> np.ndarray:
        """Active lanes as a bool array (cached while EXEC is unchanged)."""
        e = self.s[EXEC]
        if e != self._mask_exec:
            self._mask = (np.uint32(e) & LANE_BITS) != 0
            self._mask_exec = e
        return self._mask

    # -- scalar operands -------------------------------------------------------------
    def sread(self, code: int, bits: int, literal: int | None) -> int:
        """Value of scalar/inline/literal source ``code`` as an unsigned int of ``bits``."""
        if code < 128:
            if code == NULL:
                return 0
            if bits == 64:
                return self.s[code] | (self.s[code + 1] << 32)
            return self.s[code]
        if code == SCC:
            return self.scc
        if code == LITERAL:
            if literal is None:
                raise ModelError("literal operand without a literal dword")
            return literal  # zero-extended for 64-bit integer operands (f64: see docs/model.md)
        if code in _APERTURE_REGS:
            value = _APERTURE_REGS[code]
            return value if bits == 64 else value & M32
        if code == VCCZ:
            return int(self.s[VCC] == 0)
        if code == EXECZ:
            return int(self.s[EXEC] == 0)
        value = inline_constant(code, bits)
        if value is None:
            raise ModelError(f"unsupported scalar operand code {code}")
        return value

    def swrite(self, code: int, bits: int, value: int) -> None:
        if code == NULL:
            return
        if code >= 128:
            raise ModelError(f"scalar destination code {code} is not a register")
        self.s[code] = value & M32
        if bits == 64:
            self.s[code + 1] = (value >> 32) & M32

    # -- vector operands -------------------------------------------------------------
    def vread(self, code: int, bits: int, literal: int | None):
        """Per-lane value of a 9-bit source: a uint32/uint64 lane array for VGPRs, a numpy scalar otherwise."""
        if code >= 256:
            r = code - 256
            if bits == 64:
                return self.v[r].astype(np.uint64) | (self.v[r + 1].astype(np.uint64) << np.uint64(32))
            return self.v[r]
        value = self.sread(code, bits, literal)
        return np.uint64(value) if bits == 64 else np.uint32(value)

    def vwrite(self, reg: int, value, bits: int = 32, mask: np.ndarray | None = None) -> None:
        """Write a lane array (or scalar) to VGPR ``reg`` on the active lanes."""
        m = self.mask() if mask is None else mask
        if bits == 64:
            value = np.broadcast_to(np.asarray(value, dtype=np.uint64), (LANES,))
            lo = (value & np.uint64(M32)).astype(np.uint32)
            hi = (value >> np.uint64(32)).astype(np.uint32)
            np.copyto(self.v[reg], lo, where=m)
            np.copyto(self.v[reg + 1], hi, where=m)
            return
        np.copyto(self.v[reg], np.asarray(value, dtype=np.uint32), where=m, casting="unsafe")

    def lane_mask_bits(self, bools: np.ndarray) -> int:
        """Pack a per-lane bool array into a 32-bit lane mask."""
        return int(np.bitwise_or.reduce(LANE_BITS[bools])) if bools.any() else 0
