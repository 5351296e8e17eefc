"""The numba code of the playout kernel; use it through :mod:`koikoi.kernel`.

Importing this module imports numba and numpy. Every function is compiled in
nopython mode with ``cache=True`` (the machine code is kept in the user's cache
directory, see :mod:`koikoi.kernel.numba_cache`) and ``nogil=True``.

Arrays (all C-contiguous):

* ``rules`` (int64, :data:`RULES_SIZE`): the round-relevant options, see the
  ``R_*`` indices and :func:`koikoi.kernel.encode_rules`.
* ``state`` (int64, :data:`STATE_SIZE`): one round, the fields of
  :class:`koikoi.game.engine.Round` at the ``S_*`` indices; card sets are 48-bit
  masks, "none" is -1.
* ``stock`` (int8, 48): the stock, top card last, ``state[S_NSTOCK]`` cards.
* ``rng`` (uint64, 1): the xorshift64* generator state (never 0).
* ``buf`` (int64, :data:`BUF_SIZE`): scratch space (legal actions, greedy ties,
  the exclusive-combine search).

Every step mirrors :class:`koikoi.game.engine.Round` and every yaku total mirrors
:class:`koikoi.game.scoring.Scorer`; ``tests/test_kernel.py`` checks both.
"""

from __future__ import annotations

from koikoi.kernel import numba_cache  # noqa: F401  # isort: skip  (first: sets numba's cache dir)
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import types as nbtypes
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

# Re-exported (``X as X``) for kernel.batch, which reads every kernel constant from here.
from koikoi.game.actions import DISCARD_BASE as DISCARD_BASE
from koikoi.game.actions import KOIKOI_ID as KOIKOI_ID
from koikoi.game.actions import PLAY_TARGET_BASE as PLAY_TARGET_BASE
from koikoi.game.actions import STOP_ID as STOP_ID
from koikoi.game.actions import TAKE_BASE as TAKE_BASE
from koikoi.game.cards import AKATAN, ANIMALS, AOTAN, BRIGHTS, PLAINS, RIBBONS
from koikoi.game.tables import (
    ANIMALS_NO_SAKE,
    CURTAIN,
    DOUBLE_RIBBONS,
    INO_SHIKA_CHO,
    LIGHTNING,
    MOON,
    NON_RAIN_BRIGHTS,
    RAIN_MAN,
    WILLOWS,
)
from koikoi.game.tables import SAKE_CUP as SAKE
from koikoi.kernel.policy import (
    BOLD_HAND,
    BOLD_POINTS,
    PROGRESS_WEIGHT,
    PROGRESS_YAKU,
    SOFT_CAPTURE_BONUS,
    SOFT_TEMPERATURE,
    YAKU_WEIGHT,
)
from koikoi.kernel.policy import CARD_VALUES as POLICY_CARD_VALUES

Int64Array = npt.NDArray[np.int64]
Int8Array = npt.NDArray[np.int8]
UInt64Array = npt.NDArray[np.uint64]

_F = TypeVar("_F", bound=Callable[..., Any])


def _jit(signature: str) -> Callable[[_F], _F]:
    """``numba.njit(signature, cache=True, nogil=True)``, typed for mypy.

    An explicit signature compiles each function once (at import; cached on
    disk), instead of once per combination of literal arguments at its call sites.
    """

    def decorate(fn: _F) -> _F:
        return cast(_F, numba.njit(signature, cache=True, nogil=True)(fn))

    return decorate


def _ctpop_intrinsic(typingctx: Any, x: Any) -> Any:
    """LLVM ``ctpop`` on an int64 (one POPCNT instruction)."""
    sig = nbtypes.int64(nbtypes.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [args[0]])

    return sig, codegen


popcount = cast(Callable[[int], int], intrinsic(_ctpop_intrinsic))
ctz = cast(Callable[[int], int], trailing_zeros)

# ------------------------------------------------------------------- layout

# Rules array: the points of each yaku first (0: the yaku does not exist).
R_GOKO: Final = 0
R_SHIKO: Final = 1
R_AME_SHIKO: Final = 2
R_SANKO: Final = 3
R_INOSHIKACHO: Final = 4
R_TANE: Final = 5
R_AKATAN: Final = 6
R_AOTAN: Final = 7
R_AKATAN_AOTAN: Final = 8
R_TANZAKU: Final = 9
R_KASU: Final = 10
R_HANAMI: Final = 11
R_TSUKIMI: Final = 12
R_TSUKIFUDA: Final = 13
R_TESHI: Final = 14  # instant.teshi when instant.teshi_collected, else 0
R_EXTRA: Final = 15
R_COMBINE: Final = 16  # 0 absorb, 1 separate, 2 exclusive
R_SAKE: Final = 17  # 0 animal, 1 both, 2 either, 3 both_double_plain
R_SANKO_RAIN: Final = 18
R_AA_ADDS: Final = 19
R_VIEW_REQ: Final = 20
R_SPOILERS: Final = 21  # card set
R_VIEW_AFTER: Final = 22
R_HAND_CARD: Final = 23  # 0 any, 1 any_or_discard, 2 must_match
R_WILD: Final = 24
R_LIMIT: Final = 25
R_LIMIT_ROUND: Final = 26
R_OFFER_LAST: Final = 27
R_BONUS: Final = 28  # 0 opponent_x2, 1 challenge_x2, 2 ladder, 3 none
R_SEVEN: Final = 29
R_EXHAUSTED: Final = 30  # 0 draw, 1 highest, 2 last_yaku, 3 dealer_point
R_FIRST_EMPTY: Final = 31
R_OYA_KEN: Final = 32
R_ZERO_SUM: Final = 33
R_MONTH_MATTERS: Final = 34
R_VIEW_EXISTS: Final = 35
R_BRIGHT_TABLE: Final = 36  # 32 entries: best Bright yaku points by Bright subset
R_TARGETS: Final = R_BRIGHT_TABLE + 32  # (cards, need, points) of each progress yaku
YAKU_TARGETS: Final = len(PROGRESS_YAKU)
"""The yaku :func:`yaku_target` describes, by index (koikoi.kernel.policy.PROGRESS_YAKU)."""
RULES_SIZE: Final = R_TARGETS + 3 * YAKU_TARGETS

COMBINE_ABSORB: Final = 0
COMBINE_SEPARATE: Final = 1
COMBINE_EXCLUSIVE: Final = 2
SAKE_ANIMAL: Final = 0
SAKE_BOTH: Final = 1
SAKE_EITHER: Final = 2
SAKE_DOUBLE: Final = 3
HAND_ANY: Final = 0
HAND_ANY_OR_DISCARD: Final = 1
HAND_MUST_MATCH: Final = 2
BONUS_OPPONENT: Final = 0
BONUS_CHALLENGE: Final = 1
BONUS_LADDER: Final = 2
BONUS_NONE: Final = 3
EXHAUSTED_DRAW: Final = 0
EXHAUSTED_HIGHEST: Final = 1
EXHAUSTED_LAST_YAKU: Final = 2
EXHAUSTED_DEALER_POINT: Final = 3

# State array.
S_HAND0: Final = 0
S_HAND1: Final = 1
S_FIELD: Final = 2
S_PILE0: Final = 3
S_PILE1: Final = 4
S_SCORE0: Final = 5
S_SCORE1: Final = 6
S_TURN_SCORE: Final = 7
S_CALLS0: Final = 8
S_CALLS1: Final = 9
S_CALLED0: Final = 10
S_CALLED1: Final = 11
S_LAST_IMPROVER: Final = 12  # -1: none
S_PHASE: Final = 13
S_CURRENT: Final = 14
S_DRAWN: Final = 15  # -1: none
S_DEALER: Final = 16
S_MONTH: Final = 17
S_NSTOCK: Final = 18
S_WINNER: Final = 19  # -1: nobody
S_POINTS: Final = 20
S_DELTA0: Final = 21
S_DELTA1: Final = 22
S_REASON: Final = 23
S_BASE: Final = 24
S_ERROR: Final = 25  # 1: no legal action in a live state (cannot happen from a real deal)
# The match context (0: none): the fewest points a stop must win for player 0 (1) for
# stopping to change the match result; a playout calls koi-koi below it (see choose_action).
S_NEED0: Final = 26
S_NEED1: Final = 27
STATE_SIZE: Final = 28
STOCK_SIZE: Final = 48

PHASE_PLAY: Final = 0
PHASE_TAKE: Final = 1
PHASE_DECIDE: Final = 2
PHASE_OVER: Final = 3

# Settlement reasons, as codes (koikoi.kernel.REASONS names them).
REASON_NONE: Final = 0
REASON_STOP: Final = 1
REASON_EXHAUSTED: Final = 2
REASON_HIGHEST: Final = 3
REASON_LAST_YAKU: Final = 4
REASON_DEALER_POINT: Final = 5
REASON_OYA_KEN: Final = 6

POLICY_RANDOM: Final = 0
POLICY_GREEDY: Final = 1
POLICY_YAKU: Final = 2
POLICY_TACTICAL: Final = 3
POLICY_BOLD: Final = 4
POLICY_SOFT: Final = 5
# Scratch buffer.
BUF_ACTIONS: Final = 0
BUF_TIES: Final = 128
BUF_GROUPS: Final = 256  # 5 group counts, then 5 x 32 (mask, points) pairs
BUF_SIZE: Final = 640
GROUP_SLOTS: Final = 32

