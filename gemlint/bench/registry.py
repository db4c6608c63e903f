"""Finds the pairs: every package under :mod:`gemlint.bench.pairs` that defines ``PAIR``."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from functools import lru_cache

import gemlint.bench.pairs
from gemlint.bench.pair import Pair

#: Rules whose claim is not about runtime cost, so they need no pair.
NO_PAIR_NEEDED = {"GEM000": "input problems (unreadable or unparsable files) have no runtime cost to measure"}


@lru_cache(maxsize=1)
def all_pairs() -> dict[str, Pair]:
    found: dict[str, Pair] = {}
    for info in pkgutil.iter_modules(gemlint.bench.pairs.__path__):
        if not info.ispkg:
            continue
        package = f"{gemlint.bench.pairs.__name__}.{info.name}"
        pair = getattr(importlib.import_module(package), "PAIR", None)
        if not isinstance(pair, Pair):
            continue
        if pair.code in found:
            raise RuntimeError(f"two benchmark pairs for {pair.code}: {found[pair.code].package} and {package}")
        found[pair.code] = dataclasses.replace(pair, package=package)
    return dict(sorted(found.items()))


def pair_for(code: str) -> Pair | None:
    return all_pairs().get(code.upper())
