"""The words the describer uses: what each pandas/numpy method, reader option, join and
comparison reads as in English, and the small literal readers every phrase needs.

Kept apart from the grammar (`describe.py`, `describe_calls.py`) so the vocabulary can be
read, and extended, in one place.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import re

NUMPY_SPREAD = {
    "std": "the population standard deviation (n in the denominator)",
    "var": "the population variance (n in the denominator)",
}
"""numpy's `np.std`/`np.var` divide by n (`ddof=0`), pandas' `.std()`/`.var()` by n - 1:
below a few hundred rows the two differ by more than the grader's tolerance, so the
question says which one the notebook computed."""


def numpy_made(node: ast.AST, assignments: dict[str, ast.expr], depth: int = 5) -> bool:
    """Whether `node` holds a numpy array: `np.array(...)`, `np.asarray(...)`, `.values`
    or `.to_numpy()`, directly or through the variables assigned to it. An array's
    `.std()` divides by n, a pandas object's by n - 1."""
    while isinstance(node, ast.Name) and depth and node.id in assignments:
        node, depth = assignments[node.id], depth - 1
    if isinstance(node, ast.Attribute):
        return node.attr == "values"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    func = node.func
    if isinstance(func.value, ast.Name) and func.value.id in NUMPY_NAMES:
        return func.attr in ("array", "asarray")
    return func.attr == "to_numpy"


AGGREGATES = {
    "sum": "the sum",
    "mean": "the mean",
    "median": "the median",
    "std": "the sample standard deviation (n - 1 in the denominator)",
    "var": "the sample variance (n - 1 in the denominator)",
    "min": "the smallest value",
    "max": "the largest value",
    "count": "the number of non-missing values",
    "nunique": "the number of distinct values",
    "prod": "the product",
    "idxmax": "the label (index) of the largest value",
    "idxmin": "the label (index) of the smallest value",
    "unique": "the distinct values",
    "value_counts": "the count of each distinct value (most common first)",
    "any": "whether any value is true",
    "all": "whether every value is true",
    "mode": "the most common value",
    "cumsum": "the running total",
}
DESCRIBE = (
    "the summary statistics of pandas' `describe()` (`count` of non-missing values, `mean`, "
    "`std`, `min`, `25%`, `50%`, `75%` percentiles, `max`)"
)
PER_COLUMN = {"sum", "mean", "median", "std", "var", "min", "max", "count", "nunique", "idxmax",
              "idxmin", "any", "all"}  # fmt: skip
SELECTIONS = {"head", "tail", "nlargest", "nsmallest", "sort_values", "value_counts", "unique"}
FRAME_ATTRS = {"shape", "columns", "index", "dtypes", "values", "T", "size", "str", "dt", "loc",
               "iloc", "at", "iat", "plot", "ndim", "empty", "name", "count", "sum", "mean",
               "median", "min", "max", "std", "var", "nunique", "unique", "value_counts",
               "describe", "head", "tail", "sort_values", "isnull", "isna", "corr"}  # fmt: skip
"""Attributes that are never a column: `t.count` is the method (a notebook that left off
the call shows `<bound method ...>`), not a column named `count`."""
READERS = {"read_csv", "read_table", "read_excel", "read_json", "read_parquet", "loadtxt",
           "genfromtxt", "read_feather", "read_pickle", "load"}  # fmt: skip
COMPARE = {ast.Gt: ">", ast.GtE: "≥", ast.Lt: "<", ast.LtE: "≤", ast.Eq: "equals", ast.NotEq: "≠"}
NUMPY_NAMES = {"np", "numpy"}
NEUTRAL_READ_OPTIONS = {"sep", "delimiter", "encoding", "parse_dates", "infer_datetime_format",
                        "low_memory", "engine", "dayfirst", "quotechar", "sheet_name"}  # fmt: skip
