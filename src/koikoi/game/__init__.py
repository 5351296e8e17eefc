"""The game: cards, rules, scoring, actions, the round and match state machine,
views, positions and records. Standard library only; nothing here imports any
other part of koikoi."""

from __future__ import annotations

__version__ = "0.1.0"
