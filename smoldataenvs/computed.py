"""Reading a computed answer back from its container (`compute_live` prints it): the
last marker line of the trial's output, checked as hostile input. Only what a plot of
one Series can draw is taken: a mapping of at most `MAX_ITEMS` labels to finite
numbers; anything else is a counted skip with the reason the container gave, or
`plot.compute-failed` with the output's tail.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from smoldataenvs.compute_live import MARKER
from smoldataenvs.saved_output import MAX_ITEMS

COMPUTE = "cd /workspace && MPLBACKEND=Agg python3 /solution/compute.py"
"""The agent command of a compute trial (the reference runs from /workspace, as solve.sh
runs it)."""
MAX_LABEL = 200
DETAIL_CHARS = 300
_REASON = re.compile(r"^answer\.[a-z-]{1,40}$")


@dataclass(frozen=True)
class Computed:
    answer: dict | None
    reason: str = ""
    detail: str = ""


def read_computed(output: str, cut: bool = False) -> Computed:
    """The answer of the trial's last marker line, or why there is none. `cut`: the
    answer is the aggregate's first rows, and the line also holds the values of one
    more row (`widened`): the row left out must not tie with a row kept."""
    lines = [line for line in output.splitlines() if line.startswith(MARKER)]
    if not lines:
        tail = output.strip()[-DETAIL_CHARS:]
        return Computed(None, "plot.compute-failed", tail or "the reference printed no answer")
    try:
        reply = json.loads(lines[-1][len(MARKER) :])
    except json.JSONDecodeError:
        return Computed(None, "plot.compute-failed", "an unreadable answer line")
    if not isinstance(reply, dict):
        return Computed(None, "plot.compute-failed", "an unreadable answer line")
    refused = reply.get("refused")
    if isinstance(refused, str):
        reason = refused if _REASON.match(refused) else "plot.compute-failed"
        return Computed(None, reason, str(reply.get("detail", ""))[:DETAIL_CHARS])
    answer = reply.get("answer")
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
