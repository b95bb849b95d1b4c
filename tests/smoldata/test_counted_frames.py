"""A frame shown by its first rows becomes the count of its rows (issue 32, yield): the
count is computed in the task's container, then passes the count gates. Conditions
the notebooks of an unseen corpus wrote are stated: a named mask, repeated rows, a
threshold the data gives. `pd.read_excel` brings its engine into the task's image."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.runtime.offline_bases import DATA_PACKAGES, OFFLINE_DATA_IMAGE
from repo2rlenv.settings import OFFLINE_BASE_IMAGE
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.candidates import Candidate, CellSkip, third_party
from smoldataenvs.cellcode import parse_cell
from smoldataenvs.compute_live import MARKER
from smoldataenvs.computed import Computed, read_computed
from smoldataenvs.describe import Describer
from smoldataenvs.row_count import cut_frame_count
from smoldataenvs.task import dockerfile
from tests.smoldata.helpers import code_cell, write_notebook
from tests.smoldata.test_tables import html_result
from tests.smoldata.test_yield_shapes import FRAME, extract, load, run_reference


def phrase(expression: str, **tables: str) -> str | None:
    describer = Describer({k: ast.parse(v, mode="eval").body for k, v in tables.items()}, {})
    return describer.phrase(ast.parse(expression, mode="eval").body)


def counted(source: str) -> str | None:
    reduced = cut_frame_count(parse_cell(1, source))
    return reduced.sanitized.splitlines()[-1] if reduced is not None else None


@pytest.mark.timeout(10)
def test_the_frame_a_cut_shows_is_the_one_counted() -> None:
    assert counted("merged = a.merge(b, on='k')\nmerged.head()") == "len(merged)"
    assert counted("t[t.x > 1].tail(3)") == "len(t[t.x > 1])"
    assert counted("t[:5]") == "len(t)" and counted("t.iloc[:5]") == "len(t)"
    assert counted("t.groupby('k').size()") == "len(t.groupby('k').size())"
    # A cut whose length is in the code, a summary or a transpose: nothing to count.
    for cut in ("t.nlargest(5, 'c')", "t.sample(3)", "t.describe()", "t.T", "x = t.head()"):
        assert counted(cut) is None, cut


@pytest.mark.timeout(60)
def test_a_filtered_frame_shown_by_its_head_asks_for_its_row_count(tmp_path: Path) -> None:
    wet = FRAME[FRAME["kind"] == "wet"]
    found = extract(
        tmp_path,
        [
            load(),
            code_cell("wet = data[data['kind'] == 'wet']\nwet.head(3)", [html_result(wet.head(3))]),
            code_cell("data.head(3)", [html_result(FRAME.head(3))]),
            code_cell("data.assign(x=1).head(2)", [html_result(FRAME.assign(x=1).head(2))]),
        ],
    )
    candidate = found[1]
    assert isinstance(candidate, Candidate), candidate
    assert candidate.computed_as == "count" and candidate.counted_frame == "wet.head(3)"
    assert "the number of rows (items) in" in candidate.question.text
    assert "`kind` equals 'wet'" in candidate.question.text
    assert candidate.reference.rstrip().endswith("len(wet)")
    assert run_reference(candidate, tmp_path) == str(len(wet))
    assert candidate.finish is not None
    [done] = candidate.finish(Computed({"kind": "number", "value": len(wet)}))
    assert isinstance(done, Candidate) and done.answer == {"kind": "number", "value": len(wet)}
    assert done.counted_frame == "wet.head(3)" and done.finish is None
    # The count a container gives is gated like a displayed one: all rows kept is refused.
    [whole] = candidate.finish(Computed({"kind": "number", "value": len(FRAME)}))
    assert isinstance(whole, CellSkip) and whole.reason == "question.count-of-whole-file"
    # The file as loaded, or a step that selects no rows: the cell's own refusal stands,
    # with why its count is not asked either.
    for cell, why in ((2, "question.trivial-lookup"), (3, "question.count-without-filter")):
        skip = found[cell]
        assert isinstance(skip, CellSkip) and skip.reason == "answer.table-unsorted-head"
        assert f"(its row count: {why})" in skip.detail


@pytest.mark.timeout(10)
def test_a_computed_count_is_a_whole_number() -> None:
    def line(answer: object) -> str:
        return f"noise\n{MARKER}{json.dumps({'answer': answer})}\n"

    good = read_computed(line({"kind": "number", "value": 26}), kind="count")
    assert good.answer == {"kind": "number", "value": 26}
    for value in (2.5, True, -1, "26"):
        bad = read_computed(line({"kind": "number", "value": value}), kind="count")
        assert (bad.answer, bad.reason) == (None, "count.answer-kind"), value
    listed = read_computed(line({"kind": "list", "value": [1]}), kind="count")
    assert listed.reason == "count.answer-kind"
    assert read_computed("Traceback ...", kind="count").reason == "count.compute-failed"
    assert read_computed("Traceback ...").reason == "plot.compute-failed"


@pytest.mark.timeout(60)
def test_without_containers_a_count_is_counted_as_not_computed(tmp_path: Path) -> None:
    wet = FRAME[FRAME["kind"] == "wet"]
    FRAME.to_csv(tmp_path / "rain.csv", index=False)
    write_notebook(
        tmp_path / "rain.ipynb",
        [load(), code_cell("data[data['kind'] == 'wet'].head()", [html_result(wet.head())])],
    )
    options = NotebookOptions(dataset=str(tmp_path), reproduce=False, base_image="b:1")
    events = list(NotebookPipeline(options).events())
    assert not [e for e in events if isinstance(e, Draft)]
    [skip] = [e for e in events if isinstance(e, Skip)]
    assert skip.reason == "count.not-computed" and "--no-validate" in skip.detail


@pytest.mark.timeout(10)
def test_conditions_an_unseen_corpus_wrote_are_stated() -> None:
    data = "pd.read_csv('e.csv')"
    named = phrase("len(df[neg])", df=data, neg="df.mag < 0")
    assert named is not None and "keeping only the rows where `mag` < 0" in named
    repeated = phrase("len(df[df.duplicated()])", df=data) or ""
    assert "where the row repeats an earlier row exactly" in repeated
    by_column = phrase("df[~df.duplicated('date')]", df=data) or ""
    assert "not (its 'date' value(s) repeat an earlier row's)" in by_column
    assert phrase("df[df.duplicated(keep=False)]", df=data) is None  # another `keep`
    above = phrase("len(df[df.mag > df.mag.mean()])", df=data) or ""
    assert "`mag` > (the mean of the `mag` column of the data in `e.csv`)" in above
    capped = phrase("df[df.mag <= q99]", df=data, q99="df['mag'].quantile(0.99)") or ""
    assert "`mag` ≤ (the 0.99 quantile" in capped
    # A column is compared row by row, an unknown name is not known: neither is stated.
    assert phrase("df[df.mag <= lim]", df=data, lim="df.mag") is None
    assert phrase("df[df.mag <= lim]", df=data) is None
    # The rows of a grouped aggregate are its groups, through steps that keep every row.
    groups = phrase("len(df.groupby(['a', 'b']).size().reset_index())", df=data)
    assert groups == (
        "the number of distinct combinations of 'a', 'b' (missing keys not counted) in the "
        "data in `e.csv`"
    )
    assert phrase("len(df.groupby(['a', 'b']).size().sort_values(ascending=False))", df=data) == (
        groups
    )  # a sort keeps every row
    one = phrase("len(df[df.c > 1].groupby('a')['x'].mean())", df=data)
    assert one == (
        "the number of distinct 'a' values (missing keys not counted) in the data in "
        "`e.csv`, keeping only the rows where `c` > 1"
    )


@pytest.mark.timeout(10)
def test_a_short_mapping_of_each_value_is_stated_as_its_code() -> None:
    data = "pd.read_csv('e.csv')"
    rooms = phrase("t.assign(bhk=t['size'].apply(lambda x: int(x.split(' ')[0])))", t=data)
    assert rooms == (
        "the data in `e.csv`, with the added column `bhk` = `size` with each value x "
        "replaced by `int(x.split(' ')[0])`"
    )
    flags = phrase("t.assign(ok=t['ok'].map({'yes': 1, 'no': 0}))['ok'].sum()", t=data) or ""
    assert "with its column `ok` recomputed as `ok` with each value replaced as" in flags
    assert "{'yes': 1, 'no': 0} says (a value it does not list: missing)" in flags
    # A name from elsewhere in the notebook, a second argument, long code: not stated.
    for code in (
        "t['x'].apply(lambda x: f(x))",
        "t['x'].apply(lambda x: x + offset)",
        "t['x'].apply(lambda x, y=1: x)",
        "t['x'].apply(round, args=(2,))",
        "t['x'].apply(lambda x: " + " + ".join(["x"] * 40) + ")",
        "t['x'].map({'a': b})",
    ):
        assert phrase(f"t.assign(y={code})['y'].sum()", t=data) is None, code


@pytest.mark.timeout(10)
def test_a_grouped_aggregate_with_its_keys_as_columns_is_stated() -> None:
    data = "pd.read_csv('e.csv')"
    table = phrase("t.groupby(['a', 'b']).size().reset_index()", t=data) or ""
    assert table.startswith("the number of rows of the data in `e.csv`, for each 'a', 'b'")
    assert table.endswith(", as a table with the group keys as columns")
    named = phrase("t.groupby('a')['x'].mean().reset_index(name='m')", t=data) or ""
    assert named.endswith(", as a table with the group keys as columns")
    # Any other table's row labels may be anything; `drop=True` loses the keys.
    assert phrase("t.reset_index()", t=data) is None
    assert phrase("t.groupby('a').size().reset_index(drop=True)", t=data) is None


@pytest.mark.timeout(10)
def test_read_excel_brings_its_engine_into_the_image() -> None:
    def modules(code: str) -> list[str]:
        return third_party(ast.parse(code).body)

    assert modules("import pandas as pd\nt = pd.read_excel('sales.xlsx')") == ["openpyxl", "pandas"]
    assert modules("import pandas as pd\nt = pd.read_excel('old.xls', 's')") == ["pandas", "xlrd"]
    assert modules("import pandas as pd\nt = pd.read_excel(path)") == ["openpyxl", "pandas"]
    assert modules("import pandas as pd\nt = pd.read_csv('a.csv')") == ["pandas"]
    # The offline data base has openpyxl from Debian (an offline base has no pip).
    assert "python3-openpyxl" in DATA_PACKAGES
    text = dockerfile(OFFLINE_BASE_IMAGE, ["openpyxl", "pandas"], {})
    assert text.startswith(f"FROM {OFFLINE_DATA_IMAGE}\n")


@pytest.mark.timeout(10)
def test_rows_whose_value_another_table_lists() -> None:
    """stefmolin's anomaly detection: `log[log.source_ip.isin(attacks.source_ip)]`, the
    attacks read with date converters (`converters={'start': np.datetime64}`)."""
    log = "pd.read_csv('log.csv')"
    attacks = (
        "pd.read_csv('attacks.csv', converters={'start': np.datetime64, 'end': pd.to_datetime})"
    )
    found = phrase("len(log[log.ip.isin(attacks.ip)])", log=log, attacks=attacks)
    assert found == (
        "the number of rows (items) in the data in `log.csv`, keeping only the rows where `ip` "
        "is one of the values in the `ip` column of the data in `attacks.csv`"
    )
    assert "not (`ip` is one of the values in the `ip` column" in (
        phrase("len(log[~log.ip.isin(attacks['ip'])])", log=log, attacks=attacks) or ""
    )
    # the values of something other than a column, or a converter that is not a date's
    assert phrase("len(log[log.ip.isin(attacks.head())])", log=log, attacks=attacks) is None
    assert phrase("len(log[log.ip.isin(attacks.ip, 1)])", log=log, attacks=attacks) is None
    floats = "pd.read_csv('attacks.csv', converters={'start': float})"
    assert phrase("len(log[log.ip.isin(attacks.ip)])", log=log, attacks=floats) is None
