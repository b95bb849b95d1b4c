"""A whole table's `describe()` or `corr()` becomes a few questions about named cells.

EDA notebooks open with `df.describe()` and `df.corr()`. Asked whole, such a table is
eight statistics of every numeric column (the question would have to list them, and it
is often over the table cap) or a square of coefficients nobody transcribes. But each
cell is a quantity the notebook computed and the question can name exactly: "the mean of
the `Age` column of ...", "the correlation between the `Age` column and the `Fare`
column of ...". So the answer cell's last expression is rewritten, once per chosen
cell, to the scalar expression that computes that cell (`df['Age'].mean()`,
`df['Age'].corr(df['Fare'])`): the describer states it, the reference computes exactly
it (the same chain of cells, only the last expression differs), and the answer is the
value the notebook's display shows in that cell (graded with the task's tolerance).
A column selection around the table (`df[['a', 'b']].corr()`) is dropped: the
statistic of a column, or the pairwise correlation of two, is the same without it.

Which cells (issue 32 point 1: "a defined slice or an aggregate the notebook itself
computed", never an arbitrary first N):

- `describe()` (also `.T`/`.transpose()` of it): the numeric columns in the table's
  order, an identifier-like column (`id`, `PassengerId`, `Unnamed: 0`, `userid`, a
  `Country Code`), a part of a date kept as a number (`month`, `day`) and a row
  numbering (`Rank` 1..1000: count = max - min + 1, mean the midpoint) left out, each
  asked one statistic in turn: the mean, the median (`50%`), the standard deviation.
  `count`, `min` and `max` are not asked (a row count, or a value read off one row),
  nor a mean or median the grader's relative tolerance cannot tell from a guess (a
  tolerance band of a tenth of the column's standard deviation or more: years), nor
  a median equal to a quartile (a column of a few codes, `Pclass`: the next column
  takes the median).
- `corr()`: the pairs of distinct columns with the largest absolute coefficient, the
  strongest first (table order among equals); a column whose coefficient with an
  earlier one is 1 (a copy or a rescaling of it), an identifier and a missing
  coefficient left out.

At most `DERIVED_CAP` questions per table, so one wide table does not flood a notebook
(the per-dataset cap still applies after). Each keeps every gate of a plain cell: the
constant-answer, look-up and leak gates run on the rewritten cell as on any other.
"""

from __future__ import annotations

import ast
import re

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.derived_keys import IDENTIFIER as _IDENTIFIER
from smoldataenvs.derived_keys import keyed, long_display
from smoldataenvs.grader import DEFAULT_RTOL, AnswerError
from smoldataenvs.missing_counts import missing_parts
from smoldataenvs.saved_output import parse_table

DERIVED_CAP = 3
"""Questions asked of one table at most."""
NUMERIC_DESCRIBE = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
STATISTICS = [("mean", "mean"), ("50%", "median"), ("std", "std")]
"""describe()'s row and the Series method that computes it, asked in this rotation."""
_FOOTER = re.compile(r"<p>\s*\d+ rows [×x] \d+ columns\s*</p>")
CALENDAR = re.compile(r"(?i)^(?:year|month|day|week|weekday|day_?of_?week|hour|minute|quarter)$")
"""A part of a date kept as a number (`month` 1..12, `day` 1..31): its mean or median is
the calendar's middle, not a fact about the data (a weather file's mean `month`,
6.48, came out of a real notebook)."""
CATEGORY = re.compile(
    r"(?i)(?:^|[_\s])(?:continent|region|country|category|class|type|zone|gender|sex|race"
    r"|segment|group|cluster|label)$|^pclass$"
)
"""A category kept as a number (the WHO table's `Continent` 1..7, Titanic's `Pclass`):
its mean is of codes, not of a quantity (a real notebook's `describe()` gave "the mean
of the `Continent` column"). describe() does not ask about it."""


