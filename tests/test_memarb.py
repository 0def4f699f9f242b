"""hdl.mem.memarb.MemArbiter in Amaranth's simulator.

* Round robin: clients that keep a request up are granted strictly in turn, whatever the
  memory's back-pressure; a client waiting with a request is granted within n_clients grants.
* Tag routing: the external tag is ``client << 6 | tag``; with mixed traffic through the Python
  memory model and through ExtMemory (reordering, back-pressure both ways), each client gets
  exactly its responses with its tags and the data the reference memory gives when requests
  are applied in the order the memory port took them.
* Back-pressure on one client: it gets at most ``resp_depth`` requests outstanding, the
  others keep flowing, ``mem_resp.ready`` never drops; once it takes responses again it gets
  them all, in arrival order.
* Stream rules on every port (payload stable and valid held while stalled; valid does not
  change when ready changes); per-client request counters.
* Verilog conversion and ``verilator --lint-only``.
"""
from __future__ import annotations

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from dcu.memmodel import PyMemory
from hdl.mem.extmem import ExtMemory
from hdl.mem.memarb import MemArbiter
from hdl.mem.memport import CLIENT_TAG_BITS, MemReq, MemResp
from tests.lint import convert_and_lint
from tests.memtraffic import Reference, random_requests, rejects, unpack
from tests.test_extmem import host_read

N = 4


def client_words(rng, n, client, kinds=(1.0, 0.0, 0.0), base=0, size=1024):
    """``n`` requests of one client with tags ``index mod 64``."""
    return random_requests(rng, n, base, size, tag_bits=CLIENT_TAG_BITS, faults=False, kinds=kinds)


