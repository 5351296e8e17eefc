"""What an arena plays (:class:`ArenaConfig`) and the seeds it derives."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from koikoi.agents.base import parse_agent_spec
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules

BACKENDS: Final = ("local", "ray")


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed derived from the arena seed and ``parts`` (stable across runs).

    >>> derive_seed(1, "pair", 0) == derive_seed(1, "pair", 0) != derive_seed(1, "pair", 1)
    True
    """
    text = ":".join(["koikoi-arena", str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


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
