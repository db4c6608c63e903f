"""What a call loads: a model, pipeline, ONNX Runtime session, tokenizer or processor (GEM502 asks it of
per-request code, GEM202 of start-up code)."""

from __future__ import annotations

import sys

import libcst as cst
from libcst.metadata import Assignment

from gemlint.analysis import frameworks as fw
from gemlint.analysis.module import ModuleAnalysis, dotted_name
from gemlint.analysis.scopes import references_of
from gemlint.analysis.syntax import NOT_LITERAL, argument, literal_value, terminal_name

# TensorRT's `Runtime` method that turns a serialized engine into one: the engine holds the weights. A method of an
# object (`runtime.deserialize_cuda_engine(data)`), told by its name in a module that imports TensorRT.
_ENGINE_DESERIALIZER = "deserialize_cuda_engine"
# The last name of every loader call (qualified names decide; this only skips the other calls cheaply).
LOADER_NAMES = frozenset(
    fw.PRETRAINED_METHODS
    | {name.rsplit(".", 1)[-1] for name in fw.MODEL_PRODUCERS.keys() | fw.MODEL_LOADERS | fw.WEIGHT_DOWNLOADERS | fw.PRETRAINED_CONSTRUCTORS}
    | {name.rsplit(".", 1)[-1] for name in fw.TOKENIZER_LOADERS | fw.CHECKPOINT_BUILDERS.keys()}
    | {_ENGINE_DESERIALIZER}
)
#: The keywords with which a vision library's model constructor downloads and loads pretrained weights
#: (``resnet50(weights="DEFAULT")``, ``timm.create_model(name, pretrained=True)``).
WEIGHT_KEYWORDS = frozenset({"pretrained", "weights"})
_VISION_LIBRARIES = ("torchvision.models.", "timm.")
# Every qualified name load_kind compares a call with.
_LOADS = fw.TOKENIZER_LOADERS | fw.MODEL_LOADERS | fw.WEIGHT_DOWNLOADERS | frozenset(fw.MODEL_PRODUCERS) | fw.PRETRAINED_CONSTRUCTORS
_IN_MEMORY = frozenset({"io.BytesIO", "_io.BytesIO"})
_WIDGETS = ("streamlit.", "gradio.")
# Parameter types of a request's uploaded files, and the calls that only spell a path another way.
_UPLOADED_FILES = frozenset({"cog.Path", "cog.File", "cog.types.Path", "cog.types.File", "fastapi.UploadFile", "starlette.datastructures.UploadFile"})
_AS_PATH = frozenset({"str", "builtins.str", "os.fspath", "pathlib.Path"})
_WIDGET_LIBRARIES = frozenset({"streamlit", "gradio"})
# Calls that write a checkpoint: a function that reads one and writes one, running no model, rewrites weights.
_WEIGHT_WRITERS = frozenset({"torch.save", "safetensors.torch.save_file", "safetensors.torch.save_model"})
# What a value read from a file may go through and stay data: its mapping views, and builtins that only look at it.
_MAPPING_READS = frozenset({"keys", "items", "values", "get"})
_LOOKING_BUILTINS = frozenset(
    {"len", "str", "print", "isinstance", "sorted", "list", "tuple", "set", "enumerate", "zip", "range", "int", "float", "bool"}
)
# Expressions that compute a new value from their operands: what is computed from data is data.
_COMPUTING = (cst.BinaryOperation, cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.UnaryOperation, cst.FormattedStringExpression)


def _builder(call: cst.Call) -> cst.BaseExpression:
    """What ``call`` calls, the registry for a registry's builder (``registry[kind](...)``)."""
    return call.func.value if isinstance(call.func, cst.Subscript) else call.func


def may_load(call: cst.Call) -> bool:
    """Whether ``call`` may load, by its spelling alone: named as a loader, or given pretrained weights
    (:func:`load_kind` decides, from qualified names)."""
    return terminal_name(_builder(call)) in LOADER_NAMES or any(arg.keyword is not None and arg.keyword.value in WEIGHT_KEYWORDS for arg in call.args)


def _pretrained_vision_model(analysis: ModuleAnalysis, node: cst.Call) -> bool:
    """A torchvision or timm model constructor given pretrained weights: a truthy literal (``pretrained=True``,
    ``weights="DEFAULT"``) or a member of a weights enum (``weights=ResNet50_Weights.IMAGENET1K_V2``). A flag passed
    on (``pretrained=args.pretrained``) may be off: not known to load."""
    given = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value in WEIGHT_KEYWORDS), None)
    if given is None:
        return False
    value = literal_value(given)
    if value is NOT_LITERAL:
        if not isinstance(given, cst.Attribute) or not any(part.endswith("Weights") for part in (dotted_name(given) or "").split(".")):
            return False
    elif not value:
        return False  # `weights=None`, `pretrained=False`: random weights, nothing loaded
    return any(fw.is_vision_constructor(name) for name in analysis.names_with_prefix(node.func, _VISION_LIBRARIES))


