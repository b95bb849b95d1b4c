"""The layers of ARCHITECTURE.md, checked on the source: no module imports a layer above
its own, no source imports another source, and no two modules import each other
(directly or around a loop), lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("schemas", "repo2rlenv", "smoldataenvs", "train")

# Module prefix -> layer; the longest matching prefix wins. Keep in step with
# ARCHITECTURE.md.
LAYERS: dict[str, int] = {
    "schemas": 0,
    "repo2rlenv": 1,
    "repo2rlenv.mining": 2,
    "repo2rlenv.anchors": 2,
    "repo2rlenv.decontam": 2,
    "repo2rlenv.cli": 2,
    "repo2rlenv.commands": 2,
    "repo2rlenv.__main__": 2,
    "smoldataenvs": 2,
    "train.tasks": 3,
    "train.split": 3,
    "train.imbalance": 3,
    "train.config": 3,
    "train.reward": 3,
    "train.rollouts": 3,
    "train.serving": 4,
    "train.harnesses": 4,
    "train.guard": 4,
    "train.evaluate": 4,
    "train.rollout_ui": 4,
    "train": 5,
}
LAYER_NAMES = ("schemas", "task core", "sources", "task sets", "rollout stack", "training")

# Sources are peers: neither may import the other (the `repo2rlenv` command finds the
# notebooks through the `rlenv_harvest.sources` entry point).
PEERS = (("repo2rlenv", "smoldataenvs"),)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path) -> set[str]:
    """Every project module `name` imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(_resolve(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in MODULES else _resolve(base))
    return {t for t in targets if t and t != name and t.split(".")[0] in PACKAGES}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def layer_of(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def test_every_module_has_a_layer() -> None:
    assert MODULES, "no project module found"
    for module in MODULES:
        assert layer_of(module) in range(len(LAYER_NAMES))


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{src} ({LAYER_NAMES[layer_of(src)]}) imports {dst} ({LAYER_NAMES[layer_of(dst)]})"
        for src, targets in GRAPH.items()
        for dst in sorted(targets)
        if layer_of(dst) > layer_of(src)
    ]
    assert upward == []


@pytest.mark.parametrize(("left", "right"), PEERS)
def test_sources_do_not_import_each_other(left: str, right: str) -> None:
    def crossing(a: str, b: str) -> list[str]:
        return [
            f"{src} imports {dst}"
            for src, targets in GRAPH.items()
            if src.split(".")[0] == a and layer_of(src) == 2
            for dst in sorted(targets)
            if dst.split(".")[0] == b and layer_of(dst) == 2
        ]

    assert crossing(left, right) + crossing(right, left) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_loop() -> None:
    loop = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(loop) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    assert _cycles(GRAPH) == []
