"""The fixes of GEM101-GEM103: what they write, and that the result is clean and parses."""

from __future__ import annotations

from gemlint.config import default_config
from gemlint.runner import FixMode, run


def fixed(tmp_path, source: str, *, unsafe: bool = True, name: str = "svc.py", newline: str = "\n") -> str:
    path = tmp_path / name
    path.write_bytes(source.replace("\n", newline).encode())
    result = run([path], default_config(tmp_path), FixMode(apply=True, unsafe=unsafe), jobs=1)
    assert [d for d in result.diagnostics if d.code.startswith("GEM1")] == []
    return path.read_bytes().decode()


HANDLER = """\
from fastapi import FastAPI
from transformers import AutoModel

app = FastAPI()
model = AutoModel.from_pretrained("bert-base-uncased")


@app.post("/embed")
def embed(batch: dict):
    return model(**batch).last_hidden_state.tolist()
"""


def test_gem101_adds_import_torch_and_the_innermost_decorator(tmp_path):
    after = fixed(tmp_path, HANDLER)
    assert after.startswith("import torch\nfrom fastapi import FastAPI\n")
    assert '@app.post("/embed")\n@torch.inference_mode()\ndef embed(' in after


def test_gem101_uses_the_module_alias_or_imported_guard(tmp_path):
    after = fixed(tmp_path, "import torch as T\n" + HANDLER)
    assert "@T.inference_mode()\ndef embed(" in after and after.count("import torch") == 1
    after = fixed(tmp_path, "from torch import inference_mode as im\n" + HANDLER)
    assert "@im()\ndef embed(" in after and "import torch\n" not in after


def test_gem101_wraps_the_statement_in_an_async_def(tmp_path):
    source = HANDLER.replace("def embed", "async def embed").replace("    return model", "    out = model").rstrip("\n")
    source = "import torch\n" + source + "  # why\n    return out\n"
    after = fixed(tmp_path, source)
    assert "    with torch.no_grad():\n        out = model(**batch).last_hidden_state.tolist()  # why\n    return out\n" in after


def test_gem101_offers_no_fix_where_a_decorator_would_not_help(tmp_path):
    source = "import torch\n" + HANDLER.replace(
        "    return model(**batch)", "    with torch.enable_grad():\n        return model(**batch)"
    )
    path = tmp_path / "svc.py"
    path.write_text(source)
    result = run([path], default_config(tmp_path), FixMode(apply=True, unsafe=True), jobs=1)
    assert [(d.code, d.fix) for d in result.diagnostics] == [("GEM101", None)]
    assert path.read_text() == source


def test_gem101_offers_no_fix_in_a_function_that_runs_a_model_which_differentiates(tmp_path):
    """A renderer whose forward calls `torch.autograd.grad` runs beside an ordinary model: a guard on the function
    would break the renderer, so the ordinary model's finding comes without one."""
    import shutil
    from pathlib import Path

    shutil.copytree(Path(__file__).parent / "fixtures" / "GEM1xx-implicit-surfaces", tmp_path / "project")
    path = tmp_path / "project" / "evaluate.py"
    source = path.read_text()
    result = run([path], default_config(tmp_path / "project"), FixMode(apply=True, unsafe=True), jobs=1)
    assert [(d.code, d.line, d.fix) for d in result.diagnostics] == [("GEM101", 26, None)]
    assert path.read_text() == source


def test_gem102_inserts_eval_after_the_binding_with_indentation_and_newline(tmp_path):
    source = """\
import torch
from ray import serve
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)

class Base:
    def __init__(self):
        self.net = Net()  # built once
        self.net.load_state_dict(torch.load("w.pt"))

@serve.deployment
class Service(Base):
    @torch.no_grad()
    def predict(self, x):
        return self.net(x)
"""
    after = fixed(tmp_path, source, newline="\r\n")
    assert "        self.net = Net()  # built once\r\n        self.net.eval()\r\n        self.net.load_state_dict" in after


def test_gem103_fix_is_safe(tmp_path):
    source = HANDLER.replace("    return model(**batch)", "    model.train()\n    return model(**batch)")
    source = "import torch\n" + source.replace('@app.post("/embed")\n', '@app.post("/embed")\n@torch.no_grad()\n')
    after = fixed(tmp_path, source, unsafe=False)
    assert "    model.eval()\n    return model(**batch)" in after