JOINS = {
    "inner": "an inner join: only rows with a match in both",
    "outer": "an outer join: every row of both, missing values where there is no match",
    "left": "a left join: every row of the first, missing values where there is no match",
    "right": "a right join: every row of the second, missing values where there is no match",
}
STR_TESTS = {"startswith": "starts with", "endswith": "ends with", "contains": "contains"}
CASTS = {"float": "numbers (true = 1, false = 0)", "int": "whole numbers", "str": "text"}
PASS_THROUGH = {"array", "asarray", "list", "float", "int", "Series", "DataFrame", "copy", "abs"}


def substituted(node: ast.AST, name: str, value: ast.AST) -> ast.AST:
    """A copy of `node` with every read of `name` replaced by a copy of `value` (`x =
    x.astype(float)` after `x = a['b']`; a lambda's parameter by the table it is called
    with); a nested lambda that rebinds `name` is left as it is."""

    class _Substitute(ast.NodeTransformer):
        def visit_Name(self, found: ast.Name) -> ast.AST:
            if found.id == name and isinstance(found.ctx, ast.Load):
                return copy.deepcopy(value)
            return found

        def visit_Lambda(self, found: ast.Lambda) -> ast.AST:
            rebound = name in {a.arg for a in found.args.args}
            return found if rebound else self.generic_visit(found)

    return _Substitute().visit(copy.deepcopy(node))


def lambda_parameter(node: ast.AST) -> str | None:
    """The one plain parameter of `lambda x: ...` (no defaults, no *args), or None: a
    function the describer can read by following that name through its body."""
    if not isinstance(node, ast.Lambda) or len(node.args.args) != 1:
        return None
    arguments = node.args
    if arguments.defaults or arguments.kwonlyargs or arguments.vararg or arguments.kwarg:
        return None
    return arguments.args[0].arg


def const_text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float):
        return repr(node.value) if isinstance(node.value, str) else str(node.value)
    if isinstance(node, ast.List | ast.Tuple):
        items = [const_text(e) for e in node.elts]
        return ", ".join(items) if all(items) else None  # type: ignore[arg-type]
    return None


