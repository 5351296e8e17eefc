"""Scenario tests of the rules engine (RULES.md §2, §4), round by round and match level.

Rounds are built directly with chosen cards (``make_round``: stock top first).
Matches get chosen deals from ``Match(decks=...)`` (via ``rigged_match``; decks
written with :func:`deck`, in the engine's dealing order: dealer's hand, other
hand, field, stock top first) and a scripted first-dealer draw.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from koikoi_testkit import (
    RiggedRandom,
    cards,
    codes,
    deck,
    make_round,
    only_yaku,
    play,
    play_random_match,
    rigged_match,
    snapshot,
)

from koikoi.game.actions import (
    KOIKOI_ID,
    NUM_ACTIONS,
    STOP_ID,
    Discard,
    Play,
    action_from_id,
    parse_action,
)
from koikoi.game.cards import FULL_DECK, parse_card
from koikoi.game.engine import Event, Match, Phase, Round, month_of_round
from koikoi.game.errors import IllegalActionError, InvalidInputError, KoiKoiError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules

NINTENDO = get_rules("nintendo")


def ids(*moves: str) -> list[int]:
    """Sorted action ids of moves written as text."""
    return sorted(parse_action(m).id for m in moves)


def legal(state: Round | Match) -> list[int]:
    return sorted(state.legal_ids())


def event_kinds(rnd: Round) -> list[str]:
    assert rnd.events is not None
    return [e.kind for e in rnd.events]


def no_instants(rules: Rules | str) -> Rules:
    """Rules with the instant hands off, for match tests that are not about them."""
    r = get_rules(rules) if isinstance(rules, str) else rules
    return r.replace(instant__teshi=0, instant__kuttsuki=0)


# ====================================================================== Round
# ---------------------------------------------------------------- matching


def test_single_match_captures_both_cards() -> None:
    rnd = make_round(hand0="1L 5P1", hand1="6P1 7P1", field="1P1 2P1 3P1", stock="12P1 12P2")
    assert rnd.current == 0 and rnd.phase is Phase.PLAY
    assert legal(rnd) == ids("play 1L", "play 5P1")
    assert Play(parse_card("1L"), parse_card("1P1")).id not in rnd.legal_ids()
    play(rnd, "play 1L")
    assert rnd.piles[0] == cards("1L 1P1")
    assert rnd.field == cards("2P1 3P1 12P1")  # the drawn 12P1 matched nothing
    assert rnd.hands[0] == cards("5P1")
    assert rnd.current == 1 and rnd.phase is Phase.PLAY
    assert rnd.card_count() == 48 and rnd.accounted() == FULL_DECK
    assert rnd.events is not None
    first, second = rnd.events[0], rnd.events[1]
    assert (first.kind, first.player, first.card, first.cards) == (
        "play",
        0,
        parse_card("1L"),
        cards("1L 1P1"),
    )
    assert (second.kind, second.card, second.cards) == ("draw", parse_card("12P1"), 0)


def test_two_matches_the_player_chooses() -> None:
    rnd = make_round(hand0="1L 5P1", hand1="6P1 7P1", field="1P1 1P2 2P1", stock="12P1")
    assert legal(rnd) == ids("play 1L 1P1", "play 1L 1P2", "play 5P1")
    with pytest.raises(IllegalActionError):
        play(rnd, "play 1L")
    play(rnd, "play 1L 1P2")
    assert rnd.piles[0] == cards("1L 1P2")
    assert rnd.field == cards("1P1 2P1 12P1")


def test_drawn_card_with_two_matches_asks_which_to_take() -> None:
    rnd = make_round(hand0="5P1 6P1", hand1="7P1 8P1", field="2A 2R 3P1", stock="2P1 12P1")
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.TAKE
    assert rnd.current == 0
    assert rnd.drawn == parse_card("2P1")
    assert legal(rnd) == ids("take 2A", "take 2R")
    assert rnd.legal_actions() == [action_from_id(i) for i in rnd.legal_ids()]
    assert rnd.card_count() == 48 and rnd.accounted() == FULL_DECK
    for move in ("play 6P1", "take 3P1", "koikoi", "stop"):
        with pytest.raises(IllegalActionError):
            play(rnd, move)
    play(rnd, "take 2R")
    assert rnd.piles[0] == cards("2P1 2R")
    assert rnd.field == cards("2A 3P1 5P1")
    assert rnd.drawn == -1
    assert rnd.phase is Phase.PLAY and rnd.current == 1
    assert event_kinds(rnd) == ["play", "draw", "take"]


def test_hand_card_with_three_matches_captures_all_four() -> None:
    rnd = make_round(hand0="1L 5P1", hand1="6P1 7P1", field="1R 1P1 1P2 2P1", stock="12P1")
    assert legal(rnd) == ids("play 1L", "play 5P1")  # no choice to make
    play(rnd, "play 1L")
    assert rnd.piles[0] == cards("1L 1R 1P1 1P2")
    assert rnd.field == cards("2P1 12P1")


def test_drawn_card_with_three_matches_captures_all_four() -> None:
    rnd = make_round(hand0="5P1 6P1", hand1="7P1 8P1", field="3L 3R 3P1 2P1", stock="3P2")
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.PLAY and rnd.current == 1
    assert rnd.piles[0] == cards("3L 3R 3P1 3P2")
    assert rnd.field == cards("2P1 5P1")


def test_card_without_match_is_laid_on_the_field() -> None:
    rnd = make_round(hand0="5P1 6P1", hand1="7P1 8P1", field="1P1", stock="12P1")
    play(rnd, "play 5P1")
    assert rnd.field == cards("1P1 5P1 12P1")
    assert rnd.piles == [0, 0]
    assert rnd.events is not None and rnd.events[0].cards == 0


def test_drawn_card_that_matches_must_capture() -> None:
    rnd = make_round(hand0="5P1 6P1", hand1="7P1 8P1", field="2A 3P1", stock="2P1")
    play(rnd, "play 5P1")
    # No choice is offered: the single match is taken at once.
    assert rnd.phase is Phase.PLAY and rnd.current == 1
    assert rnd.piles[0] == cards("2A 2P1")
    assert rnd.field == cards("3P1 5P1")


def test_month_of_round() -> None:
    assert [month_of_round(k) for k in (1, 2, 12, 13, 14, 24, 25)] == [1, 2, 12, 1, 2, 12, 1]
    assert make_round(round_number=13).month == 1
    assert make_round(round_number=7).month == 7


# ---------------------------------------------------------------- koi-koi


def koikoi_round(rules: Rules | str = "nintendo") -> Round:
    """p0 makes hanami on turn 1, nothing on turn 2, tsukimi on turn 3."""
    return make_round(
        rules,
        hand0="3L 1P1 2P1",
        hand1="4P1 5P1 6P1",
        field="3P1 9P1 1P2 8P1",
        stock="9A 10P1 11P 12P1 8L 12P2",
    )


def test_decision_offered_only_when_the_score_went_up() -> None:
    rnd = koikoi_round()
    play(rnd, "play 3L")  # captures 3P1, draws 9A onto 9P1: hanami
    assert rnd.scores[0] == 5
    assert rnd.phase is Phase.DECIDE and rnd.current == 0
    assert legal(rnd) == sorted([KOIKOI_ID, STOP_ID])
    play(rnd, "koikoi")
    assert rnd.koikoi_calls == [1, 0]
    assert rnd.phase is Phase.PLAY and rnd.current == 1
    play(rnd, "play 4P1")  # nothing for p1
    assert rnd.phase is Phase.PLAY and rnd.current == 0
    play(rnd, "play 1P1")  # captures 1P2; the score stays at 5: no decision
    assert rnd.scores[0] == 5
    assert rnd.phase is Phase.PLAY and rnd.current == 1
    play(rnd, "play 5P1")
    play(rnd, "play 2P1")  # draws 8L onto 8P1: tsukimi, the score goes up again
    assert rnd.scores[0] == 10
    assert rnd.phase is Phase.DECIDE and rnd.current == 0
    play(rnd, "stop")
    assert rnd.phase is Phase.OVER and rnd.is_over
    s = rnd.settlement
    assert s is not None
    assert s.winner == 0 and s.reason == "stop"
    assert {y.name for y in s.yaku} == {"hanami", "tsukimi"}
    # Base 10 >= 7: x2; only the opponent's koi-koi doubles under opponent_x2.
    assert s.base == 10 and s.points == 20 and s.deltas == (20, 0)
    assert rnd.legal_ids() == []
    kinds = event_kinds(rnd)
    assert kinds.count("yaku") == 2 and kinds.count("koikoi") == 1
    assert kinds[-2:] == ["stop", "round_over"]


def test_opponent_stops_after_a_koikoi_nintendo_doubles_twice() -> None:
    # RULES.md §6: a stop at base 7 after the opponent called koi-koi scores 7 x 2 x 2.
    rnd = make_round(
        hand0="3L 6P1",
        hand1="3R 7P1",
        field="3P1 3P2 9P1",
        stock="9A 11P 12P1 12P2",
        piles=("", "1R 2R 4R 5R"),
    )
    assert rnd.scores == [0, 0]
    play(rnd, "play 3L 3P1", "koikoi")  # hanami, koi-koi
    play(rnd, "play 3R")  # captures 3P2: akatan + 2 ribbons = 7
    assert rnd.scores[1] == 7
    assert rnd.phase is Phase.DECIDE and rnd.current == 1
    play(rnd, "stop")
    s = rnd.settlement
    assert s is not None and s.winner == 1
    assert s.base == 7 and s.points == 28
    assert s.deltas == (0, 28)  # the koi-koi caller scores nothing
    assert [m.factor for m in s.multipliers] == [2, 2]


def test_koikoi_limit_per_player_stops_automatically() -> None:
    rnd = koikoi_round(NINTENDO.replace(koikoi__limit=1))
    play(rnd, "play 3L", "koikoi", "play 4P1", "play 1P1", "play 5P1")
    play(rnd, "play 2P1")  # tsukimi: improved, but the one koi-koi is used
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 0 and s.points == 20
    assert rnd.events is not None
    stop = [e for e in rnd.events if e.kind == "stop"]
    assert len(stop) == 1 and stop[0].data["automatic"] is True


def limit_round(rules: Rules) -> Round:
    """p0 calls koi-koi on turn 1; then p1 improves."""
    return make_round(
        rules,
        hand0="3L 6P1",
        hand1="3R 7P1",
        field="3P1 3P2 9P1",
        stock="9A 11P 12P1 12P2",
        piles=("", "1R 2R 4R 5R"),
    )


def test_koikoi_limit_player_scope_counts_own_calls_only() -> None:
    rnd = limit_round(NINTENDO.replace(koikoi__limit=1, koikoi__limit_scope="player"))
    play(rnd, "play 3L 3P1", "koikoi", "play 3R")
    assert rnd.phase is Phase.DECIDE and rnd.current == 1


def test_koikoi_limit_round_scope_counts_both_players() -> None:
    rnd = limit_round(NINTENDO.replace(koikoi__limit=1, koikoi__limit_scope="round"))
    play(rnd, "play 3L 3P1")
    assert rnd.phase is Phase.DECIDE  # no call yet this round
    play(rnd, "koikoi", "play 3R")
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 1 and s.points == 28


def test_koikoi_limit_zero_is_unlimited() -> None:
    rnd = koikoi_round(NINTENDO.replace(koikoi__limit=0))
    play(rnd, "play 3L", "koikoi", "play 4P1", "play 1P1", "play 5P1", "play 2P1")
    assert rnd.phase is Phase.DECIDE
    play(rnd, "koikoi")
    assert rnd.koikoi_calls == [2, 0]


def last_card_round(rules: Rules) -> Round:
    """p0 (leader) makes hanami with its last hand card; p1 still holds one."""
    return make_round(rules, hand0="3L", hand1="5P1", field="3P1 9P1", stock="9A 12P1")


def test_offer_on_last_card_false_stops_automatically() -> None:
    rnd = last_card_round(NINTENDO.replace(koikoi__offer_on_last_card=False))
    play(rnd, "play 3L")
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 0 and s.points == 5 and s.reason == "stop"


def test_offer_on_last_card_true_offers_and_koikoi_can_lose_it() -> None:
    rnd = last_card_round(NINTENDO)
    play(rnd, "play 3L")
    assert rnd.phase is Phase.DECIDE
    play(rnd, "koikoi")
    assert rnd.current == 1
    play(rnd, "play 5P1")  # nothing: both hands empty, exhausted, a draw in nintendo
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner is None and s.deltas == (0, 0)
    assert "exhausted" in event_kinds(rnd)


def test_improving_with_the_very_last_card_stops_automatically() -> None:
    # Both hands are empty: koi-koi is not available even with offer_on_last_card.
    rnd = make_round(hand0="5P1", hand1="3L", field="3P1 9P1", stock="12P1 9A")
    play(rnd, "play 5P1", "play 3L")
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 1 and s.points == 5 and s.reason == "stop"


# ---------------------------------------------------------------- exhausted rounds


def quiet_round(rules: Rules | str, *, dealer: int = 0, piles: tuple[str, str] = ("", "")) -> Round:
    """One card each, nothing matches: the round is exhausted after two turns."""
    return make_round(
        rules,
        hand0="5P1",
        hand1="6P1",
        field="1P1",
        stock="12P1 12P2",
        dealer=dealer,
        leader=0,
        piles=piles,
    )


def finish_quietly(rnd: Round) -> Any:
    play(rnd, "play 5P1", "play 6P1")
    assert rnd.phase is Phase.OVER
    assert "exhausted" in event_kinds(rnd)
    return rnd.settlement


def test_both_hands_empty_exhausted_draw() -> None:
    s = finish_quietly(quiet_round("nintendo", piles=("3L 9A", "")))
    assert s.winner is None and s.points == 0 and s.deltas == (0, 0)


@pytest.mark.parametrize("dealer", [0, 1])
def test_exhausted_highest_the_higher_total_scores(dealer: int) -> None:
    # compendium: hanami 5 against akatan + 1 ribbon = 6.
    s = finish_quietly(quiet_round("compendium", dealer=dealer, piles=("3L 9A", "1R 2R 3R 4R")))
    assert s.winner == 1 and s.base == 6 and s.points == 6 and s.deltas == (0, 6)


@pytest.mark.parametrize("dealer", [0, 1])
def test_exhausted_highest_tie_goes_to_the_dealer(dealer: int) -> None:
    s = finish_quietly(quiet_round("compendium", dealer=dealer, piles=("3L 9A", "1R 2R 3R")))
    assert s.winner == dealer and s.points == 5


def test_exhausted_highest_is_settled_with_the_multipliers() -> None:
    rnd = quiet_round("compendium", piles=("3L 9A", "1R 2R 3R 4R 5R"))
    rnd.koikoi_calls = [1, 0]  # p0 had called koi-koi with its hanami
    rnd.called_scores = [5, 0]
    s = finish_quietly(rnd)
    assert s.winner == 1 and s.base == 7 and s.points == 28  # x2 seven, x2 opponent koi-koi


@pytest.mark.parametrize("dealer", [0, 1])
def test_exhausted_highest_nobody_the_dealer_gets_oya_ken(dealer: int) -> None:
    s = finish_quietly(quiet_round("compendium", dealer=dealer))
    assert s.winner == dealer and s.points == 6
    assert s.deltas[dealer] == 6 and s.deltas[1 - dealer] == 0


def test_exhausted_last_yaku_the_last_improver_scores() -> None:
    rules = NINTENDO.replace(end__exhausted="last_yaku", end__oya_ken=2)
    rnd = make_round(
        rules,
        hand0="3L 5P1",
        hand1="6P1 7P1",
        field="3P1 9P1",
        stock="9A 12P1 12P2 12P3",
        dealer=1,
        leader=0,
    )
    play(rnd, "play 3L", "koikoi", "play 6P1", "play 5P1", "play 7P1")
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 0 and s.points == 5


@pytest.mark.parametrize("dealer", [0, 1])
def test_exhausted_last_yaku_nobody_the_dealer_gets_oya_ken(dealer: int) -> None:
    rules = NINTENDO.replace(end__exhausted="last_yaku", end__oya_ken=2)
    s = finish_quietly(quiet_round(rules, dealer=dealer))
    assert s.winner == dealer and s.points == 2


@pytest.mark.parametrize("dealer", [0, 1])
def test_exhausted_dealer_point(dealer: int) -> None:
    rules = NINTENDO.replace(end__exhausted="dealer_point", end__oya_ken=1)
    s = finish_quietly(quiet_round(rules, dealer=dealer, piles=("3L 9A", "")))
    assert s.winner == dealer and s.points == 1
    assert s.deltas[dealer] == 1 and s.deltas[1 - dealer] == 0


@pytest.mark.parametrize("dealer", [0, 1])
def test_exhausted_dealer_point_is_zero_sum_with_start_points(dealer: int) -> None:
    s = finish_quietly(quiet_round("koikoi-japan", dealer=dealer))
    assert s.winner == dealer and s.points == 1
    assert s.deltas[dealer] == 1 and s.deltas[1 - dealer] == -1


# ---------------------------------------------------------------- first empty hand


def test_first_empty_hand_ends_the_round_without_a_decision() -> None:
    # modern-hanafuda: p0 (leader) plays its last card and makes hanami; no koi-koi
    # decision, the round is exhausted and last_yaku gives it to p0.
    rnd = make_round(
        "modern-hanafuda",
        hand0="3L",
        hand1="5P1 6P1",
        field="3P1 9P1",
        stock="9A 12P1",
        dealer=1,
        leader=0,
    )
    play(rnd, "play 3L")
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 0 and s.points == 5
    kinds = event_kinds(rnd)
    assert "koikoi" not in kinds and "exhausted" in kinds
    assert rnd.hands[1] == cards("5P1 6P1")  # the other hand is not played out


def test_first_empty_hand_nobody_scored_gives_the_dealer_one_point() -> None:
    rnd = make_round(
        "modern-hanafuda",
        hand0="5P1",
        hand1="6P1 7P1",
        field="1P1",
        stock="12P1 12P2",
        dealer=1,
        leader=0,
    )
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 1 and s.points == 1 and s.deltas == (0, 1)


def test_without_first_empty_hand_the_round_goes_on() -> None:
    rules = get_rules("modern-hanafuda").replace(end__first_empty_hand=False)
    rnd = make_round(rules, hand0="5P1 8P1", hand1="6P1 7P1", field="1P1", stock="12P1 12P2")
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.PLAY and rnd.current == 1


# ---------------------------------------------------------------- what may be played


def test_any_or_discard_allows_discarding_matching_cards_only() -> None:
    rnd = make_round("wikipedia", hand0="1L 5P1", hand1="6P1 7P1", field="1P1 2P1", stock="12P1")
    assert legal(rnd) == ids("play 1L", "discard 1L", "play 5P1")
    with pytest.raises(IllegalActionError):
        play(rnd, "discard 5P1")
    play(rnd, "discard 1L")
    assert rnd.piles == [0, 0]
    assert rnd.field == cards("1L 1P1 2P1 12P1")
    assert rnd.events is not None and rnd.events[0].data.get("discard") is True


def test_any_or_discard_with_two_matches() -> None:
    rnd = make_round("wikipedia", hand0="1L", hand1="6P1", field="1P1 1P2", stock="12P1")
    assert legal(rnd) == ids("play 1L 1P1", "play 1L 1P2", "discard 1L")


def test_discard_is_illegal_under_any() -> None:
    rnd = make_round("nintendo", hand0="1L 5P1", hand1="6P1 7P1", field="1P1", stock="12P1")
    assert all(not isinstance(a, Discard) for a in rnd.legal_actions())
    with pytest.raises(IllegalActionError):
        play(rnd, "discard 1L")


def test_must_match_only_matching_cards_when_one_exists() -> None:
    rnd = make_round(
        "modern-hanafuda", hand0="1L 5P1 6P1", hand1="7P1 8P1 9P1", field="1P1 2P1", stock="12P1"
    )
    assert legal(rnd) == ids("play 1L")
    with pytest.raises(IllegalActionError):
        play(rnd, "play 5P1")
    two = make_round(
        "modern-hanafuda", hand0="1L 5P1", hand1="7P1 8P1", field="1P1 1P2", stock="12P1"
    )
    assert legal(two) == ids("play 1L 1P1", "play 1L 1P2")


def test_must_match_any_card_when_none_matches() -> None:
    rnd = make_round("modern-hanafuda", hand0="5P1 6P1", hand1="7P1 8P1", field="1P1", stock="12P1")
    assert legal(rnd) == ids("play 5P1", "play 6P1")


def test_any_lets_a_non_matching_card_be_played_beside_a_matching_one() -> None:
    rnd = make_round("nintendo", hand0="1L 5P1", hand1="7P1 8P1", field="1P1", stock="12P1")
    assert legal(rnd) == ids("play 1L", "play 5P1")


# ---------------------------------------------------------------- wild lightning

WILD = get_rules("compendium").replace(play__wild_lightning=True)


def test_wild_lightning_captures_any_one_field_card() -> None:
    rnd = make_round(WILD, hand0="11P 5P1", hand1="6P1 7P1", field="1L 2A 3P1", stock="12P1")
    assert legal(rnd) == ids("play 11P 1L", "play 11P 2A", "play 11P 3P1", "play 5P1")
    play(rnd, "play 11P 1L")
    assert rnd.piles[0] == cards("11P 1L")
    assert rnd.field == cards("2A 3P1 12P1")


def test_wild_lightning_with_three_willows_takes_all_four() -> None:
    rnd = make_round(WILD, hand0="11P 5P1", hand1="6P1 7P1", field="11L 11A 11R 1P1", stock="12P1")
    assert legal(rnd) == ids("play 11P", "play 5P1")
    play(rnd, "play 11P")
    assert rnd.piles[0] == cards("11L 11A 11R 11P")
    assert rnd.field == cards("1P1 12P1")


def test_wild_lightning_single_field_card_and_empty_field() -> None:
    one = make_round(WILD, hand0="11P 5P1", hand1="6P1 7P1", field="1L", stock="12P1")
    assert legal(one) == ids("play 11P", "play 5P1")
    play(one, "play 11P")
    assert one.piles[0] == cards("11P 1L")
    empty = make_round(WILD, hand0="11P 5P1", hand1="6P1 7P1", field="", stock="12P1")
    play(empty, "play 11P")
    assert empty.piles[0] == 0 and empty.field == cards("11P 12P1")


def test_wild_lightning_drawn_chooses_any_field_card() -> None:
    rnd = make_round(WILD, hand0="5P1 6P1", hand1="7P1 8P1", field="1L 2A", stock="11P")
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.TAKE and rnd.drawn == parse_card("11P")
    assert legal(rnd) == ids("take 1L", "take 2A", "take 5P1")
    play(rnd, "take 2A")
    assert rnd.piles[0] == cards("11P 2A")


def test_lightning_is_not_wild_by_default() -> None:
    rnd = make_round("compendium", hand0="11P 5P1", hand1="6P1 7P1", field="1L 2A", stock="12P1")
    assert legal(rnd) == ids("play 11P", "play 5P1")
    play(rnd, "play 11P")
    assert rnd.piles[0] == 0 and rnd.field == cards("1L 2A 11P 12P1")
    willow = make_round(
        "compendium", hand0="11P 5P1", hand1="6P1 7P1", field="11L 1L", stock="12P1"
    )
    play(willow, "play 11P")
    assert willow.piles[0] == cards("11L 11P")


# ---------------------------------------------------------------- illegal actions


# Not actions at all, or ids outside the encoding.
NOT_ACTIONS: list[Any] = [-1, NUM_ACTIONS, 10**6, None, True, "play 3L", 3.0, object()]


def illegal_moves() -> list[Any]:
    """Illegal in koikoi_round's first state (p0 holds 3L 1P1 2P1; field 3P1 9P1 1P2 8P1)."""
    texts = ["play 12P3", "play 3L 3P1", "play 4P1", "discard 3L", "take 9P1", "koikoi", "stop"]
    return [parse_action(t) for t in texts] + NOT_ACTIONS


