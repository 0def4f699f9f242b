"""VALUFloat (hdl/simd/valu_fp.py) against the model's FP32 semantics, bit for bit.

The oracle is the model itself: ``sim.execute.VFLOAT`` (the model's table of FP32 VALU ops,
which calls ``sim.fp32``), ``sim.fp32.compare`` / ``cmp_class`` for the compares and
``sim.fp32.fma`` for v_fmac/fmaak/fmamk, with the input modifiers and omod/clamp applied as
``sim/execute.py`` applies them (abs then neg on the source bits; omod = fp32.mul by 2, 4 or
0.5, then clamp01).

* Every operation: IEEE corner cases (a grid of edge values: signed zeros, infinities, quiet and
  signalling NaNs with payloads, denormals, the normal/denormal boundary, the largest finite
  value, ties), and ``RANDOM_VECTORS`` random 32-lane vectors (32 operand triples each) drawn
  to hit denormals, near-overflow, cancellation, ties, NaNs and infinities, a quarter of them
  with random abs/neg/omod/clamp modifiers.
* All vectors go through one Amaranth simulation (one testbench looping ctx.set / ctx.get on
  the combinational unit); the speed in vectors/s is printed by ``test_speed_report``.
* Hand-written expected results for a few rules (NaN priority, signed zeros, single rounding of
  fma, denormal rounding, overflow) so that a shared mistake of model and RTL cannot hide.
* ``illegal`` for every op the unit does not execute; Verilog conversion + Verilator lint.

``bench/fp32_rtl_campaign.py`` runs the same checks with >= 100,000 operand triples per op.
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.sim import Simulator

from hdl.isa_tables import OpId, info_of
from hdl.simd.lanemul import LaneMultiplier
from hdl.simd.valu_fp import FP_OPS, FUSED_OPS, VALUFloat
from sim import execute as X
from sim import fp32 as F
from tests.lint import convert_and_lint

U32 = np.uint32
LANES = 32
RANDOM_VECTORS = 1000         # per op: 32,000 random operand triples
SEED = 0x5EED_F32

QNAN, SNAN = 0x7FC0_0000, 0x7F80_0001
PINF, NINF = 0x7F80_0000, 0xFF80_0000
PZERO, NZERO = 0x0000_0000, 0x8000_0000
ONE, MONE = 0x3F80_0000, 0xBF80_0000
MAXF, MINN, MIND = 0x7F7F_FFFF, 0x0080_0000, 0x0000_0001

#: Edge values for the corner-case grids.
EDGES = np.array([
    PZERO, NZERO, PINF, NINF, QNAN, 0xFFC0_0000, 0x7FC1_2345, 0xFFE0_0001,      # zeros, inf, qNaN
    SNAN, 0xFF80_0001, 0x7FBF_FFFF, 0xFFA0_0000,                                # sNaN payloads
    MIND, 0x8000_0001, 0x007F_FFFF, 0x807F_FFFF, 0x0040_0000, 0x0000_0003,      # denormals
    MINN, 0x8080_0000, 0x0080_0001, MAXF, 0xFF7F_FFFF, 0x7F00_0000,             # boundaries
    ONE, MONE, 0x3F00_0000, 0xBF00_0000, 0x3FC0_0000, 0x4020_0000, 0xC020_0000, # 1, 0.5, 1.5, 2.5
    0x3EFF_FFFF, 0x3F7F_FFFF, 0x3F80_0001, 0x4B00_0000, 0x4B00_0001, 0xCB00_0001,  # ties, 2^23
    0x4EFF_FFFF, 0x4F00_0000, 0xCF00_0000, 0x4F80_0000, 0x3380_0000, 0xB380_0000,  # 2^31, 2^32
    0x3300_0000, 0xB300_0001, 0x4000_0000, 0x4080_0000,
], dtype=U32)
#: A smaller edge set for the three-operand grids.
EDGES3 = np.array([PZERO, NZERO, PINF, NINF, QNAN, 0xFFC1_2345, SNAN, 0xFF80_0002, MIND,
                   0x807F_FFFF, MINN, MAXF, 0xFF7F_FFFF, ONE, MONE, 0x3F00_0001, 0x4B00_0001,
                   0x3380_0000], dtype=U32)
#: Integer edge values for the int -> float conversions and ldexp's exponent.
INT_EDGES = np.array([0, 1, 2, 3, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 0x0100_0001,
                      0x0100_0003, 0x0200_0006, 0xFEFF_FFFF, 0x8000_0001, 0x00FF_FFFF,
                      0x0100_0000, 0xFF00_0000, 0x0000_00FF, 0x8000_00FF, 0x7FFF_FF80,
                      0x7FFF_FFC0, 0x7FFF_FF40, 300, 301, -300 & 0xFFFF_FFFF,
                      -149 & 0xFFFF_FFFF, 127, 128, -126 & 0xFFFF_FFFF, 254, 277, 278],
                     dtype=U32)


# --------------------------------------------------------------------------------------
# The model side
def cmp_cond(name):
    """<cond> of a v_cmp(x)_<cond>_f32 name, else None."""
    parts = name.split("_")                     # v, cmp(x), cond, f32
    if len(parts) == 4 and parts[0] == "v" and parts[1] in ("cmp", "cmpx") and parts[3] == "f32":
        return parts[2]
    return None


def apply_mods(v, absm, negm, k):
    """The model's operand reader: abs (clear bit 31), then neg (flip bit 31), per vector."""
    v = np.where(((absm >> k) & 1)[:, None] == 1, v & U32(0x7FFF_FFFF), v)
    return np.where(((negm >> k) & 1)[:, None] == 1, v ^ U32(0x8000_0000), v).astype(U32)


