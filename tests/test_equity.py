"""Match equity: the table's shape under each rule set's end conditions."""

from __future__ import annotations

import doctest
import json
import pathlib

import pytest

from koikoi.agents import equity, make_agent
from koikoi.agents.equity import MatchEquity, RoundOutcomes, match_equity, outcomes_for
from koikoi.agents.mcts import MatchUtility, MCTSAgent
from koikoi.cli import main
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import PRESET_NAMES, get_rules, load_rules_text
from koikoi.game.views import view_of


def test_doctests() -> None:
    failures, _ = doctest.testmod(equity)
    assert failures == 0


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_ships_a_distribution(name: str) -> None:
    out = outcomes_for(get_rules(name))
    assert out.rounds >= 1000 and "heuristic self-play" in out.source
    probs = out.probabilities()
    assert abs(sum(p for _, p in probs) - 1.0) < 1e-9


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_equity_rises_with_the_lead_and_stays_a_probability(name: str) -> None:
    met = match_equity(get_rules(name))
    rounds = get_rules(name).game.rounds
    step = 2 if get_rules(name).game.start_points else 1
    for left in (0, 1, rounds // 2, rounds):
        for i_deal in (False, True):
            row = [
                met.equity(lead=x, rounds_left=left, i_deal=i_deal) for x in range(-40, 41, step)
            ]
            assert all(0.0 <= v <= 1.0 for v in row)
            assert row == sorted(row), (left, i_deal)
    # A lead matters less with more rounds to play.
    assert met.equity(lead=6, rounds_left=1, i_deal=False) > met.equity(
        lead=6, rounds_left=rounds, i_deal=False
    )


def test_tie_rules() -> None:
    draw = match_equity(get_rules("nintendo"))
    assert draw.equity(lead=0, rounds_left=0, i_deal=True) == 0.5
    dealer = load_rules_text('name = "tie-dealer"\n[game]\nmatch_tie = "dealer"\n')
    met = MatchEquity(dealer, outcomes_for(get_rules("nintendo")))
    assert met.equity(lead=0, rounds_left=0, i_deal=True) == 1.0
    assert met.equity(lead=0, rounds_left=0, i_deal=False) == 0.0


def test_bust_under_transferred_points() -> None:
    met = match_equity(get_rules("koikoi-japan"))
    assert met.equity(lead=0, rounds_left=5, i_deal=True, own=0) == 0.0
    assert met.equity(lead=0, rounds_left=5, i_deal=True, own=60) == 1.0
    util = met.round_utility(own=4, other=56, rounds_left=5, i_deal=False)
    span = equity.MAX_ROUND_POINTS
    assert util[span - 4] == 0.0 and util[span - 3] > 0.0


def test_bad_distribution_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="'x' is not a whole number"):
        RoundOutcomes.from_dict({"counts": {"x": 1}})
    with pytest.raises(InvalidInputError, match="expected an object"):
        RoundOutcomes.from_dict([1, 2])
    with pytest.raises(InvalidInputError, match="no rounds"):
        RoundOutcomes.from_dict({"counts": {"0": 0}})


