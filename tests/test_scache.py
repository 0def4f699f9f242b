"""hdl.mem.scache.ScalarCache in Amaranth's simulator, against the model's s_load semantics.

* Random loads of every width (b32..b512, u8/i8/u16/i16) at exact byte addresses, many
  straddling two lines or two memory lines, on all four ports at once, with random memory
  latency and reordering and back-pressure on every stream: every beat equals the model's
  ``build_smem`` result on the same memory image; the beats of one request leave back to
  back on its port. With 64-bit line-memory words and with 32-bit ones (``fpga``).
* Hit/miss counters and memory reads for a known sequence (sibling fill, straddle, conflict
  eviction, flush); flush makes changed memory visible, no flush keeps the cached copy; a
  read in flight at a flush answers its loads but is not kept.
* Hit under miss: a hit accepted after a miss completes first, across ports and on one port;
  misses on a memory line already being read wait for that read.
* Hit latency (default, rdna1 and fpga, whose answer stage keeps it) and one request accepted
  per cycle with four ports busy; hits keep their latency while a fill is written.
* A fill into the memory-line slot a port sends from, or that a looked-up hit will read,
  waits until they have answered.
* A fault (outside memory, or above the 48-bit port) answers zeros and latches ``error``.
* Verilog conversion and ``verilator --lint-only`` for ``default``, ``rdna1`` and ``fpga``.
"""
from __future__ import annotations

import gc
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable

from hdl.config import ConfigError, get_config
from hdl.isa_tables import OpId
from hdl.mem.scache import ScalarCache
from sim.memory import GlobalMemory, MemoryFault
from sim.memory_ops import build_smem
from sim.wave import NULL
from tests.cache_harness import CacheBench, MemImage
from tests.lint import convert_and_lint

BASE = 0x1000_0000
DWORDS = {OpId.S_LOAD_B32: 1, OpId.S_LOAD_B64: 2, OpId.S_LOAD_B96: 3, OpId.S_LOAD_B128: 4,
          OpId.S_LOAD_B256: 8, OpId.S_LOAD_B512: 16, OpId.S_LOAD_U8: 1, OpId.S_LOAD_I8: 1,
          OpId.S_LOAD_U16: 1, OpId.S_LOAD_I16: 1}


def make_memory(size: int, seed: int):
    """A model GlobalMemory with one buffer of random bytes at BASE, and the image the bench
    serves (the same bytes)."""
    mem = GlobalMemory(base=BASE)
    mem.allocate(size, "mem")
    mem.data[:size] = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    return mem, MemImage(BASE, mem.data[:size])


def model_load(mem: GlobalMemory, op: OpId, addr: int):
    """The dwords the model's s_load handler writes for ``op`` at ``addr`` (None: it faults)."""
    inst = SimpleNamespace(name=op.name.lower(), f={"sbase": 0, "sdata": 0, "soffset": NULL, "ioffset": 0})
    out = {}
    wave = SimpleNamespace(sread=lambda reg, bits, lane: addr,
                           swrite=lambda reg, bits, value: out.__setitem__(reg, value))
    ctx = SimpleNamespace(mem=mem, record=lambda *a, **k: None)
    try:
        build_smem(inst)(wave, ctx)
    except MemoryFault:
        return None
    return [out[i] for i in range(len(out))]


def request(op, addr, wave=0, seq=0, sdst=0):
    return {"op": op, "addr": addr, "wave": wave, "seq": seq, "sdst": sdst, "dwords": DWORDS[op]}


def responses(bench, port):
    """The port's beats split into requests: [(seq, wave, first sdst, [data...], end cycle)];
    asserts that each request's beats are consecutive with consecutive sdst."""
    out, cur = [], None
    for cycle, b in bench.beats[port]:
        if cur is None:
            cur = (b.seq, b.wave, b.sdst, [])
        assert (b.seq, b.wave) == cur[:2], f"port {port}: beats of two requests interleave at cycle {cycle}"
        assert b.sdst == (cur[2] + len(cur[3])) % 128
        cur[3].append(b.data)
        if b.last:
            out.append(cur + (cycle,))
            cur = None
    assert cur is None, f"port {port}: request seq {cur[0]} has no last beat"
    return out


