"""One console module per layer, and no re-exports between them (ARCHITECTURE.md,
"Where console output goes"): every name a module takes from a console module is
defined in that module, so a message helper has one home and a reader finds it there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONSOLES = {
    "repo2rlenv.ui": ROOT / "repo2rlenv" / "ui.py",
    "train.rollout.ui": ROOT / "train" / "rollout" / "ui.py",
    "train.ui": ROOT / "train" / "ui.py",
}
SOURCES = ("repo2rlenv", "smoldataenvs", "train", "benchmarks", "tests")


def defined_names(tree: ast.Module) -> set[str]:
    """Names a module defines itself: functions, classes, assigned globals (not imports)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def borrowed(tree: ast.Module) -> set[tuple[str, str]]:
    """(console, name) for every name this module takes from a console module, by
    `from console import name` or `console_alias.name`."""
    aliases: dict[str, str] = {}
    used: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if node.module in CONSOLES:
                    used.add((node.module, alias.name))
                elif f"{node.module}.{alias.name}" in CONSOLES:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in CONSOLES and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            used.add((aliases[node.value.id], node.attr))
    return used


def foreign_uses(files: list[Path], defined: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{path}: {console}.{name}"
        for path in files
        for console, name in borrowed(ast.parse(path.read_text(), str(path)))
        if name not in defined[console]
    )


DEFINED = {name: defined_names(ast.parse(path.read_text())) for name, path in CONSOLES.items()}


def test_every_name_taken_from_a_console_is_defined_there() -> None:
    files = [p for package in SOURCES for p in sorted((ROOT / package).rglob("*.py"))]
    assert files
    assert foreign_uses(files, DEFINED) == []


@pytest.mark.parametrize(
    "source", ["from train.ui import info", "from train import ui\nui.warn('x')"]
)
def test_a_re_exported_helper_is_caught(source: str, tmp_path: Path) -> None:
    path = tmp_path / "user.py"
    path.write_text(source)
    defined = {**DEFINED, "train.ui": {"split_table"}}
    assert len(foreign_uses([path], defined)) == 1
