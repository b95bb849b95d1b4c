"""What an answer states, whatever its shape (a number, list, mapping or table): the
values the gates look at for a constant, a yes/no or a number printed in the question."""

from __future__ import annotations


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
