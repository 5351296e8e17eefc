"""A learned player: a Q-network over (information state, action) trained by Deep Monte-Carlo.

The network reads the player's own information-state encoding
(:func:`koikoi.kernel.encoding.encode`, 540 values: the own hand, the field,
both capture piles, the unseen cards, the round, the match and the rules) and
:func:`action_features` of one legal action (the card it plays, the cards it
moves to the own capture pile, their kinds, the action type), and predicts the
round's net points for the player (own minus the opponent's, divided by
:data:`SCALE`). The agent plays the legal action with the highest value.

It is trained as DouZero trains its players (Deep Monte-Carlo): epsilon-greedy
self-play in the batched simulator, each decision labelled with the round's
final result, the network regressed on those returns. Training lives in
:mod:`koikoi.lab.dmc` (``koikoi train dmc``); inference here is numpy only,
and reads nothing but the view: no hidden card reaches the network.

The weights file is a ``.npz`` with the arrays and a JSON header naming the
encoding version and its features, the action features, the recipe (command
and seed) and the learning curve; a file that does not fit is refused with an
error saying what differs.

>>> import random
>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> m = Match(seed=1)
>>> agent = LearnedAgent(QNet.create(hidden=(8, 4), seed=0))
>>> agent.act(view_of(m, m.current), random.Random(0)) in m.legal_ids()
True
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from koikoi.agents.valuenet import (
    features_digest,
    layer_arrays,
    read_layers,
    read_weights,
    write_weights,
)
from koikoi.game.actions import (
    DISCARD_BASE,
    KOIKOI_ID,
    PLAY_TARGET_BASE,
    STOP_ID,
    TAKE_BASE,
)
from koikoi.game.cards import KIND_MASKS, Kind
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView
from koikoi.kernel import encoding

__all__ = [
    "ACTION_FEATURES",
    "FORMAT",
    "MODELS",
    "SCALE",
    "LearnedAgent",
    "QNet",
    "action_features",
    "from_spec",
    "shipped",
]

FORMAT: Final = "koikoi-q-net"
VERSION: Final = 1
SCALE: Final = 10.0
"""The network predicts net round points divided by this."""
MODELS: Final[dict[str, str]] = {"dmc": "learned-dmc.npz", "ppo": "learned-ppo.npz"}
"""The shipped models, by the name ``learned:model=NAME`` takes: ``dmc`` (Deep
Monte-Carlo, the default) and ``ppo`` (a PPO policy, whose outputs are the
policy's logits rather than points; the agent plays the highest all the same)."""

Array = npt.NDArray[np.float32]

_FIELD: Final = encoding.SEGMENTS["field"].offset
_DRAWN: Final = encoding.SEGMENTS["drawn"].offset
_KINDS: Final = (Kind.BRIGHT, Kind.ANIMAL, Kind.RIBBON, Kind.PLAIN)
_TYPES: Final = ("play", "play_target", "discard", "take", "koikoi", "stop")
ACTION_FEATURE_NAMES: Final[tuple[str, ...]] = (
    *(f"card:{c}" for c in range(48)),
    *(f"taken:{c}" for c in range(48)),
    *(f"taken_kind:{k.name.lower()}" for k in _KINDS),
    *(f"type:{t}" for t in _TYPES),
)
ACTION_FEATURES: Final = len(ACTION_FEATURE_NAMES)
"""Values per action in :func:`action_features` (106)."""

# card -> kind one-hot (48 x 4), the taken cards' kinds by one product.
_KIND_MATRIX: Final = np.array(
    [[1.0 if KIND_MASKS[k] >> c & 1 else 0.0 for k in _KINDS] for c in range(48)],
    dtype=np.float32,
)
# card -> the four cards of its month (48 x 48).
_SAME_MONTH: Final = np.array(
    [[1.0 if c // 4 == d // 4 else 0.0 for d in range(48)] for c in range(48)],
    dtype=np.float32,
)


def action_features(observations: Array, ids: npt.NDArray[Any]) -> Array:
    """The features of actions ``ids``, each with the observation of the player who takes it.

    Args:
        observations: ``(m, SIZE)`` encodings (row ``k`` is the view in which
            ``ids[k]`` is legal), as :func:`~koikoi.kernel.encoding.encode` or
            ``VectorEnv.observations`` give them.
        ids: ``(m,)`` legal action ids.

    Returns:
        ``(m, ACTION_FEATURES)`` float32: the hand card played or discarded
        (one-hot), the cards the action moves to the player's capture pile
        (the card and the field cards of its month it captures, the chosen
        target, or the drawn card and the field card it takes), how many of
        those are brights, animals, ribbons and plains, and the action type.
        Computed from the view alone.
    """
    ids = np.asarray(ids, dtype=np.int64)
    m = ids.shape[0]
    out = np.zeros((m, ACTION_FEATURES), dtype=np.float32)
    rows = np.arange(m)
    card = np.full(m, -1, dtype=np.int64)
    target = np.full(m, -1, dtype=np.int64)
    plain = ids < PLAY_TARGET_BASE
    with_target = (ids >= PLAY_TARGET_BASE) & (ids < DISCARD_BASE)
    discard = (ids >= DISCARD_BASE) & (ids < TAKE_BASE)
    take = (ids >= TAKE_BASE) & (ids < KOIKOI_ID)
    card[plain] = ids[plain]
    card[with_target] = (ids[with_target] - PLAY_TARGET_BASE) // 48
    target[with_target] = (ids[with_target] - PLAY_TARGET_BASE) % 48
    card[discard] = ids[discard] - DISCARD_BASE
    target[take] = ids[take] - TAKE_BASE
    has_card = card >= 0
    out[rows[has_card], card[has_card]] = 1.0
    taken = out[:, 48:96]
    # A plain play captures the field cards of its month (one, or all three), or none.
    if plain.any():
        field_rows = observations[plain, _FIELD : _FIELD + 48]
        month = _SAME_MONTH[card[plain]] * field_rows
        captured = month.sum(axis=1) > 0
        month[captured, card[plain][captured]] = 1.0
        taken[plain] = month
    if with_target.any():
        r = rows[with_target]
        taken[r, card[with_target]] = 1.0
        taken[r, target[with_target]] = 1.0
    if take.any():
        r = rows[take]
        taken[r, target[take]] = 1.0
        taken[r] = np.maximum(taken[r], observations[take, _DRAWN : _DRAWN + 48])
    out[:, 96:100] = taken @ _KIND_MATRIX
    kinds = np.select(
        [plain, with_target, discard, take, ids == KOIKOI_ID, ids == STOP_ID],
        list(range(6)),
        default=-1,
    )
    known = kinds >= 0
    out[rows[known], 100 + kinds[known]] = 1.0
    return out


@dataclass
class QNet:
    """A multilayer perceptron (ReLU) from (encoding, action features) to net points / SCALE.

    The first layer is split in two, ``state`` (SIZE x h1) and ``action``
    (ACTION_FEATURES x h1): the same as one layer over the concatenation, but
    the state's part is computed once per view for all its legal actions.
    ``weights`` are the later layers, the last with one output.
    """

    state: Array
    action: Array
    bias: Array
    weights: list[Array]
    biases: list[Array]
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, *, hidden: Sequence[int] = (128, 64), seed: int = 0) -> QNet:
        """A freshly initialised network (He initialisation, seeded)."""
        if not hidden or min(hidden) < 1:
            raise InvalidInputError(f"hidden sizes must be 1 or more, not {list(hidden)}")
        rng = np.random.default_rng(seed)
        n_in = encoding.SIZE + ACTION_FEATURES
        scale = math.sqrt(2.0 / n_in)
        state = (rng.standard_normal((encoding.SIZE, hidden[0])) * scale).astype(np.float32)
        action = (rng.standard_normal((ACTION_FEATURES, hidden[0])) * scale).astype(np.float32)
        sizes = [*hidden, 1]
        weights = [
            (rng.standard_normal((a, b)) * math.sqrt(2.0 / a)).astype(np.float32)
            for a, b in itertools.pairwise(sizes)
        ]
        biases = [np.zeros(b, dtype=np.float32) for b in sizes[1:]]
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "encoding_version": encoding.ENCODING_VERSION,
            "features": features_digest(encoding.FEATURES),
            "action_features": features_digest(ACTION_FEATURE_NAMES),
            "hidden": list(hidden),
            "scale": SCALE,
        }
        return cls(state, action, np.zeros(hidden[0], np.float32), weights, biases, meta)

    def params(self) -> list[Array]:
        """Every array of the network, in a fixed order (for the optimizer)."""
        out = [self.state, self.action, self.bias]
        for w, b in zip(self.weights, self.biases, strict=True):
            out += [w, b]
        return out

    # ---------------------------------------------------------- inference

    def q(self, observations: Array, rows: npt.NDArray[Any], actions: Array) -> Array:
        """Scaled values of actions: ``actions[k]`` taken in ``observations[rows[k]]``.

        Args:
            observations: ``(n, SIZE)`` encodings.
            rows: ``(m,)`` which observation each action belongs to.
            actions: ``(m, ACTION_FEATURES)`` :func:`action_features`.

        Returns:
            ``(m,)`` predicted net round points / :data:`SCALE`.
        """
        h = (observations @ self.state)[rows] + actions @ self.action + self.bias
        for w, b in zip(self.weights, self.biases, strict=True):
            h = np.maximum(h, 0.0) @ w + b
        out: Array = h[:, 0]
        return out

    def values(self, view: PlayerView) -> dict[int, float]:
        """The predicted net round points of each of ``view``'s legal actions."""
        ids = np.asarray(view.legal_ids, dtype=np.int64)
        obs = encoding.encode(view)[None, :]
        feats = action_features(np.repeat(obs, len(ids), axis=0), ids)
        q = self.q(obs, np.zeros(len(ids), dtype=np.int64), feats)
        return {int(a): float(v) * SCALE for a, v in zip(ids, q, strict=True)}

    def log_policy(self, view: PlayerView) -> dict[int, float]:
        """The network read as a policy (as :mod:`koikoi.lab.ppo` and
        :mod:`koikoi.lab.expert_iteration` train it): the log-probability of each of ``view``'s
        legal actions under a softmax of its scores."""
        logits = {a: v / SCALE for a, v in self.values(view).items()}
        top = max(logits.values())
        norm = top + math.log(sum(math.exp(x - top) for x in logits.values()))
        return {a: x - norm for a, x in logits.items()}

    # -------------------------------------------------------------- files

    def save(self, path: str | Path) -> None:
        """Write the weights and the header (``.npz``, compressed)."""
        arrays: dict[str, Any] = {"state": self.state, "action": self.action, "bias": self.bias}
        write_weights(path, self.meta, arrays | layer_arrays(self.weights, self.biases))

    @classmethod
    def load(cls, path: str | Path) -> QNet:
        """Read a weights file, checking it fits this version's encoding and actions.

        Raises:
            InvalidInputError: not a readable weights file, another format, or made
                for other input features (the message names what differs).
        """
        where = str(path)
        arrays = read_weights(path)
        try:
            meta = json.loads(str(arrays["meta"])) if "meta" in arrays else None
        except json.JSONDecodeError:
            meta = None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise InvalidInputError(f"{where}: not a {FORMAT} file (no header of that format)")
        if meta.get("version") != VERSION:
            raise InvalidInputError(
                f"{where}: file version {meta.get('version')!r}, this koikoi reads {VERSION}"
            )
        if (
            meta.get("encoding_version") != encoding.ENCODING_VERSION
            or meta.get("features") != features_digest(encoding.FEATURES)
            or meta.get("action_features") != features_digest(ACTION_FEATURE_NAMES)
        ):
            raise InvalidInputError(
                f"{where}: made for other input features than this koikoi's (encoding "
                f"version {meta.get('encoding_version')!r}, this koikoi has "
                f"{encoding.ENCODING_VERSION}): retrain it (koikoi train dmc)"
            )
        missing = [k for k in ("state", "action", "bias", "w0", "b0") if k not in arrays]
        if missing:
            raise InvalidInputError(f"{where}: missing arrays {', '.join(missing)}")
        weights, biases = read_layers(arrays, where)
        net = cls(
            np.asarray(arrays["state"], dtype=np.float32),
            np.asarray(arrays["action"], dtype=np.float32),
            np.asarray(arrays["bias"], dtype=np.float32),
            weights,
            biases,
            meta,
        )
        net._check(where)
        return net

    def _check(self, where: str) -> None:
        h = self.bias.shape[0] if self.bias.ndim == 1 else -1
        if self.state.shape != (encoding.SIZE, h) or self.action.shape != (ACTION_FEATURES, h):
            raise InvalidInputError(
                f"{where}: first layer {self.state.shape} + {self.action.shape}, expected "
                f"({encoding.SIZE}, n) + ({ACTION_FEATURES}, n) with {h} biases"
            )
        size = h
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            if w.ndim != 2 or w.shape[0] != size or b.shape != (w.shape[1],):
                raise InvalidInputError(
                    f"{where}: layer {k + 1} has shape {w.shape} / {b.shape}, "
                    f"expected ({size}, n) / (n,)"
                )
            size = w.shape[1]
        if size != 1:
            raise InvalidInputError(f"{where}: the last layer has {size} outputs, expected 1")
        if not all(np.isfinite(p).all() for p in self.params()):
            raise InvalidInputError(f"{where}: holds values that are not finite")


_SHIPPED: dict[str, QNet] = {}


def shipped(model: str = "dmc") -> QNet:
    """A network that ships with the package (loaded once), by name (:data:`MODELS`).

    Raises:
        InvalidInputError: an unknown name, naming the shipped ones.
    """
    if model not in MODELS:
        raise InvalidInputError(
            f"learned: unknown model {model!r}: allowed {', '.join(sorted(MODELS))}"
        )
    if model not in _SHIPPED:
        from importlib import resources

        path = resources.files("koikoi.agents").joinpath("data", MODELS[model])
        with resources.as_file(path) as p:
            _SHIPPED[model] = QNet.load(p)
    return _SHIPPED[model]


class LearnedAgent:
    """Plays the legal action with the highest learned value (ties: the first in legal order)."""

    def __init__(self, net: QNet, name: str = "learned") -> None:
        self.net = net
        self.name = name

    def act(self, view: PlayerView, rng: random.Random) -> int:
        ids = view.legal_ids
        if len(ids) == 1:
            return ids[0]
        values = self.net.values(view)
        return max(ids, key=lambda a: values[a])


_PARAMS: Final = ("model", "file")


def from_spec(params: Mapping[str, str], raw: str) -> LearnedAgent:
    """Build from ``learned``, ``learned:model=dmc|ppo`` or ``learned:file=PATH.npz``.

    Raises:
        InvalidInputError: an unknown parameter, both given, an unknown model,
            or a file that is not a weights file for this koikoi.
    """
    for key in params:
        if key not in _PARAMS:
            raise InvalidInputError(
                f"learned: unknown parameter {key!r}: allowed {', '.join(_PARAMS)} "
                f"(e.g. learned:model=dmc or learned:file=my-net.npz)"
            )
    if "model" in params and "file" in params:
        raise InvalidInputError("learned: give model=NAME or file=PATH, not both")
    if "file" in params:
        path = params["file"]
        if not path:
            raise InvalidInputError("learned: file= needs the path of a weights file (.npz)")
        return LearnedAgent(QNet.load(path), name=f"learned:file={path}")
    model = params.get("model", "dmc")
    net = shipped(model)
    return LearnedAgent(net, name="learned" if model == "dmc" else f"learned:model={model}")
