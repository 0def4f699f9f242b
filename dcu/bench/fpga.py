"""FPGA benchmarks: the ECP5-85F build and each block placed alone (``fpga``), logic depth per
block (``depth``), the resource budget counted in RTLIL (``fpga-budget``) and Yosys's cell
counts per block (``synth``). The FPGA tools they need are checked by ``dcu.fpga.flow``."""
from __future__ import annotations

import json
import os
import time

from hdl.config import get_config

from ..fpga import flow as fpga
from ..fpga.budget import ECP5_85F, budget
from ..fpga.depth import HARD_LEVELS

PLACE_SHARE = 0.75   # the largest share of the 85F's LUTs that `dcu bench fpga` places a block alone at
# a block that does not fit alone is placed (not routed: its routing did not converge) as a
# variant with one lane, for the placer's estimate of its control paths
ONE_LANE = {"simd": ("lanes=1", "trans_lanes=1", "coalesce_lanes=1", "request_in_rows=false")}


def fpga_build(board: str = "ulx3s", config: str = "fpga", clock_mhz: float = 50.0) -> dict:
    """The ECP5-85F build (``dcu fpga``, docs/fpga.md): resources and Fmax from nextpnr's
    report, cells from Yosys, stage times. Always the bring-up build (UART link and block-RAM
    memory); the whole DCU only with ``DCU_FPGA_FULL=1`` (hours, and it does not fit). Then
    each block of the DCU that needs at most :data:`PLACE_SHARE` of the device, placed and
    routed alone, out of context, at ``clock_mhz`` (``dcu.fpga.flow.place_block``, reusing a result
    for the same RTLIL): its own Fmax; a larger block has its Yosys counts and no Fmax, and
    one in :data:`ONE_LANE` is also placed (not routed) with one lane: the placer's estimate."""
    missing = fpga.missing_tools()
    if missing:
        raise RuntimeError(f"missing FPGA tools: {', '.join(missing)}; install them with: {fpga.INSTALL_HINT}")
    builds = [False] + ([True] if os.environ.get("DCU_FPGA_FULL") == "1" else [])
    rows = []
    for with_dcu in builds:
        rep = fpga.build_board(board, config, clock_mhz=clock_mhz, with_dcu=with_dcu)
        util = rep.get("nextpnr", {}).get("utilisation", {})
        fmax = rep.get("nextpnr", {}).get("fmax", {})
        row = {"design": "DCU + link + memory" if with_dcu else "link + memory (bring-up)", "rc": rep["rc"]}
        for cell, key in (("TRELLIS_COMB", "luts"), ("TRELLIS_FF", "ffs"), ("DP16KD", "bram"),
                          ("MULT18X18D", "dsp")):
            row[key] = util.get(cell, {}).get("used")
        row["fmax_mhz"] = min((v["mhz"] for v in fmax.values()), default=None)
        row["target_mhz"] = clock_mhz
        row.update({k: rep.get(k) for k in ("convert_s", "yosys_s", "nextpnr_s", "ecppack_s")})
        row["bitstream_bytes"] = rep.get("bitstream_bytes")
        rows.append(row)
    for top, n in fpga.dcu_blocks(get_config(config)):
        r = fpga.synth_block(top, config, quiet=True, reuse_result=True)
        e = r.get("ecp5") or {}
        # a block that fills most of the device (the LDS, 0.93 x) would take nextpnr an hour or
        # more here, if it routes at all: it keeps its Yosys counts only (the vector memory
        # unit, 0.73 x, is under the share: 24 minutes in nextpnr)
        fits = r["rc"] == 0 and e["lut_equiv"] <= PLACE_SHARE * ECP5_85F["lut"]
        row = {"design": f"block {top} ({n} in the DCU), out of context", "rc": r["rc"], "luts": e.get("lut_equiv"),
               "ffs": e.get("ff"), "bram": e.get("dp16kd"), "dsp": e.get("mult18x18d"), "fmax_mhz": None,
               "target_mhz": clock_mhz, "yosys_s": r.get("synth_s"), "rtlil_sha256": r.get("rtlil_sha256")}
        if fits:
            p = fpga.place_block(top, config, clock_mhz=clock_mhz, quiet=True, reuse_result=True)
            pnr = p.get("nextpnr") or {}
            util = pnr.get("utilisation", {})
            row.update({"rc": pnr.get("rc", p["rc"]), "luts": util.get("TRELLIS_COMB", {}).get("used"),
                        "ffs": util.get("TRELLIS_FF", {}).get("used"), "fmax_mhz": p["fmax_mhz"],
                        "nextpnr_s": pnr.get("seconds"), "critical_path": pnr.get("critical_path")})
        else:
            share = e["lut_equiv"] / ECP5_85F["lut"] if r["rc"] == 0 else None
            row["note"] = (r.get("error") if share is None else
                           f"not placed: {share:.2f} x the LUTs" + (" (does not fit alone)" if share > 1 else
                                                                     f" (above {PLACE_SHARE} x, see dcu fpga --place)"))
        rows.append(row)
        if not fits and top in ONE_LANE:
            variant = get_config(config).with_settings(ONE_LANE[top])
            p = fpga.place_block(top, variant, clock_mhz=clock_mhz, quiet=True, reuse_result=True, route=False)
            pnr, e = p.get("nextpnr") or {}, p.get("ecp5") or {}
            rows.append({"design": f"block {top}, one lane ({variant.name}), out of context, placed only",
                         "rc": pnr.get("rc", p["rc"]), "luts": e.get("lut_equiv"), "ffs": e.get("ff"),
                         "bram": e.get("dp16kd"), "dsp": e.get("mult18x18d"), "fmax_mhz": p["fmax_mhz"],
                         "target_mhz": clock_mhz, "yosys_s": p.get("synth_s"), "nextpnr_s": pnr.get("seconds"),
                         "rtlil_sha256": p.get("rtlil_sha256"),
                         "note": "not routed (router2 did not converge): fmax_mhz is the placer's estimate"})
    return {"benchmark": "fpga", "board": board, "device": "LFE5U-85F (83,640 LUT4/FF, 208 DP16KD, 156 MULT18X18D)",
            "config": config, "rows": rows,
            "dcu_built": len(builds) > 1,
            "note": "luts = TRELLIS_COMB (nextpnr) or, for a block that was not placed, LUT4 + 2 per CCU2C + 4 per "
                    "DPR16X4 (Yosys); a block 'out of context': nextpnr-ecp5 --out-of-context, no I/O buffers and "
                    "its clock on general routing, the block alone on the 85F"}


