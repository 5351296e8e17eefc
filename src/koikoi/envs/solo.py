"""One seat of the batched simulator, the other played by a fixed opponent.

:class:`SoloVectorEnv` wraps a :class:`~koikoi.envs.vector.VectorEnv` of ``n``
environments so that a single learner sees every environment at its own turn:
the learner sits at player 0 (the dealer is drawn per deal, so it deals half
the rounds), and after each of its moves the opponent's turns are played in
the compiled simulator, batched, until the learner is to act again in every
environment. This is the shape of the vectorized single-agent APIs
(stable-baselines3's ``VecEnv``, Gymnasium's vector envs): one observation, one
reward and one done per environment per step, and an episode that ends is
replaced by the next one at once.

* ``observations`` (float32, ``n x 540``): the learner's
  :func:`koikoi.kernel.encoding.encode` observation;
* ``rewards`` (float32, ``n``): the learner's net points (its score change
  minus the opponent's) of the rounds settled since its last move;
* ``dones`` (bool, ``n``): the episode ended since the learner's last move
  (the observation is already that of the next episode);
* actions: with ``actions="dense"`` (the default) the 2,450 ids of
  :mod:`koikoi.game.actions`; with ``actions="playable"`` an index into
  :data:`PLAYABLE_IDS`, the 334 ids that can ever be legal (a hand card played
  with a target only of its own month, or the wild Lightning's) in a fixed
  order: the same meaning in every state, in a seventh of the width, so that a
  policy's output layer and its masked softmax cost a seventh;
* :meth:`SoloVectorEnv.action_masks`: the masks (bool, ``n x`` the size of the
  action space), as sb3-contrib's ``MaskablePPO`` asks for them.

The opponent is ``"random"`` (a uniform legal move drawn in the kernel, from
each environment's own generator) or a function of the batch:
``opponent(observations, legal_ids, legal_counts) -> action ids``, called with
the rows of the environments where the opponent is to act (its own view).

The simulator steps every environment at once, so where only some
environments wait for the opponent, the others are stepped with a placeholder
move and brought back from a :meth:`~koikoi.envs.vector.VectorEnv.save`
snapshot: environment ``i``'s rounds, and the random opponent's moves in it,
depend only on the seed and on the learner's moves in ``i``.

In round episodes, a round that ends before the learner's first decision in
it (the opponent scores on its first turn and stops) is played through and is
no episode of the learner's (counted in :attr:`SoloVectorEnv.skipped`), as in
the Gymnasium environment. In match episodes such a round is part of the
learner's match: its points count in the learner's next reward, and only a
whole match that ends without a decision of the learner's is skipped.

>>> env = SoloVectorEnv(4, "nintendo", seed=1)
>>> obs = env.reset()
>>> obs.shape, env.action_masks().shape, bool((env.env.players == 0).all())
((4, 540), (4, 2450), True)
>>> obs, rewards, dones = env.step(env.sample_actions())
>>> rewards.dtype.name, dones.dtype.name
('float32', 'bool')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from koikoi.envs.vector import VectorEnv
from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    NUM_ACTIONS,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
)
from koikoi.game.cards import Card
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules

__all__ = ["ACTION_SPACES", "LEARNER", "PLAYABLE_IDS", "Opponent", "SoloVectorEnv"]

LEARNER: Final = 0
"""The learner's seat in every environment."""

Opponent = Callable[
    [npt.NDArray[np.float32], npt.NDArray[np.int16], npt.NDArray[np.int16]],
    npt.ArrayLike,
]
"""A batched opponent: (observations, legal ids, legal counts) of its rows -> action ids."""

ACTION_SPACES: Final = ("dense", "playable")
"""The action spaces of :class:`SoloVectorEnv`."""


def _playable_ids() -> npt.NDArray[np.int64]:
    ids = list(range(PLAY_TARGET_BASE))  # Play(c)
    for c in Card:
        for t in Card:
            if t != c and (c.month == t.month or c is Card.WILLOW_LIGHTNING):
                ids.append(PLAY_TARGET_BASE + 48 * c + t)
    ids += range(DISCARD_BASE, DISCARD_BASE + 48)
    ids += range(TAKE_BASE, TAKE_BASE + 48)
    ids += [KOIKOI_ID, STOP_ID]
    return np.array(ids, dtype=np.int64)


