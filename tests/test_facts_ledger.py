"""The facts' ledger: facts derived again after an edit, keeping the pieces the edit cannot have changed, are the
facts derived afresh; and the ledger file, which lies in the linted repository, is read only when it is what
gemlint wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gemlint.config import default_config
from gemlint.project.files import forget_projects, keep_index_in, project_for
from gemlint.project.facts import load_facts
from gemlint.project.index_store import IndexCache, Packed
import gemlint.project.ledger_store as ledger_store
from gemlint.project.ledger import Ledger, LedgerUnreadable, ModulePieces, Reads, RowsMissing, TracedMemo, changed_bases, contribution_digest
from gemlint.project.ledger_store import PackedSets, load_ledger, rows_file, save_ledger
import gemlint.project.model as model_module
from gemlint.project.model import ProjectModel
from gemlint.project.summary import ModuleSummary
from gemlint.runner import _facts_in_a_child

MODULES = {
    "svc/__init__.py": "",
    "svc/base.py": """\
import torch


class Backend(torch.nn.Module):
    def warmup(self):
        return None
""",
    "svc/engines.py": """\
from svc.base import Backend
from svc.helpers import prepare


class FastBackend(Backend):
    def warmup(self):
        return prepare()
""",
    "svc/helpers.py": """\
def prepare():
    return tidy()


def tidy():
    return 1
""",
    "svc/server.py": """\
from fastapi import FastAPI

from svc.base import Backend

app = FastAPI()


class Holder:
    def __init__(self):
        self.backend = Backend()

    def run(self):
        return self.backend.warmup()


holder = Holder()


@app.post("/predict")
def predict():
    return holder.run()
""",
    "svc/loaders.py": """\
from transformers import AutoModel


class Loaded:
    def __init__(self):
        self.model = AutoModel.from_pretrained("bert-base-uncased")


def load():
    return AutoModel.from_pretrained("bert-base-uncased")
""",
    "svc/client.py": """\
from svc.base import Backend


def build():
    return Backend()
