"""Functions a notebook defines and applies to a column (`df['Job Title'].apply(
title_simplifier)`), given to the agent as code instead of being put into words.

A question must state every step its answer depends on (`stated_steps`); a function of
twenty lines that sorts job titles into seven groups has no short statement, and its
rules are the notebook author's, not something a reader could guess. So the task hands
the function over as the notebook wrote it, in `notebook_functions.py` in the agent's
workspace, and the question says which column it is applied to. Only a self-contained
function qualifies: it reads nothing but its own arguments, builtins without side
effects and modules the notebook imported (their import lines go into the file too);
a function reading a table, a global setting or a file is the notebook's state, and
stays refused as an unstated step.

The instruction never quotes the function (the static gate
`instruction.contains-solution` would refuse a reference line in it); the file is part
of the start state, like the data.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from smoldataenvs.slicing import free_names

FUNCTIONS_FILE = "notebook_functions.py"
"""Where, under /workspace, the given functions are (beside the data files)."""
UNSAFE_BUILTINS = frozenset(
    {"open", "exec", "eval", "compile", "input", "__import__", "globals", "locals", "vars",
     "breakpoint", "exit", "quit", "help", "memoryview", "setattr", "delattr"}
)  # fmt: skip
"""Builtins a given function may not call: files, code from text, the caller's scope."""
SAFE_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_")) - (
    UNSAFE_BUILTINS
)
MAX_LINES = 60
"""The longest function given (a longer one is a program, not a step of an analysis)."""
HEADER = (
    '"""Functions the notebook defines, exactly as it wrote them (comments left out);\n'
    'the question names which of them it applies."""\n'
)


@dataclass(frozen=True)
class GivenFunction:
    """A notebook function that can be given, with the import lines it needs."""

    definition: ast.FunctionDef
    imports: list[str]


def import_lines(statements: list[ast.stmt]) -> dict[str, ast.stmt]:
    """Each name a plain import binds (`import re`, `import numpy as np`, `from math
    import floor`) -> that import, reduced to the one name."""
    found: dict[str, ast.stmt] = {}
    for statement in statements:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                found[(alias.asname or alias.name).split(".")[0]] = ast.Import(names=[alias])
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            for alias in statement.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = ast.ImportFrom(
                        module=statement.module, names=[alias], level=0
                    )
    return found


def import_origins(imports: dict[str, ast.stmt]) -> dict[str, str]:
    """Each name of `import_lines` -> the dotted name it stands for (`np` -> `numpy`,
    `zscore` -> `scipy.stats.zscore`): which library's function a call is."""
    origins = {}
    for name, statement in imports.items():
        alias = statement.names[0]  # type: ignore[attr-defined]
        module = getattr(statement, "module", None)
        origins[name] = f"{module}.{alias.name}" if module else alias.name
    return origins


def needed_imports(function: ast.FunctionDef, imports: dict[str, ast.stmt]) -> list[str] | None:
    """The import lines `function` needs to run on its own, or None when it reads a
    name that is neither its own, a safe builtin nor an imported module (or is too
    long, decorated, or reaches outside its scope)."""
    if function.decorator_list or _lines(function) > MAX_LINES:
        return None
    if any(isinstance(n, ast.Global | ast.Nonlocal | ast.Yield | ast.YieldFrom | ast.Await)
           for n in ast.walk(function)):  # fmt: skip
        return None
    free = free_names(function)
    if free & UNSAFE_BUILTINS:
        return None
    outside = free - SAFE_BUILTINS
    if not outside <= set(imports):
        return None
    return sorted({ast.unparse(imports[name]) for name in outside})


def module_text(functions: list[GivenFunction]) -> str:
    """The file the agent is given: the imports, then each function as written, in the
    order given (the slice's)."""
    imports = sorted({line for f in functions for line in f.imports})
    head = HEADER + ("\n" + "\n".join(imports) + "\n" if imports else "")
    return "\n\n".join([head, *(ast.unparse(f.definition) + "\n" for f in functions)])


def _lines(function: ast.FunctionDef) -> int:
    return (function.end_lineno or function.lineno) - function.lineno + 1