def int_literal(node: ast.AST) -> int | None:
    """A literal int such as `3` or `-1` (a unary minus is not a Constant)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if type(value) is int else None


ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


DATE_PARTS = {
    "year": "year",
    "month": "month number (1 = January)",
    "day": "day of the month",
    "hour": "hour",
    "weekday": "day of the week (0 = Monday)",
    "dayofweek": "day of the week (0 = Monday)",
}


def column_formula(node: ast.AST) -> str | None:
    """`t['quantity'] * t['unit_price']` -> '`quantity` * `unit_price`' (columns, number
    literals and + - * / only; anything else is not a formula we state)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return f"`{node.slice.value}`" if isinstance(node.slice.value, str) else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        # `t.index.weekday`: a part of the date row labels, never a column.
        part = DATE_PARTS.get(node.attr)
        if part and node.value.attr == "dt":  # `t['date'].dt.year`
            return _date_part(node.value.value, part)
        return f"the {part} of the row labels" if node.value.attr == "index" and part else None
    if isinstance(node, ast.Attribute) and node.attr not in FRAME_ATTRS:
        return f"`{node.attr}`"
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str):
        return repr(node.value)  # a text literal: `t['a'] + '-' + t['b']` joins texts
    if isinstance(node, ast.Call):
        return binned(node) or _applied_date_part(node) or mapped(node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
        # `t['model_year'] < 76`: a yes/no column
        values, limit = column_formula(node.left), const_text(node.comparators[0])
        words = COMPARE[type(node.ops[0])]
        return f"whether {values} {words} {limit}" if values and limit else None
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        left, right = column_formula(node.left), column_formula(node.right)
        if left is None or right is None:
            return None
        wrap = [
            f"({s})" if isinstance(n, ast.BinOp) else s
            for n, s in ((node.left, left), (node.right, right))
        ]
        return f"{wrap[0]} {ARITHMETIC[type(node.op)]} {wrap[1]}"
    return None


def _date_part(values: ast.AST, part: str) -> str | None:
    """The part of each date of one column (`t['date'].dt.month`)."""
    column = column_formula(values) if isinstance(values, ast.Subscript) else None
    return f"the {part} of {column}" if column else None


def _applied_date_part(node: ast.Call) -> str | None:
    """`t['date'].apply(lambda x: x.year)`: `t['date'].dt.year` written as a function."""
    func, args = node.func, node.args
    if not (isinstance(func, ast.Attribute) and func.attr in ("apply", "map") and len(args) == 1):
        return None
    function = args[0]
    if node.keywords or not isinstance(function, ast.Lambda):
        return None
    names = function.args.args
    body = function.body
    if len(names) != 1 or function.args.vararg or function.args.kwarg:
        return None
    if not (
        isinstance(body, ast.Attribute)
        and isinstance(body.value, ast.Name)
        and body.value.id == names[0].arg
        and body.attr in DATE_PARTS
        and body.attr != "weekday"  # a method of a Timestamp, not a number
    ):
        return None
    return _date_part(func.value, DATE_PARTS[body.attr])


MAPPING_BUILTINS = frozenset({"int", "float", "str", "len", "round", "abs", "min", "max", "bool"})
"""The functions a stated mapping may call besides its value's own methods."""
MAX_MAPPING = 100
"""The longest mapping code stated (a longer one is the notebook's logic, not a step)."""


def mapped(node: ast.Call) -> str | None:
    """`t['size'].apply(lambda x: int(x.split(' ')[0]))` -> "`size` with each value x
    replaced by `int(x.split(' ')[0])`"; `t['ok'].map({'yes': 1, 'no': 0})` -> "`ok`
    with each value replaced as {'yes': 1, 'no': 0} says (a value it does not list:
    missing)". The code is stated as written: one short expression of the value alone
    (its own methods and a few builtins), no name from elsewhere in the notebook."""
    func, args = node.func, node.args
    if not (isinstance(func, ast.Attribute) and func.attr in ("apply", "map") and len(args) == 1):
        return None
    values = func.value  # `t['size']` or `t.size`
    column = column_formula(values) if isinstance(values, ast.Subscript | ast.Attribute) else None
    if column is None or node.keywords:
        return None
    function = args[0]
    if isinstance(function, ast.Dict) and func.attr == "map":
        table = ast.unparse(function)
        if len(table) > MAX_MAPPING or not all(
            isinstance(n, ast.Constant) for n in (*function.keys, *function.values)
        ):
            return None
        return (
            f"{column} with each value replaced as {table} says (a value it does not list: missing)"
        )
    if not isinstance(function, ast.Lambda):
        return None
    params = function.args
    if len(params.args) != 1 or params.vararg or params.kwarg or params.defaults:
        return None
    name, code = params.args[0].arg, ast.unparse(function.body)
    if len(code) > MAX_MAPPING:
        return None
    free = {n.id for n in ast.walk(function.body) if isinstance(n, ast.Name)} - {name}
    if free - MAPPING_BUILTINS:  # a called function is a name too
        return None
    if any(isinstance(n, ast.Lambda | ast.NamedExpr | ast.Await) for n in ast.walk(function.body)):
        return None
    return f"{column} with each value {name} replaced by `{code}`"


def binned(node: ast.Call) -> str | None:
    """`pd.cut(t['Fare'], bins=[0, 10, 30], labels=['Low', 'High'])` (EDA's fare and age
    groups) -> '`Fare` put into the bins (0, 10], (10, 30] labelled 'Low', 'High' (a value
    in no bin: missing)'. Only edges given as numbers (a bin count is pandas' own
    widened range) and text labels, one per bin; `right=False` and `include_lowest=True`
    change which edge a bin holds and are stated."""
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "cut"
        and isinstance(func.value, ast.Name)
        and func.value.id == "pd"
    ):
        return None
    options = {k.arg: k.value for k in node.keywords}
    args = list(node.args)
    column = args.pop(0) if args else options.pop("x", None)
    edges = args.pop(0) if args else options.pop("bins", None)
    labels = options.pop("labels", None)
    right = const_value(options.pop("right", ast.Constant(True)))
    lowest = const_value(options.pop("include_lowest", ast.Constant(False)))
    values = column_formula(column) if isinstance(column, ast.Subscript | ast.Attribute) else None
    bounds = _numbers(edges)
    names = _labels(labels) if labels is not None else None
    if args or options or values is None or not bounds or len(bounds) < 2:
        return None
    if right not in (True, False) or lowest not in (True, False):
        return None
    if bounds != sorted(set(bounds)) or (
        labels is not None and len(names or []) != len(bounds) - 1
    ):
        return None
    shown = [f"{b:g}" for b in bounds]
    # pandas: (a, b] by default, [a, b) with right=False; include_lowest closes the first
    # bin's left edge (with right=False every left edge is closed already)
    spans = [
        f"{'[' if not right or (lowest and i == 0) else '('}{lo}, {hi}{']' if right else ')'}"
        for i, (lo, hi) in enumerate(itertools.pairwise(shown))
    ]
    named = f" labelled {', '.join(repr(n) for n in names or [])}" if names else ""
    return f"{values} put into the bins {', '.join(spans)}{named} (a value in no bin: missing)"


