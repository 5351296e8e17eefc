"""Pilot tests: whole rounds played through the screen, checked against the engine.

The AI opponent is "random" (or a test agent with an ``evaluate``) and the seeds
are searched at test time with :func:`find_seed`, so each test meets its
situation (a two-match choice, a koi-koi decision...) whatever the engine's
shuffles are. The opponent's pace is 0.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from textual.widgets import Button, RichLog
from tui_driver import (
    AdvisingAgent,
    do_action,
    find_seed,
    game_screen,
    greedy_policy,
    make_app,
    next_prompt,
    notifications,
    plain,
    play_until,
    reach,
    wait_for,
    waiting,
)

from koikoi.game.actions import DISCARD_BASE, KOIKOI_ID, PLAY_TARGET_BASE, TAKE_BASE
from koikoi.game.cards import CODES, MONTH_NAMES, card_list
from koikoi.game.engine import Phase
from koikoi.game.record import load_record, replay
from koikoi.game.rules import Rules, get_rules
from koikoi.game.views import PlayerView
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.controller import (
    HUMAN,
    OPPONENT,
    GameController,
    RoundResult,
    action_text,
    interchangeable,
    narrate,
    plays_by_card,
)
from koikoi.tui.dialogs import ChooseDialog, HintDialog, KoiKoiDialog, QuitDialog
from koikoi.tui.game import GameScreen, status_line
from koikoi.tui.saves import load_game
from koikoi.tui.screens import (
    OPPONENT_CHOICES,
    CapturesScreen,
    HelpScreen,
    MatchEndScreen,
    NewGameScreen,
    RoundEndScreen,
)
from koikoi.tui.widgets import CardRow, TooSmall

ONE_ROUND = get_rules("nintendo").replace(game__rounds=1)

pytestmark = pytest.mark.anyio


def log_text(screen: GameScreen) -> str:
    return "\n".join(strip.text for strip in screen.query_one("#log", RichLog).lines)


def until(*prompts: str):  # type: ignore[no-untyped-def]
    return lambda prompt: prompt in prompts


def human_turns(n: int):  # type: ignore[no-untyped-def]
    """Stop at the human's prompt after ``n`` human actions."""
    count = {"n": 0}

    def policy(view):  # type: ignore[no-untyped-def]
        count["n"] += 1
        return greedy_policy(view)

    def stop(prompt: str) -> bool:
        return prompt in ("play", "take", "decide") and count["n"] >= n

    return policy, stop


