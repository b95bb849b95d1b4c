"""Functions a notebook defines that change nothing outside themselves.

The slicer keeps a call statement `f(df)` whenever `f` might change `df`: a call of a
function it knows nothing about may (`def clean(t): t.dropna(inplace=True)`). Every
later question about `df` then carries that call, and `df` is no longer a table the
question can state (`question.undescribed`): a real book chapter shows
`get_inf_count(df)` (a dict of counts) once, and all eight later cells about `df` were
refused for it. A function the notebook defines is read here instead: when its body
changes neither its parameters nor any name outside it, a call of it as a statement
changes nothing, and the slicer leaves it out.

What counts as a change is the slicer's own reading of a statement (`inplace=True`,
a mutating or unknown method called for its effect, an item or attribute written, an
unknown function given the name), applied to the body; a local name is the function's
own unless it was bound to another name (`t = df` is `df` under another name). Anything
else (`global`, `nonlocal`, a nested function or class, a name defined twice) is not
pure. Reproduction stays the judge: a wrongly dropped call is `reproduce.mismatch`.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache

from smoldataenvs.cellcode import ParsedCell

Mutations = Callable[[ast.stmt], set[str]]


def pure_functions(cells: Iterable[ParsedCell], mutations: Mutations) -> frozenset[str]:
    """Names of the functions defined once in `cells` whose calls change nothing.
    `mutations(statement)` is the slicer's set of names a statement changes. Each cell
    and each function is read once (cached by node, as the slicer's `effects` is): every
    candidate of a notebook slices over the same earlier cells."""
    defined: Counter[str] = Counter()
    functions: dict[str, ast.FunctionDef] = {}
    for cell in cells:
        if cell.tree is not None:
            names, defs = _cell_definitions(cell.tree)
            defined.update(names)
            functions.update(defs)
    return frozenset(
        name
        for name, function in functions.items()
        if defined[name] == 1 and _changes_nothing(function, mutations)
    )


@lru_cache(maxsize=4096)
def _cell_definitions(tree: ast.Module) -> tuple[Counter[str], dict[str, ast.FunctionDef]]:
    """How often the cell binds each name, and its top-level functions."""
    defined: Counter[str] = Counter()
    functions: dict[str, ast.FunctionDef] = {}
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined[node.name] += 1
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined[node.id] += 1
        if isinstance(statement, ast.FunctionDef):
            functions[statement.name] = statement
    return defined, functions


@lru_cache(maxsize=4096)
def _changes_nothing(function: ast.FunctionDef, mutations: Mutations) -> bool:
    arguments = function.args
    if function.decorator_list or arguments.vararg or arguments.kwarg:
        return False
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    own: set[str] = set()
    aliases = False
    for node in ast.walk(ast.Module(body=function.body, type_ignores=[])):
        if isinstance(node, ast.Global | ast.Nonlocal):
            return False
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return False
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            own |= names - parameters
            value = getattr(node, "value", None)
            aliases = aliases or (isinstance(value, ast.Name) and bool(names))
    if aliases:
        return False
    changed: set[str] = set()
    for statement in function.body:
        changed |= mutations(statement)  # walks the statements nested in it too
    return not (changed - own)
