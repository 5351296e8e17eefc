"""The wheel: built from the repository, installed with its ``play`` extra in a fresh
virtual environment, it carries every data file and both games start.

Installing the dependencies needs a package index (PyPI, a mirror or pip's local
wheels); without one the test is skipped, saying so. Any other failure fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "koikoi"
HOUSE_RULES = 'extends = "nintendo"\nname = "one-round"\n[game]\nrounds = 1\n'


def _run(args: list[str], cwd: Path, timeout: float = 300) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def _index_reachable(tmp: Path) -> bool:
    """Whether pip can fetch a dependency of the play extra (from any index it knows)."""
    probe = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--dest",
            str(tmp),
            "textual",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return probe.returncode == 0


def _data_files() -> set[str]:
    """Every file of the package that is not Python source, as a path in the wheel."""
    out: set[str] = set()
    for path in PACKAGE.rglob("*"):
        if (
            path.is_file()
            and path.suffix not in (".py", ".pyc")
            and "__pycache__" not in path.parts
        ):
            out.add(path.relative_to(PACKAGE.parent).as_posix())
    return out


def test_wheel_installs_and_plays(tmp_path: Path) -> None:
    if not _index_reachable(tmp_path / "probe"):
        pytest.skip("no package index reachable: pip cannot download the play extra's dependencies")
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(ROOT)],
        tmp_path,
    )
    wheels = list(dist.glob("koikoi-*.whl"))
    assert len(wheels) == 1
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    missing = sorted(_data_files() - names)
    assert missing == [], f"data files missing from the wheel: {missing}"
    assert "koikoi/agents/data/value-net.npz" in names

    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = str(bin_dir / "python")
    _run([python, "-m", "pip", "install", "--quiet", f"{wheels[0]}[play]"], tmp_path)

    koikoi = str(bin_dir / "koikoi")
    assert "nintendo" in _run([koikoi, "rules", "list"], tmp_path)
    house = tmp_path / "one-round.toml"
    house.write_text(HOUSE_RULES, encoding="utf-8")
    report = _run(
        [
            koikoi,
            "arena",
            "expert:net=1,iterations=50",
            "random",
            "--matches",
            "2",
            "--rules",
            str(house),
            "--json",
        ],
        tmp_path,
    )
    agents = json.loads(report)["agents"]
    assert [a["spec"] for a in agents] == ["expert:net=1,iterations=50", "random"]
    assert [a["matches"] for a in agents] == [2, 2]
    assert all(a["forfeits"] == 0 for a in agents)
    _run([python, "-c", "import koikoi.tui.app, koikoi.server.app"], tmp_path)