async def test_the_table_shows_the_humans_view(tmp_path: Path) -> None:
    app = make_app(ONE_ROUND, 3, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await next_prompt(pilot, app) == "play"
        screen = game_screen(app)
        view = screen.game.view()
        assert view.is_my_turn
        assert screen.query_one("#hand", CardRow).cards == card_list(view.hand)
        assert screen.query_one("#field", CardRow).cards == card_list(view.field)
        status = plain(screen.query_one("#status"))
        assert "Round 1/1" in status and MONTH_NAMES[0] in status
        assert f"Stock {view.stock_count}" in status
        assert f"Dealer: {screen.game.names[view.dealer]}" in status
        opponent = plain(screen.query_one("#opponent-line"))
        assert opponent.count("▒▒") == view.opponent_hand_count
        assert f"{view.opponent_hand_count} in hand" in opponent
        for player, pile_id in ((OPPONENT, "#opponent-pile"), (HUMAN, "#my-pile")):
            text = plain(screen.query_one(pile_id))
            assert f"Brights {bin(view.piles[player] & 0x10010100101).count('1')}" in text
        # Hand cards that match the field are marked with their number of matches.
        hand = screen.query_one("#hand", CardRow)
        for card in card_list(view.hand):
            matches = (view.field >> (4 * (card // 4)) & 0b1111).bit_count()
            assert ("▲" in hand.marker(card).text) == bool(matches)
        # The opponent's hand is never drawn: no chip of it on the screen.
        hidden = screen.game.match.round.hands[OPPONENT]
        shown = set(hand.cards) | set(screen.query_one("#field", CardRow).cards)
        assert not shown & set(card_list(hidden))


def real_choice(ids: list[int]) -> bool:
    return len(ids) > 1 and not interchangeable(ids)


async def test_a_play_with_two_matching_field_cards_asks_which(tmp_path: Path) -> None:
    seed, n = find_seed(ONE_ROUND, lambda v: any(map(real_choice, plays_by_card(v).values())))
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        await play_until(pilot, app, policy, stop)
        screen = game_screen(app)
        view = screen.game.view()
        card, ids = next((c, ids) for c, ids in plays_by_card(view).items() if real_choice(ids))
        before = len(screen.game.match.actions)
        key = str(card_list(view.hand).index(card) + 1)
        await pilot.press(key)
        # The field marks the two cards the chosen card can capture.
        field = screen.query_one("#field", CardRow)
        targets = [(a - PLAY_TARGET_BASE) % 48 for a in ids]
        assert [c for c in field.cards if field.marker(c).text] == sorted(targets)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
        dialog = app.screen
        assert isinstance(dialog, ChooseDialog)
        assert [o.card for o in dialog.options] == targets
        await pilot.press("escape")  # cancel: nothing is played
        await pilot.pause()
        assert len(screen.game.match.actions) == before and waiting(app) == "play"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
        await pilot.press("2")
        await wait_for(pilot, lambda: len(screen.game.match.actions) > before)
        assert screen.game.match.actions[before] == ids[1]
        pile = screen.game.view().piles[HUMAN]
        assert pile >> card & 1 and pile >> targets[1] & 1
        assert not screen.game.view().field >> targets[1] & 1


async def test_clicking_a_card_then_a_field_card_plays_onto_it(tmp_path: Path) -> None:
    seed, n = find_seed(ONE_ROUND, lambda v: any(len(o) > 1 for o in plays_by_card(v).values()))
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        await play_until(pilot, app, policy, stop)
        screen = game_screen(app)
        view = screen.game.view()
        card, ids = next((c, ids) for c, ids in plays_by_card(view).items() if len(ids) > 1)
        hand = screen.query_one("#hand", CardRow)
        field = screen.query_one("#field", CardRow)
        before = len(screen.game.match.actions)
        i = hand.cards.index(card)
        assert await pilot.click(hand, offset=(10 * (i % 8) + 2, 1))
        assert screen.selected == card
        target = (ids[0] - PLAY_TARGET_BASE) % 48
        j = field.cards.index(target)
        assert await pilot.click(field, offset=(10 * (j % 8) + 2, 4 * (j // 8) + 1))
        await wait_for(pilot, lambda: len(screen.game.match.actions) > before)
        assert screen.game.match.actions[before] == ids[0]


async def test_a_drawn_card_with_two_matches_asks_which(tmp_path: Path) -> None:
    seed, n = find_seed(
        ONE_ROUND, lambda v: v.phase is Phase.TAKE and not interchangeable(v.legal_ids)
    )
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        assert await play_until(pilot, app, policy, stop) == "take"
        screen = game_screen(app)
        view = screen.game.view()
        dialog = app.screen
        assert isinstance(dialog, ChooseDialog) and not dialog.cancellable
        assert [o.action_id for o in dialog.options] == list(view.legal_ids)
        assert "You drew" in dialog.prompt and str(view.drawn) not in ("", None)
        # The drawn card is announced on the table too.
        assert "Drawn:" in plain(screen.query_one("#field-label"))
        await pilot.press("escape")  # not cancellable: still waiting
        assert app.screen is dialog
        await do_action(pilot, app, view.legal_ids[1])
        target = view.legal_ids[1] - TAKE_BASE
        assert screen.game.view().piles[HUMAN] >> target & 1
        assert screen.game.view().piles[HUMAN] >> view.drawn & 1
        assert "capture" in " ".join(screen.turn_lines)


async def test_koikoi_decision_round_end_and_match_end(tmp_path: Path) -> None:
    seed, n = find_seed(
        ONE_ROUND,
        lambda v: v.phase is Phase.DECIDE and v.hand_counts[HUMAN] >= 2,
        opponent="test-advisor",
    )
    app = make_app(ONE_ROUND, seed, tmp_path, opponent="test-advisor")
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        assert await play_until(pilot, app, policy, stop) == "decide"
        game = game_screen(app).game
        dialog = app.screen
        assert isinstance(dialog, KoiKoiDialog)
        body = dialog.body_text().plain
        for y in game.current_yaku(HUMAN).yaku:
            assert y.describe() in body
        preview = game.stop_preview()
        assert f"Stop now and you score {preview.points}" in body
        # Enter does not decide by accident; the AI's advice on request.
        before = len(game.match.actions)
        await pilot.press("enter")
        assert app.screen is dialog and len(game.match.actions) == before
        await pilot.press("a")
        await wait_for(pilot, lambda: dialog.advice is not None)
        advice = plain(dialog.query_one("#kk-advice"))
        assert "koi-koi" in advice and "stop" in advice
        await do_action(pilot, app, KOIKOI_ID)
        assert game.view().koikoi_calls[HUMAN] == 1
        assert "You call KOI-KOI and play on." in log_text(game_screen(app))
        # Play the round out; the round-end screen explains the settlement.
        prompt = await play_until(pilot, app, greedy_policy, until("round_end"))
        assert prompt == "round_end"
        end = app.screen
        assert isinstance(end, RoundEndScreen)
        settlement = game.match.settlements[0]
        assert end.result.settlement == settlement
        explained = plain(end.query_one("#re-explain"))
        assert explained == game.explain(settlement)
        for y in settlement.yaku:
            assert y.describe() in explained
        piles = plain(end.query_one("#re-piles"))
        assert "Brights" in piles and "Plains" in piles
        assert f"Score: You {game.match.scores[0]}" in plain(end.query_one("#re-scores"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MatchEndScreen))
        final = app.screen
        assert isinstance(final, MatchEndScreen)
        title = plain(final.query_one("#me-title"))
        s0, s1 = game.match.scores
        assert (f"{s0} to {s1}" in title) or (f"{s1} to {s0}" in title)
        table = plain(final.query_one("#me-table"))
        assert "Pine" in table
        record_path = game_screen(app).record_path
        assert record_path is not None and record_path.parent == tmp_path / "records"
        assert replay(load_record(record_path)).scores == game.match.scores
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))


async def test_the_opponents_moves_are_told_step_by_step(tmp_path: Path) -> None:
    app = make_app(ONE_ROUND, 8, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        screen = game_screen(app)
        game = screen.game
        for _ in range(3):
            await do_action(pilot, app, greedy_policy(game.view()))
            await next_prompt(pilot, app)
        log = " ".join(strip.text.strip() for strip in screen.query_one("#log", RichLog).lines)
        told = [narrate(e, game.names) for e in game.view().history]
        lines = [line for line in told if line]
        assert lines and all(line in log for line in lines)
        # The last opponent turn is in the two-line turn report.
        opponent = [
            narrate(e, game.names)
            for e in game.view().history
            if e.player == OPPONENT and e.kind in ("play", "draw", "take")
        ][-2:]
        assert screen.turn_lines == [line for line in opponent if line]


async def test_the_opponents_turn_goes_at_the_pace_and_can_be_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thought = asyncio.Event()

    async def no_clock(self: GameScreen, seconds: float) -> None:
        """No clock decides this test: the opponent thinks until the test lets it play,
        and each step it shows lasts until the player skips."""
        if seconds > 0:
            await (thought if self.state == "opponent" else self._skip).wait()

    monkeypatch.setattr(GameScreen, "_sleep", no_clock)
    seed, _ = find_seed(ONE_ROUND, lambda v: v.dealer == OPPONENT and v.round_number == 1)
    app = make_app(ONE_ROUND, seed, tmp_path, pace=2.5)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = game_screen(app)
        start = screen.game.table()
        thought.set()
        # The AI's play is shown first, its draw only later...
        await wait_for(pilot, lambda: screen._table.opponent_count == start.opponent_count - 1)
        assert screen.state == "animating"
        assert screen._table.stock_count == start.stock_count
        assert len(screen.turn_lines) == 1 and "plays" in screen.turn_lines[0]
        # ...unless the player skips: Space shows the rest at once.
        await pilot.press("space")
        await wait_for(pilot, lambda: waiting(app) == "play")
        assert screen._table.stock_count == start.stock_count - 1
        # The pace is configurable while playing.
        await pilot.press("minus")
        assert screen.pace == 1.5
        await pilot.press("minus")
        assert screen.pace == 0.8
        await pilot.press("plus")
        assert screen.pace == 1.5


@pytest.mark.parametrize("opponent", ["random", "test-advisor"])
async def test_hints_come_from_the_advisor_whatever_the_opponent(
    tmp_path: Path, opponent: str
) -> None:
    rules = get_rules("nintendo").replace(game__rounds=2)
    app = make_app(rules, 2, tmp_path, opponent=opponent)
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        view = game_screen(app).game.view()
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HintDialog))
        hint = app.screen
        assert isinstance(hint, HintDialog)
        values = AdvisingAgent().evaluate_detail(view, None)
        assert hint.values == values
        text = plain(hint.query_one("#message-text"))
        lines = text.splitlines()
        assert len(lines) == len(view.legal_ids)
        assert "chance to win the match" in plain(hint.query_one("#hint-head"))
        # Ranked by what the advisor maximises (match-win chance), with units.
        best = max(view.legal_ids, key=lambda a: (values[a].key, -a))
        assert lines[0].endswith("← best") and action_text(best) in lines[0]
        eq = values[best].equity
        assert eq is not None and f"{values[best].points:+.1f} points" in lines[0]
        assert f"{round(100 * eq)}% match win" in lines[0]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, GameScreen)


@pytest.mark.parametrize("opponent", [*(spec for spec, _ in OPPONENT_CHOICES), "greedy"])
async def test_hints_work_against_any_opponent(tmp_path: Path, opponent: str) -> None:
    """Regression: against greedy there used to be "no hint available for this
    opponent". The real expert (a small budget) gives the hint whatever the opponent:
    every level the new-game screen offers, and an agent given on the command line."""
    app = make_app(ONE_ROUND, 2, tmp_path, opponent=opponent, advisor="expert:iterations=8")
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        view = game_screen(app).game.view()
        await pilot.press("h")
        await wait_for(pilot, lambda: bool(app.screen.query("#message-text")), timeout=60)
        hint = app.screen
        assert isinstance(hint, HintDialog)
        assert set(hint.values) == set(view.legal_ids)
        text = plain(hint.query_one("#message-text"))
        assert "No hint" not in text and " points" in text and "← best" in text
        # One round is played for its points: no match-win chance to show.
        assert "match win" not in text
        assert not any("No hint" in m for m in notifications(app))


async def test_save_and_resume_a_match(tmp_path: Path) -> None:
    rules = get_rules("nintendo").replace(game__rounds=2)
    app = make_app(rules, 21, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, *human_turns(5))
        screen = game_screen(app)
        before = screen.game.view()
        moves = list(screen.game.match.actions)
        await pilot.press("s")
        await pilot.pause()
        path = tmp_path / "saves" / "koikoi-save-seed21.json"
        assert path.exists() and any("Saved to" in m for m in notifications(app))
    saved = load_game(path)
    assert list(saved.actions) == moves and saved.opponent == "random"
    resumed = KoiKoiApp(
        saved=saved,
        save_path=path,
        records=tmp_path / "records",
        pace=0.0,
        advisor="test-advisor",
    )
    async with resumed.run_test(size=(80, 24)) as pilot:
        assert await next_prompt(pilot, resumed) == "play"
        screen = game_screen(resumed)
        assert screen.game.view() == before
        assert screen.query_one("#hand", CardRow).cards == card_list(before.hand)
        assert screen.query_one("#field", CardRow).cards == card_list(before.field)
        # Ctrl+C offers to save: saving again overwrites the same file and quits.
        await do_action(pilot, resumed, greedy_policy(before))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(resumed.screen, QuitDialog))
        await pilot.press("s")
        await wait_for(pilot, lambda: not resumed.is_running, timeout=10)
    assert len(load_game(path).actions) > len(moves)


async def test_a_lost_terminal_saves_the_match_and_exits(tmp_path: Path) -> None:
    """Closing the terminal window (hang-up) saves the unfinished match, as ``s`` would."""
    rules = get_rules("nintendo").replace(game__rounds=2)
    app = make_app(rules, 23, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, *human_turns(3))
        moves = list(game_screen(app).game.match.actions)
        app.hang_up()
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
    saved = load_game(tmp_path / "saves" / "koikoi-save-seed23.json")
    assert list(saved.actions) == moves and saved.seed == 23


async def test_new_game_screen_starts_the_chosen_match(tmp_path: Path) -> None:
    app = KoiKoiApp(
        records=tmp_path / "records", saves=tmp_path / "saves", pace=0.0, advisor="test-advisor"
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        screen = app.screen
        from textual.widgets import Input, Select

        # The levels are offered, the expert (level 8) first chosen, each described.
        opponent = screen.query_one("#opponent", Select)
        assert opponent.value == "expert"
        assert "Level 8 · Expert: The strongest player" in plain(screen.query_one("#ng-level"))
        assert [value for _, value in opponent._options[-8:]] == [
            *(f"level:{n}" for n in range(1, 8)),
            "expert",
        ]
        opponent.value = "level:3"
        await pilot.pause()
        assert "Level 3 · Casual: Plans for yaku" in plain(screen.query_one("#ng-level"))
        opponent.value = "level:2"
        screen.query_one("#preset", Select).value = "leaflet"
        await pilot.pause()
        assert screen.query_one("#rounds", Input).value == "6"
        screen.query_one("#rounds", Input).value = "0"
        await pilot.click("#start")
        assert "out of range" in plain(screen.query_one("#ng-error"))
        screen.query_one("#rounds", Input).value = "2"
        screen.query_one("#house", Input).value = str(tmp_path / "nope.toml")
        await pilot.press("ctrl+s")
        assert "cannot read rules file" in plain(screen.query_one("#ng-error"))
        screen.query_one("#house", Input).value = ""
        screen.query_one("#seed", Input).value = "77"
        screen.query_one("#first-dealer", Select).value = "random"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.game_screen is not None)
        game = game_screen(app).game
        assert game.seed == 77 and game.opponent_spec == "level:2"
        assert game.names[1] == "AI (Beginner)"
        assert game.rules.name == "leaflet" and game.rules.game.rounds == 2
        assert game.rules.game.first_dealer == "random"


async def test_help_and_captures_screens(tmp_path: Path) -> None:
    rules = get_rules("leaflet").replace(game__rounds=1)
    app = make_app(rules, 4, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = plain(app.screen.query_one("#help-text"), width=110)
        for name, points in rules.yaku_points().items():
            assert f" {points}" in text, name
        assert "Five Brights" in text and "Flower viewing" not in text  # leaflet: no viewing
        assert "Rules: leaflet" in text
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CapturesScreen))
        text = plain(app.screen.query_one("#cap-text"))
        assert "Goko" in text and "captured" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, GameScreen)


