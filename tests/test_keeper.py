"""``koikoi keeper`` and :mod:`koikoi.features.keeper`: a whole match's score, round by round."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from koikoi.cli import main
from koikoi.features.keeper import RoundEntry, ScoreSheet, check_koikoi
from koikoi.game.cards import parse_cards
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import get_rules

# A 3-round nintendo match, worked out by hand (and checked with `koikoi score`):
# 1. Aiko: 3L 8L 9A = hanami 5 + tsukimi 5 = 10, seven or more x2 -> 20.
# 2. Ben: 1L 3L 8L = sanko 5; Aiko had called koi-koi once: x2 -> 10.
# 3. Nobody: nintendo's exhausted rule is "draw", no score.
NINTENDO_ANSWERS = ["A", "0", "0", "3L 8L 9A", "b", "0", "1", "1l 3L 8L", "n"]

# koikoi-japan (start 30, zero-sum, ladder, dealer point 1): Ben deals first.
# 1. Aiko: goko 10 with 4 koi-koi calls: ladder x2 -> 20; 50 to 10.
# 2. Aiko (deals now): sanko 5; 55 to 5.
# 3. Nobody: the dealer (Aiko) gets the dealer point 1; 56 to 4.
# 4. Aiko: ame-shiko 7; Ben at -3 is bust: the match ends after 4 of 8 rounds.
JAPAN_ANSWERS = [
    "B",
    "a", "4", "0", "1L 3L 8L 11L 12L",
    "a", "", "", "1L 3L 8L",
    "n",
    "a", "0", "0", "1L 3L 8L 11L",
]  # fmt: skip

MATCH_TOML = """\
rules = "nintendo"
names = ["Aiko", "Ben"]
rounds = 3

[[round]]
winner = "A"
cards = "3L 8L 9A"

[[round]]
winner = "B"
cards = ["1L", "3L", "8L"]
koikoi = { A = 1 }

