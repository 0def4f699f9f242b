"""Logic depth of a block mapped to ECP5 cells: its longest register-to-register paths,
counted in cells from the netlist Yosys wrote, with no placement (docs/fpga.md, "The
flow").

nextpnr names a block's critical path only once it has routed it, and a block that does not
route (the SIMD: router2 did not converge) has none. Routing is three quarters of every path
measured on this device, and it grows with the cells a path goes through, so the deepest
paths in cells are where to look (their order is not the routed one: placement and fan-out
decide the rest). What counts as a level:

- a LUT4, a LUT RAM read (``TRELLIS_DPR16X4``, read address to data), a carry cell entered
  through its logic inputs (``CCU2C``), a wide multiplexer entered through its select
  (``PFUMX``, ``L6MUX21``): one level each, since each is entered through general routing;
- a wide multiplexer entered from its slice's LUTs, and a carry cell from the one before it:
  no level (slice-internal and carry-chain wires);
- an unregistered multiplier (``MULT18X18D``) and a block RAM's read data (``DP16KD``, which
  starts a path): :data:`HARD_LEVELS` each, their delay being several LUTs' and a route.

Paths start at flip-flop and block RAM outputs and end at flip-flop and RAM inputs; as in
nextpnr's out-of-context timing, the block's ports start and end none (unless asked: a
combinational unit's depth from its inputs to its outputs).
"""
from __future__ import annotations

import re

__all__ = ["HARD_LEVELS", "logic_depth", "signal_of"]

#: Levels for an unregistered multiplier, and at a block RAM's read data.
HARD_LEVELS = 3

# (cell type) -> {output port: [(input port, levels)]}; ports not listed are path ends
_ARCS = {
    "LUT4": {"Z": [("A", 1), ("B", 1), ("C", 1), ("D", 1)]},
    "PFUMX": {"Z": [("ALUT", 0), ("BLUT", 0), ("C0", 1)]},
    "L6MUX21": {"Z": [("D0", 0), ("D1", 0), ("SD", 1)]},
    "CCU2C": {"S0": [("A0", 1), ("B0", 1), ("C0", 1), ("D0", 1), ("CIN", 0)],
              "S1": [("A1", 1), ("B1", 1), ("C1", 1), ("D1", 1), ("CIN", 0)],
              "COUT": [("A0", 1), ("B0", 1), ("C0", 1), ("D0", 1),
                       ("A1", 1), ("B1", 1), ("C1", 1), ("D1", 1), ("CIN", 0)]},
    "TRELLIS_DPR16X4": {"DO": [("RAD", 1)]},
}
_STARTS = {"TRELLIS_FF": {"Q": 0}, "DP16KD": {f"DO{i}": HARD_LEVELS for i in range(36)}}
_IGNORED = {"$scopeinfo", "VHI", "VLO"}
_UNTIMED = -1_000_000.0
_TYPE_IN_NAME = re.compile(r"_(TRELLIS_FF|TRELLIS_DPR16X4|LUT4|CCU2C|PFUMX|L6MUX21|MULT18X18D|DP16KD)_")


def signal_of(cell_name: str) -> str:
    """The source signal a Yosys-named cell was made for: its name up to the first cell type
    (``idgen.tid_x0[7]_TRELLIS_FF_Q_DI_LUT4_Z`` is made for ``idgen.tid_x0[7]``)."""
    name = cell_name.lstrip("\\")
    m = _TYPE_IN_NAME.search(name)
    return name[:m.start()] if m else name


def _arcs(cell: dict) -> dict:
    t = cell["type"]
    if t == "MULT18X18D":
        regs = [v for k, v in cell.get("parameters", {}).items() if k.startswith("REG_")]
        if all(v == "NONE" for v in regs):
            outs = [p for p in cell["connections"] if p.startswith("P")]
            ins = [p for p, d in cell["port_directions"].items() if d == "input" and p[0] in "AB"]
            return {o: [(i, HARD_LEVELS) for i in ins] for o in outs}
        return {}   # registered: an unknown cell, its outputs start paths
    return _ARCS.get(t, {})


