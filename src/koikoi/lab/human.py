"""Human agreement: how often an agent makes the recorded move (top-1) in game records.

Every decision of a record that had a choice (two or more legal actions) is put
to the agent as the :class:`~koikoi.game.views.PlayerView` of the player who made it
— the agent sees what that player saw, never the opponent's hand or the stock
— and the agent's action is compared with the recorded one. Decisions are
grouped by kind:

* ``hand`` — the hand card to play (and, with two matching field cards, which
  one it captures);
* ``drawn`` — which field card the drawn card captures, when two match;
* ``koikoi`` — koi-koi or stop.

Each kind gets the count, the agreement rate with its 95% Wilson interval, and
the rate a uniform random choice among the legal actions would reach on
average (``chance``). On records of human games (:mod:`koikoi.lab.guan`) this is
the human agreement: a measure of how human-like an agent plays. ``koikoi bench
human`` runs it.

>>> from koikoi.game.engine import Match
>>> from koikoi.game.record import GameRecord
>>> m = Match(seed=2)
>>> while not m.is_over:
...     m.apply(m.legal_ids()[0])
>>> result = agreement(decisions(GameRecord.from_match(m), game="g"), "random", seed=1)
>>> result["all"]["decisions"] == sum(result["kinds"][k]["decisions"] for k in KINDS)
True
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from koikoi.game.actions import KOIKOI_ID, STOP_ID, TAKE_BASE, parse_action
from koikoi.game.errors import InvalidInputError, RecordError
from koikoi.game.record import GameRecord, iter_steps, record_from_dict
from koikoi.game.views import PlayerView, view_of_round
from koikoi.lab.arena import wilson

__all__ = [
    "KINDS",
    "KIND_NAMES",
    "Decision",
    "agreement",
    "decisions",
    "load_games",
]

KINDS: Final = ("hand", "drawn", "koikoi")
"""The decision kinds, in report order."""
KIND_NAMES: Final = {
    "hand": "hand play",
    "drawn": "drawn-card choice",
    "koikoi": "koi-koi decision",
}


@dataclass(frozen=True, slots=True)
class Decision:
    """One recorded decision with a choice.

    Attributes:
        game: the game's name (its file name).
        index: the decision's step in :func:`koikoi.game.record.iter_steps`
            (deals are steps too: step 0 is the first deal), so
            ``list(iter_steps(record))[index].action`` is the recorded action.
        kind: ``"hand"``, ``"drawn"`` or ``"koikoi"``.
        view: what the deciding player could see (no event history).
        recorded: the recorded action's id.
    """

    game: str
    index: int
    kind: str
    view: PlayerView
    recorded: int


def _kind(action_id: int) -> str:
    if action_id in (KOIKOI_ID, STOP_ID):
        return "koikoi"
    if TAKE_BASE <= action_id < KOIKOI_ID:
        return "drawn"
    return "hand"


def decisions(record: GameRecord, *, game: str = "", forced: bool = False) -> Iterator[Decision]:
    """The decisions of ``record`` that had two or more legal actions, in order.

    The record is replayed with its recorded deals (see :func:`koikoi.game.record.iter_steps`).
    With ``forced``, the decisions with a single legal action come too.

    Raises:
        RecordError: the record does not replay.
    """
    before = None
    for step in iter_steps(record, check_seed=False):
        entry = step.action
        if entry is not None and before is not None:
            view = view_of_round(
                before.round,
                entry.player,
                match_scores=before.match_scores,
                settlements=before.settlements,
                is_over=before.is_over or before.round.is_over,
            )
            if forced or len(view.legal_ids) > 1:
                recorded = parse_action(entry.action).id
                yield Decision(game, step.index, _kind(recorded), view, recorded)
        before = step


def _seed(seed: int, game: str, index: int) -> int:
    digest = hashlib.sha256(f"koikoi-agreement:{seed}:{game}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _tally(agreed: int, n: int, chance: float) -> dict[str, Any]:
    lo, hi = wilson(agreed, n)
    return {
        "decisions": n,
        "agreed": agreed,
        "rate": agreed / n if n else None,
        "ci95": [lo, hi] if n else None,
        "chance": chance / n if n else None,
    }


def _count(found: Sequence[Decision], spec: str, seed: int) -> dict[str, list[Any]]:
    """``{kind: [decisions, agreed, sum of 1/legal]}`` of agent ``spec`` on ``found``.

    The sum is an exact fraction, so that it does not depend on how the decisions
    were shared among workers.
    """
    from koikoi.agents.base import make_agent

    agent = make_agent(spec)
    counts: dict[str, list[Any]] = {k: [0, 0, Fraction(0)] for k in KINDS}
    try:
        for d in found:
            choice = agent.act(d.view, random.Random(_seed(seed, d.game, d.index)))
            if choice not in d.view.legal_ids:
                raise InvalidInputError(
                    f"agent {spec!r} chose {choice!r}, which is not legal ({d.game}, step "
                    f"{d.index})"
                )
            c = counts[d.kind]
            c[0] += 1
            c[1] += choice == d.recorded
            c[2] += Fraction(1, len(d.view.legal_ids))
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    return counts


def _chunks(found: Sequence[Decision], parts: int) -> list[list[Decision]]:
    """``found`` cut into ``parts`` runs of consecutive decisions, as even as can be."""
    size, extra = divmod(len(found), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (i < extra)
        out.append(list(found[start:end]))
        start = end
    return [chunk for chunk in out if chunk]


def agreement(
    found: Iterable[Decision], spec: str, *, seed: int = 0, workers: int = 1
) -> dict[str, Any]:
    """The human agreement (top-1) of agent ``spec`` with the decisions of :func:`decisions`.

    Args:
        found: the decisions (a list can be put to several agents in turn).
        spec: an agent spec (``"heuristic"``, ``"mcts:iterations=200"``).
        seed: the agent's generator for decision ``i`` of game ``g`` is seeded from
            ``(seed, g, i)``, so a run is repeatable.
        workers: processes to share the decisions among (each makes its own agent).
            Each decision's generator depends on the decision alone, so the counts are
            the same for any number of workers (for agents with an iteration budget;
            a time budget depends on the machine's load anyway).

    Returns:
        ``{"agent", "seed", "decisions", "kinds": {kind: tally}, "all": tally,
        "seconds"}``; a tally is ``{"decisions", "agreed", "rate", "ci95",
        "chance"}``; ``seconds`` is the wall-clock time.

    Raises:
        InvalidInputError: a bad agent spec, a ``workers`` below 1, or an agent that
            returns an illegal action.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidInputError(f"workers must be a whole number of 1 or more, not {workers!r}")
    decided = list(found)
    start = time.perf_counter()
    if workers == 1 or len(decided) < 2:
        parts = [_count(decided, spec, seed)]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from koikoi.agents.base import make_agent

        make_agent(spec)  # a bad spec fails here, not in every worker
        chunks = _chunks(decided, workers)
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=len(chunks), mp_context=ctx) as pool:
            futures = [pool.submit(_count, chunk, spec, seed) for chunk in chunks]
            parts = [f.result() for f in futures]
    counts = {k: [sum(p[k][i] for p in parts) for i in range(3)] for k in KINDS}
    seconds = time.perf_counter() - start
    total = [sum(int(counts[k][i]) for k in KINDS) for i in (0, 1)]
    return {
        "agent": spec,
        "seed": seed,
        "decisions": total[0],
        "kinds": {
            k: _tally(int(counts[k][1]), int(counts[k][0]), float(counts[k][2])) for k in KINDS
        },
        "all": _tally(total[1], total[0], float(sum(counts[k][2] for k in KINDS))),
        "seconds": seconds,
    }


