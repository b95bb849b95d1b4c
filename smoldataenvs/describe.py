"""Plain-English noun phrases for the pandas/numpy expressions an answer cell shows.

`Describer(slice).phrase(expr)` turns `round(discipline['Yellow Cards'].mean())` into
"the mean of the `Yellow Cards` column of the data in `Euro_2012_stats_TEAM.csv`,
rounded to a whole number". Anything it does not recognise gives None, and the
cell is skipped: a question must state every row slice, filter, column and grouping
the answer depends on, so a variable it cannot trace back to the data is refused,
never described as "as computed above". `used` records which of the slice's
assignments a phrase stated, so the caller can refuse steps no phrase covers.
"""

from __future__ import annotations

import ast
import re

from smoldataenvs import cleaning
from smoldataenvs.describe_calls import CallPhrases
from smoldataenvs.describe_keys import is_keyed, keyed_phrase
from smoldataenvs.describe_words import (
    AGGREGATES,
    COMPARE,
    DATE_PARTS,
    FRAME_ATTRS,
    SELECTIONS,
    column_formula,
    const_text,
    int_literal,
    lambda_parameter,
)
from smoldataenvs.given_functions import GivenFunction

DATE_KEY = re.compile(r"^\d{4}(?:-\d{1,2}){0,2}$")
"""`'2017'`, `'2017-06'`, `'2017-06-30'`: on a table whose row labels are dates, `t[key]`
selects the rows dated within that year, month or day (pandas' partial string
indexing), not a column."""
LABEL_KEEPING = {"copy", "dropna", "fillna", "sort_values", "sort_index", "drop", "rename",
                 "assign", "astype", "round", "head", "tail", "query", "abs"}  # fmt: skip
"""Calls whose result keeps the rows' labels (a subset or a reordering of them)."""


