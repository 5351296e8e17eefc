"""Game sessions of the web game: seats, validation, views, AI turns (no I/O).

A :class:`Room` wraps one :class:`~koikoi.game.engine.Match`. It checks a client's
``act`` message (turn, sequence number, legality — the engine's checked
``Match.apply`` has the last word), applies it, and builds the messages each
seat may see: :func:`~koikoi.game.views.view_of` for that seat and the events
:meth:`~koikoi.game.engine.Event.visible_to` it, each tagged with the deal it
belongs to. Storage and sockets live elsewhere (``storage``, ``hub``); a Room
can be rebuilt at any time from its rules, seed and action ids.

>>> from koikoi.game.rules import get_rules
>>> room = Room("g1", mode="friend", rules=get_rules("nintendo"), seed=5,
...             seats=(SeatInfo("human"), SeatInfo("human")), watch_hash="")
>>> other = 1 - room.match.current
>>> try:
...     room.check_act(other, room.match.legal_ids()[0], 0)
... except ProtocolError as exc:
...     print(exc.code)
not_your_turn
"""

from __future__ import annotations

import hashlib
import random
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from koikoi.agents import Agent, make_agent
from koikoi.agents.base import ActionValue
from koikoi.features.opponents import level_choice, ranked
from koikoi.features.progress import yaku_progress
from koikoi.features.tutorial import coach
from koikoi.game.actions import describe_action_id
from koikoi.game.engine import Match, Phase
from koikoi.game.errors import KoiKoiError, RecordError
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView, view_of
from koikoi.server.protocol import AGENT_CHOICES, ProtocolError

__all__ = [
    "FAST_AGENTS",
    "Forfeit",
    "Room",
    "SeatInfo",
    "agent_name",
    "agent_spec",
    "ai_rng",
    "new_game_id",
    "new_token",
    "progress_of",
    "token_hash",
]

TOKEN_BYTES: Final = 32
"""Seat, invite and watch tokens carry 256 random bits (``secrets.token_urlsafe``)."""
FAST_AGENTS: Final = frozenset({"random", "greedy", "level:1", "level:2"})
"""Agents cheap enough to run on the event loop; the others run in the AI worker
processes (:mod:`.aipool`). Levels 1 and 2 play like greedy."""

# Agent specs the server builds for each strength a client may ask for: the levels
# as they are, the older names as they were.
_AGENT_SPECS: Final[dict[str, str]] = {
    **{strength: strength for strength in AGENT_CHOICES},
    "mcts": "mcts:time=1",
}


def progress_of(view: PlayerView) -> list[list[dict[str, Any]]]:
    """Both players' progress toward each yaku of the rules, from what ``view`` shows.

    Only public facts go in: the two capture piles, the round's month and the rules
    (the same for every seat, so the opponent's progress is shown too). A yaku is
    impossible once the other player holds a card it needs or too few of its cards
    are left (or, for a viewing yaku, when its spoiler is in the pile); ``done`` means
    the yaku is made and scores. The pure logic is the terminal game's,
    :func:`koikoi.features.progress.yaku_progress`.

    >>> from koikoi.game.engine import Match
    >>> from koikoi.game.rules import get_rules
    >>> rows = progress_of(view_of(Match(get_rules("nintendo"), seed=1), 0))
    >>> sorted(rows[0][0])
    ['done', 'have', 'name', 'need', 'points', 'possible']
    """
    piles = view.piles
    return [
        [
            {
                "name": row.name,
                "have": min(row.have, row.need),
                "need": row.need,
                "points": row.points,
                "possible": row.possible,
                "done": row.done and row.possible,
            }
            for row in yaku_progress(view.rules, piles[p], piles[1 - p], month=view.month)
        ]
        for p in (0, 1)
    ]


