"""Post-game analysis: the value of every alternative at every decision of a record.

Like a chess analysis board: the record is replayed (:func:`koikoi.game.record.iter_steps`)
and at each decision with a choice a search agent evaluates **every** legal
action from the deciding player's *view* at that moment (what that player could
see: never the opponent's hand or the stock). The **loss** of the move played
is the best value minus the played move's value, in expected round points (for
the default search agent). The biggest losses are the mistakes.

The analysis is deterministic: decision ``i`` is searched with generators
seeded from ``(seed, i)``, so re-running with the same agent spec and seed gives
the same numbers (for an agent with an iteration budget: a time budget depends
on the machine's speed), and analysing one player gives the same numbers as
analysing both.

**Noise.** A search's values are estimates. Each decision is searched ``runs``
times, independently (default :data:`DEFAULT_RUNS`); the values are the means,
and the decision's ``noise`` is the standard error of the loss (the best value
minus the played one), from how much that difference varies between the runs.
A move is a **mistake** only when its loss is at least the threshold *and* more
than :data:`NOISE_MULTIPLE` times its noise: a difference the search cannot
tell from chance is never called a mistake.

**Interchangeable cards.** Captures of Plains of one month with one card
(:func:`koikoi.game.actions.interchangeable`) are one choice: they get one value
(their mean), taking either is never a loss, and a decision between such
captures only is no choice at all (counted as forced).

>>> from koikoi.game.engine import Match
>>> from koikoi.game.record import GameRecord
>>> from koikoi.agents.mcts import MCTSAgent
>>> from koikoi.game.rules import get_rules
>>> m = Match(get_rules("koikoi-japan").replace(game__rounds=1), seed=3)
>>> while not m.is_over:
...     m.apply(m.legal_ids()[0])
>>> record = GameRecord.from_match(m, created="2024-01-01T00:00:00Z")
>>> result = analyze_record(record, MCTSAgent(iterations=2, rollouts=2))
>>> all(d.loss >= 0 for d in result.decisions)
True
"""

from __future__ import annotations

import math
import random
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from koikoi.game.actions import (
    PLAY_TARGET_BASE,
    TAKE_BASE,
    describe_action_id,
    interchangeable,
    parse_action,
)
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, iter_steps
from koikoi.game.views import PlayerView
from koikoi.i18n import N_, t, td, tn
from koikoi.lab.arena import derive_seed

__all__ = [
    "DEFAULT_RUNS",
    "NOISE_MULTIPLE",
    "Analysis",
    "AnalyzedDecision",
    "Evaluator",
    "PositionAnalysis",
    "analyze_position",
    "analyze_record",
    "format_analysis",
    "format_position_analysis",
    "same_choice",
]

DEFAULT_RUNS: Final = 4
"""Independent searches of each decision: their spread estimates the search's noise."""
NOISE_MULTIPLE: Final = 2.0
"""A loss is a mistake only above this many standard errors of its own estimate."""


class Evaluator(Protocol):
    """An agent that values every legal action: ``evaluate(view, rng) -> {id: value}``."""

    name: str

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]: ...


@dataclass(frozen=True)
class AnalyzedDecision:
    """One decision of the record with the value of every alternative."""

    index: int
    """The action's position in the record (1-based)."""
    round: int
    player: int
    phase: str
    played: int
    best: int
    values: dict[int, float]
    loss: float
    noise: float = 0.0
    """The standard error of ``loss`` (0 when the search gave the same numbers every run)."""

    def is_mistake(self, threshold: float = 0.0) -> bool:
        """Whether the loss is at least ``threshold`` and clearly above the search's noise
        (more than :data:`NOISE_MULTIPLE` standard errors; always more than 0).

        >>> d = AnalyzedDecision(1, 1, 0, "play", 0, 4, {0: 0.0, 4: 1.5}, 1.5, noise=0.5)
        >>> d.is_mistake(1.0), d.is_mistake(2.0)
        (True, False)
        >>> AnalyzedDecision(1, 1, 0, "play", 0, 4, {0: 0.0, 4: 1.5}, 1.5, noise=0.8).is_mistake()
        False
        """
        return self.loss >= threshold and self.loss > NOISE_MULTIPLE * self.noise

    def to_dict(self, threshold: float = 0.0) -> dict[str, Any]:
        """JSON-ready, with the actions as text; ``mistake`` by :meth:`is_mistake`."""
        ranked = sorted(self.values.items(), key=lambda kv: -kv[1])
        return {
            "index": self.index,
            "round": self.round,
            "player": self.player,
            "phase": self.phase,
            "played": describe_action_id(self.played),
            "best": describe_action_id(self.best),
            "loss": round(self.loss, 4),
            "noise": round(self.noise, 4),
            "mistake": self.is_mistake(threshold),
            "values": [{"action": describe_action_id(a), "value": round(v, 4)} for a, v in ranked],
        }


