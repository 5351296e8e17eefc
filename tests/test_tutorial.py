"""The guided first round (koikoi.features.tutorial): its deal, the coach's pick, and what is
explained when — from the player's view only."""

from __future__ import annotations

import random

import pytest

from koikoi import i18n
from koikoi.agents import make_agent
from koikoi.agents.base import GreedyAgent
from koikoi.features.tutorial import (
    TUTORIAL_OPPONENT,
    TUTORIAL_SEAT,
    TUTORIAL_SEED,
    Tip,
    coach,
    lessons,
    new_tutorial_match,
    prompt,
    suggestion,
    tutorial_rules,
)
from koikoi.game.actions import KOIKOI_ID, STOP_ID, TAKE_BASE
from koikoi.game.cards import CODES
from koikoi.game.engine import Match, Phase
from koikoi.game.rules import get_rules
from koikoi.game.views import PlayerView, view_of


def follow(
    match: Match, *, koikoi: int = 0, opponent_rng: random.Random | None = None
) -> tuple[list[str], list[Tip]]:
    """Play ``match`` to its end, the newcomer following the coach (but calling koi-koi
    ``koikoi`` times), the opponent greedy. Returns the lesson keys in the order they
    came, and the prompts."""
    agent = make_agent(TUTORIAL_OPPONENT)
    rng = opponent_rng or random.Random(0)
    keys: list[str] = []
    prompts: list[Tip] = []
    calls = 0
    while True:
        view = view_of(match, TUTORIAL_SEAT)
        keys += [tip.key for tip in lessons(view) if tip.key not in keys]
        if match.is_over:
            return keys, prompts
        if match.current == TUTORIAL_SEAT:
            tip = prompt(view)
            assert tip is not None and not tip.wait
            prompts.append(tip)
            action = suggestion(view)
            assert action is not None
            if action == STOP_ID and calls < koikoi:
                action, calls = KOIKOI_ID, calls + 1
        else:
            action = agent.act(view_of(match, 1 - TUTORIAL_SEAT, with_history=True), rng)
        match.apply(action)


def test_the_deal_is_fixed_and_the_newcomer_leads() -> None:
    a, b = new_tutorial_match(), new_tutorial_match()
    assert a.deals == b.deals and len(a.deals) == 1  # no redeal, no instant hand
    assert a.rules == get_rules("nintendo").replace(game__rounds=1) == tutorial_rules()
    assert a.dealer == TUTORIAL_SEAT and a.current == TUTORIAL_SEAT
    assert a.seed == TUTORIAL_SEED


def test_following_the_coach_meets_every_lesson_in_three_turns() -> None:
    match = new_tutorial_match()
    keys, prompts = follow(match)
    assert keys == [
        "welcome",
        "months",
        "goal",
        "pile",
        "kind_bright",
        "kind_ribbon",
        "draw",  # the first draw lays its card
        "opponent_turn",
        "kind_plain",
        "kind_animal",
        "draw_match",  # a later draw captures
        "yaku",
        "settlement",
        "finish",
    ]
    assert [(p.key, p.cards) for p in prompts] == [
        ("play_match", ("1L", "1R")),  # one match: a Bright and a Ribbon
        ("play_pick", ("3P1", "3R", "3P2")),  # two matches: take the Ribbon
        ("play_lay", ("2P2",)),  # nothing matches: lay the least valuable card
        ("decide", ()),
    ]
    assert prompts[-1].place == "decide" and prompts[-1].params == {"points": 5}
    view = view_of(match, TUTORIAL_SEAT)
    yaku = next(tip for tip in lessons(view) if tip.key == "yaku")
    assert yaku.params == {"yaku": "akatan", "points": 5}
    assert set(yaku.cards) == {"1R", "2R", "3R"}
    assert yaku.text("en") == "You made a yaku: Red poetry ribbons, worth 5 points!"
    assert match.scores[TUTORIAL_SEAT] == 5


def test_koikoi_is_explained_when_called_and_the_yaku_grows() -> None:
    keys, prompts = follow(new_tutorial_match(), koikoi=1)
    assert keys.index("yaku") < keys.index("koikoi_called") < keys.index("yaku_up")
    assert [p.key for p in prompts][-3:] == ["decide", "your_turn", "decide_again"]
    assert prompts[-1].text("en") == "Koi-koi again, or stop and score 6 points?"


