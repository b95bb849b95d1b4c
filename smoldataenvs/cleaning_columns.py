"""Cleaning steps on one column: `df['c'] = df['c'].fillna(df['c'].median())`.

The column half of `cleaning` (which states table steps and keeps the order): the new
value must be a chain of stated changes of that same column (`fillna` with a constant
or the column's own mean, median, min, max or mode; `astype`; `.str.strip()`,
`.str.lower()`, a literal `.str.replace`; `replace`/`map` with literals; `round`;
`pd.to_numeric`, `pd.to_datetime`), read back to the column itself. A fill value from
another column or table, a function, a regular expression: None, so the cell stays
refused.
"""

from __future__ import annotations

import ast
import copy

from smoldataenvs.cleaning import FILL_AGGREGATES, text_steps
from smoldataenvs.describe_words import AGGREGATES, FRAME_ATTRS, const_text

# A column's own conversion: text becomes numbers here (`CASTS`' "true = 1, false = 0"
# is about a boolean test's values, which a cleaning step does not convert).
COLUMN_CASTS = {
    "float": "numbers",
    "int": "whole numbers",
    "str": "text",
    "category": "a categorical type",
}


def column_change(target: ast.AST, name: str, value: ast.AST) -> str | None:
    """`df['c'] = <a cleaning of df['c']>` (traced as `t.assign(c=...)`): the step, or
    None when the new value is anything but a stated change of that same column."""
    start = ast.Subscript(value=target, slice=ast.Constant(name), ctx=ast.Load())
    # `df1.TotalCharges = pd.to_numeric(df1.TotalCharges)`: the column read as an
    # attribute is the same column (`_added_column` takes `df.c =` only when so).
    verbs = _column_steps(_as_subscripts(value, target), start)
    if not verbs:
        return None
    return f"changing the `{name}` column by {', then '.join(verbs)}"


def _as_subscripts(value: ast.AST, target: ast.AST) -> ast.AST:
    """`value` with each `target.c` (a column read as an attribute) as `target['c']`."""
    table = ast.dump(target)

    class _Columns(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if ast.dump(node.value) == table and node.attr not in FRAME_ATTRS:
                column = ast.Constant(node.attr)
                return ast.Subscript(value=node.value, slice=column, ctx=ast.Load())
            return self.generic_visit(node)

    return _Columns().visit(copy.deepcopy(value))


def _column_steps(node: ast.AST, start: ast.AST) -> list[str] | None:
    if ast.dump(node) == ast.dump(start):
        return []
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    pandas = isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "pd"
    if pandas:
        return _conversion(node, start)
    if not isinstance(func, ast.Attribute):
        return None
    if isinstance(func.value, ast.Attribute) and func.value.attr == "str":
        inner = text_steps(node, func.value.value)
        before = _column_steps(func.value.value, start)
        if inner is None or before is None or len(inner) != 1:
            return None
        return [*before, f"{inner[0]} its values"]
    inner = _column_steps(func.value, start)
    if inner is None:
        return None
    step = _value_step(func.attr, node, func.value)
    return [*inner, step] if step else None


def _value_step(method: str, node: ast.Call, values: ast.AST) -> str | None:
    """One method applied to the column's values, as a verb phrase."""
    args, keywords = node.args, node.keywords
    if method == "fillna" and len(args) == 1 and not keywords:
        fill = const_text(args[0]) or _fill_statistic(args[0], values)
        return f"filling its missing values with {fill}" if fill else None
    if method == "astype" and len(args) == 1 and not keywords:
        kind = args[0]
        cast = kind.id if isinstance(kind, ast.Name) else str(getattr(kind, "value", ""))
        return f"converting it to {COLUMN_CASTS[cast]}" if cast in COLUMN_CASTS else None
    if method in ("replace", "map") and not keywords:
        pairs = _pairs(args, "to" if method == "map" else "with")
        if pairs is None or (method == "map" and len(args) != 1):
            return None
        if method == "map":
            return f"mapping its values {pairs} (any other value becomes missing)"
        return f"replacing the value{'s' if ',' in pairs else ''} {pairs}"
    if method == "round" and not keywords and len(args) <= 1:
        digits = const_text(args[0]) if args else "0"
        return f"rounding it to {digits} decimal places" if digits else None
    return None


def _pairs(args: list[ast.expr], word: str) -> str | None:
    """`replace('a', 'b')`, `replace({'a': 'b'})`, `map({'a': 1})`: "'a' with 'b'"."""
    if len(args) == 2 and not isinstance(args[0], ast.List | ast.Tuple | ast.Dict):
        old, new = const_text(args[0]), const_text(args[1])
        return f"{old} {word} {new}" if old and new else None
    if len(args) != 1 or not isinstance(args[0], ast.Dict) or not args[0].keys:
        return None
    parts = []
    for key, value in zip(args[0].keys, args[0].values, strict=True):
        old, new = const_text(key) if key else None, const_text(value)
        if not old or not new or isinstance(value, ast.List | ast.Tuple):
            return None
        parts.append(f"{old} {word} {new}")
    return ", ".join(parts)


def _fill_statistic(node: ast.AST, values: ast.AST) -> str | None:
    """`x.fillna(x.median())` / `x.mode()[0]` of the same values being filled."""
    if isinstance(node, ast.Subscript) and getattr(node.slice, "value", None) == 0:
        mode = node.value
        if (
            isinstance(mode, ast.Call)
            and isinstance(mode.func, ast.Attribute)
            and mode.func.attr == "mode"
            and not mode.args
            and not mode.keywords
            and ast.dump(mode.func.value) == ast.dump(values)
        ):
            return "its most common value (the smallest one if several tie)"
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    method = node.func.attr
    if method not in FILL_AGGREGATES or node.args or node.keywords:
        return None
    if ast.dump(node.func.value) != ast.dump(values):
        return None  # another column's or table's statistic
    return "its " + AGGREGATES[method].removeprefix("the ") + " (of the non-missing values)"


def _conversion(node: ast.Call, start: ast.AST) -> list[str] | None:
    """`pd.to_numeric(x, errors='coerce')`, `pd.to_datetime(x, format=...)`."""
    assert isinstance(node.func, ast.Attribute)
    if len(node.args) != 1:
        return None
    inner = _column_steps(node.args[0], start)
    keywords = {k.arg: k.value for k in node.keywords}
    errors = keywords.pop("errors", None)
    coerce = isinstance(errors, ast.Constant) and errors.value == "coerce"
    if inner is None or (errors is not None and not coerce):
        return None
    tail = " (a value that cannot be converted becomes missing)" if coerce else ""
    if node.func.attr == "to_numeric" and not keywords:
        return [*inner, f"converting it to numbers{tail}"]
    if node.func.attr == "to_datetime":
        pattern = keywords.pop("format", None)
        written = f" written as {const_text(pattern)}" if pattern is not None else ""
        if keywords or (pattern is not None and const_text(pattern) is None):
            return None
        return [*inner, f"reading it as dates{written}{tail}"]
    return None
