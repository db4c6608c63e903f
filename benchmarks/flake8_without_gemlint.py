"""flake8 as it runs without the gemlint plugin installed (compare.py's baseline for the plugin's start-up):
the same interpreter and flake8, with gemlint's entry point left out of plugin discovery."""

from __future__ import annotations

import sys

from flake8.main.cli import main
from flake8.plugins import finder

_found = finder._find_importlib_plugins


def _without_gemlint():
    return (plugin for plugin in _found() if plugin.package != "gemlint")


finder._find_importlib_plugins = _without_gemlint

if __name__ == "__main__":
    sys.exit(main())
