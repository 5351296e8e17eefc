"""Matches between two agents, with duplicate deals and honest statistics.

An arena plays agent A against agent B under one rule set. By default deals
are **duplicate**: each deal seed is played twice with the seats swapped, and
both matches of a pair use the same :class:`~koikoi.game.engine.Match` seed, so the
chance (first dealer, every shuffle) is identical and only the players differ;
luck largely cancels within a pair. The agents' own random generators are
seeded from the arena seed too, so a run replays exactly.

Statistics (see :func:`summarize`), per agent:

* match wins / draws / losses and the match win rate with a 95% Wilson
  interval;
* the match score ((wins + draws / 2) / matches) with a 95% interval from the
  pair-level scores, and the Elo difference it implies;
* points per round (points won in the rounds it won) with a 95% interval, and
  the **net** points per round (own points minus the opponent's) with a 95%
  interval paired by deal: the per-pair differences are the units, so the
  luck of the deal cancels;
* koi-koi calls and their success rate (a call succeeds if the caller wins
  that round), yaku frequencies, forfeits with their reasons, thinking time.

``sprt=(elo0, elo1)`` runs a sequential probability ratio test on the pair
scores (the GSPRT of fishtest, normal approximation) and stops as soon as it
accepts H0 (Elo <= elo0) or H1 (Elo >= elo1). Pairs are always consumed in
order, so the result does not depend on the number of workers.

A bot that breaks the protocol, crashes, times out or plays an illegal action
loses that match (a forfeit, with the reason) and the arena carries on.

>>> from koikoi.game.rules import get_rules
>>> result = run_arena(ArenaConfig(("greedy", "random"), get_rules("koikoi-japan"), 2, seed=1))
>>> result.summary["agents"][0]["matches"]
2
"""

from __future__ import annotations

import hashlib
import importlib
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from koikoi.agents.base import AGENT_KINDS, Agent, AgentFactory, make_agent, parse_agent_spec
from koikoi.game.actions import KOIKOI_ID
from koikoi.game.engine import Match
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.rules import Rules, rules_from_dict
from koikoi.game.scoring import Settlement
from koikoi.game.views import view_of

__all__ = [
    "BACKENDS",
    "ArenaConfig",
    "ArenaResult",
    "MatchResult",
    "PairResult",
    "decision_latency",
    "derive_seed",
    "elo_from_score",
    "format_report",
    "gsprt_llr",
    "mean_ci",
    "percentile",
    "plot_running_mean",
    "ratio_ci",
    "run_arena",
    "run_pair",
    "summarize",
    "wilson",
]

BACKENDS: Final = ("local", "ray")
Z95: Final = 1.959963984540054
ELO_CAP: Final = 1200.0
"""Elo differences are capped at +-1200 (a score of 0 or 1 has no finite Elo)."""


# ---------------------------------------------------------------- statistics


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``k / n``.

    >>> lo, hi = wilson(60, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.502, 0.691)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k <= 0 else max(0.0, centre - half)
    hi = 1.0 if k >= n else min(1.0, centre + half)
    return (lo, hi)


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """The mean and its normal-approximation interval ``(mean, lo, hi)``.

    With fewer than two values the interval is the mean itself.

    >>> mean_ci([1.0, 2.0, 3.0, 4.0])
    (2.5, 1.234..., 3.765...)
    """
    n = len(values)
    if n == 0:
        return (0.0, 0.0, 0.0)
    m = math.fsum(values) / n
    if n < 2:
        return (m, m, m)
    half = z * statistics.stdev(values) / math.sqrt(n)
    return (m, m - half, m + half)


def ratio_ci(
    nums: Sequence[float], dens: Sequence[float], z: float = Z95
) -> tuple[float, float, float]:
    """A ratio of sums ``sum(nums) / sum(dens)`` with its interval (delta method).

    Used for points per round: each unit (a pair of matches) contributes its
    points and its number of rounds.

    >>> ratio_ci([10, 20], [10, 10])[0]
    1.5
    """
    n = len(nums)
    total = math.fsum(dens)
    if n == 0 or total <= 0:
        return (0.0, 0.0, 0.0)
    r = math.fsum(nums) / total
    if n < 2:
        return (r, r, r)
    mean_den = total / n
    resid = [(x - r * d) / mean_den for x, d in zip(nums, dens, strict=True)]
    half = z * statistics.stdev(resid) / math.sqrt(n)
    return (r, r - half, r + half)