def _built_from_a_checkpoint(analysis: ModuleAnalysis, node: cst.Call) -> bool:
    """A builder of :data:`fw.CHECKPOINT_BUILDERS` (or a builder of the registry: ``sam_model_registry[kind](...)``)
    given a checkpoint that is not ``None``."""
    for name in analysis.names_among(_builder(node), fw.CHECKPOINT_BUILDERS.keys()):
        keyword, position = fw.CHECKPOINT_BUILDERS[name]
        given = argument(node, position, keyword)
        if given is not None and literal_value(given.value) not in (None, False, ""):
            return True
    return False


def load_kind(analysis: ModuleAnalysis, node: cst.Call) -> str | None:
    """"a model", "a pipeline", "an ONNX Runtime session", "a TensorRT engine", "a tokenizer", "a processor", or
    None."""
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == _ENGINE_DESERIALIZER:
        return "a TensorRT engine" if analysis.imports_any(("tensorrt",)) else None
    names = analysis.names_among(node.func, _LOADS)
    if names & fw.TOKENIZER_LOADERS:
        return "a tokenizer"
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in fw.PRETRAINED_METHODS:
        label = (dotted_name(func.value) or "").rsplit(".", 1)[-1]
        if _library_class(analysis, func.value):
            return "a tokenizer" if "Tokenizer" in label else "a processor" if label.endswith(fw.NON_MODEL_PRETRAINED) else "a model"
        return None
    if names & fw.WEIGHT_DOWNLOADERS:
        return None if read_as_data(analysis, node) else "a model's weights"
    if names & fw.MODEL_LOADERS:
        if node.args and (_in_memory_bytes(analysis, node.args[0].value) or _uploaded(analysis, node.args[0].value)):
            # `torch.load(io.BytesIO(body))`, `torch.load(st.file_uploader(...))`: a payload the user sent
            return None
        if names & fw.TENSOR_READERS and read_as_data(analysis, node):
            return None  # `torch.load(path)["description"]`: a saved dictionary read, no model
        return "a model"
    loaded = names & (fw.MODEL_PRODUCERS.keys() | fw.PRETRAINED_CONSTRUCTORS)
    if not loaded and (_pretrained_vision_model(analysis, node) or _built_from_a_checkpoint(analysis, node)):
        return "a model"
    if not loaded:
        return None  # constructing a project nn.Module or wrapping one (torch.compile) is not a load
    family = fw.MODEL_PRODUCERS.get(sorted(loaded)[0])
    if family == "pipeline" and _wraps_a_loaded_model(analysis, node):
        return None  # `pipeline("translation", model=model, ...)` with a model loaded before: nothing is loaded
    return {"pipeline": "a pipeline", "onnxruntime": "an ONNX Runtime session"}.get(family or "", "a model")


def _library_class(analysis: ModuleAnalysis, owner: cst.BaseExpression) -> bool:
    """``owner`` (``EdsrModel`` of ``EdsrModel.from_pretrained``) is a class of a library the file imports: a hub
    library's, or, where the project is known, one of any package outside the project and the standard library
    (``from_pretrained`` is the hub's convention, which libraries such as super-image follow). A project class's own
    ``from_pretrained`` is the project model's business (``inherited_pretrained``, ``helper_loads``)."""
    if analysis.resolves_with_prefix(owner, fw.FROM_PRETRAINED_LIBRARIES):
        return True
    spelled = dotted_name(owner)
    names = analysis.names_from_imports(spelled) if spelled and analysis.outside is not None else None
    return bool(names) and all(_third_party(analysis, name) for name in names)


def _third_party(analysis: ModuleAnalysis, name: str) -> bool:
    """``name`` (qualified) is of a package outside the project and the standard library; a relative import's
    name (``.models.Net``) is the project's."""
    root = name.partition(".")[0]
    return bool(root) and root != "builtins" and root not in sys.stdlib_module_names and not analysis.outside.project_package(root)


def read_as_data(analysis: ModuleAnalysis, node: cst.Call) -> bool:
    """What ``node`` (``torch.load(path)``) reads is only read as data: every use of it takes an entry by key,
    iterates it, or computes a string or number from it (``saved["name"] + saved["text"]``, ``for k in
    saved["bank"].keys()``), in a function that puts no weights into a model; or it is fed to a model's forward. A
    value called, handed to another call (``load_state_dict``), returned or kept may be a model: it stays a load."""
    if _fed_to_a_model(analysis, node) or _rewrites_weights(analysis, node):
        return True
    function = analysis.enclosing_function(node)
    if any(analysis.enclosing_function(site.call) is function for site in analysis.index.sites("load_state_dict")):
        return False
    return _used_as_data(analysis, node, 0)


def _rewrites_weights(analysis: ModuleAnalysis, node: cst.Call) -> bool:
    """``node`` reads a checkpoint in a function that writes one and runs no model: weights merged or converted
    (``mixed[k] += model[k] * rate``, then ``torch.save(mixed, path)``), a job the user asked for, not a model
    loaded to serve."""
    function = analysis.enclosing_function(node)
    if function is None:
        return False
    calls = [call for call in analysis.subtree(function.body) if isinstance(call, cst.Call)]
    return any(analysis.resolves_to(call.func, _WEIGHT_WRITERS) for call in calls) and not any(
        analysis.models.forward_receiver(call) is not None for call in calls
    )


