"""The ceiling (:mod:`koikoi.lab.oracle`): a player that sees every card, for the arena only.

Endgames are solved here by plain minimax over the engine (both players, the
drawn-card choices and koi-koi included) and the oracle's search is held to it;
the arena is checked to hand it the true match, and everything else to refuse it.
"""

from __future__ import annotations

import json
import random

import pytest

import koikoi.lab.arena.play as arena_play
from koikoi.agents import make_agent
from koikoi.cli import main
from koikoi.game.engine import Match, Phase, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import get_rules
from koikoi.game.views import view_of
from koikoi.lab.arena import ArenaConfig, play_match, run_arena
from koikoi.lab.oracle import (
    FullInformationAgent,
    HandOracle,
    PerfectInformationSearch,
    edge_share,
    is_oracle_spec,
    oracle_from_spec,
)

JAPAN = get_rules("koikoi-japan")
SHORT = JAPAN.replace(game__rounds=3)


def minimax(rnd: Round, me: int) -> int:
    """The net round points for ``me`` of ``rnd`` under best play by both, on its true deal."""
    s = rnd.settlement
    if s is not None:
        return 0 if s.winner is None else (s.points if s.winner == me else -s.points)
    values = []
    for action in rnd.legal_ids():
        child = rnd.clone()
        child.apply_id(action)
        values.append(minimax(child, me))
    return max(values) if rnd.current == me else min(values)


def action_values(rnd: Round) -> dict[int, int]:
    """The minimax value of each legal action for the player to act."""
    out = {}
    for action in rnd.legal_ids():
        child = rnd.clone()
        child.apply_id(action)
        out[action] = minimax(child, rnd.current)
    return out


def endgame(seed: int, cards: int = 3) -> Round | None:
    """A round of ``seed`` played at random until both hands hold at most ``cards``
    cards and the player to act has a choice of hand play (None if it ended first)."""
    rnd = Match(JAPAN, seed=seed, events=False).round.clone()
    rng = random.Random(seed)
    while not rnd.is_over:
        ids = rnd.legal_ids()
        small = max(h.bit_count() for h in rnd.hands) <= cards
        if small and rnd.phase is Phase.PLAY and len(ids) > 1:
            return rnd
        rnd.apply_id(ids[rng.randrange(len(ids))])
    return None


def redealt(rnd: Round, rng: random.Random) -> Round:
    """``rnd`` with the cards hidden from the player to act dealt again: the same view."""
    me = rnd.current
    hidden = [c for c in range(48) if rnd.hands[1 - me] >> c & 1] + rnd.stock
    rng.shuffle(hidden)
    n = rnd.hands[1 - me].bit_count()
    other = rnd.clone()
    other.hands[1 - me] = sum(1 << c for c in hidden[:n])
    other._stock = hidden[n:][::-1]  # (bottom card first)
    return other


def test_the_search_finds_the_best_action_of_solved_endgames() -> None:
    """On endgames of three cards a hand, the oracle's choice is always a best one by
    minimax on the true deal (and the solved endgames are not all trivial)."""
    oracle = PerfectInformationSearch(iterations=2000)
    solved = not_trivial = 0
    for seed in range(12):
        rnd = endgame(seed)
        if rnd is None:
            continue
        values = action_values(rnd)
        chosen = oracle.search(rnd, rnd.current, None, random.Random(seed))
        assert values[chosen] == max(values.values()), (seed, values, chosen)
        solved += 1
        not_trivial += len(set(values.values())) > 1
    assert solved >= 8 and not_trivial >= 3


def test_the_oracle_sees_the_true_deal() -> None:
    """Two deals that look the same to the player but whose best actions differ: the
    oracle plays a best action of each, so it reads the hidden cards (a fair player
    cannot tell the two apart)."""
    oracle = PerfectInformationSearch(iterations=2000)
    found = 0
    for seed in range(40):
        rnd = endgame(seed)
        if rnd is None:
            continue
        other = redealt(rnd, random.Random(seed))
        assert view_of(_match_of(rnd), rnd.current) == view_of(_match_of(other), rnd.current)
        first, second = action_values(rnd), action_values(other)
        best = {a for a, v in first.items() if v == max(first.values())}
        best2 = {a for a, v in second.items() if v == max(second.values())}
        if best & best2:
            continue
        assert oracle.search(rnd, rnd.current, None, random.Random(1)) in best
        assert oracle.search(other, rnd.current, None, random.Random(1)) in best2
        found += 1
        if found == 2:
            break
    assert found == 2


def _match_of(rnd: Round) -> Match:
    """A match whose current round is ``rnd`` (for its views)."""
    match = Match(JAPAN, seed=0, events=False)
    match.round = rnd
    return match


