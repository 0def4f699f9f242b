"""Scalar memory, LDS and global memory instructions of the reference model.

Besides the architectural effect, each memory instruction reports what the
micro-architecture is later checked against (``ctx.record``): the wait counter it
increments, for DS the bank-conflict cost, for global accesses the distinct 128-byte
lines touched.
"""
from __future__ import annotations

import numpy as np

from isa import Inst
from .scalar import sx
from .wave import LANES, NULL, ModelError

U8, U32, U64 = np.uint8, np.uint32, np.uint64
LDS_BANKS = 32
L0_LINE = 128
LANE_IDS = np.arange(LANES)

# 32-bit read-modify-write operations shared by DS and global atomics: f(mem, data, data2) -> new
ATOMIC_OPS = {
    "add": lambda m, d, c: (m + d) & 0xFFFF_FFFF,
    "sub": lambda m, d, c: (m - d) & 0xFFFF_FFFF,
    "rsub": lambda m, d, c: (d - m) & 0xFFFF_FFFF,
    "inc": lambda m, d, c: 0 if m >= d else m + 1,
    "dec": lambda m, d, c: d if (m == 0 or m > d) else m - 1,
    "min_i32": lambda m, d, c: d if sx(d, 32) < sx(m, 32) else m,
    "max_i32": lambda m, d, c: d if sx(d, 32) >= sx(m, 32) else m,
    "min_u32": lambda m, d, c: min(m, d),
    "max_u32": lambda m, d, c: max(m, d),
    "and": lambda m, d, c: m & d,
    "or": lambda m, d, c: m | d,
    "xor": lambda m, d, c: m ^ d,
    "swap": lambda m, d, c: d,
    "cmpswap": lambda m, d, c: d if m == c else m,
}

_DS_ATOMIC = {
    "add_u32": "add", "sub_u32": "sub", "rsub_u32": "rsub", "inc_u32": "inc", "dec_u32": "dec",
    "min_i32": "min_i32", "max_i32": "max_i32", "min_u32": "min_u32", "max_u32": "max_u32",
    "and_b32": "and", "or_b32": "or", "xor_b32": "xor", "storexchg_rtn_b32": "swap",
    "cmpstore_b32": "cmpswap", "cmpstore_rtn_b32": "cmpswap",
}
_GLOBAL_ATOMIC = {
    "add_u32": "add", "sub_u32": "sub", "inc_u32": "inc", "dec_u32": "dec",
    "min_i32": "min_i32", "max_i32": "max_i32", "min_u32": "min_u32", "max_u32": "max_u32",
    "and_b32": "and", "or_b32": "or", "xor_b32": "xor", "swap_b32": "swap", "cmpswap_b32": "cmpswap",
}

# Loads narrower than a dword: (bytes, signed)
_NARROW = {"u8": (1, False), "i8": (1, True), "u16": (2, False), "i16": (2, True)}


def _size_of(suffix: str) -> int:
    return {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16, "b256": 32, "b512": 64}[suffix]


def _to_dwords(raw: np.ndarray, signed_bytes: tuple[int, bool] | None) -> np.ndarray:
    """(n, bytes) uint8 -> (n, dwords) uint32, extending narrow loads to a dword."""
    if signed_bytes is None:
        return raw.view("<u4")
    nbytes, signed = signed_bytes
    val = raw.view("<u1" if nbytes == 1 else "<u2").astype(U32)
    if signed:
        shift = U32(32 - 8 * nbytes)
        val = ((val << shift).view(np.int32) >> shift.astype(np.int32)).view(U32)
    return val.reshape(-1, 1)


def lds_conflict_cycles(dword_addrs: np.ndarray, banks: int = LDS_BANKS, windows=None) -> int:
    """Cycles an LDS access takes: the most distinct dwords that fall in one of ``banks`` banks
    (broadcast is free). ``windows``: each dword's scheduling window (same shape, or
    broadcastable), for an LDS that resolves conflicts one window after the other
    (``DCUConfig.lds_window_lanes``); the cost is then the sum of the windows' costs."""
    dword_addrs = np.asarray(dword_addrs)
    if dword_addrs.size == 0:
        return 0
    if windows is not None:
        win = np.broadcast_to(np.asarray(windows), dword_addrs.shape).ravel()
        return sum(lds_conflict_cycles(dword_addrs.ravel()[win == k], banks) for k in np.unique(win))
    uniq = np.unique(dword_addrs)
    return int(np.bincount(uniq % banks, minlength=banks).max())


