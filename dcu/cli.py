"""The ``dcu`` command line: run, inspect and disassemble gfx1200 kernels.

::

    dcu run FILE [--kernel NAME] --grid X[,Y[,Z]] --block X[,Y[,Z]] [--arg SPEC]...
            [--backend model|rtl|verilator] [--config PRESET] [--out DIR]
            [--json FILE] [--vcd FILE] [--timeline FILE.png] [--wgp]
            [--max-instructions N | --max-cycles N] [--quiet]
    dcu info FILE [--config PRESET] [--block X[,Y[,Z]]] [--wgp]
    dcu disasm FILE [--kernel NAME]
    dcu bench NAME [--out DIR] [--json FILE] [--config PRESET] [--backend rtl|verilator]
    dcu verilog [--config PRESET] [--top NAME] -o FILE.v [--lint]
    dcu fpga [--board ulx3s] [--config PRESET] [--clock MHZ] [--baud N]
             [--block NAME [--generic] [--attribute] [--place] [--depth [N]]] [--budget]

Every command takes ``--debug`` (or ``DCU_DEBUG=1``): a failure then shows its traceback.
Without it a failure is one line on stderr and an exit status by its class
(``dcu.errors.EXIT_CODES``, docs/cli.md): 2 usage, 3 kernel fault, 4 unsupported,
5 timeout, 6 tool missing, 1 a build failure or an internal error.
Heavy modules (numpy, the launcher, the ISA decoder) are imported inside the
commands, so ``dcu --help`` and usage errors stay fast and independent of them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .admission import ResourceError, check_kernel, occupancy_limits, vgpr_alloc
from .errors import EXIT_CODES, UsageError, classify

__all__ = ["main", "build_parser", "parse_dims", "parse_arg_spec", "ArgSpec", "UsageError", "choose_kernel",
           "check_args_against_metadata",
           "BACKENDS", "SCALAR_TYPES", "BUFFER_DTYPES"]

BACKENDS = ("model", "rtl", "verilator")

# Scalar argument kinds: (numpy type name, kind, bits).
SCALAR_TYPES = {
    "u32": ("uint32", "uint", 32),
    "i32": ("int32", "int", 32),
    "f32": ("float32", "float", 32),
    "u64": ("uint64", "uint", 64),
    "i64": ("int64", "int", 64),
    "f64": ("float64", "float", 64),
}
BUFFER_DTYPES = {
    "u8": "uint8", "i8": "int8", "u16": "uint16", "i16": "int16", "f16": "float16",
    "u32": "uint32", "i32": "int32", "f32": "float32",
    "u64": "uint64", "i64": "int64", "f64": "float64",
}
_SPEC_HELP = """\
argument SPEC (repeat --arg in argument order; I is the 0-based position):
  buf:PATH.npy      a buffer holding that array; written back as DIR/argI.npy
  zeros:N:DTYPE     N zero elements of u8/i8/u16/i16/f16/u32/i32/f32/u64/i64/f64,
                    written back the same way
  u32:V | i32:V | f32:V | u64:V | i64:V | f64:V   a scalar argument