PLAYABLE_IDS: Final = _playable_ids()
"""The action ids that can be legal under some rules, ascending (334 of the 2,450):
``Play(c, t)`` only with ``t`` of ``c``'s month, or ``c`` the wild Lightning."""

_OPTIONS: Final = frozenset({"dealer", "round_number", "episode", "match_scores"})


class SoloVectorEnv:
    """``n`` environments of :class:`~koikoi.envs.vector.VectorEnv`, the learner at
    player 0 against a fixed opponent (see the module docs).

    Args:
        n: the number of environments (1 or more).
        rules: a preset name, a house-rules file, or a :class:`~koikoi.game.rules.Rules`.
        seed: seeds the deals and the random opponent.
        opponent: ``"random"`` or a batched function (:data:`Opponent`).
        actions: ``"dense"`` (the 2,450 action ids) or ``"playable"`` (indices
            into :data:`PLAYABLE_IDS`).
        **options: ``dealer``, ``round_number``, ``episode`` or ``match_scores``,
            passed to :class:`~koikoi.envs.vector.VectorEnv`.

    Raises:
        InvalidInputError: a bad argument (the message names it and what is allowed).
    """

    def __init__(
        self,
        n: int,
        rules: str | Rules = "nintendo",
        seed: int = 0,
        *,
        opponent: str | Opponent = "random",
        actions: str = "dense",
        **options: Any,
    ) -> None:
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise InvalidInputError(
                f"unknown option {', '.join(unknown)}: SoloVectorEnv takes "
                f"{', '.join(sorted(_OPTIONS))}"
            )
        if opponent != "random" and not callable(opponent):
            raise InvalidInputError(
                f"opponent must be 'random' or a function (observations, legal_ids, "
                f"legal_counts) -> action ids, not {opponent!r}"
            )
        if actions not in ACTION_SPACES:
            raise InvalidInputError(f"actions must be 'dense' or 'playable', not {actions!r}")
        self.env = VectorEnv(n, rules, seed, **options)
        self.actions = actions
        self.action_ids: npt.NDArray[np.int64] = (
            np.arange(NUM_ACTIONS, dtype=np.int64) if actions == "dense" else PLAYABLE_IDS
        )
        """The action id of each action of the space."""
        self._index = np.full(NUM_ACTIONS + 1, -1, dtype=np.int64)  # [-1]: padding
        self._index[self.action_ids] = np.arange(len(self.action_ids))
        self.num_envs = n
        self.opponent = opponent
        self.skipped = 0
        """Episodes that ended before the learner's first decision in them, since the
        reset: rounds in round episodes, whole matches in match episodes."""
        self._ready = False
        self._actions = np.zeros(n, dtype=np.int64)
        self._rewards = np.zeros(n, dtype=np.float32)
        self._dones = np.zeros(n, dtype=np.bool_)
        self._carry = np.zeros(n, dtype=np.float32)
        self._masks = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self._small = np.zeros((n, len(self.action_ids)), dtype=np.bool_)
        self._rows = np.repeat(np.arange(n), self.env.legal_ids.shape[1]).reshape(n, -1)

    @property
    def observation_size(self) -> int:
        """The length of an observation (:data:`koikoi.kernel.encoding.SIZE`)."""
        return self.env.observation_size

    @property
    def num_actions(self) -> int:
        """The size of the action space (2,450, or 334 for ``"playable"``)."""
        return len(self.action_ids)

    def reset(self, seed: int | None = None) -> npt.NDArray[np.float32]:
        """Deal a new episode everywhere and play to the learner's first turn.

        Returns:
            The learner's observations (a copy).
        """
        out = self.env.reset(seed)
        self._carry[:] = 0.0
        self._rewards[:] = 0.0
        self._dones[:] = False
        self.skipped = 0
        self._ready = True
        # Every episode is new: what the opponent's opening turns score goes to the
        # learner's first reward (match episodes), a round they end is skipped.
        self._opponent_turns(np.ones(self.num_envs, dtype=np.bool_))
        return out.observations.copy()

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Play the learner's moves, then the opponent's until the learner is to act again.

        Args:
            actions: ``n`` legal actions, one per environment: action ids, or with
                ``actions="playable"`` indices into :data:`PLAYABLE_IDS`.

        Returns:
            ``(observations, rewards, dones)``, copies (see the module docs).

        Raises:
            InvalidInputError: before :meth:`reset`, ``actions`` is not ``n`` integers,
                or an index is outside the action space.
            IllegalActionError: an action is not legal (nothing changed; the message
                names the environment, the action id and the legal ones).
        """
        if not self._ready:
            raise InvalidInputError("call reset() before step()")
        if self.actions == "playable":
            arr = np.asarray(actions)
            if arr.shape != (self.num_envs,) or (arr.dtype.kind not in "iu" and arr.size):
                raise InvalidInputError(
                    f"actions must be {self.num_envs} integer indices (one per environment), "
                    f"not an array of {arr.dtype} with shape {arr.shape}"
                )
            size = len(self.action_ids)
            if arr.size and (arr.min() < 0 or arr.max() >= size):
                bad = int(arr[(arr < 0) | (arr >= size)][0])
                raise InvalidInputError(
                    f"action index {bad} out of range: allowed 0 to {size - 1} "
                    "(indices into PLAYABLE_IDS)"
                )
            actions = self.action_ids[arr]
        out = self.env.step(actions)
        np.subtract(out.rewards[:, LEARNER], out.rewards[:, 1 - LEARNER], out=self._rewards)
        self._rewards += self._carry
        self._carry[:] = 0.0
        np.copyto(self._dones, out.dones)
        self._opponent_turns(self._dones.copy())
        return out.observations.copy(), self._rewards.copy(), self._dones.copy()

    def _opponent_turns(self, ended: npt.NDArray[np.bool_]) -> None:
        """Step the environments where the opponent is to act until none is left.

        ``ended``: the environments whose episode already ended in this step;
        points after that go to the next episode (``_carry``).
        """
        env = self.env
        players = env.players
        while True:
            theirs = players != LEARNER
            if not theirs.any():
                return
            mixed = not theirs.all()
            snapshot = env.save() if mixed else None
            actions = self._opponent_actions(theirs)
            out = env.step(actions)
            net = out.rewards[:, LEARNER] - out.rewards[:, 1 - LEARNER]
            done = out.dones & theirs
            before = theirs & ~ended
            self._rewards[before] += net[before]
            self._dones[before] |= done[before]
            after = theirs & ended
            self._carry[after] += net[after]
            again = after & done  # a whole episode without a learner's decision
            self._carry[again] = 0.0
            self.skipped += int(np.count_nonzero(again))
            ended |= done
            if snapshot is not None:
                env.restore(snapshot, rows=~theirs)

    def _opponent_actions(self, theirs: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """The opponent's moves where ``theirs``; elsewhere a legal placeholder."""
        env = self.env
        if isinstance(self.opponent, str):
            return env.sample_actions(self._actions)
        actions = self._actions
        actions[:] = env.legal_ids[:, 0]
        rows = np.flatnonzero(theirs)
        chosen = np.asarray(
            self.opponent(env.observations[rows], env.legal_ids[rows], env.legal_counts[rows])
        )
        if chosen.shape != rows.shape or (chosen.dtype.kind not in "iu" and chosen.size):
            raise InvalidInputError(
                f"the opponent must return {rows.size} integer action ids (one per row given), "
                f"not an array of {chosen.dtype} with shape {chosen.shape}"
            )
        actions[rows] = chosen
        return actions

    def sample_actions(self) -> npt.NDArray[np.int64]:
        """A uniformly random legal action per environment, for the learner (a new array
        of actions of this env's space)."""
        if not self._ready:
            raise InvalidInputError("call reset() before sample_actions()")
        ids = self.env.sample_actions()
        return ids.copy() if self.actions == "dense" else self._index[ids]

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learner's legal-action masks (bool, n x the size of the action space;
        overwritten by the next call)."""
        if not self._ready:
            raise InvalidInputError("call reset() before action_masks()")
        if self.actions == "dense":
            return self.env.action_masks(self._masks).view(np.bool_)
        env = self.env
        index = self._index[env.legal_ids]  # padding (-1) indexes the -1 at the end
        valid = index >= 0
        if np.count_nonzero(valid) != int(env.legal_counts.sum()):  # pragma: no cover
            raise RuntimeError("a legal action id outside PLAYABLE_IDS: update PLAYABLE_IDS")
        small = self._small
        small[:] = False
        small[self._rows[valid], index[valid]] = True
        return small
