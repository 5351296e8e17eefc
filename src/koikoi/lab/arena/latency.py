"""Decision latency: how long an agent takes to choose, as a waiting player sees it."""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from koikoi.agents.base import make_agent
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.views import view_of
from koikoi.lab.arena.config import derive_seed
from koikoi.lab.arena.play import close_agent
from koikoi.lab.arena.stats import percentile


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
        close_agent(agent)
        close_agent(opponent)
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