--grid counts workgroups; buffers are passed as global addresses.
--json writes {"status": "ok" or "failed", "exit_code", "kernel", "backend",
"config", "grid", "block", "instructions", "instructions_by_kind", "cycles" (null
on the model), "counters": {...}, "error": {...} (a failed run)}, for a failed
run too, with what it counted before it stopped (docs/cli.md).
limits: the model stops a wave after --max-instructions (default 250,000); the
RTL backends stop after --max-cycles (default: from the model's instruction
count for the same dispatch). Progress goes to stderr (--quiet: none).
""" + textwrap.fill("exit status: " + ", ".join(f"{k} {v.split(':')[0].split(' (')[0]}"
                                                for k, v in EXIT_CODES.items()), 80)




@dataclass(frozen=True)
class ArgSpec:
    """One parsed ``--arg`` SPEC.

    Attributes
    ----------
    kind : str
        ``"buf"``, ``"zeros"`` or ``"scalar"``.
    text : str
        The SPEC as given.
    path : str or None
        ``.npy`` file (``buf``).
    count : int or None
        Element count (``zeros``).
    dtype : str or None
        numpy dtype name (``zeros`` and ``scalar``).
    value : int or float or None
        Scalar value (``scalar``).
    """

    kind: str
    text: str
    path: str | None = None
    count: int | None = None
    dtype: str | None = None
    value: int | float | None = None

    @property
    def is_buffer(self) -> bool:
        """True for ``buf`` and ``zeros`` (arguments written back after the run)."""
        return self.kind in ("buf", "zeros")

    def materialize(self) -> Any:
        """Return the numpy array or numpy scalar to pass to ``dcu.launch``."""
        import numpy as np

        if self.kind == "buf":
            try:
                arr = np.load(self.path, allow_pickle=False)
            except Exception as e:  # np.load raises several types for bad files
                raise UsageError(f"--arg {self.text}: cannot load {self.path}: {e}") from None
            if not isinstance(arr, np.ndarray) or arr.dtype.hasobject:
                raise UsageError(f"--arg {self.text}: {self.path} does not hold a plain array")
            return np.ascontiguousarray(arr)
        if self.kind == "zeros":
            return np.zeros(self.count, dtype=self.dtype)
        return np.dtype(self.dtype).type(self.value)


def parse_dims(text: str, what: str = "dims") -> tuple[int, ...]:
    """Parse ``X[,Y[,Z]]`` into a tuple of 1 to 3 positive ints.

    Raises
    ------
    argparse.ArgumentTypeError
        With a message naming ``what`` for anything else.
    """
    parts = [p.strip() for p in str(text).split(",")]
    if not 1 <= len(parts) <= 3 or any(p == "" for p in parts):
        raise argparse.ArgumentTypeError(f"{what} must be X[,Y[,Z]], got {text!r}")
    dims = []
    for p in parts:
        try:
            v = int(p, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be X[,Y[,Z]] of positive integers, got {text!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{what} sizes must be >= 1, got {text!r}")
        dims.append(v)
    return tuple(dims)


def _parse_int(s: str) -> int:
    # Base 0 accepts 0x.., 0b.., 0o.. and decimal, with a sign.
    return int(s.strip().replace("_", ""), 0)


def parse_arg_spec(text: str) -> ArgSpec:
    """Parse one ``--arg`` SPEC (see the module docstring).

    Raises
    ------
    argparse.ArgumentTypeError
        For an unknown kind, a bad value, an out-of-range scalar or a missing
        ``.npy`` file.
    """
    kind, sep, rest = str(text).partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(
            f"bad argument spec {text!r}: expected buf:PATH.npy, zeros:N:DTYPE or TYPE:VALUE "
            f"(TYPE one of {', '.join(SCALAR_TYPES)})")
    if kind == "buf":
        if not rest:
            raise argparse.ArgumentTypeError(f"bad argument spec {text!r}: buf needs a path")
        if not rest.endswith(".npy"):
            raise argparse.ArgumentTypeError(
                f"bad argument spec {text!r}: buf takes a .npy file (numpy.save)")
        if not os.path.isfile(rest):
            raise argparse.ArgumentTypeError(f"bad argument spec {text!r}: no such file {rest}")
        return ArgSpec("buf", text, path=rest)
    if kind == "zeros":
        n, sep2, dt = rest.partition(":")
        if not sep2:
            raise argparse.ArgumentTypeError(f"bad argument spec {text!r}: expected zeros:N:DTYPE")
        try:
            count = _parse_int(n)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"bad argument spec {text!r}: N must be an integer") from None
        if count < 1:
            raise argparse.ArgumentTypeError(f"bad argument spec {text!r}: N must be >= 1")
        if dt not in BUFFER_DTYPES:
            raise argparse.ArgumentTypeError(
                f"bad argument spec {text!r}: DTYPE must be one of {', '.join(BUFFER_DTYPES)}")
        return ArgSpec("zeros", text, count=count, dtype=BUFFER_DTYPES[dt])
    if kind in SCALAR_TYPES:
        dtype, cls, bits = SCALAR_TYPES[kind]
        if cls == "float":
            try:
                value: int | float = float(rest)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"bad argument spec {text!r}: {rest!r} is not a number") from None
            if bits == 32 and math.isfinite(value) and abs(value) > 3.4028234663852886e38:
                raise argparse.ArgumentTypeError(
                    f"bad argument spec {text!r}: {rest} overflows float32")
        else:
            try:
                value = _parse_int(rest)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"bad argument spec {text!r}: {rest!r} is not an integer") from None
            lo, hi = (0, 2**bits - 1) if cls == "uint" else (-(2**(bits - 1)), 2**(bits - 1) - 1)
            if not lo <= value <= hi:
                raise argparse.ArgumentTypeError(
                    f"bad argument spec {text!r}: {value} is out of range for {kind} [{lo}, {hi}]")
        return ArgSpec("scalar", text, dtype=dtype, value=value)
    raise argparse.ArgumentTypeError(
        f"bad argument spec {text!r}: unknown kind {kind!r}; use buf, zeros or one of "
        f"{', '.join(SCALAR_TYPES)}")


def _preset_names() -> list[str]:
    from hdl.config import PRESETS

    return list(PRESETS)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # keep argparse's exit 2, add a pointer to --help
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the ``dcu`` argument parser (exposed for tests)."""
    p = _Parser(prog="dcu", description="Run, inspect and disassemble gfx1200 kernels on the "
                "RDNA 4 dual compute unit (reference model or RTL).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true",
                        help="show the Python traceback of a failure (also DCU_DEBUG=1)")

    presets = _preset_names()
    r = sub.add_parser("run", parents=[common], help="build (if needed) and run a kernel",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_SPEC_HELP)
    r.add_argument("file", metavar="FILE", help=".s, .cl, .o or .hsaco/.co")
    r.add_argument("--kernel", metavar="NAME", help="kernel name (optional if there is one)")
    r.add_argument("--grid", required=True, metavar="X[,Y[,Z]]",
                   type=lambda s: parse_dims(s, "--grid"), help="workgroups per dimension")
    r.add_argument("--block", required=True, metavar="X[,Y[,Z]]",
                   type=lambda s: parse_dims(s, "--block"), help="work-items per workgroup")
    r.add_argument("--arg", action="append", default=[], metavar="SPEC", type=parse_arg_spec,
                   dest="args", help="kernel argument, in order (see below)")
    r.add_argument("--backend", choices=BACKENDS, default="model")
    r.add_argument("--config", choices=presets, default="default", metavar="PRESET",
                   help=f"DCU preset: {', '.join(presets)} (default: default)")
    r.add_argument("--out", metavar="DIR", help="write buffer arguments back as DIR/argI.npy")
    r.add_argument("--json", metavar="FILE", help="write the run report as JSON")
    r.add_argument("--vcd", metavar="FILE", help="waveform dump (RTL backends only)")
    r.add_argument("--timeline", metavar="FILE.png",
                   help="per-wave issue and stall states over time, as a PNG (backend rtl only)")
    r.add_argument("--wgp", action="store_true", help="compile OpenCL C in WGP mode")
    r.add_argument("--seed", type=int, default=None,
                   help="RTL backends: seed of the memory model's latencies and reordering (default 0)")
    r.add_argument("--latency", type=_latency, default=None, metavar="LO[,HI]",
                   help="RTL backends: the memory's latency in cycles, fixed or drawn per request from LO..HI "
                        "(default 8,32; 2 to 500 on the RTL memory)")
    r.add_argument("--in-order", action="store_true",
                   help="RTL backends: the memory answers in acceptance order (default: reordered)")
    r.add_argument("--backpressure", type=_probability, default=None, metavar="P",
                   help="RTL backends: the memory refuses a request in a cycle with probability P in [0, 1)")
    r.add_argument("--max-instructions", type=_positive, metavar="N",
                   help=f"backend model: stop a wave after N instructions (default {DEFAULT_WAVE_INSTRUCTIONS:,})")
    r.add_argument("--max-cycles", type=_positive, metavar="N",
                   help="RTL backends: stop the dispatch after N cycles (default: from the model's "
                        "instruction count for the same dispatch)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--rtl-memory", choices=("py", "rtl"), default=None,
                   help="backend rtl: the Python memory model (py, default) or the RTL one the "
                        "verilator backend compiles (rtl: same cycles as verilator for a seed)")

    i = sub.add_parser("info", parents=[common], help="kernels, descriptors, resource use and occupancy")
    i.add_argument("file", metavar="FILE")
    i.add_argument("--config", choices=presets, default="default", metavar="PRESET",
                   help=f"DCU preset: {', '.join(presets)} (default: default)")
    i.add_argument("--block", metavar="X[,Y[,Z]]", type=lambda s: parse_dims(s, "--block"),
                   help="workgroup size for occupancy (default: reqd_work_group_size or 32)")
    i.add_argument("--wgp", action="store_true", help="compile OpenCL C in WGP mode")

    d = sub.add_parser("disasm", parents=[common], help="disassemble with the project's decoder")
    d.add_argument("file", metavar="FILE")
    d.add_argument("--kernel", metavar="NAME", help="only this kernel (default: all)")
    d.add_argument("--wgp", action="store_true", help="compile OpenCL C in WGP mode")

    v = sub.add_parser("verilog", parents=[common], help="write the Verilog of the DCU or one of its blocks")
    v.add_argument("--config", choices=presets, default="default", metavar="PRESET",
                   help=f"DCU preset: {', '.join(presets)} (default: default)")
    from hdl.tops import TOPS
    v.add_argument("--top", default="dcu", metavar="NAME",
                   help=f"block: {', '.join(TOPS)} (default: dcu)")
    v.add_argument("-o", "--output", required=True, metavar="FILE.v")
    v.add_argument("--lint", action="store_true", help="then run verilator --lint-only on it")

    f = sub.add_parser("fpga", parents=[common], help="build the ECP5 bitstream (DCU + block-RAM memory + UART host "
                       "link) or synthesize one block, with the YoWASP tools (docs/fpga.md)")
    f.add_argument("--board", default="ulx3s", choices=("ulx3s",),
                   help="board (ulx3s: the LFE5U-85F ULX3S through amaranth-boards)")
    f.add_argument("--config", choices=presets, default="fpga", metavar="PRESET",
                   help=f"DCU preset: {', '.join(presets)} (default: fpga)")
    f.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="with --block or --budget: change a field of the preset (repeatable), e.g. "
                        "--set lanes=1; results are named after the variant (fpga+lanes=1)")
    f.add_argument("--clock", type=float, default=50.0, metavar="MHZ",
                   help="design clock from the board's 25 MHz by a PLL (default 50; 25: no PLL)")
    f.add_argument("--baud", type=int, default=115_200, help="UART rate (default 115200)")
    f.add_argument("--seed", type=_seeds, default=[1], metavar="SEED[,SEED...]",
                   help="nextpnr placement seed (default 1); with --block --place, several (1,2,3) place "
                        "the block once per seed and report each Fmax and their median: one placement's "
                        "Fmax varies by a few MHz from seed to seed")
    f.add_argument("--synth-opts", default="", metavar="OPTS",
                   help="extra synth_ecp5 options, and the project's -area: ABC9 maps to LUTs with the "
                        "50 MHz period as its delay target, for area (docs/fpga.md)")
    f.add_argument("--block", metavar="NAME",
                   help="only synthesize this block of `dcu verilog --top` (or fpgatop) with Yosys "
                        "and print its cells")
    f.add_argument("--generic", action="store_true", help="with --block: Yosys's generic synth")
    f.add_argument("--until", metavar="LABEL",
                   help="with --block: stop synth_ecp5 before this label (map_luts: FFs, BRAMs, DSPs "
                        "final, logic still gates)")
    f.add_argument("--place", action="store_true",
                   help="with --block: also place and route it alone (nextpnr out of context) at "
                        "--clock and report its Fmax")
    f.add_argument("--no-route", action="store_true",
                   help="with --place: place only; the timing estimates the nets from the placement "
                        "(a block whose routing does not converge)")
    f.add_argument("--depth", type=int, nargs="?", const=10, metavar="N",
                   help="with --block: its N (10) deepest register-to-register paths in cells, from "
                        "the synthesized netlist, without placing it (dcu/fpga/depth.py)")
    f.add_argument("--ports", action="store_true",
                   help="with --depth: also the paths from the block's inputs and to its outputs (the "
                        "depth of a combinational unit such as valu_int)")
    f.add_argument("--attribute", action="store_true",
                   help="with --block: also count the cells by the source line that made them")
    f.add_argument("--reuse-rtlil", action="store_true",
                   help="with --block: reuse the block's RTLIL from an earlier run (saves the conversion)")
    f.add_argument("--budget", action="store_true",
                   help="no synthesis: count register bits, DSP blocks and memories in the RTLIL of the "
                        "DCU (or --block) against the ECP5-85F (dcu/fpga/budget.py; no FPGA tools needed)")
    f.add_argument("--no-dcu", action="store_true",
                   help="bring-up build: the UART link and the block-RAM memory without the DCU")
    f.add_argument("--force", action="store_true",
                   help="build the board even when bench/results/synth-PRESET.json shows that the DCU "
                        "does not fit the device")
    f.add_argument("--timeout", type=float, default=4 * 3600, metavar="S", help="tool time limit")
    f.add_argument("--json", metavar="FILE", help="also write the report there")

    from .bench import BENCHMARKS
    b = sub.add_parser("bench", parents=[common], help="run a benchmark",
                       description="Run one benchmark and write its results as JSON:\n"
                                   "OUT/NAME[-CONFIG-BACKEND].json (--out, default the current directory) and --json.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=textwrap.fill("benchmarks: " + ", ".join(BENCHMARKS), 78, break_on_hyphens=False))
    b.add_argument("name", metavar="NAME", choices=list(BENCHMARKS), help="one of the benchmarks below")
    b.add_argument("--out", metavar="DIR", default=".",
                   help="folder for NAME.json (default: the current directory; bench/results updates "
                        "the project's recorded results and bench/RESULTS.md)")
    b.add_argument("--json", metavar="FILE", help="also write the results there")
    b.add_argument("--config", metavar="PRESET", help="the preset, for benchmarks that take one (kernels)")
    b.add_argument("--backend", choices=("rtl", "verilator"),
                   help="the RTL backend, for benchmarks that take one (kernels)")
    from .verify.cli import add_parser as add_verify_parser
    add_verify_parser(sub, common)
    return p


# ---- helpers shared by the commands ---------------------------------------------
def _check_file(path: str) -> None:
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")


def choose_kernel(names: Sequence[str], wanted: str | None, path: str) -> str:
    names = sorted(names)
    if wanted is not None:
        if wanted not in names:
            raise UsageError(f"no kernel {wanted!r} in {path}; kernels: {', '.join(names) or '(none)'}")
        return wanted
    if len(names) == 1:
        return names[0]
    if not names:
        raise UsageError(f"{path} contains no kernels")
    raise UsageError(f"{path} has {len(names)} kernels, choose one with --kernel: {', '.join(names)}")


def _load_code_object(path: str, wgp: bool):
    from .codeobj import CodeObject
    from .toolchain import build

    return CodeObject(build(path, wgp=wgp))


def _json_default(o: Any):
    # numpy scalars and arrays in counters
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _positive(text: str) -> int:
    try:
        v = int(text.replace("_", "").replace(",", ""), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _latency(text: str) -> tuple[int, int]:
    """``--latency``: LO or LO,HI cycles."""
    try:
        parts = [int(x) for x in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (1, 2) or not 1 <= parts[0] <= parts[-1]:
        raise argparse.ArgumentTypeError(f"a latency is LO or LO,HI cycles with 1 <= LO <= HI, got {text!r}")
    return parts[0], parts[-1]


def _probability(text: str) -> float:
    """``--backpressure``: a probability in [0, 1)."""
    try:
        p = float(text)
    except ValueError:
        p = -1.0
    if not 0.0 <= p < 1.0:
        raise argparse.ArgumentTypeError(f"a probability in [0, 1), got {text!r}")
    return p


def _seeds(text: str) -> list[int]:
    """``--seed``: one placement seed or several, comma-separated and distinct."""
    try:
        seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds are integers separated by commas, got {text!r}") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"a seed is repeated in {text!r}")
    return seeds


def _write_json(path: str, data: Any) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=_json_default)
        f.write("\n")


# ---- commands -------------------------------------------------------------------
#: the model stops a wave after this many instructions unless --max-instructions says otherwise:
#: a wave spinning on a flag (the slowest loop, a global load per iteration, runs about
#: 13,000 instructions/s) stops within about 20 s, far beyond any firmware kernel's longest wave
DEFAULT_WAVE_INSTRUCTIONS = 250_000
#: the RTL backends' cycle limit unless --max-cycles says otherwise: from the model's
#: instruction count for the same dispatch, at a CPI no kernel comes near (a wave's dependent
#: loads cost the memory's latency each), plus the dispatch's start; or, when the model finds
#: a wave that never ends, SPIN_CYCLES (the tiny DCU simulates about 250 cycles/s in Amaranth)
CYCLES_BASE, CYCLES_PER_INSTRUCTION = 20_000, 100
SPIN_CYCLES = 20_000
FALLBACK_CYCLES = 5_000_000


def _check_backend_options(ns: argparse.Namespace) -> None:
    """Usage errors for options the chosen backend does not take: none is ignored silently."""
    rtl_only = {"--vcd": ns.vcd, "--seed": ns.seed, "--max-cycles": ns.max_cycles, "--latency": ns.latency,
                "--in-order": ns.in_order or None, "--backpressure": ns.backpressure}
    for opt, value in rtl_only.items():
        if value is not None and ns.backend == "model":
            raise UsageError(f"{opt} needs an RTL backend (--backend rtl or verilator): the model has no "
                             f"{'waveform' if opt == '--vcd' else 'cycles or memory latencies'}")
    rtl_memory = ns.backend == "verilator" or ns.rtl_memory == "rtl"
    if ns.latency and rtl_memory:
        from hdl.top.hosttop import MAX_LATENCY
        if not (2 <= ns.latency[0] and ns.latency[1] <= MAX_LATENCY):
            raise UsageError(f"--latency {ns.latency[0]},{ns.latency[1]}: the RTL memory's latency is 2 to "
                             f"{MAX_LATENCY} cycles")
    if ns.max_instructions is not None and ns.backend != "model":
        raise UsageError("--max-instructions applies to --backend model; the RTL backends take --max-cycles")
    for opt, value in (("--rtl-memory", ns.rtl_memory), ("--timeline", ns.timeline)):
        if value and ns.backend != "rtl":
            raise UsageError(f"{opt} needs --backend rtl")


def _check_output_file(opt: str, path: str | None) -> None:
    """A file the run will write: its folder must exist and be writable, the path not a folder."""
    if not path:
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{opt} {path}: is a directory; give a file name")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{opt} {path}: no such directory {folder}")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{opt} {path}: not writable")


def _check_outputs(ns: argparse.Namespace) -> None:
    """Every output path before the run, so that a typo costs no run: ``--out`` a writable
    folder (made if its parent exists), the others writable files."""
    for opt in ("json", "vcd", "timeline"):
        _check_output_file(f"--{opt}", getattr(ns, opt))
    if ns.out:
        out = Path(ns.out)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {ns.out}: is a file; give a directory")
        parent = out if out.exists() else out.parent if str(out.parent) else Path(".")
        if not parent.is_dir():
            raise UsageError(f"--out {ns.out}: no such directory {parent}")
        if not os.access(parent, os.W_OK):
            raise UsageError(f"--out {ns.out}: not writable")


def _cycle_limit(launch_mod: Any, kern: Any, ns: argparse.Namespace, values: list, progress: Any) -> int:
    """``--max-cycles``, or the default from the model's run of the same dispatch."""
    if ns.max_cycles is not None:
        return ns.max_cycles
    from sim.model import ExecutionError, Watchdog
    progress.phase("sizing the cycle limit from the model's run of the same dispatch", slow=False)
    try:
        run = launch_mod.launch(kern, ns.grid, ns.block, values, "model", ns.config,
                                max_wave_instructions=DEFAULT_WAVE_INSTRUCTIONS)
        n = run.report.instructions
        limit, why = CYCLES_BASE + CYCLES_PER_INSTRUCTION * n, f"{CYCLES_PER_INSTRUCTION} per instruction the model ran"
    except Watchdog:
        limit, why = SPIN_CYCLES, "the model found a wave that does not end"
    except ExecutionError:
        limit, why = FALLBACK_CYCLES, "the model stopped on the kernel"
    progress.end_phase()
    if not ns.quiet:
        print(f"dcu run: cycle limit {limit:,} ({why}; --max-cycles sets it)", file=sys.stderr)
    return limit


def cmd_run(ns: argparse.Namespace) -> int:
    """``dcu run``: build, launch, write back buffers and the report."""
    _check_file(ns.file)
    _check_backend_options(ns)
    _check_outputs(ns)
    ns.json_ok = True                       # from here on a failed run writes its report too
    values = [spec.materialize() for spec in ns.args]

    import importlib

    from .argcheck import check_arguments
    from .progress import Progress

    # import_module, not "from . import launch": dcu/__init__ binds the name
    # dcu.launch to the launch() function, shadowing the submodule.
    launch_mod = importlib.import_module("dcu.launch")
    prog = launch_mod.load_program(ns.file, wgp=ns.wgp)
    name = choose_kernel(list(prog.kernels), ns.kernel, ns.file)
    ns.kernel_name = name
    kern = prog.kernel(name)
    check_args_against_metadata(kern, ns.args)
    for w in check_arguments(kern, ns.args, values, math.prod(ns.grid), math.prod(ns.grid) * math.prod(ns.block)):
        print(f"dcu run: warning: {w}", file=sys.stderr)
    progress = Progress(enabled=not ns.quiet)
    kwargs: dict[str, Any] = {"progress": progress}
    if ns.backend == "model":
        kwargs["max_wave_instructions"] = ns.max_instructions or DEFAULT_WAVE_INSTRUCTIONS
    else:
        kwargs["seed"] = ns.seed or 0
        for key, value in (("latency", ns.latency), ("backpressure", ns.backpressure)):
            if value is not None:
                kwargs[key] = value
        if ns.in_order:
            kwargs["reorder"] = False
        kwargs["max_cycles"] = _cycle_limit(launch_mod, kern, ns, values, progress)
    if ns.rtl_memory:
        kwargs["memory"] = ns.rtl_memory
    if ns.timeline:
        kwargs["timeline"] = ns.timeline
    if ns.vcd:
        kwargs["vcd"] = ns.vcd
    try:
        run = launch_mod.launch(kern, ns.grid, ns.block, values, ns.backend, ns.config, **kwargs)
    finally:
        progress.close()

    report = report_json(run.report)
    print(_summary(report, run.report.checks))
    _write_buffers(ns, list(run.buffers or []))
    if ns.json:
        _write_json(ns.json, {**report, "status": "ok", "exit_code": 0})
        print(f"wrote {ns.json}")
    return 0


def _write_buffers(ns: argparse.Namespace, buffers: list, failed: bool = False) -> None:
    """Each buffer argument to ``--out DIR/argI.npy``, or a preview on stdout (not after a failure)."""
    import numpy as np

    pairs = [(i, buffers[i]) for i, spec in enumerate(ns.args)
             if spec.is_buffer and i < len(buffers) and buffers[i] is not None]
    if ns.out:
        out = Path(ns.out)
        out.mkdir(exist_ok=True)
        for idx, b in pairs:
            np.save(out / f"arg{idx}.npy", b)
            print(f"wrote {out / f'arg{idx}.npy'}" + (" (as the failed run left it)" if failed else ""),
                  file=sys.stderr if failed else sys.stdout)
    elif not failed:
        for idx, b in pairs:
            print(f"arg{idx} ({b.dtype}[{b.size}]): {_preview(b)}")


# ---- the report: one vocabulary for every backend ---------------------------------------
#: the model's counters under the names the RTL's counters have (summed over the units)
_MODEL_COUNTERS = {"waves": "dispatch.waves", "workgroups": "dispatch.workgroups",
                   "global_accesses": "vmem.instructions", "global_lines": "vmem.lines",
                   "ds_accesses": "lds.accesses", "ds_conflict_cycles": "lds.conflict_cycles",
                   "loadcnt": "waitcnt.loadcnt", "storecnt": "waitcnt.storecnt",
                   "dscnt": "waitcnt.dscnt", "kmcnt": "waitcnt.kmcnt"}


def _unit_sum(counters: dict) -> dict:
    """The RTL's per-unit counters summed over units of a kind (``simd0.issued.valu`` +
    ``simd1.issued.valu`` -> ``simd.issued.valu``; ``lds.accesses0`` -> ``lds.accesses``);
    maxima stay maxima."""
    import re

    out: dict = {}
    for k, v in counters.items():
        key = re.sub(r"^(simd|vmem)\d+\.", r"\1.", re.sub(r"^(lds\.\w+?|mem\.requests)\d+$", r"\1", k))
        out[key] = max(out.get(key, 0), v) if key.endswith(("max", "max_resident")) else out.get(key, 0) + v
    return out


def report_json(report: Any) -> dict:
    """A run's report (``dcu.launch.RunReport``) in the vocabulary both backends share:
    instructions by SIMD issue group (``hdl.layouts.ISSUE_GROUPS``) and counters by the RTL's
    names summed over units (``simd.issued.valu``, ``vmem.lines``, ``dispatch.waves``);
    the RTL's per-unit counters under ``counters_by_unit``."""
    from hdl.layouts import ISSUE_GROUPS, issue_group

    d = dict(report.to_dict())
    if report.backend == "model":
        groups = dict.fromkeys(ISSUE_GROUPS, 0)
        for kind, n in report.instructions_by_kind.items():
            groups[issue_group(kind)] += n
        counters = {_MODEL_COUNTERS.get(k, k): v for k, v in report.counters.items()}
        counters.update({f"simd.issued.{g}": n for g, n in groups.items()})
    else:
        groups = {g: report.instructions_by_kind.get(g, 0) for g in ISSUE_GROUPS}
        counters = _unit_sum(report.counters)
        d["counters_by_unit"] = dict(report.counters)
    d["instructions_by_kind"], d["counters"] = groups, dict(sorted(counters.items()))
    return d


def _summary(d: dict, checks: Sequence[str]) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(d["instructions_by_kind"].items(), key=lambda kv: -kv[1]) if v)
    lines = [f"{d['kernel']} on {d['backend']} ({d['config']}): grid {tuple(d['grid'])} x block {tuple(d['block'])}"]
    lines += [f"  checked: {c}" for c in checks]
    lines += [f"  wave-instructions: {d['instructions']} ({kinds})",
              f"  cycles: {d['cycles'] if d['cycles'] is not None else 'n/a on the model backend'}"]
    shown = {k: v for k, v in d["counters"].items() if v and not k.startswith("simd.issued.")}
    if shown:
        lines.append("  counters: " + ", ".join(f"{k}={v}" for k, v in shown.items()))
    return "\n".join(lines)


