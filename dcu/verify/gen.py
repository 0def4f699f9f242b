"""Random whole-DCU programs written from the ISA tables.

A program is a tree (:class:`Program`): a body of nodes, each an instruction (:class:`Op`) or a
structure (:class:`Block`: an if/else on a lane mask, an EXEC region, a forward branch, a scalar
or a per-lane loop, a barrier) holding bodies of nodes. The tree renders to gfx1200 assembly
with a fixed prologue (buffer addresses, the wave's slices, every register it uses given a
value) and epilogue (every VGPR and SGPR it used, and its LDS, stored to the output buffer).

The waits are not nodes: rendering inserts them (:class:`Waits`) from each instruction's
registers, so a program stays free of races whatever the shrinker removes: a load's result is
waited for (with a partial counter where later loads are still in flight) before an
instruction touches its register, a global load waits for the wave's stores, and every label,
branch and barrier waits for everything.

Memory is laid out so that the result does not depend on timing: each wave reads and writes
only its own slice of the data buffer and of the LDS; the shared slices take only atomics that
return nothing, of one commutative operation per program; scalar loads read the read-only
constant buffer.

Opcodes come from ``isa.opcodes.OPCODES``, filtered by what the target executes
(:func:`executable`): new opcodes of a supported format join without an edit here.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from isa.opcodes import OPCODES, Fmt, OpInfo

__all__ = ["Op", "Block", "Program", "generate", "executable", "Layout", "EXCLUDED", "Waits"]

# ---- registers ----------------------------------------------------------------------------
# s[0:1] kernarg; s[2:3] out, s[4:5] data, s[6:7] constants; s8 wave index in the dispatch,
# s9 wave index in its workgroup, s10 LDS slice, s11 EXEC at entry, s12/s13 the wave's byte
# offsets in the output and data buffers; s36/s37 the shared slices (data, LDS); s38/s39 the
# epilogue's SCC and EXEC; s40.. structure registers (EXEC saves, counters).
RAND_SGPRS = tuple(range(14, 36))
SHARED_DATA, SHARED_LDS = "s36", "s37"
STRUCT_SGPRS = tuple(range(40, 64))
RAND_VGPRS = tuple(range(2, 26))        # v0: work-item id, v1: lane * 4 (both read-only)
ADDR_VGPR = 26                          # a memory instruction's address, computed before it
STRUCT_VGPRS = (27, 28, 29)             # per-lane loop counters by depth
DUMP_VGPR = 31
VGPRS = 32
SGPRS = 64

F32_SPECIAL = (0x7FC00000, 0x7F800001, 0xFFC00000, 0x7F800000, 0xFF800000, 0x80000000, 0x00000000,
               0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000,
               0x4F800000, 0xCF000000, 0x3EFFFFFF, 0x3F000001)
INT_SPECIAL = (0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFF, 0xFFFF, 0x10000, 31, 32, 33, 24, 0xFFFFFF)
INLINE_FLOATS = ("0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494")

# Opcodes of executed formats that the generator leaves out, and why.
EXCLUDED = {
    "s_getpc_b64": "its value is the code address, which the RTL image and the model place alike "
                   "but the output would depend on the layout (the call structure uses it)",
    "s_barrier_signal": "emitted by the barrier structure only",
    "s_barrier_signal_isfirst": "emitted by the barrier structure only (its result depends on arrival order)",
    "v_nop": "does nothing a comparison could see",
}
# hwreg ops (s_getreg_b32, s_setreg_*) are left out: the model keeps only MODE, the RTL none.

# Where the RTL disagrees with the model (docs/verify.md, "Findings"), left out of programs for
# an RTL backend until it is fixed: mnemonic -> how.
RTL_DISAGREES: dict[str, str] = {}
# Modifiers the RTL does not execute are refused before launch (dcu/backends/rtlcheck.py), so never
# generated for an RTL backend: clamp on hdl.simd.NO_CLAMP, omod on hdl.simd.NO_OMOD (the
# transcendentals: v_rcp_f32_e64 v1, v2 mul:4).


@dataclass(frozen=True)
class Layout:
    """Buffers and slices of one program (bytes)."""
    waves: int                 # waves per workgroup
    groups: int                # workgroups
    data_slice: int = 1024     # per wave, in the data buffer
    data_shared: int = 256     # atomics of every wave, after the slices
    lds_slice: int = 512       # per wave
    lds_shared: int = 256      # per workgroup, after the slices

    @property
    def total_waves(self) -> int:
        return self.waves * self.groups

    @property
    def record_dwords(self) -> int:
        """Output dwords per wave: its VGPRs, a VGPR of SGPRs, its LDS slice, the shared LDS."""
        return (len(RAND_VGPRS) + 1) * 32 + self.lds_slice // 4 + self.lds_shared // 4

    @property
    def data_bytes(self) -> int:
        return self.total_waves * self.data_slice + self.data_shared

    @property
    def lds_bytes(self) -> int:
        return self.waves * self.lds_slice + self.lds_shared

    def const_dwords(self) -> int:
        return len(RAND_VGPRS) * 32 + 64


# ---- the tree -----------------------------------------------------------------------------
@dataclass
class Op:
    """One instruction: its text, the registers it reads and writes ("v5", "s7"), the wait
    counter it increments (``load``, ``store``, ``ds``, ``km`` or None) and, for coverage,
    its mnemonic and operand kinds."""
    text: str
    reads: frozenset = frozenset()
    writes: frozenset = frozenset()
    counter: str | None = None
    name: str = ""
    operands: tuple = ()
    setup: tuple = ()          # instructions computing its address (rendered just before it)

    def nodes(self):
        yield self


@dataclass
class Block:
    """A structure: ``kind`` with its own registers (``regs``), conditions (``head``: ops
    rendered before the branch) and bodies."""
    kind: str                  # if, exec, skip, sloop, vloop, barrier
    head: list = field(default_factory=list)
    bodies: list = field(default_factory=list)
    regs: dict = field(default_factory=dict)

    def nodes(self):
        yield self
        for op in self.head:
            yield op
        for body in self.bodies:
            for n in body:
                yield from n.nodes()


@dataclass
class Program:
    seed: int
    layout: Layout
    body: list
    init_sgprs: dict           # register -> 32-bit value
    init_vgprs: dict           # register -> ("const", offset) or ("mad", a, b)
    target: str = "rtl"
    model_instructions: int = 100_000   # the model's count once run: the RTL's cycle budget

    def ops(self):
        for n in self.body:
            for x in n.nodes():
                if isinstance(x, Op):
                    yield x

    def source(self, name: str = "verify") -> str:
        return _render(self, name)

    def inputs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The buffers: output (zeros), data and constants (drawn from the seed)."""
        return inputs(self.seed, self.layout)

    def launch_dims(self) -> tuple[int, int]:
        return self.layout.groups, self.layout.waves * 32


