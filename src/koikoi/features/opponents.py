"""What the games offer people: opponents by level, and hints from the strongest player.

Both games, the terminal game (:mod:`koikoi.tui`) and the web game
(:mod:`koikoi.server`), offer the levels of :mod:`koikoi.agents.expert`
(:data:`LEVEL_CHOICES`, weakest first), the last of which is ``expert``, the
default opponent (:data:`DEFAULT_OPPONENT`).

Hints come from one evaluator whatever the opponent: :data:`HINT_SPEC`, the
expert with a short budget. It is also ``koikoi analyze``'s default agent, so a
hint and an analysis of the same position rank the moves by the same value (what
the expert maximises, :attr:`~koikoi.agents.base.ActionValue.key`) and show it
in the same units: expected net round points and the chance of winning the match.

>>> [choice.agent for choice in LEVEL_CHOICES][-2:]
['level:7', 'expert']
>>> format_value(ActionValue(points=1.23, equity=0.618))
'+1.2 points · 62% match win'
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from koikoi.agents.base import ActionValue
from koikoi.agents.expert import LEVELS, Level
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView
from koikoi.i18n import t

__all__ = [
    "DEFAULT_OPPONENT",
    "HINT_SPEC",
    "LEVEL_CHOICES",
    "LevelChoice",
    "format_equity",
    "format_points",
    "format_value",
    "hint_values",
    "level_choice",
    "preload_agent",
    "ranked",
]

DEFAULT_OPPONENT: Final = "expert"
"""The opponent a new game starts with: the strongest player (level 8)."""
HINT_SPEC: Final = "expert:time=0.3"
"""The evaluator of hints in both games and the default agent of ``koikoi analyze``."""


@dataclass(frozen=True, slots=True)
class LevelChoice:
    """One level as the games offer it: the agent spec they use and the level's facts."""

    agent: str
    """``level:N``, or ``expert`` for the top level."""
    level: Level

    @property
    def label(self) -> str:
        """``"3 · Casual"``: the number and the title, for a list of choices."""
        return f"{self.level.number} · {self.level.title}"

    def to_dict(self) -> dict[str, Any]:
        """``{"agent", "level", "title", "description"}`` (the web game's config)."""
        return {
            "agent": self.agent,
            "level": self.level.number,
            "title": self.level.title,
            "description": self.level.description,
        }


LEVEL_CHOICES: Final[tuple[LevelChoice, ...]] = tuple(
    LevelChoice("expert" if level.number == len(LEVELS) else f"level:{level.number}", level)
    for level in LEVELS
)
"""The levels the games offer, weakest first; the last is ``expert``."""


def level_choice(agent: str) -> LevelChoice | None:
    """The offered level of an agent spec (``level:8`` is ``expert``), or None.

    >>> level_choice("level:8").agent, level_choice("greedy")
    ('expert', None)
    """
    spec = agent.strip().lower()
    for choice in LEVEL_CHOICES:
        if spec in (choice.agent, f"level:{choice.level.number}"):
            return choice
    return None


def preload_agent(agent: Any, rules: Rules | None = None) -> None:
    """Load what ``agent`` needs before its first decision (the compiled kernel, the
    match-equity table of ``rules``); slow (seconds): run it off the UI thread.

    A single-round match is played for its points: no equity table is loaded.
    """
    from koikoi.agents.expert import preload

    preload(agent, rules if rules is not None and rules.game.rounds > 1 else None)


def hint_values(agent: Any, view: PlayerView, rng: random.Random) -> dict[int, ActionValue]:
    """``agent``'s value of each legal action of ``view``: its ``evaluate_detail``, or
    its ``evaluate`` as points.

    Raises:
        InvalidInputError: the agent cannot evaluate moves.
    """
    detail = getattr(agent, "evaluate_detail", None)
    if callable(detail):
        values: Mapping[int, ActionValue] = detail(view, rng)
        return {int(a): v for a, v in values.items()}
    evaluate = getattr(agent, "evaluate", None)
    if callable(evaluate):
        return {int(a): ActionValue(points=float(v)) for a, v in dict(evaluate(view, rng)).items()}
    raise InvalidInputError(
        f"agent {getattr(agent, 'name', agent)!r} cannot evaluate moves: "
        f"use a search agent such as {HINT_SPEC}"
    )


def ranked(
    values: Mapping[int, ActionValue], legal: Iterable[int] | None = None
) -> list[tuple[int, ActionValue]]:
    """The actions best first by what the evaluator maximises (:attr:`ActionValue.key`),
    ties by action id; only those of ``legal`` when given.

    >>> ranked({1: ActionValue(2.0, 0.4), 2: ActionValue(1.0, 0.6)})[0][0]
    2
    """
    ids = list(values) if legal is None else [a for a in legal if a in values]
    ids.sort(key=lambda a: (-values[a].key, a))
    return [(a, values[a]) for a in ids]


def format_points(points: float) -> str:
    """Expected net round points: ``"+1.2 points"``, ``"-0.4 points"`` (in the language
    in use)."""
    return t("{points:+.1f} points", points=round(points, 1) + 0.0)


def format_equity(equity: float) -> str:
    """The chance of winning the match: ``"62% match win"`` (in the language in use)."""
    return t("{percent:.0f}% match win", percent=round(100 * equity))


def format_value(value: ActionValue) -> str:
    """Points, and the match-win chance when the evaluator plays for the match."""
    text = format_points(value.points)
    if value.equity is not None:
        text += " · " + format_equity(value.equity)
    return text