def _failure_json(ns: argparse.Namespace, err: Any, exc: BaseException) -> dict:
    """The report of a failed run: the error and whatever the run counted before it stopped."""
    partial = getattr(exc, "report", None)
    d = report_json(partial) if partial is not None else {
        "kernel": getattr(ns, "kernel_name", ns.kernel), "backend": ns.backend, "config": ns.config,
        "grid": list(ns.grid), "block": list(ns.block), "instructions": None, "cycles": None, "counters": {}}
    fault = getattr(err, "fault", None)
    d.update(status="failed", exit_code=err.exit_code,
             error={"class": err.label, "message": str(err), **({"fault": fault.to_dict()} if fault else {})})
    return d


def check_args_against_metadata(kern: Any, specs: Sequence[ArgSpec]) -> None:
    """Usage errors for a wrong argument count or a buffer/scalar mix-up.

    Only possible when the code object has argument metadata; without it the
    launcher lays the arguments out as given.
    """
    explicit = [a for a in getattr(kern, "args", ()) if not a.hidden]
    if not explicit:
        return
    kinds = ", ".join(f"{a.name or f'arg{i}'}: {'buffer' if a.is_buffer else a.type_name or a.value_kind}"
                      for i, a in enumerate(explicit))
    if len(specs) != len(explicit):
        raise UsageError(f"kernel {kern.name} takes {len(explicit)} argument(s) ({kinds}), "
                         f"got {len(specs)} --arg")
    for i, (a, spec) in enumerate(zip(explicit, specs)):
        if a.is_buffer != spec.is_buffer:
            want = "a buffer (buf: or zeros:)" if a.is_buffer else "a scalar (u32:, f32:, ...)"
            raise UsageError(f"--arg {spec.text}: argument {i} ({a.name or a.type_name}) "
                             f"of kernel {kern.name} is {want}")


