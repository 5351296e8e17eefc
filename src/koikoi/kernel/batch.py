"""The batched simulator's compiled code: many rounds side by side, stepped in numba.

:class:`koikoi.envs.vector.VectorEnv` is the typed, checked interface to this
module; the functions here take preallocated arrays and check nothing beyond
the legality of the actions. Importing it imports numba and compiles (or loads
from numba's cache, see :mod:`koikoi.kernel.numba_cache`) every function.

Every rule of the game comes from the playout kernel
(:mod:`koikoi.kernel._compiled`): dealing, legal actions, applying an action,
yaku totals and the settlement are the kernel's own compiled functions, called
from here. This module adds only what a learning environment needs around them:
many rounds side by side, the information-state vector of
:mod:`koikoi.kernel.encoding` written in place (at the offsets and with the scales
of the encoding's one layout, :data:`~koikoi.kernel.encoding.LAYOUT`; a second
writer of the same vector, held equal to the engine's by tests/envs/test_vector.py,
because calling the encoding's own writers from here cost 5% of the steps a second), legal
ids and masks, rewards and automatic re-deals.

Arrays, one row per environment (all C-contiguous):

* ``states`` (int64, n x ``STATE_SIZE``) and ``stocks`` (int8, n x 48): the
  kernel's round arrays;
* ``decks`` (int8, n x 48): the shuffled deck of each current round, in the
  order of :attr:`koikoi.game.engine.Match.deals` (dealer's hand, other hand, field,
  stock top card first);
* ``extra`` (int64, n x :data:`X_SIZE`): what the kernel does not keep but the
  observation needs: each player's declined months (as
  :attr:`koikoi.game.engine.Round.declined`), the round number, the match
  scores and the leader; and the match's own state (``X_*``: who deals and leads
  next, the first-dealer draw, the last finished match's winner and scores);
* ``deal_rngs``, ``match_rngs`` and ``act_rngs`` (uint64, n x 1): one xorshift
  state per environment for its deals, one for its first-dealer draws and one
  for :func:`sample_actions`;
* ``mr`` (int64, :data:`M_SIZE`): the match rules and the kind of episode
  (:func:`match_rules`);
* ``obs`` (float32, n x :data:`OBS_SIZE`), ``legal`` (int16, n x :data:`MAX_LEGAL`,
  -1 after the legal ids), ``counts`` (int16, n), ``masks`` (int8, n x 2450, or
  0 x 0 for none), ``rewards`` (float32, n x 2), ``dones`` (bool, n),
  ``players`` (int8, n);
* ``log`` (int64, n x :data:`LOG_SIZE`, or 0 x 0 for none): match episodes with
  sequences: what the last step did that the states no longer show (the state that
  ended a round, the decks dealt: ``L_*`` and ``D_*``), read by
  :func:`koikoi.kernel.batch_sequence.record_match`.

:func:`step_all` deals (``reset=True``) or steps every environment and
observes it; an episode is a round, or a whole match run as
:class:`koikoi.game.engine.Match` runs it (:func:`start_match`,
:func:`next_round`, :func:`settle_round`: the first dealer, redeals, instant
hands, dealer rotation, bust and the end); :func:`sample_actions` and
:func:`dense_masks` work on the legal ids; :func:`round_of` rebuilds one
environment's round for the engine.

**Cache.** numba's on-disk cache of a function does not notice a change in
another file whose functions it calls (their machine code is linked into the
caller's). So every function here is cached under a key that also holds a hash
of the kernel's and the encoding's source (:data:`SOURCE_FINGERPRINT`): an edit
of either recompiles this module on the next import instead of loading stale code.
"""

from __future__ import annotations

# isort: off
from koikoi.kernel import numba_cache  # noqa: F401  (sets numba's cache directory: before numba)

# isort: on

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt
from numba.core.caching import FunctionCache

from koikoi.game.cards import FULL_DECK, KINDS
from koikoi.game.engine import Phase, Round
from koikoi.game.rules import Rules
from koikoi.kernel import _compiled as kernel_impl
from koikoi.kernel import encoding
from koikoi.kernel._compiled import (
    BUF_SIZE,
    DISCARD_BASE,
    PHASE_OVER,
    PLAY_TARGET_BASE,
    R_WILD,
    S_CALLED0,
    S_CALLED1,
    S_CALLS0,
    S_CALLS1,
    S_CURRENT,
    S_DEALER,
    S_DELTA0,
    S_DELTA1,
    S_DRAWN,
    S_ERROR,
    S_FIELD,
    S_HAND0,
    S_HAND1,
    S_LAST_IMPROVER,
    S_MONTH,
    S_NSTOCK,
    S_PHASE,
    S_PILE0,
    S_PILE1,
    S_POINTS,
    S_SCORE0,
    S_SCORE1,
    S_TURN_SCORE,
    S_WINNER,
    STATE_SIZE,
    STOCK_SIZE,
    TAKE_BASE,
    _finish,
    _matches,
    apply_action,
    ctz,
    deal,
    legal_actions,
    month_mask,
    popcount,
    rand_below,
    shuffle,
)