_FREXP = {"v_frexp_mant_f32": F.frexp_mant, "v_frexp_exp_i32_f32": F.frexp_exp}   # the model's (sim.valu_ext)


def model(op, a, b, c, absm, negm, clamp, omod):
    """Expected (d, mask, illegal) of VALUFloat for arrays of vectors, shape (n, lanes)."""
    absm, negm = np.asarray(absm), np.asarray(negm)
    name = op.name.lower()
    if op not in FP_OPS:
        return np.zeros_like(a), np.zeros(a.shape, bool), 1
    am, bm, cm = (apply_mods(v, absm, negm, k) for k, v in enumerate((a, b, c)))
    cond = cmp_cond(name)
    if cond == "class":
        return np.zeros_like(a), F.cmp_class(am, bm), 0
    if cond is not None:
        return np.zeros_like(a), F.compare(cond, am, bm), 0
    if name == "v_fmac_f32":
        d = F.fma(am, bm, c)                     # c = the old destination, no modifiers
    elif name in ("v_fmaak_f32", "v_fmamk_f32"):
        d = F.fma(am, bm, cm)                    # the SIMD arranges K into b or c
    elif name in _FREXP:
        d = _FREXP[name](am)
    else:
        nsrc = len(info_of(op).src_bits)
        d = X.VFLOAT[name](*(am, bm, cm)[:nsrc])
    d = np.broadcast_to(d, a.shape).astype(U32)
    omod, clamp = np.asarray(omod)[:, None], np.asarray(clamp)[:, None]
    for code, scale in ((1, 0x4000_0000), (2, 0x4080_0000), (3, 0x3F00_0000)):
        d = np.where(omod == code, F.mul(d, U32(scale)), d)
    d = np.where(clamp == 1, F.clamp01(d), d)
    return d.astype(U32), np.zeros(a.shape, bool), 0


# --------------------------------------------------------------------------------------
# The RTL side: one simulation for a list of jobs
def _pack(rows: np.ndarray) -> list[int]:
    return [int.from_bytes(r.tobytes(), "little") for r in np.ascontiguousarray(rows, U32)]


def run_rtl(jobs, lanes=LANES, shared_mul=False, stages=1):
    """Simulate VALUFloat on every job; returns per job (d, mask, illegal, CPU seconds).

    A job is ``(op, a, b, c, abs, neg, clamp, omod)`` with operand arrays of shape
    (n, lanes) and per-vector modifier arrays of shape (n,). ``shared_mul``: the unit's
    significand products come from a ``hdl.simd.lanemul.LaneMultiplier`` (the fpga preset's).
    ``stages=3``: the unit in stages takes a vector every cycle; its ``d`` and ``mask_out``
    are read two cycles later, ``illegal`` in the same cycle.
    """
    dut = VALUFloat(lanes, external_mul=shared_mul, stages=stages)
    w = 32 * lanes
    port = Cat(dut.op, dut.a, dut.b, dut.c, dut.abs, dut.neg, dut.clamp, dut.omod)
    outp = Cat(dut.d, dut.mask_out, dut.illegal)
    # One wide stimulus and one response signal around the unit: ctx.set on a plain signal is
    # much cheaper than on a Cat of eight ports (the wrapper adds no logic).
    top = Module()
    top.submodules.dut = dut
    if shared_mul:
        top.submodules.mul = mul = LaneMultiplier(lanes)
        top.d.comb += [mul.fp.eq(1), mul.fp_x.eq(dut.mul_x), mul.fp_y.eq(dut.mul_y),
                       dut.mul_p.eq(Cat(*[mul.p[66 * i:66 * i + 48] for i in range(lanes)]))]
    stim_sig, resp_sig = Signal(len(port), name="stim"), Signal(len(outp), name="resp")
    top.d.comb += [port.eq(stim_sig), resp_sig.eq(outp)]
    wop = len(Value.cast(dut.op))
    sa, sb, sc, sm = wop, wop + w, wop + 2 * w, wop + 3 * w
    stim = []
    for op, a, b, c, absm, negm, clamp, omod in jobs:
        mods = [int(x) | int(y) << 3 | int(z) << 6 | int(o) << 7
                for x, y, z, o in zip(absm, negm, clamp, omod)]
        stim.append([op.value | pa << sa | pb << sb | pc << sc | md << sm
                     for pa, pb, pc, md in zip(_pack(a), _pack(b), _pack(c), mods)])
    results = []

    async def staged_bench(ctx):
        flat = [v for vectors in stim for v in vectors]
        resp = []
        for v in flat + [0, 0]:     # two idle cycles (op NONE) bring out the last results
            ctx.set(stim_sig, v)
            resp.append(ctx.get(resp_sig))
            await ctx.tick()
        late = (1 << (w + lanes)) - 1   # d and mask_out, two cycles late; illegal on time
        outs = [(resp[k + 2] & late) | (resp[k] & ~late) for k in range(len(flat))]
        for vectors in stim:
            results.append((outs[:len(vectors)], 0.0))
            outs = outs[len(vectors):]

    async def bench(ctx):
        for vectors in stim:
            outs = []
            t = time.process_time()          # CPU time: robust against other jobs on the machine
            for v in vectors:
                ctx.set(stim_sig, v)
                outs.append(ctx.get(resp_sig))
            results.append((outs, time.process_time() - t))

    sim = Simulator(top)
    if stages == 1:
        sim.add_testbench(bench)
    else:
        sim.add_clock(1e-6)
        sim.add_testbench(staged_bench)
    sim.run()
    decoded = []
    dmask = (1 << w) - 1
    for outs, secs in results:
        d = np.frombuffer(b"".join((o & dmask).to_bytes(4 * lanes, "little") for o in outs),
                          U32).reshape(len(outs), lanes)
        masks = np.array([(o >> w) & ((1 << lanes) - 1) for o in outs], np.uint64)
        mk = ((masks[:, None] >> np.arange(lanes, dtype=np.uint64)) & np.uint64(1)).astype(bool)
        ill = np.array([o >> (w + lanes) for o in outs])
        decoded.append((d, mk, ill, secs))
    return decoded


