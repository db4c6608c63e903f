"""Baselines for compare.py: parse every .py file under the given paths with LibCST or ast, nothing else."""

from __future__ import annotations

import ast
import os
import sys

import libcst


def main() -> int:
    mode, *paths = sys.argv[1:]
    failures = 0
    for top in paths:
        files = [top] if os.path.isfile(top) else [
            os.path.join(d, f) for d, _, names in os.walk(top) for f in names if f.endswith(".py")
        ]
        for path in files:
            with open(path, "rb") as handle:
                data = handle.read()
            try:
                libcst.parse_module(data) if mode == "libcst" else ast.parse(data)
            except Exception:
                failures += 1
    print(f"{mode}: {failures} failures", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
