"""Tests of koikoi.features.stats: one player's statistics over finished game records."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from koikoi.features.stats import GameLine, Summary, game_line, summarize, summarize_lines
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, RecordedAction
from koikoi.game.rules import PRESET_NAMES, get_rules


def _settlement(winner: int | None, points: int, yaku: list[str]) -> dict[str, Any]:
    deltas = [0, 0]
    if winner is not None:
        deltas[winner], deltas[1 - winner] = points, -points
    return {
        "winner": winner,
        "reason": "stop" if winner is not None else "exhausted",
        "exhausted": winner is None,
        "base": points,
        "points": points,
        "deltas": deltas,
        "yaku": [{"name": y, "points": 1, "cards": []} for y in yaku],
        "multipliers": [],
    }


def _record(
    actions: list[tuple[int, int, str]],
    settlements: list[dict[str, Any]],
    *,
    players: tuple[str, str] = ("me", "bot"),
    rules: str = "nintendo",
    finished: bool = True,
) -> GameRecord:
    """A hand-made record: stats reads actions and settlements and never replays."""
    scores = [sum(s["deltas"][i] for s in settlements) for i in (0, 1)]
    winner = None if scores[0] == scores[1] else (0 if scores[0] > scores[1] else 1)
    return GameRecord(
        rules={"name": rules},
        seed=None,
        players=list(players),
        first_dealer={},
        deals=[],
        actions=[RecordedAction(r, p, a) for r, p, a in actions],
        settlements=settlements,
        scores=scores,
        winner=winner,
        finished=finished,
        created="2024-01-01T00:00:00Z",
        meta={"game": "g1"},
    )


def test_koikoi_success_follows_the_definition() -> None:
    rec = _record(
        [
            # round 1: two calls by player 0, then player 1 wins: the first call
            # succeeded (player 0 scored again), the second failed
            (1, 0, "play 1L"),
            (1, 0, "koikoi"),
            (1, 1, "play 2A"),
            (1, 0, "play 3L"),
            (1, 0, "koikoi"),
            (1, 1, "stop"),
            # round 2: one call, player 0 wins the round after it (no second decision)
            (2, 1, "play 4A"),
            (2, 0, "koikoi"),
            (2, 0, "play 5A"),
            # round 3: player 1 calls; nobody wins
            (3, 1, "koikoi"),
            (3, 0, "play 6A"),
        ],
        [
            _settlement(1, 6, ["tane"]),
            _settlement(0, 8, ["sanko", "tan"]),
            _settlement(None, 0, []),
        ],
    )
    me = game_line(rec, 0)
    assert (me.koikoi_calls, me.koikoi_successes) == (3, 2)
    bot = game_line(rec, 1)
    assert (bot.koikoi_calls, bot.koikoi_successes) == (1, 0)
    assert me.rounds == 3 and me.rounds_won == 1 and bot.rounds_won == 1
    assert me.points_won == 8 and me.net_points == 4 and bot.net_points == -4
    assert me.yaku == (("sanko", 1), ("tan", 1)) and bot.yaku == (("tane", 1),)
    assert me.result == "win" and bot.result == "loss"
    assert me.score == (2, -2) and me.opponent == "bot" and bot.opponent == "me"
    assert me.game_id == "g1"


def test_stop_after_a_call_counts_as_scoring_again() -> None:
    rec = _record(
        [(1, 0, "koikoi"), (1, 1, "play 1A"), (1, 0, "stop")], [_settlement(0, 4, ["tan"])]
    )
    line = game_line(rec, 0)
    assert (line.koikoi_calls, line.koikoi_successes) == (1, 1)


def test_breakdowns_by_rules_and_opponent() -> None:
    won = [_settlement(0, 5, ["sanko"])]
    lost = [_settlement(1, 3, ["tan"])]
    games = [
        (_record([], won, players=("me", "alice")), 0),
        (_record([], lost, players=("bob", "me"), rules="korean"), 1),  # me in seat 1: I win
        (_record([], lost, players=("me", "alice"), rules="korean"), 0),
        (_record([], [_settlement(None, 0, [])], players=("me", "alice")), 0),
        (_record([], won, finished=False), 0),
    ]
    s = summarize(games)
    assert s.unfinished == 1
    t = s.total
    assert (t.games, t.wins, t.losses, t.draws) == (4, 2, 1, 1)
    assert t.win_rate == 0.5 and t.net_points == 2 * (5 + 3 - 3)
    assert t.points_per_round == pytest.approx(10 / 4)
    assert dict(t.yaku) == {"sanko": 1, "tan": 1}
    assert [name for name, _ in s.by_opponent] == ["alice", "bob"]
    alice = dict(s.by_opponent)["alice"]
    assert (alice.games, alice.wins, alice.losses, alice.draws) == (3, 1, 1, 1)
    assert [name for name, _ in s.by_rules] == ["korean", "nintendo"]
    korean = dict(s.by_rules)["korean"]
    assert (korean.games, korean.wins, korean.losses) == (2, 1, 1)
    assert [g.result for g in s.games] == ["win", "win", "loss", "draw"]
    again = summarize_lines(s.games, unfinished=1)
    assert again == s


def test_empty_summary_has_no_rates() -> None:
    s = summarize([])
    assert s.total.games == 0
    assert s.total.win_rate is None and s.total.koikoi_success_rate is None
    assert s.to_dict()["total"]["points_per_round"] is None


@pytest.mark.parametrize("seat", [2, -1, True, "0", None])
def test_bad_seat_is_refused(seat: Any) -> None:
    rec = _record([], [_settlement(0, 1, [])])
    with pytest.raises(InvalidInputError, match="seat must be 0 or 1"):
        summarize([(rec, seat)])
    with pytest.raises(InvalidInputError, match="seat must be 0 or 1"):
        game_line(rec, seat)


def test_unfinished_game_has_no_line() -> None:
    rec = _record([], [], finished=False)
    with pytest.raises(InvalidInputError, match="unfinished"):
        game_line(rec, 0)


# --------------------------------------------------------- real matches


def _random_match(seed: int, preset: str) -> tuple[Match, list[tuple[int, int, int, int | None]]]:
    """A random legal match, and for each koi-koi call (round, caller, yaku total at the
    call, best yaku total the caller reached later in the round), read from the engine."""
    rng = random.Random(seed)
    m = Match(get_rules(preset), seed=seed)
    calls: list[list[Any]] = []
    while not m.is_over:
        rnd = m.round
        number, player = m.round_number, m.current
        ids = m.legal_ids()
        action = rng.choice(ids)
        text = m.describe(action)
        m.apply(action)
        for call in calls:
            if call[0] == number and m.round_number == number:
                call[3] = max(call[3], m.round.scores[call[1]])
        if text == "koikoi":
            calls.append([number, player, rnd.scores[player], rnd.scores[player]])
    return m, [(c[0], c[1], c[2], c[3]) for c in calls]


@given(seed=st.integers(0, 2**32 - 1), preset=st.sampled_from(PRESET_NAMES))
def test_real_matches_agree_with_the_engine(seed: int, preset: str) -> None:
    m, calls = _random_match(seed, preset)
    rec = GameRecord.from_match(m, players=["a", "b"], created="2024-01-01T00:00:00Z")
    lines = [game_line(rec, seat) for seat in (0, 1)]
    for seat, line in enumerate(lines):
        assert line.net_points == m.scores[seat] - m.scores[1 - seat]
        assert line.rounds == len(m.settlements)
        assert line.rounds_won == sum(s.winner == seat for s in m.settlements)
        mine = [c for c in calls if c[1] == seat]
        assert line.koikoi_calls == len(mine)
        # the oracle: the caller's yaku total rose after the call, or the round went to them
        expected = sum(
            1 for r, p, at, best in mine if best > at or m.settlements[r - 1].winner == p
        )
        assert line.koikoi_successes == expected
        made = sum(len(s.yaku) for s in m.settlements if s.winner == seat)
        assert sum(n for _, n in line.yaku) == made
    assert sum(line.points_won for line in lines) == sum(
        s.points for s in m.settlements if s.winner is not None
    )
    results = {line.result for line in lines}
    assert results == ({"draw"} if m.winner is None else {"win", "loss"})
    summary = summarize([(rec, 0), (rec, 1)])
    assert summary.total.wins == summary.total.losses
    assert summary.total.net_points == sum(line.net_points for line in lines)
    json.dumps(summary.to_dict())  # JSON-ready


def test_summary_round_trips_to_plain_data() -> None:
    m, _ = _random_match(3, "nintendo")
    rec = GameRecord.from_match(m, players=["a", "b"], created="2024-01-01T00:00:00Z")
    s = summarize([(rec, 1)])
    data = s.to_dict()
    assert isinstance(s, Summary) and isinstance(s.games[0], GameLine)
    assert data["games"][0]["opponent"] == "a"
    assert data["games"][0]["rules"] == m.rules.name
    assert data["by_rules"][0]["name"] == m.rules.name
    assert data["total"]["games"] == 1


def test_doctests() -> None:
    import doctest

    import koikoi.features.stats

    failures, _ = doctest.testmod(koikoi.features.stats)
    assert failures == 0
