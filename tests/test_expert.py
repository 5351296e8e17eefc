"""The expert player and the levels: specs, match awareness on positions, mistakes."""

from __future__ import annotations

import random

import pytest
from koikoi_testkit import follows_its_guide, random_views

from koikoi.agents import make_agent
from koikoi.agents.base import GreedyAgent
from koikoi.agents.expert import (
    ENDGAME_CARDS,
    LEVELS,
    ExpertAgent,
    NoisyAgent,
    make_level,
    preload,
)
from koikoi.game.actions import KOIKOI_ID, STOP_ID
from koikoi.game.cards import CODES, FULL_DECK, card_list, parse_cards
from koikoi.game.engine import Match, Phase
from koikoi.game.errors import InvalidInputError
from koikoi.game.positions import parse_position
from koikoi.game.rules import get_rules
from koikoi.game.views import PlayerView, view_of

HAND0 = "2P1,4P1,5P1,10P1,12P1"
HAND1 = "2P2,4P2,5P2,7P1,10P2,12P2"
PILE0 = "1L,1P1,3L,3P1,8L,8P1"  # sanko: 5 points
PILE1 = "6R,6P1,9R,9P1"
FIELD = "2A,4A,5A,7A,10A,11A,12L,11L"


def _decide(round_text: str, match: str) -> PlayerView:
    """Player 0 has just made sanko (5 points) and must choose: koi-koi or stop."""
    used = 0
    for part in (HAND0, HAND1, PILE0, PILE1, FIELD):
        used |= parse_cards(part.replace(",", " "))
    stock = ",".join(CODES[c] for c in card_list(FULL_DECK & ~used))
    text = (
        f"nintendo round={round_text} dealer=0 turn=0 phase=decide hands={HAND0}/{HAND1} "
        f"field={FIELD} stock={stock} piles={PILE0}/{PILE1} improver=0 match={match}"
    )
    return PlayerView.from_position(parse_position(text), player=0)


def _choice(spec: str, view: PlayerView) -> int:
    return make_agent(spec).act(view, random.Random(0))


@pytest.mark.parametrize("spec", ["expert:iterations=300", "expert:iterations=100,lookahead=2"])
def test_last_round_stopping_wins_the_match_so_stop(spec: str) -> None:
    view = _decide("12/12", "39/35")  # stop: 44-35, the match is won
    assert _choice(spec, view) == STOP_ID
    detail = ExpertAgent(iterations=300).evaluate_detail(view, random.Random(0))
    assert detail[STOP_ID].equity == 1.0 and detail[STOP_ID].points == 5.0
    assert detail[KOIKOI_ID].equity is not None and detail[KOIKOI_ID].equity < 1.0


@pytest.mark.parametrize("spec", ["expert:iterations=300", "expert:iterations=100,lookahead=2"])
def test_last_round_stopping_loses_so_koikoi(spec: str) -> None:
    view = _decide("12/12", "30/36")  # stop: 35-36, the match is lost
    assert _choice(spec, view) == KOIKOI_ID
    detail = ExpertAgent(iterations=300).evaluate_detail(view, random.Random(0))
    assert detail[STOP_ID].equity == 0.0
    assert detail[KOIKOI_ID].equity is not None and detail[KOIKOI_ID].equity > 0.0


@pytest.mark.parametrize("match", ["39/35", "30/36"])
def test_with_rounds_to_go_the_ordinary_decision(match: str) -> None:
    """Early in the match the same hand is decided as for round points."""
    view = _decide("3/12", match)
    ordinary = _choice("mcts:iterations=600,rollouts=1", view)
    assert _choice("expert:iterations=600", view) == ordinary


def test_single_round_plays_for_points() -> None:
    view = _decide("1/1", "0/0")
    detail = ExpertAgent(iterations=50).evaluate_detail(view, random.Random(0))
    assert all(v.equity is None for v in detail.values())


