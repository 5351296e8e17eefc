"""Players of the web game without accounts: a device key, a display name, their games.

A browser makes itself a random **device key** once (``KK.deviceKey()`` in
common.js, kept in ``localStorage``) and sends it in the JSON body of the
``/api/players/...`` requests. The server stores only the key's SHA-256 hash,
never shows it to anyone, and treats the key as the player's password: it
alone opens the player's statistics, history and replays.

After creating or joining a game the browser **links** its seat to the player
(``POST /api/players/games`` with the key and the seat token, which proves the
seat). A linked game counts in the player's statistics once it is finished;
the statistics are :func:`koikoi.features.stats.summarize` over the stored records.

Two tables, added beside those of :mod:`~koikoi.server.storage` (same
metadata, created with them): ``players`` (``id``, ``key_hash``, ``name``,
times) and ``player_games`` (``game_id``, ``seat`` → ``player_id``; one player
per seat, and a player holds at most one seat of a game).

>>> from koikoi.server.storage import Storage
>>> store = PlayerStore(Storage("sqlite://"))
>>> store.find_player(key_hash("k" * 43)) is None
True
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.to_thread
from sqlalchemy import Float, ForeignKey, Integer, String, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from koikoi.features.names import guest_tag
from koikoi.features.opponents import LEVEL_CHOICES
from koikoi.features.ratings import (
    ESTABLISHED_AI_GAMES,
    PAIR_GAMES_PER_WINDOW,
    PAIR_WINDOW_SECONDS,
    Rating,
    is_provisional,
    rated_preset,
)
from koikoi.features.ratings import update as rating_update
from koikoi.features.stats import GameLine, game_line, summarize_lines
from koikoi.game.errors import KoiKoiError
from koikoi.game.record import Identity, record_from_dict
from koikoi.game.rules import PRESET_NAMES, load_rules_text
from koikoi.server.lobby import Claimed, LobbyQueue, Waiting
from koikoi.server.logs import LOGGER_NAME, log_event
from koikoi.server.protocol import (
    MAX_NAME_CHARS,
    NewGameRequest,
    ProtocolError,
    person_name,
    valid_token,
)
from koikoi.server.records import replay_frames
from koikoi.server.rooms import agent_name, new_token, token_hash
from koikoi.server.storage import Base, GameRow, SeatRow, Storage
from koikoi.server.writer import run_storage

__all__ = [
    "MAX_STATS_GAMES",
    "KeyRequest",
    "LinkRequest",
    "PlayerData",
    "PlayerGameRow",
    "PlayerRow",
    "PlayerService",
    "PlayerStore",
    "key_hash",
    "parse_key_request",
    "parse_link_request",
    "valid_key",
]

if TYPE_CHECKING:
    from koikoi.server.hub import Hub

log = logging.getLogger(LOGGER_NAME)

MAX_STATS_GAMES: Final = 500
"""The statistics cover a player's latest finished games, at most this many."""
_KEY_RE: Final = re.compile(r"[A-Za-z0-9_-]{32,128}")
_GAME_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")
KEY_RULE: Final = "key must be the device key: a string of 32 to 128 URL-safe characters"


class PlayerRow(Base):
    """One player: a device key's hash and a display name."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    name: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[float] = mapped_column(Float)
    seen_at: Mapped[float] = mapped_column(Float)


class PlayerGameRow(Base):
    """A seat of a game linked to a player."""

    __tablename__ = "player_games"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("players.id", ondelete="CASCADE"), index=True
    )
    linked_at: Mapped[float] = mapped_column(Float)


class RatingRow(Base):
    """A Glicko-2 rating of a player (``player:<id>``) or an AI level (``ai:<agent>``)
    under one rule set."""

    __tablename__ = "ratings"

    subject: Mapped[str] = mapped_column(String(64), primary_key=True)
    rules: Mapped[str] = mapped_column(String(120), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    rd: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[float] = mapped_column(Float)


class RatedGameRow(Base):
    """A game whose result is in the ratings (each game is rated once)."""

    __tablename__ = "rated_games"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    rated_at: Mapped[float] = mapped_column(Float)


class RatedPairRow(Base):
    """A rated game between two people: who (``pair``: their player ids, sorted, joined
    by a space) and when, for the limit of rated games per pair in a window."""

    __tablename__ = "rated_pairs"

    game_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    pair: Mapped[str] = mapped_column(String(80), index=True)
    rated_at: Mapped[float] = mapped_column(Float)


_TABLES: Final = ("players", "player_games", "ratings", "rated_games", "rated_pairs")


def key_hash(key: str) -> str:
    """What the server stores instead of a device key (SHA-256, hex)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def valid_key(value: object) -> bool:
    """Whether ``value`` has the shape of a device key (URL-safe, 32 to 128 characters)."""
    return isinstance(value, str) and _KEY_RE.fullmatch(value) is not None


