"""Match equity: the chance of winning the match from the match state.

Like a backgammon match-equity table, computed per rule set by dynamic
programming over the distribution of round results:

* **Round results** (:class:`RoundOutcomes`): how often the dealer wins how many
  points, the other player wins how many, or nobody scores, measured by
  self-play of the heuristic player (:func:`measure_outcomes`). The presets'
  distributions ship with the package (``data/round-outcomes.json``, made by
  ``koikoi train equity``); other rule sets are measured on first use.
* **The match** (:class:`MatchEquity`): from the lead, the rounds left, who deals
  next and the rule set's end conditions (the match length, bust at 0 or below
  when points are transferred, the tie rule, who deals after a win or a draw),
  the probability of winning, with ties counted as half.

The search turns a round's result into match equity with
:meth:`MatchEquity.round_utility`: the equity after the round as a function of
the searching player's net points this round, the table the compiled kernel
looks values up in.

>>> from koikoi.game.rules import get_rules
>>> met = match_equity(get_rules("nintendo"))
>>> round(met.equity(lead=0, rounds_left=1, i_deal=True), 2)  # the dealer's edge
0.51
>>> met.equity(lead=5, rounds_left=0, i_deal=False)  # the match is over: a win
1.0
>>> met.equity(lead=30, rounds_left=1, i_deal=False) > 0.95
True
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from koikoi.game.errors import InvalidInputError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules

__all__ = [
    "MAX_ROUND_POINTS",
    "MatchEquity",
    "RoundOutcomes",
    "match_equity",
    "measure_outcomes",
    "outcomes_for",
    "read_outcomes_file",
]

MAX_ROUND_POINTS: Final = 120
"""Round results are clipped to this many points (more never changes a match here)."""
MAX_LEAD: Final = 300
"""Leads beyond this many points are treated as this (the match is decided)."""
ON_THE_FLY_ROUNDS: Final = 400
"""Rounds of self-play measured for a rule set that ships no distribution."""
DATA_FILE: Final = "round-outcomes.json"


@dataclass(frozen=True)
class RoundOutcomes:
    """The distribution of one round's result, from the dealer's side.

    ``counts[d]`` is how many measured rounds ended with the dealer's net result
    ``d``: ``d > 0`` the dealer won ``d`` points, ``d < 0`` the other player won
    ``-d``, ``0`` nobody scored.
    """

    counts: dict[int, int]
    rounds: int
    source: str

    def probabilities(self) -> list[tuple[int, float]]:
        total = sum(self.counts.values())
        if total <= 0:
            raise InvalidInputError("a round-outcome distribution needs at least one round")
        return sorted((d, n / total) for d, n in self.counts.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "source": self.source,
            "counts": {str(d): n for d, n in sorted(self.counts.items())},
        }

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "round outcomes") -> RoundOutcomes:
        """Read :meth:`to_dict`'s form back, checking it."""
        if not isinstance(data, dict) or not isinstance(data.get("counts"), dict):
            raise InvalidInputError(f"{where}: expected an object with 'counts'")
        counts: dict[int, int] = {}
        for key, n in data["counts"].items():
            try:
                d = int(key)
            except ValueError:
                raise InvalidInputError(f"{where}: {key!r} is not a whole number") from None
            if not isinstance(n, int) or n < 0:
                raise InvalidInputError(f"{where}: count of {d} must be a whole number >= 0")
            counts[d] = n
        rounds = data.get("rounds", sum(counts.values()))
        if not isinstance(rounds, int) or sum(counts.values()) <= 0:
            raise InvalidInputError(f"{where}: no rounds")
        return cls(counts=counts, rounds=rounds, source=str(data.get("source", "")))


def measure_outcomes(
    rules: Rules, rounds: int, *, seed: int = 0, agent: str = "heuristic"
) -> RoundOutcomes:
    """Play ``rounds`` rounds of self-play (``agent`` on both sides) and count the results.

    Whole matches are played, so the rounds have the match's own mix of dealers
    and score situations; each round's result is taken from its dealer's side.
    """
    from koikoi.agents import make_agent
    from koikoi.game.engine import Match
    from koikoi.game.views import view_of

    if rounds < 1:
        raise InvalidInputError(f"rounds must be 1 or more, not {rounds}")
    players = [make_agent(agent), make_agent(agent)]
    rng = random.Random(seed)
    counts: Counter[int] = Counter()
    done = 0
    match_seed = seed * 1_000_003
    while done < rounds:
        m = Match(rules, seed=match_seed, events=False)
        match_seed += 1
        while not m.is_over and done < rounds:
            dealer = m.round.dealer
            before = len(m.settlements)
            view = view_of(m, m.current, with_history=False)
            m.apply_id(players[m.current].act(view, rng))
            # Usually one settlement; two when the next deal was an instant hand (counted
            # from the dealer of the round played, a small approximation).
            for s in m.settlements[before:]:
                d = 0 if s.winner is None else (s.points if s.winner == dealer else -s.points)
                counts[max(-MAX_ROUND_POINTS, min(MAX_ROUND_POINTS, d))] += 1
                done += 1
    return RoundOutcomes(
        counts=dict(counts), rounds=rounds, source=f"{agent} self-play, seed {seed}"
    )


