"""What the serving, training and web frameworks look like to the analyses: the data, kept apart from the logic."""

from __future__ import annotations

import re

# Top-level modules whose import makes `@x.get(...)`-style decorators HTTP routes.
#: Frameworks with modules of their own (``mlx.nn.Module``, ``flax.linen.Module``, ``keras.Model``): their
#: models have no torch autograd tape and no torch train/eval mode.
#: Terminal names of calls that may be training steps (checked precisely later).
TRAINING_CANDIDATES = frozenset({"backward", "zero_grad", "step", "grad", "GradScaler"})
OTHER_FRAMEWORKS = (
    "mlx.", "flax.", "jax.", "haiku.", "equinox.", "tensorflow.", "keras.", "tf_keras.", "paddle.", "mindspore.", "oneflow.",
    "megengine.", "jittor.", "nvtripy.", "MNN.",
)


def other_framework_base(name: str) -> bool:
    """The qualified name of a base class that makes its subclasses another framework's modules: a class of one
    of :data:`OTHER_FRAMEWORKS`, or a ``Module`` class of any package but torch (``nvtripy.Module``,
    ``jittor.Module``)."""
    return name.startswith(OTHER_FRAMEWORKS) or (name.rsplit(".", 1)[-1] == "Module" and "." in name and not name.startswith("torch."))


_OTHER_FRAMEWORK_HUB_CLASS = re.compile(r"(TF|Flax)[A-Z]")


def other_framework_hub_class(name: str) -> bool:
    """A hub library's TensorFlow or JAX class (``transformers.TFBertModel``, ``transformers.FlaxAutoModel``,
    ``diffusers.FlaxUNet2DConditionModel``): the same models as the torch classes, without torch."""
    return name.startswith(PRETRAINED_PACKAGES) and bool(_OTHER_FRAMEWORK_HUB_CLASS.match(name.rsplit(".", 1)[-1]))


#: Calls of FLOP, MAC and parameter counters: code that runs a model to measure it, not to serve.
COUNTING_CALLS = (
    "torch.utils.flop_counter.", "fvcore.nn.", "thop.", "ptflops.", "calflops.", "deepspeed.profiling.", "torchinfo.", "torchprofile.",
    "torchsummary.", "torchstat.",
)
#: Exporters, and post-training quantizers with their calibration (ModelOpt's `mtq.quantize(model, cfg,
#: forward_loop=calibrate)`, torch.ao's prepare steps): a function that calls one runs the model to trace, export or
#: calibrate it, not to serve.
EXPORT_CALLS = frozenset({
    "torch.jit.trace", "torch.jit.script", "torch.jit.trace_module", "torch.onnx.export", "torch.onnx._export", "torch.onnx.dynamo_export",
    "torch.export.export", "torch.export.export_for_training", "torch._export.capture_pre_autograd_graph", "torch_tensorrt.compile",
    "coremltools.convert", "torch2trt.torch2trt", "executorch.exir.to_edge", "executorch.exir.to_edge_transform_and_lower",
    "modelopt.torch.quantization.quantize", "modelopt.torch.quantization.model_quant.quantize",
    "modelopt.torch.export.export_hf_checkpoint", "modelopt.torch.export.unified_export_hf.export_hf_checkpoint",
    "torch.ao.quantization.quantize_fx.prepare_fx", "torch.ao.quantization.quantize_pt2e.prepare_pt2e",
})
#: The packages those counters come from (a module that imports none calls none).
COUNTING_PACKAGES = (
    "torch.utils.flop_counter", "fvcore", "thop", "ptflops", "calflops", "deepspeed.profiling", "torchinfo", "torchprofile", "torchsummary",
    "torchstat",
)
#: How the exporters are spelled at a call (``torch.jit.trace``, ``jit.trace``, ``onnx.export``): only such calls
#: are resolved (a bare ``trace`` imported from ``torch.jit`` is not looked at).
EXPORT_SPELLINGS = (
    "jit.trace", "jit.script", "jit.trace_module", "onnx.export", "onnx._export", "onnx.dynamo_export", "export.export",
    "torch_tensorrt.compile", "coremltools.convert", "ct.convert", "export_for_training", "capture_pre_autograd_graph", "torch2trt",
    "to_edge", "to_edge_transform_and_lower", "mtq.quantize", "quantization.quantize", "export_hf_checkpoint", "prepare_fx", "prepare_pt2e",
)
#: The terminal names of those calls (``FlopCounterMode``, ``trace``): what a call must be spelled as to be one.
COUNTING_AND_EXPORT_NAMES = frozenset({
    "FlopCounterMode", "FlopCountAnalysis", "flop_count", "parameter_count", "parameter_count_table", "profile",
    "clever_format", "get_model_complexity_info", "calculate_flops", "get_model_profile", "summary", "profile_macs", "stat",
    "trace", "script", "trace_module", "export", "_export", "dynamo_export", "compile", "convert", "export_for_training",
    "capture_pre_autograd_graph", "torch2trt", "to_edge", "to_edge_transform_and_lower", "quantize", "export_hf_checkpoint", "prepare_fx",
    "prepare_pt2e",
})
#: Inference engines that run compiled graphs outside torch: an nn.Module that only wraps one (a TensorRT or
#: ONNX Runtime session behind ``forward``) has no parameters for autograd to record.
OUTSIDE_TORCH_ENGINES = frozenset({"tensorrt", "onnxruntime", "openvino", "tritonclient", "pycuda", "polygraphy"})
#: Calls that put a module into an attribute (besides ``torch.nn`` classes and the project's model classes).
MODULE_LOADING_CALLS = frozenset({"torch.load", "torch.jit.load", "torch.hub.load", "torch.compile"})
#: Hub repositories whose entry points return a wrapper that runs its model without gradients: YOLOv5's
#: ``AutoShape``, whose ``forward`` runs under ``torch.no_grad()`` (``smart_inference_mode()`` in later releases);
#: ``autoshape=False`` returns the bare model.
SELF_GUARDED_HUB_REPOS = frozenset({"ultralytics/yolov5"})
#: Demo-app frameworks that call the app's code on every interaction (:mod:`gemlint.analysis.apps`).
APP_FRAMEWORKS = frozenset({"gradio", "streamlit"})
WEB_FRAMEWORKS = frozenset(
    {
        "fastapi",
        "starlette",
        "flask",
        "quart",
        "aiohttp",
        "sanic",
        "tornado",
        "django",
        "litestar",
        "bottle",
        "falcon",
        "connexion",
        "robyn",
        "bentoml",
    }
)

# Decorator attribute names that register a route handler (FastAPI, Flask/Quart, Sanic, aiohttp RouteTableDef, ...).
ROUTE_DECORATORS = frozenset(
    {
        "get",
        "post",
        "put",
        "delete",
        "patch",
        "head",
        "options",
        "route",
        "api_route",
        "websocket",
        "websocket_route",
        "view",
    }
)