def new_token() -> str:
    """A fresh unguessable token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def new_game_id() -> str:
    """A fresh game id (public: it grants nothing without a token)."""
    return secrets.token_urlsafe(9)


def token_hash(token: str) -> str:
    """What the server stores and indexes instead of a token (SHA-256, hex)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def ai_rng(seed: int, seq: int) -> random.Random:
    """The AI's random generator for the action at ``seq`` of the match seeded ``seed``.

    Derived from the secret match seed, so a seeded game (tests) replays exactly.
    """
    return random.Random(f"koikoi-ai:{seed}:{seq}")


def agent_spec(strength: str) -> str:
    """The agent spec string for an AI strength a client may ask for."""
    return _AGENT_SPECS[strength]


def agent_name(strength: str) -> str:
    """How the AI seat is called: ``"AI (Expert)"``, ``"AI (Casual)"``, ``"AI (greedy)"``."""
    choice = level_choice(strength)
    return f"AI ({choice.level.title if choice is not None else strength})"


@dataclass(frozen=True, slots=True)
class Forfeit:
    """A match that ended by forfeit: ``seat`` lost it, for ``reason`` (``"time"``: its
    clock ran out)."""

    seat: int
    reason: str = "time"

    def to_dict(self) -> dict[str, Any]:
        """The record's and the ``state`` message's form: ``{"player", "reason"}``."""
        return {"player": self.seat, "reason": self.reason}


