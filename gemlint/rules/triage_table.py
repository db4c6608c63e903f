"""Every rule's metadata as a run selects it, and each Python rule's triage, as data: a run whose files all
come from the cache selects the rules with it, and the flake8 plugin rules a file out with it, without
importing LibCST or any rule. Generated from the rules' metadata; do not edit. Regenerate with
``python -c "from gemlint.registry import triage_table_source as t; print(t(), end='')" > gemlint/rules/triage_table.py``
(tests/test_triage.py checks that it is current)."""

from gemlint.analysis.triage import (
    AllOf,
    AnyOf,
    CallsProjectLoader,
    DefinesFunctions,
    Imports,
    InferenceContext,
    RuleTriage,
    Spelled,
    WritesEnvironment,
)
from gemlint.languages import Language
from gemlint.selection import RuleEntry

RULES = (
    RuleEntry('GEM000', 'parse-error', False, frozenset({Language.DOCKERFILE, Language.NATIVE, Language.NOTEBOOK, Language.PYTHON, Language.TRITON, Language.YAML}), False, False, False),
    RuleEntry('GEM101', 'forward-without-no-grad', False, frozenset({Language.PYTHON}), True, False, True),
    RuleEntry('GEM102', 'missing-eval', False, frozenset({Language.PYTHON}), True, False, True),
    RuleEntry('GEM103', 'train-mode-in-inference', False, frozenset({Language.PYTHON}), True, False, True),
    RuleEntry('GEM104', 'retain-graph-misuse', False, frozenset({Language.PYTHON}), True, True, False),
    RuleEntry('GEM201', 'static-max-length-padding', False, frozenset({Language.PYTHON}), False, False, False),
    RuleEntry('GEM202', 'no-warmup-before-serving', True, frozenset({Language.PYTHON}), False, False, False),
    RuleEntry('GEM301', 'device-memory-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False),
    RuleEntry('GEM302', 'host-memory-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False),
    RuleEntry('GEM303', 'mismatched-release', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False),
    RuleEntry('GEM304', 'cuda-graph-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False),
    RuleEntry('GEM305', 'unterminated-stream-capture', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False),
    RuleEntry('GEM306', 'cuda-handle-leak', False, frozenset({Language.NATIVE, Language.PYTHON}), True, False, False),
    RuleEntry('GEM307', 'default-stream-async-copy', False, frozenset({Language.NATIVE}), False, False, False),
    RuleEntry('GEM401', 'leftover-profiler', False, frozenset({Language.PYTHON}), False, False, False),
    RuleEntry('GEM402', 'anomaly-detection-enabled', False, frozenset({Language.PYTHON}), False, False, False),
    RuleEntry('GEM403', 'verbose-framework-logging', False, frozenset({Language.PYTHON}), False, False, False),
    RuleEntry('GEM404', 'cuda-launch-blocking', False, frozenset({Language.DOCKERFILE, Language.PYTHON, Language.YAML}), False, False, False),
    RuleEntry('GEM501', 'ort-optimization-disabled', False, frozenset({Language.NATIVE, Language.PYTHON}), False, True, False),
    RuleEntry('GEM502', 'model-loaded-per-request', False, frozenset({Language.PYTHON}), False, False, True),
    RuleEntry('GEM503', 'compile-per-request', False, frozenset({Language.PYTHON}), False, False, False),
    RuleEntry('GEM601', 'liveness-probe-runs-forward', False, frozenset({Language.DOCKERFILE, Language.YAML}), False, True, False),
    RuleEntry('GEM602', 'health-endpoint-runs-forward', False, frozenset({Language.PYTHON}), False, True, False),
    RuleEntry('GEM603', 'dynamic-batching-disabled', True, frozenset({Language.TRITON}), False, False, False),
    RuleEntry('GEM604', 'gpu-container-host-memory', True, frozenset({Language.YAML}), False, False, False),
    RuleEntry('GEM605', 'multi-gpu-without-shared-memory', False, frozenset({Language.YAML}), False, False, False),
)

PYTHON_RULES = (
    RuleTriage('GEM101', False, (('torch', 'transformers', 'diffusers', 'timm', 'lightning', '.eval(', '.parameters(', 'state_dict', 'named_modules', 'BaseHandler'),), InferenceContext()),
    RuleTriage('GEM102', False, (('torch', 'timm', 'transformers', 'diffusers', 'lightning', 'load_state_dict'),), InferenceContext()),
    RuleTriage('GEM103', False, (('.train(',),), AllOf((Spelled('calls', ('train',)), InferenceContext()))),
    RuleTriage('GEM104', False, (('retain_graph',),), Spelled('keywords', ('retain_graph',))),
    RuleTriage('GEM201', False, (('"max_length"', "'max_length'", 'MAX_LENGTH', 'pad_to_max_length'),), AllOf((Spelled('keywords', ('pad_to_max_length', 'padding')), InferenceContext()))),
    RuleTriage('GEM202', True, (('import aiohttp', 'from aiohttp', 'import bentoml', 'from bentoml', 'import bottle', 'from bottle', 'import connexion', 'from connexion', 'import django', 'from django', 'import falcon', 'from falcon', 'import fastapi', 'from fastapi', 'import flask', 'from flask', 'import litestar', 'from litestar', 'import quart', 'from quart', 'import robyn', 'from robyn', 'import sanic', 'from sanic', 'import starlette', 'from starlette', 'import tornado', 'from tornado', 'import cog', 'from cog', 'import ts', 'from ts', 'import kserve', 'from kserve', 'import litserve', 'from litserve', 'import mlserver', 'from mlserver', 'import mosec', 'from mosec', 'import ray', 'from ray', 'import triton_python_backend_utils', 'from triton_python_backend_utils', 'TritonPythonModel', 'check_health'),), Spelled('calls', ('CrossEncoder', 'Generator', 'InferenceSession', 'LLM', 'Llama', 'SentencePieceProcessor', 'SentenceTransformer', 'SparseEncoder', 'Translator', 'WhisperModel', 'YOLO', 'from_file', 'from_pretrained', 'from_single_file', 'load', 'load_model', 'load_pickle', 'pipeline'))),
    RuleTriage('GEM301', False, (('from cuda import', 'cuda.bindings', 'cuda.cudart', 'from cuda.cuda', 'import cuda.cuda', 'import cupy', 'from cupy', 'cupy_backends'), ('cuMemAlloc', 'cudaMalloc', 'malloc')), AllOf(())),
    RuleTriage('GEM302', False, (('from cuda import', 'cuda.bindings', 'cuda.cudart', 'from cuda.cuda', 'import cuda.cuda', 'import cupy', 'from cupy', 'cupy_backends'), ('cuMemAllocHost', 'cuMemHostAlloc', 'cudaHostAlloc', 'cudaMallocHost', 'hostAlloc')), AllOf(())),
    RuleTriage('GEM303', False, (('from cuda import', 'cuda.bindings', 'cuda.cudart', 'from cuda.cuda', 'import cuda.cuda', 'import cupy', 'from cupy', 'cupy_backends'), ('cuMemFree', 'cudaFree', 'free')), AllOf(())),
    RuleTriage('GEM304', False, (('from cuda import', 'cuda.bindings', 'cuda.cudart', 'from cuda.cuda', 'import cuda.cuda', 'import cupy', 'from cupy', 'cupy_backends'), ('cuGraphClone', 'cuGraphCreate', 'cuGraphInstantiate', 'cuStreamEndCapture', 'cudaGraphClone', 'cudaGraphCreate', 'cudaGraphInstantiate', 'cudaStreamEndCapture', 'graphInstantiate', 'streamEndCapture')), AllOf(())),
    RuleTriage('GEM305', False, (('from cuda import', 'cuda.bindings', 'cuda.cudart', 'from cuda.cuda', 'import cuda.cuda', 'import cupy', 'from cupy', 'cupy_backends'), ('cuStreamBeginCapture', 'cudaStreamBeginCapture', 'streamBeginCapture')), AllOf(())),
    RuleTriage('GEM306', False, (('from cuda import', 'cuda.bindings', 'cuda.cudart', 'from cuda.cuda', 'import cuda.cuda', 'import cupy', 'from cupy', 'cupy_backends'), ('cuEventCreate', 'cuStreamCreate', 'cudaEventCreate', 'cudaStreamCreate', 'eventCreate', 'streamCreate')), AllOf(())),
    RuleTriage('GEM401', False, (('profile', 'emit_nvtx', 'start_trace', 'jax.profiler'),), Spelled('calls', ('Profile', 'emit_nvtx', 'profile', 'run', 'runctx', 'start', 'start_trace', 'trace'))),
    RuleTriage('GEM402', False, (('anomaly',),), AnyOf((Spelled('calls', ('detect_anomaly', 'set_detect_anomaly')), Spelled('decorators', ('detect_anomaly', 'set_detect_anomaly'))))),
    RuleTriage('GEM403', False, (('setLevel', 'set_logs', 'TORCH_LOGS', 'TORCH_COMPILE_DEBUG', 'NCCL_DEBUG', '_dynamo', '_inductor'),), AnyOf((AnyOf((Spelled('calls', ('setLevel', 'set_logs')), Spelled('assigned', ('debug', 'enabled', 'log_level', 'output_code', 'verbose')))), WritesEnvironment(('NCCL_DEBUG', 'TORCH_COMPILE_DEBUG', 'TORCH_LOGS'))))),
    RuleTriage('GEM404', False, (('CUDA_LAUNCH_BLOCKING',),), WritesEnvironment(('CUDA_LAUNCH_BLOCKING',))),
    RuleTriage('GEM501', False, (('graph_optimization_level',),), Spelled('assigned', ('graph_optimization_level',))),
    RuleTriage('GEM502', False, (('import aiohttp', 'from aiohttp', 'import bentoml', 'from bentoml', 'import bottle', 'from bottle', 'import connexion', 'from connexion', 'import django', 'from django', 'import falcon', 'from falcon', 'import fastapi', 'from fastapi', 'import flask', 'from flask', 'import litestar', 'from litestar', 'import quart', 'from quart', 'import robyn', 'from robyn', 'import sanic', 'from sanic', 'import starlette', 'from starlette', 'import tornado', 'from tornado', 'import cog', 'from cog', 'import ts', 'from ts', 'import kserve', 'from kserve', 'import litserve', 'from litserve', 'import mlserver', 'from mlserver', 'import mosec', 'from mosec', 'import ray', 'from ray', 'import triton_python_backend_utils', 'from triton_python_backend_utils', 'TritonPythonModel', 'check_health', 'import gradio', 'from gradio', 'import streamlit', 'from streamlit'),), AllOf((DefinesFunctions(), AnyOf((Spelled('calls', ('CrossEncoder', 'Generator', 'InferenceSession', 'LLM', 'Llama', 'SentencePieceProcessor', 'SentenceTransformer', 'SparseEncoder', 'Translator', 'WhisperModel', 'YOLO', 'from_file', 'from_pretrained', 'from_single_file', 'load', 'load_model', 'load_pickle', 'pipeline')), CallsProjectLoader()))))),
    RuleTriage('GEM503', False, (('import aiohttp', 'from aiohttp', 'import bentoml', 'from bentoml', 'import bottle', 'from bottle', 'import connexion', 'from connexion', 'import django', 'from django', 'import falcon', 'from falcon', 'import fastapi', 'from fastapi', 'import flask', 'from flask', 'import litestar', 'from litestar', 'import quart', 'from quart', 'import robyn', 'from robyn', 'import sanic', 'from sanic', 'import starlette', 'from starlette', 'import tornado', 'from tornado', 'import cog', 'from cog', 'import ts', 'from ts', 'import kserve', 'from kserve', 'import litserve', 'from litserve', 'import mlserver', 'from mlserver', 'import mosec', 'from mosec', 'import ray', 'from ray', 'import triton_python_backend_utils', 'from triton_python_backend_utils', 'TritonPythonModel', 'check_health'),), AllOf((DefinesFunctions(), Spelled('calls', ('build_engine', 'build_serialized_network', 'compile', 'dynamo_export', 'export', 'script', 'trace', 'trace_module'))))),
    RuleTriage('GEM602', False, (('import aiohttp', 'from aiohttp', 'import bentoml', 'from bentoml', 'import bottle', 'from bottle', 'import connexion', 'from connexion', 'import django', 'from django', 'import falcon', 'from falcon', 'import fastapi', 'from fastapi', 'import flask', 'from flask', 'import litestar', 'from litestar', 'import quart', 'from quart', 'import robyn', 'from robyn', 'import sanic', 'from sanic', 'import starlette', 'from starlette', 'import tornado', 'from tornado', 'import cog', 'from cog', 'import ts', 'from ts', 'import kserve', 'from kserve', 'import litserve', 'from litserve', 'import mlserver', 'from mlserver', 'import mosec', 'from mosec', 'import ray', 'from ray', 'import triton_python_backend_utils', 'from triton_python_backend_utils', 'TritonPythonModel', 'check_health'),), Imports(('aiohttp', 'bentoml', 'bottle', 'connexion', 'django', 'falcon', 'fastapi', 'flask', 'litestar', 'litserve', 'quart', 'ray', 'robyn', 'sanic', 'starlette', 'tornado'))),
)