def test_the_opponent_has_no_choice_to_break_on_the_way() -> None:
    """Every host seeds the opponent differently; the guided round must not depend on it."""
    greedy = GreedyAgent()
    match = new_tutorial_match()
    while not match.is_over:
        if match.current == TUTORIAL_SEAT:
            action = suggestion(view_of(match, TUTORIAL_SEAT))
            assert action is not None
        else:
            view = view_of(match, 1 - TUTORIAL_SEAT, with_history=True)
            values = [greedy._value(view, a) for a in view.legal_ids]
            assert values.count(max(values)) == 1 or KOIKOI_ID in view.legal_ids
            action = greedy.act(view, random.Random(0))
        match.apply(action)
    others = [new_tutorial_match() for _ in range(3)]
    for seed, other in enumerate(others):
        follow(other, opponent_rng=random.Random(seed))
        assert other.actions == match.actions


def _random_views(games: int) -> list[PlayerView]:
    """The newcomer's view after every action of random games under the tutorial's
    rules (random players, koi-koi now and then)."""
    out: list[PlayerView] = []
    rules = tutorial_rules()
    for seed in range(games):
        rng = random.Random(seed)
        match = Match(rules, seed=seed)
        out.append(view_of(match, TUTORIAL_SEAT))
        while not match.is_over:
            match.apply(rng.choice(match.legal_ids()))
            out.append(view_of(match, TUTORIAL_SEAT))
    return out


def test_tips_point_only_at_cards_the_player_can_see() -> None:
    checked = 0
    for view in _random_views(40):
        drawn = (1 << view.drawn) if view.drawn >= 0 else 0
        visible = view.hand | view.field | view.piles[0] | view.piles[1] | drawn
        for tip in coach(view):
            for code in tip.cards:
                assert visible >> CODES.index(code) & 1, (tip.key, code)
                checked += 1
            text = tip.text("en")
            assert not any(word in CODES for word in text.replace(",", " ").split())
    assert checked > 500


def test_lessons_come_once_and_prompts_only_on_the_players_move() -> None:
    for view in _random_views(20):
        keys = [tip.key for tip in lessons(view)]
        assert len(keys) == len(set(keys))
        now = prompt(view)
        assert (now is not None) == view.is_my_turn
        if now is not None:
            assert not now.wait and all(tip.wait for tip in lessons(view))


def test_the_settlement_is_told_as_it_ended() -> None:
    told: set[str] = set()
    for view in _random_views(60):
        if not view.is_over:
            continue
        (tip,) = [t for t in lessons(view) if t.key == "settlement"]
        settlement = view.settlements[-1]
        text = tip.text("en")
        if settlement.winner == TUTORIAL_SEAT:
            assert text.startswith(f"Round over: you score {settlement.points} points")
            told.add("won")
        elif settlement.winner is None:
            assert "nobody scores" in text
            told.add("nobody")
        else:
            assert text.startswith(f"Round over: your opponent scores {settlement.points}")
            told.add("lost")
        assert tip.place == "settlement"
    assert told == {"won", "lost", "nobody"}


def test_a_drawn_card_with_two_matches_is_prompted() -> None:
    for view in _random_views(60):
        if view.phase is Phase.TAKE and view.is_my_turn:
            tip = prompt(view)
            assert tip is not None and tip.key == "take_pick"
            pick = suggestion(view)
            assert pick is not None and tip.cards[0] == CODES[pick - TAKE_BASE]
            assert len(tip.cards) == 2
            return
    pytest.fail("no drawn card with two matches in these games")


def test_a_spectator_is_not_coached() -> None:
    match = new_tutorial_match()
    assert coach(view_of(match, None)) == []


def test_tips_in_japanese_name_the_yaku_in_japanese() -> None:
    tip = Tip(
        "yaku", "You made a yaku: {yaku}, worth {points} points!", {"yaku": "akatan", "points": 5}
    )
    assert tip.text("ja") == "役ができました：赤短 akatan、5点！"
    try:
        i18n.set_language("ja")
        assert tip.text() == tip.text("ja")
    finally:
        i18n.set_language("en")
    assert tip.to_dict()["message"] == "You made a yaku: {yaku}, worth {points} points!"


def test_doctests() -> None:
    import doctest

    from koikoi.features import tutorial

    failures, tried = doctest.testmod(tutorial)
    assert failures == 0 and tried > 3