def assert_rejected(state: Round | Match, move: Any) -> None:
    before = snapshot(state)
    with pytest.raises(IllegalActionError) as info:
        state.apply(move)
    assert isinstance(info.value, KoiKoiError)
    assert snapshot(state) == before


def _move_id(move: Any) -> str:
    """A test id that is the same in every process (a bare ``object()``'s repr is not)."""
    return "object()" if type(move) is object else repr(move)


@pytest.mark.parametrize("move", illegal_moves(), ids=_move_id)
def test_illegal_actions_in_play_phase_change_nothing(move: Any) -> None:
    rnd = koikoi_round()
    assert_rejected(rnd, move)


def test_illegal_actions_in_take_and_decide_phases_change_nothing() -> None:
    rnd = make_round(hand0="5P1 6P1", hand1="7P1 8P1", field="2A 2R 3P1", stock="2P1 12P1")
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.TAKE
    for move in ["play 6P1", "take 3P1", "take 2P1", "koikoi", "stop", "discard 6P1"]:
        assert_rejected(rnd, parse_action(move))
    for move in NOT_ACTIONS:
        assert_rejected(rnd, move)
    decide = koikoi_round()
    play(decide, "play 3L")
    assert decide.phase is Phase.DECIDE
    for move in ["play 1P1", "take 1P2", "play 2P1", "discard 1P1"]:
        assert_rejected(decide, parse_action(move))


