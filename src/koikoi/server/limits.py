"""Rate limits: a token bucket, and one bucket per key (a client address)."""

from __future__ import annotations

import collections
import time

__all__ = ["BucketsByKey", "TokenBucket"]


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
