"""What ``koikoi bench kernel`` measures: random rounds per second in the compiled kernel."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.kernel.arrays import compiled, policy_code, rng_state, rules_array

__all__ = ["benchmark"]


def benchmark(
    seconds: float,
    rules: Rules,
    seed: int,
    *,
    policy: str = "random",
    chunk: int = 2000,
) -> dict[str, Any]:
    """Random rounds per second on one core (what ``koikoi bench kernel`` prints).

    The kernel deals rounds itself from fresh shuffles (8 cards to each hand and
    8 to the field, the dealer alternating, the month cycling; no redeal checks or
    instant hands), plays each to its settlement with ``policy`` for both players,
    and counts. Compilation (or loading the cache) and a warm-up run are excluded.

    Returns:
        ``{"rounds_per_s", "rounds", "seconds", "rules", "policy", "backend",
        "cpu_seconds", "rounds_per_cpu_s"}``: ``seconds`` is wall-clock time spent
        in the kernel, ``cpu_seconds`` this process's CPU time over the same calls
        (the two differ when other processes compete for the core); ``backend`` is
        always ``"kernel"``.

    Raises:
        InvalidInputError: for an unknown policy or ``seconds`` not above 0.
    """
    code = policy_code(policy)
    if seconds <= 0:
        raise InvalidInputError(f"seconds must be positive, not {seconds}")
    impl = compiled()
    arr = rules_array(rules)
    rng = rng_state(seed)
    impl.random_rounds(arr, 200, rng, code)  # compile or load, and warm up
    step: Callable[[Any, int, Any, int], int] = impl.random_rounds
    rounds = 0
    elapsed = 0.0
    cpu = 0.0
    while elapsed < seconds:
        t0 = time.perf_counter()
        c0 = time.process_time()
        step(arr, chunk, rng, code)
        cpu += time.process_time() - c0
        elapsed += time.perf_counter() - t0
        rounds += chunk
    return _bench_result(rules, policy, "kernel", rounds, elapsed, cpu)


def _bench_result(
    rules: Rules, policy: str, backend: str, rounds: int, elapsed: float, cpu: float
) -> dict[str, Any]:
    return {
        "rounds_per_s": rounds / elapsed,
        "rounds": rounds,
        "seconds": elapsed,
        "rules": rules.name,
        "policy": policy,
        "backend": backend,
        "cpu_seconds": cpu,
        "rounds_per_cpu_s": rounds / cpu if cpu > 0 else float("inf"),
    }
