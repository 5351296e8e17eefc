"""What a :class:`~.cluster.Cluster` node needs from the server process it serves.

The cluster keeps leases and carries messages between processes; the rooms,
their connections and the commits of actions belong to the process's hub
(:class:`~.hub.Hub`). The cluster reaches them only through the narrow
:class:`ClusterHost` interface it is given, so neither module imports the other
in a cycle: the hub implements the interface and creates the cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from koikoi.server.connections import LiveRoom, Submission
from koikoi.server.metrics import Metrics

__all__ = ["ClusterHost"]


class ClusterHost(Protocol):
    """The rooms of one server process, as its cluster node sees them."""

    @property
    def rooms(self) -> Mapping[str, LiveRoom]:
        """The rooms in memory here, by game id."""
        ...

    @property
    def metrics(self) -> Metrics:
        """Where the node counts what happened (leases lost, takeovers, errors)."""
        ...

    async def stored_actions(self, game_id: str) -> list[int]:
        """The stored action ids of a game (a replica catches up with them)."""
        ...

    async def commit(self, live: LiveRoom, submission: Submission) -> None:
        """Check, store, apply and broadcast one action (a forwarded one, or one that
        waited for a new owner); its connection gets the acknowledgement.

        Raises:
            ProtocolError: the action was refused or could not be stored.
        """
        ...

    def broadcast(self, live: LiveRoom, ack: Submission | None = None) -> None:
        """Send each connection of the room its new ``state``; the connection of
        ``ack`` gets the acknowledgement of that action."""
        ...

    def broadcast_presence(self, live: LiveRoom) -> None:
        """Send the room's connections who is connected (over all nodes)."""
        ...

    def kick_ai(self, live: LiveRoom) -> None:
        """Start the AI's turns if it is to move."""
        ...

    def drop_room(self, live: LiveRoom, reason: str) -> None:
        """Forget a room (its clients are closed with ``reason`` and may reconnect)."""
        ...

    def forfeited(self, live: LiveRoom, seat: int, reason: str) -> None:
        """The owner ended the game by forfeit (``seat`` lost): update the replica."""
        ...

    def seat_claimed(self, live: LiveRoom, seat: int, name: str, digest: str) -> None:
        """A seat's invite was claimed on another node: update the room."""
        ...

    def database_failed(self) -> None:
        """The database did not answer: the host brings its clients back when it does."""
        ...