# The methods of a class-based resource that handle a request of that HTTP method (flask-restx's `Resource`
# registered with `@api.route("/x")`).
HTTP_VERB_METHODS = frozenset({"get", "post", "put", "delete", "patch", "head", "options"})

# Keyword names under which registrations pass the handler.
ROUTE_HANDLER_KEYWORDS = frozenset({"endpoint", "view_func", "handler", "view"})

# Base classes whose methods are per-request hooks: qualified-name suffix -> hook methods (None: every public method).
HOOK_BASES: dict[str, frozenset[str] | None] = {
    # TorchServe
    "ts.torch_handler.base_handler.BaseHandler": frozenset({"handle", "inference", "preprocess", "postprocess"}),
    # KServe
    "kserve.Model": frozenset({"predict", "preprocess", "postprocess", "explain", "__call__"}),
    "kserve.model.Model": frozenset({"predict", "preprocess", "postprocess", "explain", "__call__"}),
    # KFServing, KServe's name before 0.7, whose model class was `KFModel`
    "kfserving.KFModel": frozenset({"predict", "preprocess", "postprocess", "explain"}),
    "kfserving.kfmodel.KFModel": frozenset({"predict", "preprocess", "postprocess", "explain"}),
    # LitServe
    "litserve.LitAPI": frozenset({"predict", "decode_request", "encode_response", "batch", "unbatch"}),
    "litserve.api.LitAPI": frozenset({"predict", "decode_request", "encode_response", "batch", "unbatch"}),
    # Cog
    "cog.BasePredictor": frozenset({"predict"}),
    "cog.predictor.BasePredictor": frozenset({"predict"}),
    # Cog's first API (``class Predictor(cog.Predictor)`` with ``@cog.input`` arguments)
    "cog.Predictor": frozenset({"predict"}),
    # Cog's current API: ``run`` per prediction (``predict`` still accepted)
    "cog.BaseRunner": frozenset({"run", "predict"}),
    "cog.predictor.BaseRunner": frozenset({"run", "predict"}),
    # MLServer
    "mlserver.MLModel": frozenset({"predict", "predict_stream"}),
    "mlserver.model.MLModel": frozenset({"predict", "predict_stream"}),
    # Mosec: each worker process runs `forward` per batch (`deserialize`/`serialize` per request)
    "mosec.Worker": frozenset({"forward", "deserialize", "serialize"}),
    "mosec.worker.Worker": frozenset({"forward", "deserialize", "serialize"}),
    # Tornado, Django and aiohttp class-based views
    "tornado.web.RequestHandler": frozenset({"get", "post", "put", "patch", "delete"}),
    "django.views.View": frozenset({"get", "post", "put", "patch", "delete"}),
    "django.views.generic.View": frozenset({"get", "post", "put", "patch", "delete"}),
    "aiohttp.web.View": frozenset({"get", "post", "put", "patch", "delete"}),
    # Django REST framework: a view's HTTP verbs, a view set's actions
    "rest_framework.views.APIView": frozenset({"get", "post", "put", "patch", "delete"}),
    "rest_framework.generics.GenericAPIView": frozenset({"get", "post", "put", "patch", "delete"}),
    "rest_framework.viewsets.ViewSet": frozenset({"list", "create", "retrieve", "update", "partial_update", "destroy"}),
    "rest_framework.viewsets.GenericViewSet": frozenset({"list", "create", "retrieve", "update", "partial_update", "destroy"}),
    "rest_framework.viewsets.ModelViewSet": frozenset({"list", "create", "retrieve", "update", "partial_update", "destroy"}),
}
# TorchServe's custom service: a class with ``initialize(self, context)`` and ``handle(self, data, context)``
# and no base class; TorchServe calls ``handle`` per request.
TORCHSERVE_SERVICE_HOOKS = frozenset({"handle", "inference", "preprocess", "postprocess"})
#: TorchServe's module-level entry point (a handler file with no handler class): ``def handle(data, context)``,
#: which it calls for every batch of requests.
TORCHSERVE_MODULE_ENTRY = ("handle", ("data", "context"))


def is_torchserve_entry(name: str, params: tuple[str, ...]) -> bool:
    """A module-level function named and shaped as TorchServe's entry point, ``handle(data, context)``."""
    return (name, params) == TORCHSERVE_MODULE_ENTRY


# Hook classes recognised by name alone (the framework does not ship an importable base).
HOOK_CLASS_NAMES: dict[str, frozenset[str]] = {
    "TritonPythonModel": frozenset({"execute"}),
}
# Class decorators that make every public method (and __call__) a request handler.
DEPLOYMENT_DECORATORS = frozenset({"ray.serve.deployment", "ray.serve.api.deployment", "bentoml.service"})
# Method decorators that make a method a request handler (Jina's `@requests` serves one request's documents).
API_DECORATORS = frozenset(
    {"bentoml.api", "bentoml.task", "bentoml.Runnable.method", "jina.requests", "jina.serve.executors.decorators.requests"}
)

# Celery: the decorators that make a function a task (run for every job a queue hands the worker), and the app
# whose ``task`` method does.
CELERY_TASK_DECORATORS = frozenset({"celery.shared_task", "celery.task", "celery.app.shared_task"})
CELERY_APPS = frozenset({"celery.Celery", "celery.app.Celery", "celery.app.base.Celery"})

# Function name prefixes of SPEC §2 (matched after leading underscores, case-insensitively).
# Classes whose name says they perform inference (``Inference``, ``SamPredictor``, ``ImageInferencer``): their
# methods that run a model are per-prediction code; set-up methods are not.
INFERENCE_CLASS_NAME = re.compile(r"(?:Inference|Inferencer|Predictor)(?![a-z])")
# Hooks that run once, when a server or worker starts (TorchServe initialize, KServe load, LitServe setup, Ray reconfigure...).
SETUP_HOOKS = frozenset(
    {"__init__", "__post_init__", "__new__", "initialize", "load", "setup", "load_model", "reconfigure", "startup", "on_startup", "lifespan", "__enter__", "__aenter__"}
)
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def is_setup_hook(name: str) -> bool:
    """``name`` is a setup hook's (:data:`SETUP_HOOKS`), spelled in snake case or, as RPC methods are (a gRPC
    servicer's ``LoadModel``, ``Initialize``), in camel case."""
    return name in SETUP_HOOKS or (not name.islower() and _WORD_START.sub("_", name).lower() in SETUP_HOOKS)


