"""Tests of the rules, score, replay, simulate and bench commands (through koikoi.cli.main)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from koikoi.cli import main
from koikoi.cli.bench import KERNEL_MISSING
from koikoi.cli.simulate import match_seed, split_agent_specs
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, load_record, replay
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules, load_rules_text


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``koikoi ARGV``; returns (status, stdout, stderr)."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run a command that must fail with status 2 and one line on stderr; returns the line."""
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.startswith("koikoi: error: ")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.strip()


@pytest.fixture()
def house_rules(tmp_path: Path) -> Path:
    path = tmp_path / "house.toml"
    path.write_text(
        'extends = "leaflet"\nname = "our table"\n[game]\nrounds = 3\n[points]\ntsukifuda = 4\n',
        encoding="utf-8",
    )
    return path


# ---------------------------------------------------------------- rules


def test_rules_list_shows_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "rules", "list")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "rounds", "bonus", "combine", "description"]
    assert [line.split()[0] for line in lines[1:]] == list(PRESET_NAMES)
    for line in lines[1:]:
        name, rounds, bonus, combine = line.split()[:4]
        rules = get_rules(name)
        assert (int(rounds), bonus, combine) == (
            rules.game.rounds,
            rules.koikoi.bonus,
            rules.yaku.combine,
        )
        assert rules.description in line


def test_rules_list_describes_presets_in_words_for_players(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(capsys, "rules", "list")
    for jargon in ("seed 0", "transformer", "as coded by"):
        assert jargon not in out


def test_replay_counts_in_good_english(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from koikoi.game.engine import Match

    match = Match(get_rules("nintendo").replace(game__rounds=1), seed=246)  # an instant hand
    path = GameRecord.from_match(match, players=["ann", "ben"]).save(tmp_path / "one.json")
    status, out, _ = run(capsys, "replay", str(path))
    assert status == 0
    assert "(1 round)" in out and "after 1 round ==" in out and "1 rounds" not in out


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_rules_show_prints_toml_that_loads_back(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    status, out, _ = run(capsys, "rules", "show", name)
    assert status == 0
    assert load_rules_text(out) == get_rules(name)


def test_rules_show_a_house_rules_file(
    capsys: pytest.CaptureFixture[str], house_rules: Path
) -> None:
    status, out, _ = run(capsys, "rules", "show", str(house_rules))
    assert status == 0
    loaded = load_rules_text(out)
    assert loaded.name == "our table"
    assert loaded.game.rounds == 3
    assert loaded.points.tsukifuda == 4
    assert loaded.koikoi.bonus == "none"  # from leaflet


def test_rules_diff_lists_only_the_differences(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "rules", "diff", "nintendo", "leaflet")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["option", "nintendo", "leaflet"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:-1]}
    assert rows["game.rounds"] == ["12", "6"]
    assert rows["koikoi.bonus"] == ["opponent_x2", "none"]
    assert rows["koikoi.seven_double"] == ["true", "false"]
    assert "game.dealer" not in rows  # the same in both
    assert lines[-1] == f"{len(rows)} options differ"
    # The columns are aligned.
    assert len({line.index("12") for line in lines if line.startswith("game.rounds")}) == 1
    assert lines[1].index(lines[1].split()[1]) == lines[0].index("nintendo")


def test_rules_diff_of_equal_rules(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "rules", "diff", "wikipedia", "wikipedia")
    assert status == 0
    assert out.startswith("no differences")


def test_rules_diff_with_a_file(capsys: pytest.CaptureFixture[str], house_rules: Path) -> None:
    status, out, _ = run(capsys, "rules", "diff", "leaflet", str(house_rules))
    assert status == 0
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:-1]}
    assert rows == {"game.rounds": ["6", "3"], "points.tsukifuda": ["0", "4"]}


def test_rules_check_accepts_a_good_file(
    capsys: pytest.CaptureFixture[str], house_rules: Path
) -> None:
    status, out, _ = run(capsys, "rules", "check", str(house_rules))
    assert status == 0
    assert out == "ok: our table, 2 options differ from leaflet\n"


