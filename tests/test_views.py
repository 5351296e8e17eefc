"""Tests of player views and determinization (what a player may know)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from koikoi_testkit import cards, make_round, play, play_random_match

from koikoi.game.actions import action_from_id
from koikoi.game.cards import FULL_DECK, month_mask, parse_card
from koikoi.game.engine import Match, Phase, Round
from koikoi.game.rules import get_rules
from koikoi.game.views import PlayerView, determinize, view_of, view_of_round


def take_round() -> Round:
    """p0 has played 5P1 and drawn 2P1, which may take 2A or 2R."""
    rnd = make_round(
        hand0="5P1 6P1", hand1="7P1 8P1", field="2A 2R 3P1", stock="2P1 12P1", dealer=1, leader=0
    )
    play(rnd, "play 5P1")
    assert rnd.phase is Phase.TAKE
    return rnd


def test_player_view_of_a_round() -> None:
    rnd = take_round()
    v = view_of_round(rnd, 0)
    assert v.player == 0 and v.opponent == 1
    assert v.hand == cards("6P1")
    assert v.field == cards("2A 2R 3P1 5P1")
    assert v.piles == (0, 0)
    assert v.drawn == parse_card("2P1")
    assert v.hand_counts == (1, 2)
    assert v.stock_count == 48 - 1 - 2 - 4 - 1  # hand, other hand, field, drawn card
    assert v.opponent_hand_count == 2
    assert v.phase is Phase.TAKE and v.current == 0 and v.dealer == 1 and v.leader == 0
    assert v.is_my_turn
    assert sorted(v.legal_ids) == sorted(rnd.legal_ids())
    assert v.legal_actions == [action_from_id(i) for i in v.legal_ids]
    assert v.unseen == FULL_DECK & ~cards("6P1 2A 2R 3P1 5P1 2P1")
    assert v.unseen == rnd.hands[1] | sum(1 << c for c in rnd.stock)
    assert v.unseen.bit_count() == v.opponent_hand_count + v.stock_count
    assert v.rules is rnd.rules and v.rounds == 12
    assert v.round_scores == (0, 0) and v.koikoi_calls == (0, 0)


def test_the_other_player_gets_no_legal_ids() -> None:
    rnd = take_round()
    v = view_of_round(rnd, 1)
    assert v.hand == cards("7P1 8P1")
    assert v.legal_ids == () and not v.is_my_turn
    assert v.unseen == rnd.hands[0] | sum(1 << c for c in rnd.stock)
    assert v.unseen.bit_count() == v.opponent_hand_count + v.stock_count


def test_spectator_view() -> None:
    rnd = take_round()
    v = view_of_round(rnd, None)
    assert v.player is None
    assert v.hand == 0
    assert v.legal_ids == () and not v.is_my_turn
    assert v.hand_counts == (1, 2)
    # A spectator sees neither hand: both hands and the stock are unseen.
    assert v.unseen == rnd.hands[0] | rnd.hands[1] | sum(1 << c for c in rnd.stock)
    assert v.unseen.bit_count() == sum(v.hand_counts) + v.stock_count
    data = v.to_dict()
    assert data["player"] is None and data["hand"] == [] and data["legal"] == []
    with pytest.raises(ValueError):
        determinize(v, random.Random(0))


def test_to_dict() -> None:
    rnd = take_round()
    data = view_of_round(rnd, 0).to_dict()
    assert data["player"] == 0
    assert data["rules"] == "nintendo"
    assert data["round"] == 1 and data["rounds"] == 12 and data["month"] == 1
    assert data["phase"] == "take"
    assert data["hand"] == ["6P1"]
    assert data["field"] == ["2A", "2R", "3P1", "5P1"]
    assert data["piles"] == [[], []]
    assert data["hand_counts"] == [1, 2]
    assert data["drawn"] == "2P1"
    assert sorted(data["legal"], key=lambda d: d["id"]) == sorted(
        [{"id": i, "action": str(action_from_id(i))} for i in rnd.legal_ids()],
        key=lambda d: d["id"],
    )
    assert {d["action"] for d in data["legal"]} == {"take 2A", "take 2R"}
    text = repr(data)
    for code in ("7P1", "8P1", "12P1"):  # the opponent's hand and a stock card
        assert f"'{code}'" not in text


def test_view_of_a_match_legal_ids_only_for_the_current_player() -> None:
    m = Match(get_rules("nintendo"), seed=12)
    cur = m.current
    mine = view_of(m, cur)
    theirs = view_of(m, 1 - cur)
    spectator = view_of(m, None)
    assert list(mine.legal_ids) == m.legal_ids() and mine.is_my_turn
    assert theirs.legal_ids == () and spectator.legal_ids == ()
    assert mine.hand == m.round.hands[cur] and theirs.hand == m.round.hands[1 - cur]
    assert mine.match_scores == (0, 0) and mine.rounds == 12
    assert mine.opponent_hand_count == 8 and mine.stock_count == 24


def test_history_is_filtered_per_player() -> None:
    m = Match(get_rules("nintendo"), seed=12)
    for _ in range(3):
        m.apply(m.legal_ids()[0])
    for player in (0, 1):
        v = view_of(m, player)
        hands = [e for e in v.history if e.kind == "hand"]
        assert hands and all(e.player == player and e.private_to == player for e in hands)
        assert [e for e in m.events if e.visible_to(player)] == list(v.history)
    spectator = view_of(m, None)
    assert all(e.private_to is None for e in spectator.history)
    assert not [e for e in spectator.history if e.kind == "hand"]
    assert view_of(m, 0, with_history=False).history == ()


def test_view_of_a_finished_match() -> None:
    m = play_random_match("leaflet", 4)
    for player in (0, 1, None):
        v = view_of(m, player)
        assert v.is_over and v.phase is Phase.OVER and v.legal_ids == ()
        assert v.match_scores == tuple(m.scores)
        assert v.settlements == tuple(m.settlements)
        assert v.to_dict()["is_over"] is True


def test_view_is_frozen() -> None:
    v = view_of_round(take_round(), 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.hand = 0  # type: ignore[misc]
    assert isinstance(v, PlayerView)


def test_determinize_keeps_the_public_parts() -> None:
    rnd = take_round()
    v = view_of_round(rnd, 0)
    d = determinize(v, random.Random(1))
    assert d.card_count() == 48 and d.accounted() == FULL_DECK
    assert d.hands[0] == rnd.hands[0]
    assert d.hands[1].bit_count() == 2 and d.hands[1] & ~v.unseen == 0
    assert d.field == rnd.field and d.piles == rnd.piles and d.drawn == rnd.drawn
    assert d.phase is Phase.TAKE and d.current == 0
    assert d.dealer == 1 and d.leader == 0
    assert len(d.stock) == len(rnd.stock)
    assert sorted(d.legal_ids()) == sorted(rnd.legal_ids())
    assert d.events is None


def test_determinize_re_deals_the_unseen_cards() -> None:
    m = Match(get_rules("nintendo"), seed=5)
    v = view_of(m, m.current)
    opp = 1 - m.current
    hands = set()
    stocks = set()
    for seed in range(20):
        d = determinize(v, random.Random(seed))
        assert d.hands[opp] | sum(1 << c for c in d.stock) == v.unseen
        hands.add(d.hands[opp])
        stocks.add(tuple(d.stock))
    assert len(hands) > 10 and len(stocks) == 20
    # The same generator state gives the same deal.
    a = determinize(v, random.Random(3))
    b = determinize(v, random.Random(3))
    assert a.hands == b.hands and a.stock == b.stock


def test_determinize_shares_a_scorer() -> None:
    m = Match(get_rules("compendium"), seed=5)
    v = view_of(m, m.current)
    d = determinize(v, random.Random(0), scorer=m.scorer)
    assert d.scorer is m.scorer


def test_determinized_round_plays_to_the_end() -> None:
    m = Match(get_rules("wikipedia"), seed=9)
    rng = random.Random(2)
    for _ in range(7):
        m.apply(rng.choice(m.legal_ids()))
    v = view_of(m, m.current)
    d = determinize(v, rng)
    while not d.is_over:
        d.apply(rng.choice(d.legal_ids()))
    assert d.settlement is not None and d.card_count() == 48


def test_declined_months_follow_a_lay_from_the_hand() -> None:
    # p0 lays 5P1 (no May card on the field) while 2A, 2R and 3P1 lie there.
    rnd = make_round(
        hand0="5P1 6P1", hand1="7P1 8P1", field="2A 2R 3P1", stock="2P1 9P1 12P1", leader=0
    )
    play(rnd, "play 5P1")  # draws 2P1, which may take 2A or 2R
    feb, mar = month_mask(2), month_mask(3)
    assert rnd.declined == [feb | mar, 0]
    play(rnd, "take 2A")
    # p1 plays 7P1 onto an empty July: the field then held 3P1 and 5P1 (2R too).
    before = rnd.field
    assert before == cards("2R 3P1 5P1")
    play(rnd, "play 7P1")
    assert rnd.declined[1] == feb | mar | month_mask(5)
    # A card laid from the stock (9P1 drawn by p1) declines nothing.
    assert rnd.declined[0] == feb | mar
    clone = rnd.clone()
    assert clone.declined == rnd.declined and clone.declined is not rnd.declined
    for p in (0, 1, None):
        assert view_of_round(rnd, p).declined == (rnd.declined[0], rnd.declined[1])


def test_a_capture_declines_nothing() -> None:
    rnd = make_round(hand0="2P1 6P1", hand1="7P1 8P1", field="2A 3P1", stock="12P1", leader=0)
    play(rnd, "play 2P1")
    assert rnd.declined == [0, 0]


def _declined_view() -> PlayerView:
    """p0 to play; p1 is known to have laid a card over the whole of months 1-6."""
    m = Match(get_rules("nintendo"), seed=11)
    v = view_of(m, m.current)
    first_half = sum(1 << c for c in range(24))
    return dataclasses.replace(v, declined=(first_half, first_half))


def test_determinize_deals_the_declined_months_to_the_opponent_last() -> None:
    v = _declined_view()
    opp = v.opponent
    avoid = v.declined[opp] & v.unseen
    others = v.unseen & ~avoid
    assert others.bit_count() >= v.hand_counts[opp]  # enough other cards
    seen_in_stock = 0
    for seed in range(30):
        d = determinize(v, random.Random(seed), avoid=v.declined[opp], slack=0.0)
        assert d.hands[opp] & avoid == 0
        assert d.hands[opp].bit_count() == v.hand_counts[opp]
        assert d.hands[opp] | sum(1 << c for c in d.stock) == v.unseen
        assert d.card_count() == 48 and d.accounted() == FULL_DECK
        assert d.declined == list(v.declined)
        seen_in_stock |= sum(1 << c for c in d.stock[:5])
    # The stock is shuffled again: avoided cards are not all pushed to its bottom.
    assert seen_in_stock & avoid
    # With slack 1 the hint is ignored: the plain uniform re-deal, draw for draw.
    for seed in range(5):
        a = determinize(v, random.Random(seed), avoid=v.declined[opp], slack=1.0)
        rng = random.Random(seed)
        b = determinize(dataclasses.replace(v, declined=(0, 0)), rng)
        assert a.hands == b.hands and a.stock == b.stock


def test_determinize_fills_the_hand_from_declined_months_when_it_must() -> None:
    v = _declined_view()
    opp = v.opponent
    everything_but_two = v.unseen & ~(1 << 47) & ~(1 << 46)
    unseen_46_47 = v.unseen & ((1 << 47) | (1 << 46))
    d = determinize(v, random.Random(0), avoid=everything_but_two, slack=0.0)
    assert d.hands[opp] & unseen_46_47 == unseen_46_47
    assert d.hands[opp].bit_count() == v.hand_counts[opp]
