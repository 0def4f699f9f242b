"""VALUInt (hdl/simd/valu_int.py, one shared datapath per lane) against the reference model, bit
for bit.

Every integer VALU opcode the unit implements runs random vectors (edge values 0, 1,
0x7fffffff, 0x80000000, 0xffffffff, 16-bit edges, small and >= 32 shift amounts, bit-field
widths 0 and 31, perm selectors 0-16) through Amaranth's simulator on the lane counts the
presets build (``WIDTHS``: 4, the ``fpga`` preset's lane group, and 32, ``default``'s). Each
vector is also executed by the model's own instruction handler (``sim.execute.build`` on a
VOP3/VOP3SD instruction over a ``sim.wave.Wave``), so the comparison covers the model's
operand plumbing, ``op_sel`` halves, ``clamp``, carries and lane masks, not just its tables.
All vectors run in one simulation, a pass a cycle (an op with a 64-bit source or result in
two): a harness drives every data input from one packed signal, so each pass is one
``ctx.set``. Amaranth's simulator evaluates the whole datapath on every pass, so the 32-lane
unit runs fewer of them.

Every op the model executes with ``clamp`` (``WITH_CLAMP``: the saturating 16-bit and 32-bit
ops, and those that ignore it) also runs every pair of ``CLAMP_EDGES`` (with the addends of
``CLAMP_ADDENDS`` on three-operand ops) with ``clamp`` set, so each saturation limit is met,
exceeded by one and missed by one; the model decides the results. The 64-bit multiply-adds,
whose ``clamp`` the unit refuses, run those pairs with the addends of ``MAD64_ADDENDS``, next
to the 64-bit limits, without it.

Also checked: the set of implemented opcodes equals the model's integer VALU set; every other
opcode, ``op_sel`` on a plain 32-bit op and ``clamp`` on exactly the ops whose clamp the model
rejects (it raises ``ModelError``) and on the 64-bit multiply-adds are ``illegal``; 8 lanes;
the products from the multiplier the ``fpga`` preset shares with the FP32 unit; one
multiplier per lane; ``v_mbcnt_lo`` in a lane group; every opcode back to back, a 64-bit
one's two passes on consecutive cycles; Verilog conversion and ``verilator --lint-only``.

A note on the model: ``sim.vector.cls`` (v_cls_i32) returns clz(x) - 1 where the ISA
pseudocode (and ``sim.scalar`` for s_cls_i32) returns clz(x), x being S0 XORed with its sign
(e.g. v_cls_i32(0x40000000) is 0 in the model, 1 in the ISA). The RTL follows the model.
"""
from __future__ import annotations

import random
import re

import numpy as np
import pytest
from amaranth.hdl import Cat, Module, Signal
from amaranth.sim import Simulator

from isa import Fmt, Inst, by_name
from hdl.isa_tables import OpId, info_of, ops_of
from hdl.simd.lanemul import LaneMultiplier
from hdl.simd.valu_int import CLAMP_REFUSED, IMPLEMENTED, VALUInt, two_passes
from sim import execute as X
from sim.valu_ext import INT_CLAMP_OPS
from sim.packed import BUILDERS as MODEL_PACKED
from sim.valu_f16 import BUILDERS as MODEL_16BIT_FLOAT_AND_COMPARE
from sim.wave import EXEC, ModelError, Wave
from tests.lint import convert_and_lint

SEED = 20250622
LANES = 32              # of a wave (the model's vectors)
WIDTHS = {4: 60, 32: 8}     # unit lanes -> random vectors per opcode
SDST, SCIN = 10, 12     # SGPRs of the carry-out / compare result and of the carry-in / select
EDGE32 = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFFE, 0x7FFF, 0x8000,
          0xFFFF, 0x1_0000, 0xFFFF_8000, 0x0000_7FFF, 31, 32, 33, 63, 64, 0x00FF_FFFF,
          0x0080_0000, 0xFF80_0000]

