"""Scalar memory, LDS and global memory instructions of the reference model.

Besides the architectural effect, each memory instruction reports what the
micro-architecture is later checked against (``ctx.record``): the wait counter it
increments, for DS the bank-conflict cost, for global accesses the distinct 128-byte
lines touched.
"""
from __future__ import annotations

import numpy as np

from isa import Fmt, Inst
from . import fp32 as F
from .scalar import sx
from .wave import LANES, NULL, ModelError

U8, U32, U64 = np.uint8, np.uint32, np.uint64
LDS_BANKS = 32
L0_LINE = 128
LANE_IDS = np.arange(LANES)

def _atomic_ops(bits: int) -> dict:
    """Read-modify-write operations on ``bits``-wide values, as the ISA's DS_*/GLOBAL_ATOMIC_*
    pseudocode defines them: f(mem, data, data2) -> new. data2 is the compare value of
    cmpswap and the OR value of mskor (whose data is the mask)."""
    mask = (1 << bits) - 1
    return {
        "add": lambda m, d, c: (m + d) & mask,
        "sub": lambda m, d, c: (m - d) & mask,
        "rsub": lambda m, d, c: (d - m) & mask,
        "inc": lambda m, d, c: 0 if m >= d else m + 1,
        "dec": lambda m, d, c: d if (m == 0 or m > d) else m - 1,
        f"min_i{bits}": lambda m, d, c: d if sx(d, bits) < sx(m, bits) else m,
        f"max_i{bits}": lambda m, d, c: d if sx(d, bits) >= sx(m, bits) else m,
        f"min_u{bits}": lambda m, d, c: min(m, d),
        f"max_u{bits}": lambda m, d, c: max(m, d),
        "and": lambda m, d, c: m & d,
        "or": lambda m, d, c: m | d,
        "xor": lambda m, d, c: m ^ d,
        "swap": lambda m, d, c: d,
        "cmpswap": lambda m, d, c: d if m == c else m,
        "mskor": lambda m, d, c: (m & ~d & mask) | c,
    }


def _float_atomic_ops() -> dict:
    """The f32 atomics: MEM + DATA, and minimumNumber/maximumNumber of (DATA, MEM) (a NaN
    loses to a number; of two NaNs, DATA quietened wins), with the VALU's exact arithmetic."""
    return {"add_f32": lambda m, d, c: int(F.add(m, d)),
            "min_num_f32": lambda m, d, c: int(F.min_num(d, m)),
            "max_num_f32": lambda m, d, c: int(F.max_num(d, m))}


# shared by DS and global atomics, keyed as above ("add", "min_i32", "cmpswap", ...)
ATOMIC_OPS = _atomic_ops(32) | _float_atomic_ops()
ATOMIC_OPS_64 = _atomic_ops(64)
_ATOMIC_ALIAS = {"storexchg": "swap", "cmpstore": "cmpswap"}


def atomic_op(rest: str):
    """(read-modify-write function, bits) of a DS or global atomic named by the part after
    ``ds_`` / ``global_atomic_`` (``add_u32``, ``cmpstore_rtn_b64``, ``storexchg_rtn_b32``),
    or None if the model has no such operation."""
    base, _, typ = rest.replace("_rtn", "").rpartition("_")
    if typ not in ("u32", "i32", "b32", "f32", "u64", "i64", "b64"):
        return None
    bits = int(typ[1:])
    base = _ATOMIC_ALIAS.get(base, base)
    typed = base in ("min", "max") or typ == "f32"
    fn = (ATOMIC_OPS if bits == 32 else ATOMIC_OPS_64).get(f"{base}_{typ}" if typed else base)
    return (fn, bits) if fn is not None else None

# Loads narrower than a dword: (bytes, signed)
_NARROW = {"u8": (1, False), "i8": (1, True), "u16": (2, False), "i16": (2, True)}


def _size_of(suffix: str) -> int:
    return {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16, "b256": 32, "b512": 64}[suffix]


def access_bytes(inst: Inst) -> int:
    """Bytes a vector memory or DS instruction moves per lane and address."""
    return inst.info.data_bits // 8


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


