"""What a waveform of the DCU shows first: the GTKWave save file written beside every VCD
dump (``rtl`` and ``verilator`` backends), made from the VCD's own header so that one view
serves every simulator: grouped per SIMD and per wave slot, then the LDS, L0s and dispatcher.

Amaranth's simulator writes enum-shaped signals (the executing instruction's ``OpId``) as
text; for a compiled simulator's numeric dump a GTKWave translate filter names them.
"""
from __future__ import annotations

import math

__all__ = ["gtkw_for_vcd"]


# ---- GTKWave save files made from a VCD's own header -----------------------------------
def _vcd_vars(path: str) -> tuple[list[tuple[str, str, str, int]], int]:
    """(scope path, kind, name, width) of every variable in a VCD header, and the last
    timestamp of the dump."""
    scope, out = [], []
    with open(path, "rb") as f:
        for raw in f:
            tok = raw.decode(errors="replace").split()
            if not tok:
                continue
            if tok[0] == "$scope":
                scope.append(tok[2])
            elif tok[0] == "$upscope":
                scope.pop()
            elif tok[0] == "$var":
                out.append((".".join(scope), tok[1], tok[4], int(tok[2])))
            elif tok[0] == "$enddefinitions":
                break
        f.seek(0, 2)
        f.seek(max(0, f.tell() - 65536))
        times = [line[1:] for line in f.read().split(b"\n") if line.startswith(b"#")]
    return out, int(times[-1]) if times else 0


def _opid_filter(path: str) -> None:
    """A GTKWave translate filter: each OpId value (hex, as the trace shows it) -> its mnemonic."""
    from hdl.isa_tables import OpId
    digits = -(-max(op.value for op in OpId).bit_length() // 4)
    with open(path, "w") as f:
        for op in OpId:
            f.write(f"{op.value:0{digits}X} {op.name.lower()}\n")


_UNITS = ("simd", "lds", "vmem", "dispatcher")


def gtkw_for_vcd(vcd: str, wave_slots: int, simds: int = 4) -> str:
    """Write a GTKWave save file beside a VCD of the DCU (Amaranth's simulator) or of
    :class:`hdl.top.hosttop.HostTop` (a compiled simulator), zoomed to the whole run: the DCU's
    status; per SIMD the issue select and the instruction in EX by name (Amaranth dumps the
    ``OpId`` as text; for a numeric dump a translate filter is written beside the file);
    per wave slot PC, EXEC and the four counters; the LDS, the L0s and the dispatcher.
    Signals are found by name in the VCD, in the outermost scope of their unit that holds
    them; missing ones are left out. Returns the save file's path."""
    base = str(vcd).rsplit(".", 1)[0]
    gtkw, opfilter = base + ".gtkw", base + ".opid.txt"
    variables, end = _vcd_vars(vcd)
    found: dict[tuple[str, str], tuple[str, str, str, int]] = {}
    for scope, kind, name, width in variables:
        unit = next((p for p in reversed(scope.split(".")) if p.startswith(_UNITS)), "")
        key = (unit, name.lstrip("\\"))
        if key not in found or len(scope) < len(found[key][0]):
            found[key] = (scope, kind, name, width)

    def trace(unit, name, fmt="22"):
        hit = found.get((unit, name))
        if hit is None:
            return []
        scope, kind, vname, width = hit
        if kind == "string":          # an enum Amaranth dumped by name
            return ["@28", f"{scope}.{vname}"]
        if width == 1:
            return ["@28", f"{scope}.{vname}"]
        return [f"@{fmt}", f"{scope}.{vname}[{width - 1}:0]"]

    # zoom on the whole run: GTKWave's zoom is a power of two; 7.7 was fitted on screenshots
    # of its 1,600 x 1,000 window, whose wave pane is about 1,100 pixels wide
    zoom = -(math.log2(max(end, 1) / 1100) + 7.7)
    lines = [f'[dumpfile] "{vcd}"', "[size] 1600 1000", "[pos] 0 0", "[sst_width] 180",
             "[signals_width] 260", "[timestart] 0", f"*{zoom:.6f} -1" + " -1" * 26]

    def group(title, body):
        if body:
            lines.extend(["@800200", f"-{title}", *body, "@1000200", f"-{title}"])

    group("dcu", trace("", "busy") + trace("", "done") + trace("", "cycles", "24"))
    for s in range(simds):
        u = f"simd{s}"
        body = []
        for pipe in ("", "_s"):   # the main pipe, then the scalar pipe
            body += trace(u, f"issue{pipe}") + trace(u, f"sel{pipe}", "24")
            op = found.get((u, f"ex{pipe}.inst.op"))
            if op and op[1] != "string":
                _opid_filter(opfilter)
                body += ["@2022", f"^1 {opfilter}", f"{op[0]}.{op[2]}[{op[3] - 1}:0]"]
            else:
                body += trace(u, f"ex{pipe}.inst.op")
            body += trace(u, f"ex{pipe}.pc")
        group(u, body)
        for w in range(wave_slots):
            wave = []
            for name in ("resident", "pc", "exec", "loadcnt", "storecnt", "dscnt", "kmcnt"):
                wave += trace(u, f"{name}{w}", "24" if name.endswith("cnt") else "22")
            group(f"{u} wave{w}", wave)
    group("lds", trace("lds", "accesses", "24") + trace("lds", "conflict_cycles", "24"))
    for c in range(2):
        group(f"l0 cu{c}", trace(f"vmem{c}", "counters"))
    group("dispatcher", trace("dispatcher", "busy") + trace("dispatcher", "counters"))
    with open(gtkw, "w") as f:
        f.write("\n".join(lines) + "\n")
    return gtkw