# -------------------------------------------------------------------------- the model side
_FLOAT_VALU = set(X.VFLOAT) | {"v_fmac_f32", "v_fmamk_f32", "v_fmaak_f32"}
_FLOAT_NAME = re.compile(r"_[fF](16|32|64)(_|$)")     # any other floating-point VALU op
# lane crossings (the SIMD's own) and permutations (model only: sim/lanes.py)
_LANE_CROSSING = {"v_readfirstlane_b32", "v_readlane_b32", "v_writelane_b32", "v_permlane16_b32",
                  "v_permlanex16_b32", "v_permlane16_var_b32", "v_permlanex16_var_b32"}


def _model_integer_valu() -> set[str]:
    """Integer VALU mnemonics the model implements: what VALUInt must implement."""
    out = set()
    for op in ops_of("valu"):
        n = op.name.lower()
        if n.startswith(("v_cmp_", "v_cmpx_")):        # the integer compares, 16-bit ones too
            if n in X.IMPLEMENTED and n.split("_")[3] in ("i16", "u16", "i32", "u32", "i64", "u64"):
                out.add(n)
            continue
        if n not in X.IMPLEMENTED or n in _FLOAT_VALU or _FLOAT_NAME.search(n) or n in _LANE_CROSSING \
                or n in MODEL_16BIT_FLOAT_AND_COMPARE:   # model only (the packed float ops: by name)
            continue
        out.add(n)
    return out


def _inst(name: str, opsel: int, clamp: int) -> Inst:
    """The VOP3 (VOP3SD, VOP3P) instruction of ``name`` over v0-v1, v2-v3, v4-v5 into v6; for
    a packed op, ``opsel`` bits 0-2 are op_sel and bits 4-6 op_sel_hi."""
    info = by_name(name)
    if name in MODEL_PACKED:
        f = {"vdst": 6, "src0": 256 + 0, "src1": 256 + 2, "src2": 256 + 4, "neg": 0, "neg_hi": 0,
             "opsel": opsel & 7, "opsel_hi": opsel >> 4 & 7, "clamp": clamp}
        return Inst(info=info, fmt=Fmt.VOP3P, pc=0, words=(0, 0), size=8, literal=None, f=f)
    vop3sd = "carry_out" in info.flags
    f = {"vdst": 6, "src0": 256 + 0, "src1": 256 + 2, "src2": 256 + 4, "neg": 0, "omod": 0,
         "clamp": clamp}
    if vop3sd:
        f["sdst"] = SDST
        if info.name.endswith("_co_ci_u32"):
            f["src2"] = SCIN
    else:
        f.update(abs=0, opsel=opsel)
        if name.startswith("v_cmp_"):
            f["vdst"] = SDST
        if name == "v_cndmask_b32":
            f["src2"] = SCIN
    return Inst(info=info, fmt=Fmt.VOP3SD if vop3sd else Fmt.VOP3, pc=0, words=(0, 0), size=8,
                literal=None, f=f)


class Model:
    """Runs one vector through the model's handler for (name, opsel, clamp)."""

    def __init__(self):
        self._handlers = {}
        self.w = Wave(0, 8, 0)

    def handler(self, name, opsel, clamp):
        key = (name, opsel, clamp)
        if key not in self._handlers:
            self._handlers[key] = X.build(_inst(name, opsel, clamp))
        return self._handlers[key]

    def run(self, name, opsel, clamp, a, b, c, mask_in, d_old):
        """a, b, c: uint64[32]; d_old: uint32[32] -> (d uint64[32], mask int)."""
        w = self.w
        w.v[:] = 0
        for r, x in ((0, a), (2, b), (4, c)):
            w.v[r] = (x & 0xFFFF_FFFF).astype(np.uint32)
            w.v[r + 1] = (x >> np.uint64(32)).astype(np.uint32)
        w.v[6] = d_old
        w.s[:] = [0] * 128
        w.s[EXEC] = 0xFFFF_FFFF
        w.s[SCIN] = mask_in
        self.handler(name, opsel, clamp)(w, None)
        d = w.v[6].astype(np.uint64) | (w.v[7].astype(np.uint64) << np.uint64(32))
        mask = w.s[EXEC] if name.startswith("v_cmpx_") else w.s[SDST]
        return d, mask