def inputs(seed: int, layout: Layout):
    r = np.random.default_rng(seed)
    out = np.zeros(layout.total_waves * layout.record_dwords, np.uint32)

    def mixed(n):
        pick = r.integers(0, 4, n)
        special = np.array(F32_SPECIAL + INT_SPECIAL, np.uint32)[r.integers(0, len(F32_SPECIAL) + len(INT_SPECIAL), n)]
        floats = r.normal(0, 1000, n).astype(np.float32).view(np.uint32)
        return np.select([pick == 0, pick == 1, pick == 2], [special, floats, r.integers(0, 64, n, dtype=np.uint32)],
                         r.integers(0, 1 << 32, n, dtype=np.uint32)).astype(np.uint32)
    return out, mixed(layout.data_bytes // 4), mixed(layout.const_dwords())


# ---- which opcodes ------------------------------------------------------------------------
_FORMATS = {Fmt.SOP1, Fmt.SOP2, Fmt.SOPC, Fmt.SOPK, Fmt.VOP1, Fmt.VOP2, Fmt.VOP3, Fmt.VOP3SD, Fmt.VOPC,
            Fmt.VGLOBAL, Fmt.DS, Fmt.SMEM}


def executable(target: str) -> frozenset[str]:
    """Mnemonics a program for ``target`` may use: those the model executes (``sim.execute``)
    and, for an RTL target, the RTL too (``hdl.simd.IMPLEMENTED``)."""
    from sim.execute import IMPLEMENTED as model
    names = set(model)
    if target != "model":
        from hdl.simd import IMPLEMENTED as rtl
        names &= rtl
    return frozenset(names)


def _usable(info: OpInfo) -> bool:
    if info.fmt not in _FORMATS or info.name in EXCLUDED or "hwreg" in info.flags:
        return False
    if info.fmt == Fmt.VGLOBAL:
        return info.kind in ("vmem_load", "vmem_store", "vmem_atomic") and "d16" not in info.flags
    if info.fmt == Fmt.DS:
        return "lanes" not in info.flags and "d16" not in info.flags
    if info.fmt == Fmt.SMEM:
        return info.kind == "smem" and "buffer" not in info.flags
    if info.kind not in ("salu", "valu", "vtrans"):
        return False
    if any(b not in (16, 32, 64) for b in info.src_bits) or info.dst_bits not in (0, 16, 32, 64):
        return False
    return not info.name.startswith(("v_s_", "v_permlane", "v_pk_", "v_dot", "v_fma_mix", "v_movrel",
                                     "v_swap"))


@dataclass
class Pools:
    salu: list
    exec_ops: list            # SALU ops that write EXEC (saveexec family)
    valu: list
    cmpx: list
    vopc: list
    gload: list
    gstore: list
    gatomic: list
    ds: list
    smem: list
    hints: list               # (text maker, counter) of HINTS the target executes
    call: bool                # s_swappc_b64 and s_setpc_b64 both execute
    no_clamp: frozenset        # mnemonics not to give clamp; "omod:NAME": no omod

    def generated(self) -> set[str]:
        """Every mnemonic a program may hold as an instruction node."""
        return ({i.name for grp in (self.salu, self.exec_ops, self.valu, self.cmpx, self.vopc, self.gload,
                                    self.gstore, self.gatomic, self.ds, self.smem) for i in grp}
                | {n for n, _, _ in self.hints} | ({"s_swappc_b64", "s_setpc_b64"} if self.call else set()))


# Hints, prefetches and cache maintenance: no effect the output could show, but each must
# decode, issue and retire on the RTL as on the model (instructions are compared by issue
# group). Mnemonic -> (operand text maker, the counter it increments).
HINTS = {
    "s_nop": (lambda r: str(r.randint(0, 7)), None),
    "s_sleep": (lambda r: str(r.randint(0, 1)), None),
    "s_setprio": (lambda r: str(r.randint(0, 3)), None),
    "s_delay_alu": (lambda r: r.choice(["instid0(VALU_DEP_1)", "instid0(TRANS32_DEP_1)",
                                        "instid0(VALU_DEP_2) | instskip(NEXT) | instid1(SALU_CYCLE_1)"]), None),
    "s_wait_alu": (lambda r: r.choice(["0xfffd", "0xfffe", "0xfff1"]), None),
    "s_wait_idle": (lambda r: "", None),
    "s_icache_inv": (lambda r: "", None),
    "s_dcache_inv": (lambda r: "", None),
    "s_prefetch_data": (lambda r: f"s[6:7], 0x{r.randrange(0, 64) * 64:x}, null, 0", None),
    "s_prefetch_inst": (lambda r: "s[0:1], 0x0, null, 0", None),
    "s_prefetch_data_pc_rel": (lambda r: f"0x{r.randrange(0, 16) * 64:x}, null, 0", None),
    "s_prefetch_inst_pc_rel": (lambda r: f"0x{r.randrange(0, 16) * 64:x}, null, 0", None),
    "global_inv": (lambda r: "", "load"),        # counted by loadcnt (hdl.layouts.VecMemResp)
    "global_wb": (lambda r: "", "store"),
}


def hint_op(r: random.Random, hints: list) -> Op:
    name, make, counter = r.choice(hints)
    args = make(r)
    return Op(f"{name} {args}".rstrip(), counter=counter, name=name)


def pools(target: str) -> Pools:
    names = executable(target)
    infos = [i for i in OPCODES if i.name in names and _usable(i)]
    seen, uniq = set(), []
    for i in infos:
        if i.name not in seen:
            seen.add(i.name)
            uniq.append(i)
    hints = [(n, *HINTS[n]) for n in sorted(HINTS) if n in names]
    call = {"s_swappc_b64", "s_setpc_b64", "s_getpc_b64"} <= names
    if target == "model":
        no_clamp, no_omod = frozenset(), frozenset()
    else:
        from hdl.simd import NO_CLAMP as no_clamp, NO_OMOD
        uniq = [i for i in uniq if i.name not in RTL_DISAGREES]
        no_omod = NO_OMOD
    by = lambda pred: [i for i in uniq if pred(i)]
    return Pools(
        salu=by(lambda i: i.kind == "salu" and "saveexec" not in i.flags),
        exec_ops=by(lambda i: i.kind == "salu" and "saveexec" in i.flags),
        valu=by(lambda i: i.kind in ("valu", "vtrans") and i.fmt != Fmt.VOPC),
        cmpx=by(lambda i: i.fmt == Fmt.VOPC and "cmpx" in i.flags),
        vopc=by(lambda i: i.fmt == Fmt.VOPC and "cmpx" not in i.flags),
        gload=by(lambda i: i.kind == "vmem_load" and i.fmt == Fmt.VGLOBAL),
        gstore=by(lambda i: i.kind == "vmem_store" and i.fmt == Fmt.VGLOBAL),
        gatomic=by(lambda i: i.kind == "vmem_atomic" and i.fmt == Fmt.VGLOBAL),
        ds=by(lambda i: i.fmt == Fmt.DS),
        smem=by(lambda i: i.fmt == Fmt.SMEM),
        hints=hints, call=call,
        no_clamp=frozenset(no_clamp) | {f"omod:{n}" for n in no_omod})


# Atomics whose final memory is the same in any order, when nothing is returned.
_COMMUTATIVE = ("add_u", "sub_u", "and_b", "or_b", "xor_b", "min_i", "min_u", "max_i", "max_u",
                "add_f32", "min_num_f32", "max_num_f32")


def commutative(name: str) -> bool:
    return "rtn" not in name and any(f"_{c}" in name for c in _COMMUTATIVE) and "cmp" not in name


# ---- operands -----------------------------------------------------------------------------
class _Operands:
    """Random operand text for one instruction: at most one literal, at most two scalar values
    (the constant bus) for VALU; records kinds for coverage and registers read."""

    def __init__(self, r: random.Random, valu: bool, bus: int = 2):
        self.r, self.valu = r, valu
        self.literal = None
        self.bus = self.limit = bus
        self.reads: set[str] = set()
        self.kinds: list[str] = []

    def _scalar_ok(self) -> bool:
        return not self.valu or self.bus > 0

    def _take_bus(self):
        if self.valu:
            self.bus -= 1

    def sgpr(self, bits=32, *, record=True) -> str:
        n = bits // 32 if bits == 64 else 1
        if n == 2:
            k = self.r.choice(RAND_SGPRS[::2])
            regs = [f"s{k}", f"s{k + 1}"]
            text = f"s[{k}:{k + 1}]"
        else:
            k = self.r.choice(RAND_SGPRS + ("vcc_lo", "m0") if self.r.random() < 0.1 else RAND_SGPRS)
            text = k if isinstance(k, str) else f"s{k}"
            regs = [text]
        if record:
            self.reads |= set(regs)
            self.kinds.append("sgpr")
        return text

    def vgpr(self, bits=32, *, extra=()) -> str:
        n = 2 if bits == 64 else 1
        k = self.r.choice(RAND_VGPRS[:len(RAND_VGPRS) - n + 1] + tuple(extra))
        self.reads |= {f"v{k + i}" for i in range(n)}
        self.kinds.append("vgpr")
        return f"v{k}" if n == 1 else f"v[{k}:{k + 1}]"

    def inline(self, bits=32, floats=True) -> str:
        self.kinds.append("inline")
        if floats and bits != 64 and self.r.random() < 0.35:
            return self.r.choice(INLINE_FLOATS)
        return str(self.r.randint(-16, 64))

    def lit(self, bits=32) -> str | None:
        if self.literal is not None and (self.valu and self.limit == 1 or (bits == 64) != self.lit64):
            return None     # the 64-bit shifts read even the same literal twice; a 64-bit operand's differs
        if self.literal is None:
            self.lit64 = bits == 64
            if self.valu and self.bus <= 0:
                return None
            self._take_bus()
            c = self.r.random()
            v = (self.r.choice(F32_SPECIAL) if c < 0.4 else self.r.choice(INT_SPECIAL) if c < 0.6
                 else self.r.getrandbits(32))
            if bits == 16:
                v &= 0xFFFF
            self.literal = v
        self.kinds.append("literal")
        return f"0x{self.literal:x}"

    def src(self, bits=32, *, vgpr_only=False, literal=True) -> str:
        c = self.r.random()
        if vgpr_only or c < 0.5:
            return self.vgpr(bits, extra=(0, 1) if bits == 32 else ())
        if c < 0.72 and self._scalar_ok():
            self._take_bus()
            return self.sgpr(bits)
        if c < 0.9 or not literal:
            return self.inline(bits)
        return self.lit(bits) or self.inline(bits)


def _sdst(r: random.Random, bits=32) -> tuple[str, set]:
    if bits == 64:
        k = r.choice(RAND_SGPRS[::2])
        return f"s[{k}:{k + 1}]", {f"s{k}", f"s{k + 1}"}
    k = r.choice(RAND_SGPRS)
    return f"s{k}", {f"s{k}"}


def _vdst(r: random.Random, bits=32) -> tuple[str, set]:
    n = max(1, bits // 32)
    k = r.choice(RAND_VGPRS[:len(RAND_VGPRS) - n + 1])
    return (f"v{k}" if n == 1 else f"v[{k}:{k + n - 1}]"), {f"v{k + i}" for i in range(n)}


# ---- SALU ---------------------------------------------------------------------------------
def salu_op(r: random.Random, info: OpInfo) -> Op:
    o = _Operands(r, valu=False)
    name = info.name
    writes: set = set()
    if info.fmt == Fmt.SOPK:
        d, writes = _sdst(r)
        k = r.choice([r.randrange(-32768, 32768), r.randrange(-16, 64)])
        o.kinds.append("simm16")
        reads = {d} if name in ("s_addk_co_i32", "s_mulk_i32", "s_cmovk_i32") else set()
        return Op(f"{name} {d}, {k}", frozenset(reads), frozenset(writes), name=name, operands=tuple(o.kinds))
    ops = []
    if info.dst_bits:
        d, writes = _sdst(r, info.dst_bits)
        ops.append(d)
    if name in ("s_fmamk_f32", "s_fmaak_f32"):
        k = o.lit()
        a, b = o.sgpr() if r.random() < 0.7 else o.inline(), o.sgpr()
        ops += [a, k, b] if name == "s_fmamk_f32" else [a, b, k]
    else:
        for b in info.src_bits:
            c = r.random()
            ops.append(o.sgpr(b) if c < 0.55 else o.inline(b) if c < 0.8 or b == 64 and o.literal is not None
                       else o.lit(b) or o.inline(b))
    if "mac" in info.flags:
        o.reads |= writes
    return Op(f"{name} {', '.join(ops)}", frozenset(o.reads), frozenset(writes), name=name, operands=tuple(o.kinds))


# ---- VALU ---------------------------------------------------------------------------------
def _mods(r: random.Random, info: OpInfo, srcs: list[str], no_clamp: frozenset, kinds: list) -> tuple[list, str]:
    nmods = next((int(f[-1]) for f in info.flags if f.startswith("mods")), 0)
    if info.name.startswith("v_ldexp_"):
        nmods = 1                  # the exponent is an integer
    out = []
    for i, s in enumerate(srcs):
        if i < nmods and s[0] in "sv":
            if "abs" in info.flags and r.random() < 0.2:
                s = f"|{s}|"
                kinds.append("abs")
            if "neg" in info.flags and r.random() < 0.2:
                s = "-" + s
                kinds.append("neg")
        out.append(s)
    tail = ""
    if "opsel" in info.flags and r.random() < 0.4:
        tail += " op_sel:[" + ",".join(r.choice("01") for _ in range(len(srcs) + 1)) + "]"
        kinds.append("op_sel")
    float_result = _result_type(info.name) == "f"
    if "clamp" in info.flags and info.fmt != Fmt.VOPC and info.name not in no_clamp and r.random() < 0.15 \
            and (float_result or "_f" not in info.name and _result_type(info.name) != "p"):
        tail += " clamp"
        kinds.append("clamp")
    if "omod" in info.flags and float_result and f"omod:{info.name}" not in no_clamp and r.random() < 0.12:
        tail += r.choice([" mul:2", " mul:4", " div:2"])
        kinds.append("omod")
    return out, tail


def _result_type(name: str) -> str:
    """The letter of an opcode's result type (``v_cvt_u32_f32``: u); p for packed results."""
    parts = name.split("_")
    if "pk" in parts:
        return "p"
    types = [p for p in parts[2:] if p[:1] in "biuf" and p[1:].isdigit()]
    return types[0][0] if types else "b"


def valu_op(r: random.Random, info: OpInfo, no_clamp: frozenset = frozenset(), vcc_dst: bool = False) -> Op:
    """One VALU instruction of ``info``; ``vcc_dst``: a compare writes vcc_lo (for a condition)."""
    name, fl = info.name, info.flags
    writes: set = set()
    if name == "v_readlane_b32":
        o = _Operands(r, valu=True)
        d, writes = _sdst(r)
        lane = o.sgpr() if r.random() < 0.5 else o.inline(32, floats=False)
        return Op(f"{name} {d}, {o.vgpr()}, {lane}", frozenset(o.reads), frozenset(writes), name=name,
                  operands=tuple(o.kinds))
    if name == "v_readfirstlane_b32":      # an EXEC of 0 reads lane 0
        o = _Operands(r, valu=True)
        d, writes = _sdst(r)
        return Op(f"{name} {d}, {o.vgpr()}", frozenset(o.reads | {"exec_lo"}), frozenset(writes), name=name,
                  operands=tuple(o.kinds))
    if name == "v_writelane_b32":
        o = _Operands(r, valu=True, bus=1)
        d, writes = _vdst(r)
        val = o.sgpr() if r.random() < 0.6 else o.lit() if r.random() < 0.5 else o.inline()
        lane = o.inline(32, floats=False) if r.random() < 0.7 else "m0"
        return Op(f"{name} {d}, {val}, {lane}", frozenset(o.reads | writes), frozenset(writes), name=name,
                  operands=tuple(o.kinds))
    bus = 1 if name in ("v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64", "v_div_fmas_f32", "v_div_fmas_f64") else 2
    o = _Operands(r, valu=True, bus=bus)
    if name in ("v_fmamk_f32", "v_fmaak_f32", "v_fmamk_f16", "v_fmaak_f16"):
        bits = info.src_bits[0]
        k = o.lit(bits)
        s0 = o.src(bits, literal=False)
        d, writes = _vdst(r, bits if bits > 16 else 32)
        v1 = o.vgpr()
        text = f"{name} {d}, {s0}, {k}, {v1}" if "fmamk" in name else f"{name} {d}, {s0}, {v1}, {k}"
        return Op(text, frozenset(o.reads), frozenset(writes), name=name, operands=tuple(o.kinds))
    e64 = info.fmt in (Fmt.VOP3, Fmt.VOP3SD) or r.random() < 0.5 or "mac" in fl and r.random() < 0.3
    if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) and info.vop3_fmt is None:
        e64 = False
    suffix = ("_e64" if e64 else "_e32") if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) else ""
    ops = []
    if info.fmt == Fmt.VOPC:
        if "cmpx" in fl:
            writes = {"exec_lo"}
        elif e64 and not vcc_dst and r.random() < 0.7:
            d, writes = _sdst(r)
            ops.append(d)
        else:
            ops.append("vcc_lo")
            writes = {"vcc_lo"}
    elif info.dst_bits:
        d, writes = _vdst(r, info.dst_bits)
        ops.append(d)
    carry = "carry_out" in fl
    mask = None
    if carry:
        if e64 or info.fmt == Fmt.VOP3SD:
            d, w = _sdst(r) if r.random() < 0.7 else ("vcc_lo", {"vcc_lo"})
        else:
            d, w = "vcc_lo", {"vcc_lo"}
        ops.append(d)
        writes |= w
    sb = list(info.src_bits)
    if name.startswith("v_cndmask_b") or (carry and info.fmt == Fmt.VOP2):
        sb = sb[:2]
        if e64 and r.random() < 0.7:
            o._take_bus()
            mask = o.sgpr()
        else:
            mask = "vcc_lo"
            o.reads.add("vcc_lo")
            o.bus -= 1
    if "reads_vcc" in fl and mask is None:
        o.reads.add("vcc_lo")
    srcs = [o.src(b, vgpr_only=not e64 and info.fmt != Fmt.VOP3 and info.fmt != Fmt.VOP3SD and i >= 1)
            for i, b in enumerate(sb)]
    tail = ""
    if e64 or info.fmt in (Fmt.VOP3, Fmt.VOP3SD):
        srcs, tail = _mods(r, info, srcs, no_clamp, o.kinds)
    ops += srcs
    if mask:
        ops.append(mask)
    if "mac" in fl:
        o.reads |= writes
    if info.dst_bits == 16:
        o.reads |= writes          # a 16-bit result keeps the other half of its VGPR
    text = f"{name}{suffix} {', '.join(ops)}{tail}".rstrip()
    kinds = tuple(o.kinds) + (("e64",) if e64 else ())
    return Op(text, frozenset(o.reads), frozenset(writes), name=name, operands=kinds)


