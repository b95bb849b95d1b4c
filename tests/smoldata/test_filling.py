"""Steps that fill or replace values (smoldataenvs/filling.py): the table they make is a
table task stated in words, and the table's size after them is still a look-up.

Before filling.py each of these cells was `question.trivial-lookup` (the chain computed
nothing the gate knew) or `question.undescribed`. The references are run here on the
data and compared with the phrase's meaning computed by hand (plain loops, not pandas'
own fill), so a phrase that says something else than the code does fails.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.notebook import load_notebook
from tests.smoldata.helpers import code_cell, result, write_notebook
from tests.smoldata.test_tables import html_result

NAN = float("nan")
WEATHER = pd.DataFrame(
    {
        "day": ["1/1/2017", "1/4/2017", "1/5/2017", "1/6/2017", "1/7/2017", "1/8/2017"],
        "temperature": [32.0, NAN, 28.0, NAN, NAN, 34.0],
        "windspeed": [6.0, 9.0, NAN, 7.0, -99999.0, NAN],
        "event": ["Rain", "Sunny", None, "Snow", "no event", "Sunny"],
    }
)


def extract(folder: Path, cells: list[dict]) -> dict[int, Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    WEATHER.to_csv(folder / "weather_data.csv", index=False)
    load = code_cell(
        "import numpy as np\nimport pandas as pd\ndf = pd.read_csv('weather_data.csv')"
    )
    path = write_notebook(folder / "fill.ipynb", [load, *cells])
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "fill.ipynb"))
    return {item.cell: item for item in found}


def reference_table(candidate: Candidate, folder: Path) -> pd.DataFrame:
    """The reference's value, run by this interpreter on the data, as a CSV round trip."""
    last = candidate.reference.rstrip().splitlines()[-1]
    script = candidate.reference + f"\nprint(({last}).to_csv(index=False))\n"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return pd.read_csv(pd.io.common.StringIO(done.stdout))


def down_the_column(values: list, forward: bool, limit: int | None = None) -> list:
    """'the nearest non-missing value above (or below) it', at most `limit` into a gap."""
    order = range(len(values)) if forward else range(len(values) - 1, -1, -1)
    out, last, run = list(values), None, 0
    for i in order:
        if pd.isna(values[i]):
            run += 1
            if last is not None and (limit is None or run <= limit):
                out[i] = last
        else:
            last, run = values[i], 0
    return out


def straight_line(values: list[float]) -> list[float]:
    """'on the straight line between the nearest non-missing values above and below,
    rows equally spaced; after the last value that value, before the first missing'."""
    known = [i for i, v in enumerate(values) if not math.isnan(v)]
    out = []
    for i, v in enumerate(values):
        before = [k for k in known if k <= i]
        after = [k for k in known if k >= i]
        if not math.isnan(v) or not before:
            out.append(v)
        elif not after:
            out.append(values[before[-1]])
        else:
            a, b = before[-1], after[0]
            out.append(values[a] + (values[b] - values[a]) * (i - a) / (b - a))
    return out


def task(found: dict, cell: int) -> Candidate:
    item = found[cell]
    assert isinstance(item, Candidate), (item.reason, item.detail)  # type: ignore[union-attr]
    return item


def same(column: pd.Series, expected: list) -> bool:
    return all(
        (pd.isna(a) and pd.isna(b)) or a == pytest.approx(b)
        for a, b in zip(column.tolist(), expected, strict=True)
    )


