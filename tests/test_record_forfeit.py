"""Records of matches that ended by forfeit (a player's clock ran out)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError, RecordError
from koikoi.game.record import GameRecord, load_record, record_from_dict, replay
from koikoi.game.rules import get_rules

CREATED = "2024-05-01T12:00:00Z"


def unfinished(actions: int = 5) -> Match:
    m = Match(get_rules("nintendo"), seed=3)
    while len(m.actions) < actions:
        m.apply(m.legal_ids()[0])
    assert not m.is_over
    return m


def test_forfeit_round_trips_and_replays() -> None:
    m = unfinished()
    rec = GameRecord.from_match(
        m, players=["ann", "ben"], created=CREATED, forfeit={"player": 1, "reason": "time"}
    )
    assert rec.finished and rec.winner == 0
    data = json.loads(rec.to_json())
    assert data["forfeit"] == {"player": 1, "reason": "time"}
    again = load_record(rec.to_json())
    assert again.forfeit == {"player": 1, "reason": "time"}
    assert again.winner == 0 and again.finished
    assert again.to_json() == rec.to_json()
    replayed = replay(again)  # the actions replay; the match was still in play
    assert not replayed.is_over and list(replayed.scores) == again.scores


def test_record_without_forfeit_still_loads_and_writes_no_key() -> None:
    m = unfinished()
    data = json.loads(GameRecord.from_match(m, players=["ann", "ben"], created=CREATED).to_json())
    assert "forfeit" not in data
    assert record_from_dict(data).forfeit is None
    data["forfeit"] = None  # a null forfeit reads as none
    assert record_from_dict(data).forfeit is None


def test_forfeit_record_that_claims_the_wrong_winner_does_not_replay() -> None:
    m = unfinished()
    rec = GameRecord.from_match(
        m, players=["ann", "ben"], created=CREATED, forfeit={"player": 0, "reason": "time"}
    )
    data = json.loads(rec.to_json())
    data["winner"] = 0  # the one who forfeited
    with pytest.raises(RecordError, match="winner differs"):
        replay(record_from_dict(data))


@pytest.mark.parametrize(
    ("forfeit", "message"),
    [
        ("time", "forfeit must be an object"),
        ({"player": 2, "reason": "time"}, "forfeit player must be 0 or 1"),
        ({"player": True, "reason": "time"}, "forfeit player must be 0 or 1"),
        ({"player": 0, "reason": "boredom"}, "forfeit reason must be one of time"),
        ({"player": 0, "reason": "time", "when": 3}, "unknown key 'when'"),
    ],
)
def test_bad_forfeit_is_refused_naming_it(forfeit: Any, message: str) -> None:
    data = json.loads(GameRecord.from_match(unfinished(), created=CREATED).to_json())
    data["forfeit"] = forfeit
    data["finished"] = True
    with pytest.raises(RecordError, match=message):
        record_from_dict(data)


def test_forfeit_needs_a_finished_record() -> None:
    data = json.loads(GameRecord.from_match(unfinished(), created=CREATED).to_json())
    data["forfeit"] = {"player": 0, "reason": "time"}
    data["finished"] = False
    with pytest.raises(RecordError, match="must be finished"):
        record_from_dict(data)


def test_a_finished_match_cannot_be_forfeited() -> None:
    m = Match(get_rules("nintendo"), seed=3)
    while not m.is_over:
        m.apply(m.legal_ids()[0])
    with pytest.raises(InvalidInputError, match="over already"):
        GameRecord.from_match(m, forfeit={"player": 0, "reason": "time"})


def test_forfeit_record_is_valid_under_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    text = (resources.files("koikoi.game") / "schemas" / "record.schema.json").read_text(
        encoding="utf-8"
    )
    validator = jsonschema.Draft202012Validator(json.loads(text))
    rec = GameRecord.from_match(
        unfinished(), created=CREATED, forfeit={"player": 0, "reason": "time"}
    )
    assert list(validator.iter_errors(json.loads(rec.to_json()))) == []
    bad = json.loads(rec.to_json())
    bad["forfeit"] = {"player": 0, "reason": "boredom"}
    assert list(validator.iter_errors(bad))