# A handler named for what it does to a model (``export_model``, a gRPC ``UnloadModel``, ``switch_checkpoint``) loads
# one because that is what its caller asks of it, not to serve a prediction.
_MANAGING_VERBS = frozenset(
    {"load", "reload", "unload", "export", "save", "convert", "merge", "fuse", "download", "upload", "switch", "swap", "change", "select", "set",
     "update", "import", "register", "replace", "deploy"}
)
_MANAGED_OBJECTS = frozenset(
    {"model", "models", "checkpoint", "checkpoints", "ckpt", "ckpts", "weights", "adapter", "adapters", "lora", "loras", "pipeline", "pipelines",
     "engine", "engines"}
)


def _handler_words(name: str, prefixes: tuple[str, ...], at_least: int) -> list[str]:
    """The lower-case words of ``name`` (snake or camel case), less a first word of ``prefixes`` where ``at_least``
    words remain (an event handler named for what it handles: `handle_load_model`, `on_switch_model`)."""
    words = _WORD_START.sub("_", name).lower().strip("_").split("_")
    return words[1:] if len(words) > at_least and words[0] in prefixes else words


def manages_models(name: str) -> bool:
    """``name`` says its function acts on a model: a managing verb first, then a model, checkpoint, adapter or
    pipeline (``export_model``, ``LoadLora``, ``switch_base_model``), and no inference word."""
    words = _handler_words(name, ("handle", "on"), 2)
    return (
        len(words) > 1 and words[0] in _MANAGING_VERBS and any(word in _MANAGED_OBJECTS for word in words[1:])
        and not any(word.startswith(INFERENCE_NAME_PREFIXES) for word in words)
    )


# A handler named for measuring (``benchmark``, ``profile_model``, a gRPC ``RunBenchmark``) loads the model it is
# asked to measure: the load is part of what its caller asks for.
_MEASURING_WORDS = frozenset({"benchmark", "benchmarks", "bench", "profile", "profiling"})


def measures_models(name: str) -> bool:
    """``name`` says its function measures: a measuring word first (after ``run``, ``handle`` or ``on``)."""
    return _handler_words(name, ("run", "handle", "on"), 1)[0] in _MEASURING_WORDS


INFERENCE_CLASS_SETUP_PREFIXES = ("__init__", "setup", "load", "initialize", "init_", "build", "from_", "to", "_")
INFERENCE_NAME_PREFIXES = ("predict", "infer", "inference", "serve", "generate", "evaluate")

# Lightning hooks that already run under no_grad; predict_step serves predictions.
LIGHTNING_INFERENCE_HOOKS = frozenset({"predict_step"})
LIGHTNING_NO_GRAD_HOOKS = frozenset({"predict_step", "test_step", "validation_step"})
LIGHTNING_TRAINING_HOOKS = frozenset({"training_step"})
# In LightningModule and Callback subclasses, everything the evaluation and prediction loops call runs under
# no_grad/inference_mode: the *_step methods above and these hook prefixes.
LIGHTNING_NO_GRAD_HOOK_PREFIXES = (
    "on_validation_",
    "on_test_",
    "on_predict_",
    "validation_",
    "test_",
    "predict_",
)
LIGHTNING_BASES = frozenset(
    {
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.lightning.LightningModule",
        "pytorch_lightning.core.module.LightningModule",
        "lightning.Callback",
        "lightning.pytorch.Callback",
        "lightning.pytorch.callbacks.Callback",
        "pytorch_lightning.Callback",
        "pytorch_lightning.callbacks.Callback",
    }
)
# transformers runs these without gradients: the methods `generate` calls, and a pipeline's `_forward`
# (Pipeline.forward wraps it in an inference context). Keys are base-class name suffixes under `transformers.`.
HF_NO_GRAD_METHODS = frozenset({"prepare_inputs_for_generation"})
HF_NO_GRAD_CLASS_HOOKS: dict[str, frozenset[str]] = {
    "Pipeline": frozenset({"_forward"}),
    "LogitsProcessor": frozenset({"__call__"}),
    "LogitsWarper": frozenset({"__call__"}),
    "StoppingCriteria": frozenset({"__call__"}),
}

# Method names whose call marks the enclosing function or loop as training.
TRAINING_METHODS = frozenset({"backward", "zero_grad"})


def steps_an_optimizer(receiver: str) -> bool:
    """``<receiver>.step()`` is a training step: ``optimizer``, ``self.d_optim``, ``opt``, a GradScaler's
    ``scaler`` (``receiver`` is the last name before ``.step``)."""
    lowered = receiver.lower()
    return "optim" in lowered or lowered in ("opt", "scaler")

TRAINING_CALLS = frozenset(
    {
        "torch.autograd.grad",
        "torch.autograd.backward",
        "torch.cuda.amp.GradScaler",
        "torch.amp.GradScaler",
        "torch.cpu.amp.GradScaler",
    }
)

#: Calls that make a model's adapters trainable (PEFT) or draw its autograd graph (torchviz): a script that makes
#: one trains, or needs the graph its forward records.
TRAINING_SETUP_CALLS = frozenset(
    {
        "peft.get_peft_model",
        "peft.mapping.get_peft_model",
        "peft.prepare_model_for_kbit_training",
        "torchviz.make_dot",
        "torchviz.make_dot_from_trace",
    }
)

# Grad-free guards (context managers and decorators).
NO_GRAD_GUARDS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)
#: Published decorator factories that wrap what they decorate in a grad-free guard: Ultralytics' and the
#: ``yolov5`` package's ``@smart_inference_mode()`` (``inference_mode``, or ``no_grad`` on old torch).
GRAD_FREE_DECORATOR_FACTORIES = frozenset(
    {
        "ultralytics.utils.torch_utils.smart_inference_mode",
        "ultralytics.yolo.utils.torch_utils.smart_inference_mode",
        "yolov5.utils.torch_utils.smart_inference_mode",
    }
)
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"})
# Re-enable gradients inside a grad-free region.
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})