def _call(node: ast.expr, *names: str) -> ast.Call | None:
    """`node` when it is a call of one of the methods `names` without arguments (but
    `corr(numeric_only=True)`: pandas 2 asks for it where 1.x dropped text columns by
    itself; the correlation of two numeric columns is the same)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
        and not node.args
        and all(_numeric_only(k) and node.func.attr == "corr" for k in node.keywords)
    ):
        return node
    return None


def _numeric_only(keyword: ast.keyword) -> bool:
    return (
        keyword.arg == "numeric_only"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
    )


def corr_table(expression: ast.expr) -> bool:
    """Whether `expression` is a `corr()` table whose pairs `derived` can ask."""
    found = _source(expression)
    return found is not None and found[0] == "corr"


def _source(expression: ast.expr) -> tuple[str, ast.expr, bool] | None:
    """('describe' or 'corr', the table it is computed on, whether it is transposed)."""
    transposed = False
    if isinstance(expression, ast.Attribute) and expression.attr == "T":
        expression, transposed = expression.value, True
    elif _call(expression, "transpose"):
        expression, transposed = expression.func.value, True  # type: ignore[union-attr]
    call = _call(expression, "describe", "corr")
    if call is None:
        return None
    assert isinstance(call.func, ast.Attribute)
    return call.func.attr, call.func.value, transposed


def _cells(markup: str, transposed: bool) -> dict[tuple[str, str], object] | None:
    """{(row label, column): value} of a one-level table shown whole, rows and columns
    swapped back when the notebook transposed it; None for any other display."""
    try:
        table = parse_table(_FOOTER.sub("", markup), capped=False)
    except AnswerError:
        return None
    if table.get("keys") != 1:
        return None
    columns = table["columns"][1:]
    cells = {}
    for row in table["value"]:
        for column, value in zip(columns, row[1:], strict=True):
            key = (str(column), str(row[0])) if transposed else (str(row[0]), str(column))
            cells[key] = value
    return cells


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def describe_questions(cells: dict, frame: ast.expr) -> list[tuple[ast.expr, object]]:
    """(expression, shown value) for describe()'s chosen cells."""
    rows = list(dict.fromkeys(r for r, _ in cells))
    if rows != NUMERIC_DESCRIBE:
        return []
    columns = [
        c
        for c in dict.fromkeys(c for _, c in cells)
        if not _IDENTIFIER.search(c)
        and not CALENDAR.match(c)
        and not CATEGORY.search(c)
        and not _numbering(cells, c)
    ]
    chosen = []
    for column in columns:
        statistic, method = STATISTICS[len(chosen) % len(STATISTICS)]
        value = cells.get((statistic, column))
        if (
            _number(value)
            and cells.get(("count", column))
            and not _loose(cells, column, value)
            and not (statistic == "50%" and _few_values(cells, column))
        ):
            chosen.append((_method(_column(frame, column), method), value))
        if len(chosen) == DERIVED_CAP:
            break
    return chosen


def corr_questions(cells: dict, frame: ast.expr) -> list[tuple[ast.expr, object]]:
    """(expression, shown value) for the strongest correlations of distinct columns."""
    rows = list(dict.fromkeys(r for r, _ in cells))
    columns = list(dict.fromkeys(c for _, c in cells))
    if rows != columns or len(columns) < 2:
        return []
    # A column that is a copy or a rescaling of an earlier one would ask the same
    # question twice (`fare` and `fare_twice` correlate alike with everything).
    copies = {
        b
        for i, a in enumerate(columns)
        for b in columns[i + 1 :]
        if _number(cells.get((a, b))) and abs(cells[(a, b)]) >= 0.9999
    }
    kept = [c for c in columns if c not in copies and not _IDENTIFIER.search(c)]
    pairs = [(a, b, cells.get((a, b))) for i, a in enumerate(kept) for b in kept[i + 1 :]]
    pairs = [(a, b, v) for a, b, v in pairs if _number(v)]
    pairs.sort(key=lambda p: -abs(p[2]))  # stable: table order among equals
    return [
        (_method(_column(frame, a), "corr", _column(frame, b)), value)
        for a, b, value in pairs[:DERIVED_CAP]
    ]


def _whole(frame: ast.expr) -> ast.expr:
    """`df[['a', 'b']]` -> `df`: a statistic of one column, or the correlation of two
    (pairwise, as `corr()` computes it), does not depend on the other columns selected,
    and the question then names the column once, not inside a list of columns."""
    if (
        isinstance(frame, ast.Subscript)
        and isinstance(frame.slice, ast.List)
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in frame.slice.elts)
    ):
        return frame.value
    return frame


