"""Every rule's metadata as a run selects it, as data: a run whose files all come from the cache selects the
rules with it without importing LibCST, any rule or the triage. Generated from the rules' metadata; do not edit.
Regenerate with
``python -c "from gemlint.registry import rule_table_source as t; print(t(), end='')" > gemlint/rules/rule_table.py``
(tests/test_triage.py checks that it is current)."""

from gemlint.languages import Language
from gemlint.selection import RuleEntry

RULES = (
    RuleEntry('GEM000', 'parse-error', False, frozenset({Language.DOCKERFILE, Language.NATIVE, Language.NOTEBOOK, Language.PYTHON, Language.TRITON, Language.YAML}), False, False, False, False),
    RuleEntry('GEM101', 'forward-without-no-grad', False, frozenset({Language.PYTHON}), True, False, True, False),
    RuleEntry('GEM102', 'missing-eval', False, frozenset({Language.PYTHON}), True, False, True, False),
    RuleEntry('GEM103', 'train-mode-in-inference', False, frozenset({Language.PYTHON}), True, False, True, False),
    RuleEntry('GEM104', 'retain-graph-misuse', False, frozenset({Language.PYTHON}), True, True, False, False),
    RuleEntry('GEM201', 'static-max-length-padding', False, frozenset({Language.PYTHON}), False, False, False, False),
    RuleEntry('GEM202', 'no-warmup-before-serving', True, frozenset({Language.PYTHON}), False, False, False, False),
    RuleEntry('GEM301', 'device-memory-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False, False),
    RuleEntry('GEM302', 'host-memory-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False, False),
    RuleEntry('GEM303', 'mismatched-release', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False, False),
    RuleEntry('GEM304', 'cuda-graph-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False, False),
    RuleEntry('GEM305', 'unterminated-stream-capture', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False, False),
    RuleEntry('GEM306', 'cuda-handle-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False, False),
    RuleEntry('GEM307', 'default-stream-async-copy', False, frozenset({Language.NATIVE}), False, False, False, False),
    RuleEntry('GEM401', 'leftover-profiler', False, frozenset({Language.PYTHON}), False, False, False, False),
    RuleEntry('GEM402', 'anomaly-detection-enabled', False, frozenset({Language.PYTHON}), False, False, False, False),
    RuleEntry('GEM403', 'verbose-framework-logging', False, frozenset({Language.PYTHON}), False, False, False, False),
    RuleEntry('GEM404', 'cuda-launch-blocking', False, frozenset({Language.DOCKERFILE, Language.PYTHON, Language.YAML}), False, False, False, False),
    RuleEntry('GEM501', 'ort-optimization-disabled', False, frozenset({Language.NATIVE, Language.PYTHON}), False, True, False, False),
    RuleEntry('GEM502', 'model-loaded-per-request', False, frozenset({Language.PYTHON}), False, False, True, False),
    RuleEntry('GEM503', 'compile-per-request', False, frozenset({Language.PYTHON}), False, False, False, False),
    RuleEntry('GEM601', 'liveness-probe-runs-forward', False, frozenset({Language.DOCKERFILE, Language.YAML}), False, True, False, True),
    RuleEntry('GEM602', 'health-endpoint-runs-forward', False, frozenset({Language.PYTHON}), False, True, False, True),
    RuleEntry('GEM603', 'dynamic-batching-disabled', True, frozenset({Language.TRITON}), False, False, False, False),
    RuleEntry('GEM604', 'gpu-container-host-memory', True, frozenset({Language.YAML}), False, False, False, False),
    RuleEntry('GEM605', 'multi-gpu-without-shared-memory', False, frozenset({Language.YAML}), False, False, False, False),
)
