"""gemlint's version (the one place it is written) and a digest of its own code."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__version__ = "0.1.0"


@lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of gemlint's own Python sources: cached results of an edited rule or analysis are never
    served, even when the version string stays the same."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=16)
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            continue
    return digest.hexdigest()
