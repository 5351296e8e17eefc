"""Running an arena: pair jobs on local processes or on Ray, in pair order, with a progress bar."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from koikoi.game.errors import InvalidInputError
from koikoi.lab.arena.config import ArenaConfig
from koikoi.lab.arena.play import PairJob, agent_for, close_agent, run_pair
from koikoi.lab.arena.report import sprt_status, summarize
from koikoi.lab.arena.results import ArenaResult, PairResult


def pair_jobs(config: ArenaConfig) -> Iterator[PairJob]:
    """The pair jobs of ``config``, in pair order."""
    rules = config.rules.to_dict()
    records = str(config.records) if config.records is not None else None
    for i in range(config.units):
        yield PairJob(
            i, config.agents, rules, config.seed, config.duplicate, records, config.common_rng
        )


def run_local(config: ArenaConfig) -> Iterator[PairResult]:
    """Pair results in pair order; stops producing when the consumer stops asking."""
    jobs = pair_jobs(config)
    if config.workers == 1:
        for job in jobs:
            yield run_pair(job)
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    ctx = multiprocessing.get_context("spawn")
    pending: dict[int, Future[PairResult]] = {}
    ahead = config.workers * 4
    with ProcessPoolExecutor(max_workers=config.workers, mp_context=ctx) as pool:
        try:
            nxt = 0
            for job in jobs:
                pending[job.pair] = pool.submit(run_pair, job)
                if len(pending) >= ahead:
                    break
            total = config.units
            submitted = len(pending)
            while nxt < total:
                result = pending.pop(nxt).result()
                nxt += 1
                if submitted < total:
                    job = next(jobs)
                    pending[job.pair] = pool.submit(run_pair, job)
                    submitted += 1
                yield result
        finally:
            for fut in pending.values():
                fut.cancel()


def run_ray(config: ArenaConfig) -> Iterator[PairResult]:
    """Pair results in pair order from Ray tasks (a local cluster is started if none is)."""
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise InvalidInputError(
            "--backend ray needs ray: pip install 'koikoi[ray]' (ray>=2.30)"
        ) from None
    started = not ray.is_initialized()
    if started:
        ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
    remote = ray.remote(run_pair)
    jobs = pair_jobs(config)
    pending: dict[int, Any] = {}
    ahead = max(config.workers, 1) * 4
    total = config.units
    for job in jobs:
        pending[job.pair] = remote.remote(job)
        if len(pending) >= ahead:
            break
    submitted = len(pending)
    try:
        for nxt in range(total):
            result: PairResult = ray.get(pending.pop(nxt))
            if submitted < total:
                job = next(jobs)
                pending[job.pair] = remote.remote(job)
                submitted += 1
            yield result
    finally:
        for ref in pending.values():
            ray.cancel(ref)
        if started:
            ray.shutdown()


class _Progress:
    """A one-line plain-text progress bar on a stream."""

    def __init__(self, stream: IO[str], total: int, label: str) -> None:
        self.stream = stream
        self.total = total
        self.label = label
        self.start = time.perf_counter()
        self.last = 0.0

    def update(self, done: int, pairs: Sequence[PairResult], *, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < 0.2:
            return
        self.last = now
        width = 24
        filled = int(width * done / max(self.total, 1))
        wins = sum(1 for p in pairs for m in p.matches if m.winner == 0)
        n = sum(len(p.matches) for p in pairs)
        rounds = sum(p.rounds for p in pairs)
        net = sum(p.net for p in pairs) / rounds if rounds else 0.0
        rate = f"{wins / n:.1%}" if n else "-"
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
            f"A wins {rate}, net {net:+.2f}/round, {now - self.start:.0f}s "
        )
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def run_arena(
    config: ArenaConfig,
    *,
    progress: IO[str] | None = None,
    on_pair: Callable[[PairResult], None] | None = None,
) -> ArenaResult:
    """Play the arena and summarize it.

    Args:
        config: what to play.
        progress: a stream for a progress bar (``None``: no progress bar).
        on_pair: called with each pair result, in pair order.

    Raises:
        InvalidInputError: a bad setting or agent spec.
    """
    config.validate()
    for spec in config.agents:  # fail early on a bad spec, in this process
        agent, fresh = agent_for(spec)
        if fresh:
            close_agent(agent)
    if config.records is not None:
        try:
            config.records.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(
                f"cannot create records folder {str(config.records)!r}: {exc.strerror or exc}"
            ) from None
    start = time.perf_counter()
    stream = run_ray(config) if config.backend == "ray" else run_local(config)
    bar = _Progress(progress, config.units, "arena") if progress is not None else None
    pairs: list[PairResult] = []
    sprt_state: dict[str, Any] | None = None
    try:
        for result in stream:
            pairs.append(result)
            if on_pair is not None:
                on_pair(result)
            if bar is not None:
                bar.update(len(pairs), pairs)
            if config.sprt is not None:
                sprt_state = sprt_status(config, pairs)
                if sprt_state["result"] != "inconclusive":
                    break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
        if bar is not None:
            bar.update(len(pairs), pairs, force=True)
            bar.close()
    elapsed = time.perf_counter() - start
    summary = summarize(config, pairs)
    if config.sprt is not None:
        summary["sprt"] = sprt_state if sprt_state is not None else sprt_status(config, pairs)
    summary["elapsed_s"] = round(elapsed, 3)
    return ArenaResult(config, pairs, summary, elapsed)
