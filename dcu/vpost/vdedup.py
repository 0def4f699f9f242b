"""Share the Verilog modules of identical instances.

Amaranth writes one Verilog module per instance (``hosttop.dcu.simd0``, ``...simd1``, ...)
with net names numbered across the whole design (``\\$12697``, ``\\port$302371$0``), so
the four SIMDs of a DCU become four copies of the same 7 MB of Verilog. Verilator's memory
grows with the text (the ``tiny`` DCU's 40 MB ran it out of 24 GB), Icarus's compile time
too, and a reader cannot tell that the copies are the same.

:func:`dedup_modules` renames each module's numbered identifiers canonically, by their
rank among the identifiers of the same pattern (numbering that differs between copies by
an order-preserving offset gives the same names), and compares modules as the set of
their top-level items. Modules that compare equal are the same hardware up to renaming,
so every instance of them can use one definition; the instantiations are rewritten to its
canonical port names. Modules that differ in any way keep their own definitions.
"""
from __future__ import annotations

import hashlib
import re
from collections import defaultdict

__all__ = ["dedup_modules"]

_MODULE = re.compile(r"^module (\\\S+ |\w+)\((.*?)\);\n(.*?)^endmodule\n", re.S | re.M)
_INST_HEAD = re.compile(r"^  (\\\S+ |\w+) (\\\S+ |\w+) \($", re.M)
_NUMBERED = re.compile(r"\\\S*\$\S* |(?<![\w$\\])[A-Za-z_][\w]*\$[\w$]*")
_DIGITS = re.compile(r"\d+")


def _canonical_names(body: str, tag: str) -> dict[str, str]:
    """Old numbered identifier -> canonical plain identifier, by rank within its pattern."""
    by_pattern: dict[str, set[str]] = defaultdict(set)
    for tok in _NUMBERED.findall(body):
        by_pattern[_DIGITS.sub("N", tok)].add(tok)
    names = {}
    for pi, pattern in enumerate(sorted(by_pattern)):
        toks = sorted(by_pattern[pattern], key=lambda t: [int(d) for d in _DIGITS.findall(t)])
        stem = re.sub(r"\W+", "_", pattern.replace("N", "")).strip("_")[:24] or "n"
        for rank, tok in enumerate(toks):
            names[tok] = f"{stem}_{tag}{pi}_{rank}" + (" " if tok.endswith(" ") else "")
    return names


def _items(body: str) -> list[str]:
    """A module body's top-level items: a line indented by two spaces starts one, unless it
    closes a block (``end``, ``endcase``, ``);``)."""
    items, cur = [], []
    for line in body.splitlines():
        starts = line.startswith("  ") and not line.startswith("   ") and \
            line.strip() not in ("end", "endcase", ");") and not line.strip().startswith("end ")
        if starts and cur:
            items.append("\n".join(cur))
            cur = []
        cur.append(line)
    if cur:
        items.append("\n".join(cur))
    return items


def _normal(item: str) -> str:
    """An item as compared: an instantiation's port connections in sorted order (they are
    by name, so their order means nothing); any other item as it is."""
    lines = item.split("\n")
    if not _INST_HEAD.match(lines[0]):
        return item
    conns = sorted(line.rstrip(",") for line in lines if line.startswith("    ."))
    return "\n".join([lines[0], *conns])


def dedup_modules(text: str) -> str:
    """The Verilog ``text`` (one file, as ``amaranth.back.verilog.convert`` writes it) with
    identical modules shared; module names are kept for the first copy of each."""
    tag = "dd"
    while tag in text:
        tag += "d"
    mods = {m.group(1): m for m in _MODULE.finditer(text)}
    children = {name: [t for t, _ in _INST_HEAD.findall(m.group(3)) if t in mods] for name, m in mods.items()}
    order, seen = [], set()

    def visit(n):
        if n in seen:
            return
        seen.add(n)
        for c in children[n]:
            visit(c)
        order.append(n)

    for n in mods:
        visit(n)

    names_of = list(mods)
    index = {n: i for i, n in enumerate(names_of)}
    rename_ports: dict[str, dict[str, str]] = {}   # module -> its old port name -> canonical
    use_as: dict[str, str] = {}                     # module -> the definition it uses
    by_hash: dict[str, str] = {}
    out: dict[str, str] = {}
    for name in order:
        m = mods[name]
        ports, body = m.group(2), m.group(3)
        # instantiations first: child types and the child's port names become canonical
        lines = body.split("\n")
        child_map = None
        for i, line in enumerate(lines):
            h = _INST_HEAD.match(line)
            if h and h.group(1) in mods:
                child = h.group(1)
                child_map = rename_ports[child]
                # a placeholder: module names may contain '$', which the renaming must not touch
                lines[i] = f"  \x00{index[use_as[child]]}\x00 {h.group(2)} ("
            elif child_map is not None:
                if line.startswith("    ."):
                    port, rest = re.match(r"    \.(\\\S+ |\w+)\((.*)$", line).groups()
                    lines[i] = f"    .{child_map.get(port, port)}({rest}"
                elif line.startswith("  );"):
                    child_map = None
        body = "\n".join(lines)
        names = _canonical_names(ports + "\n" + body, tag)
        sub = lambda s: _NUMBERED.sub(lambda t: names.get(t.group(0), t.group(0)), s)  # noqa: E731
        # the child's own port names (now canonical, without '$') are untouched by `sub`
        # (an escaped identifier keeps the space that ends it)
        new_ports = ", ".join(sorted(sub(p.strip() + " ") if p.strip().startswith("\\") else sub(p.strip())
                                     for p in ports.split(",")))
        new_body = re.sub("\x00(\\d+)\x00", lambda t: names_of[int(t.group(1))], sub(body))
        rename_ports[name] = {k: v for k, v in names.items()}
        items = "\0".join(sorted(map(_normal, _items(new_body))))
        digest = hashlib.sha256((new_ports + "\0" + items).encode()).hexdigest()
        if digest in by_hash:
            use_as[name] = by_hash[digest]
            continue
        by_hash[digest] = use_as[name] = name
        out[name] = f"module {name}({new_ports});\n{new_body}endmodule\n"

    # keep everything outside the modules (the header comment, attributes before each one)
    pieces, pos = [], 0
    for m in _MODULE.finditer(text):
        between = text[pos:m.start()]
        pos = m.end()
        if m.group(1) in out:
            pieces.append(between + out[m.group(1)])
        else:   # a dropped copy: drop the attributes written just before it too
            pieces.append(re.sub(r"(\(\*.*?\*\)\n)+\Z", "", between))
    pieces.append(text[pos:])
    return "".join(pieces)
