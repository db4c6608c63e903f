"""How large a Python module gemlint parses with LibCST (read by those that decide, before importing LibCST)."""

#: Characters above which a module is syntax-checked (with ``ast``) but not parsed by LibCST: the parse takes about
#: 220 bytes of memory per character at its peak (300 MiB for a 1.3 MB module), and the analyses more on top. Such
#: modules are rare (three in the ecosystem set, all over 1 MB) and are named in the run's notes; Semgrep skips
#: targets over 1 MB by default for the same reason.
MAX_ANALYSED_CHARS = 1_000_000
