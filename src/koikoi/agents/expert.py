"""The strongest player, ``expert``, and the levels for people, ``level:1`` … ``level:8``.

``expert`` is the determinized search (:class:`~koikoi.agents.mcts.MCTSAgent`)
playing for the **match**: every playout's round result goes through the rule
set's match-equity table (:mod:`koikoi.agents.equity`), so plays, targets and
koi-koi calls maximise the chance of winning the match (in a single round:
its points). It infers the opponent's hand from their lays and spends a time
budget, 1 second a decision by default (``expert:time=T``; ``iterations=N`` for
runs that must not depend on the machine's speed).

The levels go from a beginner who makes natural mistakes (a softmax over a
player's own move values: good moves are likely, blunders rare, nothing
random) up to ``expert``; :data:`LEVELS` gives each a name and a one-line
description for the UIs.

>>> make_level(1).name, LEVELS[7].title
('level:1', 'Expert')
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from koikoi.actions import KOIKOI_ID, STOP_ID
from koikoi.agents.base import ActionValue, Agent, GreedyAgent, make_agent
from koikoi.agents.mcts import MCTSAgent
from koikoi.errors import InvalidInputError
from koikoi.views import PlayerView

__all__ = [
    "DEFAULT_LEVEL",
    "EXPERT_ROLLOUTS",
    "LEVELS",
    "ExpertAgent",
    "Level",
    "NoisyAgent",
    "expert_from_spec",
    "level_from_spec",
    "make_level",
    "preload",
]

EXPERT_TIME: Final = 1.0
EXPERT_ROLLOUTS: Final = 1


class ExpertAgent(MCTSAgent):
    """The strongest player: match-equity search with opponent-hand inference.

    Args:
        time_limit: seconds a decision (default 1; None with ``iterations``).
        iterations: determinizations a decision instead of (or besides) a time limit.
    """

    def __init__(self, *, time_limit: float | None = None, iterations: int | None = None) -> None:
        if time_limit is None and iterations is None:
            time_limit = EXPERT_TIME
        super().__init__(
            time_limit=time_limit,
            iterations=iterations,
            rollouts=EXPERT_ROLLOUTS,
            objective="match",
            infer=True,
        )
        parts = []
        if time_limit is not None and time_limit != EXPERT_TIME:
            parts.append(f"time={time_limit:g}")
        if iterations is not None:
            parts.append(f"iterations={iterations}")
        self.name = "expert" + (":" + ",".join(parts) if parts else "")


def expert_from_spec(params: Mapping[str, str], raw: str) -> ExpertAgent:
    """``expert``, ``expert:time=T`` or ``expert:iterations=N``."""
    for key in params:
        if key not in ("time", "iterations"):
            raise InvalidInputError(f"expert: unknown parameter {key!r}: allowed time, iterations")
    time_limit: float | None = None
    if "time" in params:
        try:
            time_limit = float(params["time"])
        except ValueError:
            raise InvalidInputError(
                f"expert: time must be a number of seconds, not {params['time']!r}"
            ) from None
    iterations: int | None = None
    if "iterations" in params:
        try:
            iterations = int(params["iterations"])
        except ValueError:
            raise InvalidInputError(
                f"expert: iterations must be a whole number, not {params['iterations']!r}"
            ) from None
    return ExpertAgent(time_limit=time_limit, iterations=iterations)


# --------------------------------------------------------------------- levels


class NoisyAgent:
    """Plays like ``base`` with natural mistakes: a softmax over the base's move values.

    The chance of an action is proportional to ``exp((value - best) / temperature)``:
    near-best moves are often chosen, bad ones rarely, so the mistakes are the
    ones a person makes (a slightly worse capture, a careless lay), not random
    moves. Temperature 0 is the base player itself.
    """

    def __init__(self, base: Any, temperature: float, *, name: str) -> None:
        if not (temperature >= 0 and math.isfinite(temperature)):
            raise InvalidInputError(f"temperature must be 0 or more, not {temperature!r}")
        self.base = base
        self.temperature = temperature
        self.name = name

    def _values(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        if isinstance(self.base, GreedyAgent):
            if KOIKOI_ID in view.legal_ids:
                # Greedy always stops; a novice calls koi-koi about one time in four.
                return {STOP_ID: 0.0, KOIKOI_ID: -math.log(3.0) * self.temperature}
            return {a: float(GreedyAgent._value(view, a)) for a in view.legal_ids}
        values: dict[int, float] = self.base.evaluate(view, rng)
        return values

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if not ids:
            raise InvalidInputError(f"{self.name}: no legal action in this view (not our turn)")
        if len(ids) == 1 or self.temperature == 0:
            choice: int = self.base.act(view, rng)
            return choice
        values = self._values(view, rng)
        best = max(values[a] for a in ids)
        weights = [math.exp((values[a] - best) / self.temperature) for a in ids]
        r = rng.random() * sum(weights)
        for a, w in zip(ids, weights, strict=True):
            r -= w
            if r <= 0:
                return a
        return ids[-1]

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        return self._values(view, rng)


@dataclass(frozen=True)
class Level:
    """One level for people: its number, title, a line for the UIs, and how it plays."""

    number: int
    title: str
    description: str
    spec: str
    """The agent it plays as (an agent spec)."""
    temperature: float = 0.0
    """Softmax temperature of its mistakes, in the base agent's value units (0: none)."""


