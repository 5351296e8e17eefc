"""Rate limits: a token bucket, one bucket per key (a client address), and a budget of
seconds per key (:class:`SecondsBudget`: the AI workers' time an address may use)."""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable

__all__ = ["BucketsByKey", "SecondsBudget", "TokenBucket"]


class TokenBucket:
    """A token bucket: ``take()`` is True while tokens remain; they refill at ``rate``/s."""

    __slots__ = ("capacity", "rate", "tokens", "updated")

    def __init__(self, capacity: float, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self.tokens = capacity
        self.updated = time.monotonic()

    def take(self, n: float = 1.0) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False


class BucketsByKey:
    """One :class:`TokenBucket` per key (a client address), the least recently used
    forgotten beyond ``keep`` keys.

    >>> buckets = BucketsByKey(capacity=2, rate=0.0)
    >>> [buckets.take("a"), buckets.take("a"), buckets.take("a"), buckets.take("b")]
    [True, True, False, True]
    """

    def __init__(self, capacity: float, rate: float, keep: int = 10_000) -> None:
        self.capacity = capacity
        self.rate = rate
        self.keep = keep
        self._buckets: collections.OrderedDict[str, TokenBucket] = collections.OrderedDict()

    def take(self, key: str) -> bool:
        """Take one token from the bucket of ``key`` (a full one if ``key`` is new)."""
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(self.capacity, self.rate)
            self._buckets[key] = bucket
            if len(self._buckets) > self.keep:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket.take()


class SecondsBudget:
    """Seconds of a shared resource (the AI workers) that each key (a client address)
    may use: ``per_minute`` seconds a minute, of which up to ``burst`` can be saved up.

    A key is charged after the fact, with the seconds it really used, so its balance
    may go below zero (a debt, paid off as time passes); a key is *within* its budget
    while its balance is positive. A new key starts with a full balance. Its
    :meth:`recent` use (the seconds it used, fading over a minute) says who has used
    least lately. ``clock`` (seconds, monotonic) is injected by tests.

    >>> now = [0.0]
    >>> budget = SecondsBudget(per_minute=30.0, burst=10.0, clock=lambda: now[0])
    >>> budget.charge("a", 12.0)
    >>> budget.within("a"), budget.balance("a"), budget.within("b")
    (False, -2.0, True)
    >>> now[0] = 60.0  # a minute later: 30 s more, but no more than the burst
    >>> budget.balance("a")
    10.0

    Raises:
        ValueError: ``per_minute`` or ``burst`` is not positive.
    """

    def __init__(
        self,
        per_minute: float,
        burst: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        keep: int = 10_000,
    ) -> None:
        burst = per_minute if burst is None else burst
        if not per_minute > 0 or not burst > 0:
            raise ValueError(
                f"an AI time budget needs positive seconds a minute and burst, not "
                f"{per_minute!r} and {burst!r}"
            )
        self.per_minute = per_minute
        self.burst = burst
        self.keep = keep
        self._clock = clock
        self._balances: collections.OrderedDict[str, tuple[float, float, float]]
        self._balances = collections.OrderedDict()
        """Key -> (balance, recent use, when they were last brought up to date)."""

    def _now(self, key: str) -> tuple[float, float]:
        entry = self._balances.get(key)
        if entry is None:
            return self.burst, 0.0
        balance, used, updated = entry
        elapsed = max(0.0, self._clock() - updated)
        return (
            min(self.burst, balance + elapsed * self.per_minute / 60.0),
            used * math.exp(-elapsed / 60.0),
        )

    def balance(self, key: str) -> float:
        """The seconds ``key`` may still use now (negative: a debt)."""
        return self._now(key)[0]

    def recent(self, key: str) -> float:
        """The seconds ``key`` used lately: each charge fades by a factor e a minute."""
        return self._now(key)[1]

    def within(self, key: str) -> bool:
        """Whether ``key`` has seconds left."""
        return self.balance(key) > 0

    def charge(self, key: str, seconds: float) -> None:
        """``key`` used ``seconds`` (the least recently charged keys beyond ``keep`` are
        forgotten: they start afresh)."""
        balance, used = self._now(key)
        seconds = max(0.0, seconds)
        self._balances[key] = (balance - seconds, used + seconds, self._clock())
        self._balances.move_to_end(key)
        if len(self._balances) > self.keep:
            self._balances.popitem(last=False)
