"""The game controller: the match behind the screen, seen through the human's view."""

from __future__ import annotations

import pytest
from tui_driver import AdvisingAgent, find_seed, greedy_policy, reach

from koikoi.agents import make_agent
from koikoi.agents.base import ActionValue
from koikoi.cli.analyze import DEFAULT_AGENT
from koikoi.features.opponents import HINT_SPEC
from koikoi.game.actions import KOIKOI_ID, STOP_ID, TAKE_BASE
from koikoi.game.cards import parse_card
from koikoi.game.engine import Event, Phase
from koikoi.game.errors import IllegalActionError, InvalidInputError
from koikoi.game.rules import get_rules
from koikoi.tui.controller import (
    HUMAN,
    OPPONENT,
    GameController,
    Table,
    action_text,
    narrate,
    plays_by_card,
)

ONE_ROUND = get_rules("nintendo").replace(game__rounds=1)


def play_out(game: GameController, *, koikoi: bool = False) -> None:
    while not game.is_over:
        if game.human_to_act:
            game.apply(greedy_policy(game.view(), koikoi=koikoi))
        else:
            game.step_opponent()


@pytest.mark.parametrize("preset", ["nintendo", "modern-hanafuda", "koikoi-japan"])
def test_the_table_moved_on_event_by_event_equals_the_next_view(preset: str) -> None:
    rules = get_rules(preset).replace(game__rounds=2)
    for seed in range(3):
        game = GameController(rules, opponent="random", seed=seed)
        table = game.table()
        while not game.is_over:
            step = game.apply(
                greedy_policy(game.view()) if game.human_to_act else game.choose_opponent_action()
            )
            for event in step.events:
                if event.kind == "round_over":
                    break
                table = table.after(event)
            if not step.results:
                now = game.table()
                seen = (now.hand, now.opponent_count, now.field, now.piles, now.stock_count)
                assert (
                    table.hand,
                    table.opponent_count,
                    table.field,
                    table.piles,
                    table.stock_count,
                ) == seen
                assert table.drawn == now.drawn
                assert table.round_scores == now.round_scores
            table = game.table()
        assert len(game.results) == len(game.match.settlements)
        assert game.results[-1].scores == tuple(game.match.scores)


def test_the_human_view_hides_the_opponents_hand_and_the_stock() -> None:
    game = GameController(get_rules("nintendo"), opponent="greedy", seed=4)
    view = game.view()
    assert view.player == HUMAN
    assert view.hand == game.match.round.hands[HUMAN]
    assert view.opponent_hand_count == 8
    assert all(e.visible_to(HUMAN) for e in view.history)
    assert not any(e.kind == "hand" and e.player == OPPONENT for e in view.history)


def test_round_results_carry_the_ended_rounds_view_and_running_scores() -> None:
    game = GameController(get_rules("nintendo").replace(game__rounds=3), opponent="random", seed=0)
    play_out(game)
    assert [r.round_number for r in game.results] == [1, 2, 3]
    total = [0, 0]
    for r in game.results:
        total = [total[0] + r.settlement.deltas[0], total[1] + r.settlement.deltas[1]]
        assert r.scores == tuple(total)
        assert r.view is not None and r.view.round_number == r.round_number
        assert r.view.is_over
        assert r.dealer in (0, 1)


