"""Yaku evaluation and settlement, with an explanation of every point.

A :class:`Scorer` is bound to one :class:`~koikoi.game.rules.Rules` and evaluates
capture piles (48-bit card sets, see :mod:`koikoi.game.cards`) under docs/rules.md:

* :meth:`Scorer.total` is the engine's hot path: the yaku total of a pile, memoized.
* :meth:`Scorer.evaluate` says which yaku score, with their points and cards.
* :meth:`Scorer.settle` applies the multipliers to a stopped round (docs/rules.md).

>>> from koikoi.game.cards import parse_cards
>>> from koikoi.game.rules import get_rules
>>> scorer = Scorer(get_rules("nintendo"))
>>> scorer.total(parse_cards("1L 3L 8L"), 1, False)
5
>>> result = scorer.evaluate(parse_cards("3L 8L 9A"), 1, False)
>>> [(y.name, y.points) for y in result.yaku], result.total
([('hanami', 5), ('tsukimi', 5)], 10)
>>> scorer.settle(result, winner=0, reason="stop", own_koikoi=0, opponent_koikoi=1,
...               improved_after_koikoi=False).points
40
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Final

from koikoi.game.cards import (
    AKATAN,
    ANIMALS,
    AOTAN,
    BRIGHTS,
    FULL_DECK,
    MONTH_MASKS,
    PLAINS,
    RIBBONS,
    card_list,
    format_cards,
    parse_card,
)
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.tables import (
    ANIMALS_NO_SAKE,
    CURTAIN,
    DOUBLE_RIBBONS,
    INO_SHIKA_CHO,
    MOON,
    NON_RAIN_BRIGHTS,
    RAIN_MAN,
    SAKE_CUP,
    VIEW_CARDS,
)

__all__ = [
    "EXHAUSTED_REASONS",
    "MULTIPLIER_NAMES",
    "YAKU_NAMES",
    "YAKU_ORDER",
    "Multiplier",
    "Scorer",
    "Settlement",
    "YakuResult",
    "YakuScore",
    "month_of_round",
    "score_cards",
    "shared_scorer",
]

# snake_case key -> (English display name, Japanese name)
YAKU_NAMES: dict[str, tuple[str, str]] = {
    "goko": ("Five Brights", "五光 gokō"),
    "shiko": ("Four Brights", "四光 shikō"),
    "ame_shiko": ("Rainy Four Brights", "雨四光 ame-shikō"),
    "sanko": ("Three Brights", "三光 sankō"),
    "inoshikacho": ("Boar, Deer, Butterflies", "猪鹿蝶 inoshikachō"),
    "tane": ("Animals", "タネ tane"),
    "akatan": ("Red poetry ribbons", "赤短 akatan"),
    "aotan": ("Blue ribbons", "青短 aotan"),
    "akatan_aotan": ("Red and blue ribbons", "赤短・青短の重複 chōfuku"),
    "tanzaku": ("Ribbons", "短冊 tanzaku"),
    "kasu": ("Plains", "カス kasu"),
    "hanami": ("Flower viewing", "花見酒 hanami-zake"),
    "tsukimi": ("Moon viewing", "月見酒 tsukimi-zake"),
    "tsukifuda": ("Cards of the month", "月札 tsukifuda"),
    "teshi": ("Four of a month", "手四 teshi"),
    "kuttsuki": ("Four pairs", "くっつき kuttsuki"),
}

YAKU_ORDER: Final[tuple[str, ...]] = (
    "goko",
    "shiko",
    "ame_shiko",
    "sanko",
    "inoshikacho",
    "tane",
    "akatan_aotan",
    "akatan",
    "aotan",
    "tanzaku",
    "kasu",
    "hanami",
    "tsukimi",
    "tsukifuda",
    "teshi",
    "kuttsuki",
)
"""The display order of yaku in a :class:`YakuResult`."""

# Multiplier key -> how the explanation names the step.
MULTIPLIER_NAMES: dict[str, str] = {
    "seven_double": "Seven or more",
    "opponent_koikoi": "Opponent called koi-koi",
    "koikoi_challenge": "Koi-koi challenge",
    "koikoi_ladder": "Koi-koi ladder",
}

_RANK: Final[dict[str, int]] = {name: i for i, name in enumerate(YAKU_ORDER)}

# Cards that yaku name (bit masks).
# Under "exclusive" the Sake cup's extra Plain roles are extra "cards" at bits 48 and 49.
_ROLE_1: Final = 1 << 48
_ROLE_2: Final = 1 << 49

# Cards of a kind that no yaku names, to fill piles when building tables.
_ANIMAL_FILLERS: Final = tuple(1 << c for c in (4, 12, 16, 29, 41, 32))  # 2A 4A 5A 8A 11A 9A
_RIBBON_FILLERS: Final = tuple(1 << c for c in (13, 17, 25, 42))  # 4R 5R 7R 11R
_NO_CARD: Final = 1 << 60  # a set no pile holds
_MAX_COUNT: Final = 28  # more than any count of one kind (24 Plains + 2 Sake cup roles)
_VIEWING: Final = ("hanami", "tsukimi")
_CACHE_LIMIT: Final = 200_000

# One yaku while evaluating: (name, points, cards). Under "exclusive" the cards may
# hold the Sake cup's role bits (48, 49); they are folded back into card 32 on output.
_Entry = tuple[str, int, int]


def month_of_round(k: int) -> int:
    """The month of round ``k`` (1-based): round k is month k, wrapping after 12.

    Raises:
        InvalidInputError: if ``k`` is below 1.

    >>> month_of_round(1), month_of_round(12), month_of_round(13)
    (1, 12, 1)
    """
    if k < 1:
        raise InvalidInputError(f"round number must be 1 or more, not {k}")
    return (k - 1) % 12 + 1


def _codes(cards: int) -> list[str]:
    return format_cards(cards).split()


@dataclass(frozen=True, slots=True)
class YakuScore:
    """One scoring yaku: its key, its points (bonus cards included) and its cards (a mask)."""

    name: str
    points: int
    cards: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"name", "points", "cards": [codes]}``."""
        return {"name": self.name, "points": self.points, "cards": _codes(self.cards)}

    def describe(self) -> str:
        """One line: names, cards and points, e.g. ``Three Brights (三光 sankō) [1L 3L 8L]: 5``."""
        english, japanese = YAKU_NAMES.get(self.name, (self.name, self.name))
        return f"{english} ({japanese}) [{format_cards(self.cards)}]: {self.points}"


