"""The local data share (LDS) of the DCU: two halves of ``lds_banks`` banks, 32 in RDNA and in
every preset but ``fpga``, which has 4 (docs/memory.md, "LDS").

Each half is a pipe that serves one instruction at a time from the SIMDs' ``lds_req`` ports.
An instruction is a set of up to 128 lane-dword accesses (access ``4 * lane + slot``: a
b128 load touches four dwords per lane, a 2addr b64 form two dwords at each of two
addresses); only the accesses with a byte inside the wave's window occupy a bank. The
passes serve the accesses of ``config.lds_window_lanes`` lanes at a time (the whole wave but
on ``fpga``), windows in lane order. A bank pass serves, in every bank, one dword address:
the one of the window's first pending access in that bank, together with every other
pending access of the window to the same dword (broadcast). So each window takes as many
passes as the largest number of its distinct dwords that fall in one bank, the cost
``sim.memory_ops.lds_conflict_cycles`` gives.
Atomics serve one lane per bank and pass, in lane order, so lanes that hit the same dword
see each other's results as the ISA's lane-serial semantics say.

Pipe stages (one cycle each, stalled together when the result register is still busy):
P, the bank pass (the window's accesses built from the registered lanes, or in place from
the SIMD's request; leader selection, RAM read addresses); R, the RAM outputs (stores and
atomics write here, atomics through the ALU beside each bank); X, the RAM outputs registered
ahead of the bank to 128-access crossbar; A, the instruction's results, which send a response
beat per lane group (``config.resp_lanes`` lanes: 4 on ``fpga``, else the whole wave) of each
destination register. The results are registers, or, when a window is a response group (on
``fpga``), a memory of a row per group (LUT RAM), which each pass writes at its window's row.
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


class _Order(enum.Enum, shape=1):
    """The order of a window's accesses the leader selection sees (the first pending one leads)."""
    LANE = 0   # loads (any order serves) and atomics (lane order is the ISA's)
    REV = 1    # stores: last (lane, slot) first, so a dword's leader is its last writer (the
               # model writes lane by lane, a 2addr store's first address before its second)


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
    "order": _Order,
    "xchg2": 1,    # ds_storexchg_2addr: the second old value comes from slot 2
})


def _ctl_of(op) -> dict:
    """Control word of one DS opcode (see ``_Ctl``)."""
    name, kind = op.name.lower(), info_of(op).kind
    c = dict(cls={"ds_load": _Cls.LOAD, "ds_store": _Cls.STORE, "ds_atomic": _Cls.ATOMIC}[kind],
             narrow=0, sgn=0, two=0, b64=0, st64=0, smask=1, sg=0, sk=0, aop=AtomicOp.ADD, nregs=0,
             order=_Order.LANE, xchg2=0)
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
        elif kind == "ds_store":
            c["order"] = _Order.REV
    else:
        suffix = name.rsplit("_", 1)[1]
        narrow = {"u8": 1, "i8": 1, "b8": 1, "u16": 2, "i16": 2, "b16": 2}.get(suffix, 0)
        ndw = int(suffix[1:]) // 32 if (not narrow and kind != "ds_atomic") else 1
        c.update(narrow=narrow, sgn=int(suffix in ("i8", "i16")), smask=(1 << ndw) - 1,
                 sk=sum(s << (2 * s) for s in range(ndw)))
        if kind == "ds_load":
            c["nregs"] = ndw
        elif kind == "ds_store":
            c["order"] = _Order.REV
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


# -- small wide-signal helpers ------------------------------------------------------------------
def _mask(n: int, pred) -> int:
    return sum(1 << i for i in range(n) if pred(i))


def _words(value, width: int, order: list):
    """``value``'s ``width``-bit words in the order ``order`` (wiring)."""
    return Cat(*[value[width * i: width * (i + 1)] for i in order])


def _transpose32(m: Module, x, blocks: int, name: str, gate) -> Signal:
    """Transpose each of ``blocks`` 32 x 32 bit matrices packed in ``x`` (block ``q``, row ``r``,
    column ``c`` at bit ``1024 q + 32 r + c``) by five rounds of quadrant swaps (Hacker's
    Delight 7-3): wiring in hardware, a few wide operations per round in the simulator. Each
    round is a signal of its own submodule (a round reads its input three times); the rounds
    are 0 unless ``gate``, so that a compiled simulation skips them while the LDS is idle."""
    n = 1024 * blocks
    for j in (16, 8, 4, 2, 1):
        d = 31 * j                    # (r, c) <-> (r + j, c - j) for r & j == 0, c & j != 0
        sel = _mask(n, lambda p: not (p >> 5) & j and p & j)
        keep = ((1 << n) - 1) & ~(sel | (sel << d))
        y = Signal(n, name=f"{name}_{j}")
        sub = _sub(m, f"{name}_{j}")
        with sub.If(gate):
            sub.d.comb += y.eq((x & keep) | (x.shift_right(d) & sel) | (x & sel).shift_left(d)[:n])
        x = y
    return x


def _sub(m: Module, name: str) -> Module:
    """A submodule of its own: Amaranth's simulator re-evaluates a module's combinational
    logic whenever one of its inputs changes, so the stages below live in separate ones."""
    sub = Module()
    m.submodules[name] = sub
    return sub


