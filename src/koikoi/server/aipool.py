"""The search AIs' decisions, in a bounded pool of worker processes, shared fairly.

The web server's event loop never runs a search: :meth:`AIPool.decide` queues
an AI's decision (:meth:`AIPool.rate`: a hint's ratings) and a worker process
makes it. Each worker loads its agents at start-up (the compiled kernel, the
match-equity table), so the first move of a game is as fast as the others.

Fairness: a game has at most one decision in flight, and the waiting games take
turns (:class:`FairQueue`): round-robin over the *groups* (the client address
that created the game), then over that group's games. An address playing eight
games against the expert gets the workers as often as an address playing one.

A worker gets only what the AI seat may know (:class:`Decision`: its
:class:`~koikoi.game.views.PlayerView`, without the event history, which no agent
reads and which would be most of what travels) and the seed of the decision's
random generator, derived one-way from the match seed (:func:`decision_seed`):
the same seeded game makes the same decisions.

Robustness: a worker that dies is replaced and the decision retried once on
another; a decision that takes longer than the timeout kills its worker (it is
replaced) and fails with :class:`AIUnavailable`, as do decisions while the pool
stops. :meth:`AIPool.close` stops the workers.

Workers are started with :mod:`multiprocessing`'s *spawn* method (a fresh
interpreter, no copy of the server's threads): a program that builds the app in
its main module needs the usual ``if __name__ == "__main__":`` guard.

>>> queue = FairQueue[str]()
>>> for game, group in [("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B")]:
...     queue.push(game, game, group=group)
>>> [queue.pop()[0] for _ in range(4)]
['a1', 'b1', 'a2', 'a3']
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import hashlib
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, Self, TypeVar

import anyio
import anyio.to_thread

from koikoi.agents import Agent, make_agent
from koikoi.agents.base import ActionValue, parse_agent_spec
from koikoi.agents.expert import EXPERT_TIME, LEVELS
from koikoi.agents.mcts import DEFAULT_TIME as MCTS_TIME
from koikoi.features.opponents import hint_values, preload_agent
from koikoi.game.errors import KoiKoiError
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView
from koikoi.server.limits import SecondsBudget
from koikoi.server.logs import LOGGER_NAME, log_event

__all__ = [
    "AIPool",
    "AIScheduler",
    "AIUnavailable",
    "Decision",
    "FairQueue",
    "Rating",
    "SeatTask",
    "capped_spec",
    "decision_seed",
    "default_workers",
]

log = logging.getLogger(LOGGER_NAME)
T = TypeVar("T")

START_TIMEOUT: Final = 300.0
"""Seconds a worker may take to start and load its agents."""
MAX_START_FAILURES: Final = 3
"""Workers in a row that die while starting before the pool gives up (and every
decision fails with :class:`AIUnavailable`)."""
WORKER_NICENESS: Final = 5
"""Workers run at a lower priority than the server, whose event loop answers people."""


def default_workers() -> int:
    """One worker per CPU core this process may use but one (for the event loop), at
    least one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 2
    return max(1, cores - 1)


