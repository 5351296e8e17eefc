"""Matches between two agents, with duplicate deals and honest statistics.

An arena plays agent A against agent B under one rule set. By default deals
are **duplicate**: each deal seed is played twice with the seats swapped, and
both matches of a pair use the same :class:`~koikoi.game.engine.Match` seed, so the
chance (first dealer, every shuffle) is identical and only the players differ;
luck largely cancels within a pair. The agents' own random generators are
seeded from the arena seed too, so a run replays exactly.

Statistics (see :func:`summarize`), per agent:

* match wins / draws / losses and the match win rate with a 95% Wilson
  interval;
* the match score ((wins + draws / 2) / matches) with a 95% interval (the
  Wilson interval of the score, widened to the pair-level scores' normal
  interval where that is wider: never a single point), and the Elo difference
  it implies, an end at a score of 0 or 1 unbounded (``None`` in the JSON);
* points per round (points won in the rounds it won) with a 95% interval, and
  the **net** points per round (own points minus the opponent's) with a 95%
  interval paired by deal: the per-pair differences are the units, so the
  luck of the deal cancels;
* koi-koi calls and their success rate (a call succeeds if the caller wins
  that round), yaku frequencies, forfeits with their reasons, thinking time.

``sprt=(elo0, elo1)`` runs a sequential probability ratio test on the pair
scores (the GSPRT of fishtest, normal approximation) and stops as soon as it
accepts H0 (Elo <= elo0) or H1 (Elo >= elo1). Pairs are always consumed in
order, so the result does not depend on the number of workers.

The spec ``oracle`` is the arena's own (:mod:`koikoi.lab.oracle`): a measuring
tool that sees every card, which :func:`play_match` hands the true match at
each of its decisions; no other part of the package builds it.

A bot that breaks the protocol, crashes, times out or plays an illegal action
loses that match (a forfeit, with the reason) and the arena carries on.

The package, one concern a module: :mod:`~koikoi.lab.arena.stats` (intervals,
Elo, the SPRT), :mod:`~koikoi.lab.arena.config` (what to play, seeds),
:mod:`~koikoi.lab.arena.results` (what was played), :mod:`~koikoi.lab.arena.play`
(one match, one pair), :mod:`~koikoi.lab.arena.runners` (local processes and
Ray), :mod:`~koikoi.lab.arena.report` (summary, text report, plot) and
:mod:`~koikoi.lab.arena.latency` (decision latency).

>>> from koikoi.game.rules import get_rules
>>> result = run_arena(ArenaConfig(("greedy", "random"), get_rules("koikoi-japan"), 2, seed=1))
>>> result.summary["agents"][0]["matches"]
2
"""

from __future__ import annotations

from koikoi.lab.arena.config import BACKENDS, ArenaConfig, derive_seed
from koikoi.lab.arena.latency import decision_latency
from koikoi.lab.arena.play import play_match, run_pair
from koikoi.lab.arena.report import format_report, plot_running_mean, summarize
from koikoi.lab.arena.results import ArenaResult, MatchResult, PairResult
from koikoi.lab.arena.runners import run_arena
from koikoi.lab.arena.stats import (
    ELO_CAP,
    Z95,
    elo_from_score,
    elo_interval,
    elo_of_score,
    gsprt_llr,
    mean_ci,
    percentile,
    ratio_ci,
    score_interval,
    wilson,
)

__all__ = [
    "BACKENDS",
    "ELO_CAP",
    "Z95",
    "ArenaConfig",
    "ArenaResult",
    "MatchResult",
    "PairResult",
    "decision_latency",
    "derive_seed",
    "elo_from_score",
    "elo_interval",
    "elo_of_score",
    "format_report",
    "gsprt_llr",
    "mean_ci",
    "percentile",
    "play_match",
    "plot_running_mean",
    "ratio_ci",
    "run_arena",
    "run_pair",
    "score_interval",
    "summarize",
    "wilson",
]