def test_rules_check_reports_a_bad_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[koikoi]\nbonus = "triple"\n', encoding="utf-8")
    line = fails(capsys, "rules", "check", str(bad))
    assert "koikoi.bonus = 'triple' is not allowed: allowed 'opponent_x2'" in line
    bad.write_text("[game]\nrounds = \n", encoding="utf-8")
    assert "not valid TOML" in fails(capsys, "rules", "check", str(bad))
    assert "cannot read rules file" in fails(capsys, "rules", "check", str(tmp_path / "no.toml"))


def test_rules_unknown_preset(capsys: pytest.CaptureFixture[str]) -> None:
    line = fails(capsys, "rules", "show", "hanafuda-deluxe")
    assert "unknown rules 'hanafuda-deluxe'" in line and "nintendo" in line


def test_rules_without_subcommand_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "rules")
    assert status == 2
    assert "list" in out and "check" in out


# ---------------------------------------------------------------- score


def score_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    status, out, _ = run(capsys, "score", "--json", *argv)
    assert status == 0
    data: dict[str, Any] = json.loads(out)
    return data


def test_score_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    data = score_json(
        capsys, "1L", "3L", "8L", "9A", "6A", "7A", "10A", "2A", "4A", "5A", "8A", "11A"
    )
    assert data["rules"] == "nintendo"
    assert data["base"] == 26
    assert data["multipliers"] == [
        {"name": "seven_double", "label": "Seven or more", "factor": 2, "add": 0}
    ]
    assert data["total"] == 52
    assert [y["name"] for y in data["yaku"]] == ["sanko", "inoshikacho", "hanami", "tsukimi"]
    assert sum(y["points"] for y in data["yaku"]) == 26
    sanko = data["yaku"][0]
    assert sanko == {
        "name": "sanko",
        "english": "Three Brights",
        "japanese": "三光 sankō",
        "points": 5,
        "cards": ["1L", "3L", "8L"],
    }
    assert data["cards"][:3] == ["1L", "2A", "3L"]  # in card order
    assert (data["round"], data["month"], data["koikoi_self"], data["opponent_koikoi"]) == (
        1,
        1,
        0,
        False,
    )


# RULES.md §6: base points per preset, in PRESET_NAMES order.
SECTION_6 = [
    ("1L 3L 8L", [5, 6, 5, 5, 6, 6, 5]),
    ("1L 3L 11L", [0, 0, 0, 0, 6, 0, 0]),
    ("1L 3L 8L 11L", [7, 7, 7, 7, 7, 8, 7]),
    ("6A 7A 10A 2A 4A", [7, 7, 7, 7, 5, 6, 6]),
    ("1R 2R 3R 4R 5R", [7, 7, 7, 7, 5, 7, 6]),
    ("1R 2R 3R 6R 9R 10R 4R", [11, 11, 11, 11, 10, 15, 23]),
    ("3L 8L 9A", [10, 10, 10, 10, 10, 0, 2]),
    ("9A 1P1 1P2 2P1 2P2 3P1 3P2 4P1 4P2 5P1", [1, 1, 1, 0, 0, 1, 1]),
    ("1L 3L 8L 9A 6A 7A 10A 2A 4A 5A 8A 11A", [26, 27, 26, 26, 16, 16, 17]),
]


@pytest.mark.parametrize(("cards", "bases"), SECTION_6)
def test_score_section_6_examples(
    capsys: pytest.CaptureFixture[str], cards: str, bases: list[int]
) -> None:
    for name, base in zip(PRESET_NAMES, bases, strict=True):
        data = score_json(capsys, "--rules", name, *cards.split())
        assert data["base"] == base, name
        assert data["rules"] == name


