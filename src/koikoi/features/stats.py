"""One player's statistics over finished games (pure, standard library only).

The input is game records (:class:`koikoi.game.record.GameRecord`) together with
the seat (0 or 1) the player had in each; the output is small frozen values
with ``to_dict()``. Both games use it: the web game's statistics page and the
terminal game's statistics screen.

The API is two functions:

- :func:`game_line` — one record, one seat → a :class:`GameLine` (the game as
  seen by that player: result, points, yaku made, koi-koi calls);
- :func:`summarize` — many ``(record, seat)`` pairs → a :class:`Summary`: the
  totals (a :class:`Tally`), the same broken down by rule set and by opponent,
  and the list of games. :func:`summarize_lines` does the same from
  :class:`GameLine` values already made.

Definitions (all counted from the record alone, without replaying it):

- A game counts only when it is finished (``record.finished``); unfinished
  records are counted in :attr:`Summary.unfinished` and nothing else.
- **Win / loss / draw**: the record's match winner is the player / the other
  player / nobody.
- **Points**: ``points_won`` is the sum of the points of the rounds the player
  won (what the settlements award); ``net_points`` is the point difference: the
  sum over all rounds of the player's score change minus the other player's
  (``deltas``), which is the final margin of the match whether a rule set pays
  the winner from the loser's score or only adds to the winner's. ``points
  per round`` divides ``net_points`` by the number of rounds played.
- **Rounds**: one per settlement (a redealt hand is not a round).
- **Yaku made**: every yaku in the settlement of a round the player won, once
  per round (a flat award, such as an instant hand or the dealer's point for an
  exhausted round, has no yaku and counts none).
- **Koi-koi calls**: every ``koikoi`` action of the player. A call
  **succeeds** when the caller scores again after it in the same round: the
  caller makes a new or better hand and so is asked again (a later ``koikoi``
  or ``stop`` action of the caller in that round), or the round's settlement
  goes to the caller. Otherwise — the other player wins the round, or nobody
  does — the call fails. So with two calls in one round the first has
  succeeded (a second call needs a better hand) and the second succeeds only if
  the caller goes on to win the round.
- **Rule set**: the rule set's name (``rules["name"]``, a preset such as
  ``nintendo`` or a house-rules name). **Opponent**: who the other seat is in
  the record, named in English (an old record's name as it was written).

>>> from koikoi.game.engine import Match
>>> from koikoi.game.record import GameRecord
>>> m = Match(seed=5)
>>> while not m.is_over:
...     m.apply(m.legal_ids()[0])
>>> rec = GameRecord.from_match(m, players=["me", "bot"], created="2024-01-01T00:00:00Z")
>>> s = summarize([(rec, 0)])
>>> s.total.games, s.total.wins + s.total.losses + s.total.draws
(1, 1)
>>> [opponent for opponent, _ in s.by_opponent]
['bot']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord
from koikoi.i18n import t, tn

__all__ = [
    "GameLine",
    "Result",
    "Summary",
    "Tally",
    "format_percent",
    "format_signed",
    "game_line",
    "summarize",
    "summarize_lines",
    "totals_lines",
]

Result = Literal["win", "loss", "draw"]
"""A finished game's result for the player."""