@dataclass
class Analysis:
    """Every analysed decision, with per-player totals."""

    agent: str
    players: list[str]
    rules: str
    decisions: list[AnalyzedDecision] = field(default_factory=list)
    forced: int = 0
    """Decisions with a single legal action, or only interchangeable ones (not searched)."""
    runs: int = DEFAULT_RUNS
    """Independent searches of each decision."""

    def mistakes(self, top: int = 10, *, threshold: float = 0.0) -> list[AnalyzedDecision]:
        """The ``top`` mistakes (:meth:`AnalyzedDecision.is_mistake` at ``threshold``) with
        the biggest loss, worst first."""
        chosen = [d for d in self.decisions if d.is_mistake(threshold)]
        chosen.sort(key=lambda d: (-d.loss, d.index))
        return chosen[:top]

    def player_summary(self, player: int, *, mistake: float = 1.0) -> dict[str, Any]:
        """Decisions, total and mean loss, mistakes (loss >= ``mistake`` and above the
        noise) of one player."""
        mine = [d for d in self.decisions if d.player == player]
        total = sum(d.loss for d in mine)
        return {
            "player": player,
            "name": self.players[player],
            "decisions": len(mine),
            "best_moves": sum(1 for d in mine if d.loss <= 1e-9),
            "total_loss": round(total, 4),
            "mean_loss": round(total / len(mine), 4) if mine else 0.0,
            "mistakes": sum(1 for d in mine if d.is_mistake(mistake)),
        }

    def to_dict(self, top: int = 10, *, mistake: float = 1.0) -> dict[str, Any]:
        """JSON-ready: the summary per player, the biggest mistakes (loss >= ``mistake``
        and above the noise), every decision."""
        players = sorted({d.player for d in self.decisions})
        return {
            "agent": self.agent,
            "rules": self.rules,
            "players": self.players,
            "runs": self.runs,
            "noise_multiple": NOISE_MULTIPLE,
            "threshold": mistake,
            "forced": self.forced,
            "summary": [self.player_summary(p, mistake=mistake) for p in players],
            "mistakes": [d.to_dict(mistake) for d in self.mistakes(top, threshold=mistake)],
            "decisions": [d.to_dict(mistake) for d in self.decisions],
        }


def analyze_record(
    record: GameRecord,
    agent: Evaluator,
    *,
    seed: int = 0,
    players: Iterable[int] = (0, 1),
    runs: int = DEFAULT_RUNS,
    progress: Callable[[int, int], None] | None = None,
) -> Analysis:
    """Evaluate every decision with a choice of ``players`` in ``record``.

    Args:
        record: the game record.
        agent: the evaluating agent (it has ``evaluate(view, rng)``).
        seed: seeds the agent's generators per decision (see the module docstring).
        players: which players' decisions to analyse.
        runs: independent searches of each decision (their spread is the noise);
            1 gives no estimate of the noise.
        progress: called as ``progress(done, total)`` after each action.

    Raises:
        RecordError: when the record does not replay.
        InvalidInputError: when ``agent`` cannot evaluate, a player is not 0 or 1, or
            ``runs`` is below 1.
    """
    if not callable(getattr(agent, "evaluate", None)):
        raise InvalidInputError(
            f"agent {getattr(agent, 'name', agent)!r} cannot evaluate moves: use a search "
            "agent such as mcts:iterations=200"
        )
    wanted = set(players)
    for p in wanted:
        if p not in (0, 1):
            raise InvalidInputError(f"player must be 0 or 1, not {p!r}")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise InvalidInputError(f"runs must be a whole number 1 or more, not {runs!r}")
    rules_name = str(record.rules.get("name", "?")) if isinstance(record.rules, Mapping) else "?"
    out = Analysis(agent=agent.name, players=list(record.players), rules=rules_name, runs=runs)
    total = len(record.actions)
    previous = None
    number = 0
    for step in iter_steps(record):
        if step.kind == "action" and step.action is not None and previous is not None:
            number += 1
            entry = step.action
            if entry.player in wanted:
                view = previous.view(entry.player)
                played = parse_action(entry.action).id
                legal = list(view.legal_ids)
                classes = _choices(legal)
                if len(classes) <= 1:
                    out.forced += 1
                else:
                    where = (number, entry.round, entry.player)
                    out.decisions.append(_decide(view, agent, classes, played, where, seed, runs))
            if progress is not None:
                progress(number, total)
        previous = step
    return out


