"""The ``dcu`` command line: run, inspect and disassemble gfx1200 kernels.

::

    dcu run FILE [--kernel NAME] --grid X[,Y[,Z]] --block X[,Y[,Z]] [--arg SPEC]...
            [--backend model|rtl|verilator] [--config PRESET] [--out DIR]
            [--json FILE] [--vcd FILE] [--timeline FILE.png] [--wgp] [--no-vopd]
    dcu info FILE [--config PRESET] [--block X[,Y[,Z]]] [--wgp]
    dcu disasm FILE [--kernel NAME]
    dcu bench NAME [--json FILE] [--config PRESET] [--backend rtl|verilator]
    dcu verilog [--config PRESET] [--top NAME] -o FILE.v [--lint]
    dcu fpga [--board ulx3s] [--config PRESET] [--clock MHZ] [--baud N] [--block NAME [--generic] [--attribute] [--place] [--depth [N]]] [--budget]

Exit status: 0 on success, 2 for a usage error (bad option, argument spec,
missing file, unknown kernel), 1 when building or running fails.
Heavy modules (numpy, the launcher, the ISA decoder) are imported inside the
commands, so ``dcu --help`` and usage errors stay fast and independent of them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

__all__ = ["main", "build_parser", "parse_dims", "parse_arg_spec", "ArgSpec", "UsageError",
           "BACKENDS", "SCALAR_TYPES", "BUFFER_DTYPES"]

BACKENDS = ("model", "rtl", "verilator")

# Scalar argument kinds: (numpy type name, kind, bits).
SCALAR_TYPES = {
    "u32": ("uint32", "uint", 32),
    "i32": ("int32", "int", 32),
    "f32": ("float32", "float", 32),
    "u64": ("uint64", "uint", 64),
    "i64": ("int64", "int", 64),
}
BUFFER_DTYPES = {
    "u8": "uint8", "i8": "int8", "u16": "uint16", "i16": "int16",
    "u32": "uint32", "i32": "int32", "f32": "float32",
    "u64": "uint64", "i64": "int64", "f64": "float64",
}
_SPEC_HELP = """\
argument SPEC (repeat --arg in argument order; I is the 0-based position):
  buf:PATH.npy      a buffer holding that array; written back as DIR/argI.npy
  zeros:N:DTYPE     N zero elements of u8/i8/u16/i16/u32/i32/f32/u64/i64/f64,
                    written back the same way
  u32:V | i32:V | f32:V | u64:V | i64:V   a scalar argument