__all__ = [
    "BUF_SIZE",
    "CHECK_INSTANT",
    "CHECK_PLAY",
    "CHECK_REDEAL",
    "CHECK_REDEAL_HAND0",
    "DEALER_RANDOM",
    "EPISODE_MATCH",
    "EPISODE_ROUND",
    "LOG_DEALS",
    "LOG_SIZE",
    "MAX_LEGAL",
    "OBS_SIZE",
    "ROUND_RANDOM",
    "SOURCE_FINGERPRINT",
    "STATE_SIZE",
    "STOCK_SIZE",
    "S_DEALER",
    "X_DECKS",
    "X_DECLINED0",
    "X_DECLINED1",
    "X_DRAW_A",
    "X_DRAW_B",
    "X_FINAL0",
    "X_FIRST_WINNER",
    "X_LEADER",
    "X_MATCH0",
    "X_ROUND",
    "X_SIZE",
    "X_WINNER",
    "check_deal",
    "deal_round",
    "declined_by",
    "dense_masks",
    "encode_obs",
    "first_dealer",
    "instant_points",
    "match_rules",
    "months_of",
    "next_round",
    "observe",
    "redeal_met",
    "round_of",
    "sample_actions",
    "settle_round",
    "shuffle",
    "start_match",
    "step_all",
]

Int64Array = npt.NDArray[np.int64]
Int16Array = npt.NDArray[np.int16]
Int8Array = npt.NDArray[np.int8]
UInt64Array = npt.NDArray[np.uint64]
Float32Array = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]

_F = TypeVar("_F", bound=Callable[..., Any])


def _fingerprint() -> int:
    data = b""
    for module in (kernel_impl, encoding):
        path = getattr(module, "__file__", None)
        if path:
            data += Path(path).read_bytes()
    return zlib.crc32(data)


SOURCE_FINGERPRINT: Final = _fingerprint()
"""CRC-32 of the kernel's and the encoding's source, part of every cache key here."""


class _DependentCache(FunctionCache):
    """numba's function cache, keyed also by :data:`SOURCE_FINGERPRINT`."""

    def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
        key: tuple[Any, ...] = super()._index_key(sig, codegen)  # type: ignore[no-untyped-call]
        return (*key, SOURCE_FINGERPRINT)


def _jit(signature: str) -> Callable[[_F], _F]:
    """``numba.njit(signature, cache=True, nogil=True)`` with the dependent cache key.

    Compiled (or loaded from the cache) at import, for that signature only.
    """

    def decorate(fn: _F) -> _F:
        dispatcher: Any = numba.njit(nogil=True)(fn)
        dispatcher._cache = cast(Any, _DependentCache)(fn)
        dispatcher.compile(signature)
        dispatcher.disable_compile()
        return cast(_F, dispatcher)

    return decorate


# ------------------------------------------------------------------- layout

X_DECLINED0: Final = 0
X_DECLINED1: Final = 1
X_ROUND: Final = 2
X_MATCH0: Final = 3  # the match scores before the current round (player 0, player 1)
X_MATCH1: Final = 4
X_LEADER: Final = 5  # who led the current round
X_NEXT_DEALER: Final = 6  # Match.dealer and Match.leader: who deals and leads next
X_NEXT_LEADER: Final = 7
X_DRAW_A: Final = 8  # the deciding first-dealer draw (player 0's card, player 1's), -1: a coin
X_DRAW_B: Final = 9
X_FIRST_WINNER: Final = 10  # who won the first-dealer draw (or coin)
X_PENDING0: Final = 11  # deltas of instant rounds before a match's first decision
X_PENDING1: Final = 12
X_WINNER: Final = 13  # the last finished match: its winner (-1: a draw), its final scores
X_FINAL0: Final = 14
X_FINAL1: Final = 15
X_DECKS: Final = 16  # decks shuffled since the current match began (redeals included)
X_SIZE: Final = 17

# The match rules array (:func:`match_rules`).
M_EPISODE: Final = 0  # 0: each episode is a round, 1: a whole match
M_ROUNDS: Final = 1
M_START: Final = 2
M_SCORE0: Final = 3  # round episodes: the match scores the observation shows
M_SCORE1: Final = 4
M_FIRST_DRAW: Final = 5  # first dealer by a draw of two cards (else a coin)
M_DEALER_FIXED: Final = 6
M_LEADER_WINNER: Final = 7
M_AFTER_DRAW_SWAP: Final = 8
M_TIE_DEALER: Final = 9
M_FIELD_FIRST: Final = 10
M_FIELD_REDEAL: Final = 11  # REDEAL_* bits
M_HAND_REDEAL: Final = 12
M_REDEAL_SWAP: Final = 13
M_TESHI: Final = 14
M_KUTTSUKI: Final = 15
M_BOTH_REDEAL: Final = 16
M_SIZE: Final = 17

REDEAL_FOUR: Final = 1
REDEAL_PAIRS: Final = 2
REDEAL_THREE: Final = 4
_REDEAL_BITS: Final = {
    "four_of_a_month": REDEAL_FOUR,
    "four_pairs": REDEAL_PAIRS,
    "three_of_a_month": REDEAL_THREE,
}
REASON_INSTANT: Final = 7
"""The settlement reason of an instant hand (after the kernel's own codes)."""

CARD_KINDS: Final = np.array([int(k) for k in KINDS], dtype=np.int64)
"""Each card's kind as in the first-dealer draw (Bright 3 > Animal 2 > Ribbon 1 > Plain 0)."""

EPISODE_ROUND: Final = 0
EPISODE_MATCH: Final = 1

