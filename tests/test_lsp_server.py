"""``gemlint server`` end to end: pytest-lsp starts it as a subprocess and talks LSP over stdio, as an
editor does (initialize, open, edit, code actions, hover, settings)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from availability import IN_CI

if not IN_CI:  # CI installs both (the test extra): there a missing one fails the import below
    pytest.importorskip("pygls", reason="needs pygls (the lsp extra)")
    pytest.importorskip("pytest_lsp", reason="needs pytest-lsp (the test extra)")

import pytest_lsp  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

HERE = Path(__file__).resolve().parent

APP = '''\
import torch
from fastapi import FastAPI

app = FastAPI()
model = torch.jit.load("model.pt").eval()


@app.post("/predict")
def predict(values: list[float]):
    return model(torch.tensor([values])).tolist()


@app.get("/healthz")
def healthz():
    model(torch.zeros(1, 4))
    return {"ok": True}
'''

DEPLOYMENT = '''\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: api:1
          livenessProbe:
            httpGet:
              path: /healthz
              port: 8000
'''

SERVER = [sys.executable, "-m", "gemlint", "server"]
pytestmark = pytest.mark.asyncio(loop_scope="function")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, str(HERE / "lsp" / "crashing_server.py")]))
async def crashing_client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir()  # the project root, as the command line finds it
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


async def start(client: LanguageClient, root: Path, options: dict | None = None) -> None:
    capabilities = client_capabilities("visual-studio-code")
    # The test client cannot register watchers; the tests send didChangeWatchedFiles themselves.
    capabilities.workspace.did_change_watched_files.dynamic_registration = False
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(root.as_uri(), root.name)],
            initialization_options=options,
        )
    )


def open_file(client: LanguageClient, path: Path, language: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, language, version, path.read_text())))
    return uri


def replace_all(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(lsp.VersionedTextDocumentIdentifier(version, uri), [lsp.TextDocumentContentChangeWholeDocument(text)])
    )


async def findings(client: LanguageClient, uri: str, until, timeout: float = 30.0) -> list[lsp.Diagnostic]:
    """The document's published diagnostics once ``until(codes)`` holds (codes in published order)."""
    async def wait() -> list[lsp.Diagnostic]:
        while True:
            published = client.diagnostics.get(uri)
            if published is not None and until([d.code for d in published]):
                return list(published)
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position: lsp.Position) -> int:
        return offsets[min(position.line, len(lines))] + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def edits_of(action: lsp.CodeAction) -> list[lsp.TextEdit]:
    assert action.edit is not None and action.edit.document_changes
    (change,) = action.edit.document_changes
    return list(change.edits)


async def actions(client: LanguageClient, uri: str, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
    return await client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri), diagnostic.range, lsp.CodeActionContext([diagnostic]))
    )


async def test_fastapi_file_gets_gem101_at_its_range_with_docs_link(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root)
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: "GEM101" in codes)
    gem101 = [d for d in published if d.code == "GEM101"]
    assert [(d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) for d in gem101] == [(9, 11, 9, 40), (14, 4, 14, 28)]
    first = gem101[0]
    assert first.source == "gemlint" and first.severity == lsp.DiagnosticSeverity.Warning
    assert first.code_description is not None and first.code_description.href.endswith("/docs/rules.md#gem101-forward-without-no-grad")
    assert "`model(...)` runs a forward pass with autograd enabled" in first.message
    # GEM602 on the health handler; its related location (the forward pass) comes as relatedInformation.
    gem602 = next(d for d in published if d.code == "GEM602")
    assert gem602.range.start.line == 13
    assert gem602.related_information and all(info.location.uri == uri for info in gem602.related_information)


async def test_unsafe_quick_fix_offered_only_when_enabled_and_applied_gives_the_fixed_text(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"unsafeFixes": True, "select": ["GEM101"]})
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])
    offered = await actions(client, uri, published[0])
    fix = next(a for a in offered if a.title.startswith("GEM101:"))
    assert fix.kind == lsp.CodeActionKind.QuickFix and "(unsafe fix)" in fix.title
    fixed = apply(APP, edits_of(fix))
    assert '@app.post("/predict")\n@torch.inference_mode()\ndef predict(' in fixed
    # The editor applies the edit and sends it back: that finding is gone, the other stays.
    replace_all(client, uri, 2, fixed)
    after = await findings(client, uri, lambda codes: codes == ["GEM101"])
    assert after[0].range.start.line == 15


