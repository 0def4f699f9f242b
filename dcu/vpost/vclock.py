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
outside the process reads (the assigns :mod:`dcu.vpost.vsink` moved into it); it stays as it
is otherwise.

Verilator gives ``q`` a shadow copy, copied in and out on every clock edge, when the value
an update gives it comes through a temporary that reads ``q`` (``t = q | x; q <= t;``).
So a temporary that an update ``q <= t;`` reads whole (with ``q``'s width) is replaced by
its expression (``q <= q | x;``), and where an update still reads ``q`` through a
temporary the temporaries stay in a process of their own beside the clocked block.

:func:`guard_writes_verilog` puts each memory write port that has an enable per byte or
lane under a test of any enable (:func:`guard_writes_module`), and
:func:`mask_writes_verilog` then writes such a port as one masked write of the whole word
when it is its memory's only port (:func:`mask_writes_module`).

The Verilog must be as ``yosys write_verilog`` writes it (see :mod:`dcu.vpost.vsink`); run this
after :func:`dcu.vpost.vsink.sink_verilog`, which fills the processes with their temporaries.
"""
from __future__ import annotations

import re
from collections import Counter

from .vsink import each_module, identifiers

__all__ = ["clock_module", "clock_verilog", "guard_writes_module", "guard_writes_verilog", "mask_writes_module",
           "mask_writes_verilog"]

_NAME = r"(\\\S+ |[A-Za-z_][A-Za-z0-9_$]*)"
_FLOP = re.compile(r"^  always @\(posedge (.+)\)$")
_FLOP_STMT = re.compile(rf"^    {_NAME} *<= {_NAME} *;$")
_LHS = re.compile(rf"^ *{_NAME} *(\[[^\]]*\])? *= ")
_DECL = re.compile(rf"^  reg( (?:signed )?\[[^\]]*\])? {_NAME}\s*(= [^;]*)?;$")   # with its initial value or not
_NBA = re.compile(rf"^ *{_NAME} *(\[[^\]]*\])? *<= ")
_NBA_WHOLE = re.compile(rf"^( +){_NAME} *<= {_NAME} *;$")
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
    decls, ranges = {}, {}
    for i, line in enumerate(lines):
        d = _DECL.match(line)
        if d:
            ranges[d.group(2).rstrip()] = d.group(1) or ""
        if d and not d.group(3):     # a register with an initial value is a flip-flop, and its line a use
            decls[d.group(2).rstrip()] = i
        else:
            uses.update(identifiers(line))

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
            inside.update(identifiers(line))
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
        regs = {q for _, _, q in nexts.values()}
        new, inlined = _inline_temporaries(new, regs, assigned, inside, ranges)
        trigger = [line for line in body if _TRIGGER.match(line)]
        replace[i] = _temporaries_apart(new, regs, set(assigned) - set(nexts) - set(inlined), trigger) or new
        out_of.update(decls[t] for t in inlined if t in decls)
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


def _inline_temporaries(block: list[str], regs: set[str], temps: dict, inside: Counter,
                        ranges: dict) -> tuple[list[str], list[str]]:
    """``q <= t;`` with the temporary's expression in place of ``t``, where ``t`` has
    ``q``'s width and signedness, is assigned once, before, in a branch enclosing the
    update, and read nowhere else, and nothing assigned in between is read by its expression.
    Verilator keeps a shadow copy of ``q``, copied in and out on every clock edge, when the
    value given to ``q`` comes through a temporary that reads ``q`` (``t = q | x; q <= t;``,
    as :mod:`dcu.vpost.vsink` writes it); ``q <= q | x;`` it updates in place. Returns the block
    and the temporaries that are gone."""
    block, inlined = list(block), []
    for k, line in enumerate(block):
        m = _NBA_WHOLE.match(line)
        if not m or m.group(2).rstrip() not in regs:
            continue
        q, t = m.group(2).rstrip(), m.group(3).rstrip()
        if t not in temps or inside[t] != 2 or t not in ranges or ranges.get(q) != ranges[t]:
            continue
        defs = [j for j in range(k)
                if block[j] is not None and (d := _LHS.match(block[j])) and d.group(1).rstrip() == t]
        if len(defs) != 1 or _LHS.match(block[defs[0]]).group(2) or not _dominates(block, defs[0], k):
            continue
        j = defs[0]
        expr = block[j].split("=", 1)[1].strip()[:-1]     # an escaped name keeps the space that ends it
        reads = set(identifiers(expr))
        if any(_LHS.match(x) and _LHS.match(x).group(1).rstrip() in reads
               for x in block[j + 1:k] if x is not None):
            continue
        block[k] = f"{m.group(1)}{m.group(2).rstrip()} <= {expr};"
        block[j] = None
        inlined.append(t)
    return [x for x in block if x is not None], inlined


def _temporaries_apart(block: list[str], regs: set[str], temps: set[str],
                       trigger: list[str]) -> list[str] | None:
    """When a register's update still reads the register through a temporary (``t = {q[..],
    x}; q <= t[..];``, which Verilator would give a shadow copy), the clocked block and a
    process of the temporaries alone, with the same branches; None when no update does. The
    temporaries then hold the values the clocked block read from them before: they are
    computed from the same signals under the same conditions, before the clock edge."""
    reads: dict[str, set] = {}
    for line in block:
        m = _LHS.match(line)
        if m and m.group(1).rstrip() in temps:
            reads.setdefault(m.group(1).rstrip(), set()).update(identifiers((m.group(2) or "") + line.split("=", 1)[1]))

    def reaches(names, seen):
        for n in names:
            if n in regs:
                return True
            if n in reads and n not in seen:
                seen.add(n)
                if reaches(reads[n], seen):
                    return True
        return False

    updates = [k for k, line in enumerate(block) if _NBA.match(line)]
    if not any(reaches([n for n in identifiers(block[k].split("<=", 1)[1]) if n in reads], set()) for k in updates):
        return None

    def without(lines, drop):        # a case item's only statement becomes a null statement
        out = []
        for k, line in enumerate(lines):
            if k not in drop:
                out.append(line)
            elif out[-1].rstrip().endswith(":"):
                out.append(line[:len(line) - len(line.lstrip())] + ";")
        return out
    temp_lines = {k for k, line in enumerate(block) if (m := _LHS.match(line)) and m.group(1).rstrip() in temps}
    comb = ["  always @* begin", *trigger] + without(block, set(updates))[1:-1] + ["  end"]
    return comb + without(block, temp_lines)



def _dominates(block: list[str], j: int, k: int) -> bool:
    """Line ``j`` runs whenever line ``k`` (after it) does: it is a statement of a
    ``begin`` block that is still open at ``k``."""
    prev = next((x.strip() for x in reversed(block[:j]) if x is not None and x.strip()), "")
    if not (prev.endswith("begin") or prev.endswith(";")):
        return False                 # a case item's or an if's single statement
    depth = 0
    for x in block[j + 1:k]:
        if x is None:
            continue
        s = x.strip()
        if s.startswith("end") and not s.startswith("endcase"):
            depth -= 1
            if depth < 0:
                return False
        if s.endswith("begin"):
            depth += 1
    return True


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
        return name in identifiers((m.group(2) or "") + line.split("=", 1)[1])
    return name in identifiers(line)


def _nonblocking(rest: str) -> str:
    """What follows an assignment's target (``= x;`` or ``[a:b] = x;``) with ``<=``."""
    close = rest.index("]") + 1 if rest.startswith("[") else 0
    return rest[:close] + (" " if close else "") + rest[close:].lstrip().replace("=", "<=", 1)