def test_specs() -> None:
    assert make_agent("expert").name == "expert"
    assert make_agent("expert:time=0.5").name == "expert:time=0.5"
    assert make_agent("expert:iterations=10").name == "expert:iterations=10"
    assert make_agent("expert:iterations=10,net=0").name == "expert:iterations=10"
    assert make_agent("expert:net=1,blend=0.3,deals=8").name == "expert:net=1,blend=0.3,deals=8"
    assert make_agent("expert:policy=yaku,prior=0.5").name == "expert:policy=yaku,prior=0.5"
    assert make_agent("expert:prior=0").name == "expert:prior=0"
    assert make_agent("expert:prior=1").name == "expert"  # the default
    assert make_agent("expert:lookahead=2,samples=4").name == "expert:lookahead=2,samples=4"
    assert make_agent("expert:infer=0").name == "expert:infer=0"
    assert make_agent("expert:decide=1").name == "expert:decide=1"
    assert make_agent("expert:tree=1.5").name == "expert:tree=1.5"
    assert make_agent("expert:tree=1,pair=1").name == "expert"  # the default: the paired tree
    assert make_agent("expert:tree=0").name == "expert:tree=0"  # flat
    assert make_agent("expert:tree=0,pair=0").name == "expert:tree=0"  # no tree, no pairing
    assert make_agent("expert:pair=0").name == "expert:pair=0"
    assert make_agent("expert:lookahead=1,decide=1").name == "expert:lookahead=1"
    by_points = make_agent("expert:objective=round")
    assert isinstance(by_points, ExpertAgent) and by_points.objective == "round"
    assert by_points.name == "expert:objective=round"
    assert make_agent("expert:objective=match").name == "expert"  # the default
    soft = make_agent("expert:policy=soft,rollouts=3")
    assert soft.name == "expert:policy=soft,rollouts=3"
    assert isinstance(soft, ExpertAgent) and soft.rollouts == 3 and soft.policy == "soft"
    assert make_agent("expert:infer=plays").name == "expert"  # the default
    assert make_agent("expert:infer=1").name == "expert:infer=lays"
    assert make_agent("mcts:iterations=5,infer=plays").name == "mcts:iterations=5,infer=plays"
    assert make_agent("mcts:iterations=5,infer=lays").name == "mcts:iterations=5"  # the default
    for bad, message in (
        ("expert:infer=all", "infer must be 0, 1 or one of off, lays, plays"),
        ("expert:speed=1", "unknown parameter 'speed'"),
        ("expert:blend=2", "blend must be from 0 to 1"),
        ("expert:net=maybe", "net must be 1 or 0"),
        ("expert:deals=0", "deals must be 1 or more"),
        ("expert:prior=-1", "prior must be from 0 to 10"),
        ("expert:prior=x", "prior must be a number"),
        ("expert:policy=smart", "unknown policy 'smart'"),
        ("expert:time=fast", "time must be a number"),
        ("expert:time=-1", "time must be a positive number"),
        ("expert:lookahead=-1", "lookahead must be from 0 to 16"),
        ("expert:lookahead=two", "lookahead must be a whole number"),
        ("expert:decide=17", "expert: decide must be from 0 to 16"),
        ("expert:decide=yes", "decide must be a whole number"),
        ("expert:tree=-1", "expert: tree must be from 0 to 100"),
        ("expert:tree=deep", "tree must be a number"),
        ("expert:tree=1,pair=yes", "expert: pair must be 1 or 0"),
        ("expert:samples=0", "samples must be from 1 to 1024"),
        ("expert:rollouts=0", "expert: rollouts must be 1 or more"),
        ("expert:objective=points", "expert: unknown objective 'points': allowed match, round"),
        ("expert:samples=2000", "expert: samples must be from 1 to 1024"),
        ("expert:rollouts=many", "rollouts must be a whole number"),
        ("mcts:lookahead=17", "lookahead must be from 0 to 16"),
        ("mcts:samples=x", "samples must be a whole number"),
        ("level:9", "level must be 1 to 8"),
        ("level:x", "expected a number from 1 to 8"),
        ("level", "expected a number from 1 to 8"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            make_agent(bad)
    for n in range(1, 9):
        assert make_agent(f"level:{n}").name == f"level:{n}"
    assert [lv.number for lv in LEVELS] == list(range(1, 9))
    assert len({lv.title for lv in LEVELS}) == 8
    assert all(lv.description.endswith(".") for lv in LEVELS)


def test_lookahead_is_an_option() -> None:
    """Off by default under any budget (it did not measure stronger inside expert)."""
    for spec in ("expert", "expert:time=0.2", "expert:iterations=50"):
        assert getattr(make_agent(spec), "lookahead", None) == 0
    assert getattr(make_agent("expert:time=0.05,lookahead=2"), "lookahead", None) == 2


def _decide_view(seed: int) -> PlayerView:
    """A koi-koi decision with more than the endgame's cards in hand (so playouts run)."""
    heuristic = make_agent("heuristic")
    rng = random.Random(seed)
    for match_seed in range(seed, seed + 200):
        m = Match(get_rules("nintendo"), seed=match_seed, events=False)
        while not m.is_over:
            view = view_of(m, m.current, with_history=False)
            if view.phase is Phase.DECIDE and sum(view.hand_counts) > ENDGAME_CARDS:
                return view
            m.apply_id(heuristic.act(view, rng))
    raise AssertionError("no koi-koi decision found")


def _first_view(seed: int) -> PlayerView:
    """The first card play of a nintendo match (not a koi-koi decision)."""
    m = Match(get_rules("nintendo"), seed=seed, events=False)
    return view_of(m, m.current, with_history=False)


def test_decide_sets_the_lookahead_at_koikoi_decisions_only() -> None:
    """expert:decide=D searches koi-koi decisions with lookahead D and everything else
    as before: the same generator gives the same values off a decision, other ones on it."""
    plain = make_agent("expert:iterations=40")
    deep = make_agent("expert:iterations=40,decide=1")
    assert isinstance(plain, ExpertAgent) and isinstance(deep, ExpertAgent)
    decide, play = _decide_view(7), _first_view(7)
    assert deep.lookahead_for(decide) == 1 and deep.lookahead_for(play) == 0
    assert plain.lookahead_for(decide) == 0
    assert deep.evaluate_detail(play, random.Random(3)) == plain.evaluate_detail(
        play, random.Random(3)
    )
    assert deep.evaluate_detail(decide, random.Random(3)) != plain.evaluate_detail(
        decide, random.Random(3)
    )


def test_tree_searches_card_plays_and_leaves_koikoi_decisions_flat() -> None:
    """expert searches card plays with the paired tree by default, ``pair=0`` with
    the unpaired one, ``tree=0`` flat: three sets of values from the same generator;
    koi-koi decisions are flat in all three (the same values)."""
    flat = make_agent("expert:iterations=40,tree=0")
    tree = make_agent("expert:iterations=40,pair=0")
    assert isinstance(flat, ExpertAgent) and isinstance(tree, ExpertAgent)
    decide, play = _decide_view(7), _first_view(7)
    same = flat.evaluate_detail(decide, random.Random(3))
    assert tree.evaluate_detail(decide, random.Random(3)) == same
    by_tree = tree.evaluate_detail(play, random.Random(3))
    assert set(by_tree) == set(play.legal_ids)
    assert by_tree != flat.evaluate_detail(play, random.Random(3))
    paired = make_agent("expert:iterations=40")
    assert isinstance(paired, ExpertAgent)
    assert paired.evaluate_detail(decide, random.Random(3)) == same
    by_pairs = paired.evaluate_detail(play, random.Random(3))
    assert set(by_pairs) == set(play.legal_ids)
    assert by_pairs not in (by_tree, flat.evaluate_detail(play, random.Random(3)))


def test_noisy_levels_make_natural_mistakes() -> None:
    """Level 1 mostly plays greedy's best move, sometimes another, never an illegal one."""
    greedy = GreedyAgent()
    noisy = make_level(1)
    assert isinstance(noisy, NoisyAgent)
    same = total = 0
    for k, view in enumerate(random_views(120, seed=5)):
        if KOIKOI_ID in view.legal_ids:
            continue
        values = {a: GreedyAgent._value(view, a) for a in view.legal_ids}
        best = max(values.values())
        if list(values.values()).count(best) > 1:
            continue
        choice = noisy.act(view, random.Random(k))
        assert choice in view.legal_ids
        same += choice == greedy.act(view, random.Random(k))
        total += 1
    assert total > 30
    assert 0.35 * total < same < total


def test_zero_temperature_is_the_base_player() -> None:
    base = make_agent("heuristic")
    agent = NoisyAgent(base, 0.0, name="x")
    for view in random_views(20, seed=5):
        assert agent.act(view, random.Random(1)) == base.act(view, random.Random(1))
    with pytest.raises(InvalidInputError, match="temperature"):
        NoisyAgent(base, -1.0, name="x")


def test_preload_readies_the_kernel_and_the_table() -> None:
    agent = make_agent("level:6")
    preload(agent, get_rules("leaflet"))
    assert agent.base.uses_kernel in (True, False)  # type: ignore[attr-defined]


def test_the_network_moves_the_values() -> None:
    """With the network on, the values blend the playouts' and the network's."""
    view = _decide("3/12", "30/30")
    rng = random.Random
    off = ExpertAgent(iterations=200, net=False).evaluate_detail(view, rng(1))
    on = ExpertAgent(iterations=200, net=True, blend=1.0, net_deals=8).evaluate_detail(view, rng(1))
    assert on[STOP_ID].points == off[STOP_ID].points == 5.0  # a stop is exact either way
    assert on[KOIKOI_ID].points != off[KOIKOI_ID].points


def test_a_strong_prior_follows_the_heuristic_card_play() -> None:
    """With a heavy prior the expert plays the heuristic's card (when it has a clear best)."""
    heuristic = make_agent("heuristic")
    agent = ExpertAgent(iterations=50, prior=10.0, endgame=False)
    plain = ExpertAgent(iterations=50, endgame=False, prior=0.0)
    views = random_views(60, seed=5)
    total, same, differs = follows_its_guide(
        agent,
        plain,
        views,
        lambda view: {} if KOIKOI_ID in view.legal_ids else heuristic.evaluate(view, None),  # type: ignore[call-arg]
    )
    assert total >= 8
    assert same >= total - 1
    assert differs > 0  # without the prior the search has its own view


def test_time_budget_is_restored_after_the_network() -> None:
    """The network's time comes out of the search's budget for one decision only."""
    agent = ExpertAgent(time_limit=0.05, net=True)
    agent.act(_decide("3/12", "30/30"), random.Random(0))
    assert agent.time_limit == 0.05  # never changed by a decision


def _endgames(count: int) -> list[Match]:
    out = []
    rng = random.Random(11)
    seed = 0
    while len(out) < count:
        m = Match(get_rules("nintendo"), seed=seed)
        seed += 1
        while not m.is_over and sum(h.bit_count() for h in m.round.hands) > 4:
            m.apply_id(rng.choice(m.legal_ids()))
        if not m.is_over and len(m.legal_ids()) > 1 and m.round_number == 1:
            out.append(m)
    return out


def _lines(rnd: object, me: int) -> list[int]:
    """Every reachable final result (net points for ``me``) of a perfect-information round."""
    from koikoi.game.engine import Phase, Round

    assert isinstance(rnd, Round)
    if rnd.phase is Phase.OVER:
        s = rnd.settlement
        assert s is not None
        return [0 if s.winner is None else (s.points if s.winner == me else -s.points)]
    out = []
    for a in rnd.legal_ids():
        child = rnd.clone()
        child.apply_id(a)
        out += _lines(child, me)
    return out


def test_endgame_solver_is_minimax() -> None:
    """The solver's value is reachable, at least the worst line and at most the best; and
    it is the max over the player's moves of the opponent-minimised values."""
    from koikoi.agents.expert import _solve

    for m in _endgames(6):
        rnd, me = m.round, m.current
        value, points = _solve(rnd.clone(), me, float)
        lines = _lines(rnd.clone(), me)
        assert min(lines) <= value <= max(lines) and value == points
        children = []
        for a in rnd.legal_ids():
            child = rnd.clone()
            child.apply_id(a)
            children.append(_solve(child, me, float)[0])
        assert value == max(children)


def test_expert_uses_the_endgame_solver() -> None:
    m = _endgames(1)[0]
    view = view_of(m, m.current)
    on = ExpertAgent(iterations=30).evaluate_detail(view, random.Random(0))
    off = ExpertAgent(iterations=30, endgame=False).evaluate_detail(view, random.Random(0))
    assert set(on) == set(off) == set(view.legal_ids)
    assert on != off


def test_endgame_plays_solves_card_plays_but_not_koikoi_decisions() -> None:
    """expert:endgame=plays values card plays with the solver (as the default does) and
    koi-koi decisions with playouts (as endgame=0 does)."""
    plays = [view_of(g, g.current) for g in _endgames(6)]
    play = next(v for v in plays if v.phase is not Phase.DECIDE)
    heuristic = make_agent("heuristic")
    rng = random.Random(4)
    decide = None
    for seed in range(300):
        g = Match(get_rules("nintendo"), seed=seed, events=False)
        while not g.is_over and decide is None:
            v = view_of(g, g.current, with_history=False)
            if v.phase is Phase.DECIDE and sum(v.hand_counts) <= ENDGAME_CARDS:
                decide = v
            g.apply_id(heuristic.act(v, rng))
        if decide is not None:
            break
    assert decide is not None
    modes = {mode: ExpertAgent(iterations=30, endgame=mode) for mode in ("all", "plays", "off")}
    assert modes["plays"].name == "expert:iterations=30,endgame=plays"
    assert make_agent("expert:endgame=PLAYS").name == "expert:endgame=plays"

    def values(mode: str, view: PlayerView) -> object:
        return modes[mode].evaluate_detail(view, random.Random(0))

    assert values("plays", play) == values("all", play) != values("off", play)
    assert values("plays", decide) == values("off", decide) != values("all", decide)
    with pytest.raises(InvalidInputError, match="endgame must be 1, 0 or plays"):
        make_agent("expert:endgame=some")
    with pytest.raises(InvalidInputError, match="endgame must be 1, 0 or plays"):
        ExpertAgent(endgame="never")


def test_horizon_plays_for_match_equity_only_in_the_last_rounds() -> None:
    """expert:horizon=K values round points until K rounds or fewer are left after the
    current one, and match equity from then on (the default: match equity throughout)."""
    heuristic = make_agent("heuristic")
    rng = random.Random(2)
    m = Match(get_rules("leaflet"), seed=4, events=False)
    left: dict[int, PlayerView] = {}
    while not m.is_over:
        view = view_of(m, m.current, with_history=False)
        left.setdefault(view.rounds - view.round_number, view)
        m.apply_id(heuristic.act(view, rng))
    assert {0, 1, 5} <= set(left)
    one = make_agent("expert:iterations=5,horizon=1")
    assert isinstance(one, ExpertAgent) and one.name == "expert:iterations=5,horizon=1"
    assert one.utility(left[5]) is None and one.utility(left[2]) is None
    assert one.utility(left[1]) is not None and one.utility(left[0]) is not None
    last = make_agent("expert:iterations=5,horizon=0")
    assert isinstance(last, ExpertAgent)
    assert last.utility(left[1]) is None and last.utility(left[0]) is not None
    always = make_agent("expert:iterations=5")
    assert isinstance(always, ExpertAgent) and always.utility(left[5]) is not None
    for bad, message in (
        ("expert:horizon=-1", "horizon must be 0 or more"),
        ("expert:horizon=last", "horizon must be a whole number"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            make_agent(bad)