CHECK_PLAY: Final = 0
"""What :func:`check_deal` returns for a deal to play,"""
CHECK_REDEAL: Final = 1
"""for a redeal called by nobody (the field, or both players' instant hands),"""
CHECK_INSTANT: Final = 2
"""for an instant hand (the round is settled),"""
CHECK_REDEAL_HAND0: Final = 3
"""and, plus the player, for a redeal called by a player's hand."""

# The step log (``log``, int64, n x LOG_SIZE, or 0 x 0 for none): what a step of a
# match episode did that the state after it no longer shows, for the sequences of
# koikoi.kernel.batch_sequence. Each environment's row holds:
L_ENDED: Final = 0  # 1: the step's action ended the round, whose state is at L_STATE
L_ROUND: Final = 1  # the ended round's number
L_DRAWN: Final = 2  # the stock card under the ended round's stock (its last draw)
L_STATE: Final = 3  # STATE_SIZE values: the state right after the action
L_DEALS: Final = L_STATE + STATE_SIZE  # decks dealt in the step (since the last match began)
L_DEAL0: Final = L_DEALS + 1  # LOG_DEALS records of D_WIDTH values, in the order dealt
LOG_DEALS: Final = 32
"""Decks a step's log holds (a step deals more only after 30-odd redeals or instant
hands in a row; :func:`koikoi.kernel.batch_sequence.record_match` then reports it)."""
D_ROUND: Final = 0
D_MONTH: Final = 1
D_DEALER: Final = 2
D_LEADER: Final = 3
D_FIELD: Final = 4
D_CHECK: Final = 5  # what check_deal returned
D_WINNER: Final = 6  # an instant hand: its holder and points
D_POINTS: Final = 7
D_WIDTH: Final = 8
LOG_SIZE: Final = L_DEAL0 + LOG_DEALS * D_WIDTH


def match_rules(
    rules: Rules, episode: int, match_scores: tuple[int, int] | None = None
) -> Int64Array:
    """The match-level options of ``rules`` as the int64 array :func:`step_all` reads.

    ``match_scores`` (round episodes): the match scores each round's observation
    shows (default: ``game.start_points`` each).
    """
    game, deal_rules, instant = rules.game, rules.deal, rules.instant
    scores = match_scores if match_scores is not None else (game.start_points,) * 2
    values = [0] * M_SIZE
    values[M_EPISODE] = episode
    values[M_ROUNDS] = game.rounds
    values[M_START] = game.start_points
    values[M_SCORE0], values[M_SCORE1] = scores
    values[M_FIRST_DRAW] = game.first_dealer == "draw"
    values[M_DEALER_FIXED] = game.dealer == "fixed"
    values[M_LEADER_WINNER] = game.leader == "previous_winner"
    values[M_AFTER_DRAW_SWAP] = game.dealer_after_draw == "swap"
    values[M_TIE_DEALER] = game.match_tie == "dealer"
    values[M_FIELD_FIRST] = deal_rules.check_order == "field_first"
    values[M_FIELD_REDEAL] = sum(_REDEAL_BITS[c] for c in set(deal_rules.field_redeal))
    values[M_HAND_REDEAL] = sum(_REDEAL_BITS[c] for c in set(deal_rules.hand_redeal))
    values[M_REDEAL_SWAP] = deal_rules.redeal_dealer == "swap"
    values[M_TESHI] = instant.teshi
    values[M_KUTTSUKI] = instant.kuttsuki
    values[M_BOTH_REDEAL] = instant.both == "redeal"
    return np.array(values, dtype=np.int64)


MAX_LEGAL: Final = 128
"""Room for legal ids per environment (the kernel's own scratch space holds as many)."""

DEALER_RANDOM: Final = -1
ROUND_RANDOM: Final = 0

OBS_SIZE: Final = encoding.SIZE
ROUND_OFFSET: Final = encoding.ROUND_OFFSET
RULES_OFFSET: Final = encoding.RULES_OFFSET
ROUND_WIDTH: Final = encoding.ROUND_WIDTH
PLANE_OFFSETS: Final = encoding.PLANE_OFFSETS


def _at(segment: str) -> int:
    """Where ``segment`` of the encoding's layout starts in the vector."""
    return encoding.SEGMENTS[segment].offset


def _scale(segment: str) -> float:
    """What the values of ``segment`` are divided by."""
    return encoding.SEGMENTS[segment].scale


# The round and match part, at the encoding's offsets and scales (plain ints and
# floats, which numba compiles in as constants).
_OWN_HAND, _OPP_HAND, _STOCK = _at("own_hand_size"), _at("opponent_hand_size"), _at("stock_size")
_HAND_SCALE, _STOCK_SCALE = _scale("own_hand_size"), _scale("stock_size")
_PHASE, _MY_TURN, _MONTH = _at("phase"), _at("my_turn"), _at("month")
_I_DEAL, _I_LEAD = _at("i_deal"), _at("i_lead")
_OWN_SCORE, _OPP_SCORE, _SCORE_SCALE = _at("own_score"), _at("opponent_score"), _scale("own_score")
_OWN_KOIKOI, _OPP_KOIKOI = _at("own_koikoi"), _at("opponent_koikoi")
_KOIKOI_CAP = encoding.KOIKOI_CAP
_OWN_CALLED, _OPP_CALLED = _at("own_called"), _at("opponent_called")
_SCORED_LAST = _at("scored_last")
_MATCH_OWN, _MATCH_OPP, _MATCH_LEAD = _at("match:own"), _at("match:opponent"), _at("match:lead")
_MATCH_SCALE = _scale("match:own")
_ROUNDS_LEFT, _LAST_ROUND, _ROUNDS = (
    _at("match:rounds_left"),
    _at("match:last_round"),
    _at("match:rounds"),
)
_ROUNDS_SCALE = _scale("match:rounds")


