"""The shipped human games (koikoi.lab.datasets) and ``koikoi bench human`` on them."""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from koikoi.cli import main
from koikoi.game.actions import parse_action
from koikoi.game.cards import CODES, card_list
from koikoi.game.errors import RecordError
from koikoi.game.record import GameRecord, ReplayStep, iter_steps, replay
from koikoi.game.views import PlayerView, view_of_round
from koikoi.lab import datasets
from koikoi.lab.datasets import (
    HUMAN_GAMES,
    HUMAN_GAMES_COUNT,
    HUMAN_GAMES_LICENSE,
    game_name,
    human_decisions,
    human_games,
)
from koikoi.lab.guan import guan_to_json, record_to_guan

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "guan"
FIXTURE_NAMES = ["1.json", "6.json", "8.json", "59.json", "201.json"]


@pytest.fixture(scope="module")
def games() -> list[GameRecord]:
    return human_games()


def _script() -> ModuleType:
    path = ROOT / "scripts" / "build-human-games.py"
    spec = importlib.util.spec_from_file_location("build_human_games", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_dataset_holds_the_201_games_in_file_order(games: list[GameRecord]) -> None:
    assert len(games) == HUMAN_GAMES_COUNT == 201
    assert [game_name(g) for g in games] == [f"{n}.json" for n in range(1, 202)]
    assert all(g.build_rules().name == "koikoi-japan" for g in games)
    assert all(g.seed is None for g in games)
    assert {tuple(g.players) for g in games[:200]} == {("Guan-1", "Guan-2")}
    assert games[200].players == ["Player 1", "Player 2"]
    assert [g.finished for g in games] == [True] * 200 + [False]
    assert sum(len(g.actions) for g in games) == 20_272
    # A new list of new records at each call: changing one changes nothing shipped.
    games[0].players[0] = "changed"
    assert human_games()[0].players[0] == "Guan-1"
    games[0].players[0] = "Guan-1"


def test_every_game_replays_through_the_engine_to_its_recorded_result(
    games: list[GameRecord],
) -> None:
    rounds = 0
    for g in games:
        m = replay(g, check_seed=False)  # raises RecordError where it diverges
        assert list(m.scores) == g.scores, game_name(g)
        assert m.is_over == g.finished and m.winner == g.winner, game_name(g)
        assert [s.to_dict() for s in m.settlements] == g.settlements, game_name(g)
        rounds += len(m.deals)
    assert rounds == 1_580


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_a_shipped_game_writes_back_as_the_published_file(
    games: list[GameRecord], name: str
) -> None:
    """The published files in tests/data/guan are copies: the shipped record of each
    gives the file back byte for byte."""
    record = next(g for g in games if game_name(g) == name)
    published = (FIXTURES / name).read_text(encoding="utf-8")
    assert guan_to_json(record_to_guan(record)) == published


def test_the_script_builds_the_shipped_records_from_the_published_files() -> None:
    built = _script().convert(FIXTURES)
    shipped = {game_name(g): g for g in human_games()}
    assert [game_name(r) for r in built] == FIXTURE_NAMES
    for record in built:
        assert record.to_dict() == shipped[game_name(record)].to_dict()


def test_the_script_output_is_reproducible_gzip_of_one_record_a_line(tmp_path: Path) -> None:
    script = _script()
    assert script.main([str(FIXTURES), "--out", str(tmp_path / "a.gz")]) == 0
    assert script.main([str(FIXTURES), "--out", str(tmp_path / "b.gz")]) == 0
    data = (tmp_path / "a.gz").read_bytes()
    assert data == (tmp_path / "b.gz").read_bytes()
    lines = gzip.decompress(data).decode("utf-8").splitlines()
    assert [json.loads(line)["meta"]["guan"]["file"] for line in lines] == FIXTURE_NAMES
    assert script.main([str(tmp_path), "--out", str(tmp_path / "c.gz")]) == 2


def test_the_license_and_the_notes_ship_beside_the_games() -> None:
    data = resources.files("koikoi.lab").joinpath("data")
    license_text = data.joinpath(HUMAN_GAMES_LICENSE).read_text(encoding="utf-8")
    assert license_text.startswith("MIT License")
    assert "Copyright (c) 2023 Sanghai Guan" in license_text
    readme = data.joinpath("README.md").read_text(encoding="utf-8")
    assert HUMAN_GAMES in readme and HUMAN_GAMES_LICENSE in readme
    size = len(data.joinpath(HUMAN_GAMES).read_bytes())
    assert size < 250_000, f"{HUMAN_GAMES} is {size:,} bytes"


def test_the_package_data_includes_the_data_folder() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"lab/data/*"' in text


@pytest.fixture
def reload_shipped() -> Iterator[None]:
    datasets._lines.cache_clear()
    yield
    datasets._lines.cache_clear()


class _Folder:
    """Stands for ``importlib.resources.files`` with a folder of our own."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def files(self, package: str) -> Path:
        return self.root


@pytest.mark.usefixtures("reload_shipped")
def test_a_damaged_file_raises_a_record_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setattr(datasets, "resources", _Folder(tmp_path))
    (tmp_path / "data" / HUMAN_GAMES).write_bytes(b"not gzip")
    with pytest.raises(RecordError, match=r"human-games\.jsonl\.gz: not a gzip file"):
        human_games()
    datasets._lines.cache_clear()
    good = json.dumps(human_games_record_dict())
    (tmp_path / "data" / HUMAN_GAMES).write_bytes(gzip.compress(f"{good}\n{{bad\n".encode()))
    with pytest.raises(RecordError, match=r"human-games\.jsonl\.gz, line 2: not JSON"):
        human_games()


def human_games_record_dict() -> dict[str, Any]:
    """The record of the first game of a fresh read of the real file."""
    line = gzip.decompress(
        (ROOT / "src" / "koikoi" / "lab" / "data" / HUMAN_GAMES).read_bytes()
    ).splitlines()[0]
    data: dict[str, Any] = json.loads(line)
    return data


# ------------------------------------------------------------------ decisions


def test_decisions_pair_the_deciding_players_view_with_the_recorded_action(
    games: list[GameRecord],
) -> None:
    found = list(human_decisions(games[:3]))
    assert found == list(human_decisions(games[:3]))
    everything = list(human_decisions(games[:3], forced=True))
    assert len(everything) == sum(len(g.actions) for g in games[:3]) > len(found)
    assert all(len(d.view.legal_ids) > 1 for d in found)
    assert any(len(d.view.legal_ids) == 1 for d in everything)
    steps = {game_name(g): list(iter_steps(g, check_seed=False)) for g in games[:3]}
    for d in everything:
        entry = steps[d.game][d.index].action
        assert entry is not None
        assert d.view.player == d.view.current == entry.player
        assert d.recorded == parse_action(entry.action).id
        assert d.recorded in d.view.legal_ids


def test_every_human_game_gives_its_decisions() -> None:
    counts = {"hand": 0, "drawn": 0, "koikoi": 0}
    for d in human_decisions():
        counts[d.kind] += 1
    assert counts == {"hand": 17_336, "drawn": 679, "koikoi": 1_768}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _redealt(step: ReplayStep, player: int, rng: random.Random) -> Any:
    """The round of ``step`` with the cards ``player`` cannot see dealt again: the
    opponent's hand and the stock shuffled together and shared out anew."""
    rnd = step.round.clone()
    opponent = 1 - player
    hidden = card_list(rnd.hands[opponent]) + rnd.stock
    rng.shuffle(hidden)
    size = rnd.hands[opponent].bit_count()
    rnd.hands[opponent] = sum(1 << c for c in hidden[:size])
    rnd._stock = hidden[size:]
    return rnd


def test_decision_views_never_hold_the_opponents_hand_or_the_stock(
    games: list[GameRecord],
) -> None:
    """Re-dealing the opponent's hand and the stock of the true state leaves every
    view unchanged, and no card of either is named anywhere in a view."""
    rng = random.Random(30)
    checked = changed = 0
    for record in games:
        steps = list(iter_steps(record, check_seed=False))
        for d in human_decisions([record], forced=True):
            before = steps[d.index - 1]
            p = d.view.player
            assert p is not None
            truth = before.round
            hidden = truth.hands[1 - p] | sum(1 << c for c in truth.stock)
            assert d.view.hand == truth.hands[p]
            named = {w for s in _strings(d.view.to_dict()) for w in s.split()}
            assert not named & {CODES[c] for c in card_list(hidden)}, (d.game, d.index)
            other = _redealt(before, p, rng)
            changed += other.hands[1 - p] != truth.hands[1 - p]
            again = view_of_round(
                other,
                p,
                match_scores=before.match_scores,
                settlements=before.settlements,
                is_over=before.is_over or other.is_over,
            )
            assert again == d.view, (d.game, d.index)
            checked += 1
    assert checked == 20_272 and changed > checked * 0.9


def test_a_view_that_showed_the_opponents_hand_would_fail_the_re_deal_check(
    games: list[GameRecord],
) -> None:
    """The check above can fail: the opponent's own view, which shows their hand,
    changes when their cards are dealt again."""
    d = next(human_decisions(games[:1]))
    before = list(iter_steps(games[0], check_seed=False))[d.index - 1]
    p = d.view.player
    assert p is not None
    other = _redealt(before, p, random.Random(1))
    theirs: PlayerView = view_of_round(before.round, 1 - p, match_scores=before.match_scores)
    assert view_of_round(other, 1 - p, match_scores=before.match_scores) != theirs


# ------------------------------------------------------------------ bench human


def test_bench_human_without_a_path_measures_the_shipped_games(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "human", "--agent", "greedy", "--games", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["command"] == "koikoi bench human --agent greedy --games 2 --seed 0"
    assert data["games"] == 2
    expected = sum(1 for _ in human_decisions(human_games()[:2]))
    assert data["agents"][0]["decisions"] == expected
    assert main(["bench", "human", "--games", "0"]) == 2
    assert "--games must be 1 or more, not 0" in capsys.readouterr().err


def test_doctests() -> None:
    import doctest

    failures, tried = doctest.testmod(datasets, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