_KOIKOI: Final = "koikoi"
_DECISIONS: Final = frozenset({"koikoi", "stop"})


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _yaku_pairs(counts: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """Most made first, then by name: a stable order for display and comparison."""
    return tuple(sorted(((k, v) for k, v in counts.items() if v), key=lambda kv: (-kv[1], kv[0])))


def _field_values(value: GameLine | Tally) -> dict[str, Any]:
    """The fields by name, in order; ``yaku`` becomes an object ``{key: times}``."""
    out = {f.name: getattr(value, f.name) for f in fields(value)}
    out["yaku"] = dict(value.yaku)
    return out


@dataclass(frozen=True, slots=True)
class GameLine:
    """One finished game as one player saw it.

    Attributes:
        seat: the player's seat in the record (0 or 1).
        opponent: the other seat's name in English (:attr:`Identity.english
            <koikoi.game.record.Identity.english>`: ``"AI (Expert)"``, ``"Guest 2"``,
            a person's name); faces show it in their language
            (:func:`koikoi.features.names.shown_name`).
        rules: the rule set's name.
        created: when the record was made (ISO 8601, as recorded).
        result: ``"win"``, ``"loss"`` or ``"draw"``.
        score: the final match scores, the player's first.
        rounds: rounds played (settlements).
        rounds_won: rounds whose settlement went to the player.
        points_won: points of the rounds the player won.
        net_points: the point difference: the player's score changes minus the
            other player's, over the rounds (the match's final margin).
        yaku: yaku made in the rounds the player won, ``(key, times)``, most first.
        koikoi_calls: the player's koi-koi calls.
        koikoi_successes: those that succeeded (see the module's definition).
        game_id: the record's ``meta["game"]`` (the web game's id) or ``""``.
    """

    seat: int
    opponent: str
    rules: str
    created: str
    result: Result
    score: tuple[int, int]
    rounds: int
    rounds_won: int
    points_won: int
    net_points: int
    yaku: tuple[tuple[str, int], ...]
    koikoi_calls: int
    koikoi_successes: int
    game_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``yaku`` becomes an object ``{key: times}``."""
        return {**_field_values(self), "score": list(self.score)}


@dataclass(frozen=True, slots=True)
class Tally:
    """Totals over a set of games (all of them, one rule set, or one opponent).

    The rates are ``None`` when there is nothing to divide by.
    """

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    rounds: int = 0
    rounds_won: int = 0
    points_won: int = 0
    net_points: int = 0
    yaku: tuple[tuple[str, int], ...] = ()
    koikoi_calls: int = 0
    koikoi_successes: int = 0

    @property
    def win_rate(self) -> float | None:
        """Wins per game (draws count as games not won)."""
        return _ratio(self.wins, self.games)

    @property
    def points_per_round(self) -> float | None:
        """Net points per round played."""
        return _ratio(self.net_points, self.rounds)

    @property
    def points_per_game(self) -> float | None:
        """Net points per game."""
        return _ratio(self.net_points, self.games)

    @property
    def koikoi_success_rate(self) -> float | None:
        """Successful koi-koi calls per call."""
        return _ratio(self.koikoi_successes, self.koikoi_calls)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, the rates included; ``yaku`` becomes an object ``{key: times}``."""
        rates = ("win_rate", "points_per_round", "points_per_game", "koikoi_success_rate")
        return {**_field_values(self), **{name: getattr(self, name) for name in rates}}


def format_percent(rate: float | None) -> str:
    """A rate as a whole percentage, ``"—"`` for none.

    >>> format_percent(0.5), format_percent(None)
    ('50%', '—')
    """
    return "—" if rate is None else f"{rate:.0%}"


def format_signed(value: float | None, digits: int = 1) -> str:
    """A number with its sign and ``digits`` decimals, ``"—"`` for none.

    >>> format_signed(1.25, 2), format_signed(-0.5), format_signed(None)
    ('+1.25', '-0.5', '—')
    """
    return "—" if value is None else f"{value:+.{digits}f}"


def totals_lines(total: Tally) -> tuple[str, str, str, str]:
    """The totals as plain text in the chosen language, for the CLI and the terminal game.

    Returns:
        ``(games, results, points, koikoi)``: the number of games (``"3 games"``),
        the wins, losses and draws, the rounds and points, and the koi-koi calls.
        A line of text is ``games + ": " + results``, then each of the others.
    """
    games = tn("{n} game", "{n} games", total.games)
    results = t(
        "{wins} won, {losses} lost, {draws} drawn ({rate} won)",
        wins=total.wins,
        losses=total.losses,
        draws=total.draws,
        rate=format_percent(total.win_rate),
    )
    points = t(
        "Rounds: {rounds}, {won} won. Points won: {points}; net {net} "
        "({per_round} a round, {per_game} a game).",
        rounds=total.rounds,
        won=total.rounds_won,
        points=total.points_won,
        net=f"{total.net_points:+d}",
        per_round=format_signed(total.points_per_round, 2),
        per_game=format_signed(total.points_per_game),
    )
    if total.koikoi_calls:
        koikoi = t(
            "Koi-koi calls: {calls}, {successes} succeeded ({rate}).",
            calls=total.koikoi_calls,
            successes=total.koikoi_successes,
            rate=format_percent(total.koikoi_success_rate),
        )
    else:
        koikoi = t("Koi-koi calls: none yet.")
    return games, results, points, koikoi


@dataclass(frozen=True, slots=True)
class Summary:
    """A player's statistics: totals, breakdowns and the games, oldest first.

    Attributes:
        total: over every finished game.
        by_rules: ``(rule set name, tally)``, most games first, then by name.
        by_opponent: ``(opponent name, tally)``, most games first, then by name.
        games: each finished game, in the order given (oldest first when the
            input is in time order).
        unfinished: records given that were not finished (counted nowhere else).
    """

    total: Tally
    by_rules: tuple[tuple[str, Tally], ...]
    by_opponent: tuple[tuple[str, Tally], ...]
    games: tuple[GameLine, ...]
    unfinished: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: breakdowns as lists of ``{"name", ...tally}`` in the same order."""
        return {
            "total": self.total.to_dict(),
            "by_rules": [{"name": k, **t.to_dict()} for k, t in self.by_rules],
            "by_opponent": [{"name": k, **t.to_dict()} for k, t in self.by_opponent],
            "games": [g.to_dict() for g in self.games],
            "unfinished": self.unfinished,
        }


def _check_seat(seat: Any) -> int:
    if isinstance(seat, bool) or seat not in (0, 1):
        raise InvalidInputError(f"seat must be 0 or 1 (the player's index), not {seat!r}")
    return int(seat)


def game_line(record: GameRecord, seat: int) -> GameLine:
    """The finished game ``record`` as the player in ``seat`` saw it.

    Raises:
        InvalidInputError: if ``seat`` is not 0 or 1, or the record is not finished.
    """
    me = _check_seat(seat)
    if not record.finished:
        raise InvalidInputError("only a finished game has statistics: this record is unfinished")
    other = 1 - me
    rounds = len(record.settlements)
    rounds_won = points_won = net = 0
    yaku: Counter[str] = Counter()
    winners: dict[int, Any] = {}
    for number, s in enumerate(record.settlements, 1):
        winner = s.get("winner")
        winners[number] = winner
        deltas = s.get("deltas") or [0, 0]
        net += int(deltas[me]) - int(deltas[other])
        if winner == me:
            rounds_won += 1
            points_won += int(s.get("points", 0))
            yaku.update(str(y.get("name")) for y in s.get("yaku") or ())
    calls = successes = 0
    pending: list[int] = []  # rounds of this player's calls not yet decided
    pending_round = 0
    for action in record.actions:
        if action.round != pending_round:
            successes += sum(1 for r in pending if winners.get(r) == me)
            pending, pending_round = [], action.round
        if action.player != me or action.action.split(" ", 1)[0] not in _DECISIONS:
            continue
        successes += len(pending)  # scored again: every earlier call of the round succeeded
        pending = []
        if action.action.startswith(_KOIKOI):
            calls += 1
            pending.append(action.round)
    successes += sum(1 for r in pending if winners.get(r) == me)
    winner = record.winner
    result: Result = "draw" if winner is None else ("win" if winner == me else "loss")
    return GameLine(
        seat=me,
        opponent=record.identities[other].english,
        rules=str(record.rules.get("name") or "custom"),
        created=record.created,
        result=result,
        score=(int(record.scores[me]), int(record.scores[other])),
        rounds=rounds,
        rounds_won=rounds_won,
        points_won=points_won,
        net_points=net,
        yaku=_yaku_pairs(yaku),
        koikoi_calls=calls,
        koikoi_successes=successes,
        game_id=str(record.meta.get("game") or ""),
    )


def _tally(lines: Iterable[GameLine]) -> Tally:
    games = wins = losses = draws = rounds = rounds_won = points_won = net = calls = ok = 0
    yaku: Counter[str] = Counter()
    for g in lines:
        games += 1
        wins += g.result == "win"
        losses += g.result == "loss"
        draws += g.result == "draw"
        rounds += g.rounds
        rounds_won += g.rounds_won
        points_won += g.points_won
        net += g.net_points
        calls += g.koikoi_calls
        ok += g.koikoi_successes
        yaku.update(dict(g.yaku))
    return Tally(
        games=games,
        wins=wins,
        losses=losses,
        draws=draws,
        rounds=rounds,
        rounds_won=rounds_won,
        points_won=points_won,
        net_points=net,
        yaku=_yaku_pairs(yaku),
        koikoi_calls=calls,
        koikoi_successes=ok,
    )


def _grouped(lines: tuple[GameLine, ...], key: str) -> tuple[tuple[str, Tally], ...]:
    groups: dict[str, list[GameLine]] = {}
    for g in lines:
        groups.setdefault(getattr(g, key), []).append(g)
    tallies = [(name, _tally(group)) for name, group in groups.items()]
    return tuple(sorted(tallies, key=lambda nt: (-nt[1].games, nt[0])))


def summarize_lines(lines: Iterable[GameLine], *, unfinished: int = 0) -> Summary:
    """The :class:`Summary` of games already made into :class:`GameLine` values."""
    games = tuple(lines)
    return Summary(
        total=_tally(games),
        by_rules=_grouped(games, "rules"),
        by_opponent=_grouped(games, "opponent"),
        games=games,
        unfinished=unfinished,
    )


def summarize(games: Iterable[tuple[GameRecord, int]]) -> Summary:
    """One player's statistics over ``(record, seat)`` pairs.

    ``seat`` is the player's index in each record (0 or 1), so the same player
    may sit on either side. Unfinished records are counted in
    :attr:`Summary.unfinished` only.

    Raises:
        InvalidInputError: if a seat is not 0 or 1 (nothing is summarised).
    """
    lines: list[GameLine] = []
    unfinished = 0
    for record, seat in games:
        _check_seat(seat)
        if not record.finished:
            unfinished += 1
            continue
        lines.append(game_line(record, seat))
    return summarize_lines(lines, unfinished=unfinished)
