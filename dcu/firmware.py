"""Run a firmware test (``firmware_tests.manifest``) on any backend and compare with its
golden output.

The one place where golden checks live: pytest, the demo, ``dcu bench`` and the later RTL
and cocotb runs all call :func:`run_firmware`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from firmware_tests.manifest import HERE as _FIRMWARE_DIR

HERE = Path(_FIRMWARE_DIR)


@dataclass
class FirmwareResult:
    test: object
    run: object
    mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def describe(self) -> str:
        if self.ok:
            return f"{self.test.name}: outputs match the golden model ({self._what()})"
        return f"{self.test.name}: MISMATCH\n  " + "\n  ".join(self.mismatches)

    def _what(self) -> str:
        t = self.test
        return "bit-exact" if not t.ulp_tol else f"within {t.ulp_tol} ulp"


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 units in the last place, on a monotonic integer mapping of the bits."""
    def key(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFF_FFFF), i)
    return np.abs(key(a) - key(b))


def compare(expected: np.ndarray, got: np.ndarray, ulp_tol: int, label: str) -> list[str]:
    expected = np.asarray(expected)
    if got is None:
        return [f"{label}: no buffer came back"]
    if expected.shape != got.shape or expected.dtype != got.dtype:
        expected = expected.astype(got.dtype).reshape(got.shape) if expected.size == got.size else expected
        if expected.shape != got.shape:
            return [f"{label}: expected shape {expected.shape}, got {got.shape}"]
    if ulp_tol and got.dtype == np.float32:
        nan_e, nan_g = np.isnan(expected), np.isnan(got)
        bad = (nan_e != nan_g) | (~nan_e & (_ulp_distance(expected, got) > ulp_tol))
    elif expected.ndim:
        expected_bytes = expected.view(np.uint8).reshape(expected.shape + (-1,))
        bad = (expected_bytes != got.view(np.uint8).reshape(got.shape + (-1,))).any(axis=-1)
    else:
        bad = np.array(expected.tobytes() != got.tobytes())
    if not bad.any():
        return []
    idx = np.argwhere(bad)
    first = tuple(int(i) for i in idx[0])
    return [f"{label}: {len(idx)} of {bad.size} elements differ; first at {first}: "
            f"expected {expected[first]!r}, got {got[first]!r}"]


def program(test):
    """The test's kernel source built and loaded (``dcu.launch.Program``)."""
    from .launch import load_program
    return load_program(HERE / test.source, wgp=test.wgp, options=test.cl_options)


def rtl_refusal(test) -> str | None:
    """Why the RTL backends refuse the test's kernel, or None when they run it."""
    from .backends.rtlcheck import RtlUnsupportedError, refuse_unsupported
    try:
        refuse_unsupported(program(test).kernel(test.kernel), "rtl")
    except RtlUnsupportedError as e:
        return str(e)
    return None


def run_firmware(test, backend: str = "model", config: str = "default", seed: int = 0,
                 memory_seed: int | None = None, **launch_kw) -> FirmwareResult:
    """Build, launch and check one :class:`firmware_tests.manifest.FirmwareTest`; ``seed``
    draws its inputs, ``memory_seed`` (RTL backends) the memory model's latencies and order."""
    if memory_seed is not None:
        launch_kw["seed"] = memory_seed
    from .launch import launch
    rng = np.random.default_rng(seed)
    args = test.make_args(rng)
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    prog = program(test)
    run = launch(prog.kernel(test.kernel), test.grid, test.block, args, backend=backend, config=config, **launch_kw)
    result = FirmwareResult(test, run)
    for idx, expected in test.golden(inputs).items():
        result.mismatches += compare(expected, run.buffers[idx], test.ulp_tol, f"argument {idx}")
    if test.check is not None and result.ok:
        try:
            test.check(inputs, run.buffers)
        except AssertionError as e:
            result.mismatches.append(f"check: {e}")
    return result


def issue_mismatches(test, config: str, report) -> list[str]:
    """How an RTL run's report (``dcu.launch.RunReport``) differs from the model's run of the
    same test and preset: the instructions issued, by SIMD issue group, and the waves and
    workgroups dispatched. Retry loops (atomics checked by a ``check``) and the wave X / wave Y
    race (``ooo``) run as often as timing makes them: their counts are not compared."""
    from collections import Counter
    from hdl.layouts import issue_group
    model = run_firmware(test, backend="model", config=config).run.report
    out = []
    want = Counter()
    for kind, n in model.instructions_by_kind.items():
        want[issue_group(kind)] += n
    got = {g: n for g, n in report.instructions_by_kind.items() if n}
    if not ("ooo" in test.tags or ("atomic" in test.tags and test.check is not None)) and got != dict(want):
        out.append(f"issued by group: rtl {got}, model {dict(want)}")
    for name in ("waves", "workgroups"):
        if report.counters[f"dispatch.{name}"] != model.counters[name]:
            out.append(f"{name}: rtl {report.counters[f'dispatch.{name}']}, model {model.counters[name]}")
    return out