def depth(config: str = "fpga", paths: int = 3) -> dict:
    """Each block of the DCU through ``synth_ecp5`` and its deepest register-to-register paths
    in cells (``dcu fpga --block NAME --depth``, ``dcu/fpga/depth.py``), beside the Fmax and
    critical path nextpnr found for the same RTLIL placed alone (``dcu bench fpga``), where
    there is one; then the SIMD's combinational units from their inputs to their outputs:
    where in the SIMD its depth is."""
    cfg = get_config(config)
    runs = [(top, n, False) for top, n in fpga.dcu_blocks(cfg)]
    runs += [("valu_int", 0, True), ("valu_fp", 0, True), ("scalar_alu", 0, True)]
    rows = []
    for top, n, ports in runs:
        r = fpga.depth_block(top, cfg, paths=paths, ports=ports, quiet=True, reuse_result=True)
        d = r.get("depth") or {}
        unit = f"{top} (in each SIMD, inputs to outputs and its stages)"
        row = {"block": top if n else unit, "rc": r["rc"],
               "lut_equiv": (r.get("ecp5") or {}).get("lut_equiv"), "levels": d.get("levels"),
               "deepest": [f"{p['levels']}: {p['from']} -> {p['to']}" for p in d.get("paths", [])]}
        placed = fpga.PROJECT / "build/fpga/blocks" / f"{cfg.name}_{top}.place.json"
        if n and placed.exists():
            pl = json.loads(placed.read_text())
            if (pl.get("rtlil_sha256") == r.get("rtlil_sha256") and pl.get("script") == r.get("script")
                    and pl.get("routed", True)):
                cp = (pl.get("nextpnr") or {}).get("critical_path") or {}
                row.update({"fmax_mhz": pl.get("fmax_mhz"), "critical_path_cells": cp.get("cells"),
                            "critical_path": f"{cp.get('from')} -> {cp.get('to')}" if cp else None})
        rows.append(row)
    return {"benchmark": "depth", "config": config, "rows": rows,
            "note": "levels: LUT4s, carry cells entered through their logic inputs, wide multiplexers "
                    "through their selects, LUT RAM reads; an unregistered multiplier and a block RAM's read "
                    f"data count {HARD_LEVELS} (dcu/fpga/depth.py); fmax_mhz and critical_path: nextpnr's, the block "
                    "placed and routed alone at 50 MHz from the same RTLIL and synthesis (dcu bench fpga), "
                    "where it was"}


