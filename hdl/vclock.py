"""Compute a register's next state in its clocked block (for compiled simulators).

Yosys writes an Amaranth register ``q`` with a conditional update as a process that
computes its next state ``n`` and a flip-flop that takes it::

    always @* begin              always @(posedge clk)
      n = q;                       q <= n;
      if (c) n[7:0] = x;
      if (rst) n = 0;
    end

Verilator evaluates the process on every clock edge: it copies ``q`` into ``n`` and back
whether ``c`` holds or not, which for a request register of 6,228 bits (195 words) is
most of the work of an idle cycle. This pass writes such a pair as the clocked block::

    always @(posedge clk) begin
      if (c) q[7:0] <= x;
      if (rst) q <= 0;
    end

which updates ``q`` only when a branch assigns it: the same flip-flops and the same values
(the process's last assignment to each bit wins in both), as long as nothing but the
flip-flop reads ``n``. A process qualifies when every signal it assigns is either such an
``n`` (first set whole at the top of the process, from ``q`` or from a new value, read
nowhere but by its flip-flop, all of them on one clock) or a temporary that nothing
outside the process reads (the assigns :mod:`hdl.vsink` moved into it); it stays as it
is otherwise.

The Verilog must be as ``yosys write_verilog`` writes it (see :mod:`hdl.vsink`); run this
after :func:`hdl.vsink.sink_verilog`, which fills the processes with their temporaries.
"""
from __future__ import annotations

import re
from collections import Counter

from .vsink import _idents as _names, each_module

__all__ = ["clock_module", "clock_verilog"]

_NAME = r"(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)"
_FLOP = re.compile(r"^  always @\(posedge (.+)\)$")
_FLOP_STMT = re.compile(rf"^    {_NAME} *<= {_NAME} *;$")
_LHS = re.compile(rf"^ *{_NAME} *(\[[^\]]*\])? *= ")
_DECL = re.compile(rf"^  reg( (?:signed )?\[[^\]]*\])? {_NAME}\s*;$")
_TRIGGER = re.compile(r"^    if \(\S+ *\) begin end$")   # Yosys's trigger for the initial evaluation


def clock_module(lines: list[str]) -> tuple[list[str], int]:
    """Rewrite the qualifying processes of one module's body; returns the new lines and the
    number of registers whose next state moved into a clocked block."""
    flops = {}                       # n -> (line of "always @(posedge ...)", clock, q)
    for i, line in enumerate(lines[:-1]):
        m = _FLOP.match(line)
        s = _FLOP_STMT.match(lines[i + 1]) if m else None
        if s:
            flops[s.group(2).rstrip()] = (i, m.group(1), s.group(1).rstrip())
    uses = Counter()                 # name -> lines mentioning it, declarations aside
    decls = {}
    for i, line in enumerate(lines):
        d = _DECL.match(line)
        if d:
            decls[d.group(2).rstrip()] = i
        else:
            uses.update(_names(line))

    out_of = set()                   # lines to drop: the moved flip-flops and next-state declarations
    replace = {}                     # first line of a process -> its new lines
    moved = 0
    i = 0
    while i < len(lines):
        if lines[i] != "  always @* begin":
            i += 1
            continue
        end = lines.index("  end", i)
        body = lines[i + 1:end]
        assigned, inside = {}, Counter()
        plain = True                     # every statement assigns one named signal or a slice of it
        for k, line in enumerate(body):
            m = _LHS.match(line)
            if line.rstrip().endswith(";"):
                if m:
                    assigned.setdefault(m.group(1).rstrip(), k)
                else:
                    plain = False
            inside.update(_names(line))
        nexts = {n: flops[n] for n in assigned if n in flops}
        ok = plain and bool(nexts) and len({clock for _, clock, _ in nexts.values()}) == 1
        for name, first in assigned.items():
            if not ok:
                break
            if name in nexts:
                ok = _is_whole(body[first]) and uses[name] == inside[name] + 1 and \
                    not any(_reads(line, name) for line in body)
            else:                        # a temporary of this process alone
                ok = uses[name] == inside[name]
        if not ok:
            i = end + 1
            continue
        clock = next(iter(nexts.values()))[1]
        new = [f"  always @(posedge {clock}) begin"]
        for k, line in enumerate(body):
            m = _LHS.match(line)
            name = m.group(1).rstrip() if m else None
            if _TRIGGER.match(line) or (name in nexts and k == assigned[name] and _is_init(line, nexts[name][2])):
                continue
            if name in nexts:
                indent = line[:len(line) - len(line.lstrip())]
                rest = line.lstrip()[len(m.group(1)):].lstrip()
                line = f"{indent}{nexts[name][2]} {_nonblocking(rest)}"
            new.append(line)
        new.append("  end")
        replace[i] = new
        for n, (at, _, _) in nexts.items():
            out_of.update((at, at + 1))
            if n in decls:
                out_of.add(decls[n])
        moved += len(nexts)
        i = end + 1
    result = []
    i = 0
    while i < len(lines):
        if i in replace:
            result += replace[i]
            i = lines.index("  end", i) + 1
            continue
        if i not in out_of:
            result.append(lines[i])
        i += 1
    return result, moved


def _is_whole(line: str) -> bool:
    """``line`` assigns a whole signal at the top level of a process (on every evaluation)."""
    m = _LHS.match(line)
    return line.startswith("    ") and not line.startswith("     ") and m is not None and not m.group(2)


def _is_init(line: str, q: str) -> bool:
    """``line`` is ``n = q;`` at the top level of a process: ``q`` keeps its value."""
    return _is_whole(line) and line.split("=", 1)[1].strip().rstrip(";").strip() == q


def _reads(line: str, name: str) -> bool:
    """``line`` reads ``name`` (anywhere but as the target of its assignment)."""
    m = _LHS.match(line)
    if m and m.group(1).rstrip() == name:
        return name in _names((m.group(2) or "") + line.split("=", 1)[1])
    return name in _names(line)


def _nonblocking(rest: str) -> str:
    """What follows an assignment's target (``= x;`` or ``[a:b] = x;``) with ``<=``."""
    close = rest.index("]") + 1 if rest.startswith("[") else 0
    return rest[:close] + (" " if close else "") + rest[close:].lstrip().replace("=", "<=", 1)


def clock_verilog(text: str) -> tuple[str, int]:
    """:func:`clock_module` on every module of ``text``; returns the text and the count."""
    return each_module(text, clock_module)
