"""A sorted table over the size cap, or shown cut, becomes a question about its top rows
(issue #32, point 1): the reference computes exactly `(<sorted>).head(5)`, the grader
checks those rows, and an unsorted frame over the cap stays refused."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from repo2rlenv.bundle import find_task_dirs
from repo2rlenv.emit import Draft, Skip, emit_all
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.grader import AnswerError
from smoldataenvs.saved_output import parse_table
from tests.smoldata.helpers import code_cell, write_notebook
from tests.smoldata.test_tables import html_result, solve_and_check

FRAME = pd.DataFrame(
    {
        "city": [f"c{i:02d}" for i in range(30)],
        "rain": [3.0 + ((i * 7) % 30) * 1.5 for i in range(30)],
    }
)


def sorted_notebook(folder: Path) -> None:
    (folder / "data").mkdir(parents=True)
    FRAME.to_csv(folder / "data" / "rain.csv", index=False)
    data = pd.read_csv(folder / "data" / "rain.csv", index_col="city")
    wettest = data.sort_values("rain", ascending=False)
    with pd.option_context("display.max_rows", 8, "display.min_rows", 8):
        cut = html_result(data.sort_values("rain"))  # 4 leading rows shown
    cells = [
        code_cell("import pandas as pd\ndata = pd.read_csv('data/rain.csv', index_col='city')"),
        code_cell("data.sort_values('rain', ascending=False)", [html_result(wettest)]),
        code_cell("data.sort_values('rain')", [cut]),
        code_cell("data.assign(double=data['rain'] * 2)", [html_result(data.assign(double=1))]),
    ]
    write_notebook(folder / "rain.ipynb", cells)


@pytest.mark.timeout(120)
def test_a_sorted_table_over_the_cap_asks_for_its_top_rows(tmp_path: Path) -> None:
    sorted_notebook(tmp_path / "nb")
    out = tmp_path / "out"
    events: list = []
    options = NotebookOptions(dataset=str(tmp_path / "nb"), reproduce=False, base_image="b:1")
    emit_all(NotebookPipeline(options), out, on_event=events.append)
    drafts = [e.bundle for e in events if isinstance(e, Draft)]
    reasons = {e.record_id.rsplit("-", 1)[-1]: e.reason for e in events if isinstance(e, Skip)}
    # Unsorted: no defined top rows; nor is its row count a question (nothing filtered).
    assert reasons.get("3") == "question.count-without-filter"
    cells = sorted(b.config.metadata.model_extra["smoldataenvs"]["cell"] for b in drafts)
    assert cells == [1, 2]
    tasks = {t.name: t for t in find_task_dirs([out])}
    wettest = next(t for n, t in tasks.items() if "-c1-" in n)
    expected = json.loads((wettest / "tests" / "expected.json").read_text())
    top = FRAME.sort_values("rain", ascending=False).head(5)
    assert [row[0] for row in expected["value"]] == list(top["city"])
    instruction = (wettest / "instruction.md").read_text()
    assert "the first 5 entries of" in instruction
    assert "sorted by `rain` from largest to smallest" in instruction
    reference = (wettest / "solution" / "reference.py").read_text()
    assert "(data.sort_values('rain', ascending=False)).head(5)" in reference
    solve_and_check(wettest, tmp_path, wrong=("46.5", "47.5"))
    driest = next(t for n, t in tasks.items() if "-c2-" in n)
    expected = json.loads((driest / "tests" / "expected.json").read_text())
    assert [row[0] for row in expected["value"]] == list(FRAME.sort_values("rain")["city"][:4])
    assert "the first 4 entries of" in (driest / "instruction.md").read_text()


@pytest.mark.timeout(10)
def test_a_cut_display_must_show_the_rows_asked_for() -> None:
    with pd.option_context("display.max_rows", 4, "display.min_rows", 4):
        markup = FRAME.set_index("city")._repr_html_()
    with pytest.raises(AnswerError) as caught:
        parse_table(markup, first=5)
    assert caught.value.reason == "answer.table-truncated"
    assert len(parse_table(markup, first=2)["value"]) == 2


@pytest.mark.timeout(60)
def test_a_long_sorted_series_asks_for_its_top_entries(tmp_path: Path) -> None:
    """`value_counts()` over 30 cities printed cut (`...`), and a sorted column of 30
    values printed whole (over the 20-item cap): each becomes its top 5 entries."""
    from smoldataenvs.candidates import Candidate, CandidateExtractor
    from smoldataenvs.datafiles import FileIndex
    from smoldataenvs.notebook import load_notebook
    from tests.smoldata.helpers import result

    cities = [f"c{i:02d}" for i in range(30) for _ in range(i + 1)]
    (tmp_path / "visits.csv").write_text("city\n" + "\n".join(cities) + "\n")
    data = pd.read_csv(tmp_path / "visits.csv")
    with pd.option_context("display.max_rows", 10, "display.min_rows", 10):
        counts = repr(data["city"].value_counts())
    with pd.option_context("display.max_rows", 60):
        ranked = repr(data["city"].value_counts().sort_values())
    cells = [
        code_cell("import pandas as pd\ndata = pd.read_csv('visits.csv')"),
        code_cell("data['city'].value_counts()", [result(counts)]),
        code_cell("data['city'].value_counts().sort_values()", [result(ranked)]),
    ]
    path = write_notebook(tmp_path / "visits.ipynb", cells)
    found = list(CandidateExtractor(FileIndex([])).extract(load_notebook(path, "visits.ipynb")))
    common, rare = [f for f in found if not getattr(f, "part", 0)]
    # Keys past the top 5 of each long display are asked by name (derived_keys): the
    # cut one shows counts 5..1 past them (1 is never asked), the whole one 6..30.
    others = [(f.cell, f.answer["value"]) for f in found if getattr(f, "part", 0)]
    assert others == [(1, 5), (1, 4), (1, 3), (2, 30), (2, 22), (2, 14)]
    assert isinstance(common, Candidate), common
    assert common.answer["value"] == [[f"c{i:02d}", i + 1] for i in range(29, 24, -1)]
    assert common.reference.rstrip().endswith("(data['city'].value_counts()).head(5)")
    assert "the first 5 entries of the count of each distinct value" in common.question.text
    assert isinstance(rare, Candidate), rare
    assert rare.answer["value"] == [[f"c{i:02d}", i + 1] for i in range(5)]
    assert "sorted from smallest to largest" in rare.question.text
