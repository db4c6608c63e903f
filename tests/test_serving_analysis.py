"""Routes across a project, cross-module reachability of forward passes, and GEM601's cross-file context."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from astroid.manager import AstroidManager
from click.testing import CliRunner

from gemlint.project.astroid_trees import build_astroid
from gemlint.project.reach import MAX_DEPTH
from gemlint.analysis.route_paths import is_health_path, path_matches
from gemlint.cli import main
from gemlint.config import default_config
from gemlint.project.files import Project, module_name


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _routes(root: Path) -> dict[str, str]:
    project = Project(default_config(root))
    return {route.path: route.handler_name for route in project.routes}


def test_prefixes_compose_across_modules_and_frameworks(tmp_path):
    _write(
        tmp_path,
        {
            "svc/__init__.py": "",
            "svc/inner.py": """
                from fastapi import APIRouter
                inner = APIRouter(prefix="/inner")
                @inner.get("/health")
                def inner_health(): ...
            """,
            "svc/outer.py": """
                from fastapi import APIRouter
                from .inner import inner
                outer = APIRouter(prefix="/outer")
                outer.include_router(inner, prefix="/mid")
                @outer.api_route("/items/{item_id}", methods=["GET"])
                def item(item_id: int): ...
            """,
            "svc/main.py": """
                from fastapi import FastAPI
                from svc import outer as outer_module
                app = FastAPI()
                app.include_router(outer_module.outer, prefix="/api")
            """,
            "svc/flask_side.py": """
                from flask import Blueprint, Flask
                child = Blueprint("child", __name__, url_prefix="/child")
                parent = Blueprint("parent", __name__, url_prefix="/parent")
                @child.get("/ping")
                def child_ping(): ...
                parent.register_blueprint(child)
                app = Flask(__name__)
                app.register_blueprint(parent)
            """,
            "svc/aio_side.py": """
                from aiohttp import web
                async def sub_health(request): ...
                def build():
                    sub = web.Application()
                    sub.add_routes([web.get("/health", sub_health)])
                    app = web.Application()
                    app.add_subapp("/sub", sub)
                    app.router.add_route("GET", "/direct", sub_health)
                    return app
            """,
            "svc/starlette_side.py": """
                from starlette.applications import Starlette
                from starlette.routing import Mount, Route
                async def nested(request): ...
                app = Starlette(routes=[Mount("/a", routes=[Mount("/b", routes=[Route("/c", nested)])])])
            """,
            "svc/sanic_side.py": """
                from sanic import Blueprint
                bp = Blueprint("bp", url_prefix="/sanic")
                @bp.route("/status")
                async def sanic_status(request): ...
            """,
            "svc/litestar_side.py": """
                from litestar import get
                @get("/lite")
                async def lite() -> dict: ...
            """,
            "svc/urls.py": """
                from django.urls import include, path
                urlpatterns = [path("dj/", include("svc.more_urls"))]
            """,
            "svc/more_urls.py": """
                from django.urls import path, re_path
                from svc.views import status, regex_status
                urlpatterns = [path("status/", status), re_path(r"^rx/(?P<n>[0-9]+)/$", regex_status)]
            """,
            "svc/views.py": """
                def status(request): ...
                def regex_status(request, n): ...
            """,
        },
    )
    routes = _routes(tmp_path)
    assert routes["/api/outer/mid/inner/health"] == "inner_health"
    assert routes["/api/outer/items/{item_id}"] == "item"
    assert routes["/parent/child/ping"] == "child_ping"
    assert routes["/sub/health"] == "sub_health" and routes["/direct"] == "sub_health"
    assert routes["/a/b/c"] == "nested"
    assert routes["/sanic/status"] == "sanic_status"
    assert routes["/lite"] == "lite"
    assert routes["dj/status/"] == "status"
    project = Project(default_config(tmp_path))
    assert [r.handler_name for r in project.handlers_for("/dj/rx/42/", "GET", tmp_path)] == ["regex_status"]
    assert [r.handler_name for r in project.handlers_for("/api/outer/items/7", "GET", tmp_path)] == ["item"]
    assert project.handlers_for("/api/outer/items/7", "POST", tmp_path) == []


def test_path_matching_and_health_paths():
    assert path_matches("literal", "/healthz", "/healthz/")
    assert path_matches("literal", "/v1/<name>", "/v1/x") and not path_matches("literal", "/v1/<name>", "/v1/x/y")
    assert path_matches("literal", "/files/{rest:path}", "/files/a/b")
    assert path_matches("regex", r"/health/?", "/health") and not path_matches("regex", "[", "/x")
    health = ("/health", "/healthz", "/livez", "/live", "/ping")
    assert is_health_path("/v2/health/live", health) and is_health_path("/api/healthz", health)
    assert not is_health_path("/v2/health/ready", health) and not is_health_path("/predict", health)


def test_module_names_follow_packages(tmp_path):
    _write(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/sub/__init__.py": "", "src/pkg/sub/mod.py": "", "tool.py": ""})
    assert module_name(tmp_path / "src/pkg/sub/mod.py") == "pkg.sub.mod"
    assert module_name(tmp_path / "src/pkg/sub/__init__.py") == "pkg.sub"
    assert module_name(tmp_path / "tool.py") == "tool"


_MODEL = """
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained("gpt2")
"""


def test_reachability_is_bounded_in_depth_and_survives_cycles(tmp_path):
    chain = "\n".join(f"def step{i}():\n    return step{i + 1}()\n" for i in range(MAX_DEPTH + 3))
    _write(
        tmp_path,
        {
            "state.py": _MODEL,
            "chain.py": "from state import model\n" + chain + f"def step{MAX_DEPTH + 3}():\n    return model.generate()\n",
            "cycle.py": "def a():\n    return b()\n\ndef b():\n    return a()\n",
            "near.py": "from chain import step" + str(MAX_DEPTH + 1) + "\n\ndef start():\n    return step" + str(MAX_DEPTH + 1) + "()\n",
        },
    )
    project = Project(default_config(tmp_path))
    chain_file = project.parsed(tmp_path / "chain.py")
    assert project.reach.forward_from(chain_file, 2) is None  # step0: too deep
    found = project.reach.forward_from(project.parsed(tmp_path / "near.py"), 3)
    assert found is not None and found.text == "`model.generate(...)`"
    assert [step.name for step in found.steps][:2] == ["start", f"step{MAX_DEPTH + 1}"]
    assert project.reach.forward_from(project.parsed(tmp_path / "cycle.py"), 1) is None


def test_methods_instances_and_annotations_are_followed(tmp_path):
    _write(
        tmp_path,
        {
            "state.py": _MODEL,
            "engine.py": """
                from state import model
                class Base:
                    def run(self, ids):
                        return model.generate(ids)
                class Engine(Base):
                    pass
                def make():
                    return Engine()
            """,
            "app.py": """
                from engine import Engine, make
                class Service:
                    def __init__(self):
                        self.engine = make()
                    def check(self):
                        return self.engine.run([1])
                def annotated(engine: Engine):
                    return engine.run([1])
                shared = Service()
                def via_instance():
                    return shared.check()
            """,
        },
    )
    project = Project(default_config(tmp_path))
    app = project.parsed(tmp_path / "app.py")
    for line in (6, 8, 11):
        assert project.reach.forward_from(app, line) is not None, line


def test_a_function_that_calls_only_builtins_and_other_packages_needs_no_astroid_tree(tmp_path, monkeypatch):
    """A handler whose calls are all of builtins and of names that only imports of other packages bind cannot run
    project code: it is answered on LibCST. Any call that may reach the project is still followed with astroid."""
    _write(
        tmp_path,
        {
            "state.py": _MODEL,
            "helpers.py": "from state import model\n\ndef probe():\n    return model.generate([1])\n",
            "plain.py": """
                import json
                import time
                from fastapi import Response
                def health():
                    body = json.dumps({"ok": True, "at": time.time(), "n": len([1])})
                    return Response(content=", ".join([body]), status_code=200)
            """,
            "imported.py": """
                import asyncio
                from helpers import probe
                def direct():
                    return probe()
                async def offloaded():
                    return await asyncio.to_thread(probe)
            """,
            "local.py": """
                from state import model
                def run():
                    return model.generate([1])
                def health():
                    return run()
            """,
        },
    )
    import gemlint.project.astroid_trees as trees

    built: list[str] = []
    original = trees.build_astroid
    monkeypatch.setattr(trees, "build_astroid", lambda text, modname, path: built.append(modname) or original(text, modname, path))
    project = Project(default_config(tmp_path))
    assert project.reach.forward_from(project.parsed(tmp_path / "plain.py"), 5) is None
    assert built == []
    imported = project.parsed(tmp_path / "imported.py")
    for line in (4, 6):
        found = project.reach.forward_from(imported, line)
        assert found is not None and [step.name for step in found.via] == ["probe"], line
    found = project.reach.forward_from(project.parsed(tmp_path / "local.py"), 5)
    assert found is not None and [step.name for step in found.via] == ["run"]


def test_a_question_answered_on_libcst_does_not_import_astroid(tmp_path):
    """Importing astroid costs a run about 0.07 s: a process whose reachability questions LibCST answers never
    imports it, and one that must follow a call into the project does, without astroid's start-up (its
    `builtins` module built by introspection, 0.09 s more)."""
    _write(
        tmp_path,
        {
            "state.py": _MODEL,
            "plain.py": "import json\nfrom fastapi import Response\ndef health():\n    return Response(json.dumps({}))\n",
            "local.py": "from state import model\ndef run():\n    return model.generate([1])\ndef health():\n    print(len([]))\n    return run()\n",
        },
    )
    program = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from gemlint.config import default_config
        from gemlint.project.files import Project
        root = Path(sys.argv[1])
        project = Project(default_config(root))
        assert project.reach.forward_from(project.parsed(root / "plain.py"), 3) is None
        print("astroid" in sys.modules)
        assert project.reach.forward_from(project.parsed(root / "local.py"), 4) is not None
        print("astroid" in sys.modules)
        from astroid.raw_building import InspectBuilder
        print(InspectBuilder.bootstrapped)
        """
    )
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "False"]


