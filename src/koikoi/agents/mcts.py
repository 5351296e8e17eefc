"""A search player: determinized Monte Carlo evaluation (PIMC) of every legal action.

:class:`MCTSAgent` sees only its :class:`~koikoi.views.PlayerView`. Each
iteration re-deals the cards it cannot see (:func:`koikoi.views.determinize`:
the opponent's hand and the stock, uniformly among the unseen cards), then
evaluates **every** legal action on that same deal: it applies the action to a
copy of the round and plays the rest of the round out ``rollouts`` times with a
rollout policy for both players. Evaluating all actions on the same deals (and
with the same rollout seed) compares them under identical luck, which removes
most of the noise. The value of an action is the mean round value for the
acting player: the points it wins minus the points the opponent wins this
round (under ``opponent_x2`` the loser scores nothing, so this is exactly the
stake). A stop is valued exactly, without rollouts.

It covers the three decisions (a hand card and its target, the target of a
drawn card, koi-koi or stop) and every rule set: the rules come with the view,
and the rollouts play them through the engine (or the compiled kernel, which
encodes every round-level option).

Playouts use the compiled kernel (:mod:`koikoi.agents.kernel`, numba) when it
is available, else a pure-Python rollout on :meth:`~koikoi.engine.Round.clone`.
The ``greedy`` rollout policy (capture the most card value, stop at once) makes
a much stronger player than uniformly random rollouts (see docs/agents.md).

Budget: ``iterations=N`` (deterministic given the injected random generator),
``time=SECONDS`` (the clock is checked after every playout batch; a decision
never overruns by more than one batch), or both (whichever ends first). The
compiled kernel is loaded before the clock starts on the first decision.

>>> import random
>>> from koikoi.engine import Match
>>> from koikoi.views import view_of
>>> m = Match(seed=4)
>>> agent = MCTSAgent(iterations=4, rollouts=4)
>>> agent.act(view_of(m, m.current), random.Random(0)) in m.legal_ids()
True
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Final

from koikoi.actions import DISCARD_BASE, KOIKOI_ID, PLAY_TARGET_BASE, STOP_ID, TAKE_BASE
from koikoi.agents.base import card_value
from koikoi.cards import MONTH_MASKS
from koikoi.engine import Phase, Round
from koikoi.errors import InvalidInputError
from koikoi.rules import Rules
from koikoi.scoring import Scorer
from koikoi.views import PlayerView, determinize

__all__ = ["POLICIES", "MCTSAgent", "from_spec", "rollout_value"]

POLICIES: Final[tuple[str, ...]] = ("greedy", "yaku", "random")
BACKENDS: Final[tuple[str, ...]] = ("auto", "kernel", "python")
DEFAULT_TIME: Final = 1.0
DEFAULT_ROLLOUTS: Final = 4
PRUNE_AFTER: Final = 16
"""Iterations before an action may be pruned."""
PRUNE_Z: Final = 3.0
"""An action is pruned when its paired difference to the leader is below 0 by this many SEs."""
_CARD_MONTH: Final[tuple[int, ...]] = tuple(MONTH_MASKS[c // 4] for c in range(48))
_VALUE: Final[tuple[int, ...]] = tuple(card_value(c) for c in range(48))

Playouts = Callable[[Round, int, int, str], float]


# ------------------------------------------------------------ pure Python


def _greedy_choice(rnd: Round, ids: list[int], rng: random.Random) -> int:
    """The greedy rollout policy: most captured card value, stop at once, ties at random.

    The same policy, drawing the same random numbers, as the kernel's reference
    engine fallback (and :class:`~koikoi.agents.base.GreedyAgent`'s values).
    """
    if len(ids) == 1:
        return ids[int(rng.random())]
    if KOIKOI_ID in ids:
        return STOP_ID
    field = rnd.field
    best: list[int] = []
    best_value = -(10**9)
    for a in ids:
        if a >= TAKE_BASE:
            v = _VALUE[a - TAKE_BASE]
        elif a >= DISCARD_BASE:  # lay a matching card without capturing
            v = 0
        elif a >= PLAY_TARGET_BASE:
            c, t = divmod(a - PLAY_TARGET_BASE, 48)
            v = _VALUE[c] + _VALUE[t]
        else:
            m = field & _CARD_MONTH[a]
            if m:
                v = _VALUE[a]
                while m:
                    low = m & -m
                    v += _VALUE[low.bit_length() - 1]
                    m ^= low
            else:
                v = -1  # as GreedyAgent: laying any card is worth the same
        if v > best_value:
            best, best_value = [a], v
        elif v == best_value:
            best.append(a)
    return best[int(rng.random() * len(best))]


def _value_for_player0(rnd: Round) -> int:
    s = rnd.settlement
    if s is None or s.winner is None:
        return 0
    return s.points if s.winner == 0 else -s.points


def rollout_value(rnd: Round, n: int, seed: int, policy: str = "greedy") -> float:
    """Mean value for player 0 of ``n`` pure-Python playouts of ``rnd`` (not changed).

    The value of one playout is the settlement's points if player 0 wins the
    round, minus the points if player 1 wins, 0 if nobody scores; the same as
    :func:`koikoi.agents.kernel.playouts`, without numba.
    """
    if policy not in POLICIES:
        raise InvalidInputError(f"unknown rollout policy {policy!r}: allowed {', '.join(POLICIES)}")
    if policy == "yaku":
        from koikoi.agents.kernel import playouts

        return playouts(rnd, n, seed, policy, backend="python") if n else 0.0
    rng = random.Random(seed)
    greedy = policy == "greedy"
    total = 0
    for _ in range(n):
        r = rnd.clone()
        while r.phase is not Phase.OVER:
            ids = r.legal_ids()
            r.apply_id(_greedy_choice(r, ids, rng) if greedy else ids[int(rng.random() * len(ids))])
        total += _value_for_player0(r)
    return total / n if n else 0.0


def _kernel_playouts() -> Playouts | None:
    """The compiled kernel's ``playouts`` when it can be used, else None."""
    try:
        from koikoi.agents import kernel
    except ImportError:  # pragma: no cover - the kernel module ships with the package
        return None
    if not kernel.available():
        return None
    fn: Playouts = kernel.playouts
    return fn


# -------------------------------------------------------------------- agent


class MCTSAgent:
    """Determinized Monte Carlo search over every legal action.

    Args:
        time_limit: seconds per decision (None: no time limit).
        iterations: determinizations per decision (None: no limit). With neither,
            ``time_limit`` is 1 second.
        rollouts: playouts per action and determinization.
        policy: the rollout policy, ``"greedy"`` or ``"random"``.
        backend: ``"auto"`` (the kernel when available), ``"kernel"`` or ``"python"``.
        prune: stop sampling actions that are clearly worse than the best.
    """

    def __init__(
        self,
        *,
        time_limit: float | None = None,
        iterations: int | None = None,
        rollouts: int = DEFAULT_ROLLOUTS,
        policy: str = "greedy",
        backend: str = "auto",
        prune: bool = True,
    ) -> None:
        if time_limit is None and iterations is None:
            time_limit = DEFAULT_TIME
        if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
            raise InvalidInputError(f"mcts: time must be a positive number, not {time_limit!r}")
        if iterations is not None and iterations < 1:
            raise InvalidInputError(f"mcts: iterations must be 1 or more, not {iterations!r}")
        if rollouts < 1:
            raise InvalidInputError(f"mcts: rollouts must be 1 or more, not {rollouts!r}")
        if policy not in POLICIES:
            raise InvalidInputError(
                f"mcts: unknown policy {policy!r}: allowed {', '.join(POLICIES)}"
            )
        if backend not in BACKENDS:
            raise InvalidInputError(
                f"mcts: unknown backend {backend!r}: allowed {', '.join(BACKENDS)}"
            )
        self.time_limit = time_limit
        self.iterations = iterations
        self.rollouts = rollouts
        self.policy = policy
        self.backend = backend
        self.prune = prune
        self._playouts: Playouts | None = None
        self._ready = False
        self._scorers: dict[Rules, Scorer] = {}
        parts = []
        if time_limit is not None:
            parts.append(f"time={time_limit:g}")
        if iterations is not None:
            parts.append(f"iterations={iterations}")
        self.name = "mcts:" + ",".join(parts)

    # ------------------------------------------------------------- set-up

    def _prepare(self) -> None:
        """Pick the playout function and load the kernel (outside any time budget)."""
        if self._ready:
            return
        fn: Playouts | None = None
        if self.backend != "python":
            fn = _kernel_playouts()
            if fn is None and self.backend == "kernel":
                raise InvalidInputError(
                    "mcts: backend=kernel needs numba and numpy: pip install 'koikoi[fast]'"
                )
        if fn is not None:
            from koikoi.engine import Match

            fn(Match(seed=0, events=False).round, 1, 0, self.policy)  # load or compile
            self._playouts = fn
        self._ready = True

    def _scorer(self, rules: Rules) -> Scorer:
        scorer = self._scorers.get(rules)
        if scorer is None:
            scorer = self._scorers[rules] = Scorer(rules)
        return scorer

    @property
    def uses_kernel(self) -> bool:
        """Whether playouts run in the compiled kernel (known after the first decision)."""
        self._prepare()
        return self._playouts is not None

    # ------------------------------------------------------------- search

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if not ids:
            raise InvalidInputError("mcts: no legal action in this view (not our turn)")
        if len(ids) == 1:
            return ids[0]
        values = self._search(view, rng, decide=True)
        best = max(values.values())
        ties = [a for a in ids if values[a] >= best - 1e-9]
        return ties[int(rng.random() * len(ties))] if len(ties) > 1 else ties[0]

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        """The estimated round value (points won minus lost) of every legal action.

        Actions that are clearly worse than the best (see :meth:`act`) get fewer
        samples, so their values are noisier, but every legal action has one.

        Raises:
            InvalidInputError: when it is not this player's turn.
        """
        return self._search(view, rng, decide=False)

    def _search(self, view: PlayerView, rng: random.Random, *, decide: bool) -> dict[int, float]:
        """Sample determinizations until the budget is spent; the mean value per action.

        Every iteration evaluates every *active* action on the same deal with the
        same rollout seed. After :data:`PRUNE_AFTER` iterations an action whose
        paired difference to the leader is below zero by more than
        :data:`PRUNE_Z` standard errors stops being sampled; with ``decide`` the
        search ends when one action is left. At least one iteration is always
        completed; an iteration cut by the clock is dropped.
        """
        ids = list(view.legal_ids)
        if not ids or view.player is None:
            raise InvalidInputError("mcts: no legal action in this view (not our turn)")
        self._prepare()
        start = time.perf_counter()
        deadline = math.inf if self.time_limit is None else start + self.time_limit * 0.98
        max_iter = self.iterations if self.iterations is not None else 1 << 60
        sign = 1 if view.player == 0 else -1
        scorer = self._scorer(view.rules)
        playouts = self._playouts
        n, policy = self.rollouts, self.policy
        k = len(ids)
        active = list(range(k))
        sums = [0.0] * k
        counts = [0] * k
        # Paired differences (row minus column) over the iterations both were sampled.
        d1 = [[0.0] * k for _ in range(k)]
        d2 = [[0.0] * k for _ in range(k)]
        dn = [[0] * k for _ in range(k)]
        clock = time.perf_counter
        done = 0
        values = [0.0] * k
        while done < max_iter:
            det = determinize(view, rng, scorer=scorer)
            seed = rng.getrandbits(62)
            cut = False
            for i in active:
                r = det.clone()
                r.apply_id(ids[i])
                if r.phase is Phase.OVER:
                    value = float(_value_for_player0(r))
                elif playouts is not None:
                    value = playouts(r, n, seed, policy)
                else:
                    value = rollout_value(r, n, seed, policy)
                values[i] = sign * value
                if done and clock() >= deadline:
                    cut = True
                    break
            if cut:
                break
            done += 1
            for x, i in enumerate(active):
                vi = values[i]
                sums[i] += vi
                counts[i] += 1
                row1, row2, rown = d1[i], d2[i], dn[i]
                for j in active[x + 1 :]:
                    diff = vi - values[j]
                    row1[j] += diff
                    row2[j] += diff * diff
                    rown[j] += 1
            if self.prune and done >= PRUNE_AFTER and len(active) > 1:
                active = self._pruned(active, sums, counts, d1, d2, dn)
            if (decide and len(active) == 1) or clock() >= deadline:
                break
        return {ids[i]: (sums[i] / counts[i] if counts[i] else -math.inf) for i in range(k)}

    @staticmethod
    def _pruned(
        active: list[int],
        sums: list[float],
        counts: list[int],
        d1: list[list[float]],
        d2: list[list[float]],
        dn: list[list[int]],
    ) -> list[int]:
        leader = max(active, key=lambda i: sums[i] / counts[i])
        keep = []
        for i in active:
            if i == leader:
                keep.append(i)
                continue
            a, b = (i, leader) if i < leader else (leader, i)
            m = dn[a][b]
            mean = d1[a][b] / m
            var = max(0.0, d2[a][b] / m - mean * mean)
            if a != i:  # the sums hold leader minus i
                mean = -mean
            if mean + PRUNE_Z * math.sqrt(var / m) >= 0.0:
                keep.append(i)
        return keep


_PARAMS: Final = ("time", "iterations", "rollouts", "policy", "backend", "prune")


def _int_param(params: Mapping[str, str], key: str) -> int | None:
    if key not in params:
        return None
    try:
        return int(params[key])
    except ValueError:
        raise InvalidInputError(
            f"mcts: {key} must be a whole number, not {params[key]!r}"
        ) from None


def from_spec(params: Mapping[str, str], raw: str) -> MCTSAgent:
    """Build from ``mcts:time=S,iterations=N,rollouts=4,policy=greedy,backend=auto,prune=1``.

    Every parameter is optional; with neither ``time`` nor ``iterations`` a
    decision takes 1 second.

    Raises:
        InvalidInputError: an unknown parameter or a bad value, naming what is allowed.
    """
    for key in params:
        if key not in _PARAMS:
            raise InvalidInputError(
                f"mcts: unknown parameter {key!r}: allowed {', '.join(_PARAMS)}"
            )
    time_limit: float | None = None
    if "time" in params:
        try:
            time_limit = float(params["time"])
        except ValueError:
            raise InvalidInputError(
                f"mcts: time must be a number of seconds, not {params['time']!r}"
            ) from None
    rollouts = _int_param(params, "rollouts")
    prune = params.get("prune", "1").lower()
    if prune not in ("0", "1", "true", "false", "yes", "no"):
        raise InvalidInputError(f"mcts: prune must be 1 or 0, not {params['prune']!r}")
    return MCTSAgent(
        time_limit=time_limit,
        iterations=_int_param(params, "iterations"),
        rollouts=DEFAULT_ROLLOUTS if rollouts is None else rollouts,
        policy=params.get("policy", "greedy").lower(),
        backend=params.get("backend", "auto").lower(),
        prune=prune in ("1", "true", "yes"),
    )
