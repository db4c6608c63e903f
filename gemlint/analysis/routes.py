"""HTTP routes declared in Python web code, and how their paths compose.

One pass over a module collects three kinds of declaration:

* **routes**: a path, the HTTP methods and the handler (FastAPI/Flask/Quart/
  Sanic decorators and ``add_api_route``/``add_url_rule``/``add_get``...,
  Starlette ``Route``, aiohttp ``web.get`` and ``RouteTableDef``, Tornado
  handler tuples and ``url``, Django ``path``/``re_path``, Litestar decorators),
  each registered on an **owner**;
* **routers**: objects that own routes and may add their own prefix
  (``APIRouter(prefix=...)``, ``Blueprint(url_prefix=...)``, ``Mount(path)``,
  ``path("api/", include(...))``);
* **mounts**: a router attached to another one (``include_router``,
  ``register_blueprint``, ``add_subapp``, ``add_routes``, ``mount``, route lists).

Owners are references: a module-level name, a dotted name imported from
another module, or an anonymous object (a list literal, a ``Mount`` call).
:func:`compose` follows the mounts to full paths, within one module
(:func:`module_routes`) or across the project (:mod:`gemlint.project`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Hashable

import libcst as cst

from gemlint.analysis import frameworks as fw
from gemlint.analysis.route_paths import FullRoute, compose
from gemlint.analysis.syntax import dotted_name, keyword_arg, literal_value, positional_arg, terminal_name

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

# ("local", name) | ("qual", dotted name) | ("anon", id)
Ref = tuple[str, str]
_HTTP_VERBS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "*"})
#: The packages whose router, mount and route classes (and bare route decorators) every call of a module, and
#: every decorator, is compared with.
_ROUTING_LIBRARIES = frozenset(
    name.partition(".")[0] for name in (*fw.ROUTER_CONSTRUCTORS, *fw.MOUNT_OBJECTS, *fw.ROUTE_OBJECTS, *fw.BARE_ROUTE_DECORATORS)
)


@dataclass(frozen=True)
class Handler:
    """The code that serves a route: a function, or a class whose methods are named after the HTTP verbs."""

    name: str  # local name, or the qualified name when it is imported
    local: cst.FunctionDef | cst.ClassDef | None  # the definition when it is in this module

    @property
    def is_class(self) -> bool:
        return isinstance(self.local, cst.ClassDef)


@dataclass(frozen=True)
class RouteDecl:
    owner: Ref | None
    path: str | None  # None when not a literal
    style: str  # "literal" (with {param}/<param> templates), "regex", or "django" (relative path())
    methods: frozenset[str] | None  # None: any / unknown
    handler: Handler | None
    node: cst.CSTNode  # the decorator or the registering call
    framework: str


@dataclass(frozen=True)
class MountDecl:
    parent: Ref
    child: Ref
    prefix: str | None
    replaces: bool = False  # the prefix replaces the child's own (Flask/Sanic blueprints)


@dataclass(frozen=True)
class RouterDecl:
    ref: Ref
    framework: str
    prefix: str


@dataclass
class ModuleRoutes:
    routes: list[RouteDecl] = field(default_factory=list)
    mounts: list[MountDecl] = field(default_factory=list)
    routers: dict[Ref, RouterDecl] = field(default_factory=dict)


def _string(expression: cst.BaseExpression | None) -> str | None:
    if expression is None:
        return None
    value = literal_value(expression)
    return value if isinstance(value, str) else None


class _Extractor:
    def __init__(self, analysis: ModuleAnalysis) -> None:
        self.analysis = analysis
        self.result = ModuleRoutes()
        self.web = analysis.imports_any(fw.WEB_FRAMEWORKS)
        self.tornado = analysis.imports_any(("tornado",))
        self._assigned: set[str] | None = None
        self._defs: dict[str, cst.FunctionDef | cst.ClassDef] | None = None

    # -- references -----------------------------------------------------------------
    @property
    def assigned_names(self) -> set[str]:
        if self._assigned is None:
            names: set[str] = set()
            for node in self.analysis.nodes_of(cst.Assign):
                if isinstance(node, cst.Assign):
                    names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
                elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Name):
                    names.add(node.target.value)
            self._assigned = names
        return self._assigned

    @property
    def definitions(self) -> dict[str, cst.FunctionDef | cst.ClassDef]:
        if self._defs is None:
            defs: dict[str, cst.FunctionDef | cst.ClassDef] = {}
            for node in self.analysis.module.body:
                if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                    defs[node.name.value] = node
            for node in self.analysis.all_nodes:
                if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                    defs.setdefault(node.name.value, node)
            self._defs = defs
        return self._defs

    def assigned_to(self, node: cst.CSTNode) -> str | None:
        """``name`` when ``node`` is the value of ``name = node`` (or ``name += node``)."""
        parent = self.analysis.parent(node)
        if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
            target = parent.targets[0].target
            return target.value if isinstance(target, cst.Name) else None
        if isinstance(parent, (cst.AnnAssign, cst.AugAssign)) and parent.value is node and isinstance(parent.target, cst.Name):
            return parent.target.value
        return None

    def ref(self, expression: cst.BaseExpression) -> Ref | None:
        if isinstance(expression, cst.Name):
            if expression.value in self.assigned_names or expression.value in self.definitions:
                return ("local", expression.value)
            names = sorted(self.analysis.qualified_names(expression))
            dotted = next((n for n in names if "." in n), None)
            return ("qual", dotted) if dotted else ("local", expression.value)
        if isinstance(expression, cst.Attribute):
            if expression.attr.value == "router" and isinstance(expression.value, cst.Name) and expression.value.value in self.assigned_names:
                return self.ref(expression.value)  # aiohttp: app.router.add_get(...) on a local app
            names = sorted(self.analysis.qualified_names(expression))
            dotted = next((n for n in names if "." in n), None)
            if dotted and not (dotted_name(expression) or "").startswith(("self.", "cls.")):
                return ("qual", dotted)
            text = dotted_name(expression)
            return ("local", text) if text else None
        if isinstance(expression, (cst.List, cst.Tuple, cst.Call)):
            name = self.assigned_to(expression)
            return ("local", name) if name else ("anon", str(id(expression)))
        return None

    def container(self, node: cst.CSTNode) -> Ref | None:
        """The list literal that holds ``node`` as an element (a route list), as a reference."""
        element = self.analysis.parent(node)
        if isinstance(element, cst.Element):
            holder = self.analysis.parent(element)
            if isinstance(holder, (cst.List, cst.Tuple)):
                return self.ref(holder)
        return None

    def handler(self, expression: cst.BaseExpression | None) -> Handler | None:
        if expression is None:
            return None
        if isinstance(expression, cst.Call):
            func = expression.func
            if isinstance(func, cst.Attribute) and func.attr.value == "as_view":
                return self.handler(func.value)  # Flask MethodView / Django class views
            return self.handler(func)  # a resource instance (Falcon, aiohttp views)
        if isinstance(expression, cst.Name):
            local = self.definitions.get(expression.value)
            if local is not None:
                return Handler(expression.value, local)
        if isinstance(expression, (cst.Name, cst.Attribute)):
            names = sorted(self.analysis.qualified_names(expression))
            dotted = next((n for n in names if "." in n), None) or dotted_name(expression)
            if dotted:
                return Handler(dotted, None)
        return None

    # -- declarations -------------------------------------------------------------------
    def run(self) -> ModuleRoutes:
        for node in self.analysis.all_nodes:
            if isinstance(node, cst.FunctionDef):
                for decorator in node.decorators:
                    self.decorator(node, decorator.decorator)
            elif isinstance(node, cst.Call):
                self.call(node)
            elif isinstance(node, cst.Tuple) and self.tornado:
                self.tornado_tuple(node)
        return self.result

    def decorator(self, function: cst.FunctionDef, expression: cst.BaseExpression) -> None:
        if not isinstance(expression, cst.Call):
            return
        func = expression.func
        bare = self.analysis.library_names(func, _ROUTING_LIBRARIES) & fw.BARE_ROUTE_DECORATORS.keys()
        if bare:
            method = fw.BARE_ROUTE_DECORATORS[sorted(bare)[0]]
            path_arg = keyword_arg(expression, "path") or positional_arg(expression, 0)
            self._route(None, path_arg.value if path_arg else None, "literal", {method} if method else None, Handler(function.name.value, function), expression, "litestar")
            return
        if not (isinstance(func, cst.Attribute) and func.attr.value in fw.ROUTE_DECORATORS and self.web):
            return
        name = func.attr.value
        methods: set[str] | None = None
        path_arg = keyword_arg(expression, "path") or keyword_arg(expression, "rule") or keyword_arg(expression, "uri") or positional_arg(expression, 0)
        if name in fw.HTTP_METHOD_DECORATORS:
            methods = {fw.HTTP_METHOD_DECORATORS[name]}
        else:
            first = _string(positional_arg(expression, 0).value) if positional_arg(expression, 0) else None
            second = positional_arg(expression, 1)
            if name == "route" and first is not None and first.upper() in _HTTP_VERBS and second is not None:
                methods, path_arg = {first.upper()}, second  # aiohttp RouteTableDef.route(method, path)
            methods = methods or _methods(keyword_arg(expression, "methods"))
        owner = self.ref(func.value)
        self._route(owner, path_arg.value if path_arg else None, "literal", methods, Handler(function.name.value, function), expression, "web")

    def call(self, node: cst.Call) -> None:
        func = node.func
        qualified = self.analysis.library_names(func, _ROUTING_LIBRARIES)
        constructor = qualified & fw.ROUTER_CONSTRUCTORS.keys()
        if constructor:
            framework, prefix_keyword = fw.ROUTER_CONSTRUCTORS[sorted(constructor)[0]]
            ref = self.ref(node)
            prefix = _string(keyword_arg(node, prefix_keyword).value) if prefix_keyword and keyword_arg(node, prefix_keyword) else ""
            if ref is not None:
                self.result.routers[ref] = RouterDecl(ref, framework, prefix or "")
                routes = next((a for a in node.args if a.keyword and a.keyword.value in fw.ROUTE_LIST_KEYWORDS), None)
                if routes is None and framework == "tornado":
                    routes = positional_arg(node, 0)
                self._mount(ref, routes.value if routes else None, None)
            return
        if qualified & fw.MOUNT_OBJECTS:
            ref = self.ref(node)
            path = keyword_arg(node, "path") or positional_arg(node, 0)
            if ref is not None:
                self.result.routers[ref] = RouterDecl(ref, "starlette", (_string(path.value) if path else None) or "")
                child = keyword_arg(node, "routes") or keyword_arg(node, "app") or positional_arg(node, 1)
                self._mount(ref, child.value if child else None, None)
                self._in_container(node, ref)
            return
        objects = qualified & fw.ROUTE_OBJECTS.keys()
        if objects:
            self.route_object(node, sorted(objects)[0])
            return
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in fw.MOUNT_METHODS and self.web:
                child_index, prefix_index, prefix_keyword, replaces = fw.MOUNT_METHODS[method]
                child = positional_arg(node, child_index) or keyword_arg(node, "app") or keyword_arg(node, "router") or keyword_arg(node, "blueprint")
                prefix_arg = (keyword_arg(node, prefix_keyword) if prefix_keyword else None) or (
                    positional_arg(node, prefix_index) if prefix_index is not None else None
                )
                parent = self.ref(func.value)
                if parent is not None and child is not None:
                    prefix = _string(prefix_arg.value) if prefix_arg is not None else None
                    self._mount(parent, child.value, prefix, replaces and prefix is not None)
            elif method in fw.REGISTRATION_METHODS and self.web:
                self.registration(node, method)

    def registration(self, node: cst.Call, method: str) -> None:
        path_index, handler_index, fixed = fw.REGISTRATION_METHODS[method]
        first = positional_arg(node, 0)
        first_text = _string(first.value) if first else None
        if method == "add_route":
            if first_text is not None and first_text.upper() in _HTTP_VERBS and positional_arg(node, 1) is not None:
                path_index, handler_index, fixed = 1, 2, first_text.upper()  # aiohttp add_route(method, path, handler)
            elif first is not None and first_text is None:
                path_index, handler_index = 1, 0  # Sanic add_route(handler, uri)
        path_arg = keyword_arg(node, "path") or keyword_arg(node, "rule") or keyword_arg(node, "uri") or positional_arg(node, path_index)
        handler_arg = next((a for a in node.args if a.keyword and a.keyword.value in fw.ROUTE_HANDLER_KEYWORDS), None) or positional_arg(
            node, handler_index
        )
        methods = {fixed} if fixed else _methods(keyword_arg(node, "methods"))
        owner = self.ref(node.func.value) if isinstance(node.func, cst.Attribute) else None
        self._route(owner, path_arg.value if path_arg else None, "literal", methods, self.handler(handler_arg.value if handler_arg else None), node, "web")

    def route_object(self, node: cst.Call, qualified: str) -> None:
        path_index, handler_index, fixed = fw.ROUTE_OBJECTS[qualified]
        path_arg = keyword_arg(node, "path") or keyword_arg(node, "route") or positional_arg(node, path_index)
        handler_arg = keyword_arg(node, "endpoint") or keyword_arg(node, "view") or keyword_arg(node, "handler") or positional_arg(node, handler_index)
        if qualified == "aiohttp.web.route":
            verb = positional_arg(node, 0)
            fixed = (_string(verb.value) or "").upper() or None if verb else None
        style = "regex" if qualified in fw.REGEX_ROUTE_OBJECTS else "django" if qualified in fw.DJANGO_ROUTE_OBJECTS else "literal"
        if qualified in fw.DJANGO_ROUTE_OBJECTS and handler_arg is not None and isinstance(handler_arg.value, cst.Call):
            if self.analysis.qualified_names(handler_arg.value.func) & fw.DJANGO_INCLUDE:
                self.django_include(node, path_arg, handler_arg.value, style)
                return
        methods = {fixed} if fixed else _methods(keyword_arg(node, "methods"))
        owner = self.container(node)
        self._route(owner, path_arg.value if path_arg else None, style, methods, self.handler(handler_arg.value if handler_arg else None), node, qualified.split(".")[0])

    def django_include(self, node: cst.Call, path_arg: cst.Arg | None, include: cst.Call, style: str) -> None:
        ref = ("anon", str(id(node)))
        prefix = _string(path_arg.value) if path_arg else None
        self.result.routers[ref] = RouterDecl(ref, "django", prefix or "")
        target = positional_arg(include, 0)
        if target is not None:
            module = _string(target.value)
            if module is not None:
                self.result.mounts.append(MountDecl(ref, ("qual", module + ".urlpatterns"), None))
            elif isinstance(target.value, cst.Tuple) and target.value.elements:
                self._mount(ref, target.value.elements[0].value, None)  # include((patterns, app_name))
            else:
                self._mount(ref, target.value, None)
        self._in_container(node, ref)

    def tornado_tuple(self, node: cst.Tuple) -> None:
        if len(node.elements) < 2:
            return
        path = _string(node.elements[0].value)
        handler_expression = node.elements[1].value
        if path is None or not isinstance(handler_expression, (cst.Name, cst.Attribute)):
            return
        owner = self.container(node)
        if owner is None:
            return
        self._route(owner, node.elements[0].value, "regex", None, self.handler(handler_expression), node, "tornado")

    # -- helpers ---------------------------------------------------------------------------
    def _route(
        self,
        owner: Ref | None,
        path: cst.BaseExpression | None,
        style: str,
        methods: set[str] | None,
        handler: Handler | None,
        node: cst.CSTNode,
        framework: str,
    ) -> None:
        self.result.routes.append(
            RouteDecl(owner, _string(path) if path is not None else None, style, frozenset(methods) if methods else None, handler, node, framework)
        )

    def _mount(self, parent: Ref, child: cst.BaseExpression | None, prefix: str | None, replaces: bool = False) -> None:
        if child is None:
            return
        child_ref = self.ref(child)
        if child_ref is not None and child_ref != parent:
            self.result.mounts.append(MountDecl(parent, child_ref, prefix, replaces))

    def _in_container(self, node: cst.CSTNode, ref: Ref) -> None:
        holder = self.container(node)
        if holder is not None:
            self.result.mounts.append(MountDecl(holder, ref, None))


def _methods(arg: cst.Arg | None) -> set[str] | None:
    if arg is None or not isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
        return None
    methods = {(_string(element.value) or "").upper() for element in arg.value.elements}
    methods.discard("")
    return methods or None


def extract(analysis: ModuleAnalysis) -> ModuleRoutes:
    """Every route, router and mount declared in the module (see the module docstring)."""
    if not analysis.imports_any(fw.WEB_FRAMEWORKS):
        return ModuleRoutes()  # every form below needs a web framework (resolving names costs a full pass)
    return _Extractor(analysis).run()


# -- where a handler is ------------------------------------------------------------------------------
def handler_location(analysis: ModuleAnalysis, node: cst.FunctionDef | cst.ClassDef) -> tuple[int, str] | None:
    """(``def`` line, name) of the handler ``node`` of ``analysis``; for a class-based view (Tornado, Django, Flask,
    aiohttp ``get``, Falcon ``on_get``), of its GET method; None for a class without one."""
    if isinstance(node, cst.ClassDef):
        method = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value in ("get", "on_get", "head")), None)
        if method is None:
            return None
        return analysis.def_line(method), f"{node.name.value}.{method.name.value}"
    return analysis.def_line(node), node.name.value


def top_level_definition(analysis: ModuleAnalysis, name: str) -> cst.FunctionDef | cst.ClassDef | None:
    """The function or class ``name`` defined at the top of ``analysis``'s module."""
    return next((n for n in analysis.module.body if isinstance(n, (cst.FunctionDef, cst.ClassDef)) and n.name.value == name), None)


