"""The batched simulator's sequence observations, written in numba beside its steps.

:class:`koikoi.envs.vector.VectorEnv` with ``sequence=True`` keeps, for each
environment, the tokens of :mod:`koikoi.kernel.sequence` of its current episode:
after every step it calls :func:`record_all` (round episodes) or
:func:`record_match` (match episodes), which read what happened from the state
before the step (a copy, ``prev``), the state after it and the action, and
append the step's tokens (play or discard, draw, take, yaku, koi-koi) in the
order the engine logs its events.

* Round episodes: a round that ended was re-dealt by the step: its sequence
  starts again with the new deal's ``round_start`` and ``field`` tokens.
* Match episodes: the sequence holds every round of the match so far. A step that
  ends a round adds its end (``stop`` or ``exhausted``, ``round_over``) from the
  state the action left, then every deck the step dealt, from the step's log
  (:func:`koikoi.kernel.batch.step_all`): each deal's ``round_start`` and
  ``field`` tokens, then its ``redeal``, or its ``instant`` hand and
  ``round_over``. A match that ended was replaced by a new one: its sequence
  starts again with the new match's deals. (The ended match's ``match_over``
  token is never seen: the next observation is the new match's.)

``who`` (and the round starts' leader) is written from the side of the player to
act: when that player changes, they are flipped. When the rows are full, the
oldest token is dropped (the latest are kept).

tests/envs/test_vector.py and tests/envs/test_sequence.py hold these tokens equal to
:func:`koikoi.kernel.sequence.encode_sequence` of the engine's view, step by step.
Functions are compiled and cached as :mod:`koikoi.kernel.batch`'s are, under a key
that also holds :mod:`koikoi.kernel.batch`'s and :mod:`koikoi.kernel.sequence`'s source.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

from koikoi.game.tables import LIGHTNING, WILLOWS
from koikoi.kernel import batch, sequence
from koikoi.kernel._compiled import (
    DISCARD_BASE,
    KOIKOI_ID,
    PHASE_TAKE,
    PLAY_TARGET_BASE,
    R_WILD,
    REASON_STOP,
    S_CALLS0,
    S_CURRENT,
    S_DEALER,
    S_DRAWN,
    S_FIELD,
    S_MONTH,
    S_NSTOCK,
    S_PHASE,
    S_PILE0,
    S_POINTS,
    S_REASON,
    S_SCORE0,
    S_TURN_SCORE,
    S_WINNER,
    STATE_SIZE,
    STOP_ID,
    TAKE_BASE,
    ctz,
    month_mask,
    popcount,
)
from koikoi.kernel.batch import (
    CHECK_INSTANT,
    CHECK_PLAY,
    CHECK_REDEAL_HAND0,
    D_CHECK,
    D_DEALER,
    D_FIELD,
    D_LEADER,
    D_MONTH,
    D_POINTS,
    D_ROUND,
    D_WIDTH,
    D_WINNER,
    L_DEAL0,
    L_DEALS,
    L_DRAWN,
    L_ENDED,
    L_ROUND,
    L_STATE,
    LOG_DEALS,
    X_ROUND,
    _inline,
)

__all__ = ["MAX_TOKENS", "SOURCE_FINGERPRINT", "TOKEN_WIDTH", "record_all", "record_match"]

Int64Array = npt.NDArray[np.int64]
Int16Array = npt.NDArray[np.int16]
Int8Array = npt.NDArray[np.int8]
BoolArray = npt.NDArray[np.bool_]

_F = TypeVar("_F", bound=Callable[..., Any])

MAX_TOKENS = sequence.MAX_ROUND_TOKENS
"""Rows of a round episode's sequence by default: every token of a round fits."""
TOKEN_WIDTH = sequence.TOKEN_WIDTH
_F_KIND, _F_WHO, _F_CARD = sequence.F_KIND, sequence.F_WHO, sequence.F_CARD
_F_CAPTURE, _F_VALUE = sequence.F_CAPTURE, sequence.F_VALUE
_F_ROUND, _F_MONTH = sequence.F_ROUND, sequence.F_MONTH
_CAPTURE_SLOTS = sequence.CAPTURE_SLOTS
_NO_CARD = sequence.NO_CARD
_OWN, _OPPONENT, _NOBODY = sequence.WHO_OWN, sequence.WHO_OPPONENT, sequence.WHO_NOBODY
_ROUND_START, _FIELD = sequence.KIND["round_start"], sequence.KIND["field"]
_PLAY, _DISCARD, _DRAW = sequence.KIND["play"], sequence.KIND["discard"], sequence.KIND["draw"]
_TAKE, _YAKU, _KOIKOI = sequence.KIND["take"], sequence.KIND["yaku"], sequence.KIND["koikoi"]
_STOP, _EXHAUSTED = sequence.KIND["stop"], sequence.KIND["exhausted"]
_ROUND_OVER, _REDEAL = sequence.KIND["round_over"], sequence.KIND["redeal"]
_INSTANT = sequence.KIND["instant"]
if (_OWN, _OPPONENT, _NOBODY) != (0, 1, 2):  # pragma: no cover - the flip in _flip
    raise RuntimeError("_flip turns who as 0 <-> 1 with 2 kept: update it with the codes")