def run_arb(requests, *, memory="fifo", valid_p=1.0, ready_p=1.0, mem_ready_p=1.0, resp_delay=3,
            resp_depth=16, seed=0, image=None, mem_opts=None, stop_ready=None, max_cycles=20_000):
    """Drive ``requests[i]`` (client request words) through a MemArbiter.

    ``memory``: ``"fifo"`` answers in order ``resp_delay`` cycles after acceptance with the
    request's address as data; ``"py"`` is :class:`dcu.memmodel.PyMemory` over ``image``,
    ``"ext"`` an :class:`hdl.mem.extmem.ExtMemory` holding ``image`` (read back into ``image``).
    ``ready_p`` may be a list per client; ``stop_ready`` = (client, cycles) keeps that
    client's response ready low for the first ``cycles`` cycles.
    Returns a dict: ``grants`` (client per memory handshake), ``mem_words`` (external request
    words in handshake order), ``responses`` (per client: (cycle, tag, data, fault)),
    ``accepted`` (per client: acceptance cycles), ``waits`` (per client, cycles from valid
    up to acceptance, and grants to others meanwhile), ``requests`` (counters), ``max_outstanding``.
    """
    dut = MemArbiter(N, resp_depth=resp_depth)
    rng = np.random.default_rng(seed)
    ready_p = ready_p if isinstance(ready_p, list) else [ready_p] * N
    ext = MemReq(dut.tag_bits)
    res = {"grants": [], "mem_words": [], "responses": [[] for _ in range(N)],
           "accepted": [[] for _ in range(N)], "waits": [[] for _ in range(N)],
           "max_outstanding": [0] * N}
    extmem = None
    if memory == "ext":
        top = Module()
        top.submodules.arb = dut
        top.submodules.extmem = extmem = ExtMemory(image.size, 0, init=image.tobytes(), **(mem_opts or {}))
        wiring.connect(top, dut.mem, extmem.req)
        wiring.connect(top, extmem.resp, dut.mem_resp)
    sim = Simulator(dut if extmem is None else top)
    sim.add_clock(1e-8)
    pymem = None
    if memory == "py":
        pymem = PyMemory(image, 0, **(mem_opts or {}))
        sim.add_process(pymem.process(dut.mem, dut.mem_resp))

    async def bench(ctx):
        nxt = [0] * N                       # next request index per client
        offered = [None] * N                # (word, cycle offered, grants seen) per client
        held_req = None                     # external payload while stalled
        held_resp = [None] * N
        fifo = []                           # "fifo" memory: [due, response word]
        resp_offered = False
        cycle = 0
        total = sum(len(r) for r in requests)
        sampled = ([c.ready for c in dut.clients] + [c.valid for c in dut.client_resp]
                   + [c.payload.as_value() for c in dut.client_resp]
                   + [dut.mem.valid, dut.mem.payload.as_value(), dut.mem_resp.ready])
        while sum(len(r) for r in res["responses"]) < total:
            assert cycle < max_cycles, (
                f"watchdog: arbiter delivered {sum(map(len, res['responses']))} of {total} "
                f"responses in {cycle} cycles; requests sent {[nxt[i] for i in range(N)]}")
            for i in range(N):
                if offered[i] is None and nxt[i] < len(requests[i]) and rng.random() < valid_p:
                    offered[i] = [requests[i][nxt[i]], cycle, 0]
                    ctx.set(dut.clients[i].payload.as_value(), offered[i][0])
                ctx.set(dut.clients[i].valid, offered[i] is not None)
            taking = [bool(rng.random() < ready_p[i]) and not (stop_ready and stop_ready[0] == i
                                                               and cycle < stop_ready[1])
                      for i in range(N)]
            mem_ready = bool(rng.random() < mem_ready_p)
            if memory == "fifo":
                ctx.set(dut.mem.ready, mem_ready)
            # valid never depends on ready: flip each ready and look again
            before = [ctx.get(dut.mem.valid)] + [ctx.get(c.valid) for c in dut.client_resp]
            for i in range(N):
                ctx.set(dut.client_resp[i].ready, not taking[i])
            if memory == "fifo":
                ctx.set(dut.mem.ready, not mem_ready)
            after = [ctx.get(dut.mem.valid)] + [ctx.get(c.valid) for c in dut.client_resp]
            assert before == after, f"a valid changed with ready (cycle {cycle})"
            for i in range(N):
                ctx.set(dut.client_resp[i].ready, taking[i])
            if memory == "fifo":
                ctx.set(dut.mem.ready, mem_ready)
                mem_ready_now = mem_ready
            _, _, *v = await ctx.tick().sample(*sampled, *([dut.mem.ready] if memory != "fifo" else []))
            creq, rvalid, rword = v[:N], v[N:2 * N], v[2 * N:3 * N]
            mvalid, mword, mresp_ready = v[3 * N:3 * N + 3]
            if memory != "fifo":
                mem_ready_now = v[3 * N + 3]
            assert mresp_ready, f"mem_resp.ready dropped (cycle {cycle})"
            # external port: stream rules, grant, forwarding
            if held_req is not None:
                assert mvalid and mword == held_req, f"mem payload changed or valid dropped (cycle {cycle})"
            held_req = None
            accepted_now = [creq[i] and offered[i] is not None for i in range(N)]
            assert sum(accepted_now) == (1 if mvalid and mem_ready_now else 0), f"cycle {cycle}: {accepted_now}"
            if mvalid and mem_ready_now:
                r = unpack(ext, mword)
                client = r["tag"] >> CLIENT_TAG_BITS
                assert accepted_now[client], \
                    f"cycle {cycle}: forwarded client {client}'s tag but accepted {accepted_now}"
                own = unpack(MemReq(), offered[client][0])
                assert {**own, "tag": own["tag"] | client << CLIENT_TAG_BITS} == r
                res["grants"].append(client)
                res["mem_words"].append(mword)
                res["accepted"][client].append(cycle)
                res["waits"][client].append((cycle - offered[client][1], offered[client][2]))
                for j in range(N):
                    if offered[j] is not None and j != client:
                        offered[j][2] += 1
                offered[client] = None
                nxt[client] += 1
                fifo.append([cycle + resp_delay, r["tag"], r["addr"]])
            elif mvalid:
                held_req = mword
            # responses to clients
            for i in range(N):
                if held_resp[i] is not None:
                    assert rvalid[i] and rword[i] == held_resp[i], f"client {i} response changed while stalled"
                held_resp[i] = None
                if rvalid[i]:
                    if taking[i]:
                        t = unpack(MemResp(), rword[i])
                        res["responses"][i].append((cycle, t["tag"], t["data"], t["fault"]))
                    else:
                        held_resp[i] = rword[i]
                out = len(res["accepted"][i]) - len(res["responses"][i])
                res["max_outstanding"][i] = max(res["max_outstanding"][i], out)
            # the "fifo" memory
            cycle += 1
            if memory == "fifo":
                if resp_offered:
                    fifo.pop(0)
                resp_offered = bool(fifo) and fifo[0][0] <= cycle
                if resp_offered:
                    ctx.set(dut.mem_resp.payload.as_value(),
                            (fifo[0][1] << MemResp(dut.tag_bits)["tag"].offset)
                            | (fifo[0][2] << MemResp(dut.tag_bits)["data"].offset))
                ctx.set(dut.mem_resp.valid, resp_offered)
        res["requests"] = [ctx.get(c) for c in dut.requests]
        if extmem is not None:
            image[:] = await host_read(ctx, extmem, image.size)
        res["cycles"] = cycle

    sim.add_testbench(bench)
    sim.run()
    return res


# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mem_ready_p", [1.0, 0.4])
def test_round_robin_under_contention(mem_ready_p):
    rng = np.random.default_rng(1)
    reqs = [client_words(rng, 40, i) for i in range(N)]
    res = run_arb(reqs, mem_ready_p=mem_ready_p, resp_delay=2, seed=2)
    # every client always has a request up (until its last): strictly in turn
    g = res["grants"]
    assert g[:4 * 40] == [0, 1, 2, 3] * 40
    assert res["requests"] == [40] * N
    if mem_ready_p == 1.0:
        # one request per cycle: 160 requests in 160 consecutive cycles
        acc = sorted(c for a in res["accepted"] for c in a)
        assert acc == list(range(acc[0], acc[0] + 160))


def test_no_starvation_with_random_traffic():
    rng = np.random.default_rng(3)
    reqs = [client_words(rng, 60, i) for i in range(N)]
    res = run_arb(reqs, valid_p=0.5, ready_p=0.7, mem_ready_p=0.6, seed=4)
    waits = [w for ws in res["waits"] for w in ws]
    # while a client waits, at most N - 1 others are granted before it
    assert max(others for _, others in waits) <= N - 1
    assert max(others for _, others in waits) == N - 1          # contention did happen
    assert res["requests"] == [60] * N


@pytest.mark.parametrize("memory", ["py", "ext"])
def test_tag_routing_with_mixed_traffic(memory):
    rng = np.random.default_rng(5)
    size = 2048
    image = rng.integers(0, 256, size, dtype=np.uint8)
    reqs = [client_words(rng, 50, i, kinds=(0.4, 0.3, 0.3), size=size) for i in range(N)]
    final = image.copy()
    res = run_arb(reqs, memory=memory, image=final, valid_p=0.8, ready_p=[1.0, 0.5, 0.8, 0.3], seed=6,
                  mem_opts=dict(latency=(2, 12), reorder=True, backpressure=0.2, seed=7))
    # the memory applied requests in the order the port took them
    ref = Reference(image, 0, tag_bits=8)
    expected = {}                                    # (client, tag) -> list of (data, fault)
    for w in res["mem_words"]:
        tag, data, fault = ref.apply(w)
        expected.setdefault((tag >> CLIENT_TAG_BITS, tag & 63), []).append((data, fault))
    got = {}
    for i in range(N):
        assert len(res["responses"][i]) == len(reqs[i])
        for _, tag, data, fault in res["responses"][i]:
            got.setdefault((i, tag), []).append((data, fault))
    # tags are unique among a client's outstanding requests, so per (client, tag) the
    # responses come back in request order
    assert got == expected
    assert (final == ref.img).all()
    assert res["requests"] == [50] * N
    # the memory did reorder: some client saw its responses out of request order (tags are
    # the request indices here)
    order = [[t for _, t, _, _ in res["responses"][i]] for i in range(N)]
    assert any(o != sorted(o) for o in order)


def test_stalled_client_does_not_block_others():
    rng = np.random.default_rng(8)
    depth = 4
    reqs = [client_words(rng, 30, i) for i in range(N)]
    stall = 400
    res = run_arb(reqs, resp_depth=depth, resp_delay=5, mem_ready_p=0.8, seed=9, stop_ready=(0, stall))
    # client 0 had at most `depth` outstanding, the others finished while it was stalled
    assert res["max_outstanding"][0] == depth
    for i in range(1, N):
        assert res["responses"][i][-1][0] < stall, f"client {i} was held up by client 0"
    first_after = [c for c, *_ in res["responses"][0]]
    assert first_after[0] == stall and len(first_after) == 30
    # client 0 gets its responses in arrival order: the fifo memory answers in order
    tags = [t for _, t, _, _ in res["responses"][0]]
    assert tags == [unpack(MemReq(), w)["tag"] for w in reqs[0]]
    for i in range(N):   # the fifo memory answers with the request's address
        assert [d for _, _, d, _ in res["responses"][i]] == [unpack(MemReq(), w)["addr"] for w in reqs[i]]
    assert res["requests"] == [30] * N


def test_bad_parameters():
    rejects(lambda: MemArbiter(1), "n_clients")
    rejects(lambda: MemArbiter(4, resp_depth=12), "resp_depth")


def test_lint(tmp_path):
    convert_and_lint(MemArbiter(4), "memarb", tmp_path)
    three = MemArbiter(3, resp_depth=4)
    assert three.tag_bits == 8          # client << 6 | tag: two client bits
    assert "wire [7:0] \\mem_resp__payload.tag ;" in convert_and_lint(three, "memarb3", tmp_path)
