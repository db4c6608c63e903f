"""What deployment files say about a container: its health checks and its environment.

Kubernetes manifests (every workload kind, KServe and other custom resources:
any mapping inside a manifest that carries probes or an ``env`` list is a
container), docker-compose services and Dockerfiles all come out as the same
:class:`HealthCheck` and :class:`EnvSetting` records, so rules never care which
file format they read.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Iterator

from gemlint.analysis.probe_commands import CommandTargets, HttpTarget, command_targets
from gemlint.analysis.served import Served, served_by
from gemlint.diagnostics import Position
from gemlint.frontends.dockerfile_file import DockerfileDocument
from gemlint.frontends.helm import PLACEHOLDER
from gemlint.frontends.yaml_file import YamlFile
from gemlint.frontends.yaml_nodes import Mapping, Node, Scalar, Sequence

PROBE_KEYS = {"livenessProbe": "liveness", "startupProbe": "startup", "readinessProbe": "readiness"}
K8S_DEFAULT_PERIOD = 10.0
DOCKER_DEFAULT_INTERVAL = 30.0
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_REPLICATED_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Rollout"})


@dataclass
class HealthCheck:
    """A health check that an orchestrator runs periodically against a container."""

    kind: str  # liveness | startup | readiness | healthcheck (Docker/compose)
    label: str  # livenessProbe, HEALTHCHECK, healthcheck
    start: Position
    end: Position
    targets: CommandTargets = field(default_factory=CommandTargets)
    period_s: float | None = None
    period_is_default: bool = False
    replicas: str | None = None  # "3 replicas", "every node"; None for one
    where: str = ""  # "Deployment llm-server, container server"
    #: what the container that declares the check serves (its command), None when the file does not say
    served: Served | None = None

    @property
    def restarts_on_failure(self) -> bool:
        return self.kind in ("liveness", "startup", "healthcheck")


@dataclass(frozen=True)
class EnvSetting:
    name: str
    value: str | None  # None: not a literal (templated, interpolated, from a secret)
    start: Position
    end: Position


def parse_duration(text: str | None) -> float | None:
    """Go durations as Docker and compose write them (``30s``, ``1m30s``, ``500ms``)."""
    if text is None:
        return None
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(a + b for a, b in parts) != text:
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def _literal(node: Node | None) -> str | None:
    """A value written in this file (not substituted by a template: that is configuration)."""
    if isinstance(node, Scalar) and not node.templated:
        return node.value
    return None


def _value(node: Node | None) -> str | None:
    """A value written here or taken from the chart's values.yaml defaults; None when a template hides it."""
    if isinstance(node, Scalar) and PLACEHOLDER not in node.value:
        return node.value
    return None


def _number(node: Node | None) -> float | None:
    text = _value(node)
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


# -- Kubernetes ---------------------------------------------------------------------------
def _is_manifest(document: Node) -> bool:
    return isinstance(document, Mapping) and isinstance(document.get("kind"), Scalar) and (
        document.get("apiVersion") is not None or document.get("spec") is not None
    )


def manifests(file: YamlFile) -> Iterator[Mapping]:
    """Kubernetes objects, with the items of ``kind: List`` documents."""
    for document in file.documents:
        if not _is_manifest(document):
            continue
        assert isinstance(document, Mapping)
        if document.text("kind") == "List":
            yield from (item for item in document.sequence("items") if isinstance(item, Mapping) and _is_manifest(item))
        else:
            yield document


def mappings(root: Node) -> Iterator[tuple[Mapping, list[Mapping]]]:
    """Every mapping under ``root`` (itself included) in document order, with its ancestor mappings, outermost
    first; iterative and bounded, since a manifest can be arbitrarily deep or large."""
    stack: list[tuple[Node, list[Mapping]]] = [(root, [])]
    seen = 0
    while stack and seen < 100_000:
        node, ancestors = stack.pop()
        seen += 1
        if isinstance(node, Mapping):
            yield node, ancestors
            inner = ancestors + [node]
            stack.extend((value, inner) for _, value in reversed(node.pairs))
        elif isinstance(node, Sequence):
            stack.extend((item, ancestors) for item in reversed(node.items))


def _containers(manifest: Mapping) -> Iterator[tuple[Mapping, list[Mapping]]]:
    """Every container-like mapping (it has probes or an env list) with its ancestors, outermost first."""
    for node, ancestors in mappings(manifest):
        if node is not manifest and (any(key in node.keys() for key in PROBE_KEYS) or isinstance(node.get("env"), Sequence)):
            yield node, ancestors


