"""The compiled playout kernel: whole rounds of Koi-Koi at native speed, for search.

The kernel plays a :class:`~koikoi.game.engine.Round` (usually a determinized one,
see :func:`koikoi.game.views.determinize`) to its settlement many times over, with a
simple rollout policy for both players, under **any** :class:`~koikoi.game.rules.Rules`:
the round-relevant options are encoded into a small int64 array
(:func:`encode_rules`) and the round into a state array plus a stock array
(:func:`encode_round`). The code is compiled with numba (``pip install
koikoi[fast]``); it mirrors :class:`~koikoi.game.engine.Round` step by step and
:class:`~koikoi.game.scoring.Scorer` yaku by yaku, and ``tests/test_kernel.py``
replays the kernel's rounds through the engine to prove it, for every preset.

Without numba, :func:`available` is False and every function here falls back
to the reference engine (``Round.clone`` and the same policies): slower but
correct. ``backend="python"`` forces the fallback.

Policies (for both players):

* ``"random"``: a uniformly random legal action id (koi-koi or stop included).
* ``"greedy"``: the action capturing the most card value (Bright 20, Animal 10,
  Ribbon 5, Plain 1), as :class:`~koikoi.agents.base.GreedyAgent`; ties at
  random; always stops.
* ``"yaku"``: greedy, plus 15 per point the capture adds to the player's yaku
  total under the active rules (so it completes and extends yaku first); ties
  at random; always stops.
* ``"tactical"``: ``yaku``, plus partial credit for the yaku a capture brings
  closer (``points x 8 x (have/need)**2`` for each yaku the pile can still
  make), the same credit taken from the opponent when the capture holds a card
  they need, and, for a card laid without capture, a penalty when the
  opponent's hand holds its month (what they would take). Playouts run on a
  re-dealt round, so the opponent's hand there is one sampled world, not the
  real one. Always stops.

>>> from koikoi.game.engine import Match
>>> rnd = Match(seed=5, events=False).round
>>> value = playouts(rnd, 200, seed=1)
>>> -100.0 < value < 100.0
True
>>> rnd.phase.name
'PLAY'
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from koikoi.agents.base import card_value
from koikoi.agents.inference import PlayModel
from koikoi.game.actions import KOIKOI_ID, STOP_ID
from koikoi.game.cards import (
    AKATAN,
    ANIMALS,
    AOTAN,
    BRIGHTS,
    MONTH_MASKS,
    PLAINS,
    RIBBONS,
    parse_card,
)
from koikoi.game.engine import Phase, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "POLICIES",
    "REASONS",
    "TREE_NODES",
    "BatchSearch",
    "KernelRound",
    "KernelState",
    "TreeSearch",
    "available",
    "benchmark",
    "encode_round",
    "encode_rules",
    "legal_ids",
    "lookahead_action",
    "play_random_round",
    "play_round",
    "playout_values",
    "playouts",
    "python_values",
    "yaku_total",
]

POLICIES: Final[tuple[str, ...]] = ("random", "greedy", "yaku", "tactical", "bold", "soft")
"""The rollout policies."""

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

BACKENDS: Final[tuple[str, ...]] = ("auto", "kernel", "python")

_COMBINE: Final = {"absorb": 0, "separate": 1, "exclusive": 2}
_SAKE: Final = {"animal": 0, "both": 1, "either": 2, "both_double_plain": 3}
_HAND_CARD: Final = {"any": 0, "any_or_discard": 1, "must_match": 2}
_BONUS: Final = {"opponent_x2": 0, "challenge_x2": 1, "ladder": 2, "none": 3}
_EXHAUSTED: Final = {"draw": 0, "highest": 1, "last_yaku": 2, "dealer_point": 3}
_RAIN_MAN: Final = 1 << 40
_NON_RAIN_BRIGHTS: Final = BRIGHTS & ~_RAIN_MAN
_BRIGHT_CARDS: Final = (0, 8, 28, 40, 44)


@functools.cache
def _impl() -> Any:
    """The numba module, or None when numba (or numpy) cannot be imported."""
    try:
        from koikoi.kernel import _compiled as _kernel_impl
    except ImportError:
        return None
    return _kernel_impl


def available() -> bool:
    """Whether the compiled kernel can be used (numba and numpy importable)."""
    return _impl() is not None


def _use_kernel(backend: str) -> bool:
    if backend not in BACKENDS:
        raise InvalidInputError(
            f"unknown kernel backend {backend!r}: allowed {', '.join(map(repr, BACKENDS))}"
        )
    if backend == "python":
        return False
    if backend == "kernel" and not available():
        raise InvalidInputError("the compiled kernel needs numba: pip install 'koikoi[fast]'")
    return available()


def _policy_code(policy: str) -> int:
    if policy not in POLICIES:
        raise InvalidInputError(
            f"unknown rollout policy {policy!r}: allowed {', '.join(map(repr, POLICIES))}"
        )
    return POLICIES.index(policy)


# ------------------------------------------------------------------ encoding


def _bright_best(rules: Rules, bright_index: int) -> int:
    """Points of the best Bright yaku held by the Brights of a 5-bit index (Scorer semantics)."""
    b = 0
    for i, card in enumerate(_BRIGHT_CARDS):
        if bright_index >> i & 1:
            b |= 1 << card
    pts = rules.points
    non_rain = (b & _NON_RAIN_BRIGHTS).bit_count()
    best = 0
    if pts.goko and b == BRIGHTS:
        best = max(best, pts.goko)
    if pts.shiko and b & _NON_RAIN_BRIGHTS == _NON_RAIN_BRIGHTS:
        best = max(best, pts.shiko)
    if pts.ame_shiko and b & _RAIN_MAN and non_rain >= 3:
        best = max(best, pts.ame_shiko)
    pool = b.bit_count() if rules.yaku.sanko_with_rainman else non_rain
    if pts.sanko and pool >= 3:
        best = max(best, pts.sanko)
    return best


def _rules_values(rules: Rules) -> list[int]:
    """The kernel's rules array as plain ints (see ``_kernel_impl`` for the layout)."""
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
    return values