def test_every_action_is_illegal_once_the_round_is_over() -> None:
    rnd = koikoi_round()
    play(rnd, "play 3L", "stop")
    assert rnd.is_over
    before = snapshot(rnd)
    for action_id in range(NUM_ACTIONS):
        with pytest.raises(IllegalActionError):
            rnd.apply(action_id)
    assert snapshot(rnd) == before


def test_illegal_action_message_names_the_action_and_the_legal_ones() -> None:
    rnd = make_round(hand0="1L 5P1", hand1="6P1 7P1", field="1P1", stock="12P1")
    with pytest.raises(IllegalActionError) as info:
        play(rnd, "play 12P3")
    message = str(info.value)
    assert "12P3" in message and "play 1L" in message and "play 5P1" in message


def test_checked_and_unchecked_apply_agree() -> None:
    a = koikoi_round()
    b = koikoi_round()
    for move in ["play 3L", "koikoi", "play 4P1", "play 1P1", "play 5P1", "play 2P1", "stop"]:
        action = parse_action(move)
        a.apply(action)
        b.apply_id(action.id)
        assert snapshot(a) == snapshot(b)


def test_clone_is_independent() -> None:
    rnd = koikoi_round()
    play(rnd, "play 3L")
    copy = rnd.clone()
    before = snapshot(rnd)
    play(copy, "koikoi", "play 4P1")
    assert snapshot(rnd) == before
    assert copy.events is None
    with_events = rnd.clone(events=True)
    assert with_events.events == rnd.events and with_events.events is not rnd.events


