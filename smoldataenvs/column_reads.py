"""Which columns of a table a statement reads, and which one column a statement writes.

The slicer keeps every statement that shapes a name the answer needs; for a table that
is too much: `df['seniority'] = df['Job Title'].apply(seniority)` shapes `df`, but an
answer of `pd.pivot_table(df, index='job_simp', values='avg_salary')` never sees that
column, and a step the question would have to state (and could not) refused the cell.
Here a read is followed up the expression from the table's name: a column selection
(`t['c']`, `t.c`, `t[['a', 'b']]`), a row filter or a row count (`t[t.a > 1]`,
`len(t)`, `t.shape[0]`), a grouping or pivot whose keys and values are written out, or
an assignment whose target's own columns are known. Anything else reads every column
(`ALL`): the analysis only ever narrows where it can read the whole expression, and the
container re-run stays the judge of the slice.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from smoldataenvs.describe_words import FRAME_ATTRS

Columns = frozenset[str] | None
ALL: Columns = None
"""Every column (or an unknown set of them)."""
NONE: Columns = frozenset()

ROW_METHODS = {"copy", "head", "tail", "sort_values"}
"""Methods whose result has the receiver's columns, whatever rows it keeps (a sort also
reads its keys)."""
MASKS = {"isin", "notnull", "notna", "isnull", "isna", "between", "contains", "startswith",
         "endswith", "duplicated"}  # fmt: skip
"""Methods whose result, as a key, filters rows (`t[t.a.isin(...)]`)."""
COLUMN_METHODS = {"fillna", "replace", "clip"}
"""Methods that, called `inplace=True` on one column, change that column only."""
NOT_COLUMNS = FRAME_ATTRS | ROW_METHODS | COLUMN_METHODS | MASKS | {
    "apply", "applymap", "assign", "pipe", "eval", "query", "filter", "drop", "dropna",
    "rename", "merge", "join", "groupby", "pivot_table", "pivot", "melt", "stack", "unstack",
    "transpose", "reset_index", "set_index", "sort_index", "to_csv", "info", "memory_usage",
    "select_dtypes", "sample", "where", "mask", "insert", "pop", "update", "items", "iterrows",
    "itertuples", "keys", "agg", "aggregate", "transform", "nlargest", "nsmallest", "mode",
    "quantile", "cumsum", "diff", "shift", "rolling", "resample", "astype", "drop_duplicates",
    "round", "abs", "any", "all", "prod", "cov", "corrwith", "rank", "explode", "get",
    "to_numpy", "to_dict", "to_string", "equals", "axes", "attrs", "flags", "style",
}  # fmt: skip
"""Attributes of a DataFrame that are never read as a column of that name."""


def merge(first: Columns, second: Columns) -> Columns:
    return ALL if first is None or second is None else first | second


def _strings(node: ast.AST | None) -> frozenset[str] | None:
    """`'a'` or `['a', 'b']` (a tuple too) as names; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset([node.value])
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        names = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(names) == len(node.elts) and all(isinstance(n, str) for n in names):
            return frozenset(names)
    return None


def _parents(root: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(root) for child in ast.iter_child_nodes(parent)}


def column_written(statement: ast.stmt) -> tuple[str, str, bool] | None:
    """`(table, column, whole)` for a statement that writes one named column of a table
    and nothing else: `t['c'] = v` (`whole`: the old column is gone), `t['c'] += v`,
    `t.loc[rows, 'c'] = v`, `t[rows]['c'] = v`, `t['c'].fillna(0, inplace=True)` or `t.c.fillna(0,
    inplace=True)` (only some values change: the old column is still read)."""
    single = isinstance(statement, ast.Assign) and len(statement.targets) == 1
    if single or isinstance(statement, ast.AugAssign):
        target = statement.targets[0] if single else statement.target  # type: ignore[union-attr]
        if not isinstance(target, ast.Subscript):
            return None
        if isinstance(target.value, ast.Name):
            names = _strings(target.slice)
            if names is not None and isinstance(target.slice, ast.Constant):
                return target.value.id, next(iter(names)), single
            return None
        located = target.value
        if (
            isinstance(located, ast.Attribute)
            and located.attr == "loc"
            and isinstance(located.value, ast.Name)
            and isinstance(target.slice, ast.Tuple)
            and len(target.slice.elts) == 2
            and isinstance(target.slice.elts[1], ast.Constant)
            and isinstance(target.slice.elts[1].value, str)
        ):
            return located.value.id, target.slice.elts[1].value, False
        if (
            isinstance(located, ast.Subscript)
            and isinstance(located.value, ast.Name)
            and _is_row_key(located.slice)
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
        ):  # `t[100:103]['c'] = v`: pandas may write to a copy; at most `c` changes
            return located.value.id, target.slice.value, False
        return None
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    inplace = any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )
    if not inplace or call.func.attr not in COLUMN_METHODS:
        return None
    column = call.func.value
    if isinstance(column, ast.Subscript) and isinstance(column.value, ast.Name):
        names = _strings(column.slice)
        if names is not None and isinstance(column.slice, ast.Constant):
            return column.value.id, next(iter(names)), False
    if (
        isinstance(column, ast.Attribute)
        and isinstance(column.value, ast.Name)
        and column.attr not in NOT_COLUMNS
    ):
        return column.value.id, column.attr, False
    return None