# ------------------------------------------------------------- observations


BYTE_BITS: Final = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float32).ravel()
"""The eight bits of each byte value as 0.0 / 1.0, low bit first (256 x 8 floats)."""


def _inline(fn: _F) -> _F:
    """A helper compiled into its callers (numba IR inlining), never on its own."""
    return cast(_F, numba.njit(inline="always", nogil=True)(fn))


@_inline
def _plane(out: Float32Array, offset: int, mask: int) -> None:
    """Card plane: ``out[offset + c] = 1.0`` for each card ``c`` of ``mask``, else 0.0.

    A byte at a time from :data:`BYTE_BITS`, the eight loads before the eight
    stores so that LLVM turns each into one vector load and one vector store.
    """
    for b in range(6):
        j = ((mask >> (8 * b)) & 255) * 8
        a0 = BYTE_BITS[j]
        a1 = BYTE_BITS[j + 1]
        a2 = BYTE_BITS[j + 2]
        a3 = BYTE_BITS[j + 3]
        a4 = BYTE_BITS[j + 4]
        a5 = BYTE_BITS[j + 5]
        a6 = BYTE_BITS[j + 6]
        a7 = BYTE_BITS[j + 7]
        o = offset + 8 * b
        out[o] = a0
        out[o + 1] = a1
        out[o + 2] = a2
        out[o + 3] = a3
        out[o + 4] = a4
        out[o + 5] = a5
        out[o + 6] = a6
        out[o + 7] = a7


@_jit("void(int64[::1], int64[::1], int64, float32[::1], float32[::1])")
def encode_obs(
    state: Int64Array,
    extra: Int64Array,
    rounds: int,
    rule_features: Float32Array,
    out: Float32Array,
) -> None:
    """``encoding.encode_into`` of the view of the player to act (a live round).

    The match part is that of a match ``rounds`` long, in round ``extra[X_ROUND]``,
    at the scores ``extra[X_MATCH0]``, ``extra[X_MATCH1]``; the leader is ``extra[X_LEADER]``.
    """
    me = state[S_CURRENT]
    opp = 1 - me
    hand = state[S_HAND0 + me]
    field = state[S_FIELD]
    own_pile = state[S_PILE0 + me]
    opp_pile = state[S_PILE0 + opp]
    d = state[S_DRAWN]
    drawn = (1 << d) if d >= 0 else 0
    unseen = FULL_DECK & ~(hand | field | own_pile | opp_pile | drawn)
    # the planes in the order of encoding.PLANES; unrolled, so that LLVM vectorizes
    # each plane's stores at its constant offset
    _plane(out, PLANE_OFFSETS[0], hand)
    _plane(out, PLANE_OFFSETS[1], field)
    _plane(out, PLANE_OFFSETS[2], own_pile)
    _plane(out, PLANE_OFFSETS[3], opp_pile)
    _plane(out, PLANE_OFFSETS[4], unseen)
    _plane(out, PLANE_OFFSETS[5], drawn)
    _plane(out, PLANE_OFFSETS[6], extra[X_DECLINED0 + me])
    _plane(out, PLANE_OFFSETS[7], extra[X_DECLINED0 + opp])
    for j in range(ROUND_WIDTH):
        out[ROUND_OFFSET + j] = 0.0
    out[_OWN_HAND] = popcount(hand) / _HAND_SCALE
    out[_OPP_HAND] = popcount(state[S_HAND0 + opp]) / _HAND_SCALE
    out[_STOCK] = state[S_NSTOCK] / _STOCK_SCALE
    out[_PHASE + state[S_PHASE]] = 1.0
    out[_MY_TURN] = 1.0
    out[_MONTH + state[S_MONTH] - 1] = 1.0
    out[_I_DEAL] = 1.0 if state[S_DEALER] == me else 0.0
    out[_I_LEAD] = 1.0 if extra[X_LEADER] == me else 0.0
    out[_OWN_SCORE] = state[S_SCORE0 + me] / _SCORE_SCALE
    out[_OPP_SCORE] = state[S_SCORE0 + opp] / _SCORE_SCALE
    out[_OWN_KOIKOI] = min(state[S_CALLS0 + me], _KOIKOI_CAP) / _KOIKOI_CAP
    out[_OPP_KOIKOI] = min(state[S_CALLS0 + opp], _KOIKOI_CAP) / _KOIKOI_CAP
    out[_OWN_CALLED] = state[S_CALLED0 + me] / _SCORE_SCALE
    out[_OPP_CALLED] = state[S_CALLED0 + opp] / _SCORE_SCALE
    last = state[S_LAST_IMPROVER]
    out[_SCORED_LAST + (0 if last == me else 1 if last == opp else 2)] = 1.0
    own = extra[X_MATCH0 + me]
    other = extra[X_MATCH0 + opp]
    out[_MATCH_OWN] = own / _MATCH_SCALE
    out[_MATCH_OPP] = other / _MATCH_SCALE
    out[_MATCH_LEAD] = (own - other) / _MATCH_SCALE
    left = max(rounds - extra[X_ROUND], 0)
    out[_ROUNDS_LEFT] = left / _ROUNDS_SCALE
    out[_LAST_ROUND] = 1.0 if left == 0 else 0.0
    out[_ROUNDS] = rounds / _ROUNDS_SCALE
    for j in range(rule_features.shape[0]):
        out[RULES_OFFSET + j] = rule_features[j]


