"""The per-file result cache: hits, invalidation, cross-file exclusions, corruption and unwritable directories."""

from __future__ import annotations

import pytest
import json
import os
from pathlib import Path

from click.testing import CliRunner

from gemlint.cache import FORMAT, Cache, diagnostic_from_json, diagnostic_to_json
from gemlint.cli import main
from gemlint.config import default_config
from gemlint.runner import run

BLOCKING = 'import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
PADDING = 'from fastapi import FastAPI\napp = FastAPI()\n\n\n@app.post("/predict")\ndef predict(tok, t):\n    return tok(t, padding="max_length", max_length=64)\n'


def lint(tmp_path, cache):
    return run([tmp_path / "src"], default_config(tmp_path), jobs=1, cache=cache)


def setup(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(BLOCKING)
    (tmp_path / "src" / "b.py").write_text(PADDING)


def entries(directory):
    """The per-file result entries (the project index, the files' digests and the runs' records beside them are
    other files)."""
    return sorted(p for p in (directory / f"v{FORMAT}").rglob("*.json") if p.parent.name not in ("digests", "runs"))


def test_second_run_is_served_from_the_cache_and_equal(tmp_path, monkeypatch):
    setup(tmp_path)
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    assert len(entries(cache_dir)) == 2 and (cache_dir / ".gitignore").exists()
    import gemlint.engine as engine  # the runner lints a file through it

    def no_linting(*args, **kwargs):
        raise AssertionError("a cached file was linted again")

    monkeypatch.setattr(engine, "lint_file", no_linting)
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first


def single_file_rules(tmp_path, cache):
    config = default_config(tmp_path).with_overrides(select=("GEM2", "GEM4"))
    return run([tmp_path / "src"], config, jobs=1, cache=cache)


def test_an_edit_invalidates_only_that_file_for_single_file_rules(tmp_path):
    setup(tmp_path)
    cache_dir = tmp_path / "cache"
    single_file_rules(tmp_path, Cache(cache_dir))
    (tmp_path / "src" / "a.py").write_text(BLOCKING.replace('"1"', '"0"'))
    result = single_file_rules(tmp_path, Cache(cache_dir))
    assert [d.code for d in result.diagnostics] == ["GEM201"]
    assert len(entries(cache_dir)) == 3


def test_an_edit_elsewhere_relints_files_that_see_the_project(tmp_path, monkeypatch):
    # GEM101 sees callers in other modules: b.py's findings depend on a.py, so editing a.py re-lints b.py.
    setup(tmp_path)
    (tmp_path / "src" / "b.py").write_text("def helper(model, x):\n    model.eval()\n    return model(x)\n")
    cache_dir = tmp_path / "cache"
    lint(tmp_path, Cache(cache_dir))
    (tmp_path / "src" / "a.py").write_text(BLOCKING.replace('"1"', '"0"'))
    import gemlint.engine as engine  # the runner lints a file through it

    linted = []
    original = engine.lint_file

    def recording(source, selection):
        linted.append(source.path.name)
        return original(source, selection)

    monkeypatch.setattr(engine, "lint_file", recording)
    lint(tmp_path, Cache(cache_dir))
    assert sorted(linted) == ["a.py", "b.py"]


def test_touching_a_file_without_changing_it_keeps_the_cache(tmp_path, monkeypatch):
    setup(tmp_path)
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    os.utime(tmp_path / "src" / "a.py", ns=(1, 1))  # the project state is the files' content, not their times
    import gemlint.engine as engine  # the runner lints a file through it

    def no_linting(*args, **kwargs):
        raise AssertionError("a cached file was linted again")

    monkeypatch.setattr(engine, "lint_file", no_linting)
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first


def test_settings_are_part_of_the_key(tmp_path):
    setup(tmp_path)
    cache_dir = tmp_path / "cache"
    lint(tmp_path, Cache(cache_dir))
    config = default_config(tmp_path).with_overrides(ignore=("GEM404",))
    result = run([tmp_path / "src"], config, jobs=1, cache=Cache(cache_dir))
    assert [d.code for d in result.diagnostics] == ["GEM201"]


def test_cross_file_results_are_reused_only_while_no_project_file_changes(tmp_path, monkeypatch):
    import gemlint.engine as engine  # the runner lints a file through it

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ort.py").write_text(
        "import onnxruntime as ort\nso = ort.SessionOptions()\n"
        "so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL\n"
    )
    (tmp_path / "src" / "other.py").write_text("x = 1\n")
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    assert [d.code for d in first] == ["GEM501"]
    linted: list[str] = []
    real = engine.lint_file

    def counting(source, selection):
        linted.append(source.path.name)
        return real(source, selection)

    monkeypatch.setattr(engine, "lint_file", counting)
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first
    assert linted == []  # nothing changed: every result, the cross-file one included, comes from the cache
    (tmp_path / "src" / "other.py").write_text("x = 2  # another file of the project changed\n")
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first
    assert linted == ["ort.py", "other.py"]  # the cross-file result is computed afresh, and the changed file


