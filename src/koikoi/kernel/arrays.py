"""The kernel's arrays: the rules, a round and a random generator as numpy arrays.

What :mod:`koikoi.kernel._compiled` reads and writes, with the codes of the
rollout policies and of the settlement reasons. Only :mod:`koikoi.kernel`
touches the compiled module; everything else goes through these functions.
"""

from __future__ import annotations

import functools
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from koikoi.game.cards import BRIGHTS, parse_card
from koikoi.game.engine import Phase, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.tables import NON_RAIN_BRIGHTS, RAIN_MAN, yaku_cards
from koikoi.kernel.policy import PROGRESS_YAKU

__all__ = [
    "POLICIES",
    "REASONS",
    "KernelState",
    "available",
    "compiled",
    "encode_round",
    "encode_rules",
    "policy_code",
    "rng_state",
    "rules_array",
]

POLICIES: Final[tuple[str, ...]] = ("random", "greedy", "yaku", "tactical", "bold", "soft")
"""The rollout policies, by the kernel's policy code."""

REASONS: Final[tuple[str, ...]] = (
    "",
    "stop",
    "exhausted",
    "exhausted_highest",
    "exhausted_last_yaku",
    "dealer_point",
    "oya_ken",
)
"""Settlement reasons by the kernel's reason code (as in
:class:`~koikoi.game.scoring.Settlement`)."""

_COMBINE: Final = {"absorb": 0, "separate": 1, "exclusive": 2}
_SAKE: Final = {"animal": 0, "both": 1, "either": 2, "both_double_plain": 3}
_HAND_CARD: Final = {"any": 0, "any_or_discard": 1, "must_match": 2}
_BONUS: Final = {"opponent_x2": 0, "challenge_x2": 1, "ladder": 2, "none": 3}
_EXHAUSTED: Final = {"draw": 0, "highest": 1, "last_yaku": 2, "dealer_point": 3}
_BRIGHT_CARDS: Final = tuple(c for c in range(48) if BRIGHTS >> c & 1)


@functools.cache
def compiled() -> Any:
    """The compiled module (numba compiles it, or loads it from its cache, on first use)."""
    from koikoi.kernel import _compiled

    return _compiled


def available() -> bool:
    """Whether the compiled kernel can be used: numba and numpy import (they are
    dependencies of koikoi, so it is False only in a broken installation)."""
    try:
        compiled()
    except ImportError:
        return False
    return True


def policy_code(policy: str) -> int:
    """The kernel's code of a rollout policy (its index in :data:`POLICIES`).

    Raises:
        InvalidInputError: if ``policy`` is not one of :data:`POLICIES`.
    """
    if policy not in POLICIES:
        raise InvalidInputError(
            f"unknown rollout policy {policy!r}: allowed {', '.join(map(repr, POLICIES))}"
        )
    return POLICIES.index(policy)


def _bright_best(rules: Rules, bright_index: int) -> int:
    """Points of the best Bright yaku held by the Brights of a 5-bit index (Scorer semantics)."""
    b = 0
    for i, card in enumerate(_BRIGHT_CARDS):
        if bright_index >> i & 1:
            b |= 1 << card
    pts = rules.points
    non_rain = (b & NON_RAIN_BRIGHTS).bit_count()
    best = 0
    if pts.goko and b == BRIGHTS:
        best = max(best, pts.goko)
    if pts.shiko and b & NON_RAIN_BRIGHTS == NON_RAIN_BRIGHTS:
        best = max(best, pts.shiko)
    if pts.ame_shiko and b & RAIN_MAN and non_rain >= 3:
        best = max(best, pts.ame_shiko)
    pool = b.bit_count() if rules.yaku.sanko_with_rainman else non_rain
    if pts.sanko and pool >= 3:
        best = max(best, pts.sanko)
    return best


def _rules_values(rules: Rules) -> list[int]:
    """The kernel's rules array as plain ints (see ``_compiled``'s ``R_*`` for the layout)."""
    p = rules.points
    y = rules.yaku
    teshi = rules.instant.teshi if rules.instant.teshi_collected else 0
    spoilers = 0
    for code in y.viewing_spoiled_by:
        spoilers |= 1 << parse_card(code)
    values = [
        p.goko,
        p.shiko,
        p.ame_shiko,
        p.sanko,
        p.inoshikacho,
        p.tane,
        p.akatan,
        p.aotan,
        p.akatan_aotan,
        p.tanzaku,
        p.kasu,
        p.hanami,
        p.tsukimi,
        p.tsukifuda,
        teshi,
        y.extra,
        _COMBINE[y.combine],
        _SAKE[y.sake_cup],
        int(y.sanko_with_rainman),
        int(y.akatan_aotan_adds),
        int(y.viewing_requires_other),
        spoilers,
        y.viewing_after_koikoi,
        _HAND_CARD[rules.play.hand_card],
        int(rules.play.wild_lightning),
        rules.koikoi.limit,
        int(rules.koikoi.limit_scope == "round"),
        int(rules.koikoi.offer_on_last_card),
        _BONUS[rules.koikoi.bonus],
        int(rules.koikoi.seven_double),
        _EXHAUSTED[rules.end.exhausted],
        int(rules.end.first_empty_hand),
        rules.end.oya_ken,
        int(rules.game.start_points > 0),
        int(p.tsukifuda > 0 or teshi > 0),
        int(p.hanami > 0 or p.tsukimi > 0),
    ]
    values.extend(_bright_best(rules, i) for i in range(32))
    cards = {row.name: row for row in yaku_cards(rules, 1)}  # none of them is the month's
    for name in PROGRESS_YAKU:
        values += [cards[name].cards, cards[name].need, getattr(p, name)]
    return values