LEVELS: Final[tuple[Level, ...]] = (
    Level(
        1,
        "Novice",
        "Knows how cards match; grabs what it sees and often gives good cards away.",
        "greedy",
        4.0,
    ),
    Level(
        2,
        "Beginner",
        "Takes the best capture in front of it and stops at its first yaku.",
        "greedy",
    ),
    Level(
        3,
        "Casual",
        "Plans for yaku and watches yours, but slips now and then.",
        "heuristic",
        1.5,
    ),
    Level(
        4,
        "Club player",
        "Plans for yaku, blocks yours, calls koi-koi when it is safe.",
        "heuristic",
    ),
    Level(
        5,
        "Skilled",
        "Looks ahead through the cards still to come (a short search).",
        "mcts:iterations=200,rollouts=1,objective=match",
    ),
    Level(
        6,
        "Strong",
        "Searches thousands of deals and plays for the match score.",
        "mcts:iterations=2000,rollouts=1,objective=match",
    ),
    Level(7, "Master", "The expert with a fifth of its thinking time.", "expert:time=0.2"),
    Level(8, "Expert", "The strongest player: a full second of search per move.", "expert"),
)
"""The levels, weakest first; ``LEVELS[n - 1]`` is ``level:n``."""
DEFAULT_LEVEL: Final = 4
"""The default opponent of the games' new-game screens (a middle level)."""


def make_level(number: int) -> Agent:
    """The agent of ``level:number`` (1 to 8), named ``level:N``."""
    if not 1 <= number <= len(LEVELS):
        raise InvalidInputError(f"level must be 1 to {len(LEVELS)}, not {number}")
    level = LEVELS[number - 1]
    base: Any = make_agent(level.spec)
    if level.temperature:
        return NoisyAgent(base, level.temperature, name=f"level:{number}")
    return _Renamed(base, f"level:{number}")


class _Renamed:
    """An agent under another name (``level:N``), otherwise the same player."""

    def __init__(self, base: Any, name: str) -> None:
        self.base = base
        self.name = name

    def act(self, view: PlayerView, rng: random.Random) -> int:
        choice: int = self.base.act(view, rng)
        return choice

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        values: dict[int, float] = self.base.evaluate(view, rng)
        return values

    def evaluate_detail(self, view: PlayerView, rng: random.Random) -> dict[int, ActionValue]:
        detail = getattr(self.base, "evaluate_detail", None)
        if callable(detail):
            out: dict[int, ActionValue] = detail(view, rng)
            return out
        return {a: ActionValue(points=v) for a, v in self.evaluate(view, rng).items()}


def level_from_spec(params: Mapping[str, str], raw: str) -> Agent:
    """``level:N`` with N from 1 to 8."""
    text = raw.strip()
    if not text.isdigit():
        raise InvalidInputError(
            f"level: expected a number from 1 to {len(LEVELS)} (level:4), not {raw!r}"
        )
    return make_level(int(text))


def preload(agent: Any, rules: Any = None) -> None:
    """Load what ``agent`` needs before its first decision (the compiled kernel, the
    match-equity table of ``rules``), so that the first move is not slow."""
    inner = getattr(agent, "base", agent)
    if isinstance(inner, MCTSAgent):
        inner.uses_kernel  # noqa: B018 - loads (or compiles) the kernel
        if rules is not None and inner.objective == "match":
            from koikoi.agents.equity import match_equity

            match_equity(rules)
