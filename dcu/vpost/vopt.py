"""Verilog for compiled simulation: Amaranth's netlist flattened below a chosen depth,
identical modules shared (:mod:`dcu.vpost.vdedup`), identical nets computed once
(:mod:`dcu.vpost.vcse`), combinational logic moved into the
process branches that use it (:mod:`dcu.vpost.vsink`) and registers' next states into their
clocked blocks (:mod:`dcu.vpost.vclock`), so that Verilator evaluates a unit's operations only
when their result is selected, copies a register only when it changes and tests a memory
write port's byte or lane enables only when it writes (and writes a whole word, masked, when
it is the memory's only port)
(docs/toolflow.md, "Why the compiled model was slow").

Amaranth's ``back.verilog`` runs Yosys with ``proc -nomux -norom; memory_collect`` and
writes one module per instance. Here the same RTLIL goes through the same passes plus
``flatten``, with the modules at most ``keep_depth`` levels below the top kept as modules
(``keep_hierarchy``): in a HostTop that keeps ``hosttop``, ``hosttop.dcu`` and the blocks of
the DCU (the four SIMDs, caches, LDS, dispatcher), each of which becomes one module that
:func:`dcu.vpost.vsink.sink_module` can see whole.
"""
from __future__ import annotations

import re

__all__ = ["simulation_verilog", "rtlil_to_verilog"]

_MODULE_HEAD = re.compile(r"^((?:attribute .*\n)*)module (\\\S+)\n", re.M)


def _keep_hierarchy(rtlil_text: str, top: str, keep_depth: int) -> str:
    """Mark the modules at most ``keep_depth`` levels below ``top`` ``keep_hierarchy``."""
    def mark(m):
        name = m.group(2)[1:]
        depth = name.count(".") if name.startswith(top + ".") or name == top else 0
        if depth <= keep_depth:
            return f"{m.group(1)}attribute \\keep_hierarchy 1\nmodule {m.group(2)}\n"
        return m.group(0)
    return _MODULE_HEAD.sub(mark, rtlil_text)


def rtlil_to_verilog(rtlil_text: str, top: str, keep_depth: int | None = 2) -> str:
    """Amaranth's Yosys passes, with ``flatten`` below ``keep_depth`` (None: no flattening)."""
    from amaranth._toolchain.yosys import find_yosys
    yosys = find_yosys(lambda ver: ver >= (0, 40))
    if keep_depth is not None:
        rtlil_text = _keep_hierarchy(rtlil_text, top, keep_depth)
    script = [f"read_rtlil <<rtlil\n{rtlil_text}\nrtlil", "proc -nomux -norom", "memory_collect"]
    if keep_depth is not None:
        script.append("flatten")
    script.append("write_verilog -norename")
    return yosys.run(["-q", "-"], "\n".join(script), ignore_warnings=True)


def simulation_verilog(top, name: str, *, keep_depth: int | None = 2, sink: bool = True,
                       stats: dict | None = None) -> str:
    """The Verilog of ``top`` (module ``name``) for a compiled simulator; with ``sink``,
    identical nets merged (:mod:`dcu.vpost.vcse`), the logic moved into the branches that use it
    (:mod:`dcu.vpost.vsink`) and registers' next states into their clocked blocks
    (:mod:`dcu.vpost.vclock`)."""
    import time
    from amaranth.back import rtlil
    from .vclock import clock_verilog, guard_writes_verilog, mask_writes_verilog
    from .vcse import merge_verilog
    from .vdedup import dedup_modules
    from .vsink import sink_verilog
    t0 = time.perf_counter()
    il = rtlil.convert(top, name=name, emit_src=False)
    t1 = time.perf_counter()
    text = rtlil_to_verilog(il, name, keep_depth)
    t2 = time.perf_counter()
    text = dedup_modules(text)
    t3 = time.perf_counter()
    moved = clocked = writes = masked = merged = 0
    if sink:
        text, merged = merge_verilog(text)
        text, moved = sink_verilog(text)
        text, clocked = clock_verilog(text)
        text, writes = guard_writes_verilog(text)
        text, masked = mask_writes_verilog(text)
    t4 = time.perf_counter()
    if stats is not None:
        stats.update(rtlil_s=round(t1 - t0, 1), yosys_s=round(t2 - t1, 1), dedup_s=round(t3 - t2, 1),
                     sink_s=round(t4 - t3, 1), nets_merged=merged, assigns_moved=moved,
                     registers_clocked=clocked, memory_writes_guarded=writes, memory_writes_masked=masked,
                     verilog_bytes=len(text))
    return text
