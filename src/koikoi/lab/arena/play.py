"""Playing one match and one pair job (a worker's unit), with its records."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from koikoi.agents.base import AGENT_KINDS, Agent, AgentFactory, make_agent, parse_agent_spec
from koikoi.game.actions import KOIKOI_ID
from koikoi.game.engine import Match
from koikoi.game.errors import IllegalActionError
from koikoi.game.rules import Rules, rules_from_dict
from koikoi.game.scoring import Settlement
from koikoi.game.views import view_of
from koikoi.lab.arena.config import derive_seed
from koikoi.lab.arena.results import MatchResult, PairResult
from koikoi.lab.oracle import ORACLE_KIND, FullInformationAgent, oracle_from_spec


@dataclass(frozen=True)
class PairJob:
    """One unit of work for a worker: a pair of matches (or one match).

    Plain data (the rules as a dict), so that it pickles for worker processes.
    """

    pair: int
    agents: tuple[str, str]
    rules: dict[str, Any]
    seed: int
    duplicate: bool
    records: str | None
    common_rng: bool = False


_AGENTS: dict[str, tuple[AgentFactory, Agent]] = {}
_ORACLES: dict[str, FullInformationAgent] = {}
_RULES: dict[str, Rules] = {}


def agent_for(spec: str) -> tuple[Agent, bool]:
    """An agent for ``spec``; stateless agents are reused within a process.

    A reused agent is kept with the factory that made it, and is made again when
    its kind has been registered anew (:func:`koikoi.agents.register_agent`) since.
    The spec ``oracle`` is the arena's own (:mod:`koikoi.lab.oracle`): a player that
    sees the hidden cards, which :func:`play_match` gives the true match.

    Returns ``(agent, fresh)``: fresh agents (external bots) are closed after the match.
    """
    kind = parse_agent_spec(spec)[0]
    if kind == ORACLE_KIND:  # the arena's own measuring tool, outside the agent registry
        kept_oracle = _ORACLES.get(spec)
        if kept_oracle is None:
            kept_oracle = _ORACLES[spec] = oracle_from_spec(spec)
        return kept_oracle, False
    if kind == "cmd":
        return make_agent(spec), True
    kept = _AGENTS.get(spec)
    if kept is not None and AGENT_KINDS.get(kind) is kept[0]:
        return kept[1], False
    agent = make_agent(spec)
    _AGENTS[spec] = (AGENT_KINDS[kind], agent)
    return agent, False


def _rules(data: dict[str, Any]) -> Rules:
    key = repr(sorted((k, repr(v)) for k, v in data.items()))
    rules = _RULES.get(key)
    if rules is None:
        rules = _RULES[key] = rules_from_dict(data, base=Rules(), source="arena rules")
    return rules


def _bot_error_types() -> tuple[type[BaseException], ...]:
    try:
        from koikoi.agents.external import BotError
    except ImportError:  # pragma: no cover - external.py ships with the package
        return (IllegalActionError,)
    return (BotError, IllegalActionError)


def close_agent(agent: Agent) -> None:
    """Close ``agent`` if it holds resources (an external bot's process); else nothing."""
    close = getattr(agent, "close", None)
    if callable(close):
        close()


def play_match(
    specs: tuple[str, str],
    rules: Rules,
    *,
    seats: tuple[int, int],
    match_seed: int,
    agent_seeds: tuple[int, int],
    pair: int = 0,
    game: int = 0,
    events: bool = False,
) -> tuple[MatchResult, Match]:
    """Play one match; ``seats[s]`` is the index (0 = A, 1 = B) of the agent at seat ``s``."""
    made = [agent_for(specs[0]), agent_for(specs[1])]
    agents = [made[seats[0]][0], made[seats[1]][0]]
    rngs = [random.Random(agent_seeds[seats[0]]), random.Random(agent_seeds[seats[1]])]
    match = Match(rules, seed=match_seed, events=events)
    errors = _bot_error_types()
    seat_agent = seats
    points = [0, 0]
    round_net: list[int] = []
    round_wins = [0, 0]
    calls = [0, 0]
    successes = [0, 0]
    round_calls = [0, 0]
    yaku: tuple[dict[str, int], dict[str, int]] = ({}, {})
    decisions = [0, 0]
    think = [0.0, 0.0]
    think_max = [0.0, 0.0]
    forfeit: str | None = None
    forfeit_by: int | None = None
    seen = 0

    def account(s: Settlement) -> None:
        w = s.winner
        if w is None:
            round_net.append(0)
        else:
            a = seat_agent[w]
            points[a] += s.points
            round_wins[a] += 1
            round_net.append(s.points if a == 0 else -s.points)
            successes[a] += round_calls[a]
            for y in s.yaku:
                yaku[a][y.name] = yaku[a].get(y.name, 0) + 1
        round_calls[0] = round_calls[1] = 0

    try:
        while seen < len(match.settlements):  # an instant hand in round 1
            account(match.settlements[seen])
            seen += 1
        while not match.is_over:
            seat = match.current
            a = seat_agent[seat]
            view = view_of(match, seat, with_history=False)
            t0 = time.perf_counter()
            player = agents[seat]
            try:
                if isinstance(player, FullInformationAgent):  # the oracle: the true match
                    action = player.act_on_match(match, rngs[seat])
                else:
                    action = player.act(view, rngs[seat])
            except errors as exc:
                forfeit, forfeit_by = f"{specs[a]}: {exc}", a
                break
            dt = time.perf_counter() - t0
            decisions[a] += 1
            think[a] += dt
            think_max[a] = max(think_max[a], dt)
            if action not in view.legal_ids:
                forfeit, forfeit_by = f"{specs[a]}: illegal action {action!r}", a
                break
            if action == KOIKOI_ID:
                calls[a] += 1
                round_calls[a] += 1
            match.apply_id(action)
            while seen < len(match.settlements):
                account(match.settlements[seen])
                seen += 1
    finally:
        for agent, fresh in made:
            if fresh:
                close_agent(agent)
    scores = (match.scores[seats.index(0)], match.scores[seats.index(1)])
    if forfeit_by is not None:
        winner: int | None = 1 - forfeit_by
    elif match.winner is None:
        winner = None
    else:
        winner = seat_agent[match.winner]
    result = MatchResult(
        pair=pair,
        game=game,
        seed=match_seed,
        seats=seats,
        winner=winner,
        scores=scores,
        rounds=len(match.settlements),
        points=(points[0], points[1]),
        round_net=round_net,
        round_wins=(round_wins[0], round_wins[1]),
        koikoi_calls=(calls[0], calls[1]),
        koikoi_successes=(successes[0], successes[1]),
        yaku=yaku,
        forfeit=forfeit,
        forfeit_by=forfeit_by,
        decisions=(decisions[0], decisions[1]),
        think=(think[0], think[1]),
        think_max=(think_max[0], think_max[1]),
    )
    return result, match


def _save_record(job: PairJob, result: MatchResult, match: Match) -> str | None:
    if job.records is None:
        return None
    try:
        from koikoi.game.record import GameRecord, distinct_names
    except ImportError:  # pragma: no cover - record.py ships with the package
        return None
    names = distinct_names(job.agents)  # "random A", "random B" for one agent twice
    players = [names[result.seats[0]], names[result.seats[1]]]
    meta = {
        "arena": {
            "pair": result.pair,
            "game": result.game,
            "agents": list(job.agents),
            "seats": list(result.seats),
            "forfeit": result.forfeit,
        }
    }
    path = Path(job.records) / f"pair{result.pair:05d}-game{result.game}.json"
    GameRecord.from_match(match, players=players, meta=meta).save(path)
    return str(path)


def run_pair(job: PairJob) -> PairResult:
    """Play one pair job (a worker's unit). Top-level, so that it pickles for ``spawn``."""
    rules = _rules(job.rules)
    base = job.seed
    agent_seeds = (derive_seed(base, job.pair, "agent", 0), derive_seed(base, job.pair, "agent", 1))
    results: list[MatchResult] = []
    if job.duplicate:
        match_seed = derive_seed(base, job.pair, "deal")
        games = [(0, (0, 1)), (1, (1, 0))]
    else:
        match_seed = derive_seed(base, job.pair, "match")
        games = [(0, (0, 1) if job.pair % 2 == 0 else (1, 0))]
    for game, seats in games:
        # Common random numbers: the generator of seat s is the same in both games.
        seeds = agent_seeds[::-1] if job.common_rng and seats[0] == 1 else agent_seeds
        result, match = play_match(
            job.agents,
            rules,
            seats=seats,
            match_seed=match_seed,
            agent_seeds=seeds,
            pair=job.pair,
            game=game,
            events=job.records is not None,
        )
        result.record = _save_record(job, result, match)
        results.append(result)
    return PairResult(job.pair, results)
