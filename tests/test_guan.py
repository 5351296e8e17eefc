"""Tests of Guan game files (koikoi.lab.guan) and of ``koikoi import/export guan``."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from koikoi.cli import main
from koikoi.game.cards import CODES, Card, card_list
from koikoi.game.engine import Match
from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord, iter_steps, load_record, replay
from koikoi.game.rules import get_rules
from koikoi.lab.guan import (
    GUAN_RULES,
    card_of,
    guan_card,
    guan_to_json,
    guan_to_record,
    import_guan,
    json_files,
    record_to_guan,
)

FIXTURES = Path(__file__).resolve().parent / "data" / "guan"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "guan-records"
CREATED = "2024-05-01T12:00:00Z"
FIXTURE_NAMES = ["1.json", "6.json", "8.json", "59.json", "201.json"]


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def import_error(data: Any, where: str = "game.json") -> str:
    """The one-line RecordError message of converting ``data``."""
    with pytest.raises(RecordError) as info:
        guan_to_record(data, where=where, created=CREATED)
    message = str(info.value)
    assert "\n" not in message
    return message


def turns(data: dict[str, Any], rnd: int) -> list[dict[str, Any]]:
    r = data["record"][f"round{rnd}"]
    return [r[k] for k in r if k != "basic"]


# ---------------------------------------------------------------- cards


def test_card_encoding() -> None:
    assert card_of([1, 1], "c") == Card.PINE_CRANE
    assert CODES[card_of([11, 1], "c")] == "11L"  # the rain man
    assert CODES[card_of([11, 4], "c")] == "11P"
    assert CODES[card_of([12, 4], "c")] == "12P3"
    assert all(card_of(guan_card(c), "c") == c for c in range(48))


@pytest.mark.parametrize("bad", [[13, 1], [0, 1], [1, 5], [1], "1L", [1.0, 2], [True, 1], None])
def test_bad_card(bad: Any) -> None:
    with pytest.raises(RecordError, match=r"drawCard must be a card \[month, k\]"):
        card_of(bad, "drawCard")


# ---------------------------------------------------------------- import


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_imports_and_replays(name: str) -> None:
    data = fixture(name)
    record = import_guan(FIXTURES / name, created=CREATED)
    assert record.rules == get_rules(GUAN_RULES).to_dict()
    assert record.seed is None
    assert record.players == [data["info"]["player1Name"], data["info"]["player2Name"]]
    assert record.meta["guan"] == {
        "file": name,
        "startTime": data["info"]["startTime"],
        "endTime": data["info"]["endTime"],
    }
    # One deal per round, as the file dealt it: hands, field, stock top first.
    rounds = [data["record"][f"round{k}"]["basic"] for k in range(1, len(data["record"]) + 1)]
    assert len(record.deals) == len(rounds)
    for deck, basic in zip(record.deals, rounds, strict=True):
        dealer = basic["Dealer"]
        hands = [basic["initHand1"], basic["initHand2"]]
        assert deck[:8] == [CODES[card_of(c, "c")] for c in hands[dealer - 1]]
        assert deck[8:16] == [CODES[card_of(c, "c")] for c in hands[2 - dealer]]
        assert deck[16:24] == [CODES[card_of(c, "c")] for c in basic["initBoard"]]
        assert deck[24:] == [CODES[card_of(c, "c")] for c in reversed(basic["initPile"])]
    match = replay(load_record(record.to_json()))
    assert match.is_over == data["result"]["isOver"] == record.finished
    finished = [b for b in rounds if b["roundWinner"] is not None]
    assert len(match.settlements) == len(finished)
    for s, basic in zip(match.settlements, finished, strict=True):
        assert list(s.deltas) == [basic["player1RoundPts"], basic["player2RoundPts"]]
        expected = None if basic["roundWinner"] == 0 else basic["roundWinner"] - 1
        assert (None if s.exhausted else s.winner) == expected
    if match.is_over:
        assert match.scores == [data["result"]["player1EndPts"], data["result"]["player2EndPts"]]
        winner = data["result"]["gameWinner"]
        assert match.winner == (None if winner == 0 else winner - 1)


def test_each_turn_becomes_the_recorded_moves() -> None:
    data = fixture("1.json")
    record = import_guan(FIXTURES / "1.json", created=CREATED)
    steps = list(iter_steps(record))
    plays = [s for s in steps if s.action is not None and s.action.action.startswith("play")]
    recorded = [t for k in range(1, 9) for t in turns(data, k)]
    assert len(plays) == len(recorded)
    for step, turn in zip(plays, recorded, strict=True):
        assert step.action is not None
        assert step.action.player == turn["playerInTurn"] - 1
        assert step.action.action.split()[1] == CODES[card_of(turn["discardCard"], "c")]
        play = next(e for e in step.events if e.kind == "play")
        assert sorted(card_list(play.cards)) == sorted(card_of(c, "c") for c in turn["collectCard"])
        draw = next(e for e in step.events if e.kind == "draw")
        assert draw.card == card_of(turn["drawCard"], "c")
    # The stock is drawn from the end of initPile.
    first = recorded[0]
    pile = data["record"]["round1"]["basic"]["initPile"]
    assert first["drawCard"] == pile[-1]
    decisions = [
        s.action.action for s in steps if s.action and s.action.action in ("koikoi", "stop")
    ]
    offered = [t["isKoiKoi"] for t in recorded if t["isKoiKoi"] is not None]
    # Automatic stops (on the last card) are recorded as false but are no action.
    automatic = [e for s in steps for e in s.events if e.kind == "stop" and e.data["automatic"]]
    assert automatic
    assert decisions.count("koikoi") == offered.count(True)
    assert decisions.count("stop") + len(automatic) == offered.count(False)


def test_an_unfinished_game() -> None:
    record = import_guan(FIXTURES / "201.json", created=CREATED)
    assert not record.finished
    assert record.winner is None
    assert len(record.actions) == 4  # four turns, no choice of capture, no koi-koi offer
    match = replay(record)
    assert not match.is_over and match.round_number == 1 and match.current == 0


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared Guan game records are not here")
def test_every_shared_game_imports_replays_and_exports_unchanged() -> None:
    files = json_files([SHARED])
    assert len(files) == 201
    for path in files:
        record = import_guan(path, created=CREATED)
        replay(record)
        original = json.loads(path.read_text(encoding="utf-8"))
        assert record_to_guan(record) == original, path.name


# ---------------------------------------------------------------- export


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_export_gives_the_file_back(name: str) -> None:
    record = import_guan(FIXTURES / name, created=CREATED)
    text = guan_to_json(record_to_guan(load_record(record.to_json())))
    assert text == (FIXTURES / name).read_text(encoding="utf-8")


def japan_match(seed: int, actions: int | None = None) -> Match:
    m = Match(get_rules(GUAN_RULES), seed=seed)
    rng = random.Random(seed)
    while not m.is_over and (actions is None or len(m.actions) < actions):
        ids = m.legal_ids()
        m.apply(ids[int(rng.random() * len(ids))])
    return m


@pytest.mark.parametrize("seed", range(6))
def test_an_engine_match_goes_there_and_back(seed: int) -> None:
    m = japan_match(seed)
    record = GameRecord.from_match(m, players=["ann", "ben"], created=CREATED)
    data = record_to_guan(record)
    assert data["info"]["startTime"] == "2024-05-01 12:00:00"
    assert data["result"]["isOver"] is True
    assert len(data["record"]) == len(m.settlements)
    again = guan_to_record(json.loads(guan_to_json(data)), created=CREATED)
    assert again.actions == record.actions
    assert again.settlements == record.settlements
    assert again.scores == record.scores and again.winner == record.winner
    # A Guan round holds the deal that was played: redealt decks are left out.
    redeals = sum(1 for e in m.events if e.kind == "redeal")
    assert len(again.deals) == len(record.deals) - redeals


def test_export_of_an_unfinished_match_saves_where_it_stopped() -> None:
    # Stop the match at the start of a turn (a hand card to play) in its first rounds.
    stop_at = next(n for n in range(30, 60) if japan_match(3, n).phase.name == "PLAY")
    m = japan_match(3, stop_at)
    record = GameRecord.from_match(m, created=CREATED)
    data = record_to_guan(record)
    assert data["result"] == {
        "isOver": False,
        "gameWinner": None,
        "player1EndPts": None,
        "player2EndPts": None,
    }
    save = data["save"]
    rnd = m.round
    assert save["round"] == m.round_number and save["playerInTurn"] == m.current + 1
    for p in (0, 1):
        hand = sorted(card_of(c, "c") for c in save[f"player{p + 1}HandCard"])
        assert hand == card_list(rnd.hands[p])
        assert sorted(card_of(c, "c") for c in save[f"player{p + 1}CollectCard"]) == card_list(
            rnd.piles[p]
        )
    board = [card_of(c, "c") for c in save["boardCard"] if c != [0, 0]]
    assert sorted(board) == card_list(rnd.field)
    again = guan_to_record(data, created=CREATED)
    assert not again.finished and again.actions == record.actions


def test_export_refuses_a_record_stopped_in_the_middle_of_a_turn() -> None:
    for n in range(1, 200):
        m = japan_match(5, n)
        if m.phase.name in ("TAKE", "DECIDE"):
            break
    record = GameRecord.from_match(m, created=CREATED)
    with pytest.raises(RecordError, match="in the middle of a turn"):
        record_to_guan(record)


def test_export_refuses_other_rules() -> None:
    m = Match(get_rules("nintendo"), seed=1)
    record = GameRecord.from_match(m, created=CREATED)
    with pytest.raises(RecordError, match=r"koikoi-japan rules only; this record differs in"):
        record_to_guan(record)


# ---------------------------------------------------------------- disagreements


def test_a_different_capture_choice_names_file_round_and_turn() -> None:
    data = fixture("1.json")
    record = import_guan(FIXTURES / "1.json", created=CREATED)
    steps = list(iter_steps(record))
    # The first drawn card with a choice of two field cards: the file takes the
    # fourth card of the month instead, which is not on the field.
    i, draw = next(
        (i, e)
        for i, s in enumerate(steps)
        for e in s.events
        if e.kind == "draw" and e.data.get("choice")
    )
    take = steps[i + 1].action
    assert take is not None and take.action.startswith("take")
    drawn = draw.card or 0
    month_first = drawn // 4 * 4
    fourth = next(
        c
        for c in range(month_first, month_first + 4)
        if c != drawn and CODES[c] not in draw.data["choice"]
    )
    k = take.round
    n = sum(
        1
        for s in steps[: i + 1]
        if s.action is not None and s.action.round == k and s.action.action.startswith("play")
    )
    turn = turns(data, k)[n - 1]
    assert card_of(turn["drawCard"], "c") == drawn
    turn["collectCard2"][1] = guan_card(fourth)
    message = import_error(data)
    assert message == (
        f"game.json: round {k}, turn {n}: the drawn {CODES[drawn]} may capture "
        f"{' or '.join(draw.data['choice'])}; the file says {CODES[drawn]} {CODES[fourth]}"
    )


def test_wrong_round_points() -> None:
    bad = fixture("6.json")
    bad["record"]["round3"]["basic"]["player1RoundPts"] += 1
    bad["record"]["round3"]["basic"]["player2RoundPts"] -= 1
    assert "round 3 result differs" in import_error(bad)


def test_an_exhausted_round_recorded_as_won() -> None:
    bad = fixture("6.json")
    exhausted = next(
        k for k in range(1, 9) if bad["record"][f"round{k}"]["basic"]["roundWinner"] == 0
    )
    basic = bad["record"][f"round{exhausted}"]["basic"]
    basic["roundWinner"] = basic["Dealer"]
    assert f"round {exhausted} result differs" in import_error(bad)


def test_wrong_drawn_card() -> None:
    bad = fixture("8.json")
    pile = bad["record"]["round2"]["basic"]["initPile"]
    pile[-1], pile[0] = pile[0], pile[-1]
    message = import_error(bad)
    assert message.startswith("game.json: round 2, turn 1: the engine draws ")


def test_wrong_dealer() -> None:
    bad = fixture("8.json")
    basic = bad["record"]["round2"]["basic"]
    basic["Dealer"] = 3 - basic["Dealer"]
    assert "round 2: the file has player" in import_error(bad)
    assert "deal" in import_error(bad)


def test_no_decision_where_koikoi_is_offered() -> None:
    bad = fixture("59.json")
    turn = next(t for k in range(1, 5) for t in turns(bad, k) if t["isKoiKoi"] is True)
    turn["isKoiKoi"] = None
    assert "may call koi-koi or stop" in import_error(bad)


def test_koikoi_where_none_is_offered() -> None:
    bad = fixture("59.json")
    turns(bad, 1)[0]["isKoiKoi"] = True
    assert import_error(bad).startswith("game.json: round 1, turn 1: the file has player")


def test_a_card_not_in_hand() -> None:
    bad = fixture("8.json")
    first = turns(bad, 1)[0]
    other = bad["record"]["round1"]["basic"][f"initHand{3 - first['playerInTurn']}"][0]
    first["discardCard"] = other
    assert "which is not in their hand" in import_error(bad)


def test_a_hand_that_is_dealt_again() -> None:
    bad = fixture("8.json")
    basic = bad["record"]["round1"]["basic"]
    month = basic["initHand1"][0][0]
    everywhere = basic["initHand1"] + basic["initHand2"] + basic["initBoard"] + basic["initPile"]
    moved = [c for c in everywhere if c[0] == month and c not in basic["initHand1"]]
    for i, card in enumerate(moved, 1):  # swap the rest of the month into hand 1
        for key in ("initHand2", "initBoard", "initPile"):
            if card in basic[key]:
                basic[key][basic[key].index(card)] = basic["initHand1"][i]
        basic["initHand1"][i] = card
    assert "koikoi-japan rules deal this round again (hand four_of_a_month)" in import_error(bad)


def test_a_game_that_should_go_on() -> None:
    bad = fixture("8.json")
    del bad["record"]["round8"]
    message = import_error(bad)
    assert "the file ends after round 7, but under koikoi-japan rules the match goes on" in message


def test_wrong_final_scores_and_winner() -> None:
    bad = fixture("59.json")
    bad["result"]["player1EndPts"] = 60
    assert "final scores differ" in import_error(bad)
    bad = fixture("59.json")
    bad["result"]["gameWinner"] = 2
    assert "gameWinner 2" in import_error(bad)


def test_other_rules_are_reported() -> None:
    bad = fixture("8.json")
    bad["info"]["numRound"] = 12
    assert "planned for 12 rounds; koikoi-japan rules play 8" in import_error(bad)
    bad = fixture("8.json")
    bad["info"]["player2InitPts"] = 50
    assert "start with [30, 50] points" in import_error(bad)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("record"), "game.json: missing key 'record'"),
        (lambda d: d["record"].pop("round2"), "game.json: record: missing round2"),
        (lambda d: d["record"]["round1"].pop("turn3"), "game.json: round 1: missing turn3"),
        (
            lambda d: d["record"]["round1"]["turn1"].update(playerInTurn=0),
            "game.json: round 1, turn 1: playerInTurn must be one of 1, 2, not 0",
        ),
        (
            lambda d: d["record"]["round1"]["basic"]["initPile"].pop(),
            "initPile must hold 24 cards, not 23",
        ),
        (
            lambda d: d["record"]["round1"]["basic"]["initBoard"].__setitem__(0, [1, 1]),
            "the deal is not a full deck",
        ),
        (
            lambda d: d["record"]["round1"]["turn1"].update(isKoiKoi="yes"),
            "isKoiKoi must be true, false or null",
        ),
        (lambda d: d["info"].update(player1Name=""), "info.player1Name must be a non-empty"),
        (lambda d: d["result"].update(isOver=1), "result.isOver must be true or false"),
    ],
)
def test_bad_shapes_are_named(change: Any, message: str) -> None:
    data = fixture("8.json")
    change(data)
    assert message in import_error(data)


def test_not_an_object() -> None:
    assert import_error([1, 2]) == "game.json must be a JSON object, not [1, 2]"


# ---------------------------------------------------------------- command line


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_import_and_export_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run(capsys, "import", "guan", str(FIXTURES), "--out", str(tmp_path / "r"))
    assert status == 0 and err == ""
    written = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert written == sorted(f"{n[:-5]}.record.json" for n in FIXTURE_NAMES)
    assert "imported 5 games" in out
    assert "(4 rounds, scores [66, -6])" in out
    record = load_record(tmp_path / "r" / "59.record.json")
    assert replay(record).scores == [66, -6]
    status, out, err = run(
        capsys, "export", "guan", str(tmp_path / "r" / "6.record.json"), "--out", str(tmp_path)
    )
    assert status == 0 and err == ""
    assert (tmp_path / "6.guan.json").read_bytes() == (FIXTURES / "6.json").read_bytes()


def test_import_refuses_bad_input_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    out_dir = tmp_path / "out"
    status, out, err = run(
        capsys, "import", "guan", str(FIXTURES / "8.json"), str(broken), "--out", str(out_dir)
    )
    assert status == 2 and out == ""
    assert err.startswith(f"koikoi: error: {broken}: not valid JSON: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out_dir.exists()
    status, _, err = run(capsys, "import", "guan", str(tmp_path / "missing.json"))
    assert status == 2 and "no such file or folder" in err


def test_import_of_a_koikoi_record_and_export_of_a_guan_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    record = import_guan(FIXTURES / "59.json", created=CREATED)
    path = record.save(tmp_path / "59.record.json")
    status, _, err = run(capsys, "import", "guan", str(path), "--out", str(tmp_path))
    assert status == 2 and "not a Guan game file (it is a koikoi record)" in err
    status, _, err = run(capsys, "export", "guan", str(FIXTURES / "59.json"))
    assert status == 2 and "it is a Guan game file: see koikoi import guan" in err


def test_export_of_other_rules_fails_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = GameRecord.from_match(Match(seed=2), created=CREATED).save(tmp_path / "n.json")
    status, out, err = run(capsys, "export", "guan", str(path), "--out", str(tmp_path))
    assert status == 2 and out == ""
    assert err.startswith(f"koikoi: error: {path}: the Guan format holds games under koikoi-japan")


def test_import_without_format_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "import")
    assert status == 2 and "guan" in out