def fpga_budget(config: str = "fpga") -> dict:
    """The whole DCU's register bits, DSP blocks and memory bits counted in its RTLIL
    (``dcu/fpga/budget.py``; no FPGA tools, minutes instead of a synthesis that does not finish)
    against the ECP5-85F: the preset, the preset without its two sharing options
    (``shared_multiplier``, ``shared_mem_request``, and with it ``request_in_rows``), and other
    lane counts."""
    base = get_config(config)
    variants = {config: base,
                "without sharing": base.replace(shared_multiplier=False, shared_mem_request=False,
                                                request_in_rows=False),
                "lanes 8, trans_lanes 8": base.replace(lanes=8, trans_lanes=8),
                # LDS windows are at least 4 lanes: wider than a 2-lane request row
                "lanes 2, trans_lanes 1, coalesce_lanes 2": base.replace(lanes=2, trans_lanes=1, coalesce_lanes=2,
                                                                         request_in_rows=False)}
    rows, blocks = [], {}
    for label, cfg in variants.items():
        t0 = time.perf_counter()
        res = budget(cfg)
        rows.append({"variant": label, **res["total"], "fits": res["fits"], "seconds": round(time.perf_counter() - t0)})
        blocks[label] = {k: {"ff": b["ff"], "dsp": b["dsp"], "memory_bits": b["memory_bits"]}
                         for k, b in res["blocks"].items() if b["ff"] or b["dsp"] or b["memory_bits"]}
    return {"benchmark": "fpga-budget", "config": config, "device": res["device"], "rows": rows, "blocks": blocks,
            "note": "RTLIL counts: register bits of flip-flop cells; DSP = MULT18X18D tiles of each multiplier of "
                    "two operands of 8 bits or more (ceil(a/18) * ceil(b/18)); synthesis may trim some of both, "
                    "and adds memories it maps to flip-flops or LUTs"}


