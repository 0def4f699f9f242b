"""hdl.mem.extmem.ExtMemory in Amaranth's simulator, against a numpy reference memory.

* Random mixes of reads, masked writes and every atomic op (with faults mixed in), random
  valid gaps and response back-pressure: every response and the final image (read through
  the host port) equal the reference's, requests applied in acceptance order; counters.
* Latency: exactly the configured one; one request per cycle while ``slots >= latency``,
  ``req.ready`` withheld when every slot is taken.
* Order: responses leave out of order with ``reorder=True`` and a latency range, never
  with ``reorder=False``; every latency within the range.
* Faults (below/above the memory, misaligned, unknown kind or op) answer zeros and change
  nothing; random back-pressure on ``req.ready``; the host port; Verilog + lint.
* Run-time settings (``runtime_knobs``): latency range, ordering and back-pressure loaded
  with the seed, clamped into what the build holds; results still equal the reference.
* Scoreboard: counts what crosses the ports, equal to the reference's counts; fed a
  duplicated response, a reused tag or a lost response, it reports each.
"""
from __future__ import annotations

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.mem.atomic import AtomicOp
from dcu.memmodel import Scoreboard as PyScoreboard, ScoreboardError, check_scoreboard
from hdl.mem.extmem import ExtMemory, Knobs, Scoreboard, knob_values
from hdl.mem.memport import LINE_BYTES, MemKind
from tests.lint import convert_and_lint
from tests.memtraffic import (Reference, check_against_reference, drive, match, random_requests,
                              rejects, request)

BASE, SIZE = 0x4000, 1024


async def host_read(ctx, dut, size):
    """The whole memory through the host port, one dword per cycle."""
    out = []
    ctx.set(dut.host_re, 1)
    for k in range(size // 4):
        ctx.set(dut.host_addr, k)
        await ctx.tick()
        out.append(ctx.get(dut.host_rdata))
    ctx.set(dut.host_re, 0)
    return np.array(out, "<u4").view(np.uint8)


def run_ext(words, *, image=None, valid_p=1.0, ready_p=1.0, seed=0, read_image=True,
            max_cycles=20_000, **opts):
    """Drive ``words`` through a fresh ExtMemory(SIZE, BASE, **opts) initialised to ``image``."""
    image = np.zeros(SIZE, np.uint8) if image is None else image
    dut = ExtMemory(SIZE, BASE, init=image.tobytes(), **opts)
    res = {}
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        res["accepted"], res["responses"] = await drive(
            ctx, dut.req, dut.resp, words, np.random.default_rng(seed), valid_p=valid_p,
            ready_p=ready_p, max_cycles=max_cycles, what="ExtMemory")
        res["counters"] = {n: ctx.get(getattr(dut, n)) for n in ("reads", "writes", "atomics", "faults")}
        if read_image:
            res["image"] = await host_read(ctx, dut, SIZE)

    sim.add_testbench(bench)
    sim.run()
    return res


def check_run(words, image, res):
    ref = Reference(image, BASE)
    check_against_reference(words, res["accepted"], res["responses"], ref)
    assert (res["image"] == ref.img).all(), "final image differs from the reference"
    assert res["counters"] == ref.counts
    return ref


# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("opts", [
    dict(latency=(3, 9), reorder=True, backpressure=0.25, valid_p=0.7, ready_p=0.6, seed=1),
    dict(latency=2, reorder=False, valid_p=1.0, ready_p=0.8, seed=2),
    dict(latency=(2, 40), reorder=True, slots=4, valid_p=0.9, ready_p=0.9, seed=3),
    dict(latency=(3, 9), reorder=True, registered_read=True, valid_p=0.9, ready_p=0.8, seed=4),
    dict(latency=3, reorder=False, registered_read=True, valid_p=1.0, ready_p=1.0, seed=6),
    dict(latency=(2, 12), reorder=True, idle_merge_zero=True, valid_p=0.6, ready_p=0.7, seed=9),
    dict(latency=(3, 9), reorder=True, registered_read=True, idle_merge_zero=True, valid_p=0.8, ready_p=0.9, seed=8),
])
def test_random_mix(opts):
    rng = np.random.default_rng(opts["seed"] + 100)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 260, BASE, SIZE, image=image)
    res = run_ext(words, image=image, **opts)
    ref = check_run(words, image, res)
    assert ref.counts["faults"] > 5 and ref.counts["atomics"] > 50 and ref.counts["writes"] > 50
    assert ref.cmpswap_hits >= 3
    ops = {AtomicOp(r).name for r in (((w >> 2) & 15) for w in words if w & 3 == 2) if r < 14}
    assert ops == {op.name for op in AtomicOp}          # every op was exercised