def test_the_oracle_plays_legal_moves_through_whole_matches() -> None:
    for spec, seed in (("oracle:iterations=30", 5), ("oracle:sees=hand,iterations=20", 6)):
        oracle = oracle_from_spec(spec)
        match = Match(SHORT, seed=seed, events=False)
        rng = random.Random(seed)
        while not match.is_over:
            legal = match.legal_ids()
            if match.current == 0:
                action = oracle.act_on_match(match, rng)
            else:
                action = legal[rng.randrange(len(legal))]
            assert action in legal
            match.apply_id(action)


def test_the_arena_hands_the_oracle_the_true_match() -> None:
    """What the oracle is asked about is the arena's own match: its hidden cards too."""
    seen: list[Match] = []

    class Spy(PerfectInformationSearch):
        def act_on_match(self, match: Match, rng: random.Random) -> int:
            seen.append(match)
            return match.legal_ids()[0]

    spy = Spy(iterations=1)
    arena_play._ORACLES["oracle:spy=1"] = spy
    try:
        result, match = play_match(
            ("oracle:spy=1", "greedy"), SHORT, seats=(0, 1), match_seed=9, agent_seeds=(1, 2)
        )
    finally:
        del arena_play._ORACLES["oracle:spy=1"]
    assert result.forfeit is None and result.decisions[0] == len(seen) > 0
    assert all(m is match for m in seen)


def test_the_oracle_beats_the_heuristic_in_a_seeded_arena() -> None:
    result = run_arena(ArenaConfig(("oracle:iterations=300", "heuristic"), SHORT, 8, seed=11))
    oracle, heuristic = result.summary["agents"]
    assert oracle["forfeits"] == 0 and heuristic["forfeits"] == 0
    assert oracle["score"]["mean"] > 0.5
    assert oracle["net_per_round"]["mean"] > 1.0


def test_the_oracle_is_refused_outside_the_arena() -> None:
    """Not in the agent registry (so no face can build it), and it will not play from a view."""
    for spec in ("oracle", "oracle:sees=hand"):
        with pytest.raises(InvalidInputError, match="unknown agent 'oracle'"):
            make_agent(spec)
        match = Match(SHORT, seed=1, events=False)
        oracle = oracle_from_spec(spec)
        assert isinstance(oracle, FullInformationAgent)
        with pytest.raises(InvalidInputError, match="measuring tool of the arena"):
            oracle.act(view_of(match, match.current), random.Random(1))
    assert isinstance(oracle_from_spec("oracle:sees=hand,iterations=20"), HandOracle)
    assert is_oracle_spec(" Oracle:iterations=5") and not is_oracle_spec("expert")


def test_the_play_command_refuses_the_oracle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--opponent", "oracle"]) != 0
    assert "unknown agent 'oracle'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("oracle:iterations=0", "iterations must be 1 or more, not 0"),
        ("oracle:iterations=many", "iterations must be an integer, not 'many'"),
        ("oracle:rollouts=0", "rollouts must be 1 or more"),
        ("oracle:policy=wild", "unknown rollout policy 'wild'"),
        ("oracle:explore=-1", "explore must be a positive number"),
        ("oracle:depth=3", "unknown parameter 'depth': allowed sees, iterations"),
        ("oracle:sees=stock", "sees must be one of all, hand, not 'stock'"),
        ("oracle:sees=hand,depth=3", "expert: unknown parameter 'depth'"),
        ("expert", "not an oracle spec"),
    ],
)
def test_bad_oracle_specs_are_refused_clearly(spec: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        oracle_from_spec(spec)


def test_the_arena_command_plays_the_oracle(capsys: pytest.CaptureFixture[str]) -> None:
    argv = "arena oracle:iterations=50 greedy --rules koikoi-japan --matches 2 --seed 4 --json"
    assert main(argv.split()) == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["spec"] for a in out["agents"]] == ["oracle:iterations=50", "greedy"]
    assert out["agents"][0]["forfeits"] == 0


def test_edge_share_pairs_the_runs() -> None:
    ceiling = [(1.0, 8.0, 8), (0.5, 0.0, 8), (1.0, 8.0, 8), (0.5, 0.0, 8)]
    player = [(0.5, 4.0, 8), (0.5, 0.0, 8), (1.0, 4.0, 8), (0.0, -2.0, 8)]
    share = edge_share(player, ceiling, resamples=500, seed=3)
    assert share["score"][0] == pytest.approx(0.0)  # (0 + 0 + .5 - .5) / (.5 + 0 + .5 + 0)
    assert share["net"][0] == pytest.approx(6 / 16)
    lo, hi = share["score"][1:]
    assert lo < 0.0 < hi
    assert edge_share(ceiling, ceiling)["score"][0] == pytest.approx(1.0)
    even = [(0.5, 0.0, 8)] * 4
    assert all(v != v for v in edge_share(player, even)["score"])  # nan: no edge to share
    with pytest.raises(InvalidInputError, match="same deal pairs"):
        edge_share(player, ceiling[:2])