# -- model objects (SPEC §2, "Model objects"); see gemlint/analysis/models.py ---------------------------
# Loaders whose result is a whole module with its saved (unknown) mode.
#: Decorators that make a generator function a context manager (its ``with`` blocks around ``yield`` apply
#: to the caller's block).
CONTEXT_MANAGER_DECORATORS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})
#: Calls that load trained weights, by their terminal name (``AutoModel.from_pretrained``, ``net.load_state_dict``,
#: ``safetensors.torch.load_file``, ``hf_hub_download``); ``torch.load`` and friends are resolved (MODEL_LOADERS).
WEIGHT_LOADING_CALLS = frozenset({
    "from_pretrained", "from_single_file", "load_state_dict", "load_checkpoint", "load_from_checkpoint",
    "hf_hub_download", "snapshot_download", "load_model", "load_weights", "load_network", "load_pretrained",
    "load_file", "safe_open", "pipeline",
})
#: Loaders that return their model in eval mode (with other values: ``model, preprocess = clip.load(...)``).
EVAL_MODE_LOADERS = frozenset({"clip.load"})
#: torch.optim's optimizers: a script that builds one trains something.
OPTIMIZER_CLASSES = frozenset(
    {"SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "ASGD", "NAdam", "RAdam", "LBFGS", "SparseAdam", "Adafactor"}
)
#: Tensors made up rather than read (``torch.randn(1, 3, 224, 224)``): a smoke test's inputs.
MADE_UP_TENSORS = frozenset({"rand", "randn", "randint", "rand_like", "randn_like", "zeros", "ones", "full", "empty", "arange", "zeros_like", "ones_like"})
#: torch's legacy tensor types, whose constructors take either data or sizes (``torch.Tensor(1, 3, 400, 600)``).
LEGACY_TENSOR_TYPES = frozenset({"Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ByteTensor"})
#: Keyword arguments that hand a constructor its weights (``resnet50(weights="DEFAULT")``, ``pretrained=True``).
WEIGHT_KEYWORDS = frozenset({"pretrained", "weights", "checkpoint", "checkpoint_path", "ckpt_path", "ckpt", "weights_path", "model_path"})
MODEL_LOADERS = frozenset({"torch.load", "torch.jit.load", "torch.hub.load", "torch.package.PackageImporter.load_pickle"})
#: The class methods that load pretrained weights (``AutoModel.from_pretrained``, a pipeline's ``from_single_file``).
PRETRAINED_METHODS = frozenset({"from_pretrained", "from_single_file"})
#: Calls that read tensors, weights or not: a project function that calls one loads a model only where it also
#: puts what it read into a model (``load_state_dict``).
TENSOR_READERS = frozenset({"torch.load", "safetensors.torch.load_file", "safetensors.torch.load"}) | frozenset(
    {"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"}
)
#: Calls that download weights (once, into a cache) and read them: a state dict, for a model's ``load_state_dict``.
WEIGHT_DOWNLOADERS = frozenset({"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"})
# Calls that return (a wrapper of) the module passed as their first argument, keeping its mode.
MODEL_WRAPPERS = frozenset(
    {
        "torch.compile",
        "torch.jit.script",
        "torch.jit.trace",
        "torch.jit.freeze",
        "torch.jit.optimize_for_inference",
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "torch.quantization.quantize_dynamic",
        "torch.ao.quantization.quantize_dynamic",
        "torch.fx.symbolic_trace",
        "torchvision.models.feature_extraction.create_feature_extractor",
        "copy.deepcopy",
        "peft.get_peft_model",
        "intel_extension_for_pytorch.optimize",
        "deepspeed.init_inference",
    }
)
# Module methods that return the module itself.
#: The methods of ``nn.Module`` that hand back its layers (``for m in model.modules()``, ``list(vgg.children())``).
MODULE_LAYER_METHODS = frozenset({"children", "modules", "named_children", "named_modules"})
MODULE_SELF_METHODS = frozenset(
    {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "eval", "train", "requires_grad_", "share_memory", "to_empty", "apply", "type", "xpu", "mps"}
)
# Methods only modules have (SPEC §2): a receiver used with one of them is evidently a model.
MODULE_ONLY_METHODS = frozenset(
    {
        "eval",
        "train",
        "parameters",
        "named_parameters",
        "state_dict",
        "load_state_dict",
        "named_modules",
        "modules",
        "children",
        "named_children",
        "named_buffers",
        "register_forward_hook",
        "register_forward_pre_hook",
    }
)
# Members a module uses on itself (``self.training``, ``self.register_buffer(...)``): a class of the file that
# uses one is a module even when its base class cannot be resolved. `post_init` is transformers' PreTrainedModel.
SELF_MODULE_MEMBERS = (MODULE_ONLY_METHODS - {"train"}) | {
    "training",
    "register_buffer",
    "register_parameter",
    "register_module",
    "add_module",
    "post_init",
}
#: Of those, the members no other kind of class is likely to have (not ``eval``, ``parameters``, ``modules``,
#: ``children``: names of many objects' APIs): what makes a class below a base of an unknown package a module.
TORCH_ONLY_SELF_MEMBERS = SELF_MODULE_MEMBERS - {"eval", "parameters", "modules", "children", "named_children", "post_init"}
#: torch's own module base: a class deriving from it directly is a plain module, not a framework model.
PLAIN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
#: Bases that add no attribute, submodule or mode to a class (``class Loss(nn.Module, ABC)``): beside
#: ``nn.Module``, they leave it a plain module.
STATELESS_BASES = frozenset({"object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol"})
# Module base classes (a class deriving from one, in the file, is a model class).
MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
        "torch.jit.ScriptModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.lightning.LightningModule",
        "pytorch_lightning.core.module.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
        "diffusers.ModelMixin",
        "diffusers.models.ModelMixin",
        "diffusers.models.modeling_utils.ModelMixin",
    }
)
# torch.nn modules without parameters or mode (activations, losses, pooling, padding, reshaping): running one
# builds no graph of its own, so they are not models (SPEC: parameter-free modules).
TORCH_NN_PARAMETER_FREE = re.compile(
    r"Loss$|Pool[123]d$|Pad[123]d$|^(?:ReLU6?|LeakyReLU|RReLU|ELU|SELU|CELU|GELU|SiLU|Mish|Sigmoid|LogSigmoid|Tanh|Softmax2?d?|"
    r"LogSoftmax|Softmin|Softplus|Softsign|Softshrink|Hardshrink|Tanhshrink|Hardtanh|Hardswish|Hardsigmoid|Threshold|GLU|"
    r"Identity|Flatten|Unflatten|Upsample|UpsamplingNearest2d|UpsamplingBilinear2d|PixelShuffle|PixelUnshuffle|"
    r"ChannelShuffle|CosineSimilarity|PairwiseDistance|Fold|Unfold)$"
)
#: Libraries of transforms that are modules without a training mode (feature extractors and augmentations that
#: behave the same in train and eval mode: ``torchaudio.transforms.MelSpectrogram``, ``torchvision.transforms.Resize``).
MODE_FREE_TRANSFORMS = ("torchaudio.transforms.", "torchvision.transforms.")
#: Packages whose classes and factories build layers the analysis knows (torch and the model libraries). An
#: object of any other package is not read: whether it holds parameters or a mode is unknown.
LAYER_PACKAGES = frozenset({
    "torch", "torchvision", "torchaudio", "transformers", "diffusers", "timm", "open_clip", "clip", "ultralytics",
    "sentence_transformers", "peft", "optimum", "lightning", "pytorch_lightning", "segment_anything", "accelerate",
    "mmcv", "mmdet", "mmengine", "detectron2", "fairseq", "speechbrain", "nemo", "xformers", "flash_attn",
    "torch_geometric", "einops", "lpips", "kornia", "facenet_pytorch", "efficientnet_pytorch", "huggingface_hub",
})
# torch.nn names that are not modules.
TORCH_NN_NON_MODULES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer", "ParameterList", "ParameterDict"})
#: Classes of torch outside torch.nn whose objects are data or device handles, never modules: a random generator,
#: a device, a shape, a stream, an event, a captured graph.
TORCH_DATA_CLASSES = frozenset(
    {"torch.Generator", "torch.device", "torch.Size", "torch.Tensor", "torch.cuda.Stream", "torch.cuda.Event", "torch.cuda.CUDAGraph",
     "torch.Stream", "torch.Event"}
)
# torch.nn modules whose output depends on train/eval mode (dropout, batch statistics), and the containers
# that may hold them: the only torch.nn constructions for which a missing `.eval()` matters.
TORCH_NN_MODE_DEPENDENT = frozenset(
    {
        "Sequential",
        "ModuleList",
        "ModuleDict",
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Dropout3d",
        "AlphaDropout",
        "FeatureAlphaDropout",
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "LazyBatchNorm1d",
        "LazyBatchNorm2d",
        "LazyBatchNorm3d",
        "SyncBatchNorm",
        "Transformer",
        "TransformerEncoder",
        "TransformerDecoder",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "MultiheadAttention",
        "RNN",
        "LSTM",
        "GRU",
    }
)