@pytest.mark.parametrize("latency,slots", [(2, 4), (5, 8), (16, 16), (17, 16)])
def test_fixed_latency_in_order(latency, slots):
    rng = np.random.default_rng(latency)
    words = random_requests(rng, 60, BASE, SIZE, faults=False)
    res = run_ext(words, latency=latency, slots=slots, read_image=False)
    got = match(words, res["accepted"], res["responses"])
    assert [g[1] - g[0] for g in got] == [latency] * len(words)      # acceptance to response
    assert [r[1] for r in res["responses"]] == [i % 256 for i in range(len(words))]   # in order
    acc = res["accepted"]
    if slots >= latency:        # `latency` requests hold slots at once: one per cycle
        assert acc == list(range(len(words)))
    else:                       # a slot is free again `latency` cycles after it was taken
        assert acc[:slots] == list(range(slots))
        assert all(acc[i] == acc[i - slots] + latency for i in range(slots, len(words)))


@pytest.mark.parametrize("latency", [3, 6])
def test_registered_read_takes_every_other_cycle(latency):
    """The FPGA pipeline: exact latency, one request accepted every other cycle (a line read
    in one cycle is merged two cycles later), requests applied in order."""
    rng = np.random.default_rng(latency + 50)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 80, BASE, SIZE, image=image)
    res = run_ext(words, image=image, latency=latency, registered_read=True)
    check_run(words, image, res)
    got = match(words, res["accepted"], res["responses"])
    assert [g[1] - g[0] for g in got] == [latency] * len(words)
    assert res["accepted"] == list(range(0, 2 * len(words), 2))


def test_registered_read_needs_latency_3():
    with pytest.raises(ValueError, match="latency >= 3"):
        ExtMemory(SIZE, BASE, latency=2, registered_read=True)