def _shipped() -> dict[str, Any]:
    try:
        text = resources.files("koikoi.agents").joinpath("data", DATA_FILE).read_text("utf-8")
    except FileNotFoundError:  # pragma: no cover - the file ships with the package
        return {}
    data: dict[str, Any] = json.loads(text)
    return data


def read_outcomes_file(path: str | Path) -> dict[str, RoundOutcomes]:
    """The presets' round-outcome distributions in a file written by ``koikoi train
    equity`` (the shipped file's format), checked.

    Raises:
        InvalidInputError: the file is missing, not JSON, or not in that format.
    """
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(f"equity file {where}: cannot read it ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"equity file {where}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != "koikoi-round-outcomes":
        raise InvalidInputError(
            f"equity file {where}: not a round-outcomes file "
            "(expected 'format': 'koikoi-round-outcomes', as koikoi train equity writes)"
        )
    presets = data.get("presets")
    if not isinstance(presets, dict) or not presets:
        raise InvalidInputError(f"equity file {where}: 'presets' holds no distribution")
    out: dict[str, RoundOutcomes] = {}
    for name, entry in presets.items():
        if name not in PRESET_NAMES:
            raise InvalidInputError(
                f"equity file {where}: {name!r} is not a preset: allowed {', '.join(PRESET_NAMES)}"
            )
        out[name] = RoundOutcomes.from_dict(entry, where=f"equity file {where}: {name}")
    return out


_OUTCOMES: dict[tuple[Rules, str | None], RoundOutcomes] = {}
_TABLES: dict[tuple[Rules, str | None], MatchEquity] = {}
_FILES: dict[str, dict[str, RoundOutcomes]] = {}


def outcomes_file(path: str) -> dict[str, RoundOutcomes]:
    """:func:`read_outcomes_file`, cached by path."""
    found = _FILES.get(path)
    if found is None:
        found = _FILES[path] = read_outcomes_file(path)
    return found


def outcomes_for(rules: Rules, path: str | None = None) -> RoundOutcomes:
    """The round-outcome distribution of ``rules``: shipped for a preset (and for a rule
    set that differs from one only in its ``game`` section), else measured.

    With ``path``, the distribution comes from that file (:func:`read_outcomes_file`)
    instead, which must hold the preset whose rounds ``rules`` plays.

    Raises:
        InvalidInputError: ``path`` is bad or holds no distribution for ``rules``.
    """
    found = _OUTCOMES.get((rules, path))
    if found is not None:
        return found
    preset = _same_rounds_as(rules)
    if path is not None:
        held = outcomes_file(path)
        if preset is None or preset not in held:
            what = "no preset's" if preset is None else f"preset {preset!r}'s"
            raise InvalidInputError(
                f"equity file {path}: rules {rules.name!r} play rounds as {what}, and the "
                f"file holds only {', '.join(sorted(held))}"
            )
        found = held[preset]
    if found is None and preset is not None:
        entry = _shipped().get("presets", {}).get(preset)
        if entry is not None:
            found = RoundOutcomes.from_dict(entry, where=f"{DATA_FILE}: {preset}")
    if found is None:
        found = measure_outcomes(rules, ON_THE_FLY_ROUNDS, seed=0)
    _OUTCOMES[(rules, path)] = found
    return found


def _same_rounds_as(rules: Rules) -> str | None:
    """The preset whose rounds are played exactly as under ``rules``, if any.

    Only the ``game`` section (match length, dealers, start points, ties) may
    differ: it changes the match, not how one round goes, so the preset's
    measured round outcomes serve.
    """
    for name in PRESET_NAMES:
        preset = get_rules(name)
        if (
            dataclasses.replace(
                preset, name=rules.name, description=rules.description, game=rules.game
            )
            == rules
        ):
            return name
    return None


def match_equity(rules: Rules, path: str | None = None) -> MatchEquity:
    """The :class:`MatchEquity` of ``rules`` (cached per rule set), from the round
    outcomes in ``path`` when given (:func:`outcomes_for`)."""
    key = (rules, path)
    met = _TABLES.get(key)
    if met is None:
        if len(_TABLES) > 32:
            _TABLES.clear()
        met = _TABLES[key] = MatchEquity(rules, outcomes_for(rules, path))
    return met


class MatchEquity:
    """Match-winning chances under ``rules`` given the round-outcome distribution.

    ``equity(lead, rounds_left, i_deal)`` is the chance that a player leading by
    ``lead`` points (own match score minus the opponent's) wins the match with
    ``rounds_left`` rounds still to play, the next of which they deal
    (``i_deal``). Under transferred points (``game.start_points > 0``) the scores
    are ``start + lead / 2`` and ``start - lead / 2``: pass ``own`` to place them
    exactly. Ties count as half a win, or as a win for the last round's dealer
    under ``match_tie = "dealer"``.
    """

    def __init__(self, rules: Rules, outcomes: RoundOutcomes) -> None:
        self.rules = rules
        self.outcomes = outcomes
        game = rules.game
        self._rounds = game.rounds
        self._start = game.start_points
        self._transfer = game.start_points > 0
        self._k = 2 if self._transfer else 1
        self._probs = outcomes.probabilities()
        self._span = 2 * game.start_points if self._transfer else MAX_LEAD
        # _table[r][flag][i]: equity at lead i - span with r rounds to play, flag 1 if I deal next.
        self._table: list[list[list[float]]] = [self._terminal_row()]
        for _ in range(game.rounds):
            self._table.append(self._step(self._table[-1]))

    # The tables are small (about 800 leads x 2 x rounds), built in pure Python once.

    def _terminal_row(self) -> list[list[float]]:
        span = self._span
        rows = []
        for dealt_last in (0, 1):
            row = []
            for i in range(2 * span + 1):
                lead = i - span
                if lead > 0:
                    row.append(1.0)
                elif lead < 0:
                    row.append(0.0)
                elif self.rules.game.match_tie == "dealer":
                    row.append(1.0 if dealt_last else 0.0)
                else:
                    row.append(0.5)
            rows.append(row)
        return rows

    def _next_dealer(self, my_result: int, i_deal: bool) -> bool:
        game = self.rules.game
        if game.dealer != "winner":
            return i_deal
        if my_result > 0:
            return True
        if my_result < 0:
            return False
        return (not i_deal) if game.dealer_after_draw == "swap" else i_deal

    def _after(self, prev: list[list[float]], lead: int, i_deal: bool) -> float:
        """Equity at ``lead`` in ``prev``, the table of the rounds still to play (the
        terminal row, indexed by who dealt last, when none is left); a bust under
        transferred points ends the match."""
        span = self._span
        if self._transfer:
            own = self._start + lead // 2
            other = 2 * self._start - own
            if own <= 0:
                return 0.0
            if other <= 0:
                return 1.0
        i = max(0, min(2 * span, lead + span))
        return prev[1 if i_deal else 0][i]

    def _step(self, prev: list[list[float]]) -> list[list[float]]:
        span, k = self._span, self._k
        last = len(self._table) == 1
        out = []
        for flag in (0, 1):
            i_deal = bool(flag)
            row = []
            for i in range(2 * span + 1):
                lead = i - span
                total = 0.0
                for d, p in self._probs:
                    mine = d if i_deal else -d
                    nxt = i_deal if last else self._next_dealer(mine, i_deal)
                    total += p * self._after(prev, lead + k * mine, nxt)
                row.append(total)
            out.append(row)
        return out

    def equity(self, *, lead: int, rounds_left: int, i_deal: bool, own: int | None = None) -> float:
        """The chance of winning the match (see the class docs)."""
        if own is not None and self._transfer:
            lead = 2 * (own - self._start)
        r = max(0, min(rounds_left, self._rounds))
        # With no round left, i_deal says who dealt the last one (the tie rule "dealer").
        return self._after(self._table[r], lead, i_deal)

    def round_utility(
        self, *, own: int, other: int, rounds_left: int, i_deal: bool, span: int = MAX_ROUND_POINTS
    ) -> list[float]:
        """Match equity after this round, for each net result ``d`` of it in ``-span..span``.

        ``own`` and ``other`` are the match scores before this round's result,
        ``rounds_left`` the rounds after this one, ``i_deal`` whether the
        searching player deals this round. Index ``d + span`` of the list.
        """
        out = []
        lead = own - other
        for d in range(-span, span + 1):
            new_lead = lead + self._k * d
            if self._transfer and (own + d <= 0 or other - d <= 0):
                out.append(0.0 if own + d <= 0 else 1.0)
                continue
            nxt = i_deal if rounds_left <= 0 else self._next_dealer(d, i_deal)
            out.append(self.equity(lead=new_lead, rounds_left=rounds_left, i_deal=nxt))
        return out
