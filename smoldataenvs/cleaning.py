"""Cleaning steps a notebook ran on a table before the question: stated, in order.

EDA notebooks clean their frame in place before any computed cell
(`df.dropna(subset=['Age'], inplace=True)`, `df['Age'] = df['Age'].fillna(df['Age'].median())`,
`df.columns = [...]`, `df.drop_duplicates(inplace=True)`), so without these steps every
later question would be about a frame it cannot describe. Two halves:

- `as_assignment` rewrites an in-place statement as the rebinding it is equivalent to
  (`df.dropna(inplace=True)` is `df = df.dropna()`; `df['c'].fillna(v, inplace=True)` is
  `df['c'] = df['c'].fillna(v)`; `df.columns = [...]` is `df = df.set_axis([...], axis=1)`),
  so the describer traces it like any assignment; the reference keeps the original code.
- `table_step` / `column_change` phrase one step ("dropping the rows where `Age` is
  missing", "in the `Age` column, filling the missing values with its median"), and
  `cleaned` appends it to the table's phrase: "the data in `x.csv` (after A, then B)".

Whatever cannot be stated exactly (a fill value from another table, `thresh=`,
`keep=False`, a regular expression) gives None, and the cell stays `question.undescribed`.
"""

from __future__ import annotations

import ast
import re
from typing import Protocol

from smoldataenvs import filling
from smoldataenvs.describe_words import AGGREGATES, const_text, lambda_parameter

IN_PLACE = {"dropna", "fillna", "drop", "drop_duplicates", "rename", "reset_index",
            "replace", "sort_values", "set_index", "interpolate", "ffill", "bfill"}  # fmt: skip
TABLE_STEPS = {"dropna", "fillna", "drop_duplicates", "rename", "reset_index", "set_axis",
               "ffill", "bfill", "interpolate", "replace"}  # fmt: skip
FILL_AGGREGATES = {"mean", "median", "min", "max"}
REGEX_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()]")
PLAIN_DATA = re.compile(r"the data in `[^`]+`( \(with its [^()]+ as the row labels\))?")
TEXT_STEPS = {"strip": "removing spaces around", "lower": "lower-casing",
              "upper": "upper-casing"}  # fmt: skip
NAME_STEPS = {"strip": "without spaces around it", "lower": "lower-cased", "upper": "upper-cased"}
"""A column-name function's string methods (Python's own, not the `.str` accessor's)."""


class Phrasing(Protocol):
    """What a step needs of the describer."""

    cleaning: dict[str, tuple[str, tuple[str, ...]]]

    def subject(self, node: ast.AST) -> str | None: ...


def _inplace(call: ast.Call) -> bool:
    return any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def _without_inplace(call: ast.Call) -> ast.Call:
    keywords = [k for k in call.keywords if k.arg != "inplace"]
    return ast.Call(func=call.func, args=call.args, keywords=keywords)


def as_assignment(statement: ast.stmt) -> ast.Assign | None:
    """The rebinding an in-place cleaning statement is equivalent to, or None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        column = _loc_column(target)
        if column is not None:  # `df.loc[:, 'c'] = v` is `df['c'] = v`
            return ast.Assign(targets=[column], value=statement.value)
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "columns"
            and isinstance(target.value, ast.Name)
        ):
            name = target.value.id
            value = ast.Call(
                func=ast.Attribute(value=ast.Name(name, ast.Load()), attr="set_axis"),
                args=[statement.value],
                keywords=[ast.keyword(arg="axis", value=ast.Constant(1))],
            )
            return ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
        return None
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    if call.func.attr not in IN_PLACE or not _inplace(call):
        return None
    owner = call.func.value
    if isinstance(owner, ast.Name):
        target: ast.expr = ast.Name(owner.id, ast.Store())
    elif (
        isinstance(owner, ast.Subscript)
        and isinstance(owner.value, ast.Name)
        and isinstance(owner.slice, ast.Constant)
        and isinstance(owner.slice.value, str)
    ):
        # `df['c'].fillna(v, inplace=True)`: pandas < 3 writes through to `df`.
        target = ast.Subscript(value=owner.value, slice=owner.slice, ctx=ast.Store())
    else:
        return None
    return ast.Assign(targets=[target], value=_without_inplace(call))


def _loc_column(target: ast.AST) -> ast.Subscript | None:
    """`df.loc[:, 'c']` as an assignment target: `df['c']`."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)):
        return None
    owner, key = target.value, target.slice
    if not (owner.attr == "loc" and isinstance(owner.value, ast.Name)):
        return None
    if not (isinstance(key, ast.Tuple) and len(key.elts) == 2):
        return None
    rows, column = key.elts
    whole = isinstance(rows, ast.Slice) and rows.lower is rows.upper is rows.step is None
    if not (whole and isinstance(column, ast.Constant) and isinstance(column.value, str)):
        return None
    return ast.Subscript(value=owner.value, slice=column, ctx=ast.Store())


