"""The instruction: data, the notebook's own narrative, a question, the answer format.

Deterministic templates only. The question sentence comes from the answer cell's
expression (via `describe`), its printed labels, or the markdown right above it; the
background is the markdown above each cell of the slice, quoted. The instruction
never contains the answer or the reference code: `leaks` checks that, and an
excerpt that would leak is dropped rather than the task.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from smoldataenvs.describe import Describer, keys_are_answer
from smoldataenvs.grader import DEFAULT_RTOL, TABLE_PATH, render_scalar
from smoldataenvs.skips import SkipError

MAX_EXCERPT = 600
MAX_BACKGROUND = 2400
MIN_CODE_LINE = 24
ANSWER_FILE = "/workspace/answer.txt"


class QuestionError(SkipError):
    """A cell whose answer cannot be asked as a self-contained question."""


@dataclass(frozen=True)
class DataNote:
    target: str
    rows: int | None
    columns: list[str]


@dataclass(frozen=True)
class Question:
    text: str
    rule: str


def clean_markdown(text: str) -> str:
    """Markdown as quotable prose: no images, HTML tags or headings' hashes."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"^\s*#+\s*", "", text, flags=re.MULTILINE)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text[:MAX_EXCERPT].rstrip() + ("…" if len(text) > MAX_EXCERPT else "")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def code_lines(code: str) -> list[str]:
    lines = [_squash(line) for line in code.splitlines()]
    return [line for line in lines if len(line) >= MIN_CODE_LINE and not line.startswith("#")]


def answer_tokens(answer: dict) -> list[str]:
    """Renderings of the answer an instruction must not contain. Short numbers are
    left out: '7' or '16' occur in any text ('Step 7') without giving anything away."""
    values = [answer["value"]] if answer["kind"] not in ("list", "mapping") else answer["value"]
    if answer["kind"] == "mapping":
        values = [v for _, v in values]
    if answer["kind"] == "table":
        # The row labels are structure (the header and keys the agent is told), not answer.
        values = [v for row in answer["value"] for v in row[answer["keys"] :] if v is not None]
    tokens: list[str] = []
    for value in values:
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            forms = {render_scalar(value), f"{value:.2f}", f"{value:.1f}", f"{value:,}"}
            tokens += [f for f in forms if len(f.replace(".", "").lstrip("-0")) >= 3]
        elif len(str(value)) >= 3:
            tokens.append(str(value))
    return tokens


def prose_leaks(text: str, answer: dict, code: str) -> str | None:
    """Why the notebook's prose must not be quoted to the agent, or None: `leaks`, or
    it states what the answer is computed from (`derivable_from_stated`)."""
    return leaks(text, answer, code) or derivable_from_stated(text, answer, code)


def leaks(text: str, answer: dict, code: str) -> str | None:
    """Why `text` must not be shown to the agent, or None."""
    squashed = _squash(text)
    for line in code_lines(code):
        if line in squashed:
            return f"quotes the reference code: {line[:60]!r}"
    lowered = text.casefold()
    stated = stated_text_values(text) if answer["kind"] == "table" else set()
    for token in answer_tokens(answer):
        if token in stated:
            continue
        if re.search(rf"(?<![\w.]){re.escape(token.casefold())}(?![\w]|\.\d)", lowered):
            return f"contains the answer {token!r}"
    return None


STATED_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w]|\.\d)")


def derivable_from_stated(text: str, answer: dict, code: str) -> str | None:
    """Why `text` gives a fractional answer away without the data, or None: it states
    the answer rounded, or the numbers it is computed from ("Here the mean is 66.37 and
    standard deviation is 3.84" above `mean + 3 * std`, 77.91). Tried: each stated
    number, and each pair combined by +, -, * and / and by `a ± k * b` for the
    reference's own literals `k`, within the grader's tolerance. Asked of the notebook's
    prose only (the instruction's own numbers, row counts and a question's literals,
    are not results); such prose is dropped, not the question."""
    values = answer["value"] if answer["kind"] == "list" else [answer["value"]]
    if answer["kind"] not in ("number", "list") or not values:
        return None
    if not all(type(v) is float and not v.is_integer() for v in values):
        return None
    stated = [float(m) for m in STATED_NUMBER.findall(text)][:20]
    if not stated:
        return None
    factors = {float(m) for m in STATED_NUMBER.findall(code)} - {0.0}
    candidates = set(stated)
    for a in stated:
        for b in stated:
            candidates |= {a + b, a - b, a * b}
            candidates |= {a / b} if b else set()
            candidates |= {a + k * b for k in factors} | {a - k * b for k in factors}
    tolerance = max(answer.get("atol", 0.0), 0.0)

    def near(value: float) -> bool:
        limit = max(tolerance, DEFAULT_RTOL * abs(value))
        return any(abs(c - value) <= limit for c in candidates)

    if all(near(v) for v in values):
        return "states the numbers the answer is computed from"
    return None


