"""cocotb smoke test of the LDS (``hdl/mem/lds.py``) as generated Verilog.

A few wave32 accesses, one at a time, from a CU 0 SIMD and a CU 1 SIMD: b128 stores that fill
part of each half, ``ds_load_b32`` with strides 0 (broadcast), 1, 2, 3, 4, 8, 16 and 32 dwords,
a b64 and a 2addr load, a 32-lane atomic on one dword, and a few random requests of
``tests/test_lds.py``'s generator. Every request is replayed through the reference model
(``tests.test_lds.model_exec``: the model's DS handlers and window rules on a numpy image of
the LDS); the response beats (destination, data of the active lanes, mask, ``last``) must
equal the model's registers, and the bank passes each instruction took (``bank_cycles`` of its
half) the model's cost: ``lds_conflict_cycles`` of the dwords it touches, gcd(S, 32) for a
stride of S dwords. ``conflict_cycles`` must count the passes beyond each instruction's first.
"""
from __future__ import annotations

import math
import os
import random

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge

from hdl.config import get_config
from hdl.isa_tables import OpId
from hdl.mem.lds import LdsAlloc
from hdl.layouts import VecMemReq, VecMemResp
from tests.bitpack import pack_fields
from tests.test_lds import LANES, LOADS, M32, STORES, Req, model_exec, rand_req, result_regs
from tbutil import Rate, Stream, report, start, unpack, write_gtkw

CFG = get_config(os.environ.get("DCU_PRESET", "default"))
H = CFG.lds_bytes_per_half
SEED = int(os.environ.get("DCU_SEED", "20251124"))


def _counters(dut, name):
    v = getattr(dut, name).value.to_unsigned()
    return [v & M32, v >> 32 & M32]


async def _alloc(dut, windows):
    dut.alloc__valid.value = 1
    for (simd, wave), (base, size) in windows.items():
        dut.alloc__payload.value = LdsAlloc(CFG).const(dict(simd=simd, wave=wave, base=base, size=size)).as_bits()
        await RisingEdge(dut.clk)          # always ready
    dut.alloc__valid.value = 0


async def _one(dut, r: Req, max_cycles=400):
    """Issue ``r`` on its SIMD's port, take every response beat; -> (beats, bank passes, cycles)."""
    req, resp = Stream(dut, f"req__{r.simd}"), Stream(dut, f"resp__{r.simd}")
    half = r.simd // 2                                   # CU mode
    before = _counters(dut, "bank_cycles")[half]
    req.payload.value = VecMemReq(CFG).const({
        "wave": r.wave, "seq": r.seq, "op": OpId[r.op.upper()], "exec": r.exec,
        "addr": pack_fields(r.addr, 64), "data": pack_fields([pack_fields(d, 32) for d in r.data], 128),
        "offset0": r.offset0, "offset1": r.offset1, "vdst": r.vdst,
        "returns": int(result_regs(r.op) != 0)}).as_bits()
    req.valid.value = 1
    resp.ready.value = 1
    beats, cycles, sent, passes = [], 0, False, None
    while True:
        await ReadOnly()
        fire = not sent and req.ready.value == 1
        if resp.valid.value == 1:
            b = unpack(VecMemResp(CFG), resp.payload.value.to_unsigned())
            beats.append(b)
            if b.last:
                passes = _counters(dut, "bank_cycles")[half] - before
        await RisingEdge(dut.clk)
        cycles += 1
        if fire:
            sent = True
            req.valid.value = 0
        if passes is not None:
            return beats, passes, cycles
        assert cycles < max_cycles, (f"LDS watchdog: {r.op} on SIMD {r.simd} wave {r.wave} "
                                     f"{'accepted' if sent else 'never accepted'}, "
                                     f"{len(beats)} beats in {cycles} cycles")


def _check(r: Req, beats, regs):
    where = f"{r.op} SIMD {r.simd} wave {r.wave} seq {r.seq}"
    n = max(len(regs), 1)
    assert len(beats) == n, f"{where}: {len(beats)} beats, model {n}"
    assert [b.last for b in beats] == [0] * (n - 1) + [1], f"{where}: last flags {[b.last for b in beats]}"
    for b in beats:
        assert (b.wave, b.seq, b.store, b.write) == (r.wave, r.seq, 0, int(bool(regs))), f"{where}: beat {b}"
    for b, (vdst, vals) in zip(beats, regs):
        assert b.vdst == vdst and b.mask == r.exec, \
            f"{where}: beat v{b.vdst} mask {b.mask:#x}, model v{vdst} {r.exec:#x}"
        for lane in range(LANES):
            if r.exec >> lane & 1:
                got = b.data >> (32 * lane) & M32
                assert got == int(vals[lane]), (f"{where} v{vdst} lane {lane} (address {r.addr[lane]:#x}): "
                                                f"{got:#010x}, model {int(vals[lane]):#010x}")


