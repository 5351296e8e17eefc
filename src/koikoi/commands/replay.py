"""``koikoi replay FILE``: a game record, checked and told turn by turn.

The record is replayed through the engine (every deal, action and settlement
checked, see :mod:`koikoi.record`), then printed: round headers with the month
and the dealer, every play, draw and capture, koi-koi calls and stops, each
settlement explained, and the final scores. ``--tui`` opens the terminal
replay viewer instead. ``--analysis FILE`` (what ``koikoi analyze --json``
writes) marks the mistakes; a record annotated by ``koikoi analyze --annotate``
carries its analysis and needs no file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from koikoi.engine import Event, Match
    from koikoi.narrate import Mistake
    from koikoi.record import GameRecord

__all__ = ["format_replay", "mistake_lines", "register", "run"]


def register(subparsers: Any) -> None:
    """Add ``koikoi replay``."""
    parser = subparsers.add_parser(
        "replay",
        help="check a game record and print it turn by turn",
        description=(
            "Replay a game record through the engine, checking every deal, action and "
            "settlement, and print the game turn by turn."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="a game record (JSON)")
    parser.add_argument(
        "--tui", action="store_true", help="open the terminal replay viewer (koikoi[tui])"
    )
    parser.add_argument(
        "--analysis",
        metavar="FILE",
        default=None,
        help="mark the mistakes found by an analysis of the record (koikoi analyze --json)",
    )
    parser.add_argument(
        "--no-seed-check",
        action="store_true",
        help="use the recorded deals without comparing them with the seed's shuffles",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi replay``."""
    from koikoi.record import load_record, replay

    record = load_record(args.file)
    mistakes = _mistakes(record, args.analysis)
    if args.tui:
        return _run_tui(record, mistakes)
    match = replay(record, check_seed=not args.no_seed_check)
    for line in format_replay(record, match):
        print(line)
    if mistakes:
        print()
        for line in mistake_lines(record, mistakes):
            print(line)
    return 0


def _mistakes(record: GameRecord, path: str | None) -> dict[int, Mistake]:
    """The mistakes of the analysis in ``path``, else of the record's own analysis."""
    from koikoi.errors import InvalidInputError
    from koikoi.narrate import mistakes_from_analysis, record_analysis

    if path is None:
        data = record_analysis(record)
        return mistakes_from_analysis(data, record) if data is not None else {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read the analysis: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}: not valid JSON: {exc}") from None
    try:
        return mistakes_from_analysis(data, record)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{path}: {exc}") from None


def mistake_lines(record: GameRecord, mistakes: Mapping[int, Mistake]) -> Iterator[str]:
    """The marked mistakes, one line each, in the order played."""
    from koikoi.i18n import tn
    from koikoi.narrate import Narrator
    from koikoi.record import distinct_names

    narrator = Narrator(distinct_names(record.players))
    yield tn("{n} mistake:", "{n} mistakes:", len(mistakes))
    for number in sorted(mistakes):
        m = mistakes[number]
        entry = record.actions[number - 1]
        yield "  " + narrator.t(
            "Round {round}, action {number}, {who} {action}: {mistake}",
            round=entry.round,
            number=number,
            who=narrator.who(m.player),
            action=m.played,
            mistake=narrator.mistake(m),
        )


def _run_tui(record: GameRecord, mistakes: Mapping[int, Mistake]) -> int:
    import importlib

    from koikoi.cli import CommandError

    try:
        module = importlib.import_module("koikoi.tui.replay")
    except ImportError as exc:
        raise CommandError(
            f"the terminal replay viewer is not available ({exc}): install koikoi[tui]"
        ) from None
    run_replay = getattr(module, "run_replay", None)
    if run_replay is None:
        raise CommandError("the terminal replay viewer is not available: install koikoi[tui]")
    status = run_replay(record, mistakes) if mistakes else run_replay(record)
    return int(status or 0)


def format_replay(record: GameRecord, match: Match) -> Iterator[str]:
    """The lines of a replayed match, from its events (full information: hands shown)."""
    for line in _lines(record, match):
        text = line.lstrip()
        yield line[: len(line) - len(text)] + _upper_first(text)