def torch_nn_without_mode(name: str) -> bool:
    """A torch.nn module class whose forward is the same in train and eval mode (``Linear``, ``Conv2d``,
    ``Embedding``, ``LayerNorm``): not a mode-dependent layer or a container that may hold one. Instance norm
    keeps running statistics when asked to, so it counts as mode-dependent."""
    return (
        name[:1].isupper()
        and name not in TORCH_NN_MODE_DEPENDENT
        and name not in TORCH_NN_NON_MODULES
        and "InstanceNorm" not in name
        and name not in ("Module", "RReLU")
    )


# Constructors of whole vision models (returned in training mode): every public function and class under
# torchvision.models except these, timm.create_model and the classes under timm.models.
TORCHVISION_NON_CONSTRUCTORS = frozenset({"get_weight", "get_model_weights", "get_model_builder", "list_models"})
TIMM_CONSTRUCTORS = frozenset({"timm.create_model", "timm.models.create_model"})


def is_vision_constructor(name: str) -> bool:
    """``torchvision.models.resnet50``, ``timm.create_model``, ``timm.models.VisionTransformer``: a constructor of
    a whole vision model (not a weights enum, its preprocessing preset, or a registry function)."""
    if name in TIMM_CONSTRUCTORS:
        return True
    if name.startswith("timm.models."):
        last = name.rsplit(".", 1)[-1]
        return last[:1].isupper() and not last.endswith(("Cfg", "Config"))
    if name.startswith("torchvision.models.") and not name.startswith("torchvision.models.feature_extraction."):
        parts = name.split(".")
        # `ViT_L_16_Weights.IMAGENET1K_V1.transforms()`: a weights enum's preprocessing preset, no model
        return not parts[-1].startswith("_") and not any(part.endswith("Weights") for part in parts[2:]) and parts[-1] not in TORCHVISION_NON_CONSTRUCTORS
    return False

# Packages whose `*.from_pretrained` classes are models when the class name says so (see models.py).
PRETRAINED_PACKAGES = ("transformers.", "diffusers.", "sentence_transformers.", "peft.", "optimum.")
#: Compilers whose output is a TorchScript module running a graph compiled for an accelerator (AWS Inferentia and
#: Trainium): a module that imports one and loads a TorchScript file loads what it compiled.
ACCELERATOR_COMPILERS = ("torch_neuronx", "torch_neuron")
#: What runs a serialized TensorRT engine behind a module's interface: torch2trt's ``TRTModule`` and its converter,
#: whose result is one. The engine holds the weights; no torch parameter records a graph, and there is no mode.
TENSORRT_ENGINE_MODULES = frozenset({"torch2trt.TRTModule", "torch2trt.torch2trt", "torch2trt.torch2trt.TRTModule", "torch2trt.trt_module.TRTModule"})
#: Ultralytics' model front-ends: calling one predicts under ``smart_inference_mode`` (a grad-free guard) and
#: returns results, not tensors, like a pipeline. ``ultralytics.nn`` holds the raw modules, which do not guard.
ULTRALYTICS_FRONT_ENDS = frozenset({"YOLO", "RTDETR", "SAM", "FastSAM", "NAS", "YOLOWorld", "YOLOE", "Model"})
# Class names that are never models, whatever else they contain.
NON_MODEL_CLASS_WORDS = ("Tokenizer", "Processor", "Config", "Scheduler", "FeatureExtractor", "Pipeline", "Extractor", "Trainer", "Collator", "Callback")
#: Of those, the words of classes that hold data and no module (a diffusers noise scheduler, a tokenizer).
DATA_CLASS_WORDS = ("Tokenizer", "Processor", "Config", "Scheduler", "FeatureExtractor")
# Classes whose construction loads a pretrained model (already in eval mode).
PRETRAINED_CONSTRUCTORS = frozenset(
    {
        "sentence_transformers.SentenceTransformer",
        "sentence_transformers.SentenceTransformer.SentenceTransformer",
        "sentence_transformers.CrossEncoder",
        "sentence_transformers.cross_encoder.CrossEncoder",
        "sentence_transformers.SparseEncoder",
        # OpenMMLab's builders: the model from a config, its checkpoint loaded, put in eval mode
        "mmdet.apis.init_detector",
        "mmdet.apis.inference.init_detector",
        "mmpose.apis.init_model",
        "mmpose.apis.inference.init_model",
        "mmpose.apis.init_pose_model",
        "mmseg.apis.init_model",
        "mmseg.apis.init_segmentor",
    }
)
#: Builders that read a checkpoint when given one (the keyword naming it, and its position): Segment Anything's
#: registry of builders (``sam_model_registry["vit_h"](checkpoint=path)``) and its builder functions, SAM 2's.
#: Without a checkpoint they build random weights, and load nothing.
CHECKPOINT_BUILDERS: dict[str, tuple[str, int]] = {
    **{
        f"{package}.{name}": ("checkpoint", 0)
        for package in ("segment_anything", "segment_anything.build_sam", "mobile_sam", "mobile_sam.build_sam")
        for name in ("sam_model_registry", "build_sam", "build_sam_vit_h", "build_sam_vit_l", "build_sam_vit_b", "build_sam_vit_t")
    },
    **{f"sam2.build_sam.{name}": ("ckpt_path", 1) for name in ("build_sam2", "build_sam2_video_predictor", "build_sam2_camera_predictor")},
}
# Class methods that build a model from a config (weights random, training mode).
FROM_CONFIG_METHODS = frozenset({"from_config", "_from_config"})
# Framework base classes that provide a model attribute to their subclasses.
FRAMEWORK_MODEL_ATTRIBUTES: dict[str, frozenset[str]] = {
    "ts.torch_handler.base_handler.BaseHandler": frozenset({"model"}),
}
# Methods that run a model without being its forward call: not reported by GEM101 (generate runs under
# no_grad), but they do use the model for predictions (GEM102).
NON_FORWARD_METHODS = frozenset({"generate"})
# Methods of library models (timm, CLIP/open_clip, transformers) that run part of the model's forward with
# autograd as `model(x)` does: `backbone.forward_features(x)`, `clip.encode_image(x)`.
LIBRARY_FORWARD_METHODS = frozenset(
    {"forward_features", "forward_head", "encode_image", "encode_text", "get_image_features", "get_text_features", "get_audio_features"}
)

