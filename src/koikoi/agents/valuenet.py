"""A learned value of a player's position: a small network over the information-state encoding.

The network reads :func:`koikoi.kernel.encoding.encode` of a player's view (the
active rules' yaku values and multipliers included) and predicts the round's
net points for that player (points won minus points lost), learned from
self-play: every position with a choice, seen by both players, labelled with
how the round ended (Monte Carlo returns, as in Deep Monte Carlo).

Inference is numpy only (a few small matrix products, far under a
millisecond); training is numpy too (:func:`train`, Adam on mean squared
error), reproducible from its seed with ``koikoi train value``. The weights
file is a ``.npz`` with the arrays and a JSON header that names the encoding
version, every input feature, the recipe (command and seed) and the training
curve; a file that does not fit the current encoding is refused with an error
that says what differs.

>>> from koikoi.game.engine import Match
>>> from koikoi.game.views import view_of
>>> net = ValueNet.create(hidden=(8,), seed=0)
>>> isinstance(net.value(view_of(Match(seed=1), 0)), float)
True
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from koikoi.game.errors import InvalidInputError
from koikoi.game.views import PlayerView
from koikoi.kernel import encoding

__all__ = [
    "FORMAT",
    "SCALE",
    "Dataset",
    "TrainResult",
    "ValueNet",
    "features_digest",
    "generate",
    "read_weights",
    "shipped",
    "train",
    "write_weights",
]

FORMAT: Final = "koikoi-value-net"
VERSION: Final = 1
SCALE: Final = 10.0
"""The network predicts net round points divided by this."""
SHIPPED: Final = "value-net.npz"

Array = npt.NDArray[np.float32]


def features_digest(features: Sequence[str]) -> str:
    """A short hash of feature names, kept in a weights file's header: a file made for
    other features is refused on loading."""
    return hashlib.sha256("\n".join(features).encode()).hexdigest()[:16]


def write_weights(path: str | Path, meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Write a weights file: ``arrays`` and the JSON header ``meta`` (``.npz``,
    compressed); the value network's and the learned agents' format."""
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.array(json.dumps(meta, sort_keys=True)), **arrays)
    Path(path).write_bytes(buf.getvalue())


def layer_arrays(
    weights: list[npt.NDArray[np.float32]], biases: list[npt.NDArray[np.float32]]
) -> dict[str, Any]:
    """The arrays of a perceptron's layers as a weights file keeps them: ``w0``, ``b0``, ..."""
    arrays: dict[str, Any] = {}
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        arrays[f"w{i}"] = w
        arrays[f"b{i}"] = b
    return arrays


def read_layers(
    arrays: dict[str, npt.NDArray[Any]], where: str
) -> tuple[list[npt.NDArray[np.float32]], list[npt.NDArray[np.float32]]]:
    """The layers of :func:`layer_arrays` back from a weights file's arrays, in order.

    Raises:
        InvalidInputError: a layer with weights but no biases.
    """
    weights, biases = [], []
    i = 0
    while f"w{i}" in arrays:
        if f"b{i}" not in arrays:
            raise InvalidInputError(f"{where}: layer {i} has weights but no biases")
        weights.append(np.asarray(arrays[f"w{i}"], dtype=np.float32))
        biases.append(np.asarray(arrays[f"b{i}"], dtype=np.float32))
        i += 1
    return weights, biases


def read_weights(path: str | Path) -> dict[str, npt.NDArray[Any]]:
    """The arrays of a weights file (:func:`write_weights`), the header among them.

    Raises:
        InvalidInputError: the file cannot be read, or is not an ``.npz`` file.
    """
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"{where}: cannot read the weights file ({exc.strerror})") from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError) as exc:
        raise InvalidInputError(f"{where}: not a weights file (.npz): {exc}") from None


