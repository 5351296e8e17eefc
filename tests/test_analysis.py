"""Post-game analysis of a record: every decision valued from the decider's view."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from koikoi.agents.mcts import MCTSAgent
from koikoi.cli import main
from koikoi.game.actions import KOIKOI_ID, STOP_ID
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord
from koikoi.game.rules import get_rules
from koikoi.game.views import PlayerView
from koikoi.lab.analysis import analyze_record, format_analysis


def _record(rounds: int = 2, seed: int = 3, koikoi: bool = True) -> tuple[GameRecord, Match]:
    """A short match of simple scripted play (koi-koi whenever offered, if ``koikoi``)."""
    m = Match(get_rules("koikoi-japan").replace(game__rounds=rounds), seed=seed)
    chooser = random.Random(seed)
    while not m.is_over:
        ids = m.legal_ids()
        if KOIKOI_ID in ids:
            m.apply(KOIKOI_ID if koikoi else STOP_ID)
        else:
            m.apply(chooser.choice(ids))
    return GameRecord.from_match(m, players=["alice", "bob"], created="2024-01-01T00:00:00Z"), m


class _Spy:
    """An evaluator with made-up values (-id) that records the views it is given."""

    name = "spy"

    def __init__(self) -> None:
        self.views: list[PlayerView] = []

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        self.views.append(view)
        return {a: -float(a) for a in view.legal_ids}


def test_every_choice_is_evaluated_from_the_deciders_view() -> None:
    record, match = _record()
    spy = _Spy()
    analysis = analyze_record(record, spy)
    with_choice = [d for d in analysis.decisions]
    assert len(with_choice) + analysis.forced == len(match.actions)
    assert len(spy.views) == len(with_choice)
    for view, d in zip(spy.views, with_choice, strict=True):
        assert view.player == d.player == view.current
        assert d.played in view.legal_ids
        # the loss is the best value minus the played one: ids are the values here
        assert d.best == min(view.legal_ids)
        assert d.loss == pytest.approx(d.played - d.best)
        assert view.unseen.bit_count() == view.opponent_hand_count + view.stock_count
    assert [d.index for d in analysis.decisions] == sorted(d.index for d in analysis.decisions)
    played = [match.actions[d.index - 1] for d in analysis.decisions]
    assert played == [d.played for d in analysis.decisions]


def test_mistakes_are_the_biggest_losses() -> None:
    record, _ = _record()
    analysis = analyze_record(record, _Spy())
    worst = analysis.mistakes(5)
    assert [d.loss for d in worst] == sorted((d.loss for d in analysis.decisions), reverse=True)[
        : len(worst)
    ]
    assert all(d.loss > 0 for d in worst)
    text = format_analysis(analysis, top=3)
    assert "Biggest mistakes (top 3)" in text and "player 0 (alice)" in text
    assert "played play" not in text and "chose 'play " in text  # not "played play 6P2"


def test_search_analysis_is_deterministic_and_per_player() -> None:
    record, _ = _record(rounds=1)
    agent = MCTSAgent(iterations=4, rollouts=2)
    both = analyze_record(record, agent, seed=5)
    again = analyze_record(record, agent, seed=5)
    only0 = analyze_record(record, agent, seed=5, players=[0])
    assert both.to_dict() == again.to_dict()
    assert {d.player for d in only0.decisions} == {0}
    assert [d.to_dict() for d in only0.decisions] == [
        d.to_dict() for d in both.decisions if d.player == 0
    ]
    for d in both.decisions:
        assert d.loss >= 0 and d.values[d.best] == max(d.values.values())


def test_koikoi_on_the_last_card_is_found_as_a_mistake() -> None:
    # Under nintendo koi-koi is offered on the last card; calling it there cannot
    # improve anything and an exhausted round scores nobody: stopping is better by
    # at least the stop's points.
    from koikoi.game.record import iter_steps

    for seed in range(60):
        m = Match(get_rules("nintendo").replace(game__rounds=1), seed=seed)
        chooser = random.Random(seed)
        while not m.is_over:
            ids = m.legal_ids()
            m.apply(KOIKOI_ID if KOIKOI_ID in ids else chooser.choice(ids))
        record = GameRecord.from_match(m, created="2024-01-01T00:00:00Z")
        previous = None
        number = 0
        target = None
        for step in iter_steps(record):
            if step.kind == "action" and step.action is not None and previous is not None:
                number += 1
                view = previous.view(step.action.player)
                if step.action.action == "koikoi" and view.hand == 0:
                    target = number
            previous = step
        if target is None:
            continue
        analysis = analyze_record(record, MCTSAgent(iterations=16, rollouts=4))
        d = next(d for d in analysis.decisions if d.index == target)
        assert d.phase == "decide" and d.played == KOIKOI_ID
        assert d.best == STOP_ID
        assert d.values[KOIKOI_ID] <= 0.0 < d.values[STOP_ID]
        assert d.loss == pytest.approx(d.values[STOP_ID] - d.values[KOIKOI_ID])
        assert d in analysis.mistakes(100, threshold=0.99)
        return
    pytest.fail("no koi-koi on a last card in 60 seeded matches")  # pragma: no cover


def test_cli_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, _ = _record(rounds=1)
    path = record.save(tmp_path / "game.json")
    spec = "mcts:iterations=3,rollouts=2"
    assert main(["analyze", str(path), "--agent", spec, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "Analysis with mcts:iterations=3" in out and "player 0 (alice)" in out
    assert main(["analyze", str(path), "--agent", spec, "--json", "--player", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["agent"] == "mcts:iterations=3" and data["players"] == ["alice", "bob"]
    assert [s["player"] for s in data["summary"]] == [1]
    assert all(d["player"] == 1 for d in data["decisions"])
    assert len(data["mistakes"]) <= 10
    for d in data["decisions"]:
        assert {"index", "round", "player", "phase", "played", "best", "loss", "values"} <= set(d)


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, _ = _record(rounds=1)
    path = record.save(tmp_path / "game.json")
    assert main(["analyze", str(path), "--agent", "random"]) == 2
    assert "cannot evaluate moves" in capsys.readouterr().err
    assert main(["analyze", str(tmp_path / "missing.json")]) == 2
    assert "cannot read record" in capsys.readouterr().err
    assert main(["analyze", str(path), "--top", "0"]) == 2
    assert "--top must be 1 or more" in capsys.readouterr().err


def test_bad_players() -> None:
    record, _ = _record(rounds=1)
    with pytest.raises(InvalidInputError, match="player must be 0 or 1"):
        analyze_record(record, _Spy(), players=[2])


def test_doctests() -> None:
    import doctest

    from koikoi.cli import analyze
    from koikoi.lab import analysis

    for module in (analysis, analyze):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0
