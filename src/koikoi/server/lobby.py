"""The quick-match queue of the lobby, in the database: several server processes share it.

A player who asks for a quick match (``POST /api/lobby/quick``) is either
paired with the longest-waiting player who wants the same rule set (preset and
rounds) or put in the queue, a row of the ``lobby_queue`` table: the player (by
device key, through ``players.id``), what they want, since when they wait and
when the row expires. The browser asks again about every second; each answer
pushes the expiry on by :data:`WAIT_SECONDS`, so a player who stops asking
leaves the queue.

Pairing happens in one transaction. On PostgreSQL the asker's player row is
locked first (``SELECT ... FOR UPDATE`` on ``players``: the questions of one
key queue up behind each other even when the key has no row in the queue yet),
and the partner is chosen among the rows nobody else holds (``FOR UPDATE SKIP
LOCKED``); on SQLite the transaction takes the database's single write lock
from its start (``BEGIN IMMEDIATE``). Either way two requests, in one process
or in two, never claim the same waiting player, and two players who ask at the
same moment do not claim each other twice.

The asker who finds a partner marks the partner's row ``pairing`` and its own
row ``creating`` (so a second question of the same key at the same moment
finds it busy, and neither pairs it again nor puts it in the queue), then
creates the game (taking seat 1) and its row goes; the partner's row then
becomes ``matched``: it names
the game and seat 0, whose invite is still unclaimed. The partner's next
question, on whichever process it lands, claims that seat with a fresh token
in the same transaction that deletes the row. So no seat token is ever stored:
the database keeps only token hashes, as everywhere else.

>>> from koikoi.server.storage import Storage
>>> from koikoi.server.players import PlayerStore
>>> store = PlayerStore(Storage("sqlite://"))
>>> queue = LobbyQueue(store.storage)
>>> me = store.ensure_player("a" * 64, "Aoi")
>>> queue.ask(me.id, "Aoi", "nintendo", 1, "t" * 43)
Waiting(position=1)
>>> queue.leave(me.id)
True
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeVar

from sqlalchemy import Float, ForeignKey, Integer, String, delete, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from koikoi.server.rooms import token_hash
from koikoi.server.storage import Base, SeatRow, Storage

__all__ = [
    "MATCHED_SECONDS",
    "WAIT_SECONDS",
    "Claimed",
    "LobbyQueue",
    "LobbyRow",
    "Pair",
    "Waiting",
]

T = TypeVar("T")

WAIT_SECONDS: Final = 20.0
"""A waiting player who has not asked again for this long leaves the queue."""
MATCHED_SECONDS: Final = 120.0
"""How long a match waits for its first player to collect it."""


class LobbyRow(Base):
    """A player in the quick-match queue: waiting, being paired, or matched."""

    __tablename__ = "lobby_queue"

    player_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("players.id", ondelete="CASCADE"), primary_key=True
    )
    rules: Mapped[str] = mapped_column(String(32))
    rounds: Mapped[int | None] = mapped_column(Integer, nullable=True)
    state: Mapped[str] = mapped_column(String(8), default="waiting")
    """``waiting``; ``pairing`` (another player is creating the game); ``creating`` (this
    player is creating the game of a pair); ``matched``."""
    since: Mapped[float] = mapped_column(Float, index=True)
    expires_at: Mapped[float] = mapped_column(Float, index=True)
    game_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    opponent: Mapped[str | None] = mapped_column(String(64), nullable=True)
    rules_name: Mapped[str | None] = mapped_column(String(120), nullable=True)


@dataclass(frozen=True, slots=True)
class Waiting:
    """The asker waits: ``position`` in the queue (1: the longest waiting)."""

    position: int


@dataclass(frozen=True, slots=True)
class Pair:
    """The asker claimed ``partner_id`` (now ``pairing``): create the game, then
    :meth:`LobbyQueue.matched` (or :meth:`LobbyQueue.release` if that failed)."""

    partner_id: str
    partner_name: str


@dataclass(frozen=True, slots=True)
class Claimed:
    """The asker's match was ready: they now hold ``seat`` of ``game_id`` with the
    token the caller passed to :meth:`LobbyQueue.ask`."""

    game_id: str
    seat: int
    opponent: str
    rules_name: str


class LobbyQueue:
    """The ``lobby_queue`` table on the web game's storage (its methods block: call them
    in a worker thread)."""

    def __init__(self, storage: Storage, clock: Callable[[], float] = time.time) -> None:
        """``clock``: wall-clock seconds (shared by the processes; tests pass a fake)."""
        self.storage = storage
        self.engine = storage.engine
        self.clock = clock
        # One lobby transaction at a time in this process (the database orders those of
        # several processes); a shared in-memory SQLite connection needs it too.
        self._lock = threading.Lock()
        tables = Base.metadata.tables
        storage.create_tables([tables["players"], tables["lobby_queue"]])

    def ask(
        self, player_id: str, name: str, rules: str, rounds: int | None, token: str
    ) -> Waiting | Pair | Claimed:
        """One quick-match question of ``player_id`` (display name ``name``) for
        ``(rules, rounds)``.

        ``token`` is the seat token the player gets if their match is ready (only its
        hash is stored). Returns :class:`Claimed` (the match is theirs now),
        :class:`Pair` (they claimed a partner) or :class:`Waiting`.
        """

        def run(conn: Connection) -> Waiting | Pair | Claimed:
            return self._ask(conn, player_id, name, rules, rounds, token)

        try:
            return self._write(run)
        except IntegrityError:
            # The same player's question inserted their row in another process at the
            # same moment: ask again, the row is there now.
            return self._write(run)

    def _ask(
        self,
        conn: Connection,
        player_id: str,
        name: str,
        rules: str,
        rounds: int | None,
        token: str,
    ) -> Waiting | Pair | Claimed:
        now = self.clock()
        players = Base.metadata.tables["players"]
        # One question of a key at a time, in every process: the lock on the player's row
        # holds even while the key has no row in the queue (SQLite: BEGIN IMMEDIATE).
        conn.execute(select(players.c.id).where(players.c.id == player_id).with_for_update())
        expired = (
            select(LobbyRow.player_id)
            .where(LobbyRow.expires_at < now)
            .with_for_update(skip_locked=True)
        )
        conn.execute(delete(LobbyRow).where(LobbyRow.player_id.in_(expired)))
        mine = conn.execute(
            select(LobbyRow).where(LobbyRow.player_id == player_id).with_for_update()
        ).first()
        if mine is not None and mine.state == "matched":
            conn.execute(delete(LobbyRow).where(LobbyRow.player_id == player_id))
            claimed = conn.execute(
                update(SeatRow)
                .where(
                    SeatRow.game_id == mine.game_id,
                    SeatRow.seat == mine.seat,
                    SeatRow.invite_used.is_(False),
                )
                .values(token_hash=token_hash(token), invite_used=True, name=name)
            )
            if claimed.rowcount == 1:
                return Claimed(
                    str(mine.game_id), int(mine.seat), str(mine.opponent), str(mine.rules_name)
                )
            mine = None  # the seat is gone (the game was deleted): wait again
        if mine is not None and mine.state in ("pairing", "creating"):
            return Waiting(1)  # a pair is being made: this question pairs nobody
        same_rounds = LobbyRow.rounds.is_(None) if rounds is None else LobbyRow.rounds == rounds
        partner = conn.execute(
            select(LobbyRow.player_id, players.c.name)
            .join(players, players.c.id == LobbyRow.player_id)
            .where(
                LobbyRow.state == "waiting",
                LobbyRow.rules == rules,
                same_rounds,
                LobbyRow.player_id != player_id,
            )
            .order_by(LobbyRow.since, LobbyRow.player_id)
            .limit(1)
            .with_for_update(skip_locked=True, of=LobbyRow)
        ).first()
        if partner is not None:
            conn.execute(
                update(LobbyRow)
                .where(LobbyRow.player_id == partner.player_id)
                .values(state="pairing", expires_at=now + MATCHED_SECONDS)
            )
            # The asker holds a row while it creates the game: a second question of the
            # same key at the same moment finds it busy instead of joining the queue.
            busy = {"state": "creating", "expires_at": now + MATCHED_SECONDS}
            if mine is None:
                conn.execute(
                    insert(LobbyRow),
                    {
                        "player_id": player_id,
                        "rules": rules,
                        "rounds": rounds,
                        "since": now,
                        **busy,
                    },
                )
            else:
                conn.execute(update(LobbyRow).where(LobbyRow.player_id == player_id).values(busy))
            return Pair(str(partner.player_id), str(partner.name))
        values = {"rules": rules, "rounds": rounds, "expires_at": now + WAIT_SECONDS}
        if mine is None:
            since = now
            conn.execute(
                insert(LobbyRow),
                {"player_id": player_id, "state": "waiting", "since": since, **values},
            )
        else:
            since = float(mine.since)
            conn.execute(update(LobbyRow).where(LobbyRow.player_id == player_id).values(values))
        ahead = conn.execute(
            select(func.count())
            .select_from(LobbyRow)
            .where(LobbyRow.state == "waiting", LobbyRow.since <= since)
        ).scalar_one()
        return Waiting(int(ahead))

    def _write(self, fn: Callable[[Connection], T]) -> T:
        """``fn(conn)`` in one transaction (committed when it returns)."""
        with self._lock, self.engine.connect() as conn:
            if self.storage.is_sqlite:
                # Take the single write lock now: the reads of ``fn`` decide its writes.
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            result = fn(conn)
            conn.commit()
            return result

    def matched(
        self,
        partner_id: str,
        game_id: str,
        seat: int,
        opponent: str,
        rules_name: str,
        *,
        creator_id: str | None = None,
    ) -> bool:
        """The game of a :class:`Pair` exists: the partner's next question claims
        ``seat`` (its invite unclaimed), and the row of ``creator_id`` (the asker who
        made the pair) goes. False if the partner's row is gone."""
        now = self.clock()

        def run(conn: Connection) -> bool:
            self._done_creating(conn, creator_id)
            done = conn.execute(
                update(LobbyRow)
                .where(LobbyRow.player_id == partner_id, LobbyRow.state == "pairing")
                .values(
                    state="matched",
                    game_id=game_id,
                    seat=seat,
                    opponent=opponent,
                    rules_name=rules_name,
                    expires_at=now + MATCHED_SECONDS,
                )
            )
            return bool(done.rowcount == 1)

        return self._write(run)

    def release(self, partner_id: str, *, creator_id: str | None = None) -> bool:
        """The game of a :class:`Pair` could not be created: the partner waits again
        (and ``creator_id``, who made the pair, is out of the queue)."""
        now = self.clock()

        def run(conn: Connection) -> bool:
            self._done_creating(conn, creator_id)
            done = conn.execute(
                update(LobbyRow)
                .where(LobbyRow.player_id == partner_id, LobbyRow.state == "pairing")
                .values(state="waiting", expires_at=now + WAIT_SECONDS)
            )
            return bool(done.rowcount == 1)

        return self._write(run)

    @staticmethod
    def _done_creating(conn: Connection, creator_id: str | None) -> None:
        if creator_id is not None:
            conn.execute(
                delete(LobbyRow).where(
                    LobbyRow.player_id == creator_id, LobbyRow.state == "creating"
                )
            )

    def leave(self, player_id: str) -> bool:
        """Stop waiting; whether the player was waiting (a match already made stays)."""

        def run(conn: Connection) -> bool:
            done = conn.execute(
                delete(LobbyRow).where(LobbyRow.player_id == player_id, LobbyRow.state == "waiting")
            )
            return bool(done.rowcount == 1)

        return self._write(run)

    def rows(self) -> list[tuple[str, str]]:
        """``(player_id, state)`` of every row, longest waiting first (tests, admin)."""
        with self.engine.connect() as conn:
            found = conn.execute(
                select(LobbyRow.player_id, LobbyRow.state).order_by(LobbyRow.since)
            ).all()
        return [(str(r.player_id), str(r.state)) for r in found]
