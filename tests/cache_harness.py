"""A cycle-by-cycle testbench for the shared caches (tests/test_scache.py, tests/test_icache.py).

One async testbench drives everything each cycle: the cache's request ports (a queue of
payloads per port, held until accepted), its response ports (random ``ready``), and a
Python memory behind its external port with random latency, reordering and ``ready``
back-pressure. Memory is a numpy byte image ``[base, base + size)``; a read outside it gets
a zero line with ``fault``. Everything observed is logged with its cycle for the tests to
check.
"""
from __future__ import annotations

from collections import deque

import numpy as np
from amaranth.sim import Simulator

from hdl.mem.memport import LINE_BYTES, MemKind


class MemImage:
    """Bytes ``[base, base + size)`` of memory; ``size`` a multiple of 128."""

    def __init__(self, base: int, data: np.ndarray):
        assert base % LINE_BYTES == 0 and data.size % LINE_BYTES == 0
        self.base, self.data = base, data

    def line(self, addr: int) -> tuple[int, bool]:
        """The 128-byte line at ``addr`` as an integer (byte i at bits 8i), and whether it faults."""
        off = addr - self.base
        if off < 0 or off + LINE_BYTES > self.data.size:
            return 0, True
        return int.from_bytes(self.data[off: off + LINE_BYTES].tobytes(), "little"), False


class CacheBench:
    """Drives one cache in Amaranth's simulator.

    Parameters
    ----------
    dut : ScalarCache or ICache
    image : MemImage
    rng : numpy Generator
    latency : (int, int)
        Memory latency range in cycles (uniform); responses return in any order.
    mem_ready, resp_ready : float
        Probability that the memory accepts a request / a response port is ready in a cycle.
    """

    def __init__(self, dut, image: MemImage, rng, latency=(2, 40), mem_ready=0.8, resp_ready=0.8):
        self.dut, self.image, self.rng = dut, image, rng
        self.latency, self.mem_ready, self.resp_ready = latency, mem_ready, resp_ready
        P = len(dut.req)
        self.queues = [deque() for _ in range(P)]    # (not_before_cycle, payload dict)
        self.accepted = [[] for _ in range(P)]       # (cycle, payload dict)
        self.beats = [[] for _ in range(P)]          # (cycle, response payload Const)
        self.reads = []                              # (cycle, addr) of every memory read
        self.fills = []                              # (cycle, addr) of every response taken
        self.inflight = {}                           # tag -> (due cycle, addr)
        self.cycle = 0
        self.done = self.hook = None
        self.counters = self.error = None            # sampled when ``done`` holds

    def send(self, port: int, payload: dict, at: int = 0):
        """Queue a request on ``port``, offered from cycle ``at`` on."""
        self.queues[port].append((at, payload))

    def _stuck(self) -> str:
        return (f"cache stuck at cycle {self.cycle}: unsent requests per port "
                f"{[len(q) for q in self.queues]}, accepted {[len(a) for a in self.accepted]}, "
                f"beats {[len(b) for b in self.beats]}, memory reads in flight "
                f"{sorted((t, hex(a)) for t, (d, a) in self.inflight.items())}")

    async def _bench(self, ctx, limit):
        dut, rng = self.dut, self.rng
        P = len(dut.req)
        presented = None   # tag of the memory response on the bus
        for _ in range(limit):
            if self.done(self):
                self.counters = tuple(ctx.get(getattr(dut, n)) for n in ("hits", "misses", "prefetches")
                                      if hasattr(dut, n))
                err = ctx.get(dut.error)
                self.error = {n: int(getattr(err, n)) for n in ("valid", "simd", "wave", "addr")}
                return
            c = self.cycle
            ctx.set(dut.flush, bool(self.hook(self)) if self.hook else False)
            for p in range(P):
                q = self.queues[p]
                offer = bool(q) and q[0][0] <= c
                ctx.set(dut.req[p].valid, offer)
                if offer:
                    ctx.set(dut.req[p].payload, q[0][1])
                ctx.set(dut.resp[p].ready, bool(rng.random() < self.resp_ready))
            ctx.set(dut.mem.ready, bool(rng.random() < self.mem_ready))
            if presented is None:
                due = [t for t, (d, a) in self.inflight.items() if d <= c]
                if due and rng.random() < 0.7:
                    presented = int(rng.choice(due))
                    data, fault = self.image.line(self.inflight[presented][1])
                    ctx.set(dut.mem_resp.payload, {"tag": presented, "data": data, "fault": fault})
            ctx.set(dut.mem_resp.valid, presented is not None)

            for p in range(P):
                if ctx.get(dut.req[p].valid) and ctx.get(dut.req[p].ready):
                    self.accepted[p].append((c, self.queues[p].popleft()[1]))
                if ctx.get(dut.resp[p].valid) and ctx.get(dut.resp[p].ready):
                    self.beats[p].append((c, ctx.get(dut.resp[p].payload)))
            if ctx.get(dut.mem.valid) and ctx.get(dut.mem.ready):
                r = ctx.get(dut.mem.payload)
                assert r.kind == MemKind.READ and r.addr % LINE_BYTES == 0, r
                assert r.tag not in self.inflight, f"tag {r.tag} reused while in flight"
                self.inflight[r.tag] = (c + int(rng.integers(*self.latency)), r.addr)
                self.reads.append((c, r.addr))
            if presented is not None and ctx.get(dut.mem_resp.ready):
                self.fills.append((c, self.inflight[presented][1]))
                del self.inflight[presented]
                presented = None
            await ctx.tick()
            self.cycle += 1
        raise AssertionError(self._stuck())

    def run(self, done, hook=None, limit: int = 20_000):
        """Simulate until ``done(bench)`` holds; fail naming what is stuck after ``limit`` cycles.

        ``hook(bench)`` runs at the start of every cycle: it may queue requests, and
        ``flush`` is set in that cycle when it returns true.
        """
        self.done, self.hook = done, hook
        sim = Simulator(self.dut)
        sim.add_clock(1e-8)

        async def bench(ctx):
            await self._bench(ctx, limit)
        sim.add_testbench(bench)
        sim.run()
        return self