def decision_seed(match_seed: int, seq: int) -> int:
    """The seed of the AI's random generator for the action at ``seq`` of the match
    seeded ``match_seed``: a hash, so the worker cannot learn the match seed (the deal)
    from it, and a seeded game replays exactly.

    >>> decision_seed(5, 0) == decision_seed(5, 0) != decision_seed(5, 1)
    True
    """
    digest = hashlib.sha256(f"koikoi-ai:{match_seed}:{seq}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


class AIUnavailable(KoiKoiError):
    """The pool could not make a decision: it timed out, its workers kept dying, or the
    pool is stopping."""


@dataclass(frozen=True, slots=True)
class SeatTask:
    """Everything a worker gets for one task on one seat's view (:class:`Decision`,
    :class:`Rating`). Build it with :meth:`of`, which keeps only what the seat may know.
    """

    agent: str
    """The agent spec (``"expert"``, ``"mcts:time=1"``; for hints an evaluator such as
    ``"expert:time=0.3"``)."""
    view: PlayerView
    """The seat's view, without its event history."""
    seed: int
    """The seed of the task's random generator (:func:`decision_seed`)."""

    @classmethod
    def of(cls, agent: str, view: PlayerView, seed: int) -> Self:
        """The task of ``agent`` for ``view`` (sent without its event history).

        Raises:
            ValueError: ``view`` is a spectator's or not the seat's turn.
        """
        return cls(agent, _own(view), seed)

    def capped(self, seconds: float | None) -> Self:
        """The same task with its search limited to ``seconds`` (:func:`capped_spec`;
        None: unchanged)."""
        if seconds is None:
            return self
        spec = capped_spec(self.agent, seconds)
        return self if spec == self.agent else dataclasses.replace(self, agent=spec)


@dataclass(frozen=True, slots=True)
class Decision(SeatTask):
    """One AI move: the action the agent chooses for the AI seat's view."""

    def run(self, agents: dict[str, Agent]) -> int:
        """Make the decision (in a worker) with the agents loaded there."""
        return choose(agents, self)


@dataclass(frozen=True, slots=True)
class Rating(SeatTask):
    """One hint: the agent's value of each legal action of the seat's view."""

    def run(self, agents: dict[str, Agent]) -> dict[int, ActionValue]:
        """Rate the actions (in a worker) with the agents loaded there.

        Raises:
            InvalidInputError: the agent cannot value moves.
        """
        return hint_values(_agent(agents, self.agent), self.view, random.Random(self.seed))


def _own(view: PlayerView) -> PlayerView:
    """``view`` without its event history (no agent reads it; it would be most of what
    travels to a worker); it must be the view of the seat to move."""
    if view.player is None or not view.legal_ids:
        raise ValueError(
            f"a worker needs the view of the seat to move, not player {view.player}'s "
            f"with {len(view.legal_ids)} legal actions"
        )
    return dataclasses.replace(view, history=()) if view.history else view


def _agent(agents: dict[str, Agent], spec: str) -> Agent:
    agent = agents.get(spec)
    if agent is None:
        agent = agents[spec] = make_agent(spec)
    return agent


def choose(agents: dict[str, Agent], decision: Decision) -> int:
    """The action of ``decision``'s agent (built and cached in ``agents`` on first
    use); a choice that is not legal is replaced by the first legal action."""
    agent = _agent(agents, decision.agent)
    action = int(agent.act(decision.view, random.Random(decision.seed)))
    if action not in decision.view.legal_ids:
        log_event(log, "agent chose an illegal action", logging.ERROR, agent=decision.agent)
        action = decision.view.legal_ids[0]
    return action


def load_agents(specs: Iterable[str], rules: Sequence[Rules]) -> dict[str, Agent]:
    """Build and preload the agents of ``specs`` (the kernel, the equity tables of
    ``rules``)."""
    agents: dict[str, Agent] = {}
    for spec in specs:
        agent = agents[spec] = make_agent(spec)
        preload_agent(agent, None)
        for r in rules:
            preload_agent(agent, r)
    return agents


# ------------------------------------------------------------------ scheduling


class FairQueue(Generic[T]):
    """Waiting decisions, at most one per game, taken in turn: round-robin over the
    groups (client addresses), and over the games of a group in the order they came.

    Pure data, no I/O.
    """

    def __init__(self) -> None:
        self._groups: collections.OrderedDict[str, collections.OrderedDict[str, T]]
        self._groups = collections.OrderedDict()
        self._group_of: dict[str, str] = {}
        self._front: set[str] = set()
        """Groups with a retry waiting (served before any other)."""

    def __len__(self) -> int:
        return len(self._group_of)

    def __contains__(self, game: object) -> bool:
        return game in self._group_of

    @property
    def groups(self) -> int:
        """How many groups have a game waiting."""
        return len(self._groups)

    def push(self, game: str, item: T, *, group: str | None = None, first: bool = False) -> None:
        """Queue ``item`` for ``game`` in ``group`` (default: a group of its own); behind
        the others unless ``first`` (a retry).

        Raises:
            ValueError: ``game`` already has an item waiting.
        """
        if game in self._group_of:
            raise ValueError(f"game {game!r} already has a decision waiting")
        key = game if group is None else group
        games = self._groups.get(key)
        if games is None:
            games = self._groups[key] = collections.OrderedDict()
        games[game] = item
        self._group_of[game] = key
        if first:
            self._groups.move_to_end(key, last=False)
            games.move_to_end(game, last=False)
            self._front.add(key)

    @property
    def waiting_groups(self) -> tuple[str, ...]:
        """The groups with a game waiting, in turn order."""
        return tuple(self._groups)

    def next_group(self, priority: Callable[[str], float] | None = None) -> str:
        """The group whose game :meth:`pop` takes next: one with a retry waiting, else
        the group of highest ``priority`` (group -> number; ties in turn), else the
        first in turn.

        Raises:
            IndexError: nothing is waiting.
        """
        if not self._groups:
            raise IndexError("pop from an empty FairQueue")
        for key in self._groups:
            if key in self._front:
                return key
        if priority is None:
            return next(iter(self._groups))
        return max(self._groups, key=priority)  # the first of the highest: in turn

    def pop(self, priority: Callable[[str], float] | None = None) -> tuple[str, T]:
        """The next game and its item: the first game of :meth:`next_group`, whose group
        then goes to the back.

        Raises:
            IndexError: nothing is waiting.
        """
        key = self.next_group(priority)
        self._front.discard(key)
        games = self._groups[key]
        game, item = games.popitem(last=False)
        del self._group_of[game]
        if games:
            self._groups.move_to_end(key)
        else:
            del self._groups[key]
        return game, item

    def remove(self, game: str) -> T | None:
        """Take ``game``'s item out of the queue; None if it has none waiting."""
        key = self._group_of.pop(game, None)
        if key is None:
            return None
        games = self._groups[key]
        item = games.pop(game)
        if not games:
            del self._groups[key]
            self._front.discard(key)
        return item

    def group_of(self, game: str) -> str | None:
        """The group ``game`` waits in (its own id for a game queued without one)."""
        return self._group_of.get(game)

    def waiting_in(self, group: str) -> int:
        """How many games of ``group`` are waiting."""
        games = self._groups.get(group)
        return len(games) if games is not None else 0


class AIScheduler(Generic[T]):
    """Which waiting AI task a free worker takes next, and how long it may search.

    A :class:`FairQueue` ordered by the :class:`~.limits.SecondsBudget` of each group
    (client address): the groups within their budget first, the one that used the
    workers least lately first (an address with nothing queued lately goes before
    those that keep the workers busy), then the groups over their budget, in turn.

    A search is *capped* at ``slice`` seconds (:func:`capped_spec`) when its group is
    over its budget, when another group within its budget is waiting, or when its
    group has more games waiting (an address that keeps several AI games going at
    once searches in slices, so that an address that comes along meanwhile waits a
    slice at most): a worker is then never held long by one address while another
    waits or may come, so an address's AI answers stay fast however busy the others
    keep the workers. Pure: no I/O, and the budget's clock is injected.

    >>> now = [0.0]
    >>> budget = SecondsBudget(per_minute=30.0, burst=5.0, clock=lambda: now[0])
    >>> scheduler = AIScheduler[str](budget, slice=0.25)
    >>> budget.charge("attacker", 20.0)
    >>> scheduler.push("a1", "a1", group="attacker")
    >>> scheduler.push("v1", "v1", group="victim")
    >>> scheduler.pop()  # the victim first, searching as long as it likes
    ('v1', 'v1', None)
    >>> scheduler.pop()  # the attacker, over its budget: a short search
    ('a1', 'a1', 0.25)
    >>> for game in ("b1", "b2"):
    ...     scheduler.push(game, game, group="busy")
    >>> scheduler.pop()  # within its budget, but another of its games waits
    ('b1', 'b1', 0.25)
    >>> scheduler.pop()  # its last: as long as it likes
    ('b2', 'b2', None)

    Raises:
        ValueError: ``slice`` is not positive.
    """

    def __init__(self, budget: SecondsBudget | None, slice: float = 0.25) -> None:
        if not slice > 0:
            raise ValueError(f"the AI time slice must be a positive number, not {slice!r}")
        self.budget = budget
        self.slice = slice
        self.queue: FairQueue[T] = FairQueue()

    def __len__(self) -> int:
        return len(self.queue)

    def push(self, game: str, item: T, *, group: str | None = None, first: bool = False) -> None:
        """As :meth:`FairQueue.push`."""
        self.queue.push(game, item, group=group, first=first)

    def remove(self, game: str) -> T | None:
        """As :meth:`FairQueue.remove`."""
        return self.queue.remove(game)

    def pop(self) -> tuple[str, T, float | None]:
        """The next game, its item, and the seconds its search may take (None: as long
        as its agent likes).

        Raises:
            IndexError: nothing is waiting.
        """
        budget = self.budget
        if budget is None:
            game, item = self.queue.pop()
            return game, item, None

        def priority(group: str) -> float:
            if not budget.within(group):
                return -math.inf  # over budget: all alike, in turn
            return -budget.recent(group)

        key = self.queue.next_group(priority)
        others = [g for g in self.queue.waiting_groups if g != key and budget.within(g)]
        busy = self.queue.waiting_in(key) > 1
        cap = self.slice if others or busy or not budget.within(key) else None
        game, item = self.queue.pop(priority)
        return game, item, cap

    def charge(self, group: str, seconds: float) -> None:
        """``group`` used a worker for ``seconds``."""
        if self.budget is not None:
            self.budget.charge(group, seconds)


def capped_spec(spec: str, seconds: float) -> str:
    """``spec`` with its search limited to ``seconds``: a time-bound search (the expert,
    ``mcts:time=T``, the levels that are the expert) gets ``time=seconds`` if it would
    think longer; any other spec is returned as it is.

    >>> capped_spec("expert", 0.25), capped_spec("level:7", 0.5), capped_spec("greedy", 0.1)
    ('expert:time=0.25', 'level:7', 'greedy')
    >>> capped_spec("mcts:time=2,rollouts=1", 0.25), capped_spec("mcts:iterations=200", 0.1)
    ('mcts:time=0.25,rollouts=1', 'mcts:iterations=200')
    """
    try:
        kind, params, rest = parse_agent_spec(spec)
    except KoiKoiError:
        return spec
    if kind == "level":
        text = rest.strip()
        if not text.isdigit() or not 1 <= int(text) <= len(LEVELS):
            return spec
        level = LEVELS[int(text) - 1]
        if level.temperature:
            return spec
        capped = capped_spec(level.spec, seconds)
        return spec if capped == level.spec else capped
    if kind not in ("expert", "mcts"):
        return spec
    if "time" in params:
        try:
            limit = float(params["time"])
        except ValueError:
            return spec
    elif "iterations" in params:
        return spec  # bound by its iterations, not by time
    else:
        limit = EXPERT_TIME if kind == "expert" else MCTS_TIME
    if limit <= seconds:
        return spec
    params["time"] = f"{seconds:g}"
    return f"{kind}:" + ",".join(f"{k}={v}" for k, v in params.items())


# --------------------------------------------------------------------- workers


class _Crashed(Exception):
    """The worker died (or its pipe broke)."""


class _TimedOut(Exception):
    """The worker did not answer in time."""


class _Failed(Exception):
    """The agent raised: the worker is fine, the decision is not."""


def _worker_main(
    conn: multiprocessing.connection.Connection, specs: tuple[str, ...], rules: tuple[Rules, ...]
) -> None:
    """A worker process: load the agents, say ``ready``, then answer decisions until
    ``None`` or a closed pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
    try:
        agents = load_agents(specs, rules)
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        try:
            reply: tuple[str, Any] = ("ok", request.run(agents))
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except OSError:  # the server is gone: so are we
            return


class _Worker:
    """One worker: a process (or, in-process, a thread with agents of its own)."""

    def ask_to_stop(self) -> None:
        self.dead = True

    def __init__(self, index: int) -> None:
        self.index = index
        self.ready = False
        self.busy = False
        self.dead = False
        self.pid: int | None = None

    async def start(self) -> None:
        raise NotImplementedError

    async def call(self, request: _Request, timeout: float) -> Any:
        raise NotImplementedError

    def stop(self, wait: float) -> None:
        raise NotImplementedError


class _ProcessWorker(_Worker):
    def __init__(
        self,
        index: int,
        context: Any,
        specs: tuple[str, ...],
        rules: tuple[Rules, ...],
        limiter: anyio.CapacityLimiter,
    ) -> None:
        super().__init__(index)
        parent, child = context.Pipe()
        self.conn: multiprocessing.connection.Connection = parent
        self.process = context.Process(
            target=_worker_main,
            args=(child, specs, rules),
            name=f"koikoi-ai-{index}",
            daemon=True,
        )
        self.process.start()
        child.close()
        self.pid = self.process.pid
        self._limiter = limiter

    async def start(self) -> None:
        def wait() -> tuple[str, Any]:
            if not self.conn.poll(START_TIMEOUT):
                raise _TimedOut
            message: tuple[str, Any] = self.conn.recv()
            return message

        try:
            kind, value = await anyio.to_thread.run_sync(wait, limiter=self._limiter)
        except (EOFError, OSError) as exc:
            raise _Crashed from exc
        if kind != "ready":
            raise _Failed(value)
        self.ready = True

    async def call(self, request: _Request, timeout: float) -> Any:
        def roundtrip() -> tuple[str, Any]:
            try:
                self.conn.send(request)
                if not self.conn.poll(timeout):
                    raise _TimedOut
                message: tuple[str, Any] = self.conn.recv()
            except (EOFError, OSError) as exc:
                raise _Crashed from exc
            return message

        kind, value = await anyio.to_thread.run_sync(roundtrip, limiter=self._limiter)
        if kind != "ok":
            raise _Failed(value)
        return value

    def ask_to_stop(self) -> None:
        """Tell the process to stop after its current decision (not blocking)."""
        self.dead = True
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)

    def stop(self, wait: float) -> None:
        """Ask the process to stop, then terminate it, then kill it (blocking)."""
        self.ask_to_stop()
        self.process.join(wait)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(1.0)
        if self.process.is_alive():  # pragma: no cover - ignores SIGTERM
            self.process.kill()
            self.process.join(1.0)
        self.conn.close()


class _ThreadWorker(_Worker):
    """In-process: the decision runs in a thread of the server (tests, one-core
    machines). A decision that times out is abandoned to its thread."""

    def __init__(self, index: int, specs: tuple[str, ...], rules: tuple[Rules, ...]) -> None:
        super().__init__(index)
        self.pid = os.getpid()
        self._specs = specs
        self._rules = rules
        self._agents: dict[str, Agent] = {}

    async def start(self) -> None:
        self._agents = await anyio.to_thread.run_sync(load_agents, self._specs, self._rules)
        self.ready = True

    async def call(self, request: _Request, timeout: float) -> Any:
        try:
            with anyio.fail_after(timeout):
                return await anyio.to_thread.run_sync(
                    request.run, self._agents, abandon_on_cancel=True
                )
        except TimeoutError:
            raise _TimedOut from None
        except Exception as exc:
            raise _Failed(f"{type(exc).__name__}: {exc}") from exc

    def stop(self, wait: float) -> None:
        self.dead = True


_Request = Decision | Rating


@dataclass(eq=False, slots=True)
class _Job:
    request: _Request
    group: str | None
    timeout: float
    future: asyncio.Future[Any]
    attempts: int = 0


class AIPool:
    """Worker processes that make the search AIs' decisions, shared fairly by games.

    Args:
        workers: how many worker processes (:func:`default_workers` is a good size).
        agents: the agent specs each worker loads at start-up (others are built on
            first use).
        rules: the rule sets whose match-equity tables each worker loads at start-up.
        timeout: seconds a decision may take; then its worker is replaced and the
            decision fails.
        retries: how many times a decision is retried on a new worker when its worker
            dies.
        in_process: run the decisions in threads of this process instead (tests).
        budget: the workers' seconds each group (client address) may use; None: no
            budget, the groups simply take turns (:class:`AIScheduler`).
        slice: seconds a search may take when its group is over its budget or another
            group within its budget waits.
    """

    def __init__(
        self,
        workers: int,
        *,
        agents: Iterable[str] = (),
        rules: Iterable[Rules] = (),
        timeout: float = 30.0,
        retries: int = 1,
        in_process: bool = False,
        budget: SecondsBudget | None = None,
        slice: float = 0.25,
    ) -> None:
        if workers < 1:
            raise ValueError(f"an AI pool needs at least one worker, not {workers}")
        if not timeout > 0:
            raise ValueError(f"the decision timeout must be positive, not {timeout}")
        self.size = workers
        self.specs = tuple(dict.fromkeys(agents))
        self.rules = tuple(rules)
        self.timeout = timeout
        self.retries = retries
        self.in_process = in_process
        self._context = multiprocessing.get_context("spawn")
        self._limiter = anyio.CapacityLimiter(2 * workers + 2)
        """Threads waiting on the workers' pipes (one per worker, and replacements)."""
        self._workers: list[_Worker] = []
        self._queue: AIScheduler[_Job] = AIScheduler(budget, slice)
        self._jobs: dict[str, _Job] = {}
        """Game -> its decision in flight (queued or running)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._counter = 0
        self._start_failures = 0
        self._broken: str | None = None
        self._closed = False
        self._started = False
        self._ready = asyncio.Event()
        self.counts: collections.Counter[str] = collections.Counter()
        """``decisions``, ``retries``, ``timeouts``, ``failures``, ``restarts``,
        ``capped`` (searches cut to the slice)."""

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the workers; they load their agents in the background (see
        :meth:`wait_ready`)."""
        if self._started:
            return
        self._started = True
        for _ in range(self.size):
            self._spawn()

    async def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Return once every worker has loaded its agents.

        Raises:
            TimeoutError: not in ``timeout`` seconds.
            AIUnavailable: the workers cannot start.
        """
        with anyio.fail_after(timeout):
            while not all(w.ready for w in self._workers) or not self._workers:
                if self._closed:
                    raise AIUnavailable("the AI workers are stopped")
                if self._broken is not None:
                    raise AIUnavailable(self._broken)
                self._ready.clear()
                await self._ready.wait()

    async def close(self) -> None:
        """Stop the workers; decisions waiting or running fail with :class:`AIUnavailable`."""
        if self._closed:
            return
        self._closed = True
        while len(self._queue):
            _, job, _ = self._queue.pop()
            self._fail(job, AIUnavailable("the server is stopping"))
        workers, self._workers = self._workers, []
        if workers:
            await anyio.to_thread.run_sync(self._stop_all, workers)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for job in list(self._jobs.values()):
            self._fail(job, AIUnavailable("the server is stopping"))
        self._ready.set()

    @staticmethod
    def _stop_all(workers: list[_Worker], wait: float = 2.0) -> None:
        """Ask every worker to stop (a reply that comes now is not retried), give them
        ``wait`` seconds in all, then terminate those still running."""
        for w in workers:
            w.ask_to_stop()
        deadline = time.monotonic() + wait
        for w in workers:
            w.stop(max(0.0, deadline - time.monotonic()))

    def _spawn(self) -> _Worker:
        self._counter += 1
        worker: _Worker
        if self.in_process:
            worker = _ThreadWorker(self._counter, self.specs, self.rules)
        else:
            worker = _ProcessWorker(
                self._counter, self._context, self.specs, self.rules, self._limiter
            )
        self._workers.append(worker)
        self._track(self._boot(worker))
        return worker

    async def _boot(self, worker: _Worker) -> None:
        started = time.perf_counter()
        try:
            await worker.start()
        except Exception as exc:  # _Crashed, _Failed, _TimedOut or a loading error
            if self._closed or worker.dead:
                return
            self._start_failures += 1
            if isinstance(exc, _Crashed):
                detail = "a worker process exited while starting (its error is logged above)"
            elif isinstance(exc, _TimedOut):
                detail = f"a worker took over {START_TIMEOUT:g} s to start"
            else:
                detail = str(exc) or type(exc).__name__
            log_event(
                log, "AI worker did not start", logging.ERROR, worker=worker.index, error=detail
            )
            self._retire(worker)
            if self._start_failures >= MAX_START_FAILURES:
                self._give_up(f"the AI workers cannot start ({detail})")
            else:
                self._spawn()
            return
        self._start_failures = 0
        log_event(
            log,
            "AI worker ready",
            logging.DEBUG,
            worker=worker.index,
            pid=worker.pid,
            ms=round((time.perf_counter() - started) * 1000),
        )
        self._ready.set()
        self._dispatch()

    def _give_up(self, reason: str) -> None:
        self._broken = reason
        while len(self._queue):
            _, job, _ = self._queue.pop()
            self._fail(job, AIUnavailable(reason))
        self._ready.set()

    def _retire(self, worker: _Worker) -> None:
        """Forget ``worker`` and stop it in a thread (it may be stuck in a search)."""
        if worker in self._workers:
            self._workers.remove(worker)
        worker.dead = True
        self._track(anyio.to_thread.run_sync(worker.stop, 1.0))

    def _track(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ decisions

    async def decide(self, game: str, decision: Decision, *, group: str | None = None) -> int:
        """The action ``decision``'s agent chooses, made by a worker when ``game``'s turn
        comes (``group``: the client address that created the game).

        Raises:
            AIUnavailable: the decision timed out, its workers kept dying, the pool is
                stopping or cannot start.
            ValueError: ``game`` already has a decision in flight.
        """
        action: int = await self._submit(game, decision, group, self.timeout)
        return action

    async def rate(
        self,
        key: str,
        rating: Rating,
        *,
        group: str | None = None,
        timeout: float | None = None,
    ) -> dict[int, ActionValue]:
        """The values of ``rating``'s actions (a hint), made by a worker in turn with
        the decisions; ``key`` (one per seat) has one rating in flight at most.

        Raises:
            AIUnavailable: as :meth:`decide`, or the agent cannot value moves.
            ValueError: ``key`` already has a rating in flight.
        """
        values: dict[int, ActionValue] = await self._submit(
            key, rating, group, self.timeout if timeout is None else timeout
        )
        return values

    async def _submit(self, game: str, request: _Request, group: str | None, timeout: float) -> Any:
        if self._closed:
            raise AIUnavailable("the server is stopping")
        if self._broken is not None:
            raise AIUnavailable(self._broken)
        if game in self._jobs:
            raise ValueError(f"game {game!r} already has an AI decision in flight")
        job = _Job(request, group, timeout, asyncio.get_running_loop().create_future())
        self._jobs[game] = job
        self._queue.push(game, job, group=group)
        self._dispatch()
        try:
            return await asyncio.shield(job.future)
        except asyncio.CancelledError:
            if self._queue.remove(game) is not None:  # a running one finishes, unheard
                self._jobs.pop(game, None)
            raise

    def _dispatch(self) -> None:
        if self._closed:
            return
        for worker in self._workers:
            if not len(self._queue):
                return
            if worker.ready and not worker.busy and not worker.dead:
                game, job, cap = self._queue.pop()
                worker.busy = True
                if cap is not None:
                    self.counts["capped"] += 1
                self._track(self._run(worker, game, job, cap))

    async def _run(self, worker: _Worker, game: str, job: _Job, cap: float | None) -> None:
        started = time.monotonic()
        try:
            result = await worker.call(job.request.capped(cap), job.timeout)
        except _Crashed:
            if self._closed or worker.dead:
                self._finish(game, job, error=AIUnavailable("the server is stopping"))
                return
            self.counts["restarts"] += 1
            log_event(log, "AI worker died", logging.WARNING, worker=worker.index, pid=worker.pid)
            self._retire(worker)
            self._spawn()
            job.attempts += 1
            if job.attempts <= self.retries:
                self.counts["retries"] += 1
                self._queue.push(game, job, group=job.group, first=True)
            else:
                self._finish(game, job, error=AIUnavailable("the AI worker stopped; try again"))
        except _TimedOut:
            self.counts["timeouts"] += 1
            self.counts["restarts"] += 1
            log_event(
                log,
                "AI decision timed out",
                logging.WARNING,
                worker=worker.index,
                agent=job.request.agent,
                timeout=job.timeout,
            )
            self._retire(worker)
            if not self._closed:
                self._spawn()
            self._finish(
                game, job, error=AIUnavailable(f"the AI took longer than {job.timeout:g} s")
            )
        except _Failed as exc:
            worker.busy = False
            self._finish(game, job, error=AIUnavailable(f"the AI failed: {exc}"))
        else:
            worker.busy = False
            self.counts["decisions"] += 1
            self._finish(game, job, result=result)
        finally:
            self._queue.charge(job.group or game, time.monotonic() - started)
            self._dispatch()

    def _finish(
        self, game: str, job: _Job, *, result: Any = None, error: Exception | None = None
    ) -> None:
        if self._jobs.get(game) is job:
            del self._jobs[game]
        if job.future.done():
            return
        if error is not None:
            self.counts["failures"] += 1
            job.future.set_exception(error)
            job.future.exception()  # retrieved, even when its caller was cancelled
        else:
            job.future.set_result(result)

    def _fail(self, job: _Job, error: Exception) -> None:
        for game, j in list(self._jobs.items()):
            if j is job:
                self._finish(game, job, error=error)
                return
        if not job.future.done():
            job.future.set_exception(error)
            job.future.exception()

    # -------------------------------------------------------------- figures

    @property
    def pids(self) -> list[int]:
        """The process ids of the live workers (this process's, in-process)."""
        return [w.pid for w in self._workers if w.pid is not None and not w.dead]

    def stats(self) -> dict[str, int]:
        """``ai_workers`` (started), ``ai_workers_ready``, ``ai_workers_busy``,
        ``ai_queue`` (decisions waiting), ``ai_queue_groups`` (addresses waiting)."""
        live = [w for w in self._workers if not w.dead]
        return {
            "ai_workers": len(live),
            "ai_workers_ready": sum(w.ready for w in live),
            "ai_workers_busy": sum(w.busy for w in live),
            "ai_queue": len(self._queue),
            "ai_queue_groups": self._queue.queue.groups,
        }