# -- one module's routes, composed -------------------------------------------------------------
def module_routes(analysis: ModuleAnalysis) -> list[FullRoute]:
    """The routes of one module with the prefixes that the module itself shows."""
    declared = analysis.routes

    def key(ref: Ref | None) -> Hashable:
        return ref

    return [
        route
        for _, route in compose(
            ((key(r.owner), r) for r in declared.routes),
            ((key(m.parent), key(m.child), m) for m in declared.mounts),
            {key(ref): router for ref, router in declared.routers.items()},
        )
    ]


# -- what module.py needs for inference context ------------------------------------------------------


def is_route_decorator(analysis: ModuleAnalysis, expression: cst.BaseExpression) -> bool:
    """``@app.get(...)``, ``@router.route(...)``, ``@get(...)`` (Litestar) in a module that imports a web framework."""
    target = expression.func if isinstance(expression, cst.Call) else expression
    # Resolving names costs several parses of the file: only names spelled like a bare route decorator.
    if terminal_name(target) in fw.BARE_ROUTE_DECORATOR_NAMES and analysis.qualified_names(target) & fw.BARE_ROUTE_DECORATORS.keys():
        return True
    return isinstance(target, cst.Attribute) and target.attr.value in fw.ROUTE_DECORATORS and analysis.imports_any(fw.WEB_FRAMEWORKS)


def routed_resource_reason(analysis: ModuleAnalysis, function: cst.FunctionDef) -> str | None:
    """Why ``function`` runs per request as the HTTP method of a class-based resource a route decorator registers
    (``post`` of a class decorated with ``@api.route("/sentiment")``, flask-restx's way), or None."""
    name = function.name.value
    if name not in fw.HTTP_VERB_METHODS:
        return None
    owner = analysis.enclosing_class(function)
    if owner is None or not any(is_route_decorator(analysis, decorator.decorator) for decorator in owner.decorators):
        return None
    return f"`{owner.name.value}.{name}` handles {name.upper()} requests to a route"


def registered_handler_names(analysis: ModuleAnalysis) -> frozenset[str]:
    """How the functions and classes this module hands to route registrations are spelled there
    (``predict``, ``self.predict``, ``Service.predict``)."""
    return frozenset(route.handler.name for route in analysis.routes.routes if route.handler is not None)