@pytest.mark.parametrize(("size", "small"), [((60, 20), True), ((80, 24), False)])
async def test_a_small_terminal_asks_to_enlarge(
    tmp_path: Path, size: tuple[int, int], small: bool
) -> None:
    app = make_app(ONE_ROUND, 4, tmp_path)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.game_screen is not None)
        await pilot.pause()
        notice = app.screen.query_one(TooSmall)
        assert notice.display is small
        assert "80 x 24" in plain(notice)


async def test_ctrl_c_on_the_new_game_screen_quits(tmp_path: Path) -> None:
    app = KoiKoiApp(records=tmp_path / "r", saves=tmp_path / "s")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog))
        assert not app.screen.can_save
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, NewGameScreen))
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog))
        assert str(app.screen.query_one("#quit", Button).label) == "Quit (q)"
        await pilot.press("q")  # q quits, as on the table
        await wait_for(pilot, lambda: not app.is_running, timeout=10)


def instant_seed(rules: Rules) -> int:
    """A seed whose match (greedy human, random AI) has a round won by an instant hand."""
    for seed in range(1000):
        game = GameController(rules, opponent="random", seed=seed)
        while not game.is_over:
            if game.human_to_act:
                game.apply(greedy_policy(game.view()))
            else:
                game.step_opponent()
        if any(r.settlement.reason == "instant" for r in game.results):
            return seed
    raise AssertionError("no instant hand in 1000 matches")