# --------------------------------------------------------------------------------------
# Operand generators (n vectors x LANES lanes)
def gen_floats(rng, shape):
    """float32 patterns hitting every region: random bits, moderate exponents, denormals, the
    normal/denormal boundary, near overflow, specials (NaN payloads), small integers, ties."""
    kind = rng.integers(0, 9, shape)
    sign = rng.integers(0, 2, shape).astype(np.uint64) << np.uint64(31)
    mant = rng.integers(0, 1 << 23, shape).astype(np.uint64)
    few = rng.integers(0, 4, shape) == 0
    mant = np.where(few, mant & ~np.uint64(0x7FFFF), mant)          # short mantissas: ties
    exp = np.select([kind == 0, kind == 1, kind == 2, kind == 3, kind == 4],
                    [rng.integers(0, 256, shape), rng.integers(110, 145, shape),
                     np.zeros(shape, int), rng.integers(1, 4, shape), rng.integers(240, 255, shape)],
                    rng.integers(60, 200, shape)).astype(np.uint64)
    bits = sign | (exp << np.uint64(23)) | mant
    specials = np.concatenate([EDGES, EDGES3]).astype(np.uint64)
    bits = np.where(kind == 5, specials[rng.integers(0, len(specials), shape)], bits)
    ints = np.array(rng.integers(-40, 41, shape), np.float32).view(U32).astype(np.uint64)
    bits = np.where(kind == 6, ints, bits)
    halves = (np.array(rng.integers(-600, 601, shape), np.float32) / np.float32(2)).view(U32)
    bits = np.where(kind == 7, halves.astype(np.uint64), bits)
    return bits.astype(U32)


def perturb(rng, bits, spread=3):
    """Move each pattern by a few ulps (integer steps of the bit pattern), staying finite."""
    d = rng.integers(-spread, spread + 1, bits.shape)
    out = (bits.astype(np.int64) + d).astype(np.uint64).astype(U32)
    return np.where((out & U32(0x7FFF_FFFF)) >= U32(PINF), bits, out).astype(U32)


def _near_product_thresholds(rng, a, b):
    """Put a quarter of the products next to the overflow or the underflow threshold."""
    k = rng.integers(0, 8, a.shape)
    ea = rng.integers(1, 255, a.shape)
    eb = np.where(k == 0, 254 + 127 - ea + rng.integers(-2, 3, a.shape),
                  np.where(k == 1, 1 - ea + rng.integers(-26, 3, a.shape), -1))
    ok = (eb >= 1) & (eb <= 254)
    a2 = (a & U32(0x807F_FFFF)) | (ea.astype(U32) << U32(23))
    b2 = (b & U32(0x807F_FFFF)) | (np.clip(eb, 0, 255).astype(U32) << U32(23))
    return np.where(ok, a2, a).astype(U32), np.where(ok, b2, b).astype(U32)


def gen_ints(rng, shape):
    kind = rng.integers(0, 5, shape)
    r = rng.integers(0, 1 << 32, shape, dtype=np.uint64).astype(U32)
    small = rng.integers(-300, 301, shape).astype(np.int64).astype(U32)
    width = rng.integers(1, 33, shape).astype(np.uint64)
    bounded = (rng.integers(0, 1 << 32, shape, dtype=np.uint64) >> (np.uint64(32) - width)).astype(U32)
    edges = INT_EDGES[rng.integers(0, len(INT_EDGES), shape)]
    # 25..32 significant bits with a half-ulp tail: round-to-even ties of the conversion
    tie = ((rng.integers(1 << 23, 1 << 24, shape) * 2 + 1) << rng.integers(0, 8, shape)).astype(U32)
    return np.select([kind == 0, kind == 1, kind == 2, kind == 3], [r, small, bounded, edges],
                     tie).astype(U32)


