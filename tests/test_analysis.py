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
    analysis = analyze_record(record, spy, runs=1)
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


# ------------------------------------------------ interchangeable cards, noise, output


def _record_with_twin_captures() -> tuple[GameRecord, list[int]]:
    """A one-round record where a player captured one of two interchangeable Plains, taking
    the one with the higher id (which :class:`_Spy` values lower); and those action numbers."""
    from koikoi.game.actions import PLAY_TARGET_BASE, TAKE_BASE, interchangeable

    def same_choice(a: int, b: int) -> bool:  # the same card takes one of two twin Plains
        same_card = (a >= TAKE_BASE) == (b >= TAKE_BASE) and (
            a >= TAKE_BASE or (a - PLAY_TARGET_BASE) // 48 == (b - PLAY_TARGET_BASE) // 48
        )
        return same_card and interchangeable([a, b])

    for seed in range(200):
        m = Match(get_rules("koikoi-japan").replace(game__rounds=1), seed=seed)
        chooser = random.Random(seed)
        twins: list[int] = []
        while not m.is_over:
            ids = m.legal_ids()
            paired = [a for a in ids if any(b != a and same_choice(a, b) for b in ids)]
            if paired:
                twins.append(len(m.actions) + 1)
                m.apply(max(paired))
            else:
                m.apply(chooser.choice(ids))
        if twins:
            return GameRecord.from_match(m, created="2024-01-01T00:00:00Z"), twins
    pytest.fail("no choice between interchangeable Plains in 200 seeded rounds")  # pragma: no cover


def test_taking_one_of_two_identical_plains_is_never_a_mistake() -> None:
    from koikoi.game.actions import interchangeable

    record, twins = _record_with_twin_captures()
    spy = _Spy()  # values -id: tells 10P1 from 10P2 as no rule does
    analysis = analyze_record(record, spy)
    judged = {d.index: d for d in analysis.decisions}
    for number in twins:
        d = judged.get(number)
        if d is None:  # only interchangeable captures: no choice at all
            continue
        twin = [a for a in d.values if a != d.played and interchangeable([a, d.played])]
        assert twin and d.values[twin[0]] == d.values[d.played]
        assert d.loss == 0.0 and d.best == d.played and not d.is_mistake()
    assert not {d.index for d in analysis.mistakes(100)} & set(twins)
    assert len(analysis.decisions) + analysis.forced == len(record.actions)


class _Wobbly:
    """An evaluator whose runs disagree: one action looks better by ``edge`` on average,
    by ``edge + swing`` and ``edge - swing`` on alternate calls; the others are worth 0."""

    name = "wobbly"

    def __init__(self, edge: float, swing: float) -> None:
        self.edge, self.swing, self.calls = edge, swing, 0

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        self.calls += 1
        sign = 1 if self.calls % 2 else -1
        favourite = min(view.legal_ids)
        return {a: self.edge + sign * self.swing if a == favourite else 0.0 for a in view.legal_ids}


def test_differences_within_the_search_noise_are_not_mistakes() -> None:
    record, _ = _record(rounds=1)
    noisy = analyze_record(record, _Wobbly(edge=0.3, swing=1.0))
    losing = [d for d in noisy.decisions if d.played != d.best]
    assert losing and all(d.loss == pytest.approx(0.3) for d in losing)
    # gaps 1.3, -0.7, 1.3, -0.7: sd 2/sqrt(3), standard error over 4 runs 1/sqrt(3)
    assert all(d.noise == pytest.approx(3**-0.5) for d in losing)
    assert noisy.mistakes(100, threshold=0.1) == []
    assert noisy.player_summary(0, mistake=0.1)["mistakes"] == 0
    assert "No mistakes" in format_analysis(noisy, mistake=0.1)
    # A clear difference, larger than its noise, stays a mistake.
    clear = analyze_record(record, _Wobbly(edge=1.5, swing=0.1))
    assert {d.index for d in clear.mistakes(100, threshold=1.0)} == {
        d.index for d in clear.decisions if d.played != d.best
    }