# --------------------------------------------------------------- the rounds


@_jit("int64(int64)")
def months_of(cards: int) -> int:
    """Every card of each month that has a card in ``cards``."""
    months = 0
    while cards != 0:
        m = month_mask(ctz(cards))
        months |= m
        cards &= ~m
    return months


@_jit(
    "void(int64[::1], int8[::1], int8[::1], int64[::1], uint64[::1], int64, int64, int64,"
    " int64[::1])"
)
def deal_round(
    state: Int64Array,
    stock: Int8Array,
    deck: Int8Array,
    extra: Int64Array,
    rng: UInt64Array,
    dealer: int,
    round_number: int,
    rounds: int,
    mr: Int64Array,
) -> None:
    """A fresh round episode: shuffle a new deck, then the dealer and the round number
    when random; the match context (scores) from ``mr``, the dealer leads."""
    for c in range(48):
        deck[c] = c
    shuffle(deck, rng)
    if dealer == DEALER_RANDOM:
        dealer = rand_below(rng, 2)
    if round_number == ROUND_RANDOM:
        round_number = 1 + rand_below(rng, rounds)
    deal(state, stock, deck, dealer, (round_number - 1) % 12 + 1)
    extra[X_DECLINED0] = 0
    extra[X_DECLINED1] = 0
    extra[X_ROUND] = round_number
    extra[X_MATCH0] = mr[M_SCORE0]
    extra[X_MATCH1] = mr[M_SCORE1]
    extra[X_LEADER] = dealer


@_jit(
    "int64(int64[::1], int64[::1], int64[::1], int64, float32[::1], int64[::1],"
    " float32[::1], int16[::1], int64, int8[::1], boolean)"
)
def observe(
    state: Int64Array,
    extra: Int64Array,
    rules: Int64Array,
    rounds: int,
    rule_features: Float32Array,
    buf: Int64Array,
    obs: Float32Array,
    legal: Int16Array,
    before: int,
    mask: Int8Array,
    dense: bool,
) -> int:
    """Write the observation, the legal ids (and the mask) of a live round; return the count.

    ``legal`` held ``before`` ids (the rest -1): the slots no longer used go back to -1.
    """
    n = legal_actions(state, rules, buf)
    for j in range(n):
        legal[j] = buf[j]
    for j in range(n, before):
        legal[j] = -1
    if dense:
        mask[:] = 0
        for j in range(n):
            mask[buf[j]] = 1
    encode_obs(state, extra, rounds, rule_features, obs)
    return n


@_jit("int64(int64[::1], int64[::1], int64)")
def declined_by(state: Int64Array, rules: Int64Array, action: int) -> int:
    """The months a hand play declines (as ``Round._play``): the field's months, when the
    hand card captures nothing."""
    if action >= TAKE_BASE or (PLAY_TARGET_BASE <= action < DISCARD_BASE):
        return 0
    field = state[S_FIELD]
    if action < PLAY_TARGET_BASE and _matches(field, action, rules[R_WILD] != 0) != 0:
        return 0
    return months_of(field)


# -------------------------------------------------------------- the matches
#
# A second copy of the match-level rules of koikoi.game.engine.Match (the first
# dealer, redeals, instant hands, dealer rotation, bust and the end), held to the
# engine by tests/envs/test_vector.py, as the kernel's rounds are.


@_jit("boolean(int64, int64)")
def redeal_met(cards: int, conditions: int) -> bool:
    """Whether ``cards`` (a hand or the field) meets one of the ``REDEAL_*`` bits of
    ``conditions`` (as :func:`koikoi.game.engine.redeal_condition`)."""
    if conditions == 0:
        return False
    pairs = 0
    for m in range(12):
        c = popcount((cards >> (4 * m)) & 15)
        if c == 4 and conditions & REDEAL_FOUR:
            return True
        if c >= 3 and conditions & REDEAL_THREE:
            return True
        if c == 2:
            pairs += 1
    return (conditions & REDEAL_PAIRS) != 0 and pairs == 4


@_jit("int64(int64, int64[::1])")
def instant_points(hand: int, mr: Int64Array) -> int:
    """The points of ``hand``'s instant yaku (as ``Scorer.instant``), 0 for none."""
    best = 0
    if mr[M_TESHI] > 0:
        for m in range(12):
            if (hand >> (4 * m)) & 15 == 15:
                best = mr[M_TESHI]
                break
    kuttsuki = mr[M_KUTTSUKI]
    if kuttsuki > best and popcount(hand) == 8:
        for m in range(12):
            if popcount((hand >> (4 * m)) & 15) & 1:
                return best
        best = kuttsuki
    return best


