#!/usr/bin/env python3
"""Arena with a player that sees the opponent's hand: how much is inference worth at most?

A measuring tool, not a player: it registers an agent kind ``oracle`` for one
``koikoi arena`` run, in this process (``--workers 1``: worker processes would
not see it), and it reads the hidden hand through the arena's match. Nothing
else in the package can build it.

    python scripts/oracle-arena.py SPEC arena oracle mcts:iterations=2000,rollouts=1 \\
        --rules nintendo --matches 400 --seed 2060 --workers 1

``oracle`` is the ``expert`` spec ``SPEC`` (for example ``expert:iterations=2000``)
whose every re-deal gives the opponent their true hand; the stock stays
unknown to it, re-dealt as usual. Its results against a fair player bound what
any opponent-hand inference could add to that search. Everything after the
spec is the ``koikoi`` command line. The figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Mapping
from typing import Any

import koikoi.lab.arena.play as arena_play
from koikoi.agents.base import AGENT_KINDS, make_agent, register_agent
from koikoi.agents.expert import ExpertAgent
from koikoi.cli import main
from koikoi.game.engine import Match
from koikoi.game.views import PlayerView

_live: list[Match] = []


def _watching_view_of(match: Match, player: int | None, **kw: Any) -> PlayerView:
    """The arena's ``view_of`` (of its play module), remembering the match for the oracle."""
    _live[:] = [match]
    return _view_of(match, player, **kw)


_view_of: Callable[..., PlayerView] = getattr(arena_play, "view_of")  # noqa: B009 (not exported)


class OracleAgent(ExpertAgent):
    """``expert`` whose re-deals give the opponent their true hand."""

    def hand_pool(self, view: PlayerView, rng: random.Random) -> list[int] | None:
        if view.player is None or not _live:
            return None
        hand = _live[0].round.hands[view.opponent]
        return [hand] if hand else None


def oracle_of(spec: str) -> OracleAgent:
    """The oracle built on the ``expert`` spec ``spec`` (its settings, copied)."""
    agent = make_agent(spec)
    oracle = OracleAgent.__new__(OracleAgent)
    oracle.__dict__.update(agent.__dict__)
    oracle.name = f"oracle({spec})"
    return oracle


def run(argv: list[str]) -> int:
    workers = argv[argv.index("--workers") + 1 :][:1] if "--workers" in argv else ["1"]
    if len(argv) < 2 or workers != ["1"]:
        print(__doc__, file=sys.stderr)
        return 2
    spec, rest = argv[0], argv[1:]
    base = make_agent(spec)  # a bad spec fails here, clearly
    if not isinstance(base, ExpertAgent):
        print(f"the oracle is built on an expert spec, not {spec!r}", file=sys.stderr)
        return 2

    def factory(params: Mapping[str, str], raw: str) -> OracleAgent:
        return oracle_of(spec)

    setattr(arena_play, "view_of", _watching_view_of)  # noqa: B010
    register_agent("oracle", factory)
    try:
        return main(rest)
    finally:  # leave the process as it was (a caller may go on)
        setattr(arena_play, "view_of", _view_of)  # noqa: B010
        AGENT_KINDS.pop("oracle", None)
        _live.clear()


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
