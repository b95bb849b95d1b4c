"""A sorted table too large to show, or shown cut, becomes a question about its top rows.

`df.sort_values('score', ascending=False)` over 500 rows cannot be an answer (nobody
checks, nor transcribes, hundreds of cells), but its first rows are a defined slice:
the rows with the largest scores. The display still shows them whole (pandas cuts the
middle, `...`). So the answer cell's last expression is rewritten to
`(<expression>).head(TOP_ROWS)`: the question states that slice (the describer
phrases `head` of a sorted table), the reference computes exactly it, and the answer
is the display's first rows. Only expressions whose outermost step orders the rows
qualify; the first rows of an unsorted frame stay refused (issue 32).
"""

from __future__ import annotations

import ast

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.grader import AnswerError
from smoldataenvs.saved_output import parse_table

TOP_ROWS = 5
"""pandas shows five leading rows of a cut display by default (`display.min_rows` 10)."""
MIN_TOP_ROWS = 3
"""A notebook that lowered `display.max_rows` shows fewer: the top 3 or 4 then."""
ORDERING = {"sort_values", "sort_index", "nlargest", "nsmallest"}
REDUCIBLE = {"answer.table-too-large", "answer.table-truncated"}


def ordered(expression: ast.expr) -> bool:
    """The expression's last step sorts the rows: `t.sort_values('c', ascending=False)`."""
    return (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Attribute)
        and expression.func.attr in ORDERING
    )


def top_rows(own: ParsedCell, markup: str, error: AnswerError) -> tuple[ParsedCell, dict]:
    """The answer cell rewritten to keep its top rows, and those rows as the answer;
    re-raises `error` when the table is not reducible that way."""
    assert own.tree is not None
    last = own.tree.body[-1] if own.tree.body else None
    if error.reason not in REDUCIBLE or not isinstance(last, ast.Expr) or not ordered(last.value):
        raise error
    count, answer = _leading(markup)
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
