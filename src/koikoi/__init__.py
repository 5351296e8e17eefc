"""koikoi: the Japanese Hanafuda card game Koi-Koi, every rule set, exactly."""

from __future__ import annotations

from koikoi.game import __version__

__all__ = ["__version__"]