# ---- memory -------------------------------------------------------------------------------
def _addr_setup(r: random.Random, base_sgpr: str, align: int, reach: int) -> tuple[list[Op], str]:
    """Ops computing ADDR_VGPR = base + x: x the lane's own element (consecutive), or a random
    VGPR masked to the reach (scattered), to 64 bytes (few addresses: conflicts, one line) or
    to nothing (one address)."""
    a = f"v{ADDR_VGPR}"
    if r.random() < 0.3 and 32 * max(align, 4) <= reach:
        shift = max(align, 4).bit_length() - 3
        first = Op(f"v_lshlrev_b32 {a}, {shift}, v1", frozenset({"v1"}), frozenset({a}), name="v_lshlrev_b32")
    else:
        x = r.choice(RAND_VGPRS)
        m = r.choice([reach - 1, 63, 0]) & ~(align - 1)
        first = Op(f"v_and_b32 {a}, 0x{m:x}, v{x}", frozenset({f"v{x}"}), frozenset({a}), name="v_and_b32")
    add = Op(f"v_add_nc_u32 {a}, {base_sgpr}, {a}", frozenset({base_sgpr, a}), frozenset({a}), name="v_add_nc_u32")
    return [first, add], a


def _align(size: int) -> int:
    return size if size in (1, 2, 4, 8, 16) else 16


