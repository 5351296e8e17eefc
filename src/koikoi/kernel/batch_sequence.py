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

from koikoi.game.tables import LIGHTNING, WILLOWS
from koikoi.kernel import sequence
from koikoi.kernel._compiled import (
    DISCARD_BASE,
    KOIKOI_ID,
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
if (_OWN, _OPPONENT, _NOBODY) != (0, 1, 2):  # pragma: no cover - the flip in record_all
    raise RuntimeError("record_all flips who as 0 <-> 1 with 2 kept: update it with the codes")


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
    written as own); return the count after it."""
    if n >= seqs.shape[1]:  # pragma: no cover - a round's tokens always fit
        return n
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
def _deal_tokens(
    states: Int64Array, extra: Int64Array, i: int, side: int, seqs: Int16Array, n: int
) -> int:
    """Clear environment ``i``'s ``n`` tokens and write a fresh deal's: the start and the
    field. Returns the count."""
    for r in range(n):
        for j in range(TOKEN_WIDTH):
            seqs[i, r, j] = 0
    rnd = extra[i, X_ROUND]
    month = states[i, S_MONTH]
    leader = states[i, S_CURRENT]  # nobody has acted yet
    lead = _OWN if leader == side else _OPPONENT
    k = _put(seqs, i, 0, _ROUND_START, states[i, S_DEALER], side, _NO_CARD, 0, lead, rnd, month)
    field = states[i, S_FIELD]
    while field != 0:
        k = _put(seqs, i, k, _FIELD, -1, side, ctz(field), 0, 0, rnd, month)
        field &= field - 1
    return k


@_inline
def _step_tokens(
    prev: Int64Array,
    states: Int64Array,
    stocks: Int8Array,
    extra: Int64Array,
    rules: Int64Array,
    i: int,
    action: int,
    choices: int,
    side: int,
    seqs: Int16Array,
    n: int,
) -> int:
    """Append the tokens of ``action`` taken in ``prev[i]`` that led to the live
    ``states[i]``; ``choices`` is the count of legal ids after it. Returns the count."""
    p = prev[i, S_CURRENT]
    rnd = extra[i, X_ROUND]
    month = states[i, S_MONTH]
    if action == KOIKOI_ID:
        calls = states[i, S_CALLS0 + p]
        return _put(seqs, i, n, _KOIKOI, p, side, _NO_CARD, 0, calls, rnd, month)
    if action >= TAKE_BASE:  # the drawn card's capture chosen
        d = prev[i, S_DRAWN]
        n = _put(seqs, i, n, _TAKE, p, side, d, 1 << (action - TAKE_BASE), 0, rnd, month)
        turn_score = prev[i, S_TURN_SCORE]
    else:
        field = prev[i, S_FIELD]
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
        n = _put(seqs, i, n, kind, p, side, card, got, 0, rnd, month)
        left = prev[i, S_NSTOCK]
        if left > 0:
            d = int(stocks[i, left - 1])
            if states[i, S_PHASE] == PHASE_TAKE:  # the capture waits for a choice
                return _put(seqs, i, n, _DRAW, p, side, d, 0, choices, rnd, month)
            played = (1 << card) | got if got != 0 else 0
            new = states[i, S_PILE0 + p] & ~prev[i, S_PILE0 + p] & ~played
            n = _put(seqs, i, n, _DRAW, p, side, d, new & ~(1 << d), 0, rnd, month)
        turn_score = prev[i, S_SCORE0 + p]
    score = states[i, S_SCORE0 + p]
    if score > turn_score:
        n = _put(seqs, i, n, _YAKU, p, side, _NO_CARD, 0, score, rnd, month)
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
        side = players[i]
        n = lengths[i]
        if reset or dones[i]:
            lengths[i] = _deal_tokens(states, extra, i, side, seqs, n)
            sides[i] = side
            continue
        written = sides[i]
        n = _step_tokens(
            prev, states, stocks, extra, rules, i, actions[i], counts[i], written, seqs, n
        )
        lengths[i] = n
        if side != written:
            # own <-> opponent, nobody (2) stays: w ^ 1 for 0 and 1, w ^ 0 for 2
            for r in range(n):
                w = seqs[i, r, _F_WHO]
                seqs[i, r, _F_WHO] = w ^ (1 - (w >> 1))
            seqs[i, 0, _F_VALUE] = 1 - seqs[i, 0, _F_VALUE]  # the round start's leader
            sides[i] = side
