"""From a deployment health check to the Python code it runs (GEM601).

An HTTP probe (``httpGet``, or a command that requests a local URL) reaches the
handler mounted on that path by the application its own container serves
(:mod:`gemlint.project.served_routes`), on the port that server listens on; when the
container's command is not in the file, by the nearest application of the
project that mounts the path. A command that runs a
Python script or module runs that file's top-level code (and any local URL it
requests). Each is then searched for a forward pass through the project's
call graph (:mod:`gemlint.project.reach`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gemlint.analysis.deployment import HealthCheck
from gemlint.analysis.probe_commands import HttpTarget, local_urls
from gemlint.project.files import ParsedFile, Project, ProjectRoute
from gemlint.project.forward_paths import ForwardPath
from gemlint.project.served_routes import served_routes


@dataclass(frozen=True)
class HealthCheckForward:
    check: HealthCheck
    target: str  # "GET /healthz", "python healthcheck.py"
    handler_file: ParsedFile
    handler_line: int  # def line, 0 for a script's top level
    handler_name: str
    forward: ForwardPath


def _http(
    project: Project, check: HealthCheck, target: HttpTarget, near: Path, among: list[ProjectRoute] | None
) -> HealthCheckForward | None:
    served = check.served
    asked = target.port or target.implied_port
    if served is not None and served.port is not None and asked is not None and served.port != asked:
        return None  # the probe asks another port than the one the container's server listens on
    for route in project.handlers_for(target.path, target.method, near, among):
        found = project.reach.forward_from(route.file, route.handler_line)
        if found is not None:
            port = f" (port {target.port})" if target.port else ""
            return HealthCheckForward(check, f"{target.method} {target.path}{port}", route.file, route.handler_line, route.handler_name, found)
    return None


def _script(
    project: Project, check: HealthCheck, script: ParsedFile, label: str, near: Path, among: list[ProjectRoute] | None
) -> HealthCheckForward | None:
    found = project.reach.forward_from(script, 0)
    if found is not None:
        return HealthCheckForward(check, f"`{label}`", script, 0, script.display, found)
    for target in local_urls(script.text):
        result = _http(project, check, target, near, among)
        if result is not None:
            return HealthCheckForward(
                check, f"`{label}` (which requests {result.target})", result.handler_file, result.handler_line, result.handler_name, result.forward
            )
    return None


def forward_of(project: Project, check: HealthCheck, near: Path) -> HealthCheckForward | None:
    """The first forward pass that ``check`` runs, or None."""
    targets = check.targets
    among = served_routes(project, check.served, near) if targets.http or targets.scripts or targets.modules else None
    for target in targets.http:
        result = _http(project, check, target, near, among)
        if result is not None:
            return result
    for written in targets.scripts:
        script = project.find_script(written, near)
        if script is not None:
            result = _script(project, check, script, f"python {written}", near, among)
            if result is not None:
                return result
    for module in targets.modules:
        script = project.module_file(module, near=near)
        if script is not None:
            result = _script(project, check, script, f"python -m {module}", near, among)
            if result is not None:
                return result
    return None


def cost(check: HealthCheck) -> str:
    """"a forward pass every 5 s on each of 3 replicas"."""
    period = check.period_s
    if period is None:
        text = "a forward pass on every check"
    else:
        seconds = f"{period:g} s"
        text = f"a forward pass every {seconds}"
        if check.period_is_default:
            text += " (the default " + ("period" if check.label.endswith("Probe") else "interval") + ")"
    if check.replicas == "every node":
        text += " on every node"
    elif check.replicas:
        text += f" on each of {check.replicas}" if check.replicas[0].isdigit() else f" on {check.replicas}"
    return text