def _lines(record: GameRecord, match: Match) -> Iterator[str]:
    from koikoi.cards import MONTH_NAMES, MONTH_NAMES_JA

    who = record.player_name
    rules = match.rules
    seed = "none (recorded deals)" if record.seed is None else str(record.seed)
    yield f"Rules: {rules.name} ({_count(rules.game.rounds, 'round')}). Seed: {seed}."
    yield f"Players: {who(0)} and {who(1)}."
    scores = [rules.game.start_points, rules.game.start_points]
    settled = 0
    for event in match.events:
        kind = event.kind
        p = event.player
        if kind == "first_dealer":
            yield _first_dealer_line(event, record)
        elif kind == "round_start":
            month = event.data["month"]
            yield ""
            yield (
                f"== Round {event.data['round']}: month {month} "
                f"({MONTH_NAMES[month - 1]}, {MONTH_NAMES_JA[month - 1]}), "
                f"dealer {who(event.data['dealer'])} =="
            )
            if event.data["leader"] != event.data["dealer"]:
                yield f"{who(event.data['leader'])} leads."
            yield f"Field: {' '.join(event.data['field'])}"
        elif kind == "hand":
            yield f"Hand of {who(p)}: {_codes(event.cards)}"
        elif kind == "redeal":
            yield f"Redeal: {event.data.get('why', 'deal checks')}."
        elif kind == "instant":
            yield (
                f"{who(p)} holds an instant hand: {event.data['yaku']} "
                f"[{_codes(event.cards)}], {_count(event.data['points'], 'point')}."
            )
        elif kind in ("play", "draw", "take"):
            yield "  " + _move_line(event, who(p))
        elif kind == "yaku":
            yield f"  {who(p)} has yaku worth {event.data['total']}."
        elif kind == "koikoi":
            yield f"  {who(p)} calls koi-koi! (call {event.data['calls']})"
        elif kind == "stop":
            how = " (automatically)" if event.data.get("automatic") else ""
            yield f"  {who(p)} stops{how}."
        elif kind == "exhausted":
            yield "  The round is exhausted."
        elif kind == "round_over":
            settlement = match.settlements[settled]
            settled += 1
            for line in settlement.explain().splitlines():
                yield "  " + line
            scores = [scores[0] + settlement.deltas[0], scores[1] + settlement.deltas[1]]
            yield f"Scores: {who(0)} {scores[0]}, {who(1)} {scores[1]}."
        elif kind == "match_over":
            yield ""
            yield f"== Match over after {_count(len(match.settlements), 'round')} =="
    yield f"Final scores: {who(0)} {match.scores[0]}, {who(1)} {match.scores[1]}."
    if match.is_over:
        yield f"Winner: {who(match.winner)}." if match.winner is not None else "A draw."
    else:
        yield f"The record ends in round {match.round_number}: the match is not finished."


def _count(n: int, noun: str) -> str:
    """``"1 round"``, ``"2 rounds"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _codes(cards: int) -> str:
    from koikoi.cards import format_cards

    return format_cards(cards)


def _first_dealer_line(event: Event, record: GameRecord) -> str:
    who = record.player_name
    data = event.data
    if data["method"] == "draw":
        draws = "; ".join(f"{who(0)} draws {a}, {who(1)} draws {b}" for a, b in data["draws"])
        how = f"First dealer by draw: {draws}."
    else:
        how = "First dealer by coin flip."
    if data["dealer"] == data["leader"]:
        return f"{how} {_upper_first(who(data['dealer']))} deals."
    return f"{how} {_upper_first(who(data['leader']))} leads round 1; {who(data['dealer'])} deals."


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _move_line(event: Event, name: str) -> str:
    from koikoi.cards import CODES

    card = CODES[event.card] if event.card is not None else "?"
    got = event.cards & ~(1 << event.card) if event.card is not None else event.cards
    if event.kind == "play":
        if event.data.get("discard"):
            return f"{name} plays {card} to the field without capturing."
        if got:
            return f"{name} plays {card} and captures {_codes(got)}."
        return f"{name} plays {card} to the field."
    if event.kind == "draw":
        choice = event.data.get("choice")
        if choice:
            return f"{name} draws {card}, which matches {' and '.join(choice)}."
        if got:
            return f"{name} draws {card} and captures {_codes(got)}."
        return f"{name} draws {card}; it stays on the field."
    return f"{name} takes {_codes(got)} with {card}."
