"""YAML files in UTF-16 or UTF-32 (a manifest saved by a Windows editor) are text, as YAML parsers read them: their
zero bytes are halves of characters, not a sign of a binary file."""

from __future__ import annotations

import codecs
import json

import pytest
from click.testing import CliRunner

from gemlint.cli import main
from gemlint.text import SourceError, decode_yaml

MANIFEST = "apiVersion: 1\r\nproviders:\r\n  - name: dashboards\r\n    folder: ''\r\n"


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF16_BE + MANIFEST.encode("utf-16-be"),
        codecs.BOM_UTF16_LE + MANIFEST.encode("utf-16-le"),
        MANIFEST.encode("utf-16-le"),
        MANIFEST.encode("utf-16-be"),
        codecs.BOM_UTF32_BE + MANIFEST.encode("utf-32-be"),
        codecs.BOM_UTF32_LE + MANIFEST.encode("utf-32-le"),
        MANIFEST.encode("utf-32-be"),
        codecs.BOM_UTF8 + MANIFEST.encode(),
        MANIFEST.encode(),
    ],
    ids=["utf16be-bom", "utf16le-bom", "utf16le", "utf16be", "utf32be-bom", "utf32le-bom", "utf32be", "utf8-bom", "utf8"],
)
def test_a_yaml_file_is_decoded_in_the_encoding_its_first_bytes_say(data):
    assert decode_yaml(data).text == MANIFEST


def test_zero_bytes_inside_utf8_yaml_are_still_refused():
    with pytest.raises(SourceError, match="NUL bytes"):
        decode_yaml(b"kind: Pod\nspec: \x00\x00\n")


def test_a_utf16_manifest_is_linted_not_reported_as_binary(tmp_path, monkeypatch):
    (tmp_path / "dashboards.yml").write_bytes(codecs.BOM_UTF16_BE + MANIFEST.encode("utf-16-be"))
    (tmp_path / "blob.yml").write_bytes(b"kind: Pod\n\x00\x01\x02\x00binary\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [".", "--format", "json", "--no-cache", "--exit-zero"])
    found = json.loads(result.stdout)
    assert [(f["path"], f["code"]) for f in found] == [("blob.yml", "GEM000")]