def _source_fingerprint() -> int:
    data = b""
    for module in (batch, sequence):
        path = getattr(module, "__file__", None)
        if path:
            data += Path(path).read_bytes()
    return zlib.crc32(data)


SOURCE_FINGERPRINT: Final = _source_fingerprint()
"""CRC-32 of :mod:`koikoi.kernel.batch`'s and :mod:`koikoi.kernel.sequence`'s source,
part of every cache key here beside the kernel's (``batch.SOURCE_FINGERPRINT``): the
functions here inline their constants and helpers."""


class _SequenceCache(batch._DependentCache):
    """:mod:`koikoi.kernel.batch`'s function cache, keyed also by :data:`SOURCE_FINGERPRINT`."""

    def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
        return (*super()._index_key(sig, codegen), SOURCE_FINGERPRINT)


def _jit(signature: str) -> Callable[[_F], _F]:
    """``batch._jit`` (compiled at import for ``signature``, cached) with this module's key."""

    def decorate(fn: _F) -> _F:
        dispatcher: Any = numba.njit(nogil=True)(fn)
        dispatcher._cache = cast(Any, _SequenceCache)(fn)
        dispatcher.compile(signature)
        dispatcher.disable_compile()
        return cast(_F, dispatcher)

    return decorate


@_inline
def _put(
    seqs: Int16Array,
    i: int,
    n: int,
    kind: int,
    seat: int,
    side: int,
    card: int,
    captures: int,
    value: int,
    round_number: int,
    month: int,
) -> int:
    """Write token ``n`` of environment ``i`` (``seat`` -1: nobody; ``side``: the seat
    written as own); return the count after it. When the rows are full, the oldest
    token goes first (the latest are kept, as ``sequence.encode_sequence_into`` keeps them)."""
    rows = seqs.shape[1]
    if n >= rows:
        for r in range(1, rows):
            for j in range(TOKEN_WIDTH):
                seqs[i, r - 1, j] = seqs[i, r, j]
        n = rows - 1
    seqs[i, n, _F_KIND] = kind
    seqs[i, n, _F_WHO] = _NOBODY if seat < 0 else (_OWN if seat == side else _OPPONENT)
    seqs[i, n, _F_CARD] = card
    c = captures
    for j in range(_CAPTURE_SLOTS):
        if c != 0:
            seqs[i, n, _F_CAPTURE + j] = ctz(c)
            c &= c - 1
        else:
            seqs[i, n, _F_CAPTURE + j] = _NO_CARD
    seqs[i, n, _F_VALUE] = value
    seqs[i, n, _F_ROUND] = round_number
    seqs[i, n, _F_MONTH] = month
    return n + 1


@_inline
def _play_captures(field: int, card: int, wild: bool) -> int:
    """The field cards a hand card with no chosen target captures (Round._capture)."""
    if card == LIGHTNING and wild:
        willows = field & WILLOWS
        return willows if popcount(willows) == 3 else field
    return field & month_mask(card)


@_inline
def _clear(seqs: Int16Array, i: int, n: int) -> None:
    """Zero environment ``i``'s first ``n`` rows."""
    for r in range(n):
        for j in range(TOKEN_WIDTH):
            seqs[i, r, j] = 0


@_inline
def _start_tokens(
    seqs: Int16Array,
    i: int,
    n: int,
    side: int,
    round_number: int,
    month: int,
    dealer: int,
    leader: int,
    field: int,
) -> int:
    """Append a deal's tokens: its ``round_start`` and a ``field`` token per field card
    (in card order). Returns the count."""
    lead = _OWN if leader == side else _OPPONENT
    n = _put(seqs, i, n, _ROUND_START, dealer, side, _NO_CARD, 0, lead, round_number, month)
    while field != 0:
        n = _put(seqs, i, n, _FIELD, -1, side, ctz(field), 0, 0, round_number, month)
        field &= field - 1
    return n


@_inline
def _deal_tokens(
    states: Int64Array, extra: Int64Array, i: int, side: int, seqs: Int16Array, n: int
) -> int:
    """Clear environment ``i``'s ``n`` tokens and write a fresh deal's: the start and the
    field. Returns the count."""
    _clear(seqs, i, n)
    # nobody has acted yet: the player to act leads
    return _start_tokens(
        seqs,
        i,
        0,
        side,
        extra[i, X_ROUND],
        states[i, S_MONTH],
        states[i, S_DEALER],
        states[i, S_CURRENT],
        states[i, S_FIELD],
    )


