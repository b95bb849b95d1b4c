"""A table too large to show, or shown cut, becomes a question about how many rows it has.

`army[army['deaths'] > 50]` over 30 rows cannot be an answer (nobody checks, nor
transcribes, hundreds of cells), and its first rows are no defined slice unless it is
sorted (`top_rows` takes those). But the display states the table's length: pandas
prints `N rows × M columns` under a cut frame, `Length: N` in a cut Series' footer,
and a table over the size cap shows all its rows. How many rows a filter, a join or a
grouping leaves is a count the notebook computed (issue 32: "counts after filters"),
so the answer cell's last expression is rewritten to `len(<expression>)`: the
describer states "the number of rows (items) in ...", the reference computes exactly
that, and the answer is the displayed count. Only a DataFrame qualifies (a long
Series is mostly one entry per column, `movie.count()`: its length is the column
count), and not a row cut (`t.head()`, `t[:5]`, `nlargest(5, ...)`: the count is the
literal). The caller refuses a chain with no filter, join or grouping
(`question.count-without-filter`: `len(df)`, `len(df.describe().T)`) and a count equal
to a data file's own row count (`question.count-of-whole-file`: a filter that kept
every row).

A frame shown only by its first rows (`merged = pd.merge(a, b, on='k'); merged.head()`)
states no count, and its first rows are no question (issue 32). How many rows the
merge, filter or grouping left still is one: `cut_frame_count` rewrites the cell to
`len(<the cut frame>)`, and the answer is computed in the task's container, as a
plot's is (`computed`), then passes the same two gates.
"""

from __future__ import annotations

import ast
import re

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.grader import AnswerError

REDUCIBLE = {"answer.table-too-large", "answer.table-truncated", "answer.too-many-items"}
_FRAME_FOOTER = re.compile(r"<p>\s*(\d+) rows [×x] (\d+) columns\s*</p>")
_BODY = re.compile(r"<tbody>(.*?)</tbody>", re.S)
ROW_CUTS = {"head", "tail", "nlargest", "nsmallest", "sample", "take"}
COUNTED_BY = ("filter", "join", "grouping")
"""The operations that make a row count a computed answer (dataflow's kinds)."""
CUT_FRAME_REFUSALS = {
    "answer.table-unsorted-head", "answer.table-truncated", "answer.table-too-large",
    "answer.table-multicolumns", "answer.table-duplicate-columns",
}  # fmt: skip
"""A cell's refusals of a shown frame whose row count `cut_frame_count` asks instead."""
FRAME_CUTS = {"head", "tail"}


def row_cut(expression: ast.expr) -> bool:
    """`t.head()`, `t.tail(3)`, `t[:5]`, `t.iloc[2:9]`, `t.nlargest(5, 'c')`: the row
    count is in the code. So it is for `t[f].describe()` (its 8 statistics, whatever `f`
    kept) and a transpose `t.T` (the columns)."""
    if isinstance(expression, ast.Attribute) and expression.attr == "T":
        return True
    if isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute):
        return expression.func.attr in ROW_CUTS | {"describe", "transpose"}
    return isinstance(expression, ast.Subscript) and isinstance(expression.slice, ast.Slice)


def displayed_rows(text: str, capture: str) -> int | None:
    """How many rows the displayed table has, or None when the display does not say."""
    if capture == "table":
        footer = _FRAME_FOOTER.search(text)
        if footer:
            return int(footer.group(1))
        body = _BODY.search(text)
        if body is None or "<td>...</td>" in body.group(1):
            return None
        return body.group(1).count("<tr")
    return None


def row_count(
    own: ParsedCell, text: str, capture: str, error: AnswerError
) -> tuple[ParsedCell, dict]:
    """The answer cell rewritten to `len(<its last expression>)` and the displayed row
    count as the answer; re-raises `error` when the display does not state the count."""
    assert own.tree is not None
    last = own.tree.body[-1] if own.tree.body else None
    if error.reason not in REDUCIBLE or not isinstance(last, ast.Expr) or row_cut(last.value):
        raise error
    count = displayed_rows(text, capture)
    if count is None or count < 2:
        raise error
    reduced = _length_cell(own, last, last.value)
    if reduced is None:
        raise error
    return reduced, {"kind": "number", "value": count}


def cut_frame_count(own: ParsedCell) -> ParsedCell | None:
    """The cell rewritten to `len(<frame>)` of the frame its last expression shows
    (`t.head()`, `t.tail(3)`, `t[:5]`, `t.iloc[:5]`: the frame `t`; a whole frame
    itself), or None when the expression is another cut (`nlargest`, `sample`,
    `describe()`, `.T`: their length is in the code) or not an expression."""
    if own.tree is None or not own.tree.body or not isinstance(own.tree.body[-1], ast.Expr):
        return None
    last = own.tree.body[-1]
    frame = cut_of(last.value) or last.value
    if row_cut(frame) or isinstance(frame, ast.Constant):
        return None
    return _length_cell(own, last, frame)


def cut_of(expression: ast.expr) -> ast.expr | None:
    """What `x.head(n)`, `x.tail(n)`, `x[:n]`, `x.iloc[:n]` or `x.loc[a:b]` cuts, or
    None."""
    if isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute):
        return expression.func.value if expression.func.attr in FRAME_CUTS else None
    if isinstance(expression, ast.Subscript) and isinstance(expression.slice, ast.Slice):
        cut = expression.value
        if isinstance(cut, ast.Attribute) and cut.attr in ("iloc", "loc"):
            cut = cut.value
        return cut
    return None


def _length_cell(own: ParsedCell, last: ast.Expr, counted: ast.expr) -> ParsedCell | None:
    """`own` with its last expression replaced by `len(<counted>)`, in the notebook's
    own spelling of `counted`."""
    lines = own.sanitized.splitlines()
    expression = ast.get_source_segment(own.sanitized, counted) or ast.unparse(counted)
    reduced = parse_cell(own.index, "\n".join([*lines[: last.lineno - 1], f"len({expression})"]))
    return reduced if reduced.tree is not None else None
