"""The agent protocol, the spec-string registry, and the two simplest agents."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from koikoi.game.actions import KOIKOI_ID, STOP_ID
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView
from koikoi.kernel.policy import card_value, greedy_value

__all__ = [
    "AGENT_KINDS",
    "ActionValue",
    "Agent",
    "GreedyAgent",
    "RandomAgent",
    "card_value",
    "make_agent",
    "parse_agent_spec",
    "register_agent",
]


@dataclass(frozen=True, slots=True)
class ActionValue:
    """What a search agent thinks of one action.

    ``points``: the expected net round points for the player to act (points won
    minus points lost this round). ``equity``: the chance of winning the match,
    0 to 1, when the agent plays for the match (else None). :attr:`key` is the
    value the agent maximises.
    """

    points: float
    equity: float | None = None

    @property
    def key(self) -> float:
        return self.points if self.equity is None else self.equity

    def to_dict(self) -> dict[str, float]:
        out = {"points": round(self.points, 4)}
        if self.equity is not None:
            out["equity"] = round(self.equity, 4)
        return out


@runtime_checkable
class Agent(Protocol):
    """A player: chooses one of ``view.legal_ids`` from what the view shows."""

    name: str

    def act(self, view: PlayerView, rng: random.Random) -> int:
        """The chosen action id (one of ``view.legal_ids``)."""
        ...


class RandomAgent:
    """Uniformly random legal actions."""

    name = "random"

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        return ids[int(rng.random() * len(ids))]


class GreedyAgent:
    """Takes the biggest immediate capture by card value; stops as soon as it scores.

    The value is :func:`koikoi.kernel.policy.greedy_value`, the kernel's ``greedy``
    rollout policy's (ties at random there too).
    """

    name = "greedy"

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if KOIKOI_ID in ids:
            return STOP_ID
        best: list[int] = []
        best_value = -(1 << 30)
        for action_id in ids:
            value = self._value(view, action_id)
            if value > best_value:
                best, best_value = [action_id], value
            elif value == best_value:
                best.append(action_id)
        return best[int(rng.random() * len(best))]

    @staticmethod
    def _value(view: PlayerView, action_id: int) -> int:
        return greedy_value(view.field, action_id)


AgentFactory = Callable[[dict[str, str], str], Agent]
AGENT_KINDS: dict[str, AgentFactory] = {
    "random": lambda params, arg: RandomAgent(),
    "greedy": lambda params, arg: GreedyAgent(),
}
# Agents defined in other modules, imported on first use: kind -> "module:factory".
_LAZY: dict[str, str] = {
    "heuristic": "koikoi.agents.heuristic:from_spec",
    "mcts": "koikoi.agents.mcts:from_spec",
    "cmd": "koikoi.agents.external:from_spec",
    "expert": "koikoi.agents.expert:expert_from_spec",
    "level": "koikoi.agents.expert:level_from_spec",
    "learned": "koikoi.agents.learned:from_spec",
}


def register_agent(kind: str, factory: AgentFactory) -> None:
    """Make ``kind`` usable in spec strings."""
    AGENT_KINDS[kind] = factory


def parse_agent_spec(spec: str) -> tuple[str, dict[str, str], str]:
    """Split ``"kind:key=value,key=value"`` (or ``"cmd:PROGRAM ARGS"``) into its parts.

    Returns ``(kind, params, raw_argument)``.
    """
    kind, _, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if not kind:
        raise InvalidInputError(
            f"empty agent spec {spec!r}: expected e.g. 'random' or 'mcts:time=1'"
        )
    params: dict[str, str] = {}
    if rest and kind not in ("cmd", "level"):
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise InvalidInputError(
                    f"agent spec {spec!r}: {part!r} is not key=value (e.g. mcts:time=1.0)"
                )
            params[key.strip().lower()] = value.strip()
    return kind, params, rest


def make_agent(spec: str) -> Agent:
    """Build an agent from a spec string.

    Raises:
        InvalidInputError: unknown kind or bad parameters, naming what is allowed.
    """
    kind, params, rest = parse_agent_spec(spec)
    factory = AGENT_KINDS.get(kind)
    if factory is None and kind in _LAZY:
        module_name, _, attr = _LAZY[kind].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
        else:
            factory = getattr(module, attr)
            AGENT_KINDS[kind] = factory
    if factory is None:
        available = sorted(set(AGENT_KINDS) | set(_LAZY))
        raise InvalidInputError(f"unknown agent {kind!r}: allowed {', '.join(available)}")
    return factory(params, rest)
