"""Positions: the text notation, exact round trips, and the validity checks."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from koikoi_testkit import position_state

from koikoi.game import positions
from koikoi.game.cards import CODES
from koikoi.game.engine import Match, Phase, Round
from koikoi.game.positions import PositionError, parse_position, position
from koikoi.game.rules import PRESET_NAMES, get_rules, load_rules_text
from koikoi.game.views import PlayerView, view_of


def _match_at(rules: str, seed: int, steps: int) -> Match:
    """A match played at random for up to ``steps`` actions, stopped mid-round."""
    m = Match(get_rules(rules), seed=seed, events=False)
    rng = random.Random(seed)
    for _ in range(steps):
        ids = m.legal_ids()
        if not ids:
            break
        m.apply_id(rng.choice(ids))
    return m


def _finish(rnd: Round, seed: int) -> tuple[object, ...]:
    rng = random.Random(seed)
    while not rnd.is_over:
        rnd.apply_id(rng.choice(rnd.legal_ids()))
    s = rnd.settlement
    assert s is not None
    return (s.winner, s.points, s.reason, s.deltas)


@settings(max_examples=150, deadline=None)
@given(
    rules=st.sampled_from(PRESET_NAMES),
    seed=st.integers(0, 10**6),
    steps=st.integers(0, 120),
)
def test_full_position_round_trip(rules: str, seed: int, steps: int) -> None:
    m = _match_at(rules, seed, steps)
    if m.is_over:
        return
    text = position(m)
    rnd = Round.from_position(text)
    assert position_state(rnd) == position_state(m.round)
    assert position(rnd, match_scores=(m.scores[0], m.scores[1])) == text
    assert rnd.legal_ids() == m.round.legal_ids()
    # The two rounds play on identically.
    assert _finish(rnd, seed) == _finish(m.round.clone(), seed)
    pos = parse_position(text)
    assert pos.match_scores == (m.scores[0], m.scores[1])
    assert pos.rounds == m.rules.game.rounds


@settings(max_examples=150, deadline=None)
@given(
    rules=st.sampled_from(PRESET_NAMES),
    seed=st.integers(0, 10**6),
    steps=st.integers(0, 120),
    player=st.sampled_from((0, 1)),
)
def test_view_position_round_trip(rules: str, seed: int, steps: int, player: int) -> None:
    m = _match_at(rules, seed, steps)
    if m.is_over:
        return
    text = position(m, player=player)
    view = PlayerView.from_position(text)
    real = view_of(m, player, with_history=False)
    assert position(view) == text
    assert position(real) == text
    for name in (
        "player",
        "round_number",
        "dealer",
        "leader",
        "current",
        "phase",
        "hand",
        "field",
        "piles",
        "hand_counts",
        "stock_count",
        "drawn",
        "round_scores",
        "koikoi_calls",
        "called_scores",
        "last_improver",
        "declined",
        "plays",
        "match_scores",
        "rounds",
        "legal_ids",
    ):
        assert getattr(view, name) == getattr(real, name), name
    # A full position gives the same view of either player.
    assert position(PlayerView.from_position(position(m), player=player)) == text
    assert parse_position(text).unseen == real.unseen


def test_view_hides_the_hidden_cards() -> None:
    m = _match_at("nintendo", 5, 7)
    for player in (0, 1):
        pos = parse_position(position(m, player=player))
        assert pos.stock is None
        assert pos.hands[1 - player] == 0
        shown = pos.hands[0] | pos.hands[1] | pos.field | pos.piles[0] | pos.piles[1]
        hidden = m.round.hands[1 - player] | sum(1 << c for c in m.round.stock)
        assert shown & hidden == 0
        assert pos.unseen == hidden


# ------------------------------------------------------------------ refusals

BASE = (
    "nintendo round=3/12 dealer=0 turn=0 phase=play "
    "hands=1L,1R,2A,2R,3R,4A,4R,5A/1P1,2P1,3P1,4P1,5P1,6P1,7P1,8P1 "
    "field=6A,7A,8A,9A,10A,11A,12L,12P1 "
    "stock=1P2,2P2,3L,3P2,4P2,5R,5P2,6R,6P2,7R,7P2,8L,8P2,"
    "9R,9P1,9P2,10R,10P1,10P2,11L,11R,11P,12P2,12P3 "
    "piles=-/- score=0/0 match=30/25"
)


def test_base_position_is_valid() -> None:
    pos = parse_position(BASE)
    rnd = Round.from_position(pos)
    assert rnd.month == 3 and rnd.stock[0] == 2 + 4 * 0 + 1  # 1P2 is card 3
    assert pos.match_scores == (30, 25)
    assert position(rnd, match_scores=(30, 25)) == BASE


def _swap(text: str, key: str, value: str | None) -> str:
    words = text.split()
    out = []
    for w in words:
        if w.startswith(key + "="):
            if value is not None:
                out.append(f"{key}={value}")
        else:
            out.append(w)
    if value is not None and not any(w.startswith(key + "=") for w in words):
        out.append(f"{key}={value}")
    return " ".join(out)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty position"),
        ("round=1/12", "starts with the rules' name"),
        ("no-such-rules " + BASE.split(" ", 1)[1], "unknown rules 'no-such-rules'"),
        (BASE + " colour=red", "unknown field 'colour'"),
        (BASE + " dealer=1", "given twice"),
        (_swap(BASE, "stock", None), "missing field: stock"),
        (_swap(BASE, "dealer", "2"), "a player is 0 or 1"),
        (_swap(BASE, "phase", "over"), "phase='over'"),
        (_swap(BASE, "round", "13/12"), "past the last"),
        (_swap(BASE, "field", "6A,7A,8A,9A,10A,11A,12L,1L"), "card 1L is in two places"),
        (_swap(BASE, "field", "6A,7A,8A,9A,10A,11A,12L"), "missing: 12P1"),
        (_swap(BASE, "field", "6A,7A,8A,9A,10A,11A,12L,12P1,XX"), "XX"),
        (_swap(BASE, "field", "6A,,7A"), "empty card code"),
        (_swap(BASE, "drawn", "12P1"), "card 12P1 is in two places"),
        (_swap(BASE, "phase", "take"), "the drawn card waiting for its target is missing"),
        (_swap(BASE, "score", "5/0"), "player 0's pile makes 0 points of yaku in month 3, not 5"),
        (_swap(BASE, "called", "3/0"), "has not called koi-koi"),
        (
            _swap(BASE, "hands", "1L,1R,2A,2R,3R,4A,4R/5A,1P1,2P1,3P1,4P1,5P1,6P1,7P1,8P1"),
            "holds 9",
        ),
        (_swap(BASE, "turn", "1"), "hand sizes 8/8 do not fit"),
        (_swap(BASE, "phase", "decide"), "phase decide: player 0 has no yaku"),
        (_swap(BASE, "match", "30"), "expected two parts"),
        (_swap(BASE, "declined", "13/-"), "month 13 is not 1 to 12"),
        (_swap(BASE, "view", "0"), "player 1's hand is a count"),
    ],
)
def test_refusals_name_the_problem(text: str, reason: str) -> None:
    with pytest.raises(PositionError) as info:
        parse_position(text)
    assert reason in str(info.value)


def _with_plays() -> str:
    """Player 0's view after three hand plays (0, 1, 0) of a real round."""
    m = _match_at("nintendo", 3, 0)
    rng = random.Random(3)
    while len(m.round.plays) < 3 or m.round.phase is not Phase.PLAY:
        m.apply_id(rng.choice(m.legal_ids()))
    return position(m, player=0)


