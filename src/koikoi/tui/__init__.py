"""The terminal game (``koikoi play``), built on Textual.

Importing this package is cheap; Textual is imported by the modules that
need it: :mod:`koikoi.tui.app` (the game), :mod:`koikoi.tui.replay`
(``koikoi replay FILE --tui``). The pure parts — :mod:`~koikoi.tui.cardtext`,
:mod:`~koikoi.tui.progress`, :mod:`~koikoi.tui.controller`,
:mod:`~koikoi.tui.saves` — need only Rich (which comes with Textual) or
nothing at all.
"""

from __future__ import annotations

__all__: list[str] = []
