"""The strongest player, ``expert``, and the levels for people, ``level:1`` … ``level:8``.

``expert`` is the determinized search (:class:`~koikoi.agents.mcts.MCTSAgent`)
playing for the **match**: every playout's round result goes through the rule
set's match-equity table (:mod:`koikoi.agents.equity`), so plays, targets and
koi-koi calls maximise the chance of winning the match (in a single round:
its points). It infers the opponent's hand from their lays and spends a time
budget, 1 second a decision by default (``expert:time=T``; ``iterations=N`` for
runs that must not depend on the machine's speed).

The levels go from a beginner who makes natural mistakes (a softmax over a
player's own move values: good moves are likely, blunders rare, nothing
random) up to ``expert``; :data:`LEVELS` gives each a name and a one-line
description for the UIs.

>>> make_level(1).name, LEVELS[7].title
('level:1', 'Expert')
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from koikoi.agents.base import ActionValue, Agent, GreedyAgent, make_agent
from koikoi.agents.heuristic import HeuristicAgent
from koikoi.agents.mcts import (
    DEFAULT_SAMPLES,
    INFER_SLACK,
    MAX_LOOKAHEAD,
    MatchUtility,
    MCTSAgent,
    infer_mode,
    next_batch,
    search_deadline,
)
from koikoi.game.actions import KOIKOI_ID, STOP_ID
from koikoi.game.engine import Phase, Round
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView, determinize

if TYPE_CHECKING:
    from koikoi.agents.learned import QNet

__all__ = [
    "EXPERT_ROLLOUTS",
    "GUIDES",
    "LEVELS",
    "ExpertAgent",
    "Level",
    "NoisyAgent",
    "expert_from_spec",
    "level_from_spec",
    "make_level",
    "match_candidates",
    "preload",
]

EXPERT_TIME: Final = 1.0
EXPERT_ROLLOUTS: Final = 1
DEFAULT_NET: Final = False
"""Whether ``expert`` blends in the value network by default (see docs/agents.md: the
shipped network did not measure stronger, so it is an option, ``expert:net=1``)."""
DEFAULT_POLICY: Final = "greedy"
"""The expert's rollout policy (see :mod:`koikoi.kernel`)."""
DEFAULT_PRIOR: Final = 1.0
"""Weight of the guide's card-play values added to the search's points (0: off)."""
GUIDES: Final[tuple[str, ...]] = ("heuristic", "learned", "policy")
"""Where the prior's values of card plays come from (``expert:guide=NAME``): the
``heuristic`` player's judgement, the ``learned`` Deep Monte-Carlo network's
predicted net round points (:mod:`koikoi.agents.learned`), or a ``policy``
network trained to predict the search's own choices (expert iteration,
:mod:`koikoi.lab.expert_iteration`), read from ``guide_file=PATH``: its log-probabilities
times the scale in the file's header (``prior_scale``)."""
DEFAULT_GUIDE: Final = "heuristic"
"""The prior's source by default (docs/benchmarks.md, "A learned prior in the tree")."""
LEARNED_SCALE: Final = 0.58
"""The learned guide's centred values are multiplied by this, so that a prior weight
moves the points as much with either guide: the root mean square of the heuristic's
centred card-play values over that of the network's (0.75 against 1.29 points on
1,750 card plays of one-round nintendo games of ``heuristic`` against itself)."""
DEFAULT_LOOKAHEAD: Final = 0
"""Choices inside each playout made by a small search of the chooser's own side
(:class:`~koikoi.agents.mcts.MCTSAgent`'s ``lookahead``): off by default, an option
(``expert:lookahead=1``), because it did not measure stronger inside ``expert``
(docs/benchmarks.md)."""
DEFAULT_OBJECTIVE: Final = "match"
"""What the expert maximises: match equity (``objective=round``: round points)."""
DEFAULT_INFER: Final = "plays"
"""How the expert re-deals the opponent's hand (:data:`koikoi.agents.mcts.INFER_MODES`):
from every play of theirs (measured better than their lays alone at predicting their
hand, and +0.11 and +0.08 net points a round in two one-round arenas, docs/benchmarks.md)."""
DEFAULT_BLEND: Final = 0.5
"""The value network's share of the expert's points estimate."""
MAX_NET_DEALS: Final = 64
"""Re-deals valued by the network per decision at most (fewer under a short budget)."""
SLOPE_STEP: Final = 3.0
"""Points either side of an action's expected result for the utility's slope."""
ENDGAME_CARDS: Final = 4
"""Hand cards left (both players together) at or below which the expert solves the
rest of the round exactly on each re-deal instead of playing it out."""
ENDGAME_DEALS: Final = 400
"""Re-deals solved per endgame decision at most."""
ENDGAME_MODES: Final[tuple[str, ...]] = ("all", "plays", "off")
"""Where the exact endgame is used: every decision, card plays only, or nowhere."""
ENDGAME_WEIGHT: Final = 20
"""Under ``iterations=N``, an endgame decision solves ``N / ENDGAME_WEIGHT`` re-deals
(about the time of ``N`` playout iterations)."""
DEFAULT_TREE: Final = 1.0
"""The tree search's exploration constant for card plays (0: the flat search). The
tree is the default because, unlike the flat search, it measured stronger with five
times the budget (docs/benchmarks.md, "A paired root")."""
DEFAULT_PAIR: Final = True
"""Whether the tree's root plays every action on each re-deal (common random numbers)."""
TREE_BATCH: Final = 4096
"""Tree iterations per kernel call at most under a time budget (a few ms)."""
TREE_RATE: Final = 1_000_000
"""Tree playouts a second on a fast core, at most (sizes the tree for a time budget)."""
TREE_MAX_NODES: Final = 1 << 19
"""The largest tree a decision builds (about 34 MB)."""
CHANCE_EPS: Final = 1e-9
"""Match equities closer than this to the ends of the utility table count as at the end
(:func:`match_candidates`)."""


