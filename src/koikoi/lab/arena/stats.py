"""The arena's statistics: proportion and mean intervals, Elo, the SPRT, percentiles."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Final

from koikoi.game.errors import InvalidInputError

Z95: Final = 1.959963984540054
ELO_CAP: Final = 1200.0
"""Elo differences are capped at +-1200 (a score of 0 or 1 has no finite Elo)."""


# ---------------------------------------------------------------- statistics


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``k / n``.

    >>> lo, hi = wilson(60, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.502, 0.691)
    """
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k <= 0 else max(0.0, centre - half)
    hi = 1.0 if k >= n else min(1.0, centre + half)
    return (lo, hi)


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """The mean and its normal-approximation interval ``(mean, lo, hi)``.

    With fewer than two values the interval is the mean itself.

    >>> mean_ci([1.0, 2.0, 3.0, 4.0])
    (2.5, 1.234..., 3.765...)
    """
    n = len(values)
    if n == 0:
        return (0.0, 0.0, 0.0)
    m = math.fsum(values) / n
    if n < 2:
        return (m, m, m)
    half = z * statistics.stdev(values) / math.sqrt(n)
    return (m, m - half, m + half)


def ratio_ci(
    nums: Sequence[float], dens: Sequence[float], z: float = Z95
) -> tuple[float, float, float]:
    """A ratio of sums ``sum(nums) / sum(dens)`` with its interval (delta method).

    Used for points per round: each unit (a pair of matches) contributes its
    points and its number of rounds.

    >>> ratio_ci([10, 20], [10, 10])[0]
    1.5
    """
    n = len(nums)
    total = math.fsum(dens)
    if n == 0 or total <= 0:
        return (0.0, 0.0, 0.0)
    r = math.fsum(nums) / total
    if n < 2:
        return (r, r, r)
    mean_den = total / n
    resid = [(x - r * d) / mean_den for x, d in zip(nums, dens, strict=True)]
    half = z * statistics.stdev(resid) / math.sqrt(n)
    return (r, r - half, r + half)


def elo_from_score(score: float) -> float:
    """The Elo difference that predicts an expected ``score`` (capped at +-1200).

    >>> round(elo_from_score(0.64), 1)
    100.0
    """
    if score <= 0.0:
        return -ELO_CAP
    if score >= 1.0:
        return ELO_CAP
    elo = -400.0 * math.log10(1.0 / score - 1.0)
    return max(-ELO_CAP, min(ELO_CAP, elo))


def score_interval(
    points: float, n: int, unit_scores: Sequence[float] = (), z: float = Z95
) -> tuple[float, float]:
    """A 95% interval of a match score ``points / n`` (``points``: wins + draws / 2 over
    ``n`` matches) that no sample can make narrower than it is.

    It is the Wilson interval of the score, as if the ``n`` matches were independent
    (never a single point for ``n >= 1``; it reaches 0 or 1 only on the side of a
    score of 0% or 100%), widened to the normal interval of the ``unit_scores``
    (the duplicate pairs' scores) where that one is wider and stays inside (0, 1).
    No match at all: (0, 1).

    >>> score_interval(0, 2)  # two matches, both lost: the upper end is far from 0
    (0.0, 0.657...)
    >>> lo, hi = score_interval(60, 100, [0.6] * 50)
    >>> round(lo, 3), round(hi, 3)
    (0.502, 0.691)
    """
    if n <= 0:
        return (0.0, 1.0)
    lo, hi = wilson(points, n, z)
    if len(unit_scores) >= 2:
        _, u_lo, u_hi = mean_ci(unit_scores, z)
        # Only inside (0, 1): past it the normal approximation says nothing.
        if u_lo > 0.0:
            lo = min(lo, u_lo)
        if u_hi < 1.0:
            hi = max(hi, u_hi)
    return (lo, hi)


def elo_of_score(score: float) -> float:
    """The Elo difference that predicts an expected ``score``, uncapped: ``-inf`` at 0,
    ``+inf`` at 1 (no finite difference predicts a certain result).

    >>> elo_of_score(0.0), round(elo_of_score(0.64), 1), elo_of_score(1.0)
    (-inf, 100.0, inf)
    """
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 0.0 - 400.0 * math.log10(1.0 / score - 1.0)  # 0.0 - : never -0.0


def elo_interval(score: float, lo: float, hi: float) -> tuple[float, float, float]:
    """The Elo difference of a ``score`` and of its interval's ends ``(elo, lo, hi)``.

    An end at a score of 0 or 1 is unbounded (``-inf``/``+inf``): the data do not
    bound it. With the interval of :func:`score_interval`, the result always holds
    the estimate, has a positive width, and is finite on the side the data constrain.

    >>> elo_interval(0.0, *score_interval(0, 2))
    (-inf, -inf, 113.3...)
    """
    return (elo_of_score(score), elo_of_score(lo), elo_of_score(hi))


def _score_of_elo(elo: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def gsprt_llr(scores: Sequence[float], elo0: float, elo1: float) -> float:
    """The generalized SPRT log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0).

    ``scores`` are per-unit scores in [0, 1] (here the mean match score of each
    duplicate pair). Normal approximation (as fishtest):
    ``LLR = n (s1 - s0) (2 mean - s0 - s1) / (2 var)``.

    >>> gsprt_llr([1.0, 0.5, 1.0, 0.5], 0, 50) > 0
    True
    """
    n = len(scores)
    if n < 2:
        return 0.0
    mean = math.fsum(scores) / n
    var = math.fsum((s - mean) ** 2 for s in scores) / n
    var = max(var, 1e-4)
    s0, s1 = _score_of_elo(elo0), _score_of_elo(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values`` by the nearest-rank method.

    >>> percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50), percentile(list(range(1, 101)), 99)
    (3.0, 99)
    """
    if not values:
        raise InvalidInputError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]
