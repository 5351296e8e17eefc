"""Each preset's distinctive rules, played out (RULES.md §5 and its notes on the sources).

Expected figures come from RULES.md: the §5 points table, the §4 settlement
rules and the §6 worked examples.
"""

from __future__ import annotations

import random

import pytest
from koikoi_testkit import deck, make_round, only_yaku, play, play_random_match, rigged_match

from koikoi.game.engine import Match, Phase, Round
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules


def koikoi_round(rules: Rules | str) -> Round:
    """p0: hanami on turn 1, nothing on turn 2, tsukimi on turn 3 (its last card).

    Every play is legal under must_match too (p0 always plays a matching card
    when it holds one; p1 holds none).
    """
    return make_round(
        rules,
        hand0="3L 1P1 2P1",
        hand1="4P1 5P1 6P1",
        field="3P1 9P1 1P2 8P1",
        stock="9A 10P1 11P 12P1 8L 12P2",
    )


def beaten_koikoi_round(rules: Rules | str) -> Round:
    """p0 makes sanko (1L 8L + 12L) and calls koi-koi; p1 then completes 1R-5R."""
    rnd = make_round(
        rules,
        hand0="12L 6P1",
        hand1="3R 7P1",
        field="12P1 3P2 10P1",
        stock="11P 12P2 5P2",
        piles=("1L 8L", "1R 2R 4R 5R"),
    )
    play(rnd, "play 12L")
    assert rnd.phase is Phase.DECIDE
    play(rnd, "koikoi", "play 3R")
    assert rnd.phase is Phase.DECIDE and rnd.current == 1
    play(rnd, "stop")
    return rnd


# ---------------------------------------------------------------- nintendo


def test_nintendo_stop_after_opponent_koikoi_doubles_twice() -> None:
    # §6: base 7 after the opponent's koi-koi: 7 x 2 x 2 = 28; the caller scores 0.
    s = beaten_koikoi_round("nintendo").settlement
    assert s is not None
    assert s.winner == 1 and s.base == 7 and s.points == 28 and s.deltas == (0, 28)


def test_nintendo_stop_at_six_scores_six() -> None:
    # §6: a stop at base 6 with no koi-koi scores 6.
    rnd = make_round(
        "nintendo",
        hand0="4R 6P1",
        hand1="7P1 8P1",
        field="4P1",
        stock="12P1",
        piles=("1R 2R 3R", ""),
    )
    play(rnd, "play 4R")
    assert rnd.phase is Phase.DECIDE
    play(rnd, "stop")
    s = rnd.settlement
    assert s is not None and s.base == 6 and s.points == 6


def test_nintendo_draw_passes_the_deal() -> None:
    # §6: an exhausted round scores nobody and the dealer passes to the other player.
    rules = only_yaku("nintendo").replace(game__rounds=4)  # nintendo's match rules, no yaku
    m = rigged_match(rules)
    dealers = []
    while not m.is_over:
        dealers.append(m.round.dealer)
        start = m.round_number
        while m.round_number == start and not m.is_over:
            m.apply(m.legal_ids()[0])
    assert all(s.winner is None for s in m.settlements)
    assert dealers == [0, 1, 0, 1]
    assert m.winner is None  # match_tie draw


# ---------------------------------------------------------------- compendium


@pytest.mark.parametrize("dealer", [0, 1])
def test_compendium_oya_ken_six_when_nobody_has_a_yaku(dealer: int) -> None:
    rnd = make_round(
        "compendium",
        hand0="5P1",
        hand1="6P1",
        field="1P1",
        stock="12P1 12P2",
        dealer=dealer,
        leader=0,
    )
    play(rnd, "play 5P1", "play 6P1")
    s = rnd.settlement
    assert s is not None and s.winner == dealer and s.points == 6


def test_compendium_exhausted_round_goes_to_the_highest_score() -> None:
    rnd = make_round(
        "compendium",
        hand0="5P1",
        hand1="6P1",
        field="1P1",
        stock="12P1 12P2",
        dealer=1,
        leader=0,
        piles=("1L 3L 8L", "9A 8P1"),
    )
    # p0 holds sanko (6 in compendium), p1 nothing: p0 scores though p1 deals.
    play(rnd, "play 5P1", "play 6P1")
    s = rnd.settlement
    assert s is not None and s.winner == 0 and s.base == 6 and s.points == 6


