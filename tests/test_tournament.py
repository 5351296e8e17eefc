"""``koikoi tournament``: the round robin, the Bradley-Terry fit and its bootstrap intervals."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from koikoi.cli import main
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import get_rules
from koikoi.lab.arena.tournament import TournamentConfig, fit_elo, run_tournament

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "random_bot.py"
SHORT = get_rules("koikoi-japan").replace(game__rounds=2)


def _expected(ri: float, rj: float) -> float:
    return 1.0 / (1.0 + 10 ** ((rj - ri) / 400.0))


def test_the_fit_recovers_the_ratings_that_made_the_scores() -> None:
    true = [150.0, 30.0, -180.0]
    games = []
    for i in range(3):
        for j in range(i + 1, 3):
            games.append((i, j, 1000.0 * _expected(true[i], true[j]), 1000.0))
    fitted = fit_elo(3, games, prior=0.0)
    mean = sum(true) / 3
    for got, want in zip(fitted, true, strict=True):
        assert got == pytest.approx(want - mean, abs=0.01)


def test_the_prior_keeps_a_clean_sweep_finite() -> None:
    ratings = fit_elo(2, [(0, 1, 10.0, 10.0)])
    assert all(math.isfinite(r) for r in ratings)
    # 10 wins and one virtual draw in 11 matches: a score of 10.5 / 11
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(10.5 / 0.5))
    assert ratings[0] == pytest.approx(-ratings[1])


def test_a_round_robin_with_an_external_bot_rates_every_agent() -> None:
    agents = ("greedy", "random", f"cmd:{sys.executable} {SAMPLE} --seed 3")
    config = TournamentConfig(agents, SHORT, 4, seed=2, bootstrap=50)
    result = run_tournament(config)
    assert sorted(row["agent"] for row in result["ratings"]) == sorted(agents)
    assert [p["agents"] for p in result["pairings"]] == [
        [agents[0], agents[1]],
        [agents[0], agents[2]],
        [agents[1], agents[2]],
    ]
    elos = [row["elo"] for row in result["ratings"]]
    assert elos == sorted(elos, reverse=True)
    assert sum(elos) == pytest.approx(0.0, abs=0.5)
    for row in result["ratings"]:
        assert row["low"] <= row["elo"] <= row["high"]
        assert row["matches"] == 8  # two pairings of four matches
    assert run_tournament(config) == result  # the same seed replays exactly


@pytest.mark.parametrize(
    ("agents", "matches", "message"),
    [
        (("greedy",), 2, "two agents or more, not 1"),
        (("greedy", "random", "greedy"), 2, "'greedy' is given twice"),
        (("greedy", "random"), 3, "must be even"),
        (("greedy", "nope"), 2, "nope"),
    ],
)
def test_bad_settings_say_what_is_allowed(
    agents: tuple[str, ...], matches: int, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        run_tournament(TournamentConfig(agents, SHORT, matches))


def test_the_command_prints_a_table_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "greedy", "random", "--rules", "koikoi-japan", "--matches", "2"]
    assert main([*argv, "--bootstrap", "20"]) == 0
    table = capsys.readouterr().out
    assert "Elo" in table and "95% interval" in table and "greedy" in table
    assert main([*argv, "--bootstrap", "20", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"] == "koikoi-japan"
    assert {row["agent"] for row in data["ratings"]} == {"greedy", "random"}
    assert main([*argv, "--bootstrap", "0"]) == 2
    assert "--bootstrap must be 1 or more" in capsys.readouterr().err