def synth(config: str | None = None, timeout: float = 4 * 3600) -> dict:
    """The DCU through Yosys (natively, ``dcu-yosys``: the WebAssembly Yosys stops at 4 GiB),
    block by block, and the blocks summed over the DCU's instances: the ``fpga`` preset's with
    ``synth_ecp5`` to the ECP5's cells, against the 85F; the ``default`` preset's with the
    generic ``synth`` (memories kept as memories). With ``DCU_SYNTH_WHOLE=1`` also each whole
    DCU in one run (the ``fpga`` one's ABC9 did not finish in two hours; the ``default`` one's
    ``techmap`` ran out of 24 GB). ``config`` runs one preset's rows. An earlier result is
    reused when the block's RTLIL is unchanged (``dcu.fpga.flow.synth_block``)."""
    whole = os.environ.get("DCU_SYNTH_WHOLE") == "1"
    blocks = {c: fpga.dcu_blocks(get_config(c)) for c in ("fpga", "default")}
    runs = [("fpga", top, False) for top, _ in blocks["fpga"]] + ([("fpga", "dcu", False)] if whole else [])
    runs += [("default", top, True) for top, _ in blocks["default"]] + ([("default", "dcu", True)] if whole else [])

    def share(e):
        return {"lut": round(e["lut_equiv"] / ECP5_85F["lut"], 2), "ff": round(e["ff"] / ECP5_85F["ff"], 2),
                "dp16kd": round(e["dp16kd"] / ECP5_85F["bram"], 2),
                "mult18x18d": round(e["mult18x18d"] / ECP5_85F["dsp"], 2)}
    keys = ("lut_equiv", "lut4", "ccu2c", "dpr16x4", "ff", "dp16kd", "mult18x18d")
    rows = []
    for cfg, top, generic in runs:
        if config and cfg != config:
            continue
        r = fpga.synth_block(top, cfg, generic=generic, timeout=timeout, quiet=True, reuse_result=True)
        row = {"config": cfg, "top": top, "flow": r["flow"], "rc": r["rc"], "yosys_s": r["synth_s"],
               "reused": r.get("reused", False), "cells": r["cells"]}
        if r["rc"] != 0:
            row["error"] = r.get("error")
        elif generic:
            t = r["by_type"]
            row.update({"flip_flops": sum(n for k, n in t.items() if "DFF" in k.upper()),
                        "memories": t.get("$mem_v2", 0),
                        "gates": sum(n for k, n in t.items() if k.startswith("$_") and "DFF" not in k.upper())})
        else:
            row.update({k: r["ecp5"][k] for k in keys})
            row["of_85f"] = share(r["ecp5"])
        row["rtlil_sha256"] = r.get("rtlil_sha256")     # what dcu.fpga.flow.fit_check matches a block by
        rows.append(row)
    for c, generic in (("fpga", False), ("default", True)):
        done = {r["top"]: r for r in rows if r["config"] == c and r["rc"] == 0}
        if not all(top in done for top, _ in blocks[c]):
            continue
        sums = ("cells", "flip_flops", "memories", "gates") if generic else keys
        total = {k: sum(n * done[top][k] for top, n in blocks[c]) for k in sums}
        at = max(i for i, r in enumerate(rows) if r["config"] == c) + 1      # after the preset's rows
        rows.insert(at, {"config": c, "top": "dcu: its blocks summed",
                         "flow": " + ".join(f"{n} x {top}" for top, n in blocks[c]), **total,
                         **({} if generic else {"of_85f": share(total)})})
    return {"benchmark": "synth", "device": "LFE5U-85F (83,640 LUT4/FF, 208 DP16KD, 156 MULT18X18D)", "rows": rows,
            "note": "lut_equiv = LUT4 + 2 per CCU2C + 4 per TRELLIS_DPR16X4 (before packing: nextpnr may merge a "
                    "few); of_85f: the share of the device; 'its blocks summed': each block's row times its "
                    "instances in the DCU (without the DCU's memory arbiter and counter select); default: Yosys's "
                    "generic cells, flip-flops as bits ($_DFF_* cells), memories as $mem_v2 cells"}


#: The SIMD's units (docs/simd.md, "Budget") with their ``fpga`` budgets in LUT4 equivalents:
#: (block, settings, budget). The lanes are measured one lane wide.
SIMD_UNITS = (
    ("decode", {}, 450),
    ("frontend", {}, 1_350),                  # Fetch 750, WaveSelect 150, DecodeStage 450
    ("vgpr", {"lanes": 1}, 150),
    ("scalar_alu", {}, 1_300),
    ("valu_fp", {"lanes": 1}, 2_600),
    ("valu_int", {"lanes": 1}, 500),
    # the whole SIMD's goal, at the preset's 4 lanes (one lane needs request rows narrower
    # than the LDS's 4-bank window)
    ("simd", {}, 10_000),
)
_ONE_LANE = {"coalesce_lanes": 1, "request_in_rows": False}


def simd_units(timeout: float = 3600) -> dict:
    """Each unit of the SIMD and the whole SIMD through ``synth_ecp5`` on the ``fpga`` preset
    (the lanes one lane wide), against its budget."""
    rows = []
    for top, settings, limit in SIMD_UNITS:
        cfg = get_config("fpga").replace(**{**(_ONE_LANE if settings.get("lanes") == 1 else {}), **settings})
        r = fpga.synth_block(top, cfg, timeout=timeout, quiet=True, reuse_result=True)
        row = {"top": top, "settings": ", ".join(f"{k}={v}" for k, v in settings.items()), "rc": r["rc"],
               "budget": limit}
        if r["rc"] == 0:
            e = r["ecp5"]
            row.update({k: e[k] for k in ("lut_equiv", "ff", "dp16kd", "mult18x18d")})
            row["of_budget"] = round(e["lut_equiv"] / limit, 2)
        rows.append(row)
    return {"benchmark": "simd-units", "rows": rows,
            "note": "lut_equiv = LUT4 + 2 per CCU2C + 4 per TRELLIS_DPR16X4; budget: docs/simd.md's, in LUT4 "
                    "equivalents; simd is the whole SIMD (front end, scalar and vector pipes, memory requests) at "
                    "the preset's 4 lanes"}