def cleaned(describer: Phrasing, base: str, step: str) -> str:
    """`base` with one more cleaning step, steps of one table kept in one bracket in
    the order the notebook ran them."""
    root, steps = describer.cleaning.get(base, (base, ()))
    steps = (*steps, step)
    # Straight after the read: "(after A, then B)". After a filter or another step the
    # order must not read backwards ("X, keeping only ... (after A)" suggests A first).
    opener = "after" if PLAIN_DATA.fullmatch(root) else "then, on the result:"
    text = f"{root} ({opener} {', then '.join(steps)})"
    describer.cleaning[text] = (root, steps)
    return text


def _names(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(items) == len(node.elts) and all(isinstance(i, str) for i in items):
            return items  # type: ignore[return-value]
    return None


def _listed(names: list[str], joiner: str) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" {joiner} {quoted[-1]}"


def is_column(describer: Phrasing, node: ast.AST) -> bool:
    """A single column (`t['c']`, or a name bound to one): `dropna()` then drops values."""
    assignments: dict = getattr(describer, "assignments", {})
    if isinstance(node, ast.Name) and node.id in assignments:
        return is_column(describer, assignments[node.id])
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)


def table_step(describer: Phrasing, method: str, target: ast.AST, node: ast.Call) -> str | None:
    """`t.dropna(subset=[...])`, `t.fillna(0)`, `t.drop_duplicates()`, `t.rename(columns=)`,
    `t.reset_index(drop=True)`, `t.set_axis([...], axis=1)`: the table and the step."""
    base = describer.subject(target)
    if base is None:
        return None
    keywords = {k.arg: k.value for k in node.keywords}
    if None in keywords:
        return None
    column = is_column(describer, target)
    step = {
        "dropna": _dropna,
        "fillna": _fillna,
        "drop_duplicates": _drop_duplicates,
        "rename": _rename,
        "reset_index": _reset_index,
        "set_axis": _set_axis,
        "ffill": filling.forward,
        "bfill": filling.backward,
        "interpolate": filling.interpolate,
        "replace": filling.replace,
    }[method](node.args, keywords, column, target)  # type: ignore[arg-type]
    return cleaned(describer, base, step) if step else None


