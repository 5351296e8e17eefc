"""Several server processes on one PostgreSQL database: game leases and forwarding.

Every process that serves the web game on PostgreSQL is a *node* of a cluster
(one node is a cluster of one). The database holds, besides the games, one
lease per game in memory somewhere (table ``koikoi_leases``: game id, owner
node, expiry in the database's clock):

* The node that holds a game's lease is its **owner**: the only one that
  stores its actions and runs its AI. It renews all its leases in one
  statement every ``lease_seconds / 5`` seconds, from a thread of its own (a
  busy event loop does not let them expire), and renews a lease itself before
  storing an action if the last renewal is not recent enough.
* Any other node with clients of that game is a **follower**: it keeps a
  replica of the game (replayed from the stored actions, then updated by the
  owner's messages), serves its own clients from it (each seat still sees only
  its own view), and forwards their actions to the owner. An action is
  acknowledged to its client only when the owner has stored it and the
  follower has applied it: a forwarded action is never acknowledged and lost.
* When the owner stops gracefully it deletes its leases and says so; when it
  dies (``kill -9``, a lost machine) its leases expire. Either way a follower
  with clients takes the lease, catches up from the stored actions, plays the
  actions still waiting to be forwarded, and continues, AI turns included.
  A stale owner (a process that stalled past its lease) can never store a
  second action at the same place: ``(game_id, seq)`` is the actions' primary
  key, and the loser of such a race reloads the game.

Messages travel through PostgreSQL ``LISTEN``/``NOTIFY``, JSON payloads, on
two kinds of channel: ``koikoi_node_<id>`` (one per node: forwarded actions,
followers' presence, the owner's actions for its followers) and
``koikoi_all`` (ownership changes and claimed invites, rare). One sender
task sends them in order over one connection, so a follower sees an owner's
messages in the order the owner stored its actions; a gap (a lost message)
is filled from the stored actions.

SQLite has no cluster: it serves one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
import threading
import time
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from koikoi.server.connections import LiveRoom, Submission
from koikoi.server.host import ClusterHost
from koikoi.server.logs import LOGGER_NAME, log_event
from koikoi.server.protocol import ProtocolError

if TYPE_CHECKING:
    import psycopg

__all__ = ["ALL_CHANNEL", "Cluster", "conninfo_of", "node_channel"]

log = logging.getLogger(LOGGER_NAME)

ALL_CHANNEL: Final = "koikoi_all"
LEASE_CONNECTIONS: Final = 4
"""Connections for lease statements (taking, releasing): when many clients arrive at
once, each statement on a single connection waited for all those before it (112 ms
on average at the start of the 300-game load test)."""
_BESIDE_THE_LOOP: Final = frozenset({"free", "moved", "owner", "sync"})
"""Messages handled in a task of their own, not in the listening loop: they wait for
the database (take a lease, read stored actions), and the acknowledgements of every
other game's forwarded actions ("did") would queue behind them. The order they lose
does not matter: applying a stored action checks its sequence number, and a gap is
read from the stored actions."""
STALE_LEASE_SECONDS: Final = 3600.0
"""A lease expired this long ago is deleted by :meth:`Cluster.sweep_stale_leases`: its
node died and nobody reopened the game since (a game reopened later simply takes a
new lease)."""
SWEEP_EVERY_SECONDS: Final = 600.0
"""How often each node sweeps (any node may; the statement is idempotent)."""
PAYLOAD_LIMIT: Final = 7000
"""PostgreSQL refuses NOTIFY payloads of 8000 bytes and more."""
LEASE_TABLE_SQL: Final = """
CREATE TABLE IF NOT EXISTS koikoi_leases (
    game_id VARCHAR(32) PRIMARY KEY,
    owner VARCHAR(64) NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
)
"""
_ACQUIRE_SQL: Final = """
INSERT INTO koikoi_leases AS l (game_id, owner, expires_at)
VALUES (%s, %s, now() + make_interval(secs => %s))
ON CONFLICT (game_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
WHERE l.expires_at < now() OR l.owner = EXCLUDED.owner
RETURNING l.owner
"""
_RENEW_SQL: Final = """
UPDATE koikoi_leases SET expires_at = now() + make_interval(secs => %s)
WHERE owner = %s RETURNING game_id
"""


def node_channel(node: str) -> str:
    """The NOTIFY channel of one node."""
    return f"koikoi_node_{node}"


def conninfo_of(url: str) -> str:
    """The libpq connection string of a SQLAlchemy PostgreSQL URL (any driver name)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


def create_lease_table(conninfo: str) -> None:
    """Create ``koikoi_leases`` if missing (under an advisory lock: nodes may start together)."""
    import psycopg

    with psycopg.connect(conninfo) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(7105310)")
        conn.execute(LEASE_TABLE_SQL)


@dataclass(eq=False)
class Pending:
    """An action forwarded to the owner, waiting for its acknowledgement."""

    submission: Submission
    future: asyncio.Future[None]


@dataclass(eq=False)
class Owned:
    """A game this node owns."""

    valid_until: float
    """Monotonic time until which the lease is surely ours (renewal start + lease - margin)."""
    followers: set[str] = field(default_factory=set)
    remote: dict[str, tuple[float, tuple[bool, bool, int]]] = field(default_factory=dict)
    """Follower node -> (when heard, (seat 0 connected, seat 1 connected, spectators))."""


@dataclass(eq=False)
class Followed:
    """A game this node follows (another node owns it)."""

    leader: str
    pending: list[Pending] = field(default_factory=list)
    merged: tuple[bool, bool, int] | None = None
    """The owner's last presence of the whole game..."""
    reported: tuple[bool, bool, int] = (False, False, 0)
    """...and what this node last told it about its own clients."""


class Cluster:
    """This node's leases and messages (see the module docstring).

    Args:
        host: the server process's rooms, broadcasts and commits (its hub).
        url: the database URL (PostgreSQL).
        lease_seconds: how long a lease lasts without renewal: how long a game
            waits after its owner died before another node takes it over.
    """

    def __init__(self, host: ClusterHost, url: str, lease_seconds: float = 5.0) -> None:
        self.host = host
        self.conninfo = conninfo_of(url)
        self.lease = lease_seconds
        self.tick = lease_seconds / 5
        self.node = secrets.token_hex(6)
        self.owned: dict[str, Owned] = {}
        self.following: dict[str, Followed] = {}
        self._outbox: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._lease_conns: asyncio.Queue[psycopg.AsyncConnection[Any] | None] = asyncio.Queue()
        """Idle lease connections (``None``: a slot to connect when needed)."""
        for _ in range(LEASE_CONNECTIONS):
            self._lease_conns.put_nowait(None)
        self._tasks: list[asyncio.Task[None]] = []
        self._listening = asyncio.Event()
        self._closing = False
        self._background: set[asyncio.Future[object]] = set()
        self._stop_renewing = threading.Event()
        self._renewer: threading.Thread | None = None

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Create the lease table, connect, listen; start the sender and the lease loop."""
        import psycopg

        await asyncio.to_thread(create_lease_table, self.conninfo)
        first = await self._lease_conns.get()
        if first is None:
            first = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
        self._lease_conns.put_nowait(first)
        self._tasks = [
            asyncio.create_task(self._listen_loop(), name="koikoi-cluster-listen"),
            asyncio.create_task(self._send_loop(), name="koikoi-cluster-send"),
            asyncio.create_task(self._lease_loop(), name="koikoi-cluster-leases"),
        ]
        self._renewer = threading.Thread(
            target=self._renew_thread,
            args=(asyncio.get_running_loop(),),
            name="koikoi-lease-renewal",
            daemon=True,
        )
        self._renewer.start()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), 10)
        log_event(log, "cluster node started", node=self.node, lease_s=self.lease)

    async def close(self) -> None:
        """Hand every owned game back (delete its lease, tell the others), then disconnect."""
        self._closing = True
        self._stop_renewing.set()
        if self._renewer is not None:
            await asyncio.to_thread(self._renewer.join, 5)
        games = list(self.owned)
        if games:
            with contextlib.suppress(Exception):
                await self._execute(
                    "DELETE FROM koikoi_leases WHERE owner = %s AND game_id = ANY(%s)",
                    (self.node, games),
                )
            for game_id in games:
                self._send(ALL_CHANNEL, {"k": "free", "g": game_id, "p": self.node})
        self.owned.clear()
        self.abort_forwarding()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drain(), 5)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        while not self._lease_conns.empty():
            conn = self._lease_conns.get_nowait()
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
        log_event(log, "cluster node stopped", node=self.node, released=len(games))

    def _spawn(self, work: Coroutine[Any, Any, object]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def abort_forwarding(self) -> None:
        """The server stops: actions still waiting for their owner are refused."""
        for state in self.following.values():
            for p in state.pending:
                if not p.future.done():
                    p.future.set_exception(
                        ProtocolError("server_error", "the server is shutting down; reconnect")
                    )
            state.pending.clear()

    async def _drain(self) -> None:
        while not self._outbox.empty():
            await asyncio.sleep(0.01)

    # ----------------------------------------------------------------- leases

    async def _execute(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """One statement on an idle lease connection (of :data:`LEASE_CONNECTIONS`;
        connected when first needed, and again after a failure)."""
        import psycopg

        conn = await self._lease_conns.get()
        healthy = False
        try:
            if conn is None or conn.closed:
                conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
            cur = await conn.execute(sql, params)
            rows = await cur.fetchall() if cur.description is not None else []
            healthy = True
            return rows
        finally:
            # A failed or cancelled statement leaves the connection in doubt: the slot
            # goes back empty (first: closing may be cancelled too) and it is closed.
            self._lease_conns.put_nowait(conn if healthy else None)
            if not healthy and conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()

    async def _acquire(self, game_id: str) -> str:
        """Take the lease of ``game_id`` if it is free or expired; returns its owner."""
        for _ in range(3):
            started = time.monotonic()
            rows = await self._execute(_ACQUIRE_SQL, (game_id, self.node, self.lease))
            if rows:
                self.owned[game_id] = self.owned.get(game_id) or Owned(0.0)
                self.owned[game_id].valid_until = started + self.lease * 0.8
                return self.node
            rows = await self._execute(
                "SELECT owner FROM koikoi_leases WHERE game_id = %s", (game_id,)
            )
            if rows:
                return str(rows[0][0])
        raise ProtocolError("server_error", "the game's lease could not be taken; try again")

    async def _acquire_for_request(self, game_id: str) -> str:
        """:meth:`_acquire` on a client's request: a database fault answers
        ``server_error`` (the background loops let it reach their own handler)."""
        try:
            return await self._acquire(game_id)
        except ProtocolError:
            raise
        except Exception as exc:
            self.host.database_failed()  # its clients are brought back when it answers
            raise ProtocolError(
                "server_error", "the database is not answering; try again in a moment"
            ) from exc

    def may_write(self, game_id: str) -> bool:
        """Whether this node surely still holds the lease of ``game_id`` (it owns it and
        the last renewal is recent enough)."""
        owned = self.owned.get(game_id)
        return owned is not None and time.monotonic() < owned.valid_until

    async def confirm(self, live: LiveRoom) -> None:
        """Renew the lease of a game this node owns before storing an action when the
        periodic renewal is late (a busy event loop).

        Raises:
            ProtocolError: another node holds the game now (this node drops it; its
                clients reconnect) or the database does not answer.
        """
        game_id = live.room.id
        owner = await self._acquire_for_request(game_id)
        if owner != self.node:
            self.owned.pop(game_id, None)
            self.host.metrics.count("leases_lost")
            log_event(log, "lease lost", logging.WARNING, game=game_id, owner=owner)
            self.host.drop_room(live, "the game moved to another server; reconnect")
            raise ProtocolError("server_error", "the game moved to another server; reconnect")

    def follows(self, game_id: str) -> bool:
        return game_id in self.following

    async def claim_new(self, game_id: str) -> None:
        """Own a game just created here."""
        owner = await self._acquire_for_request(game_id)
        if owner != self.node:  # pragma: no cover - a new id has no lease
            raise ProtocolError("server_error", "the new game is owned elsewhere; try again")

    async def adopt(self, live: LiveRoom) -> None:
        """Own a room just loaded from storage, or follow its owner."""
        game_id = live.room.id
        owner = await self._acquire_for_request(game_id)
        if owner == self.node:
            # The room was replayed after the lease was taken? Not necessarily:
            # catch up with anything stored meanwhile by the previous owner.
            await self._catch_up(live)
            return
        self.following[game_id] = Followed(leader=owner)
        self._send(node_channel(owner), {"k": "follow", "g": game_id, "p": self.node})
        log_event(log, "game followed", game=game_id, owner=owner)

    def released(self, live: LiveRoom) -> None:
        """The room left this node's memory: give its lease back or stop following."""
        game_id = live.room.id
        if self.owned.pop(game_id, None) is not None:
            self._send(ALL_CHANNEL, {"k": "free", "g": game_id, "p": self.node})
            self._spawn(self._release_lease(game_id))
        state = self.following.pop(game_id, None)
        if state is not None:
            self._send(node_channel(state.leader), {"k": "unfollow", "g": game_id, "p": self.node})
            for p in state.pending:
                if not p.future.done():
                    p.future.set_exception(
                        ProtocolError("server_error", "the game was reloaded; reconnect")
                    )

    async def _release_lease(self, game_id: str) -> bool:
        """Delete this node's lease of ``game_id``; False (logged) if the database failed."""
        try:
            await self._execute(
                "DELETE FROM koikoi_leases WHERE owner = %s AND game_id = %s", (self.node, game_id)
            )
        except Exception as exc:
            log_event(log, "lease not released", logging.WARNING, error=type(exc).__name__)
            return False
        return True

    async def sweep_stale_leases(self) -> int:
        """Delete the leases expired more than :data:`STALE_LEASE_SECONDS` ago (left by
        nodes that died); returns how many."""
        rows = await self._execute(
            "DELETE FROM koikoi_leases "
            "WHERE expires_at < now() - make_interval(secs => %s) RETURNING game_id",
            (STALE_LEASE_SECONDS,),
        )
        if rows:
            self.host.metrics.count("stale_leases_deleted", len(rows))
            log_event(log, "stale leases deleted", count=len(rows))
        return len(rows)

    async def _lease_loop(self) -> None:
        # The first sweep at a random point of the period: nodes started together
        # do not all sweep at once.
        next_sweep = time.monotonic() + random.uniform(0, SWEEP_EVERY_SECONDS)
        while True:
            await asyncio.sleep(self.tick)
            try:
                await self._take_over_orphans()
                self._heartbeat()
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + SWEEP_EVERY_SECONDS
                    await self.sweep_stale_leases()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._fault("lease renewal failed", exc)

    def _renew_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        """Renew every lease of this node, in a thread of its own with its own connection:
        a lease says that the process is alive, so a busy event loop (slow answers) must
        not let it expire; only a dead or frozen process loses its games."""
        import psycopg

        conn: psycopg.Connection[Any] | None = None
        while not self._stop_renewing.wait(self.tick):
            if not self.owned:
                continue
            started = time.monotonic()
            try:
                if conn is None or conn.closed:
                    conn = psycopg.connect(self.conninfo, autocommit=True)
                rows = conn.execute(_RENEW_SQL, (self.lease, self.node)).fetchall()
            except Exception as exc:
                log_event(log, "lease renewal failed", logging.ERROR, error=type(exc).__name__)
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.close()
                conn = None
                continue
            still = {str(r[0]) for r in rows}
            missing: list[str] = []
            for game_id, owned in list(self.owned.items()):
                if game_id in still:
                    owned.valid_until = max(owned.valid_until, started + self.lease * 0.8)
                elif owned.valid_until < started:  # not one acquired since the UPDATE
                    missing.append(game_id)
            if missing:
                with contextlib.suppress(RuntimeError):  # the loop closed
                    loop.call_soon_threadsafe(self._spawn, self._check_lost(missing))
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    async def _check_lost(self, games: list[str]) -> None:
        """Games whose renewal found another owner: check once more, then drop them."""
        for game_id in games:
            live = self.host.rooms.get(game_id)
            if game_id not in self.owned or self.may_write(game_id):
                continue
            if live is None:
                self.owned.pop(game_id, None)
                continue
            with contextlib.suppress(ProtocolError):
                await self.confirm(live)  # drops the game if another node holds it

    async def _take_over_orphans(self) -> None:
        """Followed games with clients here whose owner stopped renewing: take them
        (one query finds them)."""
        wanted: list[str] = []
        for game_id, state in list(self.following.items()):
            live = self.host.rooms.get(game_id)
            if live is None:
                self.following.pop(game_id, None)
            elif live.conns or state.pending:
                wanted.append(game_id)
        if not wanted:
            return
        rows = await self._execute(
            "SELECT game_id FROM koikoi_leases WHERE game_id = ANY(%s) AND expires_at >= now()",
            (wanted,),
        )
        held = {str(r[0]) for r in rows}
        for game_id in wanted:
            found = self.following.get(game_id)
            live = self.host.rooms.get(game_id)
            if game_id in held or found is None or live is None:
                continue
            state = found
            owner = await self._acquire(game_id)
            if self.following.get(game_id) is not state:
                continue  # promoted meanwhile (the owner handed the game over)
            if owner == self.node:
                await self._promote(live, state)
            elif owner != state.leader:
                state.leader = owner
                self._send(node_channel(owner), {"k": "follow", "g": game_id, "p": self.node})
                self._resend(game_id, state)

    async def _promote(self, live: LiveRoom, state: Followed) -> None:
        """This follower became the owner: catch up, play what waits, run the AI."""
        game_id = live.room.id
        self.following.pop(game_id, None)
        await self._catch_up(live, state)
        log_event(
            log, "game taken over", game=game_id, previous=state.leader, actions=live.room.seq
        )
        self.host.metrics.count("takeovers")
        self._send(ALL_CHANNEL, {"k": "owner", "g": game_id, "p": self.node})
        for p in state.pending:
            if p.future.done():
                continue
            self._spawn(self._commit_pending(live, p))
        self.host.kick_ai(live)

    async def _commit_pending(self, live: LiveRoom, p: Pending) -> None:
        try:
            await self.host.commit(live, p.submission)
        except ProtocolError as exc:
            if not p.future.done():
                p.future.set_exception(exc)
        except Exception as exc:  # pragma: no cover - commit answers ProtocolError
            if not p.future.done():
                p.future.set_exception(exc)
        else:
            if not p.future.done():
                p.future.set_result(None)

    async def catch_up(self, live: LiveRoom) -> None:
        """Bring a followed game's replica up to the stored actions."""
        await self._catch_up(live, self.following.get(live.room.id))

    async def _catch_up(self, live: LiveRoom, state: Followed | None = None) -> None:
        """Apply the stored actions this replica lacks (acknowledging forwarded ones)."""
        game_id = live.room.id
        stored = await self.host.stored_actions(game_id)
        async with live.lock:
            for seq in range(live.room.seq, len(stored)):
                self._apply(live, seq, stored[seq], state)

    def _apply(self, live: LiveRoom, seq: int, action: int, state: Followed | None) -> None:
        """Apply the stored action ``seq`` to the replica and send it to the clients here
        (with the acknowledgement, if one of them sent it). Call under the room's lock."""
        room = live.room
        if seq != room.seq:
            return
        ack: Pending | None = None
        if state is not None:
            for p in list(state.pending):
                if p.submission.seq != seq:
                    continue
                state.pending.remove(p)
                if p.submission.action == action and ack is None:
                    ack = p
                elif not p.future.done():
                    p.future.set_exception(
                        ProtocolError(
                            "stale", "another action was played first; act on the latest state"
                        )
                    )
        room.apply(action)
        live.last_active = time.monotonic()
        if room.is_over:
            live.finished_stored = True  # the owner stores the record (else records rebuild it)
        self.host.broadcast(live, ack.submission if ack is not None else None)
        if ack is not None and not ack.future.done():
            ack.future.set_result(None)

    # ------------------------------------------------------------ forwarding

    async def forward(self, live: LiveRoom, submission: Submission) -> None:
        """Send a client's action to the game's owner; return once it is stored and sent
        back here (acknowledged), or raise the owner's refusal as :class:`ProtocolError`."""
        room = live.room
        state = self.following.get(room.id)
        if state is None:  # pragma: no cover - the host checks follows() first
            raise ProtocolError("server_error", "the game was reloaded; reconnect")
        room.check_act(submission.seat, submission.action, submission.seq)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        pending = Pending(submission, future)
        state.pending.append(pending)
        self._send(node_channel(state.leader), self._act_request(room.id, pending))
        self.host.metrics.count("forwarded")
        try:
            await asyncio.wait_for(asyncio.shield(future), self.lease * 3 + 5)
        except TimeoutError:
            with contextlib.suppress(ValueError):
                state.pending.remove(pending)
            raise ProtocolError(
                "server_error", "the game's server did not answer; act again"
            ) from None

    def _act_request(self, game_id: str, p: Pending) -> dict[str, Any]:
        sub = p.submission
        return {
            "k": "act",
            "g": game_id,
            "s": sub.seat,
            "a": sub.action,
            "q": sub.seq,
            "p": self.node,
        }

    def _resend(self, game_id: str, state: Followed) -> None:
        for p in state.pending:
            if not p.future.done():
                self._send(node_channel(state.leader), self._act_request(game_id, p))

    def published(self, live: LiveRoom, seq: int, action: int) -> None:
        """The owner stored and applied action ``seq``: tell the followers."""
        owned = self.owned.get(live.room.id)
        if owned is None:
            return
        msg = {"k": "did", "g": live.room.id, "n": seq, "a": action}
        for node in owned.followers:
            self._send(node_channel(node), msg)

    def forfeited(self, live: LiveRoom, seat: int, reason: str) -> None:
        """The owner ended the game by forfeit (a turn clock ran out): tell the followers."""
        owned = self.owned.get(live.room.id)
        if owned is None:
            return
        msg = {"k": "lost", "g": live.room.id, "s": seat, "r": reason}
        for node in owned.followers:
            self._send(node_channel(node), msg)

    def seat_claimed(self, game_id: str, seat: int, name: str, digest: str) -> None:
        """An invite was claimed here: every node with the game updates its seat."""
        self._send(
            ALL_CHANNEL,
            {"k": "seat", "g": game_id, "i": seat, "n": name, "h": digest, "p": self.node},
        )

    # -------------------------------------------------------------- presence

    def presence(self, live: LiveRoom, local: tuple[bool, bool, int]) -> tuple[bool, bool, int]:
        """The game's presence over all nodes, from this node's ``local`` one; tells the
        owner (from a follower) or the followers (from the owner) about the change."""
        game_id = live.room.id
        owned = self.owned.get(game_id)
        if owned is not None:
            merged = self._merge(local, (v for _, v in owned.remote.values()))
            for node in owned.followers:
                self._send(node_channel(node), {"k": "pres", "g": game_id, "v": list(merged)})
            return merged
        state = self.following.get(game_id)
        if state is None:
            return local
        if local != state.reported:
            state.reported = local
            self._send(
                node_channel(state.leader),
                {"k": "pres", "g": game_id, "p": self.node, "v": list(local)},
            )
        if state.merged is None:
            return local
        # The owner's figure counted what we reported; count what we have now.
        return (
            state.merged[0] or local[0],
            state.merged[1] or local[1],
            max(local[2], state.merged[2]),
        )

    @staticmethod
    def _merge(
        local: tuple[bool, bool, int], others: Iterable[tuple[bool, bool, int]]
    ) -> tuple[bool, bool, int]:
        a, b, n = local
        for x, y, m in others:
            a, b, n = a or x, b or y, n + m
        return a, b, n

    def remote_players(self, game_id: str) -> bool:
        """Whether a player of the game is connected to another node (the owner asks)."""
        return self._remote(game_id, spectators=False)

    def remote_clients(self, game_id: str) -> bool:
        """Whether any client of the game is connected to another node."""
        return self._remote(game_id, spectators=True)

    def _remote(self, game_id: str, *, spectators: bool) -> bool:
        """Whether a follower heard from lately has a player (or, with ``spectators``,
        any client) of this node's game ``game_id``."""
        owned = self.owned.get(game_id)
        if owned is None:
            return False
        horizon = time.monotonic() - 3 * self.lease
        return any(
            (a or b or (spectators and n > 0)) and t > horizon
            for t, (a, b, n) in owned.remote.values()
        )

    def _heartbeat(self) -> None:
        """Followers repeat their presence each tick (one message per owner and up to
        100 games): an owner forgets nodes that went quiet (a follower killed with its
        clients)."""
        by_leader: dict[str, dict[str, list[Any]]] = {}
        for game_id, state in self.following.items():
            by_leader.setdefault(state.leader, {})[game_id] = list(state.reported)
        for leader, games in by_leader.items():
            items = list(games.items())
            for i in range(0, len(items), 100):
                chunk = dict(items[i : i + 100])
                self._send(node_channel(leader), {"k": "beat", "p": self.node, "v": chunk})
        horizon = time.monotonic() - 3 * self.lease
        for owned in self.owned.values():
            for node, (t, _) in list(owned.remote.items()):
                if t < horizon:
                    del owned.remote[node]
                    owned.followers.discard(node)

    # ------------------------------------------------------------- messages

    def _send(self, channel: str, msg: dict[str, Any]) -> None:
        if not self._closing or msg.get("k") in ("free", "unfollow"):
            self._outbox.put_nowait((channel, json.dumps(msg, separators=(",", ":"))))

    async def _send_loop(self) -> None:
        """Send queued messages in order, many per round trip, over one connection."""
        import psycopg

        conn: psycopg.AsyncConnection[Any] | None = None
        while True:
            item = await self._outbox.get()
            batch = [item]
            while len(batch) < 200 and not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            for _attempt in range(2):
                try:
                    if conn is None or conn.closed:
                        conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
                    # One simple query of several statements: one round trip, one
                    # implicit transaction, the messages delivered in this order.
                    cur = psycopg.AsyncClientCursor(conn)
                    query = "; ".join("SELECT pg_notify(%s, %s)" for _ in batch)
                    await cur.execute(query, [v for pair in batch for v in pair])
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self._fault("notify failed", exc)
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            await conn.close()
                    conn = None
                    await asyncio.sleep(0.2)

    async def _listen_loop(self) -> None:
        """Receive this node's and the cluster's messages (reconnecting after a failure;
        after a reconnection every followed game asks its owner where it stands)."""
        import psycopg

        first = True
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True
                ) as conn:
                    await conn.execute(f'LISTEN "{node_channel(self.node)}"')
                    await conn.execute(f'LISTEN "{ALL_CHANNEL}"')
                    self._listening.set()
                    if not first:
                        for game_id, state in self.following.items():
                            self._send(
                                node_channel(state.leader),
                                {"k": "follow", "g": game_id, "p": self.node},
                            )
                    first = False
                    async for note in conn.notifies():
                        try:
                            msg = json.loads(note.payload)
                        except ValueError as exc:
                            self._fault("cluster message failed", exc)
                            continue
                        if isinstance(msg, dict) and msg.get("k") in _BESIDE_THE_LOOP:
                            self._spawn(self._on_message_logged(msg))
                        else:
                            await self._on_message_logged(msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._fault("listen failed", exc)
                await asyncio.sleep(0.5)

    async def _on_message_logged(self, msg: dict[str, Any]) -> None:
        """:meth:`_on_message`; a failure is counted and logged, not raised."""
        try:
            await self._on_message(msg)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fault("cluster message failed", exc)

    def _fault(self, event: str, exc: BaseException) -> None:
        """Count a cluster error and log it as ``event`` (with the error's type only)."""
        self.host.metrics.count("cluster_errors")
        log_event(log, event, logging.ERROR, error=type(exc).__name__)

    async def _on_message(self, msg: dict[str, Any]) -> None:
        kind = msg.get("k")
        game_id = str(msg.get("g", ""))
        live = self.host.rooms.get(game_id)
        if kind == "act":  # a follower forwards an action to us, the owner
            self._spawn(self._on_forwarded(live, msg))
        elif kind == "did":  # the owner stored an action
            state = self.following.get(game_id)
            if live is None or state is None:
                return
            seq, action = int(msg["n"]), int(msg["a"])
            if seq > live.room.seq:  # a message was lost: read the stored actions
                await self._catch_up(live, state)
                return
            async with live.lock:
                self._apply(live, seq, action, state)
        elif kind == "rej":  # the owner refused a forwarded action
            state = self.following.get(game_id)
            if state is None:
                return
            for p in list(state.pending):
                if p.submission.seq == int(msg["q"]) and p.submission.action == int(msg["a"]):
                    state.pending.remove(p)
                    if not p.future.done():
                        p.future.set_exception(ProtocolError(str(msg["c"]), str(msg["m"])))
        elif kind == "follow":
            owned = self.owned.get(game_id)
            node = str(msg["p"])
            if owned is None or live is None:
                self._send(node_channel(node), {"k": "moved", "g": game_id})
                return
            owned.followers.add(node)
            self._send(node_channel(node), {"k": "sync", "g": game_id, "n": live.room.seq})
        elif kind == "unfollow":
            owned = self.owned.get(game_id)
            if owned is not None:
                owned.followers.discard(str(msg["p"]))
                owned.remote.pop(str(msg["p"]), None)
                if live is not None:
                    self.host.broadcast_presence(live)
        elif kind == "sync":
            state = self.following.get(game_id)
            if live is not None and state is not None and int(msg["n"]) > live.room.seq:
                await self._catch_up(live, state)
        elif kind == "moved":  # we asked a node that no longer owns the game
            state = self.following.get(game_id)
            if live is not None and state is not None:
                await self._recheck(live, state)
        elif kind == "pres":
            await self._on_presence(live, msg)
        elif kind == "beat":  # a follower's presence in many games
            node = str(msg["p"])
            for gid, v in dict(msg["v"]).items():
                await self._on_presence(self.host.rooms.get(gid), {"g": gid, "p": node, "v": v})
        elif kind == "owner":
            state = self.following.get(game_id)
            node = str(msg["p"])
            if live is None or state is None or node == self.node:
                return
            state.leader = node
            await self._catch_up(live, state)
            self._send(node_channel(node), {"k": "follow", "g": game_id, "p": self.node})
            self._send(
                node_channel(node),
                {"k": "pres", "g": game_id, "p": self.node, "v": list(state.reported)},
            )
            self._resend(game_id, state)
        elif kind == "free":
            state = self.following.get(game_id)
            if live is not None and state is not None and str(msg["p"]) != self.node:
                await self._recheck(live, state)
        elif kind == "lost":  # the owner forfeited a player's game (its clock ran out)
            state = self.following.get(game_id)
            if live is not None and state is not None:
                async with live.lock:
                    self.host.forfeited(live, int(msg["s"]), str(msg["r"]))
        elif kind == "seat" and live is not None and str(msg["p"]) != self.node:
            self.host.seat_claimed(live, int(msg["i"]), str(msg["n"]), str(msg["h"]))

    async def _recheck(self, live: LiveRoom, state: Followed) -> None:
        """The owner let go: take the game if this node has clients, else follow anew."""
        game_id = live.room.id
        if not live.conns and not state.pending:
            self.host.drop_room(live, "")
            return
        owner = await self._acquire(game_id)
        if self.following.get(game_id) is not state:
            return  # a concurrent recheck (a "free" and a "moved") promoted it already
        if owner == self.node:
            await self._promote(live, state)
        else:
            state.leader = owner
            self._send(node_channel(owner), {"k": "follow", "g": game_id, "p": self.node})
            self._resend(game_id, state)

    async def _on_presence(self, live: LiveRoom | None, msg: dict[str, Any]) -> None:
        if live is None:
            return
        game_id = live.room.id
        v = msg["v"]
        value = (bool(v[0]), bool(v[1]), int(v[2]))
        owned = self.owned.get(game_id)
        if owned is not None and "p" in msg:  # a follower's own clients
            node = str(msg["p"])
            before = owned.remote.get(node)
            owned.remote[node] = (time.monotonic(), value)
            owned.followers.add(node)
            if before is None or before[1] != value:
                self.host.broadcast_presence(live)
                self.host.kick_ai(live)
            return
        state = self.following.get(game_id)
        if state is not None and "p" not in msg:  # the owner's merged figure
            state.merged = (
                value[0],
                value[1],
                value[2],
            )
            self.host.broadcast_presence(live)

    async def _on_forwarded(self, live: LiveRoom | None, msg: dict[str, Any]) -> None:
        """Store a follower's action as if one of our clients had sent it."""
        game_id = str(msg["g"])
        node = str(msg["p"])
        seq, action, seat = int(msg["q"]), int(msg["a"]), int(msg["s"])
        owned = self.owned.get(game_id)
        if live is None or owned is None:
            self._send(node_channel(node), {"k": "moved", "g": game_id})
            return
        owned.followers.add(node)
        if seq < live.room.seq and live.room.match.actions[seq] == action:
            # Stored already (sent again after a change of owner): the follower has it
            # or will read it; say so again.
            self._send(node_channel(node), {"k": "did", "g": game_id, "n": seq, "a": action})
            return
        try:
            await self.host.commit(live, Submission(seat, action, seq))
        except ProtocolError as exc:
            self._send(
                node_channel(node),
                {"k": "rej", "g": game_id, "q": seq, "a": action, "c": exc.code, "m": exc.message},
            )
            return
        if self._should_hand_over(live):
            await self._hand_over(live, node)
            return
        self.host.kick_ai(live)

    def _should_hand_over(self, live: LiveRoom) -> bool:
        """Whether to give a game to the follower that forwards its actions: no client of
        it is connected here, and it is a friend game still in play (an AI game stays
        with the node that runs its AI)."""
        room = live.room
        return (
            not live.conns
            and not room.is_over
            and all(seat.kind == "human" for seat in room.seats)
            and self.host.rooms.get(room.id) is live
            and room.id in self.owned
        )

    async def _hand_over(self, live: LiveRoom, node: str) -> None:
        """Give the game to follower ``node``, whose clients play it while none is
        connected here: every action they send would otherwise cross between two nodes.

        Under the room's lock (no action of ours in flight), the lease is deleted and
        the room leaves this node; then ``node`` is told the game is free and takes it
        as after a graceful stop (:meth:`_recheck`), announcing itself to the other
        followers. If the database does not answer, the lease expires and ``node``
        takes the game over after :attr:`lease` seconds, as after a crash.
        """
        game_id = live.room.id
        async with live.lock:
            if not self._should_hand_over(live):
                return
            self.owned.pop(game_id, None)
            self.host.drop_room(live, "")
            if not await self._release_lease(game_id):
                return
        self._send(node_channel(node), {"k": "free", "g": game_id, "p": self.node})
        self.host.metrics.count("handovers")
        log_event(log, "game handed over", game=game_id, to=node, actions=live.room.seq)