def _replicas(manifest: Mapping, ancestors: list[Mapping]) -> str | None:
    kind = manifest.text("kind") or ""
    if kind == "DaemonSet":
        return "every node"
    count: float | None = None
    spec = manifest.mapping("spec")
    if kind in _REPLICATED_KINDS and spec is not None:
        count = _number(spec.get("replicas"))
        if count is None and spec.get("replicas") is not None:
            return "every replica"
    else:
        # KServe and other serving resources put the count on the component (predictor: minReplicas).
        for ancestor in reversed(ancestors):
            for key in ("minReplicas", "replicas"):
                if ancestor.get(key) is not None:
                    count = _number(ancestor.get(key))
                    if count is None:
                        return "every replica"
                    break
            if count is not None:
                break
    if count is not None and count > 1:
        return f"{int(count)} replicas"
    return None


def _port_names(container: Mapping) -> dict[str, str]:
    names = {}
    for port in container.sequence("ports"):
        if isinstance(port, Mapping):
            name, number = _value(port.get("name")), _value(port.get("containerPort"))
            if name and number:
                names[name] = number
    return names


def _k8s_targets(probe: Mapping, ports: dict[str, str]) -> CommandTargets:
    http_get = probe.mapping("httpGet")
    if http_get is not None:
        host = _value(http_get.get("host"))
        if host and host not in ("localhost", "127.0.0.1", "0.0.0.0"):
            return CommandTargets()
        path = _value(http_get.get("path")) or "/"
        if http_get.get("path") is not None and _value(http_get.get("path")) is None:
            return CommandTargets()  # a templated path that values.yaml does not give
        port = _value(http_get.get("port"))
        port = ports.get(port, port) if port is not None else None
        return CommandTargets(http=[HttpTarget(path, port if port and port.isdigit() else None)])
    exec_ = probe.mapping("exec")
    if exec_ is not None:
        argv = [item.value for item in exec_.sequence("command") if isinstance(item, Scalar)]
        if argv:
            return command_targets(argv=argv)
    return CommandTargets()


def kubernetes_health_checks(file: YamlFile) -> list[HealthCheck]:
    checks = []
    for manifest in manifests(file):
        metadata = manifest.mapping("metadata")
        name = _value(metadata.get("name")) if metadata is not None else None
        kind = manifest.text("kind") or "object"
        for container, ancestors in _containers(manifest):
            ports = _port_names(container)
            served = _kubernetes_served(container)
            container_name = _value(container.get("name"))
            where = f"{kind} {name}" if name else kind
            if container_name:
                where += f", container {container_name}"
            for key, probe_kind in PROBE_KEYS.items():
                entry = container.entry(key)
                if entry is None or not isinstance(entry[1], Mapping):
                    continue
                key_node, probe = entry
                period = _number(probe.get("periodSeconds"))
                start, end = key_node.span
                checks.append(
                    HealthCheck(
                        kind=probe_kind,
                        label=key,
                        start=start,
                        end=end,
                        targets=_k8s_targets(probe, ports),
                        period_s=period if period is not None else K8S_DEFAULT_PERIOD,
                        period_is_default=probe.get("periodSeconds") is None,
                        replicas=_replicas(manifest, ancestors),
                        where=where,
                        served=served,
                    )
                )
    return checks


_KUBERNETES_VARIABLE = re.compile(r"(?<!\$)\$\((\w+)\)")
_UNKNOWN_WORD = "${GEMLINT_TEMPLATED}"  # a word a template hides: never a port, never an application


def _words(node: Node | None) -> list[str]:
    if isinstance(node, Sequence):
        return [_value(item) if _value(item) is not None else _UNKNOWN_WORD for item in node.items]
    text = _value(node)
    return [text] if text is not None else ([_UNKNOWN_WORD] if node is not None else [])


def _kubelet_expanded(word: str, env: dict[str, str | None]) -> str:
    """The kubelet substitutes ``$(VAR)`` in command and args before anything runs (a shell never sees it)."""
    return _KUBERNETES_VARIABLE.sub(lambda match: env.get(match.group(1)) or match.group(0), word)


