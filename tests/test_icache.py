"""hdl.mem.icache.ICache in Amaranth's simulator, against a numpy memory image.

* Random instruction streams (several waves per port, sequential chunks with jumps to new
  epochs) on all four ports at once, with random memory latency and reordering and
  back-pressure on every stream: every response is the 64-byte line of the image (32-byte
  fetches on ``fpga``: its half), with the request's wave and epoch, in request order on
  each port (hence per wave).
* Hit/miss/prefetch counters and the memory reads of a known sequence: next-line prefetch,
  a miss that prefetches too, a prefetch past the end of memory (dropped, no error), flush.
* A hit on one port while another port waits for memory; 2-cycle hits; one fetch accepted
  per cycle with four ports busy.
* A flush while a read is in flight: the waiting fetch reads its line again.
* A fetch outside memory answers zeros and latches ``error``.
* Verilog conversion and ``verilator --lint-only`` for ``default`` and ``rdna1``.
"""
from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable

from hdl.config import ConfigError, get_config
from hdl.mem.icache import ICache
from tests.cache_harness import CacheBench, MemImage
from tests.lint import convert_and_lint

BASE = 0x4000_0000


def make_image(size: int, seed: int) -> MemImage:
    return MemImage(BASE, np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8))


def chunk(image: MemImage, addr: int, size: int = 64) -> int:
    """What a fetch of ``size`` bytes (``config.fetch_bytes``) at ``addr`` answers: the
    aligned ``size`` bytes around it (64: the whole line)."""
    off = (addr & -size) - image.base
    return int.from_bytes(image.data[off: off + size].tobytes(), "little")


def fetch(addr, wave=0, epoch=0):
    return {"addr": addr, "wave": wave, "epoch": epoch}


def answered(bench, port):
    return len(bench.beats[port])


def all_answered(bench):
    return all(not q for q in bench.queues) and all(
        answered(bench, p) == len(bench.accepted[p]) for p in range(len(bench.queues)))


def check_in_order(bench, image, port, zero=(), size=64):
    """Responses on ``port`` are the accepted fetches' ``size``-byte chunks, in request order
    (chunks at addresses in ``zero`` faulted and answer zeros)."""
    assert len(bench.beats[port]) == len(bench.accepted[port])
    for (_, req), (cycle, r) in zip(bench.accepted[port], bench.beats[port]):
        want = 0 if req["addr"] in zero else chunk(image, req["addr"], size)
        assert (r.wave, r.epoch) == (req["wave"], req["epoch"]), f"port {port} cycle {cycle}: order"
        assert r.data == want, f"port {port} cycle {cycle}: fetch at {req['addr']:#x}"


