"""The project model layer: the whole project root, indexed once per run, above the per-file analyses.

:mod:`gemlint.project.files` finds the project's modules and parses them on demand,
:mod:`gemlint.project.summary` and :mod:`gemlint.project.model` index and resolve them across modules,
:mod:`gemlint.project.reach` follows calls to forward passes (GEM601/GEM602), asking the astroid call graph
(:mod:`gemlint.project.call_graph`) only what LibCST cannot tell, and
:mod:`gemlint.project.health_checks` matches health checks to the handlers they reach.
"""
