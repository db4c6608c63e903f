"""Jupyter notebooks: code cells linted as one module, findings placed in their cells, `# noqa` per cell,
IPython syntax read as Python's `pass`, broken cells and broken files, fixes written back into the cells
they change (outputs, metadata and layout kept), and the notebook's place in every output format."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gemlint.api import lint_source
from gemlint.cli import main
from gemlint.bad_input import INTERNAL_ERROR_PREFIX
from gemlint.frontends.notebook import CellsChanged, read_notebook
from gemlint.languages import Language
from gemlint.registry import all_rules, rule_by_code
from gemlint.rule import PythonRule
from gemlint.server.session import Session
from sarif_validation import github_errors, schema_errors

IMPORTS = ["%matplotlib inline\n", "import torch\n", "from transformers import AutoModelForSequenceClassification, AutoTokenizer"]
LOAD = [
    'tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")\n',
    'model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased")',
]
# Forward passes in a loop of a cell: each output (and the graph behind it) lives on in the notebook's globals.
SCORE = ['for batch in [tokenizer([review], return_tensors="pt") for review in ("a fine film", "a dull one")]:\n', "    logits = model(**batch).logits"]
# One forward on one example, run once by hand: not reported in a notebook.
ONCE = ['batch = tokenizer(["a fine film"], return_tensors="pt")\n', "logits = model(**batch).logits"]


def code(source, outputs=(), count=1) -> dict:
    return {
        "cell_type": "code",
        "execution_count": count,
        "id": f"cell-{count}",
        "metadata": {"tags": ["explore"]},
        "outputs": list(outputs) or [{"name": "stdout", "output_type": "stream", "text": ["ok – done\n"]}],
        "source": source,
    }


def markdown(text: str) -> dict:
    return {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": [text]}


def notebook(*cells: dict, language: str = "python", indent: int = 1, escaped: bool = False) -> str:
    """A notebook as Jupyter writes it (nbformat 4: sorted keys, one-space indent, no ASCII escapes unless
    ``escaped``, a final newline)."""
    data = {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"},
            "language_info": {"name": language, "version": "3.11.7"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, sort_keys=True, indent=indent, ensure_ascii=escaped) + "\n"


def explore(*cells: dict, escaped: bool = False) -> str:
    """The exploring notebook: imports, a model and its tokenizer, notes, then ``cells``."""
    return notebook(
        markdown("# Sentiment of reviews\n"), code(IMPORTS, count=1), code(LOAD, count=2), markdown("Score one review"), *cells, escaped=escaped
    )


def invoke(*args: str):
    return CliRunner().invoke(main, ["--no-cache", "--isolated", *args], catch_exceptions=False)


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def forward_column(line: str) -> int:
    return line.index("model(") + 1


# -- findings and their positions -------------------------------------------------------------------


def test_findings_are_placed_in_their_cell(folder):
    write(folder, "explore.ipynb", explore(code(SCORE, count=3)))
    result = invoke("explore.ipynb")
    assert result.exit_code == 1
    # The fifth cell (markdown cells count), its second line.
    assert result.output.startswith(f"explore.ipynb:cell 5:2:{forward_column(SCORE[1])}: GEM101 [forward-without-no-grad] ")
    assert "Found 1 problem." in result.output


def test_a_single_forward_run_once_in_a_cell_is_not_reported(folder):
    write(folder, "explore.ipynb", explore(code(ONCE, count=3)))
    assert invoke("explore.ipynb").output == "All checks passed!\n"
    # The same forward over several examples is.
    write(folder, "explore.ipynb", explore(code(SCORE, count=3)))
    (finding,) = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert (finding["code"], finding["cell"], finding["line"]) == ("GEM101", 5, 2)


@pytest.mark.parametrize(
    ("loop", "reported"),
    [
        ("for review in reviews[:1]:\n", False),
        ("for i, review in enumerate(tqdm(reviews[0:1])):\n", False),
        ("for _ in range(1):\n", False),
        ("for review in reviews[:2]:\n", True),
        ("for review in reviews[1:2]:\n", True),
        ("for review in tqdm(reviews):\n", True),
    ],
)
def test_a_loop_written_to_run_once_runs_its_forward_once(folder, loop, reported):
    cell = ["from tqdm import tqdm\n", "reviews = open('reviews.txt').read().splitlines()\n", loop,
            "    logits = model(**tokenizer([reviews[0]], return_tensors='pt')).logits"]
    write(folder, "explore.ipynb", explore(code(cell, count=3)))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == ([("GEM101", 5, 4)] if reported else [])


def test_a_class_of_the_notebook_without_a_mode_needs_no_eval(folder):
    # The project index, which reads a class's layers for other modules, does not hold a notebook's classes.
    plain = ["class Net(torch.nn.Module):\n", "    def __init__(self):\n", "        super().__init__()\n",
             "        self.conv = torch.nn.Conv2d(3, 6, 5)\n", "        self.fc = torch.nn.Linear(6, 10)\n", "\n",
             "    def forward(self, x):\n", "        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))\n"]
    dropped = ["class Dropped(torch.nn.Module):\n", "    def __init__(self):\n", "        super().__init__()\n",
               "        self.fc = torch.nn.Linear(6, 10)\n", "        self.drop = torch.nn.Dropout(0.5)\n", "\n",
               "    def forward(self, x):\n", "        return self.drop(self.fc(x))\n"]
    run = ["net = Net()\n", "other = Dropped()\n", "net.load_state_dict(torch.load('net.pt'))\n",
           "other.load_state_dict(torch.load('other.pt'))\n", "with torch.no_grad():\n",
           "    for images in torch.load('batches.pt'):\n", "        print(net(images), other(images.mean((2, 3))))"]
    write(folder, "explore.ipynb", explore(code(plain, count=3), code(dropped, count=4), code(run, count=5)))
    findings = json.loads(invoke("explore.ipynb", "--format", "json", "--select", "GEM102").output)
    assert [(f["code"], f["cell"]) for f in findings] == [("GEM102", 7)]
    assert "`Dropped(...)`" in findings[0]["message"]


VOCODER = """import torch
from torch import nn


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv1d(80, 1, 3, padding=1)

    def sample(self, mels):
        with torch.no_grad():
            return self.net(mels)

    def forward(self, mels):
        if mels.dim() != 3:
            raise ValueError("expected a batch of mel spectrograms")
        return self.sample(mels)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv1d(80, 1, 3, padding=1)

    def forward(self, mels):
        return self.net(mels)
