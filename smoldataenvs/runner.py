"""The reference solution: run the sliced cells like a notebook and write the answer.

Copied verbatim into each task as `solution/solve.py`, next to `reference.py` (the
slice, one `# %% [cell N]` block per notebook cell), `spec.json` and copies of the
grader and saved_output modules: saved_output's parser reads the answer out of the live
output exactly as the pipeline read it out of the saved one. Standard library only.

Like IPython, the last cell's answer is either what it printed (`stream`) or the repr
of its final expression (`result`); a DataFrame result (`table`) is written as CSV
straight from the live frame, which the grader compares with the table the notebook
showed.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CELL_MARKER = re.compile(r"^# %% \[cell (\d+)\]\s*$", re.MULTILINE)


def split_cells(text: str) -> list[tuple[int, str]]:
    """[(cell index, code)] from a reference script with `# %% [cell N]` markers."""
    marks = list(CELL_MARKER.finditer(text))
    cells = []
    for position, mark in enumerate(marks):
        end = marks[position + 1].start() if position + 1 < len(marks) else len(text)
        cells.append((int(mark.group(1)), text[mark.end() : end]))
    return cells


def run_cell(code: str, namespace: dict, capture: str | None, label: str) -> str:
    """Execute one cell; return what it showed for `capture` ('result' / 'stream')."""
    tree = ast.parse(code, filename=label)
    body = list(tree.body)
    shows = capture in ("result", "table")
    last = body.pop() if shows and body and isinstance(body[-1], ast.Expr) else None
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(ast.Module(body=body, type_ignores=[]), label, "exec"), namespace)
        value = None
        if last is not None:
            value = eval(compile(ast.Expression(last.value), label, "eval"), namespace)
    if capture == "table":
        return table_csv(value)
    if capture == "result":
        return "" if value is None else repr(value)
    return buffer.getvalue()


def table_csv(value: object) -> str:
    """A DataFrame (or Series) result as the CSV the table grader reads: the index levels
    first, named as `reset_index` names them, then the columns; a default 0..n-1 index
    is left out, as the pipeline leaves it out of the expected table."""
    frame = value.to_frame() if hasattr(value, "to_frame") and value.ndim == 1 else value
    if not hasattr(frame, "reset_index"):
        return ""
    index = frame.index
    default = index.nlevels == 1 and index.name is None and list(index) == list(range(len(frame)))
    return frame.reset_index(drop=default).to_csv(index=False)


def live_output() -> tuple[dict, str, dict]:
    """(spec, what the last cell showed, the namespace) after running every cell of the
    reference."""
    spec = json.loads((HERE / "spec.json").read_text())
    cells = split_cells((HERE / "reference.py").read_text())
    namespace: dict = {"__name__": "__main__", "display": lambda *args, **kwargs: None}
    shown = ""
    for position, (index, code) in enumerate(cells):
        final = position == len(cells) - 1
        shown = run_cell(code, namespace, spec["capture"] if final else None, f"<cell {index}>")
    return spec, shown, namespace


def main() -> int:
    spec, shown, _ = live_output()
    sys.path.insert(0, str(HERE))
    import grader
    import saved_output

    if spec["capture"] == "table":
        if not shown:
            print("the reference result is not a table", file=sys.stderr)
            return 1
        Path(spec.get("answer_path", grader.TABLE_PATH)).write_text(shown)
        print(shown, end="")
        return 0
    try:
        answer = saved_output.parse_output(shown, spec["capture"], spec.get("labelled", False))
    except grader.AnswerError as exc:
        print(f"the reference output is not a short answer: {exc}\n{shown[:500]}", file=sys.stderr)
        return 1
    Path(spec.get("answer_path", "answer.txt")).write_text(grader.render_answer(answer))
    print(grader.render_answer(answer), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