def test_reorder_only_when_enabled():
    rng = np.random.default_rng(7)
    words = [request(kind=MemKind.READ, addr=BASE + int(a) * LINE_BYTES, tag=i)
             for i, a in enumerate(rng.integers(0, SIZE // LINE_BYTES, 200))]
    lo, hi = 4, 12
    for reorder in (False, True):
        res = run_ext(words, latency=(lo, hi), reorder=reorder, slots=16, read_image=False, seed=8)
        order = [r[1] for r in res["responses"]]
        lat = [g[1] - g[0] for g in match(words, res["accepted"], res["responses"])]
        assert min(lat) >= lo
        if reorder:
            assert order != sorted(order), "reorder=True never reordered"
            assert min(lat) == lo
            # with the port always ready a response waits past `hi` only behind other ripe ones
            assert max(lat) >= hi - 1 and len(set(lat)) > (hi - lo) // 2
        else:
            assert order == list(range(len(words)))


def test_faults_change_nothing():
    line = BASE + 2 * LINE_BYTES
    pattern = int.from_bytes(bytes(range(LINE_BYTES)), "little")
    full = (1 << LINE_BYTES) - 1
    bad = [
        dict(kind=MemKind.READ, addr=BASE - LINE_BYTES),              # below
        dict(kind=MemKind.WRITE, addr=BASE + SIZE, data=1, mask=1),   # above
        dict(kind=MemKind.ATOMIC, addr=BASE + SIZE - 2),              # misaligned, last dword
        dict(kind=MemKind.READ, addr=line + 4),                       # misaligned line
        dict(kind=MemKind.WRITE, addr=line + 64, data=0, mask=full),
        dict(kind=MemKind.ATOMIC, addr=line + 1, data=5),
        dict(kind=3, addr=line, data=0, mask=full),                   # unknown kind
        dict(kind=MemKind.ATOMIC, atomic=14, addr=line, data=9),      # unknown ops
        dict(kind=MemKind.ATOMIC, atomic=15, addr=line, data=9),
        dict(kind=MemKind.ATOMIC, addr=(1 << 48) - 4, data=9),        # top of the address space
    ]
    reqs = ([dict(kind=MemKind.WRITE, addr=line, data=pattern, mask=full)] + bad
            + [dict(kind=MemKind.READ, addr=line),
               dict(kind=MemKind.ATOMIC, addr=BASE + SIZE - 4, atomic=AtomicOp.ADD, data=1)])
    words = [request(tag=i, **r) for i, r in enumerate(reqs)]
    res = run_ext(words, latency=3)
    ref = check_run(words, np.zeros(SIZE, np.uint8), res)
    got = match(words, res["accepted"], res["responses"])
    assert [g[3] for g in got] == [0] + [1] * len(bad) + [0, 0]
    assert got[-2][2] == pattern
    assert res["counters"]["faults"] == len(bad) == len(ref.fault_list)


def test_request_backpressure():
    rng = np.random.default_rng(11)
    words = random_requests(rng, 150, BASE, SIZE, faults=False)
    free = run_ext(words, latency=2, read_image=False)["accepted"]
    assert free == list(range(len(words)))
    res = run_ext(words, latency=2, backpressure=0.5, read_image=False)
    acc = res["accepted"]
    stalls = acc[-1] + 1 - len(words)                  # cycles a request waited for ready
    assert 0.35 < stalls / (acc[-1] + 1) < 0.65, stalls


@pytest.mark.parametrize("idle_merge_zero", [False, True])
def test_host_port(idle_merge_zero):
    dut = ExtMemory(SIZE, BASE, latency=2, idle_merge_zero=idle_merge_zero)
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    seen = {}

    async def bench(ctx):
        for k, v in ((0, 0x11223344), (5, 0xDEADBEEF), (SIZE // 4 - 1, 0xCAFEF00D)):
            ctx.set(dut.host_addr, k)
            ctx.set(dut.host_wdata, v)
            ctx.set(dut.host_we, 1)
            assert not ctx.get(dut.req.ready)              # the host has the RAM this cycle
            await ctx.tick()
        ctx.set(dut.host_we, 0)
        # an atomic on dword 5, then a host read right behind it sees the new value
        ctx.set(dut.req.payload.as_value(), request(kind=MemKind.ATOMIC, atomic=AtomicOp.XOR,
                                                    addr=BASE + 20, data=0xFFFF_0000, tag=7))
        ctx.set(dut.req.valid, 1)
        await ctx.tick()
        ctx.set(dut.req.valid, 0)
        ctx.set(dut.host_addr, 5)
        ctx.set(dut.host_re, 1)
        await ctx.tick()
        seen["after_atomic"] = ctx.get(dut.host_rdata)
        ctx.set(dut.host_re, 0)
        seen["image"] = await host_read(ctx, dut, SIZE)

    sim.add_testbench(bench)
    sim.run()
    assert seen["after_atomic"] == 0xDEADBEEF ^ 0xFFFF_0000
    dw = seen["image"].view("<u4")
    assert (dw[0], dw[5], dw[-1]) == (0x11223344, 0xDEADBEEF ^ 0xFFFF_0000, 0xCAFEF00D)
    assert not dw[1:5].any() and not dw[6:-1].any()


def test_bad_parameters():
    rejects(lambda: ExtMemory(100), "size_bytes")
    rejects(lambda: ExtMemory(1024, base=64), "base")
    rejects(lambda: ExtMemory(1024, latency=1), "latency >= 2")
    rejects(lambda: ExtMemory(1024, latency=(5, 3)), "latency")
    rejects(lambda: ExtMemory(1024, slots=6), "slots")
    rejects(lambda: ExtMemory(1024, backpressure=1.0), "backpressure")
    rejects(lambda: ExtMemory(128, init=bytes(129)), "init")


def test_lint(tmp_path):
    convert_and_lint(ExtMemory(1024, BASE, latency=(4, 9), reorder=True, backpressure=0.25), "extmem", tmp_path)
    convert_and_lint(ExtMemory(384, 0, latency=2, slots=2), "extmem_small", tmp_path)
    convert_and_lint(ExtMemory(1024, BASE, latency=3, registered_read=True, idle_merge_zero=True),
                     "extmem_gated", tmp_path)


# ---- run-time settings and the scoreboard ------------------------------------------------
def run_knobs(words, knobs, *, image=None, seed=5, valid_p=1.0, ready_p=1.0, max_latency=60, slots=16):
    """``words`` through an ExtMemory with run-time settings: ``knobs`` (:func:`knob_values`
    fields) and ``seed`` are loaded with a ``reseed`` pulse before the traffic starts."""
    image = np.zeros(SIZE, np.uint8) if image is None else image
    dut = ExtMemory(SIZE, BASE, latency=(8, max_latency), reorder=True, runtime_seed=True, runtime_knobs=True,
                    scoreboard=True, slots=slots, init=image.tobytes())
    res = {}
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        ctx.set(dut.knobs, knobs)
        ctx.set(dut.seed, seed)
        ctx.set(dut.reseed, 1)
        await ctx.tick()
        ctx.set(dut.reseed, 0)
        res["accepted"], res["responses"] = await drive(
            ctx, dut.req, dut.resp, words, np.random.default_rng(seed), valid_p=valid_p, ready_p=ready_p,
            what="ExtMemory")
        await ctx.tick()
        res["idle"] = ctx.get(dut.idle)
        res["board"] = PyScoreboard.from_record(ctx.get(dut.board))
        res["counters"] = {n: ctx.get(getattr(dut, n)) for n in ("reads", "writes", "atomics", "faults")}
        res["image"] = await host_read(ctx, dut, SIZE)

    sim.add_testbench(bench)
    sim.run()
    return res


def _latencies(words, res):
    return [g[1] - g[0] for g in match(words, res["accepted"], res["responses"])]


def _reads(n, rng):
    return [request(kind=MemKind.READ, addr=BASE + int(a) * LINE_BYTES, tag=i)
            for i, a in enumerate(rng.integers(0, SIZE // LINE_BYTES, n))]


def test_knob_fixed_latency_in_order():
    words = _reads(60, np.random.default_rng(1))
    res = run_knobs(words, knob_values(5, False, 0.0))
    assert _latencies(words, res) == [5] * len(words)
    assert [r[1] for r in res["responses"]] == list(range(len(words)))
    assert res["accepted"] == list(range(len(words)))          # 16 slots cover 5 cycles


def test_knob_range_and_reordering():
    """A range far from the build's initial (8, 60): both ends reached, most latencies inside
    (one response leaves per cycle: a few wait behind others), responses overtake each other."""
    words = _reads(200, np.random.default_rng(2))
    res = run_knobs(words, knob_values((20, 50), True, 0.0), slots=64, valid_p=0.4)
    lat = sorted(_latencies(words, res))
    assert lat[0] == 20 and lat[-1] >= 49 and lat[int(0.9 * len(lat))] <= 50, lat
    order = [r[1] for r in res["responses"]]
    assert order != sorted(order)
    same = run_knobs(words, knob_values((20, 50), False, 0.0), slots=64)
    assert [r[1] for r in same["responses"]] == list(range(len(words)))


def test_knob_backpressure():
    words = _reads(200, np.random.default_rng(3))
    res = run_knobs(words, knob_values(2, False, 0.5))
    acc = res["accepted"]
    stalls = acc[-1] + 1 - len(words)
    assert 0.35 < stalls / (acc[-1] + 1) < 0.65, stalls
    free = run_knobs(words, knob_values(2, False, 0.0))
    assert free["accepted"] == list(range(len(words)))


def test_knobs_are_clamped_to_the_build():
    """A latency below the pipeline's 2 cycles or beyond the build's longest is clamped, and a
    range with ``hi < lo`` becomes ``lo``: the memory never draws a latency it cannot hold."""
    words = _reads(80, np.random.default_rng(4))
    for (lo, hi), want in (((0, 1), 2), ((63, 63), 40), ((9, 3), 9)):
        res = run_knobs(words, {"latency_lo": lo, "latency_hi": hi, "reorder": 0, "backpressure": 0},
                        max_latency=40, slots=64)
        assert _latencies(words, res) == [want] * len(words), (lo, hi)


@pytest.mark.parametrize("knobs", [((2, 60), True, 0.3), ((30, 60), False, 0.6)])
def test_knobs_random_mix_and_scoreboard(knobs):
    """Random traffic with faults under run-time settings: responses and image equal the
    reference's; the scoreboard counts every request and response by kind, and is clean."""
    rng = np.random.default_rng(30)
    image = rng.integers(0, 256, SIZE, dtype=np.uint8)
    words = random_requests(rng, 200, BASE, SIZE, image=image)
    res = run_knobs(words, knob_values(*knobs), image=image, valid_p=0.8, ready_p=0.7, slots=64)
    ref = check_run(words, image, res)
    board = res["board"]
    kinds = [w & 3 for w in words]
    assert board.accepted == board.answered == [kinds.count(k) for k in range(4)]
    assert board.accepted[:3] == [ref.counts[k] for k in ("reads", "writes", "atomics")]
    assert board.problems() == [] and res["idle"]
    check_scoreboard(board, "test")


def test_scoreboard_reports_duplicate_reused_and_lost():
    """The scoreboard fed by hand: a response for a tag already answered (duplicate), a
    request for a tag still outstanding (reused), and a request never answered (lost)."""
    sb = Scoreboard(tag_bits=8)
    boards = []

    async def bench(ctx):
        async def step(req=None, resp=None):
            ctx.set(sb.req_fire, req is not None)
            ctx.set(sb.resp_fire, resp is not None)
            if req is not None:
                ctx.set(sb.req_kind, req[0])
                ctx.set(sb.req_tag, req[1])
            if resp is not None:
                ctx.set(sb.resp_kind, resp[0])
                ctx.set(sb.resp_tag, resp[1])
            await ctx.tick()
        await step(req=(MemKind.READ.value, 5))
        await step(req=(MemKind.ATOMIC.value, 6), resp=(MemKind.READ.value, 5))   # both in one cycle
        await step(resp=(MemKind.ATOMIC.value, 6))
        boards.append(PyScoreboard.from_record(ctx.get(sb.board)))               # clean so far
        await step(resp=(MemKind.ATOMIC.value, 6))                                 # duplicate
        await step(req=(MemKind.WRITE.value, 7))
        await step(req=(MemKind.WRITE.value, 7))                                   # reused, one lost
        await step()
        boards.append(PyScoreboard.from_record(ctx.get(sb.board)))

    sim = Simulator(sb)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    clean, bad = boards
    assert clean == PyScoreboard([1, 0, 1, 0], [1, 0, 1, 0]) and clean.problems() == []
    assert bad.accepted == [1, 2, 1, 0] and bad.answered == [1, 0, 2, 0]
    assert (bad.duplicate_tag, bad.reused_tag) == (6, 7)
    with pytest.raises(ScoreboardError) as e:
        check_scoreboard(bad, "k on rtl (tiny)")
    text = str(e.value)
    assert text.startswith("k on rtl (tiny): the memory model's scoreboard failed")
    for phrase in ("2 WRITE requests accepted, 0 answered (lost: 2)", "1 ATOMIC requests accepted, 2 answered "
                   "(duplicated: 1)", "tag 0x6 with no request outstanding", "tag 0x7 while one was outstanding"):
        assert phrase in text, text


def test_knobs_lint(tmp_path):
    convert_and_lint(ExtMemory(1024, BASE, latency=(2, 500), reorder=True, runtime_seed=True, runtime_knobs=True,
                               scoreboard=True, slots=64), "extmem_knobs", tmp_path)


def test_knobs_need_runtime_seed():
    rejects(lambda: ExtMemory(1024, runtime_knobs=True), "runtime_knobs needs runtime_seed")
    assert Knobs(500).size == 9 + 9 + 1 + 8