# -------------------------------------------------------------------------- stimulus
def _values(rnd: random.Random, n: int, kind: str) -> list[int]:
    out = []
    for _ in range(n):
        r = rnd.random()
        if kind == "perm":                      # selector bytes, mostly 0-16
            x = sum((rnd.randrange(17) if rnd.random() < 0.85 else rnd.randrange(256)) << (8 * k)
                    for k in range(4))
        elif r < 0.35:
            x = rnd.choice(EDGE32)
        elif r < 0.5:
            x = rnd.randrange(70)               # shift amounts, widths, small numbers
        elif r < 0.6:                           # 16-bit edges in either half
            x = rnd.choice([0, 1, 0x7FFF, 0x8000, 0xFFFF, rnd.getrandbits(16)]) << rnd.choice([0, 16])
            x |= rnd.choice([0, 1, 0x7FFF, 0x8000, 0xFFFF, rnd.getrandbits(16)])
        else:
            x = rnd.getrandbits(32)
        hi = rnd.choice([0, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, rnd.getrandbits(32), rnd.getrandbits(32)])
        out.append((hi << 32) | x)
    return out


def _random_opsel(rnd: random.Random, name: str) -> int:
    """op_sel (bits 0-3); a packed op's op_sel and op_sel_hi (bits 0-2, 4-6)."""
    if name in MODEL_PACKED:
        return rnd.getrandbits(3) | rnd.getrandbits(3) << 4
    return rnd.getrandbits(4)


def _vector(rnd: random.Random, name: str):
    kinds = ["any", "any", "perm" if name == "v_perm_b32" else "any"]
    a, b, c = (np.array(_values(rnd, LANES, k), np.uint64) for k in kinds)
    if rnd.random() < 0.15:             # uniform sources (a scalar operand broadcast)
        a = np.full(LANES, a[0], np.uint64)
    if rnd.random() < 0.1:
        b = a.copy()                    # equal operands: compares, min/max, subtractions
    mask_in = rnd.choice([0, 0xFFFF_FFFF, rnd.getrandbits(32), rnd.getrandbits(32)])
    d_old = np.array([rnd.getrandbits(32) for _ in range(LANES)], np.uint32)
    # op_sel and clamp: random, except on the plain 32-bit ops (VINT), where the model rejects
    # op_sel, and clamp but on the ones it saturates (INT_CLAMP_OPS; test_illegal)
    opsel, clamp = _random_opsel(rnd, name), rnd.getrandbits(1)
    if name in X.VINT:
        opsel, clamp = 0, clamp if name in INT_CLAMP_OPS else 0
    if name in CLAMP_REFUSED:
        clamp = 0
    return a, b, c, mask_in, d_old, opsel, clamp


def _pack64(x: np.ndarray) -> int:
    return int.from_bytes(x.astype("<u8").tobytes(), "little")


def _pack32(x: np.ndarray) -> int:
    return int.from_bytes(x.astype("<u4").tobytes(), "little")


def _unpack64(v: int, lanes: int = LANES) -> np.ndarray:
    return np.frombuffer(v.to_bytes(8 * lanes, "little"), "<u8").astype(np.uint64)


class Harness:
    """A VALUInt with every data input driven from one packed signal ``stim``; with
    ``shared_mul`` its products come from a ``hdl.simd.lanemul.LaneMultiplier`` (the fpga
    preset's)."""

    def __init__(self, lanes: int = LANES, shared_mul: bool = False):
        self.lanes = lanes
        self.dut = VALUInt(lanes, external_mul=shared_mul)
        self.m = Module()
        self.m.submodules.dut = d = self.dut
        if shared_mul:
            self.m.submodules.mul = mul = LaneMultiplier(lanes)
            self.m.d.comb += [mul.int_x.eq(d.mul_x), mul.int_y.eq(d.mul_y), d.mul_p.eq(mul.p)]
        self.fields = [d.a, d.b, d.c, d.mask_in, d.d_old, d.opsel, d.opsel_hi, d.clamp]
        self.stim = Signal(sum(len(f) for f in self.fields))
        self.m.d.comb += Cat(*self.fields).eq(self.stim)

    def pack(self, a, b, c, mask_in, d_old, opsel, clamp) -> int:
        n = self.lanes
        vals = [_pack64(a[:n]), _pack64(b[:n]), _pack64(c[:n]), mask_in & ((1 << n) - 1),
                _pack32(d_old[:n]), opsel & 15, opsel >> 4, clamp]
        out, off = 0, 0
        for f, v in zip(self.fields, vals):
            out |= v << off
            off += len(f)
        return out