def _fed_to_a_model(analysis: ModuleAnalysis, node: cst.Call) -> bool:
    """``model(torch.load(path))``: what is read is the input of a model's forward, not weights."""
    parent = analysis.parent(node)
    call = analysis.parent(parent) if isinstance(parent, cst.Arg) and parent.keyword is None else None
    if not isinstance(call, cst.Call):
        return False
    receiver = analysis.models.forward_receiver(call)
    return receiver is not None and bool(analysis.models.origins(receiver))


def _used_as_data(analysis: ModuleAnalysis, node: cst.CSTNode, depth: int, entry: bool = False) -> bool:
    parent = analysis.parent(node)
    if isinstance(parent, cst.Subscript) and parent.value is node:
        return _used_as_data(analysis, parent, depth, True)  # an entry of it: what that entry is used for decides
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _MAPPING_READS:
        call = analysis.parent(parent)
        return isinstance(call, cst.Call) and call.func is parent and _used_as_data(analysis, call, depth, True)
    if entry and isinstance(parent, (cst.DictElement, cst.Element)) and parent.value is node:
        return True  # an entry copied into a record (`{"name": saved.get("name")}`): a value read, not a model kept
    if isinstance(parent, _COMPUTING) or isinstance(parent, cst.Index):
        return True  # a string or number computed from it, or a key that looks another entry up
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
        return True  # its entries listed (tensors copied into a bank, names printed)
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is node:
        return True  # tested for a value (`if saved.get("speakers"):`)
    if isinstance(parent, cst.Arg):
        call = analysis.parent(parent)
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _LOOKING_BUILTINS
    if isinstance(parent, cst.Assign) and parent.value is node and depth < 2 and len(parent.targets) == 1:
        target = parent.targets[0].target
        if not isinstance(target, cst.Name):
            return False  # kept in an attribute or unpacked: what holds it is not followed
        return all(
            _used_as_data(analysis, access.node, depth + 1)
            for assignment in analysis.assignments_of(target)
            if isinstance(assignment, Assignment) and assignment.node is target
            for access in references_of(assignment)
        )
    return False


def _wraps_a_loaded_model(analysis: ModuleAnalysis, node: cst.Call) -> bool:
    """A pipeline handed a model object (not a name or path to load one from)."""
    model = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "model"), None)
    if model is None and len(node.args) > 1 and node.args[1].keyword is None:
        model = node.args[1].value
    return model is not None and bool(analysis.models.origins(model))


def _in_memory_bytes(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and analysis.resolves_to(value.func, _IN_MEMORY)


def _uploaded(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    """A file a Streamlit or Gradio widget hands over (``upload = st.file_uploader(...)``, a parameter of a Gradio
    callback, which Gradio fills from the app's input components), or a parameter typed as an uploaded file (a Cog
    ``Path`` input): the user's data."""
    if isinstance(value, cst.Attribute) and value.attr.value == "name" and isinstance(value.value, cst.Name):
        if analysis.is_parameter(value.value):
            return True  # `torch.load(upload.name)`: a file object handed in (Gradio's uploads are), not a path
    while isinstance(value, (cst.Attribute, cst.Subscript)):
        value = value.value  # `file.name`, `files[0]`: the upload's path
    if isinstance(value, cst.Call) and len(value.args) == 1 and analysis.resolves_to(value.func, _AS_PATH):
        value = value.args[0].value  # `str(image)`, `os.fspath(upload)`
    if isinstance(value, cst.Name) and _uploaded_file_parameter(analysis, value):
        return True
    if not isinstance(value, cst.Name):
        return _widget_call(analysis, value)
    if not analysis.may_name_from(_WIDGET_LIBRARIES):
        return False  # no Gradio callback and no widget: `torch.load(path)` in a file without Streamlit or Gradio
    for assignment in analysis.assignments_of(value):
        if isinstance(assignment.node, cst.Param):
            function = analysis.enclosing_function(assignment.node)
            if function is not None and analysis.is_gradio_callback(function):
                return True
    return any(_widget_call(analysis, bound) for bound in analysis.assigned_values(value))


def _uploaded_file_parameter(analysis: ModuleAnalysis, name: cst.Name) -> bool:
    """``name`` is a parameter annotated as a file a request uploads (Cog's ``Path``/``File`` inputs, FastAPI's
    ``UploadFile``): what it reads is the request's payload."""
    if not analysis.is_parameter(name):
        return False
    for assignment in analysis.assignments_of(name):
        param = assignment.node
        if isinstance(param, cst.Param) and param.annotation is not None and analysis.resolves_to(param.annotation.annotation, _UPLOADED_FILES):
            return True
    return False


def _widget_call(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    """A call of Streamlit or Gradio (``st.file_uploader(...)``): what it returns is what the user handed over."""
    return isinstance(value, cst.Call) and analysis.resolves_with_prefix(value.func, _WIDGETS)
