"""Evaluate combinational logic only on the branch that uses it (for compiled simulators).

Amaranth writes every operation of a design as a continuous ``assign`` and the choice
between results as an ``always @*`` process (``casez (op) ... d = \\$34 ;``). Verilator
evaluates every ``assign`` on every clock edge, so a unit that computes a hundred
operations for 32 lanes and uses one costs a hundred. This pass moves each ``assign`` (of
a wire, a slice of it, or several slices of it together) whose every use (directly, or
through other such assigns) is inside one process into the innermost branch of it that
holds them all, as blocking assignments at its top (just before the statement, when there
is one use): the value is computed only when the branch runs. An ``assign`` whose uses lie
in several processes, each of them inside an ``if (C) begin`` with the same condition
``C`` (or inside the same item of a ``case`` on the same value), moves into a new process
of its own ``if (C)`` (or of that one case item). A process that assigns one signal (a
multiplexer, which Amaranth writes as a ``case``) whose every reader runs under one ``if
(C)`` (or in its ``else``: ``!(C)``) runs under that condition itself, unless ``C`` is
computed from its signal; a reader moved into a process that runs under ``C`` counts as
read under ``C``. A named signal that nothing reads does not hold its producers back (it
then shows their last computed value). A wire that only copies another signal of its
width (``assign a = b;``, the name Amaranth gives a port or a field) is read as the
original everywhere: moved into a branch it would be a copy made each time the branch
runs. Nothing else changes (the moved wires become ``reg`` s of the same width); the
hardware the Verilog describes is the same.

The RTL helps by computing idle logic under the condition that makes it useful (a unit's
stage under its ``valid``: ``hdl/mem/vmem.py``, ``hdl/mem/lds.py``), which gives this pass a
branch.

It works on one module at a time: run it on a design flattened below the level worth
keeping (``yosys flatten``), or cones that cross module ports stay eager.

The Verilog must be as ``yosys write_verilog`` writes it (Amaranth's ``back.verilog``):
one ``assign`` per line, process bodies indented by four spaces, one statement per line.
"""
from __future__ import annotations

import re
from collections import defaultdict

__all__ = ["sink_module", "sink_verilog", "each_module", "module_ports", "single_target_processes"]

_TOKEN = re.compile(r"\\\S+ |\d*'[sS]?[bodhBODH][0-9a-fA-FxXzZ?_]+|[A-Za-z_][A-Za-z0-9_$]*")
_ASSIGN = re.compile(r"^  assign (\\\S+ |[A-Za-z_][A-Za-z0-9_$]*) *(\[[0-9:]+\])? +=  *(.*);$")
# slices of one wire assigned together (Yosys writes an AND with a constant mask, or a bit
# shuffle, as ``assign { w [7:4], w [1:0] } = ...;``)
_ASSIGN_CAT = re.compile(r"^  assign (\{ *(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*) *\[[0-9:]+\]"
                         r"(?:, *\2 *\[[0-9:]+\])* *\}) +=  *(.*);$")
_DECL = re.compile(r"^  (wire|reg)( (?:signed )?\[[^\]]*\])? (\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)\s*;$")
_PORT = re.compile(r"^  (input|output|inout)\b")
_STMT = re.compile(r"^(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)(\[[^\]]*\])* += .*;$")


def identifiers(text: str) -> list[str]:
    """The identifiers in ``text``, each once, in order of appearance."""
    return list(dict.fromkeys(t.rstrip() for t in _TOKEN.findall(text) if not t[0].isdigit() and "'" not in t))


_WIDTH_DECL = re.compile(r"^  (wire|reg|input|output|inout)( (?:signed )?\[[^\]]*\])? "
                         r"(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)\s*;$")
_IDENT = re.compile(r"^(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*) *$")