def _preview(arr: Any, n: int = 8) -> str:
    flat = arr.reshape(-1)
    head = ", ".join(str(x) for x in flat[:n].tolist())
    return f"[{head}{', ...' if flat.size > n else ''}]"


def _fmt_bool3(t: Sequence[bool]) -> str:
    return "".join(c for c, on in zip("xyz", t) if on) or "-"


def cmd_info(ns: argparse.Namespace) -> int:
    """``dcu info``: descriptors, resources and occupancy of every kernel."""
    from hdl.config import get_config

    _check_file(ns.file)
    co = _load_code_object(ns.file, ns.wgp)
    cfg = get_config(ns.config)
    print(f"{ns.file}: {len(co.kernels)} kernel(s); config {cfg.name!r}")
    for name in sorted(co.kernels):
        k = co.kernels[name]
        block = ns.block or k.reqd_workgroup_size or (32,)
        dims = tuple(block) + (1,) * (3 - len(block))
        waves = math.ceil(math.prod(dims) / 32)
        print(f"\nkernel {name}")
        print(f"  entry 0x{k.entry:x}  size {k.code_size if k.code_size is not None else '?'} B  "
              f"descriptor 0x{k.descriptor_address:x}")
        print(f"  rsrc1 0x{k.rsrc1:08x}  rsrc2 0x{k.rsrc2:08x}  rsrc3 0x{k.rsrc3:08x}  "
              f"properties 0x{k.properties:04x}")
        print(f"  mode {'WGP' if k.wgp_mode else 'CU'}, {'wave32' if k.wave32 else 'wave64'}, "
              f"user SGPRs {k.user_sgpr_count}, kernarg ptr {'yes' if k.kernarg_ptr else 'no'}, "
              f"workgroup id {_fmt_bool3(k.workgroup_id_enable)}, "
              f"work-item id {'xyz'[:k.workitem_id_enable + 1]}")
        print(f"  VGPRs {k.vgpr_count} (descriptor allocates {k.vgpr_alloc}, config granule "
              f"{vgpr_alloc(cfg, k.vgpr_count)})  SGPRs "
              f"{k.sgpr_count if k.sgpr_count is not None else '?'}  "
              f"LDS {k.group_segment_size} B  scratch {k.private_segment_size} B/lane")
        reqd = f"  reqd_work_group_size {k.reqd_workgroup_size}" if k.reqd_workgroup_size else ""
        print(f"  kernarg {k.kernarg_size} B{reqd}")
        if k.args:
            for a in k.args:
                label = a.name or ("(hidden)" if a.hidden else "")
                extra = f" {a.address_space}" if a.address_space else ""
                print(f"    +{a.offset:<3} {a.size:>2} B  {a.value_kind:<22} "
                      f"{a.type_name or '':<10} {label}{extra}")
        else:
            print("    (no argument metadata)")
        limits = occupancy_limits(cfg, k.vgpr_count, k.group_segment_size, waves, k.wgp_mode)
        lim = ", ".join(f"{key} {v}" for key, v in limits.items())
        try:
            occ = check_kernel(cfg, k, dims)
            print(f"  occupancy on {cfg.name}: {occ} wave(s)/SIMD with block {dims} "
                  f"({waves} wave(s)/workgroup; limits: {lim})")
        except ResourceError as e:
            print(f"  does not fit {cfg.name}: {e}")
    return 0


