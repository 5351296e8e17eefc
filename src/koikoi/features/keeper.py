"""A score sheet for a match played with real cards: what ``koikoi keeper`` keeps.

Players report each round (who won, the winner's capture pile, the koi-koi calls);
the sheet scores the pile with :func:`koikoi.game.scoring.score_cards`, applies the rule
set's round end (dealer point, oya-ken), keeps running totals from
``game.start_points`` and ends the match after ``game.rounds`` rounds or at a bust.
A :class:`ScoreSheet` is immutable: :meth:`ScoreSheet.add` and
:meth:`ScoreSheet.undo` return new sheets. No I/O here.

>>> from koikoi.game.cards import parse_cards
>>> from koikoi.game.rules import get_rules
>>> sheet = ScoreSheet(get_rules("nintendo"), rounds=3)
>>> sheet = sheet.add(RoundEntry(0, parse_cards("3L 8L 9A")))
>>> sheet.totals, sheet.round_number, sheet.is_over
((20, 0), 2, False)
>>> sheet.undo().totals
(0, 0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from koikoi.game.cards import format_cards
from koikoi.game.engine import is_bust, match_winner, next_dealer, shared_scorer
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import RANGES, Rules
from koikoi.game.scoring import (
    MULTIPLIER_NAMES,
    YAKU_NAMES,
    Settlement,
    YakuScore,
    month_of_round,
    score_cards,
)
from koikoi.i18n import N_, translate

__all__ = [
    "PLAYER_LETTERS",
    "RoundEntry",
    "ScoreSheet",
    "SheetRound",
    "check_koikoi",
    "needs_first_dealer",
]

PLAYER_LETTERS: tuple[str, str] = ("A", "B")
"""How players 0 and 1 are named on the sheet and in match files."""


def needs_first_dealer(rules: Rules) -> bool:
    """Whether the sheet must know who deals: a round nobody wins pays the dealer,
    or a tied match goes to the dealer.

    >>> from koikoi.game.rules import get_rules
    >>> needs_first_dealer(get_rules("nintendo")), needs_first_dealer(get_rules("koikoi-japan"))
    (False, True)
    """
    end = rules.end
    pays_dealer = end.exhausted == "dealer_point" or (
        end.exhausted in ("highest", "last_yaku") and end.oya_ken > 0
    )
    return pays_dealer or rules.game.match_tie == "dealer"


def check_koikoi(rules: Rules, calls: tuple[int, int], names: tuple[str, str] = ("A", "B")) -> None:
    """Check the koi-koi calls of one round against ``koikoi.limit``.

    Raises:
        InvalidInputError: a negative count, or more calls than the rules allow.

    >>> from koikoi.game.rules import get_rules
    >>> check_koikoi(get_rules("nintendo"), (2, -1))
    Traceback (most recent call last):
    ...
    koikoi.game.errors.InvalidInputError: koi-koi calls by B must be 0 or more, not -1
    """
    for p in (0, 1):
        if calls[p] < 0:
            raise InvalidInputError(
                f"koi-koi calls by {names[p]} must be 0 or more, not {calls[p]}"
            )
    kk = rules.koikoi
    if kk.limit <= 0:
        return
    if kk.limit_scope == "round":
        if sum(calls) > kk.limit:
            raise InvalidInputError(
                f"{sum(calls)} koi-koi calls in one round, but {rules.name} allows at most "
                f"{kk.limit} a round (koikoi.limit)"
            )
        return
    for p in (0, 1):
        if calls[p] > kk.limit:
            raise InvalidInputError(
                f"{names[p]} called koi-koi {calls[p]} times, but {rules.name} allows at most "
                f"{kk.limit} a player (koikoi.limit)"
            )


class NoYakuError(InvalidInputError):
    """A round's winner whose cards score no yaku; :meth:`words` says it in a language.

    >>> print(NoYakuError("Aiko", "nintendo", 2, 0).words("ja"))
    Aikoの札はルール「nintendo」の第2局で役になりません。勝った人には役が一つ以上必要です。
    """

    def __init__(self, name: str, rules: str, round_number: int, calls: int) -> None:
        self.name, self.rules, self.round_number, self.calls = name, rules, round_number, calls
        super().__init__(self.words("en"))

    def words(self, lang: str | None = None) -> str:
        """The message in ``lang`` (default: the language in use)."""
        params = {"name": self.name, "rules": self.rules, "round": self.round_number}
        if self.calls:
            return translate(
                N_(
                    "{name}'s cards score no yaku under {rules} in round {round} with {calls} "
                    "koi-koi: the winner of a round needs at least one yaku"
                ),
                lang,
                calls=self.calls,
                **params,
            )
        return translate(
            N_(
                "{name}'s cards score no yaku under {rules} in round {round}: the winner "
                "of a round needs at least one yaku"
            ),
            lang,
            **params,
        )


@dataclass(frozen=True, slots=True)
class RoundEntry:
    """What the players report about one round.

    ``winner`` is 0 (A), 1 (B) or ``None`` (nobody stopped: the hands ran out);
    ``cards`` the winner's capture pile (a card set); ``koikoi`` how many times
    each player called koi-koi in the round.
    """

    winner: int | None
    cards: int = 0
    koikoi: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class SheetRound:
    """One round on the sheet: the report, who dealt, its settlement and the totals after it."""

    number: int
    dealer: int | None
    entry: RoundEntry
    settlement: Settlement
    totals: tuple[int, int]

    @property
    def month(self) -> int:
        """The round's month (round k is month k, wrapping after 12)."""
        return month_of_round(self.number)