# ------------------------------------------------------------------ requests


@dataclass(frozen=True, slots=True)
class KeyRequest:
    """A request of the player's own: the device key, and a game id or a name if any."""

    key: str
    name: str | None = None
    game: str | None = None


@dataclass(frozen=True, slots=True)
class LinkRequest:
    """``POST /api/players/games``: link the seat of ``token`` in ``game`` to the player."""

    key: str
    game: str
    token: str
    name: str | None = None


def _fields(body: object, allowed: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ProtocolError("bad_json", "the request must be a JSON object")
    for key in body:
        if key not in allowed:
            shown = key if len(key) <= 40 else key[:40] + "..."
            raise ProtocolError(
                "unexpected_field",
                f"the request has no field {shown!r}: allowed {', '.join(allowed)}",
            )
    for key in required:
        if body.get(key) is None:
            raise ProtocolError("missing_field", f"the request needs the field {key!r}")
    if not valid_key(body["key"]):
        raise ProtocolError("bad_field", KEY_RULE)
    return body


def _name(data: Mapping[str, Any]) -> str | None:
    value = data.get("name")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ProtocolError("bad_field", "name must be a string")
    if len(value) > MAX_NAME_CHARS:
        raise ProtocolError("too_large", f"name is too long: at most {MAX_NAME_CHARS} characters")
    return person_name(value)


def _seat_name(name: str, seat: int) -> str:
    """The name of the person at ``seat``, by the naming rule (:mod:`koikoi.features.names`):
    their name, else "Guest 1" or "Guest 2" (in English; the page translates it)."""
    return name or Identity.guest(seat + 1).english


def _game(data: Mapping[str, Any]) -> str | None:
    value = data.get("game")
    if value is None:
        return None
    if not isinstance(value, str) or not _GAME_RE.fullmatch(value):
        raise ProtocolError("bad_field", "game must be a game id (up to 32 URL-safe characters)")
    return value


def parse_key_request(body: object, *, game: bool = False, name: bool = False) -> KeyRequest:
    """Validate ``{"key", ["game"], ["name"]}``: the device key (required), a game id
    (required when ``game``), a display name (allowed when ``name``)."""
    allowed = ("key",) + (("game",) if game else ()) + (("name",) if name else ())
    data = _fields(body, allowed, ("key", "game") if game else ("key",))
    return KeyRequest(str(data["key"]), name=_name(data), game=_game(data))


def parse_link_request(body: object) -> LinkRequest:
    """Validate ``{"key", "game", "token", ["name"]}``."""
    data = _fields(body, ("key", "game", "token", "name"), ("key", "game", "token"))
    if not valid_token(data["token"]):
        raise ProtocolError("bad_field", "token must be a string of 20 to 128 URL-safe characters")
    game = _game(data)
    if game is None:  # pragma: no cover - required above
        raise ProtocolError("missing_field", "the request needs the field 'game'")
    return LinkRequest(str(data["key"]), game, str(data["token"]), _name(data))


@dataclass(frozen=True, slots=True)
class QuickRequest:
    """``POST /api/lobby/quick``: the device key, a preset and optionally the rounds."""

    key: str
    rules: str
    rounds: int | None = None
    name: str | None = None


def parse_quick_request(body: object) -> QuickRequest:
    """Validate ``{"key", "rules", ["rounds"], ["name"]}``: ``rules`` a preset name,
    ``rounds`` 1 to 12."""
    data = _fields(body, ("key", "rules", "rounds", "name"), ("key", "rules"))
    rules = data["rules"]
    if rules not in PRESET_NAMES:
        raise ProtocolError(
            "bad_field", f"rules must be a preset: allowed {', '.join(PRESET_NAMES)}"
        )
    rounds = data.get("rounds")
    if rounds is not None and (
        not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 12
    ):
        raise ProtocolError("bad_field", "rounds must be an integer from 1 to 12")
    return QuickRequest(str(data["key"]), str(rules), rounds, _name(data))


# ------------------------------------------------------------------- storage


@dataclass(frozen=True, slots=True)
class PlayerData:
    """A stored player (the key's hash stays in the database)."""

    id: str
    name: str
    games: int


class PlayerStore:
    """The players' tables, on the web game's :class:`~koikoi.server.storage.Storage`."""

    def __init__(self, storage: Storage, clock: Callable[[], float] = time.time) -> None:
        """``clock``: wall-clock seconds of the ratings (tests pass a fake)."""
        self.storage = storage
        self.engine = storage.engine
        self.clock = clock
        storage.create_tables([Base.metadata.tables[t] for t in _TABLES])

    def find_player(self, digest: str) -> PlayerData | None:
        """The player of a key hash, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(PlayerRow.id, PlayerRow.name).where(PlayerRow.key_hash == digest)
            ).first()
            if row is None:
                return None
            n = conn.execute(
                select(PlayerGameRow.game_id).where(PlayerGameRow.player_id == row.id)
            ).all()
        return PlayerData(str(row.id), str(row.name), len(n))

    def ensure_player(self, digest: str, name: str | None) -> PlayerData:
        """The player of a key hash, created on first sight; ``name`` (when given) replaces
        the display name."""
        now = time.time()
        with self.engine.begin() as conn:
            row = conn.execute(
                select(PlayerRow.id, PlayerRow.name).where(PlayerRow.key_hash == digest)
            ).first()
            if row is None:
                try:
                    with conn.begin_nested():
                        conn.execute(
                            insert(PlayerRow),
                            {
                                "id": secrets.token_urlsafe(12),
                                "key_hash": digest,
                                "name": name or "",
                                "created_at": now,
                                "seen_at": now,
                            },
                        )
                except IntegrityError:  # the same key registered at the same moment
                    pass
            else:
                values: dict[str, Any] = {"seen_at": now}
                if name is not None:
                    values["name"] = name
                conn.execute(update(PlayerRow).where(PlayerRow.key_hash == digest).values(values))
        player = self.find_player(digest)
        if player is None:  # pragma: no cover - inserted above
            raise RuntimeError("the player was not stored")
        return player

    def link(self, player_id: str, game_id: str, seat: int) -> str | None:
        """Link ``seat`` of ``game_id`` to the player; None when done (or already so),
        else why not: ``"seat"`` (linked to another player) or ``"game"`` (the player
        holds the other seat)."""
        with self.engine.begin() as conn:
            rows = conn.execute(
                select(PlayerGameRow.seat, PlayerGameRow.player_id).where(
                    PlayerGameRow.game_id == game_id
                )
            ).all()
            for row in rows:
                if row.seat == seat:
                    return None if row.player_id == player_id else "seat"
                if row.player_id == player_id:
                    return "game"
            try:
                with conn.begin_nested():
                    conn.execute(
                        insert(PlayerGameRow),
                        {
                            "game_id": game_id,
                            "seat": seat,
                            "player_id": player_id,
                            "linked_at": time.time(),
                        },
                    )
            except IntegrityError:  # linked by another request at the same moment
                return "seat"
        return None

    def finished_games(
        self, player_id: str, limit: int = MAX_STATS_GAMES
    ) -> list[tuple[str, int, float, str]]:
        """The player's latest finished games with a stored record, oldest first:
        ``(game_id, seat, finished_at, record JSON)``."""
        stmt = (
            select(PlayerGameRow.game_id, PlayerGameRow.seat, GameRow.finished_at, GameRow.record)
            .join(GameRow, GameRow.id == PlayerGameRow.game_id)
            .where(
                PlayerGameRow.player_id == player_id,
                GameRow.status == "finished",
                GameRow.record.is_not(None),
            )
            .order_by(GameRow.finished_at.desc(), GameRow.id)
            .limit(limit)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(stmt).all()
        return [
            (str(r.game_id), int(r.seat), float(r.finished_at or 0.0), str(r.record))
            for r in reversed(rows)
        ]

    def linked_seat(self, player_id: str, game_id: str) -> int | None:
        """The seat the player holds in ``game_id``, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(PlayerGameRow.seat).where(
                    PlayerGameRow.player_id == player_id, PlayerGameRow.game_id == game_id
                )
            ).first()
        return None if row is None else int(row.seat)

    # ------------------------------------------------------------- ratings

    def rate_game(self, conn: Connection, game_id: str) -> bool:
        """:meth:`_rate_game` in a savepoint: a rating that cannot be updated is logged and
        left out, and never costs the game's result."""
        try:
            with conn.begin_nested():
                return self._rate_game(conn, game_id)
        except Exception as exc:
            log_event(log, "rating failed", logging.ERROR, game=game_id, error=type(exc).__name__)
            return False

    def _rate_game(self, conn: Connection, game_id: str) -> bool:
        """Rate a finished game, inside the transaction that stores its result
        (:attr:`Storage.finish_hooks`): each side's Glicko-2 rating under the game's
        rule set is updated with this one game against the other side's rating before
        it. Each game is rated once. Returns whether this call rated it.

        Rated (the model of :mod:`koikoi.features.ratings`): games under an unmodified
        preset whose two seats are linked players or an AI level; between two people,
        only when both are established and the pair has not had its rated games of
        the window yet."""
        game = conn.execute(
            select(GameRow.rules_name, GameRow.rules_toml, GameRow.winner, GameRow.status).where(
                GameRow.id == game_id
            )
        ).first()
        if game is None or game.status != "finished":
            return False
        if conn.execute(
            select(RatedGameRow.game_id).where(RatedGameRow.game_id == game_id)
        ).first():
            return False
        try:
            preset = rated_preset(load_rules_text(str(game.rules_toml), source="stored rules"))
        except KoiKoiError:
            preset = None
        if preset is None or preset != game.rules_name:
            return False  # house rules, or a preset changed (its length included)
        subjects: dict[int, str] = {}
        for seat_row in conn.execute(
            select(SeatRow.seat, SeatRow.kind, SeatRow.agent).where(SeatRow.game_id == game_id)
        ):
            if seat_row.kind == "ai" and seat_row.agent:
                subjects[int(seat_row.seat)] = f"ai:{seat_row.agent}"
        for link in conn.execute(
            select(PlayerGameRow.seat, PlayerGameRow.player_id).where(
                PlayerGameRow.game_id == game_id
            )
        ):
            subjects.setdefault(int(link.seat), f"player:{link.player_id}")
        if set(subjects) != {0, 1}:
            return False
        now = self.clock()
        people = sorted(s.partition(":")[2] for s in subjects.values() if s.startswith("player:"))
        if len(people) == 2:
            if any(self.ai_games(conn, p) < ESTABLISHED_AI_GAMES for p in people):
                return False  # not established yet: the game counts for nothing
            pair = " ".join(people)
            recent = conn.execute(
                select(func.count())
                .select_from(RatedPairRow)
                .where(
                    RatedPairRow.pair == pair,
                    RatedPairRow.rated_at > now - PAIR_WINDOW_SECONDS,
                )
            ).scalar_one()
            if recent >= PAIR_GAMES_PER_WINDOW:
                return False  # the same two people again, too soon
            conn.execute(insert(RatedPairRow), {"game_id": game_id, "pair": pair, "rated_at": now})
        rules = str(game.rules_name)
        before = {seat: self._rating(conn, subject, rules) for seat, subject in subjects.items()}
        conn.execute(insert(RatedGameRow), {"game_id": game_id, "rated_at": now})
        for seat, subject in subjects.items():
            score = 0.5 if game.winner is None else (1.0 if game.winner == seat else 0.0)
            old, row = before[seat]
            new = rating_update(old, [(before[1 - seat][0], score)])
            values = {
                "rating": new.rating,
                "rd": new.rd,
                "volatility": new.volatility,
                "games": (row.games if row else 0) + 1,
                "wins": (row.wins if row else 0) + (score == 1.0),
                "losses": (row.losses if row else 0) + (score == 0.0),
                "draws": (row.draws if row else 0) + (score == 0.5),
                "updated_at": now,
            }
            if row is None:
                conn.execute(insert(RatingRow), {"subject": subject, "rules": rules, **values})
            else:
                conn.execute(
                    update(RatingRow)
                    .where(RatingRow.subject == subject, RatingRow.rules == rules)
                    .values(values)
                )
        return True

    @staticmethod
    def ai_games(conn: Connection, player_id: str) -> int:
        """How many games against the AI the player finished (tutorials not counted)."""
        other = SeatRow.__table__.alias("other_seat")
        return int(
            conn.execute(
                select(func.count())
                .select_from(PlayerGameRow)
                .join(GameRow, GameRow.id == PlayerGameRow.game_id)
                .join(
                    other,
                    (other.c.game_id == PlayerGameRow.game_id)
                    & (other.c.seat != PlayerGameRow.seat),
                )
                .where(
                    PlayerGameRow.player_id == player_id,
                    GameRow.status == "finished",
                    GameRow.mode != "tutorial",
                    other.c.kind == "ai",
                )
            ).scalar_one()
        )

    @staticmethod
    def _rating(conn: Connection, subject: str, rules: str) -> tuple[Rating, Any]:
        row = conn.execute(
            select(RatingRow).where(RatingRow.subject == subject, RatingRow.rules == rules)
        ).first()
        if row is None:
            return Rating(), None
        return Rating(float(row.rating), float(row.rd), float(row.volatility)), row

    def leaderboard(self, rules: str, limit: int = 100) -> list[dict[str, Any]]:
        """The rated players and AI levels of a rule set, highest rating first; every AI
        level is listed, unrated ones at the start rating. ``provisional``: fewer than
        :data:`~koikoi.features.ratings.PROVISIONAL_GAMES` rated games."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(RatingRow, PlayerRow.name)
                .outerjoin(PlayerRow, RatingRow.subject == "player:" + PlayerRow.id)
                .where(RatingRow.rules == rules)
                .order_by(RatingRow.rating.desc())
                .limit(limit)
            ).all()
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for row in rows:
            kind, _, ident = str(row.subject).partition(":")
            seen.add(str(row.subject))
            entry = {
                "name": agent_name(ident)
                if kind == "ai"
                else (row.name or Identity.guest(guest_tag(ident)).english),
                "kind": "ai" if kind == "ai" else "human",
                "rating": round(float(row.rating), 1),
                "rd": round(float(row.rd), 1),
                "games": int(row.games),
                "wins": int(row.wins),
                "losses": int(row.losses),
                "draws": int(row.draws),
                "provisional": is_provisional(int(row.games)),
            }
            out.append(entry)
        start = Rating()
        for choice in LEVEL_CHOICES:
            if f"ai:{choice.agent}" not in seen:
                out.append(
                    {
                        "name": agent_name(choice.agent),
                        "kind": "ai",
                        "rating": start.rating,
                        "rd": start.rd,
                        "games": 0,
                        "wins": 0,
                        "losses": 0,
                        "draws": 0,
                        "provisional": True,
                    }
                )
        out.sort(key=lambda e: (-e["rating"], -e["games"], e["name"]))
        return out

    def rated_rules(self) -> list[str]:
        """The rule sets that have ratings."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(RatingRow.rules).distinct().order_by(RatingRow.rules)).all()
        return [str(r.rules) for r in rows]