def test_astroid_never_imports_project_or_extension_modules(tmp_path):
    marker = tmp_path / "imported"
    _write(
        tmp_path,
        {
            "evil/__init__.py": f"open({str(marker)!r}, 'w').write('x')\n",
            "evil/helpers.py": f"open({str(marker)!r}, 'w').write('x')\ndef helper():\n    return 1\n",
            "server.py": """
                from fastapi import FastAPI
                from evil.helpers import *
                from evil import native
                import json, _socket
                app = FastAPI()
                @app.get("/healthz")
                def healthz():
                    helper()
                    native.run()
                    json.dumps({})
                    return {"ok": True}
            """,
            "deploy.yaml": """
                apiVersion: v1
                kind: Pod
                spec:
                  containers:
                    - name: a
                      livenessProbe: {httpGet: {path: /healthz, port: 80}}
            """,
        },
    )
    (tmp_path / "evil" / "native.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF not really")
    before = set(sys.modules)
    result = CliRunner().invoke(main, [str(tmp_path), "--isolated", "--project-root", str(tmp_path), "--select", "GEM6", "-j", "1"])
    assert result.exit_code in (0, 1), result.output
    assert not marker.exists()
    assert not {name for name in set(sys.modules) - before if name.startswith("evil")}
    assert "evil" not in AstroidManager().astroid_cache and "server" not in AstroidManager().astroid_cache


