"""Game files of the KoiKoi-Japan app (the "Guan" format) to and from koikoi records.

The 2023 transformer study of Koi-Koi (S. Guan et al.) published human games
played in a KoiKoi-Japan app as one JSON file per game: the players' names
and starting points, the result, and for every round the dealer, both hands,
the field and the stock as dealt, the round's winner and points, then every
turn (the hand card played and what it captured, the drawn card and what it
captured, and the koi-koi decision). Cards are ``[month, k]`` pairs with ``k``
1 to 4 in the order of the card codes of :mod:`koikoi.game.cards`.

:func:`guan_to_record` replays such a game through the engine under the
``koikoi-japan`` rule set, dealing the recorded hands, field and stock, and
turns every turn into actions; it checks on the way that every recorded move
is legal and does what the file says (captures, drawn cards, koi-koi offers),
and that every round's winner and points and the final scores agree. Any
disagreement raises :class:`~koikoi.game.errors.RecordError` naming the file, the
round and the turn. :func:`record_to_guan` writes a koikoi record of a
``koikoi-japan`` match back in the Guan format.

>>> from koikoi.game.engine import Match
>>> from koikoi.game.record import GameRecord
>>> from koikoi.game.rules import get_rules
>>> m = Match(get_rules("koikoi-japan"), seed=5)
>>> while not m.is_over:
...     m.apply(m.legal_ids()[0])
>>> rec = GameRecord.from_match(m, players=["ann", "ben"], created="2024-01-01T00:00:00Z")
>>> data = record_to_guan(rec)
>>> data["info"]["player1Name"], data["info"]["numRound"]
('ann', 8)
>>> again = guan_to_record(data, created="2024-01-01T00:00:00Z")
>>> again.actions == rec.actions and again.scores == rec.scores
True
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from koikoi.game.actions import (
    Discard,
    KoiKoi,
    Play,
    Stop,
    TakeDrawn,
    action_from_id,
    describe_action_id,
)
from koikoi.game.cards import CODES, card_list, parse_card
from koikoi.game.engine import Event, Match, Phase
from koikoi.game.errors import IllegalActionError, RecordError
from koikoi.game.record import GameRecord, read_json_file, replay
from koikoi.game.rules import Rules, diff_rules, get_rules
from koikoi.game.scoring import EXHAUSTED_REASONS

__all__ = [
    "GUAN_RULES",
    "card_of",
    "export_guan",
    "guan_card",
    "guan_to_json",
    "guan_to_record",
    "import_guan",
    "is_guan",
    "json_files",
    "load_guan",
    "record_to_guan",
]

GUAN_RULES: Final = "koikoi-japan"
"""The preset whose rules the Guan games were played under."""
BOARD_SLOTS: Final = 16
"""The app keeps the field in 16 slots (a saved game lists them, empty ones as ``[0, 0]``)."""


# ------------------------------------------------------------------ cards


def card_of(value: Any, what: str) -> int:
    """The card id of a Guan card ``[month, k]``: ``(month - 1) * 4 + (k - 1)``.

    Raises:
        RecordError: naming ``what`` when ``value`` is not such a pair.
    """
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and 1 <= value[0] <= 12
        and 1 <= value[1] <= 4
    ):
        month: int = value[0]
        k: int = value[1]
        return (month - 1) * 4 + (k - 1)
    raise RecordError(
        f"{what} must be a card [month, k] (month 1 to 12, k 1 to 4), not {_short(value)}"
    )


def guan_card(card: int) -> list[int]:
    """The Guan pair ``[month, k]`` of card id ``card``."""
    return [card // 4 + 1, card % 4 + 1]


def _short(value: Any) -> str:
    text = json.dumps(value) if _jsonable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


# ------------------------------------------------------------------ reading


@dataclass(frozen=True, slots=True)
class _Turn:
    player: int
    card: int
    capture: tuple[int, ...]
    drawn: int
    capture2: tuple[int, ...]
    koikoi: bool | None


@dataclass(frozen=True, slots=True)
class _Round:
    dealer: int
    hands: tuple[tuple[int, ...], tuple[int, ...]]
    field: tuple[int, ...]
    pile: tuple[int, ...]
    """The stock as the file lists it: the last card is drawn first."""
    winner: int | None
    """The file's ``roundWinner``: 0 (nobody made a yaku), 1, 2; None while unfinished."""
    points: tuple[int, int] | None
    turns: tuple[_Turn, ...]

    def deck(self) -> list[int]:
        """The round's deal in the engine's order: dealer's hand, other hand, field, stock
        top card first."""
        d = self.dealer
        return [*self.hands[d], *self.hands[1 - d], *self.field, *reversed(self.pile)]


