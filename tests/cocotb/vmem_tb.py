"""cocotb smoke test of the vector memory unit (``hdl/mem/vmem.py`` VecMemUnit: coalescer, L0,
return queues) as generated Verilog, with a memory responder written here.

The program, the memory semantics and every check are ``tests/test_vmem.py``'s: its random
program generator (every load and store width, all atomics, ``global_inv`` / ``global_wb``,
random, strided, unaligned and line-straddling addresses, partial EXEC, two SIMDs x 4 waves),
its ``Run`` object for the bookkeeping, ``Run._serve`` for what a memory request does to the
byte image behind the port, and ``Run.check``, which replays the instructions in acceptance
order through the model (``sim.memory_ops.build_global``) and compares every response beat,
the final memory and the per-wave retirement order. Here, cocotb coroutines play the SIMDs
(random issue gaps, random back-pressure on the responses) and the memory (latency 1-40
cycles, responses out of order, random back-pressure on requests).
"""
from __future__ import annotations

import os
import random
import warnings

import cocotb
from amaranth.hdl import UnusedElaboratable
from cocotb.triggers import ReadOnly, RisingEdge

from hdl.config import get_config
from hdl.mem.memport import MemReq, MemResp
from hdl.layouts import VecMemResp
from hdl.mem.vmem import COUNTERS, CountersLayout, ErrorLayout
from tests.test_vmem import ATOMICS, LOADS, Run, base_of, random_program
from tbutil import Rate, Stream, report, start, unpack, write_gtkw

warnings.simplefilter("ignore", UnusedElaboratable)   # Run builds an Amaranth unit it never simulates

CFG = get_config(os.environ.get("DCU_PRESET", "default"))
N_INSTRUCTIONS = int(os.environ.get("DCU_VMEM_INSTRUCTIONS", "60"))
SEED = int(os.environ.get("DCU_SEED", "11"))


class Bench:
    def __init__(self, dut, run: Run):
        self.dut, self.run = dut, run
        self.edge = 0          # rising edges since the start (the main coroutine's count)

    async def issue(self, s, queue):
        run, port, edge = self.run, Stream(self.dut, f"req__{s}"), 0
        for ins in queue:
            while edge < ins.at or run.gap and run.rng.random() < run.gap:
                await RisingEdge(self.dut.clk)
                edge += 1
            port.payload.value = run._payload(ins).as_bits()
            port.valid.value = 1
            while True:
                await ReadOnly()
                ready = port.ready.value == 1
                await RisingEdge(self.dut.clk)
                edge += 1
                if ready:
                    break
            ins.accepted = edge
            port.valid.value = 0

    async def collect(self, s):
        run, port, edge, held = self.run, Stream(self.dut, f"resp__{s}"), 0, None
        while True:
            ready = run.rng.random() < run.resp_ready
            port.ready.value = int(ready)
            await ReadOnly()
            valid = port.valid.value == 1
            p = unpack(VecMemResp(CFG), port.payload.value.to_unsigned()) if valid else None
            await RisingEdge(self.dut.clk)
            edge += 1
            assert held is None or (valid and p.as_bits() == held), \
                f"SIMD {s}: response withdrawn or changed while stalled"
            held = p.as_bits() if valid and not ready else None
            if valid and ready:
                key = (s, p.wave, p.seq)
                assert key in run.by_key, f"SIMD {s}: response for wave {p.wave} seq {p.seq}, which was not issued"
                ins = run.by_key[key]
                assert not ins.done, f"SIMD {s} wave {p.wave} seq {p.seq}: a beat after the last one"
                ins.beats.append((edge, p))

    async def memory(self):
        """``tests/test_vmem.py``'s responder: requests applied in acceptance order (``Run._serve``),
        each answered after a random latency, a random ripe one at a time; random ``ready``."""
        run, dut = self.run, self.dut
        req, resp = Stream(dut, "mem"), Stream(dut, "mem_resp")
        inflight, edge, held, pick = [], 0, None, None
        while True:
            due = [x for x in inflight if x[0] <= edge]
            if pick is None and due:                  # an offered response stays offered until taken
                pick = run.rng.choice(due)
            if pick:
                resp.valid.value = 1
                resp.payload.value = MemResp().const({"tag": pick[1], "data": pick[2], "fault": pick[3]}).as_bits()
            else:
                resp.valid.value = 0
            ready = run.rng.random() < run.mem_ready
            req.ready.value = int(ready)
            await ReadOnly()
            valid, rready = req.valid.value == 1, resp.ready.value == 1
            r = unpack(MemReq(), req.payload.value.to_unsigned()) if valid else None
            await RisingEdge(dut.clk)
            edge += 1
            assert held is None or (valid and r.as_bits() == held), "memory request withdrawn or changed while stalled"
            held = r.as_bits() if valid and not ready else None
            if pick and rready:
                inflight.remove(pick)
                run.mem_log[pick[4]][1] = edge
                pick = None
            if valid and ready:
                d, fault = run._serve(r)
                run.mem_log.append([edge, None, r.kind, r.tag, r.addr])
                assert not any(x[1] == r.tag for x in inflight), f"tag {r.tag} reused while in flight"
                inflight.append((edge + run._latency(r), r.tag, d, fault, len(run.mem_log) - 1))


