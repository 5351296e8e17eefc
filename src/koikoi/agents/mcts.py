"""A search player: determinized Monte Carlo evaluation (PIMC) of every legal action.

:class:`MCTSAgent` sees only its :class:`~koikoi.game.views.PlayerView`. Each
iteration re-deals the cards it cannot see (:func:`koikoi.game.views.determinize`:
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

Playouts run in the compiled kernel (:mod:`koikoi.kernel`, numba; the batches
of :class:`koikoi.agents.search.BatchSearch`).
The ``greedy`` rollout policy (capture the most card value, stop at once) makes
a much stronger player than uniformly random rollouts (see docs/agents.md).

Budget: ``iterations=N`` (deterministic given the injected random generator),
``time=SECONDS`` (the clock is checked after every playout batch; a decision
never overruns by more than one batch), or both (whichever ends first). The
compiled kernel is loaded before the clock starts on the first decision.

>>> import random
>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> m = Match(seed=4)
>>> agent = MCTSAgent(iterations=4, rollouts=4)
>>> agent.act(view_of(m, m.current), random.Random(0)) in m.legal_ids()
True
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, Final

from koikoi import kernel
from koikoi.agents.base import ActionValue
from koikoi.agents.search import BatchSearch
from koikoi.game.engine import Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.scoring import Scorer
from koikoi.game.views import PlayerView, determinize

__all__ = [
    "INFER_MODES",
    "OBJECTIVES",
    "POLICIES",
    "MCTSAgent",
    "MatchUtility",
    "from_spec",
    "rollout_value",
    "rollout_values",
]

POLICIES: Final[tuple[str, ...]] = ("greedy", "yaku", "tactical", "random", "bold", "soft")
BACKENDS: Final[tuple[str, ...]] = ("auto", "kernel")
"""Where playouts run: both name the compiled kernel (the pure-Python rollouts are gone)."""
OBJECTIVES: Final[tuple[str, ...]] = ("match", "round")
DEFAULT_TIME: Final = 1.0
DEFAULT_ROLLOUTS: Final = 4
PRUNE_AFTER: Final = 16
"""Iterations before an action may be pruned."""
PRUNE_Z: Final = 3.0
"""An action is pruned when its paired difference to the leader is below 0 by this many SEs."""
BATCH: Final = 16
"""Iterations per kernel call (the pruning test runs between calls)."""
BATCH_SHARE: Final = 0.01
"""Under a time budget, a kernel call takes at most this share of it."""
POINTS_TIEBREAK: Final = 0.001
"""Under the ``match`` objective, each expected round point adds this much to an action's
equity when choosing, so that actions of (nearly) equal equity are told apart by points."""
DEFAULT_SAMPLES: Final = 8
"""Re-deals of each lookahead choice inside a playout (``samples``)."""
MAX_LOOKAHEAD: Final = 16
MAX_SAMPLES: Final = 1024
INFER_SLACK: Final = 0.1
"""With ``infer``: the share of re-deals that ignore what the opponent's lays suggest."""
INFER_MODES: Final[tuple[str, ...]] = ("off", "lays", "plays")
"""How the opponent's hand is re-dealt: uniformly (``off``); their lays' months last
(``lays``: :attr:`~koikoi.game.views.PlayerView.declined`); or drawn from the posterior
given all their plays this round (``plays``: :mod:`koikoi.agents.inference`)."""
HAND_POOL: Final = 512
"""Opponent hands drawn from the posterior per decision under ``infer=plays``."""

Playouts = Callable[[Round, int, int, str], float]


# ------------------------------------------------------------ playouts


def rollout_values(rnd: Round, n: int, seed: int, policy: str = "greedy") -> list[int]:
    """The value for player 0 of each of ``n`` playouts of ``rnd`` (not changed).

    The value of one playout is the settlement's points if player 0 wins the
    round, minus the points if player 1 wins, 0 if nobody scores; the policies of
    :func:`koikoi.kernel.playouts`, played by the compiled kernel.
    """
    if policy not in POLICIES:
        raise InvalidInputError(f"unknown rollout policy {policy!r}: allowed {', '.join(POLICIES)}")
    values: list[int] = kernel.playout_values(rnd, n, seed, policy).tolist()
    return values