def _kubernetes_served(container: Mapping) -> Served | None:
    """``command`` replaces the image's entrypoint and ``args`` its command; ``args`` alone is read when it
    starts with a program (images built on a Python base image have no entrypoint)."""
    env: dict[str, str | None] = {}
    for item in container.sequence("env"):
        if isinstance(item, Mapping) and _literal(item.get("name")):
            env[_literal(item.get("name"))] = _value(item.get("value")) if item.get("valueFrom") is None else None
    command = [_kubelet_expanded(word, env) for word in _words(container.get("command"))]
    args = [_kubelet_expanded(word, env) for word in _words(container.get("args"))]
    if command:
        return served_by(command + args, env)
    if args and not args[0].startswith("-"):
        served = served_by(args, env)
        return served if served is not None and served.python else None
    return None


def kubernetes_env(file: YamlFile) -> list[EnvSetting]:
    settings = []
    for manifest in manifests(file):
        for container, _ in _containers(manifest):
            for item in container.sequence("env"):
                if not isinstance(item, Mapping):
                    continue
                name = _literal(item.get("name"))
                value_node = item.get("value")
                if name is None or value_node is None:
                    continue
                start, end = value_node.span
                settings.append(EnvSetting(name, _literal(value_node), start, end))
    return settings


# -- docker-compose -------------------------------------------------------------------------
def _services(file: YamlFile) -> Iterator[tuple[str, Mapping]]:
    for document in file.documents:
        if isinstance(document, Mapping) and document.get("kind") is None:
            services = document.mapping("services")
            if services is not None:
                for key, service in services.pairs:
                    if isinstance(service, Mapping):
                        yield key.value, service


def compose_health_checks(file: YamlFile) -> list[HealthCheck]:
    if not file.is_compose:
        return []
    checks = []
    for name, service in _services(file):
        entry = service.entry("healthcheck")
        if entry is None or not isinstance(entry[1], Mapping):
            continue
        key_node, check = entry
        if _literal(check.get("disable")) in ("true", "True", "yes"):
            continue
        test = check.get("test")
        targets = CommandTargets()
        if isinstance(test, Sequence):
            words = [item.value for item in test.items if isinstance(item, Scalar)]
            if words and words[0] == "CMD":
                targets = command_targets(argv=words[1:])
            elif words and words[0] == "CMD-SHELL" and len(words) > 1:
                targets = command_targets(shell=" ".join(words[1:]))
            elif words and words[0] != "NONE":
                targets = command_targets(argv=words)
        elif isinstance(test, Scalar) and test.value.strip() and test.value.strip() != "NONE":
            targets = command_targets(shell=test.value)
        else:
            continue
        interval = parse_duration(_literal(check.get("interval")))
        deploy = service.mapping("deploy")
        replicas = _number(deploy.get("replicas")) if deploy is not None else None
        start, end = key_node.span
        checks.append(
            HealthCheck(
                kind="healthcheck",
                label="healthcheck",
                start=start,
                end=end,
                targets=targets,
                period_s=interval if interval is not None else DOCKER_DEFAULT_INTERVAL,
                period_is_default=check.get("interval") is None,
                replicas=f"{int(replicas)} replicas" if replicas and replicas > 1 else None,
                where=f"compose service {name}",
                served=_compose_served(service),
            )
        )
    return checks


def _compose_words(node: Node | None) -> list[str]:
    """A compose ``command``/``entrypoint``: a list, or a string split as a shell would (without running one)."""
    if isinstance(node, Scalar):
        text = _compose_value(_literal(node))
        if text is None:
            return [_UNKNOWN_WORD]
        try:
            return shlex.split(text)
        except ValueError:
            return text.split()
    if isinstance(node, Sequence):
        return [_compose_value(_literal(item)) or _UNKNOWN_WORD for item in node.items]
    return []


def _compose_served(service: Mapping) -> Served | None:
    env: dict[str, str | None] = {}
    environment = service.get("environment")
    if isinstance(environment, Mapping):
        env = {key.value: _compose_value(_literal(value)) for key, value in environment.pairs}
    elif isinstance(environment, Sequence):
        for item in environment.items:
            if isinstance(item, Scalar) and "=" in item.value:
                name, _, value = item.value.partition("=")
                env[name.strip()] = _compose_value(value if not item.templated else None)
    entrypoint, command = _compose_words(service.get("entrypoint")), _compose_words(service.get("command"))
    if entrypoint or command:
        return served_by(entrypoint + command, env)
    return None