@cocotb.test()
async def vmem_random_against_model(dut):
    rng = random.Random(SEED)
    prog = random_program(rng, base_of(), N_INSTRUCTIONS)
    run = Run(CFG, prog, seed=3, lat=(1, 40))
    bench = Bench(dut, run)
    S = CFG.simds_per_cu
    write_gtkw(lambda: {"simd0": Stream(dut, "req__0").handles() + Stream(dut, "resp__0").handles(),
                "simd1": Stream(dut, "req__1").handles() + Stream(dut, "resp__1").handles(),
                "memory": Stream(dut, "mem").handles() + Stream(dut, "mem_resp").handles(),
                "state": [dut.clk, dut.rst, dut.counters, dut.error]})
    for s in range(S):
        getattr(dut, f"req__{s}__valid").value = 0
        getattr(dut, f"resp__{s}__ready").value = 0
    dut.mem__ready.value = 0
    dut.mem_resp__valid.value = 0
    dut.aperture_base.value, dut.aperture_size.value = run.aperture
    await start(dut)
    for s in range(S):
        cocotb.start_soon(bench.issue(s, [i for i in prog if i.simd == s]))
        cocotb.start_soon(bench.collect(s))
    cocotb.start_soon(bench.memory())
    edge, limit = 0, 20_000
    with Rate() as rate:
        while not all(i.done for i in prog):
            await RisingEdge(dut.clk)
            edge += 1
            if edge > limit:
                stuck = [f"SIMD {i.simd} wave {i.wave} seq {i.seq} {i.name} (accepted at {i.accepted}, "
                         f"{len(i.beats)} beats)" for i in prog if not i.done]
                counters = unpack(CountersLayout, dut.counters.value.to_unsigned())
                raise AssertionError(f"watchdog: {len(stuck)} instructions not retired after {limit} cycles: "
                                     f"{stuck[:6]}; counters {counters}")
    await ReadOnly()
    run.cycles = edge
    run.counters = {n: getattr(unpack(CountersLayout, dut.counters.value.to_unsigned()), n) for n in COUNTERS}
    run.error = unpack(ErrorLayout(CFG), dut.error.value.to_unsigned())
    lines = run.check()
    assert not run.error.valid, f"unexpected error {run.error}"
    c = run.counters
    assert c["instructions"] == len(prog)
    assert c["atomics"] == sum(bin(i.exec).count("1") for i in prog if i.op in ATOMICS)
    loads = [k for k, i in enumerate(prog) if i.op in LOADS]
    assert c["hits"] + c["misses"] == sum(lines[k] for k in loads)
    assert c["hits"] > 0 and c["misses"] > 0
    assert c["rq_occupancy"] == 0 and 1 < c["rq_max"] <= 16
    answered = [e[1] for e in sorted(run.mem_log)]
    assert answered != sorted(answered), "the memory must have answered out of order"
    dut._log.info("%d instructions, %d memory requests, %d cycles in %.1f s (%.0f cycles/s); counters %s",
                  len(prog), len(run.mem_log), edge, rate.seconds, rate.per_second(edge), c)
    report(vmem_instructions=len(prog), vmem_memory_requests=len(run.mem_log), vmem_cycles=edge,
           vmem_seconds=round(rate.seconds, 2), vmem_cycles_per_second=round(rate.per_second(edge)))
