"""Expert iteration (ExIt): a policy network trained to predict ``expert``'s own choices.

Self-play games of a search agent (by default ``expert:iterations=1000``
against itself, one-round matches) give positions, each from the deciding
player's own view (:func:`koikoi.game.views.view_of`: no hidden card), with
the search's value of every legal action (its public
:meth:`~koikoi.agents.mcts.MCTSAgent.evaluate_detail`) and its choice (the
action it values most). Only decisions between card plays and drawn-card
targets with two or more legal actions and more than
:data:`~koikoi.agents.expert.ENDGAME_CARDS` hand cards in all are kept: those
are the decisions where ``expert``'s prior is used.

The network is a :class:`koikoi.agents.learned.QNet` read as a policy (a
softmax of its scores over the legal actions, as :mod:`koikoi.lab.ppo` reads
it), trained by cross-entropy to the search's choice (``target="choice"``)
or to a softmax of the search's values at a temperature (``target="values"``).
Its log-probabilities are what ``expert:guide=policy`` adds to the search as a
prior (:mod:`koikoi.agents.expert`). ``scripts/expert-iteration.py`` makes the
data and the weights; the figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import copy
import functools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from koikoi.agents.base import make_agent
from koikoi.agents.expert import ENDGAME_CARDS
from koikoi.agents.heuristic import HeuristicAgent
from koikoi.agents.learned import QNet, action_features
from koikoi.game.engine import Match, Phase
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import get_rules, rules_from_dict
from koikoi.game.views import PlayerView, view_of
from koikoi.kernel import encoding
from koikoi.lab.dmc import _Adam, backprop
from koikoi.lab.ppo import _flatten, _log_softmax

__all__ = [
    "MAX_ACTIONS",
    "TARGETS",
    "Dataset",
    "agreement",
    "generate",
    "labelled",
    "merge",
    "spread",
    "train_policy",
]

Array = npt.NDArray[np.float32]

MAX_ACTIONS: Final = 32
"""Room for legal actions a position (card plays have far fewer)."""
TARGETS: Final[tuple[str, ...]] = ("choice", "values")
"""What the network learns: the search's choice, or a softmax of its values."""
GAME_SEED_STRIDE: Final = 1_000_003
"""Game ``g`` of rule set ``k`` under seed ``s`` is dealt with seed
``s * GAME_SEED_STRIDE + 10_000 * k + g`` (far from the regret screen's deals)."""


@dataclass
class Dataset:
    """Labelled positions: the player's encoding, the legal actions (padded with -1),
    the search's net round points of each (NaN in the padding) and its choice."""

    obs: Array
    legal: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    values: Array
    choice: npt.NDArray[np.int64]
    game: npt.NDArray[np.int64]
    """Which game (of the generation run) each position comes from, for a split by game."""

    def __len__(self) -> int:
        return len(self.choice)

    def subset(self, rows: npt.NDArray[Any]) -> Dataset:
        """The positions ``rows``."""
        return Dataset(
            self.obs[rows],
            self.legal[rows],
            self.counts[rows],
            self.values[rows],
            self.choice[rows],
            self.game[rows],
        )

    def save(self, path: str) -> None:
        """Write the arrays to an ``.npz`` file."""
        np.savez_compressed(path, **self.__dict__)

    @classmethod
    def load(cls, path: str) -> Dataset:
        """Read a file written by :meth:`save`."""
        with np.load(path) as f:
            return cls(**{k: f[k] for k in cls.__dataclass_fields__})


def merge(parts: Sequence[Dataset]) -> Dataset:
    """One dataset of ``parts``, in order."""
    return Dataset(
        *(np.concatenate([getattr(p, k) for p in parts]) for k in Dataset.__dataclass_fields__)
    )


def labelled(view: PlayerView) -> bool:
    """Whether a decision is one the dataset keeps (see the module docs)."""
    return (
        view.phase is not Phase.DECIDE
        and len(view.legal_ids) > 1
        and sum(view.hand_counts) > ENDGAME_CARDS
    )


