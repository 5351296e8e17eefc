"""Messages in English and Japanese: one catalog for the terminal game, the CLI and the web page.

The English text in the source is the message key, as in gettext. Japanese
translations live in ``koikoi/i18n/locales/ja/*.json``: each file, named after the
part of the program it serves (``game.json`` for the words of the game,
``tui.json``, ``web.json``, ``cli.json``, ``common.json`` for messages several
interfaces show, ...), is one object mapping English messages to their Japanese
text, and each message is in exactly one file. The web
page fetches the same catalog from the server (``/api/messages/ja``), so a
message is translated once for every interface. Placeholders use
``str.format`` names (``{points}``); a translation must use exactly the
placeholders of its English message, which the tests check for every message
the source uses.

Plurals: English has two forms, Japanese one. :func:`tn` takes both English
forms and a count; the Japanese entry is keyed by the singular form.

>>> set_language("en")
>>> tn("{n} point", "{n} points", 1)
'1 point'
>>> set_language("ja")
>>> tn("{n} point", "{n} points", 6)
'6点'
>>> set_language("en")
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from importlib import resources
from typing import Final

from koikoi.game.errors import InvalidInputError

__all__ = [
    "LANGUAGES",
    "N_",
    "catalog",
    "detect_language",
    "language",
    "player_name",
    "set_language",
    "t",
    "td",
    "tn",
    "translate",
]

#: Supported languages: code → name in that language.
LANGUAGES: Final[Mapping[str, str]] = {"en": "English", "ja": "日本語"}

_current = "en"


def _check(lang: str) -> str:
    if lang not in LANGUAGES:
        allowed = ", ".join(LANGUAGES)
        raise InvalidInputError(f"language {lang!r} is not supported; choose one of: {allowed}")
    return lang


@functools.cache
def catalog(lang: str) -> Mapping[str, str]:
    """The translations of one language: English message → translated text.

    English has no catalog (the messages are English); it returns ``{}``.

    >>> catalog("en")
    {}
    """
    if _check(lang) == "en":
        return {}
    merged: dict[str, str] = {}
    home: dict[str, str] = {}  # message → the file that has it
    folder = resources.files("koikoi.i18n").joinpath("locales", lang)
    for part in sorted(folder.iterdir(), key=lambda p: p.name):
        if not part.name.endswith(".json"):
            continue
        data = json.loads(part.read_text("utf-8"))
        if not isinstance(data, dict):
            raise InvalidInputError(f"locales/{lang}/{part.name}: expected one JSON object")
        for key, value in data.items():
            if key.startswith("//"):
                continue
            if key in home:
                raise InvalidInputError(
                    f"locales/{lang}/{part.name}: {key!r} is also in {home[key]}; "
                    "a message belongs in one file"
                )
            home[key] = part.name
            merged[key] = str(value)
    return merged


def set_language(lang: str) -> None:
    """Choose the language of every later message (``"en"`` or ``"ja"``)."""
    global _current
    _current = _check(lang)


def language() -> str:
    """The language in use."""
    return _current


def detect_language(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale asks for: ``"ja"`` for a Japanese locale, else ``"en"``.

    Looks at ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES`` and ``LANG``, in the order
    gettext does.

    >>> detect_language({"LANG": "ja_JP.UTF-8"})
    'ja'
    >>> detect_language({"LC_ALL": "C", "LANG": "ja_JP.UTF-8"})
    'en'
    """
    env = os.environ if environ is None else environ
    for key in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(key, "")
        if value:
            first = value.split(":")[0].lower()
            return "ja" if first.startswith("ja") else "en"
    return "en"


def translate(message: str, lang: str | None = None, /, **params: object) -> str:
    """``message`` in ``lang`` (default: the language in use), placeholders filled.

    A message missing from the catalog falls back to English; the test suite
    makes sure that never happens for a message the source uses.
    """
    text = catalog(_current if lang is None else lang).get(message, message)
    return text.format(**params) if params else text


def t(message: str, /, **params: object) -> str:
    """``message`` in the language in use, with its placeholders filled."""
    return translate(message, None, **params)


def N_(message: str, /) -> str:
    """Mark ``message`` for the catalog without translating it (gettext's ``N_``).

    For English made at import time (module constants, Textual ``BINDINGS``),
    before a language is chosen; the code that shows it translates it with
    :func:`td`. The test suite finds ``N_("...")`` like ``t("...")``.
    """
    return message


def td(text: str, /) -> str:
    """A name or description from the core's data tables, in the language in use.

    For text that is not written in a ``t()`` call: card, month and kind names,
    yaku names and what they need, multiplier names, level titles and
    descriptions, rule-set descriptions (the test suite lists those tables and
    checks each entry has its translation, ``locales/ja/game.json`` and
    ``opponents.json``), and
    messages marked with :func:`N_`. Text that is not in the catalog (a house
    rule set's own description) stays as it is.

    >>> set_language("ja")
    >>> td("Pine - Crane")
    '松に鶴'
    >>> set_language("en")
    >>> td("Pine - Crane")
    'Pine - Crane'
    """
    return catalog(_current).get(text, text) if _current != "en" else text


_AI_SEAT = re.compile(r"AI \((.+)\)")


def player_name(name: str, lang: str | None = None, /) -> str:
    """A player's name to show: an AI seat's name (``"AI (Expert)"``, as games and
    records store it) in ``lang``; any other name as typed.

    >>> player_name("AI (Expert)", "ja"), player_name("Hana", "ja")
    ('AI（達人）', 'Hana')
    """
    found = _AI_SEAT.fullmatch(name)
    if found is None:
        return name
    level = found.group(1)
    table = catalog(_current if lang is None else lang)
    if table and level not in table:
        return name
    return translate("AI ({level})", lang, level=table.get(level, level))


def tn(singular: str, plural: str, n: int, /, **params: object) -> str:
    """The form of a counted message for ``n``; ``{n}`` is filled with the count."""
    if _current == "en":
        text = singular if n == 1 else plural
    else:
        text = catalog(_current).get(singular, singular if n == 1 else plural)
    return text.format(n=n, **params)