def test_stock_is_given_top_first() -> None:
    rnd = make_round(hand0="5P1", hand1="6P1", field="", stock="1L 2A 3L", fill=False)
    assert rnd.stock == codes("1L 2A 3L")
    play(rnd, "play 5P1")
    assert rnd.field == cards("5P1 1L")


def test_leader_plays_first() -> None:
    rnd = make_round(hand0="5P1", hand1="6P1", field="1P1", stock="12P1 12P2", dealer=0, leader=1)
    assert rnd.current == 1 and rnd.dealer == 0
    assert legal(rnd) == ids("play 6P1")


# ====================================================================== Match
# ---------------------------------------------------------------- first dealer


@pytest.mark.parametrize(
    ("draw", "winner"),
    [
        (("1P1", "2A"), 0),  # earlier month wins
        (("12L", "11P"), 1),
        (("8A", "8L"), 1),  # same month: Bright beats Animal
        (("9A", "9R"), 0),  # Animal beats Ribbon
        (("3P2", "3R"), 1),  # Ribbon beats Plain
        (("11L", "11P"), 0),
    ],
)
@pytest.mark.parametrize("name", ["nintendo", "compendium", "wikipedia"])
def test_first_dealer_draw_decides(name: str, draw: tuple[str, str], winner: int) -> None:
    m = Match(get_rules(name), rng=RiggedRandom(draws=[draw]))
    start = next(e for e in m.events if e.kind == "round_start")
    assert start.data["dealer"] == winner and start.data["leader"] == winner
    first = m.events[0]
    assert first.kind == "first_dealer"
    assert first.data["method"] == "draw"
    assert first.data["draws"] == [list(draw)]
    assert first.data["dealer"] == winner and first.player == winner


