"""A round robin of several agents on duplicate deals, with Elo ratings and intervals.

Every pairing of the agents plays the same deal seeds, each deal twice with the
seats swapped (the arena's duplicate pairs, :func:`~koikoi.lab.arena.run_arena`),
so every agent meets the same luck.

**Ratings.** A Bradley-Terry model on the Elo scale: agent ``i`` scores
``1 / (1 + 10 ** ((r_j - r_i) / 400))`` on average against agent ``j``. The
ratings are its maximum-likelihood fit to the match scores (a win 1, a draw one
half), found by the minorization-maximization iteration of Hunter (2004), with
one virtual draw added to every pairing (as BayesElo's prior does) so that an
agent that wins every match still has a finite rating. Ratings are centred on
their mean (0). **Intervals**: a percentile bootstrap: the duplicate pairs of
every pairing are resampled with replacement (a pair is the unit, so the luck of
the deal stays cancelled) and the ratings refitted, ``bootstrap`` times; the
interval runs from the 2.5th to the 97.5th percentile.

>>> from koikoi.game.rules import get_rules
>>> result = run_tournament(TournamentConfig(("greedy", "random"), get_rules("koikoi-japan"), 2))
>>> [row["agent"] for row in result["ratings"]]
['greedy', 'random']
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import IO, Any, Final

from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import Rules
from koikoi.lab.arena.config import ArenaConfig
from koikoi.lab.arena.results import PairResult
from koikoi.lab.arena.runners import run_arena
from koikoi.lab.arena.stats import percentile

__all__ = ["TournamentConfig", "fit_elo", "format_tournament", "run_tournament"]

PRIOR_DRAWS: Final = 1.0
"""Virtual draws added to every pairing (keeps every rating finite)."""
_TOLERANCE: Final = 1e-9
_MAX_ITERATIONS: Final = 10_000


@dataclass(frozen=True)
class TournamentConfig:
    """What to play.

    Args:
        agents: two or more agent specs, each once.
        rules: the rule set.
        matches: matches per pairing (even: each deal twice, seats swapped).
        seed: every pairing plays the deals of this seed.
        workers: processes per pairing.
        bootstrap: bootstrap resamples for the intervals.
    """

    agents: tuple[str, ...]
    rules: Rules
    matches: int
    seed: int = 0
    workers: int = 1
    bootstrap: int = 1000

    def validate(self) -> None:
        """Raise :class:`InvalidInputError` on a bad setting."""
        if len(self.agents) < 2:
            raise InvalidInputError(
                f"a tournament needs two agents or more, not {len(self.agents)}"
            )
        seen: set[str] = set()
        for spec in self.agents:
            if spec in seen:
                raise InvalidInputError(f"agent {spec!r} is given twice: give each agent once")
            seen.add(spec)
        if self.bootstrap < 1:
            raise InvalidInputError(f"--bootstrap must be 1 or more, not {self.bootstrap}")
        for a, b in combinations(self.agents, 2):
            self.pairing(a, b).validate()

    def pairing(self, a: str, b: str) -> ArenaConfig:
        """The arena of one pairing (the same deal seeds for every pairing)."""
        return ArenaConfig((a, b), self.rules, self.matches, seed=self.seed, workers=self.workers)


def fit_elo(
    n: int, games: Sequence[tuple[int, int, float, float]], *, prior: float = PRIOR_DRAWS
) -> list[float]:
    """Maximum-likelihood Bradley-Terry ratings on the Elo scale, centred on 0.

    Args:
        n: the number of agents.
        games: ``(i, j, score_i, count)``: agent ``i`` scored ``score_i`` (wins plus
            half the draws) in ``count`` matches against agent ``j``.
        prior: virtual draws added to every pair of agents that met.

    >>> [round(r) for r in fit_elo(2, [(0, 1, 3.0, 4.0)], prior=0.0)]
    [95, -95]
    """
    wins = [0.0] * n
    met: dict[tuple[int, int], float] = {}
    for i, j, score, count in games:
        if not (0 <= i < n and 0 <= j < n) or i == j or count <= 0 or not 0 <= score <= count:
            raise InvalidInputError(f"bad result {i, j, score, count} for {n} agents")
        wins[i] += score
        wins[j] += count - score
        key = (min(i, j), max(i, j))
        met[key] = met.get(key, 0.0) + count
    for i, j in met:
        met[i, j] += prior
        wins[i] += prior / 2
        wins[j] += prior / 2
    strength = [1.0] * n
    for _ in range(_MAX_ITERATIONS):
        new = []
        for k in range(n):
            denominator = sum(
                count / (strength[i] + strength[j]) for (i, j), count in met.items() if k in (i, j)
            )
            new.append(wins[k] / denominator if denominator > 0 and wins[k] > 0 else 1e-12)
        mean_log = sum(math.log(s) for s in new) / n
        new = [s / math.exp(mean_log) for s in new]
        done = max(abs(a - b) for a, b in zip(new, strength, strict=True)) < _TOLERANCE
        strength = new
        if done:
            break
    return [400.0 * math.log10(s) for s in strength]


def _games(
    agents: int, played: dict[tuple[int, int], list[PairResult]]
) -> list[tuple[int, int, float, float]]:
    out = []
    for (i, j), pairs in played.items():
        matches = [m for p in pairs for m in p.matches]
        if matches:
            out.append((i, j, sum(m.score_of(0) for m in matches), float(len(matches))))
    return out


def run_tournament(
    config: TournamentConfig,
    *,
    progress: IO[str] | None = None,
    on_pairing: Callable[[str, str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Play every pairing and rate the agents (see the module docs).

    Returns:
        ``{"rules", "matches_per_pairing", "seed", "method", "ratings": [...],
        "pairings": [...]}``; ``ratings`` best first, each with ``agent``, ``elo``,
        ``low``, ``high`` (the 95% interval), ``score`` (the mean match score),
        ``matches`` and ``net_per_round`` (own points minus the opponent's, per round).

    Raises:
        InvalidInputError: a bad setting or agent spec.
    """
    config.validate()
    agents = config.agents
    index = {spec: k for k, spec in enumerate(agents)}
    played: dict[tuple[int, int], list[PairResult]] = {}
    pairings = []
    for a, b in combinations(agents, 2):
        result = run_arena(config.pairing(a, b), progress=progress)
        played[index[a], index[b]] = result.pairs
        row = result.summary["agents"]
        pairing = {
            "agents": [a, b],
            "matches": row[0]["matches"],
            "score": row[0]["score"]["mean"] if isinstance(row[0]["score"], dict) else None,
            "summary": result.summary,
        }
        pairings.append(pairing)
        if on_pairing is not None:
            on_pairing(a, b, pairing)
    n = len(agents)
    ratings = fit_elo(n, _games(n, played))
    rng = random.Random(config.seed)
    samples: list[list[float]] = [[] for _ in agents]
    for _ in range(config.bootstrap):
        resampled = {key: [rng.choice(pairs) for _ in pairs] for key, pairs in played.items()}
        for k, r in enumerate(fit_elo(n, _games(n, resampled))):
            samples[k].append(r)
    rows: list[dict[str, Any]] = []
    for k, spec in enumerate(agents):
        score = matches = net = rounds = 0.0
        for (i, j), pairs in played.items():
            if k not in (i, j):
                continue
            me = 0 if k == i else 1
            for p in pairs:
                for m in p.matches:
                    score += m.score_of(me)
                    matches += 1
                    net += m.points[me] - m.points[1 - me]
                    rounds += m.rounds
        rows.append(
            {
                "agent": spec,
                "elo": round(ratings[k], 1),
                "low": round(percentile(samples[k], 2.5), 1),
                "high": round(percentile(samples[k], 97.5), 1),
                "score": round(score / matches, 4) if matches else None,
                "matches": int(matches),
                "net_per_round": round(net / rounds, 3) if rounds else None,
            }
        )
    rows.sort(key=lambda row: -float(row["elo"]))
    for pairing in pairings:
        pairing.pop("summary")
    return {
        "rules": config.rules.name,
        "matches_per_pairing": config.matches,
        "seed": config.seed,
        "method": (
            "Bradley-Terry maximum likelihood on the Elo scale (centred on 0, "
            f"{PRIOR_DRAWS:g} virtual draw per pairing); 95% intervals from "
            f"{config.bootstrap} bootstrap resamples of the duplicate pairs"
        ),
        "ratings": rows,
        "pairings": pairings,
    }


def format_tournament(result: dict[str, Any]) -> str:
    """The ratings as a text table, best first."""
    rows = result["ratings"]
    width = max(len("agent"), *(len(row["agent"]) for row in rows))
    lines = [
        f"Tournament under {result['rules']}: {result['matches_per_pairing']} matches a "
        f"pairing on duplicate deals, seed {result['seed']}",
        "",
        f"{'rank':>4}  {'agent':<{width}}  {'Elo':>6}  {'95% interval':>16}  "
        f"{'score':>6}  {'net/round':>9}  {'matches':>7}",
    ]
    for rank, row in enumerate(rows, start=1):
        interval = f"[{row['low']:+.0f}, {row['high']:+.0f}]"
        score = "-" if row["score"] is None else f"{100 * row['score']:.1f}%"
        net = "-" if row["net_per_round"] is None else f"{row['net_per_round']:+.2f}"
        lines.append(
            f"{rank:>4}  {row['agent']:<{width}}  {row['elo']:>+6.0f}  {interval:>16}  "
            f"{score:>6}  {net:>9}  {row['matches']:>7}"
        )
    lines += ["", result["method"] + "."]
    return "\n".join(lines)
