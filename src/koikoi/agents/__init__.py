"""AI players. Every agent sees only a :class:`~koikoi.game.views.PlayerView`.

An agent is anything with ``name`` and ``act(view, rng) -> action id``; the
random generator is injected so that a seeded game replays exactly. Agents are
built from spec strings (``"random"``, ``"greedy"``, ``"heuristic"``,
``"mcts:time=1.0"``, ``"cmd:PATH ARGS"``) by :func:`make_agent`.

>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> import random
>>> m = Match(seed=1)
>>> agent = make_agent("greedy")
>>> agent.act(view_of(m, m.current), random.Random(0)) in m.legal_ids()
True
"""

from __future__ import annotations

from koikoi.agents.base import (
    AGENT_KINDS,
    Agent,
    GreedyAgent,
    RandomAgent,
    make_agent,
    parse_agent_spec,
    register_agent,
)

__all__ = [
    "AGENT_KINDS",
    "Agent",
    "GreedyAgent",
    "RandomAgent",
    "make_agent",
    "parse_agent_spec",
    "register_agent",
]
