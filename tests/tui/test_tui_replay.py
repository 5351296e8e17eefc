"""The terminal replay viewer (``koikoi replay FILE --tui``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tui_driver import greedy_policy, plain

from koikoi.cli import main
from koikoi.game.cards import card_list
from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord, load_record
from koikoi.game.rules import get_rules
from koikoi.tui.controller import GameController
from koikoi.tui.replay import ReplayApp, ReplayScreen, load_steps, run_replay, step_text
from koikoi.tui.widgets import CardRow

RULES = get_rules("nintendo").replace(game__rounds=2)


@pytest.fixture(scope="module")
def record() -> GameRecord:
    game = GameController(RULES, opponent="random", seed=6)
    while not game.is_over:
        game.apply(
            greedy_policy(game.view()) if game.human_to_act else game.choose_opponent_action()
        )
    return GameRecord.from_match(game.match, players=["alice", "bob"], created="2024-01-01")


@pytest.mark.anyio
async def test_steps_forwards_and_backwards_with_both_hands_shown(record: GameRecord) -> None:
    app = ReplayApp(record)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        steps = screen.steps
        assert screen.index == 0 and steps[0].kind == "deal"

        def shows(i: int) -> None:
            step = steps[i]
            assert screen.index == i
            for p in (0, 1):
                hand = screen.query_one(f"#rp-hand{p}", CardRow).cards
                assert hand == card_list(step.view(p).hand)
            assert screen.query_one("#rp-field", CardRow).cards == card_list(step.view().field)
            assert f"Replay {i}/{len(steps) - 1}" in plain(screen.query_one("#rp-status"))

        shows(0)
        await pilot.press("right", "right", "right")
        shows(3)
        assert steps[3].action is not None
        text = plain(screen.query_one("#rp-step-text"))
        assert text.startswith(f"{record.players[steps[3].action.player]}: ")
        await pilot.press("left")
        shows(2)
        await pilot.press("pagedown")
        second_deal = next(s.index for s in steps if s.kind == "deal" and s.index > 0)
        shows(second_deal)
        await pilot.press("pageup")
        shows(0)
        await pilot.press("end")
        shows(len(steps) - 1)
        await pilot.press("right")  # at the end: stays
        shows(len(steps) - 1)
        await pilot.press("home")
        shows(0)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


def test_a_round_ending_step_explains_the_settlement(record: GameRecord) -> None:
    steps = load_steps(record)
    ending = [s for s in steps if any(e.kind == "round_over" for e in s.events)]
    assert ending
    names = ("alice", "bob")
    for step in ending:
        text = step_text(step, names).plain
        assert "Round settled" in text
        assert "Player 0" not in text and "Player 1" not in text
    first = step_text(steps[1], names).plain
    assert "alice" in first or "bob" in first
    assert " plays " in first or " play " not in first


def test_a_record_that_does_not_replay_is_an_error_before_the_screen(
    record: GameRecord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = record.to_dict()
    data["actions"][2]["action"] = "stop"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    opened: list[Any] = []
    monkeypatch.setattr(ReplayApp, "run", lambda self, *a, **k: opened.append(self))
    with pytest.raises(RecordError, match="action 3"):
        run_replay(load_record(path))
    assert main(["replay", str(path), "--tui"]) == 2
    assert not opened
    good = tmp_path / "good.json"
    record.save(good)
    assert main(["replay", str(good), "--tui"]) == 0
    assert len(opened) == 1 and len(opened[0].steps) > 2


@pytest.mark.anyio
async def test_two_players_of_one_agent_are_told_apart(record: GameRecord) -> None:
    """A record of one agent against itself names both players "random"."""
    from dataclasses import replace

    # identities=[]: worked out from the names, as in a record of koikoi simulate
    app = ReplayApp(replace(record, players=["random", "random"], identities=[]))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert plain(screen.query_one("#rp-p0-label")).startswith("random A — hand")
        assert plain(screen.query_one("#rp-p1-label")).startswith("random B — hand")


@pytest.mark.anyio
async def test_each_step_is_told_in_words_with_its_mistake_marked(record: GameRecord) -> None:
    from koikoi.features.narrate import Mistake

    steps = load_steps(record)
    third = steps[3]
    assert third.action is not None
    mistake = Mistake(3, third.action.player, 2.46, third.action.action, "stop")
    app = ReplayApp(record, mistakes={3: mistake})
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("right")
        text = plain(screen.query_one("#rp-step-text"))
        who = record.players[steps[1].action.player] if steps[1].action else "?"
        assert f"{who} plays " in text and f"; {who} draws " in text
        assert "Mistake" not in text
        await pilot.press("m")  # the next mistake
        assert screen.index == 3
        text = plain(screen.query_one("#rp-step-text"))
        assert "Mistake: −2.5 points; better: stop (shōbu)." in text
        await pilot.press("end")
        text = plain(screen.query_one("#rp-step-text"))
        assert "Round settled" in text and "The match is over: " in text