@lru_cache(maxsize=16384)
def columns_read(node: ast.AST, table: str, assigned: Columns = ALL) -> Columns:
    """The columns of `table` that evaluating `node` reads: `ALL` unless every use of the
    name is one this module can follow. `assigned`: the columns needed of the name that
    `node` (an assignment `x = <table-like>`) binds. Cached by node identity."""
    parents = _parents(node)
    found: Columns = NONE
    for name in ast.walk(node):
        if isinstance(name, ast.Name) and name.id == table and isinstance(name.ctx, ast.Load):
            found = merge(found, _read_from(name, parents, assigned))
            if found is None:
                return ALL
    return found


def _read_from(node: ast.AST, parents: dict[ast.AST, ast.AST], assigned: Columns) -> Columns:
    """What one use of the table's name reads, followed up through row filters and
    row-keeping methods (whose own arguments are other uses, read separately)."""
    current, found = node, NONE
    while True:
        parent = parents.get(current)
        if isinstance(parent, ast.Subscript) and parent.value is current:
            names = _strings(parent.slice)
            if names is not None:
                chosen = parents.get(parent)
                if (
                    assigned is not None
                    and isinstance(parent.slice, ast.List | ast.Tuple)
                    and isinstance(chosen, ast.Assign)
                    and chosen.value is parent
                ):  # `x = t[['a', 'b', 'c']]`: only the ones `x` needs of them
                    names = names & assigned
                return merge(found, names)
            if not _is_row_key(parent.slice):
                return ALL
            current = parent
            continue
        if isinstance(parent, ast.Attribute) and parent.value is current:
            above = parents.get(parent)
            if isinstance(above, ast.Call) and above.func is parent and parent.attr in ROW_METHODS:
                keys = _sort_keys(above) if parent.attr == "sort_values" else NONE
                if keys is None:
                    return ALL
                current, found = above, merge(found, keys)
                continue
            return merge(found, _attribute_read(parent, parents))
        if isinstance(parent, ast.Call) and current in parent.args:
            if isinstance(parent.func, ast.Name) and parent.func.id == "len":
                return found
            if isinstance(parent.func, ast.Attribute) and parent.func.attr == "pivot_table":
                return merge(found, _pivot_read(parent) if parent.args[0] is current else ALL)
            return ALL
        if isinstance(parent, ast.Assign) and parent.value is current:
            return merge(found, assigned)
        return ALL


def _is_row_key(key: ast.AST) -> bool:
    """A key that picks rows, not columns: a slice or a boolean mask."""
    if isinstance(key, ast.Slice | ast.Compare | ast.BoolOp):
        return True
    if isinstance(key, ast.UnaryOp):
        return isinstance(key.op, ast.Invert | ast.Not)
    if isinstance(key, ast.BinOp):
        return isinstance(key.op, ast.BitAnd | ast.BitOr)
    return (
        isinstance(key, ast.Call) and isinstance(key.func, ast.Attribute) and key.func.attr in MASKS
    )


def _sort_keys(call: ast.Call) -> Columns:
    keywords = {k.arg: k.value for k in call.keywords}
    by = call.args[0] if call.args else keywords.get("by")
    return _strings(by)


def _attribute_read(attribute: ast.Attribute, parents: dict[ast.AST, ast.AST]) -> Columns:
    """`t.name` (a column unless a DataFrame attribute), `t.shape[0]`, `t.index`, or a
    method: `t.groupby(keys)[columns]` and `t.pivot_table(index=..., values=...)` read
    the ones they name."""
    above = parents.get(attribute)
    called = isinstance(above, ast.Call) and above.func is attribute
    name = attribute.attr
    if not called:
        if name == "shape":
            row_count = (
                isinstance(above, ast.Subscript)
                and above.value is attribute
                and isinstance(above.slice, ast.Constant)
                and above.slice.value == 0
            )
            return NONE if row_count else ALL
        if name == "index":
            return NONE
        return ALL if name in NOT_COLUMNS else frozenset([name])
    assert isinstance(above, ast.Call)
    if name == "pivot_table":
        return _pivot_read(above, offset=0)
    if name == "groupby":
        return _grouped_read(above, parents)
    return ALL


def _pivot_read(call: ast.Call, offset: int = 1) -> Columns:
    if len(call.args) > offset:
        return ALL
    keywords = {k.arg: k.value for k in call.keywords}
    found: Columns = NONE
    for option in ("values", "index", "columns"):
        if option in keywords:
            found = merge(found, _strings(keywords[option]))
    return found if "values" in keywords and "index" in keywords else ALL


def _grouped_read(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> Columns:
    """`t.groupby('k')['v']...`, `t.groupby(['a', 'b'])[['v', 'w']]...`,
    `t.groupby('k').size()` or `t.groupby('k').agg({'v': 'mean'})`: the keys and the
    columns selected or aggregated."""
    by = call.args[0] if len(call.args) == 1 and not call.keywords else None
    keys = _strings(by)
    if keys is None:
        return ALL
    above = parents.get(call)
    if isinstance(above, ast.Subscript) and above.value is call:
        selected = _strings(above.slice)
        return ALL if selected is None else keys | selected
    if isinstance(above, ast.Attribute) and above.value is call and above.attr == "size":
        return keys
    aggregated = parents.get(above) if isinstance(above, ast.Attribute) else None
    if (
        isinstance(above, ast.Attribute)
        and above.attr in ("agg", "aggregate")
        and isinstance(aggregated, ast.Call)
        and aggregated.func is above
        and len(aggregated.args) == 1
        and not aggregated.keywords
        and isinstance(aggregated.args[0], ast.Dict)
    ):  # `.agg({'v': 'mean', 'w': 'count'})`: the keys and the columns it names
        named = _strings(ast.List(elts=list(aggregated.args[0].keys), ctx=ast.Load()))
        return ALL if named is None else keys | named
    return ALL
