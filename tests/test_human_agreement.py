"""Human agreement (koikoi.lab.human) and ``koikoi bench human``."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from koikoi.agents import base
from koikoi.cli import main
from koikoi.game.actions import parse_action
from koikoi.game.errors import InvalidInputError, RecordError
from koikoi.game.record import GameRecord, iter_steps
from koikoi.game.views import PlayerView
from koikoi.lab.arena import wilson
from koikoi.lab.guan import import_guan
from koikoi.lab.human import KINDS, Decision, agreement, decisions, load_games

FIXTURES = Path(__file__).resolve().parent / "data" / "guan"
CREATED = "2024-05-01T12:00:00Z"


@pytest.fixture(scope="module")
def record() -> GameRecord:
    return import_guan(FIXTURES / "6.json", created=CREATED)


@pytest.fixture(scope="module")
def found(record: GameRecord) -> list[Decision]:
    return list(decisions(record, game="6.json"))


class Spy:
    """Plays what a table says (the recorded move, or not) and keeps what it was shown."""

    name = "spy"

    def __init__(self, moves: dict[int, int]) -> None:
        self.moves = moves
        self.views: list[PlayerView] = []

    def act(self, view: PlayerView, rng: random.Random) -> int:
        self.views.append(view)
        return self.moves.get(len(self.views), view.legal_ids[0])


def use_agent(monkeypatch: pytest.MonkeyPatch, agent: Any) -> None:
    monkeypatch.setitem(base.AGENT_KINDS, "spy", lambda params, arg: agent)


def test_decisions_are_the_recorded_choices(record: GameRecord, found: list[Decision]) -> None:
    steps = list(iter_steps(record))
    expected = []
    for before, step in itertools.pairwise(steps):
        if step.action is None:
            continue
        legal = before.round.legal_ids()
        if len(legal) > 1:
            expected.append((step.index, step.action.player, parse_action(step.action.action).id))
    assert [(d.index, d.view.player, d.recorded) for d in found] == expected
    # Only decisions with a choice; every recorded move is among the legal ones.
    assert all(len(d.view.legal_ids) > 1 and d.recorded in d.view.legal_ids for d in found)
    kinds = {k: sum(1 for d in found if d.kind == k) for k in KINDS}
    texts = [a.action for a in record.actions]
    assert kinds["koikoi"] == texts.count("koikoi") + texts.count("stop")
    assert kinds["drawn"] == sum(1 for t in texts if t.startswith("take"))
    assert kinds["hand"] == len(found) - kinds["koikoi"] - kinds["drawn"] > 0
    # Some hand plays had no choice (one card left that cannot choose a capture).
    plays = sum(1 for t in texts if t.startswith("play"))
    assert kinds["hand"] < plays


def test_the_agent_sees_only_the_deciders_view(
    monkeypatch: pytest.MonkeyPatch, record: GameRecord, found: list[Decision]
) -> None:
    spy = Spy({})
    use_agent(monkeypatch, spy)
    agreement(found, "spy")
    assert len(spy.views) == len(found)
    steps = {s.index: s for s in iter_steps(record)}
    for view, d in zip(spy.views, found, strict=True):
        assert isinstance(view, PlayerView)
        before = steps[d.index - 1].round
        p = view.player
        assert p is not None and p == before.current
        assert view.hand == before.hands[p]
        assert view.field == before.field
        assert view.legal_ids == tuple(before.legal_ids())
        assert view.history == ()
        # The opponent's hand and the stock are only counted, never shown.
        hidden = before.hands[1 - p] | sum(1 << c for c in before.stock)
        assert view.unseen == hidden
        assert view.hand_counts[1 - p] == before.hands[1 - p].bit_count()


def test_counts_rates_intervals_and_chance(
    monkeypatch: pytest.MonkeyPatch, found: list[Decision]
) -> None:
    # Agree on every third decision exactly.
    moves = {}
    for i, d in enumerate(found, 1):
        other = next(a for a in d.view.legal_ids if a != d.recorded)
        moves[i] = d.recorded if i % 3 == 0 else other
    use_agent(monkeypatch, Spy(moves))
    result = agreement(found, "spy")
    assert result["decisions"] == len(found)
    for kind in KINDS:
        mine = [(i, d) for i, d in enumerate(found, 1) if d.kind == kind]
        tally = result["kinds"][kind]
        agreed = sum(1 for i, _ in mine if i % 3 == 0)
        assert tally["decisions"] == len(mine)
        assert tally["agreed"] == agreed
        assert tally["rate"] == pytest.approx(agreed / len(mine))
        assert tally["ci95"] == pytest.approx(list(wilson(agreed, len(mine))))
        chance = sum(1 / len(d.view.legal_ids) for _, d in mine) / len(mine)
        assert tally["chance"] == pytest.approx(chance)
    assert result["all"]["agreed"] == len(found) // 3


def test_an_agent_that_plays_the_recorded_moves_agrees_always(
    monkeypatch: pytest.MonkeyPatch, found: list[Decision]
) -> None:
    use_agent(monkeypatch, Spy({i: d.recorded for i, d in enumerate(found, 1)}))
    result = agreement(found, "spy")
    assert result["all"]["rate"] == 1.0
    assert all(result["kinds"][k]["ci95"][1] == 1.0 for k in KINDS)


def test_an_illegal_choice_is_an_error(
    monkeypatch: pytest.MonkeyPatch, found: list[Decision]
) -> None:
    use_agent(monkeypatch, Spy({1: 2449 if 2449 not in found[0].view.legal_ids else 0}))
    with pytest.raises(InvalidInputError, match=r"agent 'spy' chose \d+, which is not legal"):
        agreement(found, "spy")


def test_random_agreement_is_near_chance_and_repeatable(found: list[Decision]) -> None:
    a = agreement(found, "random", seed=3)
    assert a["kinds"] == agreement(found, "random", seed=3)["kinds"]
    assert a["kinds"] != agreement(found, "random", seed=4)["kinds"]
    lo, hi = a["all"]["ci95"]
    assert lo < a["all"]["chance"] < hi


def test_workers_share_the_decisions_and_count_the_same(found: list[Decision]) -> None:
    one = agreement(found, "random", seed=5)
    two = agreement(found, "random", seed=5, workers=3)
    assert two["kinds"] == one["kinds"]
    assert two["all"] == one["all"]
    with pytest.raises(InvalidInputError, match="workers must be a whole number of 1 or more"):
        agreement(found, "random", workers=0)


def test_load_games_reads_both_formats(tmp_path: Path, record: GameRecord) -> None:
    record.save(tmp_path / "a.json")
    (tmp_path / "b.json").write_text((FIXTURES / "59.json").read_text(encoding="utf-8"))
    games = load_games([tmp_path])
    assert [name for name, _ in games] == ["a.json", "b.json"]
    assert games[0][1].actions == record.actions
    assert games[1][1].players == ["Guan-1", "Guan-2"]
    assert [n for n, _ in load_games([FIXTURES], limit=2)] == ["1.json", "6.json"]
    (tmp_path / "c.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="neither a koikoi record nor a Guan game file"):
        load_games([tmp_path / "c.json"])
    with pytest.raises(InvalidInputError, match="--games must be 1 or more"):
        load_games([tmp_path], limit=0)


def test_bench_human_command(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "human", str(FIXTURES), "--agent", "random", "--agent", "greedy"]
    assert main([*argv, "--games", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["games"] == 3
    assert data["command"] == (
        f"koikoi bench human {FIXTURES} --agent random --agent greedy --games 3 --seed 0"
    )
    assert [r["agent"] for r in data["agents"]] == ["random", "greedy"]
    for r in data["agents"]:
        assert set(r["kinds"]) == set(KINDS)
        assert r["all"]["decisions"] == sum(r["kinds"][k]["decisions"] for k in KINDS)
    assert main([*argv, "--games", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("command: koikoi bench human")
    for label in ("hand play", "drawn-card choice", "koi-koi decision", "95% CI", "chance"):
        assert label in out


def test_bench_human_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["bench", "human", str(FIXTURES), "--agent", "nobody"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    assert main(["bench", "human", str(tmp_path)]) == 2
    assert "holds no .json file" in capsys.readouterr().err
    assert main(["bench", "human", str(FIXTURES), "--workers", "0"]) == 2
    assert "--workers must be 1 or more, not 0" in capsys.readouterr().err