# ------------------------------------------------------------------- service


def _lines(games: list[tuple[str, int, float, str]]) -> tuple[list[GameLine], list[float], int]:
    """Each stored record as a :class:`GameLine` of the player's seat; records that
    cannot be read are counted and left out."""
    lines: list[GameLine] = []
    finished: list[float] = []
    bad = 0
    for game_id, seat, at, text in games:
        try:
            record = record_from_dict(json.loads(text), where=f"game {game_id}")
            line = game_line(record, seat)
        except (KoiKoiError, ValueError):
            bad += 1
            continue
        if not line.game_id:
            line = replace(line, game_id=game_id)
        lines.append(line)
        finished.append(at)
    return lines, finished, bad


class PlayerService:
    """The ``/api/players/...`` requests: authenticate the key, then read or link."""

    def __init__(self, storage: Storage, hub: Hub | None = None) -> None:
        self.hub = hub
        self.store = PlayerStore(storage)
        self.lobby = LobbyQueue(storage)
        self._limiter = anyio.CapacityLimiter(4)
        if self.store.rate_game not in storage.finish_hooks:
            storage.finish_hooks.append(self.store.rate_game)

    async def _db(self, fn: Any, *args: Any) -> Any:
        return await run_storage(fn, *args, limiter=self._limiter)

    async def _player(self, key: str) -> PlayerData:
        player: PlayerData | None = await self._db(self.store.find_player, key_hash(key))
        if player is None:
            raise ProtocolError(
                "unknown_player",
                "no player has this device key: play a game in this browser first",
            )
        return player

    async def me(self, req: KeyRequest) -> dict[str, Any]:
        """The player's profile; with a name, register the key (first time) or rename.

        Without a name it only reads: a key the server has not seen gets an empty
        profile and no player row (rows are made by writes: a name, a linked seat, a
        quick match)."""
        player: PlayerData | None
        if req.name is None:
            player = await self._db(self.store.find_player, key_hash(req.key))
        else:
            player = await self._db(self.store.ensure_player, key_hash(req.key), req.name)
        if player is None:
            return {"type": "player", "name": "", "games": 0}
        return {"type": "player", "name": player.name, "games": player.games}

    async def link(self, req: LinkRequest) -> dict[str, Any]:
        """Link the seat that ``req.token`` holds in ``req.game`` to the key's player."""
        found = await self._db(self.store.storage.find_token, token_hash(req.token))
        if found is None or found[0] != req.game or found[1] is None:
            raise ProtocolError("unknown_token", "this token is not a seat token of that game")
        seat = int(found[1])
        player: PlayerData = await self._db(self.store.ensure_player, key_hash(req.key), req.name)
        why = await self._db(self.store.link, player.id, req.game, seat)
        if why == "seat":
            raise ProtocolError(
                "already_linked", "this seat of the game is already linked to another player"
            )
        if why == "game":
            raise ProtocolError(
                "already_linked", "this player already holds the other seat of that game"
            )
        return {"type": "linked", "game": req.game, "seat": seat}

    async def stats(self, req: KeyRequest) -> dict[str, Any]:
        """The player's statistics (:func:`koikoi.features.stats.summarize_lines`) and games."""
        player = await self._player(req.key)
        games = await self._db(self.store.finished_games, player.id)
        lines, finished, bad = await anyio.to_thread.run_sync(_lines, games)
        summary = summarize_lines(lines).to_dict()
        for data, at in zip(summary["games"], finished, strict=True):
            data["finished_at"] = at
        return {
            "type": "stats",
            "name": player.name,
            "summary": summary,
            "unreadable": bad,
            "limit": MAX_STATS_GAMES,
        }

    async def replay(self, req: KeyRequest) -> dict[str, Any]:
        """Replay frames of a finished game the player took part in."""
        player = await self._player(req.key)
        game = req.game or ""
        seat = await self._db(self.store.linked_seat, player.id, game)
        if seat is None:
            raise ProtocolError("not_found", "this player has no finished game with that id")
        text = await self._db(self.store.storage.get_record, game)
        if text is None:
            raise ProtocolError("not_finished", "the replay is available when the match is over")
        try:
            data: dict[str, Any] = await anyio.to_thread.run_sync(
                replay_frames, json.loads(text), limiter=self._limiter
            )
        except (KoiKoiError, ValueError) as exc:
            raise ProtocolError("bad_record", str(exc)) from None
        data["game"] = game
        data["seat"] = seat
        return data

    # -------------------------------------------------------------- lobby

    async def quick(self, req: QuickRequest) -> dict[str, Any]:
        """Quick match: pair the key's player with another waiting for the same rule set
        (preset and rounds), or wait. Ask again (about every second) while waiting: the
        answer is ``waiting`` until a partner comes, then ``matched`` with the game, the
        seat and its token (once). The queue is in the database (:mod:`.lobby`), so the
        questions may land on any server process."""
        if self.hub is None:  # pragma: no cover - the app always passes its hub
            raise ProtocolError("server_error", "the lobby is not running")
        player: PlayerData = await self._db(self.store.ensure_player, key_hash(req.key), req.name)
        token = new_token()
        asked = await self._db(self.lobby.ask, player.id, player.name, req.rules, req.rounds, token)
        if isinstance(asked, Waiting):
            return {
                "type": "waiting",
                "rules": req.rules,
                "rounds": req.rounds,
                "waiting": asked.position,
            }
        if isinstance(asked, Claimed):
            await self.hub.invite_claimed(asked.game_id, asked.seat, token, player.name)
            return {
                "type": "matched",
                "game": asked.game_id,
                "rules": asked.rules_name,
                "mode": "friend",
                "seat": asked.seat,
                "token": token,
                "opponent": _seat_name(asked.opponent, 1 - asked.seat),
            }
        # A partner is ours: the first to wait takes seat 0 (its invite is collected by
        # the partner's next question), the asker seat 1.
        try:
            created = await self.hub.create_game(
                NewGameRequest(
                    mode="friend",
                    agent=None,
                    rules=req.rules,
                    house_rules=None,
                    rounds=req.rounds,
                    seat=1,
                    name=player.name,
                    seed=None,
                ),
                "lobby",
                turn_seconds=self.hub.config.turn_seconds,  # abandoning costs the game
            )
            game = str(created["game"])
            await self._db(self.store.link, asked.partner_id, game, 0)
            await self._db(self.store.link, player.id, game, 1)
            await self._db(
                functools.partial(self.lobby.matched, creator_id=player.id),
                asked.partner_id,
                game,
                0,
                player.name,
                str(created["rules"]),
            )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(
                    functools.partial(self.lobby.release, creator_id=player.id),
                    asked.partner_id,
                )
            raise
        log_event(log, "quick match", game=game, rules=req.rules, rounds=req.rounds)
        return {
            "type": "matched",
            "game": game,
            "rules": created["rules"],
            "mode": "friend",
            "seat": int(created["seat"]),
            "token": created["token"],
            "opponent": _seat_name(asked.partner_name, 0),
        }

    async def leave(self, req: KeyRequest) -> dict[str, Any]:
        """Stop waiting for a quick match."""
        player = await self._player(req.key)
        was: bool = await self._db(self.lobby.leave, player.id)
        return {"type": "left", "was_waiting": was}

    async def leaderboard(self, rules: str) -> dict[str, Any]:
        """The ratings of a rule set, and the rated rule sets: ``players``, the ranked
        list (established people and every AI level: they are the board's landmarks,
        even while provisional), and ``provisional``, the people with a provisional
        rating (shown with "?", never ranked)."""
        rows: list[dict[str, Any]] = await self._db(self.store.leaderboard, rules)
        rated = await self._db(self.store.rated_rules)
        unranked = [r for r in rows if r["provisional"] and r["kind"] == "human"]
        return {
            "type": "leaderboard",
            "rules": rules,
            "players": [r for r in rows if not (r["provisional"] and r["kind"] == "human")],
            "provisional": unranked,
            "rated_rules": rated,
        }
