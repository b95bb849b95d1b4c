"""The layers of ARCHITECTURE.md, checked on the source: no module imports a layer above
its own, no source imports another source, and no two modules import each other
(directly or around a loop), lazy imports inside functions included."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("schemas", "repo2rlenv", "smoldataenvs", "train")

ARCHITECTURE = ROOT / "ARCHITECTURE.md"
_ROW = re.compile(r"^\| (\d) \| ([^|]+?) \| (.+) \|$")
_PATH = re.compile(r"`([\w./]+(?:/|\.py))`")


def read_layer_table(text: str) -> tuple[dict[str, int], tuple[str, ...]]:
    """ARCHITECTURE.md's layer table: folder or file path -> layer, and the layer names.

    The table is the one place a layer is assigned: a module's layer is that of the
    deepest folder (or file) listed that holds it, so moving a module into another
    folder moves it into that folder's layer."""
    paths: dict[str, int] = {}
    names: dict[int, str] = {}
    for line in text.splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        layer = int(row[1])
        names[layer] = row[2].strip()
        for path in _PATH.findall(row[3]):
            assert path not in paths, f"{path} is listed in two layers"
            paths[path.rstrip("/")] = layer
    assert sorted(names) == list(range(len(names))), f"layers not numbered 0..n: {names}"
    return paths, tuple(names[i] for i in range(len(names)))


LAYERS, LAYER_NAMES = read_layer_table(ARCHITECTURE.read_text())

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
    """The layer of the deepest listed folder (or file) holding the module's file."""
    path = MODULES[module].relative_to(ROOT).as_posix()
    holders = [p for p in LAYERS if path == p or path.startswith(p + "/")]
    assert holders, f"{path} is in no folder of ARCHITECTURE.md's layer table"
    return LAYERS[max(holders, key=len)]


def test_every_module_has_a_layer() -> None:
    assert MODULES, "no project module found"
    for module in MODULES:
        assert layer_of(module) in range(len(LAYER_NAMES))


def test_every_path_in_the_layer_table_exists() -> None:
    missing = [path for path in LAYERS if not (ROOT / path).exists()]
    assert missing == []


def test_every_train_sub_package_has_its_own_row() -> None:
    """`train/` is split by layer: a new sub-package must be given a layer on purpose."""
    folders = {
        p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "train").glob("*/__init__.py")
    }
    assert folders, "train has no sub-package"
    assert sorted(folders - set(LAYERS)) == []


def test_the_layer_table_reader_follows_the_folders() -> None:
    table = (
        "| 1 | top | `pkg/` · `pkg/entry.py` |\n"
        "| 0 | base | `pkg/low/` (core) |\n"
        "| x | not a row | `other/` |\n"
    )
    assert read_layer_table(table) == (
        {"pkg": 1, "pkg/entry.py": 1, "pkg/low": 0},
        ("base", "top"),
    )


def test_outside_the_guard_only_its_public_interface_is_imported() -> None:
    """The guard is a standalone proxy: the rollout stack reaches it through
    `train.guard` (its __init__), never a module inside it, so its internals can change
    without an edit elsewhere."""
    deep = [
        f"{src} imports {dst}"
        for src, targets in GRAPH.items()
        if not (src == "train.guard" or src.startswith("train.guard."))
        for dst in sorted(targets)
        if dst.startswith("train.guard.")
    ]
    assert deep == []


def test_what_is_taken_from_the_guard_is_in_its_public_interface() -> None:
    import train.guard

    taken = {
        (name, alias.name)
        for name, path in MODULES.items()
        if not name.startswith("train.guard")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "train.guard"
        for alias in node.names
    }
    assert taken, "nothing outside the guard imports it"
    assert sorted(t for t in taken if t[1] not in train.guard.__all__) == []


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