def same_choice(a: int, b: int) -> bool:
    """Whether actions ``a`` and ``b`` are one choice: the same action, or captures of
    interchangeable Plains (:func:`~koikoi.game.actions.interchangeable`) with the same card.

    >>> same_choice(parse_action("take 10P1").id, parse_action("take 10P2").id)
    True
    >>> same_choice(parse_action("play 10A 10P1").id, parse_action("play 11L 10P2").id)
    False
    """
    if a == b:
        return True
    if not interchangeable([a, b]):
        return False
    if a >= TAKE_BASE or b >= TAKE_BASE:
        return a >= TAKE_BASE and b >= TAKE_BASE  # the drawn card: one card
    return (a - PLAY_TARGET_BASE) // 48 == (b - PLAY_TARGET_BASE) // 48


def _choices(legal: list[int]) -> list[list[int]]:
    """The legal actions grouped into real choices (:func:`same_choice`), in order."""
    groups: list[list[int]] = []
    for a in legal:
        for group in groups:
            if same_choice(group[0], a):
                group.append(a)
                break
        else:
            groups.append([a])
    return groups


def _decide(
    view: PlayerView,
    agent: Evaluator,
    classes: list[list[int]],
    played: int,
    where: tuple[int, int, int],
    seed: int,
    runs: int,
) -> AnalyzedDecision:
    """Search one decision ``runs`` times and judge the move played (module docstring);
    ``where`` is the action's number, its round and the player."""
    number, round_no, player = where
    samples: list[dict[int, float]] = []
    for run in range(runs):
        parts: tuple[object, ...] = ("analyze", number) if run == 0 else ("analyze", number, run)
        raw = agent.evaluate(view, random.Random(derive_seed(seed, *parts)))
        merged: dict[int, float] = {}
        for group in classes:  # interchangeable captures: one value, their mean
            known = [raw[a] for a in group if a in raw]
            if known:
                mean = math.fsum(known) / len(known)
                merged.update(dict.fromkeys(group, mean))
        samples.append(merged)
    values = {a: math.fsum(s[a] for s in samples) / runs for a in samples[0]}
    legal = [a for group in classes for a in group]
    best = max(legal, key=lambda a: (values.get(a, float("-inf")), -a))
    if same_choice(best, played) or values.get(played) == values[best]:
        best = played
    loss = max(0.0, values[best] - values.get(played, values[best]))
    noise = 0.0
    if runs > 1 and best != played and played in values:
        gaps = [s[best] - s[played] for s in samples]
        mean_gap = math.fsum(gaps) / runs
        spread = math.fsum((g - mean_gap) ** 2 for g in gaps) / (runs - 1)
        noise = math.sqrt(spread / runs)
    return AnalyzedDecision(
        index=number,
        round=round_no,
        player=player,
        phase=view.phase.name.lower(),
        played=played,
        best=best,
        values=values,
        loss=loss,
        noise=noise,
    )


_PHASES: dict[str, str] = {"play": N_("play"), "take": N_("take"), "decide": N_("decide")}
"""The decision phases in words (an analysed decision's ``phase``)."""


def format_analysis(analysis: Analysis, *, top: int = 10, mistake: float = 1.0) -> str:
    """The analysis as text, in the language in use: per-player summary, then the
    biggest mistakes."""
    lines = [
        t(
            "Analysis with {agent} (rules {rules}); values are expected round points "
            "for the player to move.",
            agent=analysis.agent,
            rules=analysis.rules,
        )
    ]
    players = sorted({d.player for d in analysis.decisions})
    for p in players:
        s = analysis.player_summary(p, mistake=mistake)
        lines.append(
            t(
                "player {player} ({name}): {decisions}, {best}, mean loss {mean:.2f}, "
                "total loss {total:.2f}, {mistakes}",
                player=p,
                name=s["name"],
                decisions=tn(
                    "{n} decision with a choice", "{n} decisions with a choice", s["decisions"]
                ),
                best=tn("{n} best move", "{n} best moves", s["best_moves"]),
                mean=s["mean_loss"],
                total=s["total_loss"],
                mistakes=tn("{n} mistake", "{n} mistakes", s["mistakes"]),
            )
        )
    lines.append(
        t(
            "A mistake loses at least {threshold:g} points and more than {multiple:g} times "
            "the search's noise (the standard error of the loss over {runs} searches).",
            threshold=mistake,
            multiple=NOISE_MULTIPLE,
            runs=analysis.runs,
        )
    )
    worst = analysis.mistakes(top, threshold=mistake)
    if not worst:
        lines.append(t("No mistakes: every loss is below the threshold or within the noise."))
        return "\n".join(lines)
    lines.append(t("Biggest mistakes (top {n}):", n=len(worst)))
    for rank, d in enumerate(worst, 1):
        ranked = sorted(d.values.items(), key=lambda kv: -kv[1])
        alternatives = ", ".join(f"{describe_action_id(a)} {v:+.2f}" for a, v in ranked[:4])
        phase = td(_PHASES[d.phase]) if d.phase in _PHASES else d.phase
        lines.append(
            f"{rank:3}. "
            + t(
                "round {round}, move {move}, player {player} ({phase}): chose {played!r} "
                "({played_value:+.2f}), best {best!r} ({best_value:+.2f}), loss {loss:.2f} "
                "(noise {noise:.2f})",
                round=d.round,
                move=d.index,
                player=d.player,
                phase=phase,
                played=describe_action_id(d.played),
                played_value=d.values.get(d.played, 0.0),
                best=describe_action_id(d.best),
                best_value=d.values[d.best],
                loss=d.loss,
                noise=d.noise,
            )
        )
        lines.append("       " + t("values: {alternatives}", alternatives=alternatives))
    return "\n".join(lines)


