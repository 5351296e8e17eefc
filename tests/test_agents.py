"""The AI players: legal, deterministic, blind to hidden cards, and sensible.

Covers ``heuristic`` and ``mcts`` (and the two base agents for the shared
properties) under every preset: legal actions in random states of every phase,
determinism given the injected generator, identical decisions when the hidden
cards are re-dealt consistently with the view, the heuristic's koi-koi model
and denial, the search's values, the pure-Python rollout fallback, spec errors.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from koikoi_testkit import deal_round

from koikoi.agents import make_agent
from koikoi.agents.heuristic import HeuristicAgent, targets_for
from koikoi.agents.mcts import MatchUtility, MCTSAgent, _Stats, rollout_value
from koikoi.agents.search import BatchSearch
from koikoi.game.actions import KOIKOI_ID, STOP_ID, parse_action
from koikoi.game.cards import FULL_DECK, card_list, parse_cards
from koikoi.game.engine import Match, Phase, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules
from koikoi.game.views import PlayerView, determinize, view_of, view_of_round
from koikoi.lab.arena import ArenaConfig, run_arena

try:
    from koikoi import kernel

    HAS_KERNEL = kernel.available()
except ImportError:  # pragma: no cover
    HAS_KERNEL = False


def make_round(
    rules: Rules | str = "nintendo",
    *,
    hand0: str = "",
    hand1: str = "",
    field: str = "",
    piles: tuple[str, str] = ("", ""),
) -> Round:
    """A round of player 0's turn from card codes; the other cards form the stock."""
    r = get_rules(rules) if isinstance(rules, str) else rules
    used = 0
    for part in (hand0, hand1, field, *piles):
        mask = parse_cards(part)
        assert not used & mask, "a card is used twice"
        used |= mask
    rnd = Round(
        r,
        hands=(parse_cards(hand0), parse_cards(hand1)),
        field=parse_cards(field),
        stock=card_list(FULL_DECK & ~used),
        dealer=0,
        events=False,
    )
    rnd.piles = [parse_cards(piles[0]), parse_cards(piles[1])]
    rnd.scores = [rnd.scorer.total(p, rnd.month, False) for p in rnd.piles]
    return rnd


SPECS = ("random", "greedy", "heuristic", "mcts:iterations=2,rollouts=2")


