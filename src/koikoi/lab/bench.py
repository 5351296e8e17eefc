"""Throughput of the engine's public step API under random play.

:func:`bench_engine` plays whole matches with uniformly random legal actions
(one seeded ``random.Random``), single process, for a given time, and counts
rounds (every settled round, instant ones included) and steps (actions
applied). The fast mode is what search uses: ``Match(events=False)``,
``legal_ids()`` and the unchecked ``apply_id``; the checked mode keeps the
event log and applies every action with the checked ``apply``.

>>> result = bench_engine(seconds=0.05, repeat=1)
>>> result.rounds_per_s > 0 and result.steps_per_s > result.rounds_per_s
True
"""

from __future__ import annotations

import platform
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules, get_rules

__all__ = ["BenchRun", "EngineBench", "bench_engine", "play_random"]


@dataclass(frozen=True, slots=True)
class BenchRun:
    """One timed run: how much was played in how long."""

    matches: int
    rounds: int
    steps: int
    seconds: float
    cpu_seconds: float
    """Process CPU time of the run: on a busy machine it is below ``seconds``."""

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.seconds

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds

    @property
    def rounds_per_cpu_s(self) -> float:
        return self.rounds / self.cpu_seconds if self.cpu_seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class EngineBench:
    """The result of :func:`bench_engine`: the median over the runs."""

    rules: str
    checked: bool
    seconds: float
    seed: int
    runs: tuple[BenchRun, ...]

    @property
    def rounds_per_s(self) -> float:
        """Median rounds per second over the runs."""
        return statistics.median(r.rounds_per_s for r in self.runs)

    @property
    def steps_per_s(self) -> float:
        """Median steps per second over the runs."""
        return statistics.median(r.steps_per_s for r in self.runs)

    @property
    def rounds_per_cpu_s(self) -> float:
        """Median rounds per second of process CPU time (what an idle core would do)."""
        return statistics.median(r.rounds_per_cpu_s for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "rules": self.rules,
            "mode": "checked" if self.checked else "fast",
            "seconds": self.seconds,
            "repeat": len(self.runs),
            "seed": self.seed,
            "rounds_per_s": self.rounds_per_s,
            "steps_per_s": self.steps_per_s,
            "rounds_per_cpu_s": self.rounds_per_cpu_s,
            "runs": [
                {
                    "matches": r.matches,
                    "rounds": r.rounds,
                    "steps": r.steps,
                    "seconds": r.seconds,
                    "cpu_seconds": r.cpu_seconds,
                }
                for r in self.runs
            ],
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "machine": platform.machine(),
        }


def play_random(rules: Rules, rng: random.Random, *, checked: bool = False) -> tuple[int, int]:
    """Play one match with random legal actions; returns ``(rounds, steps)``."""
    apply: Callable[[int], None]
    if checked:
        match = Match(rules, rng=rng, events=True)
        apply = match.apply
    else:
        match = Match(rules, rng=rng, events=False)
        apply = match.apply_id
    legal_ids = match.legal_ids
    pick = rng.random
    steps = 0
    while not match.is_over:
        ids = legal_ids()
        apply(ids[int(pick() * len(ids))])
        steps += 1
    return len(match.settlements), steps


def _timed_run(rules: Rules, seconds: float, seed: int, checked: bool) -> BenchRun:
    rng = random.Random(seed)
    matches = rounds = steps = 0
    clock = time.perf_counter
    cpu_start = time.process_time()
    start = clock()
    elapsed = 0.0
    while elapsed < seconds:
        r, s = play_random(rules, rng, checked=checked)
        matches += 1
        rounds += r
        steps += s
        elapsed = clock() - start
    return BenchRun(matches, rounds, steps, elapsed, time.process_time() - cpu_start)


def bench_engine(
    *,
    seconds: float = 1.0,
    rules: Rules | None = None,
    repeat: int = 5,
    checked: bool = False,
    seed: int = 0,
) -> EngineBench:
    """Random-play throughput: ``repeat`` runs of ``seconds`` each (after a short warm-up).

    Run ``k`` uses ``random.Random(seed + k)``.

    Raises:
        InvalidInputError: if ``seconds`` is not positive or ``repeat`` below 1.
    """
    if not seconds > 0:
        raise InvalidInputError(f"--seconds must be positive, not {seconds}")
    if repeat < 1:
        raise InvalidInputError(f"--repeat must be 1 or more, not {repeat}")
    if seed < 0:
        raise InvalidInputError(f"--seed must be a non-negative integer, not {seed}")
    rules = rules if rules is not None else get_rules("nintendo")
    _timed_run(rules, min(0.1, seconds), seed, checked)  # warm-up: caches, scorer memo
    runs = tuple(_timed_run(rules, seconds, seed + k, checked) for k in range(repeat))
    return EngineBench(rules.name, checked, seconds, seed, runs)