def test_first_dealer_equal_cards_draw_again() -> None:
    draws = [("1P1", "1P2"), ("12P1", "12P3"), ("5A", "2P1")]
    m = Match(no_instants("nintendo"), rng=RiggedRandom(draws=draws))
    assert m.dealer == 1
    assert m.events[0].data["draws"] == [list(d) for d in draws]


@pytest.mark.parametrize(("draw", "winner"), [(("2A", "5P1"), 0), (("6P1", "1P1"), 1)])
def test_fixed_dealer_the_draws_winner_leads_the_other_deals_all_match(
    draw: tuple[str, str], winner: int
) -> None:
    rules = no_instants("modern-hanafuda").replace(game__rounds=4)
    m = rigged_match(rules, draws=[draw], seed=5)
    assert m.round.dealer == 1 - winner
    assert m.round.leader == winner and m.current == winner
    assert m.events[0].data["dealer"] == 1 - winner
    assert m.events[0].data["leader"] == winner
    rnd_rng = random.Random(1)
    while not m.is_over:
        assert m.round.dealer == 1 - winner
        m.apply(rnd_rng.choice(m.legal_ids()))
    starts = [e for e in m.events if e.kind == "round_start"]
    assert len(starts) >= 4
    assert all(e.data["dealer"] == 1 - winner for e in starts)


def test_random_first_dealer_is_a_coin_flip() -> None:
    rules = no_instants("boardgame-blog")
    dealers = [Match(rules, seed=s).dealer for s in range(200)]
    assert 60 < sum(dealers) < 140
    m = Match(rules, seed=3)
    assert m.events[0].data["method"] == "random"
    assert m.events[0].data["draws"] == []


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_first_dealer_event_follows_the_rule(name: str) -> None:
    kind_rank = {"L": 3, "A": 2, "R": 1, "P": 0}

    def key(code: str) -> tuple[int, int]:
        month = int(code.rstrip("0123456789").rstrip("LARP"))
        return (-month, kind_rank[code[len(str(month))]])

    rules = get_rules(name)
    for seed in range(40):
        m = Match(rules, seed=seed)
        first = m.events[0]
        assert first.kind == "first_dealer"
        winner = first.player
        assert winner in (0, 1)
        if rules.game.first_dealer == "draw":
            *ties, last = first.data["draws"]
            for a, b in ties:
                assert key(a) == key(b)
            assert key(last[winner]) > key(last[1 - winner])
        expected_dealer = 1 - winner if rules.game.dealer == "fixed" else winner
        assert first.data["dealer"] == expected_dealer
        assert first.data["leader"] == winner