[[round]]
winner = "nobody"
"""


def keeper(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answers: list[str],
    *argv: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(a + "\n" for a in answers)))
    status = main(["keeper", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_three_rounds_piped_give_the_totals_worked_out_by_hand(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out, err = keeper(
        capsys, monkeypatch, NINTENDO_ANSWERS, "--names", "Aiko,Ben", "--rounds", "3"
    )
    assert status == 0, err
    assert "Score keeper: nintendo, 3 rounds, Aiko (A) against Ben (B)." in out
    assert "Flower viewing (花見酒 hanami-zake) [3L 9A]: 5" in out
    assert "Moon viewing (月見酒 tsukimi-zake) [8L 9A]: 5" in out
    assert "Seven or more: x2 -> 20" in out
    assert "Opponent called koi-koi: x2 -> 10" in out
    assert "Round 2 (month 2, Plum): Ben wins; koi-koi: Aiko x1, Ben x0" in out
    assert "Totals: Aiko 20, Ben 0" in out
    assert out.count("Totals: Aiko 20, Ben 10") == 2  # after rounds 2 and 3
    assert "Round 3 (month 3, Cherry): nobody wins\n  No score." in out
    assert out.rstrip().endswith("Result: Aiko wins 20 to 10.")
    table = out[out.index("Round  Winner") :].splitlines()
    assert table[1].split() == ["1", "Aiko", "20", "20", "0"]
    assert table[2].split() == ["2", "Ben", "10", "20", "10"]
    assert table[3].split() == ["3", "-", "0", "20", "10"]


def test_totals_match_koikoi_score(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--json", "3L", "8L", "9A"]) == 0
    first = json.loads(capsys.readouterr().out)["total"]
    assert main(["score", "--json", "--opponent-koikoi", "1L", "3L", "8L"]) == 0
    second = json.loads(capsys.readouterr().out)["total"]
    assert (first, second) == (20, 10)


@pytest.mark.multiprocess
def test_piped_through_a_real_pipe() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "koikoi.cli", "keeper", "--names", "Aiko,Ben", "--rounds", "3"],
        input="".join(a + "\n" for a in NINTENDO_ANSWERS),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Result: Aiko wins 20 to 10." in proc.stdout


def test_winner_score_comes_first(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = ["B", "0", "0", "1L 3L 8L", "n"]
    status, out, _ = keeper(capsys, monkeypatch, answers, "--names", "Aiko,Ben", "--rounds", "2")
    assert status == 0
    assert "Result: Ben wins 5 to 0." in out


def test_a_bad_card_code_is_asked_again(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = ["A", "0", "0", "3L 8Q", "3L 9A", "n"]
    status, out, err = keeper(capsys, monkeypatch, answers, "--rounds", "2")
    assert status == 0, err
    assert "error: unknown card '8Q': expected a code such as 1L" in out
    assert "try again" in out
    assert out.count("A's captured cards") == 2
    assert "Result: A wins 5 to 0." in out


def test_other_bad_answers_are_asked_again(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = [
        "Carol",  # not a player
        "A",
        "many",  # not a count
        "-1",  # negative
        "1",
        "0",
        "1P1 1P2",  # no yaku
        "",  # no cards
        "1L 3L 8L",
    ]
    status, out, err = keeper(capsys, monkeypatch, answers, "--rounds", "1")
    assert status == 0, err
    assert "error: 'Carol' is not a player: answer A, B or N (nobody)" in out
    assert "'many' is not a number: answer 0, 1, 2, ..." in out
    assert "koi-koi calls by A must be 0 or more, not -1" in out
    assert "A's cards score no yaku under nintendo in round 1 with 1 koi-koi" in out
    assert "no cards given" in out
    assert "Result: A wins 5 to 0." in out


def test_koikoi_limit_is_checked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    house = tmp_path / "house.toml"
    house.write_text('extends = "nintendo"\n[koikoi]\nlimit = 1\n', encoding="utf-8")
    answers = ["A", "2", "1", "0", "1L 3L 8L"]
    status, out, err = keeper(capsys, monkeypatch, answers, "--rules", str(house), "--rounds", "1")
    assert status == 0, err
    assert "A called koi-koi 2 times, but nintendo+house allows at most 1 a player" in out


def test_undo_removes_the_last_round(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = [
        "u",  # nothing to undo yet
        "A", "0", "0", "1L 3L 8L",  # round 1: A 5
        "u",  # undo it
        "B", "0", "0", "3L 8L 9A",  # round 1 again: B 20
        "A", "0", "u",  # round 2 started, then restarted
        "n",  # round 2: nobody
        "u",  # after the last round: undo round 2
        "A", "0", "0", "1L 3L 8L",  # round 2 again: A 5
        "",  # finish
    ]  # fmt: skip
    status, out, err = keeper(capsys, monkeypatch, answers, "--rounds", "2")
    assert status == 0, err
    assert "Nothing to undo: no round entered yet." in out
    assert "Round 1 undone.\nTotals: A 0, B 0" in out
    assert "Round 2 again from the start." in out
    assert "Round 2 undone.\nTotals: A 0, B 20" in out
    assert out.rstrip().endswith("Result: B wins 20 to 5.")


def test_quit_ends_the_match_early(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = ["A", "0", "0", "1L 3L 8L", "q"]
    status, out, _ = keeper(capsys, monkeypatch, answers, "--names", "Aiko,Ben")
    assert status == 0
    assert out.rstrip().endswith("Result: After 1 of 12 rounds: Aiko leads 5 to 0.")


def test_input_ending_mid_match_is_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, _, err = keeper(capsys, monkeypatch, ["A", "0", "0", "1L 3L 8L", "A"], "--rounds", "6")
    assert status == 2
    assert "the input ended in round 2 of 6, with the score at 5 to 0 after round 1" in err


def test_a_bust_ends_a_koikoi_japan_match_early(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out, err = keeper(
        capsys, monkeypatch, JAPAN_ANSWERS, "--rules", "koikoi-japan", "--names", "Aiko,Ben"
    )
    assert status == 0, err
    assert "8 rounds, Aiko (A) against Ben (B), each starts with 30 points." in out
    assert "Who deals round 1? A=Aiko, B=Ben: B" in out
    assert "Koi-koi ladder: x2 -> 20" in out
    assert "Aiko scores 20, Ben pays 20.\nTotals: Aiko 50, Ben 10" in out
    assert "Round 3 (month 3, Cherry), Aiko deals: nobody wins\n  Dealer point: 1" in out
    assert "Totals: Aiko 63, Ben -3" in out
    assert "Round 5" not in out
    assert out.rstrip().endswith("Result: Aiko wins 63 to -3 (Ben is bust).")


def test_file_mode_prints_the_same_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    match = tmp_path / "match.toml"
    match.write_text(MATCH_TOML, encoding="utf-8")
    assert main(["keeper", "--file", str(match)]) == 0
    from_file = capsys.readouterr().out
    _, piped, _ = keeper(
        capsys, monkeypatch, NINTENDO_ANSWERS, "--names", "Aiko,Ben", "--rounds", "3"
    )
    table = from_file[from_file.index("Round  Winner") :]
    assert table == piped[piped.index("Round  Winner") :]
    assert "Opponent called koi-koi: x2 -> 10" in from_file
    assert from_file.rstrip().endswith("Result: Aiko wins 20 to 10.")


def test_file_mode_json_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    match = tmp_path / "match.json"
    rounds = [{"winner": "Ben", "cards": "1L 3L 8L", "koikoi": {"A": 1}}]
    match.write_text(json.dumps({"names": ["Aiko", "Ben"], "round": rounds}), encoding="utf-8")
    assert main(["keeper", "--file", str(match)]) == 0
    assert "Result: After 1 of 12 rounds: Ben leads 10 to 0." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MATCH_TOML.replace('"8L"]', '"8Q"]'), "round 2: unknown card '8Q'"),
        (MATCH_TOML.replace('winner = "nobody"', 'winner = "C"'), "round 3: 'C' is not a player"),
        (MATCH_TOML.replace("{ A = 1 }", "{ C = 1 }"), "round 2: koikoi: unknown player 'C'"),
        (
            MATCH_TOML.replace("rounds = 3", "rounds = 2"),
            "round 3: the match is over after round 2",
        ),
        (MATCH_TOML + 'cards = "1L"\n', "round 3: nobody won, so leave out cards"),
        (MATCH_TOML.replace('cards = "3L 8L 9A"', 'cards = "1P1"'), "round 1: A's cards"),
        (MATCH_TOML + "score = 3\n", "round 3: unknown key 'score'"),
        ("colour = 1\n" + MATCH_TOML, "unknown key 'colour': allowed rules, names"),
        ("rules = \n", "not valid TOML"),
    ],
)
def test_file_mode_errors_name_the_round(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    match = tmp_path / "match.toml"
    match.write_text(text.replace('names = ["Aiko", "Ben"]\n', ""), encoding="utf-8")
    assert main(["keeper", "--file", str(match)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"koikoi: error: {match}: ")
    assert message in err


def test_json_output(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    status, out, err = keeper(
        capsys,
        monkeypatch,
        JAPAN_ANSWERS,
        "--rules",
        "koikoi-japan",
        "--names",
        "Aiko,Ben",
        "--json",
    )
    assert status == 0
    assert "Who deals round 1?" in err  # the questions go to stderr
    data = json.loads(out)
    assert data["rules"] == "koikoi-japan"
    assert data["names"] == {"A": "Aiko", "B": "Ben"}
    assert (data["rounds"], data["start_points"], data["first_dealer"]) == (8, 30, "B")
    assert [r["totals"] for r in data["played"]] == [
        {"A": 50, "B": 10},
        {"A": 55, "B": 5},
        {"A": 56, "B": 4},
        {"A": 63, "B": -3},
    ]
    first = data["played"][0]
    assert first["koikoi"] == {"A": 4, "B": 0}
    assert first["multipliers"] == [
        {"name": "koikoi_ladder", "factor": 2, "add": 0, "label": "Koi-koi ladder"}
    ]
    assert first["yaku"] == [
        {
            "name": "goko",
            "english": "Five Brights",
            "japanese": "五光 gokō",
            "points": 10,
            "cards": ["1L", "3L", "8L", "11L", "12L"],
        }
    ]
    assert first["deltas"] == {"A": 20, "B": -20}
    assert data["played"][2]["reason"] == "dealer_point"
    assert data["played"][2]["scored_by"] == "A"
    assert (data["over"], data["end"], data["winner"], data["stopped"]) == (
        True,
        "bust",
        "A",
        False,
    )


def test_file_mode_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    match = tmp_path / "match.toml"
    match.write_text(MATCH_TOML, encoding="utf-8")
    assert main(["keeper", "--file", str(match), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["points"] for r in data["played"]] == [20, 10, 0]
    assert data["totals"] == {"A": 20, "B": 10}
    assert data["result"] == "Aiko wins 20 to 10."


def test_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keeper", "--names", "Aiko"]) == 2
    assert "--names takes two names separated by a comma" in capsys.readouterr().err
    assert main(["keeper", "--rounds", "0"]) == 2
    assert "--rounds must be 1 or more, not 0" in capsys.readouterr().err


# ------------------------------------------------------------ the score sheet


def test_sheet_tie_goes_to_the_last_dealer_when_the_rules_say_so() -> None:
    rules = get_rules("nintendo").replace(game__match_tie="dealer")
    with pytest.raises(InvalidInputError, match="say who deals round 1"):
        ScoreSheet(rules, rounds=2)
    sheet = ScoreSheet(rules, rounds=2, first_dealer=1, names=("Aiko", "Ben"))
    sheet = sheet.add(RoundEntry(0, parse_cards("1L 3L 8L")))  # Aiko 5, deals next
    sheet = sheet.add(RoundEntry(1, parse_cards("1R 2R 3R")))  # Ben 5 (akatan)
    assert sheet.totals == (5, 5)
    assert sheet.played[-1].dealer == 0
    assert sheet.result() == "Aiko wins 5 to 5: a tie goes to the last dealer."


def test_sheet_draw_and_dealer_swap() -> None:
    sheet = ScoreSheet(get_rules("nintendo"), rounds=1, first_dealer=0)
    assert sheet.add(RoundEntry(None)).result() == "Match drawn, 0 to 0."
    assert sheet.add(RoundEntry(None)).dealer == 1  # dealer_after_draw = "swap"
    with pytest.raises(InvalidInputError, match="the match is over after round 1"):
        sheet.add(RoundEntry(None)).add(RoundEntry(None))


def test_check_koikoi_round_scope() -> None:
    rules = get_rules("nintendo").replace(koikoi__limit=2, koikoi__limit_scope="round")
    check_koikoi(rules, (1, 1))
    with pytest.raises(InvalidInputError, match="3 koi-koi calls in one round"):
        check_koikoi(rules, (2, 1))
