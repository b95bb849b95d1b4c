"""Shared helpers for the smoldataenvs tests: real sample notebooks, small notebooks."""

from __future__ import annotations

import json
from pathlib import Path

from smoldataenvs.candidates import answer_output
from smoldataenvs.notebook import Notebook, load_notebook
from smoldataenvs.saved_output import parse_output
from tests.conftest import SAMPLES

NOTEBOOKS = SAMPLES / "notebooks"
HANDBOOK = "jakevdp_PythonDataScienceHandbook/notebooks"
AGGREGATES = f"{HANDBOOK}/02.04-Computation-on-arrays-aggregates.ipynb"
MERGE = f"{HANDBOOK}/03.07-Merge-and-Join.ipynb"
PIVOT = f"{HANDBOOK}/03.09-Pivot-Tables.ipynb"
EURO = "guipsamora_pandas_exercises/02_Filtering_&_Sorting/Euro12/Exercises_with_Solutions.ipynb"
CRIME = "guipsamora_pandas_exercises/04_Apply/US_Crime_Rates/Exercises_with_solutions.ipynb"
TIPS = "guipsamora_pandas_exercises/07_Visualization/Tips/Exercises_with_code_and_solutions.ipynb"
TITANIC = (
    "guipsamora_pandas_exercises/07_Visualization/Titanic_Disaster/"
    "Exercises_code_with_solutions.ipynb"
)
PYTHON2 = "agconti_kaggle-titanic/Titanic.ipynb"


def sample(record_id: str) -> Notebook:
    return load_notebook(NOTEBOOKS / record_id, record_id)


def saved_text(record_id: str, cell: int) -> tuple[str, str]:
    """(capture, text) of a real cell's saved answer output."""
    return answer_output(sample(record_id).cells[cell])


def saved_answer(record_id: str, cell: int) -> dict:
    capture, text = saved_text(record_id, cell)
    return parse_output(text, capture)


def raw_result_text(record_id: str, cell: int) -> str:
    """The text/plain of a real execute_result, even one a candidate would refuse."""
    return sample(record_id).cells[cell].outputs[0].text


def code_cell(source: str, outputs: list[dict] | None = None) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": outputs or []}


def markdown_cell(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def result(text: str) -> dict:
    return {
        "output_type": "execute_result",
        "execution_count": 1,
        "metadata": {},
        "data": {"text/plain": text},
    }


def image() -> dict:
    """A plot's saved output: a PNG and the text matplotlib shows beside it."""
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure size 640x480 with 1 Axes>"},
    }


def stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def write_notebook(path: Path, cells: list[dict], kernel: str = "python3") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": kernel, "display_name": kernel, "language": "python"},
            "language_info": {"name": "python", "version": "3.11.0"},
        },
        "cells": cells,
    }
    path.write_text(json.dumps(document))
    return path