def _d16_value(raw: np.ndarray, narrow: tuple[int, bool] | None) -> np.ndarray:
    """(n, 1 or 2) uint8 -> the 16-bit value a d16 load writes (u8 zero-, i8 sign-extended)."""
    if narrow is None:
        return raw.view("<u2")[:, 0].astype(U32)
    return _to_dwords(raw, narrow)[:, 0] & 0xFFFF


def write_loaded(w, inst: Inst, m: np.ndarray, raw: np.ndarray) -> None:
    """Write the bytes a load read, (active lanes, bytes), to its destination VGPRs: whole
    dwords, a dword extended from a narrow value, or (d16) one half, keeping the other."""
    narrow = next((_NARROW[t] for t in inst.name.split("_") if t in _NARROW), None)
    d = inst.f["vdst"]
    if "d16" in inst.info.flags:
        half = _d16_value(raw, narrow)
        keep = w.v[d][m]
        w.v[d][m] = ((keep & 0xFFFF) | (half << 16)) if "_d16_hi" in inst.name else ((keep & 0xFFFF_0000) | half)
        return
    vals = _to_dwords(raw, narrow)
    for i in range(vals.shape[1]):
        w.v[d + i][m] = vals[:, i]


def stored_bytes(w, inst: Inst, m: np.ndarray, src: int, nbytes: int) -> np.ndarray:
    """The bytes a store writes per active lane, (lanes, nbytes): the low bytes of the data
    VGPRs, or for ``*_d16_hi`` stores those of the register's upper half."""
    ndw = max(nbytes // 4, 1)
    data = np.stack([w.v[src + i][m] for i in range(ndw)], axis=1).astype("<u4")
    if "d16" in inst.info.flags:
        data = data >> 16
    return data.view(U8)[:, :nbytes]


def lane_ints(w, reg: int, lanes, ndw: int) -> list[int]:
    """Each lane's ``ndw``-dword value held in VGPRs reg.. (as Python ints)."""
    rows = [w.v[reg + i].astype(object) << (32 * i) for i in range(ndw)]
    total = sum(rows[1:], rows[0])
    return [int(total[lane]) for lane in lanes]


def rmw_lanes(w, inst: Inst, lanes: np.ndarray, backing: np.ndarray, idx: np.ndarray,
              inside: np.ndarray | None = None) -> None:
    """An atomic read-modify-write of each lane in ``lanes``, in lane order (a later lane sees
    an earlier one's result): lane k's value is the bytes ``backing[idx[k]]`` (little-endian;
    a byte outside ``inside`` reads 0 and is not written). The pre-op value goes to vdst if the
    instruction returns."""
    fn, bits = atomic_op(inst.name.split("_", 2)[2] if inst.name.startswith(("global_", "flat_"))
                         else inst.name[3:])
    ndw, f = bits // 32, inst.f
    src = f["data0"] if "data0" in f else f["vsrc"]
    data2 = f["data1"] if "data1" in f else src + ndw      # cmpswap: {data, compare} in VGPRs
    two = "cmpswap" in inst.name or "cmpstore" in inst.name or "mskor" in inst.name
    ls = lanes.tolist()
    data, cmp = lane_ints(w, src, ls, ndw), (lane_ints(w, data2, ls, ndw) if two else [0] * len(ls))
    old = np.zeros((ndw, LANES), U32)
    for k, lane in enumerate(ls):
        ok = slice(None) if inside is None else inside[k]
        raw = np.zeros(idx.shape[1], U8)
        raw[ok] = backing[idx[k][ok]]
        cur = int.from_bytes(raw.tobytes(), "little")
        new = np.frombuffer(fn(cur, data[k], cmp[k]).to_bytes(bits // 8, "little"), U8)
        backing[idx[k][ok]] = new[ok]
        old[:, lane] = [(cur >> (32 * i)) & 0xFFFF_FFFF for i in range(ndw)]
    if inst.returns:
        m = np.zeros(LANES, bool)
        m[lanes] = True
        for i in range(ndw):
            w.vwrite(f["vdst"] + i, old[i], mask=m)


def lds_conflict_cycles(dword_addrs: np.ndarray, banks: int = LDS_BANKS, windows=None) -> int:
    """Cycles an LDS access takes: the most distinct dwords that fall in one of ``banks`` banks
    (broadcast is free). ``windows``: each dword's scheduling window (same shape, or
    broadcastable), for an LDS that resolves conflicts one window after the other
    (:func:`lds_windows`); the cost is then the sum of the windows' costs."""
    dword_addrs = np.asarray(dword_addrs)
    if dword_addrs.size == 0:
        return 0
    if windows is not None:
        win = np.broadcast_to(np.asarray(windows), dword_addrs.shape).ravel()
        return sum(lds_conflict_cycles(dword_addrs.ravel()[win == k], banks) for k in np.unique(win))
    uniq = np.unique(dword_addrs)
    return int(np.bincount(uniq % banks, minlength=banks).max())


def lds_window_lanes(banks: int, dwords_per_lane: int) -> int:
    """The lanes an LDS half schedules together: as many dwords as it has banks, a lane's
    dwords counted to the next power of two (32 banks: a b32 access the whole wave, a b64 or
    2addr b32 one 16 lanes at a time, a b96, b128 or 2addr b64 one 8 lanes at a time)."""
    per_lane = 1 << max(dwords_per_lane - 1, 0).bit_length()
    return max(1, min(LANES, banks // per_lane))


def lds_windows(lanes: np.ndarray, banks: int, dwords_per_lane: int) -> np.ndarray:
    """The scheduling window of each lane's accesses (a column: one row per lane)."""
    return (np.asarray(lanes) // lds_window_lanes(banks, dwords_per_lane))[:, None]


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
        nbytes = access_bytes(inst)

        def h(w, ctx):
            m = w.mask()
            lanes = LANE_IDS[m]
            addrs = _global_addrs(inst, w)[m]
            off = ctx.mem.check_lanes(addrs, nbytes, lanes)
            write_loaded(w, inst, m, ctx.mem.gather(off, nbytes))
            ctx.record(w, "loadcnt", lines=lines_touched(addrs, nbytes, lanes, ctx.coalesce_lanes))
        return h
    if kind == "store":
        nbytes, src = access_bytes(inst), f["vsrc"]

        def h(w, ctx):
            m = w.mask()
            lanes = LANE_IDS[m]
            addrs = _global_addrs(inst, w)[m]
            off = ctx.mem.check_lanes(addrs, nbytes, lanes)
            ctx.mem.scatter(off, stored_bytes(w, inst, m, src, nbytes))
            ctx.record(w, "storecnt", lines=lines_touched(addrs, nbytes, lanes, ctx.coalesce_lanes))
        return h
    if kind == "atomic":
        if atomic_op(rest) is None:
            raise ModelError(f"{name} is decoded but not implemented by the model")
        nbytes = access_bytes(inst)

        def h(w, ctx):
            m = w.mask()
            lanes = LANE_IDS[m]
            addrs = _global_addrs(inst, w)[m]
            off = ctx.mem.check_lanes(addrs, nbytes, lanes)
            rmw_lanes(w, inst, lanes, ctx.mem.data, off[:, None] + np.arange(nbytes))
            # gfx12: th:TH_ATOMIC_RETURN selects the returning form, counted as a load
            ctx.record(w, "loadcnt" if inst.returns else "storecnt",
                       lines=lines_touched(addrs, nbytes, lanes, ctx.coalesce_lanes))
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
    nbytes = access_bytes(inst)
    if rest.startswith("load_"):
        def h(w, ctx):
            m = w.mask()
            addrs = _ds_lane_addrs(w, inst)[m] + off16
            raw, dws = ctx.lds_read(addrs, nbytes)
            write_loaded(w, inst, m, raw)
            win = lds_windows(LANE_IDS[m], ctx.lds_banks, dws.shape[1])
            ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, win))
        return h
    if rest.startswith("store_"):
        src = f["data0"]

        def h(w, ctx):
            m = w.mask()
            addrs = _ds_lane_addrs(w, inst)[m] + off16
            dws = ctx.lds_write(addrs, stored_bytes(w, inst, m, src, nbytes))
            win = lds_windows(LANE_IDS[m], ctx.lds_banks, dws.shape[1])
            ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, win))
        return h
    if atomic_op(rest) is None:
        raise ModelError(f"{name} is decoded but not implemented by the model")

    def h(w, ctx):
        m = w.mask()
        lanes = LANE_IDS[m]
        addrs = _ds_lane_addrs(w, inst)[m] + off16
        rmw_lanes(w, inst, lanes, ctx.lds, addrs[:, None] + np.arange(nbytes), _lds_inside(ctx, addrs, nbytes))
        dws = (addrs[:, None] + np.arange(0, nbytes, 4)) // 4
        ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, lds_windows(lanes, ctx.lds_banks, dws.shape[1])))
    return h


