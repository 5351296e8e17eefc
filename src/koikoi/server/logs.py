"""Structured logs: one JSON object per line, through :mod:`logging`.

Log calls pass their fields in ``extra={"fields": {...}}``; :class:`JsonFormatter`
writes them next to the time, level, logger and message. Tokens are never
passed to a log call; as a second line of defence any field whose name
contains ``token`` or ``invite`` is replaced by ``"[redacted]"``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Final

__all__ = ["JsonFormatter", "LogThrottle", "configure_logging", "fault_fields", "log_event"]

LOGGER_NAME: Final = "koikoi.server"
_SECRET_WORDS: Final = ("token", "invite", "secret", "password")


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            for key, value in fields.items():
                if any(word in key.lower() for word in _SECRET_WORDS):
                    value = "[redacted]"
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """Send ``koikoi.server`` and uvicorn's error log to ``stream`` as JSON lines."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in (LOGGER_NAME, "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    # The access log would print request paths; the server logs requests itself.
    logging.getLogger("uvicorn.access").disabled = True


def log_event(logger: logging.Logger, msg: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log ``msg`` with structured ``fields``."""
    if logger.isEnabledFor(level):
        logger.log(level, msg, extra={"fields": fields})


def fault_fields(exc: BaseException) -> dict[str, str]:
    """What a log line says about an unexpected exception: its type and where it was
    raised (``file.py:line``), never its message or traceback (either may quote input).

    >>> try:
    ...     {}["x"]
    ... except KeyError as exc:
    ...     fault_fields(exc)["error"]
    'KeyError'
    """
    tb = exc.__traceback__
    where = "?"
    if tb is not None:
        while tb.tb_next is not None:
            tb = tb.tb_next
        where = f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"
    return {"error": type(exc).__name__, "where": where}


class LogThrottle:
    """At most one log line per key (an address and a reason, say) every ``every``
    seconds: a flood of refused connections writes a few lines, not one each.

    :meth:`admit` answers ``None`` for an event to leave out of the log, or how many
    events of that key were left out since its last line (the line says so).

    >>> now = [0.0]
    >>> throttle = LogThrottle(every=10.0, clock=lambda: now[0])
    >>> [throttle.admit("a") for _ in range(3)]
    [0, None, None]
    >>> now[0] = 11.0
    >>> throttle.admit("a"), throttle.admit("b")
    (2, 0)

    Args:
        every: seconds between two lines of one key.
        max_keys: keys remembered; beyond, the ones quiet for ``every`` seconds are
            forgotten (the memory stays bounded whatever the flood).
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        every: float = 10.0,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.every = every
        self.max_keys = max_keys
        self.clock = clock
        self._keys: dict[Hashable, list[float]] = {}
        """key -> [time of its last line, events left out since]."""

    def admit(self, key: Hashable) -> int | None:
        now = self.clock()
        entry = self._keys.get(key)
        if entry is not None and now - entry[0] < self.every:
            entry[1] += 1
            return None
        left_out = int(entry[1]) if entry is not None else 0
        if entry is None and len(self._keys) >= self.max_keys:
            horizon = now - self.every
            self._keys = {k: v for k, v in self._keys.items() if v[0] >= horizon}
            if len(self._keys) >= self.max_keys:
                return None  # a flood of distinct keys: counted, not logged
        self._keys[key] = [now, 0]
        return left_out
