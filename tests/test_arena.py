"""The arena: statistics on synthetic data, duplicate deals, determinism, the command.

The statistics helpers are checked against values computed by hand; the arena
itself on short matches (``koikoi-japan`` cut to a few rounds) so that the
default run stays fast.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from koikoi.agents import register_agent
from koikoi.agents.base import AGENT_KINDS, GreedyAgent
from koikoi.cli import main
from koikoi.game.actions import KOIKOI_ID
from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import get_rules
from koikoi.game.views import PlayerView
from koikoi.lab.arena import (
    ArenaConfig,
    PairResult,
    decision_latency,
    derive_seed,
    elo_from_score,
    format_report,
    gsprt_llr,
    mean_ci,
    percentile,
    play_match,
    ratio_ci,
    run_arena,
    wilson,
)

SHORT = get_rules("koikoi-japan").replace(game__rounds=3)

# ----------------------------------------------------------------- statistics


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson(60, 100)
    assert lo == pytest.approx(0.50200, abs=1e-4)
    assert hi == pytest.approx(0.69060, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    lo, hi = wilson(0, 10)
    assert hi == pytest.approx(0.27753, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_mean_ci_known_values() -> None:
    m, lo, hi = mean_ci([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * math.sqrt(5 / 3) / 2
    assert (m, lo, hi) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert mean_ci([]) == (0.0, 0.0, 0.0)
    assert mean_ci([3.0]) == (3.0, 3.0, 3.0)


def test_ratio_ci_with_equal_denominators_is_the_mean_ci() -> None:
    rng = random.Random(1)
    nums = [rng.gauss(1.0, 3.0) * 12 for _ in range(200)]
    dens = [12.0] * 200
    assert ratio_ci(nums, dens) == pytest.approx(mean_ci([x / 12 for x in nums]))


def test_ratio_ci_covers_the_true_mean_on_synthetic_data() -> None:
    # 200 experiments of 300 units with a true ratio of 0.5: ~95% of the intervals cover it.
    rng = random.Random(7)
    covered = 0
    for _ in range(200):
        dens = [float(rng.choice((10, 12))) for _ in range(300)]
        nums = [sum(rng.gauss(0.5, 4.0) for _ in range(int(d))) for d in dens]
        _, lo, hi = ratio_ci(nums, dens)
        covered += lo <= 0.5 <= hi
    assert 180 <= covered <= 199


def test_elo_from_score() -> None:
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.64) == pytest.approx(100.0, abs=0.2)
    assert elo_from_score(0.36) == pytest.approx(-elo_from_score(0.64))
    assert elo_from_score(1.0) == 1200.0 and elo_from_score(0.0) == -1200.0


def test_gsprt_llr_sign_and_value() -> None:
    s0 = 0.5
    s1 = 1 / (1 + 10 ** (-50 / 400))
    scores = [1.0, 0.5, 0.5, 1.0, 0.0, 1.0, 0.5, 0.75]
    n = len(scores)
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / n
    expected = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert gsprt_llr(scores, 0, 50) == pytest.approx(expected)
    assert gsprt_llr([0.9] * 5 + [0.8] * 5, 0, 50) > 0
    assert gsprt_llr([0.1] * 5 + [0.2] * 5, 0, 50) < 0


def test_derive_seed_is_stable() -> None:
    assert derive_seed(1, 0, "deal") == derive_seed(1, 0, "deal")
    assert derive_seed(1, 0, "deal") != derive_seed(1, 1, "deal")
    assert derive_seed(1, 0, "deal") != derive_seed(2, 0, "deal")
    assert 0 <= derive_seed(123, "x") < 2**63


# ---------------------------------------------------------------- the arena


def _strip(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without timings (which vary from run to run)."""
    out: dict[str, Any] = json.loads(json.dumps(summary))
    out.pop("elapsed_s", None)
    for a in out["agents"]:
        for key in ("think_ms_mean", "think_ms_max"):
            a.pop(key)
    return out


def test_duplicate_pairs_share_the_deal_and_swap_seats() -> None:
    seed = derive_seed(5, 0, "deal")
    first, m1 = play_match(
        ("greedy", "random"), SHORT, seats=(0, 1), match_seed=seed, agent_seeds=(1, 2), events=True
    )
    second, m2 = play_match(
        ("greedy", "random"), SHORT, seats=(1, 0), match_seed=seed, agent_seeds=(1, 2), events=True
    )
    assert m1.deals[0] == m2.deals[0]  # the same chance
    assert m1.events[0].to_dict() == m2.events[0].to_dict()  # the same first dealer
    assert first.seats == (0, 1) and second.seats == (1, 0)


