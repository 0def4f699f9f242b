"""cocotb test of a real firmware kernel on the whole DCU, as generated Verilog:
``hdl/top/hosttop.py`` HostTop (the DCU, its RTL memory and a host port).

The host side is the one every backend of that top shares (``dcu/hostimage.py``): the
kernel is prepared exactly as for the model (``dcu.launch.prepare``), its image goes in
through the host port one dword per cycle, the dispatch starts, the testbench waits for
``done`` (in chunks of simulated time, so no Python runs on the DCU's cycles) with a cycle
budget, then reads the buffers back through the host port and checks them with the firmware
test's own golden check (``firmware_tests.manifest.check_outputs``). On a stuck run it
names what is stuck: the DCU's latched error, or (budget exhausted) the dispatcher and
per-SIMD counters read through the counter port.

Settings (environment, from ``tests/test_cocotb.py``): ``DCU_FW_TEST`` (a manifest name),
``DCU_PRESET``, ``DCU_SEED`` (the arguments' rng), ``DCU_MEM_BYTES`` / ``DCU_MEM_BASE`` (the
top's memory, to check the image fits the Verilog), ``DCU_MAX_CYCLES``, ``DCU_PERF_NAMES``
(a JSON list: the names of the counter port's counters, written beside the Verilog).
"""
from __future__ import annotations

import json
import os

import cocotb
import numpy as np
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer

from dcu.hostimage import host_image, memory_size_for
from dcu.launch import load_program, prepare
from dcu.memmodel import hosttop_knobs
from dcu.backends.verilator import DEFAULT_MEMORY
from firmware_tests.manifest import TESTS, check_outputs, path as fw_path
from hdl.config import get_config
from hdl.top.dcu import DcuError, DcuErrorCause
from hdl.mem.extmem import Knobs
from hdl.top.hosttop import MAX_LATENCY
from tbutil import PERIOD_NS, Rate, report, start, unpack, write_gtkw

CHUNK = 2_000          # cycles simulated between two looks at the DCU


async def host_write(dut, words: np.ndarray, skip_zero: bool):
    """Write ``words`` from dword 0, one per cycle; returns the dwords written."""
    n = 0
    for i, w in enumerate(words.tolist()):
        if skip_zero and w == 0:
            continue
        dut.host_addr.value, dut.host_wdata.value, dut.host_we.value = i, w, 1
        await RisingEdge(dut.clk)
        n += 1
    dut.host_we.value = 0
    return n


async def host_read(dut, ranges) -> dict:
    """Read the dwords of ``ranges`` ([(first, end)] dword indices) one per cycle: the address
    goes out right after an edge, its dword is ``host_rdata`` after the next edge."""
    addrs = [a for lo, hi in ranges for a in range(lo, hi)]
    got = {}
    dut.host_re.value = 1
    prev = None
    for a in addrs + [None]:
        if a is not None:
            dut.host_addr.value = a
        else:
            dut.host_re.value = 0
        if prev is not None:
            await ReadOnly()
            got[prev] = known(dut.host_rdata, f"host read of dword {prev}")
        await RisingEdge(dut.clk)
        prev = a
    return got


async def read_counters(dut, names) -> dict:
    """Every counter of the counter port (``perf_data`` is ``perf_names[perf_addr]`` one cycle later)."""
    out, prev = {}, None
    for i in list(range(len(names))) + [None]:
        if i is not None:
            dut.perf_addr.value = i
        if prev is not None:
            await ReadOnly()
            v = str(dut.perf_data.value)
            out[names[prev]] = v if set(v) - {"0", "1"} else int(v, 2)
        await RisingEdge(dut.clk)
        prev = i
    return out


def known(handle, what: str) -> int:
    """``handle``'s value; an AssertionError naming ``what`` if any bit is X or Z."""
    bits = str(handle.value)
    if set(bits) - {"0", "1"}:
        raise AssertionError(f"{what} ({handle._path}) is {bits}: X or Z reached it (uninitialised state?)")
    return int(bits, 2)


def _stuck_report(err, counters, cycles) -> str:
    lines = [f"after {cycles} cycles: busy, no done"]
    if err.valid:
        lines.append(f"DCU error {DcuErrorCause(err.cause).name}: SIMD {err.simd} wave slot {err.wave} "
                     f"PC {err.pc:#x} lane {err.lane} addr {err.addr:#x}")
    d = {k: v for k, v in counters.items() if k.startswith("dispatch.")}
    lines.append("dispatcher: " + ", ".join(f"{k[9:]} {v}" for k, v in d.items()))
    for s in range(4):
        issued = sum(v for k, v in counters.items() if k.startswith(f"simd{s}.issued.") and isinstance(v, int))
        stalls = {k.rsplit(".", 1)[1]: v for k, v in counters.items() if k.startswith(f"simd{s}.stall.") and v}
        lines.append(f"SIMD {s}: {issued} instructions issued; stall cycles {stalls}")
    rest = {k: v for k, v in counters.items() if k.startswith(("mem.", "vmem", "lds.", "barrier.")) and v}
    lines.append(f"memory side: {rest}")
    return "\n    ".join(lines)