def _dropna(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    how = keywords.pop("how", ast.Constant("any"))
    subset = _names(keywords.pop("subset", None)) if "subset" in keywords else []
    axis = keywords.pop("axis", ast.Constant(0))
    if args or keywords or subset is None or not isinstance(how, ast.Constant):
        return None
    if not (isinstance(axis, ast.Constant) and axis.value in (0, "index")):
        return None
    if column:
        return "dropping its missing values" if how.value == "any" and not subset else None
    if not subset:
        if how.value == "any":
            return "dropping every row that has a missing value in any column"
        return "dropping the rows whose values are all missing" if how.value == "all" else None
    if len(subset) == 1 and how.value in ("any", "all"):
        return f"dropping the rows where {_listed(subset, 'or')} is missing"
    if how.value == "any":
        return f"dropping the rows where any of {_listed(subset, 'or')} is missing"
    return (
        f"dropping the rows where {_listed(subset, 'and')} are all missing"
        if how.value == "all"
        else None
    )


def _fillna(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    if "method" in keywords:  # `fillna(method='ffill', limit=1)`
        return filling.fill_method(args, keywords, column)
    value = args[0] if len(args) == 1 else keywords.pop("value", None)
    if value is None or keywords or len(args) > 1:
        return None
    if isinstance(value, ast.Dict) and not column:
        parts = []
        for key, item in zip(value.keys, value.values, strict=True):
            name, fill = _names(key), const_text(item)
            if not name or len(name) != 1 or fill is None:
                return None
            parts.append(f"missing values of `{name[0]}` with {fill}")
        return "filling the " + " and the ".join(parts) if parts else None
    if not column and _own_statistic(value, _target):
        assert isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
        statistic = AGGREGATES[value.func.attr].removeprefix("the ")
        return (
            f"filling the missing values of each numeric column with that column's {statistic}"
            " (of its non-missing values)"
        )
    fill = const_text(value)
    if fill is None or isinstance(value, ast.List | ast.Tuple):
        return None
    return f"filling {'its missing values' if column else 'every missing value'} with {fill}"


def _own_statistic(value: ast.AST, table: ast.AST) -> bool:
    """`t.fillna(t.mean())` (or `median`, `numeric_only=True`): per-column statistics of
    the table being filled; pandas 1.x leaves text columns out of `t.mean()`."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("mean", "median")
        and not value.args
        and all(
            k.arg == "numeric_only" and getattr(k.value, "value", None) is True
            for k in value.keywords
        )
        and ast.dump(value.func.value) == ast.dump(table)
    )


def _drop_duplicates(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    keep = keywords.pop("keep", ast.Constant("first"))
    subset = _names(keywords.pop("subset", None) or (args[0] if args else None))
    if keywords or len(args) > 1 or not (isinstance(keep, ast.Constant) and keep.value == "first"):
        return None
    if column:
        return (
            None if args else "dropping the values that repeat an earlier value (keeping the first)"
        )
    if subset:
        return (
            f"dropping the rows whose {_listed(subset, 'and')} repeat an earlier row's "
            "(keeping the first)"
        )
    return (
        None if args else "dropping the rows that repeat an earlier row exactly (keeping the first)"
    )


def _rename(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    """`rename(columns={'old': 'new'})`, or every column name through a function:
    `rename(columns=str.lower)`, `rename(lambda x: x.lower(), axis=1)`."""
    mapping = keywords.pop("columns", None)
    if mapping is None and len(args) + ("mapper" in keywords) == 1:
        axis = keywords.pop("axis", None)
        mapping = args[0] if args else keywords.pop("mapper")
        args = []
        if not (isinstance(axis, ast.Constant) and axis.value in (1, "columns")):
            return None
    if args or keywords or column or mapping is None:
        return None
    if not isinstance(mapping, ast.Dict):
        steps = name_function_steps(mapping)
        return f"renaming each column to its name {', then '.join(steps)}" if steps else None
    if not mapping.keys:
        return None
    parts = []
    for key, value in zip(mapping.keys, mapping.values, strict=True):
        # `reset_index()` of an unnamed Series makes a column `0`: `{0: 'count'}`.
        unnamed = isinstance(key, ast.Constant) and type(key.value) is int
        old, new = ([str(key.value)] if unnamed else _names(key)), _names(value)  # type: ignore[union-attr]
        if not old or not new or len(old) != 1 or len(new) != 1:
            return None
        parts.append(f"`{old[0]}` to `{new[0]}`")
    noun = "column" if len(parts) == 1 else "columns"
    return f"renaming the {noun} {', '.join(parts)}"


def name_function_steps(function: ast.AST) -> list[str] | None:
    """A function of a column name as what it does, in order: `str.lower` ->
    ['lower-cased'], `lambda x: x.lower().split()[0]` -> ['lower-cased', 'cut to its
    first word (split at whitespace)']; None for anything else."""
    if (
        isinstance(function, ast.Attribute)
        and getattr(function.value, "id", None) == "str"
        and function.attr in NAME_STEPS
    ):
        return [NAME_STEPS[function.attr]]
    parameter = lambda_parameter(function)
    if parameter is None:
        return None
    steps = _name_steps(function.body, parameter)  # type: ignore[attr-defined]
    return steps or None


def _name_steps(node: ast.AST, name: str) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [] if node.id == name else None
    if isinstance(node, ast.Subscript):  # `x.split()[0]`: the first word
        split = node.value
        if not (
            isinstance(node.slice, ast.Constant)
            and node.slice.value == 0
            and isinstance(split, ast.Call)
            and isinstance(split.func, ast.Attribute)
            and split.func.attr == "split"
            and not split.args
            and not split.keywords
        ):
            return None
        inner = _name_steps(split.func.value, name)
        return None if inner is None else [*inner, "cut to its first word (split at whitespace)"]
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)) or node.keywords:
        return None
    inner = _name_steps(node.func.value, name)
    method = node.func.attr
    if inner is None:
        return None
    if method in NAME_STEPS and not node.args:
        return [*inner, NAME_STEPS[method]]
    texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if method == "replace" and len(node.args) == 2 and len(texts) == 2:
        return [*inner, f"with the text {texts[0]!r} replaced by {texts[1]!r}"]
    return None


def _reset_index(args: list, keywords: dict, column: bool, _target: ast.AST) -> str | None:
    drop = keywords.pop("drop", None)
    if args or keywords or not (isinstance(drop, ast.Constant) and drop.value is True):
        return None
    return "numbering the rows again from 0"


def _set_axis(args: list, keywords: dict, column: bool, target: ast.AST) -> str | None:
    """`df.columns = [...]` (as `as_assignment` rewrote it) or `df.columns.str.strip()`."""
    axis = keywords.pop("axis", None)
    if len(args) != 1 or keywords or column:
        return None
    if not (isinstance(axis, ast.Constant) and axis.value in (1, "columns")):
        return None
    names = _names(args[0])
    if names:
        return f"renaming its columns, in order, to {', '.join(repr(n) for n in names)}"
    columns = ast.Attribute(value=target, attr="columns", ctx=ast.Load())
    mapped = args[0]
    if (  # `df.columns = map(str.upper, df.columns)`
        isinstance(mapped, ast.Call)
        and getattr(mapped.func, "id", None) == "map"
        and len(mapped.args) == 2
        and ast.dump(mapped.args[1]) == ast.dump(columns)
        and isinstance(mapped.args[0], ast.Attribute)
        and getattr(mapped.args[0].value, "id", None) == "str"
        and mapped.args[0].attr in TEXT_STEPS
    ):
        return f"{TEXT_STEPS[mapped.args[0].attr]} the column names"
    steps = text_steps(args[0], columns)
    return f"{' and '.join(steps)} the column names" if steps else None


def text_steps(node: ast.AST, start: ast.AST) -> list[str] | None:
    """`x.str.strip().str.lower()` applied to `start`: the verbs, in order."""
    if ast.dump(node) == ast.dump(start):
        return []
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    accessor = node.func.value
    if not (isinstance(accessor, ast.Attribute) and accessor.attr == "str"):
        return None
    inner = text_steps(accessor.value, start)
    method = node.func.attr
    if inner is None or (node.keywords and method != "replace"):
        return None
    if method in TEXT_STEPS and not node.args:
        return [*inner, TEXT_STEPS[method]]
    if method == "replace" and len(node.args) == 2:
        literal = _literal_replace(node)
        if literal:
            return [*inner, f"replacing the text {literal[0]} with {literal[1]} in"]
    return None


def _literal_replace(node: ast.Call) -> tuple[str, str] | None:
    """`.str.replace(',', '')`: the same under pandas 1.x (regex by default) and 2.x
    (literal by default) only when the pattern has no regular-expression character, or
    `regex=False` says it is literal."""
    old, new = (const_text(a) for a in node.args)
    keywords = {k.arg: k.value for k in node.keywords}
    regex = keywords.pop("regex", None)
    literal = isinstance(regex, ast.Constant) and regex.value is False
    pattern = getattr(node.args[0], "value", None)
    if keywords or not old or new is None or not isinstance(pattern, str):
        return None
    if not literal and (regex is not None or REGEX_SPECIAL.search(pattern)):
        return None
    return old, new
