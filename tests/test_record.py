"""Tests of game records: round trip, replay, step-through and tampering (koikoi.game.record)."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from koikoi.game.cards import CODES
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError, RecordError
from koikoi.game.record import (
    FORMAT,
    VERSION,
    GameRecord,
    RecordedAction,
    iter_steps,
    load_record,
    record_from_dict,
    replay,
)
from koikoi.game.rules import PRESET_NAMES, get_rules

CREATED = "2024-05-01T12:00:00Z"


def random_match(rules: str, seed: int, *, events: bool = True) -> Match:
    """A whole match of random legal actions (checked), from a seed."""
    m = Match(get_rules(rules), seed=seed, events=events)
    rng = random.Random(seed + 1000)
    while not m.is_over:
        ids = m.legal_ids()
        assert ids, f"match not over but no legal action in round {m.round_number}"
        m.apply(ids[int(rng.random() * len(ids))])
    return m


def record_of(rules: str = "nintendo", seed: int = 4, **kwargs: Any) -> GameRecord:
    return GameRecord.from_match(
        random_match(rules, seed, **kwargs), players=["alice", "bob"], created=CREATED
    )


def as_data(record: GameRecord) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(record.to_json())
    return data


def reload(data: dict[str, Any]) -> GameRecord:
    return load_record(json.dumps(data))


def replay_error(data: dict[str, Any], **kwargs: Any) -> str:
    """The RecordError message of replaying ``data``; it must be one line."""
    with pytest.raises(RecordError) as info:
        replay(reload(data), **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------- round trip


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_round_trip_replays_identically(rules: str, tmp_path: Path) -> None:
    for seed in (1, 2, 3):
        match = random_match(rules, seed)
        record = GameRecord.from_match(match, players=["alice", "bob"], created=CREATED)
        path = record.save(tmp_path / f"{rules}-{seed}.json")
        loaded = load_record(path)
        assert loaded == record
        again = replay(loaded)
        assert again.scores == match.scores
        assert again.winner == match.winner
        assert again.deals == match.deals
        assert again.actions == match.actions
        assert [s.to_dict() for s in again.settlements] == record.settlements
        # Recording the replayed match gives the very same document.
        rerecorded = GameRecord.from_match(
            again, players=["alice", "bob"], meta=record.meta, created=CREATED
        )
        assert rerecorded.to_json() == record.to_json()


def test_record_holds_every_documented_key() -> None:
    record = record_of("koikoi-japan", 7)
    data = as_data(record)
    assert list(data) == [
        "format",
        "version",
        "rules",
        "seed",
        "players",
        "identities",
        "first_dealer",
        "deals",
        "actions",
        "settlements",
        "scores",
        "winner",
        "finished",
        "created",
        "meta",
    ]
    assert data["format"] == FORMAT == "koikoi-record"
    assert data["version"] == VERSION == 2
    assert data["rules"] == get_rules("koikoi-japan").to_dict()
    assert data["seed"] == 7
    assert data["players"] == ["alice", "bob"]
    assert data["created"] == CREATED
    assert data["meta"]["koikoi"]
    assert data["finished"] is True
    assert set(data["first_dealer"]) == {"method", "winner", "draws", "dealer", "leader"}
    for deck in data["deals"]:
        assert sorted(deck, key=CODES.index) == list(CODES)
    first = data["actions"][0]
    assert set(first) == {"round", "player", "action"}
    assert first["round"] == 1
    assert re.fullmatch(r"play \w+( \w+)?", first["action"])
    assert (
        len(data["settlements"]) == get_rules("koikoi-japan").game.rounds
        or min(data["scores"]) <= 0
    )  # a bust ends a zero-sum match early
    assert data["scores"] == [sum(s["deltas"][p] for s in data["settlements"]) + 30 for p in (0, 1)]


def test_actions_carry_round_and_player() -> None:
    match = random_match("nintendo", 9)
    record = GameRecord.from_match(match)
    assert [a.action for a in record.actions] == [match.describe(i) for i in match.actions]
    rounds = [a.round for a in record.actions]
    assert rounds == sorted(rounds)
    assert rounds[-1] == len(match.settlements) or rounds[-1] < len(match.settlements)
    # Koi-koi and stop decisions are recorded with the player who made them.
    decisions = [a for a in record.actions if a.action in ("koikoi", "stop")]
    assert decisions
    stops = [e.player for e in match.events if e.kind == "stop" and not e.data["automatic"]]
    assert [a.player for a in decisions if a.action == "stop"] == stops


def test_default_players_and_created_time() -> None:
    record = GameRecord.from_match(random_match("leaflet", 1))
    assert record.players == ["player 0", "player 1"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record.created)


def test_bad_player_names_are_refused() -> None:
    match = Match(seed=1)
    with pytest.raises(InvalidInputError, match="two non-empty names"):
        GameRecord.from_match(match, players=["solo"])


def test_match_without_events_can_be_recorded() -> None:
    for rules in ("nintendo", "leaflet"):  # a first-dealer draw, and a coin flip
        with_events = random_match(rules, 5)
        without = random_match(rules, 5, events=False)
        a = GameRecord.from_match(with_events, created=CREATED)
        b = GameRecord.from_match(without, created=CREATED)
        assert a == b
        assert replay(b).scores == without.scores


def test_match_with_injected_rng_replays_from_the_recorded_deals() -> None:
    match = Match(get_rules("wikipedia"), rng=random.Random(99))
    while not match.is_over:
        match.apply(match.legal_ids()[-1])
    record = load_record(GameRecord.from_match(match).to_json())
    assert record.seed is None
    assert replay(record).scores == match.scores


def test_match_refuses_both_a_seed_and_an_rng() -> None:
    with pytest.raises(InvalidInputError, match="either seed or rng"):
        Match(get_rules("nintendo"), seed=1, rng=random.Random(2))


def test_unfinished_match_records_and_replays() -> None:
    match = Match(get_rules("nintendo"), seed=3)
    for _ in range(30):
        match.apply(match.legal_ids()[0])
    record = load_record(GameRecord.from_match(match).to_json())
    assert record.finished is False
    again = replay(record)
    assert not again.is_over
    assert again.round_number == match.round_number
    assert again.current == match.current


def test_json_text_keeps_each_action_on_one_line() -> None:
    text = record_of().to_json()
    assert text.endswith("}\n")
    lines = text.splitlines()
    assert any(
        re.fullmatch(r'\s+\{"round": 1, "player": [01], "action": "play .*"\},?', ln)
        for ln in lines
    )
    assert json.loads(text)["format"] == FORMAT


def test_replay_does_not_need_the_random_generator_with_seed_check_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = record_of("compendium", 12)

    # A Python whose generator gives other numbers (a platform change).
    original = random.Random.random

    def other_random(self: random.Random) -> float:
        return (original(self) + 0.5) % 1.0

    monkeypatch.setattr(random.Random, "random", other_random)
    with pytest.raises(RecordError, match="differs from the seed's"):
        replay(record)
    assert replay(record, check_seed=False).scores == record.scores


# ---------------------------------------------------------------- steps


def test_steps_walk_the_whole_match() -> None:
    record = record_of("nintendo", 21)
    match = replay(record)
    steps = list(iter_steps(record))
    assert [s.index for s in steps] == list(range(len(steps)))
    actions = [s for s in steps if s.kind == "action"]
    assert [s.action for s in actions] == record.actions
    assert steps[0].kind == "deal" and steps[0].action is None
    # Every event appears in exactly one step, in order.
    assert [e for s in steps for e in s.events] == match.events
    assert steps[-1].is_over and steps[-1].winner == match.winner
    assert steps[-1].match_scores == tuple(match.scores)
    assert not any(s.is_over for s in steps[:-1])
    # Deal steps: a fresh round, eight cards in each hand, nothing captured.
    for s in steps:
        if s.kind == "deal" and not s.round.is_over:
            assert s.round.hands[0].bit_count() == s.round.hands[1].bit_count() == 8
            assert s.round.piles == [0, 0]


def test_round_ending_step_shows_the_finished_round() -> None:
    record = record_of("nintendo", 21)
    steps = list(iter_steps(record))
    ends = [s for s in steps if s.kind == "action" and s.round.is_over]
    assert ends
    for s in ends:
        k = s.round.round_number
        assert s.round.settlement is not None
        assert s.round.settlement.to_dict() == record.settlements[k - 1]
        assert len(s.settlements) == k
        assert s.events[-1].kind in ("round_over", "match_over")


def test_steps_are_independent_copies() -> None:
    steps = list(iter_steps(record_of("leaflet", 2)))
    first = steps[1].round
    hands = list(first.hands)
    assert steps[2].round is not first
    # Going back to an earlier step shows it as it was.
    assert steps[1].round.hands == hands
    assert sum(h.bit_count() for h in steps[1].round.hands) > sum(
        h.bit_count() for h in steps[-1].round.hands
    )


def test_step_view_hides_the_other_hand() -> None:
    steps = list(iter_steps(record_of("nintendo", 8)))
    step = steps[3]
    for player in (0, 1):
        view = step.view(player)
        assert view.hand == step.round.hands[player]
        assert all(e.visible_to(player) for e in view.history)
        assert not any(e.kind == "hand" and e.player == 1 - player for e in view.history)
    spectator = step.view()
    assert spectator.hand == 0
    assert not any(e.kind == "hand" for e in spectator.history)


def test_steps_stop_where_a_record_diverges() -> None:
    data = as_data(record_of("nintendo", 4))
    data["actions"][5]["action"] = "koikoi"
    steps = []
    with pytest.raises(RecordError, match=r"action 6 'koikoi'"):
        for step in iter_steps(reload(data)):
            steps.append(step)
    assert len([s for s in steps if s.kind == "action"]) == 5


# ---------------------------------------------------------------- tampering


def test_changed_action_is_reported_with_round_and_position() -> None:
    data = as_data(record_of("nintendo", 4))
    actions = data["actions"]
    played = actions[0]["action"].split()[1]  # gone from the hand after action 1
    i = next(
        i
        for i, a in enumerate(actions)
        if i > 10 and a["round"] == 1 and a["action"].startswith("play ")
    )
    actions[i]["action"] = f"play {played}"
    message = replay_error(data)
    assert message.startswith(f"round 1, action {i + 1} 'play {played}': 'play {played}' is not")
    assert f"not legal for player {actions[i]['player']} in phase play; legal: play " in message


def test_action_for_the_wrong_player_is_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    data["actions"][3]["player"] = 1 - data["actions"][3]["player"]
    message = replay_error(data)
    assert "action 4" in message and "is to act" in message


def test_unreadable_action_text_is_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    data["actions"][0]["action"] = "plya 3L"
    message = replay_error(data)
    assert message.startswith("round 1, action 1 'plya 3L': cannot read action")


def test_changed_deal_is_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    deck = data["deals"][1]
    deck[0], deck[30] = deck[30], deck[0]
    assert replay_error(data) == (
        "deal 2 differs from the seed's (seed 4): the record was altered, or this Python's "
        "random generator differs; replay without the seed check to use the recorded deals"
    )


def test_changed_deal_without_seed_check_breaks_the_actions() -> None:
    data = as_data(record_of("nintendo", 4))
    first = data["actions"][0]
    assert first["round"] == 1
    card = first["action"].split()[1]
    deck = data["deals"][0]
    assert card in deck[:16]  # in the leader's hand; move it to the other hand
    i = deck.index(card)
    j = 12 if i < 8 else 4
    deck[i], deck[j] = deck[j], deck[i]
    message = replay_error(data, check_seed=False)
    assert message.startswith(f"round 1, action 1 '{first['action']}': ")


def test_changed_seed_is_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    data["seed"] = 5
    assert "differs from the seed's (seed 5)" in replay_error(data)


def test_changed_settlement_is_reported() -> None:
    record = record_of("nintendo", 4)
    data = as_data(record)
    k, settled = next((i, s) for i, s in enumerate(data["settlements"]) if s["winner"] is not None)
    real = settled["points"]
    settled["points"] = real + 1
    assert replay_error(data) == (
        f"round {k + 1} settlement differs: recorded {real + 1} points for "
        f"{record.player_name(settled['winner'])}, replay gives {real}"
    )


def test_changed_settlement_winner_is_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    settled = data["settlements"][0]
    real = settled["winner"]
    settled["winner"] = 1 if real == 0 else 0
    message = replay_error(data)
    assert message.startswith("round 1 settlement differs: recorded winner player")


def test_changed_scores_and_winner_are_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    data["scores"][0] += 1
    assert replay_error(data).startswith("final scores differ: recorded")
    data = as_data(record_of("nintendo", 4))
    data["winner"] = None if data["winner"] is not None else 0
    assert replay_error(data).startswith("winner differs: recorded")


def test_changed_rules_are_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    data["rules"]["koikoi"]["seven_double"] = False
    data["rules"]["points"]["kasu"] = 3
    message = replay_error(data)
    assert "differs" in message


def test_incomplete_or_invalid_rules_are_reported() -> None:
    data = as_data(record_of())
    del data["rules"]["game"]["rounds"]
    assert replay_error(data) == "record rules are incomplete: missing game.rounds"
    data = as_data(record_of())
    data["rules"]["game"]["rounds"] = 0
    assert "game.rounds = 0 is out of range" in replay_error(data)
    data = as_data(record_of())
    del data["rules"]["yaku"]
    with pytest.raises(RecordError, match="rules are incomplete: missing yaku"):
        reload(data)


def test_truncated_and_padded_records_are_reported() -> None:
    data = as_data(record_of())
    data["actions"].pop()
    assert "the match is not over" in replay_error(data)
    data = as_data(record_of())
    data["actions"].append({"round": 12, "player": 0, "action": "stop"})
    assert "the match is already over" in replay_error(data)
    data = as_data(record_of())
    data["deals"].append(list(CODES))
    assert replay_error(data) == (
        f"the record has {len(data['deals'])} deals but the replay uses {len(data['deals']) - 1}"
    )


def test_first_dealer_changes_are_reported() -> None:
    data = as_data(record_of("nintendo", 4))
    data["first_dealer"]["dealer"] = 1 - data["first_dealer"]["dealer"]
    assert replay_error(data).startswith("first dealer differs: recorded dealer")
    data = as_data(record_of("nintendo", 4))
    data["first_dealer"]["draws"] = [["1L", "2A"]]
    assert "the first dealer differs from the seed's" in replay_error(data)


def test_unsupported_version_is_refused() -> None:
    data = as_data(record_of())
    data["version"] = 7
    with pytest.raises(RecordError) as info:
        reload(data)
    assert str(info.value) == "unsupported record version 7: this koikoi reads versions 1, 2"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("deals"), "record: missing key 'deals'"),
        (lambda d: d.pop("format"), "not a koikoi record: missing key 'format'"),
        (lambda d: d.update(format="chess-pgn"), "format is 'chess-pgn'"),
        (lambda d: d.update(version="1"), "version must be an integer"),
        (lambda d: d.update(players=["solo"]), "players must be two non-empty names"),
        (lambda d: d.update(seed=-1), "seed must be a non-negative integer or null"),
        (lambda d: d.update(winner=2), "winner must be 0, 1 or null"),
        (lambda d: d.update(scores=[1]), "scores must be two integers"),
        (lambda d: d["deals"][0].pop(), "deal 1 is not a shuffled deck: 47 cards"),
        (lambda d: d["deals"][0].__setitem__(0, "13L"), "deal 1: unknown card '13L'"),
        (lambda d: d["actions"][2].pop("player"), "action 3 is missing key 'player'"),
        (lambda d: d["actions"][2].update(round=0), "action 3: round must be a positive"),
        (lambda d: d["first_dealer"].pop("winner"), "missing key 'first_dealer.winner'"),
        (lambda d: d.update(meta=[]), "meta must be an object"),
    ],
)
def test_malformed_records_name_the_key(change: Any, message: str) -> None:
    data = as_data(record_of())
    change(data)
    with pytest.raises(RecordError) as info:
        reload(data)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_garbage_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"not valid JSON: .* at line 1 column"):
        load_record('{"format": "koikoi-record", ')
    with pytest.raises(RecordError, match="expected a JSON object"):
        record_from_dict([1, 2, 3])
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe garbage")
    with pytest.raises(RecordError, match="is not UTF-8 text"):
        load_record(bad)
    with pytest.raises(RecordError, match=r"cannot read record .*missing\.json"):
        load_record(tmp_path / "missing.json")
    with pytest.raises(RecordError, match="cannot write record"):
        record_of().save(tmp_path / "no" / "such" / "dir.json")


def test_record_is_a_plain_editable_dataclass() -> None:
    record = record_of()
    tampered = copy.deepcopy(record)
    tampered.actions[0] = RecordedAction(1, tampered.actions[0].player, "stop")
    with pytest.raises(RecordError, match="round 1, action 1 'stop'"):
        replay(tampered)
    assert replay(record).scores == record.scores


# ------------------------------------------------------------------ identities


def test_identities_are_stored_and_read_back() -> None:
    from koikoi.game.record import Identity

    who = [Identity.you(), Identity.ai("level:2", "Novice")]
    record = GameRecord.from_match(random_match("nintendo", 4), identities=who, created=CREATED)
    data = as_data(record)
    assert data["players"] == ["You", "AI (Novice)"]
    assert data["identities"] == [
        {"kind": "you"},
        {"kind": "ai", "name": "Novice", "agent": "level:2"},
    ]
    assert reload(data).identities == who


def test_a_version_1_record_still_loads_with_identities_from_its_names() -> None:
    from koikoi.game.record import Identity

    data = as_data(
        GameRecord.from_match(random_match("nintendo", 4), players=["alice", "AI (Expert)"])
    )
    data["version"] = 1
    del data["identities"]
    old = reload(data)
    assert old.version == 1 and old.players == ["alice", "AI (Expert)"]
    assert old.identities == [Identity.person("alice"), Identity("ai", "Expert")]
    replay(old)
    assert "identities" not in as_data(old)  # written back as it was read


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("identities"), "record: missing key 'identities'"),
        (
            lambda d: d["identities"].__setitem__(0, {"kind": "robot"}),
            "record: identities[0].kind must be one of you, ai, person, guest, not 'robot'",
        ),
        (
            lambda d: d["identities"].__setitem__(1, {"kind": "person", "name": " "}),
            "record: identities[1]: a 'person' identity needs a non-empty name",
        ),
        (
            lambda d: d["identities"].__setitem__(1, {"kind": "guest", "name": "1", "x": 1}),
            "record: identities[1] has unknown key 'x': allowed kind, name, agent",
        ),
        (lambda d: d["identities"].pop(), "record: identities must be two objects"),
    ],
)
def test_malformed_identities_are_refused(change: Any, message: str) -> None:
    data = as_data(record_of())
    change(data)
    with pytest.raises(RecordError) as info:
        reload(data)
    assert str(info.value).startswith(message)
