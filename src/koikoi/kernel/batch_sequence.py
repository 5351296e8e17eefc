"""The batched simulator's sequence observations, written in numba beside its steps.

:class:`koikoi.envs.vector.VectorEnv` with ``sequence=True`` keeps, for each
environment, the tokens of :mod:`koikoi.kernel.sequence` of its current round:
after every step it calls :func:`record_all`, which reads what happened from the
state before the step (a copy, ``prev``), the state after it and the action, and
appends the step's tokens (play or discard, draw, take, yaku, koi-koi) in the
order the engine logs its events. A round that ended was re-dealt by the step:
its sequence starts again with the new deal's ``round_start`` and ``field``
tokens. ``who`` (and a round start's leader) is written from the side of the
player to act: when that player changes, they are flipped.

tests/envs/test_vector.py holds these tokens equal to
:func:`koikoi.kernel.sequence.encode_sequence` of the engine's view, step by step.
Functions are compiled and cached as :mod:`koikoi.kernel.batch`'s are.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from koikoi.kernel import sequence
from koikoi.kernel._compiled import (
    DISCARD_BASE,
    KOIKOI_ID,
    LIGHTNING,
    PHASE_TAKE,
    PLAY_TARGET_BASE,
    R_WILD,
    S_CALLS0,
    S_CURRENT,
    S_DEALER,
    S_DRAWN,
    S_FIELD,
    S_MONTH,
    S_NSTOCK,
    S_PHASE,
    S_PILE0,
    S_SCORE0,
    S_TURN_SCORE,
    TAKE_BASE,
    WILLOWS,
    ctz,
    month_mask,
    popcount,
)
from koikoi.kernel.batch import X_ROUND, _inline, _jit

__all__ = ["MAX_TOKENS", "TOKEN_WIDTH", "record_all"]

Int64Array = npt.NDArray[np.int64]
Int16Array = npt.NDArray[np.int16]
Int8Array = npt.NDArray[np.int8]
BoolArray = npt.NDArray[np.bool_]

MAX_TOKENS = sequence.MAX_ROUND_TOKENS
"""Rows of each environment's sequence: every token of a round fits."""
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


@_inline
def _put(
    seq: Int16Array,
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
    """Write token ``n`` (``seat`` -1: nobody; ``side``: the seat written as own);
    return the count after it."""
    if n >= seq.shape[0]:  # pragma: no cover - a round's tokens always fit
        return n
    row = seq[n]
    row[_F_KIND] = kind
    row[_F_WHO] = _NOBODY if seat < 0 else (_OWN if seat == side else _OPPONENT)
    row[_F_CARD] = card
    c = captures
    for j in range(_CAPTURE_SLOTS):
        if c != 0:
            row[_F_CAPTURE + j] = ctz(c)
            c &= c - 1
        else:
            row[_F_CAPTURE + j] = _NO_CARD
    row[_F_VALUE] = value
    row[_F_ROUND] = round_number
    row[_F_MONTH] = month
    return n + 1


@_inline
def _play_captures(field: int, card: int, wild: bool) -> int:
    """The field cards a hand card with no chosen target captures (Round._capture)."""
    if card == LIGHTNING and wild:
        willows = field & WILLOWS
        return willows if popcount(willows) == 3 else field
    return field & month_mask(card)


@_jit("void(int64[::1], int64[::1], int64, int16[:, ::1], int64)")
def _deal_tokens(state: Int64Array, extra: Int64Array, side: int, seq: Int16Array, n: int) -> None:
    """Clear ``seq``'s ``n`` tokens and write a fresh deal's: the start and the field."""
    for r in range(n):
        for j in range(seq.shape[1]):
            seq[r, j] = 0
    rnd = extra[X_ROUND]
    month = state[S_MONTH]
    k = _put(seq, 0, _ROUND_START, state[S_DEALER], side, _NO_CARD, 0, 0, rnd, month)
    leader = state[S_CURRENT]  # nobody has acted yet
    seq[0, _F_VALUE] = _OWN if leader == side else _OPPONENT
    field = state[S_FIELD]
    while field != 0:
        k = _put(seq, k, _FIELD, -1, side, ctz(field), 0, 0, rnd, month)
        field &= field - 1


@_jit(
    "int64(int64[::1], int64[::1], int8[::1], int64[::1], int64[::1], int64, int64,"
    " int64, int16[:, ::1], int64)"
)
def _step_tokens(
    prev: Int64Array,
    state: Int64Array,
    stock: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    action: int,
    choices: int,
    side: int,
    seq: Int16Array,
    n: int,
) -> int:
    """Append the tokens of ``action`` taken in ``prev`` that led to the live ``state``;
    ``choices`` is the count of legal ids after it. Returns the count of tokens."""
    p = prev[S_CURRENT]
    rnd = extra[X_ROUND]
    month = state[S_MONTH]
    if action == KOIKOI_ID:
        return _put(seq, n, _KOIKOI, p, side, _NO_CARD, 0, state[S_CALLS0 + p], rnd, month)
    if action >= TAKE_BASE:  # the drawn card's capture chosen
        d = prev[S_DRAWN]
        n = _put(seq, n, _TAKE, p, side, d, 1 << (action - TAKE_BASE), 0, rnd, month)
        turn_score = prev[S_TURN_SCORE]
    else:
        field = prev[S_FIELD]
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
        n = _put(seq, n, kind, p, side, card, got, 0, rnd, month)
        left = prev[S_NSTOCK]
        if left > 0:
            d = stock[left - 1]
            if state[S_PHASE] == PHASE_TAKE:  # the capture waits for a choice
                return _put(seq, n, _DRAW, p, side, d, 0, choices, rnd, month)
            played = (1 << card) | got if got != 0 else 0
            new = state[S_PILE0 + p] & ~prev[S_PILE0 + p] & ~played
            n = _put(seq, n, _DRAW, p, side, d, new & ~(1 << d), 0, rnd, month)
        turn_score = prev[S_SCORE0 + p]
    score = state[S_SCORE0 + p]
    if score > turn_score:
        n = _put(seq, n, _YAKU, p, side, _NO_CARD, 0, score, rnd, month)
    return n


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
    """Bring every environment's sequence up to date after a step (or, with ``reset``,
    a deal in every environment): ``prev`` holds the states before it."""
    for i in range(states.shape[0]):
        seq = seqs[i]
        side = players[i]
        n = lengths[i]
        if reset or dones[i]:
            _deal_tokens(states[i], extra[i], side, seq, n)
            lengths[i] = 1 + popcount(states[i, S_FIELD])
            sides[i] = side
            continue
        n = _step_tokens(
            prev[i], states[i], stocks[i], extra[i], rules, actions[i], counts[i], sides[i], seq, n
        )
        lengths[i] = n
        if side != sides[i]:
            for r in range(n):
                w = seq[r, _F_WHO]
                if w != _NOBODY:
                    seq[r, _F_WHO] = 1 - w
                if seq[r, _F_KIND] == _ROUND_START:  # its value is the leader
                    seq[r, _F_VALUE] = 1 - seq[r, _F_VALUE]
            sides[i] = side