def gen_operands(rng, op, n):
    """(a, b, c) of shape (n, LANES) for ``op``, biased towards its hard cases."""
    name = op.name.lower()
    shape = (n, LANES)
    a, b, c = gen_floats(rng, shape), gen_floats(rng, shape), gen_floats(rng, shape)
    pick = rng.integers(0, 4, shape)
    if name in ("v_add_f32", "v_sub_f32", "v_subrev_f32"):
        near = a ^ U32(0x8000_0000) if name == "v_add_f32" else a
        b = np.where(pick == 0, perturb(rng, near), b)                    # cancellation
        b = np.where(pick == 1, perturb(rng, a ^ U32(0x8000_0000), 1 << 20), b)   # same binade
    elif name == "v_mul_f32":
        a, b = _near_product_thresholds(rng, a, b)
    elif name.startswith("v_fma"):
        a, b = _near_product_thresholds(rng, a, b)
        with np.errstate(all="ignore"):
            p = a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64)
            negp = (-p).astype(np.float32).view(U32)
            # addend at the rounding midpoint of the product (exercises single rounding)
            half = (np.float64(p) - p.astype(np.float32).astype(np.float64))
            mid = (-half).astype(np.float32).view(U32)
        nan_p = (negp & U32(0x7FFF_FFFF)) > U32(PINF)
        c = np.where((pick == 0) & ~nan_p, perturb(rng, negp), c)       # cancellation
        c = np.where((pick == 1) & ~nan_p, mid, c)
    elif cmp_cond(name) == "class":
        b = rng.integers(0, 1 << 10, shape).astype(U32)                 # class masks
        b = np.where(pick == 0, U32(1) << rng.integers(0, 10, shape).astype(U32), b)
    elif cmp_cond(name) is not None or "min" in name or "max" in name or "med3" in name:
        b = np.where(pick == 0, a, b)                                       # equal operands
        b = np.where(pick == 1, a ^ U32(0x8000_0000), b)                   # -x, +-0
        b = np.where(pick == 2, perturb(rng, a, 1), b)
        c = np.where(rng.integers(0, 3, shape) == 0, a, c)
    elif name.startswith("v_cvt_f32_"):
        a = gen_ints(rng, shape)
    elif name in ("v_cvt_i32_f32", "v_cvt_u32_f32"):
        e = rng.integers(120, 165, shape).astype(U32)
        around = (a & U32(0x807F_FFFF)) | (e << U32(23))
        a = np.where(pick <= 1, around, a)
    elif name in ("v_floor_f32", "v_ceil_f32", "v_trunc_f32", "v_rndne_f32", "v_fract_f32"):
        e = rng.integers(95, 155, shape).astype(U32)
        around = (a & U32(0x807F_FFFF)) | (e << U32(23))
        a = np.where(pick <= 1, around, a)
    elif name == "v_ldexp_f32":
        n_exp = rng.integers(-300, 301, shape)
        # land the result next to the denormal range or the overflow threshold
        ea = ((a >> U32(23)) & U32(0xFF)).astype(np.int64)
        to_den = -ea + rng.integers(-30, 3, shape)
        to_ovf = 254 - ea + rng.integers(-2, 3, shape)
        n_exp = np.select([pick == 0, pick == 1], [to_den, to_ovf], n_exp)
        b = np.where(rng.integers(0, 6, shape) == 0, gen_ints(rng, shape),
                     n_exp.astype(np.int64).astype(U32))
    return a.astype(U32), b.astype(U32), c.astype(U32)


def gen_mods(rng, n, frac=4):
    """Per-vector modifiers: all zero except for one vector in ``frac``."""
    on = rng.integers(0, frac, n) == 0
    return [np.where(on, rng.integers(0, hi, n), 0) for hi in (8, 8, 2, 4)]


def _lanes(flat: np.ndarray) -> np.ndarray:
    """A flat operand list packed into LANES-lane vectors (the last one padded cyclically)."""
    pad = (-flat.size) % LANES
    return np.concatenate([flat, flat[:pad]]).reshape(-1, LANES).astype(U32)


def grid_vectors(values, arity):
    """Every combination of ``values`` (arity 1, 2 or 3) packed into LANES-lane vectors."""
    grids = np.meshgrid(*([values] * arity), indexing="ij")
    flat = [g.ravel() for g in grids] + [np.zeros(grids[0].size, U32)] * (3 - arity)
    return tuple(_lanes(f) for f in flat)


def _arity(op):
    name = op.name.lower()
    if name in ("v_fmac_f32", "v_fmaak_f32", "v_fmamk_f32"):
        return 3
    return len(info_of(op).src_bits)


MOD_VECTORS = 96