def _stream(harness: Harness, vectors) -> list:
    """vectors: [(name, vector, lane_base), ...] -> [(d, mask_out, illegal), ...].

    A pass a cycle (an op of :func:`two_passes`: a low and a high pass on consecutive
    cycles), its results two cycles later; ``d`` packs each lane's words as one 64-bit lane,
    ``mask_out`` is the last pass's and ``illegal`` the first's."""
    dut, lanes = harness.dut, harness.lanes
    seq = [(k, name, vec, base, hi) for k, (name, vec, base) in enumerate(vectors)
           for hi in range(1 + two_passes(name))]
    got = []

    async def bench(ctx):
        illegal = []
        for t in range(len(seq) + 2):
            if t < len(seq):
                _, name, vec, base, hi = seq[t]
                ctx.set(dut.op, OpId[name.upper()])
                ctx.set(dut.hi, hi)
                ctx.set(dut.lane_base, base)
                ctx.set(harness.stim, harness.pack(*vec))
                illegal.append(ctx.get(dut.illegal))
            else:
                ctx.set(dut.op, OpId.NONE)
            if t >= 2:
                got.append((ctx.get(dut.d), ctx.get(dut.mask_out), illegal[t - 2]))
            await ctx.tick()
    sim = Simulator(harness.m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    out = []
    for (k, name, _, _, hi), (d, mask, illegal) in zip(seq, got):
        words = [(d >> (32 * i)) & 0xFFFF_FFFF for i in range(lanes)]
        if hi and name in MODEL_PACKED:     # the high pass: a packed op's whole result
            out[k] = (sum(w << (64 * i) for i, w in enumerate(words)), mask, out[k][2])
        elif hi:                            # each lane's high word
            low, _, first_illegal = out[k]
            out[k] = (low | sum(w << (64 * i + 32) for i, w in enumerate(words)), mask, first_illegal)
        else:
            out.append((sum(w << (64 * i) for i, w in enumerate(words)), mask, illegal))
    return out


def _run(harness: Harness, jobs):
    """jobs: list of (name, [vector, ...]) -> {name: [(d, mask_out, illegal), ...]}, all in
    one :func:`_stream` with lane base 0."""
    got = iter(_stream(harness, [(name, vec, 0) for name, vectors in jobs for vec in vectors]))
    return {name: [next(got) for _ in vectors] for name, vectors in jobs}


# -------------------------------------------------------------------------- tests
def test_implemented_set_is_the_models_integer_valu():
    assert set(IMPLEMENTED) == _model_integer_valu()


@pytest.fixture(scope="module", params=sorted(WIDTHS))
def results(request):
    """(lanes, jobs, results): every opcode on a unit of ``lanes`` lanes."""
    rnd = random.Random(f"{SEED}-{request.param}")
    lanes, names = request.param, sorted(IMPLEMENTED)
    jobs = [(n, [_vector(rnd, n) for _ in range(WIDTHS[lanes])]) for n in names]
    return lanes, jobs, _run(Harness(lanes), jobs)


def _check(name, vec, got, model: Model, lanes: int = LANES):
    a, b, c, mask_in, d_old, opsel, clamp = vec
    d, mask_out, illegal = got
    ctx = f"{name} opsel={opsel} clamp={clamp}"
    assert illegal == 0, ctx
    if name == "v_nop":
        return
    want_d, want_mask = model.run(name, opsel, clamp, a, b, c, mask_in, d_old)
    lane_mask = (1 << lanes) - 1
    info = info_of(OpId[name.upper()])
    if name.startswith(("v_cmp_", "v_cmpx_")) or "_co_" in name:
        assert mask_out == want_mask & lane_mask, f"{ctx}: mask_out {mask_out:#x} != {want_mask & lane_mask:#x}"
    if name.startswith(("v_cmp_", "v_cmpx_")):
        return
    got_d = _unpack64(d, lanes)
    bits = info.dst_bits
    keep = np.uint64((1 << bits) - 1)
    want = want_d[:lanes] & keep
    bad = np.nonzero((got_d & keep) != want)[0]
    if len(bad):
        i = bad[0]
        pytest.fail(f"{ctx}: lane {i}: a={int(a[i]):#x} b={int(b[i]):#x} c={int(c[i]):#x} "
                    f"mask_in={mask_in:#x} d_old={int(d_old[i]):#x}: got {int(got_d[i]):#x}, "
                    f"model {int(want[i]):#x}")
    if bits == 32:
        assert not np.any(got_d >> np.uint64(32)), f"{ctx}: high half of a 32-bit result"


@pytest.mark.parametrize("name", sorted(IMPLEMENTED))
def test_op_matches_model(results, name):
    lanes, jobs, out = results
    vectors = dict(jobs)[name]
    assert len(vectors) == WIDTHS[lanes] and len(out[name]) == len(vectors)
    model = Model()
    for vec, got in zip(vectors, out[name]):
        _check(name, vec, got, model, lanes)


def test_illegal():
    """Every other opcode, and clamp/op_sel on a plain 32-bit op (the model rejects them)."""
    rnd = random.Random(SEED + 1)
    others = [op.name.lower() for op in OpId if op is not OpId.NONE and op.name.lower() not in IMPLEMENTED]
    plain = sorted(n for n in IMPLEMENTED if n in X.VINT)
    jobs = [(n, [_vector(rnd, "v_mov_b32")]) for n in others]
    flagged = []
    for n in plain:
        vec = list(_vector(rnd, n))
        # clamp alone is legal (saturating) in the model on INT_CLAMP_OPS: op_sel only there
        vec[5], vec[6] = rnd.choice([(1, 0), (8, 0)] + ([] if n in INT_CLAMP_OPS else [(0, 1), (3, 1)]))
        flagged.append((n, tuple(vec)))
        jobs.append((n, [tuple(vec)]))
    out = _run(Harness(4), jobs)
    for n in others:
        assert out[n][0][2] == 1, n
    model = Model()
    for n, vec in flagged:
        assert out[n][0][2] == 1, n
        with pytest.raises(ModelError):
            model.handler(n, vec[5], vec[6])


def _accepts_clamp(name: str) -> bool:
    """Whether the model executes ``name`` with VOP3 ``clamp`` set (saturating, or ignoring it
    as on compares) rather than rejecting it."""
    try:
        X.build(_inst(name, 0, 1))
    except ModelError:
        return False
    return True


#: The implemented ops the model executes with ``clamp``.
WITH_CLAMP = sorted(n for n in IMPLEMENTED if _accepts_clamp(n))

# Edge operands for clamp: the limits of every destination type and of the 24-bit multiplier
# operands; their pairs meet every boundary of a sum, difference or product.
CLAMP_EDGES = [0, 1, 2, 0x7FFF, 0x8000, 0xFFFF, 0x7F_FFFF, 0x80_0000, 0xFF_FFFF, 0xFF80_0000,
               0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF]
CLAMP_ADDENDS = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]
_I64, _M64 = 1 << 63, (1 << 64) - 1
# S2 of v_mad_co_*: 0, the 64-bit limits, and each side of the limit next to the extreme
# products, 0xffffffff^2 (unsigned), 2^62 and -(2^62 - 2^31) (signed)
MAD64_ADDENDS = [0, 1, _M64, _I64 - 1, _I64, (1 << 33) - 2, (1 << 33) - 1, _I64 - (1 << 62) - 1,
                 _I64 - (1 << 62), (-_I64 + (1 << 62) - (1 << 31)) & _M64, (-_I64 + (1 << 62) - (1 << 31) - 1) & _M64]


