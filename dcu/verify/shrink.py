"""Reduce a failing program to a small one that still fails, and write it as a reproducer.

:func:`shrink` repeats, until nothing more goes: fewer workgroups and waves; delete nodes
(halves of a body, then single nodes, at every level); replace a structure by its bodies;
drop modifiers and turn literals into inline constants. A step is kept when the program still
fails (``fails``): it assembles, the reference runs it without error and the candidate differs.
The waits are not nodes (``dcu.verify.gen``): every reduced program is still free of races.
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from .gen import Block, Op, Program

__all__ = ["shrink", "write_reproducer", "size"]


def size(prog: Program) -> int:
    """Instructions of the body (structures' own instructions included)."""
    return sum(1 for _ in prog.ops()) + sum(1 for top in prog.body for n in top.nodes() if isinstance(n, Block))


def _bodies(prog: Program):
    """Every node list of the tree (the body, each structure's bodies and heads), outermost first."""
    out = [prog.body]
    stack = list(prog.body)
    while stack:
        n = stack.pop(0)
        if isinstance(n, Block):
            out += n.bodies
            for b in n.bodies:
                stack += b
    return out


def _try_deletions(prog: Program, fails) -> bool:
    changed = False
    for idx in range(len(_bodies(prog))):
        body = _bodies(prog)[idx] if idx < len(_bodies(prog)) else None
        if body is None:
            break
        chunk = max(1, len(body) // 2)
        while chunk >= 1:
            i = 0
            while i < len(body):
                saved = body[i:i + chunk]
                del body[i:i + chunk]
                if body is not prog.body and not body:     # a structure keeps one node
                    body[i:i] = saved
                    i += chunk
                    continue
                if fails(prog):
                    changed = True
                else:
                    body[i:i] = saved
                    i += chunk
            chunk //= 2
    return changed


def _try_unwrap(prog: Program, fails) -> bool:
    changed = False
    for body in _bodies(prog):
        i = 0
        while i < len(body):
            n = body[i]
            if isinstance(n, Block):
                flat = [x for b in n.bodies for x in b]
                body[i:i + 1] = flat
                if fails(prog):
                    changed = True
                    continue
                body[i:i + len(flat)] = [n]
            i += 1
    return changed


_SIMPLER = [(re.compile(r" (clamp|mul:[24]|div:2|op_sel:\[[01,]+\])"), ""),
            (re.compile(r"\|(v\d+|s\d+|vcc_lo|m0)\|"), r"\1"),
            (re.compile(r"-(v\d+|s\d+)\b"), r"\1"),
            (re.compile(r"0x[0-9a-f]{3,}"), "1")]


def _try_operands(prog: Program, fails) -> bool:
    changed = False
    for body in _bodies(prog):
        for i, n in enumerate(body):
            if not isinstance(n, Op):
                continue
            for pattern, repl in _SIMPLER:
                text = pattern.sub(repl, body[i].text)
                if text != body[i].text:
                    old = body[i]
                    body[i] = replace(old, text=text)
                    if fails(prog):
                        changed = True
                    else:
                        body[i] = old
    return changed


def _try_layout(prog: Program, fails) -> bool:
    changed = False
    for field in ("groups", "waves"):
        while getattr(prog.layout, field) > 1:
            old = prog.layout
            prog.layout = replace(old, **{field: getattr(old, field) - 1})
            if fails(prog):
                changed = True
            else:
                prog.layout = old
                break
    return changed


def shrink(prog: Program, fails: Callable[[Program], bool], rounds: int = 6) -> Program:
    """A smaller copy of ``prog`` for which ``fails`` still holds (``prog`` must fail)."""
    prog = copy.deepcopy(prog)
    for _ in range(rounds):
        progress = _try_layout(prog, fails)
        progress |= _try_deletions(prog, fails)
        progress |= _try_unwrap(prog, fails)
        progress |= _try_operands(prog, fails)
        if not progress:
            break
    return prog


def write_reproducer(prog: Program, folder: str | Path, mismatches: list[str] = (), backend: str = "verilator",
                     config: str = "fpga") -> Path:
    """Write ``verify_<seed>.s`` and its input buffers (``.npy``) in ``folder``; the assembly's
    header gives the ``dcu run`` command and the mismatches. Returns the ``.s`` path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"verify_{prog.seed}"
    out, data, const = prog.inputs()
    np.save(folder / f"{stem}_data.npy", data)
    np.save(folder / f"{stem}_const.npy", const)
    grid, block = prog.launch_dims()
    cmd = (f"dcu run {stem}.s --grid {grid} --block {block} --arg zeros:{out.size}:u32 "
           f"--arg buf:{stem}_data.npy --arg buf:{stem}_const.npy --backend {backend} --config {config} --out OUT")
    header = [f"// reproducer of dcu verify seed {prog.seed} ({prog.layout.groups} workgroups of "
              f"{prog.layout.waves} waves), run from this folder:", f"//   {cmd}",
              "// compare OUT/arg0.npy and OUT/arg1.npy with the same command on --backend model"]
    header += [f"// {m}" for m in mismatches]
    path = folder / f"{stem}.s"
    path.write_text("\n".join(header) + "\n" + prog.source("verify"))
    return path