# -- routing (gemlint.analysis.routes) ------------------------------------------------------
# Objects that own routes: qualified constructor -> (framework, keyword of its own path prefix or None).
ROUTER_CONSTRUCTORS: dict[str, tuple[str, str | None]] = {
    "fastapi.FastAPI": ("fastapi", None),
    "fastapi.applications.FastAPI": ("fastapi", None),
    "fastapi.APIRouter": ("fastapi", "prefix"),
    "fastapi.routing.APIRouter": ("fastapi", "prefix"),
    "starlette.applications.Starlette": ("starlette", None),
    "starlette.routing.Router": ("starlette", None),
    "flask.Flask": ("flask", None),
    "flask.app.Flask": ("flask", None),
    "flask.Blueprint": ("flask", "url_prefix"),
    "flask.blueprints.Blueprint": ("flask", "url_prefix"),
    "quart.Quart": ("quart", None),
    "quart.Blueprint": ("quart", "url_prefix"),
    "sanic.Sanic": ("sanic", None),
    "sanic.Blueprint": ("sanic", "url_prefix"),
    "aiohttp.web.Application": ("aiohttp", None),
    "aiohttp.web.RouteTableDef": ("aiohttp", None),
    "tornado.web.Application": ("tornado", None),
    "litestar.Litestar": ("litestar", None),
    "litestar.Router": ("litestar", "path"),
    "bottle.Bottle": ("bottle", None),
}
# Free-standing route objects: qualified constructor -> (index of the path, index of the handler, fixed method).
ROUTE_OBJECTS: dict[str, tuple[int, int, str | None]] = {
    "starlette.routing.Route": (0, 1, None),
    "starlette.routing.WebSocketRoute": (0, 1, "WEBSOCKET"),
    "fastapi.routing.APIRoute": (0, 1, None),
    "aiohttp.web.get": (0, 1, "GET"),
    "aiohttp.web.head": (0, 1, "HEAD"),
    "aiohttp.web.post": (0, 1, "POST"),
    "aiohttp.web.put": (0, 1, "PUT"),
    "aiohttp.web.patch": (0, 1, "PATCH"),
    "aiohttp.web.delete": (0, 1, "DELETE"),
    "aiohttp.web.view": (0, 1, None),
    "aiohttp.web.route": (1, 2, None),  # route(method, path, handler)
    "django.urls.path": (0, 1, None),
    "django.urls.re_path": (0, 1, None),
    "django.conf.urls.url": (0, 1, None),
    "tornado.web.url": (0, 1, None),
    "tornado.routing.URLSpec": (0, 1, None),
    "tornado.web.URLSpec": (0, 1, None),
}
REGEX_ROUTE_OBJECTS = frozenset({"django.urls.re_path", "django.conf.urls.url", "tornado.web.url", "tornado.routing.URLSpec", "tornado.web.URLSpec"})
DJANGO_ROUTE_OBJECTS = frozenset({"django.urls.path", "django.urls.re_path", "django.conf.urls.url"})
MOUNT_OBJECTS = frozenset({"starlette.routing.Mount"})
DJANGO_INCLUDE = frozenset({"django.urls.include", "django.conf.urls.include"})
# Bare decorators that are routes by themselves (Litestar): qualified name -> method.
BARE_ROUTE_DECORATORS: dict[str, str | None] = {
    "litestar.get": "GET",
    "litestar.post": "POST",
    "litestar.put": "PUT",
    "litestar.patch": "PATCH",
    "litestar.delete": "DELETE",
    "litestar.head": "HEAD",
    "litestar.route": None,
}
# Calls that attach a child router to a parent: method -> (index of the child, index of the prefix, prefix keyword, replaces).
# ``replaces``: the prefix given here replaces the child's own prefix (Flask and Sanic blueprints) instead of adding to it.
MOUNT_METHODS: dict[str, tuple[int, int | None, str | None, bool]] = {
    "include_router": (0, None, "prefix", False),
    "register_blueprint": (0, None, "url_prefix", True),
    "blueprint": (0, None, "url_prefix", True),
    "mount": (1, 0, "path", False),
    "add_subapp": (1, 0, None, False),
    "add_routes": (0, None, None, False),
    "add_handlers": (1, None, None, False),
}
# Keyword arguments of router constructors and Mount that carry a list of routes or a sub-application.
ROUTE_LIST_KEYWORDS = frozenset({"routes", "handlers", "app", "route_handlers", "urlpatterns"})
HTTP_METHOD_DECORATORS = {
    "get": "GET",
    "post": "POST",
    "put": "PUT",
    "delete": "DELETE",
    "patch": "PATCH",
    "head": "HEAD",
    "options": "OPTIONS",
    "websocket": "WEBSOCKET",
    "websocket_route": "WEBSOCKET",
}
# Registration methods: method -> (index of the path, index of the handler, fixed method).
REGISTRATION_METHODS: dict[str, tuple[int, int, str | None]] = {
    "add_api_route": (0, 1, None),
    "add_api_websocket_route": (0, 1, "WEBSOCKET"),
    "add_websocket_route": (0, 1, "WEBSOCKET"),
    "add_url_rule": (0, 2, None),
    "add_get": (0, 1, "GET"),
    "add_head": (0, 1, "HEAD"),
    "add_post": (0, 1, "POST"),
    "add_put": (0, 1, "PUT"),
    "add_patch": (0, 1, "PATCH"),
    "add_delete": (0, 1, "DELETE"),
    "add_view": (0, 1, None),
    "add_route": (0, 1, None),  # Starlette (path, endpoint); aiohttp (method, path, handler) and Sanic (handler, uri) are told apart by their arguments
}
# Class-based views: the handler of a request is the method named after the HTTP verb.
CLASS_VIEW_METHOD_PREFIX = {"falcon": "on_"}