"""


def test_a_class_the_notebook_imports_from_the_project_is_read_from_the_index(folder):
    # The notebook's cells are no module of the index, but what they import is: `Sampler.forward` runs its network
    # through a method of its own, under `torch.no_grad()`.
    write(folder, "vocoder/__init__.py", "from .diffusion import Denoiser, Sampler\n")
    write(folder, "vocoder/diffusion.py", VOCODER)
    cells = [
        code(["import sys\n", "sys.path.insert(0, '..')\n", "import torch\n", "from vocoder import Denoiser, Sampler"], count=1),
        code(["sampler = Sampler()\n", "denoiser = Denoiser()\n", "sampler.load_state_dict(torch.load('sampler.pt'))\n",
              "denoiser.load_state_dict(torch.load('denoiser.pt'))"], count=2),
        code(["for mels in torch.load('mels.pt'):\n", "    waves = sampler(mels)\n", "    clean = denoiser(mels)"], count=3),
    ]
    write(folder, "notebooks/listen.ipynb", notebook(*cells))
    findings = json.loads(CliRunner().invoke(main, ["--no-cache", "--format", "json", "--select", "GEM101", "."], catch_exceptions=False).output)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("GEM101", 3, 3)]
    assert "`denoiser(...)`" in findings[0]["message"]


def test_show_source_shows_the_cell_line(folder):
    write(folder, "explore.ipynb", explore(code(SCORE, count=3)))
    lines = invoke("explore.ipynb", "--show-source").output.splitlines()
    assert lines[1] == f"    2 | {SCORE[1]}"
    assert lines[2].index("^") - (lines[1].index("| ") + 2) == forward_column(SCORE[1]) - 1


def test_a_model_built_in_one_cell_and_run_in_another_is_one_program(folder):
    # Guarded in the cell that runs it: nothing to report, although another cell built the model.
    guarded = ['batch = tokenizer(["a fine film"], return_tensors="pt")\n', "with torch.inference_mode():\n", "    logits = model(**batch).logits"]
    write(folder, "explore.ipynb", explore(code(guarded, count=3)))
    assert invoke("explore.ipynb").output == "All checks passed!\n"


def test_json_counts_lines_in_the_cell(folder):
    write(folder, "explore.ipynb", explore(code(SCORE, count=3)))
    (finding,) = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert (finding["code"], finding["cell"], finding["line"], finding["end_line"]) == ("GEM101", 5, 2, 2)
    assert finding["column"] == forward_column(SCORE[1])
    assert finding["end_column"] == SCORE[1].index(".logits") + 1


def test_json_counts_a_fixs_edits_in_the_cell_too(folder):
    write(folder, "explore.ipynb", explore(code([SCORE[0], SCORE[1] + "\n", "\n", "model.train()"], count=3)))
    (finding,) = json.loads(invoke("explore.ipynb", "--format", "json", "--select", "GEM103").output)
    assert (finding["cell"], finding["line"]) == (5, 4)
    assert [(edit["cell"], edit["line"], edit["end_line"]) for edit in finding["fix"]["edits"]] == [(5, 4, 4)]


# A helper cell that scores one text, through a second helper: how often it runs depends on the cells that call it.
HELPERS = [
    "def logits_of(scorer, batch):\n",
    "    return scorer(**batch).logits\n",
    "\n",
    "def score(scorer, text):\n",
    '    return logits_of(scorer, tokenizer([text], return_tensors="pt"))\n',
]


@pytest.mark.parametrize(
    ("calls", "reported"),
    [
        (['first = score(model, "a fine film")'], False),  # one example, once, by hand
        (['first = score(model, "a fine film")\n', 'second = score(model, "a dull one")'], True),
        (['scores = [score(model, review) for review in ("a fine film", "a dull one")]'], True),
        (['import gradio as gr\n', "demo = gr.Interface(fn=lambda text: score(model, text), inputs='text', outputs='text')"], True),
    ],
    ids=["once", "twice", "in a comprehension", "handed to an app"],
)
def test_a_helpers_forward_is_reported_where_the_cells_run_it_more_than_once(folder, calls, reported):
    write(folder, "explore.ipynb", explore(code(HELPERS, count=3), code(calls, count=4)))
    found = [(f["code"], f["cell"], f["line"]) for f in json.loads(invoke("explore.ipynb", "--format", "json", "--select", "GEM101").output)]
    assert found == ([("GEM101", 5, 2)] if reported else [])


def test_a_train_switch_no_later_line_reads_is_reported_in_cells_only(folder):
    # A script runs top to bottom: a model switched last and never read again predicts nothing in that mode. A
    # notebook's cells (and a percent-format script's) are run in any order: the next cell run may read it.
    lines = [*IMPORTS[1:2], "\n", *LOAD, "\n", SCORE[0], SCORE[1] + "\n", "model.train()\n"]
    write(folder, "explore.ipynb", explore(code(lines, count=3)))
    write(folder, "cells.py", "# %%\n" + "".join(lines))
    write(folder, "spyder_cells.py", '"""Scores a review."""\n#%% load\n' + "".join(lines))  # VS Code and Spyder spell it so
    write(folder, "script.py", "".join(lines))
    found = {(f["path"], f["code"]) for f in json.loads(invoke(".", "--format", "json", "--select", "GEM101,GEM103").output)}
    assert found == {
        ("explore.ipynb", "GEM101"), ("explore.ipynb", "GEM103"), ("cells.py", "GEM101"), ("cells.py", "GEM103"),
        ("spyder_cells.py", "GEM101"), ("spyder_cells.py", "GEM103"), ("script.py", "GEM101"),
    }


# A notebook that fine-tunes: the encoder's forwards make the features the trainer learns from.
FEATURES = [
    "def features(encoder, text):\n",
    '    return encoder(**tokenizer([text], return_tensors="pt")).logits\n',
    "\n",
    'train_set = [{"features": features(model, text), "label": 1} for text in ("a fine film", "a great one")]',
]
TRAIN = [
    "from transformers import Trainer, TrainingArguments\n",
    'trainer = Trainer(model=model, args=TrainingArguments(output_dir="tuned"), train_dataset=train_set)\n',
    "trainer.train()",
]


@pytest.mark.parametrize("trains", [False, True], ids=["scores", "fine-tunes"])
def test_a_notebook_whose_cells_run_a_trainer_is_training_code(folder, trains):
    cells = [code(FEATURES, count=3)] + ([code(TRAIN, count=4)] if trains else [])
    write(folder, "explore.ipynb", explore(*cells))
    found = [(f["code"], f["cell"]) for f in json.loads(invoke("explore.ipynb", "--format", "json", "--select", "GEM101").output)]
    assert found == ([] if trains else [("GEM101", 5)])


# Preprocessing as a module of the notebook's own: its forward runs the layer it holds under a guard.
TRANSFORM = [
    "class Projected(torch.nn.Module):\n",
    "    def __init__(self, width):\n",
    "        super().__init__()\n",
    "        self.project = torch.nn.Linear(768, width)\n",
    "\n",
    "    def forward(self, features):\n",
    "        with torch.no_grad():\n",
    "            features = self.project(features)\n",
    "        return features\n",
    "\n",
    "project = Projected(64)\n",
    "batches = [project(torch.rand(8, 768)) for _ in range(4)]",
]


@pytest.mark.parametrize("guarded", [False, True], ids=["unguarded", "guarded"])
def test_a_notebook_modules_forward_that_guards_its_submodules_builds_no_graph(folder, guarded):
    lines = TRANSFORM if guarded else [line.replace("with torch.no_grad():", "if True:") for line in TRANSFORM]
    write(folder, "explore.ipynb", explore(code(lines, count=3)))
    found = [(f["code"], f["cell"]) for f in json.loads(invoke("explore.ipynb", "--format", "json", "--select", "GEM101").output)]
    assert found == ([] if guarded else [("GEM101", 5)])


@pytest.mark.parametrize("escaped", [False, True], ids=["UTF-8", "ASCII escapes"])
def test_sarif_places_findings_in_the_notebooks_json_text(folder, escaped):
    # JSON escapes before the finding (a quote, an accented letter, an emoji: a surrogate pair when escaped), on its
    # line: columns count the file's characters.
    cells = ['review = "a \\"fine\\" film – très bien 😀"\n', 'for batch in [tokenizer([review], return_tensors="pt")] * 2:\n', '    note = "😀"; logits = model(**batch).logits']
    text = explore(code(cells, count=3), escaped=escaped)
    write(folder, "explore.ipynb", text)
    (folder / ".git").mkdir()  # the repository root, which SARIF paths are relative to
    log = json.loads(invoke("explore.ipynb", "--format", "sarif").output)
    assert not schema_errors(log) + github_errors(log)
    (result,) = log["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert unquote(physical["artifactLocation"]["uri"]) == "explore.ipynb"
    region = physical["region"]
    file_line = text.splitlines()[region["startLine"] - 1]
    assert file_line[region["startColumn"] - 1 : region["endColumn"] - 1] == "model(**batch)"
    assert result["properties"]["notebookCell"] == {"cell": 5, "startLine": 3, "startColumn": forward_column(cells[2]), "endLine": 3, "endColumn": cells[2].index(".logits") + 1}


def test_sarif_of_a_fixable_notebook_finding_has_no_fixes(folder):
    write(folder, "explore.ipynb", explore(code(["model.train()\n", *SCORE], count=3)))
    (folder / ".git").mkdir()
    log = json.loads(invoke("explore.ipynb", "--format", "sarif", "--select", "GEM103").output)
    assert not schema_errors(log) + github_errors(log)
    (result,) = log["runs"][0]["results"]
    assert "fixes" not in result and result["properties"]["notebookCell"]["cell"] == 5


def test_github_annotations_point_into_the_json_text(folder):
    text = explore(code(SCORE, count=3))
    write(folder, "explore.ipynb", text)
    (folder / ".git").mkdir()
    (line,) = invoke("explore.ipynb", "--format", "github").output.splitlines()
    properties = dict(item.split("=", 1) for item in line.split("::")[1].split(" ", 1)[1].split(","))
    file_line = text.splitlines()[int(properties["line"]) - 1]
    assert file_line[int(properties["col"]) - 1 :].startswith("model(**batch)")
    assert line.split("::", 2)[2].startswith("GEM101 (cell 5, line 2) ")


def test_gitlab_rdjson_and_junit_place_notebook_findings_as_sarif_does(folder):
    # GitLab and reviewdog show a notebook as its JSON text: lines (and columns) of that text; JUnit's text
    # names the cell as the text report does. A fix of the cell's code is not a change to suggest there.
    text = explore(code(["model.train()\n", *SCORE], count=3))
    write(folder, "explore.ipynb", text)
    (folder / ".git").mkdir()
    lines = text.splitlines()
    gitlab = json.loads(invoke("explore.ipynb", "--format", "gitlab", "--select", "GEM101").output)
    assert [lines[issue["location"]["lines"]["begin"] - 1].lstrip().startswith('"') for issue in gitlab] == [True]
    assert "model(**batch)" in lines[gitlab[0]["location"]["lines"]["begin"] - 1]
    rdjson = json.loads(invoke("explore.ipynb", "--format", "rdjson", "--select", "GEM101,GEM103").output)
    for diagnostic in rdjson["diagnostics"]:
        start = diagnostic["location"]["range"]["start"]
        assert lines[start["line"] - 1][start["column"] - 1 :].startswith(("model", "model.train"))
        assert "suggestions" not in diagnostic
    junit = invoke("explore.ipynb", "--format", "junit", "--select", "GEM101").output
    assert "explore.ipynb:cell 5:3:" in junit


def test_the_cache_keeps_cell_positions(folder):
    write(folder, "explore.ipynb", explore(code(SCORE, count=3)))
    args = ["--isolated", "--cache-dir", str(folder / "cache"), "explore.ipynb", "--format", "json"]
    first = CliRunner().invoke(main, args, catch_exceptions=False).output
    assert list((folder / "cache").rglob("*.json"))
    assert CliRunner().invoke(main, args, catch_exceptions=False).output == first


def test_fingerprints_follow_the_code_not_the_outputs(folder):
    write(folder, "explore.ipynb", explore(code(SCORE, count=3)))
    (folder / ".git").mkdir()
    before = json.loads(invoke("explore.ipynb", "--format", "json").output)
    rerun = [{"data": {"text/plain": ["tensor([[0.1, 0.9]])"]}, "execution_count": 7, "metadata": {}, "output_type": "execute_result"}]
    write(folder, "explore.ipynb", explore(code(SCORE, outputs=rerun, count=7)))
    after = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert [f["fingerprint"] for f in after] == [f["fingerprint"] for f in before]


# -- suppression ---------------------------------------------------------------------------------


def test_noqa_on_a_cell_line_suppresses_that_line_only(folder):
    cells = [SCORE[0], SCORE[1] + "  # noqa: GEM101\n", "    probabilities = model(**batch).logits.softmax(-1)"]
    write(folder, "explore.ipynb", explore(code(cells, count=3)))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("GEM101", 5, 3)]


def test_a_file_level_noqa_in_any_cell_silences_the_notebook(folder):
    write(folder, "explore.ipynb", explore(code(SCORE, count=3), code(["# gemlint: noqa\n"], count=4)))
    assert invoke("explore.ipynb").output == "All checks passed!\n"


# -- IPython syntax --------------------------------------------------------------------------------


def test_magics_and_shell_escapes_are_read_as_python(folder):
    cells = [
        code(["!pip install -q transformers\n", "%load_ext autoreload\n", "%autoreload 2\n", "files = !ls data/\n", "AutoTokenizer?\n", "model.generate??"], count=3),
        code(["%%time\n", *SCORE, "\n", "for _ in range(3):\n", "    %timeit model(**batch)\n", "!nvidia-smi \\\n", "    --query-gpu=memory.used"], count=4),
        code(["%%bash\n", "if [ -d data ]; then echo 'model( ok'; fi\n"], count=5),
        code(["%%writefile helper.py\n", "def broken(:\n"], count=6),
        # Python whose lines look like IPython: inside a string and inside brackets, they stay Python.
        code(['help_text = """\n', "!not a shell escape\n", "%not a magic\n", '"""\n', "total = (1\n", "         % 2)"], count=7),
    ]
    write(folder, "explore.ipynb", explore(*cells))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    # No GEM000: every cell parsed. The forward under %%time is found on its own line (the magic line counts).
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("GEM101", 6, 3)]


def test_a_cell_that_percent_load_filled_with_another_files_text_is_not_python(folder):
    # `%load requirements.txt` replaced the cell with that file's lines; `%load helpers.py` with Python.
    cells = [
        code(["# %load requirements.txt\n", "torch>=2.1\n", "transformers==4.40.0"], count=3),
        code(["# %load helpers.py\n", "def half(x:\n", "    return x / 2"], count=4),
    ]
    write(folder, "explore.ipynb", explore(*cells))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert [(f["code"], f["cell"]) for f in findings] == [("GEM000", 6)]


def test_cells_ipython_runs_as_written_are_read_as_ipython_reads_them(folder):
    cells = [
        code(["#@title Play a sound { display-mode: \"form\" }\n", "%%html\n", "<audio controls>"], count=3),  # Colab's form
        code(["cd data/"], count=4),  # automagic: a one-line cell calls a line magic without `%`
        code(["pip install -q transformers"], count=5),
        code([" for batch in batches:\n", "     logits = model(**batch).logits"], count=6),  # dedented
        code(["huggingface-cli login"], count=7),  # no magic: IPython fails on it too
    ]
    write(folder, "explore.ipynb", explore(*cells))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    indented = cells[3]["source"][1]
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("GEM101", 8, 2), ("GEM000", 9, 1)]
    assert findings[0]["column"] == forward_column(indented)  # the column in the cell as written


def test_a_cell_whose_first_line_alone_is_indented_is_read_as_ipython_reads_it(folder):
    # IPython takes the first line's stray space off the lines that start with it: the cell runs, and is linted.
    cell = [" reviews = ('a fine film', 'a dull one')\n", "for review in reviews:\n", "    batch = tokenizer([review], return_tensors='pt')\n", "    logits = model(**batch).logits"]
    path = write(folder, "explore.ipynb", explore(code(cell, count=3)))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in findings] == [("GEM101", 5, 4, forward_column(cell[3]))]
    # A fix there would have to guess which of its lines to indent again: the notebook is left as it is.
    cell[0] = " model.train()\n"
    write(folder, "explore.ipynb", explore(code(cell, count=3)))
    before = path.read_text(encoding="utf-8")
    result = invoke("explore.ipynb", "--fix", "--select", "GEM103")
    assert "GEM103" in result.output and "dedents only in part" in result.output
    assert path.read_text(encoding="utf-8") == before


def test_ipython_lines_become_pass_statements_line_for_line():
    text = notebook(code(["for i in range(2):\n", "    %time step(i)\n", "x = !ls\n", "print(x)"]))
    (cell,) = read_notebook(text).cells
    assert cell.python.splitlines() == ["for i in range(2):", "    pass  # %time step(i)", "pass  # x = !ls", "print(x)"]


@pytest.mark.parametrize(
    "line",
    ["files = !ls data/", "a, b = %time f()", "env['TOKEN'], = !openssl rand -hex 32", "self.out: list = !ls", "rows[0] =!wc -l x"],
)
def test_any_assignment_of_an_ipython_escape_becomes_a_pass_statement(line):
    (cell,) = read_notebook(notebook(code([line + "\n", "print(1)"]))).cells
    assert cell.python.splitlines() == [f"pass  # {line}", "print(1)"]


@pytest.mark.parametrize(
    "line",
    [
        "same = a == b",
        "differs = a != b",
        "ratio = '%d' % n",
        "ok = x >= 2",
        'log.info("  Num examples = %d", count)',
        "print(f'rate = {rate}', end='%')",
        "total += !wc -l",
        "x = 1  # y = !ls",
    ],
)
def test_a_comparison_or_a_formatted_string_is_python_not_an_escape(line):
    (cell,) = read_notebook(notebook(code([line]))).cells
    assert cell.python == line


def test_a_cell_that_does_not_parse_is_reported_and_the_others_are_checked(folder):
    write(folder, "explore.ipynb", explore(code(["def half(x:\n", "    return x / 2"], count=3), code(SCORE, count=4)))
    findings = json.loads(invoke("explore.ipynb", "--format", "json").output)
    assert [(f["code"], f["cell"], f["line"]) for f in findings] == [("GEM000", 5, 1), ("GEM101", 6, 2)]
    assert "the notebook's other cells were checked" in findings[0]["message"]


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"cells": [\n  {"cell_type": "code",}\n]}\n', "not valid JSON"),
        ('{"worksheets": []}\n', "no list of cells"),
        (json.dumps({"cells": [], "nbformat": 3, "metadata": {}}), "format 3"),
        (json.dumps({"cells": [{"cell_type": "code", "source": 7}], "nbformat": 4, "metadata": {}}), "cell 1"),
    ],
    ids=["not JSON", "no cells", "nbformat 3", "source not text"],
)
def test_a_file_that_is_not_a_notebook_is_one_gem000(folder, text, message):
    write(folder, "broken.ipynb", text)
    (finding,) = json.loads(invoke("broken.ipynb", "--format", "json").output)
    assert finding["code"] == "GEM000" and message in finding["message"] and finding["cell"] is None
    if message == "not valid JSON":
        assert (finding["line"], finding["column"]) == (2, 24)  # where the JSON breaks, in the file


@pytest.mark.parametrize("text", ["", "\n", "  \n\n"], ids=["0 bytes", "a newline", "blank lines"])
def test_an_empty_file_is_an_empty_notebook(folder, text):
    # A placeholder committed before anything was written in it: editors open it as a notebook with no cells.
    write(folder, "later.ipynb", text)
    assert invoke("later.ipynb", "--format", "json").output.strip() == "[]"


def test_a_notebook_in_another_language_has_nothing_to_check(folder):
    write(folder, "analysis.ipynb", notebook(code(["library(ggplot2)\n", "model <- lm(y ~ x)"]), language="R"))
    assert invoke("analysis.ipynb").output == "All checks passed!\n"


# -- fixes -----------------------------------------------------------------------------------------


def _without_sources(text: str) -> dict:
    data = json.loads(text)
    for cell in data["cells"]:
        cell.pop("source")
    return data


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_fix_rewrites_only_the_fixed_cell_and_keeps_the_rest_of_the_file(folder, indent):
    outputs = [{"data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure size 640x480>"]}, "metadata": {"needs_background": "light"}, "output_type": "display_data"}]
    text = notebook(
        markdown("# Sentiment of reviews\n"),
        code(IMPORTS, outputs=outputs, count=1),
        code(LOAD, count=2),
        code(["model.train()\n", "!nvidia-smi\n", *SCORE], count=3),
        indent=indent,
    )
    path = write(folder, "explore.ipynb", text)
    result = invoke("explore.ipynb", "--fix", "--select", "GEM103")
    assert "Fixed 1 problem" in result.output
    fixed = path.read_text(encoding="utf-8")
    assert _without_sources(fixed) == _without_sources(text)  # outputs, counts, ids, metadata untouched
    before, after = json.loads(text)["cells"], json.loads(fixed)["cells"]
    assert [cell["source"] for cell in after[:3]] == [cell["source"] for cell in before[:3]]
    assert after[3]["source"] == ["model.eval()\n", "!nvidia-smi\n", *SCORE]  # the shell escape kept as written
    # Byte for byte, only the changed line differs: the layout (indentation, key order, final newline) is the file's.
    assert fixed == text.replace('"model.train()\\n"', '"model.eval()\\n"')
    assert invoke("explore.ipynb", "--fix", "--select", "GEM103").output == "All checks passed!\n"  # idempotent


def test_fix_in_a_cell_indented_as_a_whole_keeps_its_indentation(folder):
    cell = ["  model.train()\n", "\n", "  %time x = 1\n", "  " + SCORE[0], "  " + SCORE[1]]
    path = write(folder, "explore.ipynb", explore(code(cell, count=3)))
    invoke("explore.ipynb", "--fix", "--select", "GEM103")
    assert json.loads(path.read_text(encoding="utf-8"))["cells"][4]["source"] == ["  model.eval()\n", *cell[1:]]


def test_fix_of_a_source_written_as_one_string_stays_one_string(folder):
    text = explore(code("model.train()\n" + "".join(SCORE), count=3))
    path = write(folder, "explore.ipynb", text)
    invoke("explore.ipynb", "--fix", "--select", "GEM103")
    assert json.loads(path.read_text(encoding="utf-8"))["cells"][4]["source"] == "model.eval()\n" + "".join(SCORE)


def test_diff_shows_the_change_to_the_notebook_and_writes_nothing(folder):
    text = explore(code(["model.train()\n", *SCORE], count=3))
    path = write(folder, "explore.ipynb", text)
    result = invoke("explore.ipynb", "--diff", "--select", "GEM103")
    assert '-    "model.train()\\n",' in result.output and '+    "model.eval()\\n",' in result.output
    assert path.read_text(encoding="utf-8") == text


def test_fix_through_standard_input(folder):
    text = explore(code(["model.train()\n", *SCORE], count=3))
    result = CliRunner().invoke(main, ["--isolated", "-", "--stdin-filename", "explore.ipynb", "--fix", "--select", "GEM103"], input=text)
    assert result.stdout == text.replace('"model.train()\\n"', '"model.eval()\\n"')


def test_a_line_inserted_at_a_cells_end_stays_in_that_cell():
    text = notebook(code(["model = build()"], count=1), code(["predict(model)"], count=2))
    nb = read_notebook(text)
    lines = nb.code.splitlines(keepends=True)
    # After the first cell's last line (where the boundary line starts), and before the second cell's first line.
    edited = "".join(lines[:1]) + "model.eval()\n" + lines[1] + "@torch.inference_mode()\n" + "".join(lines[2:])
    cells = json.loads(nb.rewritten(edited))["cells"]
    assert [cell["source"] for cell in cells] == [["model = build()\n", "model.eval()"], ["@torch.inference_mode()\n", "predict(model)"]]


def test_an_edit_across_cells_or_of_an_ipython_line_is_refused():
    nb = read_notebook(notebook(code(["x = 1"], count=1), code(["%time y = 2"], count=2)))
    with pytest.raises(CellsChanged, match="across notebook cells"):
        nb.rewritten(nb.code.replace(nb.code.splitlines(keepends=True)[1], ""))
    with pytest.raises(CellsChanged, match="IPython line of cell 2"):
        nb.rewritten(nb.code.replace("pass  # %time y = 2", "y = 2"))


# -- which files and which rules -------------------------------------------------------------------


def test_notebooks_are_discovered_and_checkpoints_are_not(folder):
    body = explore(code(SCORE, count=3))
    write(folder, "notebooks/explore.ipynb", body)
    write(folder, "notebooks/.ipynb_checkpoints/explore-checkpoint.ipynb", body)
    findings = json.loads(invoke(".", "--format", "json").output)
    assert [f["path"] for f in findings] == ["notebooks/explore.ipynb"]


PYTHON_RULES = [rule for rule in all_rules() if issubclass(rule, PythonRule) and rule.examples_language() is Language.PYTHON]


@pytest.mark.parametrize("rule", PYTHON_RULES, ids=lambda r: r.code)
def test_a_rules_bad_example_in_a_notebook_cell_is_reported_exactly_when_the_rule_checks_notebooks(rule):
    cells = [code(rule.bad.splitlines(keepends=True), count=1)]
    found = lint_source(notebook(*cells), "example.ipynb", select=(rule.code,))
    assert bool(found) is rule.notebooks, found
    assert all(d.code == rule.code and d.cell is not None for d in found)


def test_a_leak_in_a_function_a_cell_calls_is_reported_and_a_buffer_kept_for_later_cells_is_not():
    cells = [
        code(["from cuda import cudart\n", "\n", "err, workspace = cudart.cudaMalloc(1 << 20)  # used by the cells below"], count=1),
        code(["def scratch(n):\n", "    err, buffer = cudart.cudaMalloc(n)\n", "    return err"], count=2),
    ]
    found = lint_source(notebook(*cells), "kernels.ipynb", select=("GEM3",))
    assert [(d.code, d.cell.cell, d.cell.line) for d in found] == [("GEM301", 2, 2)]


def test_every_python_rule_says_whether_it_checks_notebooks_and_why():
    for rule in all_rules():
        if Language.PYTHON in rule.languages and rule is not rule_by_code("GEM000"):
            assert isinstance(rule.notebooks, bool) and len(rule.notebooks_reason) > 40, rule.code


def test_the_language_server_leaves_notebooks_alone(tmp_path):
    path = write(tmp_path, "explore.ipynb", explore(code(SCORE, count=3)))
    session = Session(cwd=tmp_path)
    assert session.lint(path, path.read_text(encoding="utf-8")).diagnostics == []


# -- any input -------------------------------------------------------------------------------------

LINES = st.one_of(
    st.sampled_from(
        [*IMPORTS, *LOAD, *SCORE, "%%time\n", "%%bash\n", "!ls \\\n", "  -la\n", "x = !ls\n", "obj?\n", "def f(:\n", '"""\n',
         "    return model(x)\n", "with torch.no_grad():\n", "model.train()\n", "# gemlint: noqa\n", "  # noqa\n", "\n", ""]
    ),
    st.text(max_size=12),
)
SOURCES = st.one_of(st.lists(LINES, max_size=6), st.lists(LINES, max_size=6).map("".join))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SOURCES, min_size=1, max_size=4), st.integers(min_value=0, max_value=3))
def test_any_notebook_is_read_back_unchanged_and_linted_without_error(sources, indent):
    text = notebook(*(code(source, count=n) for n, source in enumerate(sources, 1)), indent=indent or None)
    nb = read_notebook(text)
    assert nb.rewritten(nb.code) == text
    cells = {cell.number: cell for cell in nb.cells}
    for diagnostic in lint_source(text, "explore.ipynb"):
        assert INTERNAL_ERROR_PREFIX not in diagnostic.message, diagnostic
        span = diagnostic.cell
        assert span is not None and 1 <= span.line <= span.end_line <= len(cells[span.cell].lines), diagnostic
        assert 1 <= span.file_line <= len(text.splitlines()), diagnostic


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                                                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["cells", "source", "cell_type", "nbformat", "metadata", "code"]), inner, max_size=4)).map(json.dumps)))
def test_any_text_named_ipynb_is_findings_or_one_gem000(text):
    for diagnostic in lint_source(text, "explore.ipynb"):
        assert INTERNAL_ERROR_PREFIX not in diagnostic.message, diagnostic
        assert diagnostic.line >= 1 and diagnostic.column >= 1