def clock_verilog(text: str) -> tuple[str, int]:
    """:func:`clock_module` on every module of ``text``; returns the text and the count."""
    return each_module(text, clock_module)


_WRITE_IF = re.compile(rf"^    if \({_NAME} *\[\d+\]\)$")


def guard_writes_module(lines: list[str]) -> tuple[list[str], int]:
    """Yosys writes a memory write port with a write enable per byte or lane as one clocked
    block of ``if (en [k]) mem[addr][slice] <= data[slice];``, which Verilator evaluates
    statement by statement on every edge, each test of ``en [k]`` computing ``en`` again from
    the logic it inlines there (an L0 line: 128 of them). Each such block goes under
    ``if (|en)``: one test when the port writes nothing. Returns the lines and the number
    of blocks."""
    out, i, n = [], 0, 0
    while i < len(lines):
        line = lines[i]
        if line.endswith(" begin") and _FLOP.match(line[:-6]):
            j = i + 1
            while j < len(lines) and lines[j] != "  end":
                j += 1
            body = lines[i + 1:j]
            tests = [_WRITE_IF.match(body[k]) for k in range(0, len(body), 2)]
            if (len(body) >= 4 and len(body) % 2 == 0 and all(tests) and len({t.group(1) for t in tests}) == 1
                    and all(body[k].startswith("      ") and " <= " in body[k] for k in range(1, len(body), 2))):
                out += [line, f"    if (|{tests[0].group(1)}) begin", *("  " + b for b in body), "    end"]
                n += 1
                i = j
                continue
        out.append(line)
        i += 1
    return out, n


