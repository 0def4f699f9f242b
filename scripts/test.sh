#!/usr/bin/env bash
# Set up (quietly, fast when already done) and run the test suite.
# Usage: bash scripts/test.sh [pytest args...]   (default: -q -m 'not slow' --durations=25, and -n 2 when
# pytest-xdist is present)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh --quiet || { echo "test.sh: setup failed" >&2; exit 1; }
PY="$ROOT/.venv/bin/python"
# Default: the CI set (tests marked slow are the long RTL campaigns: run them with -m slow).
if [ "$#" -eq 0 ]; then
    # --durations: the slowest tests, for keeping the set's time in check
    set -- -q -m "not slow" --durations=25
    # loadgroup: tests that share one expensive build (xdist_group) stay on one worker
    if "$PY" -c 'import xdist' >/dev/null 2>&1; then set -- "$@" -n 2 --dist loadgroup; fi
fi
"$PY" -m pytest "$@"
rc=$?
# pytest exits 5 when it collected no tests: that is a failure for CI, not a pass.
if [ "$rc" -eq 5 ]; then echo "test.sh: no tests were collected" >&2; fi
exit "$rc"
