"""docs/architecture.md matches the code: its tree names every package and every
module of the game and the kernel, and its layers are the import contract's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "koikoi"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _tree() -> str:
    match = re.search(r"```\nsrc/koikoi/\n(.*?)```", DOC, re.S)
    if match is None:
        raise AssertionError("docs/architecture.md has no tree block starting with src/koikoi/")
    return match.group(1)


def _top_level(tree: str) -> set[str]:
    return set(re.findall(r"^[├└]── (\w+)/", tree, re.M))


def _children(tree: str, package: str) -> set[str]:
    block = re.search(rf"^[├└]── {package}/.*?\n((?:│   .*\n)+)", tree, re.M)
    if block is None:
        raise AssertionError(f"the tree lists no modules under {package}/")
    return set(re.findall(r"[├└]── (\w+)\.py", block.group(1)))


def test_the_tree_names_every_package() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert _top_level(_tree()) == packages


def test_the_tree_names_every_module_of_the_game_and_the_kernel() -> None:
    tree = _tree()
    for package in ("game", "kernel"):
        modules = {p.stem for p in (PACKAGE / package).glob("*.py") if p.stem != "__init__"}
        assert _children(tree, package) == modules, package


def test_the_layers_in_the_doc_are_the_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    listed = re.search(r"`layers`: the order above \(([^)]*)\)", DOC, re.S)
    assert listed is not None
    assert re.findall(r"`([^`]+)`", listed.group(1)) == layers
    # and the drawing has them in the same order, top to bottom
    drawing = re.search(r"## The layers and the arrows\n\n```\n(.*?)```", DOC, re.S)
    assert drawing is not None
    names = [
        n for line in drawing.group(1).splitlines() for n in re.findall(r"\b[a-z0-9]+\b", line)
    ]
    flat = [name for layer in layers for name in layer.split(" | ")]
    order = [n for n in names if n in flat]
    assert order == flat


def test_no_package_exports_a_name_of_one_of_its_modules() -> None:
    # Importing a submodule binds its name on the package, so a function of the
    # same name exported by the package would be replaced by the module.
    import importlib

    for init in PACKAGE.rglob("__init__.py"):
        package = init.parent
        dotted = ".".join(package.relative_to(PACKAGE.parent).parts)
        exported = set(getattr(importlib.import_module(dotted), "__all__", ()))
        modules = {p.stem for p in package.glob("*.py")} | {
            p.name for p in package.iterdir() if (p / "__init__.py").is_file()
        }
        assert not exported & modules, dotted