# ---------------------------------------------------------------- rigged matches

# Rules where only hanami scores: a round is won by the player who gets both 3L
# and 9A, and a deal with 3L at the bottom of the stock is always a draw.
HANAMI_ONLY = only_yaku("nintendo", points__hanami=5)


def hanami_deck(winner_is_dealer: bool) -> list[int]:
    """A deck where the winner makes hanami on its first turn.

    The dealer leads and plays 5P1 (drawing 12P1, both laid); then the other
    player plays 3L onto 3P1 and draws 9A onto 9P1. Or, with
    ``winner_is_dealer``, the dealer does it on the first turn.
    """
    if winner_is_dealer:
        return deck("3L 5P1", "6P1", "3P1 9P1", "9A 12P1")
    return deck("5P1", "3L 6P1", "3P1 9P1", "12P1 9A")


def dull_deck() -> list[int]:
    """A deal in which nobody can make hanami: 3L never leaves the stock."""
    return deck("", "", "", "", bottom="3L")


def win_round(m: Match, *, winner_is_dealer: bool) -> None:
    """Play a hanami_deck round: the winner stops."""
    if winner_is_dealer:
        play(m, "play 3L")
    else:
        play(m, "play 5P1", "play 3L")
    assert m.round.phase is Phase.DECIDE
    play(m, "stop")


def draw_round(m: Match) -> None:
    """Play a dull_deck round to its end with the first legal action each time."""
    start = m.round_number
    while m.round_number == start and not m.is_over:
        m.apply(m.legal_ids()[0])


def test_winner_deals_next() -> None:
    rules = HANAMI_ONLY.replace(game__rounds=3)
    m = rigged_match(rules, [hanami_deck(False), hanami_deck(True)])
    assert m.dealer == 0
    win_round(m, winner_is_dealer=False)
    assert m.settlements[0].winner == 1 and m.settlements[0].points == 5
    assert m.scores == [0, 5]
    assert m.round_number == 2 and m.round.dealer == 1 and m.current == 1
    win_round(m, winner_is_dealer=True)
    assert m.settlements[1].winner == 1
    assert m.round.dealer == 1 and m.round_number == 3


@pytest.mark.parametrize(("after_draw", "swapped"), [("swap", True), ("same", False)])
def test_dealer_after_a_draw(after_draw: str, swapped: bool) -> None:
    rules = HANAMI_ONLY.replace(game__rounds=3, game__dealer_after_draw=after_draw)
    m = rigged_match(rules, [dull_deck(), dull_deck()])
    assert m.round.dealer == 0
    draw_round(m)
    assert m.settlements[0].winner is None
    assert m.round.dealer == (1 if swapped else 0)
    assert m.current == m.round.dealer
    draw_round(m)
    assert m.round.dealer == 0


def test_leader_previous_winner_and_unchanged_after_nobody_scored() -> None:
    rules = HANAMI_ONLY.replace(
        game__rounds=4, game__dealer="fixed", game__leader="previous_winner"
    )
    # The draw's winner, player 0, leads round 1; player 1 deals all match. Round 1:
    # p0 lays 6P1, p1 (the dealer) makes hanami and stops; round 2 nobody scores.
    round1 = deck("3L 5P1", "6P1", "3P1 9P1", "12P1 9A")
    m = rigged_match(rules, [round1, dull_deck()])
    assert m.round.dealer == 1 and m.round.leader == 0 and m.current == 0
    play(m, "play 6P1", "play 3L", "stop")
    assert m.settlements[0].winner == 1
    assert m.round.leader == 1 and m.current == 1  # the previous winner leads
    assert m.round.dealer == 1
    draw_round(m)
    assert m.settlements[1].winner is None
    assert m.round.leader == 1  # nobody scored: unchanged
    assert m.round.dealer == 1


def test_modern_hanafuda_dealer_privilege_makes_the_dealer_lead() -> None:
    # RULES.md §5 notes: the dealer's 1-point award counts as scoring for who leads.
    rules = only_yaku("modern-hanafuda").replace(game__rounds=3)
    m = rigged_match(rules, seed=9)
    assert m.round.dealer == 1 and m.round.leader == 0
    draw_round(m)
    s = m.settlements[0]
    assert s.winner == 1 and s.points == 1
    assert m.round.leader == 1 and m.round.dealer == 1
    assert m.scores == [0, 1]


# ---------------------------------------------------------------- instant hands

TESHI = "1L 1R 1P1 1P2 2A 3L 4A 5A"
KUTTSUKI = "6A 6R 7A 7R 8A 8P1 9A 9R"


def instant_match(rules: Rules, dealer_hand: str, other_hand: str, rounds: int = 1) -> Match:
    d = deck(dealer_hand, other_hand)
    return rigged_match(rules.replace(game__rounds=rounds), [d])


def test_teshi_in_the_dealers_hand_wins_at_once() -> None:
    m = instant_match(NINTENDO, TESHI, "")
    assert m.is_over
    s = m.settlements[0]
    assert s.winner == 0 and s.points == 6 and s.reason == "instant"
    assert [y.name for y in s.yaku] == ["teshi"]
    assert s.yaku[0].cards == cards("1L 1R 1P1 1P2")
    assert m.scores == [6, 0] and m.winner == 0
    instant = [e for e in m.events if e.kind == "instant"]
    assert len(instant) == 1 and instant[0].player == 0
    assert instant[0].data["yaku"] == "teshi" and instant[0].data["points"] == 6


def test_kuttsuki_in_the_other_hand_wins_at_once() -> None:
    m = instant_match(NINTENDO, "", KUTTSUKI)
    s = m.settlements[0]
    assert s.winner == 1 and s.points == 6 and [y.name for y in s.yaku] == ["kuttsuki"]
    assert m.scores == [0, 6]


def test_both_instant_hands_the_dealer_scores() -> None:
    m = instant_match(NINTENDO, KUTTSUKI, TESHI)
    s = m.settlements[0]
    assert s.winner == 0 and s.reason == "instant"
    assert len(m.deals) == 1


