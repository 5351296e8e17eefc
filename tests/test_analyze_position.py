"""koikoi analyze --position: every legal action of one position, valued."""

from __future__ import annotations

import json

import pytest

from koikoi.cli import main
from koikoi.game.engine import Match
from koikoi.game.positions import position


def _text() -> str:
    return position(Match(seed=3, events=False))


def test_json_lists_every_legal_action(capsys: pytest.CaptureFixture[str]) -> None:
    text = _text()
    assert main(["analyze", "--position", text, "--agent", "mcts:iterations=20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    legal = Match(seed=3, events=False).legal_ids()
    assert sorted(a["id"] for a in out["actions"]) == sorted(legal)
    values = [a["points"] for a in out["actions"]]
    assert values == sorted(values, reverse=True)
    assert out["best"] == out["actions"][0]["action"]


def test_view_position_of_the_player_to_act(capsys: pytest.CaptureFixture[str]) -> None:
    m = Match(seed=3, events=False)
    text = position(m, player=m.current)
    assert main(["analyze", "--position", text, "--agent", "mcts:iterations=20"]) == 0
    assert "Best: play" in capsys.readouterr().out
    other = position(m, player=1 - m.current)
    assert main(["analyze", "--position", other, "--agent", "mcts:iterations=20"]) == 2
    assert "only the player to act" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["analyze"], "give either a RECORD file or --position"),
        (["analyze", "--position", "nintendo round=1/12"], "missing fields"),
        (["analyze", "--position", "x", "--agent", "random"], "cannot evaluate"),
        (["analyze", "r.json", "--rules", "leaflet"], "--rules goes with --position"),
    ],
)
def test_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
