"""The ceiling: players that cheat, as measuring tools for the arena only.

A fair player sees its own hand, the field and the capture piles; the two
players here see more, so their results against a fair player bound what any
fair player could gain. They are **not agents for players**: they are not in
the agent registry (:func:`koikoi.agents.make_agent` does not know them, so the
server, the terminal game and ``koikoi play`` cannot build them), their
:meth:`~FullInformationAgent.act` refuses to play, and only the arena
(:func:`koikoi.lab.arena.play_match`) builds them from the spec ``oracle`` and
hands them the true match at every decision.

* ``oracle`` (``sees=all``, the default): :class:`PerfectInformationSearch`, which
  knows both hands **and the stock order**. Once the deal is known a round is
  deterministic, so it searches the true round: an upper-confidence tree over
  the real sequence of decisions (both players', the drawn-card choices and
  koi-koi included), each leaf played out by the compiled kernel on the true
  deal with the ``tactical`` policy, and the result valued by the match-equity
  utility of the true match (round points in a one-round match). Settings:
  ``iterations`` (tree iterations a decision, default 1000), ``rollouts``
  (playouts a leaf, default 1), ``policy`` (the playouts', default
  ``tactical``), ``explore`` (the exploration constant, default 0.5).
* ``oracle:sees=hand,...``: :class:`HandOracle`, the ``expert`` whose every
  re-deal gives the opponent their true hand (the stock stays unknown to it);
  every other setting is the ``expert`` spec's (``oracle:sees=hand,iterations=2000``
  is ``expert:iterations=2000`` with that one cheat). It bounds what
  opponent-hand inference could add to the expert's search.

>>> from koikoi.game.engine import Match
>>> match = Match(seed=3, events=False)
>>> oracle = oracle_from_spec("oracle:iterations=50")
>>> import random
>>> oracle.act_on_match(match, random.Random(1)) in match.legal_ids()
True
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, runtime_checkable

from koikoi.agents.base import parse_agent_spec
from koikoi.game.engine import Match, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView, view_of

if TYPE_CHECKING:  # (imported on first use: the arena imports this module, and stays cheap)
    from koikoi.agents.expert import ExpertAgent
    from koikoi.agents.mcts import MatchUtility

__all__ = [
    "ORACLE_KIND",
    "FullInformationAgent",
    "HandOracle",
    "PerfectInformationSearch",
    "edge_share",
    "is_oracle_spec",
    "oracle_from_spec",
]

ORACLE_KIND: Final = "oracle"
"""The spec kind of the players of this module (the arena's only)."""

_N = TypeVar("_N", int, float)
_SEES: Final = ("all", "hand")
_REFUSAL: Final = (
    "the oracle sees hidden cards: it is a measuring tool of the arena "
    "(koikoi arena oracle ...), not a player"
)


@runtime_checkable
class FullInformationAgent(Protocol):
    """A player that is given the true match (hidden cards included) at each decision.

    The arena calls :meth:`act_on_match`; :meth:`act`, the fair players' entry,
    raises :class:`~koikoi.game.errors.InvalidInputError`.
    """

    name: str

    def act(self, view: PlayerView, rng: random.Random) -> int:
        """Refused: this player needs the true match."""
        ...

    def act_on_match(self, match: Match, rng: random.Random) -> int:
        """The action id chosen for the player to act in ``match``."""
        ...


def is_oracle_spec(spec: str) -> bool:
    """Whether ``spec`` names a player of this module (kind ``oracle``).

    >>> is_oracle_spec("oracle:iterations=10"), is_oracle_spec("expert")
    (True, False)
    """
    return spec.strip().lower().partition(":")[0].strip() == ORACLE_KIND


# ------------------------------------------------------------ perfect information


class _Node:
    """A node of the perfect-information tree: the position after its actions."""

    __slots__ = ("children", "untried", "value", "visits")

    def __init__(self, actions: list[int]) -> None:
        self.children: dict[int, _Node] = {}
        self.untried = actions[::-1]  # pop() tries them in legal order
        self.visits = 0
        self.value = 0.0  # sum of the searching player's utilities through here


class PerfectInformationSearch:
    """Upper-confidence tree search of the true round: both hands and the stock known.

    Each iteration copies the true round, descends the tree by the upper
    confidence bound (the player to act, the searcher or the opponent, takes the
    child best for them: the opponent minimises the searcher's utility), adds one
    node, plays the rest of the round out ``rollouts`` times with the compiled
    kernel from the true position (``policy`` for both players), and adds the
    searcher's utility of the net round result along the path. The most visited
    root action is played. The tree is closed-loop: the stock is known, so a
    node is one position, not a set of them.

    Args:
        iterations: tree iterations a decision.
        rollouts: playouts a leaf.
        policy: the playouts' policy (one of :data:`koikoi.kernel.POLICIES`).
        explore: the exploration constant, in units of the utility's range
            (1 for match equity; the round's point spread otherwise).
    """

    def __init__(
        self,
        *,
        iterations: int = 1000,
        rollouts: int = 1,
        policy: str = "tactical",
        explore: float = 0.5,
    ) -> None:
        if iterations < 1:
            raise InvalidInputError(f"oracle: iterations must be 1 or more, not {iterations}")
        if rollouts < 1:
            raise InvalidInputError(f"oracle: rollouts must be 1 or more, not {rollouts}")
        from koikoi.kernel import policy_code

        policy_code(policy)  # an unknown policy fails here, naming the allowed ones
        if not (explore > 0 and math.isfinite(explore)):
            raise InvalidInputError(f"oracle: explore must be a positive number, not {explore!r}")
        self.iterations = iterations
        self.rollouts = rollouts
        self.policy = policy
        self.explore = explore
        self.name = f"oracle:iterations={iterations},rollouts={rollouts},policy={policy}"

    def act(self, view: PlayerView, rng: random.Random) -> int:
        """Refused: this player needs the true match (:meth:`act_on_match`).

        Raises:
            InvalidInputError: always.
        """
        raise InvalidInputError(_REFUSAL)

    def act_on_match(self, match: Match, rng: random.Random) -> int:
        """The action for the player to act in ``match``, by search over its true round."""
        legal = match.legal_ids()
        if len(legal) == 1:
            return legal[0]
        from koikoi.agents.mcts import MatchUtility

        me = match.current
        utility = MatchUtility.of_view(view_of(match, me, with_history=False))
        return self.search(match.round, me, utility, rng)

    def search(self, rnd: Round, me: int, utility: MatchUtility | None, rng: random.Random) -> int:
        """The most visited root action of ``self.iterations`` iterations from ``rnd``.

        ``utility`` maps the searcher's net round points to its match equity
        (None: the points themselves).
        """
        root = _Node(rnd.legal_ids())
        sign = 1 if me == 0 else -1
        scale = self.explore * (1.0 if utility is not None else 10.0)
        for _ in range(self.iterations):
            state = rnd.clone()
            node = root
            path = [root]
            while not state.is_over:
                if node.untried:
                    action = node.untried.pop()
                    state.apply_id(action)
                    child = _Node(state.legal_ids() if not state.is_over else [])
                    node.children[action] = child
                    path.append(child)
                    break
                mine = state.current == me
                log_n = math.log(node.visits)
                best_score = -math.inf
                best = -1
                for action, child in node.children.items():
                    q = child.value / child.visits
                    score = (q if mine else -q) + scale * math.sqrt(log_n / child.visits)
                    if score > best_score:
                        best_score, best = score, action
                state.apply_id(best)
                node = node.children[best]
                path.append(node)
            value = self._evaluate(state, sign, utility, rng)
            for n in path:
                n.visits += 1
                n.value += value
        return max(root.children.items(), key=lambda kv: kv[1].visits)[0]

    def _evaluate(
        self, state: Round, sign: int, utility: MatchUtility | None, rng: random.Random
    ) -> float:
        """The searcher's mean utility of the round from ``state`` (over: its settlement)."""
        s = state.settlement
        if s is not None:  # the round is over
            points = 0 if s.winner is None else (s.points if s.winner == 0 else -s.points)
            values = [sign * points]
        else:
            from koikoi.kernel import playout_values

            seed = rng.getrandbits(62)
            played = playout_values(state, self.rollouts, seed, self.policy)
            values = [sign * int(v) for v in played]
        if utility is None:
            return sum(values) / len(values)
        return sum(utility(v) for v in values) / len(values)


# ------------------------------------------------------------------ the hand only


class HandOracle:
    """``expert`` whose every re-deal gives the opponent their true hand.

    The stock stays unknown to it and is re-dealt as usual, so it bounds what a
    perfect reading of the opponent's hand could add to that search.

    Args:
        expert: the search it plays with (its settings are kept as they are).
    """

    def __init__(self, expert: ExpertAgent) -> None:
        self.expert = expert
        self.name = f"oracle:sees=hand({expert.name})"
        self._cheat = _true_hand_expert()()  # the expert itself, its settings shared
        self._cheat.__dict__.update(expert.__dict__)

    def act(self, view: PlayerView, rng: random.Random) -> int:
        """Refused: this player needs the true match (:meth:`act_on_match`).

        Raises:
            InvalidInputError: always.
        """
        raise InvalidInputError(_REFUSAL)

    def act_on_match(self, match: Match, rng: random.Random) -> int:
        """The expert's action, with the opponent's true hand in every re-deal."""
        me = match.current
        hand = match.round.hands[1 - me]
        view = view_of(match, me, with_history=False)
        self._cheat.true_hand = hand
        action: int = self._cheat.act(view, rng)
        return action


@functools.cache
def _true_hand_expert() -> Any:
    """The class of an :class:`~koikoi.agents.expert.ExpertAgent` whose opponent-hand
    pool is the one true hand (``true_hand``); an instance is made bare and takes an
    expert's settings. (Defined on first use: the expert imports the kernel.)"""
    from koikoi.agents.expert import ExpertAgent

    class TrueHandExpert(ExpertAgent):
        true_hand = 0

        def __init__(self) -> None:  # bare: the settings are copied in
            pass

        def hand_pool(self, view: PlayerView, rng: random.Random) -> list[int] | None:
            return [self.true_hand] if self.true_hand else None

    return TrueHandExpert


# ----------------------------------------------------------------------- the spec

_SEARCH_KEYS: Final = ("sees", "iterations", "rollouts", "policy", "explore")


def oracle_from_spec(spec: str) -> PerfectInformationSearch | HandOracle:
    """Build the oracle of ``spec``: ``oracle[:key=value,...]`` (see the module).

    Raises:
        InvalidInputError: not an ``oracle`` spec, or a bad setting, naming what is allowed.
    """
    kind, params, _ = parse_agent_spec(spec)
    if kind != ORACLE_KIND:
        raise InvalidInputError(f"not an oracle spec: {spec!r} (expected oracle[:key=value,...])")
    sees = params.pop("sees", "all")
    if sees not in _SEES:
        raise InvalidInputError(f"oracle: sees must be one of {', '.join(_SEES)}, not {sees!r}")
    if sees == "hand":
        from koikoi.agents.expert import expert_from_spec

        return HandOracle(expert_from_spec(params, ""))
    for key in params:
        if key not in _SEARCH_KEYS:
            raise InvalidInputError(
                f"oracle: unknown parameter {key!r}: allowed {', '.join(_SEARCH_KEYS)} "
                "(sees=hand takes the expert's)"
            )
    return PerfectInformationSearch(
        iterations=_number(params, "iterations", int, 1000),
        rollouts=_number(params, "rollouts", int, 1),
        policy=params.get("policy", "tactical"),
        explore=_number(params, "explore", float, 0.5),
    )


def _number(params: Mapping[str, str], key: str, kind: type[_N], default: _N) -> _N:
    """``params[key]`` as a ``kind``, or ``default``; a clear error if it is not one."""
    if key not in params:
        return default
    try:
        return kind(params[key])
    except ValueError:
        raise InvalidInputError(
            f"oracle: {key} must be a{'n integer' if kind is int else ' number'}, "
            f"not {params[key]!r}"
        ) from None


# ------------------------------------------------------------- share of the edge


def edge_share(
    player: Sequence[tuple[float, float, int]],
    ceiling: Sequence[tuple[float, float, int]],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, tuple[float, float, float]]:
    """A player's share of the ceiling's edge over the same opponent, on the same deals.

    ``player`` and ``ceiling`` hold, deal pair by deal pair (the same pairs, in
    the same order: two arena runs with one seed), ``(match score, net points,
    rounds)`` of the player and of the ceiling against the opponent. The edge in
    match score is the score minus one half; in net points a round, the net
    points over the rounds. Returns ``{"score": (share, lo, hi), "net": (...)}``:
    the share (the player's edge over the ceiling's) with a 95% percentile
    bootstrap interval that resamples the pairs, both runs together (the luck of
    a deal counts once). A share is ``nan`` when the ceiling has no edge.

    >>> c = [(1.0, 10.0, 8), (0.5, 2.0, 8), (1.0, 6.0, 8)]
    >>> p = [(0.5, 4.0, 8), (0.5, 0.0, 8), (1.0, 5.0, 8)]
    >>> share = edge_share(p, c, resamples=200)
    >>> round(share["score"][0], 3), round(share["net"][0], 3)
    (0.5, 0.5)

    Raises:
        InvalidInputError: the two runs do not have the same number of pairs, or none.
    """
    if len(player) != len(ceiling) or not player:
        raise InvalidInputError(
            f"edge_share needs the same deal pairs for both (at least one), "
            f"not {len(player)} and {len(ceiling)}"
        )

    def share(idx: Sequence[int]) -> tuple[float, float]:
        ps = math.fsum(player[i][0] - 0.5 for i in idx)
        cs = math.fsum(ceiling[i][0] - 0.5 for i in idx)
        pn = math.fsum(player[i][1] for i in idx) / max(1, sum(player[i][2] for i in idx))
        cn = math.fsum(ceiling[i][1] for i in idx) / max(1, sum(ceiling[i][2] for i in idx))
        return (ps / cs if cs else math.nan, pn / cn if cn else math.nan)

    n = len(player)
    point = share(range(n))
    rng = random.Random(seed)
    draws = [share([rng.randrange(n) for _ in range(n)]) for _ in range(resamples)]
    out: dict[str, tuple[float, float, float]] = {}
    for k, name in enumerate(("score", "net")):
        values = sorted(d[k] for d in draws if not math.isnan(d[k]))
        if math.isnan(point[k]) or not values:
            out[name] = (point[k], math.nan, math.nan)
            continue
        lo = values[int(0.025 * (len(values) - 1))]
        hi = values[math.ceil(0.975 * (len(values) - 1))]
        out[name] = (point[k], lo, hi)
    return out