class Describer(CallPhrases):
    """Knows the slice's simple assignments, so a variable reads as where it came from,
    and the functions it defines that can be given to the agent (`given_functions`)."""

    def __init__(
        self,
        assignments: dict[str, ast.expr],
        paths: dict[str, str],
        functions: dict[str, GivenFunction] | None = None,
        imports: dict[str, str] | None = None,
    ) -> None:
        self.assignments = assignments
        self.paths = paths
        self.functions = functions or {}
        # Names the slice's imports bind -> what they stand for (`zscore` ->
        # `scipy.stats.zscore`), so a call is known to be the library's.
        self.imports = imports or {}
        self.used: set[str] = set()
        self.cleaning: dict[str, tuple[str, tuple[str, ...]]] = {}  # see cleaning.cleaned
        self._depth = 0

    def given(self) -> list[GivenFunction]:
        """The functions a phrase applied, in the slice's order: the agent's copy."""
        return [f for name, f in self.functions.items() if name in self.used]

    def phrase(self, node: ast.AST) -> str | None:
        self._depth += 1
        try:
            return None if self._depth > 12 else self._phrase(node)
        finally:
            self._depth -= 1

    def subject(self, node: ast.AST) -> str | None:
        """A table or column: 'the data in `x.csv`', 'the `Goals` column of ...'."""
        if isinstance(node, ast.Name):
            source = self.assignments.get(node.id)
            if source is None:
                return None
            self.used.add(node.id)
            return self.phrase(source)
        return self.phrase(node)

    def column(self, node: ast.AST) -> str | None:
        """Just the column name for conditions: `Goals`."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            return f"`{node.slice.value}`"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            # `t.index.month == 1`: a part of the date row labels, never a column `month`.
            return column_formula(node)
        if isinstance(node, ast.Attribute) and node.attr not in FRAME_ATTRS:
            return f"`{node.attr}`"
        return None

    def condition(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name) and isinstance(self.assignments.get(node.id), MASKS):
            # `neg = df.mag < 0; df[neg]`: the mask's own condition.
            self.used.add(node.id)
            return self.condition(self.assignments[node.id])
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            column, value = self.column(node.left), self.threshold(node.comparators[0])
            op = COMPARE.get(type(node.ops[0]))
            return f"{column} {op} {value}" if column and value and op else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
            left, right = self.condition(node.left), self.condition(node.right)
            joiner = " and " if isinstance(node.op, ast.BitAnd) else " or "
            return f"{left}{joiner}{right}" if left and right else None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            inner = self.condition(node.operand)
            return f"not ({inner})" if inner else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method, target = node.func.attr, node.func.value
            if isinstance(target, ast.Attribute) and target.attr == "str":
                column, arg = (
                    self.column(target.value),
                    const_text(node.args[0]) if node.args else None,
                )
                verb = {
                    "startswith": "starts with",
                    "endswith": "ends with",
                    "contains": "contains",
                }
                return (
                    f"{column} {verb[method]} {arg}" if column and arg and method in verb else None
                )
            column = self.column(target)
            if column and method in ("isnull", "isna"):
                return f"{column} is missing"
            if column and method in ("notnull", "notna"):
                return f"{column} is not missing"
            if column and method == "isin" and len(node.args) == 1 and not node.keywords:
                listed = const_text(node.args[0])
                if listed:
                    return f"{column} is one of {listed}"
                other = self._other_column(node.args[0])
                return f"{column} is one of the values in {other}" if other else None
            if method == "duplicated":
                return repeated_row(node)
        return None

    def _other_column(self, node: ast.AST) -> str | None:
        """`other.c` or `other['c']` as the values a column is looked up in: the phrase
        of a table's column (`t.c.isin(other.c)`)."""
        column = isinstance(node, ast.Attribute) and node.attr not in FRAME_ATTRS
        column = column or (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        )
        return self.phrase(node) if column else None

    def threshold(self, node: ast.AST) -> str | None:
        """The right side of a condition: a literal, or a number the data gives
        (`t.c > t.c.mean()`, `q99 = t.c.quantile(0.99); t[t.c <= q99]`), in brackets."""
        literal = const_text(node)
        if literal is not None or not _is_number_phrase(node, self):
            return literal
        computed = self.phrase(node)
        return f"({computed})" if computed else None

    def _phrase(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.subject(node)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Tuple) and 2 <= len(node.elts) <= 4:
            # `(t.c.min(), t.c.max())`: each value stated, numbered as displayed
            parts = [self.phrase(e) for e in node.elts]
            if not all(parts):
                return None
            listed = "; ".join(f"({i}) {part}" for i, part in enumerate(parts, 1))
            return f"these {len(parts)} values: {listed}"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.phrase(node.left), self.phrase(node.right)
            return f"{left} divided by {right}" if left and right else None
        if isinstance(node, ast.BinOp) and type(node.op) in NUMBER_WORDS:
            return self._arithmetic(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            values, limit = self.phrase(node.left), const_text(node.comparators[0])
            op = COMPARE.get(type(node.ops[0]))
            if values and limit and op:
                verb = "equals" if op == "equals" else f"is {op}"
                return f"whether each value of {values} {verb} {limit}"
        return None

    def _arithmetic(self, node: ast.BinOp) -> str | None:
        """`t.h.mean() + 3 * t.h.std()`, `Q1 - 1.5 * IQR`: sums, differences and
        multiples of numbers the data gives (an outlier threshold), every operand but a
        literal in brackets, so a long phrase cannot be misread ("the sum of whether it
        contains 'Snow' times 2"). Only of single numbers: `t.a + t.b` of two columns
        is a column formula (`column_formula`), not this."""
        if not _is_number_phrase(node, self):
            return None
        operands = [node.left, node.right]
        if isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Constant):
            operands.reverse()  # `std * 3` as "3 times (...)": the factor first
        parts = []
        for operand in operands:
            literal = operand.value if isinstance(operand, ast.Constant) else None
            text = repr(literal) if isinstance(literal, int | float) else self.phrase(operand)
            if text is None:
                return None
            parts.append(text if literal is not None else f"({text})")
        return f"{parts[0]} {NUMBER_WORDS[type(node.op)]} {parts[1]}"

    def _rows(self, base: str, key: ast.AST) -> str | None:
        """A positional row slice with literal bounds: `[:10]`, `[-5:]`, `[3:8]`."""
        if not isinstance(key, ast.Slice) or key.step is not None:
            return None
        bounds: list[int | None] = []
        for bound in (key.lower, key.upper):
            if bound is None:
                bounds.append(None)
                continue
            try:
                value = ast.literal_eval(bound)
            except ValueError:
                return None
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            bounds.append(value)
        lower, upper = bounds
        if lower is None and upper is None:
            return base
        if lower is None:
            assert upper is not None
            if upper >= 0:
                return f"the first {upper} entries of {base}"
            return f"{base} without its last {-upper} entries"
        if upper is None:
            if lower >= 0:
                return f"{base} without its first {lower} entries"
            return f"the last {-lower} entries of {base}"
        if 0 <= lower < upper:
            return f"entries {lower} to {upper - 1} (counting from 0) of {base}"
        return None

    def _attribute(self, node: ast.Attribute) -> str | None:
        accessor = node.value
        if isinstance(accessor, ast.Attribute) and accessor.attr == "dt":
            # `t['date'].dt.month`: the part of each date (`.dt.day_name()` is a call)
            values = self.phrase(accessor.value) if node.attr in DATE_PARTS else None
            return f"the {DATE_PARTS[node.attr]} of each date in {values}" if values else None
        base = self.subject(node.value)
        if base is None:
            return None
        if node.attr == "shape":
            return f"the shape (rows, columns) of {base}"
        if node.attr == "columns":
            return f"the column names of {base}"
        if node.attr == "dtypes":
            return f"the data type of each column of {base}"
        if node.attr == "size":
            return f"the number of values in {base}"
        if node.attr in ("values", "T"):
            return base
        if node.attr in FRAME_ATTRS:
            return None
        return f"the `{node.attr}` column of {base}"

    def _subscript(self, node: ast.Subscript) -> str | None:
        value, key = node.value, node.slice
        kept = kept_entries(key)
        if kept is not None:  # `t.isna().sum().loc[lambda counts: counts > 0]`
            located = isinstance(value, ast.Attribute) and value.attr == "loc"
            series = value.value if located else value
            base = self.phrase(series) if _aggregate(series) else None
            return f"{base}, keeping only the entries whose value {kept}" if base else None
        if isinstance(key, ast.Constant | ast.Tuple) and is_keyed(value):
            return keyed_phrase(self, value, key)  # one key of value_counts() or a groupby
        if (
            isinstance(value, ast.Attribute)
            and value.attr == "shape"
            and isinstance(key, ast.Constant)
        ):
            base = self.subject(value.value)
            noun = {0: "the number of rows", 1: "the number of columns"}.get(key.value)
            return f"{noun} of {base}" if noun and base else None
        if isinstance(value, ast.Attribute) and value.attr == "loc" and isinstance(key, ast.Tuple):
            step = named_columns_step(value.value, key)
            if step is not None:  # `t.loc[:, ~t.columns.str.contains('Unnamed')]`
                base = self.subject(value.value)
                return cleaning.cleaned(self, base, step) if base else None
            base, rows = self.subject(value.value), self.condition(key.elts[0])
            columns = const_text(key.elts[1]) if len(key.elts) == 2 else None
            if base and rows and columns:
                return f"the {columns} values of the rows of {base} where {rows}"
            return None
        single = int_literal(key)
        if (
            isinstance(value, ast.Attribute)
            and value.attr in ("iloc", "loc")
            and single is not None
        ):
            base = self.subject(value.value)
            if base is None:
                return None
            if value.attr == "loc":
                return f"the row labelled {single} of {base}"
            if single >= 0:
                return f"row {single} (counting from 0) of {base}"
            return f"row {-single} counting back from the end (1 = the last row) of {base}"
        if isinstance(value, ast.Attribute) and value.attr == "iloc":
            base = self.subject(value.value)
            return self._rows(base, key) if base else None
        if isinstance(key, ast.Slice):
            base = self.subject(value)
            return self._rows(base, key) if base else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if DATE_KEY.match(key.value):
                dated = self._dated_rows(value)
                if dated is not False:  # rows by date, or labels of unknown kind
                    base = self.subject(value) if dated else None
                    return f"the rows dated within {key.value} of {base}" if base else None
            table = self.assignments.get(value.id) if isinstance(value, ast.Name) else None
            if isinstance(table, ast.Subscript) and isinstance(table.slice, ast.List):
                assert isinstance(value, ast.Name)
                self.used.add(value.id)
                value = table.value  # a column of a column selection is a column of the table
            base = self.subject(value)
            return f"the `{key.value}` column of {base}" if base else None
        base = self.subject(value)
        if base is None:
            return None
        if isinstance(key, ast.List) and const_text(key):
            return f"the columns {const_text(key)} of {base}"
        rows = self.condition(key)
        return f"{base}, keeping only the rows where {rows}" if rows else None

    def _dated_rows(self, node: ast.AST) -> bool | None:
        """Whether the table's row labels are dates: True when it was read with
        `index_col` and `parse_dates` (as `t[key]` then selects rows), False when they
        are the reader's own (a date-like key is then a column, `'2017'` of a table of
        years), None when a step on the way may have changed them (`set_index`,
        `groupby`, `.T`: not known here). Only steps that keep the row labels are
        followed: filters, column selections and `LABEL_KEEPING` calls."""
        for _ in range(32):
            if isinstance(node, ast.Name):
                source = self.assignments.get(node.id)
                if source is None:
                    return None
                node = source
            elif isinstance(node, ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Attribute) and node.attr not in FRAME_ATTRS:
                node = node.value  # a column: `t.Close`
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name.startswith("read_"):
                    options = {k.arg: k.value for k in node.keywords}
                    parsed = options.get("parse_dates")
                    return "index_col" in options and not (
                        parsed is None
                        or (isinstance(parsed, ast.Constant) and parsed.value in (None, False))
                    )
                if name not in LABEL_KEEPING or not isinstance(func, ast.Attribute):
                    return None
                node = func.value
            else:
                return None
        return None