def answered(bench, port):
    """Requests whose last beat has left ``port``."""
    return sum(b.last for _, b in bench.beats[port])


def all_answered(bench):
    return (all(not q for q in bench.queues)
            and all(answered(bench, p) == len(bench.accepted[p]) for p in range(4)))


def check_against_model(bench, mem, port):
    """Every request on ``port`` answered once, with the model's dwords."""
    got = {r[0]: r for r in responses(bench, port)}
    assert len(got) == len(bench.accepted[port])
    for _, req in bench.accepted[port]:
        seq, wave, sdst, data, _ = got[req["seq"]]
        want = model_load(mem, req["op"], req["addr"])
        assert want is not None
        assert (wave, sdst) == (req["wave"], req["sdst"])
        assert data == want, f"port {port} {req['op'].name} at {req['addr']:#x}: {data} != {want}"


# --------------------------------------------------------------------------------------
def random_loads(preset, size: int, per_port: int, seed: int):
    """Random loads of every width at exact byte addresses on all four ports, half of them
    around a few hot addresses, the rest anywhere in ``size`` bytes; checked against the model.
    ``preset``: a preset's name or a configuration. Returns the (hits, misses) counters."""
    cfg = get_config(preset)
    mem, image = make_memory(size, seed=seed)
    rng = np.random.default_rng(seed + 1)
    bench = CacheBench(ScalarCache(cfg), image, rng, latency=(2, 40), mem_ready=0.7, resp_ready=0.7)
    hot = [BASE + int(a) for a in rng.integers(0, size - 64, 6)]
    ops = list(DWORDS)
    straddles = 0
    for p in range(4):
        for seq in range(per_port):
            op = ops[int(rng.integers(len(ops)))]
            nbytes = {"U8": 1, "I8": 1, "16": 2}.get(op.name[-2:], 4 * DWORDS[op])
            if rng.random() < 0.5:
                addr = hot[int(rng.integers(len(hot)))] + int(rng.integers(0, 64))
            else:
                addr = BASE + int(rng.integers(0, size))
            addr = min(addr, BASE + size - nbytes)
            aligned = addr & ~3 if nbytes >= 4 else addr & ~(nbytes - 1)
            straddles += (aligned % 64) + nbytes > 64
            bench.send(p, request(op, addr, wave=int(rng.integers(cfg.wave_slots)), seq=seq,
                                  sdst=int(rng.integers(0, 100))), at=int(rng.integers(0, 8 * per_port)))
    # a fill holds the port for 16 cycles: a run that misses on most loads is bound by fills
    bench.run(all_answered, limit=100 * per_port + 2000)
    assert straddles > per_port // 3
    for p in range(4):
        check_against_model(bench, mem, p)
    hits, misses = bench.counters
    assert hits + misses == 4 * per_port and hits and misses
    assert not bench.error["valid"]
    return hits, misses


def test_random_loads_all_ports():
    """A memory four times the (tiny) cache: conflicts and evictions happen."""
    hits, misses = random_loads("tiny", 4096, 100, seed=1)
    assert hits > 50 and misses > 50


def test_random_loads_answer_stage():
    """The ``fpga`` preset's cache (``scalar_cache_stage``: the answer's bytes a cycle after the
    choice) under the same random loads and back-pressure, a memory four times the cache."""
    assert get_config("fpga").scalar_cache_stage
    hits, misses = random_loads("fpga", 4096, 100, seed=3)
    assert hits > 50 and misses > 50


def test_random_loads_dword_words():
    """32-bit line-memory words (the ``fpga`` preset's, here without its answer stage): a
    beat reads its dword alone and a fill writes a memory line in 32 cycles."""
    hits, misses = random_loads(get_config("tiny").replace(scalar_cache_word=32), 4096, 100, seed=5)
    assert hits > 50 and misses > 50


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 16))
def test_random_loads_sweep(seed):
    random_loads("tiny" if seed % 2 else "default", 4096 * (1 + seed % 3), 400, seed)


