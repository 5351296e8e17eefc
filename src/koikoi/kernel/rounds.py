"""Playouts, whole rounds and the lookahead, played by the compiled kernel.

>>> from koikoi.game.engine import Match
>>> rnd = Match(seed=5, events=False).round
>>> -100.0 < playouts(rnd, 200, seed=1) < 100.0
True
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from koikoi.game.engine import Phase, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.kernel.arrays import (
    REASONS,
    compiled,
    encode_round,
    policy_code,
    rng_state,
    rules_array,
)

# The public names are the package's (koikoi.kernel.__all__), loaded from here on first use.


def yaku_total(rules: Rules, pile: int, month: int, koikoi_called: bool) -> int:
    """The kernel's yaku total of a capture pile (equals ``Scorer(rules).total``).

    >>> from koikoi.game.cards import parse_cards
    >>> from koikoi.game.rules import get_rules
    >>> yaku_total(get_rules("nintendo"), parse_cards("3L 8L 9A"), 1, False)
    10
    """
    out = np.zeros(1, dtype=np.int64)
    compiled().yaku_totals(
        np.array([pile], dtype=np.int64), month, koikoi_called, rules_array(rules), out
    )
    return int(out[0])


def legal_ids(rnd: Round) -> list[int]:
    """The kernel's legal action ids in ``rnd``, in the order of ``Round.legal_ids()``.

    >>> from koikoi.game.engine import Match
    >>> rnd = Match(seed=4, events=False).round
    >>> legal_ids(rnd) == rnd.legal_ids()
    True
    """
    impl = compiled()
    st = encode_round(rnd)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    n = impl.legal_actions(st.state, rules_array(rnd.rules), buf)
    return [int(a) for a in buf[:n]]


def _check_playouts(errors: int) -> None:
    """Raise if the kernel says some playouts reached a state with no legal action."""
    if errors:
        raise RuntimeError(f"{errors} playouts reached a state with no legal action")


def playout_values(rnd: Round, n: int, seed: int, policy: str = "random") -> npt.NDArray[np.int64]:
    """The value for player 0 of each of ``n`` playouts of ``rnd`` (which is not changed).

    A value is the settlement's points if player 0 won, minus the points if
    player 1 won, and 0 if nobody scored. The same seed gives the same values.

    Args:
        rnd: the round to play from (any phase; an over round gives its own value).
        n: how many playouts.
        seed: seeds the rollout policy's random choices.
        policy: one of :data:`~koikoi.kernel.POLICIES`, for both players.

    Raises:
        InvalidInputError: for an unknown policy or a negative ``n``.
    """
    code = policy_code(policy)
    if n < 0:
        raise InvalidInputError(f"the number of playouts must be 0 or more, not {n}")
    impl = compiled()
    st = encode_round(rnd)
    out = np.zeros(n, dtype=np.int64)
    _check_playouts(
        impl.playouts(st.state, st.stock, rules_array(rnd.rules), rng_state(seed), code, out)
    )
    return out


def playouts(rnd: Round, n: int, seed: int, policy: str = "random") -> float:
    """The mean value for player 0 of ``n`` playouts of ``rnd`` (see :func:`playout_values`).

    Raises:
        InvalidInputError: for an unknown policy or ``n`` below 1.
    """
    policy_code(policy)
    if n <= 0:
        raise InvalidInputError(f"the number of playouts must be 1 or more, not {n}")
    return float(playout_values(rnd, n, seed, policy).mean())


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


def _lookahead_scratch(impl: Any) -> tuple[Any, ...]:
    """The scratch space of ``_compiled.lookahead_choice``: its ``wi``, ``sums``, ``wb``
    and ``roll`` arguments."""
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
    result wins (see ``_compiled.lookahead_choice``). The hidden cards' deal
    in ``rnd`` does not matter, only which cards are hidden.
    """
    code = policy_code(policy)
    _check_lookahead(1, samples)
    if rnd.phase is Phase.OVER:
        raise InvalidInputError("the round is over: there is no action to choose")
    impl = compiled()
    st = encode_round(rnd)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    return int(
        impl.lookahead_choice(
            st.state,
            st.stock,
            rules_array(rnd.rules),
            buf,
            rng_state(seed),
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
    lookahead: int = 0,
    samples: int = 8,
) -> KernelRound:
    """Play one round from ``rnd`` (not changed) and record every action id played.

    Replaying ``actions`` with ``Round.apply`` on a clone of ``rnd`` must give the
    same outcome: that is the agreement test of the kernel. With ``lookahead``,
    the first ``lookahead`` real choices are made by :func:`lookahead_action`'s
    search (``samples`` re-deals).
    """
    code = policy_code(policy)
    _check_lookahead(lookahead, samples)
    impl = compiled()
    st = encode_round(rnd)
    record = np.zeros(256, dtype=np.int64)
    buf = np.zeros(impl.BUF_SIZE, dtype=np.int64)
    rules = rules_array(rnd.rules)
    if lookahead:
        count = impl.play_out_lookahead(
            st.state,
            st.stock,
            rules,
            buf,
            rng_state(seed),
            code,
            lookahead,
            samples,
            *_lookahead_scratch(impl),
            record,
        )
    else:
        count = impl.play_out(st.state, st.stock, rules, buf, rng_state(seed), code, record)
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


def play_random_round(rnd: Round, seed: int) -> tuple[list[int], int | None, int, tuple[int, int]]:
    """Uniformly random legal actions to the settlement: ``(actions, winner, points, deltas)``."""
    r = play_round(rnd, seed, "random")
    return r.actions, r.winner, r.points, r.deltas


# ------------------------------------------------------- search primitives
# The searches of koikoi.agents.search keep their position, rules and generator as
# the kernel's arrays (koikoi.kernel.arrays) and run their iterations through these.


def utility_table(utility: tuple[float, ...] | None) -> npt.NDArray[np.float64]:
    """The kernel's utility array: ``utility`` is ``(span, table of 2 * span + 1 values)``
    (:meth:`koikoi.agents.mcts.MatchUtility.kernel_params`), or None for net round points.

    Raises:
        InvalidInputError: if the table does not have ``2 * span + 1`` values.
    """
    if utility is None:
        return np.zeros(compiled().U_TABLE, dtype=np.float64)
    span = int(utility[0]) if utility else -1
    if span < 0 or len(utility) != 2 * span + 2:
        raise InvalidInputError(
            f"utility must be (span, table of 2 * span + 1 values), not {len(utility)} values"
        )
    return np.array((1.0, *utility), dtype=np.float64)


def search_batch(*arrays_and_options: Any) -> None:
    """Iterations of the flat determinized search (``_compiled.search_batch``, same
    arguments); the results go to its ``out`` matrix.

    Raises:
        RuntimeError: if a playout reached a state with no legal action.
    """
    _check_playouts(compiled().search_batch(*arrays_and_options))


def new_tree(
    nodes: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """An empty search tree of ``nodes`` nodes: its links, statistics and size (the root)."""
    impl = compiled()
    links = np.full((nodes, impl.T_LINKS), -1, dtype=np.int64)
    stats = np.zeros((nodes, impl.T_STATS), dtype=np.float64)
    return links, stats, np.ones(1, dtype=np.int64)


def tree_search(*arrays_and_options: Any) -> None:
    """Iterations of the tree search (``_compiled.tree_search``, same arguments), which
    grow the tree of :func:`new_tree` in place.

    Raises:
        RuntimeError: if a playout reached a state with no legal action.
    """
    _check_playouts(compiled().tree_search(*arrays_and_options))


def tree_root(
    links: npt.NDArray[np.int64], stats: npt.NDArray[np.float64]
) -> dict[int, tuple[int, float, float]]:
    """For each action tried at the root of a tree: (visits, mean utility, mean net round
    points)."""
    impl = compiled()
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
