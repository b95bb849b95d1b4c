"""Which of the tests a request added can fail on the start state, read from the code.

An extend task proves new behaviour: each of its tests must fail before the reference
and pass after it. A session's new test file often also covers what already worked
(the agent built a module, then wrote tests for all of it); those tests pass on the
start state, so the untouched start scores above 0 and every forgery probe scores the
same (the held-out case of issue 31, refused as `probe.conftest-pass-all` at 0.5).

A test can only fail on the start state if it reaches something the reference adds or
changes. This module finds the names the reference changes (top-level functions,
classes, methods and assignments whose syntax differs or is new), widens them to every
function that uses one (by name, to a fixpoint), and keeps the tests that use one of
them, directly, through a fixture parameter, or through their file's module level (an
import of a new name fails the whole file), or that name a changed file in a string (a
script run by `subprocess`). Names are matched without their module,
so a same-named helper elsewhere only keeps a test (never drops one): the no-op trial
of `validate` stays the proof. Code that cannot be read (a changed file that is not
Python or does not parse) answers None: nothing is dropped on a guess.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable

from repo2rlenv.pysource import parse_python

Definitions = dict[str, str]
"""Bare name -> the syntax of its definition(s), for comparing two versions."""


def _definitions(tree: ast.Module) -> Definitions:
    found: dict[str, list[str]] = {}

    def add(name: str, node: ast.AST) -> None:
        found.setdefault(name, []).append(ast.dump(node))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            add(node.name, node)
        elif isinstance(node, ast.ClassDef):
            add(node.name, ast.ClassDef(**{**node.__dict__, "body": []}))
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    add(item.name, item)
                else:
                    add(node.name, item)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in _names(targets):
                add(name, node)
    return {name: "\n".join(dumps) for name, dumps in found.items()}


def _names(nodes: Iterable[ast.AST]) -> set[str]:
    """Identifiers the nodes use: names, attributes, parameters (pytest fixtures) and
    imported names."""
    used: set[str] = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
            elif isinstance(node, ast.arg):
                used.add(node.arg)
            elif isinstance(node, ast.alias):
                used.add(node.name.rsplit(".", 1)[-1])
                if node.asname:
                    used.add(node.asname)
    return used


def _functions(tree: ast.Module) -> dict[str, set[str]]:
    """Bare name of each function, method and class -> the names it uses (a class: its
    body's, and its methods' names, so a changed method reaches its class's users)."""
    uses: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            uses.setdefault(node.name, set()).update(_names([*node.body, node.args]))
        elif isinstance(node, ast.ClassDef):
            methods = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            uses.setdefault(node.name, set()).update(_names([*node.body, *node.bases]) | methods)
    return uses


def _changes(
    before: dict[str, str], after: dict[str, str | None]
) -> tuple[set[str], set[str]] | None:
    """(names the reference adds or changes, names it adds) in the files it touches
    (`after`: path -> new text, None when it deletes the file); None when a touched file
    is not Python, is deleted or does not parse."""
    changed: set[str] = set()
    added: set[str] = set()
    for path, text in after.items():
        if text is None or not path.endswith(".py"):
            return None
        new = parse_python(text)
        old = parse_python(before[path]) if path in before else ast.Module(body=[])
        if new is None or old is None:
            return None
        old_defs, new_defs = _definitions(old), _definitions(new)
        changed |= {n for n, syntax in new_defs.items() if old_defs.get(n) != syntax}
        changed |= set(old_defs) - set(new_defs)
        added |= set(new_defs) - set(old_defs)
        # Other module-level statements (a registration call, an `if` around imports):
        # what a changed one names counts as changed.
        old_rest, new_rest = _statements(old), _statements(new)
        for statement in [*new_rest.values(), *old_rest.values()]:
            if ast.dump(statement) not in old_rest.keys() & new_rest.keys():
                changed |= _names([statement])
    return changed, added


def _statements(tree: ast.Module) -> dict[str, ast.stmt]:
    """The module-level statements `_definitions` does not read, by their syntax."""
    kept = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
    return {ast.dump(n): n for n in tree.body if not isinstance(n, (*kept, ast.AugAssign))}


def _mentions(nodes: list[ast.AST], files: set[str]) -> bool:
    """Whether a string in the nodes names a changed file (a test that runs a script or
    reads a file the reference changes: `subprocess.run(["python", "tool.py"])`)."""
    texts = [
        n.value
        for root in nodes
        for n in ast.walk(root)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in files for text in texts)


def start_failing_tests(
    code: dict[str, str],
    changes: dict[str, str | None],
    path: str,
    source: str,
    ids: list[str],
) -> list[str] | None:
    """The ids of `ids` (tests of `source`, the test file at `path`) that reach what
    `changes` changes in `code` (the start state's files); None when that cannot be
    read from the code (keep them all)."""
    found = _changes(code, changes)
    test_tree = parse_python(source)
    if found is None or test_tree is None:
        return None
    changed, added = found
    graph: dict[str, set[str]] = {}
    after = {p: t for p, t in {**code, **changes}.items() if t is not None}
    for other, text in sorted({**after, path: source}.items()):
        tree = parse_python(text) if other.endswith(".py") else None
        for name, uses in (_functions(tree) if tree else {}).items():
            graph.setdefault(name, set()).update(uses)
    affected = _widened(changed, graph)
    imports = [n for n in test_tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    run_at_import = [
        n
        for n in test_tree.body
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and n not in imports
    ]
    files = {posixpath.basename(p) for p in changes}
    files |= {name.removesuffix(".py") for name in files}
    if _names(imports) & added or _names(run_at_import) & affected:
        return list(ids)  # the file fails to import, or its set-up reaches the change
    if _mentions(run_at_import, files):
        return list(ids)
    tests = _test_nodes(test_tree)
    return [
        i
        for i in ids
        if i not in tests or _names(tests[i]) & affected or _mentions(tests[i], files)
    ]


def _widened(changed: set[str], graph: dict[str, set[str]]) -> set[str]:
    """`changed` and every name whose definition uses one of them, to a fixpoint."""
    affected = set(changed)
    grew = True
    while grew:
        grew = False
        for name, uses in graph.items():
            if name not in affected and uses & affected:
                affected.add(name)
                grew = True
    return affected


def _test_nodes(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Each test id of the file -> what runs for it: its function (a method: with its
    class's bases and other members, whose set-up it runs)."""
    nodes: dict[str, list[ast.AST]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nodes[node.name] = [node]
        elif isinstance(node, ast.ClassDef):
            tests = [
                n
                for n in node.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                and n.name.startswith("test")
            ]
            rest = [n for n in node.body if n not in tests]
            for item in tests:
                nodes[f"{node.name}::{item.name}"] = [item, *rest, *node.bases]
    return nodes