def _substitute_aliases(lines: list[str]) -> list[str]:
    """Every read of a wire that is only a copy of another signal of the same width and
    signedness (``assign a = b;``, Amaranth's names for a port or a field) reads the
    original instead. The copy stays, read by nothing: Verilator drops it. Moved into a
    process, it would be a real copy, every time the branch runs (two of them per cycle
    for a 6,228-bit request through a submodule's port and a multiplexer)."""
    decl = {}                            # name -> (kind, range text)
    for line in lines:
        if m := _WIDTH_DECL.match(line):
            decl[m.group(3).rstrip()] = (m.group(1), m.group(2) or "")
    drivers: dict[str, int] = defaultdict(int)
    alias: dict[str, str] = {}           # a -> b's token (an escaped name keeps its space)
    skip = set()
    for i, line in enumerate(lines):
        if not line.startswith("  assign "):
            continue
        m = _ASSIGN.match(line)
        if m is None:
            continue
        a = m.group(1).rstrip()
        drivers[a] += 1
        b = _IDENT.match(m.group(3))
        if b and not m.group(2) and decl.get(a, ("",))[0] == "wire" and b.group(1).rstrip() in decl \
                and decl[a][1] == decl[b.group(1).rstrip()][1]:
            alias[a] = b.group(1) if b.group(1).startswith("\\") else b.group(1).rstrip()
            skip.add(i)
    alias = {a: b for a, b in alias.items() if drivers[a] == 1}
    if not alias:
        return lines

    def final(a):
        seen = {a}
        while (b := alias[a].rstrip()) in alias and b not in seen:
            seen.add(b)
            a = b
        return alias[a]

    tokens = {a: final(a) for a in alias}
    out = []
    for i, line in enumerate(lines):
        if i in skip or line.startswith("  (*") or _WIDTH_DECL.match(line):
            out.append(line)
            continue
        out.append(_TOKEN.sub(lambda t: _read_as(t, tokens), line))
    return out


def _read_as(t: re.Match, tokens: dict[str, str]) -> str:
    """The token ``t`` of a line, renamed by ``tokens`` unless a constant or a pin name."""
    word = t.group(0)
    if word[0].isdigit() or "'" in word or t.string[t.start() - 1:t.start()] == ".":
        return word
    return tokens.get(word.rstrip(), word)


