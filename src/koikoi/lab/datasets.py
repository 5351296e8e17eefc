"""Datasets shipped with the package: the 201 recorded human games.

The 2023 Koi-Koi transformer study (S. Guan, J. Wang, R. Zhu, J. Qian, Z. Wei,
"Learning to Play Koi-Koi Hanafuda Card Games with Transformers", IEEE
Transactions on Artificial Intelligence 4(6)) published 201 games between
people, played under the KoiKoi-Japan app's rules (the ``koikoi-japan``
preset), under the MIT license. The package ships them converted to koikoi
records (``koikoi/lab/data/human-games.jsonl.gz``: one record a line, gzip),
with the license beside them (``koikoi/lab/data/LICENSE-human-games``);
``scripts/build-human-games.py`` makes the file from the published game files
(:mod:`koikoi.lab.guan`, which checks every turn on the way).

* :func:`human_games` — the 201 games as :class:`~koikoi.game.record.GameRecord`,
  in the order of the published file names (``1.json`` to ``201.json``); 200 are
  finished, the last one stops after its first round.
* :func:`human_decisions` — the players' decisions as
  :class:`~koikoi.lab.human.Decision` pairs of a view and the recorded action
  id, for imitation learning: the view is the deciding player's own
  (:class:`~koikoi.game.views.PlayerView`), never the opponent's hand or the
  stock.

>>> games = human_games()
>>> len(games), games[0].players, games[0].build_rules().name
(201, ['Guan-1', 'Guan-2'], 'koikoi-japan')
>>> first = next(human_decisions(games[:1]))
>>> first.game, first.kind, first.view.player == first.view.current
('1.json', 'hand', True)
>>> first.recorded in first.view.legal_ids
True
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from typing import Final

from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord, record_from_dict
from koikoi.lab.human import Decision, decisions

__all__ = [
    "HUMAN_GAMES",
    "HUMAN_GAMES_COUNT",
    "HUMAN_GAMES_LICENSE",
    "game_name",
    "human_decisions",
    "human_games",
]

HUMAN_GAMES: Final = "human-games.jsonl.gz"
"""The file of the human games in ``koikoi/lab/data/``: one koikoi record (JSON) a
line, gzip-compressed."""
HUMAN_GAMES_LICENSE: Final = "LICENSE-human-games"
"""The license of the human games (MIT), in ``koikoi/lab/data/``."""
HUMAN_GAMES_COUNT: Final = 201
"""How many games the file holds."""


@cache
def _lines() -> tuple[str, ...]:
    data = resources.files("koikoi.lab").joinpath("data", HUMAN_GAMES).read_bytes()
    try:
        text = gzip.decompress(data).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise RecordError(f"{HUMAN_GAMES}: not a gzip file of UTF-8 text ({exc})") from None
    return tuple(line for line in text.splitlines() if line.strip())


def human_games() -> list[GameRecord]:
    """The 201 human games as records (a new list of new records at each call).

    Each record has no seed (its decks are the only chance), the players'
    names as recorded (``Guan-1``, ``Guan-2``; ``Player 1``, ``Player 2`` in
    the last game), and ``meta["guan"]`` with the published file's name and
    the game's start and end times. :func:`koikoi.game.record.replay` with
    ``check_seed=False`` plays one through the engine and checks its result.

    Raises:
        RecordError: the shipped file is damaged (naming the line).
    """
    games: list[GameRecord] = []
    for n, line in enumerate(_lines(), 1):
        where = f"{HUMAN_GAMES}, line {n}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{where}: not JSON ({exc.msg})") from None
        games.append(record_from_dict(data, where=where))
    return games


def game_name(record: GameRecord) -> str:
    """The published file name of a human game (``"17.json"``), or ``""`` for
    another record."""
    guan = record.meta.get("guan")
    name = guan.get("file") if isinstance(guan, dict) else None
    return name if isinstance(name, str) else ""


def human_decisions(
    games: Iterable[GameRecord] | None = None, *, forced: bool = False
) -> Iterator[Decision]:
    """The recorded decisions of ``games`` (default: every human game), in order.

    Each :class:`~koikoi.lab.human.Decision` pairs ``view`` (what the deciding
    player saw: their own hand, the field, both capture piles, the counts of
    hidden cards, the match so far, the legal action ids) with ``recorded``,
    the id of the action they took (:mod:`koikoi.game.actions`); ``game``
    is the published file name and ``kind`` is ``"hand"``, ``"drawn"`` or
    ``"koikoi"``. Encode a view for a network with
    :func:`koikoi.kernel.encoding.encode`.

    Args:
        games: the records to read (any koikoi records will do).
        forced: also yield decisions with a single legal action (left out by
            default: they tell nothing about the player).

    Raises:
        RecordError: a record does not replay.
    """
    for record in human_games() if games is None else games:
        yield from decisions(record, game=game_name(record), forced=forced)
