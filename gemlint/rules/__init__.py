"""gemlint's rules: one module per rule (or tight rule family), found by :func:`gemlint.registry.all_rules`."""