@dataclass(slots=True)
class SeatInfo:
    """One seat: a human (with a token once claimed) or an AI."""

    kind: str
    """``"human"`` or ``"ai"``."""
    name: str = ""
    agent: str | None = None
    """The AI strength (``"random"``, ...), for ``kind == "ai"``."""
    token_hash: str | None = None
    invite_hash: str | None = None
    invite_used: bool = False

    def public(self) -> dict[str, Any]:
        """What every client may know about the seat."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.agent is not None:
            out["agent"] = self.agent
        if self.kind == "human":
            out["claimed"] = self.token_hash is not None
        return out


class Room:
    """One game: its match, its seats, and the messages each seat may see.

    Args:
        game_id: the public game id.
        mode: ``"ai"`` or ``"friend"``.
        rules: the rule set.
        seed: the match seed (secret; never sent to clients).
        seats: the two seats (index = player number).
        watch_hash: hash of the spectators' token.
        actions: action ids already played (a restart replays them).
        turn_seconds: the turn clock: seconds each decision of a person may take,
            counted from when it became theirs (0: no clock).
        clock: the time source of the turn clock (seconds; tests inject one).
        forfeit: how the stored match ended, if it ended by forfeit.

    Raises:
        RecordError: if stored actions do not replay.
    """

    def __init__(
        self,
        game_id: str,
        *,
        mode: str,
        rules: Rules,
        seed: int,
        seats: Sequence[SeatInfo],
        watch_hash: str,
        actions: Iterable[int] = (),
        created_at: float | None = None,
        agent_factory: Callable[[str], Agent] | None = None,
        turn_seconds: float = 0.0,
        clock: Callable[[], float] = time.time,
        forfeit: Forfeit | None = None,
    ) -> None:
        if len(seats) != 2:
            raise ValueError("a room has exactly two seats")
        self.id = game_id
        self.mode = mode
        self.rules = rules
        self.seed = seed
        self.seats = list(seats)
        self.watch_hash = watch_hash
        self.created_at = time.time() if created_at is None else created_at
        self.match = Match(rules, seed=seed)
        self._tags: list[tuple[int, int]] = []
        self._deal = -1
        self._round = 0
        self._tag_new_events()
        for i, action_id in enumerate(actions):
            try:
                self.match.apply(action_id)
            except KoiKoiError as exc:
                raise RecordError(
                    f"game {game_id}: stored action {i} ({action_id}) does not replay: {exc}"
                ) from None
            self._tag_new_events()
        self._make_agent = agent_factory or (lambda strength: make_agent(agent_spec(strength)))
        self._agents: dict[int, Agent] = {}
        self._cache_seq = -1
        self._cache: dict[str, Any] = {}
        self.turn_seconds = turn_seconds
        self._clock = clock
        self.forfeited = forfeit
        """How the match ended if a player forfeited it (None otherwise)."""
        self.deadline: float | None = None
        """When the running turn clock runs out (``clock()`` time), or None."""
        self._clock_seq = -1
        self.restart_clock()

    # ---------------------------------------------------------------- facts

    @property
    def seq(self) -> int:
        """How many actions have been applied (the next action's sequence number)."""
        return len(self.match.actions)

    @property
    def deal(self) -> int:
        """Index of the current deal (every shuffle counts, redeals included)."""
        return self._deal

    @property
    def is_over(self) -> bool:
        """Whether the match is over: played to its end, or forfeited."""
        return self.match.is_over or self.forfeited is not None

    @property
    def winner(self) -> int | None:
        """The match winner (the other player after a forfeit; None: a draw or not over)."""
        if self.forfeited is not None:
            return 1 - self.forfeited.seat
        return self.match.winner

    def seat_of_token_hash(self, digest: str) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.token_hash is not None and secrets.compare_digest(seat.token_hash, digest):
                return i
        return None

    @property
    def open_seat(self) -> int | None:
        """The seat whose invite nobody has claimed yet (play waits for it), or None.

        A friend game (or a lobby match) is created with one seat taken; the other
        seat's invite is claimed when the invited player opens the link. Until then
        the room refuses every action (``opponent_not_joined``).
        """
        for i, seat in enumerate(self.seats):
            if seat.invite_hash is not None and not seat.invite_used:
                return i
        return None

    def to_move(self) -> int | None:
        """The player to act, or None when the match is over."""
        return None if self.is_over else self.match.current

    # ---------------------------------------------------------- turn clock

    @property
    def clock_seat(self) -> int | None:
        """The seat whose turn clock runs now, or None (no clock, the match over, a seat
        still waiting for its invited player, or an AI to move)."""
        if self.turn_seconds <= 0 or self.is_over or self.open_seat is not None:
            return None
        p = self.match.current
        return p if self.seats[p].kind == "human" else None

    def restart_clock(self) -> None:
        """Start the clock of a decision that has just become a person's (each action and
        each claimed seat calls this); a decision already timed keeps its deadline."""
        if self.clock_seat is None:
            self.deadline = None
            self._clock_seq = -1
        elif self.deadline is None or self._clock_seq != self.seq:
            self.deadline = self._clock() + self.turn_seconds
            self._clock_seq = self.seq

    def expired(self) -> int | None:
        """The seat whose clock has run out (it forfeits the match), or None."""
        seat = self.clock_seat
        if seat is None or self.deadline is None or self._clock() < self.deadline:
            return None
        return seat

    def forfeit(self, seat: int, reason: str = "time") -> None:
        """End the match: ``seat`` forfeits it and the other player wins."""
        if self.is_over:
            raise ProtocolError("game_over", "the match is over: nobody can forfeit it")
        self.forfeited = Forfeit(seat, reason)
        self.deadline = None

    def clock_message(self) -> dict[str, Any] | None:
        """The ``clock`` of a ``state`` message: ``seat`` (whose clock runs), ``deadline``
        (the server's time, Unix seconds), ``left`` (seconds left when it was sent) and
        ``seconds`` (a decision's allowance); None when no clock runs."""
        seat = self.clock_seat
        if seat is None or self.deadline is None:
            return None
        return {
            "seat": seat,
            "deadline": round(self.deadline, 3),
            "left": round(max(0.0, self.deadline - self._clock()), 3),
            "seconds": self.turn_seconds,
        }

    def ai_to_move(self) -> int | None:
        """The AI seat to act now, if any."""
        p = self.to_move()
        if p is not None and self.seats[p].kind == "ai":
            return p
        return None

    def _tag_new_events(self) -> None:
        events = self.match.events
        for event in events[len(self._tags) :]:
            if event.kind == "round_start":
                self._deal += 1
                self._round = int(event.data.get("round", self._round + 1))
            self._tags.append((self._deal, self._round))

    # --------------------------------------------------------------- acting

    def check_act(self, seat: int | None, action_id: int, seq: int) -> None:
        """Raise :class:`ProtocolError` unless ``seat`` may play ``action_id`` at ``seq``."""
        if seat is None:
            raise ProtocolError("spectator", "spectators cannot act")
        if self.is_over:
            raise ProtocolError("game_over", "the match is over: no action is legal")
        waiting = self.open_seat
        if waiting is not None and waiting != seat:
            # (The invited seat itself acting means its claim is on its way to this
            # process: it holds its token, so it has joined.)
            raise ProtocolError(
                "opponent_not_joined",
                f"player {waiting} has not opened the invite link yet: "
                "play starts when both seats are taken",
            )
        if seq != self.seq:
            raise ProtocolError(
                "stale",
                f"seq {seq} is not the game's action count {self.seq}: "
                "the state changed; act on the latest state",
            )
        if self.match.current != seat:
            raise ProtocolError(
                "not_your_turn", f"it is player {self.match.current}'s turn, not yours"
            )
        legal = self.match.legal_ids()
        if action_id not in legal:
            raise ProtocolError(
                "illegal_action",
                f"{describe_action_id(action_id)!r} is not legal now; legal: "
                + ", ".join(describe_action_id(i) for i in legal),
            )

    def apply(self, action_id: int) -> int:
        """Apply a checked action with the engine's checked ``Match.apply``.

        Returns the index of the first event it produced.
        """
        start = len(self.match.events)
        self.match.apply(action_id)
        self._tag_new_events()
        self.restart_clock()
        return start

    def agent(self, seat: int) -> Agent:
        """The AI of ``seat`` (built on first use)."""
        agent = self._agents.get(seat)
        if agent is None:
            strength = self.seats[seat].agent or "random"
            agent = self._make_agent(strength)
            self._agents[seat] = agent
        return agent

    def view(self, seat: int | None, *, history: bool = False) -> PlayerView:
        """``view_of(match, seat)``: the only game data a seat ever receives."""
        return view_of(self.match, seat, with_history=history)

    # ------------------------------------------------------------- messages

    def _per_seq(self) -> dict[str, Any]:
        if self._cache_seq != self.seq:
            self._cache = {}
            self._cache_seq = self.seq
        return self._cache

    def yaku(self) -> list[dict[str, Any]]:
        """Each player's yaku in the current round (from the public capture piles)."""
        cache = self._per_seq()
        found = cache.get("yaku")
        if found is None:
            rnd = self.match.round
            scorer = self.match.scorer
            found = [
                scorer.evaluate(rnd.piles[p], rnd.month, rnd.koikoi_calls[p] > 0).to_dict()
                for p in (0, 1)
            ]
            cache["yaku"] = found
        return list(found)

    def progress(self, view: PlayerView) -> list[list[dict[str, Any]]]:
        """:func:`progress_of` the current position, computed once per action: it reads
        only public facts, the same for every seat (``view`` is any seat's view)."""
        cache = self._per_seq()
        found: list[list[dict[str, Any]]] | None = cache.get("progress")
        if found is None:
            found = progress_of(view)
            cache["progress"] = found
        return found

    def decision(self) -> dict[str, Any] | None:
        """During a koi-koi decision: what stopping now would score (public facts)."""
        if self.is_over or self.match.round.phase is not Phase.DECIDE:
            return None
        cache = self._per_seq()
        if "decision" not in cache:
            rnd = self.match.round
            p = rnd.current
            settlement = self.match.scorer.settle_stop(
                p, rnd.piles[p], rnd.month, rnd.koikoi_calls, rnd.scores, rnd.called_scores
            )
            cache["decision"] = {
                "player": p,
                "if_stop": settlement.to_dict(),
                "explain": settlement.explain(),
            }
        found: dict[str, Any] = cache["decision"]
        return found

    def events_for(self, seat: int | None, start: int) -> list[dict[str, Any]]:
        """The events from index ``start`` that ``seat`` may see, tagged with deal and round."""
        out: list[dict[str, Any]] = []
        events = self.match.events
        for i in range(start, len(events)):
            event = events[i]
            if not event.visible_to(seat):
                continue
            d = event.to_dict()
            deal, rnd = self._tags[i]
            d["deal"] = deal
            d["round"] = rnd
            d["index"] = i
            out.append(d)
        return out

    def state(
        self,
        seat: int | None,
        start: int,
        *,
        ack: int | None = None,
        full: bool | None = None,
    ) -> dict[str, Any]:
        """The ``state`` message for ``seat``: its view and the events since ``start``.

        ``full`` (default: ``start == 0``) tells the client to reset its history;
        ``open_seat`` names the seat still waiting for its invited player (None once
        both seats are taken), during which no action is accepted; ``clock`` is the
        running turn clock (:meth:`clock_message`) and ``forfeit`` says who forfeited
        a match that ended so (``{"player", "reason"}``, else None).
        """
        view = self.view(seat)
        msg: dict[str, Any] = {
            "type": "state",
            "seq": self.seq,
            "deal": self._deal,
            "full": start == 0 if full is None else full,
            "view": view.to_dict(),
            "events": self.events_for(seat, start),
            "yaku": self.yaku(),
            "progress": self.progress(view),
            "decision": self.decision(),
            "over": self.is_over,
            "winner": self.winner,
            "open_seat": self.open_seat,
            "clock": self.clock_message(),
            "forfeit": None if self.forfeited is None else self.forfeited.to_dict(),
        }
        if self.mode == "tutorial" and seat is not None:
            msg["tutorial"] = self.tutorial(seat)
        if ack is not None:
            msg["ack"] = ack
        return msg

    def tutorial(self, seat: int) -> dict[str, Any]:
        """The guided round's coaching for ``seat`` (:func:`koikoi.features.tutorial.coach`): every
        lesson so far and what to do now, computed from the seat's own view."""
        cache = self._per_seq()
        key = f"tutorial:{seat}"
        if key not in cache:
            cache[key] = {"tips": [tip.to_dict() for tip in coach(self.view(seat, history=True))]}
        found: dict[str, Any] = cache[key]
        return found

    def welcome(self, seat: int | None) -> dict[str, Any]:
        """The ``welcome`` message after a successful ``hello``."""
        return {
            "type": "welcome",
            "game": self.id,
            "seat": seat,
            "role": "spectator" if seat is None else "player",
            "mode": self.mode,
            "rules": self.rules.to_dict(),
            "players": [s.public() for s in self.seats],
            "created": int(self.created_at),
        }

    def hint_view(self, seat: int) -> PlayerView:
        """The view a hint rates (the seat's own): raises unless it is the seat's turn."""
        if self.is_over or self.match.current != seat:
            raise ProtocolError("hint_unavailable", "a hint is only given on your turn")
        view = self.view(seat, history=True)
        if not view.legal_ids:
            raise ProtocolError("hint_unavailable", "no legal action to rate")
        return view

    def hint_message(
        self, seq: int, view: PlayerView, values: dict[int, ActionValue], source: str
    ) -> dict[str, Any]:
        """The ``hint`` message for values of ``view``'s actions made at ``seq``: best
        first by what the evaluator maximises (``score``), each with its expected net
        round ``points`` and, in a match of several rounds, its match-win ``equity``."""
        rows = ranked(values, view.legal_ids)
        if not rows:
            raise ProtocolError("hint_unavailable", "the AI gave no values for these actions")
        options: list[dict[str, Any]] = []
        for action_id, value in rows:
            option: dict[str, Any] = {
                "id": action_id,
                "action": describe_action_id(action_id),
                "score": round(value.key, 4),
                "points": round(value.points, 2),
            }
            if value.equity is not None:
                option["equity"] = round(value.equity, 4)
            options.append(option)
        return {
            "type": "hint",
            "seq": seq,
            "deal": self._deal,
            "source": source,
            "best": rows[0][0],
            "options": options,
        }

    def summary(self) -> dict[str, Any]:
        """Public facts for logs and the health page."""
        return {
            "game": self.id,
            "mode": self.mode,
            "rules": self.rules.name,
            "seq": self.seq,
            "round": self.match.round_number,
            "over": self.is_over,
        }