def test_score_koikoi_multipliers(capsys: pytest.CaptureFixture[str]) -> None:
    # RULES.md §6: a stop at base 7 after the opponent called koi-koi scores 7 x 2 x 2.
    data = score_json(capsys, "--opponent-koikoi", "1L", "3L", "8L", "11L")
    assert (data["base"], data["total"]) == (7, 28)
    assert [m["name"] for m in data["multipliers"]] == ["seven_double", "opponent_koikoi"]
    # Base 6 with no koi-koi scores 6; 7 and more double.
    six = score_json(capsys, "1R", "2R", "3R", "4R")
    assert (six["base"], six["total"], six["multipliers"]) == (6, 6, [])
    assert score_json(capsys, "1L", "3L", "8L", "12L")["total"] == 16  # shiko 8, x2
    assert score_json(capsys, "--rules", "compendium", "1L", "3L", "8L")["total"] == 6
    # The ladder (koikoi-japan): n calls add n for n <= 3, multiply by n - 2 from 4.
    ladder = ["--rules", "koikoi-japan", "1L", "3L", "8L"]
    assert score_json(capsys, *ladder)["total"] == 5
    assert score_json(capsys, "--koikoi-self", "2", *ladder)["total"] == 7
    four = score_json(capsys, "--koikoi-self", "4", *ladder)
    assert four["total"] == 10
    assert four["multipliers"] == [
        {"name": "koikoi_ladder", "label": "Koi-koi ladder", "factor": 2, "add": 0}
    ]
    # challenge_x2 (modern-hanafuda): own koi-koi doubles.
    challenge = ["--rules", "modern-hanafuda", "1L", "3L", "8L"]
    assert score_json(capsys, *challenge)["total"] == 6
    assert score_json(capsys, "--koikoi-self", "1", *challenge)["total"] == 12


def test_score_round_sets_the_month(capsys: pytest.CaptureFixture[str], house_rules: Path) -> None:
    cherry = ["--rules", str(house_rules), "3L", "3R", "3P1", "3P2"]
    march = score_json(capsys, "--round", "3", *cherry)
    assert march["month"] == 3
    assert "tsukifuda" in [y["name"] for y in march["yaku"]]
    assert march["rules"] == "our table"
    assert score_json(capsys, "--round", "15", *cherry)["month"] == 3
    assert score_json(capsys, "--round", "1", *cherry)["total"] == 0


def test_score_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "score", "--opponent-koikoi", "1L", "3L", "8L", "11L")
    assert status == 0
    assert out.splitlines() == [
        "Rules: nintendo, round 1 (month 1, Pine), opponent called koi-koi",
        "Yaku:",
        "  Rainy Four Brights (雨四光 ame-shikō) [1L 3L 8L 11L]: 7",
        "Base: 7",
        "  Seven or more: x2 -> 14",
        "  Opponent called koi-koi: x2 -> 28",
        "Total: 28",
    ]
    status, out, _ = run(capsys, "score", "1P1", "2P1")
    assert out.splitlines()[-1] == "No yaku: 0 points."


def test_score_accepts_card_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert score_json(capsys, "crane", "curtain", "MOON")["base"] == 5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["1L", "3X"], "unknown card '3X'"),
        (["1L", "1L"], "card 1L given twice"),
        (["--round", "0", "1L"], "--round must be 1 or more, not 0"),
        (["--koikoi-self", "-1", "1L"], "--koikoi-self must be 0 or more"),
        (["--rules", "nope", "1L"], "unknown rules 'nope'"),
        (["--rules", "missing.toml", "1L"], "cannot read rules file 'missing.toml'"),
    ],
)
def test_score_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert message in fails(capsys, "score", *argv)


# ---------------------------------------------------------------- replay