def sink_module(lines: list[str]) -> tuple[list[str], int]:
    """Sink the assigns of one module's body (its lines between the header and
    ``endmodule``); returns the new lines and the number of assigns moved."""
    lines = _substitute_aliases(lines)
    wires: dict[str, int] = {}          # name -> its declaration line
    ports = module_ports(lines)
    for i, line in enumerate(lines):
        m = _DECL.match(line)
        if m and m.group(1) == "wire":
            wires[m.group(3).rstrip()] = i
    # nodes: internal wires driven only by assigns to the whole wire or to slices of it
    node_lines: dict[str, list[int]] = defaultdict(list)
    bad: set[str] = set()
    assign_of: dict[int, tuple[str, str, str]] = {}     # line -> (wire, lhs text, rhs text)
    for i, line in enumerate(lines):
        if line.startswith("  assign "):
            m = _ASSIGN.match(line)
            if m is not None:
                name, lhs = m.group(1).rstrip(), m.group(1) + (m.group(2) or "")
            elif (m := _ASSIGN_CAT.match(line)) is not None:
                name, lhs = m.group(2).rstrip(), m.group(1)
            else:
                bad.update(identifiers(line.split(" = ", 1)[0][9:]))
                continue
            assign_of[i] = (name, lhs, m.group(m.lastindex))
            node_lines[name].append(i)
        elif _DECL.match(line) is None and not line.startswith("  (*"):
            # a process or instance: a reg it assigns is not a wire; a wire is never
            # assigned there, but an instance output drives one
            if not line.startswith("   ") and not line.startswith("  always") and line.startswith("  "):
                bad.update(identifiers(line))
    nodes = {n: None for n in node_lines if n in wires and n not in ports and n not in bad}
    rhs = {n: " ".join(assign_of[i][2] for i in node_lines[n]) for n in nodes}
    procs = single_target_processes(lines, ports)      # name -> (first line, last line)
    proc_of = {i: n for n, (a, b) in procs.items() for i in range(a, b + 1)}
    for n, (a, b) in procs.items():
        rhs[n] = " ".join(x for x in identifiers(" ".join(lines[a + 1:b])) if x != n)
    tracked = {**nodes, **dict.fromkeys(procs)}     # in the text's order: the output does not depend on hashing

    # uses: a node's RHS, a statement or branch of a process (a site), or anything else.
    # A site is ("line", i), a conditional statement, or ("block", j), the branch that the
    # ``begin`` on line j opens; chain[i] lists the branches enclosing line i, outermost first.
    EAGER = ("eager",)
    uses: dict[str, set] = defaultdict(set)
    for n in nodes:
        for u in identifiers(rhs[n]):
            if u in tracked and u != n:
                uses[u].add(("node", n))
    chain: dict[int, tuple[int, ...]] = {}
    label_end: dict[int, int] = {}       # a case item's line -> the last line of its statement
    in_comb, stack = False, []           # enclosing branches: (line, indent, "begin" | "label")
    for i, line in enumerate(lines):
        if line.startswith("  (*") or _DECL.match(line):
            continue
        if line.startswith("  ") and not line.startswith("   "):
            in_comb, stack = line.startswith("  always @*"), []
            if i in assign_of:
                if assign_of[i][0] in nodes:
                    continue
                text = assign_of[i][2] + " " + assign_of[i][1]
            else:
                text = line
            for u in identifiers(text):
                if u in tracked:
                    uses[u].add(EAGER)
            continue
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if in_comb:
            while stack and stack[-1][2] == "label" and indent <= stack[-1][1]:
                stack.pop()              # the next case item, or endcase
            if stripped.startswith("end") and not stripped.startswith("endcase") and stack:
                stack.pop()              # "end", or "end else begin" (reopened below)
            for j, _, kind in stack:
                if kind == "label":
                    label_end[j] = i
        ids = [u for u in identifiers(line) if u in tracked and proc_of.get(i) != u]
        chain[i] = tuple(j for j, _, _ in stack)
        site = EAGER
        if in_comb and indent > 4 and _STMT.match(stripped):
            site = ("line", i)
        elif in_comb and stack:
            site = ("block", stack[-1][0])   # a branch's condition: read when its parent runs
        elif in_comb and i in proc_of:
            site = ("top", i)                # a process's top level: eager, unless the process is guarded
        for u in ids:
            uses[u].add(site)
        if in_comb and indent >= 4:
            if stripped.endswith("begin"):
                stack.append((i, indent, "begin"))
            elif stripped.endswith(":"):
                stack.append((i, indent, "label"))

    def path(site):
        return chain[site[1]] + ((site[1],) if site[0] == "block" else ())

    # a node's target: the one site all its uses lead to, or the innermost branch that
    # encloses them all (consumers first)
    order, state = [], set()
    for root in tracked:                 # iterative DFS, post-order over producer edges
        if root in state:
            continue
        stack = [(root, iter(identifiers(rhs[root])))]
        state.add(root)
        while stack:
            n, it = stack[-1]
            for u in it:
                if u in tracked and u not in state:
                    state.add(u)
                    stack.append((u, iter(identifiers(rhs[u]))))
                    break
            else:
                stack.pop()
                order.append(n)          # producers before consumers
    # a node nothing reads (a named signal that Yosys bypassed) stays where it is and does
    # not hold its producers back: it shows their last computed value
    dead = {n for n in nodes if not uses.get(n)}
    target: dict[str, tuple | None] = {}
    for n in reversed(order):            # consumers first
        if n in procs:                   # a process stays where it is (it may be guarded)
            target[n] = None
            continue
        t = {target.get(s[1]) if s[0] == "node" else s for s in uses.get(n, ())
             if s[0] != "node" or s[1] not in dead}
        if not t or None in t or EAGER in t or any(x[0] == "top" for x in t):
            target[n] = None
        elif len(t) == 1:
            target[n] = next(iter(t))
        else:
            paths = [path(x) for x in t]
            common = 0
            while all(len(q) > common and q[common] == paths[0][common] for q in paths):
                common += 1
            target[n] = ("block", paths[0][common - 1]) if common else None

    # a process is not held back by the copies of a named signal nothing reads either
    # (Amaranth names a field or a port several times); they stay, and read the process
    unread = set()
    for n in reversed(order):            # consumers first
        if n in nodes and all(u[0] == "node" and u[1] in unread for u in uses.get(n, ())):
            unread.add(n)
    guard, guarded = _guards(lines, order, uses, target, chain, path, dead, procs, rhs, unread, proc_of)
    wrapped = {n: guard.pop(n) for n in list(guard) if n in procs}
    for c in list(guarded):
        guarded[c] = [n for n in guarded[c] if n not in procs]
        if not guarded[c]:
            del guarded[c]

    by_site: dict[tuple, list[str]] = defaultdict(list)
    for n in order:                      # producers first within each site
        if target.get(n):
            by_site[target[n]].append(n)
    moved = {n for ns in by_site.values() for n in ns} | set(guard)
    out: list[str | None] = list(lines)
    for n in moved:
        for i in node_lines[n]:
            out[i] = None
        out[wires[n]] = out[wires[n]].replace("  wire", "  reg", 1)

    def assigns(ns, pad):                # the moved assigns of nodes ns, as blocking statements
        return "\n".join(f"{pad}{assign_of[j][1]} = {assign_of[j][2]};" for n in ns for j in node_lines[n])

    ends = []
    for (kind, i), ns in by_site.items():
        line = lines[i]
        stripped = line.lstrip()
        pad = line[:len(line) - len(stripped)]
        if kind == "line":
            out[i] = f"{pad}begin\n{assigns(ns, pad + '  ')}\n{pad}  {stripped}\n{pad}end"
        elif i not in label_end:         # at the top of the branch, before anything reads it
            out[i] = f"{line}\n{assigns(ns, pad + '  ')}"
        else:                            # a case item's one statement becomes a block
            out[i] = f"{line}\n{pad}    begin\n{assigns(ns, pad + '      ')}"
            ends.append(i)
    for i in ends:                       # after the other edits: the item's last line may be a site
        pad = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        out[label_end[i]] += f"\n{pad}    end"
    for n, cond in wrapped.items():      # a process read only under ``cond`` runs under it
        a, b = procs[n]
        head, pad, tail = _guard_text(cond)
        out[a] = f"{out[a]}\n{head}"
        for i in range(a + 1, b):
            if out[i] is not None:
                out[i] = "\n".join(pad[4:] + x for x in out[i].split("\n"))
        out[b] = f"{tail}\n{out[b]}"
    for cond, ns in guarded.items():     # one process per guard, producers first
        head, pad, tail = _guard_text(cond)
        out.append(f"  always @* begin\n{head}\n{assigns(ns, pad)}\n{tail}\n  end")
    return [x for x in out if x is not None], len(moved) + len(wrapped)


