"""The README's main job: run a demo kernel on the model and on the RTL SIMD, and check both.

``python -m dcu.demo [--test NAME] [--no-rtl]`` builds a firmware kernel with the real LLVM
toolchain, launches it on the reference model and compares every output with the numpy
golden function; then it runs the same dispatch on one RTL SIMD32 in Amaranth's simulator,
in lock step with the model (every issued PC and register write compared), and checks the
RTL's outputs against the golden function too.
"""
from __future__ import annotations

import argparse
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dcu.demo", description=__doc__)
    p.add_argument("--test", default="saxpy_cl", help="firmware test to run (see firmware_tests/README.md)")
    p.add_argument("--config", default="default")
    p.add_argument("--no-rtl", action="store_true", help="skip the RTL SIMD run")
    a = p.parse_args(argv)
    from firmware_tests.manifest import get
    from firmware_tests.runner import run_firmware
    test = get(a.test)
    result = run_firmware(test, backend="model", config=a.config)
    print(result.run.report.summary())
    print(result.describe())
    if not result.ok:
        return 1
    if a.no_rtl:
        return 0
    return _rtl(test, a.config)


def _rtl(test, config: str) -> int:
    """The same dispatch on one RTL SIMD in lock step with the model."""
    import numpy as np
    from firmware_tests.runner import HERE, compare
    from hdl.config import get_config
    from .launch import load_program
    from .lockstep import SimdRun
    kernel = load_program(HERE / test.source, wgp=test.wgp).kernel(test.kernel)
    args = test.make_args(np.random.default_rng(0))
    inputs = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    t0 = time.perf_counter()
    run = SimdRun(kernel, test.grid, test.block, args, get_config(config))
    out = run.run()
    bad = [m for idx, exp in test.golden(inputs).items() for m in compare(exp, out[idx], test.ulp_tol, f"argument {idx}")]
    print(f"{test.kernel} on one RTL SIMD32 (Amaranth simulator, {time.perf_counter() - t0:.1f} s): "
          f"{run.cycles} cycles, {run.instructions} wave-instructions issued, "
          f"every issued PC and register write equal to the model's")
    print(f"{test.name}: RTL outputs " + ("match the golden model" if not bad else "MISMATCH\n  " + "\n  ".join(bad)))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
