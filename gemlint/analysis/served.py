"""What a container's command serves: the Python application it names and the port it listens on.

Read from a Kubernetes container's ``command``/``args``, a compose service's
``entrypoint``/``command`` or a Dockerfile's ``ENTRYPOINT``/``CMD`` (GEM601 then
matches a probe to the handlers of that application only). Servers understood:
uvicorn, gunicorn, hypercorn, daphne, granian, waitress, ``flask run``,
``fastapi run``, ``python -m MODULE`` and ``python SCRIPT.py``, run directly, through
``python -m``, a shell (``sh -c "... && exec uvicorn ..."``) or ``uv``/``poetry run``.
A port comes from the command (``--port 8080``, ``-b 0.0.0.0:8080``), from an
environment variable the command or the server reads (``--port $(PORT)``,
gunicorn's ``PORT``, ``UVICORN_PORT``, ``FLASK_RUN_PORT``), else from the server's
documented default; :attr:`Served.port_read` says whether it was written in a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gemlint.analysis.probe_commands import shell_command_string, split_shell
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye"})
_WRAPPERS = frozenset({"exec", "env", "nohup", "tini", "dumb-init", "gosu", "su-exec", "time"})
#: ``module:attribute`` (with a factory call, ``module:create_app()``)
APP_REFERENCE = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)(?:\(.*\))?$")
_APP_DIR_OPTIONS = ("--app-dir", "--chdir")
_GUNICORN_FLAGS = frozenset({"--preload", "--reload", "-D", "--daemon", "--capture-output", "--enable-stdio-inheritance", "--spew"})
_VARIABLE = re.compile(r"\$(?:\((?P<paren>\w+)\)|\{(?P<brace>\w+)(?::?-(?P<default>\d+))?\}|(?P<bare>[A-Za-z_]\w*))")


@dataclass(frozen=True)
class Server:
    """How one server program is run: its port options, default port and the variables it reads."""

    port_options: tuple[str, ...]  # options whose value is a port
    bind_options: tuple[str, ...]  # options whose value is an address (host:port)
    default_port: str | None
    port_variables: tuple[str, ...] = ()  # environment variables the server takes its port from
    config_options: tuple[str, ...] = ()  # a config file given here may set the port


SERVERS = {
    "uvicorn": Server(("--port",), (), "8000", ("UVICORN_PORT",)),
    "gunicorn": Server((), ("-b", "--bind"), "8000", ("PORT",), ("-c", "--config")),
    "hypercorn": Server((), ("-b", "--bind"), "8000", (), ("-c", "--config")),
    "daphne": Server(("-p", "--port"), (), "8000"),
    "granian": Server(("--port",), (), "8000", ("GRANIAN_PORT",)),
    "waitress-serve": Server(("--port",), ("--listen",), "8080"),
    "flask": Server(("-p", "--port"), (), "5000", ("FLASK_RUN_PORT",)),
    "fastapi": Server(("--port",), (), "8000"),
    "python": Server(("--port",), (), None, ()),
}


@dataclass(frozen=True)
class Served:
    """The application a container serves and the port it listens on (None: not known)."""

    command: str  # the server command as written, for messages
    program: str  # "uvicorn", "gunicorn", ..., "python", or the program name when it is not a Python server
    app: str | None = None  # "pkg.module:attr"
    module: str | None = None  # "pkg.module" (python -m, an app reference's module, gunicorn's bare module)
    script: str | None = None  # a Python script's path as written
    app_dir: str | None = None  # the folder the server imports the module from (``--app-dir``, ``--chdir``)
    port: str | None = None
    port_read: bool = False  # the port was written in a file (a default is used for matching, never stated)
    #: the environment the command runs with (a script it starts reads it too)
    env: tuple[tuple[str, str | None], ...] = field(default=(), compare=False, repr=False)

    @property
    def python(self) -> bool:
        """The command runs a Python server or program gemlint can follow into the project."""
        return self.program in SERVERS


def served_by(argv: list[str], env: dict[str, str | None] | None = None) -> Served | None:
    """What ``argv`` (an exec-form command with its arguments) serves; None when it runs nothing."""
    env = dict(env or {})
    commands = _commands(argv, env, 0)
    if not commands:
        return None
    for command in reversed(commands):  # the last server started is the one left running
        program = _program_name(command)
        if program in SERVERS:
            return _served(program, command, env)
    return Served(" ".join(commands[-1]), _program_name(commands[-1]), env=tuple(env.items()))


def served_by_shell(text: str, env: dict[str, str | None] | None = None) -> Served | None:
    """What a shell command line or script serves."""
    return served_by(["sh", "-c", text], env)


def _commands(argv: list[str], env: dict[str, str | None], depth: int) -> list[list[str]]:
    """The simple commands ``argv`` runs, shells opened and wrappers removed; ``export``/``VAR=`` values
    that a shell assigns are added to ``env``."""
    while argv:
        word = argv[0]
        name = word.rsplit("/", 1)[-1]
        if "=" in word and not word.startswith("-") and re.match(r"^\w+=", word):
            key, _, value = word.partition("=")
            env[key] = value
            argv = argv[1:]
        elif name in _WRAPPERS:
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
        elif name in _RUNNERS and len(argv) > 2 and argv[1] == "run":
            argv = argv[2:]
        else:
            break
    if not argv:
        return []
    script = shell_command_string(argv)
    if script is not None and depth < 3:
        found = []
        for command in split_shell(script):
            if command and command[0] == "export":
                for assignment in command[1:]:
                    key, sep, value = assignment.partition("=")
                    if sep:
                        env[key] = value
                continue
            found.extend(_commands(command, env, depth + 1))
        return found
    return [argv]


def _program_name(argv: list[str]) -> str:
    name = argv[0].rsplit("/", 1)[-1]
    if _PYTHON.match(name):
        rest = argv[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[1:]
        if len(rest) > 1 and rest[0] == "-m" and rest[1] in SERVERS and rest[1] != "python":
            return rest[1]
        return "python"
    if name.endswith(".py"):
        return "python"
    return name


def _served(program: str, argv: list[str], env: dict[str, str | None]) -> Served:
    server = SERVERS[program]
    words = argv[1:]
    if _PYTHON.match(argv[0].rsplit("/", 1)[-1]):
        while words and words[0].startswith("-") and words[0] != "-m":
            words = words[1:]
        if program != "python" and words[:1] == ["-m"]:
            words = words[2:]  # python -m uvicorn ...
    app = module = script = None
    if program == "python":
        if argv[0].endswith(".py"):
            script = argv[0]  # ./serve.py: run through its shebang
        elif words[:1] == ["-m"] and len(words) > 1:
            module, words = words[1], words[2:]
        elif words and words[0] != "-c":
            script, words = words[0], words[1:]
    port, read, config, app_dir = None, False, False, None
    skip_next = False
    values = server.port_options + server.bind_options + ("--app", "-A", "--host", "-H") + _APP_DIR_OPTIONS + server.config_options
    for index, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        option, sep, inline = word.partition("=")
        if option in values:
            value = inline if sep else (words[index + 1] if index + 1 < len(words) else None)
            skip_next = not sep
            if value is None:
                continue
            value = _expand(value, env)
            if option in server.port_options:
                port, read = _port(value), True
            elif option in server.bind_options:
                port, read = _bound_port(value), True
            elif option in server.config_options:
                config = True
            elif option in _APP_DIR_OPTIONS:
                app_dir = value
            elif option in ("--app", "-A") and program in ("flask", "fastapi"):
                app = value if ":" in value else None
                module = module or value.split(":", 1)[0]
            continue
        if option.startswith("-"):
            continue
        if program == "python":
            continue  # a script's own arguments
        match = APP_REFERENCE.match(word)
        if match and app is None and module is None:
            app, module = word.split("(", 1)[0], match.group("module")
        elif program == "gunicorn" and module is None and index == len(words) - 1 and re.fullmatch(r"[A-Za-z_][\w.]*", word):
            # ``gunicorn [OPTIONS] module``: the last word, unless it is the value of an option.
            previous = words[index - 1] if index else ""
            if not previous.startswith("-") or previous in _GUNICORN_FLAGS:
                module, app = word, f"{word}:application"
        elif program == "fastapi" and word.endswith(".py") and script is None:
            script = word
    if program == "flask" and module is None and env.get("FLASK_APP"):
        value = env["FLASK_APP"] or ""
        module = value.split(":", 1)[0].removesuffix(".py").replace("/", ".")
        app = value if ":" in value else None
    if port is None and not read:
        for variable in server.port_variables:
            if variable in env:
                port, read = _port(env[variable] or ""), True
                break
    if port is None and not read and not config:
        port = server.default_port
    return Served(" ".join(argv), program, app, module, script, app_dir, port, read and port is not None, tuple(env.items()))


def _expand(value: str, env: dict[str, str | None]) -> str:
    """``$(PORT)`` (Kubernetes), ``${PORT}``, ``${PORT:-8000}`` and ``$PORT`` from the container's environment;
    a variable whose value is not known stays as written (and is never a port)."""

    def substitute(match: re.Match) -> str:
        name = match.group("paren") or match.group("brace") or match.group("bare")
        found = env.get(name)
        if found is not None:
            return found
        return match.group("default") or match.group(0)

    return _VARIABLE.sub(substitute, value)


def _port(value: str) -> str | None:
    return value if value.isdigit() else None


def _bound_port(address: str) -> str | None:
    """The port of ``0.0.0.0:8000``, ``:8000``, ``[::]:8000``; None for ``unix:/path`` or no port."""
    if address.startswith(("unix:", "fd://")):
        return None
    host, sep, port = address.rpartition(":")
    return port if sep and port.isdigit() else None