def _guard_text(cond: str) -> tuple[str, str, str]:
    """The lines that open and close a process body's guard ``cond`` (an ``if``, or a case
    item: the case with that item alone), and the indent of the statements inside."""
    if cond.startswith(_CASE_KEY):
        subject, label = cond[len(_CASE_KEY):].split("\n")
        return f"    {subject}\n      {label}\n        begin", " " * 10, "        end\n    endcase"
    return f"    if ({cond}) begin", " " * 6, "    end"


def module_ports(lines: list[str]) -> set[str]:
    """The names of the ports that a module body declares."""
    return {n for line in lines if _PORT.match(line)
            for n in identifiers(line.split("]")[-1] if "]" in line else line[8:])}


def single_target_processes(lines: list[str], ports: set[str]) -> dict[str, tuple[int, int]]:
    """The ``always @*`` processes that assign one internal ``reg`` (whole or by slices):
    its name -> the process's first and last line."""
    regs = {m.group(3).rstrip() for line in lines if (m := _DECL.match(line)) and m.group(1) == "reg"}
    found, targets, start = {}, set(), None
    for i, line in enumerate(lines):
        if line == "  always @* begin":
            start, targets = i, set()
        elif start is not None and line == "  end":
            if len(targets) == 1 and (n := next(iter(targets))) in regs and n not in ports:
                found[n] = (start, i)
            start = None
        elif start is not None and (m := _STMT.match(line.lstrip())):
            targets.add(m.group(1).rstrip())
        elif start is not None and line.lstrip().startswith("{") and " = " in line:
            targets.update(identifiers(line.split(" = ", 1)[0]))     # slices assigned together
    return found


_IF = re.compile(r"^if \((.*)\) begin$")
_CASE_KEY = "\0case\0"     # a guard that is a case item: this, the case line, a newline, the item


def _case_item(lines: list[str], j: int) -> str | None:
    """The guard of case item ``lines[j]`` (``4'h8:``), or None for ``default:``."""
    label = lines[j].strip()
    if not label.endswith(":") or label.startswith("default"):
        return None
    indent = len(lines[j]) - len(lines[j].lstrip())
    for k in range(j - 1, -1, -1):
        if len(lines[k]) - len(lines[k].lstrip()) < indent:
            head = lines[k].strip()
            return f"{_CASE_KEY}{head}\n{label}" if head.startswith(("case (", "casez (")) else None
    return None