WEIGHTED_LOSS = [
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\nfrom torchvision.models import resnet18\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
    "class WeightedMSE(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.weights = torch.tensor([0.1, 0.2, 0.7]).to(device)\n\n"
    "    def forward(self, prediction, target):\n"
    '        return (F.mse_loss(prediction, target, reduction="none") * self.weights).mean()\n',
    "def validate(model, loader, criterion):\n    model.eval()\n    total = 0.0\n    with torch.no_grad():\n"
    "        for images, targets in loader:\n            total += criterion(model(images), targets).item()\n"
    "    return total / len(loader)\n",
    'network = resnet18(num_classes=3)\nnetwork.load_state_dict(torch.load("regressor.pth"))\ncriterion = WeightedMSE()\n'
    "batches = [(torch.rand(4, 3, 224, 224), torch.rand(4, 3)) for _ in range(2)]\n"
    "for epoch in range(3):\n    print(epoch, validate(network, batches, criterion))\n",
]


def test_a_loss_module_whose_only_state_is_a_constant_tensor_is_no_model_to_put_in_eval_mode(folder):
    """A loss weighted per target keeps `torch.tensor([...]).to(device)`: no parameter and no layer with a mode, so
    the evaluation that runs it beside the model it measures does not ask for its `.eval()`."""
    write(folder, "validation.ipynb", notebook(*(code(source, count=number) for number, source in enumerate(WEIGHTED_LOSS, 1))))
    assert invoke("validation.ipynb").output == "All checks passed!\n"
