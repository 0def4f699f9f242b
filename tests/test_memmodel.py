"""dcu.memmodel.PyMemory (the Python memory process) against the numpy reference, and against
the RTL model hdl.mem.extmem.ExtMemory.

* Random mixes of reads, masked writes, every atomic op and faults, with random valid gaps,
  response back-pressure, request back-pressure, reordering: responses, final image,
  counters and the fault list equal the reference's.
* Latency exactly the configured one (also after long idle gaps, where the process sleeps),
  ``slots`` limits what waits; in order unless ``reorder``; every latency within the range.
* A GlobalMemory as ``dcu.launch.prepare`` lays it out: lines of the buffers, atomics
  on a buffer, allocations made after the model was built, guard gaps and the end.
* The same request stream through ExtMemory and PyMemory: the same final image and the same
  per-tag responses; with a fixed latency and no randomness, the same cycles too.
* Latencies up to 500 cycles; the scoreboard counts what crosses the port and catches a
  response injected twice; ``stress_settings`` draws settings within bounds from a seed.
"""
from __future__ import annotations

import numpy as np
import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.lib import stream
from amaranth.sim import Simulator

from dcu.memmodel import PyMemory, ScoreboardError, check_scoreboard, stress_settings
from hdl.mem.atomic import AtomicOp
from hdl.mem.memport import LINE_BYTES, MemKind, MemReq, MemResp
from sim.memory import GlobalMemory
from tests.memtraffic import (Reference, check_against_reference, drive, match, pack, random_requests, request,
                              unpack)
from tests.test_extmem import run_ext

BASE, SIZE = 0x4000, 1024


def run_py(words, memory, *, valid_p=1.0, ready_p=1.0, seed=0, max_cycles=20_000, base=None, meddle=None,
           **opts):
    """Drive ``words`` through a PyMemory over ``memory`` (changed in place); ``meddle``, an
    ``async`` function of ``(ctx, mem)``, runs beside it as a process."""
    mem = PyMemory(memory, base, **opts)
    req = stream.Signature(MemReq(8)).create()
    resp = stream.Signature(MemResp(8)).create()
    m = Module()
    m.domains.sync = ClockDomain()
    sim = Simulator(m)
    sim.add_clock(1e-8)
    sim.add_process(mem.process(req, resp))
    if meddle is not None:
        async def run_meddle(ctx):
            await meddle(ctx, mem)
        sim.add_process(run_meddle)
    res = {"mem": mem}

    async def bench(ctx):
        res["accepted"], res["responses"] = await drive(
            ctx, req, resp, words, np.random.default_rng(seed), valid_p=valid_p, ready_p=ready_p,
            max_cycles=max_cycles, what="PyMemory")

    sim.add_testbench(bench)
    sim.run()
    return res


def check_run(words, image, res, base=BASE):
    ref = Reference(image, base)
    check_against_reference(words, res["accepted"], res["responses"], ref)
    mem = res["mem"]
    assert (mem.image == ref.img).all(), "final image differs from the reference"
    assert {"reads": mem.reads, "writes": mem.writes, "atomics": mem.atomics,
            "faults": len(mem.faults)} == ref.counts
    assert mem.faults == ref.fault_list
    return ref


# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("opts", [
    dict(latency=(3, 9), reorder=True, backpressure=0.25, valid_p=0.7, ready_p=0.6, seed=1),
    dict(latency=1, valid_p=1.0, ready_p=0.8, seed=2),
    dict(latency=(1, 40), reorder=True, slots=3, valid_p=0.9, ready_p=0.9, seed=3),
])
def test_random_mix(opts):
    rng = np.random.default_rng(opts["seed"] + 100)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 400, BASE, SIZE, image=image)
    res = run_py(words, image.copy(), base=BASE, **opts)
    ref = check_run(words, image, res)
    assert ref.counts["faults"] > 5 and ref.counts["atomics"] > 50 and ref.counts["writes"] > 50
    assert ref.cmpswap_hits >= 3


@pytest.mark.parametrize("latency,slots,valid_p", [(1, 4, 1.0), (5, 8, 1.0), (16, 16, 1.0), (17, 16, 1.0),
                                                   (7, 16, 0.03)])
def test_fixed_latency_in_order(latency, slots, valid_p):
    rng = np.random.default_rng(latency)
    words = random_requests(rng, 60, BASE, SIZE, faults=False)
    res = run_py(words, np.zeros(SIZE, np.uint8), base=BASE, latency=latency, slots=slots,
                 valid_p=valid_p, seed=4)
    got = match(words, res["accepted"], res["responses"])
    assert [g[1] - g[0] for g in got] == [latency] * len(words)
    assert [r[1] for r in res["responses"]] == list(range(len(words)))
    acc = res["accepted"]
    if valid_p < 1:             # long idle gaps: the process slept in between
        assert max(b - a for a, b in zip(acc, acc[1:])) > 4 * latency
    elif slots >= latency:      # `latency` requests hold slots at once: one per cycle
        assert acc == list(range(len(words)))
    else:                       # as ExtMemory: a slot is free again `latency` cycles after it was taken
        assert acc[:slots] == list(range(slots))
        assert all(acc[i] == acc[i - slots] + latency for i in range(slots, len(words)))