# Framework health hooks (GEM602): called by the framework's own health endpoint.
HEALTH_HOOK_DECORATED = {"ray.serve.deployment": frozenset({"check_health"}), "ray.serve.api.deployment": frozenset({"check_health"})}
HEALTH_HOOK_BASES = {"litserve.LitAPI": frozenset({"health"}), "litserve.api.LitAPI": frozenset({"health"})}

# -- model objects and forward passes (gemlint.analysis.forward) ----------------------------------
# Calls that produce a model object that is not a torch module (modules are models.py's): qualified name ->
# model family (see FORWARD_METHODS).
MODEL_PRODUCERS: dict[str, str] = {
    "transformers.pipeline": "pipeline",
    "transformers.pipelines.pipeline": "pipeline",
    "onnxruntime.InferenceSession": "onnxruntime",
    "vllm.LLM": "vllm",
    "vllm.entrypoints.llm.LLM": "vllm",
    "tensorflow.keras.models.load_model": "keras",
    "keras.models.load_model": "keras",
    "keras.saving.load_model": "keras",
    # TensorFlow's SavedModel readers (a TF Hub module is one, fetched once into a cache)
    "tensorflow.saved_model.load": "tensorflow",
    "tensorflow_hub.load": "tensorflow-hub",
    "tensorflow_hub.KerasLayer": "tensorflow-hub",
    "whisper.load_model": "whisper",
    "llama_cpp.Llama": "llama.cpp",
    "ultralytics.YOLO": "ultralytics",
    "ctranslate2.Generator": "ctranslate2",
    "ctranslate2.Translator": "ctranslate2",
    "faster_whisper.WhisperModel": "faster-whisper",
    "faster_whisper.transcribe.WhisperModel": "faster-whisper",
    "easyocr.Reader": "easyocr",
    "easyocr.easyocr.Reader": "easyocr",
    # LangChain's local embedding models: the constructor loads a sentence-transformers model (the API clients,
    # `HuggingFaceEndpointEmbeddings` and the like, load nothing and are not here)
    **{
        f"{module}.{name}": "langchain-embeddings"
        for module in (
            "langchain.embeddings",
            "langchain.embeddings.huggingface",
            "langchain_community.embeddings",
            "langchain_community.embeddings.huggingface",
        )
        for name in ("HuggingFaceEmbeddings", "HuggingFaceBgeEmbeddings", "HuggingFaceInstructEmbeddings")
    },
    **{
        f"{module}.HuggingFaceEmbeddings": "langchain-embeddings"
        for module in ("langchain_huggingface", "langchain_huggingface.embeddings", "langchain_huggingface.embeddings.huggingface")
    },
    # rembg's sessions read their ONNX model when made; fairseq's checkpoint reader builds the models it holds;
    # torchfcpe's bundled pitch model is read from the package
    # MLflow's flavours read the logged model (its weights, or the pickled estimator) from the run's artifacts
    **{f"mlflow.{flavour}.load_model": "mlflow" for flavour in ("pyfunc", "pytorch", "transformers", "tensorflow", "keras", "sklearn", "onnx")},
    "rembg.new_session": "rembg",
    "rembg.bg.new_session": "rembg",
    "rembg.session_factory.new_session": "rembg",
    "fairseq.checkpoint_utils.load_model_ensemble_and_task": "fairseq",
    "fairseq.checkpoint_utils.load_model_ensemble": "fairseq",
    "torchfcpe.spawn_bundled_infer_model": "torchfcpe",
}
# ``X.from_pretrained(...)`` of these libraries loads a model (or a tokenizer / processor).
FROM_PRETRAINED_LIBRARIES = (
    "transformers.", "diffusers.", "sentence_transformers.", "peft.", "optimum.", "open_clip.", "timm.", "pyannote.", "nemo.",
    "controlnet_aux.",  # ControlNet's annotators (`HEDdetector.from_pretrained`) read their weights from the hub
)
# Classes whose from_pretrained result is not a model: tokenizers, processors, configs (loads for GEM502, no forward).
NON_MODEL_PRETRAINED = ("Tokenizer", "TokenizerFast", "Processor", "FeatureExtractor", "ImageProcessor", "Config", "GenerationConfig", "Scheduler")
#: Of those, the ones that read a small JSON file and nothing else (no weights, no vocabulary): no load to speak of.
CONFIG_ONLY_PRETRAINED = ("FeatureExtractor", "Config", "GenerationConfig", "Scheduler")
# Methods that hand a generation (or an embedding) request to an inference engine, whose loop then runs the
# model: vLLM/SGLang/TensorRT-LLM engines, SGLang's tokenizer manager, schedulers, DeepSpeed-MII pipelines.
ENGINE_SUBMIT_METHODS = frozenset(
    {
        "generate",
        "generate_async",
        "async_generate",
        "agenerate",
        "generate_stream",
        "generate_request",
        "add_request",
        "put_request",
        "submit_request",
        "encode",
        "async_encode",
    }
)
# Serving engines, family "engine": they queue requests and their loop runs the model. Not loads for GEM202 and
# GEM502 (an engine warms itself up while it starts: profiling run, CUDA graph capture).
ENGINE_PRODUCERS = frozenset(
    {
        "vllm.AsyncLLMEngine.from_engine_args",
        "vllm.engine.async_llm_engine.AsyncLLMEngine.from_engine_args",
        "vllm.LLMEngine.from_engine_args",
        "vllm.engine.llm_engine.LLMEngine.from_engine_args",
        "vllm.v1.engine.async_llm.AsyncLLM.from_engine_args",
        "sglang.Engine",
        "tensorrt_llm.LLM",
    }
)
# Keys (keywords, dict keys, attributes) that give a generation its token budget.
TOKEN_BUDGET_KEYS = frozenset({"max_new_tokens", "max_tokens", "max_completion_tokens"})
# family -> (methods that run the model, whether calling the object itself runs it)
FORWARD_METHODS: dict[str, tuple[frozenset[str], bool]] = {
    # torch modules as the model tracker knows them (sentence-transformers models are modules too)
    "torch": (frozenset({"forward", "generate", "predict", "encode", "encode_query", "encode_document", "transcribe", "sample"}), True),
    "pipeline": (frozenset({"generate", "predict"}), True),
    "onnxruntime": (frozenset({"run", "run_with_iobinding", "run_with_ort_values"}), False),
    "vllm": (frozenset({"generate", "chat", "encode", "embed", "classify", "score", "beam_search"}), False),
    "keras": (frozenset({"predict", "predict_on_batch"}), True),
    "whisper": (frozenset({"transcribe", "decode", "detect_language"}), True),
    "llama.cpp": (frozenset({"create_completion", "create_chat_completion", "embed", "create_embedding"}), True),
    "ultralytics": (frozenset({"predict", "track"}), True),
    "ctranslate2": (frozenset({"generate_batch", "translate_batch", "generate_tokens", "score_batch"}), False),
    "faster-whisper": (frozenset({"transcribe", "detect_language"}), False),
    "easyocr": (frozenset({"readtext", "readtext_batched", "readtextlang", "detect", "recognize"}), False),
    "rembg": (frozenset({"predict"}), False),
    "langchain-embeddings": (frozenset({"embed_query", "embed_documents", "aembed_query", "aembed_documents"}), False),
    "engine": (ENGINE_SUBMIT_METHODS, False),
}
# Methods that return the same model (``AutoModel.from_pretrained(...).to("cuda").eval()``).
MODEL_PASSTHROUGH_METHODS = frozenset({"to", "eval", "cuda", "cpu", "half", "float", "bfloat16", "requires_grad_", "train", "share_memory"})
# Calls that run a callable argument (offloading a forward to a thread): qualified name or method -> index of the callable.
OFFLOAD_CALLS = {
    "asyncio.to_thread": 0,
    "starlette.concurrency.run_in_threadpool": 0,
    "fastapi.concurrency.run_in_threadpool": 0,
    "anyio.to_thread.run_sync": 0,
}
OFFLOAD_METHODS = {"run_in_executor": 1, "submit": 0}
# Extra loaders (GEM502) that produce tokenizers rather than models.
TOKENIZER_LOADERS = frozenset({"tokenizers.Tokenizer.from_file", "tokenizers.Tokenizer.from_pretrained", "sentencepiece.SentencePieceProcessor"})

