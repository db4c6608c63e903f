"""Which functions run once per request (GEM502), as opposed to once per process.

Per request: HTTP route handlers, framework per-request hooks (TorchServe
``handle``/``inference``/..., KServe ``predict``, Ray Serve deployment methods,
Triton ``execute``, BentoML APIs, LitServe ``predict``/``decode_request``...),
per-request middleware (Flask ``before_request``, FastAPI ``middleware``), and
same-file helpers called only from those. Once per process: module level,
``__init__`` and the framework's setup hooks (``initialize``, ``load``,
``setup``), startup events, and results memoised with ``functools.cache`` and
friends or kept in a lazily filled global or attribute (``if self.model is None:``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from gemlint.analysis import apps, bots
from gemlint.analysis.dependencies import dependents_of
from gemlint.analysis.frameworks import is_setup_hook, manages_models, measures_models
from gemlint.analysis.loads import load_kind
from gemlint.analysis.module import ModuleAnalysis, dotted_name
from gemlint.analysis.routes import is_route_decorator, routed_resource_reason
from gemlint.analysis.syntax import NOT_LITERAL, SCOPE_NODES, is_name, literal_value, terminal_name, named_parameters, parameter_position, passed_argument

#: How a Gradio callback is named in the reasons (which :func:`switches_model` reads).
GRADIO_EVENT = "a Gradio event handler"
#: The reason of a Streamlit script's module level (which GEM502's advice reads).
STREAMLIT_RERUN = "module-level code of a Streamlit app, which reruns on every interaction"

_CACHE_DECORATORS = frozenset(
    {
        "functools.cache",
        "functools.lru_cache",
        "functools.cached_property",
        "async_lru.alru_cache",
        "cachetools.cached",
        "cachetools.func.lru_cache",
        "cachetools.func.ttl_cache",
    }
)
# Decorator methods that make a function a per-request hook.
_PER_REQUEST_HOOK_DECORATORS = frozenset({"before_request", "after_request", "middleware", "before_app_request"})
# Decorator methods that register startup code.
_STARTUP_DECORATORS = frozenset({"on_event", "before_serving", "before_first_request", "listener", "on_startup", "after_server_start", "before_server_start"})
_MAX_CALLER_DEPTH = 4


def _decorator_target(decorator: cst.Decorator) -> cst.BaseExpression:
    expression = decorator.decorator
    return expression.func if isinstance(expression, cst.Call) else expression


#: The last names of caching decorators of any package (a project's own `@memoize` among them).
_CACHE_NAMES = frozenset({"cache", "lru_cache", "cached", "alru_cache", "cached_property", "memoize"})


def is_cached(analysis: ModuleAnalysis, function: cst.FunctionDef) -> bool:
    if apps.runs_once(analysis, function):
        return True  # `@st.cache_resource`
    for decorator in function.decorators:
        target = _decorator_target(decorator)
        if analysis.resolves_to(target, _CACHE_DECORATORS):
            return True
        name = (dotted_name(target) or "").rsplit(".", 1)[-1]
        if name in _CACHE_NAMES:
            return True
    return False


def caches(qualified: str) -> bool:
    """A decorator of this qualified name (as a module's imports make its spelling) makes its function run once per
    set of arguments: :func:`is_cached` for a function of another module, read from its summary."""
    return qualified in _CACHE_DECORATORS or qualified in apps.STREAMLIT_RUN_ONCE or qualified.rsplit(".", 1)[-1] in _CACHE_NAMES


def _own_reason(analysis: ModuleAnalysis, function: cst.FunctionDef) -> str | None:
    name = function.name.value
    if manages_models(name) or measures_models(name):
        return None  # a route or RPC that exports, switches, loads or benchmarks a model loads because it is asked to
    for decorator in function.decorators:
        target = _decorator_target(decorator)
        if is_route_decorator(analysis, decorator.decorator):
            return f"`{name}` is an HTTP route handler"
        attribute = target.attr.value if isinstance(target, cst.Attribute) else None
        if attribute in _PER_REQUEST_HOOK_DECORATORS:
            return f"`{name}` runs before or after every request"
        if attribute in _STARTUP_DECORATORS:
            return None
    resource = routed_resource_reason(analysis, function)
    if resource is not None:
        return resource
    if analysis.is_serving_api(function):
        return f"`{name}` is a serving API, run on every request"
    if analysis.is_torchserve_entry(function):
        return f"`{name}` is TorchServe's module-level entry point, run on every request"
    if analysis.is_registered_handler(function):
        return f"`{name}` is registered as a route handler"
    if analysis.is_gradio_callback(function):
        return f"`{name}` is {GRADIO_EVENT}, run on every event"
    handing = analysis.gradio_callback_elsewhere(function)
    if handing is not None:
        return f"`{name}` is {GRADIO_EVENT} (in `{handing}`), run on every event"
    routing = analysis.route_handler_elsewhere(function)
    if routing is not None:
        return f"`{name}` is registered as a route handler in `{routing}`"
    if analysis.is_bot_handler(function):
        return f"`{name}` is {bots.handler_kind(analysis)}, run on every message"
    if analysis.is_queue_task(function):
        return f"`{name}` is a Celery task, run for every job"
    owner = analysis.enclosing_class(function)
    if owner is not None and not is_setup_hook(name):
        hooks = analysis.class_hooks(owner)
        if hooks is not None and (name in hooks or (not hooks and (not name.startswith("_") or name == "__call__"))):
            return f"`{owner.name.value}.{name}` is called by the serving framework for every request"
    return None


def per_request_reason(
    analysis: ModuleAnalysis, function: cst.FunctionDef, _depth: int = 0, reaches: Callable[[cst.Call], bool] | None = None
) -> str | None:
    """Why ``function`` runs on every request, or None. With ``reaches``, only the same-file calls it accepts count
    (those whose arguments may take the branch in question)."""
    if is_cached(analysis, function):
        return None
    name = function.name.value
    if is_setup_hook(name):
        # Named as a setup hook (`load`, `setup`, `load_model`), it runs once: unless the code hands it to an
        # app's page-load event, which runs it for every visitor. (A "Load" button's click runs it because the
        # user asked for it.)
        return f"`{name}` is {GRADIO_EVENT}, run on every page load" if analysis.is_gradio_callback(function, page_load=True) else None
    reason = _own_reason(analysis, function)
    if reason is not None or _depth >= _MAX_CALLER_DEPTH:
        return reason
    callers = analysis.callers_of(function)
    if reaches is not None:
        callers = [call for call in callers if reaches(call)]
    reasons = []
    for call in callers:
        caller = analysis.enclosing_function(call)
        if caller is None and _reruns(analysis):
            reasons.append(STREAMLIT_RERUN)
            continue
        if caller is None and analysis.in_library_main_block(call):
            continue  # the module's own demo, run by hand: importing it, as request code does, never runs it
        if caller is None or caller is function:
            return None  # also called at import time or recursively: not only per request
        if kept_or_keyed(analysis, call):
            continue  # `if ENGINE is None: ENGINE = make_engine()`: what this call makes is kept, made once
        caller_reason = per_request_reason(analysis, caller, _depth + 1)
        if caller_reason is None:
            return None
        if switches_model(analysis, call, caller_reason) and returns_what_it_loads(analysis, function):
            continue  # an admin's `POST /config` that keeps the model this call makes in the app's state, for the other routes
        reasons.append(caller_reason)
    for dependent in dependents_of(analysis, function):
        # FastAPI calls the function to give a parameter of the route its value: on every request
        dependent_reason = per_request_reason(analysis, dependent, _depth + 1)
        if dependent_reason is not None:
            reasons.append(f"FastAPI runs it for every request of `{dependent.name.value}`, through `Depends`: {dependent_reason}")
    if analysis.outside is not None:  # callers in other modules count alike (the project model bounds the hops)
        reasons.extend(analysis.outside.per_request_dependents(analysis, function))
        elsewhere = analysis.outside.per_request_callers(analysis, function)
        if any(reason is None for reason in elsewhere):
            return None
        reasons.extend(elsewhere)  # type: ignore[arg-type]
    if reasons:
        return f"`{function.name.value}` is called from request code ({reasons[0]})"
    return None


def returns_what_it_loads(analysis: ModuleAnalysis, function: cst.FunctionDef) -> bool:
    """Every value ``function`` returns is a model it loads: a load, or a name the function binds only to loads and
    ``None`` (``model = None``, ``model = WhisperModel(...)``, ``return model``). What a caller keeps of it is then
    the model, not a prediction made with it."""
    returned = analysis.returned_values(function)
    if not returned:
        return False
    for value in returned:
        made = [v for v in analysis.assigned_values(value) if not is_name(v, "None")] if isinstance(value, cst.Name) else [value]
        if not made or not all(isinstance(call, cst.Call) and load_kind(analysis, call) is not None for call in made):
            return False
    return True


def _reruns(analysis: ModuleAnalysis) -> bool:
    """The module level of this file runs again on every interaction: a Streamlit script (not a test)."""
    return analysis.is_streamlit_app and not analysis.is_test_file


def runs_per_request(analysis: ModuleAnalysis, node: cst.CSTNode) -> str | None:
    """Why ``node`` runs on every request: its function is per-request code (see :func:`per_request_reason`)
    and what it makes is neither kept once nor reloaded only when asked for another (:func:`kept_or_keyed`); else
    None. A test module serves no request: what it loads or compiles, it does for the test (the rules' triage rules
    test modules out with `NotTest()`, sooner)."""
    if analysis.is_test_file or analysis.is_training_file:
        return None  # a training module (`training-paths`) loads what it trains, whatever asks it to
    function = analysis.enclosing_function(node)
    if function is None:
        return STREAMLIT_RERUN if _reruns(analysis) else None  # a class body at module level reruns too
    if analysis.trains(function):
        return None  # a request that starts training (a web UI's "train" button) loads what it trains
    if _switched_off(analysis, node, function):
        return None
    reason = per_request_reason(analysis, function, reaches=_branch_reacher(analysis, node, function))
    if reason is None or kept_or_keyed(analysis, node) or switches_model(analysis, node, reason) or _default_for_a_missing_argument(analysis, node, function):
        return None
    return reason


def _switched_off(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """``node`` is in a branch of ``function`` that the function's own switch rules out: the test is a local the
    function binds once, above it, to a literal whose truth is the other branch's (``classify = False``, then ``if
    classify:``, as YOLOv5's ``detect.py`` ships its second-stage classifier), and binds nowhere else."""
    child: cst.CSTNode = node
    for ancestor in analysis.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If) and child in (ancestor.body, ancestor.orelse):
            test, truth = ancestor.test, child is ancestor.body
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, truth = test.expression, not truth
            if isinstance(test, cst.Name):
                value = _bound_once_to(analysis, test, function)
                if value is not None and (literal := literal_value(value)) is not NOT_LITERAL and bool(literal) is not truth:
                    return True
        child = ancestor
    return False