def test_both_instant_hands_leaflet_redeals_and_swaps_the_dealer() -> None:
    rules = get_rules("leaflet")
    m = rigged_match(rules, [deck(KUTTSUKI, TESHI)], coins=[0.1], seed=4)
    first_dealer = m.events[0].data["dealer"]
    redeals = [e for e in m.events if e.kind == "redeal"]
    assert len(redeals) >= 1 and "both" in redeals[0].data["why"]
    assert len(m.deals) >= 2
    assert m.deals[0] == deck(KUTTSUKI, TESHI)
    assert m.round_number == 1
    starts = [e for e in m.events if e.kind == "round_start"]
    assert starts[0].data["dealer"] == first_dealer
    assert starts[1].data["dealer"] == 1 - first_dealer


def test_instant_hands_off_in_koikoi_japan_redeal_instead() -> None:
    m = rigged_match("koikoi-japan", [deck(TESHI, "")], coins=[0.1])
    dealer = m.events[0].data["dealer"]
    redeals = [e for e in m.events if e.kind == "redeal"]
    assert redeals and redeals[0].data["why"] == "hand four_of_a_month"
    assert redeals[0].player == dealer
    assert not m.settlements
    assert len(m.deals) >= 2 and m.round.dealer == dealer  # redeal_dealer same


def test_kuttsuki_off_no_instant() -> None:
    rules = NINTENDO.replace(instant__kuttsuki=0)
    m = instant_match(rules, KUTTSUKI, "", rounds=2)
    assert not m.settlements and m.phase is Phase.PLAY


def test_match_goes_on_after_an_instant_hand() -> None:
    # Round 1 ends at the deal; round 2 is a set deal with nothing special.
    m = rigged_match(NINTENDO, [deck(TESHI, ""), deck("", "")])
    assert m.settlements[0].reason == "instant"
    assert m.round_number == 2
    assert m.round.round_number == 2  # the new round, not the finished one
    assert not m.is_over and m.phase is Phase.PLAY
    assert m.legal_ids()


# ---------------------------------------------------------------- redeals


def field_match(rules: Rules, field: str) -> Match:
    return rigged_match(rules, [deck("", "", field)], seed=1)


@pytest.mark.parametrize(
    ("name", "field", "why"),
    [
        ("nintendo", "1L 1R 1P1 1P2", "four_of_a_month"),
        ("compendium", "1L 1R 1P1 1P2", "four_of_a_month"),
        ("compendium", "1L 1R 2A 2R 3L 3R 4A 4R", "four_pairs"),
        ("leaflet", "1L 1R 2A 2R 3L 3R 4A 4R", "four_pairs"),
        ("koikoi-japan", "12L 12P1 12P2 12P3", "four_of_a_month"),
    ],
)
def test_field_redeal(name: str, field: str, why: str) -> None:
    rules = get_rules(name)
    m = field_match(rules, field)
    redeals = [e for e in m.events if e.kind == "redeal"]
    assert redeals and redeals[0].data["why"] == f"field {why}"
    assert m.deals[0] == deck("", "", field)
    assert len(m.deals) >= 2
    assert m.round.field != cards(field)
    assert m.round.card_count() == 48


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("nintendo", "1L 1R 2A 2R 3L 3R 4A 4R"),  # four pairs: not a redeal in nintendo
        ("wikipedia", "1L 1R 1P1 1P2"),  # no field redeal at all
        ("nintendo", "1L 1R 1P1 2A"),  # three of a month
    ],
)
def test_field_without_redeal_is_played(name: str, field: str) -> None:
    m = field_match(no_instants(name), field)
    assert not [e for e in m.events if e.kind == "redeal"]
    assert len(m.deals) == 1
    assert m.round.field & cards(field) == cards(field)
    assert m.round.field == sum(1 << c for c in deck("", "", field)[16:24])


def test_three_of_a_month_field_redeal() -> None:
    rules = NINTENDO.replace(deal__field_redeal=("three_of_a_month",))
    m = field_match(rules, "1L 1R 1P1 2A")
    assert next(e.data["why"] for e in m.events if e.kind == "redeal") == "field three_of_a_month"


def test_redeal_dealer_swap() -> None:
    rules = NINTENDO.replace(deal__redeal_dealer="swap")
    m = field_match(rules, "1L 1R 1P1 1P2")
    assert m.events[0].data["dealer"] == 0
    starts = [
        e.data["dealer"] for e in m.events if e.kind == "round_start" and e.data["round"] == 1
    ]
    assert starts[:2] == [0, 1]  # the redeal passes the deal to the other player
    redeals = sum(1 for e in m.events if e.kind == "redeal")
    assert m.round.dealer == redeals % 2


def test_redeal_dealer_same() -> None:
    m = field_match(NINTENDO, "1L 1R 1P1 1P2")
    starts = [
        e.data["dealer"] for e in m.events if e.kind == "round_start" and e.data["round"] == 1
    ]
    assert len(starts) >= 2 and set(starts) == {0}


@pytest.mark.parametrize(
    ("order", "outcome"), [("hands_first", "instant"), ("field_first", "redeal")]
)
def test_check_order(order: str, outcome: str) -> None:
    rules = NINTENDO.replace(deal__check_order=order, game__rounds=1)
    d = deck(TESHI, "", "12L 12P1 12P2 12P3")
    m = rigged_match(rules, [d], seed=2)
    first_check = next(e for e in m.events if e.kind in ("instant", "redeal"))
    assert first_check.kind == outcome
    if outcome == "instant":
        assert m.settlements[0].reason == "instant"
        assert len(m.deals) == 1
    else:
        first = next(e for e in m.events if e.kind == "redeal")
        assert first.data["why"] == "field four_of_a_month"
        assert len(m.deals) >= 2


def test_compendium_checks_the_field_first() -> None:
    d = deck(TESHI, "", "12L 12P1 12P2 12P3")
    m = rigged_match("compendium", [d], seed=2)
    first = next(e for e in m.events if e.kind in ("redeal", "instant"))
    assert first.kind == "redeal"