@_inline
def _step_tokens(
    before: Int64Array,
    after: Int64Array,
    drawn: int,
    rules: Int64Array,
    round_number: int,
    action: int,
    choices: int,
    side: int,
    seqs: Int16Array,
    i: int,
    n: int,
) -> int:
    """Append the tokens of ``action`` taken in the round state ``before`` that led to
    ``after`` (play or discard, draw, take, yaku, koi-koi; a stop has none); ``drawn``
    is the stock card a play draws and ``choices`` the count of legal ids after it.
    Returns the count."""
    p = before[S_CURRENT]
    month = before[S_MONTH]
    if action == STOP_ID:
        return n
    if action == KOIKOI_ID:
        calls = after[S_CALLS0 + p]
        return _put(seqs, i, n, _KOIKOI, p, side, _NO_CARD, 0, calls, round_number, month)
    if action >= TAKE_BASE:  # the drawn card's capture chosen
        d = before[S_DRAWN]
        n = _put(seqs, i, n, _TAKE, p, side, d, 1 << (action - TAKE_BASE), 0, round_number, month)
        turn_score = before[S_TURN_SCORE]
    else:
        field = before[S_FIELD]
        if action < PLAY_TARGET_BASE:
            card = action
            got = _play_captures(field, card, rules[R_WILD] != 0)
            kind = _PLAY
        elif action < DISCARD_BASE:
            card = (action - PLAY_TARGET_BASE) // 48
            got = 1 << ((action - PLAY_TARGET_BASE) % 48)
            kind = _PLAY
        else:
            card = action - DISCARD_BASE
            got = 0
            kind = _DISCARD
        n = _put(seqs, i, n, kind, p, side, card, got, 0, round_number, month)
        if before[S_NSTOCK] > 0:
            d = drawn
            if after[S_PHASE] == PHASE_TAKE:  # the capture waits for a choice
                return _put(seqs, i, n, _DRAW, p, side, d, 0, choices, round_number, month)
            played = (1 << card) | got if got != 0 else 0
            new = after[S_PILE0 + p] & ~before[S_PILE0 + p] & ~played
            n = _put(seqs, i, n, _DRAW, p, side, d, new & ~(1 << d), 0, round_number, month)
        turn_score = before[S_SCORE0 + p]
    score = after[S_SCORE0 + p]
    if score > turn_score:
        n = _put(seqs, i, n, _YAKU, p, side, _NO_CARD, 0, score, round_number, month)
    return n


@_inline
def _end_tokens(
    ended: Int64Array,
    action: int,
    round_number: int,
    side: int,
    seqs: Int16Array,
    i: int,
    n: int,
) -> int:
    """Append the tokens of a round that ``action`` ended in the state ``ended``: the
    stop (automatic unless the action was one) or the exhausted stock, and the
    round's end. Returns the count."""
    month = ended[S_MONTH]
    winner = ended[S_WINNER]
    if ended[S_REASON] == REASON_STOP:  # the winner stopped
        automatic = 0 if action == STOP_ID else 1
        n = _put(seqs, i, n, _STOP, winner, side, _NO_CARD, 0, automatic, round_number, month)
    else:
        n = _put(seqs, i, n, _EXHAUSTED, -1, side, _NO_CARD, 0, 0, round_number, month)
    points = ended[S_POINTS] if winner >= 0 else 0
    return _put(seqs, i, n, _ROUND_OVER, winner, side, _NO_CARD, 0, points, round_number, month)


@_inline
def _logged_deals(log: Int64Array, side: int, seqs: Int16Array, i: int, n: int) -> int:
    """Append the tokens of the decks a step dealt (``log``, see :mod:`koikoi.kernel.batch`):
    each deal's start and field, then its redeal, or its instant hand and the round's end.
    Returns the count."""
    for k in range(min(log[L_DEALS], LOG_DEALS)):
        at = L_DEAL0 + k * D_WIDTH
        rnd = log[at + D_ROUND]
        month = log[at + D_MONTH]
        n = _start_tokens(
            seqs,
            i,
            n,
            side,
            rnd,
            month,
            log[at + D_DEALER],
            log[at + D_LEADER],
            log[at + D_FIELD],
        )
        check = log[at + D_CHECK]
        if check == CHECK_INSTANT:
            p = log[at + D_WINNER]
            points = log[at + D_POINTS]
            n = _put(seqs, i, n, _INSTANT, p, side, _NO_CARD, 0, points, rnd, month)
            n = _put(seqs, i, n, _ROUND_OVER, p, side, _NO_CARD, 0, points, rnd, month)
        elif check != CHECK_PLAY:
            who = check - CHECK_REDEAL_HAND0 if check >= CHECK_REDEAL_HAND0 else -1
            n = _put(seqs, i, n, _REDEAL, who, side, _NO_CARD, 0, 0, rnd, month)
    return n


