"""One firmware test: :class:`FirmwareTest`, the type of the entries of ``manifest.TESTS``
(made by ``manifest.py`` and ``corpus.py``).

This module imports only the standard library.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["FirmwareTest"]


@dataclass(frozen=True)
class FirmwareTest:
    name: str                 # unique, e.g. "vector_add_cl"
    source: str               # file name inside firmware_tests/
    kernel: str               # kernel symbol
    grid: tuple               # workgroups per dimension
    block: tuple              # work-items per workgroup per dimension
    make_args: Callable       # rng -> list of numpy arrays (buffers) and numpy scalars
    golden: Callable          # input args -> {arg index: expected final buffer contents}
    check: Callable | None = None   # optional check(inputs, outputs) raising AssertionError
    wgp: bool = False
    ulp_tol: int = 0
    tags: frozenset = frozenset()
    cl_options: tuple = ()    # further clang options for a .cl source (dcu.toolchain.compile_cl)