def sequential(bench, port, reqs, flush_before=()):
    """A hook that sends ``reqs`` one at a time on ``port``, each after the previous answered;
    a flush is pulsed before the requests whose index is in ``flush_before``."""
    state = {"next": 0, "flushed": False}

    def hook(b):
        n = state["next"]
        if n < len(reqs) and answered(b, port) == n and not b.queues[port] and len(b.accepted[port]) == n:
            if n in flush_before and not state["flushed"]:
                state["flushed"] = True
                return True
            state["flushed"] = False
            b.send(port, reqs[n])
            state["next"] = n + 1
        return False
    return hook


def test_hit_miss_counts_and_flush():
    cfg = get_config("default")                   # 4 KiB direct mapped: BASE and BASE + 4 KiB conflict
    mem, image = make_memory(8192, seed=3)
    a = BASE
    seqs = [(OpId.S_LOAD_B32, a, "miss"), (OpId.S_LOAD_B64, a + 8, "hit"),
            (OpId.S_LOAD_B32, a + 64, "hit"),          # the sibling line came with the first fill
            (OpId.S_LOAD_B128, a + 120, "miss"),       # straddles into the next memory line
            (OpId.S_LOAD_B512, a + 96, "hit"),         # two lines, both present now
            (OpId.S_LOAD_U8, a + 4096 + 3, "miss"),    # same set: evicts a's memory line
            (OpId.S_LOAD_B32, a, "miss"),
            (OpId.S_LOAD_B32, a + 4, "hit"),           # (memory changed here; no flush yet)
            (OpId.S_LOAD_B32, a + 4, "miss"),          # after the flush: the new value
            (OpId.S_LOAD_I16, a + 6, "hit")]
    reqs = [request(op, ad, seq=i) for i, (op, ad, _) in enumerate(seqs)]
    before = mem.data[4:8].copy()
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(4), latency=(5, 30))
    send_next = sequential(bench, 0, reqs, flush_before={8})

    def hook(b):
        if answered(b, 0) == 7 and mem.data[4] == before[0]:   # after request 6's fill
            mem.data[4:8] = [0xDE, 0xAD, 0xBE, 0xEF]
        return send_next(b)
    bench.run(lambda b: answered(b, 0) == len(reqs), hook=hook, limit=3000)
    got = responses(bench, 0)
    assert [g[0] for g in got] == list(range(len(reqs)))
    # request 7 still sees the cached bytes; requests 8 and 9 the new ones
    assert got[7][3] == [int.from_bytes(before.tobytes(), "little")]
    assert got[8][3] == [0xEFBEADDE]
    for i in (8, 9):
        assert got[i][3] == model_load(mem, seqs[i][0], seqs[i][1])
    want_hits = sum(k == "hit" for *_, k in seqs)
    assert bench.counters == (want_hits, len(seqs) - want_hits)
    assert [ad for _, ad in bench.reads] == [a, a + 128, a + 4096, a, a]


def test_flush_during_a_read():
    """A read in flight at a flush still answers its loads but is not kept."""
    cfg = get_config("default")
    mem, image = make_memory(4096, seed=13)
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(14), latency=(30, 31),
                       mem_ready=1.0, resp_ready=1.0)
    bench.send(0, request(OpId.S_LOAD_B32, BASE + 64, seq=0))
    bench.send(0, request(OpId.S_LOAD_B32, BASE + 68, seq=1), at=60)
    bench.run(all_answered, hook=lambda b: b.cycle == 10, limit=500)
    assert [r for _, r in bench.reads] == [BASE, BASE]
    assert bench.counters == (0, 2)
    check_against_model(bench, mem, 0)


def test_hit_under_miss():
    """A hit accepted after a miss completes first: on another port and on the same port."""
    cfg = get_config("default")
    mem, image = make_memory(8192, seed=5)
    x, y, z = BASE + 256, BASE + 2048, BASE + 3072
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(6), latency=(60, 61),
                       mem_ready=1.0, resp_ready=1.0)
    bench.send(1, request(OpId.S_LOAD_B32, x, seq=0))               # warm x

    def hook(b):
        if b.cycle == 100:
            b.send(0, request(OpId.S_LOAD_B128, y, seq=0))          # miss
            b.send(2, request(OpId.S_LOAD_B64, z, seq=0))           # miss
            b.send(1, request(OpId.S_LOAD_B256, x + 4, seq=1), at=101)   # hit
            b.send(2, request(OpId.S_LOAD_B32, x + 32, seq=1), at=101)   # hit, same port as a miss
        return False
    bench.run(lambda b: b.cycle > 100 and all_answered(b), hook=hook, limit=1000)
    r0, r1, r2 = (responses(bench, p) for p in range(3))
    end = {(p, r[0]): r[4] for p, rs in enumerate((r0, r1, r2)) for r in rs}
    assert end[(1, 1)] < end[(0, 0)] - 40
    assert [r[0] for r in r2] == [1, 0], "the hit on port 2 must overtake its miss"
    assert end[(2, 1)] < end[(2, 0)] - 40
    for p in range(3):
        check_against_model(bench, mem, p)