@functools.lru_cache(maxsize=64)
def _rules_array(rules: Rules) -> npt.NDArray[np.int64]:
    import numpy as np

    return np.array(_rules_values(rules), dtype=np.int64)


def encode_rules(rules: Rules) -> npt.NDArray[np.int64]:
    """The round-relevant options of ``rules`` as the kernel's int64 array (a fresh copy).

    Yaku points, ``extra``, the combine mode, the Sake cup, the viewing options,
    tsukifuda and collected teshi, what may be played, wild Lightning, the
    koi-koi limit, offer and bonus, seven-double, the exhausted-round rule,
    ``first_empty_hand``, oya-ken and zero-sum; plus a 32-entry table of the best
    Bright yaku by Bright subset. Match-level options (deals, dealers, rounds)
    do not enter a round and are not encoded.

    >>> from koikoi.game.rules import get_rules
    >>> arr = encode_rules(get_rules("nintendo"))
    >>> int(arr[0]), len(arr)  # goko's points
    (10, 68)
    """
    return _rules_array(rules).copy()


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
    impl = _impl()
    if impl is None:
        raise InvalidInputError("encode_round needs numba and numpy: pip install 'koikoi[fast]'")
    import numpy as np

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
    state[impl.S_CALLED0] = rnd.called_score[0]
    state[impl.S_CALLED1] = rnd.called_score[1]
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