def elo_from_score(score: float) -> float:
    """The Elo difference that predicts an expected ``score`` (capped at +-1200).

    >>> round(elo_from_score(0.64), 1)
    100.0
    """
    if score <= 0.0:
        return -ELO_CAP
    if score >= 1.0:
        return ELO_CAP
    elo = -400.0 * math.log10(1.0 / score - 1.0)
    return max(-ELO_CAP, min(ELO_CAP, elo))


def _score_of_elo(elo: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def gsprt_llr(scores: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized SPRT log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0).

    ``scores`` are per-unit scores in [0, 1] (here the mean match score of each
    duplicate pair). Normal approximation (as fishtest):
    ``LLR = n (s1 - s0) (2 mean - s0 - s1) / (2 var)``.

    >>> gsprt_llr([1.0, 0.5, 1.0, 0.5], 0, 50) > 0
    True
    """
    n = len(scores)
    if n < 2:
        return 0.0
    mean = math.fsum(scores) / n
    var = math.fsum((s - mean) ** 2 for s in scores) / n
    var = max(var, 1e-4)
    s0, s1 = _score_of_elo(elo0), _score_of_elo(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed derived from the arena seed and ``parts`` (stable across runs).

    >>> derive_seed(1, "pair", 0) == derive_seed(1, "pair", 0) != derive_seed(1, "pair", 1)
    True
    """
    text = ":".join(["koikoi-arena", str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


# ------------------------------------------------------------------ results


@dataclass
class MatchResult:
    """One match, seen per agent (index 0 is agent A, 1 is agent B)."""

    pair: int
    game: int
    seed: int
    seats: tuple[int, int]
    """The agent index at seat 0 and at seat 1."""
    winner: int | None
    """The winning agent's index (``None``: a draw)."""
    scores: tuple[int, int]
    rounds: int
    points: tuple[int, int]
    """Points won per agent, summed over the rounds it won."""
    round_net: list[int] = field(default_factory=list)
    """Agent A's points minus agent B's, round by round."""
    round_wins: tuple[int, int] = (0, 0)
    koikoi_calls: tuple[int, int] = (0, 0)
    koikoi_successes: tuple[int, int] = (0, 0)
    yaku: tuple[dict[str, int], dict[str, int]] = field(default_factory=lambda: ({}, {}))
    forfeit: str | None = None
    """Why the loser forfeited (a bot error), else ``None``."""
    forfeit_by: int | None = None
    decisions: tuple[int, int] = (0, 0)
    think: tuple[float, float] = (0.0, 0.0)
    think_max: tuple[float, float] = (0.0, 0.0)
    record: str | None = None

    def score_of(self, agent: int) -> float:
        """1 for a win, 0.5 for a draw, 0 for a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == agent else 0.0


@dataclass
class PairResult:
    """One deal seed: two matches with the seats swapped (one in non-duplicate mode)."""

    pair: int
    matches: list[MatchResult]

    @property
    def net(self) -> float:
        """Agent A's points minus agent B's over the pair's matches."""
        return float(sum(m.points[0] - m.points[1] for m in self.matches))

    @property
    def rounds(self) -> int:
        return sum(m.rounds for m in self.matches)

    @property
    def score(self) -> float:
        """Agent A's mean match score over the pair."""
        return sum(m.score_of(0) for m in self.matches) / len(self.matches)


@dataclass(frozen=True)
class ArenaConfig:
    """What to play.

    Args:
        agents: the two agent specs (A, B).
        rules: the rule set.
        matches: how many matches (even with duplicate deals).
        seed: the arena seed: every match seed and agent seed derives from it.
        workers: processes (1: in this process).
        duplicate: play each deal twice with the seats swapped.
        common_rng: with duplicate deals, each seat's random generator is the same
            in both games of a pair (it belongs to the seat, not to the agent), so
            two agents that choose alike play alike and their games differ only
            where their choices do: common random numbers, for comparing variants
            of one player with less noise. Off by default (each agent has its own).
        sprt: ``(elo0, elo1)`` for a sequential test, or ``None``.
        records: a folder to save every match record in, or ``None``.
        backend: ``"local"`` (processes) or ``"ray"``.
        alpha, beta: the SPRT's error rates.
    """

    agents: tuple[str, str]
    rules: Rules
    matches: int
    seed: int = 0
    workers: int = 1
    duplicate: bool = True
    common_rng: bool = False
    sprt: tuple[float, float] | None = None
    records: Path | None = None
    backend: str = "local"
    alpha: float = 0.05
    beta: float = 0.05

    def validate(self) -> None:
        """Raise :class:`InvalidInputError` on a bad setting."""
        if self.matches < 1:
            raise InvalidInputError(f"--matches must be 1 or more, not {self.matches}")
        if self.duplicate and self.matches % 2:
            raise InvalidInputError(
                f"--matches must be even with duplicate deals (each deal is played twice), "
                f"not {self.matches}; or use --no-duplicate"
            )
        if self.common_rng and not self.duplicate:
            raise InvalidInputError(
                "--common-rng needs duplicate deals (it shares each seat's generator "
                "between the two games of a pair); drop --no-duplicate"
            )
        if self.workers < 1:
            raise InvalidInputError(f"--workers must be 1 or more, not {self.workers}")
        if self.seed < 0:
            raise InvalidInputError(f"--seed must be 0 or more, not {self.seed}")
        if self.backend not in BACKENDS:
            raise InvalidInputError(
                f"unknown backend {self.backend!r}: allowed {', '.join(BACKENDS)}"
            )
        if self.sprt is not None and not self.sprt[0] < self.sprt[1]:
            raise InvalidInputError(
                f"--sprt elo0,elo1 needs elo0 < elo1, not {self.sprt[0]:g},{self.sprt[1]:g}"
            )
        for spec in self.agents:
            parse_agent_spec(spec)

    @property
    def units(self) -> int:
        """How many pair jobs: matches / 2 with duplicate deals, else matches."""
        return self.matches // 2 if self.duplicate else self.matches


@dataclass
class ArenaResult:
    """The pairs played and their summary (:func:`summarize`)."""

    config: ArenaConfig
    pairs: list[PairResult]
    summary: dict[str, Any]
    elapsed: float


# ------------------------------------------------------------------ playing


@dataclass(frozen=True)
class _Job:
    """One unit of work for a worker: a pair of matches (or one match)."""

    pair: int
    agents: tuple[str, str]
    rules: dict[str, Any]
    seed: int
    duplicate: bool
    records: str | None
    common_rng: bool = False


_AGENTS: dict[str, tuple[AgentFactory, Agent]] = {}
_RULES: dict[str, Rules] = {}


def _agent(spec: str) -> tuple[Agent, bool]:
    """An agent for ``spec``; stateless agents are reused within a process.

    A reused agent is kept with the factory that made it, and is made again when
    its kind has been registered anew (:func:`koikoi.agents.register_agent`) since.

    Returns ``(agent, fresh)``: fresh agents (external bots) are closed after the match.
    """
    kind = parse_agent_spec(spec)[0]
    if kind == "cmd":
        return make_agent(spec), True
    kept = _AGENTS.get(spec)
    if kept is not None and AGENT_KINDS.get(kind) is kept[0]:
        return kept[1], False
    agent = make_agent(spec)
    _AGENTS[spec] = (AGENT_KINDS[kind], agent)
    return agent, False


def _rules(data: dict[str, Any]) -> Rules:
    key = repr(sorted((k, repr(v)) for k, v in data.items()))
    rules = _RULES.get(key)
    if rules is None:
        rules = _RULES[key] = rules_from_dict(data, base=Rules(), source="arena rules")
    return rules


def _bot_error_types() -> tuple[type[BaseException], ...]:
    try:
        from koikoi.agents.external import BotError
    except ImportError:  # pragma: no cover - external.py ships with the package
        return (IllegalActionError,)
    return (BotError, IllegalActionError)


def _close(agent: Agent) -> None:
    close = getattr(agent, "close", None)
    if callable(close):
        close()


def play_match(
    specs: tuple[str, str],
    rules: Rules,
    *,
    seats: tuple[int, int],
    match_seed: int,
    agent_seeds: tuple[int, int],
    pair: int = 0,
    game: int = 0,
    events: bool = False,
) -> tuple[MatchResult, Match]:
    """Play one match; ``seats[s]`` is the index (0 = A, 1 = B) of the agent at seat ``s``."""
    made = [_agent(specs[0]), _agent(specs[1])]
    agents = [made[seats[0]][0], made[seats[1]][0]]
    rngs = [random.Random(agent_seeds[seats[0]]), random.Random(agent_seeds[seats[1]])]
    match = Match(rules, seed=match_seed, events=events)
    errors = _bot_error_types()
    seat_agent = seats
    points = [0, 0]
    round_net: list[int] = []
    round_wins = [0, 0]
    calls = [0, 0]
    successes = [0, 0]
    round_calls = [0, 0]
    yaku: tuple[dict[str, int], dict[str, int]] = ({}, {})
    decisions = [0, 0]
    think = [0.0, 0.0]
    think_max = [0.0, 0.0]
    forfeit: str | None = None
    forfeit_by: int | None = None
    seen = 0

    def account(s: Settlement) -> None:
        w = s.winner
        if w is None:
            round_net.append(0)
        else:
            a = seat_agent[w]
            points[a] += s.points
            round_wins[a] += 1
            round_net.append(s.points if a == 0 else -s.points)
            successes[a] += round_calls[a]
            for y in s.yaku:
                yaku[a][y.name] = yaku[a].get(y.name, 0) + 1
        round_calls[0] = round_calls[1] = 0

    try:
        while seen < len(match.settlements):  # an instant hand in round 1
            account(match.settlements[seen])
            seen += 1
        while not match.is_over:
            seat = match.current
            a = seat_agent[seat]
            view = view_of(match, seat, with_history=False)
            t0 = time.perf_counter()
            try:
                action = agents[seat].act(view, rngs[seat])
            except errors as exc:
                forfeit, forfeit_by = f"{specs[a]}: {exc}", a
                break
            dt = time.perf_counter() - t0
            decisions[a] += 1
            think[a] += dt
            think_max[a] = max(think_max[a], dt)
            if action not in view.legal_ids:
                forfeit, forfeit_by = f"{specs[a]}: illegal action {action!r}", a
                break
            if action == KOIKOI_ID:
                calls[a] += 1
                round_calls[a] += 1
            match.apply_id(action)
            while seen < len(match.settlements):
                account(match.settlements[seen])
                seen += 1
    finally:
        for agent, fresh in made:
            if fresh:
                _close(agent)
    scores = (match.scores[seats.index(0)], match.scores[seats.index(1)])
    if forfeit_by is not None:
        winner: int | None = 1 - forfeit_by
    elif match.winner is None:
        winner = None
    else:
        winner = seat_agent[match.winner]
    result = MatchResult(
        pair=pair,
        game=game,
        seed=match_seed,
        seats=seats,
        winner=winner,
        scores=scores,
        rounds=len(match.settlements),
        points=(points[0], points[1]),
        round_net=round_net,
        round_wins=(round_wins[0], round_wins[1]),
        koikoi_calls=(calls[0], calls[1]),
        koikoi_successes=(successes[0], successes[1]),
        yaku=yaku,
        forfeit=forfeit,
        forfeit_by=forfeit_by,
        decisions=(decisions[0], decisions[1]),
        think=(think[0], think[1]),
        think_max=(think_max[0], think_max[1]),
    )
    return result, match


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values`` by the nearest-rank method.

    >>> percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50), percentile(list(range(1, 101)), 99)
    (3.0, 99)
    """
    if not values:
        raise InvalidInputError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def decision_latency(
    spec: str,
    rules: Rules,
    *,
    decisions: int = 200,
    against: str = "heuristic",
    seed: int = 0,
) -> dict[str, Any]:
    """Time ``decisions`` real decisions of agent ``spec`` in matches against ``against``.

    The agent takes alternate seats in matches seeded from ``seed``. Only
    decisions with two or more legal actions are timed (with one, every agent
    answers at once); one warm-up decision (which loads a compiled kernel) is
    timed separately as ``first_ms``. Latency is wall-clock time around
    ``act()``, as a player waiting for the move sees it.

    Returns:
        ``spec``, ``against``, ``rules``, ``decisions``, ``mean_ms``,
        ``p50_ms``, ``p90_ms``, ``p99_ms``, ``max_ms``, ``first_ms``, and for an
        agent with a ``time_limit``: ``budget_ms`` and ``p99_over_budget``.
    """
    if decisions < 1:
        raise InvalidInputError(f"decisions must be 1 or more, not {decisions}")
    agent = make_agent(spec)
    opponent = make_agent(against)
    times: list[float] = []
    first: float | None = None
    game = 0
    try:
        while len(times) < decisions:
            match = Match(rules, seed=derive_seed(seed, "latency", game), events=False)
            mine = game % 2
            rng = random.Random(derive_seed(seed, "latency-agent", game))
            other_rng = random.Random(derive_seed(seed, "latency-opponent", game))
            while not match.is_over and len(times) < decisions:
                seat = match.current
                view = view_of(match, seat, with_history=False)
                if seat != mine:
                    match.apply_id(opponent.act(view, other_rng))
                    continue
                t0 = time.perf_counter()
                action = agent.act(view, rng)
                dt = time.perf_counter() - t0
                if action not in view.legal_ids:
                    raise InvalidInputError(f"{spec}: illegal action {action!r}")
                if len(view.legal_ids) > 1:
                    if first is None:
                        first = dt
                    else:
                        times.append(dt)
                match.apply_id(action)
            game += 1
    finally:
        _close(agent)
        _close(opponent)
    result: dict[str, Any] = {
        "spec": spec,
        "against": against,
        "rules": rules.name,
        "decisions": len(times),
        "matches": game,
        "mean_ms": round(1000 * statistics.fmean(times), 3),
        "p50_ms": round(1000 * percentile(times, 50), 3),
        "p90_ms": round(1000 * percentile(times, 90), 3),
        "p99_ms": round(1000 * percentile(times, 99), 3),
        "max_ms": round(1000 * max(times), 3),
        "first_ms": round(1000 * (first or 0.0), 3),
    }
    budget = getattr(agent, "time_limit", None)
    if isinstance(budget, int | float) and budget > 0:
        result["budget_ms"] = round(1000 * budget, 3)
        result["p99_over_budget"] = round(percentile(times, 99) / budget, 4)
    return result


def _save_record(job: _Job, result: MatchResult, match: Match) -> str | None:
    if job.records is None:
        return None
    try:
        from koikoi.game.record import GameRecord, distinct_names
    except ImportError:  # pragma: no cover - record.py ships with the package
        return None
    names = distinct_names(job.agents)  # "random A", "random B" for one agent twice
    players = [names[result.seats[0]], names[result.seats[1]]]
    meta = {
        "arena": {
            "pair": result.pair,
            "game": result.game,
            "agents": list(job.agents),
            "seats": list(result.seats),
            "forfeit": result.forfeit,
        }
    }
    path = Path(job.records) / f"pair{result.pair:05d}-game{result.game}.json"
    GameRecord.from_match(match, players=players, meta=meta).save(path)
    return str(path)


def run_pair(job: _Job) -> PairResult:
    """Play one pair job (a worker's unit). Top-level, so that it pickles for ``spawn``."""
    rules = _rules(job.rules)
    base = job.seed
    agent_seeds = (derive_seed(base, job.pair, "agent", 0), derive_seed(base, job.pair, "agent", 1))
    results: list[MatchResult] = []
    if job.duplicate:
        match_seed = derive_seed(base, job.pair, "deal")
        games = [(0, (0, 1)), (1, (1, 0))]
    else:
        match_seed = derive_seed(base, job.pair, "match")
        games = [(0, (0, 1) if job.pair % 2 == 0 else (1, 0))]
    for game, seats in games:
        # Common random numbers: the generator of seat s is the same in both games.
        seeds = agent_seeds[::-1] if job.common_rng and seats[0] == 1 else agent_seeds
        result, match = play_match(
            job.agents,
            rules,
            seats=seats,
            match_seed=match_seed,
            agent_seeds=seeds,
            pair=job.pair,
            game=game,
            events=job.records is not None,
        )
        result.record = _save_record(job, result, match)
        results.append(result)
    return PairResult(job.pair, results)


def _jobs(config: ArenaConfig) -> Iterator[_Job]:
    rules = config.rules.to_dict()
    records = str(config.records) if config.records is not None else None
    for i in range(config.units):
        yield _Job(
            i, config.agents, rules, config.seed, config.duplicate, records, config.common_rng
        )


def _run_local(config: ArenaConfig) -> Iterator[PairResult]:
    """Pair results in pair order; stops producing when the consumer stops asking."""
    jobs = _jobs(config)
    if config.workers == 1:
        for job in jobs:
            yield run_pair(job)
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    ctx = multiprocessing.get_context("spawn")
    pending: dict[int, Future[PairResult]] = {}
    ahead = config.workers * 4
    with ProcessPoolExecutor(max_workers=config.workers, mp_context=ctx) as pool:
        try:
            nxt = 0
            for job in jobs:
                pending[job.pair] = pool.submit(run_pair, job)
                if len(pending) >= ahead:
                    break
            total = config.units
            submitted = len(pending)
            while nxt < total:
                result = pending.pop(nxt).result()
                nxt += 1
                if submitted < total:
                    job = next(jobs)
                    pending[job.pair] = pool.submit(run_pair, job)
                    submitted += 1
                yield result
        finally:
            for fut in pending.values():
                fut.cancel()


def _run_ray(config: ArenaConfig) -> Iterator[PairResult]:
    """Pair results in pair order from Ray tasks (a local cluster is started if none is)."""
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise InvalidInputError(
            "--backend ray needs ray: pip install 'koikoi[ray]' (ray>=2.30)"
        ) from None
    started = not ray.is_initialized()
    if started:
        ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    remote = ray.remote(run_pair)
    jobs = _jobs(config)
    pending: dict[int, Any] = {}
    ahead = max(config.workers, 1) * 4
    total = config.units
    for job in jobs:
        pending[job.pair] = remote.remote(job)
        if len(pending) >= ahead:
            break
    submitted = len(pending)
    try:
        for nxt in range(total):
            result: PairResult = ray.get(pending.pop(nxt))
            if submitted < total:
                job = next(jobs)
                pending[job.pair] = remote.remote(job)
                submitted += 1
            yield result
    finally:
        for ref in pending.values():
            ray.cancel(ref)
        if started:
            ray.shutdown()


class _Progress:
    """A one-line plain-text progress bar on a stream."""

    def __init__(self, stream: IO[str], total: int, label: str) -> None:
        self.stream = stream
        self.total = total
        self.label = label
        self.start = time.perf_counter()
        self.last = 0.0

    def update(self, done: int, pairs: Sequence[PairResult], *, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        width = 24
        filled = int(width * done / max(self.total, 1))
        wins = sum(1 for p in pairs for m in p.matches if m.winner == 0)
        n = sum(len(p.matches) for p in pairs)
        rounds = sum(p.rounds for p in pairs)
        net = sum(p.net for p in pairs) / rounds if rounds else 0.0
        rate = f"{wins / n:.1%}" if n else "-"
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
            f"A wins {rate}, net {net:+.2f}/round, {now - self.start:.0f}s "
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def run_arena(
    config: ArenaConfig,
    *,
    progress: IO[str] | None = None,
    on_pair: Callable[[PairResult], None] | None = None,
) -> ArenaResult:
    """Play the arena and summarize it.

    Args:
        config: what to play.
        progress: a stream for a progress bar (``None``: no progress bar).
        on_pair: called with each pair result, in pair order.

    Raises:
        InvalidInputError: a bad setting or agent spec.
    """
    config.validate()
    for spec in config.agents:  # fail early on a bad spec, in this process
        agent, fresh = _agent(spec)
        if fresh:
            _close(agent)
    if config.records is not None:
        try:
            config.records.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(
                f"cannot create records folder {str(config.records)!r}: {exc.strerror or exc}"
            ) from None
    start = time.perf_counter()
    stream = _run_ray(config) if config.backend == "ray" else _run_local(config)
    bar = _Progress(progress, config.units, "arena") if progress is not None else None
    pairs: list[PairResult] = []
    sprt_state: dict[str, Any] | None = None
    try:
        for result in stream:
            pairs.append(result)
            if on_pair is not None:
                on_pair(result)
            if bar is not None:
                bar.update(len(pairs), pairs)
            if config.sprt is not None:
                sprt_state = _sprt(config, pairs)
                if sprt_state["result"] != "inconclusive":
                    break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
        if bar is not None:
            bar.update(len(pairs), pairs, force=True)
            bar.close()
    elapsed = time.perf_counter() - start
    summary = summarize(config, pairs)
    if config.sprt is not None:
        summary["sprt"] = sprt_state if sprt_state is not None else _sprt(config, pairs)
    summary["elapsed_s"] = round(elapsed, 3)
    return ArenaResult(config, pairs, summary, elapsed)


def _sprt(config: ArenaConfig, pairs: Sequence[PairResult]) -> dict[str, Any]:
    assert config.sprt is not None
    elo0, elo1 = config.sprt
    lower = math.log(config.beta / (1 - config.alpha))
    upper = math.log((1 - config.beta) / config.alpha)
    llr = gsprt_llr([p.score for p in pairs], elo0, elo1)
    if llr >= upper:
        verdict = "H1"
    elif llr <= lower:
        verdict = "H0"
    else:
        verdict = "inconclusive"
    return {
        "elo0": elo0,
        "elo1": elo1,
        "alpha": config.alpha,
        "beta": config.beta,
        "llr": round(llr, 4),
        "lower": round(lower, 4),
        "upper": round(upper, 4),
        "result": verdict,
        "units": len(pairs),
    }


# ------------------------------------------------------------------ summary


def _interval(mean: float, lo: float, hi: float, digits: int = 4) -> dict[str, Any]:
    return {"mean": round(mean, digits), "ci95": [round(lo, digits), round(hi, digits)]}


def summarize(config: ArenaConfig, pairs: Sequence[PairResult]) -> dict[str, Any]:
    """The statistics of an arena as JSON-ready data (see the module docstring)."""
    matches = [m for p in pairs for m in p.matches]
    n = len(matches)
    agents: list[dict[str, Any]] = []
    pair_scores = [p.score for p in pairs]
    for i in (0, 1):
        sign = 1 if i == 0 else -1
        wins = sum(1 for m in matches if m.winner == i)
        draws = sum(1 for m in matches if m.winner is None)
        losses = n - wins - draws
        lo, hi = wilson(wins, n)
        scores_i = [s if i == 0 else 1 - s for s in pair_scores]
        s_mean, s_lo, s_hi = mean_ci(scores_i)
        rounds = [float(p.rounds) for p in pairs]
        pts = [float(sum(m.points[i] for m in p.matches)) for p in pairs]
        nets = [sign * p.net for p in pairs]
        ppr = ratio_ci(pts, rounds)
        net = ratio_ci(nets, rounds)
        calls = sum(m.koikoi_calls[i] for m in matches)
        succ = sum(m.koikoi_successes[i] for m in matches)
        total_rounds = sum(m.rounds for m in matches)
        yaku: dict[str, int] = {}
        for m in matches:
            for name, count in m.yaku[i].items():
                yaku[name] = yaku.get(name, 0) + count
        decisions = sum(m.decisions[i] for m in matches)
        think = sum(m.think[i] for m in matches)
        forfeits = [m.forfeit for m in matches if m.forfeit_by == i and m.forfeit]
        agents.append(
            {
                "label": "AB"[i],
                "spec": config.agents[i],
                "matches": n,
                "match_wins": wins,
                "match_draws": draws,
                "match_losses": losses,
                "match_win_rate": _interval(wins / n if n else 0.0, lo, hi),
                "score": _interval(s_mean, max(0.0, s_lo), min(1.0, s_hi)),
                "rounds": total_rounds,
                "round_wins": sum(m.round_wins[i] for m in matches),
                "points_per_round": _interval(*ppr),
                "net_per_round": _interval(*net),
                "koikoi": {
                    "calls": calls,
                    "successes": succ,
                    "success_rate": round(succ / calls, 4) if calls else None,
                },
                "yaku": dict(sorted(yaku.items(), key=lambda kv: (-kv[1], kv[0]))),
                "yaku_per_round": {
                    k: round(v / total_rounds, 4) if total_rounds else 0.0
                    for k, v in sorted(yaku.items(), key=lambda kv: (-kv[1], kv[0]))
                },
                "forfeits": len(forfeits),
                "forfeit_reasons": forfeits[:10],
                "decisions": decisions,
                "think_ms_mean": round(1000 * think / decisions, 3) if decisions else 0.0,
                "think_ms_max": round(
                    1000 * max((m.think_max[i] for m in matches), default=0.0), 3
                ),
            }
        )
    score = agents[0]["score"]
    elo = _interval(
        elo_from_score(score["mean"]),
        elo_from_score(score["ci95"][0]),
        elo_from_score(score["ci95"][1]),
        1,
    )
    return {
        "agents": agents,
        "elo": elo,
        "rules": config.rules.name,
        "matches": n,
        "pairs": len(pairs),
        "duplicate": config.duplicate,
        "common_rng": config.common_rng,
        "seed": config.seed,
        "rounds": sum(m.rounds for m in matches),
    }


def format_report(summary: dict[str, Any]) -> str:
    """The summary as a human-readable table."""
    a, b = summary["agents"]
    width = max(22, len(a["spec"]) + 2, len(b["spec"]) + 2)

    def iv(d: dict[str, Any], pct: bool = False, signed: bool = False) -> str:
        m, (lo, hi) = d["mean"], d["ci95"]
        if pct:
            return f"{m:.1%} [{lo:.1%}, {hi:.1%}]"
        fmt = "{:+.2f}" if signed else "{:.2f}"
        return f"{fmt.format(m)} [{fmt.format(lo)}, {fmt.format(hi)}]"

    def koi(x: dict[str, Any]) -> str:
        k = x["koikoi"]
        if not k["calls"]:
            return "0"
        return f"{k['calls']} ({k['success_rate']:.1%} won)"

    def top_yaku(x: dict[str, Any]) -> str:
        items = list(x["yaku_per_round"].items())[:6]
        return ", ".join(f"{k} {v:.1%}" for k, v in items) or "-"

    mode = "duplicate pairs" if summary["duplicate"] else "matches"
    if summary.get("common_rng"):
        mode += ", common random numbers"
    lines = [
        f"Arena: A = {a['spec']}, B = {b['spec']}; rules {summary['rules']}; "
        f"{summary['matches']} matches ({summary['pairs']} {mode}), {summary['rounds']} rounds, "
        f"seed {summary['seed']}",
        f"{'':24}{'A':<{width}}{'B'}",
    ]
    rows = [
        (
            "match W/D/L",
            f"{a['match_wins']}/{a['match_draws']}/{a['match_losses']}",
            f"{b['match_wins']}/{b['match_draws']}/{b['match_losses']}",
        ),
        ("match win rate", iv(a["match_win_rate"], True), iv(b["match_win_rate"], True)),
        ("match score", iv(a["score"], True), iv(b["score"], True)),
        ("points per round", iv(a["points_per_round"]), iv(b["points_per_round"])),
        (
            "net points per round",
            iv(a["net_per_round"], signed=True),
            iv(b["net_per_round"], signed=True),
        ),
        ("round wins", str(a["round_wins"]), str(b["round_wins"])),
        ("koi-koi calls", koi(a), koi(b)),
        ("think ms (mean/max)", _think(a), _think(b)),
    ]
    if a["forfeits"] or b["forfeits"]:
        rows.append(("forfeits", str(a["forfeits"]), str(b["forfeits"])))
    for label, x, y in rows:
        lines.append(f"{label:<24}{x:<{width}}{y:<{width}}".rstrip())
    for x in (a, b):
        lines.append(f"yaku per round ({x['label']}): {top_yaku(x)}")
    elo = summary["elo"]
    lines.append(
        f"Elo difference A - B: {elo['mean']:+.0f} [{elo['ci95'][0]:+.0f}, {elo['ci95'][1]:+.0f}]"
    )
    for x in (a, b):
        for reason in x["forfeit_reasons"][:3]:
            lines.append(f"forfeit ({x['label']}): {reason}")
    sprt = summary.get("sprt")
    if sprt is not None:
        verdict = {
            "H1": f"H1 accepted (Elo >= {sprt['elo1']:g})",
            "H0": f"H0 accepted (Elo <= {sprt['elo0']:g})",
            "inconclusive": "inconclusive",
        }[sprt["result"]]
        lines.append(
            f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}]: LLR {sprt['llr']:.2f} "
            f"({sprt['lower']:.2f}, {sprt['upper']:.2f}) after {sprt['units']} units: {verdict}"
        )
    return "\n".join(lines)


def _think(x: dict[str, Any]) -> str:
    return f"{x['think_ms_mean']:.2f} / {x['think_ms_max']:.1f}"


def plot_running_mean(pairs: Sequence[PairResult], path: str | Path, *, title: str = "") -> Path:
    """Save a PNG of agent A's running net points per round with its 95% band.

    Needs matplotlib (``pip install 'koikoi[plot]'``); imported here only.

    Raises:
        InvalidInputError: without matplotlib, or when the file cannot be written.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InvalidInputError("--plot needs matplotlib: pip install 'koikoi[plot]'") from None
    xs: list[int] = []
    means: list[float] = []
    los: list[float] = []
    his: list[float] = []
    nets: list[float] = []
    rounds: list[float] = []
    for i, p in enumerate(pairs, 1):
        nets.append(p.net)
        rounds.append(float(p.rounds))
        m, lo, hi = ratio_ci(nets, rounds)
        xs.append(i)
        means.append(m)
        los.append(lo)
        his.append(hi)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(xs, means, label="net points per round (A - B)")
    ax.fill_between(xs, los, his, alpha=0.25, label="95% confidence band")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("deal pairs played")
    ax.set_ylabel("points per round")
    if title:
        ax.set_title(title)
    ax.legend(loc="best")
    fig.tight_layout()
    out = Path(path)
    try:
        fig.savefig(out, dpi=100)
    except OSError as exc:
        raise InvalidInputError(f"cannot write plot {str(out)!r}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return out


def stderr_is_tty() -> bool:
    """Whether stderr is a terminal (the progress bar's default)."""
    return sys.stderr.isatty()