def random_states(rules_name: str, seed: int, count: int) -> list[Round]:
    """Rounds advanced by random legal play, with PLAY, TAKE and DECIDE states among them."""
    rng = random.Random(seed)
    by_phase: dict[Phase, list[Round]] = {Phase.PLAY: [], Phase.TAKE: [], Phase.DECIDE: []}
    attempts = 0
    while attempts < 400 and (
        sum(len(v) for v in by_phase.values()) < count or not all(by_phase.values())
    ):
        attempts += 1
        rnd = deal_round(rules_name, rng.randrange(10**9), events=False)
        steps = rng.randrange(0, 30)
        for _ in range(steps):
            if rnd.is_over:
                break
            ids = rnd.legal_ids()
            rnd.apply_id(ids[rng.randrange(len(ids))])
            if not rnd.is_over and rnd.phase in (Phase.TAKE, Phase.DECIDE):
                by_phase[rnd.phase].append(rnd.clone())
        if not rnd.is_over:
            by_phase[rnd.phase].append(rnd)
    out: list[Round] = []
    for phase in (Phase.DECIDE, Phase.TAKE, Phase.PLAY):
        out.extend(by_phase[phase][: max(3, count // 3)])
    return out


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_agent_plays_legal_actions_in_random_states(name: str) -> None:
    states = random_states(name, seed=len(name), count=12)
    phases = {s.phase for s in states}
    assert phases == {Phase.PLAY, Phase.TAKE, Phase.DECIDE}
    agents = [make_agent(spec) for spec in SPECS]
    for i, rnd in enumerate(states):
        view = view_of_round(rnd, rnd.current)
        for agent in agents:
            action = agent.act(view, random.Random(i))
            assert action in rnd.legal_ids(), (name, agent.name, rnd.phase)


@pytest.mark.parametrize("spec", ["heuristic", "mcts:iterations=3,rollouts=2"])
def test_agents_are_deterministic_given_the_rng(spec: str) -> None:
    states = random_states("nintendo", seed=11, count=9)
    a, b = make_agent(spec), make_agent(spec)
    for i, rnd in enumerate(states):
        view = view_of_round(rnd, rnd.current)
        assert a.act(view, random.Random(i)) == b.act(view, random.Random(i))
        assert a.act(view, random.Random(i)) == a.act(view, random.Random(i))


def test_mcts_evaluate_is_deterministic_and_covers_every_action() -> None:
    agent = MCTSAgent(iterations=6, rollouts=4)
    for rnd in random_states("koikoi-japan", seed=5, count=6):
        view = view_of_round(rnd, rnd.current)
        values = agent.evaluate(view, random.Random(3))
        assert set(values) == set(view.legal_ids)
        assert all(v > float("-inf") for v in values.values())
        assert values == agent.evaluate(view, random.Random(3))


def _redealt(rnd: Round, player: int, seed: int) -> Round:
    """Another round with the same view for ``player`` but other hidden cards."""
    view = view_of_round(rnd, player)
    for k in range(50):
        other = determinize(view, random.Random(seed + k))
        opp = 1 - player
        if (other.hands[opp], other.stock) != (rnd.hands[opp], rnd.stock):
            return other
    raise AssertionError("could not re-deal differently")  # pragma: no cover


@pytest.mark.parametrize(
    "spec",
    [
        "heuristic",
        "mcts:iterations=4,rollouts=2",
        "mcts:iterations=4,infer=0",
        "expert:iterations=4",
        "expert:iterations=4,infer=plays",
        "mcts:iterations=4,rollouts=1,infer=plays,backend=kernel",
        "expert:iterations=4,lookahead=2,samples=2",
        "expert:iterations=4,tree=1",
        "mcts:iterations=4,rollouts=1,lookahead=1,samples=3",
        "level:1",
        "level:3",
    ],
)
@pytest.mark.parametrize("name", ["nintendo", "modern-hanafuda", "koikoi-japan"])
def test_decisions_ignore_the_hidden_cards(spec: str, name: str) -> None:
    agent = make_agent(spec)
    for i, rnd in enumerate(random_states(name, seed=7, count=9)):
        p = rnd.current
        if view_of_round(rnd, p).unseen.bit_count() < 2:
            continue
        other = _redealt(rnd, p, seed=100 * i)
        view_a, view_b = view_of_round(rnd, p), view_of_round(other, p)
        # the two rounds differ in what p cannot see, and look the same to p
        assert (other.hands[1 - p], other.stock) != (rnd.hands[1 - p], rnd.stock)
        assert view_a == view_b
        assert agent.act(view_a, random.Random(i)) == agent.act(view_b, random.Random(i))


class _Spy:
    """Records what the arena hands to an agent, then plays like greedy."""

    name = "spy"
    seen: list[object] = []  # noqa: RUF012 - shared on purpose

    def act(self, view: PlayerView, rng: random.Random) -> int:
        _Spy.seen.append(view)
        return make_agent("greedy").act(view, rng)


def test_agents_receive_only_their_own_view() -> None:
    from koikoi.agents import register_agent

    register_agent("spy", lambda params, raw: _Spy())
    _Spy.seen.clear()
    rules = get_rules("koikoi-japan").replace(game__rounds=2)
    run_arena(ArenaConfig(("spy", "random"), rules, 2, seed=4))
    assert _Spy.seen
    for view in _Spy.seen:
        assert type(view) is PlayerView
        assert view.player == view.current
        assert view.legal_ids
        assert view.unseen.bit_count() == view.opponent_hand_count + view.stock_count


# ------------------------------------------------------------------ heuristic


def test_heuristic_beats_random_in_a_small_duplicate_arena() -> None:
    result = run_arena(ArenaConfig(("heuristic", "random"), get_rules("nintendo"), 8, seed=2))
    a = result.summary["agents"][0]
    assert a["net_per_round"]["mean"] > 2.0
    assert a["net_per_round"]["ci95"][0] > 0.0
    assert a["match_wins"] >= 6


def test_heuristic_targets_follow_the_rules() -> None:
    names = {t.name for t in targets_for(get_rules("nintendo"), 3, False)}
    assert {"goko", "sanko", "inoshikacho", "akatan", "hanami", "tsukimi", "kasu"} <= names
    assert "tsukifuda" not in names
    leaflet = {t.name: t.points for t in targets_for(get_rules("leaflet"), 1, False)}
    assert "hanami" not in leaflet and leaflet["akatan"] == 6
    japan = {t.name: t.points for t in targets_for(get_rules("koikoi-japan"), 1, True)}
    assert japan["tsukimi"] == 3  # viewing after koi-koi
    mh = {t.name for t in targets_for(get_rules("modern-hanafuda"), 5, False)}
    assert "teshi" in mh  # collected teshi of the round's month


def test_heuristic_takes_the_card_the_opponent_needs() -> None:
    # Player 1 holds Boar and Butterflies: the Deer on the field completes inoshikacho.
    rnd = make_round(
        hand0="10P1 1P2 4P1 12P2",
        hand1="2P1 2P2 5P1 5P2",
        field="10A 1P1 9P1 7P1",
        piles=("", "7A 6A"),
    )
    view = view_of_round(rnd, 0)
    action = HeuristicAgent().act(view, random.Random(0))
    assert action == parse_action("play 10P1").id


def test_heuristic_does_not_lay_a_card_the_opponent_needs() -> None:
    # Nothing in hand matches the field; laying the Deer would offer inoshikacho.
    rnd = make_round(
        hand0="10A 12P2 4P1",
        hand1="2P1 2P2 5P1",
        field="1P1 9P1 3P1",
        piles=("", "7A 6A"),
    )
    view = view_of_round(rnd, 0)
    values = HeuristicAgent().evaluate(view)
    assert values[parse_action("play 10A").id] < values[parse_action("play 12P2").id]
    assert HeuristicAgent().act(view, random.Random(0)) != parse_action("play 10A").id


def test_greedy_lays_its_least_valuable_card() -> None:
    # Nothing in hand matches the field: greedy gives away the Plain, not the
    # Bright, the Animal or the Ribbon, whatever the generator says.
    rnd = make_round(hand0="1L 10A 6R 12P2", hand1="2P1 2P2 5P1", field="4P1 9P1 3P1")
    view = view_of_round(rnd, 0)
    greedy = make_agent("greedy")
    choices = {greedy.act(view, random.Random(seed)) for seed in range(20)}
    assert choices == {parse_action("play 12P2").id}


def test_greedy_still_prefers_any_capture_to_laying() -> None:
    rnd = make_round(hand0="1L 9A", hand1="2P1 2P2 5P1", field="9P1 4P1 3P1")
    view = view_of_round(rnd, 0)
    assert make_agent("greedy").act(view, random.Random(0)) == parse_action("play 9A").id


def _decide_view(
    bonus: str, opp_pile: str, cards: int = 5, own_pile: str = "1L 3L 8L"
) -> PlayerView:
    """Player 0 (the leader) just scored sanko with ``cards`` left in hand and must decide.

    The opponent holds one card more; ``opp_pile`` is the opponent's capture
    pile, ``own_pile`` player 0's (three Brights and what else is given).
    """
    rules = get_rules("nintendo").replace(koikoi__bonus=bonus)
    rnd = make_round(
        rules,
        hand0=" ".join(["2P1", "4P1", "5P1", "6P1", "12P2"][:cards]),
        hand1=" ".join(["3P2", "7P1", "7P2", "9P2", "10P2", "11P"][: cards + 1]),
        field="1P1 9P1 7R 10R",
        piles=(own_pile, opp_pile),
    )
    rnd.phase = Phase.DECIDE
    rnd.scores[0] = rnd.scorer.total(rnd.piles[0], rnd.month, False)
    rnd.turn_score = 0
    return view_of_round(rnd, 0)


def test_heuristic_koikoi_value_falls_with_the_opponents_threat() -> None:
    agent = HeuristicAgent()
    stop_safe, koi_safe = agent.koikoi_values(_decide_view("opponent_x2", ""))
    stop_risk, koi_risk = agent.koikoi_values(_decide_view("opponent_x2", "6R 9R 6A 7A"))
    assert stop_safe == stop_risk == 5.0
    assert koi_risk < koi_safe


def test_heuristic_koikoi_value_reads_the_bonus_rule() -> None:
    agent = HeuristicAgent()
    threat = "6R 9R 6A 7A"
    _, koi_double = agent.koikoi_values(_decide_view("opponent_x2", threat))
    _, koi_none = agent.koikoi_values(_decide_view("none", threat))
    _, koi_ladder = agent.koikoi_values(_decide_view("ladder", threat))
    assert koi_double < koi_none < koi_ladder


def test_heuristic_stops_on_its_last_card() -> None:
    view = _decide_view("opponent_x2", "", cards=0)
    assert view.legal_ids == (KOIKOI_ID, STOP_ID)
    stop, koi = HeuristicAgent().koikoi_values(view)
    assert koi < stop
    assert HeuristicAgent().act(view, random.Random(0)) == STOP_ID


# ---------------------------------------------------------------------- mcts


def test_mcts_values_a_stop_exactly_and_stops_when_nothing_is_left() -> None:
    view = _decide_view("opponent_x2", "", cards=0)
    agent = MCTSAgent(iterations=20, rollouts=4)
    values = agent.evaluate(view, random.Random(0))
    assert values[STOP_ID] == 5.0
    assert values[KOIKOI_ID] <= 0.0  # no card left to improve with; exhausted rounds score 0
    assert agent.act(view, random.Random(0)) == STOP_ID


def _last_round(view: PlayerView, scores: tuple[int, int]) -> PlayerView:
    return dataclasses.replace(view, round_number=view.rounds, match_scores=scores)


def test_mcts_match_objective_plays_for_the_match_in_the_last_round() -> None:
    """Sanko (5) in hand, last round: the match objective decides by the score.

    Behind by 8 against a dangerous opponent, stopping loses the match for sure,
    so it calls koi-koi (the round objective stops: koi-koi loses points on
    average). Ahead with no threat and a ribbon short of tanzaku, stopping wins
    the match, so it stops (the round objective calls: koi-koi gains points on
    average).
    """
    threat = _last_round(_decide_view("opponent_x2", "6R 9R 6A 7A"), (0, 8))
    safe = _last_round(_decide_view("opponent_x2", "", own_pile="1L 3L 8L 2R 3R 6R 9R"), (3, 0))
    for view, match_choice, round_choice in (
        (threat, KOIKOI_ID, STOP_ID),
        (safe, STOP_ID, KOIKOI_ID),
    ):
        by_match = MCTSAgent(iterations=300, objective="match")
        by_round = MCTSAgent(iterations=300)
        assert by_match.act(view, random.Random(0)) == match_choice
        assert by_round.act(view, random.Random(0)) == round_choice
        # evaluate() reports round points under either objective
        assert by_match.evaluate(view, random.Random(0))[STOP_ID] == 5.0


def test_match_utility() -> None:
    u = MatchUtility([0.0, 0.25, 0.5, 0.75, 1.0])
    assert (u.span, u(-9), u(-1), u(0), u(2), u(7)) == (2, 0.0, 0.25, 0.5, 1.0, 1.0)
    with pytest.raises(InvalidInputError, match="2 \\* span \\+ 1"):
        MatchUtility([0.0, 1.0])


def test_match_utility_of_a_view() -> None:
    """From the match-equity table: the last round is a step at the lead, bust is 0."""
    m = Match(get_rules("nintendo"), seed=1)
    view = view_of(m, 0)
    last = MatchUtility.of_view(dataclasses.replace(view, round_number=12, match_scores=(0, 4)))
    assert last is not None
    assert last(3) == 0.0 and last(4) == 0.5 and last(5) == 1.0
    early = MatchUtility.of_view(view)
    assert early is not None
    values = [early(d) for d in range(-20, 21, 5)]
    assert values == sorted(values) and 0.4 < early(0) < 0.6
    japan = view_of(Match(get_rules("koikoi-japan"), seed=1), 0)
    bust = MatchUtility.of_view(dataclasses.replace(japan, match_scores=(5, 55)))
    assert bust is not None and bust(-5) == 0.0 and bust(-4) > 0.0
    single = dataclasses.replace(view, rounds=1, round_number=1)
    assert MatchUtility.of_view(single) is None  # one round: played for its points


def test_mcts_objective_spec() -> None:
    assert make_agent("mcts:iterations=5,objective=match").name == (
        "mcts:iterations=5,objective=match"
    )
    assert make_agent("mcts:iterations=5,objective=round").name == "mcts:iterations=5"
    assert make_agent("mcts:iterations=5").name == "mcts:iterations=5"
    with pytest.raises(InvalidInputError, match="allowed match, round"):
        make_agent("mcts:objective=points")


def test_mcts_takes_an_obvious_capture() -> None:
    rnd = make_round(hand0="8P1 2P1 4P1", hand1="5P1 6P1 12P1", field="8L 9A 3P1")
    rnd.piles[0] = 1 << 8  # the Curtain: the Moon gives tsukimi... with the Sake cup
    view = view_of_round(rnd, 0)
    agent = MCTSAgent(iterations=30, rollouts=8)
    assert agent.act(view, random.Random(1)) == parse_action("play 8P1").id


def test_rollout_values_are_the_kernel_playouts() -> None:
    import koikoi.kernel as k

    for name in ("nintendo", "wikipedia", "modern-hanafuda", "koikoi-japan"):
        for seed in range(3):
            rnd = Match(get_rules(name), seed=seed, events=False).round
            for policy in ("random", "greedy", "yaku"):
                ours = rollout_value(rnd, 10, seed, policy)
                assert ours == k.playouts(rnd, 10, seed, policy)


def test_mcts_python_backend_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="backend=python was removed"):
        MCTSAgent(iterations=2, rollouts=2, backend="python")
    agent = MCTSAgent(iterations=2, rollouts=2, backend="kernel")
    assert agent.uses_kernel
    for i, rnd in enumerate(random_states("wikipedia", seed=3, count=6)):
        view = view_of_round(rnd, rnd.current)
        assert agent.act(view, random.Random(i)) in rnd.legal_ids()


class _WorkClock:
    """A ``time`` for koikoi.agents.mcts whose ``perf_counter`` moves only with the work."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.mark.skipif(not HAS_KERNEL, reason="numba is not installed")
def test_mcts_time_limit_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a clock that moves 1 ms for each iteration the kernel runs, every decision
    ends within its time limit and uses most of it: no real clock decides the test."""
    import koikoi.agents.mcts as mcts_module

    clock = _WorkClock()
    run = BatchSearch.run

    def timed_run(self: BatchSearch, actions: list[int], iterations: int) -> Any:
        rows = run(self, actions, iterations)
        clock.now += 0.001 * len(rows)
        return rows

    monkeypatch.setattr(mcts_module, "time", clock)
    monkeypatch.setattr(BatchSearch, "run", timed_run)
    limit = 0.1
    agent = MCTSAgent(time_limit=limit, backend="kernel")
    m = Match(get_rules("nintendo"), seed=9, events=False)
    latencies: list[float] = []
    rng = random.Random(1)
    while len(latencies) < 12 and not m.is_over:
        view = view_of(m, m.current, with_history=False)
        t0 = clock.now
        action = agent.act(view, rng)
        if len(view.legal_ids) > 1:
            latencies.append(clock.now - t0)
        m.apply_id(action)
    assert len(latencies) == 12
    assert max(latencies) <= limit, latencies
    assert min(latencies) >= limit / 2, latencies


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mcts:depth=3", "allowed time, iterations"),
        ("mcts:time=soon", "time must be a number"),
        ("mcts:iterations=0", "iterations must be 1 or more"),
        ("mcts:rollouts=x", "rollouts must be a whole number"),
        ("mcts:policy=smart", "allowed greedy, yaku, tactical, random"),
        ("mcts:backend=gpu", "allowed auto, kernel"),
        ("mcts:time=-1", "time must be a positive number"),
        ("mcts:infer=maybe", "infer must be 0, 1 or one of off, lays, plays"),
        ("mcts:prune=2", "prune must be 1 or 0"),
        ("heuristic:greed=1", "allowed potential, exposure, margin"),
        ("heuristic:exposure=lots", "exposure must be a number"),
        ("heuristic:margin=-2", "margin must be 0 or more"),
    ],
)
def test_bad_agent_specs_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        make_agent(spec)


