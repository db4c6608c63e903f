#!/usr/bin/env bash
# Download pinned real-world packages to lint (speed measurements, crash hunting,
# false-positive review). They land OUTSIDE the repository: never commit them.
#
#   bash benchmarks/corpus.sh [DEST]        default DEST: ${GEMLINT_CORPUS:-$HOME/.cache/gemlint-corpus}
#
# Result: DEST/<name>/ holds each unpacked package. Re-running is cheap (kept if present).
set -euo pipefail
DEST=${1:-${GEMLINT_CORPUS:-$HOME/.cache/gemlint-corpus}}
mkdir -p "$DEST/dl"
# name==version  kind(wheel|sdist)
PINS=(
  "transformers==5.24.0 wheel"   # ~400k lines of model code: the main speed corpus
  "diffusers==0.42.1 wheel"
)
for pin in "${PINS[@]}"; do
  spec=${pin% *}; kind=${pin#* }; name=${spec%%==*}
  [[ -d $DEST/$name ]] && continue
  if [[ $kind == wheel ]]; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$DEST/dl" "$spec"
    f=$(ls "$DEST"/dl/"${name//-/_}"-*.whl "$DEST"/dl/"$name"-*.whl 2>/dev/null | head -n 1)
    mkdir -p "$DEST/$name.tmp" && python3 -m zipfile -e "$f" "$DEST/$name.tmp"
  else
    python3 -m pip download -q --no-deps --no-binary=:all: -d "$DEST/dl" "$spec"
    f=$(ls "$DEST"/dl/"$name"-*.tar.gz "$DEST"/dl/"${name//-/_}"-*.tar.gz 2>/dev/null | head -n 1)
    mkdir -p "$DEST/$name.tmp" && tar -xzf "$f" -C "$DEST/$name.tmp"
  fi
  mv "$DEST/$name.tmp" "$DEST/$name"
done
find "$DEST" -maxdepth 1 -mindepth 1 -type d ! -name dl | while read -r d; do
  printf '%-14s %6d .py files  %8d lines\n' "$(basename "$d")" \
    "$(find "$d" -name '*.py' | wc -l)" "$(find "$d" -name '*.py' -exec cat {} + | wc -l)"
done