def corner_jobs(op):
    """Edge-value grids for ``op``: once without modifiers, then ``MOD_VECTORS`` vectors of the
    grid with every abs/neg combination and every omod/clamp setting."""
    name = op.name.lower()
    arity = _arity(op)
    if name == "v_ldexp_f32":
        xs, ns = np.meshgrid(EDGES, INT_EDGES, indexing="ij")
        a, b, c = _lanes(xs.ravel()), _lanes(ns.ravel()), _lanes(np.zeros(xs.size, U32))
    elif name.startswith("v_cvt_f32_"):
        a, b, c = grid_vectors(INT_EDGES, 1)
    else:
        a, b, c = grid_vectors(EDGES3 if arity == 3 else EDGES, arity)
    n = a.shape[0]
    zeros = np.zeros(n, int)
    i = np.arange(MOD_VECTORS)
    rows = (i * 7) % n
    absm, negm = i % 8, (i // 8) % 8
    clamp, omod = np.where(i >= 64, i % 2, 0), np.where(i >= 64, (i // 2) % 4, 0)
    return [(op, a, b, c, zeros, zeros, zeros, zeros),
            (op, a[rows], b[rows], c[rows], absm, negm, clamp, omod)]


def sweep_jobs(op, rng, per_d=3, short=False):
    """fma/add/sub operands swept over the exponent difference d of the addend's and the
    product's least significant bits (fma: d = -90 .. 90; add/sub: exp(b) - exp(a) = -90 .. 90,
    d = that + 23), across the datapath's alignment windows (exact for |d| <= 26, the smaller
    operand shifted down with a sticky bit beyond), with random signs and significands; fma: a
    denormal addend or a denormal factor in one lane of four. ``short``: significands with only
    their top 0 to 6 bits random, so that products and sums end in zeros and land on rounding
    ties, where a wrong sticky bit shows."""
    name = op.name.lower()
    ds = np.repeat(np.arange(-90, 91), per_d * LANES)
    n = ds.size
    sign = lambda: rng.integers(0, 2, n).astype(U32) << U32(31)          # noqa: E731

    def mant():
        m = rng.integers(0, 1 << 23, n).astype(U32)
        if short:
            k = rng.integers(0, 7, n).astype(U32)
            m &= U32((1 << 23) - 1) ^ ((U32(1) << (U32(23) - k)) - U32(1))
        return m
    if name in ("v_add_f32", "v_sub_f32", "v_subrev_f32"):
        ea = rng.integers(1, 255, n)
        eb = np.clip(ea + ds, 0, 254)
        a = sign() | (ea.astype(U32) << U32(23)) | mant()
        b = sign() | (eb.astype(U32) << U32(23)) | mant()
        c = np.zeros(n, U32)
    else:
        ex = rng.integers(60, 200, n)
        ey = rng.integers(60, 200, n)
        ez = np.clip(ds + ex + ey - 150, 0, 254)     # d = Ez - Ex - Ey + 150 (weights of the lsbs)
        ey = np.where(ez == 0, np.clip(151 - ds - ex, 1, 254), ey)
        a = sign() | (ex.astype(U32) << U32(23)) | mant()
        b = sign() | (ey.astype(U32) << U32(23)) | mant()
        c = sign() | (ez.astype(U32) << U32(23)) | mant()
        den = rng.integers(0, 4, n)
        c = np.where(den == 0, c & U32(0x807F_FFFF), c)                  # denormal addend
        a = np.where(den == 1, a & U32(0x807F_FFFF), a)                  # denormal factor
    z = np.zeros(n // LANES, int)
    return [(op, a.reshape(-1, LANES), b.reshape(-1, LANES), c.reshape(-1, LANES), z, z, z, z)]


# --------------------------------------------------------------------------------------
# Hand-written expectations (independent of the model)
HAND = [
    # op, a, b, c, d
    # fma's sticky bits: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is a tie; an addend far below it
    # (d <= -27: shifted out, sticky) decides the rounding by its sign alone
    ("V_FMA_F32", 0x3F80_0800, 0x3F80_0800, PZERO, 0x3F80_1000),       # the tie: to even
    ("V_FMA_F32", 0x3F80_0800, 0x3F80_0800, 0x0D80_0000, 0x3F80_1001),  # + 2^-100: up
    ("V_FMA_F32", 0x3F80_0800, 0x3F80_0800, 0x8D80_0000, 0x3F80_1000),  # - 2^-100: down
    ("V_FMA_F32", 0x3F80_0800, 0x3F80_0800, 0x0000_0001, 0x3F80_1001),  # + 2^-149: up
    ("V_FMA_F32", 0x3F80_0800, 0x3F80_0800, 0x8000_0001, 0x3F80_1000),  # - 2^-149: down
    # ... and a product far below the addend (d >= 27): 1 +- (2^-24 or 2^-25 plus 2^-47 or
    # 2^-48) is one sticky bit off a tie
    ("V_FMA_F32", 0x3F80_0001, 0x3380_0000, ONE, 0x3F80_0001),          # 1 + 2^-24 + 2^-47: up
    ("V_FMA_F32", 0xBF80_0000, 0x3300_0000, ONE, ONE),                  # 1 - 2^-25, the tie: to even
    ("V_FMA_F32", 0xBF80_0001, 0x3300_0000, ONE, 0x3F7F_FFFF),          # 1 - 2^-25 - 2^-48: down
    ("V_FREXP_MANT_F32", 0xC040_0000, 0, 0, 0xBF40_0000),       # -3.0 = -0.75 * 2^2
    ("V_FREXP_EXP_I32_F32", 0xC040_0000, 0, 0, 2),
    ("V_FREXP_MANT_F32", 0x0000_0001, 0, 0, 0x3F00_0000),       # 2^-149 = 0.5 * 2^-148
    ("V_FREXP_EXP_I32_F32", 0x0000_0001, 0, 0, 0xFFFF_FF6C),    # -148
    ("V_FREXP_EXP_I32_F32", MAXF, 0, 0, 128),
    ("V_FREXP_EXP_I32_F32", NINF, 0, 0, 0),                     # specials: 0
    ("V_FREXP_MANT_F32", 0xFFA0_0001, 0, 0, 0xFFE0_0001),       # NaN quieted
    ("V_ADD_F32", 0x3F80_0000, 0xBF80_0000, 0, PZERO),          # x - x = +0
    ("V_ADD_F32", NZERO, NZERO, 0, NZERO),                      # -0 + -0 = -0
    ("V_ADD_F32", PINF, NINF, 0, 0xFFC0_0000),                  # inf - inf = default NaN
    ("V_ADD_F32", 0x7F80_0001, 0xFFC0_1234, 0, 0x7FC0_0001),    # first NaN, quieted
    ("V_ADD_F32", ONE, 0xFFA0_0001, 0, 0xFFE0_0001),            # NaN in src1 keeps its sign
    ("V_SUB_F32", ONE, 0xFFA0_0001, 0, 0xFFE0_0001),            # sub does not negate a NaN
    ("V_SUBREV_F32", 0x7FA0_0000, 0xFFA0_0001, 0, 0xFFE0_0001),  # subrev: src1 is first
    ("V_ADD_F32", MAXF, 0x7300_0000, 0, PINF),                  # MAXF + half ulp -> inf (tie)
    ("V_ADD_F32", MAXF, 0x72FF_FFFF, 0, MAXF),                  # just below the tie
    ("V_ADD_F32", 0x4B80_0000, 0x3F80_0000, 0, 0x4B80_0000),    # 2^24 + 1: tie to even
    ("V_ADD_F32", 0x4B80_0001, 0x3F80_0000, 0, 0x4B80_0002),    # (2^24 + 2) + 1: tie to even up
    ("V_MUL_F32", MINN, 0x3F00_0000, 0, 0x0040_0000),           # denormal result, exact
    ("V_MUL_F32", 0x0000_0003, 0x3F00_0000, 0, 0x0000_0002),    # 1.5 ulp -> 2 ulp (even)
    ("V_MUL_F32", 0x0000_0001, 0x3F00_0000, 0, PZERO),          # half the smallest -> 0 (even)
    ("V_MUL_F32", 0x8000_0001, 0x3F00_0000, 0, NZERO),          # keeps the sign
    ("V_MUL_F32", PZERO, NINF, 0, 0xFFC0_0000),                 # 0 * inf
    ("V_MUL_F32", NZERO, ONE, 0, NZERO),
    ("V_FMA_F32", NZERO, ONE, PZERO, PZERO),                    # -0*1 + +0 = +0
    ("V_FMA_F32", NZERO, ONE, NZERO, NZERO),                    # -0*1 + -0 = -0
    ("V_FMA_F32", ONE, ONE, MONE, PZERO),                       # 1*1 - 1 = +0
    ("V_FMA_F32", PINF, PZERO, QNAN, QNAN),                     # a NaN operand beats 0*inf
    ("V_FMA_F32", PINF, PZERO, ONE, 0xFFC0_0000),
    # (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46: exact only with a single rounding
    ("V_FMA_F32", 0x3F80_0001, 0x3F80_0001, 0xBF80_0002, 0x2880_0000),
    ("V_FMA_F32", 0x7F7F_FFFF, 0x4000_0000, 0xFF7F_FFFF, MAXF),  # 2 MAXF - MAXF: no overflow
    ("V_MIN_NUM_F32", NZERO, PZERO, 0, NZERO),
    ("V_MAX_NUM_F32", NZERO, PZERO, 0, PZERO),
    ("V_MIN_NUM_F32", SNAN, ONE, 0, ONE),                       # *_num ignore one NaN
    ("V_MINIMUM_F32", ONE, SNAN, 0, 0x7FC0_0001),               # minimum propagates (quiet)
    ("V_MINIMUM_F32", QNAN, SNAN, 0, 0x7FC0_0001),              # sNaN before qNaN
    ("V_MED3_NUM_F32", 0x4000_0000, ONE, 0x4040_0000, 0x4000_0000),
    ("V_MED3_NUM_F32", QNAN, 0x4040_0000, ONE, ONE),            # NaN: min3_num
    ("V_CVT_F32_I32", 0x7FFF_FFFF, 0, 0, 0x4F00_0000),
    ("V_CVT_F32_U32", 0xFFFF_FFFF, 0, 0, 0x4F80_0000),
    ("V_CVT_F32_U32", 0x0100_0001, 0, 0, 0x4B80_0000),          # 2^24 + 1: tie to even
    ("V_CVT_F32_UBYTE2", 0x00AB_0000, 0, 0, 0x432B_0000),       # 171.0
    ("V_CVT_I32_F32", 0xCF00_0001, 0, 0, 0x8000_0000),          # saturate
    ("V_CVT_I32_F32", 0xBF66_6666, 0, 0, 0),                    # -0.9 -> 0
    ("V_CVT_U32_F32", 0xBF80_0000, 0, 0, 0),
    ("V_CVT_U32_F32", PINF, 0, 0, 0xFFFF_FFFF),
    ("V_CVT_I32_F32", QNAN, 0, 0, 0),
    ("V_FLOOR_F32", 0xBF00_0000, 0, 0, MONE),                   # floor(-0.5) = -1
    ("V_CEIL_F32", 0xBF00_0000, 0, 0, NZERO),                   # ceil(-0.5) = -0
    ("V_RNDNE_F32", 0x4020_0000, 0, 0, 0x4000_0000),            # 2.5 -> 2
    ("V_RNDNE_F32", 0x3EFF_FFFF, 0, 0, PZERO),                  # 0.49999997 -> 0
    ("V_RNDNE_F32", 0xBF00_0000, 0, 0, NZERO),                  # -0.5 -> -0
    ("V_TRUNC_F32", 0xBE99_999A, 0, 0, NZERO),
    ("V_FRACT_F32", 0xB000_0000, 0, 0, 0x3F7F_FFFF),            # fract(-tiny) is capped
    ("V_FRACT_F32", NZERO, 0, 0, PZERO),
    ("V_FRACT_F32", NINF, 0, 0, 0xFFC0_0000),
    ("V_FRACT_F32", 0xBFC0_0000, 0, 0, 0x3F00_0000),            # fract(-1.5) = 0.5
    ("V_LDEXP_F32", 0x0000_0003, 0xFFFF_FFFF, 0, 0x0000_0002),  # 3 ulp / 2 -> 2 ulp (even)
    ("V_LDEXP_F32", ONE, 128, 0, PINF),
    ("V_LDEXP_F32", ONE, 0x8000_0000, 0, PZERO),                # n = -2^31
    ("V_LDEXP_F32", MIND, 0x7FFF_FFFF, 0, PINF),
]
HAND_CMP = [
    # op, a, b, mask bit
    ("V_CMP_EQ_F32", NZERO, PZERO, 1), ("V_CMP_LT_F32", NZERO, PZERO, 0),
    ("V_CMP_NEQ_F32", QNAN, QNAN, 1), ("V_CMP_EQ_F32", QNAN, QNAN, 0),
    ("V_CMP_U_F32", ONE, SNAN, 1), ("V_CMP_O_F32", ONE, NINF, 1),
    ("V_CMP_NGE_F32", QNAN, ONE, 1), ("V_CMPX_LG_F32", ONE, MONE, 1),
    ("V_CMP_CLASS_F32", SNAN, 1 << 0, 1), ("V_CMP_CLASS_F32", QNAN, 1 << 1, 1),
    ("V_CMP_CLASS_F32", 0x8000_0001, 1 << 4, 1), ("V_CMP_CLASS_F32", PZERO, 1 << 6, 1),
    ("V_CMPX_CLASS_F32", PINF, 1 << 9, 1), ("V_CMP_CLASS_F32", PINF, 0x1FF, 0),
]
#: Ops the unit must refuse (transcendentals, integer ops, float ops the model does not run).
ILLEGAL = ["NONE", "V_RCP_F32", "V_SQRT_F32", "V_EXP_F32", "V_ADD_NC_U32", "V_CMP_EQ_U32",
           "V_MAXMIN_NUM_F32", "V_DIV_FIXUP_F32", "V_MUL_DX9_ZERO_F32", "V_MINIMUM3_F32",
           "V_CVT_FLOOR_I32_F32", "S_ADD_F32"]


# --------------------------------------------------------------------------------------
def sorted_ops():
    """The FP32 VALU's ops, by name."""
    return sorted(FP_OPS, key=lambda o: o.name)


def build_jobs(vectors_per_op, seed=SEED, corners=True):
    """(label, job) pairs: random vectors and (optionally) corner grids for every op."""
    rng = np.random.default_rng(seed)
    jobs = []
    for op in sorted_ops():
        a, b, c = gen_operands(rng, op, vectors_per_op)
        jobs.append((("random", op), (op, a, b, c, *gen_mods(rng, vectors_per_op))))
        if corners:
            jobs += [(("corner", op), j) for j in corner_jobs(op)]
            if op in (OpId.V_FMA_F32, OpId.V_ADD_F32, OpId.V_SUB_F32):
                jobs += [(("sweep", op), j) for j in sweep_jobs(op, rng)]
                jobs += [(("sticky", op), j) for j in sweep_jobs(op, rng, per_d=1, short=True)]
    # frexp_exp's integer result takes no omod or clamp (the SIMD refuses them, as the model does)
    jobs = [(label, (*j[:6], 0 * j[6], 0 * j[7]) if j[0] == OpId.V_FREXP_EXP_I32_F32 else j) for label, j in jobs]
    ill = np.zeros(1, int)
    for name in ILLEGAL:
        op = OpId[name] if name in OpId.__members__ else None
        if op is not None:
            a, b, c = (gen_floats(rng, (1, LANES)) for _ in range(3))
            jobs.append((("illegal", op), (op, a, b, c, ill, ill, ill, ill)))
    hand = {}
    for op_name, a, b, c, _ in HAND:
        hand.setdefault(op_name, []).append((a, b, c))
    for op_name, a, b, _ in HAND_CMP:
        hand.setdefault(op_name, []).append((a, b, 0))
    for op_name, trip in hand.items():
        arr = np.array(trip, U32).T                              # 3 x k
        vecs = [np.resize(col, LANES)[None, :].astype(U32) for col in arr]
        jobs.append((("hand", OpId[op_name]), (OpId[op_name], *vecs, ill, ill, ill, ill)))
    return jobs


def check(jobs, outputs):
    """Compare every job with the model; returns {label: [mismatch strings]} and stats."""
    bad, stats = {}, {}
    for (label, job), (d, mk, ill, secs) in zip(jobs, outputs):
        op, a, b, c, absm, negm, clamp, omod = job
        ed, emk, eill = model(op, a, b, c, absm, negm, clamp, omod)
        errs = bad.setdefault(label, [])
        if not np.all(ill == eill):
            errs.append(f"{op.name}: illegal = {ill.tolist()[:4]}, expected {eill}")
        for v, lane in zip(*np.nonzero((d != ed) | (mk != emk))):
            if len(errs) < 8:
                errs.append(f"{op.name} a={a[v, lane]:#010x} b={b[v, lane]:#010x} "
                            f"c={c[v, lane]:#010x} abs={absm[v]} neg={negm[v]} clamp={clamp[v]} "
                            f"omod={omod[v]}: d={d[v, lane]:#010x} (model {ed[v, lane]:#010x}) "
                            f"mask={int(mk[v, lane])} (model {int(emk[v, lane])})")
        s = stats.setdefault(label[0], [0, 0.0])
        s[0] += d.shape[0]
        s[1] += secs
    return bad, stats


@pytest.fixture(scope="module")
def results():
    jobs = build_jobs(RANDOM_VECTORS)
    t = time.perf_counter()
    outputs = run_rtl([j for _, j in jobs])
    total = time.perf_counter() - t
    bad, stats = check(jobs, outputs)
    return jobs, outputs, bad, stats, total


@pytest.mark.parametrize("op", sorted_ops(), ids=lambda o: o.name.lower())
def test_random_vectors(results, op):
    jobs, _, bad, _, _ = results
    n = sum(j[1].shape[0] for label, j in jobs if label == ("random", op))
    assert n * LANES >= 32_000
    assert not bad[("random", op)], "\n".join(bad[("random", op)])


@pytest.mark.parametrize("op", sorted_ops(), ids=lambda o: o.name.lower())
def test_corner_cases(results, op):
    _, _, bad, _, _ = results
    assert not bad[("corner", op)], "\n".join(bad[("corner", op)])


@pytest.mark.parametrize("op", ["V_FMA_F32", "V_ADD_F32", "V_SUB_F32"])
@pytest.mark.parametrize("kind", ["sweep", "sticky"])
def test_alignment_sweep(results, op, kind):
    _, _, bad, _, _ = results
    assert (kind, OpId[op]) in bad
    assert not bad[(kind, OpId[op])], "\n".join(bad[(kind, OpId[op])])


def test_hand_written_expectations(results):
    """The model and the RTL agree with the hand-written results (rules of docs/fp32.md)."""
    jobs, outputs, bad, _, _ = results
    got = {}
    for (label, job), (d, mk, _, _) in zip(jobs, outputs):
        if label[0] == "hand":
            op, a, b, c = job[:4]
            ed, emk, _ = model(op, a, b, c, *job[4:])
            for lane in range(LANES):
                got[(op.name, int(a[0, lane]), int(b[0, lane]), int(c[0, lane]))] = (
                    int(d[0, lane]), int(mk[0, lane]), int(ed[0, lane]), int(emk[0, lane]))
    for op_name, a, b, c, exp in HAND:
        d, _, ed, _ = got[(op_name, a, b, c)]
        assert (d, ed) == (exp, exp), f"{op_name}({a:#x}, {b:#x}, {c:#x}): RTL {d:#x}, model {ed:#x}, expected {exp:#x}"
    for op_name, a, b, exp in HAND_CMP:
        _, mk, _, emk = got[(op_name, a, b, 0)]
        assert (mk, emk) == (exp, exp), f"{op_name}({a:#x}, {b:#x}): RTL {mk}, model {emk}"
    assert not any(bad[k] for k in bad if k[0] == "hand")


def test_illegal_ops(results):
    jobs, outputs, bad, _, _ = results
    seen = [label[1] for label, _ in jobs if label[0] == "illegal"]
    assert len(seen) >= 10
    for (label, _), (d, mk, ill, _) in zip(jobs, outputs):
        if label[0] == "illegal":
            assert ill.tolist() == [1] and not d.any() and not mk.any(), label
    assert not any(bad[k] for k in bad if k[0] == "illegal")


def test_op_set_matches_the_model():
    """FP_OPS is exactly the model's FP32 VALU set: VFLOAT (kind valu), fmac/fmaak/fmamk, the
    frexp pair and the f32 compares, all of which the model executes."""
    expected = {OpId[n.upper()] for n in X.VFLOAT if info_of(OpId[n.upper()]).kind == "valu"}
    expected |= {OpId.V_FMAC_F32, OpId.V_FMAAK_F32, OpId.V_FMAMK_F32}
    expected |= {OpId[n.upper()] for n in _FREXP}
    expected |= {op for op in OpId if cmp_cond(op.name.lower()) is not None}
    assert set(FP_OPS) == expected
    assert all(op.name.lower() in X.IMPLEMENTED for op in FP_OPS)


def test_speed_report(results):
    jobs, _, _, stats, total = results
    vectors = sum(s[0] for s in stats.values())
    secs = sum(s[1] for s in stats.values())
    rate = vectors / secs
    per = {k: f"{s[0] / s[1]:.0f}/s" for k, s in stats.items()}
    print(f"\nVALUFloat simulation: {vectors} vectors ({vectors * LANES} lane results) in "
          f"{secs:.1f} s = {rate:.0f} vectors/s ({per}); with elaboration {total:.1f} s")
    assert rate > 100                       # far below the real rate: catches a pathological slow-down


def test_shared_multiplier():
    """The fused-datapath ops (fma, mul, add, sub, ...) with the significand products from
    the multiplier the fpga preset shares with the integer unit: bit-exact, corner cases and
    alignment sweeps included."""
    jobs = [(label, j) for label, j in build_jobs(RANDOM_VECTORS // 4, seed=SEED + 7) if j[0] in FUSED_OPS]
    assert len({j[0] for _, j in jobs}) == len(FUSED_OPS) >= 8
    bad, _ = check(jobs, run_rtl([j for _, j in jobs], shared_mul=True))
    errors = [e for errs in bad.values() for e in errs]
    assert not errors, "\n".join(errors[:8])


def test_in_stages():
    """``stages=3`` (the SIMD's) with the shared multiplier: a
    different operation every cycle (every op's random vectors and corner cases, one vector a
    job, shuffled), each result and mask two cycles later; bit-exact."""
    rng = np.random.default_rng(SEED + 11)
    lanes = 4
    jobs = []
    for label, (op, a, b, c, absm, negm, clamp, omod) in build_jobs(6, seed=SEED + 11):
        for v in range(a.shape[0]):
            for lo in range(0, LANES, lanes):   # a corner grid's 32 lanes as 4-lane vectors
                jobs.append((label, (op, a[v:v + 1, lo:lo + lanes], b[v:v + 1, lo:lo + lanes],
                                     c[v:v + 1, lo:lo + lanes], absm[v:v + 1], negm[v:v + 1], clamp[v:v + 1],
                                     omod[v:v + 1])))
    order = rng.permutation(len(jobs))
    jobs = [jobs[k] for k in order]
    assert set(sorted_ops()) <= {j[0] for _, j in jobs}
    bad, _ = check(jobs, run_rtl([j for _, j in jobs], lanes=lanes, shared_mul=True, stages=3))
    errors = [e for errs in bad.values() for e in errs]
    assert not errors, "\n".join(errors[:8])


def test_verilog_lint(tmp_path):
    """The unit converts to Verilog and passes Verilator lint (4 lanes: the per-lane logic is
    generated by the same code for any lane count; 32 lanes take ~40 s to convert, see
    bench/fp32_rtl_campaign.py)."""
    convert_and_lint(VALUFloat(lanes=4), "valu_fp", tmp_path)
