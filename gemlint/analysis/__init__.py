"""Shared semantic analyses of SPEC §2, computed once per file and used by every rule that asks.

Rules never re-derive these facts: they ask :class:`gemlint.analysis.module.ModuleAnalysis`
(available as ``self.context.analysis``) whether a node runs in inference or
training context, whether it is guarded by a flag or a grad-free guard, and
what a name is bound to.
"""