@dataclass
class ValueNet:
    """A multilayer perceptron (ReLU) from the encoding to net round points / :data:`SCALE`."""

    weights: list[Array]
    biases: list[Array]
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, *, hidden: Sequence[int] = (128, 64), seed: int = 0) -> ValueNet:
        """A freshly initialised network (He initialisation, seeded)."""
        rng = np.random.default_rng(seed)
        sizes = [encoding.SIZE, *hidden, 1]
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
            "n_features": encoding.SIZE,
            "hidden": list(hidden),
            "scale": SCALE,
            "feature_names": list(encoding.FEATURES),
        }
        return cls(weights, biases, meta)

    # ---------------------------------------------------------- inference

    def forward(self, x: Array) -> Array:
        """Outputs (scaled) for a batch ``x`` of encodings, shape ``(n, SIZE)`` -> ``(n,)``."""
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < last:
                h = np.maximum(h, 0.0)
        out: Array = h[:, 0]
        return out

    def value(self, view: PlayerView) -> float:
        """The expected net round points of ``view``'s player."""
        x = encoding.encode(view)[None, :]
        return float(self.forward(x)[0]) * SCALE

    def values(self, views: Sequence[PlayerView]) -> list[float]:
        """:meth:`value` of many views in one batch."""
        x = np.empty((len(views), encoding.SIZE), dtype=np.float32)
        for i, v in enumerate(views):
            encoding.encode_into(v, x[i])
        return [float(v) * SCALE for v in self.forward(x)]

    # -------------------------------------------------------------- files

    def save(self, path: str | Path) -> None:
        """Write the weights and the header (``.npz``)."""
        write_weights(path, self.meta, layer_arrays(self.weights, self.biases))

    @classmethod
    def load(cls, path: str | Path) -> ValueNet:
        """Read a weights file, checking it fits this version's encoding.

        Raises:
            InvalidInputError: not a readable weights file, another format, or made
                for another encoding (the message names what differs).
        """
        where = str(path)
        arrays = read_weights(path)
        if "meta" not in arrays:
            raise InvalidInputError(f"{where}: no header: not a {FORMAT} file")
        try:
            meta = json.loads(str(arrays["meta"]))
        except json.JSONDecodeError:
            raise InvalidInputError(f"{where}: the header is not JSON") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise InvalidInputError(f"{where}: not a {FORMAT} file")
        if meta.get("version") != VERSION:
            raise InvalidInputError(
                f"{where}: file version {meta.get('version')!r}, this koikoi reads {VERSION}"
            )
        if meta.get("encoding_version") != encoding.ENCODING_VERSION:
            raise InvalidInputError(
                f"{where}: made for encoding version {meta.get('encoding_version')!r}, "
                f"this koikoi has version {encoding.ENCODING_VERSION}: "
                "retrain it (koikoi train value)"
            )
        if meta.get("features") != features_digest(encoding.FEATURES):
            names = meta.get("feature_names")
            detail = ""
            if isinstance(names, list):
                unknown = [n for n in names if n not in encoding.FEATURES]
                missing = [n for n in encoding.FEATURES if n not in names]
                detail = f" (unknown features: {unknown[:5]}; missing: {missing[:5]})"
            raise InvalidInputError(
                f"{where}: its input features differ from this koikoi's encoding{detail}: "
                "retrain it (koikoi train value)"
            )
        weights, biases = read_layers(arrays, where)
        if not weights:
            raise InvalidInputError(f"{where}: no layers")
        size = encoding.SIZE
        for k, (w, b) in enumerate(zip(weights, biases, strict=True)):
            if w.ndim != 2 or w.shape[0] != size or b.shape != (w.shape[1],):
                raise InvalidInputError(
                    f"{where}: layer {k} has shape {w.shape} / {b.shape}, "
                    f"expected ({size}, n) / (n,)"
                )
            if not (np.isfinite(w).all() and np.isfinite(b).all()):
                raise InvalidInputError(f"{where}: layer {k} holds values that are not finite")
            size = w.shape[1]
        if size != 1:
            raise InvalidInputError(f"{where}: the last layer has {size} outputs, expected 1")
        return cls(weights, biases, meta)


