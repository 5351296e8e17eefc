"""``scripts/soak.py``: its pieces (fast) and a small soak of a real server (slow)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"


@pytest.fixture(scope="module")
def soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak_script"] = module
    spec.loader.exec_module(module)
    return module


def test_rss_is_read_from_the_status_file(soak: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "status").write_text("Name:\tpython\nVmRSS:\t  51200 kB\nThreads: 3\n")
    assert soak.rss_mib(42, tmp_path) == 50.0
    (tmp_path / "43").mkdir()
    (tmp_path / "43" / "status").write_text("Name:\tzombie\n")
    with pytest.raises(RuntimeError, match="no VmRSS line"):
        soak.rss_mib(43, tmp_path)
    with pytest.raises(RuntimeError, match="cannot read the memory of process 44"):
        soak.rss_mib(44, tmp_path)
    assert soak.rss_mib(os.getpid()) > 1  # this process, on Linux


def samples(soak: ModuleType, rss: list[float], step: int = 100) -> list[object]:
    return [soak.Sample(i * step, mib, 0, float(i)) for i, mib in enumerate(rss)]


def test_the_verdict_looks_at_the_second_half_only(soak: ModuleType) -> None:
    # Warm-up growth in the first half, then noise: flat.
    warm = samples(soak, [60, 70, 76, 79, 80, 81, 80.5, 81.2, 80.8, 81.1, 81.0])
    flat, growth = soak.verdict(warm)
    assert flat and abs(growth) < 1
    # 2 KiB per game over the second half's 500 games: about 1 MiB, still under 8...
    small = samples(soak, [60 + 0.002 * 100 * i for i in range(11)])
    assert soak.second_half_growth(small) == pytest.approx(1.0, rel=0.01)
    # ...but 20 KiB per game (a room kept now and then) grows 10 MiB: not flat.
    leak = samples(soak, [60 + 0.02 * 100 * i for i in range(11)])
    flat, growth = soak.verdict(leak)
    assert not flat and growth == pytest.approx(10.0, rel=0.01)
    assert soak.verdict(leak, flat_mib=12.0)[0] is True
    # One spike inside the half does not decide: the slope of the fit counts.
    spike = samples(soak, [80, 80, 80, 80, 80, 80, 80, 80, 95, 80, 80])
    assert soak.second_half_growth(spike) < soak.FLAT_MIB
    assert soak.second_half_growth([]) == 0.0


def test_the_table_and_bad_arguments(soak: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    text = soak.table([soak.Sample(1500, 80.25, 12, 30.4)])
    assert text.splitlines()[-1] == "| 1,500 | 80.2 | 12 | 30 |"
    for argv, words in (
        (["--games", "1"], "--games must be at least 2, not 1"),
        (["--concurrency", "0"], "--concurrency 1 or more"),
        (["--grace", "0"], "--grace and --flat-mib above 0"),
    ):
        with pytest.raises(SystemExit):
            soak.parse(argv)
        assert words in capsys.readouterr().err
    assert soak.parse(["--games", "300"]).every == 15


@pytest.mark.multiprocess
@pytest.mark.slow
def test_a_small_soak_keeps_memory_flat_and_stores_every_record(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    env = dict(os.environ)
    src = str(SCRIPT.parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--games", "300", "--every", "30", "--json", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["games"] == 300 and result["records_missing"] == 0
    assert result["errors"] == 0 and result["flat"] is True
    assert len(result["samples"]) == 11  # the start, then every 30 games
    assert result["samples"][-1]["games"] == 300
