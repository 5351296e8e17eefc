"""The replay page's frames (issue #13): every event names its round, whatever ends it."""

from __future__ import annotations

import random

from koikoi.game.engine import Match
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules
from koikoi.server.records import replay_frames

INSTANT_SEED = 246
"""A one-round nintendo match that ends at the deal with an instant hand."""


def _random_match(seed: int, rounds: int) -> Match:
    match = Match(get_rules("nintendo").replace(game__rounds=rounds), seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_ids()))
    return match


def test_every_replayed_event_is_tagged_with_its_round() -> None:
    match = _random_match(7, rounds=3)
    data = replay_frames(GameRecord.from_match(match, players=["a", "b"]))
    overs = [e for f in data["frames"] for e in f["events"] if e["type"] == "round_over"]
    assert [e["round"] for e in overs] == [1, 2, 3]
    for frame in data["frames"]:
        for event in frame["events"]:
            assert isinstance(event["round"], int) and event["round"] >= 1, event


def test_an_instant_hand_round_is_tagged_too() -> None:
    match = Match(get_rules("nintendo").replace(game__rounds=1), seed=INSTANT_SEED)
    assert match.is_over and not match.actions
    data = replay_frames(GameRecord.from_match(match, players=["a", "b"]))
    assert len(data["frames"]) == 1
    events = data["frames"][0]["events"]
    assert [e["type"] for e in events if e["type"] in ("instant", "round_over")] == [
        "instant",
        "round_over",
    ]
    assert all(e["round"] == 1 for e in events)
