"""`semantic.constant-answer`: a qa answer that a guess made without the data passes.

A qa task is worth something only when its answer carries information the agent must
get from the data. Some saved answers carry none: ten zeros ("the first 10 entries" of
a snow indicator, a real notebook's task), a list naming one category N times, 0, an
empty list, or the row count the instruction itself states. An agent that never opens
the data writes a constant, and the grader cannot tell it from a solution.

Judged from `tests/expected.json` alone, for every qa source: the notebook miner's
`{"kind", "value", "atol", "rtol"}` (a table's cells outside its `keys` label columns
judged like a mapping's values) and the session qa kind's `{"answer": "<number>"}`.
A guess passes when the task's own grader would accept it, so numbers are compared
with the task's tolerances (the notebook grader's: |guess - expected| <= atol or
<= rtol * |expected|; the session checker's `math.isclose` with rel 1e-6, abs 1e-9).
Mapping answers are judged by their values: the labels are copied from the data's
index, the values are what the question computes. Where the question does not list the
labels (`"labels_asked": true`: which columns miss values, which keys a filter keeps),
one constant for every value is no guess: the labels come only from the data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from repo2rlenv.bundle import TaskTree
from repo2rlenv.validate.findings import Finding

EXPECTED = "tests/expected.json"
SESSION_TOLERANCE = (1e-9, 1e-6)
"""(atol, rtol) of the session qa kind's checker (`kinds/qa.py` CHECK_PY)."""
NOTEBOOK_TOLERANCE = (1e-3, 1e-3)
"""The notebook grader's defaults, for an expected.json that names none."""
BASELINE = 0.0
"""The number a no-data guess writes: nothing counted, nothing summed."""
STATED_COUNT = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)\s+(?:rows?|lines?|records?|columns?|files?|"
    r"observations?)\b",
    re.IGNORECASE,
)
"""A count the instruction states about the data ("8,784 rows"): copying it needs no data."""
NUMERIC = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?$")


@dataclass(frozen=True)
class Answer:
    """An expected answer as the rule judges it: its scalar values (a mapping's values),
    whether it is a collection, and the tolerances its grader applies."""

    values: list[object]
    collection: bool
    atol: float
    rtol: float
    labels_asked: bool = False
    """A mapping whose labels the question does not list: a constant guess lacks them."""


def read_answer(raw: str | None) -> Answer | None:
    """The answer of a qa task's expected.json, or None when it holds none we know."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if "answer" in data and "kind" not in data:
        answer = data["answer"]
        if answer is None or isinstance(answer, dict | list):
            return None
        return Answer([answer], False, *SESSION_TOLERANCE)
    kind, value = data.get("kind"), data.get("value")
    atol = _float(data.get("atol"), NOTEBOOK_TOLERANCE[0])
    rtol = _float(data.get("rtol"), NOTEBOOK_TOLERANCE[1])
    if kind == "list" and isinstance(value, list):
        return Answer(value, True, atol, rtol)
    if kind == "mapping" and isinstance(value, list):
        pairs = [item for item in value if isinstance(item, list) and len(item) == 2]
        asked = data.get("labels_asked") is True
        return Answer([v for _, v in pairs], True, atol, rtol, labels_asked=asked)
    if kind == "table" and isinstance(value, list):
        keys = data.get("keys")
        keys = keys if isinstance(keys, int) and not isinstance(keys, bool) and keys >= 0 else 0
        # The cells outside the row labels: the labels are copied from the data's index.
        cells = [cell for row in value if isinstance(row, list) for cell in row[keys:]]
        return Answer(cells, True, atol, rtol)
    if kind in ("number", "string", "bool") and "value" in data:
        return Answer([value], False, atol, rtol)
    return None


def _float(value: object, default: float) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _number(value: object) -> float | None:
    """A value as the number a grader would compare, or None for text and booleans."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and NUMERIC.match(value.strip()):
        return float(value.strip().rstrip("%").replace(",", ""))
    return None


def _text(value: object) -> str:
    return re.sub(r"\s+", " ", str(value)).strip().casefold()


def _accepts(expected: object, guess: object, answer: Answer) -> bool:
    """The grader accepts `guess` for `expected` (numbers within tolerance, text equal
    but for case and spacing)."""
    e, g = _number(expected), _number(guess)
    if e is not None and g is not None:
        return abs(g - e) <= answer.atol or abs(g - e) <= answer.rtol * abs(e)
    return e is None and g is None and _text(expected) == _text(guess)


def _passes(guess: object, answer: Answer) -> bool:
    return bool(answer.values) and all(_accepts(v, guess, answer) for v in answer.values)


def stated_counts(instruction: str) -> list[tuple[float, str]]:
    """(count, how it is written) for each count of rows, lines, columns… stated."""
    return [
        (float(m.group(1).replace(",", "")), m.group(0)) for m in STATED_COUNT.finditer(instruction)
    ]


def constant_guess(answer: Answer, instruction: str) -> str | None:
    """Why a guess made without the data passes this answer, or None."""
    values = answer.values
    if not values or all(_text(v) == "" for v in values):
        return "the expected answer is empty: an empty answer file matches it"
    if _passes(BASELINE, answer):
        shown = "every value of the answer is" if answer.collection else "the answer is"
        return f"{shown} 0 (within its tolerance): the guess 0, made without the data, passes"
    for count, written in stated_counts(instruction):
        if _passes(count, answer):
            return f"the answer is a count the instruction states ({written!r})"
    if answer.collection and len(values) > 1 and not answer.labels_asked:
        numbers = [n for n in map(_number, values) if n is not None]
        guesses = [*values]
        if len(numbers) == len(values):
            guesses.append((min(numbers) + max(numbers)) / 2)
        guess = next((g for g in guesses if _passes(g, answer)), None)
        if guess is not None:
            return (
                f"all {len(values)} values of the answer are {guess!r}: one constant "
                "written for each, without the data, passes"
            )
    return None


def qa_answer_not_guessable(tree: TaskTree) -> Iterator[Finding]:
    answer = read_answer(tree.text(EXPECTED))
    if answer is None:
        return
    why = constant_guess(answer, tree.text("instruction.md") or "")
    if why is not None:
        yield Finding(rule_id="semantic.constant-answer", path=EXPECTED, message=why)
