"""One package per rule: ``<code>/__init__.py`` (``PAIR``), the bad and good variants, ``measure.py``."""
