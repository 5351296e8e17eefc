"""Opponent-hand inference: re-deals weighted by how likely they make the opponent's plays.

A searching player re-deals the cards it cannot see many times a decision.
Uniform re-deals ignore what the opponent's own plays this round said about
their hand. This module weighs each candidate hand by the probability that it
would have produced the plays the opponent actually made, under a simple model
of how people and programs choose a card (:class:`PlayModel`): uniform re-deals
are the exact prior, and :func:`opponent_hands` samples the posterior.

The model: at each of their hand plays this round, the opponent chose card
``x`` of the hand they held then with probability proportional to
``exp(value(x) / temperature)``, where ``value`` is the greedy value of playing
``x`` on the field as it was (the cards it captures, by kind: Bright 20, Animal
10, Ribbon 5, Plain 1, plus ``capture_bonus`` for any capture; minus the card's
own value when it is laid). A hand that held a big capture the opponent did not
take, or any capture when they laid a card, is unlikely, not impossible.

Their hand then was their hand now plus the cards they played since, so every
past play gives a factor that depends on the candidate hand only through a sum
over its cards: swapping one card of a candidate changes each sum by two terms.

Everything here is public: the round's plays with the field each was made on
(:attr:`~koikoi.game.views.PlayerView.plays`) and the cards this player cannot see.
A view without them (one built from a position) gets no hand pool, and the
search falls back to the :attr:`~koikoi.game.views.PlayerView.declined` months.

>>> import random
>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> m = Match(seed=3)
>>> for _ in range(4):
...     m.apply(m.legal_ids()[0])
>>> v = view_of(m, m.current)
>>> pool = opponent_hands(v, random.Random(1), 64)
>>> pool is not None and all(h & ~v.unseen == 0 for h in pool)
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from koikoi.game.cards import card_list
from koikoi.game.engine import CARD_MONTH_MASK
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView
from koikoi.kernel.policy import CARD_VALUES, SOFT_CAPTURE_BONUS, SOFT_TEMPERATURE

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_MODEL",
    "PastPlay",
    "PlayModel",
    "log_weights",
    "opponent_hands",
    "past_plays",
    "play_value",
]

CHAINS: Final = 64
"""Metropolis chains run side by side per decision."""
BURN_IN: Final = 60
"""Steps of each chain before its first kept hand."""
THIN: Final = 4
"""Steps between two kept hands of a chain."""


@dataclass(frozen=True)
class PlayModel:
    """How the opponent is assumed to choose the card they play.

    ``temperature`` scales the greedy values (smaller: the opponent is assumed
    to play more greedily); ``capture_bonus`` is added to the value of every
    capture, so that a lay while holding a match is unlikely; ``noise`` is the
    chance of a choice made uniformly at random instead (a floor under every
    card's chance).
    """

    temperature: float = SOFT_TEMPERATURE
    capture_bonus: float = float(SOFT_CAPTURE_BONUS)
    noise: float = 0.0

    def __post_init__(self) -> None:
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise InvalidInputError(
                f"play model: temperature must be above 0, not {self.temperature!r}"
            )
        if not 0.0 <= self.noise < 1.0:
            raise InvalidInputError(
                f"play model: noise must be from 0 to below 1, not {self.noise!r}"
            )
        if not math.isfinite(self.capture_bonus):
            raise InvalidInputError(
                f"play model: capture_bonus must be a number, not {self.capture_bonus!r}"
            )


DEFAULT_MODEL: Final = PlayModel()
"""Fitted by maximum likelihood on the plays of the heuristic, the search players and
people, a compromise between the three (docs/agents.md, "Inference from plays")."""


def play_value(field: int, card: int, model: PlayModel = DEFAULT_MODEL) -> float:
    """The greedy value of playing ``card`` from the hand onto ``field``."""
    month = field & CARD_MONTH_MASK[card]
    if not month:
        return -float(CARD_VALUES[card])
    targets = [CARD_VALUES[c] for c in card_list(month)]
    taken = sum(targets) if len(targets) == 3 else max(targets)
    return float(CARD_VALUES[card] + taken) + model.capture_bonus


@dataclass(frozen=True)
class PastPlay:
    """One hand play of a player this round: the field before it, the card, and the
    cards that player played from hand after it (known to have been in hand then)."""

    field: int
    card: int
    later: int


def past_plays(view: PlayerView, player: int) -> list[PastPlay]:
    """``player``'s hand plays this round (:attr:`PlayerView.plays`), each with the cards
    they played after it."""
    mine = [(card, field) for who, card, field in view.plays if who == player]
    out: list[PastPlay] = []
    later = 0
    for card, field in reversed(mine):
        later |= 1 << card
        out.append(PastPlay(field, card, later))
    out.reverse()
    return out


@dataclass(frozen=True)
class _Factor:
    """One past play's factor of the likelihood, ``chosen / (known + sum of hand terms)
    + floor``: ``known`` sums the softmax terms of the cards known to be in hand then,
    ``terms`` has the term of each unseen card."""

    known: float
    terms: list[float]
    chosen: float
    floor: float

    def log(self, total: float) -> float:
        return math.log(self.chosen / total + self.floor)


def _factors(
    plays: Sequence[PastPlay], unseen: Sequence[int], hand_size: int, model: PlayModel
) -> list[_Factor]:
    """The likelihood's factor of each past play, for candidate hands of ``hand_size``
    cards (the floor is ``noise`` over the number of cards held then)."""
    t = model.temperature
    out = []
    for p in plays:
        later = card_list(p.later)
        known = math.fsum(math.exp(play_value(p.field, c, model) / t) for c in later)
        terms = [math.exp(play_value(p.field, c, model) / t) for c in unseen]
        chosen = (1 - model.noise) * math.exp(play_value(p.field, p.card, model) / t)
        out.append(_Factor(known, terms, chosen, model.noise / (len(later) + hand_size)))
    return out


def log_weights(
    plays: Sequence[PastPlay],
    unseen: Sequence[int],
    hands: Sequence[Sequence[int]],
    model: PlayModel = DEFAULT_MODEL,
) -> list[float]:
    """The log-likelihood of each candidate hand (indices into ``unseen``, all of one
    size) under ``model``: over the past plays, the log of the chance of the card
    played, from the hand held then (the candidate and the cards played since)."""
    if not hands:
        return []
    factors = _factors(plays, unseen, len(hands[0]), model)
    out = [0.0] * len(hands)
    for f in factors:
        for i, h in enumerate(hands):
            out[i] += f.log(f.known + math.fsum(f.terms[j] for j in h))
    return out


def opponent_hands(
    view: PlayerView,
    rng: random.Random,
    n: int,
    *,
    model: PlayModel = DEFAULT_MODEL,
) -> list[int] | None:
    """``n`` opponent hands (card masks) drawn from the posterior given their plays, or
    None when there is nothing to infer from (no play of theirs in the view).

    The posterior is sampled by Metropolis chains (:data:`CHAINS` of them, or
    fewer for a small ``n``): each starts from a uniform re-deal, and each step
    proposes to swap one card of the hand for one unseen card outside it, accepted
    with the ratio of the two hands' likelihoods (:func:`log_weights`). After
    :data:`BURN_IN` steps, every :data:`THIN`-th hand is kept. Importance weights
    over uniform re-deals would not do: one lay over a full field leaves a handful
    of likely hands among millions. Uses numpy when it is installed.
    """
    if view.player is None:
        raise InvalidInputError("a spectator's view has no opponent to infer")
    if n < 1:
        raise InvalidInputError(f"the number of hands must be 1 or more, not {n}")
    opp = view.opponent
    k = view.hand_counts[opp]
    if k == 0:
        return None
    plays = past_plays(view, opp)
    if not plays:
        return None
    unseen = card_list(view.unseen)
    if len(unseen) <= k:
        return None  # every unseen card is in their hand: nothing to choose
    factors = _factors(plays, unseen, k, model)
    chains = min(CHAINS, n)
    per_chain = -(-n // chains)
    try:
        import numpy as np  # noqa: F401 - only whether it is there
    except ImportError:  # numpy is a dependency; a broken install falls back
        hands = _chains_python(rng, _Chains(len(unseen), k, factors, chains, per_chain))
    else:
        hands = _chains_numpy(rng, _Chains(len(unseen), k, factors, chains, per_chain))
    out = []
    for h in hands[:n]:
        mask = 0
        for j in h:
            mask |= 1 << unseen[j]
        out.append(mask)
    return out


@dataclass(frozen=True)
class _Chains:
    """What the chains of :func:`opponent_hands` run on: ``u`` unseen cards, hands of
    ``k``, the likelihood's factors, ``count`` chains keeping ``per_chain`` hands each."""

    u: int
    k: int
    factors: list[_Factor]
    count: int
    per_chain: int


def _chains_python(rng: random.Random, job: _Chains) -> list[list[int]]:
    """The Metropolis chains of :func:`opponent_hands`, one at a time (no numpy)."""
    u, k, factors, per_chain = job.u, job.k, job.factors, job.per_chain
    out: list[list[int]] = []
    for _ in range(job.count):
        hand = rng.sample(range(u), k)
        inside = [False] * u
        for j in hand:
            inside[j] = True
        sums = [f.known + math.fsum(f.terms[j] for j in hand) for f in factors]
        logs = math.fsum(f.log(x) for f, x in zip(factors, sums, strict=True))
        kept = 0
        step = 0
        while kept < per_chain:
            i = rng.randrange(k)
            j = rng.randrange(u)
            if not inside[j]:
                old = hand[i]
                new = [x - f.terms[old] + f.terms[j] for x, f in zip(sums, factors, strict=True)]
                new_logs = math.fsum(f.log(x) for f, x in zip(factors, new, strict=True))
                ratio = new_logs - logs
                if ratio >= 0 or rng.random() < math.exp(ratio):
                    hand[i] = j
                    inside[old], inside[j] = False, True
                    sums, logs = new, new_logs
            step += 1
            if step > BURN_IN and (step - BURN_IN) % THIN == 0:
                out.append(list(hand))
                kept += 1
    return out


def _chains_numpy(rng: random.Random, job: _Chains) -> list[list[int]]:
    """The Metropolis chains of :func:`opponent_hands`, all chains a step at a time."""
    import numpy as np

    u, k, factors, chains = job.u, job.k, job.factors, job.count

    gen = np.random.default_rng(rng.getrandbits(63))
    e = np.array([f.terms for f in factors], dtype=np.float64)  # plays x unseen
    known = np.array([f.known for f in factors], dtype=np.float64)
    chosen = np.array([f.chosen for f in factors], dtype=np.float64)
    floor = np.array([f.floor for f in factors], dtype=np.float64)

    def loglik(sums: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = np.log(chosen / sums + floor).sum(axis=1)
        return out

    hands = np.argsort(gen.random((chains, u)), axis=1)[:, :k]
    inside = np.zeros((chains, u), dtype=bool)
    rows = np.arange(chains)
    inside[rows[:, None], hands] = True
    sums = known[None, :] + e[:, hands].sum(axis=2).T  # chains x plays
    logs = loglik(sums)
    steps = BURN_IN + THIN * job.per_chain
    outs = gen.integers(0, k, size=(steps, chains))
    ins = gen.integers(0, u, size=(steps, chains))
    coins = np.log(gen.random((steps, chains)))
    kept = []
    for step in range(steps):
        i = outs[step]
        j = ins[step]
        old = hands[rows, i]
        new_sums = sums - e[:, old].T + e[:, j].T
        new_logs = loglik(new_sums)
        accept = ~inside[rows, j] & (coins[step] < new_logs - logs)
        if accept.any():
            a = rows[accept]
            inside[a, old[accept]] = False
            inside[a, j[accept]] = True
            hands[a, i[accept]] = j[accept]
            sums[accept] = new_sums[accept]
            logs[accept] = new_logs[accept]
        if step + 1 > BURN_IN and (step + 1 - BURN_IN) % THIN == 0:
            kept.append(hands.copy())
    # Interleave the chains so that the first hands come from every chain.
    return [[int(x) for x in h[c]] for h in kept for c in range(chains)]