_SHIPPED: list[ValueNet] = []


def shipped() -> ValueNet:
    """The network that ships with the package (loaded once)."""
    if not _SHIPPED:
        from importlib import resources

        path = resources.files("koikoi.agents").joinpath("data", SHIPPED)
        with resources.as_file(path) as p:
            _SHIPPED.append(ValueNet.load(p))
    return _SHIPPED[0]


# ---------------------------------------------------------------- training


@dataclass
class Dataset:
    """Encodings ``x`` (n, SIZE), targets ``y`` (n,): net round points / :data:`SCALE`,
    and ``rounds`` (n,): which round each position comes from (positions of one round
    share their label, so held-out positions must come from held-out rounds)."""

    x: Array
    y: Array
    rounds: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        return int(self.y.shape[0])


def generate(
    rules_names: Sequence[str],
    rounds: int,
    *,
    seed: int = 0,
    agent: str = "heuristic",
    explore: float = 0.1,
    progress: Callable[[int], None] | None = None,
) -> Dataset:
    """Self-play data: ``rounds`` rounds spread over ``rules_names``.

    Both seats are played by ``agent``; with probability ``explore`` a move is
    uniformly random instead (so the data also covers positions a good player
    would avoid). Every position with a choice is labelled with the round's net
    result from both sides: the acting player's view and the waiting player's.
    """
    from koikoi.agents import make_agent
    from koikoi.game.engine import Match
    from koikoi.game.rules import load_rules
    from koikoi.game.views import view_of

    if rounds < 1:
        raise InvalidInputError(f"rounds must be 1 or more, not {rounds}")
    if not rules_names:
        raise InvalidInputError("give at least one rule set")
    rule_sets = [load_rules(name) for name in rules_names]
    players = [make_agent(agent), make_agent(agent)]
    rng = random.Random(seed)
    xs: list[Array] = []
    ys: list[float] = []
    groups: list[int] = []
    done = 0
    match_no = 0
    while done < rounds:
        rules = rule_sets[match_no % len(rule_sets)]
        m = Match(rules, seed=seed * 7_919 + match_no, events=False)
        match_no += 1
        pending: list[tuple[Array, int]] = []
        while not m.is_over and done < rounds:
            before = len(m.settlements)
            p = m.current
            view = view_of(m, p, with_history=False)
            if len(view.legal_ids) > 1:
                pending.append((encoding.encode(view), p))
                # The same moment from the waiting player's side: a search values the
                # position after its own move, when the opponent is to act.
                other = view_of(m, 1 - p, with_history=False)
                pending.append((encoding.encode(other), 1 - p))
                if rng.random() < explore:
                    action = view.legal_ids[int(rng.random() * len(view.legal_ids))]
                else:
                    action = players[p].act(view, rng)
            else:
                action = view.legal_ids[0]
            m.apply_id(action)
            if len(m.settlements) > before:
                s = m.settlements[before]
                for x, who in pending:
                    net = 0 if s.winner is None else (s.points if s.winner == who else -s.points)
                    xs.append(x)
                    ys.append(net / SCALE)
                    groups.append(done)
                pending = []
                done += len(m.settlements) - before
                if progress is not None:
                    progress(done)
    if not xs:
        return Dataset(np.zeros((0, encoding.SIZE), np.float32), np.zeros(0, np.float32))
    return Dataset(
        np.stack(xs).astype(np.float32),
        np.array(ys, dtype=np.float32),
        np.array(groups, dtype=np.int64),
    )


@dataclass
class TrainResult:
    net: ValueNet
    curve: list[dict[str, float]]
    seconds: float


