"""What the serving, training and web frameworks look like to the analyses: the data, kept apart from the logic."""

from __future__ import annotations

# Top-level modules whose import makes `@x.get(...)`-style decorators HTTP routes.
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

# Calls that register a handler passed as an argument: (method name, positional index of the handler).
ROUTE_REGISTRATIONS = {
    "add_api_route": 1,  # FastAPI / APIRouter
    "add_api_websocket_route": 1,
    "add_url_rule": 2,  # Flask: add_url_rule(rule, endpoint, view_func)
    "add_route": 1,  # aiohttp router / Starlette / Sanic (handler first in Sanic, see below)
    "add_get": 1,
    "add_post": 1,
    "add_put": 1,
    "add_patch": 1,
    "add_delete": 1,
    "add_websocket_route": 1,
}
# Keyword names under which registrations pass the handler.
ROUTE_HANDLER_KEYWORDS = frozenset({"endpoint", "view_func", "handler", "view"})
# Constructors whose second argument is a handler: Starlette Route/WebSocketRoute, aiohttp web.get, Django path.
ROUTE_CONSTRUCTORS = frozenset(
    {
        "starlette.routing.Route",
        "starlette.routing.WebSocketRoute",
        "aiohttp.web.get",
        "aiohttp.web.post",
        "aiohttp.web.put",
        "aiohttp.web.patch",
        "aiohttp.web.delete",
        "aiohttp.web.route",
        "aiohttp.web.view",
        "django.urls.path",
        "django.urls.re_path",
    }
)

# Base classes whose methods are per-request hooks: qualified-name suffix -> hook methods (None: every public method).
HOOK_BASES: dict[str, frozenset[str] | None] = {
    # TorchServe
    "ts.torch_handler.base_handler.BaseHandler": frozenset({"handle", "inference", "preprocess", "postprocess"}),
    # KServe
    "kserve.Model": frozenset({"predict", "preprocess", "postprocess", "explain", "__call__"}),
    "kserve.model.Model": frozenset({"predict", "preprocess", "postprocess", "explain", "__call__"}),
    # LitServe
    "litserve.LitAPI": frozenset({"predict", "decode_request", "encode_response", "batch", "unbatch"}),
    "litserve.api.LitAPI": frozenset({"predict", "decode_request", "encode_response", "batch", "unbatch"}),
    # MLServer
    "mlserver.MLModel": frozenset({"predict", "predict_stream"}),
    "mlserver.model.MLModel": frozenset({"predict", "predict_stream"}),
    # Tornado, Django and aiohttp class-based views
    "tornado.web.RequestHandler": frozenset({"get", "post", "put", "patch", "delete"}),
    "django.views.View": frozenset({"get", "post", "put", "patch", "delete"}),
    "django.views.generic.View": frozenset({"get", "post", "put", "patch", "delete"}),
    "aiohttp.web.View": frozenset({"get", "post", "put", "patch", "delete"}),
}
# Hook classes recognised by name alone (the framework does not ship an importable base).
HOOK_CLASS_NAMES: dict[str, frozenset[str]] = {
    "TritonPythonModel": frozenset({"execute"}),
}
# Class decorators that make every public method (and __call__) a request handler.
DEPLOYMENT_DECORATORS = frozenset({"ray.serve.deployment", "ray.serve.api.deployment", "bentoml.service"})
# Method decorators that make a method a request handler.
API_DECORATORS = frozenset({"bentoml.api", "bentoml.task"})

# Function name prefixes of SPEC §2 (matched after leading underscores, case-insensitively).
INFERENCE_NAME_PREFIXES = ("predict", "infer", "inference", "serve", "generate", "evaluate")

# Lightning hooks that already run under no_grad; predict_step serves predictions.
LIGHTNING_INFERENCE_HOOKS = frozenset({"predict_step"})
LIGHTNING_NO_GRAD_HOOKS = frozenset({"predict_step", "test_step", "validation_step"})
LIGHTNING_TRAINING_HOOKS = frozenset({"training_step"})

# Method names whose call marks the enclosing function or loop as training.
TRAINING_METHODS = frozenset({"backward", "zero_grad"})
TRAINING_CALLS = frozenset(
    {
        "torch.autograd.grad",
        "torch.autograd.backward",
        "torch.cuda.amp.GradScaler",
        "torch.amp.GradScaler",
        "torch.cpu.amp.GradScaler",
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
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"})

# Producers of model objects (SPEC §2, "Model objects").
MODEL_LOADERS = frozenset({"torch.load", "torch.jit.load", "torch.hub.load", "torch.export.load", "torch.jit.script", "torch.compile"})
MODEL_CONSTRUCTOR_PREFIXES = ("torchvision.models.", "timm.create_model", "timm.models.")
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "lightning.LightningModule", "pytorch_lightning.LightningModule", "transformers.PreTrainedModel"})