@dataclass(frozen=True, slots=True)
class YakuResult:
    """The yaku a capture pile scores under a rule set; ``total`` is their sum."""

    yaku: tuple[YakuScore, ...]
    total: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"yaku": [...], "total"}``."""
        return {"yaku": [y.to_dict() for y in self.yaku], "total": self.total}

    def names(self) -> tuple[str, ...]:
        """The keys of the scoring yaku, in display order."""
        return tuple(y.name for y in self.yaku)


@dataclass(frozen=True, slots=True)
class Multiplier:
    """One step of settlement applied to the running figure: ``x factor`` then ``+ add``."""

    name: str
    factor: int = 1
    add: int = 0

    def apply(self, figure: int) -> int:
        """The running figure after this step."""
        return figure * self.factor + self.add

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"name", "factor", "add"}``."""
        return {"name": self.name, "factor": self.factor, "add": self.add}

    def describe(self) -> str:
        """The step in words, e.g. ``Seven or more: x2``."""
        label = MULTIPLIER_NAMES.get(self.name, self.name)
        parts = []
        if self.factor != 1:
            parts.append(f"x{self.factor}")
        if self.add:
            parts.append(f"+{self.add}")
        return f"{label}: {' '.join(parts) or 'x1'}"


EXHAUSTED_REASONS: Final[frozenset[str]] = frozenset(
    {"exhausted", "dealer_point", "oya_ken", "exhausted_highest", "exhausted_last_yaku"}
)
"""The settlement reasons of a round that ended with both hands played out."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a round was settled.

    ``base`` is the yaku total (or the flat award), ``multipliers`` the steps applied
    to it in order, ``points`` the final figure won by ``winner`` (``None``: nobody
    scores) and ``deltas`` the change of each player's score (index 0 and 1).
    """

    winner: int | None
    reason: str
    yaku: tuple[YakuScore, ...]
    base: int
    multipliers: tuple[Multiplier, ...]
    points: int
    deltas: tuple[int, int]

    @property
    def exhausted(self) -> bool:
        """Whether the round ended with both hands played out and nobody having stopped.

        True for the reasons ``exhausted`` (nobody scores), ``dealer_point``,
        ``oya_ken``, ``exhausted_highest`` and ``exhausted_last_yaku``; false for a
        stop (``stop``, automatic stops included) and an instant hand (``instant``).

        >>> Scorer(Rules()).no_score("exhausted").exhausted
        True
        """
        return self.reason in EXHAUSTED_REASONS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready plain data (lists, strings, ints, ``None``)."""
        return {
            "winner": self.winner,
            "reason": self.reason,
            "exhausted": self.exhausted,
            "base": self.base,
            "points": self.points,
            "deltas": list(self.deltas),
            "yaku": [y.to_dict() for y in self.yaku],
            "multipliers": [m.to_dict() for m in self.multipliers],
        }

    def steps(self) -> list[tuple[str, int]]:
        """Each multiplier in the order applied, described, with the points after it.

        >>> from koikoi.game.cards import parse_cards
        >>> scorer = Scorer(Rules())
        >>> result = scorer.evaluate(parse_cards("3L 8L 9A"), 1, False)
        >>> s = scorer.settle(result, winner=0, reason="stop", own_koikoi=0,
        ...                   opponent_koikoi=1, improved_after_koikoi=False)
        >>> [figure for _, figure in s.steps()], s.points
        ([20, 40], 40)
        """
        out = []
        figure = self.base
        for m in self.multipliers:
            figure = m.apply(figure)
            out.append((m.describe(), figure))
        return out

    def explain(self) -> str:
        """A human-readable, multi-line account of every point.

        >>> print(Scorer(Rules()).award(1, 6, "oya_ken").explain())
        Round settled (oya_ken).
        Flat award: 6
        Player 1 scores 6 points.
        """
        lines = [f"Round settled ({self.reason})."]
        if self.winner is None:
            lines.append("Nobody scores.")
            return "\n".join(lines)
        if self.yaku:
            lines.append("Yaku:")
            lines.extend(f"  {y.describe()}" for y in self.yaku)
            lines.append(f"Base: {self.base}")
        else:
            lines.append(f"Flat award: {self.base}")
        lines.extend(f"  {text} -> {figure}" for text, figure in self.steps())
        unit = "point" if self.points == 1 else "points"
        lines.append(f"Player {self.winner} scores {self.points} {unit}.")
        loser = 1 - self.winner
        if self.deltas[loser]:
            lines.append(f"Player {loser} pays {-self.deltas[loser]}.")
        return "\n".join(lines)


def _lowest(mask: int, n: int) -> int:
    """The ``n`` lowest cards of ``mask``."""
    out = 0
    for c in card_list(mask)[:n]:
        out |= 1 << c
    return out


def _fold_roles(mask: int) -> int:
    """Fold the Sake cup's role bits (48+) back into card 32."""
    if mask >> 48:
        return (mask & FULL_DECK) | SAKE_CUP
    return mask