async def test_unsafe_fix_not_offered_by_default_and_settings_select(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"select": ["GEM101"]})
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])  # GEM602 not selected
    offered = await actions(client, uri, published[0])
    assert [a.title for a in offered] == ["Suppress GEM101 on this line"]


async def test_suppress_action_adds_noqa_and_the_finding_goes(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"select": ["GEM101"]})
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])
    suppress = next(a for a in await actions(client, uri, published[0]) if a.title == "Suppress GEM101 on this line")
    fixed = apply(APP, edits_of(suppress))
    assert "    return model(torch.tensor([values])).tolist()  # noqa: GEM101\n" in fixed
    replace_all(client, uri, 2, fixed)
    after = await findings(client, uri, lambda codes: codes == ["GEM101"])
    assert after[0].range.start.line == 14


async def test_fix_all_safe_problems(client: LanguageClient, tmp_path: Path):
    text = (
        "import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\nmodel = torch.jit.load('m.pt')\n\n\n"
        "@app.post('/p')\n@torch.inference_mode()\ndef predict(x: list[float]):\n    model.train()\n    return model(torch.tensor([x])).tolist()\n"
    )
    root = project(tmp_path, {"app.py": text})
    await start(client, root)
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: "GEM103" in codes)
    gem103 = next(d for d in published if d.code == "GEM103")
    offered = await client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri), gem103.range, lsp.CodeActionContext([], only=[lsp.CodeActionKind.SourceFixAll]))
    )
    (fix_all,) = offered
    assert fix_all.title == "Fix all safe gemlint problems in this file"
    fixed = apply(text, edits_of(fix_all))
    assert "model.train()" not in fixed and "model.eval()" in fixed


async def test_hover_on_a_finding_shows_the_rules_explanation(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"select": ["GEM101"]})
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])
    shown = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), published[0].range.start))
    assert shown is not None and shown.contents.kind == lsp.MarkupKind.Markdown
    assert shown.contents.value.startswith("## GEM101 forward-without-no-grad") and "### Why is this bad?" in shown.contents.value
    elsewhere = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0)))
    assert elsewhere is None


async def test_probe_finding_follows_the_handler_buffer(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP, "deploy.yaml": DEPLOYMENT})
    await start(client, root)
    yaml_uri = open_file(client, root / "deploy.yaml", "yaml")
    probe = await findings(client, yaml_uri, lambda codes: codes == ["GEM601"])
    assert probe[0].range.start.line == 10
    assert probe[0].related_information and probe[0].related_information[0].location.uri == (root / "app.py").as_uri()
    app_uri = open_file(client, root / "app.py", "python")
    await findings(client, app_uri, lambda codes: "GEM602" in codes)
    # Remove the forward from the health handler, unsaved: the probe's finding goes.
    replace_all(client, app_uri, 2, APP.replace("    model(torch.zeros(1, 4))\n", ""))
    await findings(client, yaml_uri, lambda codes: codes == [])
    await findings(client, app_uri, lambda codes: "GEM602" not in codes)
    # And comes back when the forward does.
    replace_all(client, app_uri, 3, APP)
    await findings(client, yaml_uri, lambda codes: codes == ["GEM601"])


async def test_file_changed_on_disk_updates_the_probe(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP, "deploy.yaml": DEPLOYMENT})
    await start(client, root)
    yaml_uri = open_file(client, root / "deploy.yaml", "yaml")
    await findings(client, yaml_uri, lambda codes: codes == ["GEM601"])
    (root / "app.py").write_text(APP.replace("    model(torch.zeros(1, 4))\n", ""))
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams([lsp.FileEvent((root / "app.py").as_uri(), lsp.FileChangeType.Changed)])
    )
    await findings(client, yaml_uri, lambda codes: codes == [])


async def test_unparsable_buffer_gives_one_gem000_and_the_server_keeps_serving(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"select": ["GEM101"]})
    uri = open_file(client, root / "app.py", "python")
    await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])
    replace_all(client, uri, 2, APP.replace("def predict(values: list[float]):", "def predict(values: list[float]"))
    broken = await findings(client, uri, lambda codes: "GEM000" in codes)
    assert [d.code for d in broken] == ["GEM000"] and broken[0].severity == lsp.DiagnosticSeverity.Error
    replace_all(client, uri, 3, APP)
    await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])


