"""Persistence of the web game with SQLAlchemy: SQLite by default, PostgreSQL by URL.

Three tables: ``games`` (rules as TOML, the secret seed, the watch token's
hash, the finished record), ``seats`` (who sits where; token and invite
*hashes*, never tokens) and ``actions`` (one row per accepted action: game id,
sequence number, action id — primary key ``(game_id, seq)``); and
``game_clocks`` for the games that have a turn clock (its seconds per decision,
and who forfeited when one ran out). A game is rebuilt
by replaying its rules, seed and actions, so a restart loses nothing that was
acknowledged.

The methods are synchronous (SQLAlchemy 2 Core); the server calls them from
worker threads. :meth:`Storage.append_actions` writes a batch in one
transaction (group commit).

>>> store = Storage("sqlite://")
>>> store.ping()
True
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql.schema import Table

__all__ = [
    "ActionRow",
    "Base",
    "GameClockRow",
    "GameData",
    "GameRow",
    "GameSetup",
    "NewGame",
    "SeatData",
    "SeatRow",
    "Storage",
    "default_database_url",
    "normalize_url",
]

DB_FILE_NAME: Final = "koikoi.db"

SCHEMA_LOCK_KEY: Final = 7105311
"""The PostgreSQL advisory lock held while tables are created (the lease table's is
7105310): processes started together on an empty database create them one at a time."""


def default_database_url() -> str:
    """``sqlite:///$KOIKOI_HOME/koikoi.db``, or ``./koikoi.db`` without ``KOIKOI_HOME``."""
    home = os.environ.get("KOIKOI_HOME")
    base = Path(home).expanduser() if home else Path.cwd()
    return f"sqlite:///{base / DB_FILE_NAME}"


def normalize_url(url: str) -> str:
    """Use psycopg 3 for ``postgresql://`` and ``postgres://`` URLs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class Base(DeclarativeBase):
    """Declarative base of the web game's tables."""


class GameRow(Base):
    """One game (match)."""

    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    mode: Mapped[str] = mapped_column(String(16))
    rules_name: Mapped[str] = mapped_column(String(120))
    rules_toml: Mapped[str] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)
    watch_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    status: Mapped[str] = mapped_column(String(16), default="active")
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    finished_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    winner: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score0: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score1: Mapped[int | None] = mapped_column(Integer, nullable=True)
    record: Mapped[str | None] = mapped_column(Text, nullable=True)


class SeatRow(Base):
    """One of the two seats of a game."""

    __tablename__ = "seats"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    name: Mapped[str] = mapped_column(String(64), default="")
    agent: Mapped[str | None] = mapped_column(String(32), nullable=True)
    token_hash: Mapped[str | None] = mapped_column(
        String(64), unique=True, index=True, nullable=True
    )
    invite_hash: Mapped[str | None] = mapped_column(
        String(64), unique=True, index=True, nullable=True
    )
    invite_used: Mapped[bool] = mapped_column(Boolean, default=False)


class ActionRow(Base):
    """One accepted action; ``(game_id, seq)`` is unique, so no action is stored twice."""

    __tablename__ = "actions"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    action: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    at: Mapped[float] = mapped_column(Float)


class GameClockRow(Base):
    """The turn clock of a game that has one (a table of its own: older databases gain
    it without a change to ``games``), and the forfeit when the clock ran out."""

    __tablename__ = "game_clocks"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    turn_seconds: Mapped[float] = mapped_column(Float)
    forfeit_seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    forfeit_reason: Mapped[str | None] = mapped_column(String(16), nullable=True)


@dataclass(frozen=True, slots=True)
class SeatData:
    """A seat as stored."""

    seat: int
    kind: str
    name: str = ""
    agent: str | None = None
    token_hash: str | None = None
    invite_hash: str | None = None
    invite_used: bool = False


@dataclass(frozen=True, slots=True)
class GameSetup:
    """What a game is set up with: its id, mode, rules, seed and watch token's hash."""

    id: str
    mode: str
    rules_name: str
    rules_toml: str
    seed: int
    watch_hash: str


@dataclass(frozen=True, slots=True)
class NewGame(GameSetup):
    """What :meth:`Storage.create_game` stores."""

    seats: tuple[SeatData, SeatData]
    turn_seconds: float = 0.0
    """The turn clock: seconds per decision (0: none)."""


