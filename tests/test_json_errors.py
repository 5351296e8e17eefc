"""Every command that reads a JSON file says once where the JSON goes wrong.

Some of :mod:`json`'s messages end in "at" ("Unterminated string starting at",
"Invalid control character at"): the files' errors once read "... at at line 1".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from koikoi.cli import main
from koikoi.game.errors import json_error_text

BROKEN = {
    "unterminated string": (
        '{"players": ["Aiko',
        "Unterminated string starting at line 1 column 14",
    ),
    "control character": (
        '{"players": ["Ai\tko"]}',
        "Invalid control character at line 1 column 17",
    ),
    "missing value": ('{"players": }', "Expecting value at line 1 column 13"),
}
COMMANDS = {
    "replay": ["replay"],
    "analyze": ["analyze"],
    "import guan": ["import", "guan"],
    "keeper": ["keeper", "--file"],
    "play --resume": ["play", "--resume"],
}


@pytest.mark.parametrize("text,expected", BROKEN.values(), ids=list(BROKEN))
def test_json_error_text_says_the_place_once(text: str, expected: str) -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    assert json_error_text(info.value) == expected


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
@pytest.mark.parametrize("text,expected", BROKEN.values(), ids=list(BROKEN))
def test_commands_name_the_file_and_the_place_once(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: list[str],
    text: str,
    expected: str,
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(text, encoding="utf-8")
    status = main([*command, str(path)])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.strip() == f"koikoi: error: {path}: not valid JSON: {expected}"
    assert not re.search(r"\b(\w+) \1\b", err), err
