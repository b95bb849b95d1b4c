"""What an answer states, whatever its shape (a number, list, mapping or table): the
values the gates look at for a constant, a yes/no or a number printed in the question."""

from __future__ import annotations

import ast
import re

EXTREMES = {"max", "min"}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$")
"""A timestamp as pandas shows it: its text order is its time order."""


def answer_values(answer: dict) -> list:
    """The values an answer states, whatever its shape: a mapping's values, a table's
    cells outside its row labels (the labels are stated in the question)."""
    if answer["kind"] == "list":
        return list(answer["value"])
    if answer["kind"] == "mapping":
        return [v for _, v in answer["value"]]
    if answer["kind"] == "table":
        return [v for row in answer["value"] for v in row[answer["keys"] :]]
    return [answer["value"]]


def is_boolean(answer: dict) -> bool:
    """A yes/no answer, or a list, mapping or table of them: guessable by coin flips."""
    values = answer_values(answer)
    return bool(values) and all(isinstance(v, bool) for v in values)


def answer_numbers(answer: dict) -> set[float]:
    """The numeric values of an answer, whatever its shape."""
    values = answer_values(answer)
    return {v for v in values if isinstance(v, int | float) and not isinstance(v, bool)}


def text_extreme(expression: ast.AST | None, answer: dict) -> str | None:
    """Why a `max()`/`min()` whose answer holds text is refused, or None. The largest or
    smallest of text is the alphabetically last or first: a weather `event` column's
    `max()` is 'Sunny', a grouped table's `max()` takes '1/4/2017' after '1/10/2017'
    from a date column held as text. Nobody asks for that order and the question would
    have to state it, so such a cell is not a question (real: codebasics' pandas
    tutorial). A timestamp as pandas shows it (`2018-10-13 23:59:00`) passes: the
    latest date is a question, and ISO text sorts as time does."""
    if isinstance(expression, ast.Expr):
        expression = expression.value
    if not isinstance(expression, ast.Call):
        return None
    func = expression.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in EXTREMES:
        return None
    texts = [v for v in answer_values(answer) if isinstance(v, str) and not ISO_DATE.match(v)]
    return f"{name}() of text: {texts[0][:40]!r}" if texts else None
