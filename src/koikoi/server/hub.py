"""The live side of the web game: rooms in memory, connections, storage, AI turns.

The :class:`Hub` is the only place where the game logic (:class:`~.rooms.Room`,
no I/O), the database (:class:`~.storage.Storage`, called from worker threads)
and the connections meet. For each accepted action, under the room's lock:
check it (:meth:`Room.check_act`), store it durably
(:class:`~.writer.ActionWriter`, group commit), apply it with the engine, then
queue each connection's own ``state`` message — the actor's carries ``ack``. A
failed write changes nothing and answers ``server_error``.

Connections are transport-neutral: a :class:`~.connections.Connection` is an
outbox of JSON texts that the WebSocket endpoint (``app.py``) drains. The hub admits them
(:meth:`Hub.connect`: caps per client address, on connections that have not
said ``hello`` yet, and in all) and counts them for ``/healthz`` and
``/metrics``. A storage call that fails answers ``server_error``; a finished
game leaves memory shortly after its last client (it is reloaded from storage
on demand). The search AIs' moves and the hints are made by the worker processes
of :class:`~.aipool.AIPool`, in turn across games and client addresses; only the
cheap AIs (:data:`~.rooms.FAST_AGENTS`) play on the event loop. On PostgreSQL
the hub is the :class:`~.host.ClusterHost` of its :class:`~.cluster.Cluster` node.

Quick matches from the lobby have a turn clock (:attr:`ServerConfig.turn_seconds` per
decision, kept by the :class:`~.rooms.Room`): the process that owns the game checks
the deadlines every second (:meth:`Hub.expire_clocks`) and a player whose clock ran
out forfeits the match (:meth:`Hub.forfeit`), which is stored, rated and told to
every page like any other result.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio
import anyio.to_thread

from koikoi.agents import make_agent
from koikoi.features.opponents import DEFAULT_OPPONENT
from koikoi.features.ratings import rated_preset
from koikoi.features.tutorial import TUTORIAL_OPPONENT, TUTORIAL_SEED, tutorial_rules
from koikoi.game.errors import KoiKoiError, RulesError
from koikoi.game.rules import PRESET_NAMES, Rules, get_rules, load_rules_text
from koikoi.server.aipool import AIPool, AIUnavailable, Decision, Rating, decision_seed
from koikoi.server.cluster import Cluster
from koikoi.server.config import ServerConfig
from koikoi.server.connections import Connection, ConnectionRefused, LiveRoom, Submission
from koikoi.server.limits import BucketsByKey, SecondsBudget
from koikoi.server.logs import LOGGER_NAME, LogThrottle, log_event
from koikoi.server.metrics import Metrics
from koikoi.server.protocol import (
    AGENT_CHOICES,
    LEVEL_AGENTS,
    Act,
    ClientMessage,
    Hello,
    HintRequest,
    JoinRequest,
    NewGameRequest,
    Ping,
    ProtocolError,
    encode,
)
from koikoi.server.records import build_record, record_of, replay_frames
from koikoi.server.rooms import (
    FAST_AGENTS,
    Forfeit,
    Room,
    SeatInfo,
    agent_name,
    agent_spec,
    ai_rng,
    new_game_id,
    new_token,
    token_hash,
)
from koikoi.server.storage import NewGame, SeatData, Storage
from koikoi.server.writer import ActionWriter, run_storage

__all__ = ["Hub"]

log = logging.getLogger(LOGGER_NAME)
T = TypeVar("T")
P = ParamSpec("P")


def guarded(
    method: Callable[Concatenate[Hub, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[Hub, P], Coroutine[Any, Any, T]]:
    """Make a coroutine method of the hub run to completion even if its caller is
    cancelled (a write is never left half done); the hub's shutdown waits for it.

    Args:
        method: the coroutine method to guard.

    Returns:
        The method, each call of it run as a task the hub waits for on shutdown.
    """

    @functools.wraps(method)
    async def run(hub: Hub, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await hub._run_guarded(method(hub, *args, **kwargs))

    return run


class Hub:
    """Rooms, connections and storage of one server process."""

    def __init__(
        self,
        storage: Storage,
        config: ServerConfig | None = None,
        *,
        now: Callable[[], float] | None = None,
    ) -> None:
        self.storage = storage
        self.config = config or ServerConfig()
        self.now: Callable[[], float] = now or time.time
        """The turn clocks' time source (Unix seconds; tests put a fake one here)."""
        self._clocked: dict[str, LiveRoom] = {}
        """The rooms in memory that have a turn clock."""
        self.metrics = Metrics()
        self.rooms: dict[str, LiveRoom] = {}
        self._tokens: dict[str, tuple[str, int | None]] = {}
        self._loading: dict[str, asyncio.Future[LiveRoom | None]] = {}
        self._http_buckets = BucketsByKey(self.config.http_burst, self.config.http_rate)
        self.connections: set[Connection] = set()
        """Every open connection, with or without hello."""
        self._per_address: collections.Counter[str] = collections.Counter()
        self._refusal_log = LogThrottle()
        """Refused connections logged once per address and reason every 10 s."""
        self._unauthenticated: collections.Counter[str] = collections.Counter()
        self._ai_games: dict[str, set[str]] = {}
        """Client address -> its unfinished AI games in memory."""
        self._db_limiter = anyio.CapacityLimiter(4 if storage.is_sqlite else 8)
        self._ai_limiter = anyio.CapacityLimiter(4)
        self.writer = ActionWriter(storage, self.metrics)
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._closing = False
        self._janitor: asyncio.Task[None] | None = None
        self._clock_task: asyncio.Task[None] | None = None
        self.available_agents = self._probe_agents()
        make_agent(self.config.hint_agent)  # a bad spec fails here, naming what is allowed
        self._hint_source = self.config.hint_agent
        self.ai_pool = AIPool(
            self.config.ai_workers,
            agents=[
                *(agent_spec(s) for s in self.available_agents if s not in FAST_AGENTS),
                self.config.hint_agent,
            ],
            rules=[get_rules("nintendo")],
            timeout=self.config.ai_timeout,
            in_process=self.config.ai_in_process,
            budget=SecondsBudget(self.config.ai_seconds_per_minute, self.config.ai_seconds_burst),
            slice=self.config.ai_slice,
        )
        """Where the search AIs' decisions and the hints are made (by worker processes
        that load their agents at start-up)."""
        self.cluster: Cluster | None = None
        """On PostgreSQL, this process as a node of a cluster (leases, forwarding)."""
        self._outage: asyncio.Task[None] | None = None
        """Watches a database that stopped answering (:meth:`database_failed`)."""
        self._waiting_hellos: dict[Connection, tuple[Hello, float]] = {}
        """Connections whose hello failed on the database -> the hello and when it first
        failed: answered when the database answers again."""
        self._background: set[asyncio.Task[Any]] = set()

    # ----------------------------------------------------------- lifecycle

    @staticmethod
    def _probe_agents() -> tuple[str, ...]:
        out = []
        for strength in AGENT_CHOICES:
            try:
                make_agent(agent_spec(strength))
            except KoiKoiError:
                continue
            out.append(strength)
        return tuple(out)

    @property
    def closing(self) -> bool:
        """Whether the server is shutting down."""
        return self._closing

    @property
    def default_agent(self) -> str:
        """``expert`` (level 8), else the strongest level available."""
        for strength in (DEFAULT_OPPONENT, *reversed(LEVEL_AGENTS), "random"):
            if strength in self.available_agents:
                return strength
        return "random"

    @property
    def offered_agents(self) -> tuple[str, ...]:
        """The levels a client offers (the older names are accepted, not offered)."""
        return tuple(a for a in LEVEL_AGENTS if a in self.available_agents)

    async def start(self) -> None:
        self.writer.start()
        await self.ai_pool.start()
        if not self.storage.is_sqlite:
            self.cluster = Cluster(self, self.storage.url, self.config.lease_seconds)
            await self.cluster.start()
        self._janitor = asyncio.create_task(self._janitor_loop(), name="koikoi-janitor")
        self._clock_task = asyncio.create_task(self._clock_loop(), name="koikoi-clock")
        log_event(
            log,
            "server started",
            database=self.storage.describe(),
            agents=list(self.available_agents),
            hints=self._hint_source,
            ai_workers=self.ai_pool.size,
        )

    async def close(self) -> None:
        """Graceful stop: no new actions, finish every write in flight, close the pool."""
        self._closing = True
        if self._janitor is not None:
            self._janitor.cancel()
        if self._outage is not None:
            self._outage.cancel()
        if self._clock_task is not None:
            self._clock_task.cancel()
        if self.cluster is not None:
            self.cluster.abort_forwarding()
        for live in list(self.rooms.values()):
            if live.ai_task is not None and not live.ai_task.done():
                live.ai_task.cancel()
        await self.ai_pool.close()
        for conn in list(self.connections):  # with or without hello
            conn.close()
        with anyio.move_on_after(15):
            await self._idle.wait()
        await self.writer.stop()
        if self.cluster is not None:
            await self.cluster.close()  # hands the games over to the other processes
        await anyio.to_thread.run_sync(self.storage.dispose)
        log_event(log, "server stopped", **self.metrics.snapshot()["counters"])

    async def _db(self, fn: Callable[..., T], *args: Any) -> T:
        """:func:`run_storage` with the hub's limiter; failures are counted."""
        try:
            return await run_storage(fn, *args, limiter=self._db_limiter)
        except ProtocolError:
            self.metrics.count("database_errors")
            self.database_failed()
            raise

    # ------------------------------------------------------------ outages

    def database_failed(self) -> None:
        """The database did not answer: check it every :attr:`ServerConfig.outage_poll`
        seconds until it does, then bring every client back (:meth:`_recovered`)."""
        if self._closing or (self._outage is not None and not self._outage.done()):
            return
        self.metrics.count("database_outages")
        self._outage = asyncio.create_task(self._watch_database(), name="koikoi-outage")

    async def _watch_database(self) -> None:
        started = time.monotonic()
        while not self._closing:
            await asyncio.sleep(self.config.outage_poll)
            try:
                ok = await anyio.to_thread.run_sync(self.storage.ping)
            except Exception:
                ok = False
            if ok:
                log_event(
                    log,
                    "database answers again",
                    logging.WARNING,
                    seconds=round(time.monotonic() - started, 1),
                    waiting_hellos=len(self._waiting_hellos),
                )
                self._recovered()
                return

    def _recovered(self) -> None:
        """After an outage: every connection of a game in memory gets the current state
        (whatever it missed, or the same state again: a client that only waited after an
        error plays on), the AI moves where it is to, and the hellos that failed are
        answered."""
        self.metrics.count("database_recoveries")
        for live in list(self.rooms.values()):
            if self.cluster is not None and self.cluster.follows(live.room.id):
                continue  # its owner brings it back
            if live.conns:
                self.broadcast(live)
            self.kick_ai(live)
        for conn, (msg, _) in list(self._waiting_hellos.items()):
            task = asyncio.create_task(self._retry_hello(conn, msg))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _retry_hello(self, conn: Connection, msg: Hello) -> None:
        if conn.closed or conn.live is not None:
            self._waiting_hellos.pop(conn, None)
            return
        try:
            await self.hello(conn, msg)
        except ProtocolError as exc:
            conn.send(exc.to_message())

    def hello_waiting_since(self, conn: Connection) -> float | None:
        """When ``conn``'s hello first failed on the database (None: it did not, or it
        was answered since): it waits for the database, not for a hello."""
        waiting = self._waiting_hellos.get(conn)
        return None if waiting is None else waiting[1]

    async def _run_guarded(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` to completion even if the caller is cancelled (writes finish).

        Shutdown waits until every such task is done.
        """
        self._inflight += 1
        self._idle.clear()
        task = asyncio.ensure_future(work)
        task.add_done_callback(self._inflight_done)
        return await asyncio.shield(task)

    def _inflight_done(self, task: asyncio.Future[Any]) -> None:
        self._inflight -= 1
        if self._inflight == 0:
            self._idle.set()
        if not task.cancelled():
            task.exception()  # marked retrieved: a cancelled caller no longer awaits it

    def allow_http(self, client: str) -> bool:
        """Per-address rate limit of game creation and joins."""
        return self._http_buckets.take(client)

    # ---------------------------------------------------------- rooms

    def _rules(self, req: NewGameRequest) -> Rules:
        try:
            rules = (
                load_rules_text(req.house_rules, source="house rules")
                if req.house_rules is not None
                else get_rules(req.rules)
            )
            if req.rounds is not None:
                rules = rules.replace(game__rounds=req.rounds)
            house = req.house_rules is not None and rated_preset(rules) is None
            if house and rules.name in PRESET_NAMES:  # house rules never carry a preset's name
                rules = rules.replace(name=f"{rules.name}+house")
        except RulesError as exc:
            raise ProtocolError("rules", str(exc)) from None
        except RecursionError:  # the request's depth check makes this unreachable
            raise ProtocolError("rules", "the house rules nest too deeply") from None
        return rules

    async def create_game(
        self, req: NewGameRequest, client: str = "", *, turn_seconds: float = 0.0
    ) -> dict[str, Any]:
        """Create a game for the client at address ``client``; returns the creator's
        seat token (and invite and watch tokens). ``turn_seconds``: the game's turn
        clock (the lobby's quick matches; 0: none)."""
        if self._closing:
            raise ProtocolError("server_error", "the server is shutting down")
        tutorial = req.mode == "tutorial"
        rules = tutorial_rules() if tutorial else self._rules(req)
        agent = None
        if req.mode in ("ai", "tutorial"):
            agent = TUTORIAL_OPPONENT if tutorial else req.agent or self.default_agent
            if agent not in self.available_agents:
                raise ProtocolError(
                    "bad_field",
                    f"agent {agent!r} is not available on this server: "
                    f"available {', '.join(self.available_agents)}",
                )
            cap = self.config.max_ai_games_per_address
            # A tutorial's opponent is cheap (greedy, one round): like a game between
            # friends it does not count against the cap, so starting over always works.
            if not tutorial and self.ai_games_counted(client) >= cap:
                self.metrics.count("ai_games_refused")
                raise ProtocolError(
                    "rate_limited",
                    f"this address already has {cap} unfinished games against the AI "
                    "on this server: finish one or try again later",
                )
        if tutorial:
            seed = (
                TUTORIAL_SEED  # the guided round's fixed deal (public, in koikoi.features.tutorial)
            )
        else:
            seed = req.seed if req.seed is not None else secrets.randbelow(2**62)
        game_id = new_game_id()
        token, watch = new_token(), new_token()
        invite = new_token() if req.mode == "friend" else None
        me, other = req.seat, 1 - req.seat
        seats: list[SeatData] = [SeatData(0, "human"), SeatData(1, "human")]
        seats[me] = SeatData(me, "human", name=req.name, token_hash=token_hash(token))
        if agent is not None:
            seats[other] = SeatData(other, "ai", name=agent_name(agent), agent=agent)
        else:
            seats[other] = SeatData(
                other, "human", invite_hash=token_hash(invite or ""), invite_used=False
            )
        try:
            room = Room(
                game_id,
                mode=req.mode,
                rules=rules,
                seed=seed,
                seats=[self._seat_info(s) for s in seats],
                watch_hash=token_hash(watch),
                turn_seconds=turn_seconds,
                clock=self._clock,
            )
        except RuntimeError as exc:  # e.g. redeal rules that redeal (almost) every deal
            raise ProtocolError("rules", f"these rules cannot deal a round: {exc}") from None
        await self._db(
            self.storage.create_game,
            NewGame(
                id=game_id,
                mode=req.mode,
                rules_name=rules.name,
                rules_toml=rules.to_toml(),
                seed=seed,
                watch_hash=room.watch_hash,
                seats=(seats[0], seats[1]),
                turn_seconds=turn_seconds,
            ),
        )
        if self.cluster is not None:
            await self.cluster.claim_new(game_id)
        live = LiveRoom(room)
        if agent is not None and not tutorial:
            live.owner = client
            self._ai_games.setdefault(client, set()).add(game_id)
        self._register(live)
        if room.is_over:  # the deal itself ended the match (a hand shown in one round)
            self._release_ai_slot(live)
            async with live.lock:
                await self._store_finished(live)
        self.metrics.count("games_created")
        log_event(
            log,
            "game created",
            game=game_id,
            mode=req.mode,
            rules=rules.name,
            rounds=rules.game.rounds,
            agent=agent,
            seeded=req.seed is not None,
        )
        out: dict[str, Any] = {
            "game": game_id,
            "seat": me,
            "token": token,
            "watch": watch,
            "mode": req.mode,
            "rules": rules.name,
        }
        if invite is not None:
            out["invite"] = invite
        return out

    @staticmethod
    def _seat_info(s: SeatData) -> SeatInfo:
        """The live seat of a stored one (the same fields but its index)."""
        return SeatInfo(**{f.name: getattr(s, f.name) for f in dataclasses.fields(SeatInfo)})

    def _register(self, live: LiveRoom) -> None:
        room = live.room
        self.rooms[room.id] = live
        if room.turn_seconds > 0:
            self._clocked[room.id] = live
        for i, seat in enumerate(room.seats):
            if seat.token_hash is not None:
                self._tokens[seat.token_hash] = (room.id, i)
        self._tokens[room.watch_hash] = (room.id, None)

    def ai_games_counted(self, client: str, now: float | None = None) -> int:
        """The unfinished AI games of address ``client`` that count against
        :attr:`ServerConfig.max_ai_games_per_address`: those with a player connected
        (here or on another process) or an action or a departure in the last
        :attr:`ServerConfig.abandoned_after` seconds; abandoned ones do not."""
        now = time.monotonic() if now is None else now
        counted = 0
        for game_id in self._ai_games.get(client, ()):
            live = self.rooms.get(game_id)
            if live is None:
                continue
            if (
                any(c.seat is not None for c in live.conns)
                or (self.cluster is not None and self.cluster.remote_players(game_id))
                or now - live.last_active < self.config.abandoned_after
            ):
                counted += 1
        return counted

    def _release_ai_slot(self, live: LiveRoom) -> None:
        """The game stops counting against its creator's address."""
        owner, live.owner = live.owner, None
        games = self._ai_games.get(owner) if owner is not None else None
        if games is not None:
            games.discard(live.room.id)
            if not games:
                del self._ai_games[owner]  # type: ignore[arg-type]

    def _unregister(self, live: LiveRoom) -> None:
        room = live.room
        self._release_ai_slot(live)
        if self.rooms.get(room.id) is not live:
            return  # already replaced by a reloaded copy, which keeps the tokens
        del self.rooms[room.id]
        self._clocked.pop(room.id, None)
        for seat in room.seats:
            if seat.token_hash is not None:
                self._tokens.pop(seat.token_hash, None)
        self._tokens.pop(room.watch_hash, None)
        if self.cluster is not None:
            self.cluster.released(live)

    def drop_room(self, live: LiveRoom, reason: str) -> None:
        """Forget a room (its clients are closed with ``reason`` and may reconnect)."""
        self._unregister(live)
        for c in list(live.conns):
            c.close(reason=reason)

    async def join(self, req: JoinRequest) -> dict[str, Any]:
        """Claim the seat of an invite (once); returns the new seat token."""
        invite = token_hash(req.invite)
        token = new_token()
        claimed = await self._db(self.storage.claim_invite, invite, token_hash(token), req.name)
        if claimed is None:
            state = await self._db(self.storage.invite_state, invite)
            if state is None:
                raise ProtocolError("unknown_token", "no game has this invite")
            raise ProtocolError(
                "invite_used", "this invite link was already used: both seats are taken"
            )
        game_id, seat = claimed
        await self.invite_claimed(game_id, seat, token, req.name)
        return {"game": game_id, "seat": seat, "token": token}

    async def invite_claimed(self, game_id: str, seat: int, token: str, name: str) -> None:
        """An invite's seat was claimed in storage (by :meth:`join`, or by the lobby's
        queue): the room, if it is in memory here, learns the seat's token and name, and
        so do the other processes of a cluster."""
        live = self.rooms.get(game_id)
        if live is not None:
            self.seat_claimed(live, seat, name, token_hash(token))
        if self.cluster is not None:
            self.cluster.seat_claimed(game_id, seat, name, token_hash(token))
        log_event(log, "invite claimed", game=game_id, seat=seat)

    def seat_claimed(self, live: LiveRoom, seat: int, name: str, digest: str) -> None:
        """A seat's invite was claimed (here or on another process): update the room."""
        info = live.room.seats[seat]
        info.token_hash = digest
        info.invite_used = True
        info.name = name
        self._tokens[digest] = (live.room.id, seat)
        live.room.restart_clock()  # both seats taken: the first decision is timed
        self._broadcast_players(live)
        # Play may start now: each connection's state says so (``open_seat``).
        self.broadcast(live)

    async def check_invite(self, game_id: str, token: str, invite: str) -> None:
        """Check that ``token`` is a player's seat of ``game_id`` and ``invite`` the
        other seat's invite, still unclaimed (the invite's QR code is shown only to
        whoever holds both).

        Raises:
            ProtocolError: ``unknown_token`` (the token or the invite is not this
                game's), ``spectator`` (a watch token), ``invite_used`` (the friend
                has joined: the link works no more).
        """
        live, seat = await self.authorize(game_id, token)
        if seat is None:
            raise ProtocolError("spectator", "spectators have no invite to show")
        other = live.room.seats[1 - seat]
        if other.invite_hash is None or not secrets.compare_digest(
            other.invite_hash, token_hash(invite)
        ):
            raise ProtocolError("unknown_token", "this invite is not the one of your game")
        if other.invite_used:
            raise ProtocolError(
                "invite_used", "this invite link was already used: both seats are taken"
            )

    async def live_room(self, game_id: str) -> LiveRoom | None:
        """The room in memory, loading (replaying) it from storage if needed."""
        live = self.rooms.get(game_id)
        if live is not None:
            return live
        pending = self._loading.get(game_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[LiveRoom | None] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = future
        try:
            data = await self._db(self.storage.load_game, game_id)
            if data is None:
                future.set_result(None)
                return None
            rules = load_rules_text(data.rules_toml, source=f"game {game_id} rules")
            started = time.perf_counter()
            room = Room(
                data.id,
                mode=data.mode,
                rules=rules,
                seed=data.seed,
                seats=[self._seat_info(s) for s in data.seats],
                watch_hash=data.watch_hash,
                actions=data.actions,
                created_at=data.created_at,
                turn_seconds=data.turn_seconds,
                clock=self._clock,
                forfeit=None if data.forfeit is None else Forfeit(*data.forfeit),
            )
            live = LiveRoom(room, finished_stored=data.status == "finished")
            self._register(live)
            if self.cluster is not None:
                try:
                    await self.cluster.adopt(live)
                except BaseException:
                    self._unregister(live)
                    raise
            log_event(
                log,
                "game loaded",
                game=game_id,
                actions=len(data.actions),
                replay_ms=round((time.perf_counter() - started) * 1000, 2),
            )
            future.set_result(live)
            if room.is_over and not live.finished_stored:
                await self._store_finished(live)
            return live
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved
            raise
        finally:
            self._loading.pop(game_id, None)

    async def locate(self, token: str) -> tuple[LiveRoom, int | None]:
        """The room and seat (None: spectator) of a seat or watch token."""
        digest = token_hash(token)
        found = self._tokens.get(digest)
        if found is None:
            found = await self._db(self.storage.find_token, digest)
        if found is None:
            raise ProtocolError("unknown_token", "no game has this token")
        live = await self.live_room(found[0])
        if live is None:
            raise ProtocolError("unknown_token", "no game has this token")
        return live, found[1]

    # ------------------------------------------------------- connections

    def connect(self, peer: str) -> Connection:
        """Admit a new connection from address ``peer`` (not yet authenticated).

        Raises:
            ConnectionRefused: the server, the address, or the address's connections
                without hello are at their cap (close code 1013).
        """
        cfg = self.config
        refusal = None
        if self._closing:
            refusal = ConnectionRefused("the server is restarting", 1012)
        elif len(self.connections) >= cfg.max_connections:
            refusal = ConnectionRefused("the server is full; try again later")
        elif self._per_address[peer] >= cfg.max_connections_per_address:
            refusal = ConnectionRefused(
                f"too many connections from this address (at most "
                f"{cfg.max_connections_per_address})"
            )
        elif self._unauthenticated[peer] >= cfg.max_unauthenticated_per_address:
            refusal = ConnectionRefused(
                f"too many connections without hello from this address (at most "
                f"{cfg.max_unauthenticated_per_address})"
            )
        if refusal is not None:
            self.metrics.count("connections_refused")
            self.log_refusal(peer, refusal.reason)
            raise refusal
        conn = Connection(cfg, peer)
        self.connections.add(conn)
        self._per_address[peer] += 1
        self._unauthenticated[peer] += 1
        self.metrics.count("connections")
        return conn

    def log_refusal(self, peer: str, reason: str) -> None:
        """Log a refused connection: one line per address and reason every 10 s, with
        the number left out since (``/metrics`` counts every one)."""
        left_out = self._refusal_log.admit((peer, reason))
        if left_out is not None:
            log_event(
                log,
                "connection refused",
                logging.WARNING,
                client=peer,
                reason=reason,
                not_logged=left_out,
            )

    def _authenticated(self, conn: Connection) -> None:
        self._decrement(self._unauthenticated, conn.peer)

    @staticmethod
    def _decrement(counter: collections.Counter[str], key: str) -> None:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]

    async def handle(self, conn: Connection, msg: ClientMessage, t0: float) -> None:
        """Dispatch one validated client message."""
        if isinstance(msg, Ping):
            conn.send({"type": "pong"} if msg.ref is None else {"type": "pong", "ref": msg.ref})
            return
        if isinstance(msg, Hello):
            await self.hello(conn, msg)
            return
        if conn.live is None:
            raise ProtocolError(
                "not_authenticated", "send hello with your seat or watch token first", ref=msg.ref
            )
        if isinstance(msg, Act):
            await self.act(conn, msg, t0)
        elif isinstance(msg, HintRequest):
            self.hint(conn, msg)

    async def hello(self, conn: Connection, msg: Hello) -> None:
        if conn.live is not None:
            raise ProtocolError("already_authenticated", "this connection already said hello")
        try:
            live, seat = await self.locate(msg.token)
        except ProtocolError as exc:
            exc.ref = msg.ref
            if exc.code == "server_error" and not conn.closed:
                # Answered when the database answers again (not timed out as no hello).
                since = self.hello_waiting_since(conn)
                self._waiting_hellos[conn] = (msg, time.monotonic() if since is None else since)
            if exc.code == "unknown_token":
                conn.unknown_tokens += 1
                if conn.unknown_tokens >= self.config.max_unknown_tokens:
                    conn.send(exc.to_message())
                    conn.close(reason="too many unknown tokens")
            raise
        if conn.closed:  # closed while the token was looked up (deadline, shutdown)
            return
        if self.cluster is not None and self.cluster.follows(live.room.id):
            await self.cluster.catch_up(live)  # whatever the owner stored so far
        self._waiting_hellos.pop(conn, None)
        async with live.lock:
            room = live.room
            conn.live, conn.seat = live, seat
            self._authenticated(conn)
            live.conns.add(conn)
            live.last_active = time.monotonic()
            conn.send(room.welcome(seat))
            conn.send(room.state(seat, 0))
            conn.cursor = len(room.match.events)
            self.broadcast_presence(live)
        self.metrics.count("hellos")
        log_event(
            log,
            "client joined",
            game=room.id,
            role="spectator" if seat is None else "player",
            seat=seat,
            conn=conn.id,
        )
        self.kick_ai(live)

    def detach(self, conn: Connection) -> None:
        """Forget a closed connection (once; a second call does nothing)."""
        if conn.detached:
            return
        conn.detached = True
        live = conn.live
        self._waiting_hellos.pop(conn, None)
        conn.close()
        if conn in self.connections:
            self.connections.discard(conn)
            self._decrement(self._per_address, conn.peer)
            if live is None:
                self._decrement(self._unauthenticated, conn.peer)
        if conn.hint_task is not None and not conn.hint_task.done():
            conn.hint_task.cancel()
        if live is None:
            return
        live.conns.discard(conn)
        live.last_active = time.monotonic()
        if not self._closing:
            self.broadcast_presence(live)
        log_event(log, "client left", game=live.room.id, seat=conn.seat, conn=conn.id)

    async def act(self, conn: Connection, msg: Act, t0: float) -> None:
        live = conn.live
        if live is None:  # pragma: no cover - handle() checks
            raise ProtocolError("not_authenticated", "send hello first")
        if self._closing:
            raise ProtocolError(
                "server_error", "the server is shutting down; reconnect", ref=msg.ref
            )
        try:
            await self.commit(live, Submission(conn.seat, msg.action, msg.seq, conn, t0))
        except ProtocolError as exc:
            exc.ref = msg.ref
            self.metrics.count(f"rejected_{exc.code}")
            raise
        self.kick_ai(live)

    @guarded
    async def commit(self, live: LiveRoom, submission: Submission) -> None:
        """Check, store, apply and broadcast one action (to completion even if the
        caller is cancelled); its connection gets the acknowledgement."""
        seat, action, seq = submission.seat, submission.action, submission.seq
        cluster = self.cluster
        if cluster is not None and cluster.follows(live.room.id):
            if seat is None:
                raise ProtocolError("spectator", "spectators cannot act")
            await cluster.forward(live, submission)  # the owner stores it
            return
        async with live.lock:
            room = live.room
            if self.rooms.get(room.id) is not live:
                raise ProtocolError("server_error", "the game was reloaded; reconnect")
            room.check_act(seat, action, seq)
            if seat is None:  # pragma: no cover - check_act refuses spectators
                raise ProtocolError("spectator", "spectators cannot act")
            if cluster is not None and not cluster.may_write(room.id):
                await cluster.confirm(live)  # renewal is late (a busy process): renew now
            try:
                await self.writer.append(room.id, seq, action, seat)
            except Exception as exc:
                log_event(
                    log,
                    "store failed",
                    logging.ERROR,
                    game=room.id,
                    seq=seq,
                    error=type(exc).__name__,
                )
                # Memory and storage may disagree now: reload the game on next use.
                self.database_failed()
                self._unregister(live)
                for c in list(live.conns):
                    c.send({"type": "error", "code": "server_error", "message": "reconnect"})
                    c.close(reason="the game must be reloaded; reconnect")
                raise ProtocolError(
                    "server_error", "the action could not be stored; it was not played"
                ) from None
            room.apply(action)
            live.last_active = time.monotonic()
            self.metrics.count("actions")
            if cluster is not None:
                cluster.published(live, seq, action)
            self.broadcast(live, submission)
            if room.is_over:
                self._release_ai_slot(live)
                await self._store_finished(live)

    def broadcast(self, live: LiveRoom, ack: Submission | None = None) -> None:
        """Send each connection of the room its new ``state`` (one text per seat and
        cursor); the connection of ``ack`` gets the acknowledgement of that action and
        counts its latency from the action's ``t0``."""
        room = live.room
        end = len(room.match.events)
        texts: dict[tuple[int | None, int], str] = {}
        for conn in list(live.conns):
            if ack is not None and conn is ack.conn:
                state = room.state(conn.seat, conn.cursor, ack=ack.seq, full=False)
                conn.push(encode(state), ack.t0)
            else:
                key = (conn.seat, conn.cursor)
                text = texts.get(key)
                if text is None:
                    text = encode(room.state(conn.seat, conn.cursor, full=False))
                    texts[key] = text
                conn.push(text)
            conn.cursor = end

    def broadcast_presence(self, live: LiveRoom) -> None:
        """Send the room's connections who is connected (over all nodes of a cluster)."""
        connected = [False, False]
        spectators = 0
        for c in live.conns:
            if c.seat is None:
                spectators += 1
            else:
                connected[c.seat] = True
        if self.cluster is not None:  # the clients of the other processes count too
            a, b, spectators = self.cluster.presence(live, (connected[0], connected[1], spectators))
            connected = [a, b]
        text = encode({"type": "presence", "connected": connected, "spectators": spectators})
        for c in list(live.conns):
            c.push(text)

    def _broadcast_players(self, live: LiveRoom) -> None:
        text = encode({"type": "players", "players": [s.public() for s in live.room.seats]})
        for c in list(live.conns):
            c.push(text)

    async def _store_finished(self, live: LiveRoom) -> None:
        room = live.room
        lost = room.forfeited
        record = build_record(
            room.match,
            game_id=room.id,
            mode=room.mode,
            players=[s.public() for s in room.seats],
            forfeit=None if lost is None else lost.to_dict(),
        )
        try:
            await self._db(
                self.storage.finish_game,
                room.id,
                record,
                list(room.match.scores),
                room.winner,
                None if lost is None else (lost.seat, lost.reason),
            )
        except ProtocolError:  # the actions are stored: the record can be rebuilt
            log_event(log, "record not stored", logging.WARNING, game=room.id)
            return
        live.finished_stored = True
        self.metrics.count("games_finished")
        log_event(
            log,
            "game finished",
            game=room.id,
            actions=room.seq,
            scores=list(room.match.scores),
            winner=room.winner,
            forfeit=None if lost is None else lost.seat,
        )

    # ---------------------------------------------------------- turn clock

    def _clock(self) -> float:
        """The rooms' time source: :attr:`now`, read at each use (tests replace it)."""
        return self.now()

    async def _clock_loop(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                await self.expire_clocks()
            except Exception:  # a failed forfeit is retried on the next tick
                log.exception("turn clock check failed")

    async def expire_clocks(self) -> int:
        """Forfeit every game owned here whose running turn clock has run out (the
        clock's seat loses the match). Returns how many games were forfeited."""
        done = 0
        for live in list(self._clocked.values()):
            seat = live.room.expired()
            if seat is None or self._closing:
                continue
            if self.cluster is not None and self.cluster.follows(live.room.id):
                continue  # the owner's clock decides
            if await self.forfeit(live, seat):
                done += 1
        return done

    @guarded
    async def forfeit(self, live: LiveRoom, seat: int, reason: str = "time") -> bool:
        """``seat`` forfeits the match if its clock has still run out (under the room's
        lock: a move that came first wins): the other player wins; the result is stored
        (and rated) and every page is told. Returns whether it forfeited."""
        async with live.lock:
            room = live.room
            if self.rooms.get(room.id) is not live or room.expired() != seat:
                return False
            room.forfeit(seat, reason)
            live.last_active = time.monotonic()
            if live.ai_task is not None and not live.ai_task.done():
                live.ai_task.cancel()
            log_event(log, "game forfeited", game=room.id, seat=seat, reason=reason)
            self.metrics.count("forfeits")
            if self.cluster is not None:
                self.cluster.forfeited(live, seat, reason)
            self.broadcast(live)
            self._release_ai_slot(live)
            await self._store_finished(live)
        return True

    def forfeited(self, live: LiveRoom, seat: int, reason: str) -> None:
        """The owner (another process) forfeited ``seat``'s game: the replica here ends
        the match too and tells its clients."""
        room = live.room
        if room.is_over:
            return
        room.forfeit(seat, reason)
        live.finished_stored = True  # the owner stored the result
        self.broadcast(live)

    # ----------------------------------------------------------------- AI

    async def stored_actions(self, game_id: str) -> list[int]:
        """The stored action ids of a game (a replica catches up with them)."""
        return await self._db(self.storage.action_ids, game_id)

    def kick_ai(self, live: LiveRoom) -> None:
        """Start the AI's turns if it is to move (only where the game's actions are stored)."""
        if self._closing or live.room.ai_to_move() is None:
            return
        if self.cluster is not None and self.cluster.follows(live.room.id):
            return  # the owner plays the AI
        if live.ai_task is None or live.ai_task.done():
            live.ai_task = asyncio.create_task(self._run_ai(live), name=f"ai-{live.room.id}")

    async def _run_ai(self, live: LiveRoom) -> None:
        try:
            while not self._closing:
                room = live.room
                seat = room.ai_to_move()
                if seat is None or self.rooms.get(room.id) is not live:
                    return
                if not any(c.seat is not None for c in live.conns) and not (
                    self.cluster is not None and self.cluster.remote_players(room.id)
                ):
                    return  # nobody at the table: wait for a hello
                seq = room.seq
                view = room.view(seat)  # no agent reads the event history
                strength = room.seats[seat].agent or "random"
                if strength in FAST_AGENTS:
                    action = room.agent(seat).act(view, ai_rng(room.seed, seq))
                else:
                    # In a worker process, with what the seat may know, in turn with
                    # the other games: the event loop never waits for a search.
                    decision = Decision.of(
                        agent_spec(strength), view, decision_seed(room.seed, seq)
                    )
                    try:
                        action = await self.ai_pool.decide(room.id, decision, group=live.owner)
                    except AIUnavailable as exc:
                        self._ai_failed(live, str(exc))
                        return
                if self.config.ai_delay:
                    await asyncio.sleep(self.config.ai_delay)
                if action not in view.legal_ids:
                    log_event(
                        log, "agent chose an illegal action", logging.ERROR, game=room.id, seq=seq
                    )
                    action = view.legal_ids[0]
                try:
                    await self.commit(live, Submission(seat, action, seq))
                except ProtocolError as exc:
                    log_event(
                        log, "AI action refused", logging.WARNING, game=room.id, code=exc.code
                    )
                    if exc.code == "server_error":  # the AI moves when the database is back
                        self.database_failed()
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("AI turn failed", extra={"fields": {"game": live.room.id}})

    def _ai_failed(self, live: LiveRoom, reason: str) -> None:
        """The AI could not move: tell the table (a ``hello`` tries again)."""
        self.metrics.count("ai_failures")
        log_event(log, "AI decision failed", logging.ERROR, game=live.room.id, reason=reason)
        if self._closing:
            return
        message = {
            "type": "error",
            "code": "server_error",
            "message": f"the AI could not choose its move ({reason}); reconnect to try again",
        }
        for c in list(live.conns):
            c.send(message)

    # --------------------------------------------------------------- hints

    def hint(self, conn: Connection, msg: HintRequest) -> None:
        """Start rating the seat's legal actions; the answer is a ``hint`` message."""
        live = conn.live
        if live is None or conn.seat is None:
            raise ProtocolError("hint_unavailable", "spectators get no hints", ref=msg.ref)
        if conn.hint_task is not None and not conn.hint_task.done():
            raise ProtocolError("hint_unavailable", "a hint is already being computed", ref=msg.ref)
        room = live.room
        seat = conn.seat
        if room.is_over or room.to_move() != seat:
            raise ProtocolError(
                "hint_unavailable", "a hint is only given on your turn", ref=msg.ref
            )
        conn.hint_task = asyncio.create_task(self._hint(conn, room, seat, msg.ref))

    async def _hint(self, conn: Connection, room: Room, seat: int, ref: str | int | None) -> None:
        try:
            # The view is taken here, on the event loop; the rating is made by an AI
            # worker, in turn with the AI decisions.
            seq = room.seq
            view = room.hint_view(seat)
            rating = Rating.of(self._hint_source, view, decision_seed(room.seed ^ 0x5EED, seq))
            values = await self.ai_pool.rate(
                f"{room.id}/hint/{seat}",
                rating,
                group=conn.peer,
                timeout=self.config.hint_timeout,
            )
            message = room.hint_message(seq, view, values, self._hint_source)
        except ProtocolError as exc:
            exc.ref = ref
            conn.send(exc.to_message())
            return
        except ValueError as exc:  # AIUnavailable, or a rating of this seat still running
            conn.send({"type": "error", "code": "hint_unavailable", "message": str(exc)})
            return
        if ref is not None:
            message["ref"] = ref
        self.metrics.count("hints")
        conn.send(message)

    # -------------------------------------------------------- records

    async def authorize(self, game_id: str, token: str) -> tuple[LiveRoom, int | None]:
        """The room of ``game_id`` if ``token`` is one of its seat or watch tokens."""
        live, seat = await self.locate(token)
        if live.room.id != game_id:
            raise ProtocolError("unknown_token", "this token is not for that game")
        return live, seat

    async def record(self, game_id: str, token: str) -> str:
        """The finished game's record (JSON text)."""
        live, _ = await self.authorize(game_id, token)
        if not live.room.is_over:
            raise ProtocolError("not_finished", "the record is available when the match is over")
        text = await self._db(self.storage.get_record, game_id)
        if text is None:
            async with live.lock:
                await self._store_finished(live)
            text = await self._db(self.storage.get_record, game_id)
        if text is None:
            raise ProtocolError("server_error", "the record could not be stored")
        return text

    async def replay(self, game_id: str, token: str, *, lang: str = "en") -> dict[str, Any]:
        """Step-through frames of a finished game, told in ``lang``."""
        live, _ = await self.authorize(game_id, token)
        if not live.room.is_over:
            raise ProtocolError("not_finished", "the replay is available when the match is over")
        room = live.room
        players = [s.public() for s in room.seats]
        lost = room.forfeited
        record = record_of(
            room.match,
            game_id=game_id,
            mode=room.mode,
            players=players,
            forfeit=None if lost is None else lost.to_dict(),
        )
        data = await anyio.to_thread.run_sync(
            functools.partial(replay_frames, record, lang=lang), limiter=self._ai_limiter
        )
        data["seats"] = players
        data["game"] = game_id
        return data

    # ------------------------------------------------------------ upkeep

    async def _janitor_loop(self) -> None:
        interval = min(30.0, max(0.05, self.config.finished_grace / 2))
        while True:
            await asyncio.sleep(interval)
            self.evict_idle()

    def evict_idle(self, now: float | None = None) -> int:
        """Drop rooms nobody uses from memory (they stay in storage): idle ones, finished
        ones after :attr:`ServerConfig.finished_grace`, the oldest beyond
        :attr:`ServerConfig.max_rooms`. Returns how many."""
        now = time.monotonic() if now is None else now
        dropped = 0
        idle = self.config.idle_seconds
        grace = self.config.finished_grace
        over_capacity = len(self.rooms) - self.config.max_rooms
        by_age = sorted(self.rooms.values(), key=lambda lr: lr.last_active)
        for live in by_age:
            busy = (
                live.conns
                or (self.cluster is not None and self.cluster.remote_clients(live.room.id))
                or live.lock.locked()
                or (live.ai_task is not None and not live.ai_task.done())
                or (  # a turn clock runs here: it will end the game
                    live.room.deadline is not None
                    and not (self.cluster is not None and self.cluster.follows(live.room.id))
                )
            )
            if busy:
                continue
            quiet = now - live.last_active
            finished = live.finished_stored and live.room.is_over and quiet >= grace
            if quiet > idle or finished or over_capacity > 0:
                self._unregister(live)
                dropped += 1
                over_capacity -= 1
        return dropped

    def connection_counts(self) -> dict[str, int]:
        """Open connections: ``connections`` (all), ``unauthenticated`` (no hello yet),
        ``max_per_address`` (the busiest address), ``addresses``, ``in_games``."""
        return {
            "connections": len(self.connections),
            "unauthenticated": sum(self._unauthenticated.values()),
            "max_per_address": max(self._per_address.values(), default=0),
            "addresses": len(self._per_address),
            "in_games": sum(len(r.conns) for r in self.rooms.values()),
        }

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok" if not self._closing else "stopping",
            "rooms": len(self.rooms),
            **self.connection_counts(),
            "inflight": self._inflight,
            "agents": list(self.available_agents),
            **self.ai_pool.stats(),
            **({"node": self.cluster.node} if self.cluster is not None else {}),
        }
