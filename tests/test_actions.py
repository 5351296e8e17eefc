"""Tests of actions: the fixed integer encoding and the text form."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    NUM_ACTIONS,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
    Discard,
    KoiKoi,
    Play,
    Stop,
    TakeDrawn,
    action_from_id,
    describe_action_id,
    parse_action,
)
from koikoi.game.cards import Card, parse_card
from koikoi.game.errors import InvalidInputError

ALL_IDS = range(NUM_ACTIONS)


def every_action() -> list[object]:
    """Every action value, built from the constructors (not from the ids)."""
    out: list[object] = [Play(c) for c in Card]
    out += [Play(c, t) for c in Card for t in Card]
    out += [Discard(c) for c in Card]
    out += [TakeDrawn(t) for t in Card]
    out += [KoiKoi(), Stop()]
    return out


def test_num_actions_counts_every_action() -> None:
    # 48 plays, 48 * 48 plays with a target, 48 discards, 48 takes, koi-koi, stop.
    assert NUM_ACTIONS == 48 + 48 * 48 + 48 + 48 + 2
    assert len(every_action()) == NUM_ACTIONS


def test_encoding_is_a_bijection() -> None:
    actions = every_action()
    ids = [a.id for a in actions]  # type: ignore[attr-defined]
    assert sorted(ids) == list(ALL_IDS)
    for action, action_id in zip(actions, ids, strict=True):
        assert action_from_id(action_id) == action
    assert [action_from_id(i).id for i in ALL_IDS] == list(ALL_IDS)


def test_encoding_ranges() -> None:
    assert Play(Card.PINE_CRANE).id == 0
    assert Play(Card.PAULOWNIA_PLAIN_3).id == 47
    assert Play(Card.PINE_CRANE, Card.PINE_CRANE).id == PLAY_TARGET_BASE
    assert Play(Card.PAULOWNIA_PLAIN_3, Card.PAULOWNIA_PLAIN_3).id == DISCARD_BASE - 1
    assert Discard(Card.PINE_CRANE).id == DISCARD_BASE
    assert TakeDrawn(Card.PINE_CRANE).id == TAKE_BASE
    assert TakeDrawn(Card.PAULOWNIA_PLAIN_3).id == KOIKOI_ID - 1
    assert KoiKoi().id == KOIKOI_ID
    assert Stop().id == STOP_ID == NUM_ACTIONS - 1
    assert Play(parse_card("11P"), parse_card("1L")).id == 48 + 48 * 43 + 0


@pytest.mark.parametrize("action_id", [-1, NUM_ACTIONS, NUM_ACTIONS + 100, 10**9])
def test_ids_out_of_range_raise(action_id: int) -> None:
    with pytest.raises(InvalidInputError) as info:
        action_from_id(action_id)
    assert str(action_id) in str(info.value)
    assert str(NUM_ACTIONS - 1) in str(info.value)


@pytest.mark.parametrize("bad", [True, 1.0, "3", None])
def test_non_integer_ids_raise(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        action_from_id(bad)  # type: ignore[arg-type]


def test_text_round_trip_over_every_id() -> None:
    for action_id in ALL_IDS:
        action = action_from_id(action_id)
        text = describe_action_id(action_id)
        assert text == str(action)
        assert parse_action(text) == action
        assert parse_action(text.upper()) == action
        assert parse_action(f"  {text}  ") == action


def test_text_forms() -> None:
    assert str(Play(parse_card("3L"))) == "play 3L"
    assert str(Play(parse_card("11P"), parse_card("1L"))) == "play 11P 1L"
    assert str(Discard(parse_card("9A"))) == "discard 9A"
    assert str(TakeDrawn(parse_card("2R"))) == "take 2R"
    assert str(KoiKoi()) == "koikoi"
    assert str(Stop()) == "stop"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("play crane", Play(Card.PINE_CRANE)),
        ("PLAY 3l 3p1", Play(Card.CHERRY_CURTAIN, Card.CHERRY_PLAIN_1)),
        ("play lightning rainman", Play(Card.WILLOW_LIGHTNING, Card.WILLOW_RAIN_MAN)),
        ("discard sake", Discard(Card.CHRYSANTHEMUM_SAKE_CUP)),
        ("take 12p3", TakeDrawn(Card.PAULOWNIA_PLAIN_3)),
        ("koi-koi", KoiKoi()),
        ("koi", KoiKoi()),
        ("Koikoi", KoiKoi()),
        ("shobu", Stop()),
        ("STOP", Stop()),
    ],
)
def test_parse_action_accepts(text: str, expected: object) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "play",
        "play 1L 1P1 1P2",
        "discard",
        "discard 1L 1P1",
        "take",
        "stop now",
        "koikoi 1L",
        "fly 1L",
    ],
)
def test_parse_action_rejects_with_usage(text: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_action(text)
    message = str(info.value)
    assert "play" in message and "stop" in message


@pytest.mark.parametrize("text", ["play 13L", "play 1L xx", "discard 0P", "take moonlight"])
def test_parse_action_bad_card_names_the_token(text: str) -> None:
    token = text.split()[-1] if "xx" in text or "moonlight" in text else text.split()[1]
    with pytest.raises(InvalidInputError) as info:
        parse_action(text)
    assert token.lower() in str(info.value).lower()


def test_actions_are_frozen_values() -> None:
    a = Play(Card.PINE_CRANE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.card = Card.PINE_RIBBON  # type: ignore[misc]
    assert Play(Card.PINE_CRANE) == a
    assert hash(Play(Card.PINE_CRANE)) == hash(a)
    assert Play(Card.PINE_CRANE) != Play(Card.PINE_CRANE, Card.PINE_PLAIN_1)
    assert Play(Card.PINE_CRANE) != Discard(Card.PINE_CRANE)
    assert eval(repr(a), {"Play": Play, "Card": Card}) == a


@given(st.integers(0, NUM_ACTIONS - 1))
def test_id_text_id(action_id: int) -> None:
    assert parse_action(describe_action_id(action_id)).id == action_id
