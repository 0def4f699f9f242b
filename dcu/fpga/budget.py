"""The DCU's hardware budget, counted in its RTLIL: register bits, DSP blocks, memories.

Synthesising the whole DCU for the ECP5 has not been possible here (the WebAssembly Yosys
stops at 4 GiB; one ``fpga`` SIMD takes ten minutes to ``map_luts``: docs/fpga.md), so
:func:`budget` reads what synthesis starts from, Amaranth's RTLIL, in about a minute:

* **register bits**: the widths of the flip-flop cells (``$dff``, ``$adff``, ...), which
  synthesis keeps (memories it maps to flip-flops come on top: ``memories`` lists them);
* **DSP blocks**: every ``$mul`` of two operands at least 8 bits wide (narrower ones scale
  bit indices and become shifts or logic) as ``ceil(a / 18) * ceil(b / 18)`` MULT18X18D
  tiles, how Yosys's ``mul2dsp`` splits a product for the ECP5 (tests/test_budget.py holds
  it to the counts ``synth_ecp5`` gave, docs/fpga.md). Amaranth writes an expression
  used in several places once per use; multipliers with the same operands count once, as
  Yosys's ``opt_merge`` keeps one;
* **memories**: bits, read and write ports.

Counts are per DCU block (``simd0`` .. ``simd3``, ``vmem0``, ``lds``, ...), each the sum over
the block's modules. LUTs are not estimated: only a full synthesis gives them.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict

__all__ = ["rtlil_budget", "budget", "summary", "ECP5_85F"]

#: LFE5U-85F resources (the ULX3S's device).
ECP5_85F = {"lut": 83_640, "ff": 83_640, "dsp": 156, "bram": 208}

_MODULE = re.compile(r"^module \\(\S+)$(.*?)^end$", re.M | re.S)
_CELL = re.compile(r"^\s*cell (\S+) (\S+)\n(.*?)^\s*end$", re.M | re.S)
_MEMORY = re.compile(r"^\s*memory width (\d+) size (\d+) (\S+)$", re.M)
_PARAM = re.compile(r"parameter \\(\w+) (\S+)")
_FF = re.compile(r"\$(?:a|s|al|ald)?dffe?$")


def _mul_tiles(a: int, b: int) -> int:
    return math.ceil(a / 18) * math.ceil(b / 18)


def _constant(body: str, port: str) -> bool:
    m = re.search(rf"connect \\{port} (\S+)", body)
    return bool(m and re.fullmatch(r"\d+'[01x]+", m.group(1)))


def rtlil_budget(text: str, top: str) -> dict:
    """Per top-level block of the RTLIL ``text`` (modules named ``top.<block>...``; the top
    module's own cells count as ``(top)``): ``ff`` bits, ``dsp`` tiles, ``multipliers``
    (``"AxB"`` -> count), ``memories`` (name -> ``{bits, width, depth, read_ports,
    write_ports}``)."""
    blocks = defaultdict(lambda: {"ff": 0, "dsp": 0, "multipliers": defaultdict(int), "memories": {}})
    for mod in _MODULE.finditer(text):
        name, body = mod.group(1), mod.group(2)
        parts = name.split(".")
        if parts[0] != top:
            continue
        b = blocks[parts[1] if len(parts) > 1 else "(top)"]
        ports = defaultdict(lambda: [0, 0])
        products = set()
        for cell in _CELL.finditer(body):
            kind, cbody = cell.group(1), cell.group(3)
            params = dict(_PARAM.findall(cbody))
            if _FF.match(kind):
                b["ff"] += int(params["WIDTH"])
            elif kind == "$mul":
                wa, wb = int(params["A_WIDTH"]), int(params["B_WIDTH"])
                operands = tuple(re.findall(r"connect \\[AB] (.*)", cbody)) + (params["A_SIGNED"], params["B_SIGNED"])
                constant = _constant(cbody, "A") or _constant(cbody, "B")
                if min(wa, wb) >= 8 and not constant and operands not in products:
                    products.add(operands)
                    b["dsp"] += _mul_tiles(wa, wb)
                    b["multipliers"][f"{wa}x{wb}"] += 1
            elif kind in ("$memrd_v2", "$memwr_v2"):
                ports[params["MEMID"].strip('"').lstrip("\\")][kind == "$memwr_v2"] += 1
        for width, size, mem in _MEMORY.findall(body):
            mem = mem.lstrip("\\")
            rd, wr = ports[mem]
            b["memories"][f"{name}.{mem}"] = {"bits": int(width) * int(size), "width": int(width),
                                              "depth": int(size), "read_ports": rd, "write_ports": wr}
    out = {}
    for k, b in sorted(blocks.items()):
        b["multipliers"] = dict(b["multipliers"])
        b["memory_bits"] = sum(m["bits"] for m in b["memories"].values())
        out[k] = b
    return out


def budget(config, top: str = "dcu") -> dict:
    """The budget of ``hdl/tops.py`` block ``top`` (default the whole DCU) for ``config``:
    ``blocks`` (see :func:`rtlil_budget`) and ``total`` (``ff``, ``dsp``, ``memory_bits``)."""
    from amaranth.back import rtlil
    from hdl.config import get_config
    from hdl.tops import make_top
    cfg = get_config(config)
    blocks = rtlil_budget(rtlil.convert(make_top(top, cfg), name=top, emit_src=False), top)
    total = {k: sum(b[k] for b in blocks.values()) for k in ("ff", "dsp", "memory_bits")}
    return {"config": cfg.name, "top": top, "blocks": blocks, "total": total,
            "device": {"name": "LFE5U-85F", **ECP5_85F},
            "fits": {k: total[k] <= ECP5_85F[k] for k in ("ff", "dsp")}}


def summary(res: dict) -> str:
    """A table of :func:`budget`'s result: each block, the total and the 85F's resources."""
    rows = [f"{'block':<16}{'register bits':>14}{'DSP (MULT18X18D)':>18}{'memory bits':>13}"]
    for name, b in res["blocks"].items():
        if b["ff"] or b["dsp"] or b["memory_bits"]:
            rows.append(f"{name:<16}{b['ff']:>14,}{b['dsp']:>18,}{b['memory_bits']:>13,}")
    t, d = res["total"], res["device"]
    rows.append(f"{'total':<16}{t['ff']:>14,}{t['dsp']:>18,}{t['memory_bits']:>13,}")
    rows.append(f"{d['name']:<16}{d['ff']:>14,}{d['dsp']:>18,}{'':>13}")
    verdict = ", ".join(f"{k} {'fits' if ok else 'does not fit'}" for k, ok in res["fits"].items())
    rows.append(f"{res['top']} ({res['config']}): {verdict} (RTLIL counts: synthesis may trim a few "
                "register bits and DSP tiles; memories mapped to flip-flops and LUTs are not in them)")
    return "\n".join(rows)
