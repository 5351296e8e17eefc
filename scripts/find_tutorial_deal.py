"""Search the seeds for the tutorial's deal (koikoi.features.tutorial.TUTORIAL_SEED).

A seed qualifies when, under the tutorial's rules, the newcomer (player 0) deals
and leads, and following the coach's picks (koikoi.features.tutorial.suggestion) against
the greedy opponent the first round shows, before the newcomer's first koi-koi
decision: a first play with one match that captures a card better than a Plain,
a draw that captures, a turn where no hand card matches, captures of several
kinds, and the opponent without a yaku. The opponent's choices on the way must
have no ties, so that every host (the web game, the terminal game) plays the
same round. Seeds are ranked by what else they show (a card with two matches,
all four kinds) and by how early the koi-koi decision comes.

    PYTHONPATH=src python scripts/find_tutorial_deal.py --seeds 5000
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field

from koikoi.agents.base import GreedyAgent
from koikoi.features.tutorial import TUTORIAL_SEAT, suggestion, tutorial_rules
from koikoi.game.cards import KINDS, MONTH_MASKS, Kind, card_list
from koikoi.game.engine import Match, Phase
from koikoi.game.views import view_of


@dataclass
class Path:
    seed: int
    turns: list[int] = field(default_factory=list)  # matches of each of the newcomer's plays
    lay_forced: bool = False
    draw_capture: bool = False
    kinds: set[Kind] = field(default_factory=set)
    decide_turn: int = 0
    first_capture_better_than_plain: bool = False

    def qualifies(self) -> bool:
        return (
            bool(self.turns)
            and self.turns[0] == 1
            and self.first_capture_better_than_plain
            and self.draw_capture
            and self.lay_forced
            and len(self.kinds) >= 3
            and 0 < self.decide_turn <= 5
        )

    def rank(self) -> tuple[int, ...]:
        return (2 in self.turns, len(self.kinds), -self.decide_turn)


def unique_greedy(view_ids: tuple[int, ...], view: object) -> bool:
    values = [GreedyAgent._value(view, a) for a in view_ids]  # type: ignore[arg-type]
    return values.count(max(values)) == 1


def walk(seed: int) -> Path | None:
    me = TUTORIAL_SEAT
    match = Match(tutorial_rules(), seed=seed)
    if match.dealer != me or match.round.leader != me or len(match.deals) != 1:
        return None
    if match.round.is_over:
        return None
    path = Path(seed)
    greedy = GreedyAgent()
    while not match.is_over:
        rnd = match.round
        if rnd.current == me:
            view = view_of(match, me)
            if rnd.phase is Phase.DECIDE:
                path.decide_turn = len(path.turns)
                return path
            action = suggestion(view)
            assert action is not None
            hand = card_list(rnd.hands[me])
            if rnd.phase is Phase.PLAY and not any(rnd.field & MONTH_MASKS[c // 4] for c in hand):
                path.lay_forced = True
            before = len(match.events)
            if rnd.phase is Phase.PLAY:
                card = action if action < 48 else (action - 48) // 48
                path.turns.append((rnd.field & MONTH_MASKS[card // 4]).bit_count())
            match.apply(action)
            for event in match.events[before:]:
                if event.player == me and event.kind in ("play", "draw", "take") and event.cards:
                    if len(path.turns) == 1 and event.kind == "play":
                        path.first_capture_better_than_plain = any(
                            KINDS[c] is not Kind.PLAIN for c in card_list(event.cards)
                        )
                    path.kinds |= {KINDS[c] for c in card_list(event.cards)}
                    if event.kind in ("draw", "take"):
                        path.draw_capture = True
        else:
            view = view_of(match, 1 - me, with_history=True)
            if rnd.phase is Phase.DECIDE:
                return None  # the opponent made a yaku first
            if not unique_greedy(view.legal_ids, view):
                return None
            match.apply(greedy.act(view, random.Random(0)))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5000, help="seeds 0..N-1 to try")
    parser.add_argument("--show", type=int, default=10, help="best seeds to print")
    args = parser.parse_args()
    found = [p for s in range(args.seeds) if (p := walk(s)) is not None and p.qualifies()]
    found.sort(key=lambda p: p.rank(), reverse=True)
    for p in found[: args.show]:
        kinds = "".join(k.name[0] for k in sorted(p.kinds))
        print(
            f"seed {p.seed}: matches per play {p.turns}, kinds {kinds}, "
            f"decide after play {p.decide_turn}"
        )
    print(f"{len(found)} of {args.seeds} seeds qualify")


if __name__ == "__main__":
    main()
