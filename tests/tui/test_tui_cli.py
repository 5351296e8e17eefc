"""``koikoi play``: options checked before the screen opens, and the real command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from koikoi.cli import main
from koikoi.game.rules import get_rules
from koikoi.tui.app import KoiKoiApp
from koikoi.tui.controller import GameController


def test_no_option_opens_the_new_game_screen(launched: list[KoiKoiApp], tmp_path: Path) -> None:
    assert main(["play"]) == 0
    (app,) = launched
    assert app.settings is None and app.saved is None
    home = Path(os.environ["KOIKOI_HOME"])
    assert app.records == home / "records" and app.saves == home / "saves"


def test_options_start_a_match_at_once(launched: list[KoiKoiApp], tmp_path: Path) -> None:
    argv = [
        "play",
        "--rules",
        "leaflet",
        "--opponent",
        "random",
        "--rounds",
        "3",
        "--seed",
        "42",
        "--pace",
        "0",
        "--records",
        str(tmp_path / "recs"),
    ]
    assert main(argv) == 0
    (app,) = launched
    assert app.settings is not None
    assert app.settings.rules == get_rules("leaflet").replace(game__rounds=3)
    assert (app.settings.opponent, app.settings.seed, app.settings.pace) == ("random", 42, 0.0)
    assert app.records == tmp_path / "recs"


def test_house_rules_file(launched: list[KoiKoiApp], tmp_path: Path) -> None:
    house = tmp_path / "house.toml"
    house.write_text('extends = "compendium"\n[game]\nrounds = 4\n')
    assert main(["play", "--rules", str(house)]) == 0
    assert launched[0].settings is not None
    assert launched[0].settings.rules.game.rounds == 4
    assert launched[0].settings.opponent == "expert"  # the default: level 8


def test_resume_a_save(launched: list[KoiKoiApp], tmp_path: Path) -> None:
    game = GameController(get_rules("nintendo"), opponent="random", seed=3)
    for _ in range(3):
        game.apply(game.view().legal_ids[0] if game.human_to_act else game.choose_opponent_action())
    path = game.save(tmp_path / "s.json")
    assert main(["play", "--resume", str(path)]) == 0
    saved = launched[0].saved
    assert saved is not None and list(saved.actions) == game.match.actions
    assert launched[0].save_path == path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--rules", "nope"], "unknown rules 'nope'"),
        (["play", "--opponent", "nobody"], "unknown agent 'nobody'"),
        (["play", "--opponent", "level:9"], "level must be 1 to 8, not 9"),
        (["play", "--seed", "-3"], "seed must be a non-negative integer"),
        (["play", "--seed", "x"], "seed must be a non-negative integer"),
        (["play", "--rounds", "0"], "--rounds must be 1 or more"),
        (["play", "--pace", "99"], "--pace must be between 0 and 10"),
        (["play", "--resume", "missing.json"], "cannot read record"),
        (["play", "--resume", "x.json", "--seed", "1"], "--resume goes on with a saved match"),
    ],
)
def test_bad_options_are_one_line_errors(
    launched: list[KoiKoiApp], capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error: ") and message in err
    assert err.count("\n") == 1
    assert not launched


def _koikoi_command() -> str:
    script = Path(sys.executable).parent / "koikoi"
    if script.exists():
        return str(script)
    return f"{sys.executable} -m koikoi.cli"


@pytest.mark.multiprocess
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_koikoi_play_reaches_the_new_game_screen_in_a_terminal(tmp_path: Path) -> None:
    session = f"koikoi-test-{os.getpid()}"
    env_home = tmp_path / "home"
    command = f"KOIKOI_HOME={env_home} {_koikoi_command()} play"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", command],
        check=True,
    )

    def screen() -> str:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
        )
        return out.stdout

    def wait(text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} not on the screen:\n{shown}")

    try:
        shown = wait("new game")
        assert "Opponent" in shown and "Rules" in shown and "Seed" in shown
        assert "Start" in shown
        subprocess.run(["tmux", "send-keys", "-t", session, "C-c"], check=True)
        wait("Leave the game?")
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            alive = (
                subprocess.run(
                    ["tmux", "has-session", "-t", session], capture_output=True
                ).returncode
                == 0
            )
            if not alive:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("koikoi play did not quit")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
