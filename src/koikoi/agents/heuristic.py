"""A rule-aware heuristic player: card counting, yaku progress, denial, koi-koi by expectation.

:class:`HeuristicAgent` sees only its :class:`~koikoi.game.views.PlayerView`. It reads
the active rules once (which yaku exist, their points, the Sake cup, the
multipliers) and then, at each decision:

* **Card counting.** The view's ``unseen`` mask holds the opponent's hand and the
  stock. From it the agent estimates, for every month, the chance that the
  opponent holds a card of that month (hypergeometric), and for every card the
  chance that each player still gets it.
* **Yaku progress.** A capture pile is worth its exact yaku total
  (:class:`~koikoi.game.scoring.Scorer`) plus, for each yaku still reachable under the
  active rules, its points times the chance of collecting the missing cards.
  A card in the opponent's pile kills every yaku that needs it.
* **Denial.** A hand play is scored as the change of (own potential) minus
  (opponent's potential), minus the exposure of the field it leaves: each field
  month the opponent can capture, weighted by the chance that they hold a card
  of that month and by what those cards are worth to them and to us. So it avoids
  laying a card the opponent needs next to a month they can take, and prefers
  captures that break the opponent's near-complete yaku.
* **Koi-koi.** Stopping is worth the settlement now. Koi-koi is worth a race:
  each turn the opponent may complete a yaku (then they score, with the active
  multipliers: ``opponent_x2`` doubles them, ``challenge_x2`` too), and each of
  our turns we may improve (then we stop and score with our own bonus: ladder
  steps, ``challenge_x2``); if neither happens the round is exhausted and
  ``end.exhausted`` decides (under ``"draw"`` the points are lost). The agent
  calls koi-koi only when that expectation beats stopping by a margin.

Ties are broken with the injected random generator, so the agent is
deterministic given it.

>>> import random
>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> m = Match(seed=4)
>>> agent = HeuristicAgent()
>>> agent.act(view_of(m, m.current), random.Random(0)) in m.legal_ids()
True
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    PLAY_TARGET_BASE,
    TAKE_BASE,
)
from koikoi.game.cards import MONTH_MASKS, card_list
from koikoi.game.engine import CARD_MONTH_MASK, Phase
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.scoring import Scorer, YakuResult
from koikoi.game.tables import BRIGHT_YAKU, LIGHTNING, WILLOWS, yaku_cards
from koikoi.game.views import PlayerView

__all__ = ["HeuristicAgent", "Target", "from_spec", "targets_for"]


@dataclass(frozen=True, slots=True)
class Target:
    """A yaku the agent works toward: ``need`` cards of ``mask`` give ``points``.

    ``family`` groups alternatives of which only the best scores (the Bright yaku).
    """

    name: str
    points: int
    mask: int
    need: int
    family: str


@functools.lru_cache(maxsize=64)
def targets_for(rules: Rules, month: int, called: bool) -> tuple[Target, ...]:
    """The yaku targets of a rule set for the round's ``month``.

    Only yaku with points under ``rules`` appear; the Sake cup counts toward the
    Plains when ``yaku.sake_cup`` lets it; viewing yaku take their points after
    koi-koi when ``called``.

    >>> from koikoi.game.rules import get_rules
    >>> names = [t.name for t in targets_for(get_rules("leaflet"), 1, False)]
    >>> "hanami" in names, "akatan" in names
    (False, True)
    """
    p = rules.points
    y = rules.yaku
    after = y.viewing_after_koikoi if called else 0
    # Viewing yaku that need another yaku are worth less on their own.
    scale = 0.6 if y.viewing_requires_other else 1.0
    out: list[Target] = []
    for row in yaku_cards(rules, month):
        if row.name in ("hanami", "tsukimi"):
            points = int((after or getattr(p, row.name)) * scale)
        elif row.name == "teshi":
            points = rules.instant.teshi
        else:
            points = getattr(p, row.name)
        if points > 0:
            family = "brights" if row.name in BRIGHT_YAKU else row.name
            out.append(Target(row.name, points, row.cards, row.need, family))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Weights:
    """The agent's tunable weights (defaults were tuned with ``koikoi arena``)."""

    potential: float = 0.6
    """Weight of not-yet-complete yaku against scored points."""
    exposure: float = 2.5
    """Weight of the field exposure to the opponent's next capture."""
    koikoi_margin: float = 0.5
    """Koi-koi only when its expectation beats stopping by this many points."""