class Scorer:
    """Yaku evaluation bound to one rule set, fast for the engine's hot path.

    Every rule option is read once here. :meth:`evaluate` is the reference: it
    lists the yaku. :meth:`total` gives the same figure faster: under ``absorb``
    and ``separate`` the yaku of each family add up, so it sums small tables
    (built here by evaluating one family at a time); under ``exclusive`` it
    keeps a bounded cache keyed by what the total depends on.
    """

    __slots__ = (
        "_aka_ao_adds",
        "_animal_table",
        "_bright_alternatives",
        "_bright_best",
        "_bright_pts",
        "_cache",
        "_called_bit",
        "_evaluate",
        "_exclusive_mode",
        "_extra",
        "_kasu_pts",
        "_month_matters",
        "_month_pts",
        "_named",
        "_named_by_month",
        "_p",
        "_requires_other",
        "_ribbon_table",
        "_sanko_with_rainman",
        "_spoilers",
        "_tane_pts",
        "_tanzaku_pts",
        "_teshi_collected",
        "_variants",
        "_view_table",
        "_viewing_after",
        "_viewing_exists",
        "rules",
    )

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        y = rules.yaku
        pts = rules.points
        self._p: dict[str, int] = {
            "goko": pts.goko,
            "shiko": pts.shiko,
            "ame_shiko": pts.ame_shiko,
            "sanko": pts.sanko,
            "inoshikacho": pts.inoshikacho,
            "tane": pts.tane,
            "akatan": pts.akatan,
            "aotan": pts.aotan,
            "akatan_aotan": pts.akatan_aotan,
            "tanzaku": pts.tanzaku,
            "kasu": pts.kasu,
            "hanami": pts.hanami,
            "tsukimi": pts.tsukimi,
            "tsukifuda": pts.tsukifuda,
            "teshi": rules.instant.teshi if rules.instant.teshi_collected else 0,
        }
        self._extra = y.extra
        self._aka_ao_adds = y.akatan_aotan_adds
        self._sanko_with_rainman = y.sanko_with_rainman
        self._spoilers = 0
        for code in y.viewing_spoiled_by:
            self._spoilers |= 1 << parse_card(code)
        self._requires_other = y.viewing_requires_other
        self._viewing_after = y.viewing_after_koikoi
        self._viewing_exists = pts.hanami > 0 or pts.tsukimi > 0
        self._teshi_collected = self._p["teshi"] > 0
        self._month_matters = pts.tsukifuda > 0 or self._teshi_collected
        self._called_bit = 1 << 65 if self._viewing_after > 0 and self._viewing_exists else 0
        # (Sake cup is an Animal, number of Plain roles it plays) for each reading to try.
        self._variants: tuple[tuple[bool, int], ...] = {
            "animal": ((True, 0),),
            "both": ((True, 1),),
            "both_double_plain": ((True, 2),),
            "either": ((True, 0), (False, 1)),
        }[y.sake_cup]
        self._evaluate: Callable[[int, int, bool, bool, int], list[_Entry]] = {
            "absorb": self._open_absorb,
            "separate": self._open_separate,
            "exclusive": self._exclusive,
        }[y.combine]
        self._bright_best = {b: self._best_bright(b) for b in self._bright_sets()}
        self._bright_alternatives = {b: self._all_brights(b) for b in self._bright_sets()}
        self._named = BRIGHTS | INO_SHIKA_CHO | SAKE_CUP | DOUBLE_RIBBONS | self._spoilers
        self._named_by_month = (self._named, *(self._named | m for m in MONTH_MASKS))
        self._cache: dict[int, int] = {}
        self._exclusive_mode = y.combine == "exclusive"

        # Points of tane / tanzaku / kasu by number of cards of the kind.
        def counted(points: int, minimum: int) -> tuple[int, ...]:
            return tuple(
                points + self._extra * (n - minimum) if points and n >= minimum else 0
                for n in range(_MAX_COUNT)
            )

        self._tane_pts = counted(pts.tane, 5)
        self._tanzaku_pts = counted(pts.tanzaku, 5)
        self._kasu_pts = counted(pts.kasu, 10)
        # Tables for total(): each family's points, found by evaluating piles that
        # hold only that family's cards.
        self._bright_pts = {b: e[1] if e else 0 for b, e in self._bright_best.items()}
        self._animal_table = self._family_table(
            INO_SHIKA_CHO, _ANIMAL_FILLERS, ("inoshikacho", "tane")
        )
        self._ribbon_table = self._family_table(
            DOUBLE_RIBBONS, _RIBBON_FILLERS, ("akatan_aotan", "akatan", "aotan", "tanzaku")
        )
        self._view_table = tuple(
            {
                v: sum(e[1] for e in self._viewing(v | SAKE_CUP, called))
                for v in (0, CURTAIN, MOON, VIEW_CARDS)
            }
            for called in (False, True)
        )
        self._month_pts = self._p["tsukifuda"] + self._p["teshi"]

    def __repr__(self) -> str:
        return f"Scorer(<rules {self.rules.name!r}>)"

    # ----------------------------------------------------------------- public

    def total(self, captured: int, month: int, koikoi_called: bool) -> int:
        """The yaku total of a capture pile: ``evaluate(...).total``, fast.

        This is the engine's hot path (called after every capture). Under
        ``absorb`` and ``separate`` it adds up precomputed per-family tables;
        under ``exclusive`` it counts when no fixed-card yaku can hold and
        otherwise memoizes the search in a bounded dict.

        Args:
            captured: the capture pile, a card set.
            month: the round's month 1..12 (only read by tsukifuda and collected teshi).
            koikoi_called: whether the pile's holder has called koi-koi this round
                (only read by ``yaku.viewing_after_koikoi``).

        >>> from koikoi.game.cards import parse_cards
        >>> Scorer(Rules()).total(parse_cards("1R 2R 3R 4R 5R"), 1, False)
        7
        """
        if self._exclusive_mode:
            return self._total_exclusive(
                captured, month if self._month_matters else 0, koikoi_called
            )
        other = (
            self._bright_pts[captured & BRIGHTS]
            + self._ribbon_table[captured & DOUBLE_RIBBONS][(captured & RIBBONS).bit_count()]
        )
        if month and self._month_matters:
            quad = MONTH_MASKS[month - 1]
            if captured & quad == quad:
                other += self._month_pts
        animal_row = self._animal_table[captured & INO_SHIKA_CHO]
        na = (captured & ANIMALS).bit_count()
        np = (captured & PLAINS).bit_count()
        kasu = self._kasu_pts
        if not captured & SAKE_CUP:
            return other + animal_row[na] + kasu[np]
        view = 0
        if not captured & self._spoilers:
            view = self._view_table[1 if koikoi_called else 0][captured & VIEW_CARDS]
        best = 0
        for animal, roles in self._variants:
            value = other + animal_row[na if animal else na - 1] + kasu[np + roles]
            if view and (value or not self._requires_other):
                value += view
            if value > best:
                best = value
        return best

    def _total_exclusive(self, captured: int, month: int, called: bool) -> int:
        """:meth:`total` under ``exclusive``: a count without fixed-card yaku, else cached."""
        na = (captured & ANIMALS).bit_count()
        nr = (captured & RIBBONS).bit_count()
        np = (captured & PLAINS).bit_count()
        quad = MONTH_MASKS[month - 1] if month else _NO_CARD
        if not (
            self._bright_alternatives[captured & BRIGHTS]
            or captured & INO_SHIKA_CHO == INO_SHIKA_CHO
            or captured & AKATAN == AKATAN
            or captured & AOTAN == AOTAN
            or (captured & SAKE_CUP and captured & VIEW_CARDS)
            or captured & quad == quad
        ):
            # Only tane, tanzaku and kasu can score: they count the cards of their kind.
            rest = self._tanzaku_pts[nr]
            if not captured & SAKE_CUP:
                return rest + self._tane_pts[na] + self._kasu_pts[np]
            return rest + max(
                self._tane_pts[na if animal else na - 1] + self._kasu_pts[np + roles]
                for animal, roles in self._variants
            )
        # The total depends only on the cards yaku name (Brights, inoshikacho, the
        # red and blue ribbons, the Sake cup, spoilers, the month's four cards) and
        # on how many Animals, Ribbons and Plains the pile holds, and those counts
        # only when they can reach tane (5), tanzaku (5) or kasu (10 with up to two
        # Sake cup roles): key the cache on that, so that piles share entries.
        key = (
            (captured & self._named_by_month[month])
            | month << 61
            | (na if na >= 5 else 0) << 48
            | (nr if nr >= 5 else 0) << 52
            | (np if np >= 8 else 0) << 56
        )
        if called:
            key |= self._called_bit
        cache = self._cache
        value = cache.get(key)
        if value is None:
            value = 0
            for _, points, _ in self._entries(captured, month, called):
                value += points
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[key] = value
        return value

    def evaluate(self, captured: int, month: int, koikoi_called: bool) -> YakuResult:
        """Every scoring yaku of a capture pile, with its points and cards.

        ``evaluate(...).total == total(...)`` always.

        >>> from koikoi.game.cards import parse_cards
        >>> r = Scorer(Rules()).evaluate(parse_cards("1R 2R 3R 4R 5R"), 1, False)
        >>> r.yaku
        (YakuScore(name='akatan', points=7, cards=139810),)
        """
        if not self._month_matters:
            month = 0
        entries = sorted(self._entries(captured, month, koikoi_called), key=lambda e: _RANK[e[0]])
        yaku = tuple(YakuScore(name, points, _fold_roles(cards)) for name, points, cards in entries)
        return YakuResult(yaku, sum(y.points for y in yaku))

    def settle(
        self,
        result: YakuResult,
        *,
        winner: int | None,
        reason: str,
        own_koikoi: int,
        opponent_koikoi: int,
        improved_after_koikoi: bool,
    ) -> Settlement:
        """Settle a round stopped by ``winner`` holding ``result`` (docs/rules.md).

        Also used for exhausted rounds settled "as if stopped". The base is
        ``result.total``; then ``seven_double`` (x2 at 7 or more), then the koi-koi
        bonus of ``koikoi.bonus``.

        Args:
            result: the winner's yaku.
            winner: 0 or 1 (``None``: nobody scores).
            reason: why the round ended, e.g. ``"stop"``.
            own_koikoi: how many times the winner called koi-koi this round.
            opponent_koikoi: how many times the opponent called koi-koi this round.
            improved_after_koikoi: whether the winner's score went up after its
                (last) koi-koi call (read by ``challenge_x2``).
        """
        if winner is None:
            return Settlement(None, reason, result.yaku, result.total, (), 0, (0, 0))
        kk = self.rules.koikoi
        steps: list[Multiplier] = []
        base = result.total
        if kk.seven_double and base >= 7:
            steps.append(Multiplier("seven_double", factor=2))
        if kk.bonus == "opponent_x2":
            if opponent_koikoi > 0:
                steps.append(Multiplier("opponent_koikoi", factor=2))
        elif kk.bonus == "challenge_x2":
            if (own_koikoi > 0 and improved_after_koikoi) or opponent_koikoi > 0:
                steps.append(Multiplier("koikoi_challenge", factor=2))
        elif kk.bonus == "ladder":
            n = own_koikoi
            if 1 <= n <= 3:
                steps.append(Multiplier("koikoi_ladder", add=n))
            elif n >= 4:
                steps.append(Multiplier("koikoi_ladder", factor=n - 2))
        points = base
        for m in steps:
            points = m.apply(points)
        return Settlement(
            winner, reason, result.yaku, base, tuple(steps), points, self._deltas(winner, points)
        )

    def settle_stop(
        self,
        winner: int,
        pile: int,
        month: int,
        koikoi_calls: Sequence[int],
        scores: Sequence[int],
        called_scores: Sequence[int],
        *,
        reason: str = "stop",
    ) -> Settlement:
        """The settlement if ``winner`` stops now: :meth:`evaluate` then :meth:`settle`.

        Args:
            winner: the player who stops, 0 or 1.
            pile: the winner's capture pile (a mask).
            month: the round's month.
            koikoi_calls: both players' koi-koi calls this round.
            scores: both players' yaku totals now.
            called_scores: both players' totals at their last koi-koi call.
            reason: why the round ends (``"stop"``, or a rule's "as if stopped").

        >>> from koikoi.game.cards import parse_cards
        >>> pile = parse_cards("1L 3L 8L")
        >>> Scorer(Rules()).settle_stop(0, pile, 1, (0, 1), (5, 0), (0, 0)).points
        10
        """
        called = koikoi_calls[winner]
        return self.settle(
            self.evaluate(pile, month, called > 0),
            winner=winner,
            reason=reason,
            own_koikoi=called,
            opponent_koikoi=koikoi_calls[1 - winner],
            improved_after_koikoi=called > 0 and scores[winner] > called_scores[winner],
        )

    def award(
        self, winner: int, points: int, reason: str, *, yaku: tuple[YakuScore, ...] = ()
    ) -> Settlement:
        """A flat award with no multipliers (oya-ken, dealer point, instant hand).

        >>> Scorer(Rules()).award(0, 1, "dealer_point").deltas
        (1, 0)
        """
        return Settlement(winner, reason, yaku, points, (), points, self._deltas(winner, points))

    def no_score(self, reason: str) -> Settlement:
        """A round that scores nobody.

        >>> Scorer(Rules()).no_score("exhausted").deltas
        (0, 0)
        """
        return Settlement(None, reason, (), 0, (), 0, (0, 0))

    def instant(self, hand: int) -> YakuResult | None:
        """The instant (dealt) hand yaku of ``hand``, if any (docs/rules.md).

        Teshi is four cards of one month; kuttsuki is four pairs (every month in
        the eight cards appears an even number of times). A yaku with 0 points is
        off; when both hold, the higher one scores (teshi on a tie).

        >>> from koikoi.game.cards import parse_cards
        >>> Scorer(Rules()).instant(parse_cards("1L 1R 1P1 1P2 2A 3L 4A 5A")).yaku[0].name
        'teshi'
        """
        inst = self.rules.instant
        best: YakuScore | None = None
        if inst.teshi > 0:
            for m in MONTH_MASKS:
                if hand & m == m:
                    best = YakuScore("teshi", inst.teshi, m)
                    break
        pairs = (
            inst.kuttsuki > 0
            and hand.bit_count() == 8
            and all((hand & m).bit_count() % 2 == 0 for m in MONTH_MASKS)
        )
        if pairs and (best is None or inst.kuttsuki > best.points):
            best = YakuScore("kuttsuki", inst.kuttsuki, hand)
        if best is None:
            return None
        return YakuResult((best,), best.points)

    # -------------------------------------------------------------- internals

    def _family_table(
        self, named: int, fillers: tuple[int, ...], family: tuple[str, ...]
    ) -> dict[int, tuple[int, ...]]:
        """Points of one family of yaku by (named cards held, number of cards of the kind).

        Evaluates a pile of the family's named cards plus other cards of the kind;
        impossible combinations score 0.
        """
        table: dict[int, tuple[int, ...]] = {}
        for held in self._subsets(named):
            row = [0] * _MAX_COUNT
            for extra in range(len(fillers) + 1):
                pile = held | sum(fillers[:extra])
                entries = self._evaluate(pile, 0, False, True, 0)
                row[pile.bit_count()] = sum(e[1] for e in entries if e[0] in family)
            table[held] = tuple(row)
        return table

    @staticmethod
    def _subsets(mask: int) -> list[int]:
        cards = card_list(mask)
        return [
            sum(1 << c for c in combo)
            for n in range(len(cards) + 1)
            for combo in combinations(cards, n)
        ]

    def _deltas(self, winner: int, points: int) -> tuple[int, int]:
        loss = -points if self.rules.game.start_points > 0 else 0
        return (points, loss) if winner == 0 else (loss, points)

    def _entries(self, captured: int, month: int, called: bool) -> list[_Entry]:
        """The scoring yaku, best reading of the Sake cup (ties: as an Animal)."""
        variants = self._variants
        if len(variants) == 1 or not captured & SAKE_CUP:
            animal, plains = variants[0]
            return self._evaluate(captured, month, called, animal, plains)
        best: list[_Entry] = []
        best_total = -1
        for animal, plains in variants:
            entries = self._evaluate(captured, month, called, animal, plains)
            t = sum(e[1] for e in entries)
            if t > best_total:
                best, best_total = entries, t
        return best

    @classmethod
    def _bright_sets(cls) -> list[int]:
        return cls._subsets(BRIGHTS)

    def _all_brights(self, b: int) -> list[_Entry]:
        """Every Bright yaku that ``b`` holds, on each subset of cards it could use."""
        p = self._p
        out: list[_Entry] = []
        if p["goko"] and b == BRIGHTS:
            out.append(("goko", p["goko"], BRIGHTS))
        if p["shiko"] and b & NON_RAIN_BRIGHTS == NON_RAIN_BRIGHTS:
            out.append(("shiko", p["shiko"], NON_RAIN_BRIGHTS))
        non_rain = card_list(b & NON_RAIN_BRIGHTS)
        if p["ame_shiko"] and b & RAIN_MAN:
            for combo in combinations(non_rain, 3):
                out.append(("ame_shiko", p["ame_shiko"], RAIN_MAN | sum(1 << c for c in combo)))
        if p["sanko"]:
            pool = card_list(b) if self._sanko_with_rainman else non_rain
            for combo in combinations(pool, 3):
                out.append(("sanko", p["sanko"], sum(1 << c for c in combo)))
        out.sort(key=lambda e: -e[1])  # stable: goko, shiko, ame_shiko, sanko on ties
        return out

    def _best_bright(self, b: int) -> _Entry | None:
        """The highest Bright yaku ``b`` holds (docs/rules.md: only the highest scores)."""
        alternatives = self._all_brights(b)
        if not alternatives:
            return None
        name, points, _ = alternatives[0]
        if name == "goko" or name == "shiko":
            cards = alternatives[0][2]
        elif name == "ame_shiko":
            cards = RAIN_MAN | _lowest(b & NON_RAIN_BRIGHTS, 3)
        else:  # sanko: prefer the non-rain Brights
            cards = _lowest(b & NON_RAIN_BRIGHTS, 3)
            if cards.bit_count() < 3:
                cards |= RAIN_MAN
        return (name, points, cards)

    def _viewing(self, captured: int, called: bool) -> list[_Entry]:
        """Hanami and tsukimi as held, before ``viewing_requires_other``."""
        if not captured & SAKE_CUP or captured & self._spoilers or not self._viewing_exists:
            return []
        p = self._p
        out: list[_Entry] = []
        after = self._viewing_after if called else 0
        if p["hanami"] and captured & CURTAIN:
            out.append(("hanami", after or p["hanami"], CURTAIN | SAKE_CUP))
        if p["tsukimi"] and captured & MOON:
            out.append(("tsukimi", after or p["tsukimi"], MOON | SAKE_CUP))
        return out

    def _month_yaku(self, captured: int, month: int) -> list[_Entry]:
        """Tsukifuda and collected teshi: all four cards of the round's month."""
        if not month:
            return []
        quad = MONTH_MASKS[month - 1]
        if captured & quad != quad:
            return []
        out: list[_Entry] = []
        if self._p["tsukifuda"]:
            out.append(("tsukifuda", self._p["tsukifuda"], quad))
        if self._teshi_collected:
            out.append(("teshi", self._p["teshi"], quad))
        return out

    def _finish_open(
        self, out: list[_Entry], captured: int, month: int, called: bool, plain_roles: int
    ) -> list[_Entry]:
        """Add kasu and the yaku that score on their own under absorb and separate."""
        if captured & PLAINS:
            kasu = self._kasu(captured, plain_roles)
            if kasu is not None:
                out.append(kasu)
        if month:
            out.extend(self._month_yaku(captured, month))
        if captured & SAKE_CUP and self._viewing_exists:
            viewing = self._viewing(captured, called)
            if viewing and (out or not self._requires_other):
                out.extend(viewing)
        return out

    def _kasu(self, captured: int, plain_roles: int) -> _Entry | None:
        """Kasu, counting the Sake cup's Plain roles."""
        plains = captured & PLAINS
        n = plains.bit_count()
        if plain_roles and captured & SAKE_CUP:
            n += plain_roles
            plains |= SAKE_CUP
        points = self._kasu_pts[n]
        return ("kasu", points, plains) if points else None

    def _open_absorb(
        self, captured: int, month: int, called: bool, animal: bool, plain_roles: int
    ) -> list[_Entry]:
        """``combine = "absorb"``: the best yaku of each family, with bonus cards."""
        p = self._p
        extra = self._extra
        out: list[_Entry] = []
        bright = self._bright_best[captured & BRIGHTS]
        if bright is not None:
            out.append(bright)
        # Animals: the best of inoshikacho and tane.
        animals = captured & (ANIMALS if animal else ANIMALS_NO_SAKE)
        na = animals.bit_count()
        if na >= 3:
            best: _Entry | None = None
            if p["inoshikacho"] and captured & INO_SHIKA_CHO == INO_SHIKA_CHO:
                best = (
                    "inoshikacho",
                    p["inoshikacho"] + extra * (na - 3),
                    animals if extra else INO_SHIKA_CHO,
                )
            pts = self._tane_pts[na]
            if pts and (best is None or pts > best[1]):
                best = ("tane", pts, animals)
            if best is not None:
                out.append(best)
        # Ribbons: the best of akatan_aotan, akatan, aotan and tanzaku.
        ribbons = captured & RIBBONS
        nr = ribbons.bit_count()
        if nr >= 3:
            best = None
            aka = captured & AKATAN == AKATAN
            ao = captured & AOTAN == AOTAN
            if aka and ao and p["akatan_aotan"]:
                best = (
                    "akatan_aotan",
                    p["akatan_aotan"] + extra * (nr - 6),
                    ribbons if extra else DOUBLE_RIBBONS,
                )
            if aka and p["akatan"]:
                pts = p["akatan"] + extra * (nr - 3)
                if best is None or pts > best[1]:
                    best = ("akatan", pts, ribbons if extra else AKATAN)
            if ao and p["aotan"]:
                pts = p["aotan"] + extra * (nr - 3)
                if best is None or pts > best[1]:
                    best = ("aotan", pts, ribbons if extra else AOTAN)
            pts = self._tanzaku_pts[nr]
            if pts and (best is None or pts > best[1]):
                best = ("tanzaku", pts, ribbons)
            if best is not None:
                out.append(best)
        return self._finish_open(out, captured, month, called, plain_roles)

    def _open_separate(
        self, captured: int, month: int, called: bool, animal: bool, plain_roles: int
    ) -> list[_Entry]:
        """``combine = "separate"``: every yaku that holds; bonus only on tane/tanzaku/kasu."""
        p = self._p
        out: list[_Entry] = []
        bright = self._bright_best[captured & BRIGHTS]
        if bright is not None:
            out.append(bright)
        if p["inoshikacho"] and captured & INO_SHIKA_CHO == INO_SHIKA_CHO:
            out.append(("inoshikacho", p["inoshikacho"], INO_SHIKA_CHO))
        animals = captured & (ANIMALS if animal else ANIMALS_NO_SAKE)
        na = animals.bit_count()
        if self._tane_pts[na]:
            out.append(("tane", self._tane_pts[na], animals))
        aka = captured & AKATAN == AKATAN
        ao = captured & AOTAN == AOTAN
        if aka and ao and p["akatan_aotan"]:
            out.append(("akatan_aotan", p["akatan_aotan"], DOUBLE_RIBBONS))
            if not self._aka_ao_adds:  # it replaces akatan and aotan
                aka = ao = False
        if aka and p["akatan"]:
            out.append(("akatan", p["akatan"], AKATAN))
        if ao and p["aotan"]:
            out.append(("aotan", p["aotan"], AOTAN))
        ribbons = captured & RIBBONS
        nr = ribbons.bit_count()
        if self._tanzaku_pts[nr]:
            out.append(("tanzaku", self._tanzaku_pts[nr], ribbons))
        return self._finish_open(out, captured, month, called, plain_roles)

    def _exclusive(
        self, captured: int, month: int, called: bool, animal: bool, plain_roles: int
    ) -> list[_Entry]:
        """``combine = "exclusive"``: the best set of yaku in which no card serves twice.

        The fixed-card yaku fall into groups (Brights, inoshikacho, the red/blue
        ribbons, viewing, the month's four cards); one alternative (or none) is
        chosen per group, the choices may not share a card, and tane / tanzaku /
        kasu count the cards of their kind left over. Hanami and tsukimi share the
        Sake cup; its extra Plain roles are extra cards (bits 48 and 49).
        """
        p = self._p
        if animal:
            animal_mask = ANIMALS
            plain_mask = PLAINS | _ROLE_1 | _ROLE_2
            roles = 0
            if captured & SAKE_CUP and plain_roles:
                roles = _ROLE_1 if plain_roles == 1 else _ROLE_1 | _ROLE_2
            sake_roles = (SAKE_CUP, _ROLE_1) if roles else (SAKE_CUP,)
        else:
            animal_mask = ANIMALS_NO_SAKE
            plain_mask = PLAINS | SAKE_CUP
            roles = 0
            sake_roles = (SAKE_CUP,)
        pile = captured | roles

        # Each group: a list of alternatives (entries, cards used).
        groups: list[list[tuple[tuple[_Entry, ...], int]]] = []
        brights = self._bright_alternatives[captured & BRIGHTS]
        if brights:
            groups.append([((e,), e[2]) for e in brights])
        if p["inoshikacho"] and captured & INO_SHIKA_CHO == INO_SHIKA_CHO:
            groups.append([((("inoshikacho", p["inoshikacho"], INO_SHIKA_CHO),), INO_SHIKA_CHO)])
        aka = captured & AKATAN == AKATAN and p["akatan"] > 0
        ao = captured & AOTAN == AOTAN and p["aotan"] > 0
        if aka or ao:
            ribbon_alts: list[tuple[tuple[_Entry, ...], int]] = []
            if captured & DOUBLE_RIBBONS == DOUBLE_RIBBONS and p["akatan_aotan"]:
                ribbon_alts.append(
                    ((("akatan_aotan", p["akatan_aotan"], DOUBLE_RIBBONS),), DOUBLE_RIBBONS)
                )
            akatan: _Entry = ("akatan", p["akatan"], AKATAN)
            aotan: _Entry = ("aotan", p["aotan"], AOTAN)
            if aka and ao:
                ribbon_alts.append(((akatan, aotan), DOUBLE_RIBBONS))
            if aka:
                ribbon_alts.append(((akatan,), AKATAN))
            if ao:
                ribbon_alts.append(((aotan,), AOTAN))
            groups.append(ribbon_alts)
        elif captured & DOUBLE_RIBBONS == DOUBLE_RIBBONS and p["akatan_aotan"]:
            groups.append(
                [((("akatan_aotan", p["akatan_aotan"], DOUBLE_RIBBONS),), DOUBLE_RIBBONS)]
            )
        viewing = self._viewing(captured, called)
        if viewing:
            view_alts: list[tuple[tuple[_Entry, ...], int]] = []
            for role in sake_roles:
                entries = tuple((n, pts, (c & ~SAKE_CUP) | role) for n, pts, c in viewing)
                if len(entries) == 2:
                    view_alts.append((entries, entries[0][2] | entries[1][2]))
                view_alts.extend(((e,), e[2]) for e in entries)
            view_alts.sort(key=lambda alt: -sum(e[1] for e in alt[0]))
            groups.append(view_alts)
        month_yaku = self._month_yaku(captured, month)
        if month_yaku:
            month_yaku.sort(key=lambda e: -e[1])
            groups.append([((e,), e[2]) for e in month_yaku])

        # Every compatible choice of one alternative (or none) per group.
        selections: list[tuple[int, tuple[_Entry, ...], int]] = [(0, (), 0)]
        for group in groups:
            grown: list[tuple[int, tuple[_Entry, ...], int]] = []
            for used, chosen, points in selections:
                for entries, cards in group:
                    if not cards & used:
                        grown.append(
                            (used | cards, chosen + entries, points + sum(e[1] for e in entries))
                        )
                grown.append((used, chosen, points))
            selections = grown

        tane, tanzaku, kasu = self._tane_pts, self._tanzaku_pts, self._kasu_pts
        requires_other = self._requires_other and bool(viewing)
        best: list[_Entry] = []
        best_total = -1
        for used, chosen, points in selections:
            out = list(chosen)
            left = pile & ~used
            animals = left & animal_mask
            extra_points = tane[animals.bit_count()]
            if extra_points:
                out.append(("tane", extra_points, animals))
                points += extra_points
            ribbons = left & RIBBONS
            extra_points = tanzaku[ribbons.bit_count()]
            if extra_points:
                out.append(("tanzaku", extra_points, ribbons))
                points += extra_points
            plains = left & plain_mask
            extra_points = kasu[plains.bit_count()]
            if extra_points:
                out.append(("kasu", extra_points, plains))
                points += extra_points
            if requires_other and out and all(e[0] in _VIEWING for e in out):
                continue  # viewing alone does not score
            if points > best_total:
                best, best_total = out, points
        return best


