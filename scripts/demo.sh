#!/usr/bin/env bash
# Set up the environment, then run one demo kernel end to end (dcu.demo).
# Usage: bash scripts/demo.sh [demo args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh --quiet
exec "$ROOT/.venv/bin/python" -m dcu.demo "$@"