def const_value(node: ast.AST) -> object:
    """A literal's value, or a marker no literal equals."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ...


def _numbers(node: ast.AST | None) -> list[float] | None:
    values = const_value(node) if isinstance(node, ast.List | ast.Tuple) else None
    if not isinstance(values, list | tuple):
        return None
    kinds = all(type(v) in (int, float) for v in values)
    return [float(v) for v in values] if kinds and all(math.isfinite(v) for v in values) else None


def _labels(node: ast.AST | None) -> list[str | int] | None:
    """Bin labels: texts (`['Low', 'High']`) or whole numbers (`[0, 1]`, a 0/1 class)."""
    values = const_value(node) if isinstance(node, ast.List | ast.Tuple) else None
    if not isinstance(values, list | tuple):
        return None
    texts = all(isinstance(v, str) for v in values)
    numbers = all(type(v) is int for v in values)
    return list(values) if texts or numbers else None


def plain_aggregate(node: ast.Call) -> bool:
    """No argument that changes what is computed: none, or `axis=0` / `0`, `skipna`."""
    args = [*node.args, *(k.value for k in node.keywords if k.arg == "axis")]
    others = [k for k in node.keywords if k.arg not in ("axis", "skipna")]
    return not others and all(isinstance(a, ast.Constant) and a.value in (0, "index") for a in args)


def statistics_phrase(method: str, base: str, node: ast.Call) -> str | None:
    """`s.describe()` and `s.quantile(q)` of one column (a table's `describe()` has one
    column per numeric column only, which the question would have to list): the
    statistics named, so the answer's labels are no surprise."""
    if method == "describe" and not node.args and not node.keywords:
        return f"{DESCRIBE} of {base}"
    if method != "quantile" or len(node.args) > 1 or node.keywords:
        return None
    q = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
    if node.args and (not isinstance(q, float | int) or isinstance(q, bool)):
        return None
    share = q if q is not None else 0.5
    return f"the {share:g} quantile (pandas' default linear interpolation) of {base}"


_ONE_COLUMN = re.compile(r"^the `([^`]+)` column of (.+)$", re.S)


def correlation(base: str, other: str) -> str:
    """ "the correlation between the `a` and `b` columns of <data>" when both columns
    come from the same data (the data was stated twice), else both phrases in full."""
    left, right = _ONE_COLUMN.match(base), _ONE_COLUMN.match(other)
    if left and right and left.group(2) == right.group(2):
        return (
            f"the correlation between the `{left.group(1)}` and `{right.group(1)}` "
            f"columns of {left.group(2)}"
        )
    return f"the correlation between {base} and {other}"