def test_an_export_script_elsewhere_changes_a_cached_cross_file_result(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "serve.py").write_text(
        "import onnxruntime as ort\nso = ort.SessionOptions()\n"
        "so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL\n"
        'session = ort.InferenceSession("model.opt.onnx", so)\n'
    )
    cache_dir = tmp_path / "cache"
    assert [d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics] == ["GEM501"]
    (tmp_path / "src" / "export.py").write_text(
        "import onnxruntime as ort\nso = ort.SessionOptions()\n"
        'so.optimized_model_filepath = "build/model.opt.onnx"\n'
        'ort.InferenceSession("model.onnx", so)\n'
    )
    assert [d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics if d.path.endswith("serve.py")] == []


def test_corrupt_entries_are_ignored_with_one_warning(tmp_path):
    setup(tmp_path)
    cache_dir = tmp_path / "cache"
    expected = lint(tmp_path, Cache(cache_dir)).diagnostics
    for entry in entries(cache_dir):
        entry.write_text('[{"code": "GEM4')
    for record in (cache_dir / f"v{FORMAT}" / "runs").glob("*.json"):
        record.unlink()  # the run's record would answer without reading an entry
    result = lint(tmp_path, Cache(cache_dir))
    assert result.diagnostics == expected
    assert result.warnings == ["ignoring a corrupt cache entry (JSONDecodeError); it will be rewritten"]
    assert lint(tmp_path, Cache(cache_dir)).warnings == []


def test_unwritable_cache_directory_warns_once_and_lints(tmp_path):
    setup(tmp_path)
    blocker = tmp_path / "cache"
    blocker.write_text("not a directory")
    result = lint(tmp_path, Cache(blocker))
    assert len(result.diagnostics) == 2
    assert len(result.warnings) == 1 and result.warnings[0].startswith("cache disabled: cannot write to")


def test_serialisation_round_trips_fixes():
    from gemlint.api import lint_source

    diagnostics = lint_source(PADDING, "svc.py")
    assert diagnostics and diagnostics[0].fix is not None
    assert [diagnostic_from_json(json.loads(json.dumps(diagnostic_to_json(d)))) for d in diagnostics] == diagnostics


def test_cli_no_cache_and_cache_dir(tmp_path, monkeypatch):
    setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GEMLINT_CACHE_DIR")
    CliRunner().invoke(main, ["src", "--no-cache"])
    assert not (tmp_path / ".gemlint_cache").exists()
    CliRunner().invoke(main, ["src"])
    assert entries(tmp_path / ".gemlint_cache")
    CliRunner().invoke(main, ["src", "--cache-dir", "elsewhere"])
    assert entries(tmp_path / "elsewhere")


