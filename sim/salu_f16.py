"""Handlers for gfx1200's scalar 16-bit float opcodes (SOP1, SOP2 and SOPC ``*_f16``), on the
semantics of sim.fp16 (the VALU f16 arithmetic, NaN rules and MODE handling).

Operands, as the RDNA 4 ISA guide's pseudocode names them:

* ``S0.f16``/``S1.f16`` are bits 15:0 of the source: an SGPR's low half, an inline float
  constant's f16 pattern (1.0 -> 0x3c00, as for 16-bit VALU operands), a literal's low half;
  ``s_cvt_hi_f32_f16`` reads bits 31:16 of the source dword; ``S0.f32`` is the whole dword.
* ``D0.f16 = ...`` assigns bits 15:0 of the destination SGPR and nothing else; the model keeps
  bits 31:16 as they were. (``v_s_*_f16``'s pseudocode adds ``D0[31:16] = 16'0x0``; these ops'
  does not. LLVM never relies on the high half of an f16 SGPR.) ``s_cvt_f32_f16`` and
  ``s_cvt_hi_f32_f16`` write an f32, ``s_cvt_pk_rtz_f16_f32`` both halves.
* ``s_fmac_f16``: D0.f16 = fma(S0.f16, S1.f16, D0.f16), the destination's low half.
* ``s_cmp_<cond>_f16`` set SCC as ``s_cmp_<cond>_f32`` do, on the f16 values.

The wave's MODE reaches them through sim.fpmode as it reaches the VALU f16 ops: the f16/f64
FP_DENORM field flushes sources and results, FP_ROUND[3:2] rounds add, sub, mul, fma and
``s_cvt_f16_f32``; ``s_cvt_pk_rtz_f16_f32`` rounds toward zero whatever the mode.
"""
from __future__ import annotations

import numpy as np

from . import fp16 as H

U32 = np.uint32
_LOW, _HIGH = 0xFFFF, 0xFFFF_0000


def _one(x: int) -> np.ndarray:
    return np.full(1, x, U32)


def _f16(w, code: int, lit) -> np.ndarray:
    """An f16 source: bits 15:0 (an inline float constant in its f16 form)."""
    return _one(w.sread(code, 16, lit) & _LOW)


def _write_low(w, d: int, r) -> None:
    """D0.f16 = r: bits 15:0 of the SGPR; bits 31:16 are kept."""
    w.swrite(d, 32, (w.sread(d, 32, None) & _HIGH) | (int(r[0]) & _LOW))


_BINARY = {
    "s_add_f16": H.add, "s_sub_f16": H.sub, "s_mul_f16": H.mul,
    "s_min_num_f16": H.min_num, "s_max_num_f16": H.max_num,
    "s_minimum_f16": H.minimum, "s_maximum_f16": H.maximum,
}
_UNARY = {"s_ceil_f16": H.ceil, "s_floor_f16": H.floor, "s_trunc_f16": H.trunc,
          "s_rndne_f16": H.rndne}


def _build_binary(inst):
    fn, lit = _BINARY[inst.name], inst.literal
    s0, s1, d = inst.f["ssrc0"], inst.f["ssrc1"], inst.f["sdst"]
    return lambda w, ctx: _write_low(w, d, fn(_f16(w, s0, lit), _f16(w, s1, lit)))


def _build_fmac(inst):
    lit = inst.literal
    s0, s1, d = inst.f["ssrc0"], inst.f["ssrc1"], inst.f["sdst"]
    return lambda w, ctx: _write_low(w, d, H.fma(_f16(w, s0, lit), _f16(w, s1, lit),
                                                  _f16(w, d, None)))


def _build_unary(inst):
    fn, lit, s0, d = _UNARY[inst.name], inst.literal, inst.f["ssrc0"], inst.f["sdst"]
    return lambda w, ctx: _write_low(w, d, fn(_f16(w, s0, lit)))


def _build_cvt(inst):
    name, lit, s0, d = inst.name, inst.literal, inst.f["ssrc0"], inst.f["sdst"]
    if name == "s_cvt_f16_f32":
        return lambda w, ctx: _write_low(w, d, H.cvt_f16_f32(_one(w.sread(s0, 32, lit))))
    if name == "s_cvt_f32_f16":
        return lambda w, ctx: w.swrite(d, 32, int(H.cvt_f32_f16(_f16(w, s0, lit))[0]))
    # s_cvt_hi_f32_f16: the f16 in bits 31:16 of the source dword
    return lambda w, ctx: w.swrite(d, 32, int(H.cvt_f32_f16(_one(w.sread(s0, 32, lit) >> 16))[0]))


def _build_pk_rtz(inst):
    lit, s0, s1, d = inst.literal, inst.f["ssrc0"], inst.f["ssrc1"], inst.f["sdst"]
    return lambda w, ctx: w.swrite(d, 32, int(H.cvt_pk_rtz(_one(w.sread(s0, 32, lit)),
                                                           _one(w.sread(s1, 32, lit)))[0]))


def _build_cmp(inst):
    cond, lit = inst.name.split("_")[2], inst.literal
    s0, s1 = inst.f["ssrc0"], inst.f["ssrc1"]

    def h(w, ctx):
        w.scc = int(H.compare(cond, _f16(w, s0, lit), _f16(w, s1, lit))[0])
    return h


def _builders() -> dict:
    from isa import OPCODES, Fmt
    table = {n: _build_binary for n in _BINARY} | {n: _build_unary for n in _UNARY}
    table |= {"s_fmac_f16": _build_fmac, "s_cvt_pk_rtz_f16_f32": _build_pk_rtz}
    table |= {n: _build_cvt for n in ("s_cvt_f16_f32", "s_cvt_f32_f16", "s_cvt_hi_f32_f16")}
    table |= {i.name: _build_cmp for i in OPCODES
              if i.fmt == Fmt.SOPC and i.name.startswith("s_cmp_") and i.name.endswith("_f16")}
    return table


BUILDERS = _builders()