def test_plays_field_round_trips_and_is_checked() -> None:
    text = _with_plays()
    plays = next(w for w in text.split() if w.startswith("plays=")).removeprefix("plays=")
    items = plays.split(",")
    assert [i.split(":")[0] for i in items] == ["0", "1", "0"]
    view = PlayerView.from_position(text)
    assert len(view.plays) == 3 and position(view) == text
    first = items[0].split(":")
    for bad, reason in (
        (",".join(items[:2]), "player 0 has played 2 hand cards, but 1 of their plays"),
        (",".join([items[1], items[0], items[2]]), "item 1 is player 1's, but player 0 plays it"),
        (",".join([items[0], items[1], items[0]]), f"card {first[1]} is played twice"),
        ("0:1L", "is not player:card:field"),
        ("2:1L:-," + ",".join(items[1:]), "a player is 0 or 1"),
        ("0:-:-," + ",".join(items[1:]), "plays one card, not 0"),
        ("0:1L+2L:-," + ",".join(items[1:]), "unknown card '1L+2L'"),
        (f"0:{first[1]}:{first[1]}," + ",".join(items[1:]), "which its field already holds"),
    ):
        with pytest.raises(PositionError) as info:
            parse_position(_swap(text, "plays", bad))
        assert reason in str(info.value), (bad, str(info.value))
    second, third = items[1].split(":"), items[2].split(":")
    early = f"1:{second[1]}:" + (third[1] if second[2] == "-" else f"{second[2]}+{third[1]}")
    with pytest.raises(PositionError, match=f"field holds {third[1]}, a card still in a hand"):
        parse_position(_swap(text, "plays", ",".join([items[0], early, items[2]])))
    # A field card of the first play that is now in the opponent's hand cannot be.
    hidden = parse_position(text).unseen
    stray = CODES[next(c for c in range(48) if hidden >> c & 1)]
    moved = f"0:{first[1]}:" + (stray if first[2] == "-" else f"{first[2]}+{stray}")
    with pytest.raises(PositionError, match="neither on the field nor in a pile"):
        parse_position(_swap(text, "plays", ",".join([moved, *items[1:]])))


