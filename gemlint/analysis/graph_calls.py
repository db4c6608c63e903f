"""What calls, methods and attributes do to the autograd graphs of the tensors they are given: which
keep them (``torch`` operations, tensor methods), which break the link (``.detach()``, ``.item()``,
``.numpy()``, tensor constructors, numpy), which only store or log a value. The vocabulary of
:mod:`gemlint.analysis.autograd_graphs`."""

from __future__ import annotations

import builtins

import libcst as cst

from gemlint.analysis.syntax import NOT_LITERAL, literal_value, terminal_name

#: Tensor methods whose result carries no graph.
BREAKING_METHODS = frozenset(
    {
        "detach", "detach_", "item", "tolist", "numpy", "sample", "argmax", "argmin", "argsort", "long", "int",
        "bool", "byte", "char", "short", "size", "dim", "numel", "nelement", "eq", "ne", "lt", "le", "gt", "ge",
        "isnan", "isinf", "isfinite", "nonzero", "requires_grad_", "zero_", "fill_", "__len__", "keys",
        "data_ptr", "element_size", "stride", "is_contiguous", "get_device", "zero_grad", "step",
    }
)
#: Tensor methods whose arguments are devices, dtypes or shapes: the result carries the receiver's graph only.
SHAPING_METHODS = frozenset(
    {
        "to", "cuda", "cpu", "type", "type_as", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as",
        "permute", "transpose", "squeeze", "unsqueeze", "repeat", "flatten", "float", "double", "half",
        "contiguous", "narrow", "chunk", "split", "sum", "mean", "std", "var", "norm", "max", "min", "softmax",
        "log_softmax",
    }
)
#: Keyword arguments that carry devices, dtypes, dimensions and options rather than tensors.
OPTION_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "dim", "reduction", "keepdim", "ignore_index", "label_smoothing", "requires_grad"})
#: Attributes of a tensor that carry no graph.
BREAKING_ATTRIBUTES = frozenset({"data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf", "ndim"})
#: Methods that put a value into their receiver.
STORING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "put", "put_nowait", "setdefault", "push"})
#: Calls that only record a value (loggers, progress bars, metric meters): neither keep nor backpropagate it.
LOGGING_METHODS = frozenset(
    {
        "add_scalar", "add_scalars", "add_histogram", "add_image", "add_text", "log", "log_dict", "log_metrics",
        "info", "debug", "warning", "warn", "error", "print", "write", "set_postfix", "set_description", "record",
        "store", "format",
    }
)
#: Builtins whose result carries none of their arguments' graphs.
DATA_BUILTINS = frozenset(
    {
        "float", "int", "bool", "str", "len", "print", "isinstance", "issubclass", "range", "round", "repr", "type",
        "id", "hash", "format", "callable", "hasattr", "getattr", "setattr", "open", "super", "vars", "locals",
        "globals",
    }
)
BUILTINS = frozenset(dir(builtins))
#: Libraries whose functions compute on tensors: results carry their tensor arguments' graphs.
TENSOR_LIBRARIES = ("torch.", "torchvision.", "functorch.", "einops.")
#: Libraries whose results never carry a graph.
DATA_LIBRARIES = ("numpy.", "math.", "random.", "scipy.", "pandas.", "time.", "copy.", "logging.", "os.", "json.")
#: ``torch`` functions that create tensors from data (no graph), by their last dotted part.
TENSOR_CONSTRUCTORS = frozenset(
    {
        "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn", "randint",
        "randperm", "arange", "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like",
        "full_like", "rand_like", "randn_like", "randint_like", "Tensor", "FloatTensor", "LongTensor",
        "DoubleTensor", "HalfTensor", "IntTensor", "ByteTensor", "BoolTensor", "BFloat16Tensor", "normal",
        "bernoulli", "multinomial", "poisson", "argmax", "argmin", "argsort", "no_grad", "enable_grad",
        "inference_mode", "set_grad_enabled", "device", "manual_seed", "is_tensor", "numel", "get_default_dtype",
        "Generator", "Size", "isnan", "isinf", "isfinite", "eq", "ne", "lt", "le", "gt", "ge", "equal", "allclose",
    }
)
GRAD_FREE_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})
GRAD_CONTEXTS = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
#: Methods run when a class is set up, whose stores hold modules and settings rather than computed tensors.
SETUP_METHODS = frozenset({"__init__", "__post_init__", "setup", "build", "reset_parameters", "_init_weights"})


def library_result(qualified: frozenset[str], arguments: frozenset) -> frozenset | None:
    """What a call of a library function named ``qualified`` carries: none of its arguments' graphs
    (numpy, math, tensor constructors), all of them (``torch`` operations), or None for other code."""
    names = sorted(qualified)
    if any(name.startswith(DATA_LIBRARIES) for name in names):
        return frozenset()
    if any(name.startswith(TENSOR_LIBRARIES) or name in ("torch",) for name in names):
        if any(name.rsplit(".", 1)[-1] in TENSOR_CONSTRUCTORS for name in names):
            return frozenset()
        return arguments
    return None


def may_carry_graph(value: cst.BaseExpression) -> bool:
    """A stored value that may be a computed tensor: not a literal, a construction (``Net(...)``,
    ``torch.zeros(...)``), a detached copy or a number."""
    if literal_value(value) is not NOT_LITERAL:
        return False
    if isinstance(value, (cst.BaseString, cst.Lambda, cst.Comparison)):
        return False
    if isinstance(value, cst.Call):
        name = terminal_name(value.func) or ""
        if name[:1].isupper() or name in BREAKING_METHODS or name in TENSOR_CONSTRUCTORS or name in DATA_BUILTINS:
            return False
        if name == "cpu" or name == "to":
            return may_carry_graph(value.func.value) if isinstance(value.func, cst.Attribute) else True
    if isinstance(value, cst.Attribute) and value.attr.value in BREAKING_ATTRIBUTES:
        return False
    return True
