"""Phrases for reshaping calls: pivot tables, cross tabulations, shares and `agg` with
several functions.

These are the shapes the question generator refused by name most often on real
tutorials (`question.undescribed`): each one's answer is a small table whose rows and
columns are decided by the call's own arguments, so the question must say which
quantity goes in the cells and what labels the rows and the columns. Anything beyond
the forms stated (a lambda, a function of the notebook's) still refuses.
"""

from __future__ import annotations

import ast
from typing import Protocol

from smoldataenvs.describe_words import AGGREGATES, NUMPY_NAMES, const_text, const_value

SHARE = "the share (fraction from 0 to 1) of each distinct value (largest share first)"


class Phrasing(Protocol):
    assignments: dict[str, ast.expr]
    used: set[str]

    def phrase(self, node: ast.AST) -> str | None: ...

    def subject(self, node: ast.AST) -> str | None: ...

    def column(self, node: ast.AST) -> str | None: ...

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


CROSSTAB_SHARES = {
    "index": "as the share (fraction from 0 to 1) of its row's total",
    "columns": "as the share (fraction from 0 to 1) of its column's total",
    "all": "as the share (fraction from 0 to 1) of the grand total",
}
"""`normalize=` of `pd.crosstab`: what each cell is a share of (True is 'all')."""
CROSSTAB_AVERAGES = {"average": "mean"}
"""numpy's names pandas takes for `aggfunc` that are another aggregate's."""


def crosstab(describer: Phrasing, node: ast.Call) -> str | None:
    """`pd.crosstab(t['a'], t['b'])`: how many rows have each pair of values. Columns of
    one table name it once; `values=t['c'], aggfunc='mean'` puts that aggregate of `c`
    in the cells instead of the count; `margins=True` adds the `All` totals (of the
    count: the row and column sums; of an aggregate: over each row's and column's
    rows); `normalize=` makes each cell a share."""
    options = {k.arg: k.value for k in node.keywords}
    if len(node.args) == 2:
        rows, columns = node.args
    elif not node.args and "index" in options and "columns" in options:
        rows, columns = options.pop("index"), options.pop("columns")
    else:
        return None
    margins = const_value(options.pop("margins", ast.Constant(False)))
    normalize = const_value(options.pop("normalize", ast.Constant(False)))
    values, aggfunc = options.pop("values", None), options.pop("aggfunc", None)
    if options or margins not in (True, False) or (values is None) != (aggfunc is None):
        return None
    if margins and normalize is not False:
        return None  # pandas divides the totals too, by rules of its own
    if normalize is not False and values is not None:
        return None
    shared = _same_table(rows, columns)
    if shared is not None:
        table, names = describer.subject(shared), [describer.column(c) for c in (rows, columns)]
        if table is None or None in names:
            return None
        pair, of = (
            f"a value of {names[0]} (rows) and a value of {names[1]} (columns)",
            f" of {table}",
        )
    else:
        row_words, column_words = describer.phrase(rows), describer.phrase(columns)
        if not row_words or not column_words:
            return None
        pair, of = f"a value of {row_words} (rows) and a value of {column_words} (columns)", ""
    cell = "the number of rows"
    if values is not None:
        name = function_name(_aliased(aggfunc))  # type: ignore[arg-type]
        column = describer.column(values) if _same_table(values, rows) is not None else None
        if name is None or column is None or shared is None:
            return None
        cell = f"{AGGREGATES[name]} of {column}"
    words = f"{cell}{of} for each combination of {pair} (missing values not counted)"
    if margins:
        totals = "the sum" if values is None else "the same over all of a row's or column's rows"
        words += f", with an `All` row and column of totals ({totals})"
    if normalize is not False:
        share = CROSSTAB_SHARES.get("all" if normalize is True else str(normalize))
        if share is None:
            return None
        words += f", each {share}"
    return words


def _aliased(function: ast.AST) -> ast.AST:
    """`np.average` read as `np.mean` (`CROSSTAB_AVERAGES`)."""
    if isinstance(function, ast.Attribute) and function.attr in CROSSTAB_AVERAGES:
        return ast.Attribute(value=function.value, attr=CROSSTAB_AVERAGES[function.attr])
    return function


