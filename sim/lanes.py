"""Cross-lane permutations: v_permlane16/x16(_var)_b32 and ds_swizzle/permute/bpermute_b32.

Semantics from AMD's RDNA 4 pseudocode (wave32: two rows of 16 lanes):
  v_permlane16_b32   lane i of row r reads S0 of lane 16r + sel(i), sel(i) = {S2, S1}[4i+3:4i]
  v_permlanex16_b32  the same from the other row (16(1-r) + sel(i))
  *_var_b32          sel(i) = S1[3:0] of lane i itself (S1 a VGPR)
  op_sel[0] = FI: a source lane whose EXEC bit is 0 is read anyway; otherwise it is invalid,
  and op_sel[1] = BOUND_CTRL: an invalid source reads 0; otherwise the lane keeps vdst.
  ds_swizzle_b32     offset[15] = 0: lane i reads lane ((i & and) | or) ^ xor (5-bit masks
                     at [4:0], [9:5], [14:10]); 0x8000..0xBFFF: within each quad, lane q reads
                     lane offset[2q+1:2q]; a source lane with EXEC = 0 reads 0
  ds_permute_b32     each active lane i sends data0 to lane addr[6:2] (addr = ADDR + offset;
                     the highest sending lane wins; lanes nobody sends to read 0)
  ds_bpermute_b32    each lane reads data0 of lane addr[6:2] (0 if that lane's EXEC bit is 0)
Only active lanes write. The DS forms count on DScnt like any DS instruction; they do not
touch LDS.
"""
from __future__ import annotations

import numpy as np

from isa import Inst

from .wave import LANES, ModelError

U32 = np.uint32
_LANE = np.arange(LANES)
_ROW = _LANE & ~15


def _permlane(inst: Inst):
    f = inst.f
    cross = "x16" in inst.name
    var = inst.name.endswith("_var_b32")
    fi, bc = f["opsel"] & 1, f["opsel"] >> 1 & 1
    d, s0, s1, s2, lit = f["vdst"], f["src0"], f["src1"], f["src2"], inst.literal
    base = (_ROW ^ 16) if cross else _ROW

    def h(w, ctx):
        if var:
            sel = np.broadcast_to(w.vread(s1, 32, lit), (LANES,)) & U32(15)
        else:
            both = w.sread(s1, 32, lit) | w.sread(s2, 32, lit) << 32
            sel = np.array([both >> (4 * (i & 15)) & 15 for i in range(LANES)])
        src = base | sel.astype(np.int64)
        active = w.mask()
        data = np.broadcast_to(w.vread(s0, 32, lit), (LANES,))[src]
        valid = active[src] | bool(fi)
        w.vwrite(d, np.where(valid, data, U32(0)), mask=active & (valid | bool(bc)))
    return h


def _swizzle_sources(offset: int) -> np.ndarray:
    if offset & 0x8000:
        if offset >= 0xC000:
            raise ModelError(f"ds_swizzle_b32 rotate/FFT mode (offset 0x{offset:x}) is not "
                             "implemented by the model")
        return (_LANE & ~3) | (offset >> (2 * (_LANE & 3)) & 3)
    and_mask, or_mask, xor_mask = offset & 31, offset >> 5 & 31, offset >> 10 & 31
    return ((_LANE & and_mask) | or_mask) ^ xor_mask


def _swizzle(inst: Inst):
    f = inst.f
    src = _swizzle_sources(f["offset0"] | f["offset1"] << 8)
    d, a = f["vdst"], f["addr"]

    def h(w, ctx):
        active = w.mask()
        w.vwrite(d, np.where(active[src], w.v[a][src], U32(0)))
        ctx.record(w, "dscnt")
    return h


def _lane_of(w, inst: Inst) -> np.ndarray:
    """The lane each lane's ADDR + offset names: byte address bits [6:2]."""
    f = inst.f
    return ((w.v[f["addr"]] + U32(f["offset0"] | f["offset1"] << 8)) >> U32(2)) & U32(31)


def _permute(inst: Inst):
    d, data0 = inst.f["vdst"], inst.f["data0"]

    def h(w, ctx):
        active = w.mask()
        winner = np.full(LANES, -1)
        np.maximum.at(winner, _lane_of(w, inst)[active].astype(np.int64), _LANE[active])
        w.vwrite(d, np.where(winner >= 0, w.v[data0][winner], U32(0)))
        ctx.record(w, "dscnt")
    return h


def _bpermute(inst: Inst):
    d, data0 = inst.f["vdst"], inst.f["data0"]

    def h(w, ctx):
        active = w.mask()
        src = _lane_of(w, inst).astype(np.int64)
        w.vwrite(d, np.where(active[src], w.v[data0][src], U32(0)))
        ctx.record(w, "dscnt")
    return h


BUILDERS = {
    "v_permlane16_b32": _permlane, "v_permlanex16_b32": _permlane,
    "v_permlane16_var_b32": _permlane, "v_permlanex16_var_b32": _permlane,
    "ds_swizzle_b32": _swizzle, "ds_permute_b32": _permute, "ds_bpermute_b32": _bpermute,
}