def generate(
    games: int,
    *,
    seed: int,
    rules: Sequence[str] = ("nintendo", "koikoi-japan"),
    agent: str = "expert:iterations=1000",
    first: int = 0,
) -> Dataset:
    """Self-play one-round matches of ``agent`` and label its card-play decisions.

    ``games`` matches under each rule set of ``rules`` (game numbers ``first`` to
    ``first + games - 1``, so that runs can be split and merged). Every
    decision of both players is made by the search; the kept ones record the
    deciding player's view and the search's values.

    Raises:
        InvalidInputError: ``games`` below 1, or an agent that does not report
            its values (``evaluate_detail``).
    """
    if games < 1:
        raise InvalidInputError(f"games must be 1 or more, not {games!r}")
    player = make_agent(agent)
    detail = getattr(player, "evaluate_detail", None)
    if detail is None:
        raise InvalidInputError(f"{agent}: needs an agent that reports its values (expert, mcts)")
    obs: list[Array] = []
    legal: list[npt.NDArray[np.int64]] = []
    values: list[Array] = []
    choice: list[int] = []
    game_of: list[int] = []
    for k, name in enumerate(rules):
        one_round = rules_from_dict({"game": {"rounds": 1}}, base=get_rules(name))
        for g in range(first, first + games):
            deal = seed * GAME_SEED_STRIDE + 10_000 * k + g
            m = Match(one_round, seed=deal)
            rng = random.Random(deal)
            while not m.is_over:
                v = view_of(m, m.current)
                if len(v.legal_ids) == 1:
                    m.apply_id(v.legal_ids[0])
                    continue
                found = detail(v, rng)
                ids = list(v.legal_ids)
                best = max(ids, key=lambda a: (found[a].key, found[a].points))
                if labelled(v):
                    if len(ids) > MAX_ACTIONS:  # pragma: no cover - no such position
                        raise RuntimeError(f"{len(ids)} legal actions, room for {MAX_ACTIONS}")
                    row_ids = np.full(MAX_ACTIONS, -1, dtype=np.int64)
                    row_ids[: len(ids)] = ids
                    row_values = np.full(MAX_ACTIONS, np.nan, dtype=np.float32)
                    row_values[: len(ids)] = [found[a].points for a in ids]
                    obs.append(encoding.encode(v))
                    legal.append(row_ids)
                    values.append(row_values)
                    choice.append(ids.index(best))
                    game_of.append(10_000 * k + g)
                m.apply_id(best)
    legal_arr = np.array(legal, dtype=np.int64).reshape(-1, MAX_ACTIONS)
    return Dataset(
        np.array(obs, dtype=np.float32).reshape(-1, encoding.SIZE),
        legal_arr,
        (legal_arr >= 0).sum(axis=1).astype(np.int64),
        np.array(values, dtype=np.float32).reshape(-1, MAX_ACTIONS),
        np.array(choice, dtype=np.int64),
        np.array(game_of, dtype=np.int64),
    )


def _targets(
    data: Dataset, target: str, temperature: float, starts: npt.NDArray[np.int64]
) -> Array:
    """The target distribution over the legal actions, flattened."""
    valid = np.arange(MAX_ACTIONS)[None, :] < data.counts[:, None]
    if target == "choice":
        out = np.zeros(int(data.counts.sum()), dtype=np.float32)
        out[starts + data.choice] = 1.0
        return out
    v = np.where(valid, data.values, -np.inf) / temperature
    v = v - v.max(axis=1, keepdims=True)
    e = np.exp(v)
    p = e / e.sum(axis=1, keepdims=True)
    flat: Array = p[valid].astype(np.float32)
    return flat


