"""Steps that change a table's values but not its shape: fill forward or back,
interpolate, replace. Each is phrased exactly, or not at all (None).

Tutorials and EDA notebooks show the table such a step makes (`new_df =
df.fillna(method='ffill'); new_df`): a small table whose every cell the step computed,
which the answer gate takes as a table answer graded cell by cell. The phrases say what
pandas does, as the task's container runs it (pandas 1.5): a fill carries the nearest
non-missing value along its column (or row, `axis='columns'`), at most `limit` cells into
each gap; `interpolate()` draws a straight line between the nearest non-missing values as
if the rows were equally spaced (`method='time'`: spaced by their date labels), leaves
text columns and the missing values before a column's first value alone, and repeats the
last value after it; `replace` matches whole values, never parts of text.

Whatever else (`regex=True`, `downcast=`, `inplace=` on a copy, a fill value computed
from the data) gives None, and the cell stays `question.undescribed`. The reproduction
in the container stays the judge that the phrase and the notebook's code agree.
"""

from __future__ import annotations

import ast

from smoldataenvs.describe_words import const_text

FORWARD = {"ffill", "pad"}
BACKWARD = {"bfill", "backfill"}
MISSING_NAMES = {"nan", "NaN", "NAN", "NA"}
"""`np.nan`, `np.NaN`, `pd.NA`: a missing value as a fill or replacement."""


def missing_value(node: ast.AST) -> bool:
    """`np.nan`, `np.NaN`, `numpy.nan`, `pd.NA`, `float('nan')`. Not `None`: pandas 1.x
    reads `replace(x, None)` as "fill from the row above" (`method='pad'`), not as a
    missing value, so a `None` is never stated."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id in ("np", "numpy", "pd", "pandas") and node.attr in MISSING_NAMES
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "float"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).lower() == "nan"
    )


def value_text(node: ast.AST) -> str | None:
    """A literal as the question writes it; a missing value in words."""
    if missing_value(node):
        return "a missing value"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
            return f"-{inner.value}"
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return None
    return const_text(node)


def _limit(keywords: dict) -> tuple[bool, str]:
    """`limit=n`: (valid, the phrase's tail)."""
    limit = keywords.pop("limit", None)
    if limit is None:
        return True, ""
    if not (isinstance(limit, ast.Constant) and type(limit.value) is int and limit.value > 0):
        return False, ""
    cells = "1 cell" if limit.value == 1 else f"{limit.value} cells"
    return True, f", at most {cells} into each run of missing values"


def _axis(keywords: dict) -> str | None:
    """'column' (down the rows, pandas' default) or 'row' (`axis=1/'columns'`)."""
    axis = keywords.pop("axis", None)
    if axis is None:
        return "column"
    if isinstance(axis, ast.Constant) and axis.value in (0, "index", "rows"):
        return "column"
    if isinstance(axis, ast.Constant) and axis.value in (1, "columns"):
        return "row"
    return None


def filled(direction: str, keywords: dict, column: bool) -> str | None:
    """`ffill()` / `bfill()` / `fillna(method=...)`: the rest of `keywords` must be empty."""
    axis = _axis(keywords)
    ok, tail = _limit(keywords)
    if keywords or axis is None or not ok or (column and axis == "row"):
        return None
    forward = direction in FORWARD
    if axis == "row":
        side = "to its left" if forward else "to its right"
        where = f"the nearest non-missing value {side} in its row"
    else:
        side = "above" if forward else "below"
        where = f"the nearest non-missing value {side} it" + ("" if column else " in its column")
    return f"filling each missing value with {where}{tail}"


def fill_method(args: list, keywords: dict, column: bool) -> str | None:
    """`fillna(method='ffill', limit=1)`: None when `fillna` is given a value instead."""
    method = keywords.pop("method", None)
    if method is None or args or "value" in keywords:
        return None
    if not (isinstance(method, ast.Constant) and method.value in FORWARD | BACKWARD):
        return None
    return filled(method.value, keywords, column)


def forward(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    return None if args else filled("ffill", keywords, column)


def backward(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    return None if args else filled("bfill", keywords, column)


def interpolate(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    """`interpolate()` (linear by position) or `interpolate(method='time')`."""
    method = keywords.pop("method", args[0] if len(args) == 1 else ast.Constant("linear"))
    if len(args) > 1 or keywords or not isinstance(method, ast.Constant):
        return None
    spacing = {
        "linear": "as if the rows were equally spaced",
        "time": "with the rows spaced by the time between their date labels",
    }.get(method.value)
    if spacing is None:
        return None
    scope = "" if column else " of each numeric column"
    return (
        f"filling each missing value{scope} by straight-line interpolation between the "
        f"nearest non-missing values above and below it, {spacing}; missing values after "
        "the last non-missing value take that value, those before the first stay missing"
        + ("" if column else ", text columns are left as they are")
    )


def replace(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    """`replace(old, new)`, `replace([a, b], new)`, `replace(to_replace=..., value=...)`,
    `replace({'col': old, ...}, new)` (per column) and `replace({old: new, ...})`."""
    old = args[0] if args else keywords.pop("to_replace", None)
    new = args[1] if len(args) > 1 else keywords.pop("value", None)
    if old is None or len(args) > 2 or keywords:
        return None
    if isinstance(old, ast.Dict):
        return _replace_dict(old, new, column)
    olds = old.elts if isinstance(old, ast.List | ast.Tuple) else [old]
    texts = [value_text(o) for o in olds]
    into = value_text(new) if new is not None else None
    if not olds or into is None or not all(texts):
        return None
    return f"replacing each value equal to {' or '.join(texts)} with {into}"  # type: ignore[arg-type]


def _replace_dict(old: ast.Dict, new: ast.AST | None, column: bool) -> str | None:
    parts = []
    if new is not None:  # `{'temperature': -99999, 'event': '0'}, np.nan`: per column
        into = value_text(new)
        if column or into is None:
            return None
        for key, item in zip(old.keys, old.values, strict=True):
            name, text = key, value_text(item)
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) or not text:
                return None
            parts.append(f"{text} in `{name.value}`")
        listed = ", ".join(parts[:-1]) + f" or {parts[-1]}" if len(parts) > 1 else parts[0]
        return f"replacing each value equal to {listed} with {into}" if parts else None
    for key, item in zip(old.keys, old.values, strict=True):  # `{-99999: np.nan, ...}`
        before, after = (value_text(key) if key is not None else None), value_text(item)
        if not before or not after:
            return None
        parts.append(f"each value equal to {before} with {after}")
    return f"replacing {', and '.join(parts)}" if parts else None
