"""Positions: a compact, readable text notation for the state of a round.

Like FEN in chess, one line of text sets up any moment of a round, with the
public history that play depends on. It comes in two forms:

* the **full** position: where every card is, the stock order included (for
  tests, puzzles and engines);
* a player's **view**: what one player knows; the opponent's hand and the stock
  are only counted.

A position is the rules' name followed by ``key=value`` fields, separated by
spaces, in any order (the canonical text, as :func:`position` writes it, uses the
order below)::

    nintendo round=1/12 dealer=0 turn=0 phase=play hands=1L,1P1,.../2A,... field=...
    stock=5R,... piles=-/- score=0/0

=============  ==============================================================
field          meaning
=============  ==============================================================
(first word)   the rule set: a preset name (or any name, with ``rules=`` given)
``round``      ``k/n``: round ``k`` of a match of ``n`` rounds (``k`` sets the month)
``dealer``     the dealer, 0 or 1
``leader``     who played first this round (default: the dealer)
``turn``       the player to act, 0 or 1
``phase``      ``play`` (a hand card), ``take`` (the drawn card's target) or
               ``decide`` (koi-koi or stop)
``view``       only in a view: whose view it is, 0 or 1
``hands``      ``A/B``: player 0's and player 1's hands; in a view the hidden
               hand is a count (``1L,3P1/8``)
``field``      the field
``stock``      the stock, **top card first** (the next card drawn comes first);
               in a view, a count
``piles``      ``A/B``: both capture piles
``drawn``      the drawn card waiting for its target (phase ``take`` only)
``score``      ``a/b``: each player's yaku total this round (optional on input:
               computed from the piles)
``koikoi``     ``a/b``: koi-koi calls this round (default ``0/0``)
``called``     ``a/b``: each player's score when they last called (default ``0/0``)
``improver``   the last player whose score went up this round (default: none)
``declined``   ``A/B``: per player, the months (``3,5``) that were on the field
               when they laid a hand card without capturing (default ``-/-``)
``plays``      this round's hand plays in order, ``player:card:field`` joined by
               commas, the field before the play as codes joined by ``+`` (``-``
               when empty): ``0:1L:2P1+3L,1:3P2:2P1+1L`` (default: none given)
``match``      ``a/b``: the match scores before this round ends (optional)
=============  ==============================================================

A card list is card codes joined by commas (``1L,3P1,11P``), or ``-`` when
empty. Every position is checked: an impossible one raises
:class:`PositionError` naming the problem.

>>> from koikoi.game.engine import Match
>>> m = Match(seed=1)
>>> text = position(m)
>>> text.split()[:5]
['nintendo', 'round=1/12', 'dealer=0', 'turn=0', 'phase=play']
>>> Round.from_position(text).hands == m.round.hands
True
>>> position(Round.from_position(text), match_scores=(0, 0)) == text
True
>>> position(view_of(m, 1)).split()[5:7]
['view=1', 'hands=8/2P1,3L,5R,6P2,8P2,10P1,10P2,12L']
"""

from __future__ import annotations

import random

from koikoi.game.engine import Match, Round
from koikoi.game.notation import KEYS, Position, PositionError, parse_position
from koikoi.game.rules import Rules
from koikoi.game.views import PlayerView, determinize, view_of

__all__ = [
    "KEYS",
    "Position",
    "PositionError",
    "parse_position",
    "position",
    "redeal",
]


def position(
    state: Round | Match | PlayerView,
    *,
    player: int | None = None,
    match_scores: tuple[int, int] | None = None,
    rounds: int | None = None,
) -> str:
    """The canonical position text of a round, a match's current round, or a view.

    Args:
        state: a :class:`Round`, a :class:`Match` (its round, with the match scores
            and length) or a :class:`PlayerView` (the view form).
        player: with a round or match, write that player's view instead of the full
            position.
        match_scores: with a round, the match scores to write (``match=``).
        rounds: with a round, the match length (default: the rules').

    Raises:
        PositionError: for a finished round or match, or a spectator's view.
    """
    if player is not None and player not in (0, 1):
        raise PositionError(f"player must be 0 or 1, not {player!r}")
    if isinstance(state, PlayerView):
        if player is not None and player != state.player:
            raise PositionError(f"this is player {state.player}'s view, not player {player}'s")
        return state.to_position().text()
    if isinstance(state, Match):
        if state.is_over:
            raise PositionError("the match is over: it has no position")
        if player is not None:
            return view_of(state, player, with_history=False).to_position().text()
        pos = state.round.to_position(
            match_scores=(state.scores[0], state.scores[1]), rounds=state.rules.game.rounds
        )
        return pos.text()
    return state.to_position(player=player, match_scores=match_scores, rounds=rounds).text()


def redeal(text: str, rng: random.Random, *, rules: Rules | None = None) -> Round:
    """A full round consistent with a view position: its hidden cards re-dealt at random.

    The same as ``determinize(PlayerView.from_position(text), rng)``.
    """
    return determinize(PlayerView.from_position(text, rules=rules), rng)
