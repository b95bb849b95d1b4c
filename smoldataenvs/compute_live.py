"""Run in the task's container when a question's answer is computed rather than read
from a saved output (a plot's aggregate, `plots`): runs the reference as solve.py does
and prints the answer as saved_output reads it, as one JSON line after a marker.

Planted beside solve.py for that one trial only, never part of a task. Standard
library only. What it prints is as hostile as the notebook code that ran before it:
the host checks its shape (`compute.read_computed`), and the task's own reproduction
trial grades the reference against it again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARKER = "smoldataenvs-computed-answer: "
MAX_WIDENED = 1000
MAX_CORR_COLUMNS = 24
"""Wider correlation tables would not fit the 4,000 characters of output a trial keeps."""


def main() -> int:
    sys.path.insert(0, str(HERE))
    import grader
    import saved_output
    from solve import live_output

    spec, shown, namespace = live_output()
    table = HERE / "table.py"
    if table.exists():
        # A heat map's correlation table: the host picks the questions from it.
        value = eval(compile(table.read_text(), "<table>", "eval"), namespace)
        print(MARKER + json.dumps(correlations(value), separators=(",", ":")))
        return 0
    try:
        answer = saved_output.parse_output(shown, spec["capture"], spec.get("labelled", False))
    except grader.AnswerError as exc:
        print(MARKER + json.dumps({"refused": exc.reason, "detail": exc.detail[:200]}))
        return 0
    reply: dict = {"answer": answer}
    wider = HERE / "widened.py"
    if wider.exists():
        # The aggregate with one more row past its cut: its values, for the tie check.
        value = eval(compile(wider.read_text(), "<widened>", "eval"), namespace)
        reply["widened"] = [float(v) for v in list(value.values)[:MAX_WIDENED]]
    print(MARKER + json.dumps(reply))
    return 0


def correlations(value: object) -> dict:
    """A square table as its column names and upper triangle (the diagonal is 1, the
    lower half the same), each coefficient to six significant digits as a notebook
    shows it: short enough for the tail of the trial's output the host reads."""
    columns = [str(c) for c in getattr(value, "columns", [])]
    index = [str(i) for i in getattr(value, "index", [])]
    if columns != index or len(columns) < 2:
        return {"refused": "answer.not-square", "detail": "not a table of pairs of columns"}
    if len(columns) > MAX_CORR_COLUMNS:
        return {"refused": "answer.table-too-large", "detail": f"{len(columns)} columns"}
    rows = value.to_numpy().tolist()  # type: ignore[attr-defined]
    upper = [[_shown(rows[i][j]) for j in range(i + 1, len(columns))] for i in range(len(columns))]
    return {"corr": {"columns": columns, "upper": upper}}


def _shown(number: object) -> float | None:
    try:
        number = float(number)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return float(f"{number:.6g}") if number == number else None


if __name__ == "__main__":
    sys.exit(main())
