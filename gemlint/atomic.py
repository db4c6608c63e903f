"""Files written whole or not at all."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator


@contextmanager
def replacing(target: Path, *, prefix: str = ".", suffix: str = ".tmp", mode: int | None = None, durable: bool = False) -> Iterator[BinaryIO]:
    """A temporary file beside ``target`` that replaces it once the block ends without error, and is removed
    otherwise: a concurrent reader sees the old content or the new, never a torn one, and the rename replaces a
    link itself, never writes through it. ``mode`` is given to the new file; ``durable`` syncs it to disk first."""
    import tempfile  # imported by a run that writes (a warm run over an unchanged project writes nothing)

    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_whole(target: Path, data: bytes, prefix: str = ".") -> None:
    """Write ``data`` to ``target`` through :func:`replacing`."""
    with replacing(target, prefix=prefix) as stream:
        stream.write(data)