def test_compendium_checks_the_field_before_the_hands() -> None:
    d = deck("1L 1R 1P1 1P2 2A 3L 4A 5A", "", "12L 12P1 12P2 12P3")
    m = rigged_match("compendium", [d], seed=3)
    first = next(e for e in m.events if e.kind in ("instant", "redeal"))
    assert first.kind == "redeal" and first.data["why"] == "field four_of_a_month"
    n = rigged_match("nintendo", [d], seed=3)
    first = next(e for e in n.events if e.kind in ("instant", "redeal"))
    assert first.kind == "instant"


# ---------------------------------------------------------------- wikipedia


def test_wikipedia_a_matching_card_may_be_discarded() -> None:
    rnd = make_round("wikipedia", hand0="9A 5P1", hand1="6P1 7P1", field="9P1 9P2", stock="12P1")
    actions = {str(a) for a in rnd.legal_actions()}
    assert actions == {"play 9A 9P1", "play 9A 9P2", "discard 9A", "play 5P1"}
    play(rnd, "discard 9A")
    assert rnd.piles == [0, 0]
    # The opponent may now take the Sake cup.
    assert "play 6P1" in {str(a) for a in rnd.legal_actions()}
    nintendo = make_round(
        "nintendo", hand0="9A 5P1", hand1="6P1 7P1", field="9P1 9P2", stock="12P1"
    )
    assert "discard 9A" not in {str(a) for a in nintendo.legal_actions()}


# ---------------------------------------------------------------- boardgame-blog


@pytest.mark.parametrize(("name", "decides"), [("boardgame-blog", False), ("nintendo", True)])
def test_boardgame_blog_has_no_kasu(name: str, decides: bool) -> None:
    rnd = make_round(
        name,
        hand0="5P1 6P1",
        hand1="7P1 8P1",
        field="5P2",
        stock="12P1",
        piles=("1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2", ""),
    )
    play(rnd, "play 5P1")  # the tenth Plain
    assert (rnd.phase is Phase.DECIDE) is decides
    assert rnd.scores[0] == (1 if decides else 0)


def test_boardgame_blog_random_first_dealer() -> None:
    m = Match(get_rules("boardgame-blog"), seed=1)
    assert m.events[0].data["method"] == "random"


# ---------------------------------------------------------------- modern-hanafuda


def test_modern_hanafuda_exclusive_counting_in_play() -> None:
    # §6: 6A 7A 10A 2A 4A is 5 here (inoshikacho; tane cannot reuse its cards), 7 in nintendo.
    for name, total in (("modern-hanafuda", 5), ("nintendo", 7)):
        rnd = make_round(
            name,
            hand0="6A 5P1",
            hand1="8P1 9P1",
            field="6P1",
            stock="12P1",
            piles=("7A 10A 2A 4A", ""),
        )
        assert rnd.scores[0] == 0
        play(rnd, "play 6A")
        assert rnd.scores[0] == total
        play(rnd, "stop")
        s = rnd.settlement
        assert s is not None and s.base == total


def test_modern_hanafuda_challenge_bonus_and_first_empty_hand() -> None:
    rnd = koikoi_round("modern-hanafuda")
    play(rnd, "play 3L")
    assert rnd.phase is Phase.DECIDE and rnd.scores[0] == 5
    play(rnd, "koikoi", "play 4P1", "play 1P1", "play 5P1")
    play(rnd, "play 2P1")  # its last card: tsukimi; the round ends, no decision
    assert rnd.phase is Phase.OVER
    s = rnd.settlement
    assert s is not None and s.winner == 0
    # hanami + tsukimi share the Sake cup: 10; x2 at 7+; x2 koi-koi then improved.
    assert s.base == 10 and s.points == 40
    assert rnd.hands[1]  # p1 still held a card


def test_modern_hanafuda_must_match() -> None:
    rnd = make_round(
        "modern-hanafuda", hand0="3L 1P1 2P1", hand1="4P1 5P1 6P1", field="3P1 1P2", stock="12P1"
    )
    assert {str(a) for a in rnd.legal_actions()} == {"play 3L", "play 1P1"}


@pytest.mark.parametrize("dealer", [0, 1])
def test_modern_hanafuda_dealer_gets_one_point_when_nobody_scores(dealer: int) -> None:
    rnd = make_round(
        "modern-hanafuda",
        hand0="5P1 8P1",
        hand1="6P1 7P1",
        field="1P1",
        stock="12P1 12P2 12P3",
        dealer=dealer,
        leader=1 - dealer,
    )
    leader_card = "6P1" if dealer == 0 else "5P1"
    other_card = "5P1" if dealer == 0 else "6P1"
    play(rnd, f"play {leader_card}", f"play {other_card}")
    assert not rnd.is_over
    play(rnd, f"play {'7P1' if dealer == 0 else '8P1'}")  # the leader's last card
    s = rnd.settlement
    assert s is not None and s.winner == dealer and s.points == 1 and s.reason == "oya_ken"


