"""Helpers shared by the cocotb testbenches of this directory (they run inside the simulator;
``tests/test_cocotb.py`` builds the Verilog and starts them).

The Verilog comes from ``amaranth.back.verilog.convert``: a component's port ``req[0]``, a
``stream.Signature``, becomes the ports ``req__0__valid``, ``req__0__ready`` and
``req__0__payload`` (the payload's ``data.Layout`` flattened into one vector), plus ``clk`` and
``rst``. Payloads are packed and unpacked with the layouts the RTL itself uses.

Settings arrive in the environment (``DCU_*``, set by ``tests/test_cocotb.py``):
``DCU_PRESET`` (configuration), ``DCU_REPORT`` (a JSON file for measurements),
``DCU_WAVES_FILE`` / ``DCU_GTKW_FILE`` (when waveforms are on).
"""
from __future__ import annotations

import json
import os
import time

import cocotb
from amaranth.lib import data
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

PERIOD_NS = 10

__all__ = ["PERIOD_NS", "start", "Stream", "unpack", "report", "write_gtkw", "Rate"]


async def start(dut, reset_cycles: int = 3):
    """Start the clock, hold ``rst`` for ``reset_cycles`` cycles, return after the edge that ends it."""
    Clock(dut.clk, PERIOD_NS, unit="ns").start()
    dut.rst.value = 1
    for _ in range(reset_cycles):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


def unpack(layout, value):
    """A ``data.Const`` view of a packed payload (fields by name, enums as members)."""
    return data.Const(layout, int(value))


class Stream:
    """The ``valid`` / ``ready`` / ``payload`` ports of one ``stream.Signature`` member."""

    def __init__(self, dut, prefix: str, layout=None):
        self.valid = getattr(dut, f"{prefix}__valid")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.layout, self.name = layout, prefix

    def handles(self):
        return [self.valid, self.ready, self.payload]


def report(**values):
    """Merge ``values`` into the JSON report file the pytest side reads (``DCU_REPORT``)."""
    path = os.environ.get("DCU_REPORT")
    if not path:
        return
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    old.update(values)
    with open(path, "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)


class Rate:
    """Wall time and simulated cycles of a phase: ``with Rate() as r: ...; r.per_second(cycles)``."""

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0

    def seconds_so_far(self) -> float:
        return time.perf_counter() - self.t0

    def per_second(self, cycles: int) -> float:
        return cycles / max(self.seconds, 1e-9)


def _trace_name(handle) -> str:
    """The GTKWave name of a signal handle: its hierarchical path, with ``[msb:0]`` for vectors."""
    path = handle._path
    n = len(handle)
    return f"{path}[{n - 1}:0]" if n > 1 else path


def write_gtkw(groups, dumpfile: str | None = None, savefile: str | None = None):
    """Write a GTKWave save file for the signal handles in ``groups`` ({group name: [handle, ...]},
    or a function returning it, called only when waveforms are on), beside the waveform
    (``DCU_WAVES_FILE``, ``DCU_GTKW_FILE``).

    The Verilog-name counterpart of ``dcu.waves.gtkw_traces`` (which names Amaranth signals for
    Amaranth's own VCD writer): the names are the handles' hierarchical paths, which are the
    waveform's (Icarus FST, Verilator VCD). Single bits show as binary, vectors as hex."""
    dumpfile = dumpfile or os.environ.get("DCU_WAVES_FILE")
    savefile = savefile or os.environ.get("DCU_GTKW_FILE")
    if not dumpfile or not savefile:
        return None
    if callable(groups):
        groups = groups()
    from vcd.gtkw import GTKWSave
    with open(savefile, "w") as f:
        save = GTKWSave(f)
        save.dumpfile(os.path.abspath(dumpfile))
        save.zoom_markers(-8)
        for group, handles in groups.items():
            with save.group(group, closed=False):
                for h in handles:
                    save.trace(_trace_name(h), datafmt="bin" if len(h) == 1 else "hex")
    cocotb.log.info("waveform %s, GTKWave view %s", dumpfile, savefile)
    return savefile


async def sample(clk):
    """Wait for the next rising edge, then for the values to settle (read-only phase)."""
    await RisingEdge(clk)
    await ReadOnly()