MASKS = (ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Call)
"""The assigned values a named row mask can be (`condition` judges the mask itself)."""
SCALARS = {"mean", "median", "min", "max", "std", "quantile", "sum", "count", "nunique"}
"""Calls on a column whose result is one number, a threshold a condition can name."""


NUMBER_WORDS = {ast.Add: "plus", ast.Sub: "minus", ast.Mult: "times"}
"""Arithmetic of single numbers stated in words (`_arithmetic`); `/` has its own phrase."""


def _followed(node: ast.AST, describer: Describer) -> ast.AST:
    """A name followed to the value the slice assigned it (a few steps at most)."""
    for _ in range(8):
        if isinstance(node, ast.Name) and node.id in describer.assignments:
            node = describer.assignments[node.id]
        else:
            break
    return node


def _is_number_phrase(node: ast.AST, describer: Describer, depth: int = 0) -> bool:
    """A threshold is one number: a column's `mean()`, `quantile(q)`, ... (a name is
    followed to its value), or a sum, difference, multiple or ratio of such numbers and
    literals (`mean + 3 * std`, `Q1 - 1.5 * IQR`); never a column, which would compare
    row by row."""
    node = _followed(node, describer)
    if isinstance(node, ast.BinOp) and type(node.op) in (*NUMBER_WORDS, ast.Div) and depth < 6:
        sides = [_followed(n, describer) for n in (node.left, node.right)]
        literal = [isinstance(n, ast.Constant) and type(n.value) in (int, float) for n in sides]
        numbers = [_is_number_phrase(n, describer, depth + 1) for n in sides]
        return all(a or b for a, b in zip(literal, numbers, strict=True)) and any(numbers)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SCALARS
        and all(isinstance(a, ast.Constant) for a in node.args)
        and not node.keywords
    )