def cmd_disasm(ns: argparse.Namespace) -> int:
    """``dcu disasm``: every kernel (or function) as ``PC offset: dwords  text`` (``dcu.listing``)."""
    import importlib

    from .listing import blocks, listing

    _check_file(ns.file)
    co = _load_code_object(ns.file, ns.wgp)
    if ns.kernel is not None and not blocks(co, ns.kernel):
        names = [b.name for b in blocks(co)]
        raise UsageError(f"no kernel or function {ns.kernel!r} in {ns.file}; it has: {', '.join(names) or '(none)'}")
    lines = listing(co, importlib.import_module("dcu.launch").image_base(), ns.kernel)
    if not lines:
        raise UsageError(f"{ns.file} has no code to disassemble (an empty .text)")
    print("\n".join(lines))
    return 0


def cmd_bench(ns: argparse.Namespace) -> int:
    """``dcu bench``: dispatch to :func:`dcu.bench.run`, results into ``--out`` and ``--json``."""
    from . import bench  # lazy

    _check_output_file("--json", ns.json)
    if not Path(ns.out).is_dir():
        raise UsageError(f"--out {ns.out}: no such directory")
    result = bench.run(ns.name, ns.json, out_dir=ns.out, config=ns.config, backend=ns.backend)
    return int(result) if isinstance(result, int) and not isinstance(result, bool) else 0


