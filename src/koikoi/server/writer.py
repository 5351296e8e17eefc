"""Storage from the event loop: :func:`run_storage` runs one call in a worker thread,
:class:`ActionWriter` stores the actions of many games per transaction (group commit)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from koikoi.server.logs import LOGGER_NAME, log_event
from koikoi.server.metrics import Metrics
from koikoi.server.protocol import ProtocolError
from koikoi.server.storage import Storage

__all__ = ["ActionWriter", "run_storage"]

log = logging.getLogger(LOGGER_NAME)
T = TypeVar("T")


class ActionWriter:
    """Stores actions durably, many games' actions per transaction (group commit)."""

    def __init__(self, storage: Storage, metrics: Metrics, batch: int = 500) -> None:
        self.storage = storage
        self.metrics = metrics
        self.batch = batch
        self._queue: asyncio.Queue[tuple[tuple[str, int, int, int], asyncio.Future[None]] | None]
        self._queue = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="koikoi-action-writer")

    async def append(self, game_id: str, seq: int, action: int, seat: int) -> None:
        """Return once the action is committed; raise if it could not be stored."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(((game_id, seq, action, seat), future))
        await future

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            items = [item]
            stop = False
            while len(items) < self.batch and not self._queue.empty():
                nxt = self._queue.get_nowait()
                if nxt is None:
                    stop = True
                    break
                items.append(nxt)
            await self._write(items)
            if stop:
                return

    async def _write(
        self, items: list[tuple[tuple[str, int, int, int], asyncio.Future[None]]]
    ) -> None:
        rows = [row for row, _ in items]
        try:
            await anyio.to_thread.run_sync(self.storage.append_actions, rows)
        except Exception:
            # Find the failing rows: store the others one by one.
            for row, future in items:
                try:
                    await anyio.to_thread.run_sync(self.storage.append_actions, [row])
                except Exception as exc:
                    self.metrics.count("store_errors")
                    if not future.done():
                        future.set_exception(exc)
                else:
                    if not future.done():
                        future.set_result(None)
            return
        self.metrics.count("store_batches")
        for _, future in items:
            if not future.done():
                future.set_result(None)

    async def stop(self) -> None:
        """Write everything queued, then stop."""
        if self._task is None:
            return
        self._queue.put_nowait(None)
        await self._task
        self._task = None


async def run_storage(fn: Callable[..., T], *args: Any, limiter: anyio.CapacityLimiter) -> T:
    """Call storage in a worker thread; a failure is logged (one line, the error's type
    only: SQL errors quote parameters) and answers ``server_error``."""
    try:
        return await anyio.to_thread.run_sync(fn, *args, limiter=limiter)
    except Exception as exc:
        log_event(
            log,
            "database error",
            logging.ERROR,
            op=getattr(fn, "__name__", "?"),
            error=type(exc).__name__,
        )
        raise ProtocolError(
            "server_error", "the database is not answering; try again in a moment"
        ) from None