def test_plays_by_card_groups_the_choices() -> None:
    seed, n = find_seed(ONE_ROUND, lambda v: any(len(o) > 1 for o in plays_by_card(v).values()))
    view = reach(ONE_ROUND, seed, n).view()
    plays = plays_by_card(view)
    assert sorted(a for ids in plays.values() for a in ids) == sorted(view.legal_ids)
    card, ids = next((c, ids) for c, ids in plays.items() if len(ids) > 1)
    targets = [(a - 48) % 48 for a in ids]
    assert all(t // 4 == card // 4 for t in targets)
    assert all(view.field >> t & 1 for t in targets)


def test_stop_preview_is_what_stopping_scores() -> None:
    seed, n = find_seed(ONE_ROUND, lambda v: v.phase is Phase.DECIDE)
    game = reach(ONE_ROUND, seed, n)
    assert game.view().phase is Phase.DECIDE
    preview = game.stop_preview()
    yaku = game.current_yaku(HUMAN)
    assert preview.base == yaku.total == game.view().round_scores[HUMAN]
    game.apply(STOP_ID)
    assert game.match.settlements[0] == preview
    assert "score" in game.explain(preview) and "Player 0" not in game.explain(preview)


def test_advice_comes_from_the_advisor_whatever_the_opponent() -> None:
    game = GameController(ONE_ROUND, opponent="greedy", seed=1, advisor="test-advisor")
    assert game.can_advise and game.advisor_spec == "test-advisor"
    if not game.human_to_act:
        game.step_opponent()
    values = game.advice()
    assert values == AdvisingAgent().evaluate_detail(game.view(), None)


def test_the_default_opponent_is_the_expert_and_hints_come_from_it() -> None:
    # The default opponent, here with a small budget (the real one thinks 1 s a move).
    quick = make_agent("expert:iterations=4")
    game = GameController(ONE_ROUND, seed=1, agent=quick, advisor="expert:iterations=4")
    assert game.opponent_spec == "expert" and game.names[1] == "AI (Expert)"
    assert GameController(ONE_ROUND, seed=1).advisor_spec == HINT_SPEC
    # `koikoi analyze` uses the same evaluator with a fixed budget, so runs agree.
    assert HINT_SPEC.split(":")[0] == DEFAULT_AGENT.split(":")[0] == "expert"
    assert "iterations=" in DEFAULT_AGENT
    game.preload()  # loads the kernel once; then the first decision is not slow
    if not game.human_to_act:
        game.step_opponent()
    values = game.advice()
    assert set(values) == set(game.view().legal_ids)
    assert all(isinstance(v, ActionValue) and v.equity is None for v in values.values())


@pytest.mark.parametrize(
    ("spec", "name"),
    [("level:1", "AI (Novice)"), ("level:8", "AI (Expert)"), ("greedy", "AI (greedy)")],
)
def test_levels_and_older_agent_names_are_accepted(spec: str, name: str) -> None:
    game = GameController(ONE_ROUND, opponent=spec, seed=2, advisor="test-advisor")
    assert game.names[1] == name and game.opponent_spec == spec


def test_bad_opponent_spec_and_illegal_actions_are_clear_errors() -> None:
    with pytest.raises(InvalidInputError, match="unknown agent 'nobody'"):
        GameController(ONE_ROUND, opponent="nobody")
    game = GameController(ONE_ROUND, opponent="random", seed=3)
    if not game.human_to_act:
        game.step_opponent()
    with pytest.raises(IllegalActionError):
        game.apply(KOIKOI_ID)
    with pytest.raises(IllegalActionError, match="not the opponent's turn"):
        game.step_opponent()


def test_the_same_seed_plays_the_same_match() -> None:
    a = GameController(get_rules("nintendo").replace(game__rounds=2), opponent="random", seed=9)
    b = GameController(get_rules("nintendo").replace(game__rounds=2), opponent="random", seed=9)
    play_out(a)
    play_out(b)
    assert a.match.actions == b.match.actions and a.match.scores == b.match.scores


def test_narration_of_moves() -> None:
    names = ("You", "AI (greedy)")
    crane, pine = parse_card("1L"), parse_card("1P1")
    capture = Event("play", 0, crane, (1 << crane) | (1 << pine))
    assert narrate(capture, names) == "You play 1L Pine · Crane and capture 1P1."
    laid = Event("play", 1, crane, 0)
    assert (
        narrate(laid, names)
        == "AI (greedy) plays 1L Pine · Crane: no match, it stays on the field."
    )
    draw = Event("draw", 1, pine, 0, {"choice": ["1L", "1R"]})
    assert narrate(draw, names) == "AI (greedy) draws 1P1 Pine · plain: it matches 1L and 1R."
    take = Event("take", 1, pine, (1 << crane) | (1 << pine))
    assert narrate(take, names) == "AI (greedy) draws 1P1 Pine · plain and captures 1L."
    assert narrate(Event("koikoi", 0, data={"calls": 2}), names) == (
        "You call KOI-KOI and play on (2 calls)."
    )
    assert narrate(Event("stop", 1, data={"automatic": True}), names).startswith(
        "AI (greedy) stops the round (automatically"
    )
    assert narrate(Event("hand", 0, None, 1), names) is None
    # Replays tell everyone in the third person.
    assert narrate(capture, ("alice", "bob"), you=None) == (
        "alice plays 1L Pine · Crane and captures 1P1."
    )


def test_action_text() -> None:
    assert action_text(0) == "play 1L Pine · Crane"
    assert action_text(TAKE_BASE + 2) == "capture 1P1 Pine · plain"
    assert action_text(KOIKOI_ID).startswith("koi-koi")
    assert action_text(STOP_ID).startswith("stop")


def test_table_from_view_matches_the_view() -> None:
    game = GameController(ONE_ROUND, opponent="random", seed=2)
    view = game.view()
    table = Table.from_view(view)
    assert table.hand == view.hand and table.field == view.field
    assert table.opponent_count == view.opponent_hand_count
    assert table.after(Event("exhausted")) is table
