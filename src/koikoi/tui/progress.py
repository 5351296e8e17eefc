"""The terminal game's one-line summary of yaku progress (:mod:`koikoi.features.progress`)."""

from __future__ import annotations

from rich.cells import cell_len

from koikoi.features.progress import YakuProgress
from koikoi.game.scoring import YAKU_ORDER

__all__ = ["progress_line"]


def progress_line(
    rows: list[YakuProgress], *, limit: int | None = None, width: int | None = None
) -> str:
    """The most advanced rows on one line: held yaku first, then by share of cards held.

    Impossible yaku and yaku with no card yet are left out (``"—"`` when nothing is
    left); at most ``limit`` rows, and only as many as fit in ``width`` cells.

    >>> rows = [YakuProgress("tane", 3, 5, 1, True), YakuProgress("kasu", 9, 10, 1, True)]
    >>> progress_line(rows)
    'Kasu 9/10 · Tane 3/5'
    >>> progress_line(rows, width=12)
    'Kasu 9/10'
    """
    shown = [r for r in rows if r.done or (r.possible and r.have > 0)]
    shown.sort(key=lambda r: (not r.done, -(r.have / r.need), YAKU_ORDER.index(r.name)))
    if limit is not None:
        shown = shown[:limit]
    parts: list[str] = []
    for row in shown:
        candidate = " · ".join([*parts, row.describe()])
        if width is not None and cell_len(candidate) > width:
            break
        parts.append(row.describe())
    return " · ".join(parts) or "—"
