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


def main() -> int:
    sys.path.insert(0, str(HERE))
    import grader
    import saved_output
    from solve import live_output

    spec, shown, namespace = live_output()
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


if __name__ == "__main__":
    sys.exit(main())