def test_mcts_name_and_defaults() -> None:
    agent = make_agent("mcts")
    assert isinstance(agent, MCTSAgent)
    assert agent.time_limit == 1.0 and agent.iterations is None
    assert agent.prune is False  # measured weaker (docs/agents.md#strength)
    pruning = make_agent("mcts:prune=1")
    assert isinstance(pruning, MCTSAgent) and pruning.prune is True
    assert make_agent("mcts:time=0.5,iterations=9").name == "mcts:time=0.5,iterations=9"
    assert agent.infer is True  # measured stronger (docs/agents.md#strength)
    uniform = make_agent("mcts:iterations=9,infer=0")
    assert isinstance(uniform, MCTSAgent) and uniform.infer is False
    assert uniform.name == "mcts:iterations=9,infer=0"


def test_pruning_drops_only_clearly_worse_actions() -> None:
    # Action 0 leads; action 1 is worse by exactly 2 every time (no variance:
    # clearly worse); action 2 is worse on average but noisy (kept).
    stats = _Stats(3)
    rng = random.Random(5)
    for _ in range(40):
        v = rng.uniform(-5.0, 5.0)
        stats.add([0, 1, 2], [v, v - 2.0, v - 0.2 + rng.choice((-3.0, 3.0))])
    stats.prune()
    assert stats.active == [0, 2]
    means = stats.means([10, 11, 12])
    assert means[10] - means[11] == pytest.approx(2.0)


