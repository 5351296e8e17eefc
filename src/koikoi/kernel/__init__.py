"""The compiled playout kernel: whole rounds of Koi-Koi at native speed, for search.

The kernel plays a :class:`~koikoi.game.engine.Round` (usually a determinized one,
see :func:`koikoi.game.views.determinize`) to its settlement many times over, with a
simple rollout policy for both players, under **any** :class:`~koikoi.game.rules.Rules`:
the round-relevant options are encoded into a small int64 array
(:func:`encode_rules`) and the round into a state array plus a stock array
(:func:`encode_round`). The code is compiled with numba (a dependency of koikoi);
it mirrors :class:`~koikoi.game.engine.Round` step by step and
:class:`~koikoi.game.scoring.Scorer` yaku by yaku, and ``tests/test_kernel.py``
replays the kernel's rounds through the engine to prove it, for every preset.
Its card sets and yaku tables come from :mod:`koikoi.game.tables`, its policies'
values and weights from :mod:`koikoi.kernel.policy`.

The package, by concern:

* :mod:`koikoi.kernel.arrays`: the rules, a round and a generator as the kernel's arrays.
* :mod:`koikoi.kernel.rounds`: playouts, whole rounds, the lookahead, and the
  primitives of the searches in :mod:`koikoi.agents.search`.
* :mod:`koikoi.kernel.policy`: the rollout policies' values and weights (no numba).
* :mod:`koikoi.kernel.bench`: what ``koikoi bench kernel`` measures.
* :mod:`koikoi.kernel.encoding`: the observation encoding of the research environments.
* :mod:`koikoi.kernel.sequence`: the sequence observation (every public event as
  tokens); :mod:`koikoi.kernel.batch_sequence` writes it in the batched simulator.

Policies (for both players):

* ``"random"``: a uniformly random legal action id (koi-koi or stop included).
* ``"greedy"``: the action capturing the most card value (Bright 20, Animal 10,
  Ribbon 5, Plain 1: :func:`koikoi.kernel.policy.greedy_value`, as
  :class:`~koikoi.agents.base.GreedyAgent`); ties at random; always stops.
* ``"yaku"``: greedy, plus 15 per point the capture adds to the player's yaku
  total under the active rules (so it completes and extends yaku first); ties
  at random; always stops.
* ``"tactical"``: ``yaku``, plus partial credit for the yaku a capture brings
  closer (``points x 8 x (have/need)**2`` for each yaku the pile can still
  make), the same credit taken from the opponent when the capture holds a card
  they need, and, for a card laid without capture, a penalty when the
  opponent's hand holds its month (what they would take). Playouts run on a
  re-dealt round, so the opponent's hand there is one sampled world, not the
  real one. Always stops.
* ``"bold"``: captures as ``yaku``; calls koi-koi with enough hand left, a small
  yaku total and no opponent yaku one card short.
* ``"soft"``: hand plays drawn by the play model of :mod:`koikoi.agents.inference`.

Every policy but ``random`` decides koi-koi for the match first: in the searches,
whose match utility gives each player the points a stop must win to change the
match result (``_compiled.set_needs``), a player short of them calls koi-koi and
plays on (docs/kernel.md, "Playouts that know the match").

>>> from koikoi.game.engine import Match
>>> from koikoi.kernel import playouts
>>> rnd = Match(seed=5, events=False).round
>>> value = playouts(rnd, 200, seed=1)
>>> -100.0 < value < 100.0
True
>>> rnd.phase.name
'PLAY'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The policy constants are plain Python; everything else needs numpy, so it is
# imported on first use: `import koikoi.kernel` (and so `import koikoi`) stays cheap.
from koikoi.kernel.policy import (
    BOLD_HAND,
    BOLD_POINTS,
    PROGRESS_WEIGHT,
    SOFT_CAPTURE_BONUS,
    SOFT_TEMPERATURE,
    YAKU_WEIGHT,
)

if TYPE_CHECKING:
    from koikoi.kernel.arrays import (
        POLICIES,
        REASONS,
        KernelState,
        available,
        encode_round,
        encode_rules,
        policy_code,
        rng_state,
        rules_array,
    )
    from koikoi.kernel.bench import benchmark
    from koikoi.kernel.rounds import (
        KernelRound,
        legal_ids,
        lookahead_action,
        new_tree,
        play_random_round,
        play_round,
        playout_values,
        playouts,
        search_batch,
        tree_root,
        tree_search,
        utility_table,
        yaku_total,
    )

_LAZY: dict[str, str] = {
    "KernelRound": "koikoi.kernel.rounds",
    "KernelState": "koikoi.kernel.arrays",
    "POLICIES": "koikoi.kernel.arrays",
    "REASONS": "koikoi.kernel.arrays",
    "available": "koikoi.kernel.arrays",
    "benchmark": "koikoi.kernel.bench",
    "encode_round": "koikoi.kernel.arrays",
    "encode_rules": "koikoi.kernel.arrays",
    "legal_ids": "koikoi.kernel.rounds",
    "lookahead_action": "koikoi.kernel.rounds",
    "new_tree": "koikoi.kernel.rounds",
    "play_random_round": "koikoi.kernel.rounds",
    "play_round": "koikoi.kernel.rounds",
    "playout_values": "koikoi.kernel.rounds",
    "playouts": "koikoi.kernel.rounds",
    "policy_code": "koikoi.kernel.arrays",
    "rng_state": "koikoi.kernel.arrays",
    "rules_array": "koikoi.kernel.arrays",
    "search_batch": "koikoi.kernel.rounds",
    "tree_root": "koikoi.kernel.rounds",
    "tree_search": "koikoi.kernel.rounds",
    "utility_table": "koikoi.kernel.rounds",
    "yaku_total": "koikoi.kernel.rounds",
}


def __getattr__(name: str) -> Any:
    """The kernel's numpy names, imported from their module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'koikoi.kernel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BOLD_HAND",
    "BOLD_POINTS",
    "POLICIES",
    "PROGRESS_WEIGHT",
    "REASONS",
    "SOFT_CAPTURE_BONUS",
    "SOFT_TEMPERATURE",
    "YAKU_WEIGHT",
    "KernelRound",
    "KernelState",
    "available",
    "benchmark",
    "encode_round",
    "encode_rules",
    "legal_ids",
    "lookahead_action",
    "new_tree",
    "play_random_round",
    "play_round",
    "playout_values",
    "playouts",
    "policy_code",
    "rng_state",
    "rules_array",
    "search_batch",
    "tree_root",
    "tree_search",
    "utility_table",
    "yaku_total",
]
