"""The server's counters and action latencies, for ``/healthz`` and ``/metrics``."""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["Metrics"]


def _quantile(data: list[float], q: float) -> float:
    """The ``q`` quantile of ``data`` (sorted, not empty): its nearest-rank element.

    >>> _quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5)
    3.0
    """
    return data[min(len(data) - 1, max(0, round(q * (len(data) - 1))))]


class Metrics:
    """Counters and the server-side action latencies (receive -> acknowledgement sent)."""

    def __init__(self, keep: int = 200_000) -> None:
        self.latencies: collections.deque[float] = collections.deque(maxlen=keep)
        """The latest latencies (the quantiles are over these)."""
        self.latency_count = 0
        self.latency_sum = 0.0
        self.counters: collections.Counter[str] = collections.Counter()
        self.started = time.time()

    def latency(self, seconds: float) -> None:
        self.latencies.append(seconds)
        self.latency_count += 1
        self.latency_sum += seconds

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] += n

    @staticmethod
    def worker(node: str | None = None) -> dict[str, str]:
        """Which server process answers: its process id, and its cluster node id on
        PostgreSQL (under ``--workers N`` each process counts only its own figures)."""
        out = {"pid": str(os.getpid())}
        if node is not None:
            out["node"] = node
        return out

    def snapshot(self) -> dict[str, Any]:
        """The counters and the latency quantiles (milliseconds), for ``/healthz``."""
        data = sorted(self.latencies)

        def pct(q: float) -> float | None:
            return None if not data else round(_quantile(data, q) * 1000, 3)

        return {
            "uptime_s": round(time.time() - self.started, 1),
            "cpu_s": round(time.process_time(), 3),
            "action_latency_ms": {
                "count": len(data),
                "p50": pct(0.50),
                "p95": pct(0.95),
                "p99": pct(0.99),
                "max": round(data[-1] * 1000, 3) if data else None,
            },
            "counters": dict(self.counters),
        }

    def prometheus(
        self, gauges: Mapping[str, tuple[float, str]], worker: Mapping[str, str] | None = None
    ) -> str:
        """The metrics in Prometheus' text format (version 0.0.4): ``worker`` (which
        process answers, :meth:`worker`) as ``koikoi_worker_info{pid=...}``, ``gauges``
        (name -> (value, help), each ``koikoi_<name>``), the counters as
        ``koikoi_events_total{event=...}``, the action latency as a summary, uptime and
        CPU time."""
        lines: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")

        info = self.worker() if worker is None else dict(worker)
        family("koikoi_worker_info", "gauge", "the server process that answered (1)")
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(info.items()))
        lines.append(f"koikoi_worker_info{{{labels}}} 1")

        for key, (value, help_text) in gauges.items():
            name = f"koikoi_{key}"
            family(name, "gauge", help_text)
            lines.append(f"{name} {value:g}")
        family("koikoi_events_total", "counter", "things that happened, by event")
        for key in sorted(self.counters):
            lines.append(f'koikoi_events_total{{event="{key}"}} {self.counters[key]}')
        name = "koikoi_action_latency_seconds"
        family(name, "summary", "receive to acknowledgement sent, per accepted action")
        data = sorted(self.latencies)
        for q in (0.5, 0.95, 0.99):
            if data:
                lines.append(f'{name}{{quantile="{q:g}"}} {_quantile(data, q):.6f}')
        lines.append(f"{name}_sum {self.latency_sum:.6f}")
        lines.append(f"{name}_count {self.latency_count}")
        family("koikoi_uptime_seconds", "gauge", "seconds since the server started")
        lines.append(f"koikoi_uptime_seconds {time.time() - self.started:.1f}")
        family("koikoi_process_cpu_seconds_total", "counter", "CPU time of the process")
        lines.append(f"koikoi_process_cpu_seconds_total {time.process_time():.3f}")
        return "\n".join(lines) + "\n"
