"""Reading a cell's saved output as an answer: which output can be one, and how a
table too large to show is reduced (its top rows when sorted, else its row count)."""

from __future__ import annotations

import ast

from smoldataenvs.cellcode import ParsedCell, parse_cell
from smoldataenvs.grader import AnswerError
from smoldataenvs.notebook import Cell
from smoldataenvs.row_count import row_count
from smoldataenvs.saved_output import parse_output
from smoldataenvs.top_rows import top_rows

MAX_OUTPUT_CHARS = 4000
MAX_TABLE_HTML_CHARS = 60_000


def answer_output(cell: Cell) -> tuple[str, str]:
    """(capture, text) of the one output that can be an answer, or AnswerError."""
    outputs = cell.outputs
    if any(o.kind == "error" for o in outputs):
        raise AnswerError("output.error", next(o.text for o in outputs if o.kind == "error")[:80])
    if any(o.is_image for o in outputs):
        raise AnswerError("output.plot", "an image output")
    tables = [o for o in outputs if o.kind == "execute_result" and "dataframe" in o.html]
    # A warning printed on stderr (pandas' SettingWithCopyWarning, a FutureWarning)
    # beside the table changes nothing it shows.
    shown = [o for o in outputs if not (o.kind == "stream" and o.name == "stderr")]
    if tables and len(shown) == 1:
        if len(tables[0].html) > MAX_TABLE_HTML_CHARS:
            raise AnswerError("answer.table-too-large", f"{len(tables[0].html)} characters of HTML")
        return "table", tables[0].html
    if any("text/html" in o.mimes for o in outputs):
        raise AnswerError("output.table", "an HTML output beside others, or not a DataFrame")
    if any(o.kind == "display_data" for o in outputs):
        raise AnswerError("output.display", "a display() output")
    results = [o for o in outputs if o.kind == "execute_result"]
    printed = [o for o in outputs if o.kind == "stream" and o.name != "stderr"]
    if len(results) > 1 or (results and printed):
        raise AnswerError("output.mixed", "printed text and a result")
    if results:
        capture, text = "result", results[0].text
    elif printed:
        capture, text = "stream", "".join(o.text for o in printed)
    else:
        raise AnswerError("output.stderr-only", "only warnings or errors were printed")
    if len(text) > MAX_OUTPUT_CHARS:
        raise AnswerError("output.too-long", f"{len(text)} characters")
    return capture, text


def read_answer(own: ParsedCell, text: str, capture: str) -> tuple[dict, ParsedCell, str, bool]:
    """(answer, cell, capture, counted): the saved output read as an answer, or a
    sorted table cut to its top rows, or any other table too large to show reduced to
    its row count (the cell's code rewritten then)."""
    try:
        return parse_output(text, capture), own, capture, False
    except AnswerError as error:
        try:
            own, answer = top_rows(own, text, capture, error)
            return answer, own, capture, False
        except AnswerError:
            # Not sorted: how many rows the display states (a count after a filter).
            own, answer = row_count(own, text, capture, error)
            return answer, own, "result", True


def unwrap_print(own: ParsedCell, text: str, capture: str) -> tuple[ParsedCell, str, str]:
    """`print('Average price: $', x)` (text constants around one value, default `sep`
    and `end`) read as the printed value: the cell's last statement becomes the bare
    expression `x` (a result the describer states and the reference evaluates), the
    text between the printed constants is the answer. Anything else is returned as
    it was (a label with a colon is still read by `parse_output`'s labelled lines)."""
    body = own.tree.body if own.tree is not None else []
    call = body[-1].value if body and isinstance(body[-1], ast.Expr) else None
    if capture != "stream" or not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "print"
        and not call.keywords
        and len(call.args) > 1
    ):
        return own, text, capture
    texts = [isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args]
    if texts.count(False) != 1 or text.count("\n") != 1 or not text.endswith("\n"):
        return own, text, capture
    at = texts.index(False)
    before = "".join(f"{a.value} " for a in call.args[:at])  # type: ignore[attr-defined]
    after = "".join(f" {a.value}" for a in call.args[at + 1 :])  # type: ignore[attr-defined]
    line = text[:-1]
    if not (line.startswith(before) and line.endswith(after)) or len(line) <= len(before + after):
        return own, text, capture
    value = line[len(before) : len(line) - len(after)]
    expression = ast.get_source_segment(own.sanitized, call.args[at]) or ast.unparse(call.args[at])
    lines = own.sanitized.splitlines()[: body[-1].lineno - 1]
    bare = parse_cell(own.index, "\n".join([*lines, expression]))
    if bare.tree is None:
        return own, text, capture
    return bare, value, "result"