def stated_text_values(text: str) -> set[str]:
    """Text the question quotes as a literal of its steps (`where `event` is 'Rain'`,
    `replacing ... 'no event' with 'Sunny'`): in a table's cells such a value is what the
    step put or kept there, one cell of many, not the answer given away."""
    return {m.group(2) for m in re.finditer(r"(['\"])([^'\"\n]{3,})\1", text)}


def answer_format(answer: dict) -> str:
    kind = answer["kind"]
    tolerance = f"{DEFAULT_RTOL:.1%}".replace(".0%", "%")
    if answer.get("atol"):  # a rounded display's (`stated_steps.rounded_answer`)
        tolerance += f" or {answer['atol']:g} (the notebook showed them rounded)"
    if kind == "number" and type(answer["value"]) is int:
        return (
            "as a single whole number, e.g. `12` (no units or thousands separators; graded exactly)"
        )
    if kind == "number":
        return (
            f"as a single number, e.g. `12.5` (no units or thousands separators; answers within "
            f"{tolerance} of the exact value are accepted)"
        )
    if kind == "bool":
        return "as `true` or `false`"
    if kind == "string":
        return "as a single line of text, exactly as the data spells it"
    count = len(answer["value"])
    if kind == "table":
        header = ",".join(answer["columns"])
        labels = answer["columns"][: answer["keys"]]
        rows = (
            f"one row per {', '.join(f'`{k}`' for k in labels)}"
            if labels
            else "one row per result row"
        )
        if any(k == "index" or k.startswith("level_") for k in labels):
            rows += " (unnamed row labels go in these columns, as `reset_index()` names them)"
        return (
            f"as CSV with the header line `{header}` and {rows} ({count} rows; the row and "
            f"column order do not matter; {number_rule(answer, tolerance)}, leave a "
            "missing value empty)"
        )
    if kind == "list":
        values = "1 value" if count == 1 else f"{count} values; the order does not matter"
        if any(type(v) is int for v in answer["value"]):
            values += "; whole numbers are graded exactly"
        return f"with one value per line ({values})"
    entries = "1 entry" if count == 1 else f"{count} entries; the order does not matter"
    values = [v for _, v in answer["value"]]
    if all(isinstance(v, bool) for v in values):
        kinds = "values `true` or `false`"
    elif all(isinstance(v, int | float) for v in values):
        kinds = number_rule({"kind": "list", "value": values}, tolerance)
    else:
        kinds = "values as the data spells them"
    return f"with one `label: value` line per entry ({entries}; {kinds})"


def number_rule(answer: dict, tolerance: str) -> str:
    """How numbers are graded, as the grader does it: whole numbers (counts) exactly,
    other numbers within the tolerance."""
    cells = answer["value"]
    if answer["kind"] == "table":
        cells = [cell for row in cells for cell in row]
    numbers = [v for v in cells if isinstance(v, int | float) and not isinstance(v, bool)]
    whole = [v for v in numbers if type(v) is int]
    if whole and len(whole) == len(numbers):
        return "whole numbers, graded exactly"
    if whole:
        return f"whole numbers are graded exactly, other numbers within {tolerance}"
    return f"numbers within {tolerance} are accepted"


def _print_labels(statements: list[ast.stmt], describer: Describer) -> list[str]:
    """`print("Mean height:", heights.mean())` -> 'Mean height (the mean of ...)'."""
    labels = []
    for statement in statements:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        if call.func.id != "print" or not call.args:
            continue
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and len(call.args) > 1:
            label = first.value.strip().rstrip(":=").strip()
            phrase = describer.phrase(call.args[1])
            if phrase is None:
                return []  # a label alone ("Mean:") does not say what was averaged
            labels.append(f"{label} ({phrase})")
    return labels