@pytest.mark.multiprocess
def test_arena_is_deterministic_and_independent_of_workers() -> None:
    config = ArenaConfig(("heuristic", "greedy"), SHORT, 6, seed=3)
    one = run_arena(config)
    again = run_arena(config)
    two = run_arena(ArenaConfig(("heuristic", "greedy"), SHORT, 6, seed=3, workers=2))
    assert _strip(one.summary) == _strip(again.summary) == _strip(two.summary)
    assert [len(p.matches) for p in one.pairs] == [2, 2, 2]


def test_common_rng_gives_each_seat_one_generator_in_both_games() -> None:
    """Two copies of one random player: with each seat's generator shared by both games
    of a pair, the second game repeats the first with the players' places swapped, so
    every pair nets exactly nothing; with a generator per agent (the default) it does not."""
    config = ArenaConfig(("random", "random"), SHORT, 8, seed=3, common_rng=True)
    common = run_arena(config)
    for pair in common.pairs:
        first, second = pair.matches
        assert first.scores == second.scores[::-1]
    a = common.summary["agents"][0]
    assert a["net_per_round"]["mean"] == 0.0 and a["score"]["mean"] == 0.5
    lo, hi = a["score"]["ci95"]  # every pair split: still no certainty from a sample
    assert lo < 0.5 < hi and lo + hi == pytest.approx(1.0)
    assert common.summary["common_rng"] is True
    apart = run_arena(dataclasses.replace(config, common_rng=False))
    assert any(p.matches[0].scores != p.matches[1].scores[::-1] for p in apart.pairs)
    assert apart.summary["common_rng"] is False
    # Different players still play their own games, on the same deals.
    mixed = run_arena(dataclasses.replace(config, agents=("greedy", "random")))
    assert mixed.summary["matches"] == 8


def test_no_duplicate_alternates_seats_with_fresh_deals() -> None:
    result = run_arena(ArenaConfig(("greedy", "random"), SHORT, 3, seed=1, duplicate=False))
    seats = [p.matches[0].seats for p in result.pairs]
    assert seats == [(0, 1), (1, 0), (0, 1)]
    assert len({p.matches[0].seed for p in result.pairs}) == 3
    assert result.summary["matches"] == 3 and result.summary["duplicate"] is False


def test_summary_counts_are_consistent() -> None:
    result = run_arena(ArenaConfig(("heuristic", "random"), SHORT, 8, seed=9))
    s = result.summary
    a, b = s["agents"]
    assert a["match_wins"] + a["match_draws"] + a["match_losses"] == 8
    assert a["match_wins"] == b["match_losses"] and a["match_draws"] == b["match_draws"]
    for x in (a, b):
        for key in ("match_win_rate", "points_per_round", "net_per_round", "score"):
            lo, hi = x[key]["ci95"]
            assert lo <= x[key]["mean"] <= hi
        assert x["koikoi"]["successes"] <= x["koikoi"]["calls"]
    assert a["net_per_round"]["mean"] == pytest.approx(-b["net_per_round"]["mean"])
    diff = a["points_per_round"]["mean"] - b["points_per_round"]["mean"]
    assert a["net_per_round"]["mean"] == pytest.approx(diff, abs=1e-3)
    rounds = sum(m.rounds for p in result.pairs for m in p.matches)
    assert s["rounds"] == a["rounds"] == rounds
    assert a["round_wins"] + b["round_wins"] <= rounds
    assert sum(a["yaku"].values()) >= 1
    assert "Elo difference" in format_report(s)


class _AlwaysKoikoi:
    """Calls koi-koi whenever it may; else the first legal action."""

    name = "always-koikoi"

    def act(self, view: PlayerView, rng: random.Random) -> int:
        return KOIKOI_ID if KOIKOI_ID in view.legal_ids else view.legal_ids[0]


