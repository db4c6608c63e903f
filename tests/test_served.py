"""What a container's command serves: the application and the port (GEM601's probe-to-service matching)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemlint.analysis.served import served_by, served_by_shell


@pytest.mark.parametrize(
    "argv, env, program, app, port, read",
    [
        (["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000"], {}, "uvicorn", "app.main:app", "8000", True),
        (["uvicorn", "app.main:app"], {}, "uvicorn", "app.main:app", "8000", False),  # uvicorn's default
        (["uvicorn", "app.main:app"], {"UVICORN_PORT": "9000"}, "uvicorn", "app.main:app", "9000", True),
        (["python3", "-m", "uvicorn", "pkg.app:create_app()", "--factory"], {}, "uvicorn", "pkg.app:create_app", "8000", False),
        (["gunicorn", "-k", "uvicorn.workers.UvicornWorker", "-b", "0.0.0.0:9000", "svc.api:app"], {}, "gunicorn", "svc.api:app", "9000", True),
        (["gunicorn", "--bind=[::]:9001", "svc.api:app"], {}, "gunicorn", "svc.api:app", "9001", True),
        (["gunicorn", "-w", "4", "svc.wsgi"], {"PORT": "7000"}, "gunicorn", "svc.wsgi:application", "7000", True),
        (["gunicorn", "-c", "conf.py", "svc.api:app"], {}, "gunicorn", "svc.api:app", None, False),  # the config may bind
        (["gunicorn", "-b", "unix:/tmp/s.sock", "svc.api:app"], {}, "gunicorn", "svc.api:app", None, False),
        (["uvicorn", "a:app", "--port", "${PORT:-8090}"], {}, "uvicorn", "a:app", "8090", True),
        (["uvicorn", "a:app", "--port", "$PORT"], {}, "uvicorn", "a:app", None, False),  # not known: never guessed
        (["flask", "run", "-p", "5001"], {"FLASK_APP": "web.app:server"}, "flask", "web.app:server", "5001", True),
        (["vllm", "serve", "gpt2", "--port", "8000"], {}, "vllm", None, None, False),
    ],
)
def test_server_commands(argv, env, program, app, port, read):
    served = served_by(argv, env)
    assert (served.program, served.app, served.port, served.port_read) == (program, app, port, read)


def test_python_modules_and_scripts():
    module = served_by(["python", "-u", "-m", "server.main", "--port", "8081"])
    assert (module.program, module.module, module.port, module.port_read) == ("python", "server.main", "8081", True)
    script = served_by(["python", "serve.py"])
    assert (script.script, script.port) == ("serve.py", None)
    shebang = served_by(["./serve.py", "--port", "8082"])
    assert (shebang.program, shebang.script, shebang.port) == ("python", "./serve.py", "8082")


def test_shell_scripts_wrappers_and_exports():
    text = "#!/bin/sh\nset -e  # strict\nexport PORT=8001\npip install -e . && \\\n  exec gunicorn -b \"0.0.0.0:${PORT}\" svc.api:app\n"
    served = served_by_shell(text)
    assert (served.program, served.app, served.port) == ("gunicorn", "svc.api:app", "8001")
    wrapped = served_by(["tini", "--", "uv", "run", "uvicorn", "svc.api:app", "--port", "8002"])
    assert (wrapped.app, wrapped.port) == ("svc.api:app", "8002")


def test_the_last_server_a_shell_starts_is_the_one_served():
    served = served_by(["bash", "-c", "python -m migrate && uvicorn svc.api:app --port 8003"])
    assert (served.program, served.app) == ("uvicorn", "svc.api:app")


def test_shells_with_combined_options():
    served = served_by(["/bin/bash", "-exc", "export PORT=8010\npython -m svc.server \\\n  --port ${PORT}\n"])
    assert (served.program, served.module, served.port) == ("python", "svc.server", "8010")
    piped = served_by(["bash", "-o", "pipefail", "-c", "uvicorn svc.api:app --port 8011 | tee log"])
    assert (piped.app, piped.port) == ("svc.api:app", "8011")


def test_notes_state_only_ports_written_in_the_files():
    from gemlint.api import lint_paths
    from gemlint.config import default_config

    root = Path(__file__).parent / "fixtures" / "GEM601-services"
    found = [d for d in lint_paths([root / "docker-compose.yml"], config=default_config(root), select=("GEM601",)) if d.line == 32]  # b-port-80
    assert len(found) == 1
    texts = [found[0].message] + [related.message for related in found[0].related]
    assert not any("port" in text or re.search(r"\b80\b", text) for text in texts), texts