def test_reorder_only_when_enabled():
    rng = np.random.default_rng(7)
    words = [request(kind=MemKind.READ, addr=BASE + int(a) * LINE_BYTES, tag=i)
             for i, a in enumerate(rng.integers(0, SIZE // LINE_BYTES, 200))]
    lo, hi = 4, 12
    for reorder in (False, True):
        res = run_py(words, np.zeros(SIZE, np.uint8), base=BASE, latency=(lo, hi), reorder=reorder, seed=8)
        order = [r[1] for r in res["responses"]]
        lat = [g[1] - g[0] for g in match(words, res["accepted"], res["responses"])]
        assert min(lat) >= lo
        if reorder:
            assert order != sorted(order), "reorder=True never reordered"
            assert min(lat) == lo
            assert max(lat) >= hi and len(set(lat)) > (hi - lo) // 2
        else:
            assert order == list(range(len(words)))


@pytest.mark.parametrize("valid_p", [1.0, 0.1])
def test_request_backpressure(valid_p):
    """``req.ready`` is withheld about half the time; sparse traffic also makes the process
    sleep with a request refused and nothing in flight (it must wake for the next edge)."""
    rng = np.random.default_rng(12)
    words = random_requests(rng, 150, BASE, SIZE, faults=False)
    res = run_py(words, np.zeros(SIZE, np.uint8), base=BASE, latency=2, backpressure=0.5,
                 valid_p=valid_p, seed=13)
    check_run(words, np.zeros(SIZE, np.uint8), res)
    acc = res["accepted"]
    if valid_p == 1.0:
        stalls = acc[-1] + 1 - len(words)
        assert 0.35 < stalls / (acc[-1] + 1) < 0.65, stalls


def test_global_memory_layout():
    gm = GlobalMemory()
    a = gm.allocate(300, "a")
    gm.write_bytes(a.base, np.arange(300, dtype=np.uint8))
    mem_words = [request(kind=MemKind.READ, addr=a.base, tag=0),
                 request(kind=MemKind.READ, addr=a.base + 256, tag=1),            # tail + guard
                 request(kind=MemKind.ATOMIC, atomic=AtomicOp.ADD, addr=a.base + 8, data=0x01010101, tag=2)]
    b = gm.allocate(4096, "b")        # after the model exists: the image grows
    gm.write_bytes(b.base + 4092, np.array([1, 2, 3, 4], np.uint8))
    mem_words += [request(kind=MemKind.READ, addr=b.base + 3968, tag=3),
                  request(kind=MemKind.READ, addr=gm.base - LINE_BYTES, tag=4),     # below
                  request(kind=MemKind.READ, addr=gm.base + gm.data.size, tag=5)]   # past the end
    res = run_py(mem_words, gm, latency=3)
    got = [(g[2], g[3]) for g in match(mem_words, res["accepted"], res["responses"])]
    line0 = int.from_bytes(bytes(range(128)), "little")
    assert got[0] == (line0, 0)
    tail = np.zeros(LINE_BYTES, np.uint8)
    tail[:44] = np.arange(300, dtype=np.uint8)[256:]                  # the rest is guard gap
    assert got[1] == (int.from_bytes(tail.tobytes(), "little"), 0)
    assert got[2] == (int.from_bytes(bytes([8, 9, 10, 11]), "little"), 0)
    assert gm.read_bytes(a.base + 8, 4).tolist() == [9, 10, 11, 12]
    assert got[3] == (int.from_bytes(bytes([1, 2, 3, 4]), "little") << (8 * 124), 0)
    assert got[4:] == [(0, 1), (0, 1)]
    assert res["mem"].faults == [(gm.base - LINE_BYTES, MemKind.READ), (gm.base + gm.data.size, MemKind.READ)]


@pytest.mark.parametrize("opts", [
    dict(latency=(2, 30), reorder=True, backpressure=0.3, valid_p=0.8, ready_p=0.7),
    dict(latency=6, valid_p=0.8, ready_p=0.7),
])
def test_same_as_extmemory(opts):
    """The same stream through both models: the same image and per-tag responses; with no
    randomness in the models (second case) the same acceptance and response cycles."""
    rng = np.random.default_rng(21)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 240, BASE, SIZE, image=image)
    ext = run_ext(words, image=image, seed=5, **opts)
    py = run_py(words, image.copy(), base=BASE, seed=5, **opts)
    per_tag = [[g[2:] for g in match(words, r["accepted"], r["responses"])] for r in (ext, py)]
    assert per_tag[0] == per_tag[1]                       # (data, fault) per request (tag)
    assert (ext["image"] == py["mem"].image).all()
    counts = py["mem"]
    assert ext["counters"] == {"reads": counts.reads, "writes": counts.writes,
                               "atomics": counts.atomics, "faults": len(counts.faults)}
    if "reorder" not in opts:
        assert ext["accepted"] == py["accepted"]
        assert ext["responses"] == py["responses"]


def test_bad_parameters():
    for kwargs, msg in ((dict(latency=0), "latency"), (dict(latency=(3, 2)), "latency"),
                        (dict(slots=0), "slots"), (dict(backpressure=1.5), "backpressure")):
        with pytest.raises(ValueError, match=msg):
            PyMemory(bytearray(256), **kwargs)
    with pytest.raises(ValueError, match="base"):
        PyMemory(bytearray(256), 64)
    with pytest.raises(ValueError, match="own base"):
        PyMemory(GlobalMemory(), 0)
    for bad in (np.zeros(256, np.uint32), bytes(256)):
        with pytest.raises(ValueError, match="writable"):
            PyMemory(bad)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8))