async def test_a_round_won_by_an_instant_hand_is_explained(tmp_path: Path) -> None:
    rules = get_rules("nintendo").replace(game__rounds=3)
    seed = instant_seed(rules)
    app = make_app(rules, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        seen: list[tuple[RoundResult, str, bool]] = []
        while True:
            prompt = await play_until(pilot, app, greedy_policy, until("round_end", "match_end"))
            if prompt == "match_end":
                break
            shown = app.screen
            assert isinstance(shown, RoundEndScreen)
            text = plain(shown.query_one("#re-explain"))
            seen.append((shown.result, text, bool(shown.query("#re-piles"))))
            await pilot.press("enter")
            await wait_for(pilot, lambda shown=shown: app.screen is not shown)
        assert [r.round_number for r, _, _ in seen] == [1, 2, 3]
        instant = [(r, text, piles) for r, text, piles in seen if r.settlement.reason == "instant"]
        assert instant
        result, text, piles = instant[0]
        assert result.view is None and not piles
        assert result.settlement.yaku[0].describe() in text and "(instant hand)" in text


async def test_resuming_in_a_later_round_does_not_show_old_rounds_again(tmp_path: Path) -> None:
    rules = get_rules("nintendo").replace(game__rounds=3)
    game = GameController(rules, opponent="random", seed=12)
    while len(game.results) < 1 or not game.human_to_act:
        game.apply(
            greedy_policy(game.view()) if game.human_to_act else game.choose_opponent_action()
        )
    path = game.save(tmp_path / "later.json")
    app = KoiKoiApp(
        saved=load_game(path),
        save_path=path,
        records=tmp_path / "r",
        pace=0.0,
        advisor="test-advisor",
    )
    async with app.run_test(size=(80, 24)) as pilot:
        assert await next_prompt(pilot, app) in ("play", "take", "decide")
        screen = game_screen(app)
        assert screen.game.view() == game.view()
        assert "Round 2/3" in plain(screen.query_one("#status"))


async def test_laying_a_matching_card_without_capturing(tmp_path: Path) -> None:
    rules = get_rules("wikipedia").replace(game__rounds=1)  # hand_card = "any_or_discard"
    seed, n = find_seed(rules, lambda v: any(a >= DISCARD_BASE for a in v.legal_ids))
    app = make_app(rules, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        await play_until(pilot, app, policy, stop)
        game = game_screen(app).game
        view = game.view()
        discard = next(a for a in view.legal_ids if a >= DISCARD_BASE)
        card = discard - DISCARD_BASE
        before = len(game.match.actions)
        key = str(card_list(view.hand).index(card) + 1)
        await pilot.press(key, key)
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
        dialog = app.screen
        assert isinstance(dialog, ChooseDialog)
        labels = [o.label for o in dialog.options]
        assert "Lay it on the field without capturing" in labels
        assert sorted(o.action_id for o in dialog.options) == sorted(plays_by_card(view)[card])
        index = [o.action_id for o in dialog.options].index(discard)
        await pilot.press(str(index + 1))
        await wait_for(pilot, lambda: len(game.match.actions) > before)
        assert game.match.actions[before] == discard
        assert not game.view().piles[HUMAN] >> card & 1


async def test_the_wild_lightning_can_capture_any_field_card(tmp_path: Path) -> None:
    rules = get_rules("compendium").replace(play__wild_lightning=True, game__rounds=1)
    lightning = 43
    seed, n = find_seed(
        rules, lambda v: len(plays_by_card(v).get(lightning, [])) > 2 and v.phase is Phase.PLAY
    )
    app = make_app(rules, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        policy, stop = human_turns(n)
        await play_until(pilot, app, policy, stop)
        screen = game_screen(app)
        view = screen.game.view()
        key = str(card_list(view.hand).index(lightning) + 1)
        await pilot.press(key)
        field = screen.query_one("#field", CardRow)
        assert all(field.marker(c).text for c in field.cards)  # every field card is a target
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
        dialog = app.screen
        assert isinstance(dialog, ChooseDialog)
        assert [o.card for o in dialog.options] == card_list(view.field)
        assert dialog.prompt == "Which field card does it capture?"
        before = len(screen.game.match.actions)
        await pilot.press("2")
        await wait_for(pilot, lambda: len(screen.game.match.actions) > before)
        assert screen.game.match.actions[before] == dialog.options[1].action_id
        pile = screen.game.view().piles[HUMAN]
        assert pile >> lightning & 1 and pile >> dialog.options[1].card & 1


# --------------------------------------------- issue #13: what players saw


def screen_text(app: KoiKoiApp) -> str:
    """What the terminal shows, as text (every screen composed, as drawn)."""
    svg = app.export_screenshot()
    return re.sub(r"<[^>]+>", "", svg).replace("&#160;", " ")


async def test_decisions_leave_the_table_in_view(tmp_path: Path) -> None:
    """The koi-koi decision, the two-match choice and the settlement are panels over the
    lower table: the field and the hand (its [n] keys) stay on screen."""
    seed, n = find_seed(ONE_ROUND, lambda v: any(map(real_choice, plays_by_card(v).values())))
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, *human_turns(n))
        screen = game_screen(app)
        view = screen.game.view()
        card = next(c for c, ids in plays_by_card(view).items() if real_choice(ids))
        await pilot.press(str(card_list(view.hand).index(card) + 1), "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ChooseDialog))
        await pilot.pause()
        shown = screen_text(app)
        assert "[1]" in shown and f"Field ({view.field.bit_count()})" in shown
        box = app.screen.query_one("#choose-box")
        assert box.region.y >= screen.query_one("#hand").region.bottom

    seed, n = find_seed(
        ONE_ROUND,
        lambda v: v.phase is Phase.DECIDE and v.hand_counts[HUMAN] >= 2,
        opponent="test-advisor",
    )
    app = make_app(ONE_ROUND, seed, tmp_path, opponent="test-advisor")
    async with app.run_test(size=(80, 24)) as pilot:
        assert await play_until(pilot, app, *human_turns(n)) == "decide"
        await pilot.pause()
        screen = game_screen(app)
        shown = screen_text(app)
        assert "[1]" in shown and "Stop now and you score" in shown
        box = app.screen.query_one("#kk-dialog")
        assert box.region.y >= screen.query_one("#hand").region.bottom
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, RoundEndScreen))
        await pilot.pause()
        box = app.screen.query_one("#re-box")
        assert box.region.y >= screen.query_one("#field").region.bottom
        assert "── Field" in screen_text(app)


async def test_two_interchangeable_plains_are_not_asked_about(tmp_path: Path) -> None:
    def plains_play(v: PlayerView) -> bool:
        return any(len(o) > 1 and interchangeable(o) for o in plays_by_card(v).values())

    seed, n = find_seed(ONE_ROUND, plains_play)
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, *human_turns(n))
        screen = game_screen(app)
        view = screen.game.view()
        card, ids = next((c, o) for c, o in plays_by_card(view).items() if interchangeable(o))
        before = len(screen.game.match.actions)
        key = str(card_list(view.hand).index(card) + 1)
        await pilot.press(key, "enter")
        await wait_for(pilot, lambda: len(screen.game.match.actions) > before)
        assert not isinstance(app.screen, ChooseDialog)
        assert screen.game.match.actions[before] == min(ids)

    seed, n = find_seed(ONE_ROUND, lambda v: v.phase is Phase.TAKE and interchangeable(v.legal_ids))
    game = GameController(ONE_ROUND, opponent="random", seed=seed, advisor="test-advisor")
    while not (game.human_to_act and game.view().phase is Phase.TAKE):
        if game.human_to_act:
            game.apply(greedy_policy(game.view()))
        else:
            game.step_opponent()
    takes = list(game.view().legal_ids)
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await play_until(pilot, app, *human_turns(n))
        screen = game_screen(app)
        await do_action(pilot, app, greedy_policy(screen.game.view()))
        await wait_for(pilot, lambda: min(takes) in screen.game.match.actions)
        assert waiting(app) != "take"


