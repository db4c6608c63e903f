"""gemlint's language server (``gemlint server``); needs the ``lsp`` extra (pygls)."""

from __future__ import annotations

MISSING = "gemlint server needs pygls: pip install 'gemlint[lsp]'"


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("pygls") is not None


def main() -> None:
    """Serve the Language Server Protocol on stdin/stdout until the editor closes the connection."""
    from gemlint.server.protocol import serve

    serve()