def test_koikoi_calls_and_successes_are_counted() -> None:
    register_agent("always-koikoi", lambda params, raw: _AlwaysKoikoi())
    rules = get_rules("nintendo").replace(game__rounds=6)
    result, match = play_match(
        ("always-koikoi", "greedy"), rules, seats=(1, 0), match_seed=11, agent_seeds=(1, 2)
    )
    # Recount from the match itself: player 1 is agent A.
    calls = 0
    successes = 0
    pending = 0
    rnd_index = 0
    replay = iter(match.actions)
    from koikoi.game.engine import Match

    m = Match(rules, seed=11, events=False)
    for action in replay:
        if m.current == 1 and action == KOIKOI_ID:
            calls += 1
            pending += 1
        m.apply_id(action)
        while rnd_index < len(m.settlements):
            if m.settlements[rnd_index].winner == 1:
                successes += pending
            pending = 0
            rnd_index += 1
    assert calls > 0
    assert result.koikoi_calls == (calls, 0)
    assert result.koikoi_successes == (successes, 0)


def test_a_kind_registered_anew_plays_as_registered_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The arena reuses an agent by its spec within a process, but a kind registered
    again with another factory is made anew, not served from the reused agent."""
    rules = get_rules("nintendo").replace(game__rounds=6)
    monkeypatch.setitem(AGENT_KINDS, "probe", lambda params, raw: GreedyAgent())
    first, _ = play_match(
        ("probe", "greedy"), rules, seats=(1, 0), match_seed=11, agent_seeds=(1, 2)
    )
    again, _ = play_match(
        ("probe", "greedy"), rules, seats=(1, 0), match_seed=11, agent_seeds=(1, 2)
    )
    monkeypatch.setitem(AGENT_KINDS, "probe", lambda params, raw: _AlwaysKoikoi())
    second, _ = play_match(
        ("probe", "greedy"), rules, seats=(1, 0), match_seed=11, agent_seeds=(1, 2)
    )
    assert first.koikoi_calls[0] == again.koikoi_calls[0] == 0  # greedy always stops
    assert second.koikoi_calls[0] > 0
    monkeypatch.delitem(AGENT_KINDS, "probe")
    with pytest.raises(InvalidInputError, match="unknown agent 'probe'"):
        play_match(("probe", "greedy"), rules, seats=(1, 0), match_seed=11, agent_seeds=(1, 2))


def test_sprt_stops_early_when_decided() -> None:
    rules = get_rules("koikoi-japan").replace(game__rounds=2)
    config = ArenaConfig(("heuristic", "random"), rules, 200, seed=1, sprt=(0.0, 100.0))
    result = run_arena(config)
    sprt = result.summary["sprt"]
    assert sprt["result"] == "H1"
    assert sprt["llr"] >= sprt["upper"]
    assert sprt["units"] == len(result.pairs) < 100


def test_records_are_saved_and_replay(tmp_path: Path) -> None:
    from koikoi.game.record import load_record, replay

    config = ArenaConfig(("greedy", "random"), SHORT, 2, seed=4, records=tmp_path / "recs")
    result = run_arena(config)
    files = sorted((tmp_path / "recs").iterdir())
    assert [f.name for f in files] == ["pair00000-game0.json", "pair00000-game1.json"]
    for f, m in zip(files, result.pairs[0].matches, strict=True):
        record = load_record(f)
        assert record.players == [["greedy", "random"][s] for s in m.seats]
        assert replay(record).scores == list(record.scores)
        assert record.meta["arena"]["pair"] == 0


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from koikoi.lab.arena import plot_running_mean

    result = run_arena(ArenaConfig(("greedy", "random"), SHORT, 4, seed=2))
    out = plot_running_mean(result.pairs, tmp_path / "run.png", title="greedy vs random")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"matches": 3}, "must be even with duplicate deals"),
        ({"matches": 0}, "--matches must be 1 or more"),
        ({"workers": 0}, "--workers must be 1 or more"),
        ({"backend": "spark"}, "allowed local, ray"),
        ({"sprt": (50.0, 0.0)}, "elo0 < elo1"),
        ({"common_rng": True, "duplicate": False}, "--common-rng needs duplicate deals"),
    ],
)
def test_bad_settings_are_clear_errors(kwargs: dict[str, Any], message: str) -> None:
    config = ArenaConfig(("greedy", "random"), SHORT, **{"matches": 2, **kwargs})
    with pytest.raises(InvalidInputError, match=message):
        run_arena(config)


# ------------------------------------------------ intervals that claim no false certainty


def _pairs(outcomes: list[tuple[int | None, int | None]]) -> list[PairResult]:
    """Duplicate pairs with the given winners (agent index, None: a draw), nothing else."""
    from koikoi.lab.arena import MatchResult

    def match(pair: int, game: int, winner: int | None) -> MatchResult:
        seats = (0, 1) if game == 0 else (1, 0)
        return MatchResult(pair, game, pair, seats, winner, (0, 0), 1, (0, 0), [0])

    return [
        PairResult(i, [match(i, 0, w0), match(i, 1, w1)]) for i, (w0, w1) in enumerate(outcomes)
    ]


@pytest.mark.parametrize("winner", [0, 1])
def test_two_matches_give_a_wide_elo_interval(winner: int) -> None:
    """Two matches won by one side used to report Elo [-1200, -1200] (or [+1200, +1200])."""
    from koikoi.lab.arena import summarize

    config = ArenaConfig(("greedy", "random"), SHORT, matches=2)
    summary = summarize(config, _pairs([(winner, winner)]))
    elo, score = summary["elo"], summary["agents"][0]["score"]
    lo, hi = elo["ci95"]
    if winner == 0:  # A won both: Elo unbounded above, bounded below by little
        assert elo["mean"] is None and hi is None and lo is not None and lo < 0
        assert score["ci95"][0] < 0.5 < score["ci95"][1] == 1.0
    else:
        assert elo["mean"] is None and lo is None and hi is not None and hi > 0
        assert score["ci95"][0] == 0.0 < 0.5 < score["ci95"][1]
    text = format_report(summary)
    assert ("+∞" if winner == 0 else "−∞") in text and "1200" not in text
    json.dumps(summary, allow_nan=False)  # no Infinity: unbounded ends are null


def test_identical_pair_scores_still_give_an_interval() -> None:
    """Ten pairs all split 1-1: the pair scores have no spread, the interval still has width."""
    from koikoi.lab.arena import summarize

    config = ArenaConfig(("greedy", "random"), SHORT, matches=20)
    summary = summarize(config, _pairs([(0, 1)] * 10))
    lo, hi = summary["elo"]["ci95"]
    assert summary["elo"]["mean"] == 0.0 and lo is not None and hi is not None
    assert lo < -100 and hi > 100


_MATCH = st.sampled_from([0.0, 0.5, 1.0])  # agent A's score in one match


@given(pairs=st.lists(st.lists(_MATCH, min_size=1, max_size=2), min_size=1, max_size=60))
def test_elo_interval_holds_the_estimate_and_has_width(pairs: list[list[float]]) -> None:
    from koikoi.lab.arena import elo_interval, score_interval

    n = sum(len(p) for p in pairs)
    points = sum(sum(p) for p in pairs)
    score = points / n
    lo, hi = score_interval(points, n, [sum(p) / len(p) for p in pairs])
    assert 0.0 <= lo < hi <= 1.0 and lo <= score <= hi
    elo, elo_lo, elo_hi = elo_interval(score, lo, hi)
    assert elo_lo <= elo <= elo_hi and elo_lo < elo_hi
    # Finite on the side the data constrain: a loss or a draw bounds the Elo above,
    # a win or a draw bounds it below.
    assert math.isfinite(elo_hi) == (score < 1.0)
    assert math.isfinite(elo_lo) == (score > 0.0)


# -------------------------------------------------------------- the command


def test_cli_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["arena", "heuristic", "greedy", "--rules", "koikoi-japan", "--matches", "2", "--json"]
    )
    assert status == 0
    data = json.loads(capsys.readouterr().out)
    assert {"agents", "elo", "rules", "matches", "pairs", "duplicate", "seed"} <= set(data)
    assert [a["spec"] for a in data["agents"]] == ["heuristic", "greedy"]
    for a in data["agents"]:
        assert isinstance(a["match_wins"], int)
        for key in ("match_win_rate", "points_per_round"):
            assert set(a[key]) == {"mean", "ci95"}
            lo, hi = a[key]["ci95"]
            assert isinstance(a[key]["mean"], float) and lo <= a[key]["mean"] <= hi
        assert set(a["koikoi"]) == {"calls", "successes", "success_rate"}
        assert isinstance(a["yaku"], dict)
    assert set(data["elo"]) == {"mean", "ci95"}


def test_cli_text_report_plot_progress_and_sprt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "p.png"
    status = main(
        [
            "arena",
            "greedy",
            "random",
            "--rules",
            "koikoi-japan",
            "--matches",
            "4",
            "--seed",
            "8",
            "--progress",
            "--sprt",
            "0,200",
            "--plot",
            str(png),
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0
    assert "match win rate" in out and "SPRT [0, 200]" in out
    assert "arena [" in err and "2/2" in err
    assert png.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["greedy", "random", "--matches", "3"], "must be even"),
        (["greedy", "nobody"], "unknown agent 'nobody'"),
        (["greedy", "random", "--sprt", "fifty"], "--sprt must be two Elo values"),
        (["greedy", "random", "--rules", "atlantis"], "unknown rules"),
        (["greedy", "random", "--seed", "-4"], "seed must be a non-negative integer"),
    ],
)
def test_cli_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("koikoi: error: ") and message in err
    assert err.count("\n") == 1


def test_ray_backend_needs_ray(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        assert main(["arena", "greedy", "random", "--matches", "2", "--backend", "ray"]) == 2
        assert "needs ray" in capsys.readouterr().err
    else:  # pragma: no cover - only where ray is installed
        pytest.skip("ray is installed: see test_ray_backend")


def test_ray_backend() -> None:
    pytest.importorskip("ray")
    config = ArenaConfig(("greedy", "random"), SHORT, 4, seed=3)
    local = run_arena(config)
    remote = run_arena(ArenaConfig(("greedy", "random"), SHORT, 4, seed=3, backend="ray"))
    assert _strip(local.summary) == _strip(remote.summary)


def test_pair_result_properties() -> None:
    result = run_arena(ArenaConfig(("greedy", "random"), SHORT, 2, seed=6))
    pair: PairResult = result.pairs[0]
    assert pair.rounds == sum(m.rounds for m in pair.matches)
    assert pair.net == sum(m.points[0] - m.points[1] for m in pair.matches)
    assert pair.net == sum(sum(m.round_net) for m in pair.matches)
    assert 0.0 <= pair.score <= 1.0


def test_doctests() -> None:
    import doctest
    import importlib
    import pkgutil

    from koikoi.cli import arena as command
    from koikoi.lab import arena

    parts = [
        importlib.import_module(m.name)
        for m in pkgutil.iter_modules(arena.__path__, "koikoi.lab.arena.")
    ]
    examples = 0
    for module in (arena, *parts, command):
        failures, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0, module.__name__
        examples += attempted
    assert {m.__name__.rsplit(".", 1)[1] for m in parts} >= {"stats", "config", "runners", "report"}
    assert examples >= 10


# -------------------------------------------------------------- latency


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(100, 0, -1)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile(values, 100) == 100.0
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(InvalidInputError, match="no values"):
        percentile([], 50)


class _Clock:
    """The arena's ``time`` in the latency test: ``perf_counter`` moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