@_inline
def _flip(seqs: Int16Array, i: int, n: int, every_start: bool) -> None:
    """Turn environment ``i``'s first ``n`` tokens to the other player's side: ``who``
    own <-> opponent (nobody stays), and the round starts' leader; ``every_start``
    False: the round start can only be the first row."""
    for r in range(n):
        w = seqs[i, r, _F_WHO]
        seqs[i, r, _F_WHO] = w ^ (1 - (w >> 1))  # w ^ 1 for 0 and 1, w ^ 0 for 2
        if every_start and seqs[i, r, _F_KIND] == _ROUND_START:
            seqs[i, r, _F_VALUE] = 1 - seqs[i, r, _F_VALUE]
    if not every_start and n > 0 and seqs[i, 0, _F_KIND] == _ROUND_START:
        seqs[i, 0, _F_VALUE] = 1 - seqs[i, 0, _F_VALUE]


@_jit(
    "void(int64[:, ::1], int64[:, ::1], int8[:, ::1], int64[:, ::1], int64[::1], int64[::1],"
    " boolean[::1], int16[::1], int8[::1], int16[:, :, ::1], int16[::1], int8[::1], boolean)"
)
def record_all(
    prev: Int64Array,
    states: Int64Array,
    stocks: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    actions: Int64Array,
    dones: BoolArray,
    counts: Int16Array,
    players: Int8Array,
    seqs: Int16Array,
    lengths: Int16Array,
    sides: Int8Array,
    reset: bool,
) -> None:
    """Round episodes: bring every environment's sequence up to date after a step (or,
    with ``reset``, a deal in every environment): ``prev`` holds the states before it."""
    for i in range(states.shape[0]):
        side = players[i]
        n = lengths[i]
        if reset or dones[i]:
            lengths[i] = _deal_tokens(states, extra, i, side, seqs, n)
            sides[i] = side
            continue
        written = sides[i]
        before = prev[i]
        left = before[S_NSTOCK]
        drawn = stocks[i, left - 1] if left > 0 else -1
        n = _step_tokens(
            before,
            states[i],
            drawn,
            rules,
            extra[i, X_ROUND],
            actions[i],
            counts[i],
            written,
            seqs,
            i,
            n,
        )
        lengths[i] = n
        if side != written:
            _flip(seqs, i, n, False)
            sides[i] = side


@_jit(
    "int64(int64[:, ::1], int64[:, ::1], int8[:, ::1], int64[:, ::1], int64[::1],"
    " int64[::1], boolean[::1], int16[::1], int8[::1], int64[:, ::1], int16[:, :, ::1],"
    " int16[::1], int8[::1], boolean)"
)
def record_match(
    prev: Int64Array,
    states: Int64Array,
    stocks: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    actions: Int64Array,
    dones: BoolArray,
    counts: Int16Array,
    players: Int8Array,
    log: Int64Array,
    seqs: Int16Array,
    lengths: Int16Array,
    sides: Int8Array,
    reset: bool,
) -> int:
    """Match episodes: bring every environment's sequence (every round of its match so
    far) up to date after a step, or with ``reset`` a new match in every environment;
    ``prev`` holds the states before the step and ``log`` what the step did that the
    states no longer show (:func:`koikoi.kernel.batch.step_all`'s log).

    Returns -1, or the first environment whose step dealt more decks than its log
    holds (:data:`~koikoi.kernel.batch.LOG_DEALS`; its sequence then lacks some).
    """
    overflow = -1
    for i in range(states.shape[0]):
        side = players[i]
        n = lengths[i]
        lg = log[i]
        if lg[L_DEALS] > LOG_DEALS and overflow < 0:
            overflow = i
        if reset or dones[i]:  # a new match: its decks so far
            _clear(seqs, i, n)
            lengths[i] = _logged_deals(lg, side, seqs, i, 0)
            sides[i] = side
            continue
        written = sides[i]
        before = prev[i]
        ended = lg[L_ENDED] != 0
        rnd = lg[L_ROUND] if ended else extra[i, X_ROUND]
        after = lg[L_STATE : L_STATE + STATE_SIZE] if ended else states[i]
        left = before[S_NSTOCK]
        last = stocks[i, left - 1] if left > 0 else -1  # what a play draws
        drawn = lg[L_DRAWN] if ended else last
        n = _step_tokens(
            before, after, drawn, rules, rnd, actions[i], counts[i], written, seqs, i, n
        )
        if ended:
            n = _end_tokens(after, actions[i], rnd, written, seqs, i, n)
            n = _logged_deals(lg, written, seqs, i, n)
        lengths[i] = n
        if side != written:
            _flip(seqs, i, n, True)
            sides[i] = side
    return overflow