def _clamp_vectors(rnd: random.Random, name: str, lanes: int, clamp: int = 1) -> list:
    """Every pair of ``CLAMP_EDGES`` as S0 and S1, with each S2 of ``CLAMP_ADDENDS`` (of
    ``MAD64_ADDENDS`` for v_mad_co_*) on a three-operand op, in vectors of ``lanes`` lanes
    (the last filled up with the first triples), ``clamp`` set, ``op_sel`` random where the
    model takes it, carry-in and old destination random."""
    n3 = len(info_of(OpId[name.upper()]).src_bits) > 2
    addends = (MAD64_ADDENDS if name.startswith("v_mad_co_") else CLAMP_ADDENDS) if n3 else [0]
    triples = [(a, b, c) for a in CLAMP_EDGES for b in CLAMP_EDGES for c in addends]
    triples += triples[:-len(triples) % lanes]
    out = []
    for k in range(0, len(triples), lanes):
        a, b, c = (np.array(x, np.uint64) for x in zip(*triples[k:k + lanes]))
        a, b, c = (np.resize(x, LANES) for x in (a, b, c))      # the model's wave has 32 lanes
        d_old = np.array([rnd.getrandbits(32) for _ in range(LANES)], np.uint32)
        opsel = 0 if name in X.VINT else _random_opsel(rnd, name)
        out.append((a, b, c, rnd.getrandbits(32), d_old, opsel, clamp))
    return out


