"""Phrases for reshaping calls: pivot tables, cross tabulations, shares and `agg` with
several functions.

These are the shapes the question generator refused by name most often on real
tutorials (`question.undescribed`): each one's answer is a small table whose rows and
columns are decided by the call's own arguments, so the question must say which
quantity goes in the cells and what labels the rows and the columns. Anything beyond
the plain form (margins, a lambda, normalising by row) still refuses.
"""

from __future__ import annotations

import ast
from typing import Protocol

from smoldataenvs.describe_words import AGGREGATES, NUMPY_NAMES, const_text

SHARE = "the share (fraction from 0 to 1) of each distinct value (largest share first)"


class Phrasing(Protocol):
    def phrase(self, node: ast.AST) -> str | None: ...

    def subject(self, node: ast.AST) -> str | None: ...

    def _grouped(self, node: ast.AST) -> tuple[str, str, str] | None: ...


def function_name(function: ast.AST) -> str | None:
    """An aggregate named by string (`'mean'`) or by numpy (`np.mean`); None otherwise."""
    name = function.value if isinstance(function, ast.Constant) else None
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        name = function.attr if function.value.id in NUMPY_NAMES else None
    return name if isinstance(name, str) and name in AGGREGATES else None


def shares(describer: Phrasing, target: ast.AST, node: ast.Call) -> str | None:
    """`s.value_counts(normalize=True)`: shares, not counts; `ascending=True`: the
    least common first (`ascending=False` is pandas' own order, the plain counts)."""
    keywords = {k.arg: k.value for k in node.keywords}
    flags = {name: keywords.pop(name, ast.Constant(False)) for name in ("normalize", "ascending")}
    if node.args or keywords:
        return None
    if not all(isinstance(f, ast.Constant) and isinstance(f.value, bool) for f in flags.values()):
        return None
    normalize, ascending = (flags[name].value for name in ("normalize", "ascending"))  # type: ignore[attr-defined]
    base = describer.subject(target)
    if base is None:
        return None
    if normalize:
        order = "smallest share first" if ascending else "largest share first"
        return f"{SHARE.replace('largest share first', order)} of {base}"
    counts = AGGREGATES["value_counts"]
    if ascending:
        counts = counts.replace("most common first", "least common first")
    return f"{counts} of {base}"


def several(describer: Phrasing, target: ast.AST, node: ast.Call) -> str | None:
    """`x.agg(['mean', 'max'])` (one result per function, labelled by its name) and
    `t.agg({'a': 'sum', 'b': 'mean'})` (one function per column), grouped or not."""
    if len(node.args) != 1 or node.keywords:
        return None
    spec = node.args[0]
    grouped = describer._grouped(target)
    if isinstance(spec, ast.List | ast.Tuple):
        names = [function_name(e) for e in spec.elts]
        if len(names) < 2 or None in names:
            return None
        labels = ", ".join(f"`{n}`" for n in names)  # type: ignore[str-format]
        what = _joined([AGGREGATES[n] for n in names])  # type: ignore[index]
        if grouped:
            column, key, table = grouped
            return (
                f"{what} of the {column} of {table}, for each {key} (groups in ascending "
                f"order of {key}; one column per function, named {labels})"
            )
        base = describer.subject(target)
        return f"{what} of {base} (one entry per function, labelled {labels})" if base else None
    if isinstance(spec, ast.Dict) and spec.keys:
        # On one column (`t['c'].agg({...})`) a dict names outputs, not columns.
        if (grouped and not grouped[0].startswith("columns")) or _one_column(target):
            return None
        parts = []
        for key, value in zip(spec.keys, spec.values, strict=True):
            name = function_name(value)
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)) or not name:
                return None
            parts.append(f"{AGGREGATES[name]} of the `{key.value}` column")
        if grouped:
            _, key_text, table = grouped
            return (
                f"{_joined(parts)} of {table}, for each {key_text} "
                f"(groups in ascending order of {key_text})"
            )
        base = describer.subject(target)
        return f"{_joined(parts)} of {base}" if base else None
    return None


def pivot_table(describer: Phrasing, table: ast.AST, node: ast.Call, offset: int) -> str | None:
    """`t.pivot_table(values='v', index='r', columns='c', aggfunc='sum')` and the
    `pd.pivot_table(t, ...)` form (`offset` 1: the table is the first argument)."""
    if len(node.args) > offset:
        return None
    keywords = {k.arg: k.value for k in node.keywords}
    values, index = keywords.pop("values", None), keywords.pop("index", None)
    columns = keywords.pop("columns", None)
    function = keywords.pop("aggfunc", ast.Constant("mean"))
    fill = keywords.pop("fill_value", None)
    name = function_name(function)
    texts = [const_text(n) if n is not None else "" for n in (values, index, columns)]
    if keywords or name is None or index is None or values is None or None in texts:
        return None
    base = describer.subject(table)
    if base is None:
        return None
    value_text, index_text, column_text = texts
    cells = f"{AGGREGATES[name]} of the {value_text} column of {base}, for each {index_text} (rows)"
    if columns is not None:
        cells += f" and each {column_text} (columns)"
    if fill is not None:
        filled = const_text(fill)
        if filled is None:
            return None
        cells += f", with {filled} where a combination has no rows"
    return cells


def crosstab(describer: Phrasing, node: ast.Call) -> str | None:
    """`pd.crosstab(t['a'], t['b'])`: how many rows have each pair of values."""
    if len(node.args) != 2 or node.keywords:
        return None
    rows, columns = (describer.phrase(a) for a in node.args)
    if not rows or not columns:
        return None
    return (
        f"the number of rows for each combination of a value of {rows} (rows) "
        f"and a value of {columns} (columns)"
    )


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def _one_column(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)


def reset(describer: Phrasing, target: ast.AST, node: ast.Call) -> str | None:
    """`t.groupby(['a', 'b']).size().reset_index()`: the grouped aggregate as a table,
    its group keys as columns (the answer's header line names every column, `0` for an
    unnamed Series as pandas does; `name='n'` names it). Only a grouped aggregate: any
    other table's row labels may be anything."""
    from smoldataenvs.top_rows import grouped_aggregate

    keywords = {k.arg: k.value for k in node.keywords}
    name = keywords.pop("name", None)
    if node.args or keywords or not grouped_aggregate(target):
        return None
    if name is not None and not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None
    grouped = describer.phrase(target)
    return f"{grouped}, as a table with the group keys as columns" if grouped else None