def _bound_once_to(analysis: ModuleAnalysis, name: cst.Name, function: cst.FunctionDef) -> cst.BaseExpression | None:
    """The value of the one plain assignment that binds ``name`` in ``function``, above it (``classify = False``),
    where nothing else binds it (a parameter, a loop, another assignment); else None."""
    assignments = analysis.assignments_of(name)
    if len(assignments) != 1:
        return None
    target = assignments[0].node
    statement = analysis.parent(analysis.parent(target)) if isinstance(target, cst.Name) else None
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 or statement.targets[0].target is not target:
        return None
    if analysis.enclosing_function(statement) is not function or analysis.positions[statement].start.line >= analysis.positions[name].start.line:
        return None
    return statement.value


def _branch_reacher(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> Callable[[cst.Call], bool] | None:
    """For ``node`` in branches of a module-level ``function`` chosen by its parameters (``if set_cpu:``, ``if not
    warm:``): whether a call of the function may take them, by the literal it passes for each (or the parameter's
    default); None where no such branch holds ``node``."""
    if analysis.enclosing_class(function) is not None:
        return None
    parameters = {param.name.value: param for param in named_parameters(function)}
    wanted: list[tuple[cst.Param, bool]] = []  # each parameter, and the truth its branch needs
    child: cst.CSTNode = node
    for ancestor in analysis.ancestors(node):
        if ancestor is function:
            break
        if isinstance(ancestor, cst.If) and child in (ancestor.body, ancestor.orelse):
            test, truth = ancestor.test, child is ancestor.body
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, truth = test.expression, not truth
            if isinstance(test, cst.Name) and test.value in parameters:
                wanted.append((parameters[test.value], truth))
        child = ancestor
    if not wanted:
        return None

    def reaches(call: cst.Call) -> bool:
        if any(arg.star for arg in call.args):
            return True
        for param, truth in wanted:
            passed = passed_argument(call, parameter_position(function, param, bound=False), param.name.value)
            value = passed if passed is not None else param.default
            literal = literal_value(value) if value is not None else NOT_LITERAL
            if literal is not NOT_LITERAL and bool(literal) is not truth:
                return False
        return True

    return reaches


def kept_or_keyed(analysis: ModuleAnalysis, node: cst.CSTNode) -> bool:
    """What ``node`` loads is kept while empty (:func:`kept_once`), or its function loads only when asked for
    another than the one it keeps (:func:`_returns_while_kept`, :func:`_returns_a_kept_entry`): not a load on each
    call."""
    function = analysis.enclosing_function(node)
    return kept_once(analysis, node) or (
        function is not None
        and (
            _returns_while_kept(analysis, node, function)
            or _returns_a_kept_entry(analysis, node, function)
            or _fallback_for_a_kept_entry(analysis, node, function)
            or _under_a_keyed_reload(analysis, node, function)
            or _made_once_on_disk(analysis, node, function)
        )
    )


def _made_once_on_disk(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """Before ``node``, ``function`` returns when a file of a fixed name exists (``if os.path.exists("diff.png"):
    return``), and it writes a file: a result made once and kept on disk, loaded for only while the file is missing.
    A name the request chooses (``f"out/{job_id}.png"``) keys it per request, and is no such file."""
    tested = any(
        isinstance(earlier, cst.If) and earlier.orelse is None and _only_returns(earlier.body) and _tests_a_fixed_file(analysis, earlier.test)
        for earlier in _statements_before(analysis, node, function)
    )
    return tested and any(
        isinstance(call, cst.Call) and terminal_name(call.func) in _FILE_WRITES for call in analysis.subtree(function.body)
    )


#: Calls that write a file (an image, an array, a checkpoint, text).
_FILE_WRITES = frozenset({"save", "save_image", "imwrite", "savefig", "write_bytes", "write_text", "dump"})
_FILE_TESTS = frozenset({"exists", "isfile", "is_file", "getsize"})


def _tests_a_fixed_file(analysis: ModuleAnalysis, test: cst.BaseExpression) -> bool:
    """``test`` asks whether a file of a fixed name exists: ``os.path.exists("diff.png")``, ``Path("diff.png").exists()``,
    or each of a module's constant names (``any(os.path.exists(p) for p in CANDIDATES)``)."""
    for call in [test, *analysis.subtree(test)]:
        if not isinstance(call, cst.Call) or terminal_name(call.func) not in _FILE_TESTS:
            continue
        if call.args and _fixed_path(analysis, call.args[0].value):
            return True
        owner = call.func.value if isinstance(call.func, cst.Attribute) else None
        if isinstance(owner, cst.Call) and owner.args and terminal_name(owner.func) == "Path" and _fixed_path(analysis, owner.args[0].value):
            return True
    return False


def _fixed_path(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    """``value`` is a file name written in the code: a string, a name bound only to strings, or the target of a
    comprehension over a tuple or list of strings (directly or through such a name)."""
    if isinstance(literal_value(value), str):
        return True
    if not isinstance(value, cst.Name):
        return False
    for ancestor in analysis.ancestors(value):
        if isinstance(ancestor, (cst.GeneratorExp, cst.ListComp, cst.SetComp)):
            loop = ancestor.for_in
            if isinstance(loop.target, cst.Name) and loop.target.value == value.value:
                return _fixed_names(analysis, loop.iter)
    values = analysis.assigned_values(value)
    return bool(values) and all(isinstance(literal_value(v), str) for v in values)


def _fixed_names(analysis: ModuleAnalysis, items: cst.BaseExpression) -> bool:
    """``items`` is a tuple or list of strings, written out or bound (every time) to a name."""
    if isinstance(items, cst.Name):
        values = analysis.assigned_values(items)
        return bool(values) and all(_string_display(v) for v in values)
    return _string_display(items)


def _string_display(items: cst.BaseExpression) -> bool:
    return isinstance(items, (cst.Tuple, cst.List)) and bool(items.elements) and all(isinstance(literal_value(e.value), str) for e in items.elements)


def _under_a_keyed_reload(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """``node`` (a loader that keeps what it loads itself: ``ci.load_caption_model()``) runs only when the request asks
    for another model than the one kept (``if name != ci.config.caption_model_name: ci.config.caption_model_name =
    name; ci.load_caption_model()``)."""
    for ancestor in analysis.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If) and _updates_what_it_tests(analysis, ancestor, function):
            return True
    return False


def _returns_a_kept_entry(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """Before ``node``, ``function`` looks the request's key up in a container that outlives the call and returns
    what it finds (``cached = MODELS.get(name)``, ``if cached is not None: ...; return cached``), and it stores into
    that container: a cache, which loads only on a miss."""
    declared_global = _declared_global(analysis, function)
    found: dict[str, str] = {}  # local -> the container it was read from
    tested: set[str] = set()
    for earlier in _statements_before(analysis, node, function):
        for small in earlier.body if isinstance(earlier, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                container = _entry_read(small.value)
                if container is not None and _lasting_container(analysis, container, declared_global):
                    found[small.targets[0].target.value] = dotted_name(container) or ""
        if isinstance(earlier, cst.If) and _ends_in_a_return(earlier.body):
            for name in _mentioned(analysis, earlier.test):
                if name in found:
                    tested.add(found[name])
            for comparison in _comparisons(earlier.test):  # `if name in MODELS: return MODELS[name]`
                for target in comparison.comparisons:
                    if isinstance(target.operator, cst.In) and _lasting_container(analysis, target.comparator, declared_global):
                        tested.add(_container_spelling(target.comparator) or "")
    tested.discard("")
    return bool(tested) and any(_stores_into(n, tested) for n in analysis.subtree(function.body))


def _fallback_for_a_kept_entry(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """``node`` runs only where a container that outlives the call lacks the entry ``function`` returns otherwise
    (``if "embedder" not in app_state: return Embedder()``, then ``return app_state["embedder"]``): start-up fills
    it, and the load is a fallback for a run without it (a test, a script)."""
    declared_global = _declared_global(analysis, function)
    child: cst.CSTNode = node
    for ancestor in analysis.ancestors(node):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If) and child is ancestor.body and _ends_in_a_return(ancestor.body):
            container = _tested_for_a_missing_entry(ancestor.test)
            lasting = container is not None and _lasting_container(analysis, container, declared_global)
            if container is not None and (lasting or (isinstance(container, cst.Name) and analysis.import_bindings(container))):
                spelled = dotted_name(container)
                later = _statements_after(analysis, ancestor, function)
                if any(
                    isinstance(small, cst.Return) and small.value is not None and (entry := _entry_read(small.value)) is not None and dotted_name(entry) == spelled
                    for statement in later
                    for small in (statement.body if isinstance(statement, cst.SimpleStatementLine) else ())
                ):
                    return True
        child = ancestor
    return False


def _comparisons(test: cst.BaseExpression) -> list[cst.Comparison]:
    """The comparisons whose truth makes ``test`` hold: the test, or an operand of its ``or`` (``if tag == "base"
    or tag in LOADED: return``)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*_comparisons(test.left), *_comparisons(test.right)]
    return [test] if isinstance(test, cst.Comparison) else []


def _tested_for_a_missing_entry(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """The container a test finds without an entry: ``key not in C``, ``C.get(key) is None``, ``not C.get(key)``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _entry_read(test.expression)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, cst.NotIn):
            return target.comparator
        if isinstance(target.operator, cst.Is) and is_name(target.comparator, "None"):
            return _entry_read(test.left)
    return None


def _statements_after(analysis: ModuleAnalysis, statement: cst.CSTNode, function: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """The statements that run after ``statement`` in its block and in each block around it, up to ``function`` (a
    ``with lock:`` or ``try:`` around the test holds the return too)."""
    for body, index in _enclosing_blocks(analysis, statement, function):
        yield from body[index + 1:]


def _stores_into(node: cst.CSTNode, containers: set[str]) -> bool:
    """``node`` stores an entry into one of ``containers``: ``MODELS[name] = model``, ``MODELS.update({name:
    model})``, ``MODELS.setdefault(name, model)``, a cache object's ``MODELS.set(name, model)`` or ``put``, or records
    a key done (``LOADED.add(name)``)."""
    if isinstance(node, cst.Assign):
        return any(isinstance(t.target, cst.Subscript) and _container_spelling(t.target.value) in containers for t in node.targets)
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute) or _container_spelling(node.func.value) not in containers:
        return False
    method = node.func.attr.value
    return method in ("update", "setdefault", "add") or (method in ("set", "put") and len(node.args) >= 2)


def _container_spelling(container: cst.BaseExpression) -> str | None:
    """``MODELS``, ``self.models``, or an entry of one under a literal key (``STATE["adapters"]``)."""
    if isinstance(container, cst.Subscript) and len(container.slice) == 1:
        index = container.slice[0].slice
        key = literal_value(index.value) if isinstance(index, cst.Index) else NOT_LITERAL
        base = dotted_name(container.value)
        return f"{base}[{key!r}]" if base is not None and isinstance(key, str) else None
    return dotted_name(container)


def _entry_read(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The container ``value`` reads an entry of (``MODELS.get(name)``, ``MODELS[name]``), or None."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get" and value.args:
        return value.func.value
    if isinstance(value, cst.Subscript):
        return value.value
    return None


def _lasting_container(analysis: ModuleAnalysis, container: cst.BaseExpression, declared_global: set[str]) -> bool:
    """``container`` outlives the call: a module-level name, a global, or an attribute not of a local object, or an
    entry of one under a literal key (``STATE["adapters"]``)."""
    if isinstance(container, cst.Subscript) and _container_spelling(container) is not None:
        return _lasting_container(analysis, container.value, declared_global)
    if isinstance(container, cst.Name):
        return container.value in declared_global or container.value in _module_names(analysis)
    return isinstance(container, cst.Attribute) and not _of_a_local(analysis, container, declared_global)


def _ends_in_a_return(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(small, cst.Return) for small in last.body)


def _returns_while_kept(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """Before ``node``, ``function`` returns when what the request asks for is what an object keeps, and it sets
    that after loading (``if model.state_path == path: return``, then ``model.state_path = path``; ``if
    CACHE["rate"] == rate: return CACHE["model"]``, then ``CACHE["rate"] = rate``): a reload keyed by a setting,
    as ``if version != self.version:`` around the load is."""
    declared_global = _declared_global(analysis, function)
    tested: set[str] = set()
    for earlier in _statements_before(analysis, node, function):
        if isinstance(earlier, cst.If) and earlier.orelse is None and _only_returns(earlier.body):
            tested |= _state_compared(analysis, earlier.test, declared_global)
    # The function's assignments are read only where such a return is found (most loads have none before them).
    return bool(tested) and any(
        _lasting_names(analysis, [target.target for target in n.targets], declared_global) & tested
        for n in analysis.subtree(function.body)
        if isinstance(n, cst.Assign)
    )


def _state_compared(analysis: ModuleAnalysis, test: cst.BaseExpression, declared_global: set[str]) -> set[str]:
    """The lasting state (attributes, globals, module-level containers) that an equality in ``test`` reads, or that
    ``test`` finds set (``MODEL is not None``, a bare ``self.model``), where ``test`` holds only when that does: the
    whole test, or one operand of an ``and`` (``CACHE["loaded"] and CACHE["rate"] == rate``)."""
    parts, found = [test], set()
    while parts:
        part = parts.pop()
        if isinstance(part, cst.BooleanOperation) and isinstance(part.operator, cst.And):
            parts += [part.left, part.right]
        elif isinstance(part, cst.Comparison) and all(isinstance(t.operator, (cst.Equal, cst.Is)) for t in part.comparisons):
            read = [n for n in analysis.subtree(part, into_scopes=True) if isinstance(n, (cst.Name, cst.Attribute, cst.Subscript))]
            found |= _lasting_names(analysis, read, declared_global)
        elif (
            isinstance(part, cst.Comparison)
            and len(part.comparisons) == 1
            and isinstance(part.comparisons[0].operator, cst.IsNot)
            and is_name(part.comparisons[0].comparator, "None")
        ):
            found |= _lasting_names(analysis, [part.left], declared_global)  # `if MODEL is not None: return`: loaded once
        elif isinstance(part, (cst.Name, cst.Attribute, cst.Subscript)):
            found |= _lasting_names(analysis, [part], declared_global)  # `if self.model: return`
    return found


def _statements_before(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """The statements that run before ``node`` in its block and in each block around it, up to ``function``."""
    for body, index in _enclosing_blocks(analysis, node, function):
        yield from body[:index]


def _enclosing_blocks(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> Iterator[tuple[list | tuple, int]]:
    """Each block around ``node`` up to ``function``, innermost first, with the place in it of what holds ``node``."""
    child = node
    for ancestor in analysis.ancestors(node):
        if ancestor is function:
            return
        body = getattr(ancestor, "body", None)
        if isinstance(body, (list, tuple)) and child in body:
            yield body, body.index(child)
        child = ancestor


def _only_returns(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return len(statements) == 1 and isinstance(statements[0], cst.SimpleStatementLine) and len(statements[0].body) == 1 and isinstance(statements[0].body[0], cst.Return)


def _default_for_a_missing_argument(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """``node`` is assigned to a parameter of ``function`` under a test of that parameter (``if model is None:
    model = load()``): a default for a caller that passes none. How often it runs depends on the callers, which
    pass one when they have it (a Gradio app's session state, filled when the page loads)."""
    parameters = {param.name.value for param in named_parameters(function)}
    assigned: set[str] = set()
    for ancestor in analysis.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return False
        if isinstance(ancestor, cst.Assign) and not assigned:
            assigned = {target.target.value for target in ancestor.targets if isinstance(target.target, cst.Name)} & parameters
            if not assigned:
                return False
        elif isinstance(ancestor, cst.If) and assigned and _mentioned(analysis, ancestor.test) & assigned:
            return True
    return False


def kept_once(analysis: ModuleAnalysis, node: cst.CSTNode) -> bool:
    """``node`` is assigned to a global or attribute only when that is still empty (lazy loading).

    ``if self.model is None: self.model = load()``, ``if name not in CACHE: CACHE[name] = load()``,
    ``global MODEL`` with ``if MODEL is None``.
    """
    stored = _stored_beyond_the_call(analysis, node)
    if stored is None:
        return False
    statement, keys = stored
    function = analysis.enclosing_function(statement)
    for ancestor in analysis.ancestors(statement):
        if isinstance(ancestor, cst.FunctionDef):
            break
        if isinstance(ancestor, cst.If):
            if _tests_kept(analysis, ancestor, keys):
                return True
            if function is not None and _keyed_by_kept_state(analysis, ancestor, function):
                return True
    return function is not None and _called_only_while_empty(analysis, function, keys)


def kept_in_the_instance(analysis: ModuleAnalysis, node: cst.CSTNode) -> bool:
    """What ``node`` makes is kept only in attributes of ``self`` (``if self.model is None: self.model = load()``): an
    object built afresh holds nothing yet, so each construction that reaches it loads again."""
    stored = _stored_beyond_the_call(analysis, node)
    return stored is not None and bool(stored[1]) and all(key.startswith("self.") for key in stored[1])


def loads_on_construction(analysis: ModuleAnalysis, node: cst.CSTNode) -> bool:
    """``node`` is kept only in the instance (:func:`kept_in_the_instance`) by ``__init__``, or by a method that its
    class's ``__init__`` calls on ``self``: every new instance loads."""
    if not kept_in_the_instance(analysis, node):
        return False
    function = analysis.enclosing_function(node)
    owner = analysis.enclosing_class(function) if function is not None else None
    if owner is None:
        return False
    if function.name.value == "__init__":
        return True
    init = next((f for f in analysis.subtree(owner.body) if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"), None)
    return init is not None and any(
        isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and is_name(call.func.value, "self") and call.func.attr.value == function.name.value
        for call in analysis.subtree(init.body)
    )


def _tests_kept(analysis: ModuleAnalysis, branch: cst.If, keys: set[str]) -> bool:
    """``branch``'s test reads one of the globals or attributes ``keys`` the load is kept in, or another that the
    branch itself sets for good (``if text_encoder is None: text_encoder = ...; vae = load(...)``: the first load
    is the sentinel of all)."""
    tested = _mentioned(analysis, branch.test)
    if tested & keys or is_name(branch.test) and dotted_name(branch.test) in keys:
        return True
    return bool(tested & _kept_in(analysis, branch.body))


def _kept_in(analysis: ModuleAnalysis, block: cst.CSTNode) -> set[str]:
    """The globals and attributes an assignment in ``block`` sets for good."""
    kept: set[str] = set()
    for node in analysis.subtree(block):
        if isinstance(node, cst.Assign):
            stored = _stored_beyond_the_call(analysis, node.value)
            if stored is not None:
                kept.update(stored[1])
    return kept


def _called_only_while_empty(analysis: ModuleAnalysis, function: cst.FunctionDef, keys: set[str]) -> bool:
    """The lazy load split over two functions: ``function`` keeps what it loads in ``keys`` (a global, an
    attribute), and each of its calls, all in this file, runs under a test of what it keeps (``if MODEL is None:
    load_model()``, with ``load_model`` assigning the global ``MODEL``)."""
    calls = analysis.callers_of(function)
    if not calls or not all(_under_test_of_kept(analysis, call, keys) for call in calls):
        return False
    return analysis.outside is None or not analysis.outside.per_request_callers(analysis, function)


def called_while_empty(analysis: ModuleAnalysis, call: cst.Call, helper: cst.FunctionDef) -> bool:
    """``call`` of the loading ``helper`` runs under a test of a global or attribute the helper keeps (``if
    hifigan is None: init_hifigan()``, with ``init_hifigan`` assigning the global ``hifigan``)."""
    keys = _kept_in(analysis, helper.body)
    return bool(keys) and _under_test_of_kept(analysis, call, keys)


def _under_test_of_kept(analysis: ModuleAnalysis, node: cst.CSTNode, keys: set[str]) -> bool:
    """``node`` runs under a test, in its own function, of what ``keys`` keep."""
    for ancestor in analysis.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return False
        if isinstance(ancestor, cst.If) and _tests_kept(analysis, ancestor, keys):
            return True
    return False


def _mentioned(analysis: ModuleAnalysis, expression: cst.BaseExpression) -> set[str | None]:
    """The names and attributes ``expression`` reads, itself included (a test that is a bare name: ``if cached:``)."""
    return {dotted_name(n) for n in (expression, *analysis.subtree(expression, into_scopes=True)) if isinstance(n, (cst.Name, cst.Attribute))}


def _keyed_by_kept_state(analysis: ModuleAnalysis, branch: cst.If, function: cst.FunctionDef) -> bool:
    """The branch runs only when what a request asks differs from what the instance keeps: its test reads an
    attribute that the branch itself sets (``if version != self.version: ...; self.version = version``), or is a
    flag that only such branches set (``reload = True`` in each). A reload keyed by a setting, not one per request."""
    if _updates_what_it_tests(analysis, branch, function):
        return True
    if not isinstance(branch.test, cst.Name):
        return False
    flag = branch.test.value
    raised = []
    for node in analysis.subtree(function.body):
        if isinstance(node, cst.Assign) and any(is_name(target.target, flag) for target in node.targets):
            if isinstance(node.value, cst.Name) and node.value.value == "False":
                continue
            raised.append(node)
    return bool(raised) and all(
        any(isinstance(a, cst.If) and a is not branch and _updates_what_it_tests(analysis, a, function) for a in analysis.ancestors(node))
        for node in raised
    )


def _updates_what_it_tests(analysis: ModuleAnalysis, branch: cst.If, function: cst.FunctionDef) -> bool:
    """``branch``'s test reads an attribute of an object that outlives the call (``self.version``, a module-level
    object's ``ci.config.caption_model_name``) that an assignment in its body sets."""
    declared_global = _declared_global(analysis, function)
    tested = {
        name
        for node in (branch.test, *analysis.subtree(branch.test, into_scopes=True))
        if isinstance(node, cst.Attribute) and (name := dotted_name(node)) and not _of_a_local(analysis, node, declared_global)
    }
    if not tested:
        return False
    for node in analysis.subtree(branch.body):
        if isinstance(node, cst.Assign) and any(dotted_name(target.target) in tested for target in node.targets):
            return True
    return False


def _stored_beyond_the_call(analysis: ModuleAnalysis, node: cst.CSTNode) -> tuple[cst.CSTNode, set[str]] | None:
    """The assignment of ``node`` and the names it stores it under, when that storage outlives the call: an
    attribute, a global (or nonlocal), or an item of a module-level container."""
    statement = next((a for a in analysis.ancestors(node) if isinstance(a, (cst.Assign, cst.AnnAssign, cst.AugAssign))), None)
    if statement is None:
        return None
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
    declared_global = _declared_global(analysis, analysis.enclosing_function(statement))
    keys = _lasting_names(analysis, targets, declared_global)
    if keys:
        return statement, keys
    return _kept_through_a_local(analysis, statement, targets, declared_global)


def _declared_global(analysis: ModuleAnalysis, function: cst.FunctionDef | None) -> set[str]:
    """The names ``function``'s own ``global`` and ``nonlocal`` statements declare (not a nested function's or
    class's): read from the file's few such statements, not from a walk of the body for each assignment."""
    if function is None:
        return set()
    return {
        name.name.value
        for statement in analysis.nodes_of(cst.Global, cst.Nonlocal)
        if next((a for a in analysis.ancestors(statement) if isinstance(a, SCOPE_NODES)), None) is function
        for name in statement.names
    }


def _lasting_names(analysis: ModuleAnalysis, targets: list[cst.BaseExpression], declared_global: set[str]) -> set[str]:
    """The names of ``targets`` whose storage outlives the call: attributes (but those of an object the function
    made itself: ``model.configs = config`` on a local ``model``), globals, module-level containers."""
    keys = set()
    for target in _unpacked(targets):
        base = target.value if isinstance(target, cst.Subscript) else target
        text = dotted_name(base)
        if text and (
            (isinstance(base, cst.Attribute) and not _of_a_local(analysis, base, declared_global)) or text in declared_global
            or (target is not base and (text in _module_names(analysis) or _imported_object(analysis, base)))
        ):
            keys.add(text)
    return keys


def _imported_object(analysis: ModuleAnalysis, name: cst.BaseExpression) -> bool:
    """``name`` is an object another module defines and this one imports (``from app_utils import state``)."""
    return isinstance(name, cst.Name) and any("." in qualified and "<locals>" not in qualified for qualified in analysis.qualified_names(name))


def _unpacked(targets: list[cst.BaseExpression]) -> list[cst.BaseExpression]:
    """The targets an unpacking assigns (``model, tokenizer = load()``: both), each target as it is otherwise."""
    found: list[cst.BaseExpression] = []
    todo = list(reversed(targets))
    while todo:
        target = todo.pop()
        if isinstance(target, cst.StarredElement):
            target = target.value
        if isinstance(target, (cst.Tuple, cst.List)):
            todo.extend(reversed([element.value for element in target.elements]))
        else:
            found.append(target)
    return found


def _of_a_local(analysis: ModuleAnalysis, attribute: cst.Attribute, declared_global: set[str]) -> bool:
    """``attribute`` is set on an object a local of its function holds, bound in that function by an assignment
    (``model = load(...)``, then ``model.configs = config``): it dies with the call unless the object is kept."""
    root: cst.BaseExpression = attribute
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    function = analysis.enclosing_function(attribute)
    if not isinstance(root, cst.Name) or function is None or root.value in declared_global or root.value in ("self", "cls"):
        return False
    return any(
        isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == root.value for t in node.targets)
        for node in analysis.subtree(function.body)
    )


def _kept_through_a_local(
    analysis: ModuleAnalysis, statement: cst.CSTNode, targets: list[cst.BaseExpression], declared_global: set[str]
) -> tuple[cst.CSTNode, set[str]] | None:
    """The load bound to a local that a later statement of the same block stores for good (``value = load(p)``
    then ``self.cache[p] = value``): that store, and the names it stores under."""
    local = {target.value for target in targets if isinstance(target, cst.Name)}
    ancestors = iter(analysis.ancestors(statement))
    line = next((a for a in ancestors if isinstance(a, cst.SimpleStatementLine)), None)
    block = next(ancestors, None)
    if not local or line is None or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    body = list(block.body)
    for later in body[body.index(line) + 1:] if line in body else ():
        for small in later.body if isinstance(later, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.Assign):
                continue
            if isinstance(small.value, cst.Name) and small.value.value in local:
                keys = _lasting_names(analysis, [t.target for t in small.targets], declared_global)
                if keys:
                    return small, keys
            # `STATE["model"], STATE["tokenizer"] = model, tokenizer`: each element stored where its place says
            stored = [
                target
                for assigned in small.targets
                if isinstance(assigned.target, (cst.Tuple, cst.List)) and isinstance(small.value, (cst.Tuple, cst.List))
                and len(assigned.target.elements) == len(small.value.elements)
                for target, value in zip((e.value for e in assigned.target.elements), (e.value for e in small.value.elements))
                if isinstance(value, cst.Name) and value.value in local
            ]
            keys = _lasting_names(analysis, stored, declared_global) if stored else set()
            if keys:
                return small, keys
    return None


def switches_model(analysis: ModuleAnalysis, node: cst.CSTNode, reason: str) -> bool:
    """A Gradio event that loads a model and keeps it for the app's other events (``global model; model =
    load(choice)``, or ``self.pipeline = Pipeline(unet=..., vae=load(...))`` in a dropdown's ``change``
    handler): the app switches models on the user's request, it does not load one per prediction. A route or
    hook switches so when it keeps what it loads and neither it nor the request goes on to use it (an admin's
    ``POST /config`` that reloads the embedding model into ``request.app.state.ef``, which the other routes use)."""
    stored = _stored_beyond_the_call(analysis, node)
    function = analysis.enclosing_function(node)
    if GRADIO_EVENT not in reason:
        # only the handler's own store: a helper's store is for its caller, which uses it
        return stored is not None and function is not None and _own_reason(analysis, function) is not None and not _used_after(analysis, function, *stored)
    if stored is not None:
        return True
    # `manager.load_model(name)` on an object the app keeps (a module-level name, an attribute, the session's state
    # handed in): the object keeps what its method loads, for the other events, where this one does not use it.
    receiver = _kept_receiver(analysis, node, function) if function is not None else None
    if receiver is not None and not _used_after(analysis, function, node, {receiver}):  # type: ignore[arg-type]
        return True
    # `self.pipeline = pipeline` after building it from the loads: the event changes the app's state. Only a store of
    # what the load went into counts (`vq.fusion_w = weight` on a global, beside a model loaded into a local, changes
    # the app, not where the load goes).
    function = analysis.enclosing_function(node)
    if function is None:
        return False
    made = _bound_from(analysis, node)
    return any(
        _stored_beyond_the_call(analysis, target) is not None
        for statement in analysis.subtree(function.body)
        if isinstance(statement, cst.Assign) and made & _mentioned(analysis, statement.value)
        for target in statement.targets
    )


def _kept_receiver(analysis: ModuleAnalysis, node: cst.CSTNode, function: cst.FunctionDef) -> str | None:
    """The spelling of the object whose method ``node`` calls, where that object outlives the call: rooted at
    ``self``, a parameter or a module-level name, and not bound in ``function``."""
    func = node.func if isinstance(node, cst.Call) else None
    if not isinstance(func, cst.Attribute):
        return None
    root: cst.BaseExpression = func.value
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return None
    parameters = {param.name.value for param in named_parameters(function)}
    if root.value != "self" and root.value not in parameters and root.value not in _module_names(analysis):
        return None  # a module (`torch.load`), a builtin, or what the function made
    bound = any(
        isinstance(n, cst.Assign) and any(is_name(t.target, root.value) for t in n.targets) for n in analysis.subtree(function.body)
    )
    return None if bound and root.value not in _declared_global(analysis, function) else dotted_name(func.value)


def _used_after(analysis: ModuleAnalysis, function: cst.FunctionDef, statement: cst.CSTNode, keys: set[str]) -> bool:
    """What ``statement`` stores under ``keys`` is used later in ``function``: read (``self.model(x)`` after
    ``self.model = load()``), or the object that holds it called or handed on (``self.run(x)``, ``call_next(request)``
    after ``request.state.tokenizer = load()``). Handing it to what is stored beside it (``state.embed =
    wrap(state.ef)``) is no use: the switch goes on."""
    holders = {key.rsplit(".", depth)[0] for key in keys for depth in range(1, key.count(".") + 1)}
    inside = set(analysis.subtree(statement))
    after = False
    for node in analysis.subtree(function.body):
        if node is statement:
            after = True
        if not after or node in inside or not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        spelled = dotted_name(node)
        if spelled not in keys and spelled not in holders:
            continue
        parent = analysis.parent(node)
        if isinstance(parent, cst.AssignTarget):
            continue
        called = isinstance(parent, cst.Call) and parent.func is node or (
            isinstance(parent, cst.Attribute) and isinstance(analysis.parent(parent), cst.Call) and analysis.parent(parent).func is parent
        )
        if called:
            return True
        if _stored_beyond_the_call(analysis, node) is None and (isinstance(parent, cst.Arg) or spelled in keys):
            return True
    return False


def _bound_from(analysis: ModuleAnalysis, node: cst.CSTNode) -> set[str | None]:
    """The locals bound to the expression that holds ``node`` (``pipe = Pipeline(vae=load(p))``)."""
    child = node
    for ancestor in analysis.ancestors(node):
        if isinstance(ancestor, cst.Assign):
            return {t.target.value for t in ancestor.targets if isinstance(t.target, cst.Name)} if ancestor.value is child else set()
        child = ancestor
    return set()


def _module_names(analysis: ModuleAnalysis) -> frozenset[str]:
    """The names module-level code assigns, in the blocks of its `if`, `try` and `with` statements too (the
    `__main__` block's `MODELS = {}` is a global of the module)."""
    names = set()
    pending = list(analysis.module.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    names.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)
        elif isinstance(statement, (cst.If, cst.Else, cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.With)):
            body = statement.body
            pending.extend(body.body if isinstance(body, cst.IndentedBlock) else ())
            for part in (getattr(statement, "orelse", None), getattr(statement, "finalbody", None), *getattr(statement, "handlers", ())):
                if part is not None:
                    pending.append(part)
    return frozenset(names)


def startup_reason(analysis: ModuleAnalysis, function: cst.FunctionDef) -> str | None:
    """Why ``function`` runs once when a serving process starts, before it takes traffic, or None: a setup hook
    of a serving class (TorchServe/Triton ``initialize``, KServe ``load``, LitServe/Cog ``setup``, Ray Serve
    ``__init__``), a startup event handler, or a lifespan function."""
    name = function.name.value
    owner = analysis.enclosing_class(function)
    if owner is not None and is_setup_hook(name) and analysis.class_hooks(owner) is not None:
        return f"`{owner.name.value}.{name}`, the serving framework's start-up hook"
    for decorator in function.decorators:
        expression = decorator.decorator
        target = _decorator_target(decorator)
        attribute = target.attr.value if isinstance(target, cst.Attribute) else None
        if attribute == "on_event":
            event = expression.args[0].value if isinstance(expression, cst.Call) and expression.args else None
            if isinstance(event, cst.SimpleString) and event.evaluated_value == "startup":
                return f"`{name}`, a startup event handler"
        elif attribute in _STARTUP_DECORATORS:
            return f"`{name}`, a startup handler"
    if owner is None and "lifespan" in name:
        return f"`{name}`, the application's lifespan"
    return None
