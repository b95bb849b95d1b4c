"""`df.info()` or a long `df.isna().sum()` becomes one question: the missing values of
each column that has any.

EDA notebooks check for missing values first: `df.info()` (a text report, never an
answer as printed: `output.table`) or `df.isnull().sum()` (one count per column, over
the item cap on a wide table: `answer.too-many-items`). Both show, per column, how
many values are missing after the notebook's steps so far, and the question an analyst
asks of them is the part that is not zero: "the number of missing values in each
column of ... that has any" (issue 32 point 1: an aggregate the notebook itself
computed). So the answer cell's last expression is rewritten to
`T.isna().sum().loc[lambda counts: counts > 0]` (the describer states it, the
reference computes exactly it, the reproduction checks it against the notebook's own
numbers) and the answer is the mapping of those columns to their counts, in the
table's column order, whole numbers graded exactly.

`info()` prints non-null counts: a column's missing values are the entries line's row
count minus its non-null count. Both layouts pandas has printed are read (since 1.0,
`#  Column  Non-Null Count  Dtype` rows; before, `name  N non-null dtype`); the report
is refused (None) unless its column lines are as many as its `(total N columns)` line
says (a wide table's short report lists none). A table with no missing value asks
nothing here (a mapping of nothing is no answer), nor one with more columns missing
values than an answer may hold.
"""

from __future__ import annotations

import ast
import re

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.derived_keys import shown_entries
from smoldataenvs.saved_output import MAX_ITEMS

_ENTRIES = re.compile(r"^\w+: (\d+) entries", re.M)
_TOTAL = re.compile(r"^Data columns \(total (\d+) columns\):", re.M)
_ROW = re.compile(r"^\s*\d+\s+(\S.*?)\s+(\d+) non-null\s+\S+\s*$")
"""A column line since pandas 1.0: ` 3   Age     714 non-null   float64`."""
_OLD_ROW = re.compile(r"^(\S.*?)\s+(\d+) non-null\s+\S+\s*$")
"""A column line before pandas 1.0: `Age            714 non-null float64`."""
_MISSING_CALLS = {"isna", "isnull"}
_TABLES = (ast.Name, ast.Attribute, ast.Subscript, ast.Call)
"""Expressions a method call can follow without brackets."""


def info_missing(text: str) -> dict[str, int] | None:
    """{column: missing values} of an `info()` report's columns that miss any, or None
    when the report is not one whole per-column report."""
    entries, total = _ENTRIES.search(text), _TOTAL.search(text)
    if entries is None or total is None:
        return None
    rows = int(entries.group(1))
    lines = text[total.end() :].splitlines()
    modern = any(line.lstrip().startswith("#") for line in lines[:2])
    pattern = _ROW if modern else _OLD_ROW
    counts: dict[str, int] = {}
    for line in lines:
        found = pattern.match(line)
        if found:
            name, present = found.group(1), int(found.group(2))
            if name in counts or present > rows:
                return None
            counts[name] = rows - present
    if len(counts) != int(total.group(1)):
        return None
    return {name: missing for name, missing in counts.items() if missing}


def _table_of(expression: ast.expr) -> tuple[ast.expr, str] | None:
    """(table, how it was shown) for `T.info()` and `T.isna().sum()` / `T.isnull().sum()`."""
    if not (isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)):
        return None
    if expression.args or expression.keywords:
        return None
    method, target = expression.func.attr, expression.func.value
    if method == "info":
        return (target, "stream") if isinstance(target, _TABLES) else None
    if (
        method == "sum"
        and isinstance(target, ast.Call)
        and isinstance(target.func, ast.Attribute)
        and target.func.attr in _MISSING_CALLS
        and not target.args
        and not target.keywords
    ):
        table = target.func.value
        return (table, "result") if isinstance(table, _TABLES) else None
    return None


def missing_counts(table: ast.expr) -> str:
    """`T.isna().sum().loc[lambda counts: counts > 0]`: what the question asks."""
    return f"{ast.unparse(table)}.isna().sum().loc[lambda counts: counts > 0]"


def missing_parts(own: ParsedCell, text: str, capture: str) -> list[tuple[ParsedCell, dict]]:
    """The answer cell rewritten to ask the missing values of the columns that miss
    any, with the counts the notebook showed; [] for any other cell."""
    if own.tree is None or not own.tree.body or not isinstance(own.tree.body[-1], ast.Expr):
        return []
    last = own.tree.body[-1]
    found = _table_of(last.value)
    if found is None or found[1] != capture:
        return []
    table, _shown = found
    if capture == "stream":
        counts = info_missing(text)
    else:
        shown = shown_entries(text)
        whole = shown is not None and not shown[1] and all(isinstance(k, str) for k, _ in shown[0])
        counts = {k: v for k, v in shown[0] if type(v) is int and v} if whole else None
    if not counts or len(counts) > MAX_ITEMS:
        return []
    lines = own.sanitized.splitlines()[: last.lineno - 1]
    reduced = parse_cell(own.index, "\n".join([*lines, missing_counts(table)]))
    if reduced.tree is None:
        return []
    return [(reduced, {"kind": "mapping", "value": [[k, v] for k, v in counts.items()]})]