_SCORERS: dict[Rules, Scorer] = {}


def shared_scorer(rules: Rules) -> Scorer:
    """One :class:`Scorer` per rule set, shared so its memo serves every round and match."""
    scorer = _SCORERS.get(rules)
    if scorer is None:
        if len(_SCORERS) > 64:
            _SCORERS.clear()
        scorer = _SCORERS[rules] = Scorer(rules)
    return scorer


def score_cards(
    rules: Rules,
    captured: int,
    *,
    round_number: int = 1,
    koikoi_self: int = 0,
    opponent_koikoi: bool = False,
) -> Settlement:
    """Score a capture pile as a stop by player 0 (what ``koikoi score`` prints).

    Args:
        rules: the rule set.
        captured: the capture pile, a card set.
        round_number: the round (1-based); its month is ``month_of_round(round_number)``.
        koikoi_self: how many times the stopping player called koi-koi.
        opponent_koikoi: whether the opponent called koi-koi.

    Returns:
        The settlement; with no yaku, ``winner`` is ``None`` and ``reason`` ``"no_yaku"``.

    >>> from koikoi.game.cards import parse_cards
    >>> from koikoi.game.rules import get_rules
    >>> score_cards(get_rules("nintendo"), parse_cards("1L 3L 8L 11L"), opponent_koikoi=True).points
    28
    """
    scorer = shared_scorer(rules)
    month = month_of_round(round_number)
    result = scorer.evaluate(captured, month, koikoi_self > 0)
    if result.total <= 0:
        return Settlement(None, "no_yaku", result.yaku, 0, (), 0, (0, 0))
    return scorer.settle(
        result,
        winner=0,
        reason="stop",
        own_koikoi=koikoi_self,
        opponent_koikoi=1 if opponent_koikoi else 0,
        improved_after_koikoi=True,
    )