def test_building_a_tree_loads_no_other_module(tmp_path):
    # astroid infers `self.x = ...` targets while it builds a tree; without the deny list that
    # inference parses every module the file imports, and theirs (hundreds of files on a large project).
    (tmp_path / "sibling.py").write_text("import json\nclass Engine:\n    pass\n")
    text = textwrap.dedent(
        """
        import json
        from sibling import Engine
        class Server(json.JSONDecoder, Engine):  # bases are inferred to type `self`
            def __init__(self):
                self.engine = Engine()
                self.codec = json.JSONDecoder()
        """
    )
    cache = AstroidManager.brain["astroid_cache"]
    before = set(cache)
    module = build_astroid(text, "server", str(tmp_path / "server.py"))
    assert module is not None and "Server" in module.locals
    assert not {"json", "sibling"} & (set(cache) - before)
    assert "json" not in AstroidManager().module_denylist  # lifted again once the tree is built


def test_explicit_manifest_resolves_handlers_from_the_project_root(tmp_path, monkeypatch):
    _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/state.py": _MODEL,
            "app/server.py": """
                from fastapi import FastAPI
                from app.state import model
                app = FastAPI()
                @app.get("/healthz")
                def healthz():
                    model.generate([[0]])
                    return {}
            """,
            "deploy/k8s/pod.yaml": """
                apiVersion: v1
                kind: Pod
                spec:
                  containers:
                    - name: a
                      livenessProbe:
                        httpGet: {path: /healthz, port: 80}
                        periodSeconds: 3
            """,
        },
    )
    monkeypatch.chdir(tmp_path / "deploy")
    # As pre-commit runs it: one changed file, the project root given explicitly.
    result = CliRunner().invoke(main, ["k8s/pod.yaml", "--isolated", "--project-root", str(tmp_path), "-j", "1"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if "GEM" in line]
    assert lines[0].startswith("k8s/pod.yaml:7:") and "every 3 s" in lines[0]
    assert "note: `healthz` handles GET /healthz" in result.output
    assert not any(line.startswith("../app") and ": GEM" in line for line in lines)  # findings only for the given file


def test_a_fifo_named_like_a_module_does_not_block_the_project_index(tmp_path):
    import os

    _write(tmp_path, {"server.py": "from fastapi import FastAPI\napp = FastAPI()\n@app.get('/h')\ndef h(): ...\n"})
    os.mkfifo(tmp_path / "fifo.py")
    project = Project(default_config(tmp_path))
    assert [p.name for p in project.python_files] == ["server.py"]
    assert [r.path for r in project.routes] == ["/h"]
    assert project.parsed(tmp_path / "fifo.py") is None


def _many_callers(root: Path, guard: bool) -> None:
    files = {
        "svc/__init__.py": "",
        "svc/helper.py": """
            from torch import nn
            MODEL = nn.Linear(2, 2).eval()

            def score(x):
                return MODEL(x)
            """,
    }
    call = "with torch.no_grad():\n        return score(x)" if guard else "return score(x)"
    for number in range(5):  # more caller files than are parsed: judged from the index
        files[f"svc/route{number}.py"] = (
            "import torch\nfrom fastapi import FastAPI\nfrom svc.helper import score\napp = FastAPI()\n\n"
            f"@app.post('/r{number}')\ndef handle{number}(x):\n    {call}\n"
        )
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if name == "svc/helper.py" else text)


def test_a_helper_called_from_many_files_is_judged_from_the_index(tmp_path):
    for guard in (False, True):
        root = tmp_path / str(guard)
        _many_callers(root, guard)
        result = CliRunner().invoke(main, [str(root), "--isolated", "--project-root", str(root), "--select", "GEM101", "--format", "json", "--no-cache"])
        found = [(f["path"].rsplit("/", 1)[-1], f["line"], f["message"]) for f in json.loads(result.stdout)]
        if guard:
            assert found == []  # every call is written under no_grad
        else:
            assert [(path, line) for path, line, _ in found] == [("helper.py", 6)]
            assert "on a path from an inference entry point" in found[0][2]