@dataclass(frozen=True, slots=True)
class _Game:
    names: tuple[str, str]
    start_points: tuple[int, int]
    rounds_planned: int
    start_time: Any
    end_time: Any
    over: bool
    winner: int | None
    end_points: tuple[int, int] | None
    rounds: tuple[_Round, ...]


def _obj(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise RecordError(f"{what} must be a JSON object, not {_short(data)}")
    return data


def _key(data: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in data:
        raise RecordError(f"{what}: missing key {key!r}")
    return data[key]


def _int(value: Any, what: str, *, allowed: Sequence[int] | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{what} must be an integer, not {_short(value)}")
    if allowed is not None and value not in allowed:
        raise RecordError(f"{what} must be one of {', '.join(map(str, allowed))}, not {value}")
    return value


def _cards(value: Any, what: str, length: Sequence[int] | None = None) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise RecordError(f"{what} must be a list of cards, not {_short(value)}")
    cards = tuple(card_of(v, f"{what}[{i}]") for i, v in enumerate(value))
    if length is not None and len(cards) not in length:
        raise RecordError(
            f"{what} must hold {' or '.join(map(str, length))} cards, not {len(cards)}"
        )
    if len(set(cards)) != len(cards):
        raise RecordError(f"{what} lists a card twice")
    return cards


def _numbered(data: Mapping[str, Any], prefix: str, what: str) -> list[Any]:
    """The values of keys ``prefix1``, ``prefix2``, ... in order; no gaps, nothing else."""
    numbers: dict[int, Any] = {}
    for key, value in data.items():
        tail = key[len(prefix) :] if key.startswith(prefix) else ""
        if not tail.isdigit() or tail.startswith("0"):
            raise RecordError(
                f"{what}: unexpected key {key!r} (expected {prefix}1, {prefix}2, ...)"
            )
        numbers[int(tail)] = value
    for n in range(1, len(numbers) + 1):
        if n not in numbers:
            raise RecordError(f"{what}: missing {prefix}{n}")
    return [numbers[n] for n in range(1, len(numbers) + 1)]


def _read_turn(data: Any, what: str) -> _Turn:
    t = _obj(data, what)
    koikoi = _key(t, "isKoiKoi", what)
    if koikoi not in (True, False, None):
        raise RecordError(f"{what}: isKoiKoi must be true, false or null, not {_short(koikoi)}")
    return _Turn(
        player=_int(_key(t, "playerInTurn", what), f"{what}: playerInTurn", allowed=(1, 2)) - 1,
        card=card_of(_key(t, "discardCard", what), f"{what}: discardCard"),
        capture=_cards(_key(t, "collectCard", what), f"{what}: collectCard", (0, 2, 4)),
        drawn=card_of(_key(t, "drawCard", what), f"{what}: drawCard"),
        capture2=_cards(_key(t, "collectCard2", what), f"{what}: collectCard2", (0, 2, 4)),
        koikoi=koikoi,
    )


def _read_round(data: Any, what: str) -> _Round:
    r = _obj(data, what)
    basic = _obj(_key(r, "basic", what), f"{what}: basic")
    where = f"{what}: basic"
    hand1 = _cards(_key(basic, "initHand1", where), f"{where}.initHand1", (8,))
    hand2 = _cards(_key(basic, "initHand2", where), f"{where}.initHand2", (8,))
    field = _cards(_key(basic, "initBoard", where), f"{where}.initBoard", (8,))
    pile = _cards(_key(basic, "initPile", where), f"{where}.initPile", (24,))
    dealt = set(hand1) | set(hand2) | set(field) | set(pile)
    if len(dealt) != 48:
        missing = " ".join(CODES[c] for c in range(48) if c not in dealt)
        raise RecordError(f"{where}: the deal is not a full deck: missing {missing}")
    winner = _key(basic, "roundWinner", where)
    p1 = _key(basic, "player1RoundPts", where)
    p2 = _key(basic, "player2RoundPts", where)
    if winner is None:
        if p1 is not None or p2 is not None:
            raise RecordError(f"{where}: round points given but no roundWinner")
        points = None
    else:
        winner = _int(winner, f"{where}.roundWinner", allowed=(0, 1, 2))
        points = (_int(p1, f"{where}.player1RoundPts"), _int(p2, f"{where}.player2RoundPts"))
    turns = tuple(
        _read_turn(t, f"{what}, turn {n}")
        for n, t in enumerate(
            _numbered({k: v for k, v in r.items() if k != "basic"}, "turn", what), 1
        )
    )
    return _Round(
        dealer=_int(_key(basic, "Dealer", where), f"{where}.Dealer", allowed=(1, 2)) - 1,
        hands=(hand1, hand2),
        field=field,
        pile=pile,
        winner=winner,
        points=points,
        turns=turns,
    )


def _read_game(data: Any, *, where: str = "guan game") -> _Game:
    """Check the shape of parsed Guan JSON; names the key that is wrong."""
    game = _obj(data, where)
    info = _obj(_key(game, "info", where), f"{where}: info")
    result = _obj(_key(game, "result", where), f"{where}: result")
    names: list[str] = []
    for p in (1, 2):
        name = _key(info, f"player{p}Name", f"{where}: info")
        if not isinstance(name, str) or not name.strip():
            raise RecordError(f"{where}: info.player{p}Name must be a non-empty string")
        names.append(name)
    start = (
        _int(_key(info, "player1InitPts", f"{where}: info"), f"{where}: info.player1InitPts"),
        _int(_key(info, "player2InitPts", f"{where}: info"), f"{where}: info.player2InitPts"),
    )
    planned = _int(_key(info, "numRound", f"{where}: info"), f"{where}: info.numRound")
    over = _key(result, "isOver", f"{where}: result")
    if not isinstance(over, bool):
        raise RecordError(f"{where}: result.isOver must be true or false, not {_short(over)}")
    winner: int | None = None
    end: tuple[int, int] | None = None
    if over:
        winner = _int(
            _key(result, "gameWinner", f"{where}: result"),
            f"{where}: result.gameWinner",
            allowed=(0, 1, 2),
        )
        end = (
            _int(_key(result, "player1EndPts", f"{where}: result"), f"{where}: player1EndPts"),
            _int(_key(result, "player2EndPts", f"{where}: result"), f"{where}: player2EndPts"),
        )
    record = _obj(_key(game, "record", where), f"{where}: record")
    rounds = tuple(
        _read_round(r, f"{where}: round {k}")
        for k, r in enumerate(_numbered(record, "round", f"{where}: record"), 1)
    )
    if not rounds:
        raise RecordError(f"{where}: the record holds no round")
    for k, rnd in enumerate(rounds, 1):
        if rnd.winner is None and (over or k < len(rounds)):
            raise RecordError(f"{where}: round {k} has no roundWinner but the game went on")
    return _Game(
        names=(names[0], names[1]),
        start_points=start,
        rounds_planned=planned,
        start_time=info.get("startTime"),
        end_time=info.get("endTime"),
        over=over,
        winner=winner,
        end_points=end,
        rounds=rounds,
    )


def is_guan(data: Any) -> bool:
    """Whether parsed JSON looks like a Guan game (an object with ``info`` and ``record``)."""
    return isinstance(data, dict) and "record" in data and "info" in data and "format" not in data


def load_guan(source: str | Path) -> tuple[Any, str]:
    """The parsed JSON of a Guan game file and the name to use in messages.

    Raises:
        RecordError: the file cannot be read or is not JSON.
    """
    return read_json_file(source, what="Guan game file")


# ------------------------------------------------------------------ import


class _Coin(random.Random):
    """The chance of a converted game: the first-dealer coin flip comes out as recorded.

    Every deal comes from the file; any later call (the engine wanting a deal the
    file does not hold) draws from a fixed generator, and the caller reports it.
    """

    def __init__(self, first_dealer: int) -> None:
        super().__init__(0)
        self._first: float | None = 0.25 if first_dealer == 0 else 0.75

    def random(self) -> float:
        if self._first is not None:
            value, self._first = self._first, None
            return value
        return super().random()


def _mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _names(mask: int) -> str:
    return " ".join(CODES[c] for c in card_list(mask)) or "nothing"


def _guan_names(cards: Sequence[int]) -> str:
    return " ".join(CODES[c] for c in cards) or "nothing"


def _who(p: int) -> str:
    return f"player {p + 1}"


def _new_events(match: Match, before: int, kind: str) -> Event | None:
    return next((e for e in match.events[before:] if e.kind == kind), None)


def _choose(legal: list[int], card: int, capture: tuple[int, ...]) -> int | None:
    """The legal action that plays ``card`` and captures what the file says, if any."""
    options = [
        (i, a)
        for i in legal
        if isinstance(a := action_from_id(i), Play | Discard) and a.card == card
    ]
    if len(options) == 1:
        return options[0][0]
    for i, a in options:
        if isinstance(a, Play) and a.target is not None and a.target in capture:
            return i
        if isinstance(a, Discard) and not capture:
            return i
    return options[0][0] if options and capture else None


def _play_turn(match: Match, turn: _Turn, k: int, where: str) -> None:
    """Apply one recorded turn of round ``k`` (hand card, drawn card, koi-koi decision)
    and check it."""
    if len(match.settlements) >= k:
        s = match.settlements[k - 1]
        raise RecordError(
            f"{where}: under {GUAN_RULES} rules the round is already over ({s.reason}, "
            f"points {list(s.deltas)})"
        )
    rnd = match.round
    p = turn.player
    if rnd.phase is not Phase.PLAY or rnd.current != p:
        raise RecordError(
            f"{where}: the file has {_who(p)} play, but {_who(rnd.current)} is to "
            f"{rnd.phase.name.lower()} under {GUAN_RULES} rules"
        )
    if not rnd.hands[p] >> turn.card & 1:
        raise RecordError(
            f"{where}: {_who(p)} plays {CODES[turn.card]}, which is not in their hand "
            f"({_names(rnd.hands[p])})"
        )
    settled = len(match.settlements)
    legal = rnd.legal_ids()
    action = _choose(legal, turn.card, turn.capture)
    if action is None:
        raise RecordError(
            f"{where}: {_who(p)} plays {CODES[turn.card]} capturing "
            f"{_guan_names(turn.capture)}, which is not legal; legal: "
            + ", ".join(describe_action_id(i) for i in legal)
        )
    before = len(match.events)
    match.apply(action)
    play = _new_events(match, before, "play")
    _check_capture(CODES[turn.card], play.cards if play is not None else 0, turn.capture, where)
    draw = _new_events(match, before, "draw")
    if draw is None or draw.card != turn.drawn:
        drawn = CODES[draw.card] if draw is not None and draw.card is not None else "nothing"
        raise RecordError(
            f"{where}: the engine draws {drawn} from the stock; the file says {CODES[turn.drawn]}"
        )
    got = draw.cards
    if match.phase is Phase.TAKE:
        targets = [
            i
            for i in match.legal_ids()
            if isinstance(a := action_from_id(i), TakeDrawn) and a.target in turn.capture2
        ]
        if not targets:
            raise RecordError(
                f"{where}: the drawn {CODES[turn.drawn]} may capture "
                f"{' or '.join(draw.data.get('choice', []))}; the file says "
                f"{_guan_names(turn.capture2)}"
            )
        before = len(match.events)
        match.apply(targets[0])
        take = _new_events(match, before, "take")
        got = take.cards if take is not None else 0
    _check_capture(f"the drawn {CODES[turn.drawn]}", got, turn.capture2, where)
    _decide(match, turn, settled, where)


def _check_capture(card: str, got: int, capture: tuple[int, ...], where: str) -> None:
    """Raise :class:`RecordError` unless ``card`` captured (``got``) what the file says."""
    if got != _mask(capture):
        raise RecordError(
            f"{where}: {card} captures {_names(got)} under {GUAN_RULES} rules; "
            f"the file says {_guan_names(capture)}"
        )


def _decide(match: Match, turn: _Turn, settled: int, where: str) -> None:
    p = turn.player
    if not match.is_over and match.phase is Phase.DECIDE:
        if turn.koikoi is None:
            raise RecordError(
                f"{where}: {_who(p)} may call koi-koi or stop under {GUAN_RULES} rules, "
                "but the file records no decision (isKoiKoi null)"
            )
        match.apply(KoiKoi() if turn.koikoi else Stop())
        return
    if turn.koikoi is True:
        raise RecordError(
            f"{where}: the file has {_who(p)} call koi-koi, but {GUAN_RULES} rules offer "
            "no decision here"
        )
    if turn.koikoi is False:
        # The round ended without a decision: it must be a stop of this player's
        # (the engine stops automatically when the hands run out).
        settlement = match.settlements[settled] if len(match.settlements) > settled else None
        if settlement is None or settlement.reason != "stop" or settlement.winner != p:
            raise RecordError(
                f"{where}: the file has {_who(p)} stop (isKoiKoi false), but "
                f"{GUAN_RULES} rules offer no decision here"
            )


def _check_round_result(match: Match, rnd: _Round, k: int, where: str) -> None:
    if len(match.settlements) < k:
        r = match.round
        raise RecordError(
            f"{where}: round {k}: the file ends the round after {len(rnd.turns)} turns, but "
            f"under {GUAN_RULES} rules it goes on ({_who(r.current)} to "
            f"{r.phase.name.lower()})"
        )
    s = match.settlements[k - 1]
    if rnd.points is None:  # pragma: no cover - _read_game only leaves the last round open
        return
    recorded_winner = None if rnd.winner == 0 else (rnd.winner or 0) - 1
    engine_winner = None if s.exhausted else s.winner
    if recorded_winner != engine_winner or tuple(s.deltas) != rnd.points:
        raise RecordError(
            f"{where}: round {k} result differs: the file has roundWinner {rnd.winner} and "
            f"points {list(rnd.points)}; under {GUAN_RULES} rules the round ends "
            f"({s.reason}) with points {list(s.deltas)}"
        )


def _check_rules(game: _Game, rules: Rules, where: str) -> None:
    start = rules.game.start_points
    if game.start_points != (start, start):
        raise RecordError(
            f"{where}: the players start with {list(game.start_points)} points; "
            f"{GUAN_RULES} rules start with {start} each"
        )
    if game.rounds_planned != rules.game.rounds:
        raise RecordError(
            f"{where}: the game is planned for {game.rounds_planned} rounds; "
            f"{GUAN_RULES} rules play {rules.game.rounds}"
        )
    if len(game.rounds) > rules.game.rounds:
        raise RecordError(
            f"{where}: the file holds {len(game.rounds)} rounds; {GUAN_RULES} rules play "
            f"{rules.game.rounds}"
        )


def guan_to_record(
    data: Any,
    *,
    where: str = "guan game",
    created: str | None = None,
) -> GameRecord:
    """The koikoi record of a Guan game (parsed JSON), replayed and checked.

    The record has no seed: its deals are the file's, the first dealer is the
    dealer of the file's first round (a coin flip under ``koikoi-japan`` rules).
    ``meta`` keeps the file's name (``where``) and its start and end times under
    ``"guan"``.

    Args:
        data: the parsed JSON of one game file.
        where: the name used in error messages (usually the file path).
        created: the record's creation time (default: now).

    Raises:
        RecordError: the data is not a Guan game (naming the key), or it does not
            replay under ``koikoi-japan`` rules (naming the round and the turn).
    """
    game = _read_game(data, where=where)
    rules = get_rules(GUAN_RULES)
    _check_rules(game, rules, where)
    decks = [r.deck() for r in game.rounds]
    match = Match(rules, rng=_Coin(game.rounds[0].dealer), decks=decks, events=True)
    for k, rnd in enumerate(game.rounds, 1):
        here = f"{where}: round {k}"
        if match.is_over:
            raise RecordError(
                f"{here}: the match is already over under {GUAN_RULES} rules (scores "
                f"{match.scores})"
            )
        redeal = next((e for e in match.events if e.kind == "redeal"), None)
        if redeal is not None:
            raise RecordError(
                f"{here}: {GUAN_RULES} rules deal this round again "
                f"({redeal.data.get('why', 'deal checks')}); the file plays it"
            )
        if match.round.dealer != rnd.dealer:
            raise RecordError(
                f"{here}: the file has {_who(rnd.dealer)} deal; under {GUAN_RULES} rules "
                f"{_who(match.round.dealer)} deals"
            )
        for n, turn in enumerate(rnd.turns, 1):
            try:
                _play_turn(match, turn, k, f"{here}, turn {n}")
            except IllegalActionError as exc:  # pragma: no cover - actions come from legal_ids
                raise RecordError(f"{here}, turn {n}: {exc}") from None
        if rnd.winner is not None:
            _check_round_result(match, rnd, k, where)
        elif len(match.settlements) >= k:
            raise RecordError(
                f"{here}: the round is over under {GUAN_RULES} rules but the file has no "
                "result for it"
            )
    _check_end(match, game, where)
    guan: dict[str, Any] = {"file": Path(where).name if where != "guan game" else None}
    guan["startTime"] = game.start_time
    guan["endTime"] = game.end_time
    return GameRecord.from_match(
        match, players=list(game.names), meta={"source": "guan", "guan": guan}, created=created
    )


def _check_end(match: Match, game: _Game, where: str) -> None:
    n = len(game.rounds)
    if len(match.deals) > n:
        raise RecordError(
            f"{where}: the file ends after round {n}, but under {GUAN_RULES} rules the match "
            f"goes on (scores {match.scores})"
        )
    if game.over != match.is_over:
        state = "over" if match.is_over else "not over"
        raise RecordError(
            f"{where}: result.isOver is {str(game.over).lower()}, but the match is {state} "
            f"under {GUAN_RULES} rules"
        )
    if game.end_points is not None and tuple(match.scores) != game.end_points:
        raise RecordError(
            f"{where}: final scores differ: the file has {list(game.end_points)}, "
            f"{GUAN_RULES} rules give {match.scores}"
        )
    if game.over:
        winner = None if game.winner == 0 else (game.winner or 0) - 1
        if winner != match.winner:
            engine = "a draw" if match.winner is None else _who(match.winner)
            raise RecordError(
                f"{where}: the file has gameWinner {game.winner}; {GUAN_RULES} rules give {engine}"
            )


def json_files(paths: Iterable[str | Path]) -> list[Path]:
    """The JSON files named by ``paths``: a file as given, a folder's ``*.json`` files in
    natural order (``2.json`` before ``10.json``).

    Raises:
        RecordError: a path that does not exist, or a folder without JSON files.
    """
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = sorted((f for f in p.glob("*.json") if f.is_file()), key=_natural)
            if not found:
                raise RecordError(f"{str(p)!r} holds no .json file")
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise RecordError(f"no such file or folder: {str(p)!r}")
    return out


def _natural(path: Path) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def import_guan(path: str | Path, *, created: str | None = None) -> GameRecord:
    """Read a Guan game file and convert it (see :func:`guan_to_record`)."""
    data, where = load_guan(path)
    return guan_to_record(data, where=where, created=created)


# ------------------------------------------------------------------ export


class _Board:
    """The app's field: cards keep their slot; a laid card takes the first free slot."""

    def __init__(self, cards: Sequence[int]) -> None:
        self.slots: list[int | None] = list(cards)

    def lay(self, card: int) -> None:
        for i, c in enumerate(self.slots):
            if c is None:
                self.slots[i] = card
                return
        self.slots.append(card)

    def take(self, cards: int) -> list[int]:
        """Remove the cards of the set ``cards``; returns them in slot order."""
        out: list[int] = []
        for i, c in enumerate(self.slots):
            if c is not None and cards >> c & 1:
                out.append(c)
                self.slots[i] = None
        return out

    def to_guan(self) -> list[list[int]]:
        slots = [guan_card(c) if c is not None else [0, 0] for c in self.slots]
        return slots + [[0, 0]] * (BOARD_SLOTS - len(slots))


@dataclass
class _Export:
    """One round being written back: the deal, the turns and the places of the cards."""

    number: int
    dealer: int
    deck: list[int]
    board: _Board
    hands: list[list[int]]
    collected: list[list[list[int]]]
    turns: list[dict[str, Any]]
    basic: dict[str, Any]

    @classmethod
    def start(cls, number: int, dealer: int, deck: list[int]) -> _Export:
        own, other, field = deck[0:8], deck[8:16], deck[16:24]
        hands = [own, other] if dealer == 0 else [other, own]
        basic: dict[str, Any] = {
            "Dealer": dealer + 1,
            "initHand1": [guan_card(c) for c in hands[0]],
            "initHand2": [guan_card(c) for c in hands[1]],
            "initBoard": [guan_card(c) for c in field],
            "initPile": [guan_card(c) for c in reversed(deck[24:])],
            "roundWinner": None,
            "player1RoundPts": None,
            "player2RoundPts": None,
        }
        return cls(
            number, dealer, deck, _Board(field), [list(h) for h in hands], [[], []], [], basic
        )

    def capture(self, p: int, card: int, got: int, *, from_hand: bool) -> list[list[int]]:
        if from_hand:
            self.hands[p].remove(card)
        if not got:
            self.board.lay(card)
            return []
        taken = [card, *self.board.take(got & ~(1 << card))]
        pairs = [guan_card(c) for c in taken]
        self.collected[p].extend(pairs)
        return pairs


def _check_export_rules(record: GameRecord) -> Rules:
    rules = record.build_rules()
    guan = get_rules(GUAN_RULES)
    diff = diff_rules(guan, rules)
    if diff:
        shown = ", ".join(f"{k} = {b!r} (not {a!r})" for k, a, b in diff[:4])
        more = f" and {len(diff) - 4} more" if len(diff) > 4 else ""
        raise RecordError(
            f"the Guan format holds games under {GUAN_RULES} rules only; this record "
            f"differs in {shown}{more}"
        )
    return rules


def _guan_time(created: str) -> str:
    try:
        when = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return created
    return when.strftime("%Y-%m-%d %H:%M:%S")


def _export_rounds(record: GameRecord, match: Match) -> Iterator[_Export]:
    """The rounds of a replayed match as Guan rounds (the last one may be unfinished)."""
    decks = [[int(parse_card(c)) for c in deck] for deck in record.deals]
    deals_seen = 0
    current: _Export | None = None
    turn: dict[str, Any] | None = None
    for event in match.events:
        kind = event.kind
        if kind == "round_start":
            current = _Export.start(event.data["round"], event.data["dealer"], decks[deals_seen])
            deals_seen += 1
            continue
        if current is None:
            continue
        p = event.player if event.player is not None else 0
        if kind == "instant":
            raise RecordError(
                f"round {current.number} ends with an instant hand: the Guan format has no "
                "such round"
            )
        if kind == "play" and event.card is not None:
            turn = {
                "playerInTurn": p + 1,
                "discardCard": guan_card(event.card),
                "collectCard": current.capture(p, event.card, event.cards, from_hand=True),
                "drawCard": None,
                "collectCard2": [],
                "isKoiKoi": None,
            }
            current.turns.append(turn)
        elif kind in ("draw", "take") and turn is not None and event.card is not None:
            turn["drawCard"] = guan_card(event.card)
            if kind == "take" or "choice" not in event.data:
                turn["collectCard2"] = current.capture(p, event.card, event.cards, from_hand=False)
        elif kind == "koikoi" and turn is not None:
            turn["isKoiKoi"] = True
        elif kind == "stop" and turn is not None:
            turn["isKoiKoi"] = False
        elif kind == "round_over":
            winner = event.player
            reason = event.data.get("reason")
            deltas = event.data.get("deltas", [0, 0])
            current.basic["roundWinner"] = (
                0 if winner is None or reason in EXHAUSTED_REASONS else winner + 1
            )
            current.basic["player1RoundPts"] = deltas[0]
            current.basic["player2RoundPts"] = deltas[1]
            yield current
            current, turn = None, None
    if current is not None:
        yield current


def record_to_guan(record: GameRecord) -> dict[str, Any]:
    """A koikoi record of a ``koikoi-japan`` match as a Guan game (JSON-ready).

    The record is replayed (and checked) first. Redealt decks are left out (a
    Guan round holds the deal that was played); an unfinished match gets the
    app's ``save`` object describing where it stopped. ``info`` takes its times
    from ``meta["guan"]`` when the record was imported, else from ``created``.

    Raises:
        RecordError: the record does not replay, its rules are not
            ``koikoi-japan``'s, or it stops in the middle of a turn.
    """
    rules = _check_export_rules(record)
    match = replay(record, check_seed=False)
    if not match.is_over and match.phase is not Phase.PLAY:
        raise RecordError(
            f"the record stops in the middle of a turn (round {match.round_number}, "
            f"{_who(match.current)} to {match.phase.name.lower()}): the Guan format holds "
            "whole turns only"
        )
    rounds = list(_export_rounds(record, match))
    body: dict[str, Any] = {}
    for r in rounds:
        entry: dict[str, Any] = {"basic": r.basic}
        for n, t in enumerate(r.turns, 1):
            entry[f"turn{n}"] = t
        body[f"round{r.number}"] = entry
    guan = record.meta.get("guan")
    guan = guan if isinstance(guan, dict) else {}
    start_time = guan.get("startTime", _guan_time(record.created))
    end_time = guan.get("endTime", _guan_time(record.created) if match.is_over else None)
    save: dict[str, Any] = {}
    if not match.is_over and rounds:
        save = _save(match, rounds[-1])
    over = match.is_over
    return {
        "info": {
            "startTime": start_time,
            "endTime": end_time,
            "player1Name": record.players[0],
            "player2Name": record.players[1],
            "player1InitPts": rules.game.start_points,
            "player2InitPts": rules.game.start_points,
            "numRound": rules.game.rounds,
        },
        "result": {
            "isOver": over,
            "gameWinner": (0 if match.winner is None else match.winner + 1) if over else None,
            "player1EndPts": match.scores[0] if over else None,
            "player2EndPts": match.scores[1] if over else None,
        },
        "save": save,
        "record": body,
    }


def _save(match: Match, current: _Export) -> dict[str, Any]:
    """The app's saved state of an unfinished game, at the start of a turn."""
    rnd = match.round
    drawn = sum(1 for t in current.turns if t["drawCard"] is not None)
    pile = [guan_card(c) for c in reversed(current.deck[24:])]
    return {
        "round": current.number,
        "turn": len(current.turns) + 1,
        "player1Pts": match.scores[0],
        "player2Pts": match.scores[1],
        "dealer": rnd.dealer + 1,
        "playerInTurn": rnd.current + 1,
        "player1HandCard": [guan_card(c) for c in current.hands[0]],
        "player2HandCard": [guan_card(c) for c in current.hands[1]],
        "boardCard": current.board.to_guan(),
        "pileCard": pile[: len(pile) - drawn],
        "player1CollectCard": current.collected[0],
        "player2CollectCard": current.collected[1],
        "player1KoiKoiNum": rnd.koikoi_calls[0],
        "player2KoiKoiNum": rnd.koikoi_calls[1],
    }


def guan_to_json(data: Mapping[str, Any]) -> str:
    """Guan JSON text, written as the app writes it (one line)."""
    return json.dumps(data, ensure_ascii=False)


def export_guan(record: GameRecord) -> str:
    """The Guan JSON text of ``record`` (see :func:`record_to_guan`)."""
    return guan_to_json(record_to_guan(record))
