"""Outlier limits as tutorials compute them (codebasics' IQR, z-score and percentile
notebooks, a heart-disease exercise): sums, differences and multiples of a column's
statistics are stated in words, `low, high = t.c.quantile([a, b])` names each quantile,
and the rows beyond the limits are asked with the limits stated."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.describe import Describer
from smoldataenvs.notebook import load_notebook
from tests.smoldata.helpers import code_cell, result, write_notebook
from tests.smoldata.test_tables import html_result

HEIGHTS = pd.DataFrame(
    {
        "name": [f"p{i:02d}" for i in range(40)],
        "height": [*np.round(np.linspace(5.0, 6.6, 37), 3), 1.2, 14.5, 40.2],
    }
)
Q1, Q3 = HEIGHTS.height.quantile(0.25), HEIGHTS.height.quantile(0.75)
LOW, HIGH = Q1 - 1.5 * (Q3 - Q1), Q3 + 1.5 * (Q3 - Q1)
UPPER = HEIGHTS.height.mean() + 3 * HEIGHTS.height.std()
FIRST, LAST = HEIGHTS.height.quantile([0.05, 0.95])
OUTLIERS = HEIGHTS[(HEIGHTS.height < LOW) | (HEIGHTS.height > HIGH)]


def cells() -> list[dict]:
    return [
        code_cell("import pandas as pd\ndf = pd.read_csv('heights.csv')"),
        code_cell("Q1 = df.height.quantile(0.25)\nQ3 = df.height.quantile(0.75)"),
        code_cell("IQR = Q3 - Q1\nlower_limit = Q1 - 1.5*IQR\nupper_limit = Q3 + 1.5*IQR"),
        code_cell("df[(df.height<lower_limit)|(df.height>upper_limit)]", [html_result(OUTLIERS)]),
        code_cell("df.height.mean() + 3*df.height.std()", [result(repr(UPPER))]),
        code_cell(
            "low, high = df.height.quantile([0.05, 0.95])\nlow, high",
            [result(repr((FIRST, LAST)))],
        ),
        code_cell(
            "len(df[df.height > df.height.mean() + 3 * df.height.std()])",
            [result(repr(int((HEIGHTS.height > UPPER).sum())))],
        ),
    ]


def extract(folder: Path) -> dict[int, Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    HEIGHTS.to_csv(folder / "heights.csv", index=False)
    path = write_notebook(folder / "outliers.ipynb", cells())
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "outliers.ipynb"))
    return {item.cell: item for item in found}


def computed(candidate: Candidate, folder: Path) -> object:
    """The reference's answer expression, evaluated as the solve step does, as JSON."""
    last = candidate.reference.rstrip().splitlines()[-1]
    script = (
        f"{candidate.reference}\nimport json\nvalue = ({last})\n"
        "print(json.dumps(value.to_dict('list') if hasattr(value, 'to_dict') else value, "
        "default=float))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(120)
def test_outlier_limits_and_the_rows_beyond_them_are_asked(tmp_path: Path) -> None:
    found = extract(tmp_path)
    rows, upper, pair, count = found[3], found[4], found[5], found[6]
    assert all(isinstance(c, Candidate) for c in (rows, upper, pair, count)), found
    quartile = "(the 0.25 quantile (pandas' default linear interpolation) of the `height` column"
    text = rows.question.text  # type: ignore[union-attr]
    assert "keeping only the rows where `height` < (" + quartile in text
    assert "minus (1.5 times ((the 0.75 quantile" in text and " or `height` > ((" in text
    assert computed(rows, tmp_path)["name"] == list(OUTLIERS.name)  # type: ignore[arg-type,index]
    assert upper.question.text.startswith(  # type: ignore[union-attr]
        "Compute (the mean of the `height` column of the data in `heights.csv`) plus (3 times "
        "(the sample standard deviation"
    )
    assert computed(upper, tmp_path) == pytest.approx(UPPER)  # type: ignore[arg-type]
    assert "(1) the 0.05 quantile" in pair.question.text  # type: ignore[union-attr]
    assert "(2) the 0.95 quantile" in pair.question.text  # type: ignore[union-attr]
    assert computed(pair, tmp_path) == pytest.approx([FIRST, LAST])  # type: ignore[arg-type]
    assert computed(count, tmp_path) == int((HEIGHTS.height > UPPER).sum())  # type: ignore[arg-type]


def test_arithmetic_is_stated_only_of_single_numbers() -> None:
    """Two columns added are a column formula, not a number; a literal alone is no
    statistic; a statistic times a column compares row by row."""
    tables = {"t": ast.parse("pd.read_csv('h.csv')", mode="eval").body}

    def phrase(code: str) -> str | None:
        return Describer(tables, {}).phrase(ast.parse(code, mode="eval").body)

    assert phrase("t.a + t.b") is None
    assert phrase("t.a.mean() * 2") == "2 times (the mean of the `a` column of the data in `h.csv`)"
    assert phrase("2 * 3") is None
    assert phrase("t.a.mean() * t.b") is None  # a column times a number: row by row
