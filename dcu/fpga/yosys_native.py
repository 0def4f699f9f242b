"""``dcu-yosys``: Yosys's command line over pyosys, PyPI's native build of Yosys.

The YoWASP Yosys is WebAssembly, so it stops at 4 GiB: the whole ``fpga`` DCU, even one
SIMD through ABC, did not fit it (docs/fpga.md). pyosys is the same Yosys release compiled
for the machine, as a Python extension with its own ``yosys-abc``; it has no ``yosys``
program, so this module is one, for the command lines the project runs (amaranth's ECP5
build script and :func:`dcu.fpga.flow.synth_block`)::

    dcu-yosys [-q] [-l LOGFILE] [-p COMMANDS] [SCRIPT.ys ...]

``-q`` prints nothing but errors, ``-l`` writes the whole log to ``LOGFILE``, ``-p`` runs
commands before the scripts. A failing command exits 1 with Yosys's error on stderr.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

__all__ = ["available", "main"]


def available() -> bool:
    """pyosys is installed (a project dependency: ``pip install -e .``)."""
    try:
        import pyosys  # noqa: F401
    except ImportError:
        return False
    return True


def _run(commands: list[str], log: str, quiet: bool) -> None:
    """Run ``commands`` on a new design, logging to ``log``; Yosys exits the process on an error."""
    from pyosys import libyosys as ys
    if quiet:   # run_pass prints each command's header on stdout, whatever ``tee -q`` does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    design = ys.Design()
    for cmd in commands:   # ``tee`` routes a command's log into the file and (-q) off the console
        ys.run_pass(f"tee {'-q ' if quiet else ''}-a {log} {cmd}", design)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="dcu-yosys", description="Yosys over pyosys (native)")
    ap.add_argument("-q", action="store_true", help="print nothing but errors")
    ap.add_argument("-l", metavar="LOGFILE", help="write the log there")
    ap.add_argument("-p", metavar="COMMANDS", action="append", default=[], help="run these first")
    ap.add_argument("scripts", nargs="*", metavar="SCRIPT")
    args = ap.parse_args(argv)
    if not available():
        print("dcu-yosys: pyosys is not installed; install it with: .venv/bin/pip install -e .",
              file=sys.stderr)
        return 1
    log = args.l or tempfile.mkstemp(prefix="dcu-yosys-", suffix=".log")[1]
    open(log, "w").close()
    sys.stdout.flush()
    # Yosys ends the process on an error (its log_error exits), so it runs in a child and
    # this process reports the error from the log.
    pid = os.fork()
    if pid == 0:
        try:
            _run(args.p + [f"script {s}" for s in args.scripts], log, args.q)
        except BaseException as e:   # noqa: BLE001 -- any failure is the child's exit status
            print(f"dcu-yosys: {e}", file=sys.stderr)
            os._exit(1)
        sys.stdout.flush()
        os._exit(0)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if status != 0:
        with open(log, errors="replace") as f:
            errors = [line.rstrip() for line in f if line.startswith("ERROR")]
        print("\n".join(errors) or f"dcu-yosys: Yosys stopped (status {status}); log: {log}", file=sys.stderr)
    if not args.l:
        os.unlink(log)
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
