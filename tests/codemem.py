"""An instruction memory for tests of the SIMD's fetch: it takes a ``fetch_req`` every
cycle and answers each request, in order, after a random latency."""
from __future__ import annotations

import random
from collections import deque


class CodeMemory:
    """``words`` (dwords) at byte address ``base``; zeros elsewhere."""

    def __init__(self, words: list[int], base: int, fetch_bytes: int, rng: random.Random, max_latency: int):
        self.words, self.base, self.fetch_bytes = words, base, fetch_bytes
        self.rng, self.max_latency = rng, max_latency
        self.inflight = deque()                 # (cycle due, FetchResp fields)

    def line(self, addr: int) -> int:
        k = (addr - self.base) // 4
        return sum((self.words[k + i] if 0 <= k + i < len(self.words) else 0) << (32 * i)
                   for i in range(self.fetch_bytes // 4))

    def step(self, ctx, req, resp, cycle: int) -> None:
        """One cycle, before the clock edge: take ``req``, offer the oldest answer that is due."""
        ctx.set(req.ready, 1)
        if ctx.get(req.valid):
            r = req.payload
            self.inflight.append((cycle + self.rng.randint(1, self.max_latency),
                                  {"wave": ctx.get(r.wave), "data": self.line(ctx.get(r.addr)),
                                   "epoch": ctx.get(r.epoch)}))
        due = bool(self.inflight) and self.inflight[0][0] <= cycle
        ctx.set(resp.valid, due)
        if due:
            for k, v in self.inflight[0][1].items():
                ctx.set(getattr(resp.payload, k), v)
            if ctx.get(resp.ready):
                self.inflight.popleft()
