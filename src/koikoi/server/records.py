"""Game records of the web game and step-through replay frames (no I/O).

A finished game is kept as a :class:`koikoi.game.record.GameRecord` (JSON, see
docs/records.md): the same format ``koikoi replay`` reads.
:func:`replay_frames` replays a record with :func:`koikoi.game.record.iter_steps`
(every deck, action and settlement checked) into the frames the replay page
steps through. Frames show both hands and the stock count: they are only built
for finished games, where nothing is hidden any more.

Each frame also tells its step in words (:class:`koikoi.features.narrate.Narrator`, in the
page's language), the same words as the terminal replay, and, when an analysis
of the record is at hand (given beside the record, or carried in its
``meta["analysis"]``), marks the move as a mistake where it lost clearly against
the best move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from koikoi.features.names import record_names, seat_identity
from koikoi.features.narrate import Mistake, Narrator, mistakes_from_analysis, record_analysis
from koikoi.game.cards import CODES, format_cards
from koikoi.game.engine import Match
from koikoi.game.errors import KoiKoiError, RecordError
from koikoi.game.record import GameRecord, ReplayStep, iter_steps, record_from_dict

__all__ = [
    "MAX_REPLAY_ACTIONS",
    "build_record",
    "record_of",
    "replay_frames",
]

MAX_REPLAY_ACTIONS: Final = 20_000


def record_of(
    match: Match,
    *,
    game_id: str,
    mode: str,
    players: Sequence[dict[str, Any]],
    forfeit: dict[str, Any] | None = None,
) -> GameRecord:
    """The :class:`GameRecord` of a match of the web game: ``players`` are the seats'
    public data, stored as who they are (:func:`koikoi.features.names.seat_identity`:
    an AI, a named person, or a guest tagged by the seat); ``forfeit``
    (``{"player", "reason"}``) when a player forfeited the match."""
    return GameRecord.from_match(
        match,
        identities=[seat_identity(i, dict(p)) for i, p in enumerate(players)],
        meta={"source": "koikoi serve", "game": game_id, "mode": mode},
        forfeit=forfeit,
    )


def build_record(
    match: Match,
    *,
    game_id: str,
    mode: str,
    players: Sequence[dict[str, Any]],
    forfeit: dict[str, Any] | None = None,
) -> str:
    """The record of a match as JSON text (``koikoi.game.record`` format)."""
    return record_of(match, game_id=game_id, mode=mode, players=players, forfeit=forfeit).to_json()


def _frame(
    step: ReplayStep,
    tags: list[int],
    narrator: Narrator,
    mistake: Mistake | None,
) -> dict[str, Any]:
    """One step as JSON; ``tags`` holds the number of the round being played (updated
    by the step's ``round_start`` events), which tags each event as the live game does."""
    rnd = step.round
    action = step.action
    events = []
    for event in step.events:
        data = event.to_dict()
        if event.kind == "round_start":
            tags[0] = int(event.data.get("round", tags[0]))
        data.setdefault("round", tags[0])
        events.append(data)
    return {
        "index": step.index,
        "kind": step.kind,
        "actor": action.player if action is not None else None,
        "action": action.action if action is not None else None,
        "round": rnd.round_number,
        "month": rnd.month,
        "dealer": rnd.dealer,
        "current": rnd.current,
        "phase": "over" if step.is_over else rnd.phase.name.lower(),
        "hands": [format_cards(h).split() for h in rnd.hands],
        "field": format_cards(rnd.field).split(),
        "piles": [format_cards(p).split() for p in rnd.piles],
        "stock_count": rnd.stock_count,
        "drawn": CODES[rnd.drawn] if rnd.drawn >= 0 else None,
        "round_scores": list(rnd.scores),
        "koikoi_calls": list(rnd.koikoi_calls),
        "match_scores": list(step.match_scores),
        "events": events,
        "over": step.is_over,
        "action_text": narrator.action(action.action) if action is not None else None,
        "narration": narrator.step(step),
        "mistake": (
            {**mistake.to_dict(), "text": narrator.mistake(mistake)}
            if mistake is not None
            else None
        ),
    }


def replay_frames(
    record: GameRecord | dict[str, Any],
    *,
    analysis: Any = None,
    lang: str | None = None,
) -> dict[str, Any]:
    """Every step of a finished record, replayed and checked, as JSON-ready frames.

    Args:
        record: the record (a :class:`GameRecord` or its JSON object).
        analysis: an analysis of the record (``koikoi analyze --json``); without
            one, the record's own ``meta["analysis"]``, if any, marks the mistakes.
        lang: the language of the words (``"en"``, ``"ja"``; ``None``: the
            language in use).

    Raises:
        RecordError: if the record is malformed, unfinished or does not replay,
            or the analysis is not an analysis of this record.
    """
    rec = record if isinstance(record, GameRecord) else record_from_dict(record)
    if not rec.finished:
        raise RecordError("only a finished game can be replayed")
    if len(rec.actions) > MAX_REPLAY_ACTIONS:
        raise RecordError(f"the record has too many actions (at most {MAX_REPLAY_ACTIONS})")
    source = analysis if analysis is not None else record_analysis(rec)
    try:
        mistakes = mistakes_from_analysis(source, rec) if source is not None else {}
        names = record_names(rec, lang)
        narrator = Narrator(names, lang)
        tags = [1]  # the first dealer is chosen for round 1
        frames = []
        number = 0
        for step in iter_steps(rec):
            if step.kind == "action":
                number += 1
            found = mistakes.get(number) if step.kind == "action" else None
            frames.append(_frame(step, tags, narrator, found))
    except KoiKoiError as exc:
        raise RecordError(str(exc)) from None
    return {
        "analysed": source is not None,
        "mistakes": len(mistakes),
        "type": "replay",
        "rules": rec.rules,
        "players": list(rec.players),
        "identities": [i.to_dict() for i in rec.identities],
        "names": names,
        "scores": list(rec.scores),
        "winner": rec.winner,
        "settlements": rec.settlements,
        "frames": frames,
    }