def train_policy(
    data: Dataset,
    *,
    seed: int,
    target: str = "choice",
    temperature: float = 0.5,
    hidden: Sequence[int] = (128, 64),
    epochs: int = 30,
    minibatch: int = 256,
    lr: float = 1e-3,
    clip: float = 5.0,
    start: QNet | None = None,
) -> tuple[QNet, list[float]]:
    """A policy network trained by cross-entropy to ``data``'s targets.

    Args:
        target: ``"choice"`` (the search's choice) or ``"values"`` (a softmax of
            its values divided by ``temperature``, in points).
        start: a network to start from (a copy is trained; ``hidden`` is then
            its own), e.g. the shipped Deep Monte-Carlo network; None: a fresh
            one seeded by ``seed``.

    Returns:
        The network and the mean loss of each epoch.

    Raises:
        InvalidInputError: an unknown target, a temperature not above 0, or no data.
    """
    if target not in TARGETS:
        raise InvalidInputError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    if not temperature > 0:
        raise InvalidInputError(f"temperature must be above 0, not {temperature!r}")
    if len(data) == 0 or epochs < 1 or minibatch < 1:
        raise InvalidInputError("training needs positions, 1 or more epochs and minibatch")
    net = QNet.create(hidden=hidden, seed=seed) if start is None else copy.deepcopy(start)
    net.meta["algorithm"] = "expert-iteration"
    opt = _Adam(net.params(), lr)
    rng = np.random.default_rng(seed)
    curve: list[float] = []
    for _ in range(epochs):
        order = rng.permutation(len(data))
        losses = []
        for b in range(0, len(data), minibatch):
            part = data.subset(order[b : b + minibatch])
            ids, starts, rows = _flatten(part.legal, part.counts)
            goal = _targets(part, target, temperature, starts)
            loss_fn = functools.partial(_cross_entropy, starts=starts, rows=rows, goal=goal)
            loss, grads = backprop(
                net, part.obs, rows, action_features(part.obs[rows], ids), loss_fn
            )
            opt.step(grads, clip)
            losses.append(loss)
        curve.append(float(np.mean(losses)))
    return net, curve


def _cross_entropy(
    logits: Array, *, starts: npt.NDArray[np.int64], rows: npt.NDArray[np.int64], goal: Array
) -> tuple[float, Array]:
    """The mean cross-entropy of the positions' softmax to ``goal`` and its gradient by logit."""
    m = len(starts)
    logp = _log_softmax(logits, starts, rows)
    loss = float(-(goal * logp).sum() / m)
    return loss, ((np.exp(logp) - goal) / m).astype(np.float32)


def agreement(net: QNet, data: Dataset) -> tuple[float, float]:
    """How often ``net``'s most likely action is the search's choice, and the mean
    regret of that action by the search's own values (points a decision)."""
    if len(data) == 0:
        raise InvalidInputError("agreement needs positions")
    ids, starts, rows = _flatten(data.legal, data.counts)
    q = net.q(data.obs, rows, action_features(data.obs[rows], ids))
    hits = 0
    regret = 0.0
    for i, s in enumerate(starts):
        n = int(data.counts[i])
        pick = int(np.argmax(q[s : s + n]))
        hits += pick == data.choice[i]
        regret += float(np.nanmax(data.values[i]) - data.values[i, pick])
    return hits / len(data), regret / len(data)


def spread(net: QNet, *, games: int = 100, seed: int = 31) -> tuple[float, float, int]:
    """How far apart the heuristic's and ``net``'s values of card plays lie.

    On the card plays (two legal actions or more, not koi-koi decisions) of
    ``games`` one-round nintendo matches of ``heuristic`` against itself: the
    root mean square of the heuristic's centred values (points) and of the
    network's centred log-probabilities, and the number of positions. The
    first over the second is the scale that makes a prior weight move the
    search's points as much with either guide.
    """
    player = HeuristicAgent()
    rules = rules_from_dict({"game": {"rounds": 1}}, base=get_rules("nintendo"))
    sq_h = sq_p = 0.0
    n = 0
    for g in range(games):
        m = Match(rules, seed=seed * GAME_SEED_STRIDE + g)
        rng = random.Random(g)
        while not m.is_over:
            v = view_of(m, m.current)
            if v.phase is not Phase.DECIDE and len(v.legal_ids) > 1:
                sq_h += _centred_square(player.evaluate(v))
                sq_p += _centred_square(net.log_policy(v))
                n += 1
            m.apply_id(player.act(v, rng))
    return math.sqrt(sq_h / n), math.sqrt(sq_p / n), n


def _centred_square(values: dict[int, float]) -> float:
    """The mean square of ``values`` less their mean."""
    mean = sum(values.values()) / len(values)
    return sum((x - mean) ** 2 for x in values.values()) / len(values)
