"""A sorted table too large to show, or shown cut, becomes a question about its top rows.

`df.sort_values('score', ascending=False)` over 500 rows cannot be an answer (nobody
checks, nor transcribes, hundreds of cells), but its first rows are a defined slice:
the rows with the largest scores. The display still shows them whole (pandas cuts the
middle, `...`). So the answer cell's last expression is rewritten to
`(<expression>).head(TOP_ROWS)`: the question states that slice (the describer
phrases `head` of a sorted table), the reference computes exactly it, and the answer
is the display's first rows. A Series printed as text (a long `value_counts()`, a
sorted column) is cut the same way, before its `...` line. A grouped aggregate
(`t.groupby("k")["c"].mean()`) is ordered too: by key, as the question states. Only
expressions whose outermost step orders the rows qualify; the first rows of an
unsorted frame stay refused (issue 32).
"""

from __future__ import annotations

import ast
import re

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.grader import AnswerError
from smoldataenvs.saved_output import parse_output, parse_table

TOP_ROWS = 5
"""pandas shows five leading rows of a cut display by default (`display.min_rows` 10)."""
MIN_TOP_ROWS = 3
"""A notebook that lowered `display.max_rows` shows fewer: the top 3 or 4 then."""
ORDERING = {"sort_values", "sort_index", "nlargest", "nsmallest", "value_counts"}
REDUCIBLE = {"answer.table-too-large", "answer.table-truncated", "answer.too-many-items"}
GROUP_AGGREGATES = {
    "sum", "mean", "median", "std", "var", "min", "max", "count", "nunique", "size", "agg",
    "aggregate", "first", "last", "prod", "sem",
}  # fmt: skip
"""A grouped aggregate has one row per group, in ascending order of the key."""


def ordered(expression: ast.expr) -> bool:
    """The expression's last step sorts the rows: `t.sort_values('c', ascending=False)`,
    or it is a grouped aggregate (groups in ascending order of the key)."""
    return (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Attribute)
        and expression.func.attr in ORDERING
    ) or grouped_aggregate(expression)