async def test_the_status_line_keeps_the_opponents_name_at_80x24(tmp_path: Path) -> None:
    seed, _ = find_seed(ONE_ROUND, lambda v: True)
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        status = plain(game_screen(app).query_one("#status"))
        assert "0 – 0 AI (random)" in status
    line = status_line(
        round_text="Round 12/12",
        months=("9 Chrysanthemum 菊 kiku", "9 Chrysanthemum", "Month 9"),
        dealers=("Dealer: AI (heuristic)", "Dealer: AI"),
        stock="Stock 24",
        scores=("You 120 – 135 AI (heuristic)", "You 120 – 135 AI"),
        width=78,
    )
    assert line.cell_len <= 78 and "120 – 135 AI (heuristic)" in line.plain


async def test_log_lines_wrap_at_words_even_after_a_resize(tmp_path: Path) -> None:
    seed, n = find_seed(ONE_ROUND, lambda v: len(v.history) > 12)
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:  # narrower than 110: no side panel
        await play_until(pilot, app, *human_turns(n))
        screen = game_screen(app)
        screen.say("A long line " + "with many words " * 12 + "to wrap.")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        log = screen.query_one("#log", RichLog)
        width = log.scrollable_content_region.width
        strips = [strip.text.rstrip() for strip in log.lines]
        assert strips and all(len(s) <= width for s in strips)
        # Each line of the log is its words, wrapped between words.
        assert " ".join(strips).split() == " ".join(screen.log_lines).split()