class ExpertAgent(MCTSAgent):
    """The strongest player: match-equity search with opponent-hand inference, the
    heuristic's (or a learned network's) card-play values as a prior (``prior``,
    ``guide``) and an exact endgame;
    optionally corrected by the learned value network (``net``).

    Besides the search's playouts (both players greedy to the end of the round),
    every action is valued on ``NET_DEALS`` re-deals by the value network
    (:mod:`koikoi.agents.valuenet`): the position right after the action, as the
    player will see it, gives the expected round points under self-play. The two
    estimates are blended (``blend``: the network's share); under the match
    objective the network's correction goes through the slope of the
    match-equity utility.

    Args:
        time_limit: seconds a decision (default 1; None with ``iterations``).
        iterations: determinizations a decision instead of (or besides) a time limit.
        net: blend in the value network (default :data:`DEFAULT_NET`).
        blend: the network's share of the points estimate, 0 to 1.
        net_deals: re-deals valued by the network (default: by the budget, at most 64).
        endgame: solve the last :data:`ENDGAME_CARDS` hand cards exactly on each
            re-deal (default True); ``"plays"``: only card plays, koi-koi
            decisions by playouts (:data:`ENDGAME_MODES`).
        policy: the playouts' rollout policy (:data:`koikoi.kernel.POLICIES`).
        rollouts: playouts per action and re-deal (default :data:`EXPERT_ROLLOUTS`).
        infer: how the opponent's hand is re-dealt (:data:`koikoi.agents.mcts.INFER_MODES`).
        prior: weight of the guide's values of plays and captures, centred,
            added to the search's expected points (0: off; koi-koi decisions never).
        guide: where the prior's values come from (:data:`GUIDES`): the
            ``heuristic`` player's (the default), the ``learned`` network's
            predicted net round points from the player's own view, times
            :data:`LEARNED_SCALE`, or the ``policy`` network's log-probabilities
            of the actions from the player's own view, times its file's
            ``prior_scale``.
        guide_file: with ``guide="policy"``, the policy's weights file (a
            :class:`~koikoi.agents.learned.QNet` file whose header has a
            ``prior_scale``, as ``scripts/expert-iteration.py`` writes it).
        lookahead: the playouts' lookahead depth (see :class:`~koikoi.agents.mcts.MCTSAgent`).
        decide: the lookahead depth at koi-koi decisions only (default: ``lookahead``).
        samples: the re-deals of each lookahead choice.
        objective: ``"match"`` (match equity, the default) or ``"round"`` (round points).
        equity: a round-outcomes file for the match-equity tables instead of the
            shipped one (see :class:`~koikoi.agents.mcts.MCTSAgent`).
        horizon: under the ``match`` objective, play for match equity only in the
            last ``horizon + 1`` rounds (``horizon`` rounds or fewer after this
            one) and for round points before them; None (the default): always.
        tree: search card plays with a tree of both players' actions
            (:class:`koikoi.agents.search.TreeSearch`), with this exploration
            constant (default :data:`DEFAULT_TREE`); 0: value each action by flat
            playouts instead. Under an iteration budget the tree gets as many
            playouts as the flat search would (``iterations`` times the actions).
            Needs the compiled kernel (flat without it). Koi-koi decisions are
            always flat.
        pair: with ``tree``, every iteration plays every root action once on the
            same re-deal (common random numbers, as the flat search compares
            them; the default) instead of choosing one by the upper confidence
            bound.
    """

    KIND = "expert"

    def __init__(
        self,
        *,
        time_limit: float | None = None,
        iterations: int | None = None,
        net: bool = DEFAULT_NET,
        blend: float = DEFAULT_BLEND,
        net_deals: int | None = None,
        endgame: bool | str = True,
        policy: str = DEFAULT_POLICY,
        prior: float = DEFAULT_PRIOR,
        guide: str = DEFAULT_GUIDE,
        guide_file: str | None = None,
        lookahead: int = DEFAULT_LOOKAHEAD,
        decide: int | None = None,
        samples: int = DEFAULT_SAMPLES,
        infer: str = DEFAULT_INFER,
        rollouts: int = EXPERT_ROLLOUTS,
        objective: str = DEFAULT_OBJECTIVE,
        equity: str | None = None,
        horizon: int | None = None,
        tree: float = DEFAULT_TREE,
        pair: bool = DEFAULT_PAIR,
    ) -> None:
        if time_limit is None and iterations is None:
            time_limit = EXPERT_TIME
        super().__init__(
            time_limit=time_limit,
            iterations=iterations,
            rollouts=rollouts,
            objective=objective,
            equity=equity,
            infer=infer,
            policy=policy,
            lookahead=lookahead,
            samples=samples,
        )
        if decide is not None and not 0 <= decide <= MAX_LOOKAHEAD:
            raise InvalidInputError(
                f"expert: decide must be from 0 to {MAX_LOOKAHEAD}, not {decide!r}"
            )
        if horizon is not None and horizon < 0:
            raise InvalidInputError(f"expert: horizon must be 0 or more, not {horizon!r}")
        self.horizon = horizon
        """Match equity only with this many rounds or fewer after the current one."""
        if not 0.0 <= tree <= 100.0:
            raise InvalidInputError(f"expert: tree must be from 0 to 100, not {tree!r}")
        self.tree = tree
        """The tree search's exploration constant; 0: the flat search."""
        self.pair = pair
        """The tree plays every root action on each re-deal."""
        self.decide = lookahead if decide is None else decide
        """The lookahead depth at koi-koi decisions (``lookahead`` elsewhere)."""
        if not 0.0 <= prior <= 10.0:
            raise InvalidInputError(f"expert: prior must be from 0 to 10, not {prior!r}")
        self.prior = prior
        if guide not in GUIDES:
            raise InvalidInputError(
                f"expert: guide must be one of {', '.join(GUIDES)}, not {guide!r}"
            )
        self.guide = guide
        """Where the prior's values come from (:data:`GUIDES`)."""
        if (guide == "policy") != bool(guide_file):
            raise InvalidInputError(
                "expert: guide=policy needs guide_file=PATH (a policy weights file made by "
                "scripts/expert-iteration.py), and guide_file goes only with guide=policy"
            )
        self.guide_file = guide_file or None
        """The policy guide's weights file."""
        if self.guide_file is not None:
            _policy(self.guide_file)  # a file that does not fit fails here, not in a game
        if not 0.0 <= blend <= 1.0:
            raise InvalidInputError(f"expert: blend must be from 0 to 1, not {blend!r}")
        if net_deals is not None and net_deals < 1:
            raise InvalidInputError(f"expert: deals must be 1 or more, not {net_deals!r}")
        self.use_net = net and blend > 0
        mode = ("all" if endgame else "off") if isinstance(endgame, bool) else endgame
        if mode not in ENDGAME_MODES:
            raise InvalidInputError(f"expert: endgame must be 1, 0 or plays, not {endgame!r}")
        self.endgame_mode = mode
        """Where the exact endgame solves: ``all``, ``plays`` (not koi-koi decisions), ``off``."""
        self.blend = blend
        self.net_deals = net_deals
        self._net: dict[int, float] | None = None
        self._prior_values: dict[int, float] | None = None
        parts = []
        if time_limit is not None and time_limit != EXPERT_TIME:
            parts.append(f"time={time_limit:g}")
        if iterations is not None:
            parts.append(f"iterations={iterations}")
        if net != DEFAULT_NET:
            parts.append(f"net={int(net)}")
        if net and blend != DEFAULT_BLEND:
            parts.append(f"blend={blend:g}")
        if net_deals is not None:
            parts.append(f"deals={net_deals}")
        if mode != "all":
            parts.append("endgame=0" if mode == "off" else f"endgame={mode}")
        if policy != DEFAULT_POLICY:
            parts.append(f"policy={policy}")
        if prior != DEFAULT_PRIOR:
            parts.append(f"prior={prior:g}")
        if guide != DEFAULT_GUIDE:
            parts.append(f"guide={guide}")
        if self.guide_file is not None:
            parts.append(f"guide_file={self.guide_file}")
        if lookahead != DEFAULT_LOOKAHEAD:
            parts.append(f"lookahead={lookahead}")
        if decide is not None and decide != lookahead:
            parts.append(f"decide={decide}")
        if samples != DEFAULT_SAMPLES:
            parts.append(f"samples={samples}")
        if infer != DEFAULT_INFER:
            parts.append("infer=0" if infer == "off" else f"infer={infer}")
        if rollouts != EXPERT_ROLLOUTS:
            parts.append(f"rollouts={rollouts}")
        if objective != DEFAULT_OBJECTIVE:
            parts.append(f"objective={objective}")
        if equity is not None:
            parts.append(f"equity={equity}")
        if horizon is not None:
            parts.append(f"horizon={horizon}")
        if tree != DEFAULT_TREE:
            parts.append(f"tree={tree:g}")
        if tree and pair != DEFAULT_PAIR:
            parts.append(f"pair={int(pair)}")
        self.name = "expert" + (":" + ",".join(parts) if parts else "")

    def lookahead_for(self, view: PlayerView) -> int:
        return self.decide if view.phase is Phase.DECIDE else self.lookahead

    def _choose(
        self,
        ids: list[int],
        values: dict[int, float],
        points: dict[int, float],
        utility: MatchUtility | None,
        rng: random.Random,
    ) -> int:
        """The search's choice (equity, then points), among :func:`match_candidates` only."""
        if utility is not None:
            ids = match_candidates(ids, values, utility)
        return super()._choose(ids, values, points, utility, rng)

    def utility(self, view: PlayerView) -> MatchUtility | None:
        """Match equity as :class:`~koikoi.agents.mcts.MCTSAgent` has it, except before
        the last ``horizon + 1`` rounds (round points there)."""
        if self.horizon is not None and view.rounds - view.round_number > self.horizon:
            return None
        return super().utility(view)

    def guide_values(self, view: PlayerView) -> dict[int, float]:
        """The prior's value of each legal action of ``view``, from the player's own view
        only: the heuristic's, the learned network's points times :data:`LEARNED_SCALE`, or
        the policy network's log-probabilities times its ``prior_scale``."""
        if self.guide_file is not None:
            net, scale = _policy(self.guide_file)
            return {a: scale * x for a, x in net.log_policy(view).items()}
        if self.guide == "learned":
            from koikoi.agents.learned import shipped

            return {a: LEARNED_SCALE * v for a, v in shipped().values(view).items()}
        return _heuristic().evaluate(view)

    def _deals(self) -> int:
        if self.net_deals is not None:
            return self.net_deals
        if self.time_limit is None:
            return MAX_NET_DEALS
        return max(8, min(MAX_NET_DEALS, int(self.time_limit * 200)))

    def _search(
        self,
        view: PlayerView,
        rng: random.Random,
        *,
        decide: bool,
        utility: MatchUtility | None = None,
        time_limit: float | None = None,
    ) -> tuple[dict[int, float], dict[int, float]]:
        """The network's values first (timed), then the search in the time left; at the
        end of a round (:data:`ENDGAME_CARDS` hand cards or fewer in all), the exact
        solver instead of playouts."""
        self._net = None
        self._prior_values = None  # the exact endgame needs no prior
        solve = self.endgame_mode == "all" or (
            self.endgame_mode == "plays" and view.phase is not Phase.DECIDE
        )
        if solve and view.player is not None and sum(view.hand_counts) <= ENDGAME_CARDS:
            return self._endgame(view, rng, utility)
        limit = self.time_limit if time_limit is None else time_limit
        start = time.perf_counter()
        if self.prior > 0 and view.phase is not Phase.DECIDE and len(view.legal_ids) > 1:
            self._prior_values = self.guide_values(view)
        if self.use_net:
            self._net = _net_values(view, rng, self._deals(), self)
        if limit is not None:  # the prior's and the network's time comes out of the budget
            limit = max(limit - (time.perf_counter() - start), 1e-3)
        if self.tree > 0 and view.phase is not Phase.DECIDE:
            self._prepare()
            if self._playouts is not None:
                return self._tree(view, rng, utility, limit)
        return super()._search(view, rng, decide=decide, utility=utility, time_limit=limit)

    def _tree(
        self,
        view: PlayerView,
        rng: random.Random,
        utility: MatchUtility | None,
        limit: float | None,
    ) -> tuple[dict[int, float], dict[int, float]]:
        """The tree search (:class:`koikoi.agents.search.TreeSearch`) until the budget is
        spent: each root action's mean utility and mean net round points."""
        from koikoi.agents.search import TreeSearch

        ids, me = self._turn(view)
        clock = time.perf_counter
        start = clock()
        deadline = search_deadline(start, limit)
        pool, avoid = self._deal_inputs(view, rng)
        # An iteration of the paired tree plays every action once, as the flat search's.
        per = len(ids) if self.pair else 1
        budget = math.inf if self.iterations is None else self.iterations * len(ids) / per
        # One node a playout at most: room for the budget, or for what the time
        # allows at about TREE_RATE playouts a second.
        room = budget * per if limit is None else min(budget * per, limit * TREE_RATE)
        search = TreeSearch(
            determinize(view, rng, scorer=self._scorer(view.rules)),
            me,
            rng.getrandbits(62),
            policy=self.policy,
            utility=None if utility is None else utility.kernel_params(),
            avoid=avoid,
            slack=INFER_SLACK,
            hands=pool or (),
            explore=self.tree,
            nodes=int(min(room, TREE_MAX_NODES)) + 1,
            paired=self.pair,
        )
        batch = len(ids) // per
        while search.iterations < budget:
            t0 = clock()
            search.run(int(min(batch, budget - search.iterations)))
            now = clock()
            if now >= deadline:
                break
            if limit is None:
                batch = int(budget)
            else:
                batch = next_batch(max((now - t0) / batch, 1e-8), now, limit, deadline, TREE_BATCH)
        root = search.root()
        # An action the tree never tried (a budget below one playout an action) counts
        # as the worst tried.
        low = min(root.values(), key=lambda r: r[1], default=(0, 0.0, 0.0))
        values = {a: root.get(a, low)[1] for a in ids}
        points = {a: root.get(a, low)[2] for a in ids}
        return values, points

    def _endgame(
        self, view: PlayerView, rng: random.Random, utility: MatchUtility | None
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Every action's mean over re-deals of its exact (minimax) value on that deal.

        On each re-deal of the hidden cards, both players play the rest of the
        round perfectly for themselves (the player to act maximises the searching
        player's utility, the opponent minimises it), koi-koi decisions included.
        Few cards are left, so the tree is small; the budget bounds the re-deals.
        """
        me = view.player if view.player is not None else 0
        ids = list(view.legal_ids)
        start = time.perf_counter()
        deadline = math.inf if self.time_limit is None else start + self.time_limit * 0.95
        # Under an iteration budget, one solved re-deal counts as ENDGAME_WEIGHT iterations.
        cap = ENDGAME_DEALS
        if self.iterations is not None:
            cap = max(1, min(cap, self.iterations // ENDGAME_WEIGHT))
        sums = dict.fromkeys(ids, 0.0)
        raw = dict.fromkeys(ids, 0.0)
        pool = self.hand_pool(view, rng)
        u: Callable[[float], float] = utility if utility is not None else float
        done = 0
        while done < cap:
            det = self.redeal(view, rng, pool)
            for a in ids:
                r = det.clone()
                r.apply_id(a)
                value, net_points = _solve(r, me, u)
                sums[a] += value
                raw[a] += net_points
            done += 1
            if time.perf_counter() >= deadline:
                break
        return {a: sums[a] / done for a in ids}, {a: raw[a] / done for a in ids}

    def _refine(
        self,
        view: PlayerView,
        rng: random.Random,
        values: dict[int, float],
        points: dict[int, float],
        utility: MatchUtility | None,
    ) -> tuple[dict[int, float], dict[int, float]]:
        net = self._net
        new_points = points
        if net is not None:
            lam = self.blend
            new_points = {a: (1 - lam) * points[a] + lam * net[a] for a in points}
        h = self._prior_values
        if h is not None:
            # The guide's judgement of the card play, centred, as a correction.
            mean = sum(h[a] for a in points) / len(points)
            new_points = {a: new_points[a] + self.prior * (h[a] - mean) for a in points}
        if new_points is points:
            return values, points
        if utility is None:
            return new_points, new_points
        new_values = {}
        for a, v in values.items():
            d = points[a]
            slope = (utility(d + SLOPE_STEP) - utility(d - SLOPE_STEP)) / (2 * SLOPE_STEP)
            new_values[a] = min(1.0, max(0.0, v + slope * (new_points[a] - d)))
        return new_values, new_points


def match_candidates(
    ids: list[int], values: Mapping[int, float], utility: MatchUtility
) -> list[int]:
    """The actions worth choosing among by points when ``values`` are match equities.

    The round points only break ties of equity, and never between an action that
    keeps a chance and one that has none. A chance is measured against the ends of
    ``utility``'s table, the worst and the best the match can give after this round
    (0 and 1 in the last round): an action whose every playout ended at the worst
    has no chance of anything better; one whose every playout ended at the best has
    no chance of worse. At a koi-koi decision the stop's value is exact (the round
    ends), so a stop that gives the best the match can give is taken, and a stop
    that gives the worst is not (koi-koi cannot do worse). Otherwise the actions
    sure of the best, if any; else those with any chance above the worst, if any;
    else all.

    >>> from koikoi.agents.mcts import MatchUtility
    >>> from koikoi.game.actions import KOIKOI_ID, STOP_ID
    >>> last_round = MatchUtility([0.0, 0.0, 0.0, 0.5, 1.0])
    >>> match_candidates([KOIKOI_ID, STOP_ID], {KOIKOI_ID: 0.0, STOP_ID: 0.0}, last_round) == [
    ...     KOIKOI_ID
    ... ]
    True
    >>> match_candidates([3, 7, 9], {3: 0.0, 7: 0.004, 9: 0.2}, last_round)
    [7, 9]
    """
    low, high = min(utility.table), max(utility.table)
    if high - low <= CHANCE_EPS:
        return ids
    if STOP_ID in ids and KOIKOI_ID in ids:
        stop = values[STOP_ID]
        if stop >= high - CHANCE_EPS:
            return [STOP_ID]
        if stop <= low + CHANCE_EPS:
            return [KOIKOI_ID]
    sure = [a for a in ids if values[a] >= high - CHANCE_EPS]
    if sure:
        return sure
    return [a for a in ids if values[a] > low + CHANCE_EPS] or ids


@functools.cache
def _policy(path: str) -> tuple[QNet, float]:
    """The policy guide's network from ``path`` (read once) and its prior scale.

    Raises:
        InvalidInputError: not a network file for this koikoi, or one without a
            positive ``prior_scale`` in its header.
    """
    from koikoi.agents.learned import QNet

    net = QNet.load(path)
    scale = net.meta.get("prior_scale")
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < math.inf:
        raise InvalidInputError(
            f"{path}: no prior_scale in the header (got {scale!r}): make the file with "
            "scripts/expert-iteration.py train"
        )
    return net, float(scale)


@functools.cache
def _heuristic() -> HeuristicAgent:
    """The shared heuristic player whose values serve as the prior."""
    return HeuristicAgent()


def _solve(rnd: Round, me: int, utility: Callable[[float], float]) -> tuple[float, float]:
    """The minimax value of a perfect-information round for player ``me`` (utility of
    the net result), with the net points of the line played; ``rnd`` is consumed."""
    if rnd.phase is Phase.OVER:
        s = rnd.settlement
        d = 0 if s is None or s.winner is None else (s.points if s.winner == me else -s.points)
        return utility(d), float(d)
    ids = rnd.legal_ids()
    best: tuple[float, float] | None = None
    maximise = rnd.current == me
    for i, a in enumerate(ids):
        child = rnd if i == len(ids) - 1 else rnd.clone()
        child.apply_id(a)
        result = _solve(child, me, utility)
        if best is None or (result[0] > best[0] if maximise else result[0] < best[0]):
            best = result
    if best is None:  # pragma: no cover - a round that is not over has a legal action
        raise RuntimeError("no legal action in a round that is not over")
    return best


def _net_values(
    view: PlayerView, rng: random.Random, deals: int, agent: MCTSAgent
) -> dict[int, float]:
    """Each legal action's mean network value over ``deals`` re-deals of the hidden cards
    (a finished round counts its exact result), re-dealt as ``agent`` infers them."""
    from koikoi.agents.valuenet import shipped
    from koikoi.game.views import view_of_round

    net = shipped()
    me = view.player if view.player is not None else 0
    ids = list(view.legal_ids)
    exact = dict.fromkeys(ids, 0.0)
    slots: list[int] = []
    views: list[PlayerView] = []
    pool = agent.hand_pool(view, rng)
    for _ in range(deals):
        det = agent.redeal(view, rng, pool)
        for a in ids:
            r = det.clone()
            r.apply_id(a)
            s = r.settlement
            if s is not None:
                exact[a] += 0.0 if s.winner is None else (s.points if s.winner == me else -s.points)
                continue
            slots.append(a)
            views.append(view_of_round(r, me, match_scores=view.match_scores, rounds=view.rounds))
    totals = exact
    for a, v in zip(slots, net.values(views) if views else [], strict=True):
        totals[a] += v
    return {a: totals[a] / deals for a in ids}


def expert_from_spec(params: Mapping[str, str], raw: str) -> ExpertAgent:
    """``expert``, ``expert:time=T``, ``expert:iterations=N`` (and ``net=0``,
    ``blend=B``, ``deals=K`` for experiments)."""
    allowed = (
        "time",
        "iterations",
        "net",
        "blend",
        "deals",
        "endgame",
        "policy",
        "prior",
        "guide",
        "guide_file",
        "lookahead",
        "decide",
        "samples",
        "infer",
        "rollouts",
        "objective",
        "equity",
        "horizon",
        "tree",
        "pair",
    )
    for key in params:
        if key not in allowed:
            raise InvalidInputError(
                f"expert: unknown parameter {key!r}: allowed {', '.join(allowed)}"
            )

    def number(key: str, kind: type[float] | type[int]) -> Any:
        if key not in params:
            return None
        try:
            return kind(params[key])
        except ValueError:
            what = "a number" if kind is float else "a whole number"
            raise InvalidInputError(f"expert: {key} must be {what}, not {params[key]!r}") from None

    def flag(key: str, default: bool) -> bool:
        value = params.get(key, str(int(default))).lower()
        if value not in ("0", "1"):
            raise InvalidInputError(f"expert: {key} must be 1 or 0, not {params[key]!r}")
        return value == "1"

    endgame = params.get("endgame", "1").lower()
    endgame = {"1": "all", "0": "off"}.get(endgame, endgame)  # the constructor checks it
    blend = number("blend", float)
    prior = number("prior", float)
    lookahead = number("lookahead", int)
    samples = number("samples", int)
    rollouts = number("rollouts", int)
    tree = number("tree", float)
    return ExpertAgent(
        time_limit=number("time", float),
        iterations=number("iterations", int),
        net=flag("net", DEFAULT_NET),
        endgame=endgame,
        blend=DEFAULT_BLEND if blend is None else blend,
        net_deals=number("deals", int),
        policy=params.get("policy", DEFAULT_POLICY).lower(),
        prior=DEFAULT_PRIOR if prior is None else prior,
        guide=params.get("guide", DEFAULT_GUIDE).lower(),
        guide_file=params.get("guide_file") or None,
        lookahead=DEFAULT_LOOKAHEAD if lookahead is None else lookahead,
        decide=number("decide", int),
        samples=DEFAULT_SAMPLES if samples is None else samples,
        infer=infer_mode(params.get("infer", DEFAULT_INFER), "expert"),
        rollouts=EXPERT_ROLLOUTS if rollouts is None else rollouts,
        objective=params.get("objective", DEFAULT_OBJECTIVE).lower(),
        equity=params.get("equity") or None,
        horizon=number("horizon", int),
        tree=DEFAULT_TREE if tree is None else tree,
        pair=flag("pair", DEFAULT_PAIR),
    )


# --------------------------------------------------------------------- levels


class NoisyAgent:
    """Plays like ``base`` with natural mistakes: a softmax over the base's move values.

    The chance of an action is proportional to ``exp((value - best) / temperature)``:
    near-best moves are often chosen, bad ones rarely, so the mistakes are the
    ones a person makes (a slightly worse capture, a careless lay), not random
    moves. Temperature 0 is the base player itself.
    """

    def __init__(self, base: Any, temperature: float, *, name: str) -> None:
        if not (temperature >= 0 and math.isfinite(temperature)):
            raise InvalidInputError(f"temperature must be 0 or more, not {temperature!r}")
        self.base = base
        self.temperature = temperature
        self.name = name

    def _values(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        if isinstance(self.base, GreedyAgent):
            if KOIKOI_ID in view.legal_ids:
                # Greedy always stops; a novice calls koi-koi about one time in four.
                return {STOP_ID: 0.0, KOIKOI_ID: -math.log(3.0) * self.temperature}
            return {a: float(GreedyAgent._value(view, a)) for a in view.legal_ids}
        values: dict[int, float] = self.base.evaluate(view, rng)
        return values

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if not ids:
            raise InvalidInputError(f"{self.name}: no legal action in this view (not our turn)")
        if len(ids) == 1 or self.temperature == 0:
            choice: int = self.base.act(view, rng)
            return choice
        values = self._values(view, rng)
        best = max(values[a] for a in ids)
        weights = [math.exp((values[a] - best) / self.temperature) for a in ids]
        r = rng.random() * sum(weights)
        for a, w in zip(ids, weights, strict=True):
            r -= w
            if r <= 0:
                return a
        return ids[-1]

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        return self._values(view, rng)


@dataclass(frozen=True)
class Level:
    """One level for people: its number, title, a line for the UIs, and how it plays."""

    number: int
    title: str
    description: str
    spec: str
    """The agent it plays as (an agent spec)."""
    temperature: float = 0.0
    """Softmax temperature of its mistakes, in the base agent's value units (0: none)."""


LEVELS: Final[tuple[Level, ...]] = (
    Level(
        1,
        "Novice",
        "Knows how cards match; grabs what it sees and often gives good cards away.",
        "greedy",
        2.5,
    ),
    Level(
        2,
        "Beginner",
        "Takes the best capture in front of it and stops at its first yaku.",
        "greedy",
    ),
    Level(
        3,
        "Casual",
        "Plans for yaku and watches yours, but slips now and then.",
        "heuristic",
        0.05,
    ),
    Level(
        4,
        "Club player",
        "Plans for yaku, blocks yours, calls koi-koi when it is safe.",
        "heuristic",
    ),
    Level(
        5,
        "Skilled",
        "Looks ahead through the cards still to come (a short search).",
        "mcts:iterations=200,rollouts=1,objective=match",
    ),
    Level(
        6,
        "Strong",
        "Searches thousands of deals and plays for the match score.",
        "mcts:iterations=2000,rollouts=1,objective=match",
    ),
    Level(7, "Master", "The expert with a fifth of its thinking time.", "expert:time=0.2"),
    Level(8, "Expert", "The strongest player: a full second of search per move.", "expert"),
)
"""The levels, weakest first; ``LEVELS[n - 1]`` is ``level:n``."""


def make_level(number: int) -> Agent:
    """The agent of ``level:number`` (1 to 8), named ``level:N``."""
    if not 1 <= number <= len(LEVELS):
        raise InvalidInputError(f"level must be 1 to {len(LEVELS)}, not {number}")
    level = LEVELS[number - 1]
    base: Any = make_agent(level.spec)
    if level.temperature:
        return NoisyAgent(base, level.temperature, name=f"level:{number}")
    return _Renamed(base, f"level:{number}")


class _Renamed:
    """An agent under another name (``level:N``), otherwise the same player."""

    def __init__(self, base: Any, name: str) -> None:
        self.base = base
        self.name = name

    def act(self, view: PlayerView, rng: random.Random) -> int:
        choice: int = self.base.act(view, rng)
        return choice

    def evaluate(self, view: PlayerView, rng: random.Random) -> dict[int, float]:
        values: dict[int, float] = self.base.evaluate(view, rng)
        return values

    def evaluate_detail(self, view: PlayerView, rng: random.Random) -> dict[int, ActionValue]:
        detail = getattr(self.base, "evaluate_detail", None)
        if callable(detail):
            out: dict[int, ActionValue] = detail(view, rng)
            return out
        return {a: ActionValue(points=v) for a, v in self.evaluate(view, rng).items()}


def level_from_spec(params: Mapping[str, str], raw: str) -> Agent:
    """``level:N`` with N from 1 to 8."""
    text = raw.strip()
    if not text.isdigit():
        raise InvalidInputError(
            f"level: expected a number from 1 to {len(LEVELS)} (level:4), not {raw!r}"
        )
    return make_level(int(text))


def preload(agent: Any, rules: Any = None) -> None:
    """Load what ``agent`` needs before its first decision (the compiled kernel, the
    match-equity table of ``rules``), so that the first move is not slow."""
    inner = getattr(agent, "base", agent)
    if isinstance(inner, MCTSAgent):
        inner.uses_kernel  # noqa: B018 - loads (or compiles) the kernel
        if isinstance(inner, ExpertAgent) and inner.guide == "learned" and inner.prior > 0:
            from koikoi.agents.learned import shipped

            shipped()
        if isinstance(inner, ExpertAgent) and inner.guide_file is not None:
            _policy(inner.guide_file)
        if rules is not None and inner.objective == "match" and rules.game.rounds > 1:
            from koikoi.agents.equity import match_equity

            match_equity(rules, inner.equity)