# Card sets (koikoi.game.cards and koikoi.game.tables, imported above).
ROLE_1: Final = 1 << 48  # the Sake cup's Plain roles under "exclusive"
ROLE_2: Final = 1 << 49

# Greedy card values (koikoi.kernel.policy): Bright 20, Animal 10, Ribbon 5, Plain 1.
CARD_VALUES: Final = np.array(POLICY_CARD_VALUES, dtype=np.int64)


# ------------------------------------------------------------------- random


@_jit("uint64(uint64[::1])")
def rng_next(rng: UInt64Array) -> np.uint64:
    """xorshift64*: the next 64 random bits."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)  # type: ignore[no-any-return]


@_jit("int64(uint64[::1], int64)")
def rand_below(rng: UInt64Array, n: int) -> int:
    """A uniform integer in ``0 .. n-1`` (``n`` below 2**31)."""
    hi = rng_next(rng) >> np.uint64(32)
    return int((hi * np.uint64(n)) >> np.uint64(32))


# ------------------------------------------------------------------- scoring


@_jit("float64(uint64[::1])")
def rand_unit(rng: UInt64Array) -> float:
    """A uniform float in ``[0, 1)`` (53 random bits)."""
    return float(rng_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@_jit("int64(int64)")
def month_mask(card: int) -> int:
    return 15 << (4 * (card >> 2))


@_jit("int64(int64)")
def bright_index(pile: int) -> int:
    """The Bright cards of ``pile`` as a 5-bit index (1L, 3L, 8L, 11L, 12L)."""
    return (
        (pile & 1)
        | ((pile >> 7) & 2)
        | ((pile >> 26) & 4)
        | ((pile >> 37) & 8)
        | ((pile >> 40) & 16)
    )


@_jit("int64(int64, int64, boolean, int64[::1], boolean, int64)")
def _open_total(
    pile: int, month: int, called: bool, rules: Int64Array, animal: bool, plain_roles: int
) -> int:
    """Yaku total under ``combine = "absorb"`` or ``"separate"`` (Scorer._open_*)."""
    extra = rules[R_EXTRA]
    total = rules[R_BRIGHT_TABLE + bright_index(pile)]
    has_sake = (pile & SAKE) != 0
    na = popcount(pile & (ANIMALS if animal else ANIMALS_NO_SAKE))
    nr = popcount(pile & RIBBONS)
    ino = (pile & INO_SHIKA_CHO) == INO_SHIKA_CHO
    aka = (pile & AKATAN) == AKATAN
    ao = (pile & AOTAN) == AOTAN
    if rules[R_COMBINE] == COMBINE_ABSORB:
        if na >= 3:
            best = 0
            if ino and rules[R_INOSHIKACHO] > 0:
                best = rules[R_INOSHIKACHO] + extra * (na - 3)
            if na >= 5 and rules[R_TANE] > 0:
                pts = rules[R_TANE] + extra * (na - 5)
                if pts > best:
                    best = pts
            total += best
        if nr >= 3:
            best = 0
            if aka and ao and rules[R_AKATAN_AOTAN] > 0:
                best = rules[R_AKATAN_AOTAN] + extra * (nr - 6)
            if aka and rules[R_AKATAN] > 0:
                pts = rules[R_AKATAN] + extra * (nr - 3)
                if pts > best:
                    best = pts
            if ao and rules[R_AOTAN] > 0:
                pts = rules[R_AOTAN] + extra * (nr - 3)
                if pts > best:
                    best = pts
            if nr >= 5 and rules[R_TANZAKU] > 0:
                pts = rules[R_TANZAKU] + extra * (nr - 5)
                if pts > best:
                    best = pts
            total += best
    else:
        if ino:
            total += rules[R_INOSHIKACHO]
        if na >= 5 and rules[R_TANE] > 0:
            total += rules[R_TANE] + extra * (na - 5)
        if aka and ao and rules[R_AKATAN_AOTAN] > 0:
            total += rules[R_AKATAN_AOTAN]
            if rules[R_AA_ADDS] == 0:
                aka = False
                ao = False
        if aka:
            total += rules[R_AKATAN]
        if ao:
            total += rules[R_AOTAN]
        if nr >= 5 and rules[R_TANZAKU] > 0:
            total += rules[R_TANZAKU] + extra * (nr - 5)
    if rules[R_KASU] > 0 and (pile & PLAINS) != 0:
        n = popcount(pile & PLAINS)
        if has_sake:
            n += plain_roles
        if n >= 10:
            total += rules[R_KASU] + extra * (n - 10)
    if month > 0 and rules[R_MONTH_MATTERS] != 0:
        quad = 15 << (4 * (month - 1))
        if (pile & quad) == quad:
            total += rules[R_TSUKIFUDA] + rules[R_TESHI]
    if has_sake and rules[R_VIEW_EXISTS] != 0 and (pile & rules[R_SPOILERS]) == 0:
        after = rules[R_VIEW_AFTER] if called else 0
        view = 0
        if rules[R_HANAMI] > 0 and (pile & CURTAIN) != 0:
            view += after if after > 0 else rules[R_HANAMI]
        if rules[R_TSUKIMI] > 0 and (pile & MOON) != 0:
            view += after if after > 0 else rules[R_TSUKIMI]
        if view > 0 and (total > 0 or rules[R_VIEW_REQ] == 0):
            total += view
    return int(total)


@_jit("void(int64[::1], int64, int64, int64)")
def _add_alt(buf: Int64Array, group: int, mask: int, points: int) -> None:
    n = buf[BUF_GROUPS + group]
    at = BUF_GROUPS + 8 + group * 2 * GROUP_SLOTS + 2 * n
    buf[at] = mask
    buf[at + 1] = points
    buf[BUF_GROUPS + group] = n + 1


@_jit("int64(int64, int64, boolean, int64[::1], boolean, int64, int64[::1])")
def _exclusive_total(
    pile: int,
    month: int,
    called: bool,
    rules: Int64Array,
    animal: bool,
    plain_roles: int,
    buf: Int64Array,
) -> int:
    """Yaku total under ``combine = "exclusive"`` (Scorer._exclusive).

    Groups of fixed-card yaku (Brights, inoshikacho, red/blue ribbons, viewing,
    the month's four cards) each contribute one alternative or none, without
    sharing a card; tane, tanzaku and kasu count the cards left over.
    """
    has_sake = (pile & SAKE) != 0
    roles = 0
    if animal:
        animal_mask = ANIMALS
        plain_mask = PLAINS | ROLE_1 | ROLE_2
        if has_sake and plain_roles > 0:
            roles = ROLE_1 if plain_roles == 1 else ROLE_1 | ROLE_2
    else:
        animal_mask = ANIMALS_NO_SAKE
        plain_mask = PLAINS | SAKE
    full = pile | roles
    for g in range(5):
        buf[BUF_GROUPS + g] = 0
    # Group 0: every Bright yaku held, on every subset of cards it could use.
    b = pile & BRIGHTS
    if rules[R_GOKO] > 0 and b == BRIGHTS:
        _add_alt(buf, 0, BRIGHTS, rules[R_GOKO])
    if rules[R_SHIKO] > 0 and (b & NON_RAIN_BRIGHTS) == NON_RAIN_BRIGHTS:
        _add_alt(buf, 0, NON_RAIN_BRIGHTS, rules[R_SHIKO])
    non_rain = b & NON_RAIN_BRIGHTS
    if rules[R_AME_SHIKO] > 0 and (b & RAIN_MAN) != 0:
        s = non_rain
        while s != 0:
            if popcount(s) == 3:
                _add_alt(buf, 0, RAIN_MAN | s, rules[R_AME_SHIKO])
            s = (s - 1) & non_rain
    if rules[R_SANKO] > 0:
        pool = b if rules[R_SANKO_RAIN] != 0 else non_rain
        s = pool
        while s != 0:
            if popcount(s) == 3:
                _add_alt(buf, 0, s, rules[R_SANKO])
            s = (s - 1) & pool
    # Group 1: inoshikacho.
    if rules[R_INOSHIKACHO] > 0 and (pile & INO_SHIKA_CHO) == INO_SHIKA_CHO:
        _add_alt(buf, 1, INO_SHIKA_CHO, rules[R_INOSHIKACHO])
    # Group 2: the red and blue ribbons.
    aka = (pile & AKATAN) == AKATAN and rules[R_AKATAN] > 0
    ao = (pile & AOTAN) == AOTAN and rules[R_AOTAN] > 0
    six = (pile & DOUBLE_RIBBONS) == DOUBLE_RIBBONS and rules[R_AKATAN_AOTAN] > 0
    if six:
        _add_alt(buf, 2, DOUBLE_RIBBONS, rules[R_AKATAN_AOTAN])
    if aka and ao:
        _add_alt(buf, 2, DOUBLE_RIBBONS, rules[R_AKATAN] + rules[R_AOTAN])
    if aka:
        _add_alt(buf, 2, AKATAN, rules[R_AKATAN])
    if ao:
        _add_alt(buf, 2, AOTAN, rules[R_AOTAN])
    # Group 3: viewing (hanami and tsukimi may share the Sake cup, in any role).
    viewing = False
    if has_sake and rules[R_VIEW_EXISTS] != 0 and (pile & rules[R_SPOILERS]) == 0:
        after = rules[R_VIEW_AFTER] if called else 0
        hanami = 0
        tsukimi = 0
        if rules[R_HANAMI] > 0 and (pile & CURTAIN) != 0:
            hanami = after if after > 0 else rules[R_HANAMI]
        if rules[R_TSUKIMI] > 0 and (pile & MOON) != 0:
            tsukimi = after if after > 0 else rules[R_TSUKIMI]
        viewing = hanami > 0 or tsukimi > 0
        n_roles = 2 if roles != 0 else 1
        for r in range(n_roles):
            role = SAKE if r == 0 else ROLE_1
            if hanami > 0 and tsukimi > 0:
                _add_alt(buf, 3, CURTAIN | MOON | role, hanami + tsukimi)
            if hanami > 0:
                _add_alt(buf, 3, CURTAIN | role, hanami)
            if tsukimi > 0:
                _add_alt(buf, 3, MOON | role, tsukimi)
    # Group 4: the month's four cards.
    if month > 0 and rules[R_MONTH_MATTERS] != 0:
        quad = 15 << (4 * (month - 1))
        if (pile & quad) == quad:
            if rules[R_TSUKIFUDA] > 0:
                _add_alt(buf, 4, quad, rules[R_TSUKIFUDA])
            if rules[R_TESHI] > 0:
                _add_alt(buf, 4, quad, rules[R_TESHI])
    requires_other = rules[R_VIEW_REQ] != 0 and viewing
    extra = rules[R_EXTRA]
    combos = 1
    for g in range(5):
        combos *= buf[BUF_GROUPS + g] + 1
    best = -1
    for combo in range(combos):
        rest = combo
        used = 0
        points = 0
        others = 0
        viewed = False
        ok = True
        for g in range(5):
            n = buf[BUF_GROUPS + g]
            k = rest % (n + 1)
            rest //= n + 1
            if k == 0:
                continue
            at = BUF_GROUPS + 8 + g * 2 * GROUP_SLOTS + 2 * (k - 1)
            mask = buf[at]
            if (used & mask) != 0:
                ok = False
                break
            used |= mask
            points += buf[at + 1]
            if g == 3:
                viewed = True
            else:
                others += 1
        if not ok:
            continue
        left = full & ~used
        if rules[R_TANE] > 0:
            n = popcount(left & animal_mask)
            if n >= 5:
                points += rules[R_TANE] + extra * (n - 5)
                others += 1
        if rules[R_TANZAKU] > 0:
            n = popcount(left & RIBBONS)
            if n >= 5:
                points += rules[R_TANZAKU] + extra * (n - 5)
                others += 1
        if rules[R_KASU] > 0:
            n = popcount(left & plain_mask)
            if n >= 10:
                points += rules[R_KASU] + extra * (n - 10)
                others += 1
        if requires_other and viewed and others == 0:
            continue
        if points > best:
            best = points
    return int(best)


@_jit("int64(int64, int64, boolean, int64[::1], boolean, int64, int64[::1])")
def _total_variant(
    pile: int,
    month: int,
    called: bool,
    rules: Int64Array,
    animal: bool,
    plain_roles: int,
    buf: Int64Array,
) -> int:
    if rules[R_COMBINE] == COMBINE_EXCLUSIVE:
        return _exclusive_total(pile, month, called, rules, animal, plain_roles, buf)
    return _open_total(pile, month, called, rules, animal, plain_roles)


@_jit("int64(int64, int64, boolean, int64[::1], int64[::1])")
def yaku_total(pile: int, month: int, called: bool, rules: Int64Array, buf: Int64Array) -> int:
    """The yaku total of a capture pile (Scorer.total)."""
    sake = rules[R_SAKE]
    if sake == SAKE_EITHER:
        a = _total_variant(pile, month, called, rules, True, 0, buf)
        if (pile & SAKE) == 0:
            return a
        b = _total_variant(pile, month, called, rules, False, 1, buf)
        return a if a >= b else b
    roles = 1 if sake == SAKE_BOTH else 2 if sake == SAKE_DOUBLE else 0
    return _total_variant(pile, month, called, rules, True, roles, buf)


# ---------------------------------------------------------------- settlement


@_jit("void(int64[::1], int64[::1], int64, int64, int64, int64)")
def _finish(
    state: Int64Array, rules: Int64Array, winner: int, base: int, points: int, reason: int
) -> None:
    state[S_WINNER] = winner
    state[S_BASE] = base
    state[S_POINTS] = points
    state[S_REASON] = reason
    state[S_DELTA0] = 0
    state[S_DELTA1] = 0
    if winner >= 0:
        state[S_DELTA0 + winner] = points
        if rules[R_ZERO_SUM] != 0:
            state[S_DELTA0 + 1 - winner] = -points
    state[S_PHASE] = PHASE_OVER


@_jit("int64(int64[::1], int64[::1], int64, int64)")
def _stop_points(state: Int64Array, rules: Int64Array, p: int, base: int) -> int:
    """The points ``p`` wins by stopping with a yaku total of ``base`` (Scorer.settle)."""
    own = state[S_CALLS0 + p]
    opp = state[S_CALLS0 + 1 - p]
    points = base
    if rules[R_SEVEN] != 0 and base >= 7:
        points *= 2
    bonus = rules[R_BONUS]
    if bonus == BONUS_OPPONENT:
        if opp > 0:
            points *= 2
    elif bonus == BONUS_CHALLENGE:
        improved = own > 0 and state[S_SCORE0 + p] > state[S_CALLED0 + p]
        if improved or opp > 0:
            points *= 2
    elif bonus == BONUS_LADDER:
        if 1 <= own <= 3:
            points += own
        elif own >= 4:
            points *= own - 2
    return int(points)


@_jit("void(int64[::1], int64[::1], int64[::1], int64, int64)")
def _settle_as_stop(
    state: Int64Array, rules: Int64Array, buf: Int64Array, p: int, reason: int
) -> None:
    """Scorer.settle for a round stopped by ``p`` (or exhausted "as if stopped")."""
    base = yaku_total(state[S_PILE0 + p], state[S_MONTH], state[S_CALLS0 + p] > 0, rules, buf)
    _finish(state, rules, p, base, _stop_points(state, rules, p, base), reason)


@_jit("void(int64[::1], int64[::1])")
def _oya_ken(state: Int64Array, rules: Int64Array) -> None:
    oya_ken = rules[R_OYA_KEN]
    if oya_ken > 0:
        _finish(state, rules, state[S_DEALER], oya_ken, oya_ken, REASON_OYA_KEN)
    else:
        _finish(state, rules, -1, 0, 0, REASON_EXHAUSTED)


@_jit("void(int64[::1], int64[::1], int64[::1])")
def _exhausted(state: Int64Array, rules: Int64Array, buf: Int64Array) -> None:
    rule = rules[R_EXHAUSTED]
    dealer = state[S_DEALER]
    if rule == EXHAUSTED_DRAW:
        _finish(state, rules, -1, 0, 0, REASON_EXHAUSTED)
    elif rule == EXHAUSTED_DEALER_POINT:
        oya_ken = rules[R_OYA_KEN]
        _finish(state, rules, dealer, oya_ken, oya_ken, REASON_DEALER_POINT)
    elif rule == EXHAUSTED_HIGHEST:
        s0 = state[S_SCORE0]
        s1 = state[S_SCORE1]
        if s0 == 0 and s1 == 0:
            _oya_ken(state, rules)
        elif s0 == s1:
            _settle_as_stop(state, rules, buf, dealer, REASON_HIGHEST)
        else:
            _settle_as_stop(state, rules, buf, 0 if s0 > s1 else 1, REASON_HIGHEST)
    else:
        last = state[S_LAST_IMPROVER]
        if last < 0:
            _oya_ken(state, rules)
        else:
            _settle_as_stop(state, rules, buf, last, REASON_LAST_YAKU)


# --------------------------------------------------------------------- steps


@_jit("int64(int64, int64, boolean)")
def _matches(field: int, card: int, wild: bool) -> int:
    if card == LIGHTNING and wild:
        return field
    return field & month_mask(card)


@_jit("boolean(int64, int64, boolean)")
def _needs_choice(field: int, card: int, wild: bool) -> bool:
    """Whether ``card`` arriving on ``field`` needs a capture choice (Round._captures_for)."""
    if card == LIGHTNING and wild:
        return not (popcount(field & WILLOWS) == 3 or popcount(field) < 2)
    return popcount(field & month_mask(card)) == 2


@_jit("int64(int64[::1], int64[::1], int64[::1])")
def legal_actions(state: Int64Array, rules: Int64Array, buf: Int64Array) -> int:
    """Write the legal action ids to ``buf[0:n]`` in Round.legal_ids() order; return n."""
    phase = state[S_PHASE]
    n = 0
    if phase == PHASE_PLAY:
        hand = state[S_HAND0 + state[S_CURRENT]]
        field = state[S_FIELD]
        wild = rules[R_WILD] != 0
        discard = rules[R_HAND_CARD] == HAND_ANY_OR_DISCARD
        if rules[R_HAND_CARD] == HAND_MUST_MATCH:
            playable = 0
            h = hand
            while h != 0:
                c = ctz(h)
                h &= h - 1
                if _matches(field, c, wild) != 0:
                    playable |= 1 << c
            if playable != 0:
                hand = playable
        while hand != 0:
            c = ctz(hand)
            hand &= hand - 1
            if c == LIGHTNING and wild:
                if popcount(field & WILLOWS) == 3 or popcount(field) < 2:
                    buf[n] = c
                    n += 1
                else:
                    base = PLAY_TARGET_BASE + 48 * c
                    f = field
                    while f != 0:
                        buf[n] = base + ctz(f)
                        n += 1
                        f &= f - 1
                if field != 0 and discard:
                    buf[n] = DISCARD_BASE + c
                    n += 1
                continue
            m = field & month_mask(c)
            if m != 0 and popcount(m) == 2:
                base = PLAY_TARGET_BASE + 48 * c
                buf[n] = base + ctz(m)
                m2 = m & (m - 1)
                buf[n + 1] = base + ctz(m2)
                n += 2
            else:
                buf[n] = c
                n += 1
            if m != 0 and discard:
                buf[n] = DISCARD_BASE + c
                n += 1
    elif phase == PHASE_TAKE:
        d = state[S_DRAWN]
        field = state[S_FIELD]
        if _needs_choice(field, d, rules[R_WILD] != 0):
            f = field if (d == LIGHTNING and rules[R_WILD] != 0) else field & month_mask(d)
            while f != 0:
                buf[n] = TAKE_BASE + ctz(f)
                n += 1
                f &= f - 1
    elif phase == PHASE_DECIDE:
        buf[0] = KOIKOI_ID
        buf[1] = STOP_ID
        n = 2
    return n


@_jit("int64(int64[::1], int64[::1], int64, int64, int64)")
def _capture(state: Int64Array, rules: Int64Array, p: int, card: int, target: int) -> int:
    """A card arrives on the field (Round._capture); returns the captured set (0: laid)."""
    field = state[S_FIELD]
    if target >= 0:
        got = (1 << card) | (1 << target)
    else:
        if card == LIGHTNING and rules[R_WILD] != 0:
            willows = field & WILLOWS
            m = willows if popcount(willows) == 3 else field
        else:
            m = field & month_mask(card)
        if m == 0:
            state[S_FIELD] = field | (1 << card)
            return 0
        got = m | (1 << card)
    state[S_FIELD] = field & ~got
    state[S_PILE0 + p] |= got
    return int(got)


@_jit("boolean(int64[::1], int64[::1], int64)")
def _limit_reached(state: Int64Array, rules: Int64Array, p: int) -> bool:
    limit = rules[R_LIMIT]
    if limit == 0:
        return False
    if rules[R_LIMIT_ROUND] != 0:
        return bool(state[S_CALLS0] + state[S_CALLS1] >= limit)
    return bool(state[S_CALLS0 + p] >= limit)


@_jit("void(int64[::1], int64[::1], int64[::1], int64)")
def _end_turn(state: Int64Array, rules: Int64Array, buf: Int64Array, p: int) -> None:
    called = state[S_CALLS0 + p] > 0
    new = yaku_total(state[S_PILE0 + p], state[S_MONTH], called, rules, buf)
    state[S_SCORE0 + p] = new
    improved = new > state[S_TURN_SCORE]
    if improved:
        state[S_LAST_IMPROVER] = p
    own_empty = state[S_HAND0 + p] == 0
    both_empty = state[S_HAND0] == 0 and state[S_HAND1] == 0
    if rules[R_FIRST_EMPTY] != 0 and own_empty:
        _exhausted(state, rules, buf)
        return
    if improved:
        if (
            both_empty
            or (rules[R_OFFER_LAST] == 0 and own_empty)
            or _limit_reached(state, rules, p)
        ):
            _settle_as_stop(state, rules, buf, p, REASON_STOP)
            return
        state[S_PHASE] = PHASE_DECIDE
        return
    if both_empty:
        _exhausted(state, rules, buf)
        return
    state[S_CURRENT] = 1 - p
    state[S_PHASE] = PHASE_PLAY


@_jit("void(int64[::1], int8[::1], int64[::1], int64[::1], int64, int64, int64, boolean)")
def _play(
    state: Int64Array,
    stock: Int8Array,
    rules: Int64Array,
    buf: Int64Array,
    p: int,
    card: int,
    target: int,
    discard: bool,
) -> None:
    state[S_HAND0 + p] &= ~(1 << card)
    state[S_TURN_SCORE] = state[S_SCORE0 + p]
    if discard:
        state[S_FIELD] |= 1 << card
    else:
        _capture(state, rules, p, card, target)
    n = state[S_NSTOCK]
    if n == 0:
        _end_turn(state, rules, buf, p)
        return
    n -= 1
    d = int(stock[n])
    state[S_NSTOCK] = n
    if _needs_choice(state[S_FIELD], d, rules[R_WILD] != 0):
        state[S_DRAWN] = d
        state[S_PHASE] = PHASE_TAKE
        return
    _capture(state, rules, p, d, -1)
    _end_turn(state, rules, buf, p)


@_jit("void(int64[::1], int8[::1], int64[::1], int64[::1], int64)")
def apply_action(
    state: Int64Array, stock: Int8Array, rules: Int64Array, buf: Int64Array, action: int
) -> None:
    """Round.apply_id: apply an action id without checking it."""
    p = state[S_CURRENT]
    if action < PLAY_TARGET_BASE:
        _play(state, stock, rules, buf, p, action, -1, False)
    elif action < DISCARD_BASE:
        rel = action - PLAY_TARGET_BASE
        _play(state, stock, rules, buf, p, rel // 48, rel % 48, False)
    elif action < TAKE_BASE:
        _play(state, stock, rules, buf, p, action - DISCARD_BASE, -1, True)
    elif action < KOIKOI_ID:
        d = state[S_DRAWN]
        state[S_DRAWN] = -1
        _capture(state, rules, p, d, action - TAKE_BASE)
        _end_turn(state, rules, buf, p)
    elif action == KOIKOI_ID:
        state[S_CALLS0 + p] += 1
        if rules[R_VIEW_AFTER] > 0 and state[S_CALLS0 + p] == 1:
            state[S_SCORE0 + p] = yaku_total(state[S_PILE0 + p], state[S_MONTH], True, rules, buf)
        state[S_CALLED0 + p] = state[S_SCORE0 + p]
        h0 = state[S_HAND0]
        h1 = state[S_HAND1]
        if h0 == 0 and h1 == 0:
            _exhausted(state, rules, buf)
            return
        q = 1 - p
        state[S_CURRENT] = q if state[S_HAND0 + q] != 0 else p
        state[S_PHASE] = PHASE_PLAY
    else:
        _settle_as_stop(state, rules, buf, p, REASON_STOP)


# ------------------------------------------------------------------- policies


@_jit("int64(int64, int64)")
def greedy_value(field: int, action: int) -> int:
    """GreedyAgent._value: the card value an action captures (koikoi.agents.base)."""
    if action >= TAKE_BASE:
        return int(CARD_VALUES[action - TAKE_BASE])
    if action >= DISCARD_BASE:
        return 0
    if action >= PLAY_TARGET_BASE:
        rel = action - PLAY_TARGET_BASE
        return int(CARD_VALUES[rel // 48] + CARD_VALUES[rel % 48])
    month_cards = field & month_mask(action)
    if month_cards == 0:
        return -int(CARD_VALUES[action])  # laying a card: the least valuable one is best
    total = CARD_VALUES[action]
    while month_cards != 0:
        total += CARD_VALUES[ctz(month_cards)]
        month_cards &= month_cards - 1
    return int(total)


@_jit("int64(int64, int64, int64)")
def captured_by(field: int, drawn: int, action: int) -> int:
    """The cards an action puts in the player's pile (0: none); wild lightning ignored."""
    if action >= KOIKOI_ID or action < 0:
        return 0
    if action >= TAKE_BASE:
        return (1 << drawn) | (1 << (action - TAKE_BASE))
    if action >= DISCARD_BASE:
        return 0
    if action >= PLAY_TARGET_BASE:
        rel = action - PLAY_TARGET_BASE
        return (1 << (rel // 48)) | (1 << (rel % 48))
    month_cards = field & month_mask(action)
    if month_cards == 0:
        return 0
    return month_cards | (1 << action)


@_jit("int64(int64, int64, int64, int64, int64)")
def _progress_one(pile: int, other: int, mask: int, need: int, points: int) -> int:
    if points <= 0:
        return 0
    have = popcount(pile & mask)
    if have >= need or popcount(mask & ~other) < need:
        return 0
    return int(points * PROGRESS_WEIGHT * have * have // (need * need))


@_jit("UniTuple(int64, 3)(int64, int64[::1])")
def yaku_target(i: int, rules: Int64Array) -> tuple[int, int, int]:
    """Yaku ``i`` (0 to :data:`YAKU_TARGETS` - 1, in the order of ``PROGRESS_YAKU``) as
    ``(cards, how many needed, points)`` under ``rules`` (points 0: the yaku does not
    count); :func:`koikoi.kernel.encode_rules` writes them from
    :func:`koikoi.game.tables.yaku_cards`."""
    at = R_TARGETS + 3 * i
    return rules[at], rules[at + 1], rules[at + 2]


@_jit("int64(int64, int64, int64[::1])")
def progress(pile: int, other: int, rules: Int64Array) -> int:
    """How far ``pile`` is toward the yaku it has not completed yet (``tactical`` policy).

    Each yaku with points under ``rules`` that ``pile`` lacks, and that is still
    reachable (``other``, the opponent's pile, does not hold too many of its
    cards), adds ``points * PROGRESS_WEIGHT * have**2 / need**2``: a yaku two
    cards short counts little, one card short much.
    """
    total = 0
    for i in range(YAKU_TARGETS):
        mask, need, points = yaku_target(i, rules)
        total += _progress_one(pile, other, mask, need, points)
    return total


@_jit("int64(int64)")
def _best_card(cards: int) -> int:
    """The most valuable card of a non-empty set (lowest id on ties)."""
    best = -1
    value = -1
    m = cards
    while m != 0:
        c = ctz(m)
        m &= m - 1
        if CARD_VALUES[c] > value:
            value = CARD_VALUES[c]
            best = c
    return best


@_jit("int64(int64, int64, int64, int64, int64[::1], int64)")
def _exposure(
    action: int, opp_hand: int, opp_pile: int, pile: int, rules: Int64Array, theirs: int
) -> int:
    """What laying a card hands the opponent who holds its month (``tactical`` policy).

    The policy plays in a determinized round, where the opponent's hand is known.
    """
    if action >= TAKE_BASE or action < 0:
        return 0
    card = action - DISCARD_BASE if action >= DISCARD_BASE else action
    if action >= PLAY_TARGET_BASE and action < DISCARD_BASE:
        return 0
    theirs_month = opp_hand & month_mask(card)
    if theirs_month == 0:
        return 0
    taker = _best_card(theirs_month)
    got = (1 << card) | (1 << taker)
    return int(
        CARD_VALUES[card] + CARD_VALUES[taker] + progress(opp_pile | got, pile, rules) - theirs
    )


@_jit("boolean(int64, int64, int64, int64)")
def _one_short(pile: int, other: int, mask: int, need: int) -> bool:
    """Whether ``pile`` lacks one card of ``need`` from ``mask`` and can still get it."""
    return popcount(pile & mask) == need - 1 and popcount(mask & ~other) >= need


@_jit("boolean(int64[::1], int64[::1])")
def bold_koikoi(state: Int64Array, rules: Int64Array) -> bool:
    """The ``bold`` policy's koi-koi decision, from what the caller can see.

    Koi-koi when at least :data:`BOLD_HAND` cards are left in hand, the yaku total
    is at most :data:`BOLD_POINTS`, the opponent has not called koi-koi (then any
    yaku wins double) and no yaku of the opponent is one card short (with that
    card still to be had).
    """
    p = state[S_CURRENT]
    q = 1 - p
    if popcount(state[S_HAND0 + p]) < BOLD_HAND or state[S_SCORE0 + p] > BOLD_POINTS:
        return False
    if state[S_CALLS0 + q] > 0:
        return False
    opp = state[S_PILE0 + q]
    mine = state[S_PILE0 + p]
    for i in range(YAKU_TARGETS):
        mask, need, points = yaku_target(i, rules)
        if points > 0 and _one_short(opp, mine, mask, need):
            return False
    return True


@_jit("int64(int64, int64, int64[::1], int64, uint64[::1])")
def soft_choice(field: int, drawn: int, buf: Int64Array, n: int, rng: UInt64Array) -> int:
    """The ``soft`` policy's hand play: one of the ``n`` actions in ``buf`` with chance
    proportional to ``exp((greedy value + bonus if it captures) / temperature)``.

    The opponent model of :mod:`koikoi.agents.inference` (``PlayModel``), so playouts
    play as the inference assumes people and programs do: near-best plays often,
    others sometimes.
    """
    best = -(1 << 30)
    for i in range(n):
        a = buf[BUF_ACTIONS + i]
        v = greedy_value(field, a)
        if captured_by(field, drawn, a) != 0:
            v += SOFT_CAPTURE_BONUS
        buf[BUF_TIES + i] = v
        if v > best:
            best = v
    total = 0.0
    for i in range(n):
        total += np.exp((buf[BUF_TIES + i] - best) / SOFT_TEMPERATURE)
    u = rand_unit(rng) * total
    for i in range(n):
        u -= np.exp((buf[BUF_TIES + i] - best) / SOFT_TEMPERATURE)
        if u < 0.0:
            return int(buf[BUF_ACTIONS + i])
    return int(buf[BUF_ACTIONS + n - 1])


@_jit("int64(int64[::1], int64[::1], int64[::1], int64, uint64[::1], int64)")
def choose_action(
    state: Int64Array, rules: Int64Array, buf: Int64Array, n: int, rng: UInt64Array, policy: int
) -> int:
    """One of the ``n`` legal actions in ``buf``: uniform, greedy or yaku (ties uniform).

    ``yaku`` adds :data:`YAKU_WEIGHT` per point the capture adds to the player's
    yaku total to the greedy card value. At a koi-koi decision every policy but
    ``random`` follows the match first: when a stop would win fewer points than
    the player needs for it to change the match result (``state[S_NEED0 + p]``,
    see :func:`set_needs`), it calls koi-koi and plays on for them.
    """
    if policy == POLICY_RANDOM or n == 1:
        return int(buf[rand_below(rng, n)])
    if state[S_PHASE] == PHASE_DECIDE:
        p = state[S_CURRENT]
        need = state[S_NEED0 + p]
        if need > 0 and _stop_points(state, rules, p, state[S_SCORE0 + p]) < need:
            return KOIKOI_ID
        if policy == POLICY_BOLD and bold_koikoi(state, rules):
            return KOIKOI_ID
        return STOP_ID
    field = state[S_FIELD]
    if policy == POLICY_SOFT and state[S_PHASE] == PHASE_PLAY:
        return soft_choice(field, state[S_DRAWN], buf, n, rng)
    p = state[S_CURRENT]
    pile = state[S_PILE0 + p]
    called = state[S_CALLS0 + p] > 0
    now = 0
    opp_pile = state[S_PILE0 + 1 - p]
    opp_hand = state[S_HAND0 + 1 - p]
    mine = 0
    theirs = 0
    if policy >= POLICY_YAKU:
        now = yaku_total(pile, state[S_MONTH], called, rules, buf)
    if policy == POLICY_TACTICAL:
        mine = progress(pile, opp_pile, rules)
        theirs = progress(opp_pile, pile, rules)
    best = -(1 << 30)
    ties = 0
    for i in range(n):
        a = buf[BUF_ACTIONS + i]
        v = greedy_value(field, a)
        if policy >= POLICY_YAKU:
            got = captured_by(field, state[S_DRAWN], a)
            if got != 0:
                gain = yaku_total(pile | got, state[S_MONTH], called, rules, buf) - now
                v += YAKU_WEIGHT * gain
                if policy == POLICY_TACTICAL:
                    v += progress(pile | got, opp_pile, rules) - mine
                    v += theirs - progress(opp_pile, pile | got, rules)
            elif policy == POLICY_TACTICAL:
                v -= _exposure(a, opp_hand, opp_pile, pile, rules, theirs)
        if v > best:
            best = v
            ties = 0
        if v == best:
            buf[BUF_TIES + ties] = a
            ties += 1
    return int(buf[BUF_TIES + rand_below(rng, ties)])


@_jit("int64(int64[::1], int8[::1], int64[::1], int64[::1], uint64[::1], int64, int64[::1])")
def play_out(
    state: Int64Array,
    stock: Int8Array,
    rules: Int64Array,
    buf: Int64Array,
    rng: UInt64Array,
    policy: int,
    record: Int64Array,
) -> int:
    """Play to the settlement; the actions go to ``record`` while it has room.

    Returns the number of actions played.
    """
    count = 0
    room = record.shape[0]
    while state[S_PHASE] != PHASE_OVER:
        n = legal_actions(state, rules, buf)
        if n == 0:
            state[S_ERROR] = 1
            break
        a = choose_action(state, rules, buf, n, rng, policy)
        if count < room:
            record[count] = a
        count += 1
        apply_action(state, stock, rules, buf, a)
    return count


@_jit("int64(int64[::1])")
def signed_value(state: Int64Array) -> int:
    """The settlement's points for player 0: +points if 0 won, -points if 1 won, else 0."""
    w = state[S_WINNER]
    if w == 0:
        return int(state[S_POINTS])
    if w == 1:
        return int(-state[S_POINTS])
    return 0


@_jit("int64(int64[::1], int8[::1], int64[::1], uint64[::1], int64, int64[::1])")
def playouts(
    state0: Int64Array,
    stock0: Int8Array,
    rules: Int64Array,
    rng: UInt64Array,
    policy: int,
    out: Int64Array,
) -> int:
    """Play ``len(out)`` rounds from a copy of ``state0``; write each value to ``out``.

    Returns the number of playouts that ended in an error (a state with no legal action).
    """
    state = np.empty_like(state0)
    stock = np.empty_like(stock0)
    buf = np.zeros(BUF_SIZE, dtype=np.int64)
    record = np.empty(0, dtype=np.int64)
    errors = 0
    for i in range(out.shape[0]):
        state[:] = state0
        stock[:] = stock0
        play_out(state, stock, rules, buf, rng, policy, record)
        errors += state[S_ERROR]
        out[i] = signed_value(state)
    return errors


@_jit("void(int64[::1], int8[::1], int8[::1], int64, int64)")
def deal(state: Int64Array, stock: Int8Array, deck: Int8Array, dealer: int, month: int) -> None:
    """A fresh round from a shuffled deck, as Match deals it (dealer leads)."""
    state[:] = 0
    for i in range(8):
        state[S_HAND0 + dealer] |= 1 << np.int64(deck[i])
        state[S_HAND0 + 1 - dealer] |= 1 << np.int64(deck[8 + i])
        state[S_FIELD] |= 1 << np.int64(deck[16 + i])
    for j in range(24):
        stock[j] = deck[47 - j]
    state[S_NSTOCK] = 24
    state[S_LAST_IMPROVER] = -1
    state[S_PHASE] = PHASE_PLAY
    state[S_CURRENT] = dealer
    state[S_DRAWN] = -1
    state[S_DEALER] = dealer
    state[S_MONTH] = month
    state[S_WINNER] = -1


@_jit("void(int8[::1], uint64[::1])")
def shuffle(deck: Int8Array, rng: UInt64Array) -> None:
    """Fisher-Yates."""
    for i in range(deck.shape[0] - 1, 0, -1):
        j = rand_below(rng, i + 1)
        t = deck[i]
        deck[i] = deck[j]
        deck[j] = t


@_jit("int64(int64[::1], int64, uint64[::1], int64)")
def random_rounds(rules: Int64Array, count: int, rng: UInt64Array, policy: int) -> int:
    """Deal and play ``count`` rounds (dealer alternating, month cycling); for benchmarks.

    Returns the sum of the signed values (so the work cannot be optimized away).
    """
    state = np.zeros(STATE_SIZE, dtype=np.int64)
    stock = np.zeros(STOCK_SIZE, dtype=np.int8)
    deck = np.arange(48).astype(np.int8)
    buf = np.zeros(BUF_SIZE, dtype=np.int64)
    record = np.empty(0, dtype=np.int64)
    acc = 0
    for i in range(count):
        shuffle(deck, rng)
        deal(state, stock, deck, i & 1, i % 12 + 1)
        play_out(state, stock, rules, buf, rng, policy, record)
        acc += signed_value(state)
    return acc


@_jit("void(int64[::1], int64, boolean, int64[::1], int64[::1])")
def yaku_totals(
    piles: Int64Array, month: int, called: bool, rules: Int64Array, out: Int64Array
) -> None:
    """:func:`yaku_total` of many piles (for tests)."""
    buf = np.zeros(BUF_SIZE, dtype=np.int64)
    for i in range(piles.shape[0]):
        out[i] = yaku_total(piles[i], month, called, rules, buf)


# ----------------------------------------------------------------- lookahead

LOOK_MAX_ACTIONS: Final = 128
"""Room for the legal actions of one lookahead decision (far more than any position has)."""
LOOK_GREEDY_WEIGHT: Final = 0.01
"""Points added to a lookahead choice's mean result per point of the action's greedy value
(Bright 20, Animal 10, Ribbon 5, Plain 1): a tie-break and a little shrinkage toward the
greedy choice, whose few re-deals cannot tell close actions apart."""
# The lookahead's scratch space: an int64 array (the actions, the re-dealt state, a
# copy to play out), a float64 array (the sums) and an int8 array (the unseen cards,
# the re-dealt stock, a copy to play out).
LW_ACTS: Final = 0
LW_BASE: Final = LOOK_MAX_ACTIONS
LW_STATE: Final = LW_BASE + STATE_SIZE
LW_INT_SIZE: Final = LW_STATE + STATE_SIZE
LW_POOL: Final = 0
LW_STOCK: Final = STOCK_SIZE
LW_PLAY_STOCK: Final = 2 * STOCK_SIZE
LW_BYTE_SIZE: Final = 3 * STOCK_SIZE


@_jit(
    "int64(int64[::1], int8[::1], int64[::1], int64[::1], uint64[::1], int64, int64,"
    " int64[::1], float64[::1], int8[::1], uint64[::1])"
)
def lookahead_choice(
    state: Int64Array,
    stock: Int8Array,
    rules: Int64Array,
    buf: Int64Array,
    rng: UInt64Array,
    samples: int,
    policy: int,
    wi: Int64Array,
    sums: npt.NDArray[np.float64],
    wb: Int8Array,
    roll: UInt64Array,
) -> int:
    """The choice of the player to act in ``state`` by a small determinized search of
    their own (the ``lookahead`` of :func:`play_out_lookahead`).

    The player sees only what they would see: the opponent's hand and the stock
    of ``state`` are pooled and re-dealt ``samples`` times; on each re-deal every
    legal action is applied to a copy and played out once with ``policy`` (all
    actions with the same rollout numbers); the action with the best mean net
    round result for the player, plus :data:`LOOK_GREEDY_WEIGHT` times its greedy
    value, is chosen (ties at random). A stop is valued exactly. ``wi`` (of
    :data:`LW_INT_SIZE`), ``sums`` (of :data:`LOOK_MAX_ACTIONS`), ``wb`` (of
    :data:`LW_BYTE_SIZE`) and ``roll`` (one generator state) are scratch space.
    """
    n = legal_actions(state, rules, buf)
    if n <= 1:
        return int(buf[0])
    acts = wi[LW_ACTS:LW_BASE]
    base = wi[LW_BASE:LW_STATE]
    st = wi[LW_STATE:LW_INT_SIZE]
    pool = wb[LW_POOL:LW_STOCK]
    bstock = wb[LW_STOCK:LW_PLAY_STOCK]
    sk = wb[LW_PLAY_STOCK:LW_BYTE_SIZE]
    none = wi[0:0]  # the inner playouts record nothing
    for j in range(n):
        acts[j] = buf[j]
        sums[j] = 0.0
    p = state[S_CURRENT]
    q = 1 - p
    sign = 1 if p == 0 else -1
    nq = popcount(state[S_HAND0 + q])
    nstock = state[S_NSTOCK]
    h = state[S_HAND0 + q]
    for i in range(nstock):
        h |= 1 << int(stock[i])
    k = 0  # the unseen cards as a set, in card order: the choice cannot depend on their deal
    while h != 0:
        pool[k] = ctz(h)
        k += 1
        h &= h - 1
    for _ in range(samples):
        shuffle(pool[:k], rng)
        hand = 0
        for i in range(nq):
            hand |= 1 << int(pool[i])
        base[:] = state
        base[S_HAND0 + q] = hand
        for i in range(nstock):
            bstock[i] = pool[nq + i]
        seed = rng_next(rng) | np.uint64(1)
        for j in range(n):
            st[:] = base
            sk[:] = bstock
            apply_action(st, sk, rules, buf, acts[j])
            if st[S_PHASE] != PHASE_OVER:
                roll[0] = seed
                play_out(st, sk, rules, buf, roll, policy, none)
            sums[j] += sign * signed_value(st)
    decide = state[S_PHASE] == PHASE_DECIDE
    field = state[S_FIELD]
    best = -1e300
    ties = 0
    for j in range(n):
        v = sums[j] / samples
        # Few re-deals often tie or nearly tie: the greedy value of the capture (or,
        # at a koi-koi decision, stopping) tells such actions apart.
        if decide:
            v += LOOK_GREEDY_WEIGHT if acts[j] == STOP_ID else 0.0
        else:
            v += LOOK_GREEDY_WEIGHT * greedy_value(field, acts[j])
        if v > best + 1e-9:
            best = v
            ties = 0
        if v >= best - 1e-9:
            buf[BUF_TIES + ties] = acts[j]
            ties += 1
    return int(buf[BUF_TIES + rand_below(rng, ties)])


@_jit(
    "int64(int64[::1], int8[::1], int64[::1], int64[::1], uint64[::1], int64, int64, int64,"
    " int64[::1], float64[::1], int8[::1], uint64[::1], int64[::1])"
)
def play_out_lookahead(
    state: Int64Array,
    stock: Int8Array,
    rules: Int64Array,
    buf: Int64Array,
    rng: UInt64Array,
    policy: int,
    depth: int,
    samples: int,
    wi: Int64Array,
    sums: npt.NDArray[np.float64],
    wb: Int8Array,
    roll: UInt64Array,
    record: Int64Array,
) -> int:
    """Play to the settlement like :func:`play_out`, but the first ``depth`` real choices
    (positions with more than one legal action, koi-koi decisions included) are
    made by :func:`lookahead_choice` with ``samples`` re-deals, each player from
    what they can see; the rest by ``policy``. ``wi``, ``sums``, ``wb`` and ``roll``
    are the lookahead's scratch space; the actions go to ``record`` while it has
    room. Returns the number of actions played.
    """
    count = 0
    looked = 0
    room = record.shape[0]
    while looked < depth and state[S_PHASE] != PHASE_OVER:
        n = legal_actions(state, rules, buf)
        if n == 0:
            state[S_ERROR] = 1
            return count
        if n > 1:
            a = lookahead_choice(state, stock, rules, buf, rng, samples, policy, wi, sums, wb, roll)
            looked += 1
        else:
            a = choose_action(state, rules, buf, n, rng, policy)
        if count < room:
            record[count] = a
        count += 1
        apply_action(state, stock, rules, buf, a)
    return count + play_out(state, stock, rules, buf, rng, policy, record[min(count, room) :])


# -------------------------------------------------------------------- search

U_ENABLED: Final = 0
U_SPAN: Final = 1
U_TABLE: Final = 2
"""The utility array: ``[enabled, span, table...]``; ``table[d + span]`` is the utility of
a net round result ``d`` (clipped to ``-span..span``); disabled, the result itself."""


@_jit("float64(float64, float64[::1])")
def utility(v: float, util: npt.NDArray[np.float64]) -> float:
    """koikoi.agents.mcts.MatchUtility of a net round result ``v`` (``v`` itself when off)."""
    if util[U_ENABLED] == 0.0:
        return v
    span = int(util[U_SPAN])
    i = int(v) + span
    if i < 0:
        i = 0
    elif i > 2 * span:
        i = 2 * span
    return float(util[U_TABLE + i])


NEED_EPS: Final = 1e-9
"""Utilities closer than this are equal (the match result is the same)."""


@_jit("void(int64[::1], float64[::1], int64)")
def set_needs(state: Int64Array, util: npt.NDArray[np.float64], player: int) -> None:
    """Write the match context of ``util`` (``player``'s utility) into ``state``: for each
    player, the fewest points a stop must win to change the match result.

    For ``player``: the least ``d > 0`` whose utility is above the table's lowest (a
    stop for fewer loses the match as surely as the worst result would); for the
    opponent: the least ``e > 0`` with ``utility(-e)`` below the table's highest.
    Without a utility, or when no result of the round changes the match, 0: the
    policies stop as they always do. Before the last round every result moves
    the match equity a little, so the context matters in the last round(s) only.
    """
    state[S_NEED0] = 0
    state[S_NEED1] = 0
    if util[U_ENABLED] == 0.0:
        return
    span = int(util[U_SPAN])
    lo = util[U_TABLE]
    hi = util[U_TABLE]
    for i in range(2 * span + 1):
        v = util[U_TABLE + i]
        lo = min(lo, v)
        hi = max(hi, v)
    if hi - lo <= NEED_EPS:
        return
    for d in range(1, span + 1):
        if util[U_TABLE + span + d] > lo + NEED_EPS:
            if d > 1:
                state[S_NEED0 + player] = d
            break
    for e in range(1, span + 1):
        if util[U_TABLE + span - e] < hi - NEED_EPS:
            if e > 1:
                state[S_NEED0 + 1 - player] = e
            break


@_jit("int64(int8[::1])")
def _mask_of(cards: Int8Array) -> int:
    m = 0
    for i in range(cards.shape[0]):
        m |= 1 << int(cards[i])
    return m


@_jit("int8[::1](int64[::1], int8[::1], int64)")
def unseen_cards(state0: Int64Array, stock0: Int8Array, opp: int) -> Int8Array:
    """The cards of ``opp``'s hand and of the stock, in card order."""
    hidden = state0[S_HAND0 + opp]
    for i in range(state0[S_NSTOCK]):
        hidden |= 1 << int(stock0[i])
    pool = np.empty(popcount(hidden), dtype=np.int8)
    m = hidden
    n = 0
    while m != 0:
        pool[n] = ctz(m)
        n += 1
        m &= m - 1
    return pool


@_jit("int64(int64[::1], int64, int8[::1], int64[::1], int64, int64, uint64[::1], int8[::1])")
def redeal(
    state0: Int64Array,
    opp: int,
    pool: Int8Array,
    hands: Int64Array,
    avoid: int,
    threshold: int,
    rng: UInt64Array,
    stock: Int8Array,
) -> int:
    """One re-deal of the unseen ``pool`` (:func:`unseen_cards`): returns the opponent's
    hand and writes the stock to ``stock`` (see :func:`search_batch`). ``avoid``
    holds only cards of the pool (:func:`unseen_cards` then ``&`` once, outside the
    loop); ``threshold`` is the ``slack`` in units of 2**-30."""
    n = pool.shape[0]
    nopp = popcount(state0[S_HAND0 + opp])
    nstock = state0[S_NSTOCK]
    shuffle(pool, rng)
    hand = 0
    nhands = hands.shape[0]
    if nhands > 0:
        hand = hands[rand_below(rng, nhands)]
        k = 0
        for i in range(n):
            if (hand >> np.int64(pool[i])) & 1 == 0:
                stock[k] = pool[i]
                k += 1
    elif avoid != 0 and rand_below(rng, 1 << 30) >= threshold:
        taken = 0
        for i in range(n):  # the cards outside ``avoid`` first, in shuffled order
            if taken < nopp and (avoid >> np.int64(pool[i])) & 1 == 0:
                hand |= 1 << int(pool[i])
                taken += 1
        for i in range(n):
            if taken < nopp and (avoid >> np.int64(pool[i])) & 1 == 1:
                hand |= 1 << int(pool[i])
                taken += 1
        k = 0
        for i in range(n):
            if (hand >> np.int64(pool[i])) & 1 == 0:
                stock[k] = pool[i]
                k += 1
        shuffle(stock[:nstock], rng)
    else:
        for i in range(nopp):
            hand |= 1 << int(pool[i])
        for i in range(nstock):
            stock[i] = pool[nopp + i]
    return hand


@_jit(
    "int64(int64[::1], int8[::1], int64[::1], int64[::1], int64, int64, uint64[::1], int64,"
    " float64[::1], int64, float64, int64, int64, int64[::1], float64[:, ::1])"
)
def search_batch(
    state0: Int64Array,
    stock0: Int8Array,
    rules: Int64Array,
    actions: Int64Array,
    player: int,
    rollouts: int,
    rng: UInt64Array,
    policy: int,
    util: npt.NDArray[np.float64],
    avoid: int,
    slack: float,
    depth: int,
    samples: int,
    hands: Int64Array,
    out: npt.NDArray[np.float64],
) -> int:
    """Determinized evaluation of ``actions`` for ``player``, ``out.shape[0]`` iterations.

    Each iteration re-deals the cards ``player`` cannot see (the opponent's hand
    and the stock of ``state0``, taken as a set in card order, so the result does
    not depend on how ``state0`` dealt them): the opponent gets as many as they
    hold, the rest is the stock, uniformly shuffled. With ``avoid`` the
    opponent's hand takes cards outside it first, except with probability
    ``slack`` (as :func:`koikoi.game.views.determinize`). When ``hands`` is not empty
    (opponent hands drawn from a posterior, :mod:`koikoi.agents.inference`), the
    opponent's hand is one of them at random instead, and the rest of the unseen
    cards are the stock, shuffled. Then every action is applied
    to a copy and played out ``rollouts`` times, all actions with the same
    rollout random numbers; ``out[i, j]`` is the mean of :func:`utility` of the
    net result for ``player``. When ``out`` has twice as many columns as there
    are actions, ``out[i, n + j]`` is the mean net result itself (round points
    beside the utility). With ``depth`` > 0 the playouts look ahead
    (:func:`play_out_lookahead`: the first ``depth`` choices after the action by a
    search of ``samples`` re-deals from the chooser's side). The playouts know the
    match: ``util`` sets both players' needs (:func:`set_needs`), so a player whose
    stop cannot change the match result plays on. Returns the number of playouts
    that hit an error.
    """
    nact = actions.shape[0]
    both = out.shape[1] == 2 * nact
    opp = 1 - player
    sign = 1 if player == 0 else -1
    state0 = state0.copy()
    set_needs(state0, util, player)
    pool = unseen_cards(state0, stock0, opp)
    avoid &= _mask_of(pool)
    base = np.empty_like(state0)
    base_stock = np.zeros_like(stock0)
    st = np.empty_like(state0)
    sk = np.empty_like(stock0)
    st2 = np.empty_like(state0)
    sk2 = np.empty_like(stock0)
    buf = np.zeros(BUF_SIZE, dtype=np.int64)
    record = np.empty(0, dtype=np.int64)
    roll = np.zeros(1, dtype=np.uint64)
    wi = np.zeros(LW_INT_SIZE, dtype=np.int64)
    sums = np.zeros(LOOK_MAX_ACTIONS, dtype=np.float64)
    wb = np.zeros(LW_BYTE_SIZE, dtype=np.int8)
    lroll = np.zeros(1, dtype=np.uint64)
    errors = 0
    threshold = int(slack * (1 << 30))
    for it in range(out.shape[0]):
        hand = redeal(state0, opp, pool, hands, avoid, threshold, rng, base_stock)
        base[:] = state0
        base[S_HAND0 + opp] = hand
        seed = rng_next(rng) | np.uint64(1)
        for j in range(actions.shape[0]):
            st[:] = base
            sk[:] = base_stock
            apply_action(st, sk, rules, buf, actions[j])
            if st[S_PHASE] == PHASE_OVER:
                v = float(sign * signed_value(st))
                out[it, j] = utility(v, util)
                if both:
                    out[it, nact + j] = v
                continue
            roll[0] = seed
            acc = 0.0
            raw = 0.0
            for _ in range(rollouts):
                st2[:] = st
                sk2[:] = sk
                if depth > 0:
                    play_out_lookahead(
                        st2, sk2, rules, buf, roll, policy, depth, samples, wi, sums, wb, lroll,
                        record,
                    )  # fmt: skip
                else:
                    play_out(st2, sk2, rules, buf, roll, policy, record)
                errors += st2[S_ERROR]
                v = float(sign * signed_value(st2))
                acc += utility(v, util)
                raw += v
            out[it, j] = acc / rollouts
            if both:
                out[it, nact + j] = raw / rollouts
    return errors


# ------------------------------------------------------------- tree search

# Node fields of the information-set tree (``links``: int64, ``stats``: float64).
T_KEY: Final = 0  # the action id that leads to the node (-1: the root)
T_FIRST: Final = 1  # first child, -1: none
T_NEXT: Final = 2  # next sibling, -1: none
T_LINKS: Final = 3
T_VISITS: Final = 0
T_UTILITY: Final = 1  # sum of the utilities of the playouts through the node
T_POINTS: Final = 2  # sum of their net round points
T_AVAIL: Final = 3  # visits of the parent in which this node's action was legal
T_SQUARES: Final = 4  # sum of squared utilities (the root's spread scales exploration)
T_STATS: Final = 5
TREE_MAX_DEPTH: Final = 64
TREE_WIDEN: Final = 0.5
"""Progressive widening: a node other than the root has 1 + this * sqrt(visits) children."""


@_jit("int64(int64[:, ::1], int64, int64)")
def _child(links: Int64Array, node: int, key: int) -> int:
    """The child of ``node`` reached by action ``key``, or -1."""
    ch = int(links[node, T_FIRST])
    while ch >= 0:
        if links[ch, T_KEY] == key:
            return ch
        ch = int(links[ch, T_NEXT])
    return -1


@_jit("int64(int64[:, ::1], float64[:, ::1], int64[::1], int64, int64)")
def _add_child(
    links: Int64Array, stats: npt.NDArray[np.float64], size: Int64Array, node: int, key: int
) -> int:
    """A new child of ``node`` for action ``key`` (the caller checked the room)."""
    ch = int(size[0])
    size[0] += 1
    links[ch, T_KEY] = key
    links[ch, T_FIRST] = -1
    links[ch, T_NEXT] = links[node, T_FIRST]
    links[node, T_FIRST] = ch
    for f in range(T_STATS):
        stats[ch, f] = 0.0
    stats[ch, T_AVAIL] = 1.0
    return ch


@_jit(
    "int64(int64[::1], int8[::1], int64[::1], int64[::1], int64[:, ::1], float64[:, ::1],"
    " int64[::1], int64, int64, int64[::1], int64[::1], int64[::1], uint64[::1], int64, int64,"
    " float64, float64)"
)
def _descend(
    st: Int64Array,
    sk: Int8Array,
    rules: Int64Array,
    buf: Int64Array,
    links: Int64Array,
    stats: npt.NDArray[np.float64],
    size: Int64Array,
    node: int,
    depth: int,
    path: Int64Array,
    kids: Int64Array,
    fresh: Int64Array,
    rng: UInt64Array,
    policy: int,
    player: int,
    explore: float,
    spread: float,
) -> int:
    """One descent of :func:`tree_search` from ``node`` (already at ``path[depth - 1]``)
    on the deal in ``st``/``sk``: applies the tree's actions to it, adds at most one
    node, and returns the length of the path."""
    cap = links.shape[0]
    while st[S_PHASE] != PHASE_OVER and depth < TREE_MAX_DEPTH:
        n = legal_actions(st, rules, buf)
        if n == 0:
            st[S_ERROR] = 1
            break
        nf = 0
        for i in range(n):
            a = buf[BUF_ACTIONS + i]
            ch = _child(links, node, a)
            kids[i] = ch
            if ch < 0:
                fresh[nf] = a
                nf += 1
            else:
                stats[ch, T_AVAIL] += 1.0
        # Progressive widening: the root tries every action; another node as many
        # as 1 + TREE_WIDEN * sqrt(its visits), in the order the policy prefers them.
        allowed = n if node == 0 else 1 + int(TREE_WIDEN * np.sqrt(stats[node, T_VISITS]))
        if nf > 0 and n - nf < allowed and size[0] < cap:
            for i in range(nf):
                buf[BUF_ACTIONS + i] = fresh[i]
            a = choose_action(st, rules, buf, nf, rng, policy)
            ch = _add_child(links, stats, size, node, a)
            apply_action(st, sk, rules, buf, a)
            path[depth] = ch
            return depth + 1
        if nf == n:
            break  # a full tree and no child here: the policy plays on
        mine = st[S_CURRENT] == player
        best = -1
        best_score = -np.inf
        for i in range(n):  # (a full tree chooses among the children it has)
            ch = kids[i]
            if ch < 0:
                continue
            visits = stats[ch, T_VISITS]
            q = stats[ch, T_UTILITY] / visits
            if not mine:
                q = -q
            score = q + explore * spread * np.sqrt(np.log(stats[ch, T_AVAIL]) / visits)
            if score > best_score:
                best_score = score
                best = ch
        apply_action(st, sk, rules, buf, links[best, T_KEY])
        path[depth] = best
        depth += 1
        node = best
    return depth


@_jit(
    "int64(int64[::1], int8[::1], int64[::1], int64, uint64[::1], int64, float64[::1], int64,"
    " float64, int64[::1], int64, float64, int64[:, ::1], float64[:, ::1], int64[::1], boolean)"
)
def tree_search(
    state0: Int64Array,
    stock0: Int8Array,
    rules: Int64Array,
    player: int,
    rng: UInt64Array,
    policy: int,
    util: npt.NDArray[np.float64],
    avoid: int,
    slack: float,
    hands: Int64Array,
    iterations: int,
    explore: float,
    links: Int64Array,
    stats: npt.NDArray[np.float64],
    size: Int64Array,
    paired: bool,
) -> int:
    """``iterations`` more iterations of open-loop information-set tree search.

    Every iteration re-deals the unseen cards as :func:`search_batch` does, then
    descends the tree from the root (node 0) along actions legal in that deal.
    A node with room for another child (the root: every legal action; another
    node: 1 + :data:`TREE_WIDEN` * sqrt(visits), progressive widening) gets one
    for the action ``policy`` would choose among those without a child, and the
    descent stops there. Otherwise the player to act, the searching ``player``
    or the opponent, takes the child that maximises their mean result plus
    ``explore`` times the root's standard deviation times
    ``sqrt(ln(availability) / visits)`` (availability: the visits of the parent
    in which the child's action was legal). So a node visited once plays on as
    the policy would, and the tree deepens where the search spends its time.
    Then ``policy`` plays to the settlement and the utility of the net result
    (:func:`utility`) and the points themselves are added along the path. The
    opponent minimises the searching player's utility. Draws from the stock are
    not nodes: a node stands for the actions that lead to it, whatever was drawn
    between them. ``size[0]`` is the number of nodes used; a
    full tree stops growing: it chooses among the children a node has, and
    plays on with ``policy`` from a node without any.

    With ``paired``, an iteration instead descends once below *every* root
    action on the same re-deal, with the same playout random numbers, as the
    flat search compares its actions (common random numbers: the root's
    differences are measured on equal deals). As in :func:`search_batch`, ``util``
    sets both players' needs (:func:`set_needs`) for the koi-koi decisions of the
    tree and the playouts. Returns the playouts that hit an error.
    """
    opp = 1 - player
    sign = 1 if player == 0 else -1
    state0 = state0.copy()
    set_needs(state0, util, player)
    pool = unseen_cards(state0, stock0, opp)
    avoid &= _mask_of(pool)
    threshold = int(slack * (1 << 30))
    base_stock = np.zeros_like(stock0)
    st = np.empty_like(state0)
    sk = np.empty_like(stock0)
    buf = np.zeros(BUF_SIZE, dtype=np.int64)
    kids = np.empty(LOOK_MAX_ACTIONS, dtype=np.int64)  # each legal action's child, or -1
    fresh = np.empty(LOOK_MAX_ACTIONS, dtype=np.int64)
    path = np.empty(TREE_MAX_DEPTH, dtype=np.int64)
    record = np.empty(0, dtype=np.int64)
    roll = np.zeros(1, dtype=np.uint64)
    roots = np.empty(LOOK_MAX_ACTIONS, dtype=np.int64)
    root_kids = np.empty(LOOK_MAX_ACTIONS, dtype=np.int64)  # each root action's child, or -1
    nroot = 1
    if paired:
        st[:] = state0
        nroot = legal_actions(st, rules, buf)
        for i in range(nroot):
            roots[i] = buf[BUF_ACTIONS + i]
        for i in range(nroot):  # the root's children first, while there is room
            ch = _child(links, 0, roots[i])
            if ch < 0 and size[0] < links.shape[0]:
                ch = _add_child(links, stats, size, 0, roots[i])
            root_kids[i] = ch
    errors = 0
    for _ in range(iterations):
        hand = redeal(state0, opp, pool, hands, avoid, threshold, rng, base_stock)
        n_root = stats[0, T_VISITS]
        spread = 1.0
        if n_root >= 2.0:
            mean = stats[0, T_UTILITY] / n_root
            var = stats[0, T_SQUARES] / n_root - mean * mean
            spread = np.sqrt(var) if var > 1e-12 else 1e-6
        seed = rng_next(rng) | np.uint64(1) if paired else np.uint64(0)
        for j in range(nroot):
            st[:] = state0
            st[S_HAND0 + opp] = hand
            sk[:] = base_stock
            path[0] = 0
            if paired:
                ch = root_kids[j]
                if ch >= 0:
                    stats[ch, T_AVAIL] += 1.0
                apply_action(st, sk, rules, buf, roots[j])
                depth = 1
                if ch >= 0:  # (no room for the root's child: only the root counts it)
                    path[1] = ch
                    depth = _descend(
                        st, sk, rules, buf, links, stats, size, ch, 2, path, kids, fresh, rng,
                        policy, player, explore, spread,
                    )  # fmt: skip
            else:
                depth = _descend(
                    st, sk, rules, buf, links, stats, size, 0, 1, path, kids, fresh, rng,
                    policy, player, explore, spread,
                )  # fmt: skip
            if st[S_PHASE] != PHASE_OVER and st[S_ERROR] == 0:
                roll[0] = seed if paired else rng_next(rng) | np.uint64(1)
                play_out(st, sk, rules, buf, roll, policy, record)
            errors += st[S_ERROR]
            v = float(sign * signed_value(st))
            u = utility(v, util)
            for i in range(depth):
                nd = path[i]
                stats[nd, T_VISITS] += 1.0
                stats[nd, T_UTILITY] += u
                stats[nd, T_POINTS] += v
                stats[nd, T_SQUARES] += u * u
    return errors