async def test_a_drawn_card_with_two_matches_is_logged_once(tmp_path: Path) -> None:
    seed, n = find_seed(
        ONE_ROUND, lambda v: v.phase is Phase.TAKE and not interchangeable(v.legal_ids)
    )
    app = make_app(ONE_ROUND, seed, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await play_until(pilot, app, *human_turns(n)) == "take"
        screen = game_screen(app)
        drawn = screen.game.view().drawn
        await do_action(pilot, app, screen.game.view().legal_ids[0])
        await pilot.pause()
        told = " ".join(strip.text.strip() for strip in screen.query_one("#log", RichLog).lines)
        assert told.count(f"draw {CODES[drawn]} ") == 1


async def test_quitting_a_resumed_match_without_saving_deletes_its_save(tmp_path: Path) -> None:
    rules = get_rules("nintendo").replace(game__rounds=2)
    seed, _ = find_seed(rules, lambda v: True)
    path = reach(rules, seed, 3).save(tmp_path / "saves" / "koikoi-save.json")

    def resumed() -> KoiKoiApp:
        return KoiKoiApp(
            saved=load_game(path), save_path=path, records=None, pace=0.0, advisor="test-advisor"
        )

    app = resumed()  # quitting at once: the save is still the match, it stays
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog))
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
    assert path.exists()

    app = resumed()  # a move later the save is behind: quitting deletes it, and says so
    async with app.run_test(size=(80, 24)) as pilot:
        await next_prompt(pilot, app)
        await do_action(pilot, app, greedy_policy(game_screen(app).game.view()))
        await next_prompt(pilot, app)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitDialog))
        assert path.name in plain(app.screen.query_one("#quit-text"))
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
    assert not path.exists()