@dataclass(frozen=True)
class PositionAnalysis:
    """Every legal action of one position with its value, best first.

    ``points`` are expected net round points for the player to act (points won
    minus points lost this round); ``equity`` (when the agent reports it and the
    position has match context) is the chance of winning the match, 0 to 1.
    The ranking follows what the agent maximises: equity when it has it.
    """

    position: str
    agent: str
    player: int
    ranked: list[int]
    points: dict[int, float]
    equity: dict[int, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the position, the agent, and every action with its values."""
        actions = []
        for a in self.ranked:
            entry: dict[str, Any] = {
                "action": describe_action_id(a),
                "id": a,
                "points": round(self.points[a], 4),
            }
            if self.equity is not None:
                entry["equity"] = round(self.equity[a], 4)
            actions.append(entry)
        return {
            "position": self.position,
            "agent": self.agent,
            "player": self.player,
            "best": describe_action_id(self.ranked[0]),
            "actions": actions,
        }


def analyze_position(
    text: str,
    agent: Evaluator,
    *,
    seed: int = 0,
    rules: Any = None,
) -> PositionAnalysis:
    """Value every legal action of a position (:mod:`koikoi.game.positions`).

    The agent sees only the view of the player to act: a full position's hidden
    cards are not used. An agent with ``evaluate_detail`` reports match equity
    beside the round points.

    Raises:
        PositionError: the position cannot be read or cannot happen.
        InvalidInputError: the agent cannot evaluate, or a view position is not the
            viewing player's turn.
    """
    from koikoi.game.positions import parse_position

    if not callable(getattr(agent, "evaluate", None)):
        raise InvalidInputError(
            f"agent {getattr(agent, 'name', agent)!r} cannot evaluate moves: use a search "
            "agent such as expert or mcts:iterations=200"
        )
    pos = parse_position(text, rules=rules)
    player = pos.current
    if pos.viewer is not None and pos.viewer != player:
        raise InvalidInputError(
            f"this is player {pos.viewer}'s view but player {player} is to act: "
            "only the player to act has moves to value"
        )
    view = PlayerView.from_position(pos, player=player)
    rng = random.Random(seed)
    detail = getattr(agent, "evaluate_detail", None)
    equity: dict[int, float] | None = None
    if callable(detail):
        values = detail(view, rng)
        points = {a: v.points for a, v in values.items()}
        if all(v.equity is not None for v in values.values()):
            equity = {a: float(v.equity) for a, v in values.items()}
    else:
        points = dict(agent.evaluate(view, rng))
    key = equity if equity is not None else points
    ranked = sorted(view.legal_ids, key=lambda a: (-key.get(a, float("-inf")), a))
    return PositionAnalysis(
        position=pos.text(),
        agent=agent.name,
        player=player,
        ranked=ranked,
        points=points,
        equity=equity,
    )


def format_position_analysis(result: PositionAnalysis) -> str:
    """The analysis of a position as a table, best action first (in the language in use)."""
    lines = [
        t("Position: {position}", position=result.position),
        t("Player {player} to act; values by {agent}.", player=result.player, agent=result.agent),
    ]
    action = t("action")
    pad = 20 - _cells(action)
    if result.equity is not None:
        lines.append(f"  {action}{' ' * pad}" + t("match win  round points"))
        for a in result.ranked:
            lines.append(
                f"  {describe_action_id(a):<18} {100 * result.equity[a]:8.1f}%  "
                f"{result.points[a]:+8.2f}"
            )
    else:
        lines.append(f"  {action}{' ' * pad}" + t("round points"))
        for a in result.ranked:
            lines.append(f"  {describe_action_id(a):<18} {result.points[a]:+8.2f}")
    lines.append(t("Best: {action}.", action=describe_action_id(result.ranked[0])))
    return "\n".join(lines)


def _cells(text: str) -> int:
    """Terminal cells of ``text``: a wide (Japanese) character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
