"""Compute identical logic once (for compiled simulators).

Amaranth writes an expression once per use: an ``Array`` element or a value used in five
places becomes five identical processes or ``assign`` s, each with its own net. The
scalar cache's ``Cat(slot_data[pick], slot_data[pick])``, shifted and read five times,
selected a 512-bit slot ten times per response. Synthesis merges such copies
(``opt_merge``); Verilator evaluates every one.

:func:`merge_verilog` keeps one of each group of identical definitions of a module's
unnamed nets (Amaranth's ``$N`` nets, ``n_..._N`` after :mod:`dcu.vpost.vdedup`) and reads it
wherever the others were read. Two definitions are identical when they declare the same
type and width and their text is the same once the defined net's own name is left out:
an ``assign`` of the whole net, or an ``always @*`` process that assigns that net only.
Merging one group can make others identical (the readers of merged nets), so it repeats
until nothing changes. Ports and named signals are never removed. The hardware the Verilog
describes is the same.

The Verilog must be as ``yosys write_verilog`` writes it (see :mod:`dcu.vpost.vsink`); run this
before :func:`dcu.vpost.vsink.sink_verilog`, on the plain ``assign`` s and processes.
"""
from __future__ import annotations

import re

from .vsink import each_module, module_ports, single_target_processes

__all__ = ["merge_module", "merge_verilog"]

_IDENT = re.compile(r"\\\S+|[A-Za-z_][\w$]*")
_UNNAMED = re.compile(r"n_d+\d+_\d+$")          # dcu.vpost.vdedup's name for a ``$N`` net
_DECL = re.compile(r"^  (wire|reg)( signed)?( \[\d+:\d+\])? (\S+) ?(?: = .*)?;$")
_ASSIGN = re.compile(r"^  assign (\S+) +=(?!=) (.*);$")


def _merge_once(lines: list[str]) -> tuple[list[str], int]:
    ports = module_ports(lines)
    decl = {}
    for i, line in enumerate(lines):
        m = _DECL.match(line)
        if m and m.group(4) not in ports:
            decl[m.group(4)] = (i, f"{m.group(1)}{m.group(2) or ''}{m.group(3) or ''}")
    defs = []    # (net, key, lines it occupies)
    for i, line in enumerate(lines):
        m = _ASSIGN.match(line)
        if m and m.group(1) in decl:
            defs.append((m.group(1), ("assign", decl[m.group(1)][1], m.group(2)), (i, i)))
    for net, (a, b) in single_target_processes(lines, ports).items():
        if net in decl:
            body = "\n".join(lines[a + 1:b])
            key = ("always", decl[net][1], _IDENT.sub(lambda t: "@" if t.group(0) == net else t.group(0), body))
            defs.append((net, key, (a, b)))
    first, rename, drop = {}, {}, set()
    for net, key, (a, b) in defs:
        keep = first.setdefault(key, net)
        if keep != net and _UNNAMED.match(net):
            rename[net] = keep
            drop.update(range(a, b + 1))
            drop.add(decl[net][0])
    if not rename:
        return lines, 0
    out = [_IDENT.sub(lambda t: rename.get(t.group(0), t.group(0)), line)
           for i, line in enumerate(lines) if i not in drop]
    return out, len(rename)


def merge_module(lines: list[str]) -> tuple[list[str], int]:
    """One module body's lines with identical definitions of unnamed nets merged, and the
    number of nets removed."""
    total = 0
    while True:
        lines, n = _merge_once(lines)
        if not n:
            return lines, total
        total += n


def merge_verilog(text: str) -> tuple[str, int]:
    """Every module of ``text`` through :func:`merge_module`; the text and the nets removed."""
    return each_module(text, merge_module)
