"""Parsing Python source that a session or a task folder holds, safely from threads.

`ast.parse` only reads the text (nothing is executed). CPython 3.11 keeps the AST
validator's recursion depth in shared state, so two threads parsing at once can fail
with "SystemError: AST constructor recursion depth mismatch" (CPython gh-106905); the
miner drafts and checks records in a thread pool, so every parse goes through one lock.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module | None:
    """The module's syntax tree, or None when the text is not valid Python."""
    with _LOCK:
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, SystemError):
            return None
