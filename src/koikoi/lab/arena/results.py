"""What an arena produced: matches, duplicate pairs, the whole run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from koikoi.lab.arena.config import ArenaConfig


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


@dataclass
class ArenaResult:
    """The pairs played and their summary (:func:`summarize`)."""

    config: ArenaConfig
    pairs: list[PairResult]
    summary: dict[str, Any]
    elapsed: float
