"""Reading a computed answer back from its container (`compute_live` prints it): the
last marker line of the trial's output, checked as hostile input. Only what a plot can
draw is taken: a mapping of at most `MAX_ITEMS` labels to finite numbers (one Series),
or a table of at most `MAX_TABLE_ROWS` rows of labels and numbers (a Series grouped by
two keys, `hue=`); a heat map's correlation table comes back as its column names and
upper triangle of coefficients (`derived` picks the pairs). Anything else is a counted
skip with the reason the container gave, or `plot.compute-failed` with the output's
tail.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from smoldataenvs.compute_live import MARKER, MAX_CORR_COLUMNS
from smoldataenvs.saved_output import MAX_ITEMS, MAX_TABLE_COLUMNS, MAX_TABLE_ROWS

COMPUTE = "cd /workspace && MPLBACKEND=Agg python3 /solution/compute.py"
"""The agent command of a compute trial (the reference runs from /workspace, as solve.sh
runs it)."""
MAX_LABEL = 200
MAX_COUNT = 10**12
DETAIL_CHARS = 300
_REASON = re.compile(r"^answer\.[a-z-]{1,40}$")


@dataclass(frozen=True)
class Computed:
    answer: dict | None
    reason: str = ""
    detail: str = ""
    correlations: dict[tuple[str, str], float | None] | None = None
    """A heat map's correlation table, `{(row, column): coefficient}` for every pair
    (`plots.PlottedAggregate.table`)."""


def read_computed(output: str, cut: bool = False, kind: str = "plot") -> Computed:
    """The answer of the trial's last marker line, or why there is none. `cut`: the
    answer is the aggregate's first rows, and the line also holds the values of one
    more row (`widened`): the row left out must not tie with a row kept. `kind`: what
    is computed, `plot` (an aggregate) or `count` (a cut frame's rows: a whole number),
    also the prefix of the reasons given here."""
    failed = f"{kind}.compute-failed"
    lines = [line for line in output.splitlines() if line.startswith(MARKER)]
    if not lines:
        tail = output.strip()[-DETAIL_CHARS:]
        return Computed(None, failed, tail or "the reference printed no answer")
    try:
        reply = json.loads(lines[-1][len(MARKER) :])
    except json.JSONDecodeError:
        return Computed(None, failed, "an unreadable answer line")
    if not isinstance(reply, dict):
        return Computed(None, failed, "an unreadable answer line")
    refused = reply.get("refused")
    if isinstance(refused, str):
        reason = refused if _REASON.match(refused) else failed
        return Computed(None, reason, str(reply.get("detail", ""))[:DETAIL_CHARS])
    if kind == "count":
        return _count(reply.get("answer"))
    if "corr" in reply:
        cells = _correlations(reply["corr"])
        if cells is None:
            return Computed(None, "plot.answer-kind", "not a table of correlations")
        return Computed(None, correlations=cells)
    answer = reply.get("answer")
    if isinstance(answer, dict) and answer.get("kind") == "table":
        why = _not_a_table(answer)
        if why or cut:  # a grouped plot has no cut: one asked of a table is not checked
            return Computed(None, "plot.answer-kind", why or "a cut of a table")
        fields = ("kind", "columns", "keys", "value")
        return Computed({field: answer[field] for field in fields})
    why = _not_a_series(answer)
    if why:
        return Computed(None, "plot.answer-kind", why)
    values = [v for _, v in answer["value"]]
    if cut:
        left = _left_out(values, reply.get("widened"))
        if left is None:
            return Computed(None, "plot.cut-unchecked", "the row past the cut was not computed")
        if any(_same(left, kept) for kept in values):
            return Computed(None, "answer.tied-cut", f"the value {left!r} ties at the cut")
    return Computed({"kind": "mapping", "value": [[k, v] for k, v in answer["value"]]})


def _count(answer: object) -> Computed:
    """A row count: a whole number, at most `MAX_COUNT`."""
    value = answer.get("value") if isinstance(answer, dict) else None
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not (isinstance(answer, dict) and answer.get("kind") == "number" and whole):
        return Computed(None, "count.answer-kind", f"not a row count: {str(value)[:40]}")
    if not 0 <= value <= MAX_COUNT:
        return Computed(None, "count.answer-kind", f"not a row count: {value}")
    return Computed({"kind": "number", "value": value})


def _left_out(kept: list[float], widened: object) -> float | None:
    """The one value of `widened` (the cut one row longer) that `kept` lacks, matched
    with the display's rounding; None when the two do not differ by exactly one."""
    if not isinstance(widened, list) or len(widened) != len(kept) + 1:
        return None
    rest = [v for v in widened if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(rest) != len(widened) or not all(math.isfinite(v) for v in rest):
        return None
    for value in kept:
        match = next((i for i, v in enumerate(rest) if _same(v, value)), None)
        if match is None:
            return None
        rest.pop(match)
    return rest[0]


def _same(a: float, b: float) -> bool:
    """Equal as a Series repr shows them (six significant digits)."""
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-9)


def _not_a_series(answer: object) -> str:
    """Why `answer` is not a short mapping of labels to finite numbers ('' when it is)."""
    if not isinstance(answer, dict) or answer.get("kind") != "mapping":
        kind = answer.get("kind") if isinstance(answer, dict) else type(answer).__name__
        return f"the plotted values read as {str(kind)[:40]!r}, not one Series"
    items = answer.get("value")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
        return f"not 1 to {MAX_ITEMS} labelled values"
    for item in items:
        if not (isinstance(item, list) and len(item) == 2):
            return "an item is not a label and a value"
        label, value = item
        if not isinstance(label, str | int | float) or isinstance(label, bool):
            return "a label is not text or a number"
        if len(str(label)) > MAX_LABEL:
            return "a label is too long"
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            return f"a value is not a finite number: {str(value)[:40]}"
    return ""


def _not_a_table(answer: dict) -> str:
    """Why `answer` is not a small table of labels (its `keys` leading columns) and
    finite numbers or missing values ('' when it is)."""
    columns, keys, rows = answer.get("columns"), answer.get("keys"), answer.get("value")
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        return "columns are not names"
    if any(len(c) > MAX_LABEL for c in columns) or len(set(columns)) != len(columns):
        return "a column name is too long or repeated"
    if type(keys) is not int or not 1 <= keys < len(columns):
        return "no row labels and values"
    if len(columns) - keys > MAX_TABLE_COLUMNS:
        return f"more than {MAX_TABLE_COLUMNS} value columns"
    if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_TABLE_ROWS:
        return f"not 1 to {MAX_TABLE_ROWS} rows"
    for row in rows:
        if not isinstance(row, list) or len(row) != len(columns):
            return "a row does not fit the columns"
        if not all(isinstance(label, str | int | float) for label in row[:keys]):
            return "a label is not text or a number"
        if any(len(str(label)) > MAX_LABEL for label in row[:keys]):
            return "a label is too long"
        for value in row[keys:]:
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not (number and math.isfinite(value)):
                return f"a value is not a finite number: {str(value)[:40]}"
    if all(value is None for row in rows for value in row[keys:]):
        return "every value is missing"
    return ""


def _correlations(table: object) -> dict[tuple[str, str], float | None] | None:
    """`{"columns": [...], "upper": [[r01, r02, ...], [r12, ...], ...]}` as every pair's
    coefficient (the diagonal 1), or None unless it is exactly that shape, with
    coefficients between -1 and 1 or missing."""
    if not isinstance(table, dict):
        return None
    columns, upper = table.get("columns"), table.get("upper")
    if not isinstance(columns, list) or not 2 <= len(columns) <= MAX_CORR_COLUMNS:
        return None
    if not all(isinstance(c, str) and 0 < len(c) <= MAX_LABEL for c in columns):
        return None
    if len(set(columns)) != len(columns) or not isinstance(upper, list):
        return None
    if [len(row) if isinstance(row, list) else -1 for row in upper] != [
        len(columns) - 1 - i for i in range(len(columns))
    ]:
        return None
    cells: dict[tuple[str, str], float | None] = {(c, c): 1.0 for c in columns}
    for i, row in enumerate(upper):
        for j, value in enumerate(row, start=i + 1):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if value is not None and not (number and math.isfinite(value) and abs(value) <= 1):
                return None
            cells[(columns[i], columns[j])] = cells[(columns[j], columns[i])] = value
    return cells