class _Decision:
    """Everything the agent computes once per decision from the view."""

    __slots__ = (
        "_memo_me",
        "_memo_opp",
        "_month_gain",
        "avail_me",
        "avail_opp",
        "field",
        "hand",
        "hold_opp",
        "month",
        "my_called",
        "opp_called",
        "opp_hand",
        "pile_me",
        "pile_opp",
        "ranked_me",
        "ranked_opp",
        "scorer",
        "targets_me",
        "targets_opp",
        "unseen",
        "unseen_n",
        "weights",
        "wild",
    )

    def __init__(self, view: PlayerView, scorer: Scorer, weights: Weights) -> None:
        me = view.player if view.player is not None else 0
        opp = 1 - me
        self.scorer = scorer
        self.weights = weights
        self.month = view.month
        self.hand = view.hand
        self.field = view.field
        self.pile_me = view.piles[me]
        self.pile_opp = view.piles[opp]
        self.unseen = view.unseen
        self.unseen_n = self.unseen.bit_count()
        self.opp_hand = view.hand_counts[opp]
        self.my_called = view.koikoi_calls[me] > 0
        self.opp_called = view.koikoi_calls[opp] > 0
        self.wild = view.rules.play.wild_lightning
        self.targets_me = targets_for(view.rules, view.month, self.my_called)
        self.targets_opp = targets_for(view.rules, view.month, self.opp_called)
        # Chance that the opponent holds at least one unseen card of each month.
        u, h = self.unseen_n, self.opp_hand
        hold = []
        for m in range(12):
            k = (self.unseen & MONTH_MASKS[m]).bit_count()
            hold.append(_p_any(u, k, h))
        self.hold_opp = hold
        # How likely each player is to end up with each card (not in a pile).
        stage = min(1.0, (view.stock_count + 8) / 32)
        avail_me = [0.0] * 48
        avail_opp = [0.0] * 48
        field = self.field
        hand = self.hand
        for c in range(48):
            bit = 1 << c
            month = CARD_MONTH_MASK[c]
            if field & bit:
                mine = 0.8 if hand & month else 0.35
                theirs = 0.15 + 0.7 * hold[c // 4]
                if hand & month:
                    theirs *= 0.5
            elif hand & bit:
                mine = 0.65 if field & month else 0.4
                theirs = 0.1
            elif self.unseen & bit:
                mine = 0.3 * stage
                theirs = 0.35 * stage
            else:
                continue
            avail_me[c] = mine
            avail_opp[c] = theirs
        self.avail_me = avail_me
        self.avail_opp = avail_opp
        self.ranked_me = self._ranked(avail_me, self.targets_me)
        self.ranked_opp = self._ranked(avail_opp, self.targets_opp)
        self._memo_me: dict[tuple[int, int], float] = {}
        self._memo_opp: dict[tuple[int, int], float] = {}
        self._month_gain: dict[int, float] = {}

    # ----------------------------------------------------------- potentials

    def _ranked(
        self, avail: list[float], targets: tuple[Target, ...]
    ) -> list[list[tuple[float, int]]]:
        """For each target, its cards by decreasing availability (``(avail, bit)``)."""
        return [
            sorted(((avail[c], 1 << c) for c in card_list(t.mask)), reverse=True) for t in targets
        ]

    def potential(
        self,
        pile: int,
        dead: int,
        avail: list[float],
        targets: tuple[Target, ...],
        ranked: list[list[tuple[float, int]]],
    ) -> float:
        """Sum over reachable yaku of points times the chance of the missing cards."""
        total = 0.0
        brights = 0.0
        gone = pile | dead
        for t, order in zip(targets, ranked, strict=True):
            mask = t.mask
            k = t.need - (pile & mask).bit_count()
            if k <= 0:
                continue
            free = (mask & ~gone).bit_count()
            if free < k:
                continue
            prob = 1.0
            left = k
            for a, bit in order:
                if bit & gone:
                    continue
                prob *= a
                left -= 1
                if not left:
                    break
            if free > k:  # more ways to finish than the k likeliest cards
                prob = min(1.0, prob * (1.0 + 0.15 * (free - k)))
            value = t.points * prob
            if t.family == "brights":
                if value > brights:
                    brights = value
            else:
                total += value
        return total + brights

    def eval_me(self, pile: int, dead: int) -> float:
        key = (pile, dead)
        value = self._memo_me.get(key)
        if value is None:
            score = self.scorer.total(pile, self.month, self.my_called)
            pot = self.potential(pile, dead, self.avail_me, self.targets_me, self.ranked_me)
            value = self._memo_me[key] = score + self.weights.potential * pot
        return value

    def eval_opp(self, pile: int, dead: int) -> float:
        key = (pile, dead)
        value = self._memo_opp.get(key)
        if value is None:
            score = self.scorer.total(pile, self.month, self.opp_called)
            pot = self.potential(pile, dead, self.avail_opp, self.targets_opp, self.ranked_opp)
            value = self._memo_opp[key] = score + self.weights.potential * pot
        return value

    # ----------------------------------------------------------- positions

    def position(self, pile_me: int, field: int) -> float:
        """Value of a position after our capture: our gain, their loss, their threat."""
        ours = self.eval_me(pile_me, self.pile_opp)
        base_opp = self.eval_opp(self.pile_opp, pile_me)
        return ours - base_opp - self.weights.exposure * self.exposure(field)

    def exposure(self, field: int) -> float:
        """Expected swing of the opponent's next capture from ``field``.

        Each field month the opponent may hold a card of counts with the chance
        that they do, times what the capture gains them (their potential, with
        our pile as it is now); the likeliest-best month fully, the others less.
        """
        values = []
        f = field
        while f:
            low = f & -f
            m = (low.bit_length() - 1) // 4
            cards = field & MONTH_MASKS[m]
            f &= ~cards
            p = self.hold_opp[m]
            if p <= 0.0:
                continue
            gain = self._month_gain.get(cards)
            if gain is None:
                gain = self._month_gain[cards] = self._capture_gain(cards)
            if gain > 0:
                values.append(p * gain)
        if not values:
            return 0.0
        values.sort(reverse=True)
        return values[0] + 0.35 * sum(values[1:])

    def _capture_gain(self, cards: int) -> float:
        dead = self.pile_me
        base = self.eval_opp(self.pile_opp, dead)
        if cards.bit_count() == 2:  # they choose the better of the two
            best = max(self.eval_opp(self.pile_opp | (1 << c), dead) for c in card_list(cards))
        else:
            best = self.eval_opp(self.pile_opp | cards, dead)
        return best - base


def _p_any(unseen: int, good: int, draws: int) -> float:
    """Chance that ``draws`` cards out of ``unseen`` include at least one of ``good``."""
    if good <= 0 or draws <= 0 or unseen <= 0:
        return 0.0
    if unseen - good < draws:
        return 1.0
    return 1.0 - math.comb(unseen - good, draws) / math.comb(unseen, draws)


def _captured(field: int, card: int, target: int, wild: bool) -> int:
    """The cards that move to the pile when ``card`` arrives (0: it is laid), as the engine."""
    if target >= 0:
        return (1 << card) | (1 << target)
    if card == LIGHTNING and wild:
        willows = field & WILLOWS
        m = willows if willows.bit_count() == 3 else field
    else:
        m = field & CARD_MONTH_MASK[card]
    if not m:
        return 0
    return m | (1 << card)


class HeuristicAgent:
    """Card counting, yaku progress under the active rules, denial, koi-koi by expectation."""

    name = "heuristic"

    def __init__(self, weights: Weights | None = None) -> None:
        self.weights = weights if weights is not None else Weights()
        self._scorers: dict[Rules, Scorer] = {}

    def _scorer(self, rules: Rules) -> Scorer:
        scorer = self._scorers.get(rules)
        if scorer is None:
            scorer = self._scorers[rules] = Scorer(rules)
        return scorer

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if not ids:
            raise InvalidInputError("heuristic: no legal action in this view (not our turn)")
        if len(ids) == 1:
            return ids[0]
        values = self.evaluate(view)
        best = max(values.values())
        ties = [a for a in ids if values[a] >= best - 1e-9]
        return ties[int(rng.random() * len(ties))] if len(ties) > 1 else ties[0]

    def evaluate(self, view: PlayerView, rng: random.Random | None = None) -> dict[int, float]:
        """A heuristic value of every legal action (higher is better; ``rng`` is unused).

        Koi-koi and stop are valued in expected round points; captures on the
        agent's own scale (points plus weighted yaku potential).
        """
        d = _Decision(view, self._scorer(view.rules), self.weights)
        if view.phase is Phase.DECIDE:
            stop, koi = self.koikoi_values(view, d)
            return {a: (koi if a == KOIKOI_ID else stop) for a in view.legal_ids}
        out: dict[int, float] = {}
        for a in view.legal_ids:
            out[a] = self._capture_value(view, d, a)
        return out

    # ------------------------------------------------------------ captures

    def _capture_value(self, view: PlayerView, d: _Decision, action_id: int) -> float:
        field = d.field
        if action_id >= TAKE_BASE:  # the drawn card takes one of two field cards
            got = (1 << view.drawn) | (1 << (action_id - TAKE_BASE))
            return d.position(d.pile_me | got, field & ~got)
        if action_id >= DISCARD_BASE:
            card, got = action_id - DISCARD_BASE, 0
        elif action_id >= PLAY_TARGET_BASE:
            card, target = divmod(action_id - PLAY_TARGET_BASE, 48)
            got = _captured(field, card, target, d.wild)
        else:
            card = action_id
            got = _captured(field, card, -1, d.wild)
        if got:
            return d.position(d.pile_me | got, field & ~got)
        laid_field = field | (1 << card)
        value = d.position(d.pile_me, laid_field)
        # Our own draw may take the laid card back.
        u = d.unseen_n
        if u:
            same = (d.unseen & CARD_MONTH_MASK[card]).bit_count()
            if same:
                gain = d.eval_me(d.pile_me | (1 << card), d.pile_opp) - d.eval_me(
                    d.pile_me, d.pile_opp
                )
                value += 0.5 * same / u * gain
        return value

    # -------------------------------------------------------------- koi-koi

    def koikoi_values(self, view: PlayerView, d: _Decision | None = None) -> tuple[float, float]:
        """Expected round points of (stop, koi-koi) for the deciding player."""
        if d is None:
            d = _Decision(view, self._scorer(view.rules), self.weights)
        me = view.player if view.player is not None else 0
        opp = 1 - me
        scorer = d.scorer
        my_calls, opp_calls = view.koikoi_calls[me], view.koikoi_calls[opp]
        my_score = scorer.total(d.pile_me, d.month, my_calls > 0)
        stop = self._settle(scorer, my_score, my_calls, opp_calls, improved=my_calls > 0)
        # Cards that would raise each total at once (exact, under the active rules).
        after_calls = my_calls + 1
        my_called_score = scorer.total(d.pile_me, d.month, True)
        opp_score = scorer.total(d.pile_opp, d.month, opp_calls > 0)
        candidates = card_list(d.unseen | d.field | d.hand)
        my_gain: list[float] = []
        pi_me_miss = 1.0
        pi_opp_miss = 1.0
        opp_totals: list[float] = []
        u = max(d.unseen_n, 1)
        h = d.opp_hand
        for c in candidates:
            bit = 1 << c
            month = CARD_MONTH_MASK[c]
            gained = scorer.total(d.pile_me | bit, d.month, True) - my_called_score
            if gained > 0 and not (d.pile_opp & bit):
                if d.field & bit:
                    q = 0.85 if d.hand & month else 0.12
                elif d.hand & bit:
                    q = 0.85 if d.field & month else 0.25
                else:
                    q = (1.5 if d.field & month else 0.6) / u
                pi_me_miss *= 1.0 - q
                my_gain.append(gained)
            opp_total = scorer.total(d.pile_opp | bit, d.month, opp_calls > 0)
            if opp_total > opp_score:
                if d.field & bit:
                    q = 0.9 * d.hold_opp[c // 4] + 0.05
                elif d.hand & bit:
                    q = 0.08
                else:
                    in_hand = h / u
                    q = (
                        in_hand * (0.9 if d.field & month else 0.3)
                        + (1.0 if d.field & month else 0.3) / u
                    )
                pi_opp_miss *= 1.0 - q
                opp_totals.append(opp_total)
        pi_me = 1.0 - pi_me_miss
        pi_opp = 1.0 - pi_opp_miss
        turns_me = view.hand_counts[me]
        turns_opp = view.hand_counts[opp]
        # Two-card yaku of the opponent make them likelier to score over many turns.
        opp_pot = d.potential(d.pile_opp, d.pile_me, d.avail_opp, d.targets_opp, d.ranked_opp)
        pi_opp = min(0.95, pi_opp + 0.02 * opp_pot)
        gain = sum(my_gain) / len(my_gain) if my_gain else 1.0
        win_later = self._settle(scorer, my_called_score + gain, after_calls, opp_calls, True)
        opp_base = (sum(opp_totals) / len(opp_totals)) if opp_totals else max(opp_score + 1, 5)
        lose = -self._settle(scorer, opp_base, opp_calls, after_calls, improved=opp_calls > 0)
        exhaust = self._exhausted_value(view, d, my_called_score, after_calls, opp_score)
        value = 0.0
        alive = 1.0
        for turn in range(max(turns_me, turns_opp)):
            if turn < turns_opp:
                value += alive * pi_opp * lose
                alive *= 1.0 - pi_opp
            if turn < turns_me:
                value += alive * pi_me * win_later
                alive *= 1.0 - pi_me
        value += alive * exhaust
        return stop, value - self.weights.koikoi_margin

    @staticmethod
    def _settle(scorer: Scorer, base: float, own: int, opp: int, improved: bool) -> float:
        """Points of a settlement with a (possibly fractional) base."""
        if base <= 0:
            return 0.0
        whole = max(1, round(base))
        s = scorer.settle(
            YakuResult((), whole),
            winner=0,
            reason="stop",
            own_koikoi=own,
            opponent_koikoi=opp,
            improved_after_koikoi=improved,
        )
        return s.points * base / whole

    def _exhausted_value(
        self, view: PlayerView, d: _Decision, my_score: int, my_calls: int, opp_score: int
    ) -> float:
        rules = view.rules
        me = view.player if view.player is not None else 0
        opp_calls = view.koikoi_calls[1 - me]
        rule = rules.end.exhausted
        oya = rules.end.oya_ken
        dealer_sign = 1.0 if view.dealer == me else -1.0
        if rule == "draw":
            return 0.0
        if rule == "dealer_point":
            return dealer_sign * oya
        if rule == "last_yaku":  # we were the last to improve
            return self._settle(d.scorer, my_score, my_calls, opp_calls, False)
        # highest
        if my_score > opp_score or (my_score == opp_score and view.dealer == me):
            return self._settle(d.scorer, my_score, my_calls, opp_calls, False)
        return -self._settle(d.scorer, opp_score, opp_calls, my_calls, False)


_PARAMS: Final = ("potential", "exposure", "margin")


def from_spec(params: Mapping[str, str], raw: str) -> HeuristicAgent:
    """Build from ``heuristic[:potential=0.6,exposure=2.5,margin=0.5]``.

    Raises:
        InvalidInputError: an unknown parameter or a value that is not a number.
    """
    values: dict[str, float] = {}
    for key, text in params.items():
        if key not in _PARAMS:
            raise InvalidInputError(
                f"heuristic: unknown parameter {key!r}: allowed {', '.join(_PARAMS)}"
            )
        try:
            value = float(text)
        except ValueError:
            raise InvalidInputError(f"heuristic: {key} must be a number, not {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise InvalidInputError(f"heuristic: {key} must be 0 or more, not {text!r}")
        values[key] = value
    w = Weights()
    return HeuristicAgent(
        Weights(
            potential=values.get("potential", w.potential),
            exposure=values.get("exposure", w.exposure),
            koikoi_margin=values.get("margin", w.koikoi_margin),
        )
    )
