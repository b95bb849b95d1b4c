"""What an answer's value is computed by: the chain of cells it depends on and the
data operations along it (filters, groupings, joins, aggregations, ...).

The chain comes from the backward slice (names defined and used, via `ast`, back to
the data load); this module only reads what the kept statements do. Two uses, why it
is its own module: the task records the chain as its difficulty (a look-up one cell
after the load is easy, a filter-group-aggregate over four cells is not), and a chain
with no computing operation at all (`df.head()`, `df.shape`, `df['x']`, a value read
off one row) is a trivial look-up that a question should not be made of (issue 32).
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from smoldataenvs.cellcode import call_chain
from smoldataenvs.seaborn_data import loaded_name
from smoldataenvs.slicing import Slice

FILTERS = {"query", "dropna", "drop_duplicates", "isin", "between", "where", "mask", "filter"}
GROUPINGS = {"groupby", "pivot_table", "pivot", "crosstab", "resample", "value_counts", "rolling"}
JOINS = {"merge", "join", "concat"}
AGGREGATIONS = {
    "sum", "mean", "median", "std", "var", "min", "max", "count", "nunique", "unique", "agg",
    "aggregate", "size", "quantile", "percentile", "idxmax", "idxmin", "prod", "corr", "cov",
    "mode", "value_counts", "average", "argmax", "argmin", "cumsum", "cumprod", "sem", "skew",
    "any", "all", "describe",
}  # fmt: skip
SORTS = {"sort_values", "sort_index", "nlargest", "nsmallest", "rank", "argsort"}
DERIVATIONS = {"apply", "map", "assign", "transform", "diff", "pct_change", "round", "eval",
               "melt", "stack", "unstack", "explode", "cut", "qcut", "clip", "abs"}  # fmt: skip
FILLS = {"fillna", "ffill", "bfill", "interpolate", "replace"}
"""Steps that change values, not the table's shape: computing for a question about the
values (the filled table), a look-up for one about its size (smoldataenvs/filling.py)."""
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
SETUP = (ast.Import, ast.ImportFrom)
COMPUTING = ("filter", "grouping", "join", "aggregation", "sort", "derive", "fill")
"""Operations that compute something; a chain with none of them is a look-up."""


@dataclass(frozen=True)
class Difficulty:
    """The cells the answer's value flows through (data load first, answer cell last)
    and how often each kind of operation occurs along them."""

    chain: list[int]
    operations: dict[str, int]

    @property
    def computes(self) -> bool:
        return any(self.operations.get(kind) for kind in COMPUTING)

    @property
    def only_fills(self) -> bool:
        """Nothing computed but values filled or replaced: the table's size is the file's."""
        return bool(self.operations.get("fill")) and not any(
            self.operations.get(kind) for kind in COMPUTING if kind != "fill"
        )

    def as_metadata(self) -> dict:
        return {
            "chain_length": len(self.chain),
            "chain_cells": list(self.chain),
            "operations": dict(sorted(self.operations.items())),
            "computing_operations": sum(self.operations.get(k, 0) for k in COMPUTING),
        }


def _is_mask(node: ast.AST) -> bool:
    """A row condition: `df['x'] > 3`, `(a) & (b)`, `~m`, `s.isin([...])`, `s.isnull()`."""
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return True
    if isinstance(node, ast.Call):
        name = call_chain(node.func)[-1:]
        masks = {"isin", "isnull", "isna", "notnull", "notna", "between", "duplicated"}
        return bool(name) and name[0] in masks
    return False


def _subscript_filters(node: ast.Subscript) -> bool:
    key = node.slice
    if isinstance(key, ast.Tuple) and key.elts:
        key = key.elts[0]  # `.loc[rows, columns]`
    return _is_mask(key)


def operations(statements: list[ast.stmt]) -> Counter[str]:
    """Counts of each kind of operation in `statements`."""
    found: Counter[str] = Counter()
    for statement in statements:
        if isinstance(statement, SETUP):
            continue
        if isinstance(statement, ast.Assign) and _is_mask(statement.value):
            found["filter"] += 1  # `m = df['x'] > 3`, used later as `df[m]`
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                chain = call_chain(node.func)
                name = chain[-1] if chain else ""
                pandas_read = chain[:1] in (["pd"], ["pandas"]) and name.startswith("read_")
                if pandas_read or loaded_name(node) is not None:
                    found["load"] += 1
                for kind, names in (
                    ("filter", FILTERS),
                    ("grouping", GROUPINGS),
                    ("join", JOINS),
                    ("aggregation", AGGREGATIONS),
                    ("sort", SORTS),
                    ("derive", DERIVATIONS),
                    ("fill", FILLS),
                ):
                    if name in names:
                        found[kind] += 1
                if isinstance(node.func, ast.Name) and name in ("sum", "max", "min", "sorted"):
                    found["aggregation" if name != "sorted" else "sort"] += 1
            elif isinstance(node, ast.Subscript) and _subscript_filters(node):
                found["filter"] += 1
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
                found["derive"] += 1
    return found


def difficulty(sliced: Slice) -> Difficulty:
    """The chain (slice cells holding more than imports) and its operations."""
    chain = [
        index
        for index in sliced.cells
        if any(not isinstance(s, SETUP) for s in sliced.statements[index])
    ]
    return Difficulty(chain=chain, operations=dict(operations(sliced.all_statements())))
