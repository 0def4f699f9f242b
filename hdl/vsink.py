"""Evaluate combinational logic only on the branch that uses it (for compiled simulators).

Amaranth writes every operation of a design as a continuous ``assign`` and the choice
between results as an ``always @*`` process (``casez (op) ... d = \\$34 ;``). Verilator
evaluates every ``assign`` on every clock edge, so a unit that computes a hundred
operations for 32 lanes and uses one costs a hundred. This pass moves each ``assign``
whose value is used only inside one conditional statement of a process (directly, or
through other such assigns) into that statement, as blocking assignments just before it:
the value is computed only when the branch runs. Nothing else changes (the moved wires
become ``reg`` s of the same width); the hardware the Verilog describes is the same.

It works on one module at a time: run it on a design flattened below the level worth
keeping (``yosys flatten``), or cones that cross module ports stay eager.

The Verilog must be as ``yosys write_verilog`` writes it (Amaranth's ``back.verilog``):
one ``assign`` per line, process bodies indented by four spaces, one statement per line.
"""
from __future__ import annotations

import re
from collections import defaultdict

__all__ = ["sink_module", "sink_verilog"]

_TOKEN = re.compile(r"\\\S+ |\d*'[sS]?[bodhBODH][0-9a-fA-FxXzZ?_]+|[A-Za-z_][A-Za-z0-9_$]*")
_ASSIGN = re.compile(r"^  assign (\\\S+ |[A-Za-z_][A-Za-z0-9_$]*) *(\[[0-9:]+\])? +=  *(.*);$")
_DECL = re.compile(r"^  (wire|reg)( (?:signed )?\[[^\]]*\])? (\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)\s*;$")
_PORT = re.compile(r"^  (input|output|inout)\b")
_STMT = re.compile(r"^(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)(\[[^\]]*\])* += .*;$")


def _idents(text: str) -> list[str]:
    """The identifiers in ``text``, each once, in order of appearance."""
    return list(dict.fromkeys(t.rstrip() for t in _TOKEN.findall(text) if not t[0].isdigit() and "'" not in t))


def sink_module(lines: list[str]) -> tuple[list[str], int]:
    """Sink the assigns of one module's body (its lines between the header and
    ``endmodule``); returns the new lines and the number of assigns moved."""
    wires: dict[str, int] = {}          # name -> its declaration line
    ports: set[str] = set()
    for i, line in enumerate(lines):
        m = _DECL.match(line)
        if m and m.group(1) == "wire":
            wires[m.group(3).rstrip()] = i
        elif _PORT.match(line):
            ports |= set(_idents(line.split("]")[-1] if "]" in line else line[8:]))
    # nodes: internal wires driven only by assigns to the whole wire or to slices of it
    node_lines: dict[str, list[int]] = defaultdict(list)
    bad: set[str] = set()
    assign_of: dict[int, tuple[str, str, str]] = {}     # line -> (wire, lhs text, rhs text)
    for i, line in enumerate(lines):
        if line.startswith("  assign "):
            m = _ASSIGN.match(line)
            if m is None:
                bad.update(_idents(line.split(" = ", 1)[0][9:]))
                continue
            name = m.group(1).rstrip()
            assign_of[i] = (name, m.group(1) + (m.group(2) or ""), m.group(3))
            node_lines[name].append(i)
        elif _DECL.match(line) is None and not line.startswith("  (*"):
            # a process or instance: a reg it assigns is not a wire; a wire is never
            # assigned there, but an instance output drives one
            if not line.startswith("   ") and not line.startswith("  always") and line.startswith("  "):
                bad.update(_idents(line))
    nodes = {n: None for n in node_lines if n in wires and n not in ports and n not in bad}
    rhs = {n: " ".join(assign_of[i][2] for i in node_lines[n]) for n in nodes}

    # uses: a node's RHS, a conditional statement of a process (a site), or anything else
    EAGER = ("eager",)
    uses: dict[str, set] = defaultdict(set)
    for n in nodes:
        for u in _idents(rhs[n]):
            if u in nodes and u != n:
                uses[u].add(("node", n))
    in_comb = False
    for i, line in enumerate(lines):
        if line.startswith("  (*") or _DECL.match(line):
            continue
        if line.startswith("  ") and not line.startswith("   "):
            in_comb = line.startswith("  always @*")
            if i in assign_of:
                if assign_of[i][0] in nodes:
                    continue
                text = assign_of[i][2] + " " + assign_of[i][1]
            else:
                text = line
            for u in _idents(text):
                if u in nodes:
                    uses[u].add(EAGER)
            continue
        ids = [u for u in _idents(line) if u in nodes]
        if not ids:
            continue
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        site = EAGER
        if in_comb and indent > 4 and _STMT.match(stripped):
            site = ("line", i)
        for u in ids:
            uses[u].add(site)

    # a node's target: the one site all its uses lead to, consumers first
    order, state = [], set()
    for root in nodes:                   # iterative DFS, post-order over producer edges
        if root in state:
            continue
        stack = [(root, iter(_idents(rhs[root])))]
        state.add(root)
        while stack:
            n, it = stack[-1]
            for u in it:
                if u in nodes and u not in state:
                    state.add(u)
                    stack.append((u, iter(_idents(rhs[u]))))
                    break
            else:
                stack.pop()
                order.append(n)          # producers before consumers
    target: dict[str, tuple | None] = {}
    for n in reversed(order):            # consumers first
        t = set()
        for s in uses.get(n, ()):
            t.add(target.get(s[1]) if s[0] == "node" else s)
        target[n] = next(iter(t)) if len(t) == 1 and None not in t and EAGER not in t else None

    by_site: dict[int, list[str]] = defaultdict(list)
    for n in order:                      # producers first within each site
        if target.get(n):
            by_site[target[n][1]].append(n)
    moved = {n for ns in by_site.values() for n in ns}
    out: list[str | None] = list(lines)
    for n in moved:
        for i in node_lines[n]:
            out[i] = None
        out[wires[n]] = out[wires[n]].replace("  wire", "  reg", 1)
    for i, ns in by_site.items():
        line = lines[i]
        stripped = line.lstrip()
        pad = line[:len(line) - len(stripped)]
        body = "".join(f"{pad}  {assign_of[j][1]} = {assign_of[j][2]};\n" for n in ns for j in node_lines[n])
        out[i] = f"{pad}begin\n{body}{pad}  {stripped}\n{pad}end"
    return [x for x in out if x is not None], len(moved)


_MODULE = re.compile(r"^(module .*?;\n)(.*?)^(endmodule\n)", re.S | re.M)


def sink_verilog(text: str) -> tuple[str, int]:
    """Every module of ``text`` through :func:`sink_module`; the text and the assigns moved."""
    total = 0

    def one(m):
        nonlocal total
        lines, n = sink_module(m.group(2).rstrip("\n").split("\n"))
        total += n
        return m.group(1) + "\n".join(lines) + "\n" + m.group(3)
    return _MODULE.sub(one, text), total