def test_pile_checks() -> None:
    # Move 6A and 7A from the field to player 0's pile: 2 cards but of two months.
    text = _swap(_swap(BASE, "field", "8A,9A,10A,11A,12L,12P1"), "piles", "6A,7A/-")
    with pytest.raises(PositionError, match="1 card of month 6"):
        parse_position(text)
    text = _swap(_swap(BASE, "field", "7A,8A,9A,10A,11A,12L,12P1"), "piles", "6A/-")
    with pytest.raises(PositionError, match="pile holds 1 cards"):
        parse_position(text)


def test_stock_count_must_fit_the_hands() -> None:
    # One card moved from the stock to the field: 23 in the stock with 16 in hand.
    stock = BASE.split("stock=")[1].split()[0].split(",")
    text = _swap(
        _swap(BASE, "stock", ",".join(stock[1:])),
        "field",
        "6A,7A,8A,9A,10A,11A,12L,12P1," + stock[0],
    )
    with pytest.raises(PositionError, match="the stock holds 24 cards"):
        parse_position(text)


def _after_lay(drawn: str) -> str:
    """Player 0 has laid 5A on the field and drawn ``drawn`` from the stock."""
    stock = BASE.split("stock=")[1].split()[0].split(",")
    stock.remove(drawn)
    text = _swap(BASE, "stock", ",".join(stock))
    text = _swap(text, "hands", "1L,1R,2A,2R,3R,4A,4R/1P1,2P1,3P1,4P1,5P1,6P1,7P1,8P1")
    text = _swap(text, "field", "5A,6A,7A,8A,9A,10A,11A,12L,12P1")
    return _swap(
        _swap(_swap(text, "phase", "take"), "drawn", drawn), "declined", "6,7,8,9,10,11,12/-"
    )


def test_take_phase_needs_a_real_choice() -> None:
    rnd = Round.from_position(parse_position(_after_lay("12P2")))
    assert rnd.phase is Phase.TAKE
    assert sorted(rnd.legal_ids()) == [2400 + 44, 2400 + 45]  # take 12L or take 12P1
    # A drawn card with one match on the field has no choice to make.
    with pytest.raises(PositionError, match="6R has no choice of target"):
        parse_position(_after_lay("6R"))


def test_a_view_is_not_a_round() -> None:
    m = _match_at("nintendo", 2, 3)
    text = position(m, player=0)
    with pytest.raises(PositionError, match=r"use PlayerView\.from_position"):
        Round.from_position(text)
    with pytest.raises(PositionError, match="player 0's view"):
        PlayerView.from_position(text, player=1)
    rnd = positions.redeal(text, random.Random(1))
    assert rnd.hands[0] == m.round.hands[0]
    assert rnd.hands[1].bit_count() == m.round.hands[1].bit_count()


def test_house_rules_need_the_rules() -> None:
    house = load_rules_text('extends = "leaflet"\nname = "my-house"\n')
    m = Match(house, seed=3, events=False)
    text = position(m)
    assert text.startswith("my-house ")
    with pytest.raises(PositionError, match="for house rules, pass them"):
        parse_position(text)
    assert Round.from_position(text, rules=house).hands == m.round.hands
    with pytest.raises(PositionError, match="rules 'nintendo' were given"):
        parse_position(text, rules=get_rules("nintendo"))


def test_finished_round_has_no_position() -> None:
    m = Match(seed=1, events=False)
    rnd = m.round.clone()
    while not rnd.is_over:
        rnd.apply_id(rnd.legal_ids()[0])
    with pytest.raises(PositionError, match="the round is over"):
        position(rnd)


def test_decide_and_take_positions_from_play() -> None:
    """Every phase appears in random play and round-trips (not only phase play)."""
    seen: set[Phase] = set()
    for seed in range(60):
        m = Match(seed=seed, events=False)
        rng = random.Random(seed)
        while not m.is_over and m.round_number == 1:
            seen.add(m.phase)
            if m.phase is not Phase.OVER:
                text = position(m)
                assert position(Round.from_position(text), match_scores=tuple(m.scores)) == text
            m.apply_id(rng.choice(m.legal_ids()))
    assert {Phase.PLAY, Phase.TAKE, Phase.DECIDE} <= seen