def test_train_equity_reproduces_the_shipped_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped file is the default command's output: a short run under the
    same seed gives the same first rounds' kind of data, and the recipe is recorded."""
    assert main(["train", "equity", "--rounds", "30", "--rules", "leaflet", "--seed", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["presets"]["leaflet"]["rounds"] == 30
    assert sum(data["presets"]["leaflet"]["counts"].values()) == 30
    shipped = json.loads(
        (equity.resources.files("koikoi.agents") / "data" / equity.DATA_FILE).read_text()
    )
    assert shipped["recipe"] == "koikoi train equity --rounds 3000 --seed 1"
    assert main(["train", "equity", "--rules", "nope"]) == 2
    assert "is not a preset" in capsys.readouterr().err


def test_train_equity_with_another_player(capsys: pytest.CaptureFixture[str]) -> None:
    """--agent measures the rounds of another player's self-play, and says so."""
    args = ["train", "equity", "--rounds", "12", "--rules", "leaflet", "--seed", "1"]
    assert main([*args, "--agent", "greedy"]) == 0
    greedy = json.loads(capsys.readouterr().out)
    assert greedy["recipe"].endswith("--agent greedy")
    assert greedy["presets"]["leaflet"]["source"] == "greedy self-play, seed 1"
    assert sum(greedy["presets"]["leaflet"]["counts"].values()) == 12
    assert main(args) == 0
    heuristic = json.loads(capsys.readouterr().out)
    assert heuristic["presets"]["leaflet"]["source"] == "heuristic self-play, seed 1"
    assert main([*args, "--agent", "nobody"]) == 2
    assert "nobody" in capsys.readouterr().err


def test_a_preset_with_another_match_length_reuses_its_rounds() -> None:
    six = get_rules("nintendo").replace(game__rounds=6)
    assert outcomes_for(six) == outcomes_for(get_rules("nintendo"))
    met = match_equity(six)
    assert met.equity(lead=3, rounds_left=6, i_deal=False) > 0.5
    other = get_rules("nintendo").replace(points__goko=15)
    assert equity._same_rounds_as(other) is None


def _outcomes_file(tmp_path: pathlib.Path, presets: dict[str, dict[str, int]]) -> str:
    data = {
        "format": "koikoi-round-outcomes",
        "version": 1,
        "presets": {
            name: {"rounds": sum(counts.values()), "source": "test", "counts": counts}
            for name, counts in presets.items()
        },
    }
    path = tmp_path / "outcomes.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_an_equity_file_replaces_the_shipped_distribution(tmp_path: pathlib.Path) -> None:
    """expert:equity=FILE plays for the match-equity table built from that file's
    rounds: a wider spread of results makes a 10-point lead worth less."""
    wide = _outcomes_file(tmp_path, {"nintendo": {"-30": 1, "30": 1}})
    rules = get_rules("nintendo")
    narrow = match_equity(rules)
    met = match_equity(rules, wide)
    assert met.outcomes.source == "test"
    assert met.equity(lead=10, rounds_left=1, i_deal=False) == 0.5
    assert narrow.equity(lead=10, rounds_left=1, i_deal=False) > 0.6
    # Another match length under the same rounds uses the file too.
    six = rules.replace(game__rounds=6)
    assert outcomes_for(six, wide) == met.outcomes

    agent = make_agent(f"expert:iterations=5,equity={wide}")
    assert isinstance(agent, MCTSAgent)
    assert agent.name.endswith(f"equity={wide}") and agent.equity == wide
    m = Match(rules, seed=3, events=False)
    view = view_of(m, m.current, with_history=False)
    utility = agent.utility(view)
    assert utility is not None
    expected = met.round_utility(
        own=0, other=0, rounds_left=rules.game.rounds - 1, i_deal=view.dealer == view.player
    )
    assert utility.table == tuple(expected)
    shipped = MatchUtility.of_view(view)
    assert shipped is not None and shipped.table != utility.table
    mcts = make_agent(f"mcts:objective=match,equity={wide}")
    assert isinstance(mcts, MCTSAgent) and mcts.utility(view) is not None


def test_a_bad_equity_file_is_refused_by_name(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(InvalidInputError, match=r"expert: equity file .*missing.json: cannot read"):
        make_agent(f"expert:equity={missing}")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"mcts: equity file .*: not JSON"):
        make_agent(f"mcts:objective=match,equity={bad}")
    with pytest.raises(InvalidInputError, match="only objective=match uses"):
        make_agent(f"expert:objective=round,equity={bad}")
    bad.write_text('{"presets": {}}', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="not a round-outcomes file"):
        equity.read_outcomes_file(bad)
    with pytest.raises(InvalidInputError, match="'nope' is not a preset"):
        equity.read_outcomes_file(_outcomes_file(tmp_path, {"nope": {"1": 1}}))
    with pytest.raises(InvalidInputError, match="leaflet: no rounds"):
        equity.read_outcomes_file(_outcomes_file(tmp_path, {"leaflet": {"1": 0}}))
    only_leaflet = _outcomes_file(tmp_path, {"leaflet": {"1": 1}})
    with pytest.raises(InvalidInputError, match=r"preset 'nintendo'.*holds only leaflet"):
        outcomes_for(get_rules("nintendo"), only_leaflet)
    house = get_rules("nintendo").replace(points__goko=15)
    with pytest.raises(InvalidInputError, match="no preset's"):
        outcomes_for(house, only_leaflet)
