"""The local data share (LDS) of the DCU: two halves of ``lds_banks`` banks, 32 in RDNA and in
every preset but ``fpga``, which has 4 (docs/memory.md, "LDS").

Each half is a pipe that serves one instruction at a time from the SIMDs' ``lds_req`` ports.
An instruction is a set of up to 128 lane-dword accesses (access ``4 * lane + slot``: a
b128 load touches four dwords per lane, a 2addr b64 form two dwords at each of two
addresses); only the accesses with a byte inside the wave's window occupy a bank. The
passes serve a window of ``lds_banks`` accesses at a time, whole lanes (a lane's dwords
counted to a power of two: with 32 banks a b32 access is the whole wave, a b128 one 8
lanes), windows in lane order. A bank pass serves, in every bank, one dword address: the one
of the window's first pending access in that bank, together with every other pending access
of the window to the same dword (broadcast). So each window takes as many passes as the
largest number of its distinct dwords that fall in one bank, the cost
``sim.memory_ops.lds_conflict_cycles`` gives with ``sim.memory_ops.lds_windows``.
Atomics serve one lane per bank and pass, in lane order, so lanes that hit the same dword
see each other's results as the ISA's lane-serial semantics say.

Pipe stages (one cycle each, stalled together when the result register is still busy):
P, the bank pass (the window's accesses from the registered lanes, or in place from the
SIMD's request; leader selection, RAM read addresses, each bank's write data); R, the RAM
outputs (stores and atomics write here, atomics through the ALU beside each bank); X, the
RAM outputs registered ahead of the bank-to-access crossbar, which places the served
accesses among the results; A, the instruction's results, which send a response beat per
lane group (``config.resp_lanes`` lanes: 4 on ``fpga``, else the whole wave) of each
destination register. The results are registers, or, when a window fits in a response group
(on ``fpga``), LUT RAM columns that the crossbar writes directly (see stage X below).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Elaboratable, Module, Mux, Signal, Value
from amaranth.lib import data, enum, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from .atomic import ATOMIC_OF, AtomicOp, atomic_result
from ..bitops import encode_onehot, lowest_bit, mux_tree, tree_or
from ..config import DCUConfig
from ..isa_tables import info_of, ops_of, rtl_memory_op
from ..layouts import LANES, ReqRow, VecMemReq, VecMemResp

__all__ = ["LDS", "LdsAlloc", "LdsError", "LdsErrorCause", "IMPLEMENTED"]

SLOTS = 4                 # dwords one lane of an instruction can touch
NACC = LANES * SLOTS      # accesses of one instruction; access 4 * lane + slot
SIMDS = 4


# -- port layouts ---------------------------------------------------------------------------
def LdsAlloc(cfg: DCUConfig) -> data.StructLayout:
    """A wave's LDS window, bytes ``[base, base + size)`` of the DCU's LDS (the dispatcher's
    ``hdl.top.dispatch.LdsAllocLayout`` has the same fields)."""
    return data.StructLayout({"simd": range(cfg.simds), "wave": range(cfg.wave_ids),
                              "base": range(cfg.lds_bytes_total), "size": range(cfg.lds_bytes_total + 1)})


class LdsErrorCause(enum.Enum, shape=2):
    NONE = 0
    MISALIGNED = 1   # a lane's address is not aligned to its access (dword, or 2 bytes for b16)
    BAD_ALLOC = 2    # the wave's window is not 4-byte aligned, or (CU mode) not in its CU's half
    BAD_OP = 3       # the request's op is not a DS operation the LDS executes


def LdsError(cfg: DCUConfig) -> data.StructLayout:
    """The first error seen: the request's SIMD and wave, the lowest bad lane and its address
    (``BAD_ALLOC``: lane 0 and the window's base)."""
    return data.StructLayout({"valid": 1, "cause": LdsErrorCause, "simd": range(SIMDS),
                              "wave": range(cfg.wave_ids), "lane": range(LANES), "addr": 32})


# -- operation table --------------------------------------------------------------------------
class _Cls(enum.Enum, shape=2):
    NONE = 0
    LOAD = 1
    STORE = 2
    ATOMIC = 3


_Ctl = data.StructLayout({
    "cls": _Cls,
    "narrow": 2,   # 0: dwords, 1: byte, 2: 16 bits
    "sgn": 1,      # sign-extending narrow load
    "two": 1,      # 2addr form
    "b64": 1,      # 2addr with 64-bit elements
    "st64": 1,     # 2addr offsets scaled by 64 elements
    "smask": 4,    # slots in use
    "sg": 4,       # address (offset0 / offset1) of each slot
    "sk": 8,       # dword offset of each slot from its address, 2 bits per slot
    "aop": AtomicOp,
    "nregs": 3,    # destination registers (response beats with data, a lane group each)
    "xchg2": 1,    # ds_storexchg_2addr: the second old value comes from slot 2
    "wshape": 2,   # the window shape (_SHAPES): the slots a lane's dwords are in
})

#: Window shapes: (log2 of the dwords a lane's access takes, counted to a power of two; its
#: second dword in slot 2 rather than 1). A window holds ``lds_banks`` accesses: as many lanes
#: as fit, each with all its dwords (``sim.memory_ops.lds_window_lanes``).
_SHAPES = [(0, 0), (1, 0), (1, 1), (2, 0)]


def _ctl_of(op) -> dict:
    """Control word of one DS opcode (see ``_Ctl``)."""
    name, kind = op.name.lower(), info_of(op).kind
    c = dict(cls={"ds_load": _Cls.LOAD, "ds_store": _Cls.STORE, "ds_atomic": _Cls.ATOMIC}[kind],
             narrow=0, sgn=0, two=0, b64=0, st64=0, smask=1, sg=0, sk=0, aop=AtomicOp.ADD, nregs=0,
             xchg2=0)
    if "2addr" in name:
        b64 = name.endswith("b64")
        # slot = address * 2 + dword for b64; b32 loads use slots 0, 1; b32 stores and
        # storexchg slots 0, 2, the dwords of the request's data that hold data0 and data1
        slots = [0, 1, 2, 3] if b64 else [0, 1] if kind == "ds_load" else [0, 2]
        group = (lambda s: s >> 1) if b64 or kind != "ds_load" else (lambda s: s)
        c.update(two=1, b64=int(b64), st64=int("stride64" in name),
                 smask=sum(1 << s for s in slots), sg=sum(group(s) << s for s in slots),
                 sk=sum((s & 1 if b64 else 0) << (2 * s) for s in slots))
        if kind == "ds_load":
            c["nregs"] = len(slots)
    else:
        suffix = name.rsplit("_", 1)[1]
        narrow = {"u8": 1, "i8": 1, "b8": 1, "u16": 2, "i16": 2, "b16": 2}.get(suffix, 0)
        ndw = int(suffix[1:]) // 32 if (not narrow and kind != "ds_atomic") else 1
        c.update(narrow=narrow, sgn=int(suffix in ("i8", "i16")), smask=(1 << ndw) - 1,
                 sk=sum(s << (2 * s) for s in range(ndw)))
        if kind == "ds_load":
            c["nregs"] = ndw
    used = [k for k in range(SLOTS) if c["smask"] >> k & 1]
    c["wshape"] = _SHAPES.index(((len(used) - 1).bit_length(), int(used == [0, 2])))
    if kind == "ds_atomic":
        c.update(aop=ATOMIC_OF[op], xchg2=c["two"])
        if "_rtn" in name:
            c["nregs"] = 2 if c["two"] else 1
    return c


_DS_OPS = [op for k in ("ds_load", "ds_store", "ds_atomic") for op in ops_of(k) if rtl_memory_op(info_of(op))]

#: DS mnemonics the LDS executes.
IMPLEMENTED = frozenset(op.name.lower() for op in _DS_OPS)


def _ctl_groups() -> list:
    """``[(control dict, [OpId, ...])]``: opcodes grouped by identical control words."""
    groups: dict = {}
    for op in _DS_OPS:
        c = _ctl_of(op)
        groups.setdefault(tuple(sorted((k, v.value if hasattr(v, "value") else v)
                                       for k, v in c.items())), (c, []))[1].append(op)
    return list(groups.values())


# -- helpers ---------------------------------------------------------------------------------------
def _sub(m: Module, name: str) -> Module:
    """A submodule of its own: Amaranth's simulator re-evaluates a module's combinational
    logic whenever one of its inputs changes, so the stages below live in separate ones."""
    sub = Module()
    m.submodules[name] = sub
    return sub


def _pick(mod: Module, v: Value, last: bool, name: str) -> Signal:
    """The lowest set bit of ``v`` (one-hot), or the highest when ``last``, driven by ``mod``
    (signals, so that no expression is copied into each of its uses)."""
    n = len(v)
    vs, out = Signal(n, name=f"{name}_v"), Signal(n, name=name)
    mod.d.comb += vs.eq(v)
    if last:
        back = lowest_bit(Cat(*[vs[n - 1 - i] for i in range(n)]))
        mod.d.comb += out.eq(Cat(*[back[n - 1 - i] for i in range(n)]))
    else:
        mod.d.comb += out.eq(lowest_bit(vs))
    return out


def _and_or(terms: list, width: int) -> Value:
    """``OR`` of ``value if cond`` over ``terms`` of ``(cond, value)`` (conditions exclusive)."""
    return tree_or([Mux(c, v, 0) for c, v in terms]) if terms else Const(0, width)


def _meta_layout(cfg: DCUConfig) -> data.StructLayout:
    """What the result stage needs of an instruction, carried down the pipe."""
    return data.StructLayout({
        "simd": range(SIMDS), "wave": range(cfg.wave_ids), "seq": 16, "vdst": 8, "exec": 32,
        "em": 4,              # bytes of the window's last, partial dword
        "src": 8,             # slot holding each destination register's dword, 2 bits per register
        "pair": 1,            # served by both halves (WGP mode, window across them)
    })


# -- one half ---------------------------------------------------------------------------------
class _Pipe(Elaboratable):
    """One half of the LDS: ``lds_banks`` bank RAMs and the pipe that serves one instruction at a
    time, a window of ``lds_banks`` accesses per bank pass.

    Parameters
    ----------
    config : DCUConfig
    half : int
        0 or 1: the half's banks hold physical dwords ``[half * H / 4, (half + 1) * H / 4)``.
    data_srcs, addr_srcs : list of Value
        Each SIMD's request data and addresses. The half registers them at take (``req.data``
        is not read), or with ``config.lds_in_place`` reads each window from them in its
        passes: the SIMD holds its request until ``finish``.

    Members
    -------
    take, req, simd, base, size, pair : in
        Accept ``req`` (its data from ``data_srcs[simd]``) from SIMD ``simd``, whose wave's
        window is ``[base, base + size)``, in this cycle (only when ``can_take``); ``pair``:
        the other half takes it too.
    ack : in
        The beat on ``beat`` was taken.
    can_take, beat_valid, beat, beat_simd, beat_pair : out
        The result stage's current beat and the SIMD it is for.
    bad_op : out
        For ``req`` at ``take`` (0 otherwise): not a DS load, store or atomic.
    misaligned, mis_lane, mis_addr, mis_wave : out
        The window being served has a lane with a misaligned address: the lowest such lane,
        its address, the wave (0 while nothing is served).
    passed, conflict : out
        A bank pass happens in this cycle; it is not its instruction's first.
    finish, serving : out
        The instruction's last pass happens in this cycle (the request is not read after
        it); the SIMD whose instruction the pipe holds.
    row : out
        In place, the row of the served SIMD's request that the pass reads (0 when idle).
    pair_clear : out; other_clear : in
        A pass of a pair instruction (one both halves serve) leaves nothing of its window
        pending in this half, and the other half's: the two move to the next window together.
    banks : list of Memory
        The bank RAMs (testbenches read and preload them), filled in by ``elaborate``.
    """

    def __init__(self, config: DCUConfig, half: int, data_srcs: list, addr_srcs: list):
        cfg = self.config = config
        self.half = half
        self.data_srcs, self.addr_srcs = data_srcs, addr_srcs
        self.nbanks = config.lds_banks
        self.bb = exact_log2(self.nbanks)       # low bits of a dword address: its bank
        self.rows = config.lds_bytes_per_half // (4 * self.nbanks)
        self.rb = (self.rows - 1).bit_length()
        self.take, self.ack = Signal(name=f"take{half}"), Signal(name=f"ack{half}")
        self.req = Signal(VecMemReq(cfg), name=f"req{half}")
        self.simd = Signal(range(SIMDS), name=f"simd{half}")
        self.base = Signal(range(cfg.lds_bytes_total), name=f"base{half}")
        self.size = Signal(range(cfg.lds_bytes_total + 1), name=f"size{half}")
        self.pair = Signal(name=f"pair{half}")
        self.can_take = Signal(name=f"can_take{half}")
        self.beat_valid = Signal(name=f"beat_valid{half}")
        self.beat = Signal(VecMemResp(cfg), name=f"beat{half}")
        self.beat_simd = Signal(range(SIMDS), name=f"beat_simd{half}")
        self.beat_pair = Signal(name=f"beat_pair{half}")
        self.misaligned = Signal(name=f"misaligned{half}")
        self.mis_lane = Signal(range(LANES), name=f"mis_lane{half}")
        self.mis_addr = Signal(32, name=f"mis_addr{half}")
        self.mis_wave = Signal(range(cfg.wave_ids), name=f"mis_wave{half}")
        self.bad_op = Signal(name=f"bad_op{half}")
        self.passed = Signal(name=f"passed{half}")
        self.conflict = Signal(name=f"conflict{half}")
        self.finish = Signal(name=f"finish{half}")
        self.serving = Signal(range(SIMDS), name=f"serving{half}")
        self.row = Signal(ReqRow(config), name=f"row{half}")
        self.pair_clear = Signal(name=f"pair_clear{half}")
        self.other_clear = Signal(name=f"other_clear{half}")
        self.banks: list = []

    def elaborate(self, platform):
        cfg, h, rb = self.config, self.half, self.rb
        N, bb = self.nbanks, self.bb                  # a window's accesses = the banks
        DW = bb + rb + 1                              # a physical dword of the LDS
        NWIN = LANES * SLOTS // N                     # most windows an instruction has
        in_place = cfg.lds_in_place
        SRC = cfg.request_lanes if in_place else LANES   # lanes of the row the passes read from
        RL = cfg.resp_lanes
        NG = LANES // RL                              # beats per destination register
        Meta = _meta_layout(cfg)
        m = Module()
        req = self.req
        lane = lambda v, w, n: v[w * n: w * n + w]   # noqa: E731
        # the window shapes (_Ctl.wshape): log2 of a lane's dwords, and the slot of its k-th dword
        wl = [N >> _SHAPES[c][0] for c in range(len(_SHAPES))]          # lanes of a window

        # ---- setup, at take: the control word and the byte offset of the accesses of a window:
        # access j's is its slot's, which the window shape fixes (slot j % 4 with one dword a
        # lane, ...), so offs[j % 4] is known per opcode rather than selected in each pass ------
        ctl = Signal(_Ctl, name=f"ctl{h}")
        offs = Signal(data.ArrayLayout(18, SLOTS), name=f"offs{h}")   # byte offset of accesses j % 4
        off1 = Signal(18, name=f"off1_{h}")                           # ... of a 2addr form's second address
        dec = _sub(m, "decode")
        with dec.If(self.take):     # read only at take: idle, a compiled simulator skips it
            with dec.Switch(req.op):
                for c, ops in _ctl_groups():
                    with dec.Case(*ops):
                        dec.d.comb += ctl.eq(_Ctl.const(c))
                        if c["two"]:
                            sh = (3 if c["b64"] else 2) + (6 if c["st64"] else 0)
                            group = [req.offset0.shift_left(sh), req.offset1.shift_left(sh)]
                            dec.d.comb += off1.eq(group[1])
                        else:
                            group = [Cat(req.offset0, req.offset1)] * 2
                        lpl, sl2 = _SHAPES[c["wshape"]]
                        ks = [(j & ((1 << lpl) - 1)) * (2 if sl2 else 1) for j in range(SLOTS)]   # slots
                        dec.d.comb += [offs[j].eq(group[c["sg"] >> k & 1] + 4 * (c["sk"] >> (2 * k) & 3))
                                       for j, k in enumerate(ks)]
                with dec.Default():
                    dec.d.comb += ctl.eq(_Ctl.const({"cls": _Cls.NONE, "smask": 0}))
            dec.d.comb += self.bad_op.eq(ctl.cls == _Cls.NONE)

        # ---- the instruction's registers ------------------------------------------------------
        p_valid = Signal(name=f"p_valid{h}")
        w_ctl, w_meta = Signal(_Ctl, name=f"w_ctl{h}"), Signal(Meta, name=f"w_meta{h}")
        w_offs = Signal(data.ArrayLayout(18, SLOTS), name=f"w_offs{h}")
        w_off1 = Signal(18, name=f"w_off1_{h}")
        w_base = Signal(range(cfg.lds_bytes_total), name=f"w_base{h}")
        w_size = Signal(range(cfg.lds_bytes_total + 1), name=f"w_size{h}")
        if not in_place:
            w_addr = Signal(32 * LANES, name=f"w_addr{h}")
            w_data = Signal(128 * LANES, name=f"w_data{h}")
        # the windows: those with EXEC lanes still to serve, the current one (one-hot and
        # binary), and its pending accesses after its first pass
        wtodo = Signal(NWIN, name=f"wtodo{h}")
        win_oh, win = Signal(NWIN, name=f"win_oh{h}"), Signal(range(NWIN), name=f"win{h}")
        fresh = Signal(name=f"fresh{h}")            # the window's first pass is next
        pend_r = Signal(N, name=f"pend_r{h}")
        p_first = Signal(name=f"p_first{h}")        # the next pass is the instruction's first
        p_passed = Signal(name=f"p_passed{h}")      # a pass of the instruction has served accesses

        # ---- the window's accesses, in the cycle of its pass ------------------------------------
        # shape c's window k covers lanes [k * wl[c], (k + 1) * wl[c]); access j of it is dword
        # j % per_lane of lane k * wl[c] + j // per_lane
        shape = [Signal(name=f"shape{h}_{c}") for c in range(len(_SHAPES))]
        wsel = _sub(m, "window")
        wsel.d.comb += [shape[c].eq(w_ctl.wshape == c) for c in range(len(_SHAPES))]
        lane0 = Signal(5, name=f"lane0_{h}")        # the window's first lane
        wsel.d.comb += lane0.eq(_and_or([(shape[c], (win * wl[c])[:5]) for c in range(len(_SHAPES))], 5))
        if in_place:
            # the SIMD's request row holding the window (a 4:1 multiplexer by the SIMD number)
            if cfg.request_rows > 1:
                wsel.d.comb += self.row.eq(Mux(p_valid, lane0[exact_log2(SRC):], 0))
            s_addr = Signal(32 * SRC, name=f"s_addr{h}")
            s_data = Signal(128 * SRC, name=f"s_data{h}")
            wsel.d.comb += [
                s_addr.eq(mux_tree(w_meta.simd, [Cat(*[lane(a, 64, n)[:32] for n in range(SRC)])
                                                 for a in self.addr_srcs])),
                s_data.eq(mux_tree(w_meta.simd, self.data_srcs))]
        else:
            s_addr, s_data = w_addr, w_data
        # per access: the candidates (condition, shape, lane in the row, slot), one per shape
        # and position of the window in the row (the config keeps a window inside a row)
        cand = [[] for _ in range(N)]
        for c, (lpl, sl2) in enumerate(_SHAPES):
            subs = SRC // wl[c]
            for sub in range(subs):
                at = shape[c] & (win[:exact_log2(subs)] == sub) if subs > 1 else shape[c]
                for j in range(N):
                    k = j & ((1 << lpl) - 1)
                    cand[j].append((at, c, sub * wl[c] + (j >> lpl), 2 * k if sl2 else k))
        a_j = [Signal(32, name=f"a{h}_{j}") for j in range(N)]
        wd_j = [Signal(32, name=f"wd{h}_{j}") for j in range(N)]
        cmp_j = [Signal(32, name=f"cmp{h}_{j}") for j in range(N)]
        slot_j = [Signal(2, name=f"slot{h}_{j}") for j in range(N)]
        acc = _sub(m, "access")
        with acc.If(p_valid):
            for j in range(N):
                by_lane: dict = {}
                for at, _, n, _ in cand[j]:
                    by_lane[n] = by_lane.get(n, Const(0)) | at
                acc.d.comb += [
                    a_j[j].eq(_and_or([(at, lane(s_addr, 32, n)) for n, at in by_lane.items()], 32)),
                    wd_j[j].eq(_and_or([(at, lane(s_data, 32, SLOTS * n + s)) for at, _, n, s in cand[j]], 32)),
                    # ds_cmpstore's compare value, dword 2 of its lane (one dword a lane)
                    cmp_j[j].eq(_and_or([(at, lane(s_data, 32, SLOTS * n + 2)) for at, c, n, _ in cand[j]
                                         if c == 0], 32)),
                    slot_j[j].eq(_and_or([(at, Const(s, 2)) for at, _, _, s in cand[j]], 2))]

        # each access's dword, bank, bytes, window code, and whether it is pending at the
        # window's first pass (an EXEC lane's dword in use, with a byte in the wave's window,
        # in this half)
        ex_sh = Signal(32, name=f"ex_sh{h}")
        d_j = [Signal(DW, name=f"d{h}_{j}") for j in range(N)]
        y_j = [Signal(2, name=f"y{h}_{j}") for j in range(N)]
        be_j = [Signal(4, name=f"be{h}_{j}") for j in range(N)]
        wdn_j = [Signal(32, name=f"wdn{h}_{j}") for j in range(N)]   # store data, a narrow one repeated
        inr_j = [Signal(2, name=f"inr{h}_{j}") for j in range(N)]
        pend0 = Signal(N, name=f"pend0_{h}")
        mis = Signal(N, name=f"mis{h}")
        lane_j = [Signal(5, name=f"lane{h}_{j}") for j in range(N)]
        s4 = w_size[2:]
        LO = max(len(w_offs[0]), len(s4) + 2)       # address bits added to the offset
        rmtab = Cat(Const(0, 4), w_meta.em, Const(0xF, 4), Const(0xF, 4))   # by where: bytes inside the window
        inrtab = Cat(Const(1, 2), Mux(w_ctl.cls == _Cls.LOAD, 2, 1), Const(0, 4))   # ... crossbar window code
        amask = Mux(w_ctl.narrow == 0, 3, Mux(w_ctl.narrow == 2, 1, 0))
        dw = _sub(m, "dwords")
        with dw.If(p_valid):
            dw.d.comb += ex_sh.eq(w_meta.exec >> lane0)
            for j in range(N):
                lpl_j = [(shape[c], j >> _SHAPES[c][0]) for c in range(len(_SHAPES))]
                first = tree_or([shape[c] for c in range(len(_SHAPES)) if j & ((1 << _SHAPES[c][0]) - 1) == 0])
                ex = _and_or([(at, ex_sh[n]) for at, n in lpl_j], 1)
                a = a_j[j]
                # the logical dword, address + offset, compared with the window's dwords: its
                # bits from len(s4) up only as "all zero" (an address's high bits and the carry
                # into them), not as a 32-bit adder and compare
                dlog = Signal(len(s4), name=f"dlog{h}_{j}")                 # logical dword, low bits
                hi0 = Signal(name=f"hi0_{h}_{j}")                          # ... the others all zero
                where = Signal(2, name=f"where{h}_{j}")   # 2: inside, 1: the last, partial dword, 0: past it
                low = Signal(LO + 1, name=f"sum{h}_{j}")
                dw.d.comb += [low.eq(a[:LO] + w_offs[j % SLOTS]), dlog.eq(low[2:]),
                              hi0.eq((low[len(s4) + 2:] == 0) & (a[LO:] == 0)),
                              where.eq(Cat(hi0 & (dlog == s4), hi0 & (dlog < s4)))]
                d = (dlog + w_base[2:])[:DW]
                y = (a[:2] + w_offs[j % SLOTS][:2])[:2]
                bm = Mux(w_ctl.narrow == 0, 0xF, Mux(w_ctl.narrow == 1, Const(1, 4) << y, Const(3, 4) << (y & 2)))[:4]
                in_half = ~w_meta.pair | (d[bb + rb] == h)        # a window across both halves: split by half
                inside = where[1] | (where[0] & (w_size[:2] != 0))   # a byte of the dword is in the window
                dw.d.comb += [
                    d_j[j].eq(d), y_j[j].eq(y), be_j[j].eq(rmtab.word_select(where, 4) & bm),
                    wdn_j[j].eq(Mux(w_ctl.narrow == 1, Cat(*[wd_j[j][:8]] * 4),
                                    Mux(w_ctl.narrow == 2, Cat(wd_j[j][:16], wd_j[j][:16]), wd_j[j]))),
                    inr_j[j].eq(inrtab.word_select(where, 2)),
                    pend0[j].eq(ex & w_ctl.smask.bit_select(slot_j[j], 1) & in_half & inside),
                    mis[j].eq(ex & first & (((y | Mux(w_ctl.two, (a[:2] + w_off1[:2])[:2], 0)) & amask) != 0)),
                    lane_j[j].eq(lane0 + _and_or(lpl_j, 5))]
        mis_oh = lowest_bit(mis)
        dw.d.comb += [self.misaligned.eq(p_valid & fresh & mis.any()),
                      self.mis_lane.eq(_and_or([(mis_oh[j], lane_j[j]) for j in range(N)], 5)),
                      self.mis_addr.eq(_and_or([(mis_oh[j], a_j[j]) for j in range(N)], 32)),
                      self.mis_wave.eq(w_meta.wave)]

        # ---- P: the bank pass: in each bank the dword of its first pending access, and every
        # pending access to that dword (stores: a dword's writers are all served in one pass,
        # so the order of its passes does not change what the banks hold) ------------------------
        pend = Signal(N, name=f"pend{h}")
        bank_j = [d_j[j][:bb] for j in range(N)]
        inb = [Cat(*[bank_j[j] == b for j in range(N)]) for b in range(N)]
        atomic = w_ctl.cls == _Cls.ATOMIC
        lead = [Signal(N, name=f"lead{h}_{b}") for b in range(N)]
        ldw = Signal(DW * N, name=f"ldw{h}")           # each bank's dword
        served = Signal(N, name=f"served{h}")
        ps = _sub(m, "pass")
        with ps.If(p_valid):
            ps.d.comb += pend.eq(Mux(fresh, pend0, pend_r))
            ps.d.comb += [lead[b].eq(_pick(ps, inb[b] & pend, False, f"lead_pick{h}_{b}")) for b in range(N)]
            ps.d.comb += ldw.eq(Cat(*[_and_or([(lead[b][j], d_j[j]) for j in range(N)], DW) for b in range(N)]))
            leaders = tree_or(lead)
            same = Cat(*[d_j[j] == ldw.word_select(bank_j[j], DW) for j in range(N)])
            ps.d.comb += served.eq(Mux(atomic, leaders, pend & same))

        # what the banks write: per bank and byte the last writer among the served accesses;
        # an atomic's leader with its operands
        b_wd, b_be = Signal(32 * N, name=f"b_wd{h}"), Signal(4 * N, name=f"b_be{h}")
        b_cmp, b_aval = Signal(32 * N, name=f"b_cmp{h}"), Signal(N, name=f"b_aval{h}")
        wr = _sub(m, "write_select")
        with wr.If(p_valid & ((w_ctl.cls == _Cls.STORE) | atomic)):
            for b in range(N):
                for y in range(4):   # the highest access writing the byte (atomics: the leader alone)
                    wins = _pick(wr, inb[b] & served & Cat(*[be_j[j][y] for j in range(N)]), True,
                                 f"byte_w{h}_{b}_{y}")
                    wr.d.comb += [b_wd[32 * b + 8 * y: 32 * b + 8 * y + 8].eq(
                                      Cat(*[wdn_j[j][8 * y: 8 * y + 8] for j in range(N)]).word_select(
                                          encode_onehot(wins) if N > 1 else 0, 8)),
                                  b_be[4 * b + y].eq(wins.any())]
                wr.d.comb += [b_cmp[32 * b: 32 * b + 32].eq(_and_or([(lead[b][j], cmp_j[j]) for j in range(N)], 32)),
                              b_aval[b].eq(_and_or([(lead[b][j], inr_j[j] == 0) for j in range(N)], 1))]

        # ---- the banks (stage R: RAM outputs; stores and atomics write here) --------------------
        advance = Signal(name=f"advance{h}")
        r_valid, r_first, r_last = Signal(name=f"r_valid{h}"), Signal(name=f"r_first{h}"), Signal(name=f"r_last{h}")
        r_ctl, r_meta = Signal(_Ctl, name=f"r_ctl{h}"), Signal(Meta, name=f"r_meta{h}")
        xw = bb + 2                                   # crossbar select: bank, window code
        r_xsel, r_row = Signal(xw * N, name=f"r_xsel{h}"), Signal(rb * N, name=f"r_row{h}")
        r_y, r_lane0 = Signal(2 * N, name=f"r_y{h}"), Signal(5, name=f"r_lane0{h}")
        r_wd, r_be = Signal(32 * N, name=f"r_wd{h}"), Signal(4 * N, name=f"r_be{h}")
        r_cmp, r_aval = Signal(32 * N, name=f"r_cmp{h}"), Signal(N, name=f"r_aval{h}")
        r_served = Signal(N, name=f"r_served{h}")
        rd = Signal(32 * N, name=f"rd{h}")
        anew = Signal(32 * N, name=f"anew{h}")
        r_atomic = r_valid & (r_ctl.cls == _Cls.ATOMIC)
        rports, wports = _sub(m, "bank_read"), _sub(m, "bank_write")
        self.banks = []
        for b in range(N):
            mem = memory.Memory(shape=32, depth=self.rows, init=[])
            m.submodules[f"bank{b}"] = mem
            self.banks.append(mem)
            wp = mem.write_port(granularity=8)
            rp = mem.read_port(transparent_for=(wp,))
            rports.d.comb += [rp.addr.eq(ldw[DW * b + bb: DW * b + bb + rb]), rp.en.eq(advance & p_valid),
                              rd[32 * b: 32 * b + 32].eq(rp.data)]
            wports.d.comb += [wp.addr.eq(r_row[rb * b: rb * (b + 1)]),
                              wp.data.eq(Mux(r_atomic, anew[32 * b: 32 * b + 32], r_wd[32 * b: 32 * b + 32])),
                              wp.en.eq(Mux(advance & r_valid,
                                           Mux(r_atomic, Mux(r_aval[b], 0xF, 0), r_be[4 * b: 4 * b + 4]), 0))]
        alu = _sub(m, "alu")     # computes only in atomic passes
        with alu.If(r_atomic):
            alu.d.comb += anew.eq(Cat(*[atomic_result(r_ctl.aop, rd[32 * b: 32 * b + 32], r_wd[32 * b: 32 * b + 32],
                                                      r_cmp[32 * b: 32 * b + 32]) for b in range(N)]))

        # ---- X: RAM outputs registered; crossbar to the accesses; the results --------------------
        # Result rows (a window's lanes in one response group): the results are RL memories
        # ("columns"), result dword (lane n, slot k) in column n ^ SKEW[k] at row (k, group),
        # so that a beat's register (one slot, RL lanes) is one row of every column and a
        # window's accesses fall in distinct columns: the crossbar writes the columns directly,
        # its outputs the columns rather than the accesses (a window's N accesses, whole lanes
        # of 1, 2 or 4 dwords, hit distinct columns as the slots' skews differ in a bit at or
        # above log2 of the window's lanes). Otherwise its outputs are the accesses, placed
        # among the result registers.
        rows = NG > 1 and N <= RL                     # a window's lanes are in one row
        SPAN = RL if rows else LANES
        NO = RL if rows else N                        # crossbar outputs
        skew = [(N // 4) * k for k in (0, 2, 3, 1)]   # column skew of each slot
        x_valid, x_first, x_last = Signal(name=f"x_valid{h}"), Signal(name=f"x_first{h}"), Signal(name=f"x_last{h}")
        x_ctl, x_meta = Signal(_Ctl, name=f"x_ctl{h}"), Signal(Meta, name=f"x_meta{h}")
        x_xsel, x_rd = Signal(xw * NO, name=f"x_xsel{h}"), Signal(32 * N, name=f"x_rd{h}")
        x_y, x_lane0 = Signal(2 * NO, name=f"x_y{h}"), Signal(5, name=f"x_lane0{h}")
        x_served = Signal(NO, name=f"x_served{h}")
        x_slot = Signal(2 * NO, name=f"x_slot{h}")    # rows: the slot each column writes
        if rows:
            # each column's access, from the window's shape and place in the row (stage R)
            r_shape = [r_ctl.wshape == c for c in range(len(_SHAPES))]
            to_col = [[] for _ in range(RL)]
            for c, (lpl, sl2) in enumerate(_SHAPES):
                subs = RL // wl[c]
                for sub in range(subs):
                    at = r_shape[c] & (r_lane0[:exact_log2(RL)] == sub * wl[c]) if subs > 1 else r_shape[c]
                    cols = set()
                    for j in range(N):
                        k = j & ((1 << lpl) - 1)
                        k = 2 * k if sl2 else k
                        col = (sub * wl[c] + (j >> lpl)) ^ skew[k]
                        assert col not in cols
                        cols.add(col)
                        to_col[col].append((at, j, k))
            c_xsel, c_y = Signal(xw * NO, name=f"c_xsel{h}"), Signal(2 * NO, name=f"c_y{h}")
            c_served, c_slot = Signal(NO, name=f"c_served{h}"), Signal(2 * NO, name=f"c_slot{h}")
            route = _sub(m, "route")
            with route.If(r_valid):
                for col, t in enumerate(to_col):
                    route.d.comb += [
                        c_xsel[xw * col: xw * (col + 1)].eq(
                            _and_or([(at, r_xsel[xw * j: xw * (j + 1)]) for at, j, _ in t], xw)),
                        c_y[2 * col: 2 * col + 2].eq(_and_or([(at, r_y[2 * j: 2 * j + 2]) for at, j, _ in t], 2)),
                        c_served[col].eq(_and_or([(at, r_served[j]) for at, j, _ in t], 1)),
                        c_slot[2 * col: 2 * col + 2].eq(_and_or([(at, Const(k, 2)) for at, _, k in t], 2))]
        else:
            c_xsel, c_y, c_served, c_slot = r_xsel, r_y, r_served, Const(0, 2 * NO)
        wmask = Cat(Const(0xFFFF_FFFF, 32), Const(0, 32), *[Mux(x_meta.em[k], Const(0xFF, 8), 0) for k in range(4)],
                    Const(0, 32))      # by window code: all bytes, none, the window's last bytes, none
        xn = Signal(32 * NO, name=f"xn{h}")

        xbar = _sub(m, "crossbar")
        with xbar.If(x_valid):
            for j in range(NO):
                sel = x_xsel[xw * j: xw * (j + 1)]
                xb, v = Signal(32, name=f"xb{h}_{j}"), Signal(16, name=f"xv{h}_{j}")
                # a narrow load's byte or half, zero- or sign-extended
                xbar.d.comb += [xb.eq(x_rd.word_select(sel[:bb], 32) & wmask.word_select(sel[bb:], 32)),
                                v.eq((xb >> Cat(Const(0, 3), x_y[2 * j: 2 * j + 2]))[:16])]
                xbar.d.comb += xn[32 * j: 32 * j + 32].eq(
                    Mux(x_ctl.narrow == 0, xb,
                        Mux(x_ctl.narrow == 1, Cat(v[:8], Mux(x_ctl.sgn & v[7], 0xFF_FFFF, 0)),
                            Cat(v[:16], Mux(x_ctl.sgn & v[15], 0xFFFF, 0)))))
        col_en = Signal(SLOTS * SPAN, name=f"col_en{h}")   # the result dwords (lane, slot) the pass writes
        place = _sub(m, "place")
        if rows:
            with place.If(x_valid):
                place.d.comb += col_en.eq(Cat(*[x_served[n ^ skew[k]] & (x_slot[2 * (n ^ skew[k]):][:2] == k)
                                                for n in range(RL) for k in range(SLOTS)]))
        else:
            # an access's place among the result's dwords (4 per lane): one candidate per
            # window shape and position of the window
            x_shape = [x_ctl.wshape == c for c in range(len(_SHAPES))]
            col_d = [[] for _ in range(SLOTS * SPAN)]
            col_e = [[] for _ in range(SLOTS * SPAN)]
            for c, (lpl, sl2) in enumerate(_SHAPES):
                subs = SPAN // wl[c]
                for sub in range(subs):
                    at = x_shape[c] & (x_lane0[:exact_log2(SPAN)] == sub * wl[c]) if subs > 1 else x_shape[c]
                    for j in range(N):
                        k = j & ((1 << lpl) - 1)
                        col = SLOTS * (sub * wl[c] + (j >> lpl)) + (2 * k if sl2 else k)
                        col_d[col].append((at, xn[32 * j: 32 * j + 32]))
                        col_e[col].append(at & x_served[j])
            col_data = Signal(32 * SLOTS * SPAN, name=f"col_data{h}")
            with place.If(x_valid):
                place.d.comb += [col_data.eq(Cat(*[_and_or(t, 32) for t in col_d])),
                                 col_en.eq(Cat(*[tree_or(t) if t else Const(0) for t in col_e]))]

        # ---- A: the result and its response beats -----------------------------------------------
        a_valid, a_done = Signal(name=f"a_valid{h}"), Signal(name=f"a_done{h}")
        a_ctl, a_meta = Signal(_Ctl, name=f"a_ctl{h}"), Signal(Meta, name=f"a_meta{h}")
        # each pass writes the dwords of the accesses it served, and ``got`` marks them; the
        # others read as 0 (unserved lanes, in a pair the other half's accesses, and what an
        # earlier instruction left in the rows)
        got = Signal(SLOTS * LANES, name=f"got{h}")
        a_reg = Signal(2, name=f"a_reg{h}")
        a_grp = Signal(range(NG), name=f"a_grp{h}") if NG > 1 else Const(0)
        a_src = Signal(8, name=f"a_src{h}")            # the slot of register a_reg, then of the next ones
        bt = _sub(m, "beat")
        slot = a_src[:2]
        results = _sub(m, "results")
        write = advance & x_valid
        x_grp = x_lane0[exact_log2(RL):] if rows else Const(0)
        if rows:
            # each column two LUT RAMs (slots 0, 1 and slots 2, 3) of 2 * NG rows: a beat reads
            # its lane's word from one of four of them; only the instruction in A writes (X
            # holds the next one's first pass until A's last beat goes), and the beat reads
            # combinationally, so a beat not taken stays unchanged
            rdat = {}
            for col in range(RL):
                for hi in range(2):
                    res = memory.Memory(shape=32, depth=2 * NG, init=[], attrs={"ram_style": "distributed"})
                    m.submodules[f"res{col}_{hi}"] = res
                    rw, rr = res.write_port(), res.read_port(domain="comb")
                    k = x_slot[2 * col: 2 * col + 2]
                    results.d.comb += [rw.addr.eq(Cat(x_grp, k[0])), rw.data.eq(xn[32 * col: 32 * col + 32]),
                                       rw.en.eq(write & x_served[col] & (k[1] == hi))]
                    bt.d.comb += rr.addr.eq(Cat(a_grp, slot[0]))
                    rdat[col, hi] = rr.data
            g_got = got.word_select(a_grp, SLOTS * RL)
            words = [Mux(g_got[SLOTS * n: SLOTS * (n + 1)].bit_select(slot, 1),
                         mux_tree(slot, [rdat[n ^ skew[k], k >> 1] for k in range(SLOTS)]), 0) for n in range(RL)]
        else:
            acc = Signal(32 * SLOTS * LANES, name=f"acc{h}")   # a clock enable per dword
            with results.If(write):
                for i in range(SLOTS * LANES):
                    with results.If(col_en[i]):
                        results.d.sync += acc[32 * i: 32 * i + 32].eq(col_data[32 * i: 32 * i + 32])
            g_acc = acc.word_select(a_grp, 32 * SLOTS * RL)
            g_got = got.word_select(a_grp, SLOTS * RL)
            words = [Mux(g_got[SLOTS * n: SLOTS * (n + 1)].bit_select(slot, 1),
                         g_acc[32 * SLOTS * n: 32 * SLOTS * (n + 1)].word_select(slot, 32), 0) for n in range(RL)]
        nregs = a_ctl.nregs
        bp = self.beat
        bt.d.comb += [bp.wave.eq(a_meta.wave), bp.seq.eq(a_meta.seq), bp.vdst.eq(a_meta.vdst + a_reg),
                      bp.grp.eq(a_grp), bp.mask.eq(a_meta.exec.word_select(a_grp, RL)),
                      bp.write.eq(nregs != 0), bp.store.eq(0),
                      bp.last.eq((nregs == 0) | ((a_reg == nregs - 1) & (a_grp == NG - 1))),
                      self.beat_valid.eq(a_valid & a_done), self.beat_simd.eq(a_meta.simd),
                      self.beat_pair.eq(a_meta.pair)]
        b_data = Signal(len(bp.data), name=f"beat_data{h}")   # a signal of its own: bp stays one process
        with bt.If(a_valid):
            bt.d.comb += b_data.eq(Cat(*words))
        # assigned whole, outside the If: a record assigned under a condition becomes one
        # process per slice in the Verilog, and its constant fields processes that never run
        bt.d.comb += bp.data.eq(b_data)

        # ---- control --------------------------------------------------------------------------
        a_free = self.ack & bp.last
        clear = Signal(name=f"clear{h}")            # the pass leaves nothing of its window pending
        move = Signal(name=f"move{h}")              # ... in either half of a pair: the next window
        last = Signal(name=f"last{h}")              # ... and there is none: the instruction's last pass
        rest = wtodo & ~win_oh
        m.d.comb += [advance.eq(~(x_valid & x_first & a_valid & ~a_free)),
                     clear.eq(p_valid & advance & ((pend & ~served) == 0)),
                     self.pair_clear.eq(clear & w_meta.pair),
                     move.eq(clear & (~w_meta.pair | self.other_clear)),
                     last.eq(move & (rest == 0)),
                     self.passed.eq(advance & p_valid & served.any()), self.serving.eq(w_meta.simd),
                     self.conflict.eq(advance & p_valid & served.any() & p_passed),
                     self.can_take.eq(~p_valid | last), self.finish.eq(last)]
        with m.If(self.ack):
            if NG > 1:
                m.d.sync += a_grp.eq(a_grp + 1)       # 0 again after the register's last (NG divides 32)
            with m.If(a_grp == NG - 1):
                m.d.sync += [a_reg.eq(a_reg + 1), a_src.eq(a_src >> 2)]
            with m.If(bp.last):
                m.d.sync += a_valid.eq(0)
        with m.If(advance):
            m.d.sync += [x_valid.eq(r_valid), r_valid.eq(p_valid)]
            with m.If(r_valid):
                m.d.sync += [x_first.eq(r_first), x_last.eq(r_last), x_ctl.eq(r_ctl), x_meta.eq(r_meta), x_y.eq(c_y),
                             x_xsel.eq(c_xsel), x_rd.eq(rd), x_served.eq(c_served), x_lane0.eq(r_lane0),
                             x_slot.eq(c_slot)]
            with m.If(p_valid):
                m.d.sync += [r_first.eq(p_first), r_last.eq(last), r_ctl.eq(w_ctl), r_meta.eq(w_meta),
                             r_y.eq(Cat(*y_j)), r_lane0.eq(lane0), r_served.eq(served),
                             r_xsel.eq(Cat(*[Cat(bank_j[j], inr_j[j][0] | ~served[j], inr_j[j][1]) for j in range(N)])),
                             r_wd.eq(b_wd), r_be.eq(b_be), r_cmp.eq(b_cmp), r_aval.eq(b_aval),
                             pend_r.eq(pend & ~served), fresh.eq(0), p_first.eq(0)]
                with m.If((w_ctl.cls == _Cls.STORE) | atomic):   # write addresses
                    m.d.sync += r_row.eq(Cat(*[ldw[DW * b + bb: DW * b + bb + rb] for b in range(N)]))
                with m.If(served.any()):
                    m.d.sync += p_passed.eq(1)
            with m.If(x_valid):
                with m.If(x_first):
                    m.d.sync += [a_valid.eq(1), a_ctl.eq(x_ctl), a_meta.eq(x_meta),
                                 a_reg.eq(0), a_src.eq(x_meta.src)]
                    if NG > 1:
                        m.d.sync += a_grp.eq(0)
                placed = (col_en << (x_grp * SLOTS * RL))[:SLOTS * LANES] if rows else col_en
                m.d.sync += [a_done.eq(x_last), got.eq(Mux(x_first, 0, got) | placed)]
        with m.If(move):
            nxt = lowest_bit(rest)
            m.d.sync += [fresh.eq(1), wtodo.eq(rest), win_oh.eq(nxt), win.eq(encode_onehot(nxt))]
            with m.If(last):
                m.d.sync += p_valid.eq(0)

        with m.If(self.take):
            srcmap = Mux(ctl.xchg2, Mux(req.offset0 == req.offset1, 0b0000, 0b1000), 0b11100100)
            writes = (ctl.cls == _Cls.STORE) | (ctl.cls == _Cls.ATOMIC)
            edge_mask = ((Const(1, 5) << self.size[:2]) - 1)[:4]    # the window's last dword, if partial
            # the windows with EXEC lanes (window 0 if none: the instruction still answers)
            wins = Signal(NWIN, name=f"wins{h}")
            m.d.comb += wins.eq(_and_or([(ctl.wshape == c, Cat(*[req.exec[wl[c] * k: wl[c] * (k + 1)].any()
                                                                 for k in range(LANES // wl[c])]))
                                         for c in range(len(_SHAPES))], NWIN))
            todo = Mux(wins.any(), wins, 1)
            first = lowest_bit(todo)
            m.d.sync += [p_valid.eq(1), w_ctl.eq(ctl),
                         w_meta.simd.eq(self.simd), w_meta.wave.eq(req.wave), w_meta.seq.eq(req.seq),
                         w_meta.vdst.eq(req.vdst), w_meta.exec.eq(req.exec), w_meta.em.eq(edge_mask),
                         w_meta.src.eq(srcmap), w_meta.pair.eq(self.pair),
                         w_offs.eq(offs), w_off1.eq(off1), w_base.eq(self.base), w_size.eq(self.size),
                         wtodo.eq(todo), win_oh.eq(first), win.eq(encode_onehot(first)),
                         fresh.eq(1), p_first.eq(1), p_passed.eq(0)]
            if not in_place:
                m.d.sync += w_addr.eq(Cat(*[lane(req.addr, 64, n)[:32] for n in range(LANES)]))
                with m.If(writes):      # straight from the SIMD's request: a multiplexer, not also a gate
                    with m.Switch(self.simd):
                        for s, src in enumerate(self.data_srcs):
                            with m.Case(s):
                                m.d.sync += w_data.eq(src)
        return m


# -- the LDS -------------------------------------------------------------------------------------
class LDS(wiring.Component):
    """The DCU's local data share: two halves of ``lds_banks`` banks of 32-bit words.

    Parameters
    ----------
    config : DCUConfig
        ``lds_bytes_per_half`` bytes in ``lds_banks`` banks (1 to 32) per half.

    Members
    -------
    req : In(stream of VecMemReq), array of 4
        One per SIMD (SIMD ``s`` is on CU ``s // 2``), as ``hdl.simd.SIMD.lds_req`` sends them.
        With ``config.lds_in_place`` a request is taken (``ready``) in the cycle of its last
        bank pass: the halves read it from the SIMD's port until then.
    req_row : Out(ReqRow), array of 4
        The row of each SIMD's request whose lanes ``req`` is to carry
        (``config.request_in_rows``): the row of the window being served.
    resp : Out(stream of VecMemResp), array of 4
        One beat per lane group (``grp``, ``config.resp_lanes`` lanes) of each destination
        register (``write``, ``vdst``; ``data`` and ``mask``, the group's exec bits, the
        group's lanes), registers in order, each one's groups in order, every group even with
        no lane enabled; ``last`` on the final beat. An instruction without destination
        answers one beat with ``write`` = 0 (``grp`` 0). ``store`` is 0. In order per SIMD port.
    alloc : In(stream of LdsAlloc)
        A wave's window, written when the dispatcher launches it: lane address ``a`` maps to
        physical byte ``base + a``; accesses at or beyond ``size`` read 0 and do not write.
    wgp : In(1)
        WGP mode: a window may lie anywhere in the LDS, across both halves.
    accesses, bank_cycles, conflict_cycles : Out(ArrayLayout(32, 2))
        Per half: instructions served, bank passes, passes beyond an instruction's first.
    error : Out(LdsError)
        The first bad request (misaligned lane, bad window, unknown op); sticky.
    """

    def __init__(self, config: DCUConfig):
        if config.simds != SIMDS or config.cus != 2:
            raise ValueError("the LDS serves two CUs of two SIMDs")
        if config.lds_bytes_per_half < 4 * config.lds_banks:
            raise ValueError(f"lds_bytes_per_half must be at least 4 * lds_banks = {4 * config.lds_banks}")
        self.config = config
        counters = data.ArrayLayout(32, 2)
        super().__init__({
            "req": In(stream.Signature(VecMemReq(config))).array(SIMDS),
            "req_row": Out(ReqRow(config)).array(SIMDS),
            "resp": Out(stream.Signature(VecMemResp(config))).array(SIMDS),
            "alloc": In(stream.Signature(LdsAlloc(config))),
            "wgp": In(1),
            "accesses": Out(counters), "bank_cycles": Out(counters), "conflict_cycles": Out(counters),
            "error": Out(LdsError(config)),
        })
        self.pipes = [_Pipe(config, h, [r.payload.data for r in self.req], [r.payload.addr for r in self.req])
                      for h in range(2)]

    def elaborate(self, platform):
        cfg = self.config
        W, H = cfg.wave_slots, cfg.lds_bytes_per_half
        hb = (H - 1).bit_length()              # address bit that selects the half
        m = Module()
        pipes = self.pipes
        m.submodules.half0, m.submodules.half1 = pipes
        p0, p1 = pipes
        m.d.comb += [p0.other_clear.eq(p1.pair_clear), p1.other_clear.eq(p0.pair_clear)]
        if cfg.request_rows > 1:   # the row of each SIMD's request that the half serving it reads
            m.d.comb += [self.req_row[s].eq(Mux(p0.serving == s, p0.row, 0) | Mux(p1.serving == s, p1.row, 0))
                         for s in range(SIMDS)]

        # ---- windows -----------------------------------------------------------------------
        win_base = Array(Signal(range(cfg.lds_bytes_total), name=f"win_base{k}") for k in range(SIMDS * W))
        win_size = Array(Signal(range(cfg.lds_bytes_total + 1), name=f"win_size{k}") for k in range(SIMDS * W))
        # which halves each window spans and whether its base is misaligned, found as it is
        # allocated rather than from the base and size on every request (an adder on the path
        # from a request through the arbiter to the take); a window of no bytes spans half 0.
        # (``win_mis`` is ``win_base[k][:2] != 0``; derived so, the LDS placed at 30.7 and 25.3
        # MHz on seeds 1 and 2, against 37.1 and 32.9 with the register: docs/fpga.md)
        win_spans = Array(Signal(2, name=f"win_spans{k}", init=0b01) for k in range(SIMDS * W))
        win_mis = Array(Signal(name=f"win_mis{k}") for k in range(SIMDS * W))
        al = self.alloc
        m.d.comb += al.ready.eq(1)
        with m.If(al.valid):
            k, a_base, a_size = al.payload.simd * W + al.payload.wave, al.payload.base, al.payload.size
            m.d.sync += [win_base[k].eq(a_base), win_size[k].eq(a_size),
                         win_spans[k].eq(Cat(a_base[hb] == 0, ((a_base + a_size - (a_size != 0)) >> hb) != 0)),
                         win_mis[k].eq(a_base[:2] != 0)]

        # ---- which halves each request needs; arbitration --------------------------------------
        base = [Signal(range(cfg.lds_bytes_total), name=f"base_s{s}") for s in range(SIMDS)]
        size = [Signal(range(cfg.lds_bytes_total + 1), name=f"size_s{s}") for s in range(SIMDS)]
        need = [Signal(2, name=f"need{s}") for s in range(SIMDS)]
        bad_win = Signal(SIMDS)
        for s in range(SIMDS):
            # SIMD s's windows by its request's wave: a tree of 2:1 multiplexers (mux_tree)
            of_wave = lambda arr, s=s: mux_tree(self.req[s].payload.wave, [arr[s * W + w] for w in range(W)])  # noqa: E731
            m.d.comb += [base[s].eq(of_wave(win_base)), size[s].eq(of_wave(win_size))]
            spans = of_wave(win_spans)
            home = Const(1 << (s // 2), 2)
            m.d.comb += [need[s].eq(Mux(self.wgp, spans, home)),
                         bad_win[s].eq(of_wave(win_mis) | (~self.wgp & (spans != home)))]

        # Round robin from ``ptr``; a request that cannot have all the halves it needs reserves
        # them, so requests for both halves are not starved and both pipes take them together.
        # In place, a request taken is handed back (``ready``) when the last half serving it
        # makes its last pass; until then it is not offered again.
        ptr = Signal(range(SIMDS))
        grant = Signal(SIMDS)
        can = Cat(pipes[0].can_take, pipes[1].can_take)
        arb = _sub(m, "arbiter")
        if cfg.lds_in_place:
            # the halves yet to make their last pass of SIMD s's request (a pipe's ``serving``
            # is the SIMD it serves)
            halves_left = [Signal(2, name=f"halves_left{s}") for s in range(SIMDS)]
            offered = [self.req[s].valid & ~halves_left[s].any() for s in range(SIMDS)]
            for s in range(SIMDS):
                remaining = halves_left[s] & ~Cat(*[p.finish & (p.serving == s) for p in pipes])
                arb.d.comb += self.req[s].ready.eq(halves_left[s].any() & ~remaining.any())
                arb.d.sync += halves_left[s].eq(Mux(grant[s], need[s], remaining))
        else:
            offered = [self.req[s].valid for s in range(SIMDS)]
            for s in range(SIMDS):
                arb.d.comb += self.req[s].ready.eq(grant[s])
        with arb.Switch(ptr):
            for p in range(SIMDS):
                with arb.Case(p):
                    free, earlier = can, Const(0, 1)
                    for k in range(SIMDS):
                        s = (p + k) % SIMDS
                        v = offered[s]
                        arb.d.comb += grant[s].eq(v & ((need[s] & ~free) == 0))
                        free = free & ~Mux(v, need[s], 0)
                        with arb.If(v & ~earlier & grant[s]):     # the first requester moves the pointer on
                            arb.d.sync += ptr.eq((s + 1) % SIMDS)
                        earlier = earlier | v
        for hh, pipe in enumerate(pipes):
            mine = Cat(*[grant[s] & need[s][hh] for s in range(SIMDS)])
            # with no grant the half keeps the last SIMD it served selected: its setup logic is
            # evaluated again only when that SIMD's request changes
            sel = Signal(range(SIMDS), name=f"sel{hh}")
            last_sel = Signal(range(SIMDS), name=f"last_sel{hh}", init=2 * hh)
            arb.d.comb += sel.eq(last_sel)
            for s in range(SIMDS):
                with arb.If(mine[s]):
                    arb.d.comb += sel.eq(s)
            arb.d.sync += last_sel.eq(sel)
            arb.d.comb += [pipe.take.eq(mine.any()), pipe.simd.eq(sel)]
            rq = _sub(m, f"request{hh}")
            rq.d.comb += [pipe.base.eq(mux_tree(sel, base)), pipe.size.eq(mux_tree(sel, size)),
                          pipe.pair.eq(mux_tree(sel, need) == 0b11)]
            with rq.If(pipe.take):   # read only at take: a compiled simulation copies it only then
                rq.d.comb += pipe.req.eq(mux_tree(sel, [self.req[s].payload.as_value() for s in range(SIMDS)]))
                rq.d.comb += pipe.req.data.eq(0)    # the half registers the data from its source

        # ---- responses -----------------------------------------------------------------------
        # a pair (a request both halves serve) goes out as one stream, each beat the two halves'
        # ORed: both step through the same (register, group) beats, acknowledged together
        show0 = p0.beat_valid & (~p0.beat_pair | (p1.beat_valid & p1.beat_pair))
        show1 = p1.beat_valid & ~p1.beat_pair
        prefer1 = Signal(SIMDS)     # port s: pipe 1 goes first when both have a beat for it
        ack0, ack1 = Signal(SIMDS), Signal(SIMDS)
        rs = _sub(m, "responses")
        for s in range(SIMDS):
            rsp = self.resp[s]
            c0 = show0 & (p0.beat_simd == s)
            c1 = show1 & (p1.beat_simd == s)
            use1 = c1 & (~c0 | prefer1[s])
            pair = c0 & p0.beat_pair & ~use1
            # the payload only with a beat: a compiled simulation copies it only then; the data
            # an AND-OR of the halves' (each bit a LUT4 of two data bits and two enables)
            rs.d.comb += rsp.valid.eq(c0 | c1)
            with rs.If(c0 | c1):
                rs.d.comb += rsp.payload.eq(Mux(use1, p1.beat, p0.beat))
            rs.d.comb += rsp.payload.data.eq(Mux(c0 & ~use1, p0.beat.data, 0) | Mux(use1 | pair, p1.beat.data, 0))
            fire = rsp.valid & rsp.ready
            rs.d.comb += [ack0[s].eq(fire & ~use1), ack1[s].eq(fire & (use1 | pair))]
            with rs.If(fire & c0 & c1):
                rs.d.sync += prefer1[s].eq(~use1)
        rs.d.comb += [p0.ack.eq(ack0.any()), p1.ack.eq(ack1.any())]

        # ---- counters and errors --------------------------------------------------------------
        for hh, pipe in enumerate(pipes):
            m.d.sync += [self.accesses[hh].eq(self.accesses[hh] + pipe.take),
                         self.bank_cycles[hh].eq(self.bank_cycles[hh] + pipe.passed),
                         self.conflict_cycles[hh].eq(self.conflict_cycles[hh] + pipe.conflict)]
        err = self.error
        # a bad window or opcode is found at take, a misaligned lane when its window is served
        # (the instruction then in P is older than one taken in the same cycle)
        for hh, pipe in reversed(list(enumerate(pipes))):
            with m.If(~err.valid):
                found = [err.valid.eq(1), err.simd.eq(pipe.simd), err.wave.eq(pipe.req.wave)]
                with m.If(pipe.misaligned):
                    m.d.sync += [err.valid.eq(1), err.simd.eq(pipe.serving), err.wave.eq(pipe.mis_wave),
                                 err.cause.eq(LdsErrorCause.MISALIGNED), err.lane.eq(pipe.mis_lane),
                                 err.addr.eq(pipe.mis_addr)]
                with m.Elif(pipe.take & bad_win.bit_select(pipe.simd, 1)):  # (req: read only at take, docs/toolflow.md)
                    m.d.sync += found + [err.cause.eq(LdsErrorCause.BAD_ALLOC), err.lane.eq(0), err.addr.eq(pipe.base)]
                with m.Elif(pipe.take & pipe.bad_op):
                    m.d.sync += found + [err.cause.eq(LdsErrorCause.BAD_OP), err.lane.eq(0), err.addr.eq(0)]
        return m
