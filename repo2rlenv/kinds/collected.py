"""The test ids pytest would collect from a file, read from its syntax tree.

Extend compares the ids of a test file before and after the request to find the tests
the agent added to an existing file. The file is parsed, never imported or run: its
code comes from a session and may do anything. Only the plain shapes are read
(`def test_*`, `async def test_*`, `class Test*` without `__init__` holding them);
tests made by fixtures' params or `pytest_generate_tests` keep their function's id,
which is what a node id selects anyway.
"""

from __future__ import annotations

import ast

from repo2rlenv.pysource import parse_python


def collected_test_ids(source: str) -> list[str] | None:
    """`name` or `Class::name` of each test in the file, in file order; None when the
    text is not valid Python (the comparison cannot be trusted)."""
    tree = parse_python(source)
    if tree is None:
        return None
    ids: list[str] = []
    for node in tree.body:
        if _is_test_function(node):
            ids.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            methods = [
                n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
            if any(m.name == "__init__" for m in methods):
                continue  # pytest does not collect a test class with a constructor
            ids += [f"{node.name}::{m.name}" for m in methods if _is_test_function(m)]
    return list(dict.fromkeys(ids))


def _is_test_function(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def added_test_ids(before: str, after: str) -> list[str]:
    """Ids in `after` that `before` does not have; empty when either does not parse."""
    old, new = collected_test_ids(before), collected_test_ids(after)
    if old is None or new is None:
        return []
    return [i for i in new if i not in set(old)]