def train(
    data: Dataset,
    *,
    hidden: Sequence[int] = (128, 64),
    epochs: int = 10,
    batch: int = 256,
    lr: float = 1e-3,
    seed: int = 0,
    valid_share: float = 0.1,
    weight_decay: float = 0.0,
    progress: Callable[[dict[str, float]], None] | None = None,
) -> TrainResult:
    """Fit a :class:`ValueNet` to ``data`` (Adam, mean squared error), reproducibly.

    A share ``valid_share`` of the rounds (chosen by the seed) is held out, with
    all their positions; the curve has the training and held-out loss after every
    epoch, and the held-out targets' variance (the loss of always predicting
    their mean). The returned network has the weights of the epoch with the
    lowest held-out loss (``meta["best_epoch"]``). ``weight_decay`` is an L2
    penalty on the weights.
    """
    if len(data) < 2:
        raise InvalidInputError(f"training needs at least 2 positions, not {len(data)}")
    if epochs < 1 or batch < 1 or not lr > 0:
        raise InvalidInputError("epochs and batch must be 1 or more and lr positive")
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    groups = data.rounds if data.rounds is not None else np.arange(len(data))
    ids = np.unique(groups)
    held = rng.permutation(ids)[: max(1, int(len(ids) * valid_share))]
    is_valid = np.isin(groups, held)
    valid, fit = np.flatnonzero(is_valid), np.flatnonzero(~is_valid)
    if len(fit) == 0:
        raise InvalidInputError("training needs positions from at least 2 rounds")
    xv, yv = data.x[valid], data.y[valid]
    baseline = float(np.var(yv))
    net = ValueNet.create(hidden=hidden, seed=seed)
    params = [*net.weights, *net.biases]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    curve: list[dict[str, float]] = []
    n_layers = len(net.weights)
    best_loss = math.inf
    best = ([w.copy() for w in net.weights], [b.copy() for b in net.biases], 0)

    def loss_of(x: Array, y: Array) -> float:
        return float(np.mean((net.forward(x) - y) ** 2))

    for epoch in range(1, epochs + 1):
        perm = fit[rng.permutation(len(fit))]
        total = 0.0
        for k in range(0, len(perm), batch):
            idx = perm[k : k + batch]
            x, y = data.x[idx], data.y[idx]
            # forward, keeping activations
            acts = [x]
            h = x
            for i in range(n_layers):
                h = h @ net.weights[i] + net.biases[i]
                if i < n_layers - 1:
                    h = np.maximum(h, 0.0)
                acts.append(h)
            err = h[:, 0] - y
            total += float(np.sum(err**2))
            grad = (2.0 / len(idx)) * err[:, None].astype(np.float32)
            gw: list[Array] = [np.empty(0, np.float32)] * n_layers
            gb: list[Array] = [np.empty(0, np.float32)] * n_layers
            for i in range(n_layers - 1, -1, -1):
                gw[i] = acts[i].T @ grad + weight_decay * net.weights[i]
                gb[i] = grad.sum(axis=0)
                if i > 0:
                    grad = (grad @ net.weights[i].T) * (acts[i] > 0)
            step += 1
            grads = [*gw, *gb]
            for j, (p, g) in enumerate(zip(params, grads, strict=True)):
                m1[j] = beta1 * m1[j] + (1 - beta1) * g
                m2[j] = beta2 * m2[j] + (1 - beta2) * g * g
                mh = m1[j] / (1 - beta1**step)
                vh = m2[j] / (1 - beta2**step)
                p -= (lr * mh / (np.sqrt(vh) + eps)).astype(np.float32)
        point = {
            "epoch": float(epoch),
            "train_loss": total / max(len(fit), 1),
            "valid_loss": loss_of(xv, yv),
            "valid_variance": baseline,
        }
        curve.append(point)
        if point["valid_loss"] < best_loss:
            best_loss = point["valid_loss"]
            best = ([w.copy() for w in net.weights], [b.copy() for b in net.biases], epoch)
        if progress is not None:
            progress(point)
    # Keep the epoch with the lowest held-out loss (early stopping).
    net.weights[:], net.biases[:], best_epoch = best
    net.meta["best_epoch"] = best_epoch
    net.meta["curve"] = curve
    net.meta["samples"] = len(data)
    return TrainResult(net=net, curve=curve, seconds=time.perf_counter() - start)
