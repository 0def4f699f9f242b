"""The external memory as a Python process for Amaranth's simulator (docs/memory.md,
"External memory and its models").

:class:`PyMemory` serves the external port (:mod:`hdl.mem.memport`) with the semantics of the RTL
model :class:`hdl.mem.extmem.ExtMemory`: every request takes effect when it is accepted, in
acceptance order; its response is offered ``latency`` cycles later (a fixed value, or drawn
per request from ``(lo, hi)``) and stays offered until taken; ``reorder`` lets any response
whose latency has elapsed leave first; at most ``slots`` responses wait; a faulting request
(outside the memory, misaligned, unknown kind or atomic op) gets a ``fault`` response with zero
data, changes nothing and is listed in :attr:`PyMemory.faults`. Given the buffer map a host
laid out (``buffers``, :func:`buffer_ranges`), a request outside every buffer faults too: a
READ whose line holds no byte of any buffer, a WRITE with a masked byte outside every buffer,
an ATOMIC whose dword is not inside one; :attr:`PyMemory.fault_log` keeps what a report needs.
The two models make the same memory image and the same per-tag response data from the same
request stream; only the pseudo-random choices (latency, order, back-pressure) come from
different generators. Both keep a scoreboard of the port (:class:`Scoreboard`): requests
accepted and responses taken by kind, and any response for a tag with no request
outstanding; :func:`check_scoreboard` turns a lost or duplicated response into a
:class:`ScoreboardError` after a run. :func:`stress_settings` draws a latency range, an
ordering and a back-pressure rate from a seed, for runs that shake a kernel's timing.

Usage::

    mem = PyMemory(prepared.mem, latency=(20, 40), reorder=True, seed=1)
    sim.add_process(mem.process(dut.mem, dut.mem_resp))
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from hdl.mem.atomic import AtomicOp
from hdl.mem.extmem import latency_range
from hdl.mem.memport import LINE_BYTES, MemKind, MemReq, MemResp
from sim.memory import GlobalMemory
from sim.memory_ops import ATOMIC_OPS

__all__ = ["PyMemory", "MemFault", "buffer_ranges", "first_outside", "map_words", "HOST_MAP_RANGES",
           "OPEN_APERTURE", "Scoreboard", "ScoreboardError", "check_scoreboard", "stress_settings"]

_READ, _WRITE, _ATOMIC = MemKind.READ.value, MemKind.WRITE.value, MemKind.ATOMIC.value
_ATOMIC_FN = [ATOMIC_OPS[op.name.lower()] for op in sorted(AtomicOp, key=lambda o: o.value)]
_FULL_MASK = (1 << LINE_BYTES) - 1
_M32 = 0xFFFF_FFFF


@dataclass(frozen=True)
class MemFault:
    """A faulting request: its address, kind (``MemKind`` or the raw value), byte mask and tag."""
    addr: int
    kind: object
    mask: int
    tag: int


def buffer_ranges(allocations, count: int | None = None) -> list[tuple[int, int]]:
    """``[(base, end)]`` of every allocation (``sim.memory.Allocation``), in address order; with
    ``count``, the closest neighbours merged (the gap between them then counts as inside) until
    at most ``count`` remain, for a memory that holds that many ranges."""
    ranges = sorted((a.base, a.end) for a in allocations)
    while count is not None and len(ranges) > count:
        i = min(range(len(ranges) - 1), key=lambda k: ranges[k + 1][0] - ranges[k][1])
        ranges[i:i + 2] = [(ranges[i][0], ranges[i + 1][1])]
    return ranges


#: the DCU's aperture (base, size) the simulation hosts set: the whole 48-bit space, so that an
#: access outside every buffer reaches the memory, whose buffer map refuses it and records its
#: kind and bytes (the aperture's check, in the vector memory unit before any request, would
#: report the lane and address alone)
OPEN_APERTURE = (0, (1 << 48) - 1)
#: ranges of the buffer map the simulation hosts' HostTop holds (hdl.top.hosttop): a code object,
#: a kernarg segment, a dispatch packet and 13 buffers before neighbours are merged
HOST_MAP_RANGES = 16


def map_words(ranges, count: int = HOST_MAP_RANGES) -> tuple[int, int]:
    """HostTop's ``map_base`` and ``map_end`` values (48 bits per range, range 0 lowest) for
    ``ranges`` (at most ``count``; the rest empty)."""
    ranges = list(ranges) + [(0, 0)] * (count - len(ranges))
    return (sum(lo << (48 * r) for r, (lo, _) in enumerate(ranges)),
            sum(hi << (48 * r) for r, (_, hi) in enumerate(ranges)))


def first_outside(ranges, addr: int, mask: int, size: int = LINE_BYTES) -> int | None:
    """The lowest address among bytes ``addr + i`` (``mask`` bit ``i`` set, ``i < size``) that no
    range holds; None if every one is inside."""
    for i in range(size):
        if mask >> i & 1 and not any(lo <= addr + i < hi for lo, hi in ranges):
            return addr + i
    return None


class ScoreboardError(RuntimeError):
    """A memory model lost or duplicated a response: a fault of the model, not of the kernel."""


@dataclass
class Scoreboard:
    """A memory port's requests and responses: ``accepted`` and ``answered`` by kind (index:
    ``MemKind`` value, 3 for an unknown kind), the tag of the first response for a tag with
    no request outstanding (``duplicate_tag``) and of the first request accepted for a tag
    still outstanding (``reused_tag``), None when there was none."""
    accepted: list
    answered: list
    duplicate_tag: int | None = None
    reused_tag: int | None = None

    @classmethod
    def from_record(cls, rec) -> "Scoreboard":
        """From ``hdl.mem.extmem.ScoreboardLayout`` (a const or the value a simulator reads)."""
        return cls([int(rec.accepted[k]) for k in range(4)], [int(rec.answered[k]) for k in range(4)],
                   int(rec.duplicate_tag) if rec.duplicate else None, int(rec.reused_tag) if rec.reused else None)

    def problems(self) -> list[str]:
        """What is wrong, one phrase each (empty: every request was answered once)."""
        out = []
        names = [k.name for k in sorted(MemKind, key=lambda k: k.value)] + ["unknown-kind"]
        for name, a, b in zip(names, self.accepted, self.answered):
            if a != b:
                out.append(f"{a} {name} requests accepted, {b} answered "
                           f"({'lost' if b < a else 'duplicated'}: {abs(a - b)})")
        if self.duplicate_tag is not None:
            out.append(f"a response for tag {self.duplicate_tag:#x} with no request outstanding (duplicated)")
        if self.reused_tag is not None:
            out.append(f"a request accepted for tag {self.reused_tag:#x} while one was outstanding")
        return out


def check_scoreboard(board: Scoreboard, where: str, stopped: bool = False) -> None:
    """Raise :class:`ScoreboardError` naming ``where`` (the kernel and backend) unless every
    request was answered exactly once. A DCU ``stopped`` by an error takes no more responses,
    so requests it left in flight are not counted as lost (a duplicate still is)."""
    bad = board.problems()
    if stopped:
        bad = [p for p in bad if "(lost:" not in p]
    if bad:
        raise ScoreboardError(f"{where}: the memory model's scoreboard failed: " + "; ".join(bad)
                              + f" (accepted {board.accepted}, answered {board.answered}, by kind READ, WRITE, "
                                "ATOMIC, unknown)")


def hosttop_knobs(latency, reorder: bool, backpressure: float) -> dict:
    """The ``mem_knobs`` of a ``runtime_memory`` :class:`hdl.top.hosttop.HostTop` for these settings;
    ValueError naming the range its memory takes (2 to ``MAX_LATENCY`` cycles)."""
    from hdl.mem.extmem import knob_values
    from hdl.top.hosttop import MAX_LATENCY
    lo, hi = latency_range(latency)
    if lo < 2 or hi > MAX_LATENCY:
        raise ValueError(f"the RTL memory's latency is 2 to {MAX_LATENCY} cycles, got {latency!r}")
    return knob_values((lo, hi), reorder, backpressure)


#: the longest latency :func:`stress_settings` draws (cycles)
STRESS_MAX_LATENCY = 500


def stress_settings(seed: int, min_latency: int = 1) -> dict:
    """A latency range within ``[min_latency, 500]`` (a short one, a long one or a wide one),
    an ordering and a back-pressure rate drawn from ``seed``: the ``latency``, ``reorder``
    and ``backpressure`` options of the memory models and the RTL backends."""
    rng = random.Random(seed)
    shape = rng.randrange(3)
    if shape == 0:        # short and tight: back-to-back traffic
        lo = rng.randint(min_latency, 16)
        hi = rng.randint(lo, 40)
    elif shape == 1:      # long: every access a DRAM-like miss
        lo = rng.randint(100, 400)
        hi = rng.randint(lo, STRESS_MAX_LATENCY)
    else:                 # wide: responses overtake each other by hundreds of cycles
        lo = rng.randint(min_latency, 8)
        hi = rng.randint(200, STRESS_MAX_LATENCY)
    return {"latency": (lo, hi), "reorder": rng.random() < 0.75,
            "backpressure": rng.choice([0.0, 0.1, 0.25, 0.5, 0.75])}


def _fields(layout) -> dict:
    return {name: (f.offset, (1 << f.width) - 1) for name, f in layout}


class PyMemory:
    """Byte-addressed memory that answers external-port requests in a simulation.

    Parameters
    ----------
    memory : GlobalMemory, numpy uint8 array or bytearray
        The backing image, changed in place. A :class:`sim.memory.GlobalMemory` (as
        ``dcu.launch.prepare`` lays out the code object, buffers and kernarg) supplies its
        own base and is re-read on every access, so it may grow; an array or bytearray
        starts at ``base``. The memory covers whole lines: ``len // 128 * 128`` bytes.
    base : int
        Byte address of the image's first byte (not with a GlobalMemory), a multiple of 128.
    latency : int or (int, int)
        Cycles from acceptance to the response being offered (>= 1), fixed or drawn per
        request uniformly from ``[lo, hi]``.
    reorder : bool
        Any response whose latency has elapsed may leave, chosen at random (else in order).
    backpressure : float
        Probability in [0, 1) that ``req.ready`` is withheld in a cycle.
    slots : int
        Responses waiting (not yet offered) before ``req.ready`` is withheld.
    seed : int
        Seed of the generator behind latency, order and back-pressure.
    tag_bits : int
        Tag width of the port.
    buffers : list of (int, int), optional
        The buffer map, ``[(base, end)]`` (:func:`buffer_ranges`): a request outside every
        buffer faults.

    Members
    -------
    faults : list of (int, MemKind or int)
        Address and kind of every faulting request, in acceptance order.
    fault_log : list of MemFault
        The same requests with their byte mask and tag.
    reads, writes, atomics : int
        Requests accepted, by kind (faulting ones included).
    scoreboard : Scoreboard
        What crossed the port: requests accepted and responses taken, checked by tag.
    pending : list of [int, int, int]
        Responses not yet offered: due cycle, response word, request kind (in acceptance order).
    """

    def __init__(self, memory, base: int | None = None, *, latency=32, reorder: bool = False,
                 backpressure: float = 0.0, slots: int = 16, seed: int = 0, tag_bits: int = 8,
                 buffers=None):
        if isinstance(memory, GlobalMemory):
            if base is not None:
                raise ValueError("a GlobalMemory has its own base")
            base = memory.base
            self._image = lambda: memory.data
        else:
            arr = memory if isinstance(memory, np.ndarray) else np.frombuffer(memory, np.uint8)
            if arr.dtype != np.uint8 or arr.ndim != 1 or not arr.flags.writeable:
                raise ValueError("memory must be a GlobalMemory, a writable 1-D uint8 array or a bytearray")
            self._image = lambda: arr
            base = 0 if base is None else base
        if base % LINE_BYTES:
            raise ValueError(f"base must be a multiple of {LINE_BYTES}, got {base:#x}")
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        if not 0.0 <= backpressure < 1.0:
            raise ValueError(f"backpressure must be in [0, 1), got {backpressure}")
        self.base = base
        self.lo, self.hi = latency_range(latency)
        self.reorder, self.backpressure, self.slots = reorder, backpressure, slots
        self.rng = random.Random(seed)
        self.faults: list = []
        self.fault_log: list[MemFault] = []
        self.buffers = None if buffers is None else [(int(lo), int(hi)) for lo, hi in buffers]
        self.reads = self.writes = self.atomics = 0
        self._req = _fields(MemReq(tag_bits))
        self._resp = _fields(MemResp(tag_bits))
        self.scoreboard = Scoreboard([0] * 4, [0] * 4)
        self._outstanding: set[int] = set()
        self.pending: list = []
        self._offering = False

    @property
    def idle(self) -> bool:
        """Nothing in flight: every accepted request's response has been taken (or lost)."""
        return not (self.pending or self._offering)

    def _accepted(self, kind: int, tag: int) -> None:
        sb = self.scoreboard
        sb.accepted[kind] += 1
        if tag in self._outstanding and sb.reused_tag is None:
            sb.reused_tag = tag
        self._outstanding.add(tag)

    def _answered(self, kind: int, word: int) -> None:
        sb = self.scoreboard
        sb.answered[kind] += 1
        tag = (word >> self._resp["tag"][0]) & self._resp["tag"][1]
        if tag not in self._outstanding and sb.duplicate_tag is None:
            sb.duplicate_tag = tag
        self._outstanding.discard(tag)

    @property
    def image(self) -> np.ndarray:
        """The backing bytes (index 0 is address ``base``)."""
        return self._image()

    # ---- one request ------------------------------------------------------------------------
    def access(self, word: int) -> int:
        """Perform the request packed in ``word`` (a ``MemReq`` as an int) now; return its
        response packed as a ``MemResp`` int."""
        f = self._req
        kind, op, addr, data, mask, tag = ((word >> f[k][0]) & f[k][1]
                                           for k in ("kind", "atomic", "addr", "data", "mask", "tag"))
        self.reads += kind == _READ
        self.writes += kind == _WRITE
        self.atomics += kind == _ATOMIC
        img = self._image()
        off = addr - self.base
        size = len(img) // LINE_BYTES * LINE_BYTES
        if kind == _ATOMIC:
            ok = op < len(_ATOMIC_FN) and addr % 4 == 0 and 0 <= off and off + 4 <= size
        else:
            ok = kind <= _WRITE and addr % LINE_BYTES == 0 and 0 <= off and off + LINE_BYTES <= size
        if ok and self.buffers is not None:
            ok = self._in_buffers(kind, addr, mask)
        out, fault = 0, 0
        if not ok:
            self.faults.append((addr, MemKind(kind) if kind <= _ATOMIC else kind))
            self.fault_log.append(MemFault(addr, self.faults[-1][1], mask, tag))
            fault = 1
        elif kind == _READ:
            out = int.from_bytes(img[off: off + LINE_BYTES].tobytes(), "little")
        elif kind == _WRITE:
            new = np.frombuffer(data.to_bytes(LINE_BYTES, "little"), np.uint8)
            if mask == _FULL_MASK:
                img[off: off + LINE_BYTES] = new
            else:
                sel = np.unpackbits(np.frombuffer(mask.to_bytes(LINE_BYTES // 8, "little"), np.uint8),
                                    bitorder="little").view(bool)
                img[off: off + LINE_BYTES][sel] = new[sel]
        else:
            out = int.from_bytes(img[off: off + 4].tobytes(), "little")
            new = _ATOMIC_FN[op](out, data & _M32, (data >> 32) & _M32)
            img[off: off + 4] = np.frombuffer(new.to_bytes(4, "little"), np.uint8)
        r = self._resp
        return (tag << r["tag"][0]) | (out << r["data"][0]) | (fault << r["fault"][0])

    def _in_buffers(self, kind: int, addr: int, mask: int) -> bool:
        if kind == _READ:      # a line fill: fine while any byte of it is in a buffer
            return any(lo < addr + LINE_BYTES and addr < hi for lo, hi in self.buffers)
        if kind == _WRITE:
            return first_outside(self.buffers, addr, mask) is None
        return any(lo <= addr and addr + 4 <= hi for lo, hi in self.buffers)

    # ---- the port -----------------------------------------------------------------------------
    def process(self, req, resp):
        """An ``async`` function for ``Simulator.add_process`` that runs :meth:`serve`."""
        async def run(ctx):
            await self.serve(ctx, req, resp)
        return run

    async def serve(self, ctx, req, resp):
        """Serve ``req`` (a ``stream.Signature(MemReq)`` interface, this side the sink) and
        ``resp`` (the source) forever. While nothing is in flight and no request is offered
        it sleeps until ``req.valid`` rises instead of waking every cycle."""
        req_valid, req_word, resp_ready = req.valid, req.payload.as_value(), resp.ready
        resp_valid, resp_word = resp.valid, resp.payload.as_value()
        lo, hi, rng, slots, bp = self.lo, self.hi, self.rng, self.slots, self.backpressure
        pending = self.pending        # [due cycle, response word, kind], in acceptance order
        f_kind, f_tag = self._req["kind"], self._req["tag"]
        offering, offered = False, None
        cycle = 0                     # the cycle being set up; acceptances happen at its end
        ready = bp == 0.0 or rng.random() >= bp
        ctx.set(req.ready, ready)
        while True:
            # A multi-shot wait costs less per cycle than a new one-shot trigger each cycle.
            ticks = ctx.tick().sample(req_valid, req_word, resp_ready).__aiter__()
            while True:
                _, _, valid, word, taken = await ticks.__anext__()
                handed_over = offering and taken
                if handed_over:
                    offering = False
                    self._answered(offered[2], offered[1])
                if valid and ready:
                    kind = (word >> f_kind[0]) & f_kind[1]
                    self._accepted(kind, (word >> f_tag[0]) & f_tag[1])
                    pending.append([cycle + (lo if lo == hi else rng.randint(lo, hi)), self.access(word), kind])
                cycle += 1
                if not offering:
                    pick = None
                    if self.reorder:
                        due = [i for i, p in enumerate(pending) if p[0] <= cycle]
                        if due:
                            pick = due[rng.randrange(len(due))] if len(due) > 1 else due[0]
                    elif pending and pending[0][0] <= cycle:
                        pick = 0
                    if pick is not None:
                        offered = pending.pop(pick)
                        ctx.set(resp_word, offered[1])
                        offering = True
                        ctx.set(resp_valid, 1)
                    elif handed_over:
                        ctx.set(resp_valid, 0)
                self._offering = offering
                now_ready = len(pending) < slots and (bp == 0.0 or rng.random() >= bp)
                if now_ready != ready:
                    ready = now_ready
                    ctx.set(req.ready, ready)
                if not (valid or pending or offering):
                    break
            # Idle: valid was low at the last edge, so a request must raise it after that edge.
            await ticks.aclose()
            await ctx.posedge(req_valid)
