"""The yaku progress the web game's state message carries (``progress``).

It is the terminal game's logic (``koikoi.features.progress``) on the public capture
piles: the same for every seat and for spectators, unchanged when the hidden
cards are dealt otherwise, and naming no card.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from server_helpers import codes_in

from koikoi.features.progress import yaku_progress
from koikoi.game.cards import parse_cards
from koikoi.game.engine import Match
from koikoi.game.rules import get_rules
from koikoi.game.views import determinize, view_of, view_of_round
from koikoi.server.rooms import Room, SeatInfo, progress_of

NINTENDO = get_rules("nintendo")


def _room(seed: int, steps: int) -> Room:
    room = Room(
        "g1",
        mode="friend",
        rules=NINTENDO,
        seed=seed,
        seats=(SeatInfo("human"), SeatInfo("human")),
        watch_hash="",
    )
    rng = random.Random(seed)
    for _ in range(steps):
        if room.match.is_over:
            break
        room.apply(rng.choice(room.match.legal_ids()))
    return room


def _rows(progress: list[list[dict[str, Any]]], seat: int) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in progress[seat]}


@pytest.mark.parametrize(("seed", "steps"), [(3, 0), (3, 9), (11, 14), (40, 25)])
def test_every_seat_gets_the_progress_of_the_public_piles(seed: int, steps: int) -> None:
    room = _room(seed, steps)
    rnd = room.match.round
    states = [room.state(seat, 0) for seat in (0, 1, None)]
    # The same for both players and a spectator: nothing in it is private.
    assert states[0]["progress"] == states[1]["progress"] == states[2]["progress"]
    progress = states[0]["progress"]
    for p in (0, 1):
        expected = yaku_progress(NINTENDO, rnd.piles[p], rnd.piles[1 - p], month=rnd.month)
        assert [r["name"] for r in progress[p]] == [r.name for r in expected]
        for got, row in zip(progress[p], expected, strict=True):
            assert got["have"] == min(row.have, row.need)
            assert got["need"] == row.need
            assert got["points"] == row.points
            assert got["possible"] == row.possible
            assert got["done"] == (row.done and row.possible)
    json.dumps(states[0])  # JSON-ready


def test_progress_does_not_change_when_the_hidden_cards_are_dealt_otherwise() -> None:
    match = Match(NINTENDO, seed=8)
    rng = random.Random(8)
    for _ in range(10):
        match.apply(rng.choice(match.legal_ids()))
    for seat in (0, 1):
        view = view_of(match, seat)
        mine = progress_of(view)
        for k in range(5):
            other = view_of_round(determinize(view, random.Random(k)), seat)
            assert other.hand == view.hand
            assert progress_of(other) == mine


def test_progress_names_no_card() -> None:
    room = _room(5, 20)
    for seat in (0, 1, None):
        assert codes_in(room.state(seat, 0)["progress"]) == set()


def test_a_yaku_the_opponent_spoiled_is_no_longer_possible_and_a_made_one_is_done() -> None:
    view = view_of(Match(NINTENDO, seed=2), 0)
    # You: Crane, Curtain and two red poetry ribbons with the third (3R); Boar and Deer.
    # The opponent: the Moon (so no goko or shiko for you) and the Butterflies.
    mine = parse_cards("1L 3L 1R 2R 3R 7A 10A")
    theirs = parse_cards("8L 6A")
    view = dataclasses.replace(view, piles=(mine, theirs))
    rows = _rows(progress_of(view), 0)
    assert rows["goko"] == {
        "name": "goko",
        "have": 2,
        "need": 5,
        "points": 10,
        "possible": False,
        "done": False,
    }
    assert not rows["shiko"]["possible"]
    assert rows["sanko"]["possible"] and rows["sanko"]["have"] == 2
    assert rows["inoshikacho"]["have"] == 2 and not rows["inoshikacho"]["possible"]
    assert rows["akatan"]["done"] and rows["akatan"]["possible"]
    assert rows["tsukimi"]["possible"] is False  # the Moon is the opponent's
    # The opponent's own rows, from the same public piles: they can no longer make
    # akatan (you hold all three) or hanami (you hold the Curtain).
    theirs_rows = _rows(progress_of(view), 1)
    assert not theirs_rows["akatan"]["possible"]
    assert not theirs_rows["hanami"]["possible"]
    assert theirs_rows["tsukimi"]["have"] == 1 and theirs_rows["tsukimi"]["possible"]


def test_a_viewing_yaku_spoiled_by_its_own_pile_is_not_done() -> None:
    rules = NINTENDO.replace(yaku__viewing_spoiled_by=("11L",))
    view = dataclasses.replace(
        view_of(Match(rules, seed=2), 0), piles=(parse_cards("3L 9A 11L"), 0)
    )
    hanami = _rows(progress_of(view), 0)["hanami"]
    assert hanami["have"] == 2 and not hanami["done"] and not hanami["possible"]