# Text markers of a module that serves requests: it imports a web or serving framework (prefilters of GEM502/GEM602).
SERVING_MODULES = tuple(sorted(WEB_FRAMEWORKS)) + ("cog", "jina", "ts", "kfserving", "kserve", "litserve", "mlserver", "mosec", "ray", "triton_python_backend_utils")
SERVING_IMPORT_MARKERS = tuple(f"{keyword} {module}" for module in SERVING_MODULES for keyword in ("import", "from")) + (
    "TritonPythonModel",
    "check_health",
    "Servicer",  # a gRPC servicer's subclass (see is_grpc_servicer), whatever module it is imported from
)
# Text markers of a task queue whose workers run a task per job.
QUEUE_IMPORT_MARKERS = ("import celery", "from celery")
# Text markers of a demo app whose framework runs its code per interaction (Gradio callbacks, a Streamlit script).
APP_IMPORT_MARKERS = ("import gradio", "from gradio", "import streamlit", "from streamlit")
# Gradio calls that take the function to run per event as ``fn`` (first positional argument).
GRADIO_APPS = frozenset({"gradio.Interface", "gradio.ChatInterface", "gradio.on", "gradio.interface.Interface", "gradio.chat_interface.ChatInterface"})
# Event listeners of Gradio components and Blocks (``btn.click(fn, inputs, outputs)``).
GRADIO_EVENTS = frozenset(
    {
        "click", "submit", "change", "input", "upload", "select", "release", "load", "then", "success", "stream",
        "clear", "play", "pause", "stop", "end", "edit", "like", "retry", "undo", "focus", "blur", "key_up",
        "apply", "tick", "double_click", "expand", "collapse", "download", "copy", "delete", "start_recording",
        "stop_recording", "pause_recording", "upload_button",
    }
)
# Socket.IO servers (python-socketio, Flask-SocketIO), whose event handlers run once per message a client emits.
SOCKET_FRAMEWORKS = frozenset({"socketio", "flask_socketio"})
# Chat-bot frameworks, whose handlers run once per message, command or interaction (:mod:`gemlint.analysis.bots`):
# Telegram (pyTelegramBotAPI, aiogram, python-telegram-bot, Pyrogram, Telethon), Discord (discord.py and its
# forks, interactions.py) and Slack (Bolt); and Socket.IO's event handlers, which run as a bot's do.
BOT_FRAMEWORKS = frozenset({"telebot", "aiogram", "telegram", "pyrogram", "telethon", "discord", "nextcord", "disnake", "interactions", "slack_bolt"}) | SOCKET_FRAMEWORKS
BOT_IMPORT_MARKERS = tuple(f"{keyword} {module}" for module in sorted(BOT_FRAMEWORKS) for keyword in ("import", "from"))
# Decorator methods of those frameworks' bot objects that register a handler per message or command.
BOT_HANDLER_DECORATORS = frozenset(
    {
        "message_handler", "edited_message_handler", "channel_post_handler", "callback_query_handler", "inline_handler",
        "message", "callback_query", "inline_query", "command", "slash_command", "hybrid_command", "user_command",
        "message_command", "on_message", "on_callback_query", "on_inline_query", "on", "action", "shortcut",
    }
)
# Command-line frameworks whose ``command`` decorators (``@click.command()``, ``@app.command()`` on a ``typer.Typer()``)
# make a function run once per invocation of the program: not a bot's command, whatever else the module imports.
CLI_FRAMEWORKS = frozenset({"click", "asyncclick", "rich_click", "cloup", "typer", "cyclopts"})
# Of those, the names no web or serving framework uses: what a bot handler's decorator says by its name alone,
# where the project index reads decorators without the module's imports.
BOT_HANDLER_DECORATOR_NAMES = frozenset(
    {"message_handler", "edited_message_handler", "channel_post_handler", "callback_query_handler", "inline_handler", "hybrid_command", "slash_command"}
)


def is_grpc_servicer(qualified: str) -> bool:
    """A servicer base that ``grpcio-tools`` generates (``pkg.generate_pb2_grpc.TextGenerationServiceServicer``),
    or that a serving SDK re-exports from its generated code (``leapfrogai_sdk.AudioServicer``): gRPC calls every
    public method of a subclass once per RPC. The generated module is often built at install time and absent from
    the repository, so it is recognised by the name the generator gives every servicer, ``<Service>Servicer``."""
    module, _, name = qualified.rpartition(".")
    return bool(module) and len(name) > len("Servicer") and name.endswith("Servicer") and name[0].isupper()


# -- spellings: the last part of the names above, checked before any name is resolved ------------
def _last_parts(names) -> frozenset[str]:
    return frozenset(name.rsplit(".", 1)[-1] for name in names)


HOOK_BASE_NAMES = _last_parts(HOOK_BASES)
DEPLOYMENT_DECORATOR_NAMES = _last_parts(DEPLOYMENT_DECORATORS)
API_DECORATOR_NAMES = _last_parts(API_DECORATORS)
BARE_ROUTE_DECORATOR_NAMES = _last_parts(BARE_ROUTE_DECORATORS)