""",
    **{f"svc/filler_{n}.py": f"def step_{n}(x):\n    return x + {n}\n" for n in range(4)},
}

#: Each edit changes a module's shape and, through it, a fact: what the ledger keeps must not hide it.
EDITS = {
    "a call dropped: `tidy` is no longer reached": ("svc/helpers.py", "    return tidy()", "    return 2"),
    # `server.py` never imports `engines.py`: only the subclass-index row it read ties its walk to the edit.
    "a base dropped: the override no longer runs through `Backend`": ("svc/engines.py", "class FastBackend(Backend):", "class FastBackend:"),
    # A new subclass elsewhere: the walk through `Backend.warmup` read no module of it, only the index's row.
    "a subclass added where nothing imports it": ("svc/filler_1.py", "def step_1(x):\n    return x + 1", "from svc.base import Backend\nfrom svc.helpers import tidy\n\n\nclass SlowBackend(Backend):\n    def warmup(self):\n        return tidy()"),
    "an entry point removed": ("svc/server.py", '@app.post("/predict")\ndef predict():', "def handle():"),
    "a loader removed from `__init__`": ("svc/loaders.py", 'self.model = AutoModel.from_pretrained("bert-base-uncased")', "self.model = None"),
    "an unrelated module starts calling into the chain": ("svc/filler_0.py", "def step_0(x):\n    return x + 0", "from svc.helpers import tidy\n\n\ndef predict_0(x):\n    return tidy()"),
    "a method renamed in the base": ("svc/base.py", "def warmup(self):", "def warm(self):"),
    "a module stops building a project model": ("svc/client.py", "    return Backend()", "    return None"),
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def facts_of(root: Path, index: IndexCache | None):
    forget_projects()
    keep_index_in(root, index)
    model = project_for(default_config(root)).model
    facts = model.facts
    subclasses, callers = model._facts_part("subclasses"), model._facts_part("callers")  # read from their files if kept there
    return (facts.context, facts.evidenced, facts.reached, facts.reached_evidenced, facts.loading, facts.holders, subclasses, callers)


def indexed_with_a_child(root: Path, cache: Path | None):
    """The project at ``root`` indexed in ``cache`` (None: in memory), and what derives its facts in a child."""
    forget_projects()
    keep_index_in(root, cache)
    config = default_config(root)
    child = _facts_in_a_child(config)
    assert child is not None
    return config, child


@pytest.mark.parametrize("kept_in", ["memory", "files"])
@pytest.mark.parametrize("edit", EDITS)
def test_facts_from_the_ledger_are_the_facts_derived_afresh(tmp_path, monkeypatch, edit, kept_in):
    write(tmp_path, MODULES)
    # Kept in memory across runs, with its ledger, as the language server keeps it; or in a cache folder, whose
    # ledger file keeps each piece's reads as module numbers.
    index = IndexCache(None) if kept_in == "memory" else tmp_path / ".cache"
    before = facts_of(tmp_path, index)
    path, old, new = EDITS[edit]
    text = (tmp_path / path).read_text()
    assert old in text
    (tmp_path / path).write_text(text.replace(old, new))
    derived: list[str] = []
    entry_points = ProjectModel._entry_points
    monkeypatch.setattr(ProjectModel, "_entry_points", lambda self, entry: derived.append(entry.path) or entry_points(self, entry))
    kept = facts_of(tmp_path, index)
    afresh_derived = len(derived)
    afresh = facts_of(tmp_path, None)
    assert kept == afresh
    assert kept != before  # the edit changed a fact: keeping the stale piece would have shown
    assert afresh_derived < len(MODULES)  # and the ledger did keep pieces: not every module was derived again


def test_an_unchanged_project_keeps_every_piece(tmp_path, monkeypatch):
    write(tmp_path, MODULES)
    index = IndexCache(None)
    before = facts_of(tmp_path, index)
    index.facts = {key: value for key, value in index.facts.items() if "\0" in key}  # the facts gone, the ledger kept
    derived: list[str] = []
    monkeypatch.setattr(ProjectModel, "_entry_points", lambda self, entry: derived.append(entry.path))
    assert facts_of(tmp_path, index) == before
    assert derived == []


def test_a_module_added_derives_everything_afresh(tmp_path, monkeypatch):
    write(tmp_path, MODULES)
    index = IndexCache(None)
    facts_of(tmp_path, index)
    write(tmp_path, {"svc/more.py": "from svc.helpers import tidy\n\n\ndef predict_more():\n    return tidy()\n"})
    derived: list[str] = []
    entry_points = ProjectModel._entry_points
    monkeypatch.setattr(ProjectModel, "_entry_points", lambda self, entry: derived.append(entry.path) or entry_points(self, entry))
    kept = facts_of(tmp_path, index)
    assert len(derived) == len(MODULES) + 1  # a new module can change what any name resolves to
    assert kept == facts_of(tmp_path, None)


def test_a_memoised_answer_carries_the_reads_behind_it():
    reads = Reads()
    memo = TracedMemo(reads)
    first = reads.begin()
    if "lineage" not in memo:
        reads.log.append("svc/base.py")
        memo["lineage"] = False  # a recursion sentinel first ...
        reads.log.append("svc/engines.py")
        memo["lineage"] = True  # ... then the answer, with every read since the memo was first asked
    assert reads.since(first) == {"svc/base.py", "svc/engines.py"}
    later = reads.position()
    assert memo["lineage"] is True
    reads.log.append(("svc.base", "Backend"))
    assert reads.since(later) == {"svc/base.py", "svc/engines.py", ("svc.base", "Backend")}
    for asked in (lambda: memo.get("lineage"), lambda: "lineage" in memo):  # each way of asking counts them
        start = reads.position()
        assert asked()
        assert reads.since(start) == {"svc/base.py", "svc/engines.py"}
    start = reads.begin()  # a later piece: its log starts afresh, and the memo's answers still carry their reads
    assert memo["lineage"] is True and reads.since(start) == {"svc/base.py", "svc/engines.py"}
    memo.clear()
    again = reads.begin()
    assert memo.get("lineage") is None and reads.since(again) == frozenset()


def ledger() -> Ledger:
    found = Ledger({"/p/a.py": ("a", "s1"), "/p/b.py": ("b", "s2")})
    found.pieces["/p/a.py"] = ModulePieces([("b", "Base", "Sub")], frozenset({"/p/a.py", "/p/b.py"}), ["run"], [("predict", True, False)], [("/p/b.py", "go")], frozenset({"/p/a.py", ("b", "Base")}), ["Loader"], frozenset({"/p/a.py"}), True, frozenset({"/p/a.py"}))
    found.pieces["/p/b.py"] = ModulePieces([], frozenset({"/p/b.py"}), [], [], [], frozenset({"/p/b.py"}), [], frozenset({"/p/b.py"}), False, frozenset({"/p/b.py"}))
    found.callees[("/p/a.py", "predict")] = ([("/p/b.py", "go")], frozenset({"/p/a.py", "/p/b.py", ("b", "Base")}))
    return found


def test_the_ledger_round_trips_through_its_files(tmp_path):
    file = tmp_path / "facts.ledger"
    save_ledger(file, ledger())
    loaded = load_ledger(file, ledger().modules)
    assert loaded is not None
    assert rows_file(file).is_file()
    paths = list(loaded.modules)

    def named(reads):  # modules come back as their numbers
        return frozenset(paths[read] if isinstance(read, int) else read for read in reads)

    for path, piece in loaded.pieces.items():  # the rows and names stay in their file until asked for
        assert piece.subclass_rows is None and piece.called is None
        rows, called = loaded.rows_of(path)
        piece.subclass_rows, piece.called = [tuple(row) for row in rows], called  # rows come back as lists
        piece.points = [tuple(point) for point in piece.points]  # as do points: they are only ever unpacked
        for part in ("subclass", "points", "loading", "holder"):
            setattr(piece, f"{part}_reads", named(getattr(piece, f"{part}_reads")))
    loaded.callees = {function: (found, named(reads)) for function, (found, reads) in loaded.callees.items()}
    assert loaded == ledger()
    assert loaded.numbers(["/p/b.py"]) == {1}


def test_a_ledger_file_holds_only_for_the_modules_it_was_derived_from(tmp_path):
    file = tmp_path / "facts.ledger"
    save_ledger(file, ledger())
    edited = {"/p/a.py": ("a", "s1"), "/p/b.py": ("b", "s9")}
    loaded = load_ledger(file, edited)
    assert loaded is not None and loaded.changed(edited) == {"/p/b.py"}  # read for the modules as they are now
    assert load_ledger(file, {**ledger().modules, "/p/c.py": ("c", "s3")}) is None  # a module added
    assert load_ledger(file, {"/p/a.py": ("a", "s1"), "/p/b.py": ("bb", "s2")}) is None  # a module renamed
    assert load_ledger(file, {"/p/b.py": ("b", "s2"), "/p/a.py": ("a", "s1")}) is None  # in another order


def test_digests_tell_changed_rows_without_the_rows():
    piece = ledger().pieces["/p/a.py"]
    assert piece.subclass_digest == contribution_digest([["b", "Base", "Sub"]])  # tuples and lists alike
    assert piece.subclass_digest != contribution_digest([("b", "Base", "Other")])
    assert contribution_digest(["a", "b"]) != contribution_digest(["ab"])
    assert piece.called_digest == contribution_digest(["run"])


def stored(file: Path) -> dict:
    """The ledger file as data: its header, with the sections of its tail as the values they pack."""
    raw = file.read_bytes()
    end = raw.index(b"\n")
    header = json.loads(raw[:end])
    tail = raw[end + 1 :]
    sizes, numbers, _ = header.pop("tail")
    return {**header, "set_sizes": unpacked(tail[:sizes]), "set_numbers": unpacked(tail[sizes : sizes + numbers]), "reached": json.loads(tail[sizes + numbers :])}


def restore(file: Path, data: dict) -> None:
    """Write ``data`` (as :func:`stored` reads it) back to the ledger file."""
    sizes, numbers, reached = packed(data["set_sizes"]), packed(data["set_numbers"]), json.dumps(data["reached"]).encode()
    header = {key: value for key, value in data.items() if key not in ("set_sizes", "set_numbers", "reached")}
    header["tail"] = [len(sizes), len(numbers), len(reached)]
    file.write_bytes(json.dumps(header).encode() + b"\n" + sizes + numbers + reached)


def packed(values: list[int]) -> bytes:
    return b"".join(value.to_bytes(4, "little") for value in values)


def unpacked(raw: bytes) -> list[int]:
    return [int.from_bytes(raw[at : at + 4], "little") for at in range(0, len(raw), 4)]


def test_read_sets_come_back_as_they_were_packed():
    sets = [[0], [], [1, 0, 70000], [5] * 3]
    found = PackedSets(packed(list(map(len, sets))), packed([n for found in sets for n in found]), [[1, [["b", "Base"]]]], 70001)
    assert found.unpacked() == [(0,), frozenset({("b", "Base")}), (1, 0, 70000), (5, 5, 5)]
    assert found.holding({0}) == {0, 2} and found.holding({5, 70000}) == {2, 3} and found.holding({4}) == set()
    with pytest.raises(LedgerUnreadable):
        PackedSets(packed(list(map(len, sets))), packed([n for found in sets for n in found]), [], 70000).unpacked()  # a number past the modules


@pytest.mark.parametrize("damage", [
    lambda data: data["subclass_digests"].__setitem__(0, 3),  # a digest that is no string
    lambda data: data.__setitem__("holder", "2" + data["holder"][1:]),  # a holder that is no flag
    lambda data: data["set_numbers"].__setitem__(0, 7),  # a read naming no module
    lambda data: data["rows_read"][0][1].append(["b"]),  # a subclass-index row without its class
    lambda data: data["rows_read"][0].__setitem__(0, 99),  # rows read by a set that is not in the file
    lambda data: data["set_sizes"].append(1),  # sizes that do not add up to the numbers
    lambda data: data["reads"].__setitem__(1, packed([99, 0]).hex()),  # reads that are not in the file
    lambda data: data["reads"].__setitem__(0, "zz"),  # reads that are not hexadecimal
    lambda data: data["reads"].__setitem__(0, "0000"),  # bytes that are no whole number of values
    lambda data: data["reads"].pop(),  # a part without its reads
    lambda data: data["reached"].__setitem__(0, [[0, 1]]),  # a callee that is no qualname
    lambda data: data["reached"][0].append([9, "go"]),  # a callee in no module
    lambda data: data["reached"].pop(),  # a walked function without its callees
    lambda data: data["callees"].__setitem__("reads", packed([99]).hex()),  # a callee's reads that are not in the file
    lambda data: data["callees"].__setitem__("heads", packed([5]).hex()),  # a walked function in no module
    lambda data: data["callees"]["quals"].__setitem__(0, True),  # a walked function that is no qualname
    lambda data: data["points"].__setitem__(0, [["predict", True]]),  # an entry point short of a field
    lambda data: data["scripts"].__setitem__(0, [[7, "go"]]),  # a script's function in no module
    lambda data: data["loading"].__setitem__(0, [1]),  # a loading name that is no string
    lambda data: data.__setitem__("format", "0"),  # another version's
    lambda data: data["points"].pop(),  # a module without its pieces
    lambda data: data["shapes"].pop(),  # a module without its shape
    lambda data: data["shapes"].__setitem__(0, 1),  # a shape that is no string
    lambda data: data.__setitem__("modules", "0" * 32),  # derived from other modules
    lambda data: data.__setitem__("facts", 1),  # facts under a key that is no string
    lambda data: data.__setitem__("rows", 1),  # rows under a key that is no string
    lambda data: data.__setitem__("sets", 9),  # more sets than the file holds
])
def test_a_damaged_ledger_keeps_nothing(tmp_path, damage):
    file = tmp_path / "facts.ledger"
    save_ledger(file, ledger())
    data = stored(file)
    damage(data)
    restore(file, data)
    assert keeps_nothing(load_ledger(file, ledger().modules))


@pytest.mark.parametrize("damage", [
    lambda raw: raw.replace(b"\n", b" ", 1),  # a header without its end
    lambda raw: raw[: raw.index(b"\n") - 1] + raw[raw.index(b"\n"):],  # a header that is not JSON
    lambda raw: raw[:-1],  # a tail shorter than the header says
    lambda raw: raw + b"0",  # or longer
])
def test_a_ledger_file_cut_or_stretched_is_no_ledger(tmp_path, damage):
    file = tmp_path / "facts.ledger"
    save_ledger(file, ledger())
    file.write_bytes(damage(file.read_bytes()))
    assert keeps_nothing(load_ledger(file, ledger().modules))


def keeps_nothing(loaded: Ledger | None) -> bool:
    """Not read at all, or found unreadable once its pieces and walked functions are made (their columns are
    checked as they are made)."""
    if loaded is None:
        return True
    try:
        loaded.pieces
        loaded.callees
    except LedgerUnreadable:
        return True
    return False


@pytest.mark.parametrize("damage", [
    lambda data: data["rows"][0][0].__setitem__(0, ["b", "Base"]),  # a row short of a field
    lambda data: data["rows"][0][1].append(3),  # a called name that is no string
    lambda data: data["rows"].pop(),  # a module without its rows
    lambda data: data.__setitem__("key", "0" * 32),  # the rows of another ledger
])
def test_damaged_rows_are_no_rows(tmp_path, damage):
    file = tmp_path / "facts.ledger"
    save_ledger(file, ledger())
    data = json.loads(rows_file(file).read_text())
    damage(data)
    rows_file(file).write_text(json.dumps(data))
    loaded = load_ledger(file, ledger().modules)
    assert loaded is not None  # the ledger holds: only its rows are lost, and asking for them says so
    with pytest.raises(RowsMissing):
        loaded.rows_of("/p/a.py")


def test_a_ledger_file_that_is_a_link_is_not_read(tmp_path):
    target = tmp_path / "elsewhere.json"
    save_ledger(target, ledger())
    link = tmp_path / "facts.ledger"
    os.symlink(target, link)
    assert load_ledger(link, ledger().modules) is None
    save_ledger(link.with_name("real.ledger"), ledger())
    os.replace(link.with_name("real.ledger"), link)
    real_rows = rows_file(link).with_name("real-rows.json")
    os.replace(rows_file(link.with_name("real.ledger")), real_rows)
    os.symlink(real_rows, rows_file(link))
    loaded = load_ledger(link, ledger().modules)
    assert loaded is not None
    with pytest.raises(RowsMissing):
        loaded.rows_of("/p/a.py")


def test_only_shapes_changed_under_the_same_modules_are_an_edit():
    stored = ledger()
    assert stored.changed({"/p/a.py": ("a", "s1"), "/p/b.py": ("b", "s3")}) == {"/p/b.py"}
    assert stored.changed({"/p/a.py": ("a", "s1")}) is None  # a module removed
    assert stored.changed({"/p/a.py": ("a", "s1"), "/p/b.py": ("c", "s2")}) is None  # a module renamed


def test_the_subclass_rows_that_change_are_those_of_bases_whose_subclasses_differ():
    before = [("svc.base", "Backend", "Fast"), ("svc.base", "Backend", "Slow"), ("svc.base", "Plain", "Mixin")]
    assert changed_bases(before, [tuple(row) for row in before]) == set()
    assert changed_bases(before, before[:2]) == {("svc.base", "Plain")}  # a base dropped
    assert changed_bases(before, [before[1], before[0], before[2]]) == {("svc.base", "Backend")}  # the order listed
    assert changed_bases([], [("svc.other", "Base", "Sub")]) == {("svc.other", "Base")}  # a base added


def test_a_large_project_derives_a_few_edited_modules_where_it_runs(tmp_path, monkeypatch):
    # A project large enough to derive its facts in a process of their own derives them there when it has no
    # ledger, or when many modules changed; an edit of a few modules is derived again where the facts are asked.
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    isolated: list[bool] = []

    def settle(forks: bool = False) -> ProjectModel:
        config, child = indexed_with_a_child(tmp_path, cache)
        model = project_for(config).model
        model.prepare(isolate=lambda meanwhile: isolated.append(True) or child(meanwhile), forks=forks)
        return model

    settle()
    assert isolated == [True]  # no ledger yet
    path, old, new = EDITS["a call dropped: `tidy` is no longer reached"]
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))
    settle()
    assert isolated == [True]  # the ledger holds for all modules but one
    assert facts_of(tmp_path, cache)[:6] == facts_of(tmp_path, None)[:6]
    path, old, new = EDITS["a module stops building a project model"]
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))
    settle(forks=True)
    assert isolated == [True, True]  # workers fork after: whatever the edit reaches is not derived where they fork
    assert facts_of(tmp_path, cache)[:6] == facts_of(tmp_path, None)[:6]
    monkeypatch.setattr(model_module, "LEDGER_EDITS_IN_PROCESS", 0)
    path, old, new = EDITS["a base dropped: the override no longer runs through `Backend`"]
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))
    model = settle()
    assert isolated == [True, True, True]  # more modules changed than are derived again in the asking process
    assert model._previous_ledger is None  # read to decide, and not kept once the other process derived the facts
    assert facts_of(tmp_path, cache)[:6] == facts_of(tmp_path, None)[:6]


def test_a_few_edits_keep_the_ledger_file_and_derive_from_it_what_changed_since(tmp_path, monkeypatch):
    # The ledger file holds for the modules as they were when it was written: each later run derives again what
    # read a module changed since, however many runs ago, until more than a few have changed.
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    facts_of(tmp_path, cache)
    (ledger,) = cache.glob("*.ledger")
    written = ledger.read_bytes()

    def edit(name: str) -> None:
        path, old, new = EDITS[name]
        (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))

    for name in ("a call dropped: `tidy` is no longer reached", "a module stops building a project model"):
        edit(name)
        assert facts_of(tmp_path, cache) == facts_of(tmp_path, None)
        assert ledger.read_bytes() == written
    monkeypatch.setattr(model_module, "LEDGER_REWRITE_AFTER", 2)
    edit("a base dropped: the override no longer runs through `Backend`")
    assert facts_of(tmp_path, cache) == facts_of(tmp_path, None)
    assert ledger.read_bytes() != written  # three modules changed since: written again
    # That ledger kept pieces read from the first file, whose reads name modules by number: it is read back and
    # derived from as any other.
    edit("an entry point removed")
    assert facts_of(tmp_path, cache) == facts_of(tmp_path, None)


#: Edits that change a module's shape but no piece that reads it: each touched piece comes out as it was.
KEEPING_EDITS = {
    "a call of a builtin added to a reached function": ("svc/helpers.py", "    return 1", "    return int(1)"),
    "a helper nothing calls added": ("svc/filler_2.py", "def step_2(x):\n    return x + 2", "def step_2(x):\n    return x + 2\n\n\ndef unused(values):\n    return sorted(values)"),
}


@pytest.mark.parametrize("edit", KEEPING_EDITS)
def test_an_edit_that_leaves_every_piece_it_touches_as_it_was_keeps_the_ledgers_facts(tmp_path, monkeypatch, edit):
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    before = facts_of(tmp_path, cache)
    path, old, new = KEEPING_EDITS[edit]
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))
    walks: list[int] = []
    reach = ProjectModel._reach
    monkeypatch.setattr(ProjectModel, "_reach", lambda self, *args: walks.append(1) or reach(self, *args))
    kept = facts_of(tmp_path, cache)
    assert walks == []  # neither every module's pieces nor the walk from every entry point made again
    assert kept == facts_of(tmp_path, None)  # the callers index too, which the new calls change
    assert kept[:6] == before[:6]
    # Their file names the facts the ledger was derived with instead of holding them again; read back through it.
    (stored,) = [file for file in cache.glob("project-facts-*.json") if file.name.count(".") == 1]
    assert "same_as" in json.loads(stored.read_text())
    monkeypatch.setattr(ProjectModel, "_compute_facts", lambda self, key: pytest.fail("derived again"))
    assert facts_of(tmp_path, cache) == kept


def test_facts_that_name_facts_that_are_not_kept_are_no_facts(tmp_path):
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    facts_of(tmp_path, cache)
    path, old, new = KEEPING_EDITS["a helper nothing calls added"]
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))
    facts_of(tmp_path, cache)
    (stored,) = [file for file in cache.glob("project-facts-*.json") if file.name.count(".") == 1]
    key = json.loads(stored.read_text())["key"]
    assert load_facts(cache, str(tmp_path), key) is not None
    for named in ("0" * 32, 7):
        stored.write_text(json.dumps({**json.loads(stored.read_text()), "same_as": named}))
        assert load_facts(cache, str(tmp_path), key) is None


def test_an_edit_whose_touched_piece_changes_derives_the_facts(tmp_path, monkeypatch):
    # The edit reaches another function: the walk from `prepare` comes out otherwise, and the facts are derived.
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    facts_of(tmp_path, cache)
    helpers = tmp_path / "svc/helpers.py"
    helpers.write_text(helpers.read_text().replace("    return tidy()", "    tidy()\n    return extra()\n\n\ndef extra():\n    return 1"))
    walks: list[int] = []
    reach = ProjectModel._reach
    monkeypatch.setattr(ProjectModel, "_reach", lambda self, *args: walks.append(1) or reach(self, *args))
    kept = facts_of(tmp_path, cache)
    assert walks == [1]
    assert kept == facts_of(tmp_path, None)
    assert any(qual == "extra" for _, qual in kept[2])


def cached_without(tmp_path: Path, pattern: str) -> Path:
    """The cache folder of the project of :data:`MODULES`, its facts derived, less its file ``pattern``."""
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    facts_of(tmp_path, cache)
    (found,) = cache.glob(pattern)
    found.unlink()
    return cache


def apply(tmp_path: Path, edit: tuple[str, str, str]) -> None:
    path, old, new = edit
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))


def test_without_the_facts_its_ledger_names_an_edit_derives_the_facts(tmp_path):
    cache = cached_without(tmp_path, "*.ledger.facts.json")
    apply(tmp_path, KEEPING_EDITS["a call of a builtin added to a reached function"])
    assert facts_of(tmp_path, cache) == facts_of(tmp_path, None)


def test_a_part_that_comes_out_as_stored_is_neither_built_nor_written_again(tmp_path, monkeypatch):
    # The parts are keyed by what they are made from, not by the facts' key: an edit that changes what a module
    # defines but neither the names any module calls nor any subclass-index row leaves both files as they are.
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    facts_of(tmp_path, cache)
    (callers,) = cache.glob("*.callers.json")
    (subclasses,) = cache.glob("*.subclasses.json")
    stored = {callers: callers.stat().st_mtime_ns, subclasses: subclasses.stat().st_mtime_ns}
    built: list[int] = []
    callers_index = model_module.callers_index
    monkeypatch.setattr(model_module, "callers_index", lambda rows: built.append(1) or callers_index(rows))
    (tmp_path / "svc" / "helpers.py").write_text(MODULES["svc/helpers.py"] + "\n\ndef spare():\n    return tidy()\n")
    kept = facts_of(tmp_path, cache)  # the callers part is read from its file here, not built
    assert built == []
    assert {part: part.stat().st_mtime_ns for part in stored} == stored
    assert kept == facts_of(tmp_path, None)
    # A call of a new name: the callers part is built and written again under its new key.
    (tmp_path / "svc" / "helpers.py").write_text(MODULES["svc/helpers.py"] + "\n\ndef spare():\n    return sorted([])\n")
    assert facts_of(tmp_path, cache) == facts_of(tmp_path, None)
    assert built and callers.stat().st_mtime_ns != stored[callers]
    assert subclasses.stat().st_mtime_ns == stored[subclasses]


def test_the_index_is_stored_once_while_another_process_derives_the_facts(tmp_path, monkeypatch):
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    config, child = indexed_with_a_child(tmp_path, cache)
    saves: list[str] = []
    save = IndexCache.save
    monkeypatch.setattr(IndexCache, "save", lambda self, used: saves.append("index") or save(self, used))
    events: list[str] = []

    def isolate(meanwhile):
        def stored():
            events.append("storing the index")
            meanwhile()
        facts = child(stored)
        events.append("facts derived")
        return facts

    model = project_for(config).model
    model.prepare(isolate=isolate)
    assert events == ["storing the index", "facts derived"] and saves == ["index"]
    assert list(cache.glob("project-index.*"))
    assert (model.facts.context, model.facts.reached) == facts_of(tmp_path, None)[::3][:2]


def test_an_edit_that_changes_no_rows_derives_without_reading_them(tmp_path, monkeypatch):
    # The rows and names a ledger keeps apart are most of its bytes: a run over one edited file compares their
    # digests, and reads them only to build a part of the facts that no file holds yet.
    write(tmp_path, MODULES)
    cache = tmp_path / "cache"
    facts_of(tmp_path, cache)
    read: list[Path] = []
    load_rows = ledger_store._load_rows
    monkeypatch.setattr(ledger_store, "_load_rows", lambda file, key, paths: read.append(file) or load_rows(file, key, paths))
    path, old, new = EDITS["an entry point removed"]
    (tmp_path / path).write_text((tmp_path / path).read_text().replace(old, new))
    forget_projects()
    keep_index_in(tmp_path, cache)
    model = project_for(default_config(tmp_path)).model
    facts = model.facts
    assert read == []
    afresh = facts_of(tmp_path, None)
    assert (facts.context, facts.evidenced, facts.reached) == afresh[:3]
    # The parts, built when asked from the kept rows and names and the edited module's derived again.
    assert facts_of(tmp_path, cache) == afresh
    assert len(read) == 1


def test_rows_that_cannot_be_read_derive_every_piece_again(tmp_path, monkeypatch):
    cache = cached_without(tmp_path, "*.ledger.rows.json")
    # A base dropped: the rows that changed are found from the module's old rows, which are gone.
    apply(tmp_path, EDITS["a base dropped: the override no longer runs through `Backend`"])
    derived: list[str] = []
    entry_points = ProjectModel._entry_points
    monkeypatch.setattr(ProjectModel, "_entry_points", lambda self, entry: derived.append(entry.path) or entry_points(self, entry))
    assert facts_of(tmp_path, cache) == facts_of(tmp_path, None)
    assert len(set(derived)) == len(MODULES)


def test_a_child_hands_over_the_facts_without_the_parts_their_files_hold(tmp_path):
    # Unpickling a large project's callers index cost the asking process a quarter of a second: the parts the
    # child wrote are read from their files if the asking process asks for them.
    write(tmp_path, MODULES)
    config, child = indexed_with_a_child(tmp_path, tmp_path / "cache")
    model = project_for(config).model
    model.prepare(isolate=child)
    assert model.facts.callers is None and model.facts.subclasses is None
    parts = (model._facts_part("subclasses"), model._facts_part("callers"))
    assert parts[1]  # read from the file
    assert parts == facts_of(tmp_path, None)[6:]
    # Without a cache folder (`--no-cache`) no file holds them: they are handed over with the facts.
    config, child = indexed_with_a_child(tmp_path, None)
    model = project_for(config).model
    model.prepare(isolate=child)
    assert (model.facts.subclasses, model.facts.callers) == parts


def test_summaries_decoded_as_they_come_give_the_facts_of_summaries_decoded_later(tmp_path, monkeypatch):
    # Without a pool for the files, the run decodes each summary while the pool makes the next: the process
    # that derives the facts, forked after, inherits them decoded instead of decoding them all itself.
    write(tmp_path, MODULES)
    events: list[str] = []
    unpack = Packed.unpack
    # Counted when shared for keeping (storing the index unpacks a summary only to write it)
    monkeypatch.setattr(Packed, "unpack", lambda packed, shared=True: (shared and events.append("decoded")) or unpack(packed, shared))

    def mapper(function, paths, names):
        for path, name in zip(paths, names):
            events.append("made")
            yield function(path, name)

    config, child = indexed_with_a_child(tmp_path, tmp_path / "cache")
    model = project_for(config).model
    model.prepare(mapper, isolate=child, decode=True)
    assert events == ["made", "decoded"] * len(MODULES)
    assert all(isinstance(found, ModuleSummary) for found in model._index.entries.values())
    facts = model.facts
    assert (facts.context, facts.evidenced, facts.reached, facts.reached_evidenced, facts.loading, facts.holders) == facts_of(tmp_path, None)[:6]
    # A run that forks workers after leaves them packed: the workers must not inherit every summary decoded.
    events.clear()
    config, child = indexed_with_a_child(tmp_path, tmp_path / "other")
    model = project_for(config).model
    model.prepare(mapper, isolate=child, forks=True, decode=True)
    assert events == ["made"] * len(MODULES)
    assert not any(isinstance(found, ModuleSummary) for found in model._index.entries.values())


def derived_with_the_split(root: Path, split: bool, monkeypatch) -> tuple:
    """The facts and the ledger derived afresh, with the loading and holder pieces handed to a forked copy or not."""
    monkeypatch.setattr(model_module, "SPLIT_DERIVATION_AFTER", 1)
    forget_projects()
    keep_index_in(root, IndexCache(None))
    model = project_for(default_config(root)).model
    model.build()
    model.split_derivation = split
    facts, ledger = model._derive_facts("key", None)
    parts = ("subclass_rows", "subclass_reads", "called", "points", "scripts", "points_reads", "loading", "loading_reads", "holder", "holder_reads")
    pieces = {path: tuple(getattr(pieces, part) for part in parts) for path, pieces in ledger.pieces.items()}
    return facts, pieces, ledger.callees


@pytest.mark.skipif(not hasattr(os, "fork"), reason="processes fork only where the system can")
def test_pieces_derived_in_a_forked_copy_are_the_pieces_derived_here(tmp_path, monkeypatch):
    write(tmp_path, MODULES)
    forks = []
    start = model_module.forked.start
    monkeypatch.setattr(model_module.forked, "start", lambda function: forks.append(1) or start(function))
    split = derived_with_the_split(tmp_path, True, monkeypatch)
    assert forks  # the copy derived them
    assert split == derived_with_the_split(tmp_path, False, monkeypatch)
    facts = split[0]
    assert facts.loading and facts.holders  # pieces the copy derives, not empty ones on both sides


@pytest.mark.skipif(not hasattr(os, "fork"), reason="processes fork only where the system can")
def test_a_forked_copy_that_fails_leaves_the_pieces_to_this_process(tmp_path, monkeypatch):
    write(tmp_path, MODULES)
    here = derived_with_the_split(tmp_path, False, monkeypatch)

    class Failed:  # a copy that died: it gives nothing back
        def result(self):
            return None

        def discard(self):
            raise AssertionError("a copy whose result was asked for is not discarded")

    monkeypatch.setattr(model_module.forked, "start", lambda function: Failed())
    assert derived_with_the_split(tmp_path, True, monkeypatch) == here


@pytest.mark.skipif(not hasattr(os, "fork"), reason="processes fork only where the system can")
def test_a_derivation_that_fails_ends_its_forked_copy(tmp_path, monkeypatch):
    write(tmp_path, MODULES)
    discarded = []
    start = model_module.forked.start

    def tracked(function):
        copy = start(function)
        original = copy.discard
        copy.discard = lambda: discarded.append(1) or original()
        return copy

    monkeypatch.setattr(model_module.forked, "start", tracked)
    monkeypatch.setattr(ProjectModel, "_reach", lambda self, *args: (_ for _ in ()).throw(RecursionError()))
    with pytest.raises(RecursionError):
        derived_with_the_split(tmp_path, True, monkeypatch)
    assert discarded == [1]