@_jit("void(int64[::1], int64[::1], uint64[::1])")
def first_dealer(extra: Int64Array, mr: Int64Array, rng: UInt64Array) -> None:
    """A new match: its scores, and its first dealer and leader (as ``Match._first_dealer``)."""
    a = -1
    b = -1
    if mr[M_FIRST_DRAW] != 0:
        while True:
            a = rand_below(rng, 48)
            b = rand_below(rng, 47)
            if b >= a:
                b += 1
            if a // 4 != b // 4:
                winner = 0 if a // 4 < b // 4 else 1
                break
            if CARD_KINDS[a] != CARD_KINDS[b]:
                winner = 0 if CARD_KINDS[a] > CARD_KINDS[b] else 1
                break
    else:
        winner = rand_below(rng, 2)
    extra[X_DRAW_A] = a
    extra[X_DRAW_B] = b
    extra[X_FIRST_WINNER] = winner
    extra[X_NEXT_DEALER] = 1 - winner if mr[M_DEALER_FIXED] != 0 else winner
    extra[X_NEXT_LEADER] = winner
    extra[X_MATCH0] = mr[M_START]
    extra[X_MATCH1] = mr[M_START]
    extra[X_ROUND] = 0
    extra[X_DECKS] = 0


@_jit("int64(int64[::1], int64[::1], int64[::1], int64)")
def check_deal(state: Int64Array, rules: Int64Array, mr: Int64Array, dealer: int) -> int:
    """The checks of a fresh deal (as ``Match._start_round``): :data:`CHECK_PLAY` play
    it, :data:`CHECK_REDEAL` redeal (the field, or both instant hands),
    ``CHECK_REDEAL_HAND0 + p`` redeal for player ``p``'s hand, :data:`CHECK_INSTANT`
    an instant hand (the round is settled)."""
    for k in range(2):
        field_turn = (k == 0) == (mr[M_FIELD_FIRST] != 0)
        if field_turn:
            if redeal_met(state[S_FIELD], mr[M_FIELD_REDEAL]):
                return CHECK_REDEAL
            continue
        if redeal_met(state[S_HAND0 + dealer], mr[M_HAND_REDEAL]):
            return CHECK_REDEAL_HAND0 + dealer
        if redeal_met(state[S_HAND0 + 1 - dealer], mr[M_HAND_REDEAL]):
            return CHECK_REDEAL_HAND0 + 1 - dealer
        i0 = instant_points(state[S_HAND0], mr)
        i1 = instant_points(state[S_HAND0 + 1], mr)
        if i0 > 0 or i1 > 0:
            if i0 > 0 and i1 > 0:
                if mr[M_BOTH_REDEAL] != 0:
                    return CHECK_REDEAL
                p = dealer
            else:
                p = 0 if i0 > 0 else 1
            points = i0 if p == 0 else i1
            _finish(state, rules, p, points, points, REASON_INSTANT)
            return CHECK_INSTANT
    return CHECK_PLAY


@_jit("void(int64[::1], int64[::1], int64[::1], int64)")
def log_deal(log: Int64Array, state: Int64Array, extra: Int64Array, check: int) -> None:
    """Add a checked deal (``check``: what :func:`check_deal` returned) to a step's log."""
    k = log[L_DEALS]
    log[L_DEALS] = k + 1
    if k >= LOG_DEALS:
        return
    at = L_DEAL0 + k * D_WIDTH
    log[at + D_ROUND] = extra[X_ROUND]
    log[at + D_MONTH] = state[S_MONTH]
    log[at + D_DEALER] = state[S_DEALER]
    log[at + D_LEADER] = extra[X_LEADER]
    log[at + D_FIELD] = state[S_FIELD]
    log[at + D_CHECK] = check
    log[at + D_WINNER] = state[S_WINNER] if check == CHECK_INSTANT else -1
    log[at + D_POINTS] = state[S_POINTS] if check == CHECK_INSTANT else 0


@_jit("boolean(int64[::1], int64[::1], int64[::1])")
def settle_round(state: Int64Array, extra: Int64Array, mr: Int64Array) -> bool:
    """Add a settled round to its match (as ``Match._round_over``); whether the match ended."""
    extra[X_MATCH0] += state[S_DELTA0]
    extra[X_MATCH1] += state[S_DELTA1]
    w = state[S_WINNER]
    dealer = extra[X_NEXT_DEALER]
    if mr[M_DEALER_FIXED] == 0:
        if w >= 0:
            dealer = w
        elif mr[M_AFTER_DRAW_SWAP] != 0:
            dealer = 1 - dealer
    extra[X_NEXT_DEALER] = dealer
    if mr[M_LEADER_WINNER] != 0:
        if w >= 0:
            extra[X_NEXT_LEADER] = w
    else:
        extra[X_NEXT_LEADER] = dealer
    s0 = extra[X_MATCH0]
    s1 = extra[X_MATCH1]
    bust = mr[M_START] > 0 and min(s0, s1) <= 0
    if not bust and extra[X_ROUND] < mr[M_ROUNDS]:
        return False
    if s0 != s1:
        extra[X_WINNER] = 0 if s0 > s1 else 1
    else:
        extra[X_WINNER] = state[S_DEALER] if mr[M_TIE_DEALER] != 0 else -1
    extra[X_FINAL0] = s0
    extra[X_FINAL1] = s1
    return True