def test_modern_hanafuda_fixed_dealer_for_the_whole_match() -> None:
    for seed in range(5):
        m = play_random_match("modern-hanafuda", seed)
        first = m.events[0].data
        assert first["method"] == "draw" and first["dealer"] == 1 - first["leader"]
        starts = [e.data for e in m.events if e.kind == "round_start"]
        assert {s["dealer"] for s in starts} == {first["dealer"]}
        assert starts[0]["leader"] == first["leader"]


def test_modern_hanafuda_match_tie_goes_to_the_dealer() -> None:
    rules = only_yaku("modern-hanafuda").replace(end__oya_ken=0, game__rounds=2)
    m = rigged_match(rules)
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    assert m.scores == [0, 0]
    assert m.winner == 1  # player 0 won the draw and leads; player 1 deals


# ---------------------------------------------------------------- leaflet


def test_leaflet_has_no_multipliers() -> None:
    # Base 7 (akatan 6 + tanzaku 1) after the opponent's koi-koi: still 7, and
    # the beaten koi-koi caller scores nothing.
    s = beaten_koikoi_round("leaflet").settlement
    assert s is not None
    assert s.winner == 1 and s.base == 7 and s.points == 7
    assert s.multipliers == () and s.deltas == (0, 7)


def test_leaflet_no_viewing_yaku() -> None:
    rnd = koikoi_round("leaflet")
    play(rnd, "play 3L")  # 3L + 9A: no hanami in leaflet
    assert rnd.scores[0] == 0 and rnd.phase is Phase.PLAY


def test_leaflet_draw_swaps_the_dealer_and_six_rounds() -> None:
    rules = only_yaku("leaflet").replace(deal__field_redeal=())  # no redeal swaps
    m = rigged_match(rules, coins=[0.1])
    dealers = []
    while not m.is_over:
        dealers.append(m.round.dealer)
        start = m.round_number
        while m.round_number == start and not m.is_over:
            m.apply(m.legal_ids()[0])
    assert len(m.settlements) == 6
    assert all(dealers[i + 1] != dealers[i] for i in range(5))


# ---------------------------------------------------------------- koikoi-japan


def test_koikoi_japan_ladder_bonus_and_automatic_stop_on_the_last_card() -> None:
    rnd = koikoi_round("koikoi-japan")
    play(rnd, "play 3L")
    assert rnd.scores[0] == 1  # hanami: 1
    play(rnd, "koikoi")
    assert rnd.scores[0] == 3  # 3 after koi-koi
    play(rnd, "play 4P1", "play 1P1", "play 5P1", "play 2P1")  # last card: tsukimi
    assert rnd.phase is Phase.OVER
    assert rnd.events is not None
    assert next(e for e in rnd.events if e.kind == "stop").data["automatic"] is True
    s = rnd.settlement
    assert s is not None and s.winner == 0
    assert s.base == 6  # hanami 3 + tsukimi 3; no 7+ doubling in koikoi-japan
    assert s.points == 7  # ladder: one koi-koi adds 1
    assert s.deltas == (7, -7)  # zero-sum


def test_koikoi_japan_bust_at_zero() -> None:
    # Every round exhausted (no yaku): dealer +1, other -1; 30 points last 30 rounds,
    # so use 8 rounds from 5 points: the other player is at 0 after 5.
    rules = only_yaku("koikoi-japan").replace(game__start_points=5)
    m = rigged_match(rules, coins=[0.1])
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    assert len(m.settlements) == 5
    assert sorted(m.scores) == [0, 10]


def test_koikoi_japan_matches_are_zero_sum() -> None:
    for seed in range(5):
        m = play_random_match("koikoi-japan", seed)
        assert sum(m.scores) == 60
        assert len(m.settlements) <= 8


# ---------------------------------------------------------------- every preset


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_preset_rounds_in_a_match(name: str) -> None:
    rules = get_rules(name)
    m = play_random_match(name, 21)
    expected = rules.game.rounds
    assert len(m.settlements) == expected or (rules.game.start_points and min(m.scores) <= 0)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_preset_first_dealer_method(name: str) -> None:
    rules = get_rules(name)
    m = Match(rules, rng=random.Random(0))
    assert m.events[0].data["method"] == rules.game.first_dealer