def test_misses_share_reads():
    """Loads from all four ports on one absent memory line (and a straddle into the next)
    make one read per memory line; all of them wait for it."""
    cfg = get_config("default")
    mem, image = make_memory(4096, seed=11)
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(12), latency=(30, 31),
                       mem_ready=1.0, resp_ready=1.0)
    for p in range(4):
        bench.send(p, request(OpId.S_LOAD_B64, BASE + 512 + 8 * p, seq=0))
        bench.send(p, request(OpId.S_LOAD_B128, BASE + 512 + 120 - 4 * p, seq=1))
    bench.run(all_answered, limit=500)
    assert [r for _, r in bench.reads] == [BASE + 512, BASE + 640]
    assert bench.counters == (0, 8)
    for p in range(4):
        check_against_model(bench, mem, p)


def test_hit_during_a_fill():
    """A hit whose lookup falls in the cycles a fill is written answers with its usual latency,
    while the fill's words go into another memory line's slot."""
    cfg = get_config("default")
    mem, image = make_memory(8192, seed=15)
    x, y = BASE + 2048, BASE + 256
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(16), latency=(20, 21),
                       mem_ready=1.0, resp_ready=1.0)
    bench.send(1, request(OpId.S_LOAD_B32, y, seq=0))                  # warm y
    bench.send(0, request(OpId.S_LOAD_B64, x, seq=0), at=100)          # miss
    for k in range(60):
        bench.send(1, request(OpId.S_LOAD_B32, y + 4 * (k % 16), seq=1 + k, sdst=k % 16), at=100 + k)
    bench.run(lambda b: b.cycle > 100 and all_answered(b), limit=1000)
    (taken, _), = [f for f in bench.fills if f[1] == x]
    first = {b.seq: c for c, b in bench.beats[1]}
    # (one answer starts per cycle: a hit may wait a cycle for the miss's answer to start)
    during = [(c, r) for c, r in bench.accepted[1] if r["seq"] > 0 and taken - 15 <= c + 1 <= taken - 4]
    assert len(during) >= 10, "hits looked up while the fill is written"
    for c, r in during:
        assert first[r["seq"]] - c == cfg.scalar_hit_latency
    assert responses(bench, 0)[0][4] > taken
    for p in (0, 1):
        check_against_model(bench, mem, p)
    assert bench.counters == (60, 2)


def test_fill_waits_for_the_answers_from_its_slot():
    """A fill into the memory-line slot a port is sending from, and that a looked-up hit waiting
    for its port will read, waits until both have answered: neither sees the new line."""
    cfg = get_config("default")                   # 4 KiB direct mapped: BASE and BASE + 4 KiB conflict
    mem, image = make_memory(8192, seed=17)
    a, b, c = BASE, BASE + 4096, BASE + 1024
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(18), latency=(2, 3),
                       mem_ready=1.0, resp_ready=1.0)
    bench.send(0, request(OpId.S_LOAD_B32, a, seq=0))                   # warm a
    bench.send(0, request(OpId.S_LOAD_B32, c, seq=1), at=50)
    bench.send(0, request(OpId.S_LOAD_B512, a + 8, seq=2), at=100)      # 16 beats from a's slot
    bench.send(0, request(OpId.S_LOAD_B32, a + 4, seq=3), at=100)       # hit, waits for port 0
    bench.send(1, request(OpId.S_LOAD_B64, b, seq=0), at=100)           # miss into a's slot
    bench.run(lambda b_: b_.cycle > 100 and all_answered(b_), limit=1000)
    r0 = {r[0]: r for r in responses(bench, 0)}
    (b_read, _), = [r for r in bench.reads if r[1] == b]
    (b_taken, _), = [f for f in bench.fills if f[1] == b]
    assert b_taken - b_read > 25, "the response waited"
    assert r0[2][4] < r0[3][4] < b_taken - 15, "the fill started after the last beat from a's slot"
    assert [ad for _, ad in bench.reads] == [a, c, b]
    for p in (0, 1):
        check_against_model(bench, mem, p)
    assert bench.counters == (2, 3)