def test_sweep_both_models(seed):
    """Longer random streams, random model settings: both models equal the reference."""
    rng = np.random.default_rng(1000 + seed)
    lo = int(rng.integers(2, 10))
    opts = dict(latency=(lo, lo + int(rng.integers(0, 30))), reorder=bool(seed % 2),
                backpressure=float(rng.choice([0.0, 0.2, 0.6])), slots=int(rng.choice([2, 8, 32])),
                valid_p=float(rng.uniform(0.3, 1.0)), ready_p=float(rng.uniform(0.3, 1.0)), seed=seed)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 1500, BASE, SIZE, image=image)
    ext = run_ext(words, image=image, max_cycles=100_000, **opts)
    ref = Reference(image, BASE)
    check_against_reference(words, ext["accepted"], ext["responses"], ref)
    assert (ext["image"] == ref.img).all()
    py = run_py(words, image.copy(), base=BASE, max_cycles=100_000, **opts)
    check_run(words, image, py)


@pytest.mark.parametrize("opts", [dict(latency=(1, 500), reorder=True, backpressure=0.5, valid_p=0.9, ready_p=0.8),
                                  dict(latency=(300, 500), reorder=False, backpressure=0.1)])
def test_long_latencies_and_scoreboard(opts):
    """Latencies up to 500 cycles: every one inside the range, results equal the reference's,
    and the scoreboard counts each request and its one response, by kind."""
    rng = np.random.default_rng(40)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 150, BASE, SIZE, image=image)
    res = run_py(words, image.copy(), base=BASE, seed=9, max_cycles=60_000, slots=64, **opts)
    check_run(words, image, res)
    lo, hi = opts["latency"]
    lat = [g[1] - g[0] for g in match(words, res["accepted"], res["responses"])]
    assert min(lat) >= lo and sorted(lat)[len(lat) // 2] <= hi
    mem = res["mem"]
    kinds = [w & 3 for w in words]
    board = mem.scoreboard
    assert board.accepted == board.answered == [kinds.count(k) for k in range(4)]
    assert board.problems() == [] and mem.idle
    check_scoreboard(board, "test")


def test_duplicate_response_is_caught():
    """A response put back into the queue after it left (as a model with a double-send bug
    would) reaches the port twice: the scoreboard names its tag and the check fails."""
    words = [request(kind=MemKind.READ, addr=BASE + LINE_BYTES * (i % 8), tag=i) for i in range(40)]
    injected = []

    async def duplicate_first_taken(ctx, mem):
        while mem.scoreboard.answered[MemKind.READ.value] == 0:
            await ctx.tick()
        waiting = {unpack(MemResp(8), p[1])["tag"] for p in mem.pending}
        tag = min(t for t in range(40) if t not in waiting and mem.scoreboard.accepted[0] > t)   # answered
        injected.append(tag)
        mem.pending.insert(0, [0, pack(MemResp(8), tag=tag, data=0, fault=0), MemKind.READ.value])   # due now

    res = run_py(words, np.zeros(SIZE, np.uint8), base=BASE, latency=(5, 20), reorder=True, seed=3,
                 meddle=duplicate_first_taken)
    board = res["mem"].scoreboard
    assert injected and board.duplicate_tag == injected[0]
    with pytest.raises(ScoreboardError, match=rf"tag {injected[0]:#x} with no request outstanding"):
        check_scoreboard(board, "injected")


def test_stress_settings():
    """Deterministic per seed, within [min_latency, 500], and varied over 20 seeds: short,
    long and wide ranges, both orders, several back-pressure rates."""
    runs = [stress_settings(s, min_latency=2) for s in range(20)]
    assert runs == [stress_settings(s, min_latency=2) for s in range(20)]
    for r in runs:
        lo, hi = r["latency"]
        assert 2 <= lo <= hi <= 500 and 0.0 <= r["backpressure"] < 1.0
    assert max(r["latency"][1] for r in runs) >= 400 and min(r["latency"][0] for r in runs) <= 4
    assert {r["reorder"] for r in runs} == {True, False}
    assert len({r["backpressure"] for r in runs}) >= 3