def make_record(path: Path, rules: str = "nintendo", seed: int = 3) -> GameRecord:
    import random

    from koikoi.game.engine import Match

    match = Match(get_rules(rules), seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        ids = match.legal_ids()
        match.apply(ids[int(rng.random() * len(ids))])
    record = GameRecord.from_match(match, players=["alice", "bob"])
    record.save(path)
    return record


def test_replay_prints_the_game(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    record = make_record(path)
    status, out, _ = run(capsys, "replay", str(path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "Rules: nintendo (12 rounds). Seed: 3."
    assert lines[1] == "Players: player 0 (alice) and player 1 (bob)."
    headers = [line for line in lines if line.startswith("== Round ")]
    assert len(headers) == len(record.settlements)
    assert headers[0].startswith("== Round 1: month 1 (Pine, 松 matsu), dealer player ")
    assert "== Round 2: month 2 (Plum" in headers[1]
    plays = [line for line in lines if " plays " in line]
    assert len(plays) == sum(a.action.startswith("play") for a in record.actions)
    assert sum(line.startswith("  ") and " draws " in line for line in lines) == len(plays)
    settled = [line for line in lines if "Round settled (" in line]
    assert len(settled) == len(record.settlements)
    assert lines[-2] == (
        f"Final scores: player 0 (alice) {record.scores[0]}, player 1 (bob) {record.scores[1]}."
    )
    winner = record.winner
    assert lines[-1] == ("A draw." if winner is None else f"Winner: {record.player_name(winner)}.")
    koikoi = sum(a.action == "koikoi" for a in record.actions)
    assert sum("calls koi-koi" in line for line in lines) == koikoi


def test_replay_of_a_tampered_record_fails_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "game.json"
    make_record(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["settlements"][0]["points"] += 5
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "round 1 settlement differs" in fails(capsys, "replay", str(path))
    path.write_text("not json", encoding="utf-8")
    assert "not valid JSON" in fails(capsys, "replay", str(path))
    assert "cannot read record" in fails(capsys, "replay", str(tmp_path / "none.json"))


def test_replay_without_seed_check(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    make_record(path, "leaflet", 5)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["seed"] = 6  # the recorded deals still hold
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "differs from the seed's (seed 6)" in fails(capsys, "replay", str(path))
    status, out, _ = run(capsys, "replay", "--no-seed-check", str(path))
    assert status == 0 and "Final scores" in out


def test_replay_tui_calls_the_viewer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "game.json"
    record = make_record(path)
    seen: list[GameRecord] = []

    def run_replay(rec: GameRecord) -> int:
        seen.append(rec)
        return 0

    viewer = types.ModuleType("koikoi.tui.replay")
    viewer.run_replay = run_replay  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "koikoi.tui.replay", viewer)
    status, _, _ = run(capsys, "replay", "--tui", str(path))
    assert status == 0
    assert seen == [record]


def test_replay_tui_missing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "game.json"
    make_record(path)
    monkeypatch.setitem(sys.modules, "koikoi.tui.replay", None)
    line = fails(capsys, "replay", "--tui", str(path))
    assert "the terminal replay viewer is not available" in line
    assert line.endswith("install koikoi[tui]")


# ---------------------------------------------------------------- simulate


@pytest.mark.parametrize("rules", PRESET_NAMES)
def test_simulate_writes_records_that_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rules: str
) -> None:
    out_dir = tmp_path / rules
    status, out, _ = run(
        capsys, "simulate", "--rules", rules, "--games", "3", "--seed", "5", "--out", str(out_dir)
    )
    assert status == 0
    files = sorted(out_dir.iterdir())
    assert [f.name for f in files] == ["match-0001.json", "match-0002.json", "match-0003.json"]
    rounds = 0
    wins = [0, 0]
    for i, f in enumerate(files):
        record = load_record(f)
        assert record.seed == match_seed(5, i)
        assert record.players == ["random A", "random B"]  # one agent twice, told apart
        assert record.meta["simulate"] == {"seed": 5, "game": i, "agents": ["random", "random"]}
        match = replay(record)
        assert match.is_over
        rounds += len(match.settlements)
        if match.winner is not None:
            wins[match.winner] += 1
    assert f"3 matches under {rules}, seed 5" in out
    assert f"rounds: {rounds} (" in out
    assert f"wins: player 0 (random) {wins[0]}, player 1 (random) {wins[1]}," in out
    assert "mean points per round: player 0 (random) " in out
    assert "elapsed: " in out


def test_simulate_is_deterministic_and_summarises_as_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["simulate", "--json", "--games", "4", "--seed", "11", "--agents", "random,greedy"]
    a = json.loads(run(capsys, *argv, "--out", str(tmp_path / "a"))[1])
    b = json.loads(run(capsys, *argv, "--out", str(tmp_path / "b"))[1])
    for key in ("rules", "agents", "seed", "matches", "rounds", "wins", "draws", "rounds_won"):
        assert a[key] == b[key]
    assert a["mean_points_per_round"] == b["mean_points_per_round"]
    assert a["agents"] == ["random", "greedy"]
    assert sum(a["wins"]) + a["draws"] == 4
    for name in ("match-0001.json", "match-0004.json"):
        ra, rb = load_record(tmp_path / "a" / name), load_record(tmp_path / "b" / name)
        assert (ra.deals, ra.actions, ra.settlements) == (rb.deals, rb.actions, rb.settlements)
    settlements = [load_record(f).settlements for f in sorted((tmp_path / "a").iterdir())]
    assert a["rounds"] == sum(len(s) for s in settlements)
    total0 = sum(s["deltas"][0] for game in settlements for s in game)
    assert a["mean_points_per_round"][0] == pytest.approx(total0 / a["rounds"])


def test_simulate_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown agent 'alphago'" in fails(capsys, "simulate", "--agents", "random,alphago")
    assert "--agents takes two agent specs" in fails(capsys, "simulate", "--agents", "a,b,c")
    assert "--games must be 1 or more" in fails(capsys, "simulate", "--games", "0")
    assert "unknown rules" in fails(capsys, "simulate", "--rules", "x")


def test_split_agent_specs() -> None:
    assert split_agent_specs("random,greedy") == ["random", "greedy"]
    assert split_agent_specs("greedy") == ["greedy", "greedy"]
    assert split_agent_specs("mcts:time=1,iters=50, random") == ["mcts:time=1,iters=50", "random"]
    with pytest.raises(InvalidInputError, match="two agent specs"):
        split_agent_specs("random,")


def test_match_seeds_are_stable() -> None:
    # Derived with SHA-256: the same on every Python, and distinct per match and role.
    assert match_seed(0, 0) == 3110409079692056637
    assert match_seed(5, 2, "agent1") == 338124820936644741
    seeds = {match_seed(s, i, role) for s in range(3) for i in range(3) for role in ("match", "a")}
    assert len(seeds) == 18
    assert all(0 <= s < 2**63 for s in seeds)


# ---------------------------------------------------------------- bench


def test_bench_engine(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "bench", "engine", "--seconds", "0.05", "--repeat", "2")
    assert status == 0
    lines = out.splitlines()
    assert (
        lines[0]
        == "command: koikoi bench engine --seconds 0.05 --rules nintendo --repeat 2 --seed 0"
    )
    assert "apply_id, events off" in lines[1]
    assert lines[2].startswith("rounds/s: ") and "median of 2 x 0.05 s" in lines[2]
    assert lines[3].startswith("steps/s: ")
    assert lines[4].startswith("rounds per CPU second: ")


def test_bench_engine_checked_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys,
        "bench",
        "engine",
        "--checked",
        "--json",
        "--seconds",
        "0.05",
        "--repeat",
        "1",
        "--rules",
        "modern-hanafuda",
    )
    assert status == 0
    data = json.loads(out)
    assert data["mode"] == "checked"
    assert data["rules"] == "modern-hanafuda"
    assert data["command"].endswith("--checked")
    run0 = data["runs"][0]
    assert data["rounds_per_s"] == pytest.approx(run0["rounds"] / run0["seconds"])
    assert data["rounds_per_cpu_s"] == pytest.approx(run0["rounds"] / run0["cpu_seconds"])
    assert run0["steps"] > run0["rounds"] >= run0["matches"] * 1


def test_bench_engine_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--seconds must be positive" in fails(capsys, "bench", "engine", "--seconds", "0")
    assert "--repeat must be 1 or more" in fails(capsys, "bench", "engine", "--repeat", "0")


def test_bench_kernel_calls_the_kernel(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def benchmark(*, seconds: float, rules: Rules, seed: int, policy: str) -> dict[str, Any]:
        calls.append({"seconds": seconds, "rules": rules, "seed": seed, "policy": policy})
        return {"rounds_per_s": 123456.0, "rounds": 1000, "seconds": 0.5, "backend": "kernel"}

    kernel = types.ModuleType("koikoi.kernel")
    kernel.benchmark = benchmark  # type: ignore[attr-defined]
    kernel.available = lambda: True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "koikoi.kernel", kernel)
    status, out, _ = run(capsys, "bench", "kernel", "--seconds", "0.5", "--rules", "leaflet")
    assert status == 0
    assert calls == [{"seconds": 0.5, "rules": get_rules("leaflet"), "seed": 0, "policy": "random"}]
    assert "rounds/s: 123,456" in out
    assert out.startswith("command: koikoi bench kernel --seconds 0.5 --rules leaflet")


def test_bench_kernel_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "koikoi.kernel", None)
    line = fails(capsys, "bench", "kernel")
    assert line == "koikoi: error: " + KERNEL_MISSING
    kernel = types.ModuleType("koikoi.kernel")
    kernel.available = lambda: False  # type: ignore[attr-defined]
    kernel.benchmark = lambda **kw: {}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "koikoi.kernel", kernel)
    assert fails(capsys, "bench", "kernel").endswith("(pip install numba numpy)")


@pytest.mark.slow
def test_bench_kernel_real(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("numba")
    status, out, _ = run(capsys, "bench", "kernel", "--seconds", "0.5", "--json")
    assert status == 0
    assert json.loads(out)["rounds_per_s"] > 0


# ------------------------------------------------- play, serve and analyze


class _Valuer:
    """A deterministic evaluator: points and match-win chances rank differently."""

    name = "valuer"

    def evaluate(self, view: Any, rng: Any) -> dict[int, float]:
        return {a: float(a % 7) for a in view.legal_ids}

    def evaluate_detail(self, view: Any, rng: Any) -> dict[int, Any]:
        from koikoi.agents.base import ActionValue

        return {a: ActionValue(points=float(a % 7), equity=(a % 5) / 5) for a in view.legal_ids}


def test_analyze_defaults_to_the_hints_evaluator(capsys: pytest.CaptureFixture[str]) -> None:
    from koikoi.agents import make_agent
    from koikoi.cli.analyze import DEFAULT_AGENT
    from koikoi.features.opponents import HINT_SPEC

    # The hints' evaluator, on an iteration budget instead of the clock (two runs agree).
    hints, analysis = make_agent(HINT_SPEC), make_agent(DEFAULT_AGENT)
    assert type(analysis) is type(hints) and analysis.time_limit is None
    assert DEFAULT_AGENT == "expert:iterations=1500"
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default expert:iterations=1500: the games' hints" in help_text


def test_analyze_ranks_a_position_as_the_hints_do() -> None:
    """Same evaluator, same order (what it maximises: the match-win chance), same units."""
    from koikoi.features.opponents import format_equity, format_points, ranked
    from koikoi.game.engine import Match
    from koikoi.game.positions import position
    from koikoi.game.views import view_of
    from koikoi.lab.analysis import analyze_position, format_position_analysis

    match = Match(get_rules("nintendo"), seed=7)
    view = view_of(match, match.current)
    valuer = _Valuer()
    analysis = analyze_position(position(view), valuer)
    hint = ranked(valuer.evaluate_detail(view, None), view.legal_ids)
    assert analysis.ranked == [a for a, _ in hint]
    assert analysis.ranked != sorted(view.legal_ids, key=lambda a: (-(a % 7), a))
    best = hint[0][1]
    table = format_position_analysis(analysis)
    assert "match win" in table and "round points" in table
    assert format_equity(best.equity or 0) == f"{round(100 * (best.equity or 0))}% match win"
    assert format_points(best.points) == f"{best.points:+.1f} points"


@pytest.mark.parametrize("command", ["play", "serve"])
def test_play_and_serve_help_name_the_levels(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    if command == "play":
        assert "level:1 (Novice) to level:8, expert (level 8, the default)" in out
    else:
        assert "play the AI from level 1 to 8 (expert, the default;" in out


def test_serve_limits_come_from_flags_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`koikoi serve --hello-timeout 3` reaches the server's settings; a variable fills the rest."""
    import argparse

    from koikoi.cli import build_parser
    from koikoi.cli.serve import ServeError, _config

    pytest.importorskip("starlette")
    monkeypatch.setenv("KOIKOI_MAX_CONNECTIONS_PER_ADDRESS", "7")
    args = build_parser().parse_args(
        ["serve", "--hello-timeout", "3", "--max-ai-games-per-address", "2"]
    )
    assert isinstance(args, argparse.Namespace)
    config = _config(args)
    assert (config.hello_timeout, config.max_ai_games_per_address) == (3.0, 2)
    assert config.max_connections_per_address == 7
    assert config.max_unauthenticated_per_address == 16  # the default
    bad = build_parser().parse_args(["serve", "--max-connections", "0"])
    with pytest.raises(ServeError, match="--max-connections must be a positive number"):
        _config(bad)
    monkeypatch.setenv("KOIKOI_HELLO_TIMEOUT", "soon")
    with pytest.raises(ServeError, match="KOIKOI_HELLO_TIMEOUT"):
        _config(build_parser().parse_args(["serve"]))


@pytest.mark.parametrize(
    ("lang", "host", "expected"),
    [
        ("en", "127.0.0.1", "Open http://127.0.0.1:{port}/ in a browser."),
        ("ja", "127.0.0.1", "ブラウザーで http://127.0.0.1:{port}/ を開いてください。"),
        ("en", "0.0.0.0", "open http://127.0.0.1:{port}/ in a browser here"),
    ],
)
def test_serve_first_prints_where_to_open_the_game(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    lang: str,
    host: str,
    expected: str,
) -> None:
    """One plain line on stdout, with the real host and port, before the server's JSON logs."""
    import socket

    pytest.importorskip("uvicorn")
    import uvicorn

    import koikoi.server.app
    import koikoi.server.logs
    from koikoi.i18n import set_language

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    seen: list[str] = []

    def fake_run(app: object, **options: object) -> None:
        seen.append(capsys.readouterr().out)
        assert options["host"] == host and options["port"] == port

    monkeypatch.setattr(uvicorn, "run", fake_run)
    monkeypatch.setattr(koikoi.server.app, "create_app", lambda *a, **k: object())
    monkeypatch.setattr(koikoi.server.logs, "configure_logging", lambda level: None)
    try:
        code = main(["--lang", lang, "serve", "--host", host, "--port", str(port)])
    finally:
        set_language("en")
    assert code == 0 and len(seen) == 1
    lines = seen[0].splitlines()
    assert len(lines) == 1 and expected.format(port=port) in lines[0]


def test_serve_limit_defaults_in_the_help_are_the_servers() -> None:
    """The flags' help repeats ServerConfig's defaults (registering imports no server code)."""
    pytest.importorskip("starlette")
    from koikoi.cli.serve import _LIMITS
    from koikoi.server.config import ENV_FIELDS, ServerConfig

    config = ServerConfig()
    for flag, kind, default, _ in _LIMITS:
        name = flag[2:].replace("-", "_")
        assert name in ENV_FIELDS
        assert getattr(config, name) == default and isinstance(default, kind), flag


def test_serve_doctests() -> None:
    import doctest

    from koikoi.cli import serve

    failures, attempted = doctest.testmod(serve, optionflags=doctest.ELLIPSIS)
    assert failures == 0 and attempted >= 3
