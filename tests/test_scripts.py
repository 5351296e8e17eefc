"""The measuring scripts under scripts/ that the benchmarks quote."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from koikoi.agents.base import AGENT_KINDS

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_oracle_arena_rewrites_its_command_line_to_the_hand_oracle(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The script is a shim: ``oracle`` becomes ``oracle:sees=hand`` with the expert
    spec's settings, which the arena itself builds (in worker processes too)."""
    oracle_arena = _load("oracle-arena")
    assert oracle_arena.hand_oracle_spec("expert:iterations=20") == (
        "oracle:sees=hand,iterations=20"
    )
    assert oracle_arena.run(["heuristic", "arena", "oracle", "greedy"]) == 2
    assert "built on an expert spec" in capsys.readouterr().err
    rules = Path(__file__).resolve().parent.parent / "examples" / "nintendo-one-round.toml"
    argv = "expert:iterations=20 arena oracle greedy --matches 2 --seed 1 --workers 1 --json"
    code = oracle_arena.run([*argv.split(), "--rules", str(rules)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["spec"] for a in out["agents"]] == ["oracle:sees=hand,iterations=20", "greedy"]
    assert out["agents"][0]["forfeits"] == 0
    # Nothing was registered: the oracle stays the arena's own.
    assert "oracle" not in AGENT_KINDS


def test_ceiling_table_plays_each_player_on_the_same_deals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every player against every opponent but itself, one seed (the same deals), and
    the table of the runs again from the kept file, two files put together."""
    ceiling = _load("ceiling")
    rules = Path(__file__).resolve().parent.parent / "examples" / "nintendo-one-round.toml"
    kept = tmp_path / "runs.json"
    argv = [
        *("--rules", str(rules), "--matches", "4", "--seed", "5"),
        *("--oracle", "oracle:iterations=20", "--expert", "expert:iterations=10"),
        *("--reference", "greedy", "--against", "random", "--against", "greedy"),
        *("--json", str(kept)),
    ]
    assert ceiling.main(argv) == 0
    table = capsys.readouterr().out
    data = json.loads(kept.read_text())
    played = [(r["a"], r["b"]) for r in data["runs"]]
    assert ("greedy", "greedy") not in played and len(played) == 5
    assert all(len(r["pairs"]) == 2 for r in data["runs"])
    assert "| `expert:iterations=10` vs `greedy` | 4 |" in table
    assert ceiling.main(["--table", str(kept), str(kept)]) == 0
    assert "| `oracle:iterations=20` vs `random` | 8 |" in capsys.readouterr().out


def test_noisy_arena_runs_and_refuses_bad_use(capsys: pytest.CaptureFixture[str]) -> None:
    """``noisy`` is the base player with the levels' mistakes: at temperature 0 it
    plays exactly as the base, so a duplicate arena against the base is level."""
    noisy_arena = _load("noisy-arena")
    assert noisy_arena.run(["greedy", "1", "arena", "noisy", "greedy", "--workers", "2"]) == 2
    assert noisy_arena.run(["greedy", "hot", "arena", "noisy", "greedy"]) == 2
    assert "the temperature must be a number 0 or more, not 'hot'" in capsys.readouterr().err
    assert noisy_arena.run(["greedy", "-1", "arena", "noisy", "greedy"]) == 2
    base = "arena noisy greedy --rules nintendo --matches 8 --seed 3 --workers 1 --common-rng"
    base += " --json"
    assert noisy_arena.run(["greedy", "0", *base.split()]) == 0
    same = json.loads(capsys.readouterr().out)["agents"]
    assert same[0]["net_per_round"]["mean"] == 0.0
    assert same[0]["match_wins"] == same[1]["match_wins"]
    assert noisy_arena.run(["greedy", "20", *base.split()]) == 0
    wild = json.loads(capsys.readouterr().out)["agents"]
    assert wild[0]["net_per_round"]["mean"] != 0.0  # its mistakes change the games
    assert "noisy" not in AGENT_KINDS


def test_regret_positions_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    """The positions are seeded card plays with three or more actions; every agent
    gets a regret of 0 or more against the reference, in points a decision."""
    regret = _load("regret")
    views = regret.positions(4, 2)
    assert len(views) == 4
    assert all(len(v.legal_ids) > 2 and sum(v.hand_counts) > 4 for v in views)
    assert [v.legal_ids for v in regret.positions(4, 2)] == [v.legal_ids for v in views]
    argv = "--positions 3 --seed 2 --repeats 2 --reference expert:iterations=200"
    assert regret.main([*argv.split(), "greedy", "expert:iterations=20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("3 positions (seed 2); reference expert:iterations=200")
    assert len(lines) == 4
    for line, spec in zip(lines[1:3], ("greedy", "expert:iterations=20"), strict=True):
        assert line.startswith(f"{spec}: regret ")
        assert float(line.split()[2]) >= 0.0
        assert "(6 choices" in line
    # Every agent after the first: its paired difference from the first.
    assert lines[3].startswith("  expert:iterations=20 minus greedy: ")
    assert lines[3].endswith(" points a decision")
    assert regret.main([*argv.split(), "--twice", "greedy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert lines[1].startswith("greedy: regret ")
    assert lines[2].startswith("greedy (again, other seeds): regret ")
    assert lines[3].startswith("  greedy, second run minus first: ")
    with pytest.raises(SystemExit, match="the reference must report its values"):
        regret.main(["--positions", "1", "--reference", "greedy", "heuristic"])


def test_regret_cache_keeps_the_references_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run with the same positions, seed and reference reads the reference's
    values from the cache instead of searching again, and reports the same; another
    reference computes again."""
    regret = _load("regret")
    cache = str(tmp_path / "ref.json")
    argv = f"--positions 2 --seed 2 --repeats 1 --cache {cache} --reference expert:iterations=100"
    assert regret.main([*argv.split(), "greedy"]) == 0
    first = capsys.readouterr().out.splitlines()
    assert json.loads(Path(cache).read_text())["reference"] == "expert:iterations=100"
    calls: list[object] = []
    original = regret.values
    monkeypatch.setattr(regret, "values", lambda *a: calls.append(a) or original(*a))
    assert regret.main([*argv.split(), "greedy"]) == 0
    again = capsys.readouterr().out.splitlines()
    assert calls == []
    assert again[0].split(" s; ")[1] == first[0].split(" s; ")[1]
    assert again[1].split(" (")[0] == first[1].split(" (")[0]
    other = argv.replace("iterations=100", "iterations=120")
    assert regret.main([*other.split(), "greedy"]) == 0
    assert "made for other positions or another reference" in capsys.readouterr().out
    assert len(calls) == 4  # two evaluations of each of the two positions


def test_regret_cache_is_not_read_for_other_positions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache made for the same count, seed and reference but other positions (as when
    the self-play that deals them has changed) is computed again, not misread."""
    regret = _load("regret")
    cache = str(tmp_path / "ref.json")
    argv = f"--positions 2 --seed 2 --repeats 1 --cache {cache} --reference expert:iterations=50"
    assert regret.main([*argv.split(), "greedy"]) == 0
    capsys.readouterr()
    original = regret.positions
    monkeypatch.setattr(regret, "positions", lambda count, seed: original(count, seed + 1))
    assert regret.main([*argv.split(), "greedy"]) == 0
    assert "made for other positions or another reference" in capsys.readouterr().out


def test_regret_cache_that_is_no_cache_is_computed_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged or foreign cache file is reported and computed again, then rewritten."""
    regret = _load("regret")
    cache = tmp_path / "ref.json"
    argv = f"--positions 1 --seed 2 --repeats 1 --cache {cache} --reference expert:iterations=50"
    for text in ("{not json", "[1, 2]"):
        cache.write_text(text)
        assert regret.main([*argv.split(), "greedy"]) == 0
        out = capsys.readouterr().out
        assert "computing again" in out
        assert json.loads(cache.read_text())["reference"] == "expert:iterations=50"


def test_split_arena_runs_and_cleans_up(capsys: pytest.CaptureFixture[str]) -> None:
    """A split of greedy's card play and greedy's koi-koi decisions is greedy: level
    with it under common random numbers; afterwards ``split`` is gone."""
    split_arena = _load("split-arena")
    assert split_arena.run(["greedy", "greedy", "arena", "split", "greedy", "--workers", "2"]) == 2
    argv = "greedy greedy arena split greedy --rules nintendo --matches 4 --seed 3 --workers 1"
    assert split_arena.run([*argv.split(), "--common-rng", "--json"]) == 0
    agents = json.loads(capsys.readouterr().out)["agents"]
    assert agents[0]["net_per_round"]["mean"] == 0.0
    # A second run in the same process plays the second split, not the first again.
    assert split_arena.run(["random", "greedy", *argv.split()[2:], "--common-rng", "--json"]) == 0
    agents = json.loads(capsys.readouterr().out)["agents"]
    assert agents[0]["net_per_round"]["mean"] < 0.0
    assert "split" not in AGENT_KINDS


def test_fetch_axe_checks_the_integrity_and_the_tarball(tmp_path: Path) -> None:
    """scripts/fetch-axe.py refuses bytes whose hash differs, and a tarball without axe."""
    import base64
    import hashlib
    import io
    import tarfile

    fetch_axe = _load("fetch-axe")
    data = b"not the axe-core tarball"
    good = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    fetch_axe.check_integrity(data, good)
    with pytest.raises(ValueError, match="integrity check failed: expected sha512-"):
        fetch_axe.check_integrity(data + b"!", good)
    with pytest.raises(ValueError, match="only sha512 is supported"):
        fetch_axe.check_integrity(data, "sha1-abc")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("package/README.md")
        info.size = 2
        archive.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(ValueError, match=r"has no package/axe\.min\.js"):
        fetch_axe.axe_source(buffer.getvalue())