def _lds_inside(ctx, addrs: np.ndarray, nbytes: int) -> np.ndarray:
    """(lanes, nbytes) bool: the element at each address lies wholly inside the workgroup's LDS
    (an atomic on one that does not reads 0 and writes nothing, as LDS accesses past it do)."""
    whole = (addrs >= 0) & (addrs + nbytes <= ctx.lds.size)
    return np.repeat(whole[:, None], nbytes, axis=1)


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
            win = lds_windows(LANE_IDS[m], ctx.lds_banks, 2 * ndw)
            ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, np.concatenate([dw0, dw1], axis=1), win))
        return h
    if "storexchg" in name:
        return _build_ds_storexchg_2addr(inst, o0, o1, size)
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
        win = lds_windows(np.repeat(LANE_IDS[m], 2), ctx.lds_banks, 2 * ndw)
        ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, win))
    return h


def _build_ds_storexchg_2addr(inst: Inst, o0: int, o1: int, size: int):
    """ds_storexchg_2addr[_stride64]_rtn_b32/b64, lane by lane: both old elements are read,
    then data0 is stored at the first address and data1 at the second; vdst gets both old
    elements (the ISA's pseudocode)."""
    f = inst.f
    ndw = size // 4
    s0, s1, d = f["data0"], f["data1"], f["vdst"]

    def h(w, ctx):
        m = w.mask()
        lanes = LANE_IDS[m]
        base = _ds_lane_addrs(w, inst)[m]
        old = np.zeros((2 * ndw, LANES), U32)
        for k, lane in enumerate(lanes.tolist()):
            pair = np.array([base[k] + o0, base[k] + o1])
            raw, _ = ctx.lds_read(pair, size)
            old[:, lane] = raw.view("<u4").reshape(-1)
            new = np.stack([w.v[r + i][lane] for r in (s0, s1) for i in range(ndw)]).astype("<u4")
            ctx.lds_write(pair, new.view(U8).reshape(2, size))
        for i in range(2 * ndw):
            w.vwrite(d + i, old[i], mask=m)
        dws = np.concatenate([_lane_dwords(base + o0, size), _lane_dwords(base + o1, size)], axis=1)
        ctx.record(w, "dscnt", ds_cycles=_ds_cycles(ctx, dws, lds_windows(lanes, ctx.lds_banks, 2 * ndw)))
    return h


def _lane_dwords(addrs: np.ndarray, nbytes: int) -> np.ndarray:
    return (addrs[:, None] + np.arange(0, nbytes, 4)[None, :]) // 4


def _memory_names() -> set[str]:
    """Every memory opcode of the table the model executes: all loads and stores (SMEM, DS,
    global, scratch, flat), the cache controls, and the atomics ``atomic_op`` knows."""
    from isa import OPCODES
    names = set()
    for info in OPCODES:
        if info.fmt not in (Fmt.SMEM, Fmt.DS, Fmt.VGLOBAL, Fmt.VSCRATCH, Fmt.VFLAT):
            continue
        if info.kind in ("ds_atomic", "vmem_atomic") and "2addr" not in info.name:
            rest = info.name[3:] if info.fmt == Fmt.DS else info.name.split("_", 2)[2]
            if atomic_op(rest) is None:
                continue
        names.add(info.name)
    return names


IMPLEMENTED_MEMORY = _memory_names()
