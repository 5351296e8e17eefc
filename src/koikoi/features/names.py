"""Who a player is, named by one rule everywhere, in the language shown.

A record stores who its players are (:class:`~koikoi.game.record.Identity`), not a
name in the language the match was played in; every face names them with
:func:`display_name`:

- the local player of ``koikoi play``: "You" (あなた);
- an AI: "AI (Expert)" (AI（達人）), its level's title in the language shown;
- a person who gave a name: that name, as given, in every language;
- a person who gave no name: a **guest**, "Guest" and a short tag that tells them
  apart (ゲスト): at a table, in its record and its replay, their seat ("Guest 1",
  "Guest 2"), the same for both players and every spectator; on the leaderboard,
  which lists people rather than seats, four characters derived from their player
  id (:func:`guest_tag`).

Because "AI (Expert)", "Guest 2" and "You" name someone else, a person may not
take them (in either language): :func:`check_name` refuses them.

>>> from koikoi.game.record import Identity
>>> display_name(Identity.ai("level:8", "Expert"), "ja"), display_name(Identity.guest(2), "ja")
('AI（達人）', 'ゲスト2')
>>> display_name(Identity.person("Hana"), "ja")
'Hana'
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final

from koikoi.features.opponents import level_choice
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, Identity
from koikoi.i18n import N_, translate

__all__ = [
    "check_name",
    "display_name",
    "guest_tag",
    "play_identities",
    "record_names",
    "seat_identity",
    "shown_name",
]

_GUEST: Final = N_("Guest {tag}")
_AI: Final = N_("AI ({level})")
_YOU: Final = N_("You")

# Names that stand for someone else: an AI's title, a guest's name, "You", in
# English or Japanese (full-width brackets and spaces included).
_RESERVED: Final = (
    re.compile(r"ai\s*[(（].*[)）]", re.IGNORECASE),
    re.compile(r"guest(\s+\S{1,8})?", re.IGNORECASE),
    re.compile(r"ゲスト\s*\S{0,8}"),
    re.compile(r"you|あなた", re.IGNORECASE),
)
NAME_RULE: Final = (
    "name must be your own name, not an AI's title such as 'AI (Expert)', "
    "a guest's name such as 'Guest 2', or 'You'"
)
"""Why :func:`check_name` refused a name (the server's error message)."""


def display_name(identity: Identity, lang: str | None = None) -> str:
    """How ``identity`` is called in ``lang`` (default: the language in use)."""
    if identity.kind == "you":
        return translate(_YOU, lang)
    if identity.kind == "ai":
        return translate(_AI, lang, level=translate(identity.name, lang))
    if identity.kind == "guest":
        return translate(_GUEST, lang, tag=identity.name)
    return identity.name


def shown_name(name: str, lang: str | None = None) -> str:
    """An English name (:attr:`Identity.english <koikoi.game.record.Identity.english>`,
    as statistics and the records' ``players`` keep it) in ``lang``.

    >>> shown_name("AI (Novice)", "ja"), shown_name("Guest 1", "ja"), shown_name("Hana", "ja")
    ('AI（入門）', 'ゲスト1', 'Hana')
    """
    return display_name(Identity.from_name(name), lang)


def record_names(record: GameRecord, lang: str | None = None) -> list[str]:
    """The names of a record's two players in ``lang``, told apart when they are the
    same (two copies of one agent get ``A`` and ``B``)."""
    names = [display_name(i, lang) for i in record.identities]
    if names[0] == names[1]:
        return [f"{names[0]} A", f"{names[1]} B"]
    return names


def seat_identity(seat: int, info: dict[str, Any]) -> Identity:
    """Who sits at ``seat`` of a web game, from the seat's public data
    (``{"kind": "human" | "ai", "name", "agent"}``): an AI, a named person, or a guest
    tagged by the seat (1 or 2).

    >>> seat_identity(1, {"kind": "human", "name": ""}).english
    'Guest 2'
    """
    if info.get("kind") == "ai":
        agent = str(info.get("agent") or "")
        choice = level_choice(agent)
        return Identity.ai(agent, choice.level.title if choice is not None else None)
    name = " ".join(str(info.get("name") or "").split())
    return Identity.person(name) if name else Identity.guest(seat + 1)


def play_identities(opponent: str, title: str | None = None) -> tuple[Identity, Identity]:
    """The two players of ``koikoi play``: you, and the AI playing ``opponent`` (called
    by ``title``, default its level's title, else the spec)."""
    choice = level_choice(opponent)
    level = title or (choice.level.title if choice is not None else None)
    return Identity.you(), Identity.ai(opponent, level)


def guest_tag(player_id: str) -> str:
    """The tag of an unnamed player on the leaderboard: four characters derived from
    their player id (the id itself is not shown).

    >>> len(guest_tag("abc")), guest_tag("abc") == guest_tag("abc")
    (4, True)
    """
    return hashlib.sha256(player_id.encode("utf-8")).hexdigest()[:4].upper()


def check_name(name: str) -> str:
    """``name`` with its spaces tidied, if a person may take it ("" for none).

    Raises:
        InvalidInputError: the name is someone else's (:data:`NAME_RULE`).

    >>> check_name("  Hana  Sato ")
    'Hana Sato'
    >>> try:
    ...     check_name("AI（上級）")
    ... except InvalidInputError:
    ...     print("refused")
    refused
    """
    tidy = " ".join(name.replace("\u3000", " ").split())
    if any(p.fullmatch(tidy) for p in _RESERVED):
        raise InvalidInputError(NAME_RULE)
    return tidy
