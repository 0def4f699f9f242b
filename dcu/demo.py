"""The README's main job: run a demo kernel on the simulated DCU and check it.

``python -m dcu.demo [--backend model] [--test NAME]`` builds a firmware kernel with the
real LLVM toolchain, launches it and compares every output with the numpy golden model.
"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dcu.demo", description=__doc__)
    p.add_argument("--test", default="saxpy_cl", help="firmware test to run (see firmware_tests/README.md)")
    p.add_argument("--backend", default="model")
    p.add_argument("--config", default="default")
    a = p.parse_args(argv)
    from firmware_tests.manifest import get
    from firmware_tests.runner import run_firmware
    test = get(a.test)
    result = run_firmware(test, backend=a.backend, config=a.config)
    print(result.run.report.summary())
    print(result.describe())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
