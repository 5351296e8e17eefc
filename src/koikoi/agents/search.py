"""The kernel's searches of one position: flat (:class:`BatchSearch`) and tree search.

Both keep the position, the rules and their random generator as the kernel's
arrays and run many iterations per call inside the compiled kernel
(:mod:`koikoi.kernel`); :class:`~koikoi.agents.mcts.MCTSAgent` and
:class:`~koikoi.agents.expert.ExpertAgent` drive them.

>>> from koikoi.game.engine import Match
>>> rnd = Match(seed=5, events=False).round
>>> values = BatchSearch(rnd, rnd.current, seed=1).run(rnd.legal_ids()[:2], 3)
>>> values.shape
(3, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from koikoi import kernel
from koikoi.game.cards import mask_of
from koikoi.game.engine import Round
from koikoi.game.errors import InvalidInputError

__all__ = ["TREE_NODES", "BatchSearch", "DealOptions", "TreeSearch"]


class DealOptions(TypedDict, total=False):
    """The keyword arguments that :class:`BatchSearch` and :class:`TreeSearch` share
    (see :class:`BatchSearch`): the playouts' policy, the utility and how the
    opponent's hand is re-dealt."""

    policy: str
    utility: tuple[float, ...] | None
    avoid: int
    slack: float
    hands: Sequence[int]


class _DealSearch:
    """What the flat and the tree search share: the position and rules in the kernel's
    arrays, the generator, the policy, the utility and how the opponent's hand is
    re-dealt (checked here)."""

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
    ) -> None:
        st = kernel.encode_round(rnd)
        self._state, self._stock = st.state, st.stock
        self._rules = kernel.rules_array(rnd.rules)
        self._rng = kernel.rng_state(seed)
        self._code = kernel.policy_code(policy)
        self._player = player
        self._util = kernel.utility_table(utility)
        self._avoid = avoid
        self._slack = slack
        hidden = rnd.hands[1 - player] | mask_of(rnd.stock)
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
    the hidden cards of ``rnd``. See ``koikoi.kernel._compiled.search_batch``.

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
            search of that player's own (``koikoi.kernel._compiled.lookahead_choice``);
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
        rollouts: int = 4,
        depth: int = 0,
        samples: int = 8,
        **deal: Unpack[DealOptions],
    ) -> None:
        if rollouts < 1:
            raise InvalidInputError(f"rollouts must be 1 or more, not {rollouts}")
        if depth < 0:
            raise InvalidInputError(f"lookahead depth must be 0 or more, not {depth}")
        if samples < 1:
            raise InvalidInputError(f"lookahead samples must be 1 or more, not {samples}")
        super().__init__(rnd, player, seed, **deal)
        self._depth = depth
        self._samples = samples
        self._rollouts = rollouts
        self.with_points = deal.get("utility") is not None

    def run(self, actions: list[int], iterations: int) -> npt.NDArray[np.float64]:
        """``iterations`` more iterations: a matrix of values, one row each, a column per action.

        With a utility, each row has the utilities first, then the net round
        points of the same playouts (``2 * len(actions)`` columns).
        """
        width = 2 * len(actions) if self.with_points else len(actions)
        out = np.empty((iterations, width), dtype=np.float64)
        kernel.search_batch(
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
        return out


TREE_NODES: Final = 1 << 16
"""Nodes a :class:`TreeSearch` holds unless told otherwise (64 bytes each: about 4 MB)."""


class TreeSearch(_DealSearch):
    """Open-loop information-set tree search from one position, many iterations per call.

    Unlike :class:`BatchSearch`, which plays every action out once per re-deal
    with greedy players after it, the tree looks several moves ahead: each
    iteration re-deals the unseen cards, then descends a tree of actions (the
    searching player's and the opponent's) by an upper confidence bound, adds
    one node, and plays out with ``policy``. See ``koikoi.kernel._compiled.tree_search``.

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
        explore: float = 1.0,
        nodes: int = TREE_NODES,
        paired: bool = False,
        **deal: Unpack[DealOptions],
    ) -> None:
        if not explore > 0 or not math.isfinite(explore):
            raise InvalidInputError(f"explore must be a positive number, not {explore!r}")
        if nodes < 2:
            raise InvalidInputError(f"nodes must be 2 or more, not {nodes!r}")
        super().__init__(rnd, player, seed, **deal)
        self._explore = float(explore)
        self._links, self._stats, self._size = kernel.new_tree(nodes)
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
        kernel.tree_search(
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

    def root(self) -> dict[int, tuple[int, float, float]]:
        """For each action tried at the root: (visits, mean utility, mean net round points)."""
        return kernel.tree_root(self._links, self._stats)