def logic_depth(netlist: dict, top: str, paths: int = 10, ports: bool = False) -> dict:
    """The deepest paths of module ``top`` of a Yosys JSON netlist of ECP5 cells.

    With ``ports``, the block's inputs start paths and its outputs end them too: the depth of
    a combinational unit (an ALU) that another block registers around.

    Returns
    -------
    dict
        ``levels`` (the deepest path's), ``cells`` (the netlist's),
        ``unknown`` (cell types treated as path ends, with counts) and ``paths``: the
        ``paths`` deepest, at most one per end signal (a bus's bits, and the copies of a
        replicated unit -- names that differ in their numbers only -- are one path), each with
        ``levels``, ``from`` and ``to`` (the source signals of its first and last cells) and
        ``through`` (each cell on it: ``[its output's net name, type, levels so far]``).
    """
    mod = netlist["modules"][top]
    cells = mod["cells"]
    driver = {}      # bit -> (cell, output port)
    start = {}       # bit -> levels at a path's start
    unknown = {}
    # the block's ports are timed by nothing (nextpnr out of context does not time them either):
    # a path from an input does not count, and outputs end none -- unless ``ports``
    for pname, port in mod.get("ports", {}).items():
        if port["direction"] in ("input", "inout"):
            for b in port["bits"]:
                start[b] = 0 if ports else _UNTIMED
    for cname, c in cells.items():
        t = c["type"]
        if t in _IGNORED:
            continue
        if t in _STARTS:
            for p, lv in _STARTS[t].items():
                for b in c["connections"].get(p, []):
                    start[b] = lv
            continue
        arcs = _arcs(c)
        if not arcs:
            unknown[t] = unknown.get(t, 0) + 1
            for p, d in c["port_directions"].items():   # an unknown cell: its outputs start paths
                if d == "output":
                    for b in c["connections"][p]:
                        start[b] = 0
            continue
        for p in arcs:
            for b in c["connections"].get(p, []):
                driver[b] = (cname, p)

    level, pred = {}, {}
    expanding = set()   # bits whose inputs are being evaluated: one met again is a loop

    def arrival(bit):
        if isinstance(bit, str):          # a constant
            return 0
        if bit in level:
            return level[bit]
        stack = [bit]
        while stack:
            b = stack[-1]
            if b in level:
                stack.pop()
                continue
            if b not in driver:
                level[b] = start.get(b, 0)
                stack.pop()
                continue
            cname, p = driver[b]
            c = cells[cname]
            ins = []
            for ip, w in _arcs(c)[p]:
                conn = c["connections"].get(ip, [])
                # a LUT RAM's data bits depend on its whole read address, a multiplier's on both operands
                ins += [(ib, w) for ib in conn if not isinstance(ib, str)]
            todo = [ib for ib, _ in ins if ib not in level]
            if todo:
                if any(ib in expanding for ib in todo):
                    raise ValueError(f"combinational loop through {cname}")
                expanding.add(b)
                stack += todo
                continue
            expanding.discard(b)
            best, via = 0, None
            for ib, w in ins:
                if level[ib] + w > best or via is None:
                    best, via = level[ib] + w, ib
            level[b] = best
            pred[b] = via
            stack.pop()
        return level[bit]

    ends = []   # (levels, bit, cell, port)
    for cname, c in cells.items():
        t = c["type"]
        if t in _IGNORED:
            continue
        arcs = _arcs(c)
        comb_in = {ip for lst in arcs.values() for ip, _ in lst}
        for p, d in c["port_directions"].items():
            if d != "input" or p in comb_in or p in ("CLK", "WCK", "CLKA", "CLKB"):
                continue
            for b in c["connections"].get(p, []):
                if not isinstance(b, str):
                    ends.append((arrival(b), b, cname, p))
    if ports:
        for pname, port in mod.get("ports", {}).items():
            if port["direction"] == "output":
                ends += [(arrival(b), b, None, pname) for b in port["bits"] if not isinstance(b, str)]
    ends = [e for e in ends if e[0] >= 0]
    ends.sort(key=lambda e: -e[0])

    net_name = {}   # a bit's most readable name: a source signal's (no "$") if it has one, the shortest
    for n, v in mod.get("netnames", {}).items():
        if v.get("hide_name"):
            continue
        for k, b in enumerate(v["bits"]):
            if isinstance(b, int):
                name = f"{n}[{k}]" if len(v["bits"]) > 1 else n
                old = net_name.get(b)
                if old is None or ("$" in old, len(old)) > ("$" in name, len(name)):
                    net_name[b] = name

    def trace(bit):
        steps = []
        while bit in driver:
            cname, _ = driver[bit]
            steps.append([net_name.get(bit, signal_of(cname)), cells[cname]["type"], level[bit]])
            bit = pred[bit]
        return steps[::-1], bit

    sources = {}
    for cname, c in cells.items():
        if c["type"] in _STARTS:
            for p in _STARTS[c["type"]]:
                for b in c["connections"].get(p, []):
                    sources[b] = f"{signal_of(cname)} ({c['type']})"
    for pname, port in mod.get("ports", {}).items():
        for b in port["bits"]:
            sources.setdefault(b, f"<input {pname}>")

    out, seen = [], set()
    for lv, b, cname, p in ends:
        end = f"<output {p}>" if cname is None else signal_of(cname)
        end_sig = re.sub(r"\d+", "#", end)   # a bus's bits, a replicated unit's copies
        if end_sig in seen:
            continue
        seen.add(end_sig)
        steps, first = trace(b)
        out.append({"levels": lv, "from": sources.get(first, "(undriven)"),
                    "to": end if cname is None else f"{end} ({cells[cname]['type']} {p})",
                    "through": steps})
        if len(out) == paths:
            break
    counted = sum(1 for c in cells.values() if c["type"] not in _IGNORED)
    return {"levels": out[0]["levels"] if out else 0, "cells": counted, "unknown": unknown, "paths": out}
