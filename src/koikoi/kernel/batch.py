"""The numba code of the batched simulator; use it through :mod:`koikoi.envs.vector`.

Every rule of the game comes from the playout kernel
(:mod:`koikoi.kernel._compiled`): dealing, legal actions, applying an action,
yaku totals and the settlement are the kernel's own compiled functions, called
from here. This module adds only what a learning environment needs around them:
many rounds side by side, the information-state vector of
:mod:`koikoi.kernel.encoding` written in place, legal ids and masks, rewards and
automatic re-deals.

Arrays, one row per environment (all C-contiguous):

* ``states`` (int64, n x ``STATE_SIZE``) and ``stocks`` (int8, n x 48): the
  kernel's round arrays;
* ``decks`` (int8, n x 48): the shuffled deck of each current round, in the
  order of :attr:`koikoi.game.engine.Match.deals` (dealer's hand, other hand, field,
  stock top card first);
* ``extra`` (int64, n x :data:`X_SIZE`): what the kernel does not keep but the
  observation needs: each player's declined months (as
  :attr:`koikoi.game.engine.Round.declined`) and the round number;
* ``deal_rngs`` and ``act_rngs`` (uint64, n x 1): one xorshift state per
  environment for its deals and one for :func:`sample_actions`;
* ``obs`` (float32, n x ``SIZE``), ``legal`` (int16, n x :data:`MAX_LEGAL`,
  -1 after the legal ids), ``counts`` (int16, n), ``masks`` (int8, n x 2450, or
  0 x 0 for none), ``rewards`` (float32, n x 2), ``dones`` (bool, n),
  ``players`` (int8, n).

**Cache.** numba's on-disk cache of a function does not notice a change in
another file whose functions it calls (their machine code is linked into the
caller's). So every function here is cached under a key that also holds a hash
of the kernel's and the encoding's source (:data:`SOURCE_FINGERPRINT`): an edit
of either recompiles this module on the next import instead of loading stale code.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt
from numba.core.caching import FunctionCache

from koikoi.kernel import _compiled as kernel_impl
from koikoi.kernel import encoding
from koikoi.kernel._compiled import (
    DISCARD_BASE,
    PHASE_OVER,
    PLAY_TARGET_BASE,
    R_WILD,
    S_CALLED0,
    S_CALLS0,
    S_CURRENT,
    S_DEALER,
    S_DELTA0,
    S_DELTA1,
    S_DRAWN,
    S_ERROR,
    S_FIELD,
    S_HAND0,
    S_LAST_IMPROVER,
    S_MONTH,
    S_NSTOCK,
    S_PHASE,
    S_PILE0,
    S_SCORE0,
    TAKE_BASE,
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
X_SIZE: Final = 3

MAX_LEGAL: Final = 128
"""Room for legal ids per environment (the kernel's own scratch space holds as many)."""

DEALER_RANDOM: Final = -1
ROUND_RANDOM: Final = 0

OBS_SIZE: Final = encoding.SIZE
ROUND_OFFSET: Final = encoding.ROUND_OFFSET
RULES_OFFSET: Final = encoding.RULES_OFFSET
ROUND_WIDTH: Final = RULES_OFFSET - ROUND_OFFSET
MATCH_SCALE: Final = float(encoding.MATCH_SCALE)
ROUND_SCALE: Final = float(encoding.ROUND_SCALE)
FULL_DECK: Final = (1 << 48) - 1

# Round features (encoding._round_features), offsets from ROUND_OFFSET.
F_OWN_HAND: Final = 0
F_OPP_HAND: Final = 1
F_STOCK: Final = 2
F_PHASE: Final = 3
F_MY_TURN: Final = 6
F_MONTH: Final = 7
F_I_DEAL: Final = 19
F_I_LEAD: Final = 20
F_OWN_SCORE: Final = 21
F_OPP_SCORE: Final = 22
F_OWN_KOIKOI: Final = 23
F_OPP_KOIKOI: Final = 24
F_OWN_CALLED: Final = 25
F_OPP_CALLED: Final = 26
F_SCORED_LAST: Final = 27  # own, opponent, nobody
F_MATCH_OWN: Final = 30
F_MATCH_OPP: Final = 31
F_MATCH_LEAD: Final = 32
F_ROUNDS_LEFT: Final = 33
F_LAST_ROUND: Final = 34
F_ROUNDS: Final = 35
ROUND_FEATURES: Final[tuple[str, ...]] = encoding.ROUND_FEATURES
"""The round features this module writes, in the order it writes them (checked by
:mod:`koikoi.envs.vector` against the encoding at import)."""


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


@_jit("void(int64[::1], int64[::1], int64, int64, float32[::1], float32[::1])")
def encode_obs(
    state: Int64Array,
    extra: Int64Array,
    start_points: int,
    rounds: int,
    rule_features: Float32Array,
    out: Float32Array,
) -> None:
    """``encoding.encode_into`` of the view of the player to act (a live round).

    The match part is that of a match at ``start_points`` each, ``rounds`` long,
    in round ``extra[X_ROUND]``; the leader is the dealer.
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
    _plane(out, 0, hand)
    _plane(out, 48, field)
    _plane(out, 96, own_pile)
    _plane(out, 144, opp_pile)
    _plane(out, 192, unseen)
    _plane(out, 240, drawn)
    _plane(out, 288, extra[X_DECLINED0 + me])
    _plane(out, 336, extra[X_DECLINED0 + opp])
    r = ROUND_OFFSET
    for j in range(ROUND_WIDTH):
        out[r + j] = 0.0
    out[r + F_OWN_HAND] = popcount(hand) / 8.0
    out[r + F_OPP_HAND] = popcount(state[S_HAND0 + opp]) / 8.0
    out[r + F_STOCK] = state[S_NSTOCK] / 24.0
    out[r + F_PHASE + state[S_PHASE]] = 1.0
    out[r + F_MY_TURN] = 1.0
    out[r + F_MONTH + state[S_MONTH] - 1] = 1.0
    dealer_me = 1.0 if state[S_DEALER] == me else 0.0
    out[r + F_I_DEAL] = dealer_me
    out[r + F_I_LEAD] = dealer_me
    out[r + F_OWN_SCORE] = state[S_SCORE0 + me] / ROUND_SCALE
    out[r + F_OPP_SCORE] = state[S_SCORE0 + opp] / ROUND_SCALE
    out[r + F_OWN_KOIKOI] = min(state[S_CALLS0 + me], 3) / 3.0
    out[r + F_OPP_KOIKOI] = min(state[S_CALLS0 + opp], 3) / 3.0
    out[r + F_OWN_CALLED] = state[S_CALLED0 + me] / ROUND_SCALE
    out[r + F_OPP_CALLED] = state[S_CALLED0 + opp] / ROUND_SCALE
    last = state[S_LAST_IMPROVER]
    out[r + F_SCORED_LAST + (0 if last == me else 1 if last == opp else 2)] = 1.0
    out[r + F_MATCH_OWN] = start_points / MATCH_SCALE
    out[r + F_MATCH_OPP] = start_points / MATCH_SCALE
    out[r + F_MATCH_LEAD] = 0.0
    left = max(rounds - extra[X_ROUND], 0)
    out[r + F_ROUNDS_LEFT] = left / 12.0
    out[r + F_LAST_ROUND] = 1.0 if left == 0 else 0.0
    out[r + F_ROUNDS] = rounds / 12.0
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


@_jit("void(int64[::1], int8[::1], int8[::1], int64[::1], uint64[::1], int64, int64, int64)")
def deal_round(
    state: Int64Array,
    stock: Int8Array,
    deck: Int8Array,
    extra: Int64Array,
    rng: UInt64Array,
    dealer: int,
    round_number: int,
    rounds: int,
) -> None:
    """A fresh round: shuffle a new deck, then the dealer and the round number when random."""
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


@_jit(
    "int64(int64[::1], int64[::1], int64[::1], int64, int64, float32[::1], int64[::1],"
    " float32[::1], int16[::1], int64, int8[::1], boolean)"
)
def observe(
    state: Int64Array,
    extra: Int64Array,
    rules: Int64Array,
    start_points: int,
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
    encode_obs(state, extra, start_points, rounds, rule_features, obs)
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


_ARRAYS: Final = (
    "int64[:, ::1], int8[:, ::1], int8[:, ::1], int64[:, ::1], int64[::1], uint64[:, ::1],"
    " int64, int64, int64, int64, float32[::1], int64[::1],"
    " float32[:, ::1], int16[:, ::1], int16[::1], int8[:, ::1]"
)


@_jit(f"int64({_ARRAYS}, int8[::1])")
def reset_all(
    states: Int64Array,
    stocks: Int8Array,
    decks: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    deal_rngs: UInt64Array,
    dealer: int,
    round_number: int,
    rounds: int,
    start_points: int,
    rule_features: Float32Array,
    buf: Int64Array,
    obs: Float32Array,
    legal: Int16Array,
    counts: Int16Array,
    masks: Int8Array,
    players: Int8Array,
) -> int:
    """Deal a new round in every environment and observe it; returns -1, or the first
    environment whose deal has no legal action (never seen)."""
    dense = masks.shape[0] > 0
    empty = np.empty(0, dtype=np.int8)
    for i in range(states.shape[0]):
        deal_round(
            states[i], stocks[i], decks[i], extra[i], deal_rngs[i], dealer, round_number, rounds
        )
        legal[i, :] = -1
        before = 0
        m = masks[i] if dense else empty
        n = observe(
            states[i],
            extra[i],
            rules,
            start_points,
            rounds,
            rule_features,
            buf,
            obs[i],
            legal[i],
            before,
            m,
            dense,
        )
        counts[i] = n
        players[i] = states[i, S_CURRENT]
        if n == 0:
            return i
    return -1


@_jit(f"int64({_ARRAYS}, int8[::1], int64[::1], float32[:, ::1], boolean[::1])")
def step_all(
    states: Int64Array,
    stocks: Int8Array,
    decks: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    deal_rngs: UInt64Array,
    dealer: int,
    round_number: int,
    rounds: int,
    start_points: int,
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
) -> int:
    """Apply ``actions[i]`` in every environment; re-deal the rounds that end.

    Every action is checked against the legal ids first: if one is not legal,
    nothing changes and the result is its environment's index. Otherwise the
    result is -1, or ``-2 - i`` when environment ``i`` reached a live state
    with no legal action (the kernel's error flag; never seen from a real deal).
    """
    num = states.shape[0]
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
    empty = np.empty(0, dtype=np.int8)
    error = -1
    for i in range(num):
        state = states[i]
        a = actions[i]
        p = state[S_CURRENT]
        extra[i, X_DECLINED0 + p] |= declined_by(state, rules, a)
        apply_action(state, stocks[i], rules, buf, a)
        if state[S_PHASE] == PHASE_OVER:
            rewards[i, 0] = state[S_DELTA0]
            rewards[i, 1] = state[S_DELTA1]
            dones[i] = True
            deal_round(
                state, stocks[i], decks[i], extra[i], deal_rngs[i], dealer, round_number, rounds
            )
        else:
            rewards[i, 0] = 0.0
            rewards[i, 1] = 0.0
            dones[i] = False
        before = counts[i]
        m = masks[i] if dense else empty
        n = observe(
            state,
            extra[i],
            rules,
            start_points,
            rounds,
            rule_features,
            buf,
            obs[i],
            legal[i],
            before,
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
