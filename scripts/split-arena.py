#!/usr/bin/env python3
"""Arena with split players: one agent plays the cards, another decides koi-koi.

Which half of a player's strength comes from its card play and which from its
koi-koi decisions? This registers an agent kind ``split`` for one ``koikoi
arena`` run, in this process (``--workers 1``: worker processes would not see
it):

    python scripts/split-arena.py PLAY DECIDE arena split heuristic --rules nintendo \\
        --matches 300 --seed 3002 --workers 1

``split`` plays every play and capture like the agent spec ``PLAY`` and every
koi-koi decision like ``DECIDE`` (for example ``heuristic`` and
``mcts:iterations=500``); everything after the two specs is the ``koikoi``
command line. The figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Mapping

from koikoi.agents.base import AGENT_KINDS, Agent, make_agent, register_agent
from koikoi.cli import main
from koikoi.game.engine import Phase
from koikoi.game.views import PlayerView


class SplitAgent:
    """Card play by one agent, koi-koi decisions by another."""

    def __init__(self, play: str, decide: str) -> None:
        self.play: Agent = make_agent(play)
        self.decide: Agent = make_agent(decide)
        self.name = f"split({play} | {decide})"

    def act(self, view: PlayerView, rng: random.Random) -> int:
        agent = self.decide if view.phase is Phase.DECIDE else self.play
        return agent.act(view, rng)


def run(argv: list[str]) -> int:
    workers = argv[argv.index("--workers") + 1 :][:1] if "--workers" in argv else ["1"]
    if len(argv) < 3 or workers != ["1"]:
        print(__doc__, file=sys.stderr)
        return 2
    play, decide, rest = argv[0], argv[1], argv[2:]
    make_agent(play), make_agent(decide)  # bad specs fail here, clearly

    def factory(params: Mapping[str, str], raw: str) -> SplitAgent:
        return SplitAgent(play, decide)

    register_agent("split", factory)
    try:
        return main(rest)
    finally:  # leave the process as it was (a caller may go on)
        AGENT_KINDS.pop("split", None)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