def rollout_value(rnd: Round, n: int, seed: int, policy: str = "greedy") -> float:
    """The mean of :func:`rollout_values` (0.0 for no playout)."""
    values = rollout_values(rnd, n, seed, policy)
    return sum(values) / n if n else 0.0


class MatchUtility:
    """The chance of winning the match after a round that ends with net result ``d``.

    ``d`` is the points the searching player wins minus the points the opponent
    wins this round. The table comes from the rule set's match-equity table
    (:meth:`koikoi.agents.equity.MatchEquity.round_utility`): the lead after the
    round, the rounds still to play, who deals next (which follows the round's
    winner under most rules), busting at 0 under transferred points, and the tie
    rule. Results beyond the table's ends count as its ends.

    >>> u = MatchUtility([0.0, 0.5, 1.0])
    >>> u(-3), u(0), u(1)
    (0.0, 0.5, 1.0)
    """

    __slots__ = ("span", "table")

    def __init__(self, table: Sequence[float]) -> None:
        if len(table) % 2 != 1:
            raise InvalidInputError("a match utility table has 2 * span + 1 values")
        self.table = tuple(float(v) for v in table)
        self.span = (len(table) - 1) // 2

    @classmethod
    def of_view(cls, view: PlayerView, equity: str | None = None) -> MatchUtility | None:
        """The utility for ``view``'s player, or None without match context.

        A view has match context when its match has more than one round; a
        single round is played for its points. ``equity``: a round-outcomes file
        to build the match-equity table from instead of the shipped one
        (:func:`koikoi.agents.equity.outcomes_for`).
        """
        if view.player is None or view.rounds <= 1:
            return None
        from koikoi.agents.equity import match_equity

        me = view.player
        met = match_equity(view.rules, equity)
        return cls(
            met.round_utility(
                own=view.match_scores[me],
                other=view.match_scores[1 - me],
                rounds_left=max(view.rounds - view.round_number, 0),
                i_deal=view.dealer == me,
            )
        )

    def kernel_params(self) -> tuple[float, ...]:
        """The parameters for the compiled kernel's copy: the span, then the table."""
        return (float(self.span), *self.table)

    def __call__(self, d: float) -> float:
        i = int(d) + self.span
        return self.table[0 if i < 0 else min(i, 2 * self.span)]


# -------------------------------------------------------------------- agent


def search_deadline(start: float, limit: float | None) -> float:
    """When a search that began at ``start`` with ``limit`` seconds must stop: 2% of
    the budget, and up to 4 ms more under short budgets, is kept for what follows
    the search (a process that waits for a core overshoots by a time slice)."""
    return math.inf if limit is None else start + limit * 0.98 - min(0.004, 0.06 * limit)


def next_batch(per: float, now: float, limit: float, deadline: float, cap: int) -> int:
    """Iterations for a timed search's next kernel call, at ``per`` seconds each: at
    most :data:`BATCH_SHARE` of the budget ``limit`` and no further than
    ``deadline``, from 1 to ``cap``."""
    return max(1, min(cap, int(min(limit * BATCH_SHARE, deadline - now) / per)))