def load_games(
    paths: Sequence[str | Path], *, limit: int | None = None
) -> list[tuple[str, GameRecord]]:
    """The games in ``paths`` (files, or folders of ``*.json`` in natural order) as records.

    A koikoi record is loaded as it is; a Guan game file is converted
    (:func:`koikoi.lab.guan.guan_to_record`, which checks it). ``limit`` keeps the
    first games only.

    Raises:
        RecordError: a missing path, a file that is neither, or a game that does not replay.
        InvalidInputError: a ``limit`` below 1.
    """
    from koikoi.lab.guan import guan_to_record, is_guan, json_files, load_guan

    if limit is not None and limit < 1:
        raise InvalidInputError(f"--games must be 1 or more, not {limit}")
    files = json_files(paths)
    if limit is not None:
        files = files[:limit]
    games: list[tuple[str, GameRecord]] = []
    for path in files:
        data, where = load_guan(path)
        if is_guan(data):
            record = guan_to_record(data, where=where)
        elif isinstance(data, dict) and "format" in data:
            record = record_from_dict(data, where=where)
        else:
            raise RecordError(
                f"{where}: neither a koikoi record nor a Guan game file: expected an object "
                f"with 'format', or with 'info' and 'record', not {json.dumps(data)[:40]}"
            )
        games.append((path.name, record))
    return games
