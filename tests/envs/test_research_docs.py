"""Every ```python example of docs/research.md runs (except the one marked optional)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytest.importorskip("numpy")
pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")
pytest.importorskip("pyspiel")

DOC = Path(__file__).resolve().parents[2] / "docs" / "research.md"
OPTIONAL = "<!-- optional"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks() -> list[tuple[int, str, bool]]:
    """(line number, code, optional) of every python block of the page."""
    text = DOC.read_text(encoding="utf-8")
    out = []
    for match in BLOCK.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        optional = bool(before) and before[-1].startswith(OPTIONAL)
        out.append((text.count("\n", 0, match.start()) + 1, match.group(1), optional))
    return out


def test_the_page_has_an_example_per_interface_and_one_optional() -> None:
    blocks = _blocks()
    assert len(blocks) >= 6
    assert [optional for _, _, optional in blocks].count(True) == 1
    code = "\n".join(c for _, c, _ in blocks)
    for name in (
        "koikoi.game.positions",
        "kernel.encoding",
        "envs.pettingzoo",
        "gymnasium",
        "pyspiel",
    ):
        assert name in code


@pytest.mark.parametrize(
    ("line", "code"),
    [pytest.param(line, code, id=f"line{line}") for line, code, opt in _blocks() if not opt],
)
def test_example_runs(line: int, code: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{DOC}:{line}", "exec"), {"__name__": "__docs__"})
    assert out.getvalue().strip(), "each example prints what it shows"