class MCTSAgent:
    """Determinized Monte Carlo search over every legal action.

    Args:
        time_limit: seconds per decision (None: no time limit).
        iterations: determinizations per decision (None: no limit). With neither,
            ``time_limit`` is 1 second.
        rollouts: playouts per action and determinization.
        policy: the rollout policy, ``"greedy"`` or ``"random"``.
        backend: ``"auto"`` or ``"kernel"``: both the compiled kernel (``"python"``,
            the pure-Python playouts, was removed).
        prune: stop sampling actions that are clearly worse than the best, and
            decide as soon as one is left (faster, measured weaker; off by default).
        objective: what :meth:`act` maximises: ``"round"`` (the expected net
            round points, the default) or ``"match"`` (the chance of winning the
            match, :class:`MatchUtility`). :meth:`evaluate` always gives round points.
        infer: re-deal the opponent's hand from what their play suggests
            (:data:`INFER_MODES`). ``"lays"`` (also ``True``, the default, measured
            stronger than none): a player who laid a hand card without capturing
            probably held no card of the months then on the field
            (:attr:`~koikoi.game.views.PlayerView.declined`); such cards go to their
            hand last, except in :data:`INFER_SLACK` of the re-deals. ``"plays"``:
            hands drawn from the posterior given every hand play of theirs this
            round (:func:`koikoi.agents.inference.opponent_hands`), falling back
            to ``"lays"`` for a view without plays. ``"off"`` (or ``False``): uniform.
        lookahead: in each playout, the first ``lookahead`` real choices after the
            searched action (either player's, koi-koi or stop included) are made by
            a small search of that player's own, from what they can see, instead
            of by the rollout policy: ``samples`` re-deals, every action played out
            once (compiled kernel only; the pure-Python fallback ignores it).
            0 (the default): the policy plays every move.
        samples: the re-deals of each lookahead choice.
        equity: under the ``match`` objective, a round-outcomes file (as ``koikoi
            train equity`` writes) to build the match-equity tables from instead
            of the shipped distributions; None: the shipped ones.
    """

    KIND: ClassVar[str] = "mcts"
    """The spec name that the agent's error messages start with (a subclass sets its own)."""

    def __init__(
        self,
        *,
        time_limit: float | None = None,
        iterations: int | None = None,
        rollouts: int = DEFAULT_ROLLOUTS,
        policy: str = "greedy",
        backend: str = "auto",
        prune: bool = False,
        objective: str = "round",
        infer: bool | str = True,
        lookahead: int = 0,
        samples: int = DEFAULT_SAMPLES,
        equity: str | None = None,
    ) -> None:
        if time_limit is None and iterations is None:
            time_limit = DEFAULT_TIME
        mode = ("lays" if infer else "off") if isinstance(infer, bool) else infer
        if mode not in INFER_MODES:
            raise InvalidInputError(
                f"{self.KIND}: unknown infer {infer!r}: allowed {', '.join(INFER_MODES)} (or 1, 0)"
            )
        if time_limit is not None and not (time_limit > 0 and math.isfinite(time_limit)):
            raise InvalidInputError(
                f"{self.KIND}: time must be a positive number, not {time_limit!r}"
            )
        if iterations is not None and iterations < 1:
            raise InvalidInputError(
                f"{self.KIND}: iterations must be 1 or more, not {iterations!r}"
            )
        if rollouts < 1:
            raise InvalidInputError(f"{self.KIND}: rollouts must be 1 or more, not {rollouts!r}")
        if policy not in POLICIES:
            raise InvalidInputError(
                f"{self.KIND}: unknown policy {policy!r}: allowed {', '.join(POLICIES)}"
            )
        if backend == "python":
            raise InvalidInputError(
                f"{self.KIND}: backend=python was removed: playouts always run in the "
                "compiled kernel (numba is a dependency of koikoi); leave backend out"
            )
        if backend not in BACKENDS:
            raise InvalidInputError(
                f"{self.KIND}: unknown backend {backend!r}: allowed {', '.join(BACKENDS)}"
            )
        if objective not in OBJECTIVES:
            raise InvalidInputError(
                f"{self.KIND}: unknown objective {objective!r}: allowed {', '.join(OBJECTIVES)}"
            )
        if not 0 <= lookahead <= MAX_LOOKAHEAD:
            raise InvalidInputError(
                f"{self.KIND}: lookahead must be from 0 to {MAX_LOOKAHEAD}, not {lookahead!r}"
            )
        if not 1 <= samples <= MAX_SAMPLES:
            raise InvalidInputError(
                f"{self.KIND}: samples must be from 1 to {MAX_SAMPLES}, not {samples!r}"
            )
        if equity is not None:
            from koikoi.agents.equity import outcomes_file

            if objective != "match":
                raise InvalidInputError(
                    f"{self.KIND}: equity=FILE sets the match-equity tables, which only "
                    f"objective=match uses (this spec plays for {objective} points)"
                )
            try:
                outcomes_file(equity)
            except InvalidInputError as exc:
                raise InvalidInputError(f"{self.KIND}: {exc}") from None
        self.equity = equity
        self.lookahead = lookahead
        self.samples = samples
        self.objective = objective
        self.time_limit = time_limit
        self.iterations = iterations
        self.rollouts = rollouts
        self.policy = policy
        self.backend = backend
        self.prune = prune
        self.infer = mode != "off"
        """Whether the opponent's hand is inferred at all (``infer_mode`` says how)."""
        self.infer_mode = mode
        self._playouts: Playouts | None = None
        self._ready = False
        self._scorers: dict[Rules, Scorer] = {}
        parts = []
        if time_limit is not None:
            parts.append(f"time={time_limit:g}")
        if iterations is not None:
            parts.append(f"iterations={iterations}")
        if objective != "round":
            parts.append(f"objective={objective}")
        if mode != "lays":
            parts.append("infer=0" if mode == "off" else f"infer={mode}")
        if lookahead:
            parts.append(f"lookahead={lookahead}")
            if samples != DEFAULT_SAMPLES:
                parts.append(f"samples={samples}")
        if equity is not None:
            parts.append(f"equity={equity}")
        self.name = "mcts:" + ",".join(parts)

    # ------------------------------------------------------------- set-up

    def _prepare(self) -> None:
        """Pick the playout function and load the kernel (outside any time budget)."""
        if self._ready:
            return
        from koikoi.game.engine import Match

        fn: Playouts = kernel.playouts
        fn(Match(seed=0, events=False).round, 1, 0, self.policy)  # load or compile
        self._playouts = fn
        self._ready = True

    def _scorer(self, rules: Rules) -> Scorer:
        scorer = self._scorers.get(rules)
        if scorer is None:
            scorer = self._scorers[rules] = Scorer(rules)
        return scorer

    def utility(self, view: PlayerView) -> MatchUtility | None:
        """The :class:`MatchUtility` for ``view`` under the ``match`` objective, else None."""
        if self.objective != "match":
            return None
        return MatchUtility.of_view(view, self.equity)

    @property
    def uses_kernel(self) -> bool:
        """Whether playouts run in the compiled kernel (known after the first decision)."""
        self._prepare()
        return self._playouts is not None

    # ------------------------------------------------------------- search

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if not ids:
            raise InvalidInputError(f"{self.KIND}: no legal action in this view (not our turn)")
        if len(ids) == 1:
            return ids[0]
        utility = self.utility(view)
        self._prepare()
        values, points = self._refine(
            view, rng, *self._search(view, rng, decide=True, utility=utility), utility
        )
        return self._choose(list(ids), values, points, utility, rng)

    def _choose(
        self,
        ids: list[int],
        values: dict[int, float],
        points: dict[int, float],
        utility: MatchUtility | None,
        rng: random.Random,
    ) -> int:
        """The action to play among ``ids`` given the search's values and points."""
        if utility is not None:
            # Equal equity (a match all but decided, or noise): the points still count.
            values = {a: v + POINTS_TIEBREAK * points[a] for a, v in values.items()}
        best = max(values[a] for a in ids)
        ties = [a for a in ids if values[a] >= best - 1e-9]
        return ties[int(rng.random() * len(ties))] if len(ties) > 1 else ties[0]

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        """The estimated round value (points won minus lost) of every legal action.

        Under the ``match`` objective the search maximises match equity;
        :meth:`evaluate_detail` gives both. Actions that are clearly worse than
        the best may get fewer samples (with pruning), but every legal action
        has a value.

        Raises:
            InvalidInputError: when it is not this player's turn.
        """
        return {a: v.points for a, v in self.evaluate_detail(view, rng).items()}

    def evaluate_detail(self, view: PlayerView, rng: random.Random) -> dict[int, ActionValue]:
        """Every legal action's expected net round points and, when the search plays
        for the match (``objective=match`` and a match of more than one round), its
        chance of winning the match: the value :meth:`act` maximises."""
        utility = self.utility(view)
        values, points = self._refine(
            view, rng, *self._search(view, rng, decide=False, utility=utility), utility
        )
        return {
            a: ActionValue(points=points[a], equity=None if utility is None else values[a])
            for a in values
        }

    def _refine(
        self,
        view: PlayerView,
        rng: random.Random,
        values: dict[int, float],
        points: dict[int, float],
        utility: MatchUtility | None,
    ) -> tuple[dict[int, float], dict[int, float]]:
        """A hook for subclasses to correct the search's values (here: unchanged)."""
        return values, points

    def lookahead_for(self, view: PlayerView) -> int:
        """The playouts' lookahead depth for a decision in ``view`` (here: ``lookahead``)."""
        return self.lookahead

    def hand_pool(self, view: PlayerView, rng: random.Random) -> list[int] | None:
        """Under ``infer=plays``, :data:`HAND_POOL` opponent hands drawn from the
        posterior given their plays; else (or with nothing to infer from) None."""
        if self.infer_mode != "plays":
            return None
        from koikoi.agents.inference import opponent_hands

        return opponent_hands(view, rng, HAND_POOL)

    def redeal(
        self,
        view: PlayerView,
        rng: random.Random,
        pool: Sequence[int] | None,
        scorer: Scorer | None = None,
    ) -> Round:
        """One determinization of ``view`` under this agent's inference: a hand of
        ``pool`` (from :meth:`hand_pool`) when there is one, else the declined
        months dealt last (``infer``) or a uniform deal."""
        if pool:
            hand = pool[rng.randrange(len(pool))]
            return determinize(view, rng, scorer=scorer, opponent_hand=hand)
        avoid = view.declined[view.opponent] if self.infer else 0
        return determinize(view, rng, scorer=scorer, avoid=avoid, slack=INFER_SLACK)

    def _turn(self, view: PlayerView) -> tuple[list[int], int]:
        """The legal actions and the searching player of ``view``; an error when it is
        not the player's turn."""
        ids = list(view.legal_ids)
        if not ids or view.player is None:
            raise InvalidInputError(f"{self.KIND}: no legal action in this view (not our turn)")
        return ids, view.player

    def _deal_inputs(self, view: PlayerView, rng: random.Random) -> tuple[list[int] | None, int]:
        """How the kernel re-deals the opponent's hand: hands drawn by the inference
        (:meth:`hand_pool`), or without them the cards it takes last (the declined
        months, under ``infer``)."""
        pool = self.hand_pool(view, rng)
        return pool, view.declined[view.opponent] if self.infer and pool is None else 0

    def _search(
        self,
        view: PlayerView,
        rng: random.Random,
        *,
        decide: bool,
        utility: MatchUtility | None = None,
        time_limit: float | None = None,
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Sample determinizations until the budget is spent; the mean value per action,
        and the mean net round points per action (the same without a ``utility``).
        ``time_limit`` replaces the agent's own for this search (a caller that spent
        part of the budget already).

        Every iteration evaluates every *active* action on the same deal with the
        same rollout seed. After :data:`PRUNE_AFTER` iterations an action whose
        paired difference to the leader is below zero by more than
        :data:`PRUNE_Z` standard errors stops being sampled; with ``decide`` the
        search ends when one action is left. At least one iteration is always
        completed. With a ``utility`` each playout's net result goes through it
        before averaging.

        Iterations run in batches inside the compiled kernel
        (:class:`koikoi.agents.search.BatchSearch`), sized so that a batch takes
        at most :data:`BATCH_SHARE` of the time budget.
        """
        ids, me = self._turn(view)
        self._prepare()
        start = time.perf_counter()
        limit = self.time_limit if time_limit is None else time_limit
        deadline = search_deadline(start, limit)
        max_iter = self.iterations if self.iterations is not None else 1 << 60
        scorer = self._scorer(view.rules)
        k = len(ids)
        stats = _Stats(k)
        points = _Stats(k) if utility is not None else stats
        clock = time.perf_counter
        pool, avoid = self._deal_inputs(view, rng)
        search = BatchSearch(
            determinize(view, rng, scorer=scorer),
            me,
            rng.getrandbits(62),
            policy=self.policy,
            rollouts=self.rollouts,
            utility=None if utility is None else utility.kernel_params(),
            avoid=avoid,
            slack=INFER_SLACK,
            depth=self.lookahead_for(view),
            samples=self.samples,
            hands=pool or (),
        )
        batch = 1 if limit is not None else BATCH
        while stats.done < max_iter:
            active = stats.active
            t0 = clock()
            rows = search.run([ids[i] for i in active], min(batch, max_iter - stats.done))
            n_active = len(active)
            for row in rows.tolist():
                stats.add(active, row[:n_active])
                if points is not stats:
                    points.add(active, row[n_active:])
            if self.prune and stats.done >= PRUNE_AFTER:
                stats.prune()
            now = clock()
            if (decide and len(stats.active) == 1) or now >= deadline:
                break
            if limit is not None:
                per = max((now - t0) / len(rows), 1e-7)
                batch = next_batch(per, now, limit, deadline, BATCH)
        return stats.means(ids), points.means(ids)


class _Stats:
    """Running sums per action and paired differences between actions, with pruning."""

    __slots__ = ("active", "counts", "d1", "d2", "dn", "done", "sums")

    def __init__(self, k: int) -> None:
        self.active = list(range(k))
        self.sums = [0.0] * k
        self.counts = [0] * k
        # Paired differences (row minus column) over the iterations both were sampled.
        self.d1 = [[0.0] * k for _ in range(k)]
        self.d2 = [[0.0] * k for _ in range(k)]
        self.dn = [[0] * k for _ in range(k)]
        self.done = 0

    def add(self, active: list[int], row: list[float]) -> None:
        """One iteration: ``row[x]`` is the value of action ``active[x]``."""
        self.done += 1
        sums, counts, d1, d2, dn = self.sums, self.counts, self.d1, self.d2, self.dn
        for x, i in enumerate(active):
            vi = row[x]
            sums[i] += vi
            counts[i] += 1
            row1, row2, rown = d1[i], d2[i], dn[i]
            for y in range(x + 1, len(active)):
                j = active[y]
                diff = vi - row[y]
                row1[j] += diff
                row2[j] += diff * diff
                rown[j] += 1

    def means(self, ids: list[int]) -> dict[int, float]:
        return {
            ids[i]: (self.sums[i] / self.counts[i] if self.counts[i] else -math.inf)
            for i in range(len(ids))
        }

    def prune(self) -> None:
        if len(self.active) > 1:
            self.active = _pruned(self.active, self.sums, self.counts, self.d1, self.d2, self.dn)


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


_PARAMS: Final = (
    "time",
    "iterations",
    "rollouts",
    "policy",
    "backend",
    "prune",
    "objective",
    "infer",
    "lookahead",
    "samples",
    "equity",
)


def infer_mode(text: str, who: str) -> str:
    """The inference mode of a spec's ``infer=`` value: ``0``/``1`` (off, ``lays``) or
    a name of :data:`INFER_MODES`."""
    flag = text.strip().lower()
    named = {"0": "off", "false": "off", "no": "off", "1": "lays", "true": "lays", "yes": "lays"}
    mode = named.get(flag, flag)
    if mode not in INFER_MODES:
        raise InvalidInputError(
            f"{who}: infer must be 0, 1 or one of {', '.join(INFER_MODES)}, not {text!r}"
        )
    return mode


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
    """Build from ``mcts:time=S,iterations=N,rollouts=4,policy=greedy,prune=0,objective=round``
    (and ``infer=1``, ``infer=plays``).

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
    lookahead = _int_param(params, "lookahead")
    samples = _int_param(params, "samples")
    flags = {}
    for key, default in (("prune", "0"),):
        flag = params.get(key, default).lower()
        if flag not in ("0", "1", "true", "false", "yes", "no"):
            raise InvalidInputError(f"mcts: {key} must be 1 or 0, not {params[key]!r}")
        flags[key] = flag in ("1", "true", "yes")
    return MCTSAgent(
        time_limit=time_limit,
        iterations=_int_param(params, "iterations"),
        rollouts=DEFAULT_ROLLOUTS if rollouts is None else rollouts,
        policy=params.get("policy", "greedy").lower(),
        backend=params.get("backend", "auto").lower(),
        prune=flags["prune"],
        objective=params.get("objective", "round").lower(),
        infer=infer_mode(params.get("infer", "1"), "mcts"),
        lookahead=0 if lookahead is None else lookahead,
        samples=DEFAULT_SAMPLES if samples is None else samples,
        equity=params.get("equity") or None,
    )