def _numbering(cells: dict, column: str) -> bool:
    """A column that counts the rows (`Rank` 1..1000, a serial number): its count is
    `max - min + 1` and its mean the midpoint, so its statistics are arithmetic on the
    row count, not on the data."""
    count, low, high, mean = (cells.get((s, column)) for s in ("count", "min", "max", "mean"))
    if not all(_number(v) for v in (count, low, high, mean)):
        return False
    return high - low + 1 == count and abs(mean - (low + high) / 2) <= 1e-6 * max(1, abs(mean))


def _loose(cells: dict, column: str, value: float) -> bool:
    """A mean or median so large beside the column's spread that the relative tolerance
    takes in a tenth of a standard deviation or more: the mean of `year` (2016.9, spread
    2) is passed by any year near it. Such a column is not asked."""
    spread = cells.get(("std", column))
    return not _number(spread) or abs(value) * DEFAULT_RTOL >= spread / 10  # type: ignore[operator]


def _few_values(cells: dict, column: str) -> bool:
    """A median equal to the 25% or 75% quartile: a column of a few distinct values
    (Titanic's `Pclass` 1/2/3, median 3), whose median a guess among them often hits."""
    median = cells.get(("50%", column))
    return median in (cells.get(("25%", column)), cells.get(("75%", column)))


def _column(frame: ast.expr, name: str) -> ast.expr:
    return ast.Subscript(value=frame, slice=ast.Constant(name), ctx=ast.Load())


def _method(target: ast.expr, method: str, *args: ast.expr) -> ast.expr:
    func = ast.Attribute(value=target, attr=method, ctx=ast.Load())
    return ast.Call(func=func, args=list(args), keywords=[])


def derived(
    own: ParsedCell, text: str, capture: str, reason: str = ""
) -> list[tuple[ParsedCell, dict]]:
    """The answer cell rewritten once per chosen cell of its `describe()`/`corr()`
    table, or per chosen key of its `value_counts()`/grouped Series (`derived_keys`:
    only one too long to ask whole, or whose top rows tie at the cut), with that
    cell's shown value as a number answer; an `info()` report or a long missing-value
    count asked as the columns that miss values (`missing_counts`); [] for any other
    cell."""
    missing = missing_parts(own, text, capture)
    if missing:
        return missing
    if capture == "result":
        whole = not long_display(text) and reason != "answer.tied-cut"
        return [] if whole else keyed(own, text, capture)
    if own.tree is None or not own.tree.body or capture != "table":
        return []
    last = own.tree.body[-1]
    found = _source(last.value) if isinstance(last, ast.Expr) else None
    if found is None:
        return []
    method, frame, transposed = found
    cells = _cells(text, transposed)
    if not cells:
        return []
    pick = describe_questions if method == "describe" else corr_questions
    return _rewritten(own, pick(cells, _whole(frame)))


def correlation_parts(own: ParsedCell, cells: dict) -> list[tuple[ParsedCell, dict]]:
    """A heat map's `corr()` table, computed in the container (`{(row, column):
    coefficient}`), asked as a printed one is: its strongest pairs."""
    last = own.tree.body[-1] if own.tree is not None and own.tree.body else None
    found = _source(last.value) if isinstance(last, ast.Expr) else None
    if found is None or found[0] != "corr":
        return []
    return _rewritten(own, corr_questions(cells, _whole(found[1])))


def _rewritten(own: ParsedCell, chosen: list[tuple[ast.expr, object]]) -> list:
    """The cell once per chosen (expression, value): its statements before the table,
    then the expression, with the value as a number answer."""
    last = own.tree.body[-1]  # type: ignore[union-attr]
    lines = own.sanitized.splitlines()[: last.lineno - 1]
    out = []
    for expression, value in chosen:
        reduced = parse_cell(own.index, "\n".join([*lines, ast.unparse(expression)]))
        if reduced.tree is not None:
            out.append((reduced, {"kind": "number", "value": value}))
    return out
