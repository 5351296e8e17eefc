"""The value network: a tiny model trains (its loss falls), saves, loads, and bad files fail."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from koikoi.agents import valuenet
from koikoi.agents.valuenet import Dataset, ValueNet, generate, train
from koikoi.cli import main
from koikoi.game.engine import Match
from koikoi.game.errors import InvalidInputError
from koikoi.game.views import determinize, view_of, view_of_round
from koikoi.kernel import encoding


@pytest.fixture(scope="module")
def data() -> Dataset:
    return generate(["leaflet", "nintendo"], 40, seed=3)


def test_generated_positions(data: Dataset) -> None:
    assert data.x.shape == (len(data), encoding.SIZE) and len(data) > 200
    assert np.isfinite(data.y).all()
    # Targets are net round points / SCALE: whole points.
    assert np.allclose(np.round(data.y * valuenet.SCALE), data.y * valuenet.SCALE, atol=1e-4)
    again = generate(["leaflet", "nintendo"], 40, seed=3)
    assert np.array_equal(again.x, data.x) and np.array_equal(again.y, data.y)


def test_loss_falls_and_training_is_reproducible(data: Dataset) -> None:
    a = train(data, hidden=(16,), epochs=6, seed=1)
    first, last = a.curve[0]["train_loss"], a.curve[-1]["train_loss"]
    assert last < first
    b = train(data, hidden=(16,), epochs=6, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(a.net.weights, b.net.weights, strict=True))


def test_save_and_load(data: Dataset, tmp_path: Path) -> None:
    net = train(data, hidden=(8, 4), epochs=1, seed=0).net
    path = tmp_path / "net.npz"
    net.save(path)
    loaded = ValueNet.load(path)
    view = view_of(Match(seed=2), 0)
    assert loaded.value(view) == pytest.approx(net.value(view), abs=1e-6)
    assert loaded.meta["curve"] == net.meta["curve"]


def test_value_ignores_hidden_cards() -> None:
    net = ValueNet.create(hidden=(8,), seed=0)
    m = Match(seed=4)
    view = view_of(m, 0)
    det = determinize(view, random.Random(9))
    assert net.value(view_of_round(det, 0, rounds=view.rounds)) == net.value(view)


def _write(path: Path, meta: object, **arrays: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(json.dumps(meta)), **arrays)
    path.write_bytes(buf.getvalue())


def test_bad_files_give_clear_errors(tmp_path: Path) -> None:
    good = ValueNet.create(hidden=(4,), seed=0)
    cases: list[tuple[str, str]] = []
    p = tmp_path / "missing.npz"
    cases.append((str(p), "cannot read"))
    p = tmp_path / "text.npz"
    p.write_text("hello")
    cases.append((str(p), "not a weights file"))
    p = tmp_path / "other.npz"
    _write(p, {"format": "something-else"}, w0=good.weights[0])
    cases.append((str(p), "not a koikoi-value-net file"))
    p = tmp_path / "enc.npz"
    _write(p, {**good.meta, "encoding_version": 99}, w0=good.weights[0], b0=good.biases[0])
    cases.append((str(p), "encoding version 99"))
    p = tmp_path / "features.npz"
    names = [*good.meta["feature_names"][:-1], "rules:yaku.moon_viewing_party"]
    meta = {**good.meta, "features": "0000", "feature_names": names}
    _write(p, meta, w0=good.weights[0], b0=good.biases[0])
    cases.append((str(p), "unknown features: ['rules:yaku.moon_viewing_party']"))
    p = tmp_path / "shape.npz"
    _write(p, good.meta, w0=np.zeros((3, 1), np.float32), b0=np.zeros(1, np.float32))
    cases.append((str(p), "layer 0 has shape (3, 1)"))
    p = tmp_path / "nan.npz"
    w = good.weights[0].copy()
    w[0, 0] = np.nan
    _write(p, good.meta, w0=w, b0=good.biases[0], w1=good.weights[1], b1=good.biases[1])
    cases.append((str(p), "not finite"))
    for path, message in cases:
        with pytest.raises(InvalidInputError, match=re.escape(message)):
            ValueNet.load(path)


def test_shipped_network_loads_and_predicts_a_sensible_sign() -> None:
    net = valuenet.shipped()
    assert net.meta["recipe"]["command"].startswith("koikoi train value")
    curve = net.meta["curve"]
    # It predicts held-out rounds better than their mean does.
    assert min(c["valid_loss"] for c in curve) < curve[0]["valid_variance"]
    assert 1 <= net.meta["best_epoch"] <= len(curve)
    m = Match(seed=1)
    assert abs(net.value(view_of(m, 0))) < 20


def test_train_value_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tiny.npz"
    argv = ["train", "value", "--rounds", "12", "--epochs", "2", "--hidden", "8"]
    assert main([*argv, "--rules", "leaflet", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["curve"]) == 2 and report["recipe"]["rules"] == ["leaflet"]
    assert ValueNet.load(out).meta["recipe"]["command"].startswith("koikoi train value")
    assert main([*argv[:-2], "--hidden", "8,x", "--out", str(out)]) == 2
    assert "--hidden must be whole numbers" in capsys.readouterr().err