def guard_writes_verilog(text: str) -> tuple[str, int]:
    """:func:`guard_writes_module` on every module of ``text``; returns the text and the count."""
    return each_module(text, guard_writes_module)


_GUARD = re.compile(rf"^    if \(\|{_NAME}\) begin$")
_SLICE_WRITE = re.compile(rf"^        {_NAME} *\[(.+)\]\[(\d+):(\d+)\] <= {_NAME} *\[(\d+):(\d+)\];$")
_MEM_DECL = re.compile(rf"^  reg \[(\d+):0\] {_NAME}\s*\[\d+:\d+\];$")
_STORE = re.compile(rf"^ +{_NAME} *(\[.*\])? *<= ")             # a statement that writes a name


def mask_writes_module(lines: list[str]) -> tuple[list[str], int]:
    """A guarded write port (:func:`guard_writes_module`) that writes a whole word in
    slices, ``if (en [k]) mem[a][h:l] <= d[h':l'];`` for slices that tile the word, becomes
    one masked write ``mem[a] <= mem[a] & ~M | {d...} & M`` (``M`` each slice's enable
    repeated over it). Verilator keeps a delayed-write slot per statement, cleared and
    tested on every edge whether the port writes or not: 128 per L0 line or result buffer,
    4 per LDS bank; now one per port. Only a memory that no other statement writes
    qualifies, since a second port writing the same word in the same cycle must keep the
    slices it wrote. Returns the lines and the number of ports."""
    msb = {m.group(2): int(m.group(1)) for m in map(_MEM_DECL.match, lines) if m}
    writes = Counter(m.group(1) for m in map(_STORE.match, lines) if m)
    out, i, n = [], 0, 0
    while i < len(lines):
        if _GUARD.match(lines[i]) and i and lines[i - 1].endswith(" begin") and _FLOP.match(lines[i - 1][:-6]):
            j = i + 1
            while j < len(lines) and lines[j] != "    end":
                j += 1
            masked = _masked_write(lines[i + 1:j], msb, writes)
            if masked is not None:
                out += [lines[i], masked]
                n += 1
                i = j
                continue
        out.append(lines[i])
        i += 1
    return out, n


def _masked_write(body: list[str], msb: dict, writes: Counter) -> str | None:
    """The masked write that does what ``body`` (``if (en [k])`` and a slice write, in
    turns) does, or None. ``msb``: each memory's top bit; ``writes``: the statements that
    write each name in the module."""
    tests = [_WRITE_IF.match(body[k][2:]) for k in range(0, len(body), 2)]
    stores = [_SLICE_WRITE.match(body[k]) for k in range(1, len(body), 2)]
    if not (all(tests) and all(stores) and len(tests) == len(stores)):
        return None
    mem, addr = stores[0].group(1), stores[0].group(2)
    # (lo, hi, enable, source, its hi, its lo) per slice, from the word's bit 0 up
    parts = sorted((int(s.group(4)), int(s.group(3)), t.group(0)[8:-1], s.group(5), int(s.group(6)), int(s.group(7)))
                   for t, s in zip(tests, stores))
    if (mem not in msb or writes[mem] != len(stores) or parts[-1][1] != msb[mem]
            or any((s.group(1), s.group(2)) != (mem, addr) for s in stores)
            or [p[0] for p in parts] != [0] + [p[1] + 1 for p in parts[:-1]]
            or any(hi - lo != shi - slo for lo, hi, _, _, shi, slo in parts)):
        return None
    sources = []                # the slices' sources, a run of one signal's bits as one slice
    for _, _, _, src, shi, slo in parts:
        if sources and sources[-1][0] == src and sources[-1][1] + 1 == slo:
            sources[-1][1] = shi
        else:
            sources.append([src, shi, slo])
    data = "{" + ", ".join(f"{src} [{shi}:{slo}]" for src, shi, slo in reversed(sources)) + "}"
    mask = "{" + ", ".join(f"{{{hi - lo + 1}{{{en}}}}}" for lo, hi, en, *_ in reversed(parts)) + "}"
    word = f"{mem} [{addr}]"
    return f"      {word} <= {word} & ~{mask} | {data} & {mask};"


def mask_writes_verilog(text: str) -> tuple[str, int]:
    """:func:`mask_writes_module` on every module of ``text``; returns the text and the count."""
    return each_module(text, mask_writes_module)