def cmd_verilog(ns: argparse.Namespace) -> int:
    """``dcu verilog``: convert a block to Verilog (the whole DCU takes minutes)."""
    from hdl.config import get_config
    from hdl.tops import TOPS

    from .vpost import block_verilog

    if ns.top not in TOPS:
        raise UsageError(f"unknown --top {ns.top!r}; choose one of {', '.join(TOPS)}")
    text = block_verilog(ns.top, get_config(ns.config))
    Path(ns.output).write_text(text)
    print(f"wrote {ns.output}: module {ns.top} ({ns.config}), {len(text.splitlines())} lines")
    if ns.lint:
        import os
        import subprocess

        from .backends.verilator import toolchain, verilator_version
        name, env = toolchain()     # the one the verilator backend builds with (ToolMissing: none)
        r = subprocess.run(["verilator", "--lint-only", "-Wno-CASEINCOMPLETE", "-Wno-WIDTH", ns.output],
                           env={**os.environ, **env})
        if r.returncode:
            return 1
        print(f"verilator --lint-only: clean ({verilator_version(env)})")
    return 0


def cmd_fpga(ns: argparse.Namespace) -> int:
    """``dcu fpga``: the ECP5 build (``dcu/fpga/flow.py``); exit 6 with the install command when a
    YoWASP tool is missing."""
    from hdl.config import ConfigError, get_config
    from .fpga import flow as fpga

    config = ns.config
    if ns.set:
        if not (ns.block or ns.budget):
            raise UsageError("--set applies to --block and --budget (the board builds a preset)")
        try:
            config = get_config(ns.config).with_settings(ns.set)
        except ConfigError as e:
            raise UsageError(str(e)) from None
    if ns.budget:
        from .fpga import budget
        res = budget.budget(config, ns.block or "dcu")
        print(budget.summary(res))
        if ns.json:
            _write_json(ns.json, res)
            print(f"wrote {ns.json}")
        return 0
    if ns.block:
        needed = ("YOSYS", "NEXTPNR_ECP5") if ns.place else ("YOSYS",)
    else:
        needed = ("YOSYS", "NEXTPNR_ECP5", "ECPPACK")
    missing = fpga.missing_tools(needed)
    if missing:
        from .errors import ToolMissing
        raise ToolMissing(f"missing FPGA tools: {', '.join(missing)}; install them with: {fpga.INSTALL_HINT}")
    if ns.block and ns.place:
        by_seed = {}
        for seed in ns.seed:
            res = by_seed[seed] = fpga.place_block(ns.block, config, clock_mhz=ns.clock, seed=seed,
                                                   synth_opts=ns.synth_opts, timeout=ns.timeout,
                                                   route=not ns.no_route)
            p = res.get("nextpnr") or {}
            e = res.get("ecp5") or {}
            print(f"{ns.block} ({get_config(config).name}), seed {seed}: {e.get('lut_equiv')} LUT4 equivalents, "
                  f"{e.get('ff')} FF; nextpnr exit {p.get('rc')} in {p.get('seconds')} s")
            for clock, f in p.get("fmax", {}).items():
                verdict = "PASS" if f["pass"] else "FAIL"
                print(f"  Fmax {f['mhz']:.2f} MHz for {clock} ({verdict} at {f['target_mhz']:g} MHz)"
                      + ("" if res.get("routed", True) else ", estimated from the placement (not routed)"))
            if p.get("critical_path"):
                c = p["critical_path"]
                print(f"  critical path {c['ns']} ns through {c['cells']} cells ({c['routing_ns']} ns routing): "
                      f"{c['from']} -> {c['to']}")
        ok = all(r["rc"] == 0 and (r.get("nextpnr") or {}).get("rc") == 0 for r in by_seed.values())
        if len(by_seed) > 1:
            fmax = {seed: r.get("fmax_mhz") for seed, r in by_seed.items()}
            got = sorted(f for f in fmax.values() if f is not None)
            if got:
                print(f"{ns.block}: Fmax over seeds {', '.join(map(str, by_seed))}: min {got[0]:.2f}, "
                      f"median {statistics.median(got):.2f}, max {got[-1]:.2f} MHz")
            res = {"seeds": {str(seed): r for seed, r in by_seed.items()}, "fmax_mhz": fmax,
                   "fmax_median_mhz": statistics.median(got) if got else None}
        if ns.json:
            _write_json(ns.json, res)
            print(f"wrote {ns.json}")
        return 0 if ok else 1
    if ns.block and ns.depth:
        res = fpga.depth_block(ns.block, config, paths=ns.depth, ports=ns.ports, timeout=ns.timeout,
                               reuse_result=True)
        d = res.get("depth")
        if d is None:
            print(f"dcu fpga: {ns.block}: synthesis failed: {res.get('error')}", file=sys.stderr)
            return 1
        print(f"{ns.block} ({get_config(config).name}): {d['cells']} cells; the deepest paths "
              f"(levels: LUTs and routed cell inputs, dcu/fpga/depth.py):")
        for p in d["paths"]:
            print(f"  {p['levels']:3}  {p['from']} -> {p['to']}")
        if d["paths"]:
            print("the deepest, cell by cell:")
            for sig, t, lv in d["paths"][0]["through"]:
                print(f"  {lv:3}  {t:16} {sig}")
        if ns.json:
            _write_json(ns.json, res)
            print(f"wrote {ns.json}")
        return 0
    if ns.block:
        res = fpga.synth_block(ns.block, config, generic=ns.generic, timeout=ns.timeout,
                               until=ns.until, reuse_rtlil=ns.reuse_rtlil, synth_opts=ns.synth_opts,
                               attribute=ns.attribute)
        print(f"{ns.block} ({get_config(config).name}, {res['flow']}): {res['cells']} cells in {res['synth_s']:.0f} s "
              f"(exit {res['rc']})")
        for t, n in sorted(res["by_type"].items(), key=lambda kv: -kv[1]):
            print(f"  {n:8} {t}")
        if "by_module" in res:
            print("LUT4 equivalents by module (its own logic, submodules apart):")
            for mod, e in list(res["by_module"].items())[:30]:
                print(f"  {e['lut_equiv']:8} {mod}  ({e['ff']} FF)")
        if "by_source" in res:
            src = res["by_source"]
            print("cells by file:")
            for f, types in list(src["by_file"].items())[:15]:
                print(f"  {sum(types.values()):8} {f}")
            print("cells by source line:")
            for where, n, types in src["by_line"][:30]:
                kinds = ", ".join(f"{t} {k}" for t, k in list(types.items())[:3])
                print(f"  {n:8} {where}  ({kinds})")
    else:
        if len(ns.seed) > 1:
            raise UsageError("a board build takes one --seed")
        if not ns.no_dcu:
            # a DCU over the device would fail in nextpnr's placement, after hours of Yosys
            fit = fpga.fit_check(ns.config)
            print(f"dcu fpga: {fpga.fit_summary(fit)}", file=sys.stderr if fit["fits"] is False else sys.stdout)
            if fit["fits"] is False and not ns.force:
                print("dcu fpga: not building (--force builds anyway; --no-dcu builds the link and memory alone)",
                      file=sys.stderr)
                return 1
        res = fpga.build_board(ns.board, ns.config, clock_mhz=ns.clock, baud=ns.baud, seed=ns.seed[0],
                               synth_opts=ns.synth_opts, timeout=ns.timeout, with_dcu=not ns.no_dcu)
        print(fpga.summary(res))
    if ns.json:
        _write_json(ns.json, res)
        print(f"wrote {ns.json}")
    return 0 if res["rc"] == 0 else 1