def _requests(rng):
    """(request, stride in dwords or None) in issue order."""
    zero = [[0] * 4] * LANES
    out, seq = [], {}

    def add(op, simd, wave, addr, data=zero, stride=None, **kw):
        seq[(simd, wave)] = seq.get((simd, wave), -1) + 1
        out.append((Req(op, simd, wave, addr, data, seq=seq[(simd, wave)], **kw), stride))

    for simd, wave in ((0, 0), (2, 1)):
        for blk in range(8):                 # fill 4 KiB of the window: b128 stores, 4 passes each
            add("ds_store_b128", simd, wave, [512 * blk + 16 * n for n in range(LANES)],
                [[rng.getrandbits(32) for _ in range(4)] for _ in range(LANES)])
        for k, stride in enumerate((1, 2, 3, 4, 8, 16, 32, 0)):
            start = 4 * rng.randrange(0, 32)     # inside the 4 KiB the stores filled
            add("ds_load_b32", simd, wave, [start + 4 * stride * n for n in range(LANES)], stride=stride,
                vdst=k)
    add("ds_load_b64", 0, 0, [8 * n + 8 for n in range(LANES)], vdst=20)
    add("ds_load_2addr_b32", 2, 1, [4 * n for n in range(LANES)], offset0=3, offset1=100, vdst=22)
    add("ds_load_b32", 0, 0, [4 * 32 * (n % 4) for n in range(LANES)], stride=None, exec=0x0F0F_0F0F, vdst=30)
    add("ds_add_rtn_u32", 2, 1, [64] * LANES, [[n + 1, 0, 0, 0] for n in range(LANES)], vdst=40)
    for k in range(6):                       # tests/test_lds.py's random requests
        simd, wave = ((0, 0), (2, 1))[k % 2]
        seq[(simd, wave)] += 1
        out.append((rand_req(rng, rng.choice(LOADS + STORES), simd, wave, H, seq[(simd, wave)]), None))
    return out


@cocotb.test()
async def lds_accesses_and_conflicts(dut):
    rng = random.Random(SEED)
    write_gtkw(lambda: {"control": [dut.clk, dut.rst, dut.wgp, dut.alloc__valid],
                "cu0 simd0": Stream(dut, "req__0").handles() + Stream(dut, "resp__0").handles(),
                "cu1 simd2": Stream(dut, "req__2").handles() + Stream(dut, "resp__2").handles(),
                "counters": [dut.accesses, dut.bank_cycles, dut.conflict_cycles, dut.error]})
    dut.wgp.value = 0
    dut.alloc__valid.value = 0
    for s in range(4):
        getattr(dut, f"req__{s}__valid").value = 0
        getattr(dut, f"resp__{s}__ready").value = 0
    await start(dut)
    windows = {(0, 0): (0, H), (2, 1): (H, H)}
    await _alloc(dut, windows)
    image = np.zeros(CFG.lds_bytes_total, np.uint8)      # the Verilog's bank RAMs start at zero
    total = conflicts = cycles = 0
    per_half = [0, 0]
    with Rate() as rate:
        for r, stride in _requests(rng):
            beats, passes, n = await _one(dut, r)
            cycles += n
            regs, cost = model_exec(r, image, *windows[(r.simd, r.wave)])
            _check(r, beats, regs)
            assert passes == cost, (f"{r.op} SIMD {r.simd} (addresses {r.addr[:4]}..., exec {r.exec:#x}): "
                                    f"{passes} bank passes, model {cost}")
            if stride is not None:       # 32 banks: a stride of S dwords costs gcd(S, 32)
                assert passes == (math.gcd(stride, 32) if stride else 1), (stride, passes)
            total += 1
            per_half[r.simd // 2] += 1
            conflicts += max(cost - 1, 0)
    await ReadOnly()
    assert sum(_counters(dut, "conflict_cycles")) == conflicts
    assert _counters(dut, "accesses") == per_half
    assert dut.error.value.to_unsigned() & 1 == 0, "the LDS latched an error"
    assert conflicts > 30, "the stride set must conflict"
    dut._log.info("%d LDS instructions, %d conflict passes, %d cycles in %.1f s (%.0f cycles/s)",
                  total, conflicts, cycles, rate.seconds, rate.per_second(cycles))
    report(lds_instructions=total, lds_conflict_passes=conflicts, lds_cycles=cycles,
           lds_seconds=round(rate.seconds, 2), lds_cycles_per_second=round(rate.per_second(cycles)))