def test_one_run_has_no_noise_estimate_and_runs_are_checked() -> None:
    record, _ = _record(rounds=1)
    once = analyze_record(record, _Wobbly(edge=0.3, swing=0.0), runs=1)
    assert all(d.noise == 0.0 for d in once.decisions)
    losing = {d.index for d in once.decisions if d.played != d.best}
    assert losing and all(d.loss == pytest.approx(0.3) for d in once.decisions if d.index in losing)
    assert {d.index for d in once.mistakes(100, threshold=0.1)} == losing
    with pytest.raises(InvalidInputError, match="runs must be a whole number 1 or more, not 0"):
        analyze_record(record, _Spy(), runs=0)


def test_the_default_analysis_agent_gives_the_same_values_twice() -> None:
    """Two runs on one record agree: the default evaluator is not on a clock."""
    from koikoi.agents import make_agent
    from koikoi.cli.analyze import DEFAULT_AGENT
    from koikoi.game.views import view_of

    m = Match(get_rules("koikoi-japan"), seed=7)
    view = view_of(m, m.current)
    agent = make_agent(DEFAULT_AGENT)
    assert agent.evaluate(view, random.Random(1)) == agent.evaluate(view, random.Random(1))


def test_counts_are_pluralised_in_both_languages() -> None:
    from koikoi.i18n import set_language
    from koikoi.lab.analysis import Analysis, AnalyzedDecision

    one = AnalyzedDecision(1, 1, 0, "play", 0, 1, {0: 0.0, 1: 2.0}, 2.0)
    analysis = Analysis(agent="spy", players=["alice", "bob"], rules="r", decisions=[one])
    text = format_analysis(analysis)
    assert "1 decision with a choice, 0 best moves," in text
    assert "1 mistake" in text and "1 mistakes" not in text and "decisions" not in text
    two = Analysis(agent="spy", players=["alice", "bob"], rules="r", decisions=[one, one])
    assert "2 decisions with a choice, 0 best moves," in format_analysis(two)
    assert "2 mistakes" in format_analysis(two)
    set_language("ja")
    try:
        ja = format_analysis(analysis)
    finally:
        set_language("en")
    assert "選択のある判断1回" in ja and "悪手1回" in ja and "mistake" not in ja


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("missing/out.json", "the folder"),
        (".", "is a folder"),
    ],
)
def test_annotate_path_is_checked_before_the_analysis(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    message: str,
) -> None:
    import koikoi.lab.analysis

    record, _ = _record(rounds=1)
    path = record.save(tmp_path / "game.json")
    started: list[bool] = []

    def spy(*args: object, **kwargs: object) -> object:
        started.append(True)
        raise AssertionError("the analysis started")

    monkeypatch.setattr(koikoi.lab.analysis, "analyze_record", spy)
    out = str(tmp_path / where)
    assert main(["analyze", str(path), "--agent", "mcts:iterations=2", "--annotate", out]) == 2
    err = capsys.readouterr().err
    assert message in err and repr(out) in err
    assert not started


def test_annotate_writes_the_noise_and_the_verdict(tmp_path: Path) -> None:
    from koikoi.game.record import load_record

    record, _ = _record(rounds=1)
    path = record.save(tmp_path / "game.json")
    out = tmp_path / "annotated.json"
    spec = "mcts:iterations=3,rollouts=2"
    assert main(["analyze", str(path), "--agent", spec, "--annotate", str(out), "--runs", "2"]) == 0
    data = load_record(out).meta["analysis"]
    assert data["runs"] == 2 and data["threshold"] == 1.0
    for d in data["decisions"]:
        assert d["mistake"] == (d["loss"] >= 1.0 and d["loss"] > 2 * d["noise"])
    assert main(["analyze", str(path), "--runs", "0"]) == 2
