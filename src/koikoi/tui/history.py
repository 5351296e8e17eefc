"""The history of finished matches: one file, read by the statistics screen and ``koikoi stats``.

Every match the terminal game plays to its end is appended to
``history.jsonl`` under :func:`~koikoi.tui.saves.data_home` (``$KOIKOI_HOME``,
else ``$XDG_DATA_HOME/koikoi``, else ``~/.local/share/koikoi``): one line of
JSON per match, written at once, so the file only grows and a line is never
half rewritten. Each line holds the match's full game record (so that it can
be replayed without the separate record file) and the facts the statistics
need that the record does not say::

    {"format": "koikoi-history", "version": 1, "finished": "2026-11-25T16:30:00Z",
     "seat": 0, "opponent": "expert", "record_file": "/home/.../records/koikoi-...json",
     "record": {... a koikoi game record ...}}

``seat`` is the human's seat in the record, ``opponent`` the agent spec played
against, ``record_file`` the record saved beside it (or null). The figures
themselves (games, wins, points, yaku made, koi-koi calls and their success, by
rule set and by opponent) are :mod:`koikoi.features.stats`'s: :func:`summary` passes the
records to :func:`koikoi.features.stats.summarize`.

Reading is forgiving: a line that cannot be read (cut off by a crash, edited by
hand, written by a later version) is skipped and reported in
:attr:`History.problems` by its line number, and the other games still count.

>>> import tempfile
>>> from koikoi.game.engine import Match
>>> m = Match(seed=5)
>>> while not m.is_over:
...     m.apply(m.legal_ids()[0])
>>> path = Path(tempfile.mkdtemp()) / "history.jsonl"
>>> _ = append_match(path, m, opponent="greedy")
>>> history = read_history(path)
>>> len(history.games), history.problems
(1, ())
>>> summary(history).total.games
1
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from koikoi.features.names import play_identities
from koikoi.features.stats import Summary, summarize
from koikoi.game.engine import Match
from koikoi.game.errors import KoiKoiError, RecordError
from koikoi.game.record import GameRecord, record_from_dict
from koikoi.tui.saves import data_home

__all__ = [
    "FORMAT",
    "VERSION",
    "FinishedGame",
    "History",
    "append_game",
    "append_match",
    "history_path",
    "read_history",
    "summary",
]

FORMAT: Final = "koikoi-history"
VERSION: Final = 1


def history_path() -> Path:
    """The default history file: ``history.jsonl`` under the data directory."""
    return data_home() / "history.jsonl"


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """One line of the history: a finished match and how it was played.

    Attributes:
        record: the match's game record (finished).
        seat: the human's seat in the record (0 or 1).
        opponent: the agent spec played against (``"expert"``, ``"level:3"``).
        finished: when the match ended (ISO 8601, UTC).
        record_file: where the record was also saved, if it was.
        line: the line number in the history file (1 for the first).
    """

    record: GameRecord
    seat: int
    opponent: str
    finished: str
    record_file: str | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class History:
    """What a history file holds: the games, oldest first, and the lines skipped.

    Attributes:
        path: the file read.
        games: every finished match that could be read, in file order (oldest first).
        problems: one message per skipped line, naming the line.
    """

    path: Path
    games: tuple[FinishedGame, ...] = ()
    problems: tuple[str, ...] = ()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def append_game(
    path: str | Path,
    record: GameRecord,
    *,
    opponent: str,
    seat: int = 0,
    record_file: str | Path | None = None,
    finished: str | None = None,
) -> Path:
    """Add a finished match to the history file (created, with its folder, if needed).

    Raises:
        RecordError: the record is not finished, the seat is not 0 or 1, or the
            file cannot be written (nothing is written then).
    """
    if not record.finished:
        raise RecordError("only a finished match goes into the history: this one is not over")
    if isinstance(seat, bool) or seat not in (0, 1):
        raise RecordError(f"seat must be 0 or 1 (the human's seat), not {seat!r}")
    entry = {
        "format": FORMAT,
        "version": VERSION,
        "finished": finished or _now(),
        "seat": seat,
        "opponent": opponent,
        "record_file": None if record_file is None else str(record_file),
        "record": record.to_dict(),
    }
    line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("a", encoding="utf-8") as out:
            out.write(line)
    except OSError as exc:
        raise RecordError(f"cannot write the history {str(p)!r}: {exc.strerror or exc}") from None
    return p


def append_match(
    path: str | Path,
    match: Match,
    *,
    opponent: str,
    seat: int = 0,
    record_file: str | Path | None = None,
) -> Path:
    """Add a finished :class:`~koikoi.game.engine.Match` to the history (see :func:`append_game`).

    Raises:
        RecordError: as :func:`append_game`, or the match cannot be recorded.
    """
    record = GameRecord.from_match(
        match,
        identities=play_identities(opponent),  # who played, not the names shown
        meta={"opponent": opponent, "app": "koikoi play"},
    )
    return append_game(path, record, opponent=opponent, seat=seat, record_file=record_file)


def _entry(data: Any, number: int) -> FinishedGame:
    """One history line's game; raises :class:`RecordError` saying what is wrong."""
    if not isinstance(data, dict):
        raise RecordError("expected a JSON object")
    if data.get("format") != FORMAT:
        raise RecordError(f"format is {data.get('format')!r}, expected {FORMAT!r}")
    if data.get("version") != VERSION:
        raise RecordError(f"version {data.get('version')!r}: this koikoi reads version {VERSION}")
    seat = data.get("seat")
    if isinstance(seat, bool) or seat not in (0, 1):
        raise RecordError(f"seat must be 0 or 1, not {seat!r}")
    opponent = data.get("opponent")
    if not isinstance(opponent, str):
        raise RecordError(f"opponent must be an agent spec, not {opponent!r}")
    finished = data.get("finished")
    if not isinstance(finished, str):
        raise RecordError(f"finished must be a time, not {finished!r}")
    record_file = data.get("record_file")
    if record_file is not None and not isinstance(record_file, str):
        raise RecordError(f"record_file must be a path or null, not {record_file!r}")
    record = record_from_dict(data.get("record"), where="record")
    if not record.finished:
        raise RecordError("the record is not finished")
    return FinishedGame(record, seat, opponent, finished, record_file, number)


def read_history(path: str | Path) -> History:
    """The games of a history file, oldest first; a missing file has none.

    Lines that cannot be read are skipped and named in :attr:`History.problems`.

    Raises:
        RecordError: the file exists but cannot be read at all.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return History(p)
    except OSError as exc:
        raise RecordError(f"cannot read the history {str(p)!r}: {exc.strerror or exc}") from None
    games: list[FinishedGame] = []
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            what = exc.msg.removesuffix(" at")
            problems.append(f"line {number}: not valid JSON: {what} at column {exc.colno}")
            continue
        except RecursionError:
            problems.append(f"line {number}: JSON nested too deeply")
            continue
        try:
            games.append(_entry(data, number))
        except KoiKoiError as exc:
            problems.append(f"line {number}: {exc}")
    return History(p, tuple(games), tuple(problems))


def summary(history: History) -> Summary:
    """The human's statistics over the history (:func:`koikoi.features.stats.summarize`)."""
    return summarize((game.record, game.seat) for game in history.games)
