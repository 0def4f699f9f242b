"""``dcu verify``: a campaign of random programs on a backend against the model (docs/verify.md)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["add_parser", "cmd_verify"]


def _count(text: str) -> int:
    try:
        v = int(text.replace("_", ""), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def add_parser(sub, common) -> None:
    """The ``verify`` subcommand's options."""
    from hdl.config import PRESETS
    v = sub.add_parser("verify", parents=[common], help="random programs: a backend against the model",
                       description="Generate random whole-DCU programs (SALU, VALU, divergence, loops, global "
                       "and LDS memory, atomics, barriers), run each on the model and on the backend, and "
                       "compare memory, every wave's registers and the instructions issued by group. With "
                       "--shrink, the first failing program is reduced to a reproducer that `dcu run` takes.")
    v.add_argument("--backend", choices=("verilator", "rtl", "model"), default="verilator")
    v.add_argument("--config", choices=list(PRESETS), default="fpga", metavar="PRESET",
                   help="the DCU preset (default fpga, the build tests/test_verilator.py uses)")
    v.add_argument("--programs", type=_count, default=100, metavar="N", help="programs to run (default 100)")
    v.add_argument("--seed", type=int, default=0, help="the first program's seed; program i has seed S+i")
    v.add_argument("--jobs", type=_count, default=1, metavar="J", help="worker processes (default 1)")
    v.add_argument("--json", metavar="FILE", help="write the report (seeds, mismatches, coverage) there")
    v.add_argument("--shrink", metavar="DIR",
                   help="shrink the first failing program and write its reproducer (.s and .npy) in DIR")
    v.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def cmd_verify(ns: argparse.Namespace) -> int:
    """Exit 0 when every program matched, 1 when one differed."""
    from dcu.errors import UsageError
    from dcu.progress import Progress

    from .run import campaign, write_report
    for path in (ns.json,):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise UsageError(f"no such folder for --json: {os.path.dirname(path)}")
    report = campaign(ns.programs, ns.seed, ns.backend, ns.jobs, ns.config, Progress(not ns.quiet))
    print(summary(report))
    if report["failures"] and ns.shrink:
        report["reproducer"] = str(_shrink_first(report, ns))
        print(f"reproducer: {report['reproducer']}")
    if ns.json:
        write_report(report, ns.json)
        print(f"wrote {ns.json}", file=sys.stderr)
    return 1 if report["failures"] else 0


def _shrink_first(report: dict, ns) -> Path:
    from .gen import generate
    from .run import backend_runner, check, fails_on, model_runner
    from .shrink import shrink, write_reproducer
    seed = report["failures"][0]["seed"]
    cand = model_runner() if ns.backend == "model" else backend_runner(ns.backend, ns.config)
    small = shrink(generate(seed, report["target"]), fails_on(cand))
    return write_reproducer(small, ns.shrink, check(small, cand)["mismatches"], ns.backend, ns.config)


def summary(report: dict) -> str:
    cov = report["coverage"]
    gaps = cov["gaps"]
    lines = [f"dcu verify: {report['programs']} programs (seeds {report['seeds'][0]}..{report['seeds'][1]}) on "
             f"{report['backend']} ({report['config']}) against the model: {report['passed']} passed, "
             f"{report['failed']} failed; {report['instructions']:,} wave-instructions in {report['seconds']} s",
             f"  opcodes: {cov['opcodes_covered']} of {cov['opcodes_generated']} generated ones ran; "
             f"{len(gaps['executable_not_generated'])} executable ones are never generated",
             "  structures: " + ", ".join(f"{k} {v}" for k, v in sorted(cov["structures"].items())),
             "  workgroups x waves: " + ", ".join(f"{k} {v}" for k, v in sorted(cov["shapes"].items()))]
    if cov["events"]:
        lines.append("  events: " + ", ".join(f"{k} {v}" for k, v in cov["events"].items()))
    if gaps["events_never_seen"] and report["backend"] != "model":
        lines.append("  events never seen: " + ", ".join(gaps["events_never_seen"]))
    for f in report["failures"][:10]:
        lines.append(f"  FAIL seed {f['seed']} ({f['groups']}x{f['waves']}): " + "; ".join(f["mismatches"][:3]))
    return "\n".join(lines)
