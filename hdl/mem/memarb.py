"""The arbiter in front of the DCU's external memory port (docs/memory.md).

Requests: round robin among the clients that have a request and a credit, one request per
cycle, straight through (no register stage). Once ``mem.valid`` is up the grant is held until
the memory takes the request, so the payload is stable as ``lib.stream`` requires, and
``mem.valid`` never depends on ``mem.ready``.

Responses: each client has a queue of ``resp_depth`` responses and at most ``resp_depth``
requests outstanding (sent, response not yet taken by the client). The queue can therefore
hold every response in flight for its client: ``mem_resp.ready`` is always 1, and a client
that stops taking responses only stops its own requests, never another client's responses.
A response goes straight to its client when the client's queue is empty and the client takes
it that cycle; otherwise it waits in the queue, in arrival order. The queues share one RAM
(one write port, one read port per client).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .memport import CLIENT_TAG_BITS, MemReq, MemResp

__all__ = ["MemArbiter"]


class MemArbiter(wiring.Component):
    """Round-robin arbiter of ``n_clients`` memory clients onto one external port.

    The external tag is ``client << CLIENT_TAG_BITS | tag``; responses are routed back by
    the bits above ``CLIENT_TAG_BITS``.

    Parameters
    ----------
    n_clients : int
        Clients (2 or more); the port order is :class:`hdl.mem.memport.Client`.
    resp_depth : int
        Response queue entries per client, a power of two; also the most requests a client
        may have outstanding.

    Members
    -------
    clients : In(stream.Signature(MemReq())).array(n_clients)
        Each client's requests, ``CLIENT_TAG_BITS`` of tag.
    client_resp : Out(stream.Signature(MemResp())).array(n_clients)
        Each client's responses, its own tag.
    mem : Out(stream.Signature(MemReq(tag_bits)))
        The external port; ``tag_bits`` = ``CLIENT_TAG_BITS`` + bits of a client index
        (8 for four clients).
    mem_resp : In(stream.Signature(MemResp(tag_bits)))
        The memory's responses, any order; ``ready`` is always 1.
    requests : Out(32).array(n_clients)
        Requests sent to memory, per client.
    """

    def __init__(self, n_clients: int = 4, resp_depth: int = 16):
        if n_clients < 2:
            raise ValueError(f"n_clients must be >= 2, got {n_clients}")
        if resp_depth < 2 or resp_depth & (resp_depth - 1):
            raise ValueError(f"resp_depth must be a power of two >= 2, got {resp_depth}")
        self.n_clients = n_clients
        self.resp_depth = resp_depth
        self.tag_bits = CLIENT_TAG_BITS + (n_clients - 1).bit_length()
        super().__init__({
            "clients": In(stream.Signature(MemReq())).array(n_clients),
            "client_resp": Out(stream.Signature(MemResp())).array(n_clients),
            "mem": Out(stream.Signature(MemReq(self.tag_bits))),
            "mem_resp": In(stream.Signature(MemResp(self.tag_bits))),
            "requests": Out(32).array(n_clients),
        })

    def elaborate(self, platform):
        n, depth = self.n_clients, self.resp_depth
        m = Module()

        # ---- requests ---------------------------------------------------------------------
        outstanding = [Signal(range(depth + 1), name=f"outstanding{i}") for i in range(n)]
        eligible = Signal(n)
        m.d.comb += eligible.eq(Cat(c.valid & (o != depth) for c, o in zip(self.clients, outstanding)))

        ptr = Signal(range(n))           # the client with the highest priority
        locked = Signal()                # mem.valid was up and not taken: keep the grant
        lock_idx = Signal(range(n))
        pick = Signal(range(n))
        with m.Switch(ptr):
            for p in range(n):
                with m.Case(p):
                    for k in reversed(range(n)):     # the last assignment wins: first from ptr
                        with m.If(eligible[(p + k) % n]):
                            m.d.comb += pick.eq((p + k) % n)
        grant = Signal(range(n))
        m.d.comb += grant.eq(Mux(locked, lock_idx, pick))

        sel = Signal(MemReq())
        with m.Switch(grant):
            for i in range(n):
                with m.Case(i):
                    m.d.comb += sel.eq(self.clients[i].payload)
        req = self.mem.payload
        m.d.comb += [
            self.mem.valid.eq(locked | eligible.any()),
            req.kind.eq(sel.kind), req.atomic.eq(sel.atomic), req.addr.eq(sel.addr),
            req.data.eq(sel.data), req.mask.eq(sel.mask), req.tag.eq(Cat(sel.tag, grant)),
        ]
        fire = self.mem.valid & self.mem.ready
        m.d.sync += [locked.eq(self.mem.valid & ~self.mem.ready), lock_idx.eq(grant)]
        with m.If(fire):
            m.d.sync += ptr.eq(Mux(grant == n - 1, 0, grant + 1))

        # ---- responses ----------------------------------------------------------------------
        # One queue RAM for all clients (client i owns entries [i * depth, (i + 1) * depth)):
        # at most one response arrives per cycle, so one write port serves every client, and
        # Amaranth's simulator spends time on every bit of every write port every cycle.
        rp_in = self.mem_resp.payload
        incoming = Signal(MemResp())
        m.d.comb += [incoming.tag.eq(rp_in.tag[:CLIENT_TAG_BITS]), incoming.data.eq(rp_in.data),
                     incoming.fault.eq(rp_in.fault), self.mem_resp.ready.eq(1)]
        dest = rp_in.tag[CLIENT_TAG_BITS:]
        m.submodules.queue = queue = memory.Memory(shape=MemResp(), depth=n * depth, init=[])
        wr = queue.write_port()
        wps = Array(Signal(range(depth), name=f"wp{i}") for i in range(n))
        push = Signal(n)
        m.d.comb += [wr.addr.eq(Cat(wps[dest], dest)), wr.data.eq(incoming), wr.en.eq(push.any())]

        for i in range(n):
            cr = self.client_resp[i]
            rd = queue.read_port(transparent_for=(wr,))
            rp = Signal(range(depth), name=f"rp{i}")
            count = Signal(range(depth + 1), name=f"count{i}")
            queued = count != 0
            hit = self.mem_resp.valid & (dest == i)
            pop = queued & cr.ready
            m.d.comb += [
                push[i].eq(hit & (queued | ~cr.ready)),
                cr.valid.eq(queued | hit),
                cr.payload.eq(Mux(queued, rd.data, incoming)),
                rd.addr.eq(Cat(Mux(pop, rp + 1, rp)[:len(rp)], Const(i, len(dest)))),
            ]
            m.d.sync += count.eq(count + push[i] - pop)
            with m.If(push[i]):
                m.d.sync += wps[i].eq(wps[i] + 1)
            with m.If(pop):
                m.d.sync += rp.eq(rp + 1)

            sent = fire & (grant == i)
            m.d.comb += self.clients[i].ready.eq(sent)
            m.d.sync += outstanding[i].eq(outstanding[i] + sent - (cr.valid & cr.ready))
            with m.If(sent):
                m.d.sync += self.requests[i].eq(self.requests[i] + 1)
        return m
