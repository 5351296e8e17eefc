"""The help screen's yaku table follows the active rules; the koi-koi dialog says what
stopping means for the match in its last round."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tui_driver import (
    find_seed,
    game_screen,
    greedy_policy,
    make_app,
    next_prompt,
    plain,
    play_until,
    wait_for,
)

from koikoi.features.rules_help import yaku_rows
from koikoi.game.engine import Phase
from koikoi.game.rules import Rules, get_rules
from koikoi.game.scoring import Scorer, YakuResult
from koikoi.game.views import PlayerView
from koikoi.tui.controller import HUMAN
from koikoi.tui.dialogs import KoiKoiDialog, KoiKoiFacts, match_after_stop
from koikoi.tui.screens import HelpScreen

pytestmark = pytest.mark.anyio


def human_turns(n: int) -> tuple[Callable[[PlayerView], int], Callable[[str], bool]]:
    """Stop at the human's prompt after ``n`` human actions (greedy ones)."""
    count = {"n": 0}

    def policy(view: PlayerView) -> int:
        count["n"] += 1
        return greedy_policy(view)

    def stop(prompt: str) -> bool:
        return prompt in ("play", "take", "decide") and count["n"] >= n

    return policy, stop


@pytest.mark.parametrize("preset", ["nintendo", "leaflet", "modern-hanafuda"])
async def test_help_shows_the_active_rules_yaku_with_their_points(
    tmp_path: Path, preset: str
) -> None:
    rules = get_rules(preset).replace(game__rounds=1)
    app = make_app(rules, 4, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await next_prompt(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = plain(app.screen.query_one("#help-text"), width=110)
    assert f"Yaku of the rules '{rules.name}'" in text
    lines = text.splitlines()
    expected = yaku_rows(rules)
    for row in expected:
        line = next(x for x in lines if x.strip().startswith(row.english + " "))
        # Name, Japanese name, what it needs and the points, on one line.
        assert row.japanese in line and row.needs in line, line
        assert line.split()[-1] == str(row.points), line
    every = {r.english for p in ("nintendo", "modern-hanafuda") for r in yaku_rows(get_rules(p))}
    shown = {name for name in every if any(x.strip().startswith(name + " ") for x in lines)}
    assert shown == {r.english for r in expected}


def test_leaflet_and_nintendo_help_tables_differ() -> None:
    from rich.console import Console

    from koikoi.tui.screens import yaku_table

    def render(rules: Rules) -> str:
        console = Console(width=110, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(yaku_table(rules))
        return console.export_text()

    nintendo, leaflet = render(get_rules("nintendo")), render(get_rules("leaflet"))
    goko = [line for line in nintendo.splitlines() if "Five Brights" in line]
    assert goko[0].split()[-1] == "10"
    goko = [line for line in leaflet.splitlines() if "Five Brights" in line]
    assert goko[0].split()[-1] == "15"
    assert "Flower viewing" in nintendo and "Flower viewing" not in leaflet


# ------------------------------------------------------------------ koi-koi


def _facts(
    rules: Rules,
    *,
    points: int,
    scores: tuple[int, int],
    round_number: int,
    rounds: int,
    dealer: int = 0,
) -> KoiKoiFacts:
    stop = Scorer(rules).award(HUMAN, points, "stop")
    return KoiKoiFacts(
        rules=rules,
        yaku=YakuResult((), 0),
        stop=stop,
        stop_text="",
        opponent="AI",
        opponent_calls=0,
        own_calls=0,
        opponent_score=0,
        hand_counts=(3, 3),
        stock_count=10,
        round_number=round_number,
        rounds=rounds,
        match_scores=scores,
        dealer=dealer,
    )


def test_match_after_stop_in_words() -> None:
    rules = get_rules("nintendo")
    last = {"round_number": 12, "rounds": 12}
    assert (
        match_after_stop(_facts(rules, points=6, scores=(33, 35), **last))
        == "Stopping now wins the match 39–35."
    )
    assert (
        match_after_stop(_facts(rules, points=1, scores=(20, 35), **last))
        == "Stopping now loses the match 35–21 to AI."
    )
    assert (
        match_after_stop(_facts(rules, points=5, scores=(30, 35), **last))
        == "Stopping now ends the match in a draw, 35–35."
    )
    # A tie goes to the dealer under match_tie = "dealer".
    tie = rules.replace(game__match_tie="dealer")
    assert match_after_stop(_facts(tie, points=5, scores=(30, 35), dealer=1, **last)) == (
        "Stopping now loses the match 35–35 to AI."
    )
    # Not the last round: nothing to say about the match.
    assert (
        match_after_stop(_facts(rules, points=6, scores=(0, 0), round_number=3, rounds=12)) is None
    )
    # Zero-sum: stopping that empties the opponent's score ends the match early.
    japan = get_rules("koikoi-japan")
    facts = _facts(japan, points=5, scores=(31, 5), round_number=2, rounds=8)
    assert match_after_stop(facts) == "Stopping now wins the match 36–0."
    below = _facts(japan, points=6, scores=(30, 5), round_number=2, rounds=8)
    assert match_after_stop(below) == "Stopping now wins the match 36 to −1."
    assert (
        match_after_stop(_facts(japan, points=1, scores=(30, 30), round_number=2, rounds=8)) is None
    )


async def test_koikoi_dialog_in_the_last_round_says_what_stopping_means(tmp_path: Path) -> None:
    rules = get_rules("nintendo").replace(game__rounds=1)
    seed, n = find_seed(rules, lambda v: v.phase is Phase.DECIDE, opponent="test-advisor")
    app = make_app(rules, seed, tmp_path, opponent="test-advisor")
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        assert await play_until(pilot, app, policy, stop) == "decide"
        dialog = app.screen
        assert isinstance(dialog, KoiKoiDialog)
        game = game_screen(app).game
        preview = game.stop_preview()
        scores = game.view().match_scores
        mine = scores[0] + preview.deltas[0]
        theirs = scores[1] + preview.deltas[1]
        body = dialog.body_text().plain
        if mine > theirs:
            assert f"Stopping now wins the match {mine}–{theirs}." in body
        elif mine < theirs:
            assert f"Stopping now loses the match {theirs}–{mine} to " in body
        else:
            assert f"Stopping now ends the match in a draw, {mine}–{theirs}." in body


async def test_koikoi_dialog_before_the_last_round_says_nothing_of_the_match(
    tmp_path: Path,
) -> None:
    rules = get_rules("nintendo").replace(game__rounds=3)
    seed, n = find_seed(
        rules, lambda v: v.phase is Phase.DECIDE and v.round_number == 1, opponent="test-advisor"
    )
    app = make_app(rules, seed, tmp_path, opponent="test-advisor")
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        assert await play_until(pilot, app, policy, stop) == "decide"
        dialog = app.screen
        assert isinstance(dialog, KoiKoiDialog)
        assert "the match" not in dialog.body_text().plain
