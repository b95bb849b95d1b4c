"""`df.info()` and a long `df.isna().sum()` asked as the columns that miss values
(`missing_counts`), read the way pandas prints them, and the constant-answer rule on a
mapping whose labels the question does not list."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from repo2rlenv.validate.constant_answer import constant_guess, read_answer
from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.describe import Describer, kept_entries
from smoldataenvs.missing_counts import info_missing
from smoldataenvs.notebook import load_notebook
from tests.smoldata.helpers import code_cell, result, stream, write_notebook

# 24 columns (a wide table: its isna().sum() is over the 20-item cap), three of them
# missing values: 3 in `c02`, 5 in `c07`, 1 in `c19`.
WIDE = pd.DataFrame({f"c{i:02d}": np.arange(30, dtype=float) + i for i in range(24)})
WIDE.loc[[1, 4, 9], "c02"] = np.nan
WIDE.loc[[0, 2, 3, 5, 8], "c07"] = np.nan
WIDE.loc[[29], "c19"] = np.nan
MISSING = [["c02", 3], ["c07", 5], ["c19", 1]]

OLD_INFO = """<class 'pandas.core.frame.DataFrame'>
RangeIndex: 891 entries, 0 to 890
Data columns (total 3 columns):
PassengerId    891 non-null int64
Age            714 non-null float64
Cabin Name     204 non-null object
dtypes: float64(1), int64(1), object(1)
memory usage: 21.0+ KB
"""


def info_text(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.info(buf=buffer)
    return buffer.getvalue()


def test_info_reports_of_both_layouts_give_the_missing_values_per_column() -> None:
    assert info_missing(info_text(WIDE)) == dict(map(tuple, MISSING))  # type: ignore[arg-type]
    assert info_missing(OLD_INFO) == {"Age": 177, "Cabin Name": 687}
    # A report missing a column line (or a wide table's short report) is not read.
    assert info_missing(OLD_INFO.replace("Age            714 non-null float64\n", "")) is None
    short = "<class 'pandas.core.frame.DataFrame'>\nRangeIndex: 5 entries, 0 to 4\n"
    assert info_missing(short + "Columns: 150 entries, a to z\ndtypes: int64(150)\n") is None
    # A table with nothing missing: no columns to ask about.
    assert info_missing(info_text(WIDE.fillna(0))) == {}


def test_a_series_filter_by_its_own_values_is_stated() -> None:
    describer = Describer(
        {"df": ast.parse("pd.read_csv('w.csv')").body[0].value},  # type: ignore[attr-defined]
        {"w.csv": "w.csv"},
    )

    def phrase(source: str) -> str | None:
        return describer.phrase(ast.parse(source).body[0].value)  # type: ignore[attr-defined]

    assert phrase("df.isna().sum().loc[lambda counts: counts > 0]") == (
        "the number of missing values in each column of the data in `w.csv`, keeping only "
        "the entries whose value is > 0"
    )
    assert phrase("df['a'].value_counts()[lambda s: s >= 10]").endswith(
        "keeping only the entries whose value is ≥ 10"
    )
    # A table masked by a lambda keeps its shape (missing where false): not stated, nor a
    # lambda that tests anything but its own argument against a number.
    assert phrase("df[lambda s: s > 0]") is None
    assert kept_entries(ast.parse("lambda s: t > 0").body[0].value) is None  # type: ignore[attr-defined]
    assert kept_entries(ast.parse("lambda s: s > 'a'").body[0].value) is None  # type: ignore[attr-defined]


def computed(candidate: Candidate, folder: Path) -> dict:
    """The reference's answer expression as a dict, evaluated as the solve step does."""
    last = candidate.reference.rstrip().splitlines()[-1]
    script = f"{candidate.reference}\nimport json\nprint(json.dumps(dict(({last}).items())))\n"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def extract(folder: Path) -> list[Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    WIDE.to_csv(folder / "wide.csv", index=False)
    cells = [
        code_cell("import pandas as pd\ndf = pd.read_csv('wide.csv')"),
        code_cell("df.info()", [stream(info_text(WIDE))]),
        code_cell("df.isnull().sum()", [result(repr(WIDE.isnull().sum()))]),
        code_cell("full = df.fillna(0)\nfull.info()", [stream(info_text(WIDE.fillna(0)))]),
    ]
    path = write_notebook(folder / "wide.ipynb", cells)
    return list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "wide.ipynb")))


@pytest.mark.timeout(120)
def test_info_and_a_long_missing_count_ask_the_columns_that_miss_values(tmp_path: Path) -> None:
    found = extract(tmp_path)
    asked = {f.cell: f for f in found if isinstance(f, Candidate)}
    assert sorted(asked) == [1, 2]  # cell 3's table misses nothing: no question
    for cell in (1, 2):
        candidate = asked[cell]
        assert candidate.answer == {"kind": "mapping", "value": MISSING}
        assert candidate.question.text == (
            "Compute the number of missing values in each column of the data in `wide.csv`, "
            "keeping only the entries whose value is > 0."
        )
        # The labels are the answer's: the question does not list them.
        assert "c07" not in candidate.question.text
        assert computed(candidate, tmp_path) == dict(map(tuple, MISSING))  # type: ignore[arg-type]
    # The same question twice: one key for the dedup.
    assert asked[1].dedup_key == asked[2].dedup_key
    refused = [f for f in found if isinstance(f, CellSkip) and f.cell == 3]
    assert [f.reason for f in refused] == ["output.table"]


def test_a_constant_guess_lacks_the_labels_a_question_does_not_list() -> None:
    equal = {"kind": "mapping", "value": [["Enrollments", 14], ["Payments", 14]]}
    assert constant_guess(read_answer(json.dumps(equal)), "") is not None  # type: ignore[arg-type]
    asked = json.dumps(equal | {"labels_asked": True})
    assert constant_guess(read_answer(asked), "") is None  # type: ignore[arg-type]
    # Zeros stay refused: a mapping of nothing counted says nothing.
    zeros = {"kind": "mapping", "value": [["a", 0], ["b", 0]], "labels_asked": True}
    assert constant_guess(read_answer(json.dumps(zeros)), "") is not None  # type: ignore[arg-type]
