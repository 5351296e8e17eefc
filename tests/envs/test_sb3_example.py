"""examples/train_maskable_ppo.py: its stable-baselines3 adapter drives MaskablePPO.

Runs only where sb3-contrib (and torch) are installed; they are not dependencies
of koikoi, so CI skips it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("sb3_contrib")
np = pytest.importorskip("numpy")

from koikoi.envs import vector  # noqa: E402

pytestmark = pytest.mark.skipif(not vector.available(), reason="numba is not installed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_maskable_ppo.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_maskable_ppo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("actions", ["playable", "dense"])
def test_maskable_ppo_trains_a_few_hundred_steps_and_predicts_legal_moves(actions: str) -> None:
    import argparse

    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_checker import check_env  # noqa: F401 - sb3 importable
    from stable_baselines3.common.vec_env import VecMonitor

    example = _example()
    envs = VecMonitor(example.KoiKoiVecEnv(8, "leaflet", 0, actions))
    assert is_masking_supported(envs)
    args = argparse.Namespace(rollout=32, batch=64, epochs=4, entropy=0.0, seed=0)
    model = example.make_model(envs, args)
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # rounds ended and were counted

    obs = envs.reset()
    masks = get_action_masks(envs)
    assert masks.shape == (8, 334 if actions == "playable" else 2450)
    for _ in range(30):
        masks = get_action_masks(envs)
        chosen, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[np.arange(8), chosen].all()  # the policy keeps to the legal moves
        obs, rewards, dones, _ = envs.step(chosen)
        assert obs.dtype == np.float32 and obs.shape == (8, 540)
        assert not rewards[~dones].any()


def test_evaluation_plays_each_environments_first_round() -> None:
    example = _example()

    def uniform(obs: object, env: object) -> object:
        return env.sample_actions()  # type: ignore[attr-defined]

    a = example.evaluate("leaflet", "playable", uniform, 50, 123)
    b = example.evaluate("leaflet", "playable", uniform, 50, 123)
    assert a.shape == (50,) and np.array_equal(a, b)
    assert 0.0 < (a > 0).mean() < 1.0


def test_the_optional_example_of_the_research_page_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import re
    import sys

    doc = EXAMPLE.parents[1] / "docs" / "research.md"
    text = doc.read_text(encoding="utf-8")
    match = re.search(r"<!-- optional[^\n]*\n```python\n(.*?)```", text, re.DOTALL)
    assert match is not None
    monkeypatch.chdir(EXAMPLE.parents[1])
    monkeypatch.setattr(sys, "path", list(sys.path))
    exec(compile(match.group(1), str(doc), "exec"), {"__name__": "__docs__"})
    assert len(capsys.readouterr().out.split()) >= 8