def test_clamp_at_the_edges():
    """Every op the model executes with ``clamp`` (saturating 16-bit and 32-bit ops,
    carries; compares and selects ignore it) but the unit's :data:`CLAMP_REFUSED`, on edge
    operands that land on and around every saturation limit, against the model's handler."""
    assert set(INT_CLAMP_OPS) & IMPLEMENTED <= set(WITH_CLAMP)
    rnd = random.Random(SEED + 6)
    lanes = 4
    jobs = [(n, _clamp_vectors(rnd, n, lanes)) for n in WITH_CLAMP if n not in CLAMP_REFUSED]
    out = _run(Harness(lanes), jobs)
    model = Model()
    for n, vectors in jobs:
        for vec, got in zip(vectors, out[n]):
            _check(n, vec, got, model, lanes)


def test_wide_multiply_adds_at_the_edges():
    """``v_mad_co_u64_u32``/``v_mad_co_i64_i32`` (two passes: the high one adds the low one's
    carry) on the edge operands, with the addends next to the 64-bit limits: each result and
    carry-out against the model's handler."""
    rnd = random.Random(SEED + 8)
    jobs = [(n, _clamp_vectors(rnd, n, 4, clamp=0)) for n in sorted(CLAMP_REFUSED)]
    out = _run(Harness(4), jobs)
    model = Model()
    for n, vectors in jobs:
        for vec, got in zip(vectors, out[n]):
            _check(n, vec, got, model, 4)


def test_clamp_is_illegal_where_the_model_rejects_it():
    """``clamp`` alone (no ``op_sel``) raises ``illegal`` on exactly the implemented ops whose
    clamp the model rejects, and on the 64-bit multiply-adds (:data:`CLAMP_REFUSED`)."""
    rnd = random.Random(SEED + 7)
    jobs = [(n, [_vector(rnd, "v_mov_b32")[:5] + (0, 1)]) for n in sorted(IMPLEMENTED)]
    out = _run(Harness(4), jobs)
    assert sorted(n for n, _ in jobs if not out[n][0][2]) == sorted(set(WITH_CLAMP) - CLAMP_REFUSED)


def test_other_lane_count():
    """Another lane count (8) on ops that depend on the lane index or on masks."""
    lanes = 8
    rnd = random.Random(SEED + 2)
    names = ["v_mbcnt_lo_u32_b32", "v_cndmask_b32", "v_add_co_ci_u32", "v_cmp_lt_i32",
             "v_mad_co_i64_i32", "v_mad_u16", "v_cls_i32", "v_perm_b32", "v_med3_i32"]
    jobs = [(n, [_vector(rnd, n) for _ in range(20)]) for n in names]
    out = _run(Harness(lanes), jobs)
    model = Model()
    for n, vectors in jobs:
        for vec, got in zip(vectors, out[n]):
            _check(n, vec, got, model, lanes=lanes)


MULTIPLIES = sorted(n for n in IMPLEMENTED if "_mul_" in n or "_mad_" in n)