def _vregs(text: str) -> set:
    if text.startswith("v["):
        lo, hi = text[2:-1].split(":")
        return {f"v{k}" for k in range(int(lo), int(hi) + 1)}
    return {text}


def global_op(r: random.Random, info: OpInfo, shared: bool) -> Op:
    """A global load, store or atomic (``shared``: a commutative atomic without return on the
    shared slice) at addresses inside the wave's slice."""
    name = info.name
    size = max(1, info.data_bits // 8)
    align = _align(size)
    if shared:
        setup, a = _addr_setup(r, SHARED_DATA, align, 256)
    else:
        setup, a = _addr_setup(r, "s13", align, 512)
    offset = 0 if shared else r.randrange(0, 0x1F0 // align + 1) * align
    reads, writes = {a}, set()
    dwords = max(1, info.data_bits // 32)
    if info.kind == "vmem_load":
        d, writes = _vdst(r, 32 * dwords)
        text = f"{name} {d}, {a}, s[4:5]"
        counter = "load"
    elif info.kind == "vmem_store":
        data = _vdst(r, 32 * dwords)[0]
        reads |= _vregs(data)
        text = f"{name} {a}, {data}, s[4:5]"
        counter = "store"
    else:
        elem = max(32, info.data_bits)
        data = _vdst(r, 2 * elem if "cmpswap" in name else elem)[0]     # cmpswap: data, compare
        reads |= _vregs(data)
        rtn = not shared and r.random() < 0.6
        if rtn:
            d, writes = _vdst(r, elem)
            text = f"{name} {d}, {a}, {data}, s[4:5]"
        else:
            text = f"{name} {a}, {data}, s[4:5]"
        counter = "load" if rtn else "store"
        if rtn:
            offset_text = f" offset:{offset}" if offset else ""
            return Op(text + offset_text + " th:TH_ATOMIC_RETURN", frozenset(reads), frozenset(writes), counter,
                      name, ("rtn",), tuple(setup))
    if offset:
        text += f" offset:{offset}"
    return Op(text, frozenset(reads), frozenset(writes), counter, name, ("shared",) if shared else (), tuple(setup))


def ds_op(r: random.Random, info: OpInfo, shared: bool) -> Op:
    """An LDS instruction in the wave's slice (``shared``: a commutative atomic without return
    on the workgroup's shared slice)."""
    name = info.name
    two = "2addr" in info.flags
    # a two-address element is a data source's width, or half the result's (the table's
    # data_bits of ds_storexchg_2addr_* is one element, of the others two)
    elem = ((info.src_bits[1] if len(info.src_bits) > 1 else info.dst_bits // 2) // 8 if two
            else max(1, info.data_bits // 8))
    unit = elem * (64 if "stride64" in info.flags else 1)
    setup, a = _addr_setup(r, SHARED_LDS if shared else "s10", _align(elem), 256)
    reads, writes = {a}, set()
    ops = []
    if info.dst_bits:
        d, writes = _vdst(r, info.dst_bits)
        ops.append(d)
    ops.append(a)
    for b in info.src_bits[1:]:
        v = _vdst(r, b)[0]
        reads |= _vregs(v)
        ops.append(v)
    tail = ""
    if two:
        top = max(0, 0xF0 // unit)
        tail = f" offset0:{r.randint(0, top)} offset1:{r.randint(0, top)}"
    elif not shared:
        off = r.randrange(0, 0xF0 // max(elem, 1) + 1) * max(elem, 1)
        tail = f" offset:{off}" if off else ""
    counter = "ds"
    return Op(f"{name} {', '.join(ops)}{tail}", frozenset(reads), frozenset(writes), counter, name,
              ("shared",) if shared else (), tuple(setup))


def smem_op(r: random.Random, info: OpInfo) -> Op:
    """A scalar load from the read-only constant buffer (4-aligned registers for 3 or more)."""
    n = max(1, info.dst_bits // 32)
    align = 1 if n == 1 else 2 if n == 2 else 12 if n == 3 else 4   # b96: a multiple of 3 and of 4
    k = r.choice([k for k in RAND_SGPRS if k % align == 0 and k + n - 1 <= RAND_SGPRS[-1]])
    d = f"s{k}" if n == 1 else f"s[{k}:{k + n - 1}]"
    off = r.randrange(0, (len(RAND_VGPRS) * 128 - 64) // 4) * 4 + (r.randrange(0, 4) if info.data_bits < 32 else 0)
    return Op(f"{info.name} {d}, s[6:7], 0x{off:x}", frozenset(), frozenset(f"s{k + i}" for i in range(n)), "km",
              info.name, ("smem",))


# ---- structures ---------------------------------------------------------------------------
class _Gen:
    def __init__(self, seed: int, target: str, layout: Layout, length: int):
        self.r = random.Random(seed)
        self.p = pools(target)
        self.layout = layout
        self.budget = length
        self.struct_sgprs = list(STRUCT_SGPRS)
        self.in_call = False
        # one commutative atomic for each shared slice: two different ones (min, sub) from two
        # waves give a result that depends on their order
        shared = lambda grp: [i for i in grp if commutative(i.name)]
        self.shared_global = self.r.choice(shared(self.p.gatomic) or [None])
        self.shared_ds = self.r.choice(shared([i for i in self.p.ds if i.kind == "ds_atomic"]) or [None])

    def take_sgpr(self) -> str:
        return f"s{self.struct_sgprs.pop(0)}" if self.struct_sgprs else None

    def one(self) -> Op:
        r, p = self.r, self.p
        c = r.random()
        if c < 0.30 and p.salu:
            return salu_op(r, r.choice(p.salu))
        if c < 0.74 and p.valu:
            return valu_op(r, r.choice(p.valu + p.vopc), p.no_clamp)
        if c < 0.77 and p.cmpx:
            return valu_op(r, r.choice(p.cmpx), p.no_clamp)
        if c < 0.87 and (p.gload or p.gstore or p.gatomic):
            group = r.choice([g for g in (p.gload, p.gstore, p.gatomic) if g])
            info = r.choice(group)
            shared = info.kind == "vmem_atomic" and self.shared_global is not None and r.random() < 0.4
            return global_op(r, self.shared_global if shared else info, shared)
        if c < 0.96 and p.ds:
            info = r.choice(p.ds)
            shared = info.kind == "ds_atomic" and self.shared_ds is not None and r.random() < 0.4
            return ds_op(r, self.shared_ds if shared else info, shared)
        if c < 0.98 and p.smem:
            return smem_op(r, r.choice(p.smem))
        if p.hints:
            return hint_op(r, p.hints)
        return salu_op(r, r.choice(p.salu))

    def body(self, n: int, depth: int, vloop_depth: int, top: bool = False) -> list:
        out = []
        while n > 0 and self.budget > 0:
            c = self.r.random()
            if depth < 3 and c < 0.06:
                out.append(self.if_else(depth, vloop_depth))
            elif depth < 3 and c < 0.09 and self.p.exec_ops:
                out.append(self.exec_region(depth, vloop_depth))
            elif depth < 3 and c < 0.12:
                out.append(self.skip(depth, vloop_depth))
            elif depth < 2 and c < 0.145:
                out.append(self.sloop(depth, vloop_depth))
            elif depth < 2 and vloop_depth < len(STRUCT_VGPRS) and c < 0.17:
                out.append(self.vloop(depth, vloop_depth))
            elif top and c < 0.19:
                out.append(Block("barrier"))
            elif depth < 2 and not self.in_call and c < 0.21 and self.p.call:
                out.append(self.call(depth, vloop_depth))
            else:
                out.append(self.one())
                self.budget -= 1
            n -= 1
        return out

    def take_pair(self) -> str | None:
        """An even-aligned SGPR pair ("s[62:63]"), from the top of the structure registers."""
        s = self.struct_sgprs
        if len(s) < 2 or s[-1] % 2 == 0 or s[-2] != s[-1] - 1:
            return None
        hi, lo = s.pop(), s.pop()
        return f"s[{lo}:{hi}]"

    def call(self, depth, vloop_depth) -> Block:
        """A subroutine call (``s_swappc_b64``) to a body placed after ``s_endpgm``, which
        returns with ``s_setpc_b64``."""
        target, ret = self.take_pair(), self.take_pair()
        if ret is None:
            return self.skip(depth, vloop_depth)
        self.in_call = True
        body = self.body(self.r.randint(2, 8), depth + 1, vloop_depth)
        self.in_call = False
        return Block("call", [], [body], {"target": target, "ret": ret})

    def _inner(self, depth, vloop_depth):
        return self.body(self.r.randint(1, 5), depth + 1, vloop_depth)

    def _cond(self) -> Op:
        """A lane mask in vcc_lo from a random compare."""
        return valu_op(self.r, self.r.choice(self.p.vopc), self.p.no_clamp, vcc_dst=True)

    def if_else(self, depth, vloop_depth) -> Block:
        saved, other = self.take_sgpr(), self.take_sgpr()
        if other is None:
            return Block("skip", [self._scalar_cond()], [self._inner(depth, vloop_depth)])
        bodies = [self._inner(depth, vloop_depth)]
        if self.r.random() < 0.6:
            bodies.append(self._inner(depth, vloop_depth))
        return Block("if", [self._cond()], bodies, {"saved": saved, "else": other,
                                                    "saveexec": self.r.random() < 0.5})

    def exec_region(self, depth, vloop_depth) -> Block:
        saved = self.take_sgpr()
        if saved is None:
            return self.skip(depth, vloop_depth)
        op = salu_op(self.r, self.r.choice(self.p.exec_ops))
        op = Op(op.text, op.reads | {"exec_lo"}, op.writes | {"exec_lo"}, None, op.name, op.operands)
        return Block("exec", [op], [self._inner(depth, vloop_depth)], {"saved": saved})

    def _scalar_cond(self) -> Op:
        r = self.r
        cmp = r.choice([i for i in self.p.salu if i.fmt == Fmt.SOPC] or self.p.salu)
        return salu_op(r, cmp)

    def skip(self, depth, vloop_depth) -> Block:
        r = self.r
        kind = r.choice(["scc0", "scc1", "vccz", "vccnz", "execz", "execnz"])
        head = [self._scalar_cond()] if kind.startswith("scc") else [self._cond()] if kind.startswith("vcc") else []
        return Block("skip", head, [self._inner(depth, vloop_depth)], {"branch": kind})

    def sloop(self, depth, vloop_depth) -> Block:
        counter = self.take_sgpr()
        if counter is None:
            return self.skip(depth, vloop_depth)
        src = f"s{self.r.choice(RAND_SGPRS)}"
        return Block("sloop", [], [self._inner(depth, vloop_depth)], {"counter": counter, "src": src})

    def vloop(self, depth, vloop_depth) -> Block:
        saved = self.take_sgpr()
        if saved is None:
            return self.skip(depth, vloop_depth)
        src = f"v{self.r.choice(RAND_VGPRS)}"
        return Block("vloop", [], [self._inner(depth, vloop_depth + 1)],
                     {"saved": saved, "counter": f"v{STRUCT_VGPRS[vloop_depth]}", "src": src})


def generate(seed: int, target: str = "rtl", length: int | None = None, waves: int | None = None,
             groups: int | None = None) -> Program:
    """The program of ``seed`` for ``target`` (``model``, or an RTL backend: only what both
    execute); the same seed and target give the same program."""
    r = random.Random(seed ^ 0x5EED)
    layout = Layout(waves or r.choice([1, 1, 2, 2, 3, 4]), groups or r.choice([1, 1, 2, 3]))
    g = _Gen(seed, target, layout, length or r.randint(20, 70))
    body = g.body(10_000, 0, 0, top=True)
    init_s = {k: g.r.choice([g.r.getrandbits(32), g.r.choice(F32_SPECIAL + INT_SPECIAL), g.r.randrange(0, 64)])
              for k in RAND_SGPRS}
    init_v = {}
    for k in RAND_VGPRS:
        if g.r.random() < 0.5:
            init_v[k] = ("const", (k - RAND_VGPRS[0]) * 128)
        else:
            init_v[k] = ("mad", g.r.getrandbits(24), g.r.getrandbits(32))
    return Program(seed, layout, body, init_s, init_v, target)


# ---- rendering ----------------------------------------------------------------------------
class Waits:
    """Outstanding memory results, in issue order per counter; emits the waits an
    instruction needs before it."""

    def __init__(self):
        self.q = {"load": [], "ds": []}
        self.stores = 0
        self.km: set = set()

    def before(self, op: Op) -> list[str]:
        out = []
        touched = op.reads | op.writes
        for counter, name in (("load", "s_wait_loadcnt"), ("ds", "s_wait_dscnt")):
            q = self.q[counter]
            hit = max((i for i, regs in enumerate(q) if regs & touched), default=None)
            if hit is not None:
                out.append(f"{name} {len(q) - hit - 1}")
                del q[:hit + 1]
        if self.km & touched:
            out.append("s_wait_kmcnt 0")
            self.km = set()
        if op.counter == "load" and self.stores:
            out.append("s_wait_storecnt 0")      # a load sees the wave's earlier stores
            self.stores = 0
        return out

    def after(self, op: Op) -> None:
        if op.counter in ("load", "ds"):
            self.q[op.counter].append(set(op.writes))
        elif op.counter == "store":
            self.stores += 1
        elif op.counter == "km":
            self.km |= op.writes

    def all(self) -> list[str]:
        out = []
        if self.q["load"]:
            out.append("s_wait_loadcnt 0")
        if self.stores:
            out.append("s_wait_storecnt 0")
        if self.q["ds"]:
            out.append("s_wait_dscnt 0")
        if self.km:
            out.append("s_wait_kmcnt 0")
        self.__init__()
        return out


class _Renderer:
    def __init__(self, prog: Program):
        self.p = prog
        self.lines: list[str] = []
        self.w = Waits()
        self.label = 0
        self.subroutines: list[tuple[str, Block]] = []    # rendered after s_endpgm

    def emit(self, op: Op):
        for s in op.setup:
            self.emit(s)
        self.lines += ["  " + x for x in self.w.before(op)]
        self.lines.append("  " + op.text)
        self.w.after(op)

    def raw(self, text: str, reads=()):
        """A structure's own instruction; ``reads``: the random registers it reads (a load's
        destination among them waits for the load)."""
        self.emit(Op(text, frozenset(reads)))

    def sync(self):
        self.lines += ["  " + x for x in self.w.all()]

    def new_label(self, what: str) -> str:
        self.label += 1
        return f".L{what}{self.label}"

    def place(self, label: str):
        self.sync()
        self.lines.append(f"{label}:")

    def branch(self, text: str):
        self.sync()
        self.lines.append("  " + text)

    def nodes(self, body: list):
        for n in body:
            if isinstance(n, Op):
                self.emit(n)
            else:
                getattr(self, f"block_{n.kind}")(n)

    def block_barrier(self, b: Block):
        self.sync()
        self.lines += ["  s_barrier_signal -1", "  s_barrier_wait 0xffff"]

    def block_if(self, b: Block):
        saved, other = b.regs["saved"], b.regs["else"]
        self.nodes(b.head)
        if b.regs.get("saveexec"):
            self.raw(f"s_and_saveexec_b32 {saved}, vcc_lo")
        else:
            self.raw(f"s_mov_b32 {saved}, exec_lo")
            self.raw("s_and_b32 exec_lo, exec_lo, vcc_lo")
        self.raw(f"s_and_not1_b32 {other}, {saved}, exec_lo")
        then_end, end = self.new_label("else"), self.new_label("endif")
        self.branch(f"s_cbranch_execz {then_end}")
        self.nodes(b.bodies[0])
        self.place(then_end)
        if len(b.bodies) > 1:
            self.raw(f"s_mov_b32 exec_lo, {other}")
            self.branch(f"s_cbranch_execz {end}")
            self.nodes(b.bodies[1])
            self.place(end)
        self.raw(f"s_mov_b32 exec_lo, {saved}")

    def block_call(self, b: Block):
        t, ret = b.regs["target"], b.regs["ret"]
        lo, hi = t[2:-1].split(":")
        sub, here = self.new_label("sub"), self.new_label("pc")
        self.subroutines.append((sub, b))
        self.sync()
        self.lines += [f"  s_getpc_b64 {t}", f"{here}:", f"  s_add_co_u32 s{lo}, s{lo}, {sub}-{here}",
                       f"  s_add_co_ci_u32 s{hi}, s{hi}, 0", f"  s_swappc_b64 {ret}, {t}"]

    def subroutine(self, label: str, b: Block):
        self.lines.append(f"{label}:")
        self.nodes(b.bodies[0])
        self.branch(f"s_setpc_b64 {b.regs['ret']}")

    def block_exec(self, b: Block):
        saved = b.regs["saved"]
        self.raw(f"s_mov_b32 {saved}, exec_lo")
        self.nodes(b.head)
        self.nodes(b.bodies[0])
        self.raw(f"s_mov_b32 exec_lo, {saved}")

    def block_skip(self, b: Block):
        self.nodes(b.head)
        end = self.new_label("skip")
        self.branch(f"s_cbranch_{b.regs.get('branch', 'scc1')} {end}")
        self.nodes(b.bodies[0])
        self.place(end)

    def block_sloop(self, b: Block):
        c = b.regs["counter"]
        self.raw(f"s_and_b32 {c}, {b.regs['src']}, 3", reads=[b.regs["src"]])
        self.raw(f"s_add_co_u32 {c}, {c}, 1")
        top = self.new_label("sloop")
        self.place(top)
        self.nodes(b.bodies[0])
        self.raw(f"s_add_co_i32 {c}, {c}, -1")
        self.raw(f"s_cmp_lg_u32 {c}, 0")
        self.branch(f"s_cbranch_scc1 {top}")

    def block_vloop(self, b: Block):
        saved, c = b.regs["saved"], b.regs["counter"]
        self.raw(f"v_and_b32 {c}, 3, {b.regs['src']}", reads=[b.regs["src"]])
        self.raw(f"s_mov_b32 {saved}, exec_lo")
        top, out = self.new_label("vloop"), self.new_label("vexit")
        self.place(top)
        self.raw(f"v_cmp_ne_u32_e32 vcc_lo, 0, {c}")
        self.raw("s_and_b32 exec_lo, exec_lo, vcc_lo")
        self.branch(f"s_cbranch_execz {out}")
        self.nodes(b.bodies[0])
        self.raw(f"v_add_nc_u32 {c}, -1, {c}")
        self.branch(f"s_branch {top}")
        self.place(out)
        self.raw(f"s_mov_b32 exec_lo, {saved}")


def _prologue(r: _Renderer):
    L = r.p.layout
    for line in ("s_load_b64 s[2:3], s[0:1], 0x0", "s_load_b64 s[4:5], s[0:1], 0x8",
                 "s_load_b64 s[6:7], s[0:1], 0x10", "s_wait_kmcnt 0",
                 f"v_lshrrev_b32 v{DUMP_VGPR}, 5, v0", f"v_readfirstlane_b32 s9, v{DUMP_VGPR}",
                 f"s_mul_i32 s8, ttmp9, {L.waves}", "s_add_co_u32 s8, s8, s9",
                 f"s_mul_i32 s12, s8, {L.record_dwords * 4}", f"s_mul_i32 s13, s8, {L.data_slice}",
                 f"s_mul_i32 s10, s9, {L.lds_slice}",
                 "v_and_b32 v1, 31, v0", "v_lshlrev_b32 v1, 2, v1", "s_mov_b32 s11, exec_lo"):
        r.lines.append("  " + line)
    # every random register gets a value that differs by wave
    for k, v in r.p.init_sgprs.items():
        r.lines.append(f"  s_mov_b32 s{k}, 0x{v:x}")
        if k % 3 == 0:
            r.lines.append(f"  s_xor_b32 s{k}, s{k}, s8")
    r.lines += ["  s_mov_b32 vcc_lo, 0x{:x}".format(r.p.seed & 0xFFFFFFFF), "  s_mov_b32 m0, s8"]
    for k, init in r.p.init_vgprs.items():
        if init[0] == "const":
            r.lines.append(f"  global_load_b32 v{k}, v1, s[6:7] offset:{init[1]}")
        else:
            r.lines.append(f"  v_mad_u32_u24 v{k}, v0, 0x{init[1]:x}, s{RAND_SGPRS[k % len(RAND_SGPRS)]}")
    # the LDS slice (and, by wave 0, the shared slice) from the data buffer: defined values
    r.lines += ["  s_wait_loadcnt 0",
                f"  v_lshlrev_b32 v{ADDR_VGPR}, 4, v0",           # 16 bytes per lane: the 512-byte slice
                f"  v_and_b32 v{ADDR_VGPR}, 0x1f0, v{ADDR_VGPR}",
                f"  global_load_b128 v[{DUMP_VGPR - 3}:{DUMP_VGPR}], v{ADDR_VGPR}, s[6:7]",
                f"  v_add_nc_u32 v{ADDR_VGPR}, s10, v{ADDR_VGPR}",
                "  s_wait_loadcnt 0",
                f"  ds_store_b128 v{ADDR_VGPR}, v[{DUMP_VGPR - 3}:{DUMP_VGPR}]",
                "  s_cmp_eq_u32 s9, 0", "  s_cbranch_scc0 .Lshared_init",
                f"  v_lshlrev_b32 v{ADDR_VGPR}, 1, v1",
                f"  v_add_nc_u32 v{ADDR_VGPR}, {L.waves * L.lds_slice}, v{ADDR_VGPR}",
                f"  ds_store_b64 v{ADDR_VGPR}, v[{DUMP_VGPR - 1}:{DUMP_VGPR}]",
                ".Lshared_init:", "  s_wait_dscnt 0",
                "  s_barrier_signal -1", "  s_barrier_wait 0xffff"]


def _epilogue(r: _Renderer):
    L = r.p.layout
    r.sync()
    lines = ["s_cselect_b32 s38, 1, 0", "s_mov_b32 s39, exec_lo", "s_mov_b32 exec_lo, s11",
             f"v_add_nc_u32 v{ADDR_VGPR}, s12, v1"]
    for i, k in enumerate(RAND_VGPRS):
        lines.append(f"global_store_b32 v{ADDR_VGPR}, v{k}, s[2:3] offset:{i * 128}")
    state = [f"s{k}" for k in RAND_SGPRS] + ["s38", "s39", "vcc_lo", "m0"]
    for lane, reg in enumerate(state):
        lines.append(f"v_writelane_b32 v{DUMP_VGPR}, {reg}, {lane}")
    lines.append(f"global_store_b32 v{ADDR_VGPR}, v{DUMP_VGPR}, s[2:3] offset:{len(RAND_VGPRS) * 128}")
    # LDS: the wave's slice, and the workgroup's shared slice (wave 0), once every wave is done
    base = (len(RAND_VGPRS) + 1) * 128
    lines += ["s_wait_dscnt 0", "s_barrier_signal -1", "s_barrier_wait 0xffff",
              "v_lshlrev_b32 v2, 2, v1", "v_add_nc_u32 v3, s10, v2",
              "ds_load_b128 v[4:7], v3", "v_add_nc_u32 v3, s12, v2", "s_wait_dscnt 0",
              f"global_store_b128 v3, v[4:7], s[2:3] offset:{base}",
              "s_cmp_eq_u32 s9, 0", "s_cbranch_scc0 .Lend",
              "v_lshlrev_b32 v2, 1, v1", f"v_add_nc_u32 v3, {L.waves * L.lds_slice}, v2",
              "ds_load_b64 v[4:5], v3", "v_add_nc_u32 v3, s12, v2", "s_wait_dscnt 0",
              f"global_store_b64 v3, v[4:5], s[2:3] offset:{base + L.lds_slice}",
              ".Lend:", "s_endpgm"]
    r.lines += [x if x.endswith(":") else "  " + x for x in lines]


def _render(prog: Program, name: str) -> str:
    r = _Renderer(prog)
    _prologue(r)
    L = prog.layout
    r.lines += [f"  s_mov_b32 {SHARED_DATA}, {L.total_waves * L.data_slice}",
                f"  s_mov_b32 {SHARED_LDS}, {L.waves * L.lds_slice}"]
    r.nodes(prog.body)
    _epilogue(r)
    for label, b in r.subroutines:
        r.subroutine(label, b)
    body = "\n".join(r.lines)
    return _KERNEL.format(name=name, body=body, vgprs=VGPRS, sgprs=SGPRS, lds=L.lds_bytes)


_KERNEL = """// generated by dcu.verify
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl {name}
  .p2align 8
  .type {name},@function
{name}:
{body}
.L{name}_end:
  .size {name}, .L{name}_end-{name}
  .rodata
  .p2align 6
  .amdhsa_kernel {name}
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_count 2
    .amdhsa_wavefront_size32 1
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_next_free_vgpr {vgprs}
    .amdhsa_next_free_sgpr {sgprs}
    .amdhsa_group_segment_fixed_size {lds}
    .amdhsa_kernarg_size 24
    .amdhsa_float_denorm_mode_32 3
    .amdhsa_workgroup_processor_mode 0
  .end_amdhsa_kernel
"""
