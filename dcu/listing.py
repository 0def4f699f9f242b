"""``dcu disasm``: a code object's instructions, listed as llvm-objdump lists them, with the
addresses a run reports.

Each kernel (or, in an object without kernels, each function of ``.text``, or ``.text`` as a
whole) is listed from its first instruction to its end: the PC the instruction has when a
run loads the code object (the PC runtime errors name), its offset in the code object, its
dwords and its text. Branch targets get a label ``<symbol+offset>`` before them and the
branch names it. Words the decoder rejects are shown as such and stepped over by their
format's size (:func:`isa.decoder.encoding_size`), so the listing stays in step.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["Block", "blocks", "listing"]


@dataclass(frozen=True)
class Block:
    """A range of ``.text`` to list: ``name`` and what it is (``kernel`` or ``function``)."""
    name: str
    what: str
    start: int        # offset in the code object
    end: int


def blocks(co, only: str | None = None) -> list[Block]:
    """The kernels of a code object, or, without kernels, its ``.text`` functions (or ``.text``
    itself); ``only``: just that kernel or function."""
    text_end = co.code_base + len(co.code)
    if co.kernels:
        ks = sorted(co.kernels.values(), key=lambda k: k.entry)
        out = [Block(k.name, "kernel", k.entry, k.entry + k.code_size if k.code_size else text_end) for k in ks]
    else:
        out = [Block(n, "function", lo, hi) for n, lo, hi in _functions(co)] or \
            [Block(".text", "section", co.code_base, text_end)]
    if only is not None:
        out = [b for b in out if b.name == only]
    return out


def _functions(co) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of every function symbol in ``.text``, by address."""
    from elftools.elf.elffile import ELFFile
    with open(co.linked_path, "rb") as fh:
        elf = ELFFile(fh)
        lo, hi = co.code_base, co.code_base + len(co.code)
        syms = {}
        for sec in (".symtab", ".dynsym"):
            table = elf.get_section_by_name(sec)
            for s in (table.iter_symbols() if table is not None else ()):
                if s.entry.st_info.type == "STT_FUNC" and lo <= s.entry.st_value < hi and s.name:
                    syms.setdefault(s.name, (s.entry.st_value, s.entry.st_size))
    ordered = sorted(syms.items(), key=lambda kv: kv[1][0])
    return [(n, v, v + size if size else (ordered[i + 1][1][0] if i + 1 < len(ordered) else hi))
            for i, (n, (v, size)) in enumerate(ordered)]


def _decode_range(co, block: Block, load_base: int) -> list[tuple[int, tuple, str, object]]:
    """``(offset, dwords, text, inst or None)`` for each instruction of ``block``."""
    from isa import DecodeError, decode, disassemble
    from isa.decoder import encoding_size

    code, base = co.code, co.code_base
    words = struct.unpack(f"<{len(code) // 4}I", code[: len(code) // 4 * 4])
    out, off = [], block.start
    while off < block.end:
        i = (off - base) // 4
        window = words[i: i + 4]
        try:
            inst = decode(window, load_base + off)
        except DecodeError as e:
            size = min(encoding_size(window), 4 * len(window))
            what = f"{e.mnemonic}, not implemented" if e.mnemonic else "not a gfx1200 instruction the decoder knows"
            out.append((off, tuple(window[: size // 4]), f"<undecodable: {what}>", None))
        else:
            size = inst.size
            out.append((off, inst.words, disassemble(inst), inst))
        off += max(4, size)
    return out


def _label(name: str, rel: int) -> str:
    return f"<{name}{f'+{rel:#x}' if rel > 0 else f'-{-rel:#x}' if rel < 0 else ''}>"


def listing(co, load_base: int, only: str | None = None) -> list[str]:
    """The listing's lines for a :class:`dcu.codeobj.CodeObject` loaded at ``load_base`` (the
    address a run puts its image at)."""
    lines = []
    for n, b in enumerate(blocks(co, only)):
        rows = _decode_range(co, b, load_base)
        targets = {inst.branch_target() - load_base for _, _, _, inst in rows
                   if inst is not None and inst.branch_target() is not None}
        lines += ([""] if n else []) + [
            f"{b.name}:  ({b.what}; PC {load_base + b.start:#x} when loaded, offset {b.start:#x} in the code object)"]
        for off, ws, text, inst in rows:
            if off in targets and off != b.start:
                lines.append(f"{_label(b.name, off - b.start)}:")
            target = inst.branch_target() if inst is not None else None
            if target is not None:
                text += f"  // -> {target:#x} {_label(b.name, target - load_base - b.start)}"
            hexs = " ".join(f"{w:08x}" for w in ws)
            lines.append(f"  {load_base + off:#010x} {off:#07x}: {hexs:<26} {text}")
    return lines
