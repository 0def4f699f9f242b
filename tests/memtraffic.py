"""Request streams, a reference memory and a port driver shared by the external-memory tests
(test_extmem, test_memmodel, test_memarb).

The reference applies requests in stream order to a numpy image with the semantics of
hdl/mem/memport.py (atomics from ``sim.memory_ops.ATOMIC_OPS``); the driver offers a request
stream on a ``MemReq`` port, takes responses with random back-pressure, checks the stream
rules on the response side and records acceptance and response cycles.
"""
from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
from amaranth.hdl import UnusedElaboratable

from hdl.mem.atomic import AtomicOp
from hdl.mem.memport import LINE_BYTES, MemKind, MemReq, MemResp
from sim.memory_ops import ATOMIC_OPS

M32 = 0xFFFF_FFFF


def fields(layout) -> dict:
    return {name: (f.offset, (1 << f.width) - 1) for name, f in layout}


def pack(layout, **values) -> int:
    f = fields(layout)
    word = 0
    for k, v in values.items():
        off, mask = f[k]
        assert 0 <= v <= mask, (k, v)
        word |= v << off
    return word


def unpack(layout, word: int) -> dict:
    return {k: (word >> off) & mask for k, (off, mask) in fields(layout).items()}


def request(tag_bits=8, *, kind, addr, tag=0, atomic=0, data=0, mask=0) -> int:
    return pack(MemReq(tag_bits), kind=getattr(kind, "value", kind), atomic=getattr(atomic, "value", atomic),
                addr=addr, data=data, mask=mask, tag=tag)


