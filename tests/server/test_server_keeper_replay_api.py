"""POST /api/keeper (the match score keeper) and the replay endpoints' words and marks."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from starlette.testclient import TestClient

from koikoi.features.keeper import RoundEntry, ScoreSheet
from koikoi.features.narrate import Narrator
from koikoi.game.cards import parse_cards
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord, iter_steps
from koikoi.game.rules import get_rules

MATCH: dict[str, Any] = {
    "rules": "koikoi-japan",
    "rounds": 6,
    "first_dealer": "B",
    "names": ["Aiko", "Ben"],
    "played": [
        {"winner": "A", "cards": ["1L", "3L", "8L", "9A"], "koikoi": {"A": 1}},
        {"winner": "nobody"},
        {"winner": "B", "cards": ["1R", "2R", "3R"], "koikoi": {"A": 1, "B": 0}},
    ],
}


def _sheet(match: dict[str, Any]) -> ScoreSheet:
    """The same match kept by koikoi.features.keeper directly."""
    sheet = ScoreSheet(
        get_rules(match["rules"]),
        rounds=match["rounds"],
        first_dealer="AB".index(match["first_dealer"]),
        names=tuple(match["names"]),  # type: ignore[arg-type]
    )
    for r in match["played"]:
        if r["winner"] == "nobody":
            sheet = sheet.add(RoundEntry(None))
            continue
        calls = r.get("koikoi", {})
        sheet = sheet.add(
            RoundEntry(
                "AB".index(r["winner"]),
                parse_cards(" ".join(r["cards"])),
                (calls.get("A", 0), calls.get("B", 0)),
            )
        )
    return sheet


def test_the_keeper_scores_a_whole_match_as_koikoi_keeper_does(client: TestClient) -> None:
    r = client.post("/api/keeper", json=MATCH)
    assert r.status_code == 200, r.text
    data = r.json()
    sheet = _sheet(MATCH)
    assert data["sheet"] == sheet.to_dict()
    assert data["settlements"] == [row.settlement.to_dict() for row in sheet.played]
    assert data["needs_first_dealer"] is True
    dealer = sheet.dealer
    assert dealer is not None
    assert data["next"] == {"round": 4, "month": 4, "dealer": "AB"[dealer]}
    assert data["pending"] is None
    # The nobody round paid the dealer under these rules.
    assert data["settlements"][1]["reason"] in ("dealer_point", "oya_ken")


def test_the_round_being_entered_is_previewed(client: TestClient) -> None:
    pending = {"winner": "A", "cards": ["3L", "9A"], "koikoi": {"B": 1}}
    data = client.post("/api/keeper", json={**MATCH, "pending": pending}).json()
    sheet = _sheet(MATCH)
    expected = sheet.settle(RoundEntry(0, parse_cards("3L 9A"), (0, 1)))
    assert data["pending"]["settlement"] == expected.to_dict()
    assert data["pending"]["base"] == expected.base and data["pending"]["error"] is None
    no_yaku = {"winner": "B", "cards": ["1P1"]}
    data = client.post("/api/keeper", json={**MATCH, "pending": no_yaku}).json()
    assert data["pending"]["settlement"] is None and data["pending"]["base"] == 0
    assert "no yaku" in data["pending"]["error"]


def test_the_match_ends_by_the_rules(client: TestClient) -> None:
    short = {**MATCH, "rounds": 3}
    data = client.post("/api/keeper", json={**short, "pending": {"winner": "A"}}).json()
    sheet = _sheet(short)
    assert sheet.is_over and data["sheet"]["over"] and data["next"] is None
    leader = sheet.leader
    assert data["sheet"]["winner"] == (None if leader is None else "AB"[leader])
    assert data["pending"] is None
    more = {**short, "played": [*short["played"], {"winner": "nobody"}]}
    r = client.post("/api/keeper", json=more)
    assert (
        r.status_code == 400 and "round 4: the match is over after round 3" in r.json()["message"]
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rules": "poker"}, "unknown rules preset 'poker'"),
        ({"rounds": 0}, "rounds must be an integer from 1 to 120"),
        ({"names": ["Aiko", "aiko"]}, "need different names"),
        ({"names": ["Aiko"]}, "names must be two names"),
        ({"first_dealer": "C"}, 'first_dealer must be "A" or "B"'),
        ({"colour": "red"}, "has no field 'colour'"),
        ({"played": [{"winner": "C"}]}, 'round 1: winner must be "A", "B" or "nobody"'),
        ({"played": [{"winner": "A", "cards": ["1L", "zz"]}]}, "round 1: unknown card 'zz'"),
        ({"played": [{"winner": "A", "cards": "1L"}]}, "round 1: cards must be a list"),
        ({"played": [{"winner": "A", "cards": ["1P1"]}]}, "round 1: Aiko's cards score no yaku"),
        ({"played": [{"winner": "nobody", "cards": ["1L"]}]}, "round 1: nobody won"),
        (
            {"played": [{"winner": "A", "cards": ["1L", "3L", "8L"], "koikoi": {"A": -1}}]},
            "round 1: koikoi.A must be a count from 0 to 20",
        ),
        ({"played": [{"winner": "A", "koikoi": {"C": 1}}]}, 'round 1: koikoi must be "A" or "B"'),
        ({"first_dealer": None}, "say who deals round 1"),
        ({"pending": {"winner": "A", "cards": ["1L", "1L"]}}, "the new round"),
    ],
)
def test_bad_input_is_refused_clearly_and_changes_nothing(
    client: TestClient, change: dict[str, Any], message: str
) -> None:
    before = client.post("/api/keeper", json=MATCH).json()
    r = client.post("/api/keeper", json={**MATCH, **change})
    assert r.status_code == 400
    assert message in r.json()["message"], r.json()
    assert client.post("/api/keeper", json=MATCH).json() == before


# ------------------------------------------------------------------ replays


def _record() -> GameRecord:
    match = Match(get_rules("nintendo").replace(game__rounds=1), seed=4)
    rng = random.Random(4)
    while not match.is_over:
        match.apply(rng.choice(match.legal_ids()))
    return GameRecord.from_match(match, players=["Aiko", "Ben"])


def test_an_uploaded_replay_is_told_in_the_asked_language_with_its_marks(
    client: TestClient,
) -> None:
    record = _record()
    body = json.loads(record.to_json())
    steps = list(iter_steps(record))
    first = record.actions[0]
    analysis = {
        "decisions": [
            {"index": 1, "player": first.player, "played": first.action, "best": "stop", "loss": 2}
        ]
    }
    r = client.post("/api/replay?lang=ja", json={"record": body, "analysis": analysis})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["frames"][1]["narration"] == Narrator(("Aiko", "Ben"), "ja").step(steps[1])
    assert (
        data["frames"][1]["mistake"]["loss"] == 2 and "悪手" in data["frames"][1]["mistake"]["text"]
    )
    english = client.post("/api/replay", json=body).json()
    assert english["frames"][1]["narration"] == Narrator(("Aiko", "Ben"), "en").step(steps[1])
    assert not english["analysed"]


@pytest.mark.parametrize(
    ("query", "extra", "message"),
    [
        ("?lang=fr", {}, "lang must be one of en, ja"),
        ("", {"analysis": {"decisions": [{"index": 99}]}}, "index must be an action number"),
        ("", {"analysis": [1, 2]}, "koikoi analyze --json"),
    ],
)
def test_a_bad_replay_request_is_refused(
    client: TestClient, query: str, extra: dict[str, Any], message: str
) -> None:
    body = {"record": json.loads(_record().to_json()), **extra}
    r = client.post(f"/api/replay{query}", json=body)
    assert r.status_code == 400 and message in r.json()["message"], r.json()