async def test_stale_versions_are_never_published(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"select": ["GEM101"]})
    uri = open_file(client, root / "app.py", "python")
    await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])
    without = APP.replace("    return model(torch.tensor([values])).tolist()\n", "    return values\n")
    for version in range(2, 12):  # typing faster than the debounce: only the last text is linted
        replace_all(client, uri, version, without if version % 2 else APP)
    await findings(client, uri, lambda codes: codes == ["GEM101"])
    await asyncio.sleep(1.0)
    assert [d.code for d in client.diagnostics[uri]] == ["GEM101"]


async def test_yaml_dockerfile_and_native_documents(client: LanguageClient, tmp_path: Path):
    dockerfile = "FROM python:3.11\nENV CUDA_LAUNCH_BLOCKING=1\nCMD [\"python\", \"serve.py\"]\n"
    native = "#include <cuda_runtime.h>\nvoid f() {\n  float *p;\n  cudaMalloc(&p, 16);\n}\n"
    root = project(tmp_path, {"Dockerfile": dockerfile, "kernel.cu": native})
    await start(client, root)
    docker_uri = open_file(client, root / "Dockerfile", "dockerfile")
    found = await findings(client, docker_uri, lambda codes: codes == ["GEM404"])
    suppress = next(a for a in await actions(client, docker_uri, found[0]) if a.title.startswith("Suppress"))
    assert apply(dockerfile, edits_of(suppress)) == "FROM python:3.11\n# noqa: GEM404\nENV CUDA_LAUNCH_BLOCKING=1\nCMD [\"python\", \"serve.py\"]\n"
    native_uri = open_file(client, root / "kernel.cu", "cuda-cpp")
    found = await findings(client, native_uri, lambda codes: codes == ["GEM301"])
    suppress = next(a for a in await actions(client, native_uri, found[0]) if a.title.startswith("Suppress"))
    assert "  cudaMalloc(&p, 16);  // noqa: GEM301\n" in apply(native, edits_of(suppress))


async def test_a_crashing_rule_is_logged_and_the_server_keeps_serving(crashing_client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(crashing_client, root, {"select": ["GEM101", "GEM602"]})
    uri = open_file(crashing_client, root / "app.py", "python")
    published = await findings(crashing_client, uri, lambda codes: "GEM602" in codes)
    assert "GEM101" not in [d.code for d in published] and "GEM000" not in [d.code for d in published]
    assert any("internal error in GEM101" in m.message and m.type == lsp.MessageType.Error for m in crashing_client.log_messages)
    shown = await crashing_client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), published[0].range.start))
    assert shown is not None


async def test_settings_from_workspace_configuration_and_their_changes(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    client.set_configuration({"select": ["GEM602"]}, section="gemlint")
    await start(client, root)
    uri = open_file(client, root / "app.py", "python")
    await findings(client, uri, lambda codes: codes == ["GEM602"])
    client.set_configuration({"select": ["GEM101"], "ignore": []}, section="gemlint")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await findings(client, uri, lambda codes: codes == ["GEM101", "GEM101"])


async def test_a_bad_setting_is_logged_with_its_key_and_the_defaults_apply(client: LanguageClient, tmp_path: Path):
    root = project(tmp_path, {"app.py": APP})
    await start(client, root, {"unsafeFixes": "yes"})
    uri = open_file(client, root / "app.py", "python")
    await findings(client, uri, lambda codes: "GEM101" in codes and "GEM602" in codes)
    assert any("'unsafeFixes' must be true or false" in message.message for message in client.log_messages)


async def test_project_config_file_and_noqa_apply_as_in_the_cli(client: LanguageClient, tmp_path: Path):
    root = project(
        tmp_path,
        {
            "app.py": APP.replace("    model(torch.zeros(1, 4))\n", "    model(torch.zeros(1, 4))  # noqa: GEM101\n"),
            "pyproject.toml": '[tool.gemlint]\nignore = ["GEM602"]\nseverity = { GEM101 = "error" }\n',
        },
    )
    await start(client, root)
    uri = open_file(client, root / "app.py", "python")
    published = await findings(client, uri, lambda codes: codes == ["GEM101"])
    assert published[0].range.start.line == 9 and published[0].severity == lsp.DiagnosticSeverity.Error
