"""koikoi: the Japanese Hanafuda card game Koi-Koi, every rule set, exactly."""

from __future__ import annotations

__version__ = "0.1.0"
