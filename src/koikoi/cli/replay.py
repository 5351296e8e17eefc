"""``koikoi replay FILE``: a game record, checked and told turn by turn.

The record is replayed through the engine (every deal, action and settlement
checked, see :mod:`koikoi.game.record`), then printed: round headers with the month
and the dealer, every play, draw and capture, koi-koi calls and stops, each
settlement explained, and the final scores. ``--tui`` opens the terminal
replay viewer instead. ``--analysis FILE`` (what ``koikoi analyze --json``
writes) marks the mistakes; a record annotated by ``koikoi analyze --annotate``
carries its analysis and needs no file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from koikoi.cli.common import CommandError, add_command

if TYPE_CHECKING:
    from koikoi.features.narrate import Mistake
    from koikoi.game.engine import Event, Match
    from koikoi.game.record import GameRecord

__all__ = ["format_replay", "mistake_lines", "register", "run"]


def register(subparsers: Any) -> None:
    """Add ``koikoi replay``."""
    parser = add_command(
        subparsers,
        "replay",
        run=run,
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


def run(args: argparse.Namespace) -> int:
    """Run ``koikoi replay``."""
    from koikoi.game.record import load_record, replay

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
    from koikoi.features.narrate import mistakes_from_analysis, record_analysis
    from koikoi.game.errors import InvalidInputError

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
    from koikoi.features.names import record_names
    from koikoi.features.narrate import Narrator
    from koikoi.i18n import tn

    narrator = Narrator(record_names(record))
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


def _who(record: GameRecord) -> Callable[[int | None], str]:
    """How the replay names a player: ``"player 0 (alice)"`` (``"プレイヤー0（alice）"``),
    an AI, a guest or "you" in the language in use."""
    from koikoi.features.names import display_name
    from koikoi.i18n import t

    def who(player: int | None) -> str:
        if player is None:
            return t("nobody")
        name = display_name(record.identities[player])
        if name == f"player {player}":
            return t("player {n}", n=player)
        return t("player {n} ({name})", n=player, name=name)

    return who


def _lines(record: GameRecord, match: Match) -> Iterator[str]:
    from koikoi.features.narrate import Narrator
    from koikoi.game.cards import MONTH_NAMES, MONTH_NAMES_JA
    from koikoi.game.scoring import YAKU_NAMES
    from koikoi.i18n import language, t, td, tn

    who = _who(record)
    rules = match.rules
    seed = t("none (recorded deals)") if record.seed is None else str(record.seed)
    yield t(
        "Rules: {rules} ({rounds}). Seed: {seed}.",
        rules=rules.name,
        rounds=tn("{n} round", "{n} rounds", rules.game.rounds),
        seed=seed,
    )
    yield t("Players: {first} and {second}.", first=who(0), second=who(1))
    narrator = Narrator((who(0), who(1)), you=None)
    scores = [rules.game.start_points, rules.game.start_points]
    settled = 0
    for event in match.events:
        kind = event.kind
        p = event.player
        if kind == "first_dealer":
            yield _first_dealer_line(event, who)
        elif kind == "round_start":
            month = event.data["month"]
            names = (
                f"{MONTH_NAMES[month - 1]}, {MONTH_NAMES_JA[month - 1]}"
                if language() == "en"
                else MONTH_NAMES_JA[month - 1].split()[0]
            )
            yield ""
            yield t(
                "== Round {round}: month {month} ({names}), dealer {dealer} ==",
                round=event.data["round"],
                month=month,
                names=names,
                dealer=who(event.data["dealer"]),
            )
            if event.data["leader"] != event.data["dealer"]:
                yield t("{who} leads.", who=who(event.data["leader"]))
            yield t("Field: {cards}", cards=" ".join(event.data["field"]))
        elif kind == "hand":
            yield t("Hand of {who}: {cards}", who=who(p), cards=_codes(event.cards))
        elif kind == "redeal":
            why = event.data.get("why")
            yield t("Redeal: {why}.", why=why) if why else t("Redeal: deal checks.")
        elif kind == "instant":
            yield t(
                "{who} holds an instant hand: {yaku} [{cards}], {points}.",
                who=who(p),
                yaku=td(YAKU_NAMES.get(event.data["yaku"], (event.data["yaku"],))[0])
                if language() != "en"
                else event.data["yaku"],
                cards=_codes(event.cards),
                points=tn("{n} point", "{n} points", event.data["points"]),
            )
        elif kind in ("play", "draw", "take"):
            yield "  " + _move_line(event, who(p))
        elif kind == "yaku":
            yield "  " + t("{who} has yaku worth {total}.", who=who(p), total=event.data["total"])
        elif kind == "koikoi":
            yield "  " + t(
                "{who} calls koi-koi! (call {calls})", who=who(p), calls=event.data["calls"]
            )
        elif kind == "stop":
            if event.data.get("automatic"):
                yield "  " + t("{who} stops (automatically).", who=who(p))
            else:
                yield "  " + t("{who} stops.", who=who(p))
        elif kind == "exhausted":
            yield "  " + t("The round is exhausted.")
        elif kind == "round_over":
            settlement = match.settlements[settled]
            settled += 1
            for line in narrator.settlement(settlement):
                yield "  " + line
            scores = [scores[0] + settlement.deltas[0], scores[1] + settlement.deltas[1]]
            yield t(
                "Scores: {first} {a}, {second} {b}.",
                first=who(0),
                a=scores[0],
                second=who(1),
                b=scores[1],
            )
        elif kind == "match_over":
            yield ""
            yield t(
                "== Match over after {rounds} ==",
                rounds=tn("{n} round", "{n} rounds", len(match.settlements)),
            )
    yield t(
        "Final scores: {first} {a}, {second} {b}.",
        first=who(0),
        a=match.scores[0],
        second=who(1),
        b=match.scores[1],
    )
    if match.is_over:
        if match.winner is not None:
            yield t("Winner: {who}.", who=who(match.winner))
        else:
            yield t("A draw.")
    else:
        yield t(
            "The record ends in round {round}: the match is not finished.",
            round=match.round_number,
        )


def _codes(cards: int) -> str:
    from koikoi.game.cards import format_cards

    return format_cards(cards)


def _first_dealer_line(event: Event, who: Callable[[int | None], str]) -> str:
    from koikoi.i18n import t

    data = event.data
    if data["method"] == "draw":
        draws = "; ".join(
            t("{first} draws {a}, {second} draws {b}", first=who(0), a=a, second=who(1), b=b)
            for a, b in data["draws"]
        )
        how = t("First dealer by draw: {draws}.", draws=draws)
    else:
        how = t("First dealer by coin flip.")
    if data["dealer"] == data["leader"]:
        return how + t(" {who} deals.", who=_upper_first(who(data["dealer"])))
    return how + t(
        " {leader} leads round 1; {dealer} deals.",
        leader=_upper_first(who(data["leader"])),
        dealer=who(data["dealer"]),
    )


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _move_line(event: Event, name: str) -> str:
    from koikoi.game.cards import CODES
    from koikoi.i18n import t

    card = CODES[event.card] if event.card is not None else "?"
    got = event.cards & ~(1 << event.card) if event.card is not None else event.cards
    if event.kind == "play":
        if event.data.get("discard"):
            return t("{who} plays {card} to the field without capturing.", who=name, card=card)
        if got:
            return t(
                "{who} plays {card} and captures {cards}.", who=name, card=card, cards=_codes(got)
            )
        return t("{who} plays {card} to the field.", who=name, card=card)
    if event.kind == "draw":
        choice = event.data.get("choice")
        if choice:
            return t(
                "{who} draws {card}, which matches {choices}.",
                who=name,
                card=card,
                choices=t(" and ").join(choice),
            )
        if got:
            return t(
                "{who} draws {card} and captures {cards}.", who=name, card=card, cards=_codes(got)
            )
        return t("{who} draws {card}; it stays on the field.", who=name, card=card)
    return t("{who} takes {cards} with {card}.", who=name, cards=_codes(got), card=card)