@_jit(
    "boolean(int64[::1], int8[::1], int8[::1], int64[::1], int64[::1], int64[::1], uint64[::1],"
    " float32[::1], int64[::1])"
)
def next_round(
    state: Int64Array,
    stock: Int8Array,
    deck: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    mr: Int64Array,
    rng: UInt64Array,
    gain: Float32Array,
    log: Int64Array,
) -> bool:
    """Deal the match's next round (redeals and instant hands as ``Match._start_round``);
    the deltas of instant rounds are added to ``gain``. Whether the match ended.

    Each deck dealt goes to the step's ``log`` (:func:`log_deal`) unless it is empty.
    """
    while True:
        extra[X_ROUND] += 1
        round_number = extra[X_ROUND]
        while True:
            for c in range(48):
                deck[c] = c
            shuffle(deck, rng)
            extra[X_DECKS] += 1
            dealer = extra[X_NEXT_DEALER]
            first_fixed = mr[M_DEALER_FIXED] != 0 and round_number == 1
            leader = extra[X_NEXT_LEADER] if mr[M_LEADER_WINNER] != 0 or first_fixed else dealer
            deal(state, stock, deck, dealer, (round_number - 1) % 12 + 1)
            state[S_CURRENT] = leader
            extra[X_LEADER] = leader
            extra[X_DECLINED0] = 0
            extra[X_DECLINED1] = 0
            outcome = check_deal(state, rules, mr, dealer)
            if log.shape[0] > 0:
                log_deal(log, state, extra, outcome)
            if outcome != CHECK_REDEAL and outcome < CHECK_REDEAL_HAND0:
                break  # a deal to play, or an instant hand
            if mr[M_REDEAL_SWAP] != 0:
                extra[X_NEXT_DEALER] = 1 - extra[X_NEXT_DEALER]
                extra[X_NEXT_LEADER] = 1 - extra[X_NEXT_LEADER]
        if outcome == CHECK_PLAY:
            return False
        gain[0] += state[S_DELTA0]
        gain[1] += state[S_DELTA1]
        if settle_round(state, extra, mr):
            return True


@_jit(
    "void(int64[::1], int8[::1], int8[::1], int64[::1], int64[::1], int64[::1], uint64[::1],"
    " uint64[::1], float32[::1], int64[::1])"
)
def start_match(
    state: Int64Array,
    stock: Int8Array,
    deck: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    mr: Int64Array,
    deal_rng: UInt64Array,
    match_rng: UInt64Array,
    scratch: Float32Array,
    log: Int64Array,
) -> None:
    """A new match up to its first decision; the deltas of instant rounds before it
    wait in ``extra[X_PENDING0:2]``. (A match that ends before any decision, possible
    only with very few rounds, is skipped: the next one starts.) The ``log`` (unless
    empty) holds the new match's decks only."""
    while True:
        first_dealer(extra, mr, match_rng)
        if log.shape[0] > 0:
            log[L_DEALS] = 0
        scratch[0] = 0.0
        scratch[1] = 0.0
        if not next_round(state, stock, deck, extra, rules, mr, deal_rng, scratch, log):
            extra[X_PENDING0] = np.int64(scratch[0])
            extra[X_PENDING1] = np.int64(scratch[1])
            return


