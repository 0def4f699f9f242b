"""The README's main job: run a demo kernel on the model and on the RTL dual compute unit.

``python -m dcu.demo [--test NAME] [--config PRESET] [--no-rtl]`` builds a firmware kernel
with the real LLVM toolchain, launches it on the reference model and compares every output
with the numpy golden function; then it runs the same dispatch on the whole DCU (four
SIMD32s, caches, L0s, LDS, dispatcher) in Amaranth's simulator (backend ``rtl``), checks
the DCU's outputs against the golden function too and compares the instructions it issued
with the model's.
"""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dcu.demo", description=__doc__)
    p.add_argument("--test", default="saxpy_cl", help="firmware test to run (see firmware_tests/README.md)")
    p.add_argument("--config", default="default")
    p.add_argument("--no-rtl", action="store_true", help="skip the RTL run")
    a = p.parse_args(argv)
    from firmware_tests.manifest import get
    from dcu.firmware import run_firmware
    test = get(a.test)
    # both runs of the RTL's VOPD-free build, so that their instruction counts compare
    model = run_firmware(test, backend="model", config=a.config)
    print(model.run.report.summary())
    print(model.describe())
    if not model.ok or a.no_rtl:
        return 0 if model.ok else 1
    rtl = run_firmware(test, backend="rtl", config=a.config, progress=True)
    r = rtl.run.report
    c = r.counters
    print(f"{r.kernel} on the RTL DCU ({r.config}, Amaranth simulator): {r.cycles} cycles, "
          f"{r.instructions} wave-instructions ({r.instructions / r.cycles:.2f} per cycle; the model executed "
          f"{model.run.report.instructions})")
    print(f"  L0 hits/misses {c['vmem0.hits'] + c['vmem1.hits']}/{c['vmem0.misses'] + c['vmem1.misses']}, "
          f"icache {c['icache.hits']}/{c['icache.misses']}, scalar cache {c['scache.hits']}/{c['scache.misses']}, "
          f"max resident waves {c['dispatch.max_resident']}")
    print(rtl.describe())
    same = r.instructions == model.run.report.instructions
    if not same:
        print("  the DCU issued a different number of instructions than the model executed")
    return 0 if rtl.ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