# --------------------------------------------------------------------------------------
def random_streams(preset: str, size: int, per_port: int, seed: int):
    """Each port interleaves the streams of several waves: consecutive 16-byte chunks, and
    now and then a jump (a new epoch) to a random address."""
    cfg = get_config(preset)
    image = make_image(size, seed)
    rng = np.random.default_rng(seed + 1)
    bench = CacheBench(ICache(cfg), image, rng, latency=(2, 40), mem_ready=0.7, resp_ready=0.7)
    for p in range(4):
        pc = [BASE + 16 * int(rng.integers(size // 16)) for _ in range(cfg.wave_slots)]
        epoch = [0] * cfg.wave_slots
        for k in range(per_port):
            w = int(rng.integers(cfg.wave_slots))
            if rng.random() < 0.08 or pc[w] >= BASE + size:
                pc[w], epoch[w] = BASE + 16 * int(rng.integers(size // 16)), (epoch[w] + 1) % 4
            bench.send(p, fetch(pc[w] + int(rng.integers(16)), w, epoch[w]), at=int(rng.integers(0, 3 * per_port)))
            pc[w] += 16
    bench.run(all_answered, limit=30 * per_port + 2000)
    for p in range(4):
        check_in_order(bench, image, p, size=cfg.fetch_bytes)
    hits, misses, prefetches = bench.counters
    assert hits + misses == 4 * per_port and hits and misses and prefetches
    assert not bench.error["valid"]
    return bench


def test_random_streams_all_ports():
    """Code four times the (tiny) instruction cache: conflicts and evictions happen."""
    bench = random_streams("tiny", 8192, 150, seed=1)
    hits, misses, prefetches = bench.counters
    assert hits > 200 and misses > 50 and prefetches > 20


def test_random_streams_32_byte_fetches():
    """The ``fpga`` preset fetches 32 bytes: each answer is its half of the line, from a hit,
    a fill or a fill joined by another fetch."""
    assert get_config("fpga").fetch_bytes == 32
    bench = random_streams("fpga", 8192, 150, seed=2)
    hits, misses, prefetches = bench.counters
    assert hits > 200 and misses > 50 and prefetches > 20


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 14))
def test_random_streams_sweep(seed):
    random_streams("tiny" if seed % 2 else "default", 4096 * (1 + seed % 3), 600, seed)


def sequential(reqs, port=0, gap=0):
    """A hook sending ``reqs`` (a fetch dict, or "flush") one at a time on ``port``, each
    ``gap`` cycles after the previous one was answered."""
    state = {"next": 0, "free_at": 0}

    def hook(b):
        n = state["next"]
        if n < len(reqs) and answered(b, port) == len(b.accepted[port]) and not b.queues[port]:
            if b.cycle < state["free_at"]:
                return False
            state["next"] = n + 1
            state["free_at"] = b.cycle + gap
            if reqs[n] == "flush":
                return True
            b.send(port, reqs[n])
        elif answered(b, port) < len(b.accepted[port]) or b.queues[port]:
            state["free_at"] = b.cycle + gap
        return False
    return hook


def test_prefetch_counts_and_flush():
    cfg = get_config("default")                   # 8 KiB
    size = 4096
    image = make_image(size, seed=3)
    a = BASE
    b = BASE + 1024 + 64                          # an odd line: its miss also prefetches
    end = BASE + size - 64                        # the last line of memory is odd
    seq = ([fetch(a + 16 * k) for k in range(16)]           # one miss, prefetches at k = 4 and 12
           + [fetch(b), fetch(b + 16)]                       # miss + prefetch, hit
           + [fetch(end + 32, wave=1)]                       # miss; its prefetch faults, silently
           + ["flush", fetch(a + 16), fetch(a + 32)])         # miss, hit
    bench = CacheBench(ICache(cfg), image, np.random.default_rng(4), latency=(10, 30))
    bench.run(lambda bb: len(bench.beats[0]) == 21, hook=sequential(seq, gap=40), limit=3000)
    check_in_order(bench, image, 0)
    assert bench.counters == (17, 4, 4)              # hits, misses, prefetches
    assert [r for _, r in bench.reads] == [a, a + 128, a + 256, b - 64, b + 64, end - 64, BASE + size, a]
    assert not bench.error["valid"]


def test_flush_while_a_read_is_in_flight():
    """A fetch waiting for a read that a flush overtook reads its line again (the read's data
    may predate the flush and is not installed) and answers the line; the second read is
    installed, so the next fetch of the line hits."""
    cfg = get_config("fpga")
    image = make_image(1024, seed=11)
    bench = CacheBench(ICache(cfg), image, np.random.default_rng(12), latency=(20, 21))
    bench.send(0, fetch(BASE + 32, wave=1))
    bench.send(0, fetch(BASE, wave=0), at=150)
    bench.run(all_answered, hook=lambda b: b.cycle == 10, limit=1000)
    check_in_order(bench, image, 0, size=cfg.fetch_bytes)
    assert [r for _, r in bench.reads] == [BASE, BASE]
    assert bench.counters == (1, 1, 0)


def test_hit_latency_throughput_and_independent_ports():
    cfg = get_config("default")
    image = make_image(4096, seed=5)
    bench = CacheBench(ICache(cfg), image, np.random.default_rng(6), latency=(60, 61),
                       mem_ready=1.0, resp_ready=1.0)
    bench.send(0, fetch(BASE))                    # warm BASE's memory line

    def hook(b):
        if b.cycle == 100:
            for p in range(4):
                for k in range(8):
                    b.send(p, fetch(BASE + 16 * k, wave=k % cfg.wave_slots))
        if b.cycle == 200:
            b.send(0, fetch(BASE + 2048, wave=1))             # miss ...
            b.send(0, fetch(BASE + 16, wave=2), at=201)       # ... a hit behind it waits (in order)
            b.send(1, fetch(BASE + 32, wave=3), at=201)       # ... a hit on another port does not
        if b.cycle == 300:   # four fetches of an absent odd line: one read, one prefetch
            for k in range(4):
                b.send(2, fetch(BASE + 3072 + 64 + 16 * k))
        return False
    bench.run(lambda b: b.cycle > 300 and all_answered(b), hook=hook, limit=1000)
    accepts = sorted(c for p in range(4) for c, _ in bench.accepted[p] if 100 <= c < 200)
    assert accepts == list(range(100, 132)), "one fetch per cycle"
    for p in range(4):
        check_in_order(bench, image, p)
        for (c, _), (rc, _) in zip(bench.accepted[p], bench.beats[p]):
            if 100 <= c < 200:
                assert rc - c == 2, "hit latency"
    (miss_c, _), (hit0_c, _) = bench.beats[0][-2:]
    hit1_c = bench.beats[1][-1][0]
    assert hit1_c < 210 and miss_c > 255 and hit0_c > miss_c
    # the first fetch of line 1 prefetched BASE + 128; later ones found it in flight
    assert [r for _, r in bench.reads] == [BASE, BASE + 128, BASE + 2048, BASE + 3072, BASE + 3200]
    assert bench.counters == (34, 6, 2)


def test_fault():
    cfg = get_config("tiny")
    image = make_image(1024, seed=7)
    bad = BASE + 1024 + 16
    bench = CacheBench(ICache(cfg), image, np.random.default_rng(8), latency=(3, 9))
    bench.send(0, fetch(BASE + 16))
    bench.send(2, fetch(bad, wave=1, epoch=3), at=20)
    bench.send(1, fetch(BASE - 128, wave=0), at=100)
    bench.send(3, fetch(BASE + 48), at=100)
    bench.run(all_answered, limit=1000)
    for p in range(4):
        check_in_order(bench, image, p, zero={bad, BASE - 128})
    assert bench.error == {"valid": 1, "simd": 2, "wave": 1, "addr": bad & ~63}


def test_faulting_target_fetch_answers_zeros_without_error():
    """A SIMD's speculative loop-line fetch (``target``) outside memory answers zeros with its
    tags and latches no error; a later demand fetch of the same line does."""
    cfg = get_config("tiny")
    image = make_image(1024, seed=7)
    bad = BASE + 2048
    bench = CacheBench(ICache(cfg), image, np.random.default_rng(9), latency=(3, 9))
    bench.send(1, {**fetch(bad, wave=1, epoch=2), "target": 1})
    bench.send(1, fetch(BASE + 64, wave=1), at=5)
    bench.send(0, fetch(bad, wave=0), at=200)
    bench.run(all_answered, limit=1000)
    for p in (0, 1):
        check_in_order(bench, image, p, zero={bad})
    assert [r.target for _, r in bench.beats[1]] == [1, 0]
    assert bench.error == {"valid": 1, "simd": 0, "wave": 0, "addr": bad}


def config_error(make, match):
    """``make()`` raises ConfigError matching ``match`` (the half-built component is dropped quietly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ConfigError, match=match):
            make()
        gc.collect()


def test_bad_geometry():
    config_error(lambda: ICache(get_config("default"), depth=3), "depth must be a power of two")
    config_error(lambda: ICache(get_config("default").replace(icache_bytes=128)), "fewer than 4 lines")


@pytest.mark.parametrize("preset", ["default", "rdna1"])
def test_lint(preset, tmp_path):
    convert_and_lint(ICache(get_config(preset)), f"icache_{preset}", tmp_path)