def test_deals_record_every_shuffle() -> None:
    m = field_match(NINTENDO, "1L 1R 1P1 1P2")
    assert all(sorted(d) == list(range(48)) for d in m.deals)
    dealt = m.deals[-1]
    dealer = m.round.dealer
    assert m.round.hands[dealer] == sum(1 << c for c in dealt[0:8])
    assert m.round.hands[1 - dealer] == sum(1 << c for c in dealt[8:16])
    assert m.round.stock == dealt[24:]


# ---------------------------------------------------------------- match end


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_rounds_per_preset(name: str) -> None:
    rules = get_rules(name)
    m = play_random_match(rules, 11)
    if rules.game.start_points == 0:
        assert len(m.settlements) == rules.game.rounds
    else:
        assert len(m.settlements) <= rules.game.rounds
        if len(m.settlements) < rules.game.rounds:
            assert min(m.scores) <= 0
    assert m.is_over and m.phase is Phase.OVER and m.legal_ids() == []
    assert m.round_number == len(m.settlements)


def test_bust_ends_the_match() -> None:
    # koikoi-japan with no yaku: every round is exhausted, dealer +1, other -1.
    rules = only_yaku("koikoi-japan").replace(game__start_points=3)
    m = Match(rules, seed=5)
    dealer = m.dealer
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    assert len(m.settlements) == 3
    assert m.scores[dealer] == 6 and m.scores[1 - dealer] == 0
    assert m.winner == dealer
    assert sum(m.scores) == 6
    last = m.events[-1]
    assert last.kind == "match_over" and last.data["scores"] == m.scores


def test_no_bust_without_start_points() -> None:
    rules = only_yaku("nintendo").replace(end__exhausted="dealer_point", end__oya_ken=1)
    m = Match(rules.replace(game__rounds=4), seed=5)
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    assert len(m.settlements) == 4
    assert sorted(m.scores) == [0, 4]


@pytest.mark.parametrize(("tie", "expect_dealer"), [("draw", False), ("dealer", True)])
def test_match_tie(tie: str, expect_dealer: bool) -> None:
    rules = only_yaku("nintendo").replace(game__rounds=3, game__match_tie=tie)
    m = Match(rules, seed=8)
    while not m.is_over:
        last_dealer = m.round.dealer
        m.apply(m.legal_ids()[0])
    assert m.scores == [0, 0]
    assert m.winner == (last_dealer if expect_dealer else None)


def test_apply_after_the_match_is_over() -> None:
    m = Match(only_yaku("nintendo").replace(game__rounds=1), seed=1)
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    before = snapshot(m)
    with pytest.raises(IllegalActionError):
        m.apply(m.legal_ids()[0] if m.legal_ids() else 0)
    assert snapshot(m) == before
    assert m.legal_actions() == []


@pytest.mark.parametrize("steps", [0, 1, 5, 17])
def test_match_illegal_actions_change_nothing(steps: int) -> None:
    m = Match(get_rules("nintendo"), seed=4)
    chooser = random.Random(steps)
    for _ in range(steps):
        m.apply(chooser.choice(m.legal_ids()))
    legal_now = set(m.legal_ids())
    illegal = [i for i in range(0, NUM_ACTIONS, 7) if i not in legal_now]
    for move in illegal + NOT_ACTIONS:
        assert_rejected(m, move)
    for action_id in illegal[:20]:
        assert_rejected(m, action_from_id(action_id))


# ---------------------------------------------------------------- reproducibility


def test_seed_and_rng_give_the_same_match() -> None:
    rules = no_instants("nintendo")
    a = Match(rules, seed=42)
    b = Match(rules, rng=random.Random(42))
    c = Match(rules, seed=42)
    for m in (a, b, c):
        r = random.Random(0)
        while not m.is_over:
            m.apply(r.choice(sorted(m.legal_ids())))
    assert a.deals == b.deals == c.deals
    assert a.actions == b.actions == c.actions
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events]
    assert a.settlements == b.settlements and a.scores == b.scores


def test_match_without_events() -> None:
    rules = no_instants("nintendo")
    a = play_random_match(rules, 3, events=False)
    b = play_random_match(rules, 3)
    assert a.events == [] and a.round.events is None
    assert a.actions == b.actions and a.scores == b.scores


def test_match_legal_actions_and_current() -> None:
    m = Match(no_instants("nintendo"), seed=1)
    assert m.legal_actions() == [action_from_id(i) for i in m.legal_ids()]
    assert m.current == m.round.current == m.round.leader
    assert m.phase is m.round.phase is Phase.PLAY


def test_event_visibility() -> None:
    public = Event("play", 0, 1)
    private = Event("hand", 1, None, 3, private_to=1)
    nobody = Event("deal", None, None, 7, private_to=-1)
    assert public.visible_to(0) and public.visible_to(1) and public.visible_to(None)
    assert private.visible_to(1)
    assert not private.visible_to(0) and not private.visible_to(None)
    assert not any(nobody.visible_to(p) for p in (0, 1, None))
    assert public.to_dict() == {"type": "play", "player": 0, "card": "1R"}
    assert private.to_dict()["cards"] == ["1L", "1R"]


def test_hand_events_are_private_to_their_player() -> None:
    m = Match(no_instants("nintendo"), seed=6)
    hands = [e for e in m.events if e.kind == "hand"]
    assert len(hands) == 2 * len(m.deals)
    for e in hands:
        assert e.private_to == e.player
    last = hands[-2:]
    for e in last:
        assert e.player is not None
        assert e.cards == m.round.hands[e.player]


def test_set_decks_are_dealt_first_then_the_generator_shuffles() -> None:
    d = deck("1L 2A", "3L", "4A", "5A")
    m = Match(no_instants("nintendo"), seed=3, decks=[d])
    assert m.deals[0] == d
    dealer = m.round.dealer
    assert m.round.hands[dealer] == sum(1 << c for c in d[0:8])
    assert m.round.stock == d[24:]
    while m.round_number == 1:
        m.apply(m.legal_ids()[0])
    assert len(m.deals) >= 2 and sorted(m.deals[1]) == list(range(48))
    assert m.deals[1] != d


@pytest.mark.parametrize("bad", [[0] * 48, list(range(47)), [*range(47), 47, 0]])
def test_set_decks_must_hold_every_card_once(bad: list[int]) -> None:
    with pytest.raises(InvalidInputError):
        Match(get_rules("nintendo"), seed=1, decks=[bad])