def _same_table(first: ast.AST, second: ast.AST) -> ast.AST | None:
    """The table both are one column of (`t['a']`, `t.b`), or None."""
    tables = []
    for node in (first, second):
        if not (_one_column(node) or isinstance(node, ast.Attribute)):
            return None
        tables.append(node.value)  # type: ignore[attr-defined]
    return tables[0] if ast.dump(tables[0]) == ast.dump(tables[1]) else None


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def _one_column(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)


def unstacked(describer: Phrasing, target: ast.AST, node: ast.Call) -> str | None:
    """`t.groupby(['Group', 'Device'])['User ID'].count().unstack('Device')` (also
    `level=`, a level's number, none: the last key; `fill_value=0`): the grouped
    aggregate laid out as a table, one column per value of the key moved, one row per
    value (or combination) of the others; a combination with no rows is missing, or
    the fill value. Only on a grouped aggregate of keys named by a list."""
    from smoldataenvs.top_rows import grouped_aggregate

    target = _one_aggregated_column(describer, target)
    keywords = {k.arg: k.value for k in node.keywords}
    level = node.args[0] if len(node.args) == 1 else keywords.pop("level", ast.Constant(-1))
    fill = keywords.pop("fill_value", None)
    keys = _group_keys(target) if grouped_aggregate(target) else None
    if len(node.args) > 1 or keywords or not keys or len(keys) < 2:
        return None
    moved = const_value(level)
    if isinstance(moved, int) and not isinstance(moved, bool) and -len(keys) <= moved < len(keys):
        moved = keys[moved]
    if moved not in keys:
        return None
    filled = const_value(fill) if fill is not None else None
    if fill is not None and (isinstance(filled, bool) or not isinstance(filled, int | float)):
        return None
    grouped = describer.phrase(target)
    if grouped is None:
        return None
    others = [f"'{k}'" for k in keys if k != moved]
    rest = _joined(others) if len(others) == 1 else f"combination of {_joined(others)}"
    empty = "missing" if fill is None else f"{filled:g}"
    return (
        f"{grouped}, laid out as a table with one row per {rest} and one column per "
        f"'{moved}' (a combination with no rows: {empty})"
    )


def _one_aggregated_column(describer: Phrasing, node: ast.AST) -> ast.AST:
    """`device['User ID']` with `device = t.groupby([...]).agg({'User ID': 'count'})`
    (an A/B-testing notebook) read as `t.groupby([...])['User ID'].agg('count')`: the
    same values, in a form `unstacked` knows. Anything else is returned unchanged."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)):
        return node
    table, name = node.value, None
    if isinstance(table, ast.Name) and table.id in describer.assignments:
        name, table = table.id, describer.assignments[table.id]
    if not (
        isinstance(table, ast.Call)
        and isinstance(table.func, ast.Attribute)
        and table.func.attr in ("agg", "aggregate")
        and len(table.args) == 1
        and not table.keywords
        and isinstance(table.args[0], ast.Dict)
    ):
        return node
    dictionary = table.args[0]
    if None in dictionary.keys:  # `{**other}`
        return node
    functions = dict(zip([const_value(k) for k in dictionary.keys], dictionary.values, strict=True))
    function = functions.get(node.slice.value)
    if function is None:
        return node
    if name is not None:
        describer.used.add(name)
    column = ast.Subscript(value=table.func.value, slice=node.slice, ctx=ast.Load())
    return ast.Call(
        func=ast.Attribute(value=column, attr=table.func.attr, ctx=ast.Load()),
        args=[function],
        keywords=[],
    )


def _group_keys(node: ast.AST) -> list[str] | None:
    """The keys of the grouping under a grouped aggregate, when given as a list of
    column names (`groupby(['a', 'b'])`)."""
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "groupby"
            and inner.args
            and isinstance(inner.args[0], ast.List | ast.Tuple)
        ):
            names = [const_value(e) for e in inner.args[0].elts]
            return names if all(isinstance(n, str) for n in names) else None  # type: ignore[return-value]
    return None


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