@cocotb.test()
async def firmware_kernel(dut):
    env = os.environ
    test = next(t for t in TESTS if t.name == env["DCU_FW_TEST"])
    cfg = get_config(env.get("DCU_PRESET", "tiny"))
    max_cycles = int(env.get("DCU_MAX_CYCLES", "200000"))
    with open(env["DCU_PERF_NAMES"]) as f:
        perf_names = json.load(f)

    kernel = load_program(fw_path(test), wgp=test.wgp).kernel(test.kernel)
    args = test.make_args(np.random.default_rng(int(env.get("DCU_SEED", "0"))))
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    prep = prepare(kernel, test.grid, test.block, args)
    img = host_image(prep, cfg, bool(kernel.wgp_mode))
    assert (img.base, memory_size_for(img.used_bytes)) == (int(env["DCU_MEM_BASE"]), int(env["DCU_MEM_BYTES"])), \
        "the image does not match the memory this Verilog was built with"

    write_gtkw(lambda: {"host": [dut.clk, dut.rst, dut.host_we, dut.host_re, dut.host_addr, dut.host_wdata,
                         dut.host_rdata],
                "dispatch": [dut.dispatch__valid, dut.dispatch__ready, dut.busy, dut.done, dut.cycles, dut.error],
                "counters": [dut.perf_addr, dut.perf_data]})
    # (inside the DCU, Verilog names carry the converter's suffixes; a Verilator VCD gets the
    # full DCU view of dcu.waves.gtkw_for_vcd from tests/test_cocotb.py)
    for name in ("host_we", "host_re", "dispatch__valid", "dispatch__payload", "perf_addr", "host_addr", "host_wdata"):
        getattr(dut, name).value = 0
    dut.aperture_base.value, dut.aperture_size.value = img.aperture_base, img.aperture_size
    dut.seed.value = 0          # the memory model's LFSR seed, loaded at the dispatch start
    # and its settings: the verilator backend's defaults, so that both count the same cycles
    dut.mem_knobs.value = Knobs(MAX_LATENCY).const(hosttop_knobs(**DEFAULT_MEMORY)).as_bits()
    await start(dut)

    # the top's RAM starts at zero (HostTop without init): only non-zero dwords need writing
    with Rate() as load:
        written = await host_write(dut, img.words, skip_zero=True)
    dut._log.info("loaded %d of %d dwords in %.1f s (%.0f cycles/s)", written, img.words.size, load.seconds,
                  load.per_second(written))

    dut.dispatch__payload.value = img.dispatch_bits
    dut.dispatch__valid.value = 1
    while True:
        await ReadOnly()
        taken = dut.dispatch__ready.value == 1
        await RisingEdge(dut.clk)
        if taken:
            break
    dut.dispatch__valid.value = 0

    with Rate() as run:
        while True:
            await First(RisingEdge(dut.done), Timer(CHUNK * PERIOD_NS, unit="ns"))
            await ReadOnly()
            cycles = known(dut.cycles, "the cycle counter")
            if known(dut.done, "done"):
                await RisingEdge(dut.clk)       # ``cycles`` counts the cycle done is seen in, then holds
                await ReadOnly()
                cycles = known(dut.cycles, "the cycle counter")
                break
            dut._log.info("  %d cycles, %.0f cycles/s", cycles, cycles / max(1e-9, run.seconds_so_far()))
            if cycles >= max_cycles:
                await RisingEdge(dut.clk)
                err = unpack(DcuError(cfg), known(dut.error, "the DCU's error"))
                counters = await read_counters(dut, perf_names)
                raise AssertionError(f"{test.name}: the DCU did not finish within {max_cycles} cycles; "
                                     + _stuck_report(err, counters, cycles))
    err = unpack(DcuError(cfg), known(dut.error, "the DCU's error"))
    await RisingEdge(dut.clk)
    counters = await read_counters(dut, perf_names)
    assert not err.valid, f"{test.name}: the DCU stopped with an error; " + _stuck_report(err, counters, cycles)
    dut._log.info("%s: done after %d cycles in %.1f s (%.0f cycles/s)", test.name, cycles, run.seconds,
                  run.per_second(cycles))

    # read every buffer back; the rest of the image (code, kernarg, packet) is the host's own copy
    base = img.base
    ranges = [((a.base - base) // 4, -(-(a.base + arr.nbytes - base) // 4)) for a, arr in prep.buffers.values()]
    with Rate() as back:
        got = await host_read(dut, ranges)
    words = img.words.copy()
    for a, v in got.items():
        words[a] = v
    img.store_back(prep, words)
    check_outputs(test, inputs, prep.read_back())

    waves = counters.get("dispatch.waves")
    bad = {k: v for k, v in counters.items() if not isinstance(v, int)}
    assert not bad, f"counters with X or Z bits: {bad}"
    issued = sum(v for k, v in counters.items() if ".issued." in k)
    dut._log.info("%s matches its golden output: %d waves, %d instructions issued, %d cycles; read back %d dwords "
                  "in %.1f s", test.name, waves, issued, cycles, len(got), back.seconds)
    report(dcu_test=test.name, dcu_preset=cfg.name, dcu_cycles=cycles, dcu_waves=waves,
           dcu_workgroups=counters.get("dispatch.workgroups"), dcu_instructions=issued,
           dcu_run_seconds=round(run.seconds, 1), dcu_cycles_per_second=round(run.per_second(cycles), 1),
           dcu_load_dwords=written, dcu_load_seconds=round(load.seconds, 1),
           dcu_readback_dwords=len(got), dcu_readback_seconds=round(back.seconds, 1))