def _rng_state(seed: int) -> npt.NDArray[np.uint64]:
    """A non-zero xorshift state from any integer seed (splitmix64)."""
    import numpy as np

    mask = (1 << 64) - 1
    z = (seed * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return np.array([z or 0x9E3779B97F4A7C15], dtype=np.uint64)


def yaku_total(
    rules: Rules, pile: int, month: int, koikoi_called: bool, *, backend: str = "auto"
) -> int:
    """The kernel's yaku total of a capture pile (equals ``Scorer(rules).total``).

    >>> from koikoi.game.cards import parse_cards
    >>> from koikoi.game.rules import get_rules
    >>> yaku_total(get_rules("nintendo"), parse_cards("3L 8L 9A"), 1, False)
    10
    """
    if not _use_kernel(backend):
        from koikoi.game.scoring import Scorer

        return Scorer(rules).total(pile, month, koikoi_called)
    import numpy as np

    out = np.zeros(1, dtype=np.int64)
    _impl().yaku_totals(
        np.array([pile], dtype=np.int64), month, koikoi_called, _rules_array(rules), out
    )
    return int(out[0])


def legal_ids(rnd: Round) -> list[int]:
    """The kernel's legal action ids in ``rnd``, in the order of ``Round.legal_ids()``.

    >>> from koikoi.game.engine import Match
    >>> rnd = Match(seed=4, events=False).round
    >>> legal_ids(rnd) == rnd.legal_ids()
    True
    """
    impl = _impl()
    if impl is None:
        return rnd.legal_ids()
    import numpy as np

    st = encode_round(rnd)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    n = impl.legal_actions(st.state, _rules_array(rnd.rules), buf)
    return [int(a) for a in buf[:n]]


# ----------------------------------------------------------------- playouts


def _round_value(rnd: Round) -> int:
    s = rnd.settlement
    if s is None or s.winner is None:
        return 0
    return s.points if s.winner == 0 else -s.points


def _greedy_value(field: int, action_id: int) -> int:
    """GreedyAgent's value of an action on ``field`` (see koikoi.agents.base)."""
    from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, TAKE_BASE

    if action_id >= TAKE_BASE:
        return card_value(action_id - TAKE_BASE)
    if action_id >= DISCARD_BASE:
        return 0
    if action_id >= PLAY_TARGET_BASE:
        c, t = divmod(action_id - PLAY_TARGET_BASE, 48)
        return card_value(c) + card_value(t)
    month_cards = field & MONTH_MASKS[action_id // 4]
    if not month_cards:
        return -card_value(action_id)
    return card_value(action_id) + sum(card_value(c) for c in range(48) if month_cards >> c & 1)


YAKU_WEIGHT: Final = 15
"""The ``yaku`` policy's worth of one yaku point, on the greedy card-value scale."""


def _captured_by(rnd: Round, action_id: int) -> int:
    """The cards an action puts in the acting player's pile (0: none); wild lightning ignored."""
    from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, TAKE_BASE

    if action_id >= KOIKOI_ID:
        return 0
    if action_id >= TAKE_BASE:
        return (1 << rnd.drawn) | (1 << (action_id - TAKE_BASE))
    if action_id >= DISCARD_BASE:
        return 0
    if action_id >= PLAY_TARGET_BASE:
        c, t = divmod(action_id - PLAY_TARGET_BASE, 48)
        return (1 << c) | (1 << t)
    month_cards = rnd.field & MONTH_MASKS[action_id // 4]
    return month_cards | (1 << action_id) if month_cards else 0


def _yaku_values(rnd: Round, ids: list[int]) -> list[int]:
    """The ``yaku`` policy's values: greedy card value plus YAKU_WEIGHT per yaku point gained."""
    p = rnd.current
    pile = rnd.piles[p]
    called = rnd.koikoi_calls[p] > 0
    total = rnd.scorer.total
    now = total(pile, rnd.month, called)
    values = []
    for a in ids:
        v = _greedy_value(rnd.field, a)
        got = _captured_by(rnd, a)
        if got:
            v += YAKU_WEIGHT * (total(pile | got, rnd.month, called) - now)
        values.append(v)
    return values


PROGRESS_WEIGHT: Final = 8
"""The ``tactical`` policy's worth of one yaku point fully collected, on the progress scale."""

_INOSHIKACHO: Final = (1 << 20) | (1 << 24) | (1 << 36)
_SAKE_CUP: Final = 1 << 32
_CURTAIN: Final = 1 << 8
_MOON: Final = 1 << 28


@functools.lru_cache(maxsize=64)
def _progress_targets(rules: Rules) -> tuple[tuple[int, int, int], ...]:
    """The ``tactical`` policy's targets: ``(mask, need, points)`` with points above 0."""
    p = rules.points
    pool = BRIGHTS if rules.yaku.sanko_with_rainman else BRIGHTS & ~_RAIN_MAN
    plains = PLAINS | (_SAKE_CUP if rules.yaku.sake_cup != "animal" else 0)
    targets = [
        (pool, 3, p.sanko),
        (_INOSHIKACHO, 3, p.inoshikacho),
        (ANIMALS, 5, p.tane),
        (AKATAN, 3, p.akatan),
        (AOTAN, 3, p.aotan),
        (RIBBONS, 5, p.tanzaku),
        (plains, 10, p.kasu),
    ]
    if p.hanami > 0 or p.tsukimi > 0:
        targets += [(_CURTAIN | _SAKE_CUP, 2, p.hanami), (_MOON | _SAKE_CUP, 2, p.tsukimi)]
    return tuple(t for t in targets if t[2] > 0)


def _progress(rules: Rules, pile: int, other: int) -> int:
    """The kernel's ``progress``: partial credit for the yaku ``pile`` can still make."""
    total = 0
    for mask, need, points in _progress_targets(rules):
        have = (pile & mask).bit_count()
        if have < need and (mask & ~other).bit_count() >= need:
            total += points * PROGRESS_WEIGHT * have * have // (need * need)
    return total


def _exposure(rnd: Round, action_id: int, theirs: int) -> int:
    """The kernel's ``_exposure``: what laying a card hands an opponent holding its month."""
    from koikoi.game.actions import DISCARD_BASE, PLAY_TARGET_BASE, TAKE_BASE

    if action_id >= TAKE_BASE or PLAY_TARGET_BASE <= action_id < DISCARD_BASE:
        return 0
    card = action_id - DISCARD_BASE if action_id >= DISCARD_BASE else action_id
    p = rnd.current
    month = rnd.hands[1 - p] & MONTH_MASKS[card // 4]
    if not month:
        return 0
    taker = max((c for c in range(48) if month >> c & 1), key=lambda c: (card_value(c), -c))
    got = (1 << card) | (1 << taker)
    gain = _progress(rnd.rules, rnd.piles[1 - p] | got, rnd.piles[p]) - theirs
    return card_value(card) + card_value(taker) + gain


def _tactical_values(rnd: Round, ids: list[int]) -> list[int]:
    """The ``tactical`` policy's values: ``yaku`` plus progress, denial and safe lays."""
    values = _yaku_values(rnd, ids)
    p = rnd.current
    pile, opp = rnd.piles[p], rnd.piles[1 - p]
    mine = _progress(rnd.rules, pile, opp)
    theirs = _progress(rnd.rules, opp, pile)
    for i, a in enumerate(ids):
        got = _captured_by(rnd, a)
        if got:
            values[i] += _progress(rnd.rules, pile | got, opp) - mine
            values[i] += theirs - _progress(rnd.rules, opp, pile | got)
        else:
            values[i] -= _exposure(rnd, a, theirs)
    return values


BOLD_HAND: Final = 2
BOLD_POINTS: Final = 4
"""As the kernel's: the ``bold`` policy's least hand and largest yaku total for a koi-koi."""


def _bold_koikoi(rnd: Round) -> bool:
    """The kernel's ``bold_koikoi``: koi-koi with enough hand left, a small yaku total, an
    opponent who has not called and has no yaku one card short."""
    p = rnd.current
    q = 1 - p
    if rnd.hands[p].bit_count() < BOLD_HAND or rnd.scores[p] > BOLD_POINTS:
        return False
    if rnd.koikoi_calls[q] > 0:
        return False
    opp, mine = rnd.piles[q], rnd.piles[p]
    for mask, need, _points in _progress_targets(rnd.rules):
        if (opp & mask).bit_count() == need - 1 and (mask & ~mine).bit_count() >= need:
            return False
    return True


SOFT_TEMPERATURE: Final = PlayModel().temperature
SOFT_CAPTURE_BONUS: Final = int(PlayModel().capture_bonus)
"""The ``soft`` policy's temperature and capture bonus: the inference's play model's
(the compiled kernel keeps its own copy, tested equal)."""


def _soft_choice(rnd: Round, ids: list[int], rng: random.Random) -> int:
    """The kernel's ``soft_choice``: a hand play drawn with chance proportional to
    ``exp((greedy value + bonus if it captures) / temperature)``."""
    values = [
        _greedy_value(rnd.field, a) + (SOFT_CAPTURE_BONUS if _captured_by(rnd, a) else 0)
        for a in ids
    ]
    best = max(values)
    weights = [math.exp((v - best) / SOFT_TEMPERATURE) for v in values]
    u = rng.random() * sum(weights)
    for a, w in zip(ids, weights, strict=True):
        u -= w
        if u < 0.0:
            return a
    return ids[-1]


def _python_choice(rnd: Round, ids: list[int], rng: random.Random, code: int) -> int:
    """The rollout policy ``POLICIES[code]`` on the reference engine (the kernel's choices)."""
    if code == 0 or len(ids) == 1:
        return ids[int(rng.random() * len(ids))]
    if KOIKOI_ID in ids:
        return KOIKOI_ID if code == 4 and _bold_koikoi(rnd) else STOP_ID
    field = rnd.field
    if code == 5 and rnd.phase is Phase.PLAY:
        return _soft_choice(rnd, ids, rng)
    if code == 3:
        values = _tactical_values(rnd, ids)
    elif code in (2, 4):  # bold captures as yaku does
        values = _yaku_values(rnd, ids)
    else:
        values = [_greedy_value(field, a) for a in ids]
    best = max(values)
    ties = [a for a, v in zip(ids, values, strict=True) if v == best]
    return ties[int(rng.random() * len(ties))]


def _python_play(rnd: Round, rng: random.Random, code: int) -> list[int]:
    """Play ``rnd`` (in place) to its settlement with the reference engine."""
    actions: list[int] = []
    while rnd.phase is not Phase.OVER:
        ids = rnd.legal_ids()
        if not ids:
            raise RuntimeError("a live round with no legal action")
        a = _python_choice(rnd, ids, rng, code)
        actions.append(a)
        rnd.apply_id(a)
    return actions


def python_values(rnd: Round, n: int, seed: int, policy: str = "random") -> list[int]:
    """The value for player 0 of each of ``n`` playouts on the reference engine (no numpy).

    The same values as ``playout_values(..., backend="python")``, as a list.
    """
    code = _policy_code(policy)
    rng = random.Random(seed)
    values = []
    for _ in range(n):
        copy = rnd.clone()
        _python_play(copy, rng, code)
        values.append(_round_value(copy))
    return values


def playout_values(
    rnd: Round, n: int, seed: int, policy: str = "random", *, backend: str = "auto"
) -> npt.NDArray[np.int64]:
    """The value for player 0 of each of ``n`` playouts of ``rnd`` (which is not changed).

    A value is the settlement's points if player 0 won, minus the points if
    player 1 won, and 0 if nobody scored. The same seed gives the same values.

    Args:
        rnd: the round to play from (any phase; an over round gives its own value).
        n: how many playouts.
        seed: seeds the rollout policy's random choices.
        policy: ``"random"``, ``"greedy"``, ``"yaku"`` or ``"tactical"``, for both players.
        backend: ``"auto"`` (the kernel when available), ``"kernel"`` or ``"python"``.
    """
    import numpy as np

    code = _policy_code(policy)
    if n < 0:
        raise InvalidInputError(f"the number of playouts must be 0 or more, not {n}")
    if not _use_kernel(backend):
        return np.array(python_values(rnd, n, seed, policy), dtype=np.int64)
    impl = _impl()
    st = encode_round(rnd)
    out = np.zeros(n, dtype=np.int64)
    errors = impl.playouts(st.state, st.stock, _rules_array(rnd.rules), _rng_state(seed), code, out)
    if errors:
        raise RuntimeError(f"{errors} playouts reached a state with no legal action")
    return out


def playouts(
    rnd: Round, n: int, seed: int, policy: str = "random", *, backend: str = "auto"
) -> float:
    """The mean value for player 0 of ``n`` playouts of ``rnd`` (see :func:`playout_values`).

    Needs neither numba nor numpy with ``backend="python"`` (or when they are missing).
    """
    _policy_code(policy)
    if n <= 0:
        raise InvalidInputError(f"the number of playouts must be 1 or more, not {n}")
    if not _use_kernel(backend):
        return sum(python_values(rnd, n, seed, policy)) / n
    return float(playout_values(rnd, n, seed, policy, backend="kernel").mean())


class _DealSearch:
    """What the flat and the tree search share: the position and rules in the kernel's
    arrays, the generator, the policy, the utility and how the opponent's hand is
    re-dealt (checked here)."""

    def __init__(
        self,
        what: str,
        rnd: Round,
        player: int,
        seed: int,
        policy: str,
        utility: tuple[float, ...] | None,
        avoid: int,
        slack: float,
        hands: Sequence[int],
    ) -> None:
        import numpy as np

        impl = _impl()
        if impl is None:
            raise InvalidInputError(f"{what} needs numba and numpy: pip install 'koikoi[fast]'")
        self._impl = impl
        st = encode_round(rnd)
        self._state, self._stock = st.state, st.stock
        self._rules = _rules_array(rnd.rules)
        self._rng = _rng_state(seed)
        self._code = _policy_code(policy)
        self._player = player
        if utility is None:
            self._util = np.zeros(impl.U_TABLE, dtype=np.float64)
        else:
            span = int(utility[0]) if utility else -1
            if span < 0 or len(utility) != 2 * span + 2:
                raise InvalidInputError(
                    "utility must be (span, table of 2 * span + 1 values), "
                    f"not {len(utility)} values"
                )
            self._util = np.array((1.0, *utility), dtype=np.float64)
        self._avoid = avoid
        self._slack = slack
        hidden = rnd.hands[1 - player]
        for c in rnd.stock:
            hidden |= 1 << c
        n_opp = rnd.hands[1 - player].bit_count()
        for h in hands:
            if h & ~hidden or h.bit_count() != n_opp:
                raise InvalidInputError(
                    f"hands: each must be {n_opp} of the cards the player cannot see, not {h:#x}"
                )
        self._hands = np.array(hands, dtype=np.int64)


class BatchSearch(_DealSearch):
    """Determinized evaluation of the actions of one position, many iterations per call.

    The position is any determinization of the searching player's view; the
    kernel re-deals the cards that player cannot see (the opponent's hand and
    the stock, as a set) at every iteration, so the result does not depend on
    the hidden cards of ``rnd``. See ``_kernel_impl.search_batch``.

    Args:
        rnd: the position, with ``player`` to act.
        player: the searching player.
        seed: seeds the re-deals and the rollouts.
        policy: the rollout policy for both players.
        rollouts: playouts per action and iteration.
        utility: the match utility's kernel parameters
            (:meth:`koikoi.agents.mcts.MatchUtility.kernel_params`: the span, then
            the table), or None for plain net round points.
        avoid: cards the opponent's re-dealt hand takes last, and ``slack``
            the chance of ignoring that (see :func:`koikoi.game.views.determinize`).
        depth: in each playout, the first ``depth`` real choices after the action
            (either player's, koi-koi decisions included) are made by a small
            search of that player's own (``_kernel_impl.lookahead_choice``);
            0: the policy plays every move.
        samples: re-deals of that small search.
        hands: opponent hands (card masks) to re-deal from, one at random each
            iteration (:func:`koikoi.agents.inference.opponent_hands`), instead of
            the uniform or ``avoid`` re-deal; each must be as many of the unseen
            cards as the opponent holds.
    """

    def __init__(
        self,
        rnd: Round,
        player: int,
        seed: int,
        *,
        policy: str = "greedy",
        rollouts: int = 4,
        utility: tuple[float, ...] | None = None,
        avoid: int = 0,
        slack: float = 0.0,
        depth: int = 0,
        samples: int = 8,
        hands: Sequence[int] = (),
    ) -> None:
        if rollouts < 1:
            raise InvalidInputError(f"rollouts must be 1 or more, not {rollouts}")
        _check_lookahead(depth, samples)
        super().__init__("BatchSearch", rnd, player, seed, policy, utility, avoid, slack, hands)
        self._depth = depth
        self._samples = samples
        self._rollouts = rollouts
        self.with_points = utility is not None

    def run(self, actions: list[int], iterations: int) -> npt.NDArray[np.float64]:
        """``iterations`` more iterations: a matrix of values, one row each, a column per action.

        With a utility, each row has the utilities first, then the net round
        points of the same playouts (``2 * len(actions)`` columns).
        """
        import numpy as np

        width = 2 * len(actions) if self.with_points else len(actions)
        out = np.empty((iterations, width), dtype=np.float64)
        errors = self._impl.search_batch(
            self._state,
            self._stock,
            self._rules,
            np.array(actions, dtype=np.int64),
            self._player,
            self._rollouts,
            self._rng,
            self._code,
            self._util,
            self._avoid,
            self._slack,
            self._depth,
            self._samples,
            self._hands,
            out,
        )
        if errors:
            raise RuntimeError(f"{errors} playouts reached a state with no legal action")
        return out


TREE_NODES: Final = 1 << 16
"""Nodes a :class:`TreeSearch` holds unless told otherwise (64 bytes each: about 4 MB)."""


class TreeSearch(_DealSearch):
    """Open-loop information-set tree search from one position, many iterations per call.

    Unlike :class:`BatchSearch`, which plays every action out once per re-deal
    with greedy players after it, the tree looks several moves ahead: each
    iteration re-deals the unseen cards, then descends a tree of actions (the
    searching player's and the opponent's) by an upper confidence bound, adds
    one node, and plays out with ``policy``. See ``_kernel_impl.tree_search``.

    Args:
        rnd: the position, with ``player`` to act (any determinization of the view).
        player: the searching player.
        seed: seeds the re-deals, the tree's random choices and the playouts.
        policy: the playouts' policy for both players.
        utility: the match utility's kernel parameters, or None for round points
            (as :class:`BatchSearch`).
        avoid, slack, hands: how the opponent's hand is re-dealt (as :class:`BatchSearch`).
        explore: the exploration constant, in standard deviations of the root's results.
        nodes: the tree's capacity; a full tree stops growing.
        paired: each iteration plays every root action once on the same re-deal with
            the same playout random numbers (as :class:`BatchSearch` does), instead
            of choosing one by the upper confidence bound.
    """

    def __init__(
        self,
        rnd: Round,
        player: int,
        seed: int,
        *,
        policy: str = "greedy",
        utility: tuple[float, ...] | None = None,
        avoid: int = 0,
        slack: float = 0.0,
        hands: Sequence[int] = (),
        explore: float = 1.0,
        nodes: int = TREE_NODES,
        paired: bool = False,
    ) -> None:
        if not explore > 0 or not math.isfinite(explore):
            raise InvalidInputError(f"explore must be a positive number, not {explore!r}")
        if nodes < 2:
            raise InvalidInputError(f"nodes must be 2 or more, not {nodes!r}")
        super().__init__("TreeSearch", rnd, player, seed, policy, utility, avoid, slack, hands)
        import numpy as np

        impl = self._impl
        self._explore = float(explore)
        self._links = np.full((nodes, impl.T_LINKS), -1, dtype=np.int64)
        self._stats = np.zeros((nodes, impl.T_STATS), dtype=np.float64)
        self._size = np.ones(1, dtype=np.int64)  # the root
        self._paired = bool(paired)
        self.iterations = 0
        """Iterations run so far (re-deals; paired, each plays every root action)."""

    @property
    def nodes(self) -> int:
        """Nodes in the tree, the root included."""
        return int(self._size[0])

    def run(self, iterations: int) -> None:
        """``iterations`` more iterations."""
        if iterations < 0:
            raise InvalidInputError(f"iterations must be 0 or more, not {iterations}")
        errors = self._impl.tree_search(
            self._state,
            self._stock,
            self._rules,
            self._player,
            self._rng,
            self._code,
            self._util,
            self._avoid,
            self._slack,
            self._hands,
            iterations,
            self._explore,
            self._links,
            self._stats,
            self._size,
            self._paired,
        )
        self.iterations += iterations
        if errors:
            raise RuntimeError(f"{errors} playouts reached a state with no legal action")

    def root(self) -> dict[int, tuple[int, float, float]]:
        """For each action tried at the root: (visits, mean utility, mean net round points)."""
        impl = self._impl
        links, stats = self._links, self._stats
        out: dict[int, tuple[int, float, float]] = {}
        ch = int(links[0, impl.T_FIRST])
        while ch >= 0:
            n = float(stats[ch, impl.T_VISITS])
            if n > 0:
                out[int(links[ch, impl.T_KEY])] = (
                    int(n),
                    float(stats[ch, impl.T_UTILITY]) / n,
                    float(stats[ch, impl.T_POINTS]) / n,
                )
            ch = int(links[ch, impl.T_NEXT])
        return out


class KernelRound(NamedTuple):
    """One round played by the kernel, with its outcome and final position."""

    actions: list[int]
    winner: int | None
    points: int
    deltas: tuple[int, int]
    reason: str
    base: int
    scores: tuple[int, int]
    hands: tuple[int, int]
    field: int
    piles: tuple[int, int]


def _outcome_of_round(rnd: Round, actions: list[int]) -> KernelRound:
    s = rnd.settlement
    if s is None:  # pragma: no cover - _python_play plays to the end
        raise RuntimeError("round not settled")
    return KernelRound(
        actions,
        s.winner,
        s.points,
        s.deltas,
        s.reason,
        s.base,
        (rnd.scores[0], rnd.scores[1]),
        (rnd.hands[0], rnd.hands[1]),
        rnd.field,
        (rnd.piles[0], rnd.piles[1]),
    )


def _lookahead_scratch(impl: Any) -> tuple[Any, ...]:
    """The scratch space of ``_kernel_impl.lookahead_choice``: its ``wi``, ``sums``, ``wb``
    and ``roll`` arguments."""
    import numpy as np

    return (
        np.zeros(impl.LW_INT_SIZE, dtype=np.int64),
        np.zeros(impl.LOOK_MAX_ACTIONS, dtype=np.float64),
        np.zeros(impl.LW_BYTE_SIZE, dtype=np.int8),
        np.zeros(1, dtype=np.uint64),
    )


def _check_lookahead(depth: int, samples: int) -> None:
    if depth < 0:
        raise InvalidInputError(f"lookahead depth must be 0 or more, not {depth}")
    if samples < 1:
        raise InvalidInputError(f"lookahead samples must be 1 or more, not {samples}")


def lookahead_action(rnd: Round, samples: int, seed: int, policy: str = "greedy") -> int:
    """The action id that the player to act in ``rnd`` chooses by the lookahead's small search.

    That player sees only their own side: the opponent's hand and the stock of
    ``rnd`` are pooled and re-dealt ``samples`` times, every legal action is
    played out once on each re-deal with ``policy``, and the best mean net round
    result wins (see ``_kernel_impl.lookahead_choice``). The hidden cards' deal
    in ``rnd`` does not matter, only which cards are hidden. Needs the compiled kernel.
    """
    import numpy as np

    code = _policy_code(policy)
    _check_lookahead(1, samples)
    if not _use_kernel("kernel"):  # pragma: no cover - raises without numba
        raise InvalidInputError("the lookahead needs numba: pip install 'koikoi[fast]'")
    if rnd.phase is Phase.OVER:
        raise InvalidInputError("the round is over: there is no action to choose")
    impl = _impl()
    st = encode_round(rnd)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    return int(
        impl.lookahead_choice(
            st.state,
            st.stock,
            _rules_array(rnd.rules),
            buf,
            _rng_state(seed),
            samples,
            code,
            *_lookahead_scratch(impl),
        )
    )


def play_round(
    rnd: Round,
    seed: int,
    policy: str = "random",
    *,
    backend: str = "auto",
    lookahead: int = 0,
    samples: int = 8,
) -> KernelRound:
    """Play one round from ``rnd`` (not changed) and record every action id played.

    Replaying ``actions`` with ``Round.apply`` on a clone of ``rnd`` must give the
    same outcome: that is the agreement test of the kernel. With ``lookahead``,
    the first ``lookahead`` real choices are made by :func:`lookahead_action`'s
    search (``samples`` re-deals; the compiled kernel only).
    """
    code = _policy_code(policy)
    _check_lookahead(lookahead, samples)
    if not _use_kernel(backend):
        if lookahead:
            raise InvalidInputError("the lookahead needs numba: pip install 'koikoi[fast]'")
        copy = rnd.clone()
        actions = _python_play(copy, random.Random(seed), code)
        return _outcome_of_round(copy, actions)
    import numpy as np

    impl = _impl()
    st = encode_round(rnd)
    record = np.zeros(256, dtype=np.int64)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    rules = _rules_array(rnd.rules)
    if lookahead:
        count = impl.play_out_lookahead(
            st.state,
            st.stock,
            rules,
            buf,
            _rng_state(seed),
            code,
            lookahead,
            samples,
            *_lookahead_scratch(impl),
            record,
        )
    else:
        count = impl.play_out(st.state, st.stock, rules, buf, _rng_state(seed), code, record)
    s = st.state
    if s[impl.S_ERROR]:
        raise RuntimeError("the kernel reached a state with no legal action")
    winner = int(s[impl.S_WINNER])
    return KernelRound(
        [int(a) for a in record[: min(count, len(record))]],
        None if winner < 0 else winner,
        int(s[impl.S_POINTS]),
        (int(s[impl.S_DELTA0]), int(s[impl.S_DELTA1])),
        REASONS[int(s[impl.S_REASON])],
        int(s[impl.S_BASE]),
        (int(s[impl.S_SCORE0]), int(s[impl.S_SCORE1])),
        (int(s[impl.S_HAND0]), int(s[impl.S_HAND1])),
        int(s[impl.S_FIELD]),
        (int(s[impl.S_PILE0]), int(s[impl.S_PILE1])),
    )


def play_random_round(
    rnd: Round, seed: int, *, backend: str = "auto"
) -> tuple[list[int], int | None, int, tuple[int, int]]:
    """Uniformly random legal actions to the settlement: ``(actions, winner, points, deltas)``."""
    r = play_round(rnd, seed, "random", backend=backend)
    return r.actions, r.winner, r.points, r.deltas


# ----------------------------------------------------------------- benchmark


def benchmark(
    seconds: float,
    rules: Rules,
    seed: int,
    *,
    policy: str = "random",
    backend: str = "auto",
    chunk: int = 2000,
) -> dict[str, Any]:
    """Random rounds per second on one core (what ``koikoi bench kernel`` prints).

    The kernel deals rounds itself from fresh shuffles (8 cards to each hand and
    8 to the field, the dealer alternating, the month cycling; no redeal checks or
    instant hands), plays each to its settlement with ``policy`` for both players,
    and counts. Compilation (or loading the cache) and a warm-up run are excluded.

    Returns:
        ``{"rounds_per_s", "rounds", "seconds", "rules", "policy", "backend",
        "cpu_seconds", "rounds_per_cpu_s"}``: ``seconds`` is wall-clock time spent
        in the kernel, ``cpu_seconds`` this process's CPU time over the same calls
        (the two differ when other processes compete for the core). Without numba
        (or with ``backend="python"``) the reference engine is measured.
    """
    code = _policy_code(policy)
    if seconds <= 0:
        raise InvalidInputError(f"seconds must be positive, not {seconds}")
    if not _use_kernel(backend):
        return _python_benchmark(seconds, rules, seed, code, policy)
    impl = _impl()
    arr = _rules_array(rules)
    rng = _rng_state(seed)
    impl.random_rounds(arr, 200, rng, code)  # compile or load, and warm up
    step: Callable[[Any, int, Any, int], int] = impl.random_rounds
    rounds = 0
    elapsed = 0.0
    cpu = 0.0
    while elapsed < seconds:
        t0 = time.perf_counter()
        c0 = time.process_time()
        step(arr, chunk, rng, code)
        cpu += time.process_time() - c0
        elapsed += time.perf_counter() - t0
        rounds += chunk
    return _bench_result(rules, policy, "kernel", rounds, elapsed, cpu)


def _bench_result(
    rules: Rules, policy: str, backend: str, rounds: int, elapsed: float, cpu: float
) -> dict[str, Any]:
    return {
        "rounds_per_s": rounds / elapsed,
        "rounds": rounds,
        "seconds": elapsed,
        "rules": rules.name,
        "policy": policy,
        "backend": backend,
        "cpu_seconds": cpu,
        "rounds_per_cpu_s": rounds / cpu if cpu > 0 else float("inf"),
    }


def _python_benchmark(
    seconds: float, rules: Rules, seed: int, code: int, policy: str
) -> dict[str, Any]:
    from koikoi.game.scoring import Scorer

    rng = random.Random(seed)
    scorer = Scorer(rules)
    rounds = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        deck = list(range(48))
        rng.shuffle(deck)
        dealer = rounds & 1
        hands = [0, 0]
        hands[dealer] = sum(1 << c for c in deck[0:8])
        hands[1 - dealer] = sum(1 << c for c in deck[8:16])
        rnd = Round(
            rules,
            hands=(hands[0], hands[1]),
            field=sum(1 << c for c in deck[16:24]),
            stock=deck[24:],
            dealer=dealer,
            round_number=rounds % 12 + 1,
            scorer=scorer,
            events=False,
        )
        _python_play(rnd, rng, code)
        rounds += 1
        elapsed = time.perf_counter() - t0
    return _bench_result(rules, policy, "python", rounds, elapsed, time.process_time() - c0)