@pytest.mark.timeout(60)
def test_filled_tables_are_stated_and_the_reference_does_what_the_words_say(
    tmp_path: Path,
) -> None:
    steps = {
        1: ("df.ffill()", "filling each missing value with the nearest non-missing value above "
            "it in its column"),
        2: ("df.bfill(limit=1)", "filling each missing value with the nearest non-missing "
            "value below it in its column, at most 1 cell into each run of missing values"),
        3: ("df.interpolate()", "filling each missing value of each numeric column by "
            "straight-line interpolation between the nearest non-missing values above and "
            "below it, as if the rows were equally spaced; missing values after the last "
            "non-missing value take that value, those before the first stay missing, text "
            "columns are left as they are"),
        4: ("df.replace(-99999, np.nan)", "replacing each value equal to -99999 with a "
            "missing value"),
        5: ("df.replace({'windspeed': -99999, 'event': 'no event'}, 0)", "replacing each "
            "value equal to -99999 in `windspeed` or 'no event' in `event` with 0"),
        6: ("df.replace({-99999: np.nan, 'no event': 'Sunny'})", "replacing each value "
            "equal to -99999 with a missing value, and each value equal to 'no event' with "
            "'Sunny'"),
    }  # fmt: skip
    frames = {
        1: WEATHER.ffill(),
        2: WEATHER.bfill(limit=1),
        3: WEATHER.assign(**{c: WEATHER[c].interpolate() for c in ("temperature", "windspeed")}),
        4: WEATHER.replace(-99999, NAN),
        5: WEATHER.replace({"windspeed": -99999, "event": "no event"}, 0),
        6: WEATHER.replace({-99999: NAN, "no event": "Sunny"}),
    }
    cells = [
        code_cell(f"new_df = {code}\nnew_df", [html_result(frames[n])])
        for n, (code, _) in steps.items()
    ]
    numeric = WEATHER[["temperature", "windspeed"]].interpolate()
    cells.append(
        code_cell("df[['temperature', 'windspeed']].interpolate()", [html_result(numeric)])
    )
    found = extract(tmp_path, cells)
    for number, (_, words) in steps.items():
        question = task(found, number).question.text
        assert question == f"Compute the data in `weather_data.csv` (after {words}).", question
    temperature, wind = WEATHER["temperature"].tolist(), WEATHER["windspeed"].tolist()
    ffilled = reference_table(task(found, 1), tmp_path)
    assert same(ffilled["temperature"], down_the_column(temperature, forward=True))
    assert same(ffilled["event"], down_the_column(WEATHER["event"].tolist(), forward=True))
    bfilled = reference_table(task(found, 2), tmp_path)
    assert same(bfilled["temperature"], down_the_column(temperature, False, limit=1))
    # pandas 1.5 (the task's container) leaves a frame's text columns alone; pandas 3
    # (this interpreter) refuses them, so the reference is run on the numeric columns.
    numeric = task(found, 7)
    assert numeric.question.text == (
        "Compute the columns 'temperature', 'windspeed' of the data in `weather_data.csv` "
        "(then, on the result: filling each missing value of each numeric column by "
        "straight-line interpolation between the nearest non-missing values above and below "
        "it, as if the rows were equally spaced; missing values after the last non-missing "
        "value take that value, those before the first stay missing, text columns are left "
        "as they are)."
    )
    lined = reference_table(numeric, tmp_path)
    assert same(lined["temperature"], straight_line(temperature))
    assert same(lined["windspeed"], straight_line(wind))
    replaced = reference_table(task(found, 4), tmp_path)
    assert same(replaced["windspeed"], [NAN if v == -99999 else v for v in wind])
    per_column = reference_table(task(found, 5), tmp_path)
    assert same(per_column["windspeed"], [0 if v == -99999 else v for v in wind])
    assert per_column["event"].tolist()[4] == "0"  # the CSV round trip reads 0 as text
    mapped = reference_table(task(found, 6), tmp_path)
    assert mapped["event"].tolist()[4] == "Sunny"


@pytest.mark.timeout(60)
def test_fillna_with_a_method_is_the_same_step_in_words(tmp_path: Path) -> None:
    """pandas 1.5 (the task's container) spells the fills `fillna(method=...)`; the
    words are those of `ffill()` / `bfill()`, along a row with `axis='columns'`."""
    steps = {
        1: ("df.fillna(method='ffill')", "above it in its column"),
        2: ("df.fillna(method='bfill', axis='columns')", "to its right in its row"),
        3: ("df.fillna(method='pad', limit=2)", "above it in its column, at most 2 cells "
            "into each run of missing values"),
    }  # fmt: skip
    cells = [code_cell(f"{code}", [html_result(WEATHER.head(2))]) for code, _ in steps.values()]
    found = extract(tmp_path, cells)
    for number, (_, words) in steps.items():
        assert task(found, number).question.text == (
            "Compute the data in `weather_data.csv` (after filling each missing value with "
            f"the nearest non-missing value {words})."
        )


@pytest.mark.timeout(60)
def test_fills_that_cannot_be_stated_exactly_stay_refused(tmp_path: Path) -> None:
    steps = [
        "df.replace('no', 'yes', regex=True)",  # parts of text
        "df.interpolate(method='polynomial', order=2)",
        "df.fillna(method='ffill', downcast='infer')",
        "df.ffill(axis=2)",
        "df.replace({'event': {'Rain': 'Wet'}})",  # nested: per column, per value
        "df.replace(df.windspeed.min(), 0)",  # a value computed from the data
        "df['event'].ffill(axis='columns')",  # a column has no row to fill along
        "df.replace(-99999, None)",  # pandas 1.x fills from the row above, not a missing value
    ]
    cells = [code_cell(code, [html_result(WEATHER.head(2))]) for code in steps]
    found = extract(tmp_path, cells)
    for number, code in enumerate(steps, 1):
        item = found[number]
        assert isinstance(item, CellSkip) and item.reason == "question.undescribed", code


@pytest.mark.timeout(60)
def test_the_size_of_a_filled_table_is_still_a_look_up(tmp_path: Path) -> None:
    """Filling changes values, never the number of rows: `df.shape`, `len(df)`,
    `df.shape[0]` after fills alone read the file's size; the filled table is a task."""
    cells = [
        code_cell("df = df.fillna(0)\ndf = df.replace(-99999, 0)"),
        code_cell("df.shape", [result("(6, 4)")]),
        code_cell("len(df)", [result("6")]),
        code_cell("df.shape[0]", [result("6")]),
        code_cell("df.size", [result("24")]),
        code_cell("df", [html_result(WEATHER.replace(-99999.0, 0.0).astype(object).fillna(0))]),
    ]
    found = extract(tmp_path, cells)
    for number in (2, 3, 4, 5):
        item = found[number]
        assert isinstance(item, CellSkip), number
        assert item.reason in ("question.trivial-lookup", "question.count-without-filter"), item
    table = task(found, 6)
    assert table.question.text == (
        "Compute the data in `weather_data.csv` (after filling every missing value with 0, "
        "then replacing each value equal to -99999 with 0)."
    )
