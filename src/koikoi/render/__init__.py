"""Rendering of cards and games: pure functions returning strings.

:mod:`koikoi.render.svg` draws the 48 cards and the card back as SVG.
"""

from __future__ import annotations
