"""Post-game analysis: the value of every alternative at every decision of a record.

Like a chess analysis board: the record is replayed (:func:`koikoi.game.record.iter_steps`)
and at each decision with a choice a search agent evaluates **every** legal
action from the deciding player's *view* at that moment (what that player could
see: never the opponent's hand or the stock). The **loss** of the move played
is the best value minus the played move's value, in expected round points (for
the default search agent). The biggest losses are the mistakes.

The analysis is deterministic: decision ``i`` is searched with a generator
seeded from ``(seed, i)``, so re-running with the same agent spec and seed gives
the same numbers, and analysing one player gives the same numbers as analysing
both.

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

import random
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from koikoi.game.actions import describe_action_id, parse_action
from koikoi.game.errors import InvalidInputError
from koikoi.game.record import GameRecord, iter_steps
from koikoi.game.views import PlayerView
from koikoi.i18n import N_, t, td
from koikoi.lab.arena import derive_seed

__all__ = [
    "Analysis",
    "AnalyzedDecision",
    "Evaluator",
    "PositionAnalysis",
    "analyze_position",
    "analyze_record",
    "format_analysis",
    "format_position_analysis",
]


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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the actions as text."""
        ranked = sorted(self.values.items(), key=lambda kv: -kv[1])
        return {
            "index": self.index,
            "round": self.round,
            "player": self.player,
            "phase": self.phase,
            "played": describe_action_id(self.played),
            "best": describe_action_id(self.best),
            "loss": round(self.loss, 4),
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
    """Decisions with a single legal action (not searched)."""

    def mistakes(self, top: int = 10, *, threshold: float = 0.0) -> list[AnalyzedDecision]:
        """The ``top`` decisions with the biggest loss (above ``threshold``), worst first."""
        chosen = [d for d in self.decisions if d.loss > threshold]
        chosen.sort(key=lambda d: (-d.loss, d.index))
        return chosen[:top]

    def player_summary(self, player: int, *, mistake: float = 1.0) -> dict[str, Any]:
        """Decisions, total and mean loss, mistakes (loss >= ``mistake``) of one player."""
        mine = [d for d in self.decisions if d.player == player]
        total = sum(d.loss for d in mine)
        return {
            "player": player,
            "name": self.players[player],
            "decisions": len(mine),
            "best_moves": sum(1 for d in mine if d.loss <= 1e-9),
            "total_loss": round(total, 4),
            "mean_loss": round(total / len(mine), 4) if mine else 0.0,
            "mistakes": sum(1 for d in mine if d.loss >= mistake),
        }

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        """JSON-ready: the summary per player, the biggest mistakes, every decision."""
        players = sorted({d.player for d in self.decisions})
        return {
            "agent": self.agent,
            "rules": self.rules,
            "players": self.players,
            "forced": self.forced,
            "summary": [self.player_summary(p) for p in players],
            "mistakes": [d.to_dict() for d in self.mistakes(top)],
            "decisions": [d.to_dict() for d in self.decisions],
        }


def analyze_record(
    record: GameRecord,
    agent: Evaluator,
    *,
    seed: int = 0,
    players: Iterable[int] = (0, 1),
    progress: Callable[[int, int], None] | None = None,
) -> Analysis:
    """Evaluate every decision with a choice of ``players`` in ``record``.

    Args:
        record: the game record.
        agent: the evaluating agent (it has ``evaluate(view, rng)``).
        seed: seeds the agent's generator per decision (see the module docstring).
        players: which players' decisions to analyse.
        progress: called as ``progress(done, total)`` after each action.

    Raises:
        RecordError: when the record does not replay.
        InvalidInputError: when ``agent`` cannot evaluate.
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
    rules_name = str(record.rules.get("name", "?")) if isinstance(record.rules, Mapping) else "?"
    out = Analysis(agent=agent.name, players=list(record.players), rules=rules_name)
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
                legal = view.legal_ids
                if len(legal) <= 1:
                    out.forced += 1
                else:
                    rng = random.Random(derive_seed(seed, "analyze", number))
                    values = agent.evaluate(view, rng)
                    best = max(legal, key=lambda a: (values.get(a, float("-inf")), -a))
                    loss = max(0.0, values[best] - values.get(played, values[best]))
                    out.decisions.append(
                        AnalyzedDecision(
                            index=number,
                            round=entry.round,
                            player=entry.player,
                            phase=view.phase.name.lower(),
                            played=played,
                            best=best,
                            values=dict(values),
                            loss=loss,
                        )
                    )
            if progress is not None:
                progress(number, total)
        previous = step
    return out


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
                "player {player} ({name}): {decisions} decisions with a choice, {best} best "
                "moves, mean loss {mean:.2f}, total loss {total:.2f}, {mistakes} mistakes "
                "(loss >= {threshold:g})",
                player=p,
                name=s["name"],
                decisions=s["decisions"],
                best=s["best_moves"],
                mean=s["mean_loss"],
                total=s["total_loss"],
                mistakes=s["mistakes"],
                threshold=mistake,
            )
        )
    worst = analysis.mistakes(top)
    if not worst:
        lines.append(t("No move lost anything against the search's choice."))
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
                "({played_value:+.2f}), best {best!r} ({best_value:+.2f}), loss {loss:.2f}",
                round=d.round,
                move=d.index,
                player=d.player,
                phase=phase,
                played=describe_action_id(d.played),
                played_value=d.values.get(d.played, 0.0),
                best=describe_action_id(d.best),
                best_value=d.values[d.best],
                loss=d.loss,
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
