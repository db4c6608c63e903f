"""Project headers of C/C++/CUDA files: where quoted includes are found, which macros they define, and that a
header's change reaches the cached findings of the files that include it."""

from __future__ import annotations

import json

from gemlint.cache import Cache
from gemlint.config import default_config
from gemlint.frontends.native_includes import forget_lookups, include_folders, included_headers, included_macros, macro_definitions
from gemlint.runner import run
from gemlint.server.session import Session

CHECK = "#define CHECK(x) do { if ((x) != 0) return -1; } while (0)\n"
LEAK = '#include "checks.h"\nint step(void);\nint f(unsigned n) {\n  char *p = malloc(n);\n  CHECK(step());\n  free(p);\n  return 0;\n}\n'


def test_continuation_lines_are_part_of_the_macro():
    macros = macro_definitions("#define BAIL(x, ...) \\\n  if (x) \\\n    return 1\n#define PLAIN 3\n")
    assert "return 1" in macros["BAIL"].body and macros["BAIL"].parameters == ("x", "__VA_ARGS__")
    assert macros["PLAIN"].body.strip() == "3" and macros["PLAIN"].parameters is None


def test_the_including_folder_comes_first_then_cmake_include_folders(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("include_directories(include)\ntarget_include_directories(app PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/api)\n")
    for folder in ("include", "api", "src"):
        (tmp_path / folder).mkdir()
    (tmp_path / "include" / "checks.h").write_text("#define CHECK(x) return x\n")
    (tmp_path / "src" / "checks.h").write_text('#include "api.h"\n#define CHECK(x) (void)(x)\n')
    (tmp_path / "api" / "api.h").write_text("#define API_TRY(x) if (x) throw 1\n")
    source = tmp_path / "src" / "a.cpp"
    text = '#include "checks.h"\n#include <vector>\n'
    source.write_text(text)
    assert included_headers(source, text) == [(tmp_path / "src" / "checks.h").resolve(), (tmp_path / "api" / "api.h").resolve()]
    macros = included_macros(source, text)
    assert "return" not in macros["CHECK"].body and "throw" in macros["API_TRY"].body


def test_compile_commands_include_flags(tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "third").mkdir()
    (tmp_path / "third" / "err.h").write_text("#define ERR_RETURN(x) if (x) return x\n")
    database = [{"directory": "..", "command": "cc -Ithird -iquote extra -c src/a.c", "file": "src/a.c"}]
    (tmp_path / "build" / "compile_commands.json").write_text(json.dumps(database))
    (tmp_path / "src").mkdir()
    (tmp_path / ".git").mkdir()  # the search stops at the repository root
    assert (tmp_path / "third").resolve() in {f.resolve() for f in include_folders(str(tmp_path / "src"))}
    assert "ERR_RETURN" in included_macros(tmp_path / "src" / "a.c", '#include "err.h"\n')


def test_a_header_change_reaches_cached_findings(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "checks.h").write_text(CHECK)
    (tmp_path / "src" / "a.c").write_text(LEAK)
    cache = Cache(tmp_path / "cache")
    config = default_config(tmp_path)
    first = run([tmp_path / "src"], config, jobs=1, cache=cache).diagnostics
    assert [d.code for d in first] == ["GEM302"]
    (tmp_path / "src" / "checks.h").write_text("#define CHECK(x) (void)(x)\n")
    assert run([tmp_path / "src"], config, jobs=1, cache=cache).diagnostics == []


def looked_up_before_the_header_appears(tmp_path):
    """A file including ``late.h``, looked up while there is none; then the header is written."""
    (tmp_path / ".git").mkdir()
    source = tmp_path / "a.cpp"
    text = '#include "late.h"\n'
    source.write_text(text)
    assert included_headers(source, text) == []
    (tmp_path / "late.h").write_text("#define LATE 1\n")
    return source, text


def test_a_header_that_appears_is_found_once_the_lookups_are_forgotten(tmp_path):
    source, text = looked_up_before_the_header_appears(tmp_path)
    assert included_headers(source, text) == []  # what the run found is kept: headers are looked up once
    forget_lookups()
    assert included_headers(source, text) == [(tmp_path / "late.h").resolve()]


def test_the_language_server_forgets_the_lookups_when_a_header_changes_on_disk(tmp_path):
    source, text = looked_up_before_the_header_appears(tmp_path)
    session = Session(cwd=tmp_path)
    assert session.file_changed(tmp_path / "late.h") is True
    assert included_headers(source, text) == [(tmp_path / "late.h").resolve()]
    assert session.file_changed(tmp_path / "notes.txt") is False