def random_requests(rng, n, base, size, *, image=None, tag_bits=8, faults=True, kinds=(0.35, 0.3, 0.35)):
    """``n`` request words: READ / WRITE (random byte masks, some full or empty) / ATOMIC
    (every op, addresses concentrated on a few dwords so the ops interact; half the
    CMPSWAPs compare with the dword's value at that point of the stream, from ``image``);
    with ``faults`` about 5% are out of range, misaligned or of an unknown kind or op.
    Tag = index mod 2^tag_bits."""
    shadow = Reference(np.zeros(size, np.uint8) if image is None else image, base, tag_bits)
    lines = size // LINE_BYTES
    hot = rng.integers(0, size // 4, 6) * 4          # a few dwords the atomics keep hitting
    ops = list(AtomicOp)
    words = []
    for i in range(n):
        if words:
            shadow.apply(words[-1])
        tag = i % (1 << tag_bits)
        k = rng.choice(3, p=kinds)
        line = base + int(rng.integers(0, lines)) * LINE_BYTES
        if faults and rng.random() < 0.05:
            what = int(rng.integers(0, 5))
            if what == 0:       # outside, below or above
                addr = (base - LINE_BYTES if base and rng.random() < 0.5
                        else base + size + int(rng.integers(0, 4)) * LINE_BYTES)
                words.append(request(tag_bits, kind=int(k), addr=addr, tag=tag, mask=1))
            elif what == 1:     # misaligned line access
                words.append(request(tag_bits, kind=int(rng.integers(0, 2)), addr=line + 4, tag=tag, mask=3))
            elif what == 2:     # misaligned atomic
                words.append(request(tag_bits, kind=MemKind.ATOMIC, addr=line + 2, tag=tag))
            elif what == 3:     # unknown kind
                words.append(request(tag_bits, kind=3, addr=line, tag=tag, mask=1))
            else:               # unknown atomic op
                words.append(request(tag_bits, kind=MemKind.ATOMIC, atomic=int(rng.integers(14, 16)),
                                     addr=line, tag=tag))
            continue
        if k == 0:
            words.append(request(tag_bits, kind=MemKind.READ, addr=line, tag=tag))
        elif k == 1:
            r = rng.random()
            mask = (1 << LINE_BYTES) - 1 if r < 0.15 else 0 if r < 0.2 else int.from_bytes(rng.bytes(16), "little")
            data = int.from_bytes(rng.bytes(LINE_BYTES), "little")
            words.append(request(tag_bits, kind=MemKind.WRITE, addr=line, tag=tag, data=data, mask=mask))
        else:
            op = ops[i % len(ops)] if rng.random() < 0.5 else ops[int(rng.integers(0, len(ops)))]
            addr = base + int(hot[rng.integers(0, len(hot))] if rng.random() < 0.7 else rng.integers(0, size // 4) * 4)
            d = int(rng.integers(0, 1 << 32)) if rng.random() < 0.7 else int(rng.integers(0, 8))
            c = int(rng.integers(0, 1 << 32)) if rng.random() < 0.5 else int(rng.integers(0, 8))
            if op == AtomicOp.CMPSWAP and rng.random() < 0.5:
                c = int(shadow.img[addr - base:addr - base + 4].view("<u4")[0])
            # junk above the operands must be ignored
            junk = int.from_bytes(rng.bytes(LINE_BYTES - 8), "little") << 64 if rng.random() < 0.3 else 0
            words.append(request(tag_bits, kind=MemKind.ATOMIC, atomic=op, addr=addr, tag=tag,
                                 data=d | c << 32 | junk, mask=int(rng.integers(0, 1 << 16))))
    return words


class Reference:
    """The expected memory: requests applied in order to a numpy image."""

    def __init__(self, image: np.ndarray, base: int, tag_bits: int = 8):
        self.img = np.array(image, dtype=np.uint8)
        self.base, self.tag_bits = base, tag_bits
        self.counts = {"reads": 0, "writes": 0, "atomics": 0, "faults": 0}
        self.fault_list = []
        self.cmpswap_hits = 0                 # CMPSWAPs whose compare matched

    def apply(self, word: int) -> tuple[int, int, int]:
        """Returns the expected ``(tag, data, fault)``."""
        r = unpack(MemReq(self.tag_bits), word)
        kind, addr, off = r["kind"], r["addr"], r["addr"] - self.base
        for name, k in (("reads", 0), ("writes", 1), ("atomics", 2)):
            self.counts[name] += kind == k
        width = 4 if kind == 2 else LINE_BYTES
        good = (kind < 3 and addr % width == 0 and 0 <= off <= self.img.size - width
                and (kind != 2 or r["atomic"] <= AtomicOp.CMPSWAP.value))
        if not good:
            self.counts["faults"] += 1
            self.fault_list.append((addr, MemKind(kind) if kind < 3 else kind))
            return r["tag"], 0, 1
        dwords = self.img.view("<u4")
        if kind == 0:
            return r["tag"], int.from_bytes(self.img[off:off + LINE_BYTES].tobytes(), "little"), 0
        if kind == 1:
            for b in range(LINE_BYTES):
                if r["mask"] >> b & 1:
                    self.img[off + b] = (r["data"] >> 8 * b) & 0xFF
            return r["tag"], 0, 0
        old = int(dwords[off // 4])
        op = AtomicOp(r["atomic"])
        self.cmpswap_hits += op == AtomicOp.CMPSWAP and old == (r["data"] >> 32) & M32
        fn = ATOMIC_OPS[op.name.lower()]
        dwords[off // 4] = fn(old, r["data"] & M32, (r["data"] >> 32) & M32)
        return r["tag"], old, 0


async def drive(ctx, req, resp, words, rng, *, valid_p=1.0, ready_p=1.0, max_cycles=20_000,
                tag_bits=8, what="memory"):
    """Offer ``words`` in order on ``req`` and take every response from ``resp``.

    Returns ``(accepted, responses)``: the acceptance cycle of each request, and
    ``(cycle, tag, data, fault)`` per response in handshake order. Fails if the response
    payload changes or valid drops while stalled, or after ``max_cycles`` (watchdog)."""
    layout = MemResp(tag_bits)
    req_word, resp_word = req.payload.as_value(), resp.payload.as_value()
    accepted, responses = [], []
    i, cycle, offered, held = 0, 0, False, None
    while len(responses) < len(words):
        if cycle >= max_cycles:
            raise AssertionError(f"watchdog: {what} gave {len(responses)} of {len(words)} responses "
                                 f"in {cycle} cycles ({len(accepted)} requests accepted)")
        if not offered and i < len(words) and rng.random() < valid_p:
            ctx.set(req_word, words[i])
            offered = True
        ctx.set(req.valid, offered)
        taking = bool(rng.random() < ready_p)
        ctx.set(resp.ready, taking)
        _, _, rdy, rv, rw = await ctx.tick().sample(req.ready, resp.valid, resp_word)
        if held is not None:
            assert rv and rw == held, f"{what}: response changed or withdrawn while stalled (cycle {cycle})"
        held = None
        if offered and rdy:
            accepted.append(cycle)
            i += 1
            offered = False
        if rv:
            if taking:
                r = unpack(layout, rw)
                responses.append((cycle, r["tag"], r["data"], r["fault"]))
            else:
                held = rw
        cycle += 1
    ctx.set(req.valid, 0)
    return accepted, responses


def match(words, accepted, responses, tag_bits=8):
    """Pair each response with its request (the oldest outstanding one with that tag).
    Returns per request ``(accept_cycle, resp_cycle, data, fault)``, in request order."""
    outstanding = {}
    out = [None] * len(words)
    layout = MemReq(tag_bits)
    for idx, w in enumerate(words):
        outstanding.setdefault(unpack(layout, w)["tag"], []).append(idx)
    for cycle, tag, data, fault in responses:
        assert outstanding.get(tag), f"response with tag {tag} matches no outstanding request"
        idx = outstanding[tag].pop(0)
        assert out[idx] is None
        out[idx] = (accepted[idx], cycle, data, fault)
    return out


def check_against_reference(words, accepted, responses, ref: Reference, tag_bits=8):
    """Every response equals the reference's (requests applied in acceptance order);
    returns the matched list of :func:`match`."""
    got = match(words, accepted, responses, tag_bits)
    for idx, w in enumerate(words):
        tag, data, fault = ref.apply(w)
        r = unpack(MemReq(tag_bits), w)
        assert got[idx][2:] == (data, fault), (
            f"request {idx} ({MemKind(r['kind']).name if r['kind'] < 3 else r['kind']} "
            f"addr {r['addr']:#x} op {r['atomic']}): got data {got[idx][2]:#x} fault {got[idx][3]}, "
            f"expected {data:#x} fault {fault}")
    return got


def rejects(make, match):
    """``make()`` raises ValueError matching ``match`` (the half-built component is dropped quietly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match=match):
            make()
        gc.collect()
