"""Phrases for one named key of a counted or grouped Series (`derived_keys` asks them).

`t['c'].value_counts()['x']` is "the number of times the value 'x' occurs in the `c`
column of ...", with `normalize=True` "the share (fraction from 0 to 1) of the
non-missing values of the `c` column of ... that equal 'x'", and
`t.groupby('k')['c'].mean()['x']` "the mean of the `c` column of ..., in the group of
rows whose `k` is 'x'". Missing values are not counted by `value_counts()`, so a count
and a share say so; the key is quoted as the literal that indexes the Series.
"""

from __future__ import annotations

import ast
from typing import Protocol

from smoldataenvs.derived_keys import GROUP_METHODS, group_columns, one_column_groupby
from smoldataenvs.describe_words import AGGREGATES, const_text


class Phrasing(Protocol):
    def subject(self, node: ast.AST) -> str | None: ...

    def _grouped(self, node: ast.AST) -> tuple[str, str, str] | None: ...


def keyed_phrase(describer: Phrasing, series: ast.expr, key: ast.expr) -> str | None:
    """The phrase for `series[key]`, or None when `series` is no counted or grouped
    Series (the caller then reads the subscript as it always did)."""
    if not (isinstance(series, ast.Call) and isinstance(series.func, ast.Attribute)):
        return None
    literal = const_text(key) if isinstance(key, ast.Constant) else None
    method, target = series.func.attr, series.func.value
    if series.args:
        return None
    if method == "value_counts" and literal is not None:
        options = {k.arg: k.value for k in series.keywords}
        share = options.pop("normalize", None)
        if options or not (share is None or isinstance(share, ast.Constant)):
            return None
        values = describer.subject(target)
        if values is None:
            return None
        if share is not None and share.value is True:
            return (
                "the share (fraction from 0 to 1) of the non-missing values of "
                f"{values} that equal {literal}"
            )
        return f"the number of times the value {literal} occurs in {values}"
    if method in GROUP_METHODS and not series.keywords and one_column_groupby(series):
        return _group(describer, method, target, key)
    return None


def _group(describer: Phrasing, method: str, target: ast.expr, key: ast.expr) -> str | None:
    """`t.groupby('k')['c'].mean()['x']`, `t.groupby(['a', 'b'])['c'].sum()[1952, 'x']`:
    each grouping column named with its key, as conditions name columns."""
    assert isinstance(target, ast.Subscript) and isinstance(target.value, ast.Call)
    columns = group_columns(target.value)
    texts = [const_text(v) for v in (key.elts if isinstance(key, ast.Tuple) else [key])]
    grouped = describer._grouped(target)
    if grouped is None or columns is None or len(columns) != len(texts) or None in texts:
        return None
    whose = " and ".join(f"`{c}` is {t}" for c, t in zip(columns, texts, strict=True))
    column, _, table = grouped
    if method == "size":
        return f"the number of rows of {table} whose {whose}"
    return f"{AGGREGATES[method]} of the {column} of {table}, in the group of rows whose {whose}"


def is_keyed(series: ast.expr) -> bool:
    """A counted or grouped Series: its subscript is a key, never a column."""
    return (
        isinstance(series, ast.Call)
        and isinstance(series.func, ast.Attribute)
        and (series.func.attr == "value_counts" or one_column_groupby(series))
    )