--grid counts workgroups; buffers are passed as global addresses.
--json writes {"kernel", "backend", "config", "instructions", "cycles" (null on
the model), "counters": {...}}."""


class UsageError(Exception):
    """A bad command line detected after argparse (exit status 2)."""


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
            if math.isfinite(value) and abs(value) > 3.4028234663852886e38:
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

    presets = _preset_names()
    r = sub.add_parser("run", help="build (if needed) and run a kernel",
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
    r.add_argument("--no-vopd", action="store_true",
                   help="compile OpenCL C without VOPD dual issue (the RTL backends refuse VOPD words)")
    r.add_argument("--seed", type=int, default=0,
                   help="RTL backends: seed of the memory model's latencies and reordering (default 0)")
    r.add_argument("--rtl-memory", choices=("py", "rtl"), default=None,
                   help="backend rtl: the Python memory model (py, default) or the RTL one the "
                        "verilator backend compiles (rtl: same cycles as verilator for a seed)")

    i = sub.add_parser("info", help="kernels, descriptors, resource use and occupancy")
    i.add_argument("file", metavar="FILE")
    i.add_argument("--config", choices=presets, default="default", metavar="PRESET",
                   help=f"DCU preset: {', '.join(presets)} (default: default)")
    i.add_argument("--block", metavar="X[,Y[,Z]]", type=lambda s: parse_dims(s, "--block"),
                   help="workgroup size for occupancy (default: reqd_work_group_size or 32)")
    i.add_argument("--wgp", action="store_true", help="compile OpenCL C in WGP mode")

    d = sub.add_parser("disasm", help="disassemble with the project's decoder")
    d.add_argument("file", metavar="FILE")
    d.add_argument("--kernel", metavar="NAME", help="only this kernel (default: all)")
    d.add_argument("--wgp", action="store_true", help="compile OpenCL C in WGP mode")

    v = sub.add_parser("verilog", help="write the Verilog of the DCU or one of its blocks")
    v.add_argument("--config", choices=presets, default="default", metavar="PRESET",
                   help=f"DCU preset: {', '.join(presets)} (default: default)")
    v.add_argument("--top", default="dcu", metavar="NAME",
                   help="block: dcu, hosttop, simd, lds, l0, icache, scache, dispatcher, barrier, "
                        "valu_fp, valu_int, trans, trans_shared (default: dcu)")
    v.add_argument("-o", "--output", required=True, metavar="FILE.v")
    v.add_argument("--lint", action="store_true", help="then run verilator --lint-only on it")

    f = sub.add_parser("fpga", help="build the ECP5 bitstream (DCU + block-RAM memory + UART host "
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
                        "the synthesized netlist, without placing it (dcu/depth.py)")
    f.add_argument("--ports", action="store_true",
                   help="with --depth: also the paths from the block's inputs and to its outputs (the "
                        "depth of a combinational unit such as valu_int)")
    f.add_argument("--attribute", action="store_true",
                   help="with --block: also count the cells by the source line that made them")
    f.add_argument("--reuse-rtlil", action="store_true",
                   help="with --block: reuse the block's RTLIL from an earlier run (saves the conversion)")
    f.add_argument("--budget", action="store_true",
                   help="no synthesis: count register bits, DSP blocks and memories in the RTLIL of the "
                        "DCU (or --block) against the ECP5-85F (dcu/budget.py; no FPGA tools needed)")
    f.add_argument("--no-dcu", action="store_true",
                   help="bring-up build: the UART link and the block-RAM memory without the DCU")
    f.add_argument("--force", action="store_true",
                   help="build the board even when bench/results/synth-PRESET.json shows that the DCU "
                        "does not fit the device")
    f.add_argument("--timeout", type=float, default=4 * 3600, metavar="S", help="tool time limit")
    f.add_argument("--json", metavar="FILE", help="also write the report there")

    b = sub.add_parser("bench", help="run a benchmark")
    b.add_argument("name", metavar="NAME")
    b.add_argument("--json", metavar="FILE", help="write results as JSON")
    b.add_argument("--config", metavar="PRESET", help="the preset, for benchmarks that take one (kernels)")
    b.add_argument("--backend", choices=("rtl", "verilator"), help="the RTL backend, for benchmarks that take one (kernels)")
    return p


# ---- helpers shared by the commands ---------------------------------------------
def _check_file(path: str) -> None:
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")


def _choose_kernel(names: Sequence[str], wanted: str | None, path: str) -> str:
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


def _program_kernel_names(prog: Any) -> list[str]:
    kernels = getattr(prog, "kernels", None)
    if isinstance(kernels, dict):
        return list(kernels)
    if kernels is not None:
        return [getattr(k, "name", k) for k in kernels]
    return []


def _load_code_object(path: str, wgp: bool, vopd: bool = True):
    from .codeobj import CodeObject
    from .toolchain import build

    return CodeObject(build(path, wgp=wgp, vopd=vopd))


def _report_dict(report: Any, kernel: str, backend: str, config: str) -> dict:
    d = dict(report.to_dict()) if hasattr(report, "to_dict") else {}
    # The contract's keys are always present, whatever else the report adds.
    d.setdefault("kernel", getattr(report, "kernel", kernel))
    d.setdefault("backend", getattr(report, "backend", backend))
    d.setdefault("config", getattr(report, "config", config))
    d.setdefault("instructions", getattr(report, "instructions", None))
    d.setdefault("cycles", getattr(report, "cycles", None))
    d.setdefault("counters", getattr(report, "counters", {}) or {})
    return d


def _json_default(o: Any):
    # numpy scalars and arrays in counters
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


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
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=_json_default)
        f.write("\n")


# ---- commands -------------------------------------------------------------------
def cmd_run(ns: argparse.Namespace) -> int:
    """``dcu run``: build, launch, write back buffers and the report."""
    _check_file(ns.file)
    if ns.vcd and ns.backend == "model":
        raise UsageError("--vcd needs an RTL backend (--backend rtl or verilator)")
    values = [spec.materialize() for spec in ns.args]

    import importlib

    # import_module, not "from . import launch": dcu/__init__ binds the name
    # dcu.launch to the launch() function, shadowing the submodule.
    launch_mod = importlib.import_module("dcu.launch")

    known = getattr(launch_mod, "BACKENDS", None)
    if known is not None and ns.backend not in known:
        print(f"dcu: backend {ns.backend!r} is not available yet (available: "
              f"{', '.join(known)})", file=sys.stderr)
        return 1
    prog = launch_mod.load_program(ns.file, wgp=ns.wgp, vopd=not ns.no_vopd)
    names = _program_kernel_names(prog) or list(_load_code_object(ns.file, ns.wgp, not ns.no_vopd).kernels)
    name = _choose_kernel(names, ns.kernel, ns.file)
    kern = prog.kernel(name)
    _check_args_against_metadata(kern, ns.args)
    kwargs = {}
    if ns.backend != "model":
        kwargs["seed"] = ns.seed
    if ns.rtl_memory:
        if ns.backend != "rtl":
            raise UsageError("--rtl-memory needs --backend rtl")
        kwargs["memory"] = ns.rtl_memory
    if ns.timeline:
        if ns.backend != "rtl":
            raise UsageError("--timeline needs --backend rtl")
        kwargs["timeline"] = ns.timeline
    if ns.vcd:
        import inspect

        if "vcd" not in inspect.signature(launch_mod.launch).parameters:
            print(f"dcu: --vcd is not supported by the {ns.backend} backend yet", file=sys.stderr)
            return 1
        kwargs["vcd"] = ns.vcd
    try:
        run = launch_mod.launch(kern, ns.grid, ns.block, values, ns.backend, ns.config, **kwargs)
    except (ImportError, NotImplementedError) as e:
        print(f"dcu: backend {ns.backend!r} is not available: {e}", file=sys.stderr)
        return 1

    report = run.report
    summary = report.summary() if hasattr(report, "summary") else str(report)
    print(summary)
    buffers = list(getattr(run, "buffers", []) or [])
    if ns.out:
        import numpy as np

        out = Path(ns.out)
        out.mkdir(parents=True, exist_ok=True)
        for idx, spec in enumerate(ns.args):
            if spec.is_buffer and idx < len(buffers) and buffers[idx] is not None:
                np.save(out / f"arg{idx}.npy", buffers[idx])
                print(f"wrote {out / f'arg{idx}.npy'}")
    else:
        for idx, spec in enumerate(ns.args):
            if spec.is_buffer and idx < len(buffers) and buffers[idx] is not None:
                b = buffers[idx]
                print(f"arg{idx} ({b.dtype}[{b.size}]): {_preview(b)}")
    if ns.json:
        _write_json(ns.json, _report_dict(report, name, ns.backend, ns.config))
        print(f"wrote {ns.json}")
    return 0


def _check_args_against_metadata(kern: Any, specs: Sequence[ArgSpec]) -> None:
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
    from hdl.config import ResourceError, get_config

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
              f"{cfg.vgpr_alloc(k.vgpr_count)})  SGPRs "
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
        limits = cfg.occupancy_limits(k.vgpr_count, k.group_segment_size, waves, k.wgp_mode)
        lim = ", ".join(f"{key} {v}" for key, v in limits.items())
        try:
            occ = cfg.check_kernel(k, dims)
            print(f"  occupancy on {cfg.name}: {occ} wave(s)/SIMD with block {dims} "
                  f"({waves} wave(s)/workgroup; limits: {lim})")
        except ResourceError as e:
            print(f"  does not fit {cfg.name}: {e}")
    return 0


def cmd_disasm(ns: argparse.Namespace) -> int:
    """``dcu disasm``: ``address: dwords  text`` per instruction, per kernel."""
    _check_file(ns.file)
    co = _load_code_object(ns.file, ns.wgp)
    try:
        import isa
    except ImportError as e:
        print(f"dcu: the ISA package is not available: {e}", file=sys.stderr)
        return 1
    for attr in ("decode", "disassemble", "DecodeError"):
        if not hasattr(isa, attr):
            print(f"dcu: isa.{attr} is not available yet", file=sys.stderr)
            return 1
    names = [_choose_kernel(list(co.kernels), ns.kernel, ns.file)] if ns.kernel else sorted(
        co.kernels, key=lambda n: co.kernels[n].entry)
    code, base = co.code, co.code_base
    nwords = len(code) // 4
    words = struct.unpack(f"<{nwords}I", code[:4 * nwords])
    for n, name in enumerate(names):
        k = co.kernels[name]
        start = k.entry
        end = start + k.code_size if k.code_size else base + 4 * nwords
        print(("\n" if n else "") + f"{name}:  (entry 0x{start:x})")
        pc = start
        while pc < end:
            i = (pc - base) // 4
            window = words[i:i + 4]
            try:
                inst = isa.decode(window, pc)
            except isa.DecodeError as e:  # show it and resynchronise on the next dword
                size, ws, text = 4, window[:1], f"<undecodable: {e}>"
            else:
                size, ws, text = inst.size, inst.words, isa.disassemble(inst)
            hexs = " ".join(f"{w:08x}" for w in ws)
            print(f"  {pc:08x}: {hexs:<26} {text}")
            pc += max(4, size)
    return 0


def cmd_bench(ns: argparse.Namespace) -> int:
    """``dcu bench``: dispatch to :func:`dcu.bench.run`."""
    from . import bench  # lazy

    result = bench.run(ns.name, ns.json, config=ns.config, backend=ns.backend)
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

        from .verilator import VerilatorError, toolchain, verilator_version
        try:
            name, env = toolchain()     # the one the verilator backend builds with
        except VerilatorError as e:
            print(f"dcu: {e}", file=sys.stderr)
            return 1
        r = subprocess.run(["verilator", "--lint-only", "-Wno-CASEINCOMPLETE", "-Wno-WIDTH", ns.output],
                           env={**os.environ, **env})
        if r.returncode:
            return 1
        print(f"verilator --lint-only: clean ({verilator_version(env)})")
    return 0


def cmd_fpga(ns: argparse.Namespace) -> int:
    """``dcu fpga``: the ECP5 build (``dcu/fpga.py``); exit 1 with the install command when a
    YoWASP tool is missing."""
    from hdl.config import ConfigError, get_config
    from . import fpga

    config = ns.config
    if ns.set:
        if not (ns.block or ns.budget):
            print("dcu fpga: --set applies to --block and --budget (the board builds a preset)", file=sys.stderr)
            return 2
        try:
            config = get_config(ns.config).with_settings(ns.set)
        except ConfigError as e:
            print(f"dcu fpga: {e}", file=sys.stderr)
            return 2
    if ns.budget:
        from . import budget
        res = budget.budget(config, ns.block or "dcu")
        print(budget.summary(res))
        if ns.json:
            _write_json(ns.json, res)
            print(f"wrote {ns.json}")
        return 0
    needed = (("YOSYS", "NEXTPNR_ECP5") if ns.place else ("YOSYS",)) if ns.block else ("YOSYS", "NEXTPNR_ECP5", "ECPPACK")
    missing = fpga.missing_tools(needed)
    if missing:
        print(f"dcu fpga: missing FPGA tools: {', '.join(missing)}\n  install them with: "
              f"{fpga.INSTALL_HINT}", file=sys.stderr)
        return 1
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
                print(f"  Fmax {f['mhz']:.2f} MHz for {clock} ({'PASS' if f['pass'] else 'FAIL'} at {f['target_mhz']:g} MHz)"
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
              f"(levels: LUTs and routed cell inputs, dcu/depth.py):")
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
            print("dcu fpga: a board build takes one --seed", file=sys.stderr)
            return 2
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


_COMMANDS = {"run": cmd_run, "info": cmd_info, "disasm": cmd_disasm, "bench": cmd_bench,
             "verilog": cmd_verilog, "fpga": cmd_fpga}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dcu`` console script.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 success, 1 failure, 2 usage error.
    """
    parser = build_parser()
    ns = parser.parse_args(argv)
    from .toolchain import ToolchainError

    try:
        return _COMMANDS[ns.command](ns)
    except UsageError as e:
        print(f"dcu {ns.command}: error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"dcu {ns.command}: error: {e}", file=sys.stderr)
        return 2
    except ToolchainError as e:
        print(f"dcu {ns.command}: build failed: {e}", file=sys.stderr)
        return 1
    except KeyError as e:  # e.g. an unknown kernel or benchmark name
        msg = e.args[0] if e.args else e
        print(f"dcu {ns.command}: error: {msg}", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError) as e:
        if os.environ.get("DCU_DEBUG"):
            raise
        print(f"dcu {ns.command}: error: {e}  (DCU_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