@pytest.mark.skipif(not HAS_KERNEL, reason="numba is not installed")
def test_pruning_search_agrees_on_the_obvious_with_fewer_samples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two Brights in the pile; the drawn January Plain may take the Crane
    # (sanko at once) or the other January Plain (leaving the Crane).
    rnd = make_round(
        hand0="3P1 5P1 9P2",
        hand1="2P1 2P2 4P2 6P1",
        field="1L 1P1 7P1 8P1 11P",
        piles=("3L 8L", ""),
    )
    drawn = parse_cards("1P2").bit_length() - 1
    rnd._stock.remove(drawn)
    rnd.drawn, rnd.phase = drawn, Phase.TAKE
    view = view_of_round(rnd, 0)
    take = parse_action("take 1L").id
    assert len(view.legal_ids) == 2
    sampled: list[int] = []
    real_run = BatchSearch.run

    def counting_run(self: BatchSearch, actions: list[int], count: int) -> object:
        rows = real_run(self, actions, count)
        sampled.append(len(actions) * len(rows))
        return rows

    monkeypatch.setattr(BatchSearch, "run", counting_run)
    work: dict[bool, int] = {}
    for prune in (False, True):
        sampled.clear()
        agent = MCTSAgent(iterations=256, prune=prune)
        assert agent.act(view, random.Random(3)) == take
        work[prune] = sum(sampled)
    assert work[False] == 256 * 2
    assert work[True] < work[False] // 2


def test_doctests() -> None:
    import doctest

    from koikoi.agents import heuristic, mcts

    for module in (heuristic, mcts):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0