def compose_env(file: YamlFile) -> list[EnvSetting]:
    if not file.is_compose:
        return []
    settings = []
    for _, service in _services(file):
        environment = service.get("environment")
        if isinstance(environment, Mapping):
            for key, value in environment.pairs:
                start, end = value.span
                settings.append(EnvSetting(key.value, _compose_value(_literal(value)), start, end))
        elif isinstance(environment, Sequence):
            for item in environment.items:
                if isinstance(item, Scalar) and "=" in item.value:
                    name, _, value = item.value.partition("=")
                    start, end = item.span
                    settings.append(EnvSetting(name.strip(), _compose_value(value if not item.templated else None), start, end))
    return settings


def _compose_value(value: str | None) -> str | None:
    """Compose interpolates ``${VAR}`` and ``$VAR`` from the host: such values are configuration."""
    if value is None or "$" in value:
        return None
    return value


# -- Dockerfile --------------------------------------------------------------------------------
def _stages(document: DockerfileDocument) -> list[list]:
    stages: list[list] = [[]]
    for instruction in document.instructions:
        if instruction.command == "FROM" and stages[-1]:
            stages.append([])
        stages[-1].append(instruction)
    return stages


def _dockerfile_served(stage: list) -> Served | None:
    """The stage's ``ENTRYPOINT`` and ``CMD`` (the last of each), with the stage's ``ENV`` values."""
    env: dict[str, str | None] = {}
    parts: dict[str, list[str]] = {}
    for instruction in stage:
        if instruction.command == "ENV":
            values = instruction.value
            for index in range(0, len(values) - 1, 2):
                env[values[index]] = _unquote(values[index + 1])
        elif instruction.command in ("ENTRYPOINT", "CMD") and instruction.value:
            text = " ".join(instruction.value)
            parts[instruction.command] = list(instruction.value) if instruction.json else ["/bin/sh", "-c", text]
            if instruction.command == "ENTRYPOINT":
                parts.pop("CMD", None)  # an ENTRYPOINT resets the CMD inherited before it
    argv = parts.get("ENTRYPOINT", []) + parts.get("CMD", [])
    return served_by(argv, env) if argv else None


def dockerfile_health_checks(document: DockerfileDocument) -> list[HealthCheck]:
    checks = []
    for stage in _stages(document):
        checks.extend(_stage_health_checks(stage))
    return checks


def _stage_health_checks(stage: list) -> list[HealthCheck]:
    checks = []
    served = None
    for instruction in stage:
        if instruction.command != "HEALTHCHECK" or not instruction.value or instruction.value[0].upper() != "CMD":
            continue
        served = served or _dockerfile_served(stage)
        if instruction.json:
            targets = command_targets(argv=list(instruction.value[1:]))
        else:
            targets = command_targets(shell=" ".join(instruction.value[1:]))
        interval = parse_duration(instruction.flag("interval"))
        checks.append(
            HealthCheck(
                kind="healthcheck",
                label="HEALTHCHECK",
                start=Position(instruction.start_line, 1),
                end=Position(instruction.start_line, 1 + len("HEALTHCHECK")),
                targets=targets,
                period_s=interval if interval is not None else DOCKER_DEFAULT_INTERVAL,
                period_is_default=instruction.flag("interval") is None,
                where="Dockerfile HEALTHCHECK",
                served=served,
            )
        )
    return checks


def dockerfile_env(document: DockerfileDocument) -> list[EnvSetting]:
    settings = []
    for instruction in document.instructions:
        if instruction.command != "ENV":
            continue
        values = instruction.value
        for index in range(0, len(values) - 1, 2):
            name, raw = values[index], values[index + 1]
            settings.append(
                EnvSetting(
                    name,
                    _unquote(raw),
                    Position(instruction.start_line, 1),
                    Position(instruction.start_line, 1 + len(instruction.original.split("\n", 1)[0])),
                )
            )
    return settings


def _unquote(raw: str) -> str | None:
    """The value Docker stores, or None when it substitutes a build argument or variable."""
    if "$" in raw.replace("\\$", ""):
        return None
    try:
        parts = shlex.split(raw)
    except ValueError:
        return raw
    return " ".join(parts) if parts else ""


# -- any deployment document ----------------------------------------------------------------------
def health_checks(document: object) -> list[HealthCheck]:
    if isinstance(document, DockerfileDocument):
        return dockerfile_health_checks(document)
    if isinstance(document, YamlFile):
        return kubernetes_health_checks(document) + compose_health_checks(document)
    return []


def env_settings(document: object) -> list[EnvSetting]:
    if isinstance(document, DockerfileDocument):
        return dockerfile_env(document)
    if isinstance(document, YamlFile):
        return kubernetes_env(document) + compose_env(document)
    return []