def test_cache_dir_environment_variable(tmp_path, monkeypatch):
    setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMLINT_CACHE_DIR", str(tmp_path / "from-env"))
    first = CliRunner().invoke(main, ["src", "--format", "json"])
    assert len(entries(tmp_path / "from-env")) == 2 and not (tmp_path / ".gemlint_cache").exists()
    # --cache-dir wins over the environment, and --no-cache over both.
    CliRunner().invoke(main, ["src", "--cache-dir", "flag"])
    assert len(entries(tmp_path / "flag")) == 2
    (tmp_path / "src" / "c.py").write_text(BLOCKING)
    CliRunner().invoke(main, ["src", "--no-cache"])
    assert len(entries(tmp_path / "from-env")) == 2 and len(entries(tmp_path / "flag")) == 2
    again = CliRunner().invoke(main, ["src", "--format", "json"])
    assert len(json.loads(again.output)) == len(json.loads(first.output)) + 1


def test_concurrent_runs_on_one_cache_do_not_corrupt_it(tmp_path):
    import subprocess
    import sys

    (tmp_path / "src").mkdir()
    for i in range(40):
        (tmp_path / "src" / f"m{i}.py").write_text(BLOCKING if i % 2 else PADDING)
    cache_dir = tmp_path / "cache"
    command = [sys.executable, "-m", "gemlint", "src", "--cache-dir", str(cache_dir), "--format", "json", "--jobs", "1"]
    runs = [subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [1, 1, 1]
    assert all(b"warning" not in stderr for _, stderr in outputs)
    first = json.loads(outputs[0][0])
    assert len(first) == 40 and all(json.loads(out) == first for out, _ in outputs)
    for entry in entries(cache_dir):
        json.loads(entry.read_text())  # every entry is whole
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=300)
    assert json.loads(again.stdout) == first


def test_a_parse_that_ran_out_of_time_is_not_cached(tmp_path, monkeypatch):
    import gemlint.frontends.native as native

    (tmp_path / "src").mkdir()
    nested = "using T = " + "std::vector<" * 8000 + "int" + ">" * 8000 + ";\n"  # minutes without a deadline
    (tmp_path / "src" / "kernel.cu").write_text(nested + "void f() { float *p; cudaMalloc(&p, 4); }\n")
    monkeypatch.setattr(native, "parse_time_limit", lambda size: 0.2)
    cache_dir = tmp_path / "cache"
    result = lint(tmp_path, Cache(cache_dir))
    assert [d.code for d in result.diagnostics] == ["GEM000"]
    assert "took longer" in result.diagnostics[0].message
    assert entries(cache_dir) == []  # a faster machine (or a later run) gets to try again


def test_a_triton_models_config_is_part_of_its_key(tmp_path):
    model = tmp_path / "src" / "tokenizer" / "1" / "model.py"
    model.parent.mkdir(parents=True)
    model.write_text(
        "class TritonPythonModel:\n    def execute(self, requests):\n"
        '        return self.tok(requests, padding="max_length", max_length=32)\n'
    )
    config = model.parent.parent / "config.pbtxt"
    config.write_text('output [ { name: "input_ids" dims: [ 32 ] } ]\n')
    cache_dir = tmp_path / "cache"
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == []  # fixed-length output: padding is required
    config.write_text('output [ { name: "input_ids" dims: [ -1 ] } ]\n')
    assert [d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics] == ["GEM201"]


def test_the_key_follows_gemlints_own_code(monkeypatch):
    # An edited rule must never be served results its previous code computed.
    from gemlint import cache as cache_module

    before = cache_module.settings_fingerprint("settings")
    monkeypatch.setattr(cache_module, "code_digest", lambda: "an edited rule")
    assert cache_module.settings_fingerprint("settings") != before