@pytest.mark.parametrize("preset", ["default", "rdna1", "fpga"])
def test_hit_latency_and_throughput(preset):
    """A hit's first beat leaves scalar_hit_latency cycles after acceptance; with all four
    ports loaded, one request is accepted every cycle."""
    cfg = get_config(preset)
    mem, image = make_memory(4096, seed=7)
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(8), latency=(10, 11),
                       mem_ready=1.0, resp_ready=1.0)
    bench.send(0, request(OpId.S_LOAD_B32, BASE, seq=0))             # warm one memory line

    def hook(b):
        if b.cycle == 60:                                                 # its fill is written
            for p in range(4):
                for k in range(10):
                    b.send(p, request(OpId.S_LOAD_B32, BASE + 4 * (p + k), seq=1 + k, sdst=k))
        return False
    bench.run(lambda b: b.cycle > 60 and all_answered(b), hook=hook, limit=1000)
    accepts = sorted(c for p in range(4) for c, r in bench.accepted[p] if r["seq"] > 0)
    assert accepts == list(range(accepts[0], accepts[0] + 40)), "one request per cycle"
    latency = max(4 if cfg.scalar_cache_stage else 3, cfg.scalar_hit_latency)
    for p in range(4):
        first = {b.seq: c for c, b in bench.beats[p]}
        for c, r in bench.accepted[p]:
            if r["seq"] > 0:
                assert first[r["seq"]] - c == latency
        check_against_model(bench, mem, p)
    assert bench.counters == (40, 1)


def test_fault():
    cfg = get_config("tiny")
    mem, image = make_memory(1024, seed=9)
    bench = CacheBench(ScalarCache(cfg), image, np.random.default_rng(10), latency=(3, 9))
    bench.send(0, request(OpId.S_LOAD_B32, BASE + 16, seq=0))
    bench.send(3, request(OpId.S_LOAD_B64, BASE + 1024 + 8, wave=1, seq=0), at=30)   # past the end
    bench.send(2, request(OpId.S_LOAD_B32, BASE + 1020, wave=0, seq=0), at=200)
    bench.send(1, request(OpId.S_LOAD_B32, 1 << 52, wave=1, seq=0), at=200)          # above 48 bits
    bench.run(all_answered, limit=1000)
    assert responses(bench, 3)[0][3] == [0, 0]
    assert responses(bench, 1)[0][3] == [0]
    assert bench.error == {"valid": 1, "simd": 3, "wave": 1, "addr": BASE + 1024 + 8}
    check_against_model(bench, mem, 0)
    check_against_model(bench, mem, 2)


def config_error(make, match):
    """``make()`` raises ConfigError matching ``match`` (the half-built component is dropped quietly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ConfigError, match=match):
            make()
        gc.collect()


def test_bad_geometry():
    config_error(lambda: ScalarCache(get_config("default").replace(scalar_cache_line=128)),
                 "lines of 128 bytes are not supported")
    config_error(lambda: ScalarCache(get_config("default").replace(scalar_cache_reads=100)), "100 reads in flight")
    config_error(lambda: get_config("fpga").replace(scalar_cache_slots=1), "scalar_cache_slots must be 0")
    config_error(lambda: get_config("fpga").replace(scalar_cache_reads=0), "scalar_cache_reads must be >= 1")
    config_error(lambda: get_config("fpga").replace(scalar_cache_word=128), "scalar_cache_word must be 32 or 64")


@pytest.mark.parametrize("preset", ["default", "rdna1", "fpga"])
def test_lint(preset, tmp_path):
    convert_and_lint(ScalarCache(get_config(preset)), f"scache_{preset}", tmp_path)