def test_shared_multiplier():
    """The multiply ops (and v_lshl_add_u32, a multiply by 1 << S1) with the
    products from the multiplier the fpga preset shares with the FP32 unit."""
    assert len(MULTIPLIES) == 19, MULTIPLIES
    rnd = random.Random(SEED + 3)
    names = MULTIPLIES + ["v_lshl_add_u32"]
    jobs = [(n, [_vector(rnd, n) for _ in range(50)]) for n in names]
    out = _run(Harness(8, shared_mul=True), jobs)
    model = Model()
    for n, vectors in jobs:
        for vec, got in zip(vectors, out[n]):
            _check(n, vec, got, model, lanes=8)


def test_one_multiplier_per_lane():
    """The RTLIL has one data multiplier per lane for the 19 multiply ops (synthesis maps each
    to DSP blocks: docs/fpga.md), none with an external multiplier. (The other ``$mul``
    cells scale bit indices by small constants.)"""
    from amaranth.back import rtlil
    for external, want in ((False, [(33, 33)] * 4), (True, [])):
        text = rtlil.convert(VALUInt(4, external_mul=external), name="valu_int")
        cells = re.findall(r"cell \$mul \S+\n((?:\s+parameter.*\n)+)", text)
        widths = [tuple(int(w) for w in re.findall(r"parameter \\[AB]_WIDTH (\d+)", c)) for c in cells]
        assert [w for w in widths if min(w) >= 16] == want, external


@pytest.mark.parametrize("lanes", [4, 8])
def test_verilog_lint(lanes, tmp_path):
    """The unit (the 32-lane unit is linted in the SIMD, tests/test_simd.py)."""
    convert_and_lint(VALUInt(lanes), "valu_int", tmp_path)


def test_mbcnt_counts_below_the_wave_lane():
    """A 4-lane unit serving lane group ``lane_base / 4`` of a wave: ``v_mbcnt_lo_u32_b32`` in
    its lane ``i`` counts S0's bits below wave lane ``lane_base + i``, plus S1 (the ISA's
    ThreadMask); ``v_mbcnt_hi_u32_b32`` (wave32) is S1."""
    rnd = random.Random(SEED + 4)
    zero = np.zeros(LANES, np.uint64)
    cases = [(op, base, np.array([rnd.getrandbits(32) | (1 << 31) for _ in range(LANES)], np.uint64),
              np.array([rnd.getrandbits(32) for _ in range(LANES)], np.uint64))
             for op in ("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32") for base in (0, 4, 12, 28)]
    got = _stream(Harness(4), [(op, (a, b, zero, 0, np.zeros(LANES, np.uint32), 0, 0), base)
                               for op, base, a, b in cases])
    for (op, base, a, b), (d, _, _) in zip(cases, got):
        for i in range(4):
            below = bin(int(a[i]) & ((1 << (base + i)) - 1)).count("1") if op.endswith("lo_u32_b32") else 0
            assert (d >> (64 * i)) & 0xFFFF_FFFF == (below + int(b[i])) & 0xFFFF_FFFF, (op, base, i)


def test_ops_back_to_back():
    """A different operation every cycle (every opcode, shuffled, a 64-bit one's two passes on
    consecutive cycles), with the shared multiplier and the wave lane of the group changing
    every cycle; each result and lane mask two cycles after its pass equals the model's,
    ``illegal`` answers in the same cycle."""
    rnd = random.Random(SEED + 5)
    lanes = 4
    h = Harness(lanes, shared_mul=True)
    stream = [(n, _vector(rnd, n), rnd.randrange(0, LANES, lanes)) for n in sorted(IMPLEMENTED) for _ in range(8)]
    rnd.shuffle(stream)
    got = _stream(h, stream)
    assert len(got) == len(stream)
    model = Model()
    for (name, vec, base), out in zip(stream, got):
        if name == "v_mbcnt_lo_u32_b32":   # counts below wave lane base + i (the model's group is lanes 0..3)
            a, b = vec[0], vec[1]
            d = _unpack64(out[0], lanes)
            for i in range(lanes):
                below = bin(int(a[i]) & 0xFFFF_FFFF & ((1 << (base + i)) - 1)).count("1")
                assert int(d[i]) == (below + int(b[i])) & 0xFFFF_FFFF, (base, i)
        else:
            _check(name, vec, out, model, lanes)
