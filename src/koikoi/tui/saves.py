"""Saving and resuming an unfinished match, and keeping the records of finished ones.

A save is a game record (:mod:`koikoi.game.record`) of the unfinished match: the
rules in full, the seed, the deals and the actions so far, with the
opponent's spec in ``meta``. Resuming checks the record by replaying it, then
re-plays its actions on a fresh ``Match(rules, seed=seed)`` so that the match
can go on with new deals from the same seed. The opponent's choices are drawn
from a generator seeded by ``(seed, number of actions)``, so a resumed match
goes on exactly as it would have.

Files live under :func:`data_home` (``$KOIKOI_HOME``, else
``$XDG_DATA_HOME/koikoi``, else ``~/.local/share/koikoi``): saves in
``saves/``, records of finished matches in ``records/``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from koikoi.features.names import display_name, play_identities
from koikoi.game.actions import parse_action
from koikoi.game.engine import Match
from koikoi.game.errors import IllegalActionError, RecordError
from koikoi.game.record import GameRecord, load_record, replay
from koikoi.game.rules import Rules

__all__ = [
    "SavedGame",
    "data_home",
    "latest_save",
    "load_game",
    "records_dir",
    "restore_match",
    "save_game",
    "save_record",
    "saved_from_record",
    "saves_dir",
]


def data_home() -> Path:
    """Where the game keeps its files: ``$KOIKOI_HOME``, ``$XDG_DATA_HOME/koikoi`` or
    ``~/.local/share/koikoi``."""
    home = os.environ.get("KOIKOI_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser() / "koikoi"
    return Path.home() / ".local" / "share" / "koikoi"


def records_dir() -> Path:
    """The default directory of the records of finished matches."""
    return data_home() / "records"


def saves_dir() -> Path:
    """The default directory of saved (unfinished) matches."""
    return data_home() / "saves"


@dataclass(frozen=True, slots=True)
class SavedGame:
    """An unfinished match: enough to rebuild it exactly."""

    rules: Rules
    seed: int
    opponent: str
    actions: tuple[int, ...] = ()
    names: tuple[str, str] = field(default=("You", "AI"))


def _record_of(match: Match, opponent: str) -> GameRecord:
    # The record stores who the players are (you, the AI), not the names shown in the
    # language of this game: a face names them in its own (koikoi.features.names).
    return GameRecord.from_match(
        match,
        identities=play_identities(opponent),
        meta={"opponent": opponent, "app": "koikoi play"},
    )


def save_game(match: Match, path: str | Path, *, opponent: str) -> Path:
    """Write an unfinished match as a record (the save file); returns the path.

    Raises:
        RecordError: if the file cannot be written.
    """
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"cannot create {str(p.parent)!r}: {exc.strerror or exc}") from None
    return _record_of(match, opponent).save(p)


def saved_from_record(record: GameRecord, *, source: str = "save") -> SavedGame:
    """The match of a record, ready to resume (the record is checked by replaying it).

    Raises:
        RecordError: the record does not replay, has no seed, or is finished.
    """
    if record.finished:
        raise RecordError(f"{source}: this match is finished: nothing to resume")
    if record.seed is None:
        raise RecordError(f"{source}: the record has no seed, so its match cannot go on")
    replay(record)
    actions = []
    for entry in record.actions:
        actions.append(parse_action(entry.action).id)
    opponent = record.meta.get("opponent", "greedy")
    if not isinstance(opponent, str) or not opponent.strip():
        raise RecordError(f"{source}: meta.opponent must be an agent spec such as 'greedy'")
    names = (display_name(record.identities[0]), display_name(record.identities[1]))
    return SavedGame(record.build_rules(), record.seed, opponent.strip(), tuple(actions), names)


def load_game(path: str | Path) -> SavedGame:
    """Read a save file (an unfinished match's record).

    Raises:
        RecordError: the file is missing, not a record, does not replay, or is finished.
    """
    return saved_from_record(load_record(Path(path)), source=str(path))


def restore_match(saved: SavedGame) -> Match:
    """Rebuild the match of a save by re-playing its actions on the seed's deals.

    Raises:
        RecordError: naming the first action that is not legal where it is played.
    """
    match = Match(saved.rules, seed=saved.seed)
    for i, action_id in enumerate(saved.actions):
        try:
            match.apply(action_id)
        except IllegalActionError as exc:
            raise RecordError(f"the save does not replay at action {i + 1}: {exc}") from None
    return match


def latest_save(directory: str | Path) -> Path | None:
    """The most recently written ``*.json`` save in ``directory``, if any."""
    d = Path(directory)
    try:
        files = [p for p in d.glob("*.json") if p.is_file()]
    except OSError:
        return None
    if not files:
        return None
    return max(files, key=lambda p: (p.stat().st_mtime, p.name))


def _unique(path: Path) -> Path:
    if not path.exists():
        return path
    for n in range(2, 10_000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists():
            return candidate
    raise RecordError(f"too many records named {path.stem!r} in {str(path.parent)!r}")


def save_record(
    match: Match,
    directory: str | Path,
    *,
    opponent: str,
    stamp: str = "",
) -> Path:
    """Save a match as a record in ``directory`` (created if needed); returns the file.

    Raises:
        RecordError: if the record cannot be written.
    """
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"cannot create {str(d)!r}: {exc.strerror or exc}") from None
    name = f"koikoi-{stamp + '-' if stamp else ''}seed{match.seed}.json"
    return _record_of(match, opponent).save(_unique(d / name))
