"""The memory models' buffer map (dcu/memmodel.py, hdl/mem/extmem.py): an access outside every
buffer a host laid out faults, in both models alike.

The expected faults come from the rule itself, applied here per request: a READ faults when
its 128-byte line holds no byte of any buffer, a WRITE when a masked byte lies outside every
buffer, an ATOMIC when its dword is not inside one buffer. A random stream of requests
around three buffers (with guard gaps between them, as ``sim.memory.GlobalMemory`` leaves)
runs through :class:`PyMemory` and, in Amaranth's simulator, :class:`ExtMemory`; both must
answer exactly the expected faults, and ExtMemory keeps the first faulting request of each
tag group.
"""
from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator

from dcu.memmodel import PyMemory, buffer_ranges, first_outside, map_words
from hdl.mem.extmem import ExtMemory
from hdl.mem.memport import LINE_BYTES, MemKind, MemReq, MemResp
from sim.memory import GlobalMemory
from tests.memtraffic import drive, request, unpack

BASE, SIZE = 0x1000_0000, 2048
# buffers with guard gaps: one ends mid-line, one starts mid-line, one spans whole lines
RANGES = [(BASE + 0x000, BASE + 0x0C4), (BASE + 0x250, BASE + 0x300), (BASE + 0x400, BASE + 0x600)]


def _expected_fault(kind: int, addr: int, mask: int) -> bool:
    if kind == MemKind.READ.value:
        return not any(lo < addr + LINE_BYTES and addr < hi for lo, hi in RANGES)
    if kind == MemKind.WRITE.value:
        return any(mask >> i & 1 and not any(lo <= addr + i < hi for lo, hi in RANGES) for i in range(LINE_BYTES))
    return not any(lo <= addr and addr + 4 <= hi for lo, hi in RANGES)


def _stream(rng, n=240):
    """Reads of every line, writes with masks at buffer edges, atomics on edge dwords."""
    words = []
    for i in range(n):
        line = BASE + int(rng.integers(0, SIZE // LINE_BYTES)) * LINE_BYTES
        k = i % 3
        if k == 0:
            words.append(request(kind=MemKind.READ, addr=line, tag=i % 256))
        elif k == 1:
            lo = int(rng.integers(0, LINE_BYTES))
            hi = int(rng.integers(lo + 1, LINE_BYTES + 1))
            mask = ((1 << hi) - 1) & ~((1 << lo) - 1)
            words.append(request(kind=MemKind.WRITE, addr=line, tag=i % 256, mask=mask, data=i))
        else:
            addr = line + 4 * int(rng.integers(0, LINE_BYTES // 4))
            words.append(request(kind=MemKind.ATOMIC, addr=addr, tag=i % 256, data=1))
    return words


def _faults_expected(words):
    return [_expected_fault(r["kind"], r["addr"], r["mask"]) for r in (unpack(MemReq(8), w) for w in words)]


def test_pymemory_faults_outside_every_buffer():
    rng = np.random.default_rng(5)
    words = _stream(rng)
    mem = PyMemory(np.zeros(SIZE, np.uint8), BASE, buffers=RANGES)
    got = [bool(unpack(MemResp(8), mem.access(w))["fault"]) for w in words]
    want = _faults_expected(words)
    assert got == want and 20 < sum(want) < len(want) - 20
    assert [(m.addr, m.tag) for m in mem.fault_log] == [
        (unpack(MemReq(8), w)["addr"], i % 256)
        for i, (w, bad) in enumerate(zip(words, want)) if bad]


def test_extmemory_faults_and_log_as_pymemory():
    rng = np.random.default_rng(6)
    words = _stream(rng, 180)
    want = _faults_expected(words)
    dut = ExtMemory(SIZE, BASE, latency=(2, 6), reorder=True, map_ranges=4, fault_groups=4, runtime_seed=True)
    base, end = map_words(RANGES, 4)
    res = {}
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        ctx.set(dut.map_base.as_value(), base)
        ctx.set(dut.map_end.as_value(), end)
        await ctx.tick()
        res["accepted"], res["responses"] = await drive(ctx, dut.req, dut.resp, words, rng, what="ExtMemory")
        res["log"] = ctx.get(dut.fault_log)

    sim.add_testbench(bench)
    sim.run()
    got = {tag: fault for _, tag, _, fault in res["responses"]}
    assert [got[i % 256] for i in range(len(words))] == want
    # the first faulting request of each quarter of the tags (the arbiter's clients)
    for g, rec in enumerate(res["log"]):
        first = next((i for i, bad in enumerate(want) if bad and (i % 256) >> 6 == g), None)
        assert bool(rec.valid) == (first is not None)
        if first is not None:
            r = unpack(MemReq(8), words[first])
            assert (int(rec.addr), int(rec.tag), int(rec.mask)) == (r["addr"], r["tag"], r["mask"])


def test_buffer_ranges_merge_the_closest_neighbours():
    gm = GlobalMemory()
    allocs = [gm.allocate(n, f"a{i}") for i, n in enumerate((100, 300, 40, 1000))]
    full = buffer_ranges(allocs)
    assert full == [(a.base, a.end) for a in allocs]
    merged = buffer_ranges(allocs, 3)
    gaps = [full[i + 1][0] - full[i][1] for i in range(3)]
    k = gaps.index(min(gaps))
    assert merged == full[:k] + [(full[k][0], full[k + 1][1])] + full[k + 2:]
    assert first_outside(full, allocs[0].base + 64, (1 << 40) - 1, 40) == allocs[0].end
    assert first_outside(full, allocs[0].base, 0xFF) is None