@dataclass(frozen=True, slots=True)
class GameData(GameSetup):
    """A stored game with its seats and action ids (in order)."""

    status: str
    created_at: float
    seats: tuple[SeatData, ...]
    actions: tuple[int, ...]
    record: str | None
    turn_seconds: float = 0.0
    """The turn clock: seconds per decision (0: none)."""
    forfeit: tuple[int, str] | None = None
    """``(seat, reason)`` when the match ended by forfeit."""


def _values(source: object, kind: type[Any]) -> dict[str, Any]:
    """The values of the dataclass ``kind``'s fields, read from ``source`` (an instance
    of it, a table row) by name.

    >>> _values(SeatData(1, "ai", agent="expert"), SeatData)["agent"]
    'expert'
    """
    return {f.name: getattr(source, f.name) for f in dataclasses.fields(kind)}


class Storage:
    """The repository. ``url`` is any SQLAlchemy URL (``postgresql://`` uses psycopg 3)."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        parsed = make_url(self.url)
        self.dialect = parsed.get_backend_name()
        kwargs: dict[str, Any] = {"echo": echo, "future": True}
        if self.dialect == "sqlite":
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
            if parsed.database in (None, "", ":memory:"):
                kwargs["poolclass"] = StaticPool
            else:
                Path(parsed.database or DB_FILE_NAME).parent.mkdir(parents=True, exist_ok=True)
        else:
            kwargs["pool_pre_ping"] = True
            kwargs["pool_size"] = 8
            kwargs["max_overflow"] = 4
        self.engine: Engine = create_engine(self.url, **kwargs)
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.create_tables()
        # A plain Core insert (the hot path: one per batch of actions).
        self._insert_action = insert(Base.metadata.tables["actions"])
        self.finish_hooks: list[Callable[[Connection, str], object]] = []
        """Called as ``hook(connection, game_id)`` inside :meth:`finish_game`'s transaction
        (the players' ratings are updated with the game's result, or not at all)."""

    def create_tables(self, tables: Sequence[Table] | None = None) -> None:
        """Create ``tables`` (default: all of them) where missing.

        On PostgreSQL this happens in one transaction under an advisory lock: two
        processes checking for a table at once would both try to create it, and the
        second would fail to start (a ``pg_type`` unique violation)."""
        with self.engine.begin() as conn:
            if not self.is_sqlite:
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            Base.metadata.create_all(conn, tables=tables)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def describe(self) -> str:
        """The URL with any password hidden (for logs)."""
        return make_url(self.url).render_as_string(hide_password=True)

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def ping(self) -> bool:
        """Whether the database answers."""
        with self.engine.connect() as conn:
            return conn.execute(select(1)).scalar_one() == 1

    # -------------------------------------------------------------- writes

    def create_game(self, game: NewGame) -> None:
        """Store a new game and its seats in one transaction."""
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(
                insert(GameRow),
                {
                    **_values(game, GameSetup),
                    "status": "active",
                    "created_at": now,
                    "updated_at": now,
                },
            )
            conn.execute(
                insert(SeatRow),
                [{"game_id": game.id, **_values(s, SeatData)} for s in game.seats],
            )
            if game.turn_seconds > 0:
                conn.execute(
                    insert(GameClockRow),
                    {"game_id": game.id, "turn_seconds": game.turn_seconds},
                )

    def append_actions(self, rows: Sequence[tuple[str, int, int, int]]) -> None:
        """Store ``(game_id, seq, action, seat)`` rows in one transaction.

        Raises:
            sqlalchemy.exc.IntegrityError: if a ``(game_id, seq)`` is already stored
                (nothing of the batch is stored then).
        """
        if not rows:
            return
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(
                self._insert_action,
                [
                    {"game_id": g, "seq": seq, "action": a, "seat": seat, "at": now}
                    for g, seq, a, seat in rows
                ],
            )

    def claim_invite(self, invite_hash: str, token_hash: str, name: str) -> tuple[str, int] | None:
        """Turn an unused invite into a seat token (once). Returns ``(game_id, seat)`` or None."""
        with self.engine.begin() as conn:
            result = conn.execute(
                update(SeatRow)
                .where(SeatRow.invite_hash == invite_hash, SeatRow.invite_used.is_(False))
                .values(token_hash=token_hash, invite_used=True, name=name)
            )
            if result.rowcount != 1:
                return None
            row = conn.execute(
                select(SeatRow.game_id, SeatRow.seat).where(SeatRow.invite_hash == invite_hash)
            ).one()
            return str(row.game_id), int(row.seat)

    def invite_state(self, invite_hash: str) -> tuple[str, int, bool] | None:
        """``(game_id, seat, used)`` of an invite, or None if there is no such invite."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(SeatRow.game_id, SeatRow.seat, SeatRow.invite_used).where(
                    SeatRow.invite_hash == invite_hash
                )
            ).first()
        if row is None:
            return None
        return str(row.game_id), int(row.seat), bool(row.invite_used)

    def finish_game(
        self,
        game_id: str,
        record: str,
        scores: Sequence[int],
        winner: int | None,
        forfeit: tuple[int, str] | None = None,
    ) -> None:
        """Mark a game finished and keep its record (JSON text); ``forfeit``:
        ``(seat, reason)`` when the seat forfeited the match (its clock ran out)."""
        now = time.time()
        with self.engine.begin() as conn:
            if forfeit is not None:
                conn.execute(
                    update(GameClockRow)
                    .where(GameClockRow.game_id == game_id)
                    .values(forfeit_seat=forfeit[0], forfeit_reason=forfeit[1])
                )
            conn.execute(
                update(GameRow)
                .where(GameRow.id == game_id)
                .values(
                    status="finished",
                    record=record,
                    winner=winner,
                    score0=scores[0],
                    score1=scores[1],
                    finished_at=now,
                    updated_at=now,
                )
            )
            for hook in self.finish_hooks:
                hook(conn, game_id)

    # --------------------------------------------------------------- reads

    def find_token(self, digest: str) -> tuple[str, int | None] | None:
        """The game (and seat; None for the watch token) of a token hash."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(SeatRow.game_id, SeatRow.seat).where(SeatRow.token_hash == digest)
            ).first()
            if row is not None:
                return str(row.game_id), int(row.seat)
            game = conn.execute(select(GameRow.id).where(GameRow.watch_hash == digest)).first()
        if game is not None:
            return str(game.id), None
        return None

    def load_game(self, game_id: str) -> GameData | None:
        """A game with its seats and actions, or None."""
        with self.engine.connect() as conn:
            game = conn.execute(select(GameRow).where(GameRow.id == game_id)).first()
            if game is None:
                return None
            seats = conn.execute(
                select(SeatRow).where(SeatRow.game_id == game_id).order_by(SeatRow.seat)
            ).all()
            actions = conn.execute(
                select(ActionRow.seq, ActionRow.action)
                .where(ActionRow.game_id == game_id)
                .order_by(ActionRow.seq)
            ).all()
            clock = conn.execute(
                select(GameClockRow).where(GameClockRow.game_id == game_id)
            ).first()
        for i, row in enumerate(actions):
            if row.seq != i:
                raise RuntimeError(f"game {game_id}: action {i} is missing from storage")
        return GameData(
            id=game.id,
            mode=game.mode,
            rules_name=game.rules_name,
            rules_toml=game.rules_toml,
            seed=int(game.seed),
            watch_hash=game.watch_hash,
            status=game.status,
            created_at=float(game.created_at),
            seats=tuple(SeatData(**_values(s, SeatData)) for s in seats),
            actions=tuple(int(r.action) for r in actions),
            record=game.record,
            turn_seconds=0.0 if clock is None else float(clock.turn_seconds),
            forfeit=(
                None
                if clock is None or clock.forfeit_seat is None
                else (int(clock.forfeit_seat), str(clock.forfeit_reason or "time"))
            ),
        )

    def action_ids(self, game_id: str) -> list[int]:
        """The stored action ids of a game, in order."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(ActionRow.action).where(ActionRow.game_id == game_id).order_by(ActionRow.seq)
            ).all()
        return [int(r.action) for r in rows]

    def count_actions(self, game_ids: Iterable[str] | None = None) -> int:
        """How many actions are stored (for some games, or all)."""
        stmt = select(func.count()).select_from(ActionRow)
        if game_ids is not None:
            stmt = stmt.where(ActionRow.game_id.in_(list(game_ids)))
        with self.engine.connect() as conn:
            return int(conn.execute(stmt).scalar_one())

    def get_record(self, game_id: str) -> str | None:
        """The finished game's record (JSON text), or None."""
        with self.engine.connect() as conn:
            row = conn.execute(select(GameRow.record).where(GameRow.id == game_id)).first()
        return None if row is None else row.record


def _sqlite_pragmas(dbapi_connection: Any, connection_record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
    finally:
        cursor.close()