def repeated_row(node: ast.Call) -> str | None:
    """`t.duplicated()`, `t.duplicated('c')`, `t.duplicated(['a', 'b'])` (pandas keeps
    the first of equal rows unmarked by default); another `keep` is not stated."""
    if node.keywords or len(node.args) > 1:
        return None
    if not node.args:
        return "the row repeats an earlier row exactly"
    columns = const_text(node.args[0])
    return f"its {columns} value(s) repeat an earlier row's" if columns else None


def _aggregate(node: ast.AST) -> bool:
    """A per-column or per-key aggregate (`t.isna().sum()`, `c.value_counts()`): what a
    `lambda` filter keeps entries of."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (node.func.attr in AGGREGATES or node.func.attr == "size")
    )


def kept_entries(key: ast.AST) -> str | None:
    """`lambda s: s > 0` as a Series filter's condition: 'is > 0', 'equals 3'."""
    parameter = lambda_parameter(key)
    body = key.body if isinstance(key, ast.Lambda) else None
    if parameter is None or not (isinstance(body, ast.Compare) and len(body.ops) == 1):
        return None
    left, limit = body.left, const_text(body.comparators[0])
    op = COMPARE.get(type(body.ops[0]))
    if not (isinstance(left, ast.Name) and left.id == parameter) or not limit:
        return None
    if not isinstance(getattr(body.comparators[0], "value", None), int | float):
        return None
    return f"equals {limit}" if op == "equals" else (f"is {op} {limit}" if op else None)


def keys_are_answer(node: ast.AST) -> bool:
    """True when a Series' labels are part of the answer (a ranking, a filter, counts),
    so the question must not list them."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in SELECTIONS
    return isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant)


def named_columns_step(table: ast.AST, key: ast.Tuple) -> str | None:
    """`t.loc[:, ~t.columns.str.contains('Unnamed')]` (Kaggle's way to drop the index
    columns a CSV was saved with) as the step it is; None for any other `.loc` key. Only
    a plain text (no regular-expression character) on the table's own column names."""
    if len(key.elts) != 2 or not isinstance(key.elts[0], ast.Slice):
        return None
    rows, test = key.elts
    if rows.lower is not None or rows.upper is not None or rows.step is not None:  # type: ignore[attr-defined]
        return None
    dropped = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Invert)
    call = test.operand if dropped else test  # type: ignore[attr-defined]
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "contains"
        and len(call.args) == 1
        and not call.keywords
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
        and not cleaning.REGEX_SPECIAL.search(call.args[0].value)
    ):
        return None
    names = call.func.value
    if not (
        isinstance(names, ast.Attribute)
        and names.attr == "str"
        and isinstance(names.value, ast.Attribute)
        and names.value.attr == "columns"
        and ast.dump(names.value.value) == ast.dump(table)
    ):
        return None
    verb = "dropping" if dropped else "keeping only"
    return f"{verb} the columns whose names contain {call.args[0].value!r}"