def grouped_aggregate(node: ast.expr) -> bool:
    """`t.groupby('k')['c'].mean()` (also `.agg([...])`, then `.round(n)`): a result with
    one row per group, groups in ascending order of the key (groupby's default, which the
    question states), so its first rows are defined. `sort=False`, a per-row result
    (`groupby(...).head(3)`, `filter`, `apply`) or no grouping at all do not qualify."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("round", "astype")
    ):
        node = node.func.value
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr not in GROUP_AGGREGATES:
        return False
    groupings = [
        n
        for n in ast.walk(node.func.value)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "groupby"
    ]
    return bool(groupings) and all(
        not (k.arg == "sort" and isinstance(k.value, ast.Constant) and k.value.value is False)
        for g in groupings
        for k in g.keywords
    )


def top_rows(
    own: ParsedCell, text: str, capture: str, error: AnswerError
) -> tuple[ParsedCell, dict]:
    """The answer cell rewritten to keep its top rows, and those rows as the answer;
    re-raises `error` when the table is not reducible that way. `capture`: 'table' (a
    DataFrame's HTML) or 'result' (a Series' text repr)."""
    assert own.tree is not None
    last = own.tree.body[-1] if own.tree.body else None
    if error.reason not in REDUCIBLE or not isinstance(last, ast.Expr) or not ordered(last.value):
        raise error
    if capture == "table":
        count, answer = _leading(text)
    elif capture == "result":
        count, answer = _series_leading(text, error)
    else:
        raise error
    lines = own.sanitized.splitlines()
    expression = ast.get_source_segment(own.sanitized, last.value) or ast.unparse(last.value)
    source = "\n".join([*lines[: last.lineno - 1], f"({expression}).head({count})"])
    reduced = parse_cell(own.index, source)
    if reduced.tree is None:  # the cut-out text did not parse alone: keep the refusal
        raise error
    return reduced, answer


def _leading(markup: str) -> tuple[int, dict]:
    """The most leading rows (TOP_ROWS down to MIN_TOP_ROWS) the display shows whole."""
    for count in range(TOP_ROWS, MIN_TOP_ROWS, -1):
        try:
            return count, parse_table(markup, first=count)
        except AnswerError as error:
            if error.reason != "answer.table-truncated":
                raise
    return MIN_TOP_ROWS, parse_table(markup, first=MIN_TOP_ROWS)


def _series_leading(text: str, error: AnswerError) -> tuple[int, dict]:
    """A Series' text repr cut to its leading entries (before pandas' `...` line), with
    the footer's `Length: N` dropped; a MultiIndex Series (indented labels) or a repr
    without a footer re-raises `error`."""
    lines = [line.rstrip() for line in text.rstrip().splitlines() if line.strip()]
    if len(lines) < 2 or not re.match(r"^(?:Name|dtype): ", lines[-1]):
        raise error
    footer, body = re.sub(r"Length: \d+, ", "", lines[-1]), lines[:-1]
    header = body[:1] if len(body) > 1 and len(body[0].split()) == 1 else []
    entries = body[len(header) :]
    # pandas marks the cut with a line of dots (`..` under the values, `...` labels).
    cut = (i for i, line in enumerate(entries) if re.fullmatch(r"[.\s]+", line))
    shown = next(cut, len(entries))
    count = min(TOP_ROWS, shown)
    if count < MIN_TOP_ROWS or any(line.startswith(" ") for line in entries[:count]):
        raise error
    return count, parse_output("\n".join([*header, *entries[:count], footer]), "result")


CUTS = {"head": "end", "nlargest": "end", "nsmallest": "end", "tail": "start"}
VALUE_ORDER = {"value_counts", "sort_values", "nlargest", "nsmallest"}


def tied_cut(expression: ast.expr, answer: dict) -> str | None:
    """The shown rows of a sorted cut (`t.sort_values('year').head()`, `nlargest`,
    `value_counts().head()`) whose sort values tie at the cut: which of the tied rows
    made it in is the sort algorithm's choice (pandas' default quicksort is not stable),
    not the question's. Only ties visible among the shown rows are caught (a tie
    between the last shown row and the first left out is not in the answer)."""
    if not (isinstance(expression, ast.Call) and isinstance(expression.func, ast.Attribute)):
        return None
    side = CUTS.get(expression.func.attr)
    if side is None:
        return None
    rows = answer.get("value") or []
    if len(rows) < 2:
        return None
    if answer["kind"] == "mapping":
        # Only a Series ordered by its values (not a grouped one, ordered by key).
        if not any(
            isinstance(n, ast.Call) and getattr(n.func, "attr", "") in VALUE_ORDER
            for n in ast.walk(expression)
        ):
            return None
        values = [value for _, value in rows]
    elif answer["kind"] == "table":
        keys = [k for k in _sort_keys(expression) if k in answer["columns"]]
        if not keys:
            return None
        values = [row[answer["columns"].index(keys[-1])] for row in rows]
    else:
        return None
    # A tail's rows have a cut before them, and after them when it is a tail of a head.
    pairs = [values[-2:]] if side == "end" else [values[:2], values[-2:]]
    tied = next((pair for pair in pairs if pair[0] == pair[1]), None)
    return f"the sort value {tied[0]!r} ties at the cut" if tied else None


def _sort_keys(expression: ast.expr) -> list[str]:
    """The column names the expression sorts by, innermost first."""
    keys = []
    for node in ast.walk(expression):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        by = None
        if node.func.attr == "sort_values":
            by = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg == "by"), None)
            )
        elif node.func.attr in ("nlargest", "nsmallest") and len(node.args) > 1:
            by = node.args[1]
        if isinstance(by, ast.Constant) and isinstance(by.value, str):
            keys.append(by.value)
    return keys[::-1]
