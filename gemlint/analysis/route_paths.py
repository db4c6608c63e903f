"""Route paths: the full path of each declared route, through the routers and applications that mount it, and
whether a request path reaches a route. Plain data: the declarations come from :mod:`gemlint.analysis.routes`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Iterable

if TYPE_CHECKING:
    from gemlint.analysis.routes import MountDecl, RouteDecl, RouterDecl


@dataclass(frozen=True)
class FullRoute:
    decl: RouteDecl
    path: str  # with every prefix, as written (template or regex)
    style: str
    #: the key of the application at the top of the mount chain (the owner itself when nothing mounts it)
    root: Hashable = None

    def matches(self, path: str, method: str = "GET") -> bool:
        if self.decl.methods is not None and method not in self.decl.methods and "*" not in self.decl.methods:
            if not (method == "HEAD" and "GET" in self.decl.methods):
                return False
        return path_matches(self.style, self.path, path)


def join_paths(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix
    return prefix.rstrip("/") + "/" + path.lstrip("/")


def compose(
    routes: Iterable[tuple[Hashable, RouteDecl]],
    mounts: Iterable[tuple[Hashable, Hashable, MountDecl]],
    routers: dict[Hashable, RouterDecl],
    max_depth: int = 12,
) -> list[tuple[Hashable, FullRoute]]:
    """Full paths of ``routes`` (keyed by their owner), following ``mounts`` (parent key, child key) up to the roots."""
    parents: dict[Hashable, list[tuple[Hashable, MountDecl]]] = {}
    for parent, child, mount in mounts:
        parents.setdefault(child, []).append((parent, mount))

    cache: dict[Hashable, list[tuple[str, Hashable]]] = {}

    def prefixes(key: Hashable, depth: int, visiting: frozenset) -> list[tuple[str, Hashable]]:
        """(prefix, root) for each chain of mounts from ``key`` up to an application nothing mounts."""
        if key in cache:
            return cache[key]
        own = routers[key].prefix if key in routers else ""
        found: list[tuple[str, Hashable]] = []
        if depth < max_depth and key not in visiting:
            for parent, mount in parents.get(key, []):
                for outer, root in prefixes(parent, depth + 1, visiting | {key}):
                    found.append((join_paths(join_paths(outer, mount.prefix or ""), "" if mount.replaces else own), root))
        if not found:
            found = [(own, key)]
        found = list(dict.fromkeys(found))[:16]
        cache[key] = found
        return found

    result = []
    for owner, decl in routes:
        if decl.path is None:
            continue
        for prefix, root in prefixes(owner, 0, frozenset()) if owner is not None else [("", None)]:
            style = decl.style
            if style == "regex":
                path = re.escape(prefix) + decl.path.lstrip("^") if prefix else decl.path
            else:
                path = join_paths(prefix, decl.path)
            result.append((owner, FullRoute(decl, path, style, root)))
    return result


_TEMPLATE = re.compile(r"\{[^{}/]+\}|<[^<>/]+>")


def _template_regex(pattern: str) -> str:
    out, position = [], 0
    for match in _TEMPLATE.finditer(pattern):
        out.append(re.escape(pattern[position : match.start()]))
        token = match.group(0)
        out.append(".+" if token.endswith(":path}") or token.startswith("<path:") else "[^/]+")
        position = match.end()
    out.append(re.escape(pattern[position:]))
    return "".join(out)


def _normalize(path: str) -> str:
    path = "/" + path.lstrip("/")
    return path.rstrip("/") or "/"


def path_matches(style: str, pattern: str, path: str) -> bool:
    """Does a request for ``path`` reach a route declared as ``pattern``? (trailing slashes are redirected, so ignored)"""
    requested = _normalize(path.split("?", 1)[0])
    try:
        if style == "regex":
            body = pattern.lstrip("^").rstrip("$")
            return any(re.fullmatch(body, candidate) for candidate in (requested, requested.lstrip("/"), requested + "/", requested.lstrip("/") + "/"))
        expected = _normalize(pattern)
        if "{" in expected or "<" in expected:
            return re.fullmatch(_template_regex(expected), requested) is not None
        return expected == requested
    except re.error:
        return False


def last_segment(path: str) -> str:
    return _normalize(path).rsplit("/", 1)[-1].lower()


def is_health_path(path: str, health_paths: Iterable[str]) -> bool:
    """``path`` is one of ``health_paths``, or ends with the last segment of one (``/v2/health/live``)."""
    normalized = _normalize(path).lower()
    segments = {last_segment(p) for p in health_paths if last_segment(p)}
    return normalized in {_normalize(p).lower() for p in health_paths} or last_segment(path) in segments