def lds_windows(lanes: np.ndarray, window_lanes: int) -> np.ndarray:
    """The scheduling window of each lane's accesses (a column: one row per lane)."""
    return (np.asarray(lanes) // window_lanes)[:, None]


def _ds_cycles(ctx, dwords: np.ndarray, windows: np.ndarray) -> int:
    """The ``ds_cycles`` statistic of an LDS instruction: ``lds_conflict_cycles`` of the dwords
    with a byte inside the workgroup's allocation (others occupy no bank), per window."""
    dwords = np.asarray(dwords)
    windows = np.broadcast_to(np.asarray(windows), dwords.shape)
    inside = 4 * dwords < ctx.lds.size
    return lds_conflict_cycles(dwords[inside], ctx.lds_banks, windows[inside])


def lines_touched(byte_addrs: np.ndarray, size: int, lanes: np.ndarray | None = None,
                  group: int = LANES) -> int:
    """Line requests of a coalescer that merges ``group`` lanes: the distinct 128-byte lines
    covered by accesses of ``size`` bytes at ``byte_addrs``, counted per group of lanes
    (``lanes``: each address's lane; the whole wave is one group by default)."""
    if byte_addrs.size == 0:
        return 0
    first = byte_addrs // L0_LINE
    last = (byte_addrs + size - 1) // L0_LINE
    grp = np.zeros_like(byte_addrs) if lanes is None else np.asarray(lanes) // group
    return int(np.unique(np.stack([np.concatenate([grp, grp]), np.concatenate([first, last])]), axis=1).shape[1])


# --------------------------------------------------------------------------------------
def build_smem(inst: Inst):
    name = inst.name
    if not name.startswith("s_load_"):
        raise ModelError(f"{name} is decoded but not implemented by the model")
    suffix = name[len("s_load_"):]
    narrow = _NARROW.get(suffix)
    nbytes = narrow[0] if narrow else _size_of(suffix)
    ndw = max(nbytes // 4, 1)
    f = inst.f
    base, sdata, soff, ioff = 2 * f["sbase"], f["sdata"], f["soffset"], f["ioffset"]

    def h(w, ctx):
        addr = w.sread(base, 64, None) + ioff + (w.s[soff] if soff != NULL else 0)
        addr &= ~3 if nbytes >= 4 else ~(nbytes - 1)
        off = ctx.mem.check_lanes(np.array([addr]), nbytes, np.array([0]))
        vals = _to_dwords(ctx.mem.gather(off, nbytes), narrow)[0]
        for i in range(ndw):
            w.swrite(sdata + i, 32, int(vals[i]))
        ctx.record(w, "kmcnt")
    return h


def _global_addrs(inst: Inst, w) -> np.ndarray:
    f = inst.f
    if f["saddr"] != NULL:
        base = w.sread(f["saddr"], 64, None)
        return (np.int64(base) + w.v[f["vaddr"]].astype(np.int64) + f["ioffset"])
    lo = w.v[f["vaddr"]].astype(np.int64)
    hi = w.v[f["vaddr"] + 1].astype(np.int64)
    return (hi << 32) + lo + f["ioffset"]


def build_global(inst: Inst):
    name, f = inst.name, inst.f
    if name in ("global_inv", "global_wb"):
        return lambda w, ctx: ctx.record(w, None)
    parts = name.split("_", 2)  # global, load/store/atomic, rest
    kind, rest = parts[1], parts[2]
    if kind == "load":
        narrow = _NARROW.get(rest)
        nbytes = narrow[0] if narrow else _size_of(rest)
        ndw, d = max(nbytes // 4, 1), f["vdst"]

        def h(w, ctx):
            m = w.mask()
            lanes = LANE_IDS[m]
            addrs = _global_addrs(inst, w)[m]
            off = ctx.mem.check_lanes(addrs, nbytes, lanes)
            vals = _to_dwords(ctx.mem.gather(off, nbytes), narrow)
            for i in range(ndw):
                w.v[d + i][m] = vals[:, i]
            ctx.record(w, "loadcnt", lines=lines_touched(addrs, nbytes, lanes, ctx.coalesce_lanes))
        return h
    if kind == "store":
        nbytes, src = _size_of(rest), f["vsrc"]
        ndw = max(nbytes // 4, 1)

        def h(w, ctx):
            m = w.mask()
            lanes = LANE_IDS[m]
            addrs = _global_addrs(inst, w)[m]
            off = ctx.mem.check_lanes(addrs, nbytes, lanes)
            data = np.stack([w.v[src + i][m] for i in range(ndw)], axis=1).astype("<u4")
            ctx.mem.scatter(off, data.view(U8)[:, :nbytes])
            ctx.record(w, "storecnt", lines=lines_touched(addrs, nbytes, lanes, ctx.coalesce_lanes))
        return h
    if kind == "atomic":
        returns = bool(f.get("th", 0) & 1)  # gfx12: th:TH_ATOMIC_RETURN selects the returning form
        key = rest
        op = ATOMIC_OPS[_GLOBAL_ATOMIC[key]] if key in _GLOBAL_ATOMIC else None
        if op is None:
            raise ModelError(f"{name} is decoded but not implemented by the model")
        src, d = f["vsrc"], f["vdst"]
        cmp = key.startswith("cmpswap")

        def h(w, ctx):
            m = w.mask()
            lanes = LANE_IDS[m]
            addrs = _global_addrs(inst, w)[m]
            off = ctx.mem.check_lanes(addrs, 4, lanes)
            mem = ctx.mem.data
            old = np.zeros(LANES, U32)
            for lane, o in zip(lanes.tolist(), off.tolist()):  # lanes in order, each sees the last
                cur = int(mem[o: o + 4].view("<u4")[0])
                new = op(cur, int(w.v[src][lane]), int(w.v[src + 1][lane]) if cmp else 0)
                mem[o: o + 4] = np.array([new], "<u4").view(U8)
                old[lane] = cur
            if returns:
                w.vwrite(d, old, mask=m)
            ctx.record(w, "loadcnt" if returns else "storecnt", lines=lines_touched(addrs, 4, lanes, ctx.coalesce_lanes))
        return h
    raise ModelError(f"{name} is decoded but not implemented by the model")


# --------------------------------------------------------------------------------------
def _ds_lane_addrs(w, inst) -> np.ndarray:
    return w.v[inst.f["addr"]].astype(np.int64)


def build_ds(inst: Inst):
    name, f = inst.name, inst.f
    rest = name[3:]
    off16 = f["offset0"] | (f["offset1"] << 8)
    if rest == "nop":
        return lambda w, ctx: None
    if rest.startswith(("load_2addr", "store_2addr", "storexchg_2addr")):
        return _build_ds_2addr(inst)
    if rest.startswith("load_"):
        suffix = rest[5:]
        narrow = _NARROW.get(suffix)
        nbytes = narrow[0] if narrow else _size_of(suffix)
        ndw, d = max(nbytes // 4, 1), f["vdst"]

        def h(w, ctx):
            m = w.mask()
            addrs = _ds_lane_addrs(w, inst)[m] + off16
            raw, dws = ctx.lds_read(addrs, nbytes)
            vals = _to_dwords(raw, narrow)
            for i in range(ndw):
                w.v[d + i][m] = vals[:, i]
            ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, lds_windows(LANE_IDS[m], ctx.lds_window_lanes)))
        return h
    if rest.startswith("store_"):
        nbytes = _size_of(rest[6:])
        ndw, src = max(nbytes // 4, 1), f["data0"]

        def h(w, ctx):
            m = w.mask()
            addrs = _ds_lane_addrs(w, inst)[m] + off16
            data = np.stack([w.v[src + i][m] for i in range(ndw)], axis=1).astype("<u4").view(U8)[:, :nbytes]
            dws = ctx.lds_write(addrs, data)
            ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, lds_windows(LANE_IDS[m], ctx.lds_window_lanes)))
        return h
    key = rest
    returns = "_rtn_" in rest or rest.startswith("storexchg_rtn")
    if key not in _DS_ATOMIC:
        key = rest.replace("_rtn", "")
    if key not in _DS_ATOMIC and rest not in _DS_ATOMIC:
        raise ModelError(f"{name} is decoded but not implemented by the model")
    op = ATOMIC_OPS[_DS_ATOMIC.get(rest, _DS_ATOMIC.get(key))]
    src, src2, d = f["data0"], f["data1"], f["vdst"]

    def h(w, ctx):
        m = w.mask()
        lanes = LANE_IDS[m]
        addrs = _ds_lane_addrs(w, inst)[m] + off16
        old = np.zeros(LANES, U32)
        for lane, a in zip(lanes.tolist(), addrs.tolist()):
            cur = ctx.lds_load_dword(a)
            ctx.lds_store_dword(a, op(cur, int(w.v[src][lane]), int(w.v[src2][lane])))
            old[lane] = cur
        if returns:
            w.vwrite(d, old, mask=m)
        ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, addrs // 4, lds_windows(lanes, ctx.lds_window_lanes)[:, 0]))
    return h


def _build_ds_2addr(inst: Inst):
    name, f = inst.name, inst.f
    size = 8 if name.endswith("b64") else 4
    stride = size * (64 if "stride64" in name else 1)
    o0, o1 = f["offset0"] * stride, f["offset1"] * stride
    ndw = size // 4
    if "load" in name:
        d = f["vdst"]

        def h(w, ctx):
            m = w.mask()
            base = _ds_lane_addrs(w, inst)[m]
            raw0, dw0 = ctx.lds_read(base + o0, size)
            raw1, dw1 = ctx.lds_read(base + o1, size)
            vals = np.concatenate([raw0.view("<u4"), raw1.view("<u4")], axis=1)
            for i in range(2 * ndw):
                w.v[d + i][m] = vals[:, i]
            win = lds_windows(LANE_IDS[m], ctx.lds_window_lanes)
            ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, np.concatenate([dw0, dw1], axis=1), win))
        return h
    if "storexchg" in name:
        raise ModelError(f"{name} is decoded but not implemented by the model")
    s0, s1 = f["data0"], f["data1"]

    def h(w, ctx):
        m = w.mask()
        base = _ds_lane_addrs(w, inst)[m]
        d0 = np.stack([w.v[s0 + i][m] for i in range(ndw)], axis=1).astype("<u4").view(U8)
        d1 = np.stack([w.v[s1 + i][m] for i in range(ndw)], axis=1).astype("<u4").view(U8)
        # lane by lane, each lane's first address before its second (the ISA's pseudocode, run
        # for each active lane in order): where lanes overlap, the later write wins
        dws = ctx.lds_write(np.stack([base + o0, base + o1], axis=1).reshape(-1),
                            np.stack([d0, d1], axis=1).reshape(-1, size))
        win = lds_windows(np.repeat(LANE_IDS[m], 2), ctx.lds_window_lanes)
        ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, win))
    return h


def _memory_names() -> set[str]:
    names = {"global_inv", "global_wb", "ds_nop"}
    for s in ("b32", "b64", "b96", "b128", "u8", "i8", "u16", "i16"):
        names |= {f"global_load_{s}", f"ds_load_{s}", f"s_load_{s}"}
    for s in ("b8", "b16", "b32", "b64", "b96", "b128"):
        names |= {f"global_store_{s}", f"ds_store_{s}"}
    names |= {"s_load_b256", "s_load_b512"}
    for s in ("b32", "b64"):
        names |= {f"ds_load_2addr_{s}", f"ds_load_2addr_stride64_{s}", f"ds_store_2addr_{s}", f"ds_store_2addr_stride64_{s}"}
    names |= {f"global_atomic_{k}" for k in _GLOBAL_ATOMIC}
    for k in _DS_ATOMIC:
        names.add(f"ds_{k}")
        if "rtn" not in k:
            base, typ = k.rsplit("_", 1)
            names.add(f"ds_{base}_rtn_{typ}")
    return names


IMPLEMENTED_MEMORY = _memory_names()
