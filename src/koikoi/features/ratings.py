"""Glicko-2 ratings (Mark Glickman's system), pure and standard library only.

A :class:`Rating` is a rating, its deviation (RD: how uncertain the rating is)
and its volatility (how erratic the player's results are). :func:`update`
gives a player's new rating after one rating period: the games the player
played in it, each against an opponent's rating *before* the period, scored
1 (win), 0.5 (draw) or 0 (loss). A period without games only widens the
deviation.

The web game rates every finished game as its own period, per rule set, for
each side, under the rating model below (see ``docs/web.md``, "Ratings"):

- only an unmodified preset is rated (:func:`rated_preset`: the rules themselves
  are compared with the preset, not their name);
- a game between two people counts only when both are *established*: each has
  finished :data:`ESTABLISHED_AI_GAMES` games against the AI;
- of the games between the same two people, only the first
  :data:`PAIR_GAMES_PER_WINDOW` in any :data:`PAIR_WINDOW_SECONDS` count;
- a rating from fewer than :data:`PROVISIONAL_GAMES` rated games is provisional
  (:func:`is_provisional`): shown with a "?" and kept off the ranked list.

The worked example of Glickman's description of the system: a 1500 player
(RD 200, volatility 0.06) beats a 1400 player (RD 30) and loses to a 1550 (RD
100) and to a 1700 (RD 300). The description gives 1464.06, RD 151.52 and
volatility 0.05999, computed with rounded intermediate values; without
rounding the rating is 1464.0507:

>>> new = update(Rating(1500, 200, 0.06), [(Rating(1400, 30), 1), (Rating(1550, 100), 0),
...                                         (Rating(1700, 300), 0)], tau=0.5)
>>> round(new.rating, 1), round(new.rd, 2), round(new.volatility, 6)
(1464.1, 151.52, 0.059996)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules

__all__ = [
    "DEFAULT_TAU",
    "ESTABLISHED_AI_GAMES",
    "PAIR_GAMES_PER_WINDOW",
    "PAIR_WINDOW_SECONDS",
    "PROVISIONAL_GAMES",
    "Rating",
    "expected_score",
    "is_provisional",
    "rated_preset",
    "update",
]

ESTABLISHED_AI_GAMES: Final = 3
"""Finished games against the AI that a person needs before their games against other
people are rated (games against the AI are rated from the first)."""
PAIR_GAMES_PER_WINDOW: Final = 2
"""Rated games between the same two people in :data:`PAIR_WINDOW_SECONDS`; more are
played and recorded but not rated."""
PAIR_WINDOW_SECONDS: Final = 24 * 3600.0
"""The window of :data:`PAIR_GAMES_PER_WINDOW` (24 hours, sliding)."""
PROVISIONAL_GAMES: Final = 10
"""A rating from fewer rated games than this is provisional."""

SCALE: Final = 173.7178
"""Glicko-2's scale factor between the Glicko scale (1500, 350) and its own (0, 2.01)."""
DEFAULT_TAU: Final = 0.5
"""The system constant: how much the volatility may change (0.3 to 1.2 are reasonable)."""
_EPSILON: Final = 1e-6


@dataclass(frozen=True, slots=True)
class Rating:
    """A Glicko-2 rating on the familiar scale: a new player is 1500, RD 350, volatility 0.06."""

    rating: float = 1500.0
    rd: float = 350.0
    volatility: float = 0.06

    def __post_init__(self) -> None:
        for name, value in (
            ("rating", self.rating),
            ("rd", self.rd),
            ("volatility", self.volatility),
        ):
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InvalidInputError(f"{name} must be a finite number, not {value!r}")
        if self.rd <= 0 or self.volatility <= 0:
            raise InvalidInputError(
                f"rd and volatility must be positive, not rd={self.rd!r}, "
                f"volatility={self.volatility!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"rating", "rd", "volatility"}``."""
        return {"rating": self.rating, "rd": self.rd, "volatility": self.volatility}


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def expected_score(player: Rating, opponent: Rating) -> float:
    """The player's expected score against the opponent (0 to 1).

    >>> round(expected_score(Rating(1500, 200), Rating(1400, 30)), 3)
    0.639
    """
    mu, mu_j = (player.rating - 1500) / SCALE, (opponent.rating - 1500) / SCALE
    return _e(mu, mu_j, opponent.rd / SCALE)


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the system: the Illinois algorithm on the volatility's equation."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > _EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(
    player: Rating, games: Sequence[tuple[Rating, float]], *, tau: float = DEFAULT_TAU
) -> Rating:
    """The player's rating after one rating period.

    Args:
        player: the rating before the period.
        games: ``(opponent's rating before the period, score)`` per game; a
            score is 1 (win), 0.5 (draw) or 0 (loss). Empty: only the
            deviation grows.
        tau: the system constant.

    Raises:
        InvalidInputError: a score outside 0..1, or ``tau`` not positive.
    """
    if not (isinstance(tau, (int, float)) and tau > 0 and math.isfinite(tau)):
        raise InvalidInputError(f"tau must be a positive number, not {tau!r}")
    for _, score in games:
        if not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise InvalidInputError(
                f"a score must be 1 (win), 0.5 (draw) or 0 (loss), not {score!r}"
            )
    mu = (player.rating - 1500.0) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not games:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return Rating(player.rating, phi_star * SCALE, sigma)
    inv_v = 0.0
    total = 0.0
    for opponent, score in games:
        mu_j = (opponent.rating - 1500.0) / SCALE
        phi_j = opponent.rd / SCALE
        g = _g(phi_j)
        e = _e(mu, mu_j, phi_j)
        inv_v += g * g * e * (1.0 - e)
        total += g * (score - e)
    v = 1.0 / inv_v
    delta = v * total
    sigma_new = _new_volatility(sigma, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * total
    return Rating(1500.0 + SCALE * mu_new, SCALE * phi_new, sigma_new)


def is_provisional(games: int) -> bool:
    """Whether a rating from ``games`` rated games is provisional (shown with "?", not
    ranked).

    >>> is_provisional(9), is_provisional(10)
    (True, False)
    """
    return games < PROVISIONAL_GAMES


def rated_preset(rules: Rules) -> str | None:
    """The preset that ``rules`` are, unmodified (the match length included), else None:
    only such games are rated. The rules are compared, not their name, so house rules
    that call themselves "nintendo" are not the nintendo preset.

    >>> rated_preset(get_rules("leaflet"))
    'leaflet'
    >>> rated_preset(get_rules("nintendo").replace(game__rounds=1)) is None
    True
    """
    if rules.name not in PRESET_NAMES:
        return None
    return rules.name if rules == get_rules(rules.name) else None