def _pass(sub: Module, *signals) -> list:
    """Copies of ``signals``, driven by ``sub``. A later stage that reads the copies instead of
    the originals sees all its inputs change in the same simulator delta cycle, so Amaranth's
    simulator evaluates it once rather than once per input that changes later."""
    copies = [Signal.like(x, name=f"{Value.cast(x).name}_") for x in signals]
    sub.d.comb += [c.eq(x) for c, x in zip(copies, signals)]
    return copies


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
    """One half of the LDS: ``lds_banks`` banks and the pipe that serves one instruction at a time.

    Parameters
    ----------
    config : DCUConfig
    half : int
        0 or 1: the half's banks hold physical dwords ``[half * H / 4, (half + 1) * H / 4)``.
    data_srcs, addr_srcs : list of Value
        Each SIMD's request data and addresses. The half registers them at take (``req.data``
        is not read), or with ``config.lds_in_place`` reads each window from them in its
        pass: the SIMD holds its request until ``finish``.

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
    pair_wpend : out; other_wpend : in
        The windows with pending accesses of a pair instruction (one both halves serve), and
        the other half's: the two serve the lowest window pending in either, together.
    pair_next : out; other_next : in
        With ``config.lds_pass_stage``: the next window (one-hot) of a pair instruction that
        this half is to load, and the other half's; a half ahead of the other waits for it.
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
        nwin = LANES // config.lds_window_lanes
        self.row = Signal(ReqRow(config), name=f"row{half}")
        self.pair_wpend = Signal(nwin, name=f"pair_wpend{half}")
        self.other_wpend = Signal(nwin, name=f"other_wpend{half}")
        self.pair_next = Signal(nwin, name=f"pair_next{half}")
        self.other_next = Signal(nwin, name=f"other_next{half}")
        self.banks: list = []

    def elaborate(self, platform):
        cfg, h, rb = self.config, self.half, self.rb
        BANKS, bb = self.nbanks, self.bb
        xw = bb + 2                                   # crossbar select: bank, window code
        # a pending access's physical dword (logical dword + allocation base): only accesses
        # with a byte inside the wave's window occupy a bank, and the window is inside the LDS
        DW = bb + rb + 1
        WL = cfg.lds_window_lanes                     # lanes scheduled together
        NW = SLOTS * WL                               # ... their accesses (positions of the ordered array)
        NWIN = NACC // NW
        IB = exact_log2(NW)                           # an access's index in its window
        LB = exact_log2(WL)
        Meta = _meta_layout(cfg)
        m = Module()
        req = self.req
        lane = lambda v, w, n: v[w * n: w * n + w]   # noqa: E731

        # ---- setup, at take: the control word and offsets; the lanes' addresses and data are
        # registered as they come (or read in place), and the passes build each window's
        # accesses, byte offsets and misaligned lanes from them. Each stage reads
        # only signals the previous stage drives (``_pass`` copies the rest), so the simulator
        # evaluates it once.
        ctl = Signal(_Ctl, name=f"ctl{h}")
        offs = Signal(data.ArrayLayout(18, SLOTS), name=f"offs{h}")   # byte offset of each slot's dword
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
                        dec.d.comb += [offs[k].eq(group[c["sg"] >> k & 1] + 4 * (c["sk"] >> (2 * k) & 3))
                                       for k in range(SLOTS)]
                with dec.Default():
                    dec.d.comb += ctl.eq(_Ctl.const({"cls": _Cls.NONE, "smask": 0}))

        # the front and the P stage compute only while they hold an instruction (0 otherwise):
        # a compiled simulator then skips them when idle (docs/toolflow.md)
        with dec.If(self.take):
            dec.d.comb += self.bad_op.eq(ctl.cls == _Cls.NONE)

        # ---- P: the instruction's lanes and the bank passes --------------------------------------
        p_valid = Signal(name=f"p_valid{h}")            # the instruction's registers hold one
        w_ctl, w_meta = Signal(_Ctl, name=f"w_ctl{h}"), Signal(Meta, name=f"w_meta{h}")
        in_place = cfg.lds_in_place
        if not in_place:
            w_addr = Signal(32 * LANES, name=f"w_addr{h}")
            w_data = Signal(128 * LANES, name=f"w_data{h}")   # store data and atomic operands (stores, atomics)
        w_offs = Signal(data.ArrayLayout(18, SLOTS), name=f"w_offs{h}")
        w_off1 = Signal(18, name=f"w_off1_{h}")
        w_base = Signal(range(cfg.lds_bytes_total), name=f"w_base{h}")
        w_size = Signal(range(cfg.lds_bytes_total + 1), name=f"w_size{h}")
        # With ``lds_pass_stage`` a window's accesses are computed into registers (the pass
        # registers, ``q_*``) and the passes serve them from there: the row read, the address
        # adders and the bank decode are a stage before the leader loop, and the next window is
        # loaded while the passes serve the one before. The instruction's registers (``w_*``)
        # are free once its last window is loaded, so the next instruction is taken while the
        # passes finish it.
        staged = cfg.lds_pass_stage
        if staged:   # (the config keeps staged windows to at most 8 lanes: NWIN > 1)
            wtodo = Signal(NWIN, name=f"wtodo{h}")      # windows still to load
            w_fresh = Signal(name=f"w_fresh{h}")        # ... the instruction's first still to load
            load = Signal(name=f"load{h}")              # window ``win`` goes into the pass registers
        else:
            pend = Signal(NACC, name=f"pend{h}")        # access 4 * lane + slot not served yet

        # the window of lanes the passes serve: the first with pending accesses
        if NWIN > 1 or in_place:
            wsel = _sub(m, "window_select")
        if NWIN > 1:
            win = Signal(range(NWIN), name=f"win{h}")
            c_pend, c_exec = Signal(NW, name=f"c_pend{h}"), Signal(WL, name=f"c_exec{h}")
            if staged:
                # registers: the next window is chosen as one is loaded, off the load's path. The
                # halves of a pair load the same windows in the same order, each as its passes
                # free; they read one row, so a half that is ahead of the other waits for it
                win_oh, ahead = Signal(NWIN, name=f"win_oh{h}"), Signal(name=f"ahead{h}")
                wsel.d.comb += [self.pair_next.eq(Mux(p_valid & w_meta.pair, win_oh, 0)),
                                ahead.eq(w_meta.pair & (self.other_next & (win_oh - 1)[:NWIN]).any())]
            else:
                # the two halves of a pair serve a window together (the lowest pending in either):
                # they read the SIMD's request at one row (a half with nothing there passes empty)
                wpend, both = Signal(NWIN, name=f"wpend{h}"), Signal(NWIN, name=f"both{h}")
                wsel.d.comb += [wpend.eq(Cat(*[pend[NW * k: NW * (k + 1)].any() for k in range(NWIN)])),
                                self.pair_wpend.eq(Mux(p_valid & w_meta.pair, wpend, 0)),
                                both.eq(wpend | Mux(w_meta.pair, self.other_wpend, 0))]
                win_oh = lowest_bit(both)
                for k in reversed(range(NWIN)):     # the last assignment wins: the lowest
                    with wsel.If(both[k]):
                        wsel.d.comb += win.eq(k)
            with wsel.If(p_valid):
                wsel.d.comb += c_exec.eq(w_meta.exec.word_select(win, WL))
                if staged:   # the window's accesses: its lanes' EXEC bits and the op's slots
                    wsel.d.comb += c_pend.eq(Cat(*[c_exec[n] & w_ctl.smask[s_]
                                                   for n in range(WL) for s_ in range(SLOTS)]))
                else:
                    wsel.d.comb += c_pend.eq(pend.word_select(win, NW))
        else:
            c_pend, c_exec = pend, w_meta.exec
        # its lanes' addresses (the low 32 bits) and data: from the registers, or in place from
        # the request of the SIMD served, which it holds until the last pass
        if in_place:
            # Each SIMD's request carries one row of ``request_lanes`` lanes (the row this half
            # names, ``row``): the window is at position win % SUBS of it. The SIMD's row is a
            # 4:1 multiplexer by the binary SIMD number (two LUT4 and a PFUMX per bit on the
            # ECP5, against about three LUT4 for an AND-OR by a one-hot), the position in it an
            # AND-OR by a one-hot.
            c_addr, c_data = Signal(32 * WL, name=f"c_addr{h}"), Signal(128 * WL, name=f"c_data{h}")
            SUBS = cfg.request_lanes // WL
            if NWIN == 1:
                win_oh = Const(1, 1)
            sub_oh = [Cat(*[win_oh[k] for k in range(j, NWIN, SUBS)]).any() for j in range(SUBS)]
            with wsel.If(p_valid & ~ahead if staged else p_valid):
                if cfg.request_rows > 1:
                    wsel.d.comb += self.row.eq(win[exact_log2(SUBS):])
                a_row = mux_tree(w_meta.simd, [Cat(*[lane(a, 64, n)[:32] for n in range(cfg.request_lanes)])
                                               for a in self.addr_srcs])
                d_row = mux_tree(w_meta.simd, self.data_srcs)
                wsel.d.comb += [
                    c_addr.eq(tree_or([Mux(sub_oh[j], lane(a_row, 32 * WL, j), 0) for j in range(SUBS)])
                              if SUBS > 1 else a_row),
                    c_data.eq(tree_or([Mux(sub_oh[j], lane(d_row, 128 * WL, j), 0) for j in range(SUBS)])
                              if SUBS > 1 else d_row)]
        elif NWIN > 1:
            c_addr, c_data = Signal(32 * WL, name=f"c_addr{h}"), Signal(128 * WL, name=f"c_data{h}")
            with wsel.If(p_valid):
                wsel.d.comb += [c_addr.eq(w_addr.word_select(win, 32 * WL)),
                                c_data.eq(w_data.word_select(win, 128 * WL))]
        else:
            c_addr, c_data = w_addr, w_data

        # the window's byte offsets (of each lane's first address: narrow accesses) and its
        # misaligned lanes, found a window at a time as the passes read its addresses: the
        # lowest misaligned lane is in the first window that has one
        c_y, mis = Signal(2 * WL, name=f"c_y{h}"), Signal(WL, name=f"mis{h}")
        ln = _sub(m, "lanes")
        amask = Mux(w_ctl.narrow == 0, 3, Mux(w_ctl.narrow == 2, 1, 0))
        with ln.If(p_valid):
            ln.d.comb += c_y.eq(Cat(*[(lane(c_addr, 32, n)[:2] + w_offs[0][:2])[:2] for n in range(WL)]))
            ln.d.comb += mis.eq(Cat(*[
                c_exec[n] & (((lane(c_y, 2, n) | Mux(w_ctl.two, (lane(c_addr, 32, n)[:2] + w_off1[:2])[:2], 0))
                              & amask) != 0)
                for n in range(WL)]))
        mis_n = encode_onehot(lowest_bit(mis))
        ln.d.comb += [self.misaligned.eq(mis.any() & load if staged else mis.any()),     # staged: as it is loaded
                      self.mis_lane.eq(Cat(mis_n, win) if NWIN > 1 else mis_n),
                      self.mis_addr.eq(c_addr.word_select(mis_n, 32)), self.mis_wave.eq(w_meta.wave)]

        # the window's accesses, in canonical order (access 4 * lane + slot of the window)
        c_dp, c_inr = Signal(DW * NW, name=f"c_dp{h}"), Signal(2 * NW, name=f"c_inr{h}")
        c_be, c_wd, c_val = (Signal(4 * NW, name=f"c_be{h}"), Signal(32 * NW, name=f"c_wd{h}"),
                             Signal(NW, name=f"c_val{h}"))
        ac = _sub(m, "access")
        s4 = w_size[2:]
        rmtab = Cat(Const(0, 4), w_meta.em, Const(0xF, 4), Const(0xF, 4))   # by where: bytes inside the window
        inrtab = Cat(Const(1, 2), Mux(w_ctl.cls == _Cls.LOAD, 2, 1), Const(0, 4))   # ... crossbar window code
        dp, inr, be, wd, val = [], [], [], [], []
        for n in range(WL):
            a, yn, word = lane(c_addr, 32, n), lane(c_y, 2, n), lane(c_data, 32, SLOTS * n)
            bm = Mux(w_ctl.narrow == 0, 0xF, Mux(w_ctl.narrow == 1, Const(1, 4) << yn, Const(3, 4) << (yn & 2)))[:4]
            wd0 = Mux(w_ctl.narrow == 1, Cat(*[word[:8]] * 4), Mux(w_ctl.narrow == 2, Cat(word[:16], word[:16]), word))
            for s in range(SLOTS):
                dlog = (Cat(a, Const(0, 1)) + w_offs[s])[2:34]     # logical dword
                d = (dlog + w_base[2:])[:DW]
                where = Cat(dlog == s4, dlog < s4)          # 2: inside, 1: the last, partial dword, 0: past it
                rm = rmtab.word_select(where, 4)
                dp.append(d)
                inr.append(inrtab.word_select(where, 2))
                be.append(rm & bm if s == 0 else rm)
                wd.append(wd0 if s == 0 else lane(c_data, 32, SLOTS * n + s))
                in_half = ~w_meta.pair | (d[bb + rb] == h)        # a window across both halves: split by half
                inside = where[1] | (where[0] & (w_size[:2] != 0))   # a byte of the dword is in the window
                val.append(in_half & inside)
        with ac.If(p_valid):
            ac.d.comb += [c_dp.eq(Cat(*dp)), c_inr.eq(Cat(*inr)), c_be.eq(Cat(*be)), c_wd.eq(Cat(*wd)),
                          c_val.eq(Cat(*val))]

        # the order the leader selection sees them in: stores from the window's last access, so
        # that a dword's leader is its last writer (a later window writes later)
        v_dp, v_inr = Signal(DW * NW, name=f"v_dp{h}"), Signal(2 * NW, name=f"v_inr{h}")
        v_pend, v_wd, v_be = (Signal(NW, name=f"v_pend{h}"), Signal(32 * NW, name=f"v_wd{h}"),
                              Signal(4 * NW, name=f"v_be{h}"))
        rev = w_ctl.order == _Order.REV
        back = list(reversed(range(NW)))

        def ordered(value, width):
            return Mux(rev, _words(value, width, back), value)
        od = _sub(m, "order")
        with od.If(p_valid):
            od.d.comb += [v_dp.eq(ordered(c_dp, DW)), v_inr.eq(ordered(c_inr, 2)),
                          v_pend.eq(ordered(c_pend & c_val, 1)), v_wd.eq(ordered(c_wd, 32)), v_be.eq(ordered(c_be, 4))]

        # the banks of the window's accesses, decoded from their dwords rather than registered:
        # bank b holds bit j = access j falls in bank b (validity is ``pend``'s)
        rows = Signal(BANKS * NW, name=f"rows{h}")      # access j: one-hot of its bank
        bd = _sub(m, "bank_decode")
        with bd.If(p_valid):
            bd.d.comb += rows.eq(Cat(*[Const(1, 1) << v_dp[DW * j: DW * j + bb] for j in range(NW)]))

        # what the passes read: the pass registers (staged), or the window as computed above
        if staged:
            q_valid, q_first = Signal(name=f"q_valid{h}"), Signal(name=f"q_first{h}")
            # q_passed: a pass has run; q_last: the last window
            q_passed, q_last = Signal(name=f"q_passed{h}"), Signal(name=f"q_last{h}")
            q_ctl, q_meta, q_y = (Signal(_Ctl, name=f"q_ctl{h}"), Signal(Meta, name=f"q_meta{h}"),
                                  Signal(2 * WL, name=f"q_y{h}"))
            q_win = Signal(range(NWIN), name=f"q_win{h}")
            q_dp, q_inr, q_pend = (Signal(DW * NW, name=f"q_dp{h}"), Signal(2 * NW, name=f"q_inr{h}"),
                                   Signal(NW, name=f"q_pend{h}"))
            q_wd, q_be, q_rows = (Signal(32 * NW, name=f"q_wd{h}"), Signal(4 * NW, name=f"q_be{h}"),
                                  Signal(BANKS * NW, name=f"q_rows{h}"))
            # accesses i and j to one dword (row i): the passes serve a bank leader's dword
            # from this, not by comparing dwords in the loop
            q_same, same_w = Signal(NW * NW, name=f"q_same{h}"), Signal(NW * NW, name=f"same_w{h}")
            sm = _sub(m, "same_dword")
            eq = {}
            with sm.If(p_valid):
                for i in range(NW):
                    for j in range(NW):
                        if i != j:
                            a, b = min(i, j), max(i, j)
                            if (a, b) not in eq:
                                eq[a, b] = v_dp[DW * a: DW * (a + 1)] == v_dp[DW * b: DW * (b + 1)]
                            sm.d.comb += same_w[NW * i + j].eq(eq[a, b])
                        else:
                            sm.d.comb += same_w[NW * i + j].eq(1)
            # pairs of pending accesses that one pass cannot both serve: in one bank at two
            # dwords, or in one bank at all for an atomic (its passes serve the leaders only). A
            # pass serves the whole window when no pair is left, which the registers say before
            # the pass runs: the next window's load does not wait for the pass's leaders and the
            # accesses served (that path enabled the 2,000 pass registers, the LDS's critical
            # path). A pass clears the pairs with an access it served.
            pairs = list(eq)
            q_pairs, pairs_w = Signal(len(pairs), name=f"q_pairs{h}"), Signal(len(pairs), name=f"pairs_w{h}")
            with sm.If(p_valid):
                atomic = w_ctl.cls == _Cls.ATOMIC
                bank = [v_dp[DW * j: DW * j + bb] for j in range(NW)]
                sm.d.comb += pairs_w.eq(Cat(*[v_pend[a] & v_pend[b] & (atomic | ~eq[a, b]) & (bank[a] == bank[b])
                                              for a, b in pairs]))
            p_run, first_s, passed_s, ctl_s, meta_s, y_s = q_valid, q_first, q_passed, q_ctl, q_meta, q_y
            rows_s, pend_s, dp_s, inr_s, wd_s, be_s, win_s = q_rows, q_pend, q_dp, q_inr, q_wd, q_be, q_win
        else:
            p_first = Signal(name=f"p_first{h}")        # the next pass is the instruction's first
            p_passed = Signal(name=f"p_passed{h}")      # a pass of the instruction has run
            p_run, first_s, passed_s, ctl_s, meta_s, y_s = p_valid, p_first, p_passed, w_ctl, w_meta, c_y
            rows_s, pend_s, dp_s, inr_s, wd_s, be_s = rows, v_pend, v_dp, v_inr, v_wd, v_be
            win_s = win if NWIN > 1 else None
        if BANKS == 32 and NW % 32 == 0:   # the simulator's fast transpose: block q, row b: accesses 32q.. in bank b
            cm = _transpose32(m, rows_s, NW // 32, f"cm{h}", p_run)
            w_cm = _words(cm, BANKS, [BANKS * q + b for b in range(BANKS) for q in range(NW // 32)])
        else:             # bank b, bit j: access j
            w_cm = Cat(*[rows_s[BANKS * j + b] for b in range(BANKS) for j in range(NW)])

        # leaders: the first pending access of each bank
        los = Signal(BANKS * NW, name=f"los{h}")
        ld1 = _sub(m, "lead")
        with ld1.If(p_run):
            ld1.d.comb += los.eq(Cat(*[lowest_bit(w_cm[NW * b: NW * (b + 1)] & pend_s) for b in range(BANKS)]))
        pend1, dp1, inr1, ctl1 = _pass(ld1, pend_s, dp_s, inr_s, ctl_s)
        idx = Signal(IB * BANKS, name=f"idx{h}")       # leader of each bank
        anyb = Signal(BANKS, name=f"anyb{h}")
        lead = Signal(NW, name=f"lead{h}")              # the leaders (an atomic pass serves only them)
        ld2 = _sub(m, "leader")
        lo = [los[NW * b: NW * (b + 1)] for b in range(BANKS)]
        with ld2.If(p_run):
            ld2.d.comb += [idx.eq(Cat(*[encode_onehot(x) for x in lo])), anyb.eq(Cat(*[x.any() for x in lo])),
                           lead.eq(tree_or(lo))]
        pend2, dp2, inr2, ctl2 = _pass(ld2, pend1, dp1, inr1, ctl1)
        ldw = Signal(DW * BANKS, name=f"ld{h}")         # leader's dword
        widx, wany = Signal(IB * BANKS, name=f"widx{h}"), Signal(BANKS, name=f"wany{h}")
        is_wr = (ctl2.cls == _Cls.STORE) | (ctl2.cls == _Cls.ATOMIC)
        ldx = _sub(m, "leader_addr")
        with ldx.If(p_run):
            ldx.d.comb += [ldw.eq(Cat(*[dp2.word_select(idx[IB * b: IB * (b + 1)], DW) for b in range(BANKS)])),
                           widx.eq(Mux(is_wr, idx, 0)), wany.eq(Mux(is_wr, anyb, 0))]
        pend3, dp3, inr3, ctl3, lead3 = _pass(ldx, pend2, dp2, inr2, ctl2, lead)

        # served: every pending access to its bank leader's dword (atomics: the leaders only)
        served = Signal(NW, name=f"served{h}")
        sv = _sub(m, "serve")
        if staged:
            same = Cat(*[(lead3 & q_same[NW * i: NW * (i + 1)]).any() for i in range(NW)])
        else:
            same = Cat(*[dp3[DW * i: DW * (i + 1)] == ldw.word_select(dp3[DW * i: DW * i + bb], DW) for i in range(NW)])
        with sv.If(p_run):
            sv.d.comb += served.eq(Mux(ctl3.cls == _Cls.ATOMIC, lead3, same & pend3))
        pend4, dp4, inr4, ctl4 = _pass(sv, pend3, dp3, inr3, ctl3)
        if not staged:
            kept = Signal(NW, name=f"kept{h}")          # the window's accesses still pending after the pass
            kp = _sub(m, "kept")
            with kp.If(p_valid):
                kp.d.comb += kept.eq(c_pend & c_val & ~ordered(served, 1))
        xsel = Signal(xw * NW, name=f"xsel{h}")         # crossbar select: bank, window (0 data, 1/3 zero, 2 partial)
        last = Signal(name=f"last{h}")
        nserved = Signal(WL, name=f"nserved{h}")        # served, for narrow stores only (see below)
        xs = _sub(m, "xsel")
        # the instruction's last pass: nothing left in this window, nor in another
        win_done = Signal(name=f"win_done{h}")
        if staged:
            m.d.comb += win_done.eq(~q_pairs.any())
            done = q_last & win_done
        else:
            m.d.comb += win_done.eq((pend4 & ~served) == 0)
            done = win_done
            if NWIN > 1:
                done &= ~Cat(*[wpend[k] & (win != k) for k in range(NWIN)]).any()
        with xs.If(p_run):
            xs.d.comb += [xsel.eq(Cat(*[Cat(dp4[DW * i: DW * i + bb], inr4[2 * i] | ~served[i], inr4[2 * i + 1])
                                        for i in range(NW)])),
                          last.eq(done),
                          nserved.eq(Mux((ctl4.cls == _Cls.STORE) & (ctl4.narrow != 0),
                                         Cat(*[served[4 * q + 3] for q in range(WL)]), 0))]

        # store data and atomic operands of each bank's leader
        b_wd, b_be = Signal(32 * BANKS, name=f"b_wd{h}"), Signal(4 * BANKS, name=f"b_be{h}")
        b_cmp, b_aval = Signal(32 * BANKS, name=f"b_cmp{h}"), Signal(BANKS, name=f"b_aval{h}")
        ws = _sub(m, "write_select")
        wi = [widx[IB * b: IB * (b + 1)] for b in range(BANKS)]
        with ws.If(p_run):
            ws.d.comb += [b_wd.eq(Cat(*[wd_s.word_select(i, 32) for i in wi])),
                          b_be.eq(Cat(*[Mux(wany[b], be_s.word_select(wi[b], 4), 0) for b in range(BANKS)])),
                          b_cmp.eq(Cat(*[wd_s.word_select(Cat(Const(2, 2), i[2:]), 32) for i in wi])),
                          b_aval.eq(Cat(*[wany[b] & (inr_s.word_select(wi[b], 2) == 0) for b in range(BANKS)]))]

        # narrow stores: bytes of one dword may come from several lanes; per byte, the last
        # writer among the served lanes of the bank. Only slot 0 is in use: in REV order, the
        # window's lane WL - 1 - q sits at its access 4 q + 3, so these vectors hold bit q for it.
        narrow_st = (ctl_s.cls == _Cls.STORE) & (ctl_s.narrow != 0)
        slot0 = [4 * q + 3 for q in range(WL)]
        n_cm, n_bep = Signal(BANKS * WL, name=f"n_cm{h}"), Signal(4 * WL, name=f"n_bep{h}")
        n_wd = Signal(32 * WL, name=f"n_wd{h}")       # byte y of every lane, then byte y + 1, ...
        ng = _sub(m, "narrow_gate")
        with ng.If(p_run):
            ng.d.comb += [n_cm.eq(Mux(narrow_st, Cat(*[w_cm[NW * b + j] for b in range(BANKS) for j in slot0]), 0)),
                          n_bep.eq(Mux(narrow_st, Cat(*[be_s[4 * j + y] for y in range(4) for j in slot0]), 0)),
                          n_wd.eq(Mux(narrow_st, Cat(*[wd_s[32 * j + 8 * y: 32 * j + 8 * y + 8]
                                                       for y in range(4) for j in slot0]), 0))]
        n_win = Signal(4 * BANKS * WL, name=f"n_win{h}")   # (bank, byte): the winning lane, one-hot
        nw = _sub(m, "narrow_win")
        with nw.If(p_run):
            nw.d.comb += n_win.eq(Cat(*[lowest_bit(n_cm[WL * b: WL * (b + 1)] & nserved &
                                                n_bep[WL * y: WL * (y + 1)])
                                        for b in range(BANKS) for y in range(4)]))
        n_idx, n_bbe = Signal(LB * 4 * BANKS, name=f"n_idx{h}"), Signal(4 * BANKS, name=f"n_bbe{h}")
        ni = _sub(m, "narrow_index")
        wins = [n_win[WL * k: WL * (k + 1)] for k in range(4 * BANKS)]
        with ni.If(p_run):
            ni.d.comb += [n_idx.eq(Cat(*[encode_onehot(w) for w in wins])), n_bbe.eq(Cat(*[w.any() for w in wins]))]
        n_bwd = Signal(32 * BANKS, name=f"n_bwd{h}")
        nd = _sub(m, "narrow_data")
        with nd.If(p_run):
            nd.d.comb += n_bwd.eq(Cat(*[n_wd[8 * WL * (k % 4): 8 * WL * (k % 4 + 1)]
                                        .word_select(n_idx[LB * k: LB * (k + 1)], 8) for k in range(4 * BANKS)]))

        # ---- banks ------------------------------------------------------------------------------
        advance = Signal(name=f"advance{h}")
        r_valid, r_first, r_last = Signal(name=f"r_valid{h}"), Signal(name=f"r_first{h}"), Signal(name=f"r_last{h}")
        r_ctl, r_meta = Signal(_Ctl, name=f"r_ctl{h}"), Signal(Meta, name=f"r_meta{h}")
        r_y, x_y = Signal(2 * WL, name=f"r_y{h}"), Signal(2 * WL, name=f"x_y{h}")   # the pass's window's c_y
        r_xsel, r_row = Signal(xw * NW, name=f"r_xsel{h}"), Signal(rb * BANKS, name=f"r_row{h}")
        r_wd, r_be = Signal(32 * BANKS, name=f"r_wd{h}"), Signal(4 * BANKS, name=f"r_be{h}")
        r_cmp, r_aval = Signal(32 * BANKS, name=f"r_cmp{h}"), Signal(BANKS, name=f"r_aval{h}")
        rd = Signal(32 * BANKS, name=f"rd{h}")           # RAM outputs (stage R)
        anew = Signal(32 * BANKS, name=f"anew{h}")
        r_atomic = r_valid & (r_ctl.cls == _Cls.ATOMIC)
        rports, wports, rdata = _sub(m, "bank_read"), _sub(m, "bank_write"), _sub(m, "bank_data")
        self.banks = []
        for b in range(BANKS):
            mem = memory.Memory(shape=32, depth=self.rows, init=[])
            m.submodules[f"bank{b}"] = mem
            self.banks.append(mem)
            wp = mem.write_port(granularity=8)
            rp = mem.read_port(transparent_for=(wp,))
            # read only for a pass (stage R is valid next): idle cycles skip the 64 reads and
            # their write-through checks, which a compiled simulation would run every cycle
            rports.d.comb += [rp.addr.eq(ldw[DW * b + bb: DW * b + bb + rb]), rp.en.eq(advance & p_run)]
            rdata.d.comb += rd[32 * b: 32 * b + 32].eq(rp.data)
            wports.d.comb += [wp.addr.eq(r_row[rb * b: rb * (b + 1)]),
                              wp.data.eq(Mux(r_atomic, anew[32 * b: 32 * b + 32], r_wd[32 * b: 32 * b + 32])),
                              wp.en.eq(Mux(advance & r_valid,
                                           Mux(r_atomic, Mux(r_aval[b], 0xF, 0), r_be[4 * b: 4 * b + 4]), 0))]
        alu = _sub(m, "alu")     # computes only in atomic passes (no gates on its inputs)
        with alu.If(r_atomic):
            alu.d.comb += anew.eq(Cat(*[atomic_result(r_ctl.aop, rd[32 * b: 32 * b + 32], r_wd[32 * b: 32 * b + 32],
                                                      r_cmp[32 * b: 32 * b + 32]) for b in range(BANKS)]))

        # ---- X: RAM outputs registered; crossbar to the accesses ---------------------------------
        x_valid, x_first, x_last = Signal(name=f"x_valid{h}"), Signal(name=f"x_first{h}"), Signal(name=f"x_last{h}")
        x_ctl, x_meta = Signal(_Ctl, name=f"x_ctl{h}"), Signal(Meta, name=f"x_meta{h}")
        x_xsel, x_rd = Signal(xw * NW, name=f"x_xsel{h}"), Signal(32 * BANKS, name=f"x_rd{h}")
        xb = Signal(32 * NW, name=f"xb{h}")
        wmask = Signal(4 * 32, name=f"wmask{h}")   # by window: all bytes, none, the window's last bytes, none
        _sub(m, "windows").d.comb += wmask.eq(Cat(Const(0xFFFF_FFFF, 32), Const(0, 32),
                                                  *[Mux(x_meta.em[k], Const(0xFF, 8), 0) for k in range(4)],
                                                  Const(0, 32)))
        xbar = _sub(m, "crossbar")
        with xbar.If(x_valid):
            xbar.d.comb += xb.eq(Cat(*[x_rd.word_select(x_xsel[xw * i: xw * i + bb], 32) &
                                       wmask.word_select(x_xsel[xw * i + bb: xw * (i + 1)], 32) for i in range(NW)]))
        r_served, x_served = Signal(NW, name=f"r_served{h}"), Signal(NW, name=f"x_served{h}")   # the pass's accesses
        if NWIN > 1:
            r_win, x_win = Signal(range(NWIN), name=f"r_win{h}"), Signal(range(NWIN), name=f"x_win{h}")
        else:
            x_win = Const(0)

        # a narrow load's byte or half, zero- or sign-extended, as it goes into the result
        # registers: for the window's lanes, not for the whole wave at every response beat
        def narrow(w, y):
            v = (w >> Cat(Const(0, 3), y))[:16]
            return Mux(x_ctl.narrow == 1, Cat(v[:8], Mux(x_ctl.sgn & v[7], 0xFF_FFFF, 0)),
                       Cat(v[:16], Mux(x_ctl.sgn & v[15], 0xFFFF, 0)))
        xn = Signal(32 * NW, name=f"xn{h}")
        nres = _sub(m, "narrow_result")
        with nres.If(x_valid):
            nres.d.comb += xn.eq(Cat(*[
                Mux(x_ctl.narrow != 0, narrow(xb[32 * i: 32 * i + 32], x_y[2 * (i // SLOTS): 2 * (i // SLOTS) + 2]),
                    xb[32 * i: 32 * i + 32]) if i % SLOTS == 0 else xb[32 * i: 32 * i + 32]
                for i in range(NW)]))

        # ---- A: the result and its response beats -----------------------------------------------
        a_valid, a_done = Signal(name=f"a_valid{h}"), Signal(name=f"a_done{h}")
        a_ctl, a_meta = Signal(_Ctl, name=f"a_ctl{h}"), Signal(Meta, name=f"a_meta{h}")
        # the instruction's results: each pass writes the dwords of the accesses it served, and
        # ``got`` marks them; the others read as 0 (unserved lanes, in a pair the other half's
        # accesses, and what an earlier instruction left in the rows)
        got = Signal(NACC, name=f"got{h}")
        # the beat: lane group a_grp (``resp_lanes`` lanes) of destination register a_reg. The
        # select's indices are registers, the slot too (``a_src``): decoded from the register
        # count beside the select, it was merged into the select by ABC (the whole-wave beat
        # alone through synth_ecp5: 14,471 LUT4 so, 3,328 with the slot registered)
        RL = cfg.resp_lanes
        NG = LANES // RL                                # beats per destination register
        a_reg = Signal(2, name=f"a_reg{h}")
        a_grp = Signal(range(NG), name=f"a_grp{h}") if NG > 1 else Const(0)
        a_src = Signal(8, name=f"a_src{h}")            # the slot of register a_reg, then of the next ones
        bt = _sub(m, "beat")
        slot = a_src[:2]
        results = _sub(m, "results")     # a process of its own: its 128 enables run only with a pass
        write = advance & x_valid
        if NG > 1 and WL == RL:
            # a window is a beat's lane group: a LUT RAM row per group, a write enable per dword
            # (as flip-flops, 4,096 of them and 4,200 LUT4 of select per half on fpga). Only the
            # instruction in A writes (X holds the next one's first pass until A's last beat
            # goes), and the beat reads combinationally, so a beat not taken stays unchanged.
            res_rows = memory.Memory(shape=32 * NW, depth=NWIN, init=[], attrs={"ram_style": "distributed"})
            m.submodules["rows"] = res_rows
            rw, rr = res_rows.write_port(granularity=32), res_rows.read_port(domain="comb")
            results.d.comb += [rw.addr.eq(x_win), rw.data.eq(xn), rw.en.eq(Mux(write, x_served, 0))]
            bt.d.comb += rr.addr.eq(a_grp)
            g_acc = rr.data
        else:
            # a clock enable per dword on the FPGA, no multiplexers
            acc = Signal(32 * NACC, name=f"acc{h}")
            with results.If(write):
                for k in range(NWIN):
                    with results.If(x_win == k):
                        for i in range(NW):
                            with results.If(x_served[i]):
                                j = NW * k + i
                                results.d.sync += acc[32 * j: 32 * j + 32].eq(xn[32 * i: 32 * i + 32])
            g_acc = acc.word_select(a_grp, 32 * SLOTS * RL)  # the group's lanes first: RL lanes wide from here
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
        m.d.comb += [advance.eq(~(x_valid & x_first & a_valid & ~a_free)),
                     self.passed.eq(advance & p_run & served.any()), self.serving.eq(w_meta.simd),
                     self.conflict.eq(advance & p_run & served.any() & passed_s)]
        if staged:
            # a window is loaded when the passes are free (in a pair, when not ahead of the other
            # half); the instruction's registers are free after its last window's load
            p2_free, w_last = Signal(name=f"p2_free{h}"), Signal(name=f"w_last{h}")
            win_bit = win_oh
            m.d.comb += [p2_free.eq(~q_valid | (advance & win_done)), w_last.eq((wtodo & ~win_bit) == 0),
                         load.eq(p_valid & p2_free & ~ahead), self.can_take.eq(~p_valid),
                         self.finish.eq(load & w_last)]
        else:
            m.d.comb += [self.can_take.eq(~p_valid | (advance & last)), self.finish.eq(advance & p_valid & last)]
        with m.If(self.ack):
            if NG > 1:
                m.d.sync += a_grp.eq(a_grp + 1)       # 0 again after the register's last (NG divides 32)
            with m.If(a_grp == NG - 1):
                m.d.sync += [a_reg.eq(a_reg + 1), a_src.eq(a_src >> 2)]
            with m.If(bp.last):
                m.d.sync += a_valid.eq(0)
        with m.If(advance):
            m.d.sync += [x_valid.eq(r_valid), r_valid.eq(p_run)]
            with m.If(r_valid):
                m.d.sync += [x_first.eq(r_first), x_last.eq(r_last), x_ctl.eq(r_ctl), x_meta.eq(r_meta), x_y.eq(r_y),
                             x_xsel.eq(r_xsel), x_rd.eq(rd), x_served.eq(r_served)]
                if NWIN > 1:
                    m.d.sync += x_win.eq(r_win)
            with m.If(p_run):
                m.d.sync += [r_first.eq(first_s), r_last.eq(last), r_ctl.eq(ctl_s), r_meta.eq(meta_s), r_y.eq(y_s),
                             r_xsel.eq(xsel), r_served.eq(served), r_wd.eq(Mux(narrow_st, n_bwd, b_wd)),
                             r_be.eq(Mux(narrow_st, n_bbe, b_be)), r_cmp.eq(b_cmp), r_aval.eq(b_aval)]
                with m.If((ctl_s.cls == _Cls.STORE) | (ctl_s.cls == _Cls.ATOMIC)):   # write addresses
                    m.d.sync += r_row.eq(Cat(*[ldw[DW * b + bb: DW * b + bb + rb] for b in range(BANKS)]))
                if NWIN > 1:
                    m.d.sync += r_win.eq(win_s)
                if staged:
                    m.d.sync += [q_pend.eq(q_pend & ~served),
                                 q_pairs.eq(q_pairs & ~Cat(*[served[a] | served[b] for a, b in pairs]))]
                    with m.If(win_done):
                        m.d.sync += q_valid.eq(0)
                elif NWIN > 1:
                    m.d.sync += pend.eq(Cat(*[Mux(win == k, kept, pend[NW * k: NW * (k + 1)]) for k in range(NWIN)]))
                else:
                    m.d.sync += pend.eq(kept)
                m.d.sync += first_s.eq(0)
                with m.If(served.any()):
                    m.d.sync += passed_s.eq(1)
                if not staged:
                    with m.If(last):
                        m.d.sync += p_valid.eq(0)
            with m.If(x_valid):
                with m.If(x_first):
                    m.d.sync += [a_valid.eq(1), a_ctl.eq(x_ctl), a_meta.eq(x_meta),
                                 a_reg.eq(0), a_src.eq(x_meta.src)]
                    if NG > 1:
                        m.d.sync += a_grp.eq(0)
                m.d.sync += [a_done.eq(x_last),
                             got.eq(Mux(x_first, 0, got) | (x_served << (x_win * NW))[:NACC])]
        if staged:   # after the passes' updates: a window loaded replaces the one they finish
            with m.If(load):
                m.d.sync += [q_valid.eq(1), q_first.eq(w_fresh), q_last.eq(w_last), q_ctl.eq(w_ctl), q_meta.eq(w_meta),
                             q_y.eq(c_y), q_dp.eq(v_dp), q_inr.eq(v_inr), q_pend.eq(v_pend), q_wd.eq(v_wd),
                             q_be.eq(v_be), q_rows.eq(rows), q_same.eq(same_w), q_pairs.eq(pairs_w), w_fresh.eq(0),
                             wtodo.eq(wtodo & ~win_bit), q_win.eq(win)]
                nxt = lowest_bit(wtodo & ~win_bit)
                m.d.sync += [win_oh.eq(nxt), win.eq(encode_onehot(nxt))]
                with m.If(w_fresh):
                    m.d.sync += q_passed.eq(0)
                with m.If(w_last):
                    m.d.sync += p_valid.eq(0)

        with m.If(self.take):
            srcmap = Mux(ctl.xchg2, Mux(req.offset0 == req.offset1, 0b0000, 0b1000), 0b11100100)
            writes = (ctl.cls == _Cls.STORE) | (ctl.cls == _Cls.ATOMIC)
            edge_mask = ((Const(1, 5) << self.size[:2]) - 1)[:4]    # the window's last dword, if partial
            m.d.sync += [p_valid.eq(1), w_ctl.eq(ctl),
                         w_meta.simd.eq(self.simd), w_meta.wave.eq(req.wave), w_meta.seq.eq(req.seq),
                         w_meta.vdst.eq(req.vdst), w_meta.exec.eq(req.exec), w_meta.em.eq(edge_mask),
                         w_meta.src.eq(srcmap), w_meta.pair.eq(self.pair),
                         w_offs.eq(offs), w_off1.eq(off1), w_base.eq(self.base), w_size.eq(self.size)]
            if staged:   # the windows with EXEC lanes (window 0 if none: the instruction still answers)
                wins = Cat(*[req.exec[WL * k: WL * (k + 1)].any() for k in range(NWIN)])
                first = lowest_bit(Mux(wins.any(), wins, 1))
                m.d.sync += [w_fresh.eq(1), wtodo.eq(Mux(wins.any(), wins, 1)), win_oh.eq(first),
                             win.eq(encode_onehot(first))]
            else:
                m.d.sync += [p_first.eq(1), p_passed.eq(0),
                             pend.eq(Cat(*[req.exec[n] & ctl.smask[s] for n in range(LANES) for s in range(SLOTS)]))]
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
        m.d.comb += [p0.other_wpend.eq(p1.pair_wpend), p1.other_wpend.eq(p0.pair_wpend),
                     p0.other_next.eq(p1.pair_next), p1.other_next.eq(p0.pair_next)]
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
            k = s * W + self.req[s].payload.wave
            m.d.comb += [base[s].eq(win_base[k]), size[s].eq(win_size[k])]
            spans = win_spans[k]
            home = Const(1 << (s // 2), 2)
            m.d.comb += [need[s].eq(Mux(self.wgp, spans, home)),
                         bad_win[s].eq(win_mis[k] | (~self.wgp & (spans != home)))]

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
            rq.d.comb += [pipe.base.eq(Array(base)[sel]), pipe.size.eq(Array(size)[sel]),
                          pipe.pair.eq(Array(need)[sel] == 0b11)]
            with rq.If(pipe.take):   # read only at take: a compiled simulation copies it only then
                rq.d.comb += pipe.req.eq(Array(self.req[s].payload for s in range(SIMDS))[sel])
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
            # the payload only with a beat: a compiled simulation copies it only then
            rs.d.comb += rsp.valid.eq(c0 | c1)
            with rs.If(c0 | c1):
                rs.d.comb += rsp.payload.eq(Mux(use1, p1.beat, p0.beat))
                with rs.If(pair):
                    rs.d.comb += rsp.payload.data.eq(p0.beat.data | p1.beat.data)
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
                with m.Elif(pipe.take & Array(bad_win)[pipe.simd]):   # (req is read only at take: docs/toolflow.md)
                    m.d.sync += found + [err.cause.eq(LdsErrorCause.BAD_ALLOC), err.lane.eq(0), err.addr.eq(pipe.base)]
                with m.Elif(pipe.take & pipe.bad_op):
                    m.d.sync += found + [err.cause.eq(LdsErrorCause.BAD_OP), err.lane.eq(0), err.addr.eq(0)]
        return m
