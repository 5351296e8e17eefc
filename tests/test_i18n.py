"""Every message the source uses exists in English and Japanese.

The English text is the key (see koikoi/i18n.py). This test collects every
message the package passes to ``t``/``tn``/``N_`` (Python), ``KK.t``/``KK.tn``
(JavaScript) and ``data-i18n*`` attributes (HTML), and checks that the Japanese
catalog has each one, non-empty, with the same placeholders.
"""

from __future__ import annotations

import ast
import functools
import html
import json
import re
import string
from pathlib import Path

import pytest

from koikoi import i18n
from koikoi.game.errors import InvalidInputError

PACKAGE = Path(i18n.__file__).parent.parent

_JS_CALL = re.compile(r"""\b(?:KK\.)?tn?\(\s*(["'`])((?:\\.|(?!\1).)*)\1""", re.S)
_HTML_ATTR = re.compile(r"""data-i18n(?:-label|-title|-placeholder)?="([^"]*)\"""")


def _python_messages() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else node.func.attr
                if isinstance(node.func, ast.Attribute)
                else ""
            )
            if name not in ("t", "tn", "N_"):
                continue
            # the first argument is the key (tn's plural form is English only)
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found[arg.value] = f"{path.relative_to(PACKAGE)}:{node.lineno}"
    return found


def _js_unescape(text: str) -> str:
    return text.replace('\\"', '"').replace("\\'", "'").replace("\\n", "\n").replace("\\\\", "\\")


def _web_messages() -> dict[str, str]:
    found: dict[str, str] = {}
    static = PACKAGE / "server" / "static"
    for path in sorted(static.glob("*.js")):
        text = path.read_text("utf-8")
        for match in _JS_CALL.finditer(text):
            if match.group(1) == "`" and "${" in match.group(2):
                continue  # a template with code in it is not a message key
            found[_js_unescape(match.group(2))] = path.name
    for path in sorted(static.glob("*.html")):
        for match in _HTML_ATTR.finditer(path.read_text("utf-8")):
            found[html.unescape(match.group(1))] = path.name
    return found


def _data_messages() -> dict[str, str]:
    """The core's data tables that the interfaces show through ``td()``."""
    from koikoi.agents.expert import LEVELS
    from koikoi.features.rules_help import YAKU_NEEDS, YAKU_NEEDS_WHEN
    from koikoi.game.cards import ENGLISH_NAMES, MONTH_NAMES, Kind
    from koikoi.game.rules import PRESET_NAMES, get_rules
    from koikoi.game.scoring import MULTIPLIER_NAMES, YAKU_NAMES
    from koikoi.server.catalog import KIND_NAMES

    found: dict[str, str] = {}
    for name in ENGLISH_NAMES:
        found[name] = "cards.ENGLISH_NAMES"
    for name in MONTH_NAMES:
        found[name] = "cards.MONTH_NAMES"
    for english, _ in KIND_NAMES.values():
        found[english] = "server.catalog.KIND_NAMES"
    for kind in Kind:
        found[kind.label] = "cards.Kind.label"
    for english, _ in YAKU_NAMES.values():
        found[english] = "scoring.YAKU_NAMES"
    for needs in [*YAKU_NEEDS.values(), *(when[1] for when in YAKU_NEEDS_WHEN.values())]:
        found[needs] = "rules_help.YAKU_NEEDS"
    for name in MULTIPLIER_NAMES.values():
        found[name] = "scoring.MULTIPLIER_NAMES"
    for level in LEVELS:
        found[level.title] = found[level.description] = "agents.expert.LEVELS"
    for preset in PRESET_NAMES:
        found[get_rules(preset).description] = f"presets/{preset}.toml"
    return found


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


@functools.cache  # the source is read once for every test
def _all_messages() -> dict[str, str]:
    return {**_data_messages(), **_python_messages(), **_web_messages()}


def test_the_scanner_finds_messages_in_every_kind_of_file() -> None:
    web = _web_messages()
    assert web.get("{n} point") == "common.js"
    assert web.get("Language") == "_languages.html"  # the pages' shared parts too


def test_every_message_has_a_japanese_translation() -> None:
    ja = i18n.catalog("ja")
    missing = {m: where for m, where in _all_messages().items() if not ja.get(m, "").strip()}
    assert not missing, "messages without Japanese: " + "; ".join(
        f"{where}: {m!r}" for m, where in sorted(missing.items(), key=lambda kv: kv[1])
    )


def test_translations_keep_the_placeholders() -> None:
    ja = i18n.catalog("ja")
    wrong = {
        m: (sorted(_placeholders(m)), sorted(_placeholders(ja[m])))
        for m in _all_messages()
        if m in ja and _placeholders(m) - {"n"} != _placeholders(ja[m]) - {"n"}
    }
    assert not wrong, f"placeholders differ (English, Japanese): {wrong}"


def test_the_catalog_has_no_unused_messages() -> None:
    used = _all_messages()
    unused = sorted(m for m in i18n.catalog("ja") if m not in used)
    assert not unused, f"catalog entries no source uses (remove or use them): {unused}"


def test_each_message_is_in_one_catalog_file() -> None:
    folder = PACKAGE / "i18n" / "locales" / "ja"
    files: dict[str, list[str]] = {}
    for path in sorted(folder.glob("*.json")):
        for key in json.loads(path.read_text("utf-8")):
            if not key.startswith("//"):  # comments
                files.setdefault(key, []).append(path.name)
    assert files, f"no catalog in {folder}"
    twice = {key: names for key, names in files.items() if len(names) > 1}
    assert not twice, f"messages in more than one file (keep each in one): {twice}"


def test_language_switch_and_fallback() -> None:
    try:
        i18n.set_language("ja")
        assert i18n.t("{n} point", n=2) == "2点"
        assert i18n.t("a message nobody translated {x}", x=1) == "a message nobody translated 1"
        assert i18n.tn("{n} point", "{n} points", 3) == "3点"
        i18n.set_language("en")
        assert i18n.tn("{n} point", "{n} points", 3) == "3 points"
    finally:
        i18n.set_language("en")


def test_unknown_language_is_refused_and_changes_nothing() -> None:
    i18n.set_language("en")
    with pytest.raises(InvalidInputError, match=r"'fr'.*en, ja"):
        i18n.set_language("fr")
    assert i18n.language() == "en"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"LANG": "ja_JP.UTF-8"}, "ja"),
        ({"LANGUAGE": "ja:en", "LANG": "en_US.UTF-8"}, "ja"),
        ({"LC_ALL": "en_GB.UTF-8", "LANG": "ja_JP.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_detect_language(env: dict[str, str], expected: str) -> None:
    assert i18n.detect_language(env) == expected
