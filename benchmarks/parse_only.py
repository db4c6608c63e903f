"""Baselines for compare.py and ecosystem/check.py: parse files under the given paths, nothing else.

``libcst`` and ``ast`` parse every .py file with that parser. ``frontends`` parses every file gemlint reads
with the parser its front-end uses, the parse gemlint cannot avoid: LibCST for Python, tree-sitter (the C
grammar for .c, the CUDA grammar, a superset of C++, for the rest) for C/C++/CUDA, and PyYAML's safe
composer (its C one where built) for YAML. Usage: ``parse_only.py MODE PATH...``.
"""

from __future__ import annotations

import ast
import os
import sys

import libcst

NATIVE = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp", ".cu", ".cuh")
YAML = (".yaml", ".yml")


def _native_parsers() -> dict[str, object]:
    import tree_sitter
    import tree_sitter_c
    import tree_sitter_cuda

    return {
        "c": tree_sitter.Parser(tree_sitter.Language(tree_sitter_c.language())),
        "cuda": tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language())),
    }


def _parse_one(mode: str, path: str, data: bytes, native: dict[str, object]) -> None:
    if path.endswith(".py"):
        libcst.parse_module(data) if mode != "ast" else ast.parse(data)
    elif path.lower().endswith(NATIVE):
        native["c" if path.lower().endswith(".c") else "cuda"].parse(data)  # type: ignore[attr-defined]
    elif path.lower().endswith(YAML):
        import yaml

        list(yaml.compose_all(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def main() -> int:
    mode, *paths = sys.argv[1:]
    suffixes = (".py", *NATIVE, *YAML) if mode == "frontends" else (".py",)
    native = _native_parsers() if mode == "frontends" else {}
    failures = 0
    for top in paths:
        files = [top] if os.path.isfile(top) else [
            os.path.join(d, f) for d, _, names in os.walk(top) for f in names if f.lower().endswith(suffixes)
        ]
        for path in files:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
                _parse_one(mode, path, data, native)
            except Exception:  # unreadable (a dangling link) or not parseable: counted, as a parse error
                failures += 1
    print(f"{mode}: {failures} failures", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
