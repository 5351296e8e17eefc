"""The JSON Schema of koikoi records (koikoi/schemas/record.schema.json)."""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from koikoi.game.cards import CODES
from koikoi.game.engine import Match
from koikoi.game.record import GameRecord
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules
from koikoi.game.scoring import MULTIPLIER_NAMES, YAKU_NAMES
from koikoi.lab.guan import import_guan

jsonschema = pytest.importorskip("jsonschema")

FIXTURES = Path(__file__).resolve().parent / "data" / "guan"
CREATED = "2024-05-01T12:00:00Z"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    text = (resources.files("koikoi.game") / "schemas" / "record.schema.json").read_text(
        encoding="utf-8"
    )
    data: dict[str, Any] = json.loads(text)
    return data


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    return cls(schema)


def errors(validator: Any, data: Any) -> list[str]:
    return [e.message for e in validator.iter_errors(data)]


def played(rules: str, seed: int, actions: int | None = None) -> dict[str, Any]:
    m = Match(get_rules(rules), seed=seed)
    rng = random.Random(seed)
    while not m.is_over and (actions is None or len(m.actions) < actions):
        ids = m.legal_ids()
        m.apply(ids[int(rng.random() * len(ids))])
    data: dict[str, Any] = json.loads(
        GameRecord.from_match(m, players=["ann", "ben"], created=CREATED).to_json()
    )
    return data


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_engine_records_are_valid(validator: Any, rules: str) -> None:
    for seed in range(3):
        assert errors(validator, played(rules, seed)) == []
    unfinished = played(rules, 7, actions=25)
    assert unfinished["finished"] is False
    assert errors(validator, unfinished) == []


@pytest.mark.parametrize("name", ["1.json", "6.json", "8.json", "59.json", "201.json"])
def test_imported_guan_records_are_valid(validator: Any, name: str) -> None:
    data = json.loads(import_guan(FIXTURES / name, created=CREATED).to_json())
    assert errors(validator, data) == []


def test_a_record_before_settlements_carried_exhausted_is_valid(validator: Any) -> None:
    data = played("nintendo", 1)
    for s in data["settlements"]:
        del s["exhausted"]
    assert errors(validator, data) == []


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda d: d.pop("deals"), "'deals' is a required property"),
        (lambda d: d.update(format="other"), "'koikoi-record' was expected"),
        (lambda d: d.update(version=1), "2 was expected"),
        (lambda d: d.pop("identities"), "'identities' is a required property"),
        (lambda d: d["identities"][0].update(kind="robot"), "'robot' is not one of"),
        (lambda d: d["identities"].__setitem__(1, {"kind": "person"}), "'name' is a required"),
        (lambda d: d["deals"][0].pop(), "is too short"),
        (lambda d: d["deals"][0].__setitem__(1, d["deals"][0][0]), "non-unique elements"),
        (lambda d: d["deals"][0].__setitem__(0, "13L"), "'13L' is not one of"),
        (lambda d: d["actions"][0].update(action="plya 3L"), "does not match"),
        (lambda d: d["actions"][0].update(action="play 3L 2X"), "does not match"),
        (lambda d: d["actions"][0].update(player=2), "2 is not one of [0, 1]"),
        (lambda d: d["actions"][0].update(round=0), "0 is less than the minimum of 1"),
        (lambda d: d["settlements"][0].update(reason="luck"), "'luck' is not one of"),
        (lambda d: d.update(scores=[1, 2, 3]), "is too long"),
        (lambda d: d.update(winner=True), "True is not one of [0, 1, None]"),
        (lambda d: d.update(seed=-1), "is not valid under any of the given schemas"),
        (lambda d: d["rules"]["game"].pop("rounds"), "'rounds' is a required property"),
        (lambda d: d["rules"]["game"].update(rounds="8"), "'8' is not of type 'integer'"),
        (lambda d: d["first_dealer"].update(method="dice"), "'dice' is not one of"),
        (lambda d: d.update(extra=1), "Additional properties are not allowed"),
    ],
)
def test_the_schema_rejects(validator: Any, change: Any, complaint: str) -> None:
    data = played("nintendo", 2)
    assert errors(validator, data) == []
    change(data)
    found = errors(validator, data)
    assert any(complaint in e for e in found), found


def test_every_action_form_matches_the_pattern(validator: Any) -> None:
    data = played("nintendo", 3)
    for text in ("play 11P", "play 12P3 12L", "discard 1P1", "take 10A", "koikoi", "stop"):
        data["actions"][0]["action"] = text
        assert errors(validator, data) == [], text


def test_the_schema_follows_the_code(schema: dict[str, Any]) -> None:
    """Cards, yaku, multipliers and every rule option: the schema lists what koikoi writes."""
    defs = schema["$defs"]
    assert defs["card"]["enum"] == list(CODES)
    settlement = defs["settlement"]["properties"]
    assert settlement["yaku"]["items"]["properties"]["name"]["enum"] == list(YAKU_NAMES)
    assert settlement["multipliers"]["items"]["properties"]["name"]["enum"] == list(
        MULTIPLIER_NAMES
    )
    rules = Rules().to_dict()
    described = defs["rules"]["properties"]
    assert set(described) == set(rules)
    for section, options in rules.items():
        if isinstance(options, dict):
            assert described[section]["required"] == list(options), section