def cmd_verify(ns: argparse.Namespace) -> int:
    from .verify.cli import cmd_verify as verify
    return verify(ns)


_COMMANDS = {"run": cmd_run, "info": cmd_info, "disasm": cmd_disasm, "bench": cmd_bench,
             "verilog": cmd_verilog, "fpga": cmd_fpga, "verify": cmd_verify}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dcu`` console script.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status (:data:`dcu.errors.EXIT_CODES`): 0 success, 2 usage, 3 kernel fault,
        4 unsupported, 5 timeout, 6 tool missing, 1 a build failure or internal error.
    """
    parser = build_parser()
    ns = parser.parse_args(argv)
    debug = ns.debug or os.environ.get("DCU_DEBUG", "") not in ("", "0")
    try:
        return _COMMANDS[ns.command](ns)
    except (Exception, KeyboardInterrupt) as exc:
        try:
            err = classify(exc, getattr(ns, "kernel_name", None))
            if ns.command == "run":
                _save_failed_run(ns, err, exc)
        except Exception as inner:          # reporting itself failed: still one line
            from .errors import InternalError
            err = InternalError(f"{type(exc).__name__}: {exc}; and reporting it failed: {inner!r}")
        if debug:
            raise
        print(f"dcu {ns.command}: {err.label}: {err}", file=sys.stderr)
        return err.exit_code


def _save_failed_run(ns: argparse.Namespace, err: Any, exc: BaseException) -> None:
    """Nothing lost: the buffers as the failed run left them (``--out``) and its report with
    the error (``--json``), once the output paths were checked."""
    if not getattr(ns, "json_ok", False):
        return
    if getattr(exc, "buffers", None) is not None:
        _write_buffers(ns, list(exc.buffers), failed=True)
    if ns.json:
        _write_json(ns.json, _failure_json(ns, err, exc))
        print(f"dcu run: wrote {ns.json} (the failed run's report)", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