@dataclass(frozen=True, slots=True)
class ScoreSheet:
    """The score of a match so far.

    Args:
        rules: the rule set (yaku, multipliers, round end, match end).
        rounds: the length of the match (default: ``rules.game.rounds``).
        first_dealer: who deals round 1 (0 or 1); required when
            :func:`needs_first_dealer` says so.
        names: the players' names, for messages.
        played: the rounds entered so far.

    Raises:
        InvalidInputError: a length out of range, or a missing first dealer.
    """

    rules: Rules
    rounds: int = 0
    first_dealer: int | None = None
    names: tuple[str, str] = PLAYER_LETTERS
    played: tuple[SheetRound, ...] = ()

    def __post_init__(self) -> None:
        if self.rounds == 0:
            object.__setattr__(self, "rounds", self.rules.game.rounds)
        lo, hi = RANGES["game.rounds"]
        if not lo <= self.rounds <= hi:
            raise InvalidInputError(f"a match has {lo} to {hi} rounds, not {self.rounds}")
        if self.first_dealer not in (None, 0, 1):
            raise InvalidInputError(f"first dealer must be 0 or 1, not {self.first_dealer!r}")
        if self.first_dealer is None and needs_first_dealer(self.rules):
            raise InvalidInputError(
                f"under {self.rules.name} the dealer scores when nobody wins or takes a tied "
                "match: say who deals round 1"
            )

    # ------------------------------------------------------------------ state

    @property
    def start_points(self) -> int:
        """Each player's score before round 1 (``game.start_points``)."""
        return self.rules.game.start_points

    @property
    def totals(self) -> tuple[int, int]:
        """Both players' scores after the last round entered."""
        if self.played:
            return self.played[-1].totals
        return (self.start_points, self.start_points)

    @property
    def round_number(self) -> int:
        """The number of the next round to enter (1-based)."""
        return len(self.played) + 1

    @property
    def dealer(self) -> int | None:
        """Who deals the next round, by ``game.dealer`` and ``game.dealer_after_draw``."""
        dealer = self.first_dealer
        if dealer is None:
            return None
        for r in self.played:
            dealer = next_dealer(self.rules.game, dealer, r.settlement.winner)
        return dealer

    @property
    def bust(self) -> bool:
        """Whether a player's score fell to 0 or below under ``game.start_points``."""
        return is_bust(self.rules.game, self.totals)

    @property
    def is_over(self) -> bool:
        """Whether the match has ended: every round played, or a bust."""
        return len(self.played) >= self.rounds or self.bust

    @property
    def end_reason(self) -> str | None:
        """``"bust"``, ``"rounds"`` or ``None`` while the match goes on."""
        if self.bust:
            return "bust"
        if len(self.played) >= self.rounds:
            return "rounds"
        return None

    @property
    def leader(self) -> int | None:
        """Who has the higher total now; on a tie, the last dealer under
        ``game.match_tie = "dealer"``, else ``None``. Once the match is over,
        the match winner."""
        last_dealer = self.played[-1].dealer if self.played else None
        return match_winner(self.rules.game, self.totals, last_dealer)

    # --------------------------------------------------------------- changes

    def settle(self, entry: RoundEntry) -> Settlement:
        """The settlement of ``entry`` as the next round, without adding it.

        Raises:
            InvalidInputError: the match is over, a bad winner, koi-koi calls
                over the limit, or a winner's pile with no yaku.
        """
        n = self.round_number
        if self.is_over:
            raise InvalidInputError(
                f"the match is over after round {len(self.played)} ({self._end_words()})"
            )
        if entry.winner is None:
            return self._nobody()
        if entry.winner not in (0, 1):
            raise InvalidInputError(f"winner must be 0, 1 or None, not {entry.winner!r}")
        check_koikoi(self.rules, entry.koikoi, self.names)
        w = entry.winner
        calls = entry.koikoi
        settlement = score_cards(
            self.rules,
            entry.cards,
            round_number=n,
            koikoi_self=calls[w],
            opponent_koikoi=calls[1 - w] > 0,
        )
        if settlement.winner is None:
            raise NoYakuError(self.names[w], self.rules.name, n, calls[w])
        d0, d1 = settlement.deltas
        return dataclasses.replace(settlement, winner=w, deltas=(d0, d1) if w == 0 else (d1, d0))

    def _nobody(self) -> Settlement:
        end = self.rules.end
        scorer = shared_scorer(self.rules)
        dealer = self.dealer
        if end.exhausted == "dealer_point" and dealer is not None:
            return scorer.award(dealer, end.oya_ken, "dealer_point")
        if end.exhausted in ("highest", "last_yaku") and end.oya_ken and dealer is not None:
            return scorer.award(dealer, end.oya_ken, "oya_ken")
        return scorer.no_score("exhausted")

    def add(self, entry: RoundEntry) -> ScoreSheet:
        """The sheet with ``entry`` as the next round.

        Raises:
            InvalidInputError: as :meth:`settle`.
        """
        settlement = self.settle(entry)
        if entry.winner is None:
            entry = RoundEntry(None)
        t0, t1 = self.totals
        totals = (t0 + settlement.deltas[0], t1 + settlement.deltas[1])
        row = SheetRound(self.round_number, self.dealer, entry, settlement, totals)
        return dataclasses.replace(self, played=(*self.played, row))

    def undo(self) -> ScoreSheet:
        """The sheet without its last round.

        Raises:
            InvalidInputError: no round to undo.
        """
        if not self.played:
            raise InvalidInputError("no round to undo")
        return dataclasses.replace(self, played=self.played[:-1])

    # ---------------------------------------------------------------- output

    def _end_words(self) -> str:
        reason = self.end_reason
        if reason == "bust":
            loser = 0 if self.totals[0] <= 0 else 1
            return f"{self.names[loser]} is bust"
        return f"{self.rounds} rounds"

    def result(self, lang: str = "en") -> str:
        """The match result in words, the winner's (or leader's) score first.

        English by default (the JSON of :meth:`to_dict` carries it); ``lang="ja"``
        words it in Japanese for people (``koikoi keeper``).

        >>> from koikoi.game.rules import get_rules
        >>> sheet = ScoreSheet(get_rules("nintendo"), rounds=6, names=("Aiko", "Ben"))
        >>> sheet.result(), sheet.result("ja")
        ('After 0 of 6 rounds: level at 0 to 0.', '6回中0回終了：0対0で同点。')
        """

        def say(message: str, **params: object) -> str:
            return translate(message, lang, **params)

        s = self.totals
        lead = self.leader
        first, second = (s[1], s[0]) if lead == 1 else s
        score = say(N_("{first} to {second}"), first=first, second=second)
        if not self.is_over:
            where = say(
                N_("After {played} of {rounds} rounds"), played=len(self.played), rounds=self.rounds
            )
            if lead is None or s[0] == s[1]:
                return say(N_("{where}: level at {score}."), where=where, score=score)
            return say(
                N_("{where}: {name} leads {score}."),
                where=where,
                name=self.names[lead],
                score=score,
            )
        how = ""
        if self.end_reason == "bust":
            loser = 0 if self.totals[0] <= 0 else 1
            how = say(N_(" ({name} is bust)"), name=self.names[loser])
        if lead is None:
            return say(N_("Match drawn, {score}{how}."), score=score, how=how)
        if s[0] == s[1]:
            return say(
                N_("{name} wins {score}: a tie goes to the last dealer{how}."),
                name=self.names[lead],
                score=score,
                how=how,
            )
        return say(N_("{name} wins {score}{how}."), name=self.names[lead], score=score, how=how)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready plain data: the match, each round with its settlement, the result."""

        def by_player(pair: tuple[int, int]) -> dict[str, int]:
            return dict(zip(PLAYER_LETTERS, pair, strict=True))

        def letter(p: int | None) -> str | None:
            return None if p is None else PLAYER_LETTERS[p]

        rounds = []
        for r in self.played:
            s = r.settlement
            rounds.append(
                {
                    "round": r.number,
                    "month": r.month,
                    "dealer": letter(r.dealer),
                    "winner": letter(r.entry.winner),
                    "cards": format_cards(r.entry.cards).split(),
                    "koikoi": by_player(r.entry.koikoi),
                    "reason": s.reason,
                    "scored_by": letter(s.winner),
                    "yaku": [_yaku_dict(y) for y in s.yaku],
                    "base": s.base,
                    "multipliers": [
                        {**m.to_dict(), "label": MULTIPLIER_NAMES.get(m.name, m.name)}
                        for m in s.multipliers
                    ],
                    "points": s.points,
                    "deltas": by_player(s.deltas),
                    "totals": by_player(r.totals),
                }
            )
        return {
            "rules": self.rules.name,
            "names": dict(zip(PLAYER_LETTERS, self.names, strict=True)),
            "rounds": self.rounds,
            "start_points": self.start_points,
            "first_dealer": letter(self.first_dealer),
            "played": rounds,
            "totals": by_player(self.totals),
            "over": self.is_over,
            "end": self.end_reason,
            "winner": letter(self.leader) if self.is_over else None,
            "result": self.result(),
        }


def _yaku_dict(y: YakuScore) -> dict[str, Any]:
    """A yaku as ``koikoi score --json`` writes it: name, English, Japanese, points, cards."""
    english, japanese = YAKU_NAMES.get(y.name, (y.name, y.name))
    return {
        "name": y.name,
        "english": english,
        "japanese": japanese,
        "points": y.points,
        "cards": format_cards(y.cards).split(),
    }