@functools.lru_cache(maxsize=64)
def rules_array(rules: Rules) -> npt.NDArray[np.int64]:
    """The kernel's rules array of ``rules``, cached: shared, never to be written."""
    return np.array(_rules_values(rules), dtype=np.int64)


def encode_rules(rules: Rules) -> npt.NDArray[np.int64]:
    """The round-relevant options of ``rules`` as the kernel's int64 array (a fresh copy).

    Yaku points, ``extra``, the combine mode, the Sake cup, the viewing options,
    tsukifuda and collected teshi, what may be played, wild Lightning, the
    koi-koi limit, offer and bonus, seven-double, the exhausted-round rule,
    ``first_empty_hand``, oya-ken and zero-sum; plus a 32-entry table of the best
    Bright yaku by Bright subset, and the cards, count and points of each yaku
    the ``tactical`` and ``bold`` policies weigh (:data:`~koikoi.kernel.policy.PROGRESS_YAKU`,
    from :func:`koikoi.game.tables.yaku_cards`). Match-level options (deals, dealers, rounds)
    do not enter a round and are not encoded.

    >>> from koikoi.game.rules import get_rules
    >>> arr = encode_rules(get_rules("nintendo"))
    >>> int(arr[0]), len(arr)  # goko's points
    (10, 95)
    """
    return rules_array(rules).copy()


class KernelState(NamedTuple):
    """A round as the kernel's arrays: ``state`` (int64) and ``stock`` (int8, top card last)."""

    state: npt.NDArray[np.int64]
    stock: npt.NDArray[np.int8]


def encode_round(rnd: Round) -> KernelState:
    """The kernel's arrays for ``rnd`` (which is not changed).

    >>> from koikoi.game.engine import Match
    >>> st = encode_round(Match(seed=2, events=False).round)
    >>> int(st.state[18]), len(st.stock)  # cards in the stock, room for 48
    (24, 48)
    """
    impl = compiled()

    state = np.zeros(impl.STATE_SIZE, dtype=np.int64)
    state[impl.S_HAND0] = rnd.hands[0]
    state[impl.S_HAND1] = rnd.hands[1]
    state[impl.S_FIELD] = rnd.field
    state[impl.S_PILE0] = rnd.piles[0]
    state[impl.S_PILE1] = rnd.piles[1]
    state[impl.S_SCORE0] = rnd.scores[0]
    state[impl.S_SCORE1] = rnd.scores[1]
    state[impl.S_TURN_SCORE] = rnd.turn_score
    state[impl.S_CALLS0] = rnd.koikoi_calls[0]
    state[impl.S_CALLS1] = rnd.koikoi_calls[1]
    state[impl.S_CALLED0] = rnd.called_scores[0]
    state[impl.S_CALLED1] = rnd.called_scores[1]
    state[impl.S_LAST_IMPROVER] = -1 if rnd.last_improver is None else rnd.last_improver
    state[impl.S_PHASE] = int(rnd.phase)
    state[impl.S_CURRENT] = rnd.current
    state[impl.S_DRAWN] = rnd.drawn
    state[impl.S_DEALER] = rnd.dealer
    state[impl.S_MONTH] = rnd.month
    bottom_first = rnd.stock[::-1]  # the kernel draws from the end, like the engine
    state[impl.S_NSTOCK] = len(bottom_first)
    state[impl.S_WINNER] = -1
    settlement = rnd.settlement
    if rnd.phase is Phase.OVER and settlement is not None:
        state[impl.S_WINNER] = -1 if settlement.winner is None else settlement.winner
        state[impl.S_POINTS] = settlement.points
        state[impl.S_BASE] = settlement.base
        state[impl.S_DELTA0] = settlement.deltas[0]
        state[impl.S_DELTA1] = settlement.deltas[1]
        if settlement.reason in REASONS:
            state[impl.S_REASON] = REASONS.index(settlement.reason)
    stock = np.zeros(impl.STOCK_SIZE, dtype=np.int8)
    if len(bottom_first) > impl.STOCK_SIZE:
        raise InvalidInputError(f"a stock of {len(bottom_first)} cards is not a Koi-Koi stock")
    stock[: len(bottom_first)] = bottom_first
    return KernelState(state, stock)


def rng_state(seed: int) -> npt.NDArray[np.uint64]:
    """A non-zero xorshift state from any integer seed (splitmix64)."""

    mask = (1 << 64) - 1
    z = (seed * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return np.array([z or 0x9E3779B97F4A7C15], dtype=np.uint64)
