"""What a health-check command talks to: local HTTP paths it requests, Python scripts and modules it runs."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

# A local URL (the probe runs inside the container): scheme optional, port optional, path optional.
_LOCAL_URL = re.compile(
    r"(?:(?P<scheme>https?)://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])"
    r"(?::(?P<port>\d+|\$\{?\w+\}?|\{\{[^}]*\}\}))?(?P<path>/[^\s'\"|;&)<>]*)?"
)
# Requests that are inferences by the API a model server serves, whatever serves them: OpenAI-compatible
# completions and embeddings (vLLM, llama.cpp, Ollama, LocalAI), TGI's generate, the KServe v1 and v2 (Triton)
# inference protocols, TorchServe's predictions, SageMaker's invocations. Sent with POST: a GET of these paths is
# no inference.
INFERENCE_APIS = (
    (re.compile(r"/v1/(?:chat/)?completions|/v1/embeddings|/api/(?:generate|chat|embeddings?)"), "a completion of the OpenAI-compatible API"),
    (re.compile(r"/generate(?:_stream)?"), "a text generation"),
    (re.compile(r"/v2/models/[^/]+(?:/versions/[^/]+)?/(?:infer|generate(?:_stream)?)|/v1/models/[^/:]+:predict"), "an inference of the model server's protocol"),
    (re.compile(r"/predictions/[^/]+(?:/[^/]+)?"), "a TorchServe prediction"),
    (re.compile(r"/invocations"), "a SageMaker invocation"),
)
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_SEPARATOR_CHARACTERS = frozenset(";&|")


@dataclass(frozen=True)
class HttpTarget:
    path: str
    port: str | None = None  # a number, or None when not known
    method: str = "GET"
    #: the port a URL without one implies (80, or 443 for https): compared with the server's, never stated
    implied_port: str | None = None


@dataclass
class CommandTargets:
    http: list[HttpTarget] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # paths as written
    modules: list[str] = field(default_factory=list)  # python -m MODULE
    inline_code: list[str] = field(default_factory=list)  # python -c CODE


def inference_request(targets: CommandTargets) -> tuple[HttpTarget, str] | None:
    """A request of ``targets`` that is an inference by its API (:data:`INFERENCE_APIS`), with what it asks for."""
    for target in targets.http:
        if target.method != "POST":
            continue
        for pattern, what in INFERENCE_APIS:
            if pattern.fullmatch(target.path.rstrip("/")):
                return target, what
    return None


def local_urls(text: str) -> list[HttpTarget]:
    """The local URLs in ``text`` (``curl -f http://localhost:8000/healthz``), as path and port."""
    targets = []
    for match in _LOCAL_URL.finditer(text):
        if match.group("scheme") is None and match.group("port") is None and match.group("path") is None:
            continue  # a bare "localhost" is not a request
        path = match.group("path") or "/"
        path = path.split("?", 1)[0].split("#", 1)[0] or "/"
        port = match.group("port")
        implied = None if port else ("443" if match.group("scheme") == "https" else "80")
        targets.append(HttpTarget(path, port if port and port.isdigit() else None, implied_port=implied))
    return targets


def split_shell(command: str) -> list[list[str]]:
    """The simple commands of a shell command line or script (lines, ``;``, ``&&``, ``||``, pipes)."""
    # A line ends a command; the separator goes after the newline, which a ``# comment`` swallows.
    command = command.replace("\\\n", " ").replace("\n", "\n;")
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = command.split()
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or (token and set(token) <= _SEPARATOR_CHARACTERS):
            commands.append([])
        else:
            commands[-1].append(token)
    return [argv for argv in commands if argv]


def shell_command_string(argv: list[str]) -> str | None:
    """The command string of ``sh -c STRING`` (also ``bash -exc``, ``bash -o pipefail -c``); None when
    ``argv`` is not a shell given one."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in SHELLS:
        return None
    index = 1
    while index < len(argv):
        word = argv[index]
        if word in ("-o", "+o", "-O", "+O"):
            index += 2
            continue
        if not word.startswith(("-", "+")) or word.startswith("--"):
            return None
        if "c" in word[1:]:
            return argv[index + 1] if index + 1 < len(argv) else None
        index += 1
    return None


def command_targets(argv: list[str] | None = None, shell: str | None = None, _depth: int = 0) -> CommandTargets:
    """Targets of an exec-form ``argv`` or a ``shell`` command line."""
    targets = CommandTargets()
    text = shell if shell is not None else " ".join(argv or [])
    method = "POST" if re.search(r"(?:^|\s)(?:-X\s*POST|--request\s+POST|--data\b|-d\s)", text) else "GET"
    targets.http.extend(HttpTarget(t.path, t.port, method, t.implied_port) for t in local_urls(text))
    commands = split_shell(shell) if shell is not None else [list(argv or [])]
    for command in commands:
        _program(command, targets, _depth)
    return targets


def _program(argv: list[str], targets: CommandTargets, depth: int) -> None:
    while argv and ("=" in argv[0] and not argv[0].startswith("-")):  # VAR=value prefixes
        argv = argv[1:]
    if not argv:
        return
    name = argv[0].rsplit("/", 1)[-1]
    script = shell_command_string(argv)
    if script is not None and depth < 3:
        if script:
            nested = command_targets(shell=script, _depth=depth + 1)
            targets.scripts.extend(nested.scripts)
            targets.modules.extend(nested.modules)
            targets.inline_code.extend(nested.inline_code)
        return
    if name in ("uv", "poetry", "pipenv", "pdm", "hatch") and len(argv) > 2 and argv[1] == "run":
        _program(argv[2:], targets, depth)
        return
    if _PYTHON.match(name):
        rest = argv[1:]
        while rest:
            option = rest[0]
            if option == "-m" and len(rest) > 1:
                targets.modules.append(rest[1])
                return
            if option == "-c" and len(rest) > 1:
                targets.inline_code.append(rest[1])
                return
            if option.startswith("-"):
                rest = rest[1:]
                continue
            targets.scripts.append(option)
            return
    elif argv[0].endswith(".py"):
        targets.scripts.append(argv[0])
