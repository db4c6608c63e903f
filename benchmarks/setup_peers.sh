#!/usr/bin/env bash
# Create the peer tools' virtual environments for compare.py under $PERF (scratch; not in the repository).
#   benchmarks/setup_peers.sh            default PERF: ${GEMLINT_PERF:-$HOME/.cache/gemlint-perf}
# torchfix pins an older libcst, so each peer gets its own venv.
set -euo pipefail
PERF=${GEMLINT_PERF:-$HOME/.cache/gemlint-perf}
mkdir -p "$PERF"
make_venv() {  # name packages...
  local name=$1; shift
  [[ -x $PERF/$name/bin/python ]] && return
  python3 -m venv "$PERF/$name"
  "$PERF/$name/bin/pip" install -q "$@"
}
make_venv ruff "ruff==0.17.5"
make_venv flake8 "flake8==7.5.0"
make_venv fixit "fixit==2.2.1"
make_venv torchfix "torchfix==0.7.0"
echo "peer venvs ready in $PERF"