_CLOCK = _Clock()


class _Sleepy:
    """Takes a known time per decision (on :data:`_CLOCK`) and plays the first legal action."""

    name = "sleepy"
    time_limit = 0.004

    def act(self, view: PlayerView, rng: random.Random) -> int:
        _CLOCK.now += 0.004
        return view.legal_ids[0]


def test_decision_latency_times_real_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    import koikoi.lab.arena as arena

    monkeypatch.setattr(arena.latency, "time", _CLOCK)
    register_agent("sleepy-test", lambda params, raw: _Sleepy())
    result = decision_latency("sleepy-test", SHORT, decisions=25, against="greedy", seed=2)
    assert result["decisions"] == 25
    assert result["matches"] >= 1
    for key in ("p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms"):
        assert result[key] == pytest.approx(4.0), key  # only the timed agent's time counts
    assert result["budget_ms"] == 4.0
    assert result["p99_over_budget"] == pytest.approx(1.0, rel=1e-3)
    plain = decision_latency("greedy", SHORT, decisions=10, seed=2)
    assert "budget_ms" not in plain
    assert plain["p99_ms"] == 0.0  # greedy moved no clock
    with pytest.raises(InvalidInputError, match="1 or more"):
        decision_latency("greedy", SHORT, decisions=0)


def test_bench_agent_command(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["bench", "agent", "greedy", "--against", "random", "--decisions", "12", "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["decisions"] == 12 and out["spec"] == "greedy" and out["against"] == "random"
    assert out["command"].startswith("koikoi bench agent greedy --against random")
    status = main(["bench", "agent", "mcts:time=0.01", "--decisions", "3"])
    text = capsys.readouterr().out
    assert status == 0
    assert "p99" in text and "budget 10 ms" in text
    assert main(["bench", "agent", "smart"]) == 2
    assert "unknown agent 'smart'" in capsys.readouterr().err