def _captioned_value(statements: list[ast.stmt]) -> ast.expr | None:
    """The value of the last statement when it is `print("<caption>", value)`."""
    last = statements[-1] if statements else None
    call = last.value if isinstance(last, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    if call.func.id != "print" or len(call.args) != 2 or call.keywords:
        return None
    caption = call.args[0]
    if not (isinstance(caption, ast.Constant) and isinstance(caption.value, str)):
        return None
    return call.args[1]


def question_sentence(
    answer: dict, statements: list[ast.stmt], capture: str, describer: Describer
) -> Question | None:
    last = statements[-1] if statements else None
    if capture in ("result", "table") and isinstance(last, ast.Expr):
        phrase = describer.phrase(last.value)
        if phrase is None:
            return None
        if answer["kind"] == "mapping" and not keys_are_answer(last.value):
            keys = ", ".join(f"`{k}`" for k, _ in answer["value"])
            return Question(
                f"Compute {phrase}. Give one line for each of: {keys}.", "expression-keys"
            )
        return Question(f"Compute {phrase}.", "expression")
    if capture == "stream":
        labels = _print_labels(statements, describer)
        entries = len(answer["value"]) if answer["kind"] == "mapping" else 0
        if entries and labels and len(labels) == entries:
            listed = "\n".join(f"- {label}" for label in labels)
            return Question(f"Report these values, labelled as below:\n\n{listed}", "print-labels")
        captioned = _captioned_value(statements)
        if entries > 1 and len(labels) == 1 and captioned is not None:
            # `print("Average mass by species:\n", s)`: one caption, then a Series whose
            # entries are the answer's; asked as the Series (the caption is prose)
            phrase = describer.phrase(captioned)
            if phrase is None:
                return None
            if keys_are_answer(captioned):
                return Question(f"Compute {phrase}.", "print-caption")
            keys = ", ".join(f"`{k}`" for k, _ in answer["value"])
            return Question(
                f"Compute {phrase}. Give one line for each of: {keys}.", "print-caption-keys"
            )
        if answer.get("label") and labels:
            return Question(f"Report {labels[0]}.", "print-label")
        prints = [
            s.value.args[0]
            for s in statements
            if isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Name)
            and s.value.func.id == "print"
            and len(s.value.args) == 1
        ]
        phrase = describer.phrase(prints[-1]) if len(prints) == 1 else None
        if phrase:
            return Question(f"Compute {phrase}.", "print-expression")
    return None


def data_section(notes: list[DataNote], modules: list[str]) -> str:
    lines = []
    for note in notes:
        detail = []
        if note.rows is not None:
            detail.append(f"{note.rows:,} rows")
        if note.columns:
            detail.append("columns: " + ", ".join(f"`{c}`" for c in note.columns))
        lines.append(f"- `{note.target}`" + (f" ({'; '.join(detail)})" if detail else ""))
    tools = ", ".join(modules) if modules else "the Python standard library"
    return "\n".join(lines) + f"\n\nPython 3 with {tools} is installed."


def compose(
    *,
    notes: list[DataNote],
    modules: list[str],
    background: list[str],
    question: Question,
    prompt_markdown: str,
    answer: dict,
) -> str:
    """The instruction.md text, or QuestionError when no clear question can be asked."""
    if question is None:
        # The notebook's prose alone is not a question: it rarely states the slices
        # and filters the answer depends on (see docs/notebooks.md).
        raise QuestionError("question.undescribed", "no phrase for the answer's expression")
    parts = [
        "# A data-analysis question",
        "",
        "The current folder (`/workspace`) holds data files from a Jupyter notebook:",
        "",
        data_section(notes, modules),
    ]
    if background:
        story = "\n\n".join("> " + excerpt.replace("\n", "\n> ") for excerpt in background)
        parts += [
            "",
            "## What the notebook did first",
            "",
            "In the notebook's own words:",
            "",
            story,
        ]
    parts += ["", "## Question", ""]
    if prompt_markdown:
        parts += [
            "The notebook introduces this step as:",
            "",
            "> " + prompt_markdown.replace("\n", "\n> "),
            "",
        ]
    parts += [question.text, ""]
    parts += [
        "## Answer",
        "",
        f"Write the answer to `{TABLE_PATH if answer['kind'] == 'table' else ANSWER_FILE}` "
        f"{answer_format(answer)}.",
    ]
    return "\n".join(parts) + "\n"