def _else_cond(lines: list[str], j: int) -> str | None:
    """The guard of the ``else`` branch that ``lines[j]`` (``end else begin``) opens: the
    negation of its ``if``'s condition."""
    if lines[j].strip() != "end else begin":
        return None
    indent = len(lines[j]) - len(lines[j].lstrip())
    for k in range(j - 1, -1, -1):          # the if's body is indented deeper
        if len(lines[k]) - len(lines[k].lstrip()) <= indent:
            m = _IF.match(lines[k].strip())
            return f"!({m.group(1)})" if m and len(lines[k]) - len(lines[k].lstrip()) == indent else None
    return None


def _guards(lines, order, uses, target, chain, path, dead, procs, rhs, unread, proc_of):
    """Nodes left eager whose every use runs under one condition ``C`` (an ``if (C) begin``
    around each use, its ``else`` (``!(C)``), or the same item of a ``case`` on the same
    value, in any process): each
    goes to a process of its own ``if (C)`` (or of that case item). Returns
    node -> C and C -> its nodes, producers first. A condition that reads a moved node is
    not used (its value would be stale there), and the nodes that needed it stay eager."""
    cond_of = {}
    for j in {x for c in chain.values() for x in c}:
        if m := _IF.match(lines[j].lstrip()):
            cond_of[j] = m.group(1)
        elif (item := _case_item(lines, j) or _else_cond(lines, j)) is not None:
            cond_of[j] = item

    def conds(site):
        return frozenset(cond_of[x] for x in path(site) if x in cond_of)

    banned: set[str] = set()
    pinned: set[str] = set()
    while True:
        guard: dict[str, str] = {}
        avail: dict[str, frozenset] = {}
        for n in reversed(order):        # consumers first
            if target.get(n) or n in dead or n in pinned:
                continue
            g = None
            for s in uses.get(n, ()):
                if s[0] == "node":
                    m = s[1]
                    if m in dead or (n in procs and m in unread):
                        continue
                    # a node moved into a process runs under that process's guard too
                    c = (conds(target[m]) | avail.get(proc_of.get(target[m][1]), frozenset())
                         if target.get(m) else avail.get(m, frozenset()))
                elif s[0] in ("line", "block", "top"):   # in a process that runs under a guard: under it too
                    c = conds(s) | avail.get(proc_of.get(s[1]), frozenset())
                else:
                    c = frozenset()
                g = c if g is None else g & c
                if not g:
                    break
            g = (g or frozenset()) - banned
            if g:
                avail[n] = g
                mine = [guard[s[1]] for s in uses[n] if s[0] == "node" and s[1] in guard and guard[s[1]] in g]
                guard[n] = min(mine) if mine else min(g)
        moved = set(guard) | {n for n, t in target.items() if t}
        reads = {c: {u for u in identifiers(c) if u in moved} for c in set(guard.values())}
        # a condition read from nodes that would go under guards of their own keeps them
        # eager instead (a flag is cheaper to compute than what it guards)
        pin = {u for us in reads.values() if us and us <= guard.keys() for u in us}
        bad = {c for c, us in reads.items() if us and not us <= guard.keys()}
        # a process under a condition computed from its own output would make a loop
        bad |= {c for n, c in guard.items() if n in procs and n in _producers(identifiers(c), rhs, procs)}
        if not bad and not pin:
            break
        banned |= bad
        pinned |= pin
    guarded: dict[str, list[str]] = defaultdict(list)
    for n in order:
        if n in guard:
            guarded[guard[n]].append(n)
    return guard, guarded


def _producers(names, rhs, procs) -> set[str]:
    """The processes among ``procs`` that ``names`` are computed from, through the values
    of ``rhs`` (assigns and processes)."""
    found, seen, todo = set(), set(), list(names)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in procs:
            found.add(n)
        todo.extend(identifiers(rhs.get(n, "")))
    return found


_MODULE = re.compile(r"^(module .*?;\n)(.*?)^(endmodule\n)", re.S | re.M)


def each_module(text: str, rewrite) -> tuple[str, int]:
    """Every module body of ``text`` (as lines) through ``rewrite(lines) -> (lines, count)``;
    the new text and the counts' sum."""
    total = 0

    def one(m):
        nonlocal total
        lines, n = rewrite(m.group(2).rstrip("\n").split("\n"))
        total += n
        return m.group(1) + "\n".join(lines) + "\n" + m.group(3)
    return _MODULE.sub(one, text), total


def sink_verilog(text: str) -> tuple[str, int]:
    """Every module of ``text`` through :func:`sink_module`; the text and the assigns moved."""
    return each_module(text, sink_module)
