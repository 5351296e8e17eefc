"""The front door (``import koikoi``), the doctests of every module of the game, and
``repr(round)`` as code that rebuilds the round."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import random
import subprocess
import sys
from types import ModuleType

import pytest
from koikoi_testkit import position_state

import koikoi
import koikoi.game
from koikoi.game.engine import Match, Phase, Round
from koikoi.game.rules import PRESET_NAMES, get_rules, load_rules_text

GAME_MODULES = [
    importlib.import_module(info.name)
    for info in pkgutil.iter_modules(koikoi.game.__path__, "koikoi.game.")
]


@pytest.mark.parametrize("module", [koikoi, *GAME_MODULES], ids=lambda m: m.__name__)
def test_doctests(module: ModuleType) -> None:
    failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0
    assert failures == 0


def test_all_names_exist() -> None:
    missing = [name for name in koikoi.__all__ if not hasattr(koikoi, name)]
    assert missing == []
    assert issubclass(koikoi.PositionError, koikoi.KoiKoiError)
    assert issubclass(koikoi.KoiKoiError, ValueError)


def test_import_loads_no_numba_or_numpy() -> None:
    code = (
        "import sys, koikoi; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numba', 'numpy'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def _rounds(rules: str, seed: int) -> list[Round]:
    """Copies of the live round after every action of a seeded match."""
    m = Match(get_rules(rules), seed=seed, events=False)
    rng = random.Random(seed)
    out: list[Round] = []
    for _ in range(150):
        if m.is_over:
            break
        out.append(m.round.clone())
        m.apply_id(rng.choice(m.legal_ids()))
    return out


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_repr_rebuilds_the_round(rules: str) -> None:
    namespace = {"Round": koikoi.Round}
    phases: set[Phase] = set()
    for seed in range(6):
        for rnd in _rounds(rules, seed):
            text = repr(rnd)
            assert text.startswith("Round.from_position('")
            again = eval(text, namespace)
            assert position_state(again) == position_state(rnd)
            assert repr(again) == text
            phases.add(rnd.phase)
    assert {Phase.PLAY, Phase.DECIDE} <= phases


def test_repr_rebuilds_the_take_phase() -> None:
    found = 0
    for seed in range(40):
        for rnd in _rounds("nintendo", seed):
            if rnd.phase is Phase.TAKE:
                assert position_state(eval(repr(rnd), {"Round": Round})) == position_state(rnd)
                found += 1
    assert found > 0


def test_repr_of_what_no_position_describes() -> None:
    rng = random.Random(3)
    over = _rounds("nintendo", 3)[0]
    while not over.is_over:
        over.apply_id(rng.choice(over.legal_ids()))
    assert repr(over).startswith("<Round nintendo round=1 ")
    assert "phase=over" in repr(over)
    house = load_rules_text('extends = "nintendo"\nname = "house"\n[game]\nrounds = 6\n')
    rnd = Match(house, seed=1).round
    assert repr(rnd).startswith("<Round house round=1 ")


def test_match_repr() -> None:
    m = Match(seed=11, events=False)
    assert repr(m) == (
        f"<Match nintendo seed=11 round=1/12 scores=0/0 turn={m.current} phase=play actions=0>"
    )
    rng = random.Random(0)
    while not m.is_over:
        m.apply_id(rng.choice(m.legal_ids()))
    text = repr(m)
    assert f"scores={m.scores[0]}/{m.scores[1]} over winner={m.winner}" in text
    assert f"actions={len(m.actions)}>" in text


def test_the_readme_example_runs_and_its_repr_rebuilds_the_round(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme, re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("Round.from_position('koikoi-japan round=1/8 ")
    rebuilt = eval(printed, {"Round": koikoi.Round})
    assert repr(rebuilt) == printed