@_jit(
    "int64(int64[:, ::1], int8[:, ::1], int8[:, ::1], int64[:, ::1], int64[::1], uint64[:, ::1],"
    " uint64[:, ::1], int64, int64, int64, int64[::1], float32[::1], int64[::1],"
    " float32[:, ::1], int16[:, ::1], int16[::1], int8[:, ::1], int8[::1],"
    " int64[::1], float32[:, ::1], boolean[::1], int64[:, ::1], boolean)"
)
def step_all(
    states: Int64Array,
    stocks: Int8Array,
    decks: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    deal_rngs: UInt64Array,
    match_rngs: UInt64Array,
    dealer: int,
    round_number: int,
    rounds: int,
    mr: Int64Array,
    rule_features: Float32Array,
    buf: Int64Array,
    obs: Float32Array,
    legal: Int16Array,
    counts: Int16Array,
    masks: Int8Array,
    players: Int8Array,
    actions: Int64Array,
    rewards: Float32Array,
    dones: BoolArray,
    log: Int64Array,
    reset: bool,
) -> int:
    """Apply ``actions[i]`` in every environment and re-deal the episodes that end; or,
    with ``reset``, deal a new episode in every environment (``actions`` unused, no
    reward, not done). Then observe every environment.

    An episode is a round, or with ``mr[M_EPISODE]`` a whole match: then the
    rewards are the deltas of the rounds settled in the step (instant rounds
    included; those before a match's first decision count in its first step).
    ``log`` (n x :data:`LOG_SIZE`, or 0 x 0 for none) then records what the step did
    that its states no longer show: the round its action ended and the decks it dealt.

    Every action is checked against the legal ids first: if one is not legal,
    nothing changes and the result is its environment's index. Otherwise the
    result is -1, or ``-2 - i`` when environment ``i`` reached a live state
    with no legal action (the kernel's error flag; never seen from a real deal).
    """
    num = states.shape[0]
    if reset:
        legal[:, :] = -1
        counts[:] = 0
    else:
        for i in range(num):
            a = actions[i]
            ok = False
            for j in range(counts[i]):
                if legal[i, j] == a:
                    ok = True
                    break
            if not ok:
                return i
    dense = masks.shape[0] > 0
    matches = mr[M_EPISODE] == EPISODE_MATCH
    empty = np.empty(0, dtype=np.int8)
    no_log = np.empty(0, dtype=np.int64)
    logging = log.shape[0] > 0
    error = -1
    for i in range(num):
        state = states[i]
        x = extra[i]
        lg = log[i] if logging else no_log
        if logging:
            lg[L_ENDED] = 0
            lg[L_DEALS] = 0
        if reset:
            over = True
        else:
            a = actions[i]
            p = state[S_CURRENT]
            x[X_DECLINED0 + p] |= declined_by(state, rules, a)
            apply_action(state, stocks[i], rules, buf, a)
            over = state[S_PHASE] == PHASE_OVER
            if over and logging:
                lg[L_ENDED] = 1
                lg[L_ROUND] = x[X_ROUND]
                left = state[S_NSTOCK]
                lg[L_DRAWN] = stocks[i, left] if left < STOCK_SIZE else -1
                for j in range(STATE_SIZE):
                    lg[L_STATE + j] = state[j]
        if matches:
            gain = rewards[i]
            if reset:
                start_match(
                    state,
                    stocks[i],
                    decks[i],
                    x,
                    rules,
                    mr,
                    deal_rngs[i],
                    match_rngs[i],
                    gain,
                    lg,
                )
                gain[0] = 0.0
                gain[1] = 0.0
                dones[i] = False
            else:
                gain[0] = x[X_PENDING0]
                gain[1] = x[X_PENDING1]
                x[X_PENDING0] = 0
                x[X_PENDING1] = 0
                ended = False
                if over:
                    gain[0] += state[S_DELTA0]
                    gain[1] += state[S_DELTA1]
                    ended = settle_round(state, x, mr) or next_round(
                        state, stocks[i], decks[i], x, rules, mr, deal_rngs[i], gain, lg
                    )
                dones[i] = ended
                if ended:
                    g0 = gain[0]
                    g1 = gain[1]
                    start_match(
                        state,
                        stocks[i],
                        decks[i],
                        x,
                        rules,
                        mr,
                        deal_rngs[i],
                        match_rngs[i],
                        gain,
                        lg,
                    )
                    gain[0] = g0
                    gain[1] = g1
        elif over:
            rewards[i, 0] = 0.0 if reset else state[S_DELTA0]
            rewards[i, 1] = 0.0 if reset else state[S_DELTA1]
            dones[i] = not reset
            deal_round(
                state, stocks[i], decks[i], x, deal_rngs[i], dealer, round_number, rounds, mr
            )
        else:
            rewards[i, 0] = 0.0
            rewards[i, 1] = 0.0
            dones[i] = False
        m = masks[i] if dense else empty
        n = observe(
            state,
            x,
            rules,
            rounds,
            rule_features,
            buf,
            obs[i],
            legal[i],
            counts[i],
            m,
            dense,
        )
        counts[i] = n
        players[i] = state[S_CURRENT]
        if n == 0 and error == -1:
            state[S_ERROR] = 1
            error = -2 - i
    return error


@_jit("void(int16[:, ::1], int16[::1], uint64[:, ::1], int64[::1])")
def sample_actions(
    legal: Int16Array, counts: Int16Array, rngs: UInt64Array, out: Int64Array
) -> None:
    """A uniformly random legal id per environment, from its own generator."""
    for i in range(legal.shape[0]):
        out[i] = legal[i, rand_below(rngs[i], counts[i])]


@_jit("void(int16[:, ::1], int16[::1], int8[:, ::1])")
def dense_masks(legal: Int16Array, counts: Int16Array, out: Int8Array) -> None:
    """The 0/1 masks of the legal ids, written into ``out`` (n x 2450)."""
    for i in range(legal.shape[0]):
        out[i, :] = 0
        for j in range(counts[i]):
            out[i, legal[i, j]] = 1


# ------------------------------------------------------------ for the engine


def round_of(rules: Rules, state: Int64Array, stock: Int8Array, extra: Int64Array) -> Round:
    """One environment's round (its ``states``, ``stocks`` and ``extra`` rows) as a
    :class:`~koikoi.game.engine.Round` under ``rules`` (events off)."""
    s = [int(v) for v in state]
    last = s[S_LAST_IMPROVER]
    rnd = Round(
        rules,
        hands=(s[S_HAND0], s[S_HAND1]),
        field=s[S_FIELD],
        stock=[int(c) for c in stock[: s[S_NSTOCK]]][::-1],
        dealer=s[S_DEALER],
        leader=int(extra[X_LEADER]),
        round_number=int(extra[X_ROUND]),
        events=False,
    )
    rnd.resume(
        current=s[S_CURRENT],
        phase=Phase(s[S_PHASE]),
        piles=(s[S_PILE0], s[S_PILE1]),
        drawn=s[S_DRAWN],
        scores=(s[S_SCORE0], s[S_SCORE1]),
        koikoi_calls=(s[S_CALLS0], s[S_CALLS1]),
        called_scores=(s[S_CALLED0], s[S_CALLED1]),
        last_improver=None if last < 0 else last,
        declined=(int(extra[X_DECLINED0]), int(extra[X_DECLINED1])),
        turn_score=s[S_TURN_SCORE],
    )
    return rnd