def test_an_edit_that_keeps_size_and_modification_time_is_not_served_stale(tmp_path):
    """The cross-file key follows the files' content: an edit that keeps a file's size and time within the
    moments after it was read (a formatter, a coarse filesystem clock) still recomputes GEM601 on the manifest."""
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "examples"
    (tmp_path / "src" / "serving").mkdir(parents=True)
    (tmp_path / "src" / "deploy").mkdir()
    handler = tmp_path / "src" / "serving" / "classifier.py"
    handler.write_text((examples / "serving" / "classifier.py").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "src" / "deploy" / "classifier.yaml").write_text((examples / "deploy" / "classifier.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    cache_dir = tmp_path / "cache"
    assert "GEM601" in {d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics}
    before = handler.stat()
    text = handler.read_text(encoding="utf-8")
    edited = text.replace("    model(torch.zeros(1, 512))", "    print(torch.zeros(1, 512))")
    assert edited != text and len(edited) == len(text)
    handler.write_text(edited, encoding="utf-8")
    os.utime(handler, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert handler.stat().st_size == before.st_size and handler.stat().st_mtime_ns == before.st_mtime_ns
    assert "GEM601" not in {d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics}


def test_an_edited_rule_never_serves_results_its_old_code_cached(tmp_path):
    # A copy of gemlint whose GEM404 is edited between two runs on one cache, version string unchanged.
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import gemlint

    package = tmp_path / "site" / "gemlint"
    shutil.copytree(Path(gemlint.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    setup(tmp_path)
    command = [sys.executable, "-m", "gemlint", "src", "--select", "GEM404", "--format", "json", "--cache-dir", str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "PYTHONDONTWRITEBYTECODE": "1"}

    def codes() -> list[str]:
        completed = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        return [finding["code"] for finding in json.loads(completed.stdout)]

    assert codes() == ["GEM404"]
    assert codes() == ["GEM404"]  # served from the cache
    rule = package / "rules" / "gem404_cuda_launch_blocking.py"
    source = rule.read_text(encoding="utf-8")
    assert "def is_blocking(value: object) -> bool:\n" in source
    rule.write_text(source.replace("def is_blocking(value: object) -> bool:\n", "def is_blocking(value: object) -> bool:\n    return False\n"), encoding="utf-8")
    assert codes() == []


def aged(tmp_path, seconds=3600):
    """Every file of src/ last modified ``seconds`` ago: past the window in which a record is not trusted."""
    for path in (tmp_path / "src").rglob("*"):
        if path.is_file():
            past = path.stat().st_mtime_ns - seconds * 10**9
            os.utime(path, ns=(past, past))


def test_a_warm_run_stats_unchanged_files_instead_of_reading_them(tmp_path, monkeypatch):
    setup(tmp_path)
    aged(tmp_path)
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    import gemlint.runner as runner

    read = []
    real = runner.read_regular_file
    monkeypatch.setattr(runner, "read_regular_file", lambda path: read.append(str(path)) or real(path))
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first
    assert not [path for path in read if "/src/" in path]


def test_a_file_whose_size_or_time_changed_is_read_and_hashed_again(tmp_path):
    setup(tmp_path)
    aged(tmp_path)
    cache_dir = tmp_path / "cache"
    assert {d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics} == {"GEM201", "GEM404"}
    (tmp_path / "src" / "a.py").write_text("import os\n")
    aged(tmp_path, seconds=60)
    assert {d.code for d in lint(tmp_path, Cache(cache_dir)).diagnostics} == {"GEM201"}


def test_a_file_modified_moments_before_it_was_read_is_not_recorded(tmp_path):
    from gemlint.cache import FileDigests

    setup(tmp_path)
    cache = Cache(tmp_path / "cache")
    digests = FileDigests(cache, str(tmp_path))
    fresh, old = str(tmp_path / "src" / "a.py"), str(tmp_path / "src" / "b.py")
    past = os.stat(old).st_mtime_ns - 3600 * 10**9
    os.utime(old, ns=(past, past))
    digests.digest(fresh, lambda path: open(path, "rb").read())
    digests.digest(old, lambda path: open(path, "rb").read())
    digests.save()
    again = FileDigests(cache, str(tmp_path))

    def unread(path):
        raise AssertionError(f"{path} was read although its record matches")

    assert again.digest(old, unread)  # recorded, and trusted while its size and time are the same
    reads = []
    again.digest(fresh, lambda path: reads.append(path) or open(path, "rb").read())
    assert reads == [fresh]  # modified just before it was read: it may change again within the same timestamp


def test_a_corrupt_digest_record_means_reading_every_file(tmp_path):
    from gemlint.cache import FileDigests

    setup(tmp_path)
    aged(tmp_path)
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    (record,) = (cache_dir / f"v{FORMAT}" / "digests").glob("*.json")
    record.write_text("{not json", encoding="utf-8")
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first
    assert FileDigests(Cache(cache_dir), str(tmp_path))._records  # rewritten by the run


def test_a_warm_run_over_folders_reads_one_record_instead_of_an_entry_per_file(tmp_path, monkeypatch):
    import gemlint.cache as cache_module

    setup(tmp_path)
    aged(tmp_path)
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    (record,) = (cache_dir / f"v{FORMAT}" / "runs").glob("*.json")
    assert len(json.loads(record.read_text())) == 2
    read = []
    real = cache_module.read_confined
    monkeypatch.setattr(cache_module, "read_confined", lambda path, *a, **k: read.append(Path(path)) or real(path, *a, **k))
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first
    assert record in read and not set(read) & set(entries(cache_dir))


def test_a_corrupt_or_stale_run_record_falls_back_to_the_entries(tmp_path):
    setup(tmp_path)
    aged(tmp_path)
    cache_dir = tmp_path / "cache"
    first = lint(tmp_path, Cache(cache_dir)).diagnostics
    (record,) = (cache_dir / f"v{FORMAT}" / "runs").glob("*.json")
    record.write_text('{"0000": 5', encoding="utf-8")
    assert lint(tmp_path, Cache(cache_dir)).diagnostics == first
    assert len(json.loads(record.read_text())) == 2  # rewritten by the run
    record.write_text(json.dumps({key: [] for key in json.loads(record.read_text())} | {"x": 3}), encoding="utf-8")
    (tmp_path / "src" / "a.py").write_text(BLOCKING + "\n")
    assert lint(tmp_path, Cache(cache_dir)).diagnostics != []  # an edited file's new key is not in the record


def test_a_run_over_named_files_keeps_no_record(tmp_path):
    setup(tmp_path)
    cache_dir = tmp_path / "cache"
    run([tmp_path / "src" / "a.py", tmp_path / "src" / "b.py"], default_config(tmp_path), jobs=1, cache=Cache(cache_dir))
    assert entries(cache_dir) and not (cache_dir / f"v{FORMAT}" / "runs").exists()


def test_a_cached_run_over_a_subfolder_walks_the_project_once(tmp_path, monkeypatch):
    """The project's state (every file's digest) needs the root's files: the subfolder's files are taken from that
    walk rather than walked a second time, and the findings are the same as an uncached run's."""
    from gemlint.discovery import Discovery

    setup(tmp_path)
    aged(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "c.py").write_text(BLOCKING)
    tops = []
    real = Discovery._walk
    monkeypatch.setattr(Discovery, "_walk", lambda self, top, *a, **k: tops.append(os.path.abspath(top)) or real(self, top, *a, **k))
    cold = lint(tmp_path, Cache(tmp_path / "cache"))
    assert str(tmp_path / "src") not in tops  # the index walks the root too, on a cold run
    tops.clear()
    warm = lint(tmp_path, Cache(tmp_path / "cache"))
    assert tops == [str(tmp_path)]
    assert cold.diagnostics == warm.diagnostics == lint(tmp_path, None).diagnostics
    assert {d.path.rsplit("/", 1)[-1] for d in warm.diagnostics} == {"a.py", "b.py"}


@pytest.mark.parametrize("cached", [False, True])
def test_a_run_over_the_project_root_walks_it_once(tmp_path, monkeypatch, cached):
    """The run's walk of the root is the project's list of files: the project model does not walk it again."""
    from gemlint.discovery import Discovery

    setup(tmp_path)
    tops = []
    real = Discovery._walk
    monkeypatch.setattr(Discovery, "_walk", lambda self, top, *a, **k: tops.append(os.path.abspath(top)) or real(self, top, *a, **k))
    found = run([tmp_path], default_config(tmp_path), jobs=1, cache=Cache(tmp_path / "cache") if cached else None)
    assert tops == [str(tmp_path)]
    assert {d.path.rsplit("/", 1)[-1] for d in found.diagnostics} == {"a.py", "b.py"}
