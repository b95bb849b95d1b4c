"""Broken and odd notebooks are skipped with stable reasons; nothing crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, RecordRead, Skip
from smoldataenvs import NotebookOptions, NotebookPipeline, notebook
from smoldataenvs.notebook import NotebookError, load_notebook, parse_notebook
from tests.conftest import needs_samples
from tests.smoldata.helpers import (
    PYTHON2,
    code_cell,
    markdown_cell,
    result,
    sample,
    stream,
    write_notebook,
)

CSV = "city,people\nOslo,700000\nBergen,285000\nTromso,77000\n"


def good_cells() -> list[dict]:
    return [
        code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
        markdown_cell("How many people live in the three cities together?"),
        code_cell("cities['people'].sum()", [result("1062000")]),
    ]


def run_pipeline(root: Path) -> list:
    options = NotebookOptions(dataset=str(root), reproduce=False, base_image="example/base:1")
    return list(NotebookPipeline(options).events())


def reasons(events: list) -> dict[str, str]:
    return {e.record_id: e.reason for e in events if isinstance(e, Skip)}


@needs_samples
def test_the_python2_sample_is_skipped_as_python2() -> None:
    with pytest.raises(NotebookError) as caught:
        sample(PYTHON2)
    assert caught.value.reason == "notebook.python2"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "notebook.invalid-json"),
        (b"\xff\xfe\x00garbage", "notebook.invalid-json"),
        (b"[1, 2, 3]", "notebook.invalid-json"),
        (json.dumps({"nbformat": 2, "cells": []}).encode(), "notebook.unsupported-version"),
        (
            json.dumps({"nbformat": 4, "cells": "nope", "metadata": {}}).encode(),
            "notebook.bad-structure",
        ),
        (json.dumps({"nbformat": 4, "cells": [], "metadata": {}}).encode(), "notebook.no-code"),
        (
            json.dumps(
                {
                    "nbformat": 4,
                    "metadata": {"kernelspec": {"language": "R", "name": "ir"}},
                    "cells": [code_cell("1 + 1", [result("2")])],
                }
            ).encode(),
            "notebook.not-python",
        ),
    ],
)
def test_unreadable_notebooks_have_reasons(content: bytes, reason: str) -> None:
    with pytest.raises(NotebookError) as caught:
        parse_notebook(content, Path("x.ipynb"), "x.ipynb")
    assert caught.value.reason == reason


def test_missing_outputs_are_a_record_skip(tmp_path: Path) -> None:
    cells = good_cells()
    for cell in cells:
        cell.pop("outputs", None)
    path = write_notebook(tmp_path / "no-outputs.ipynb", cells)
    with pytest.raises(NotebookError) as caught:
        load_notebook(path, "no-outputs.ipynb")
    assert caught.value.reason == "notebook.no-outputs"


def test_oversized_files_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_notebook(tmp_path / "big.ipynb", good_cells())
    monkeypatch.setattr(notebook, "MAX_NOTEBOOK_BYTES", path.stat().st_size - 1)
    with pytest.raises(NotebookError) as caught:
        load_notebook(path, "big.ipynb")
    assert caught.value.reason == "notebook.too-large"


def test_nbformat3_notebooks_are_upgraded() -> None:
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": "old"},
        "worksheets": [
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "input": "x = 41 + 1\nx",
                        "language": "python",
                        "outputs": [{"output_type": "pyout", "text": "42", "prompt_number": 1}],
                    }
                ]
            }
        ],
    }
    parsed = parse_notebook(json.dumps(v3).encode(), Path("old.ipynb"), "old.ipynb")
    [cell] = parsed.code_cells
    assert cell.source == "x = 41 + 1\nx"
    assert [(o.kind, o.text) for o in cell.outputs] == [("execute_result", "42")]


def test_a_folder_of_broken_notebooks_yields_reasons_and_still_its_good_task(
    tmp_path: Path,
) -> None:
    root = tmp_path / "dataset"
    (root / "good").mkdir(parents=True)
    (root / "good" / "cities.csv").write_text(CSV)
    write_notebook(root / "good" / "cities.ipynb", good_cells())
    (root / "broken.ipynb").write_text('{"cells": [')
    write_notebook(root / "py2.ipynb", good_cells(), kernel="python2")
    write_notebook(root / "empty.ipynb", [code_cell("x = 1")])
    huge = good_cells()
    huge[2]["outputs"] = [stream("1\n" * 50_000)]
    (root / "huge").mkdir()
    (root / "huge" / "cities.csv").write_text(CSV)
    write_notebook(root / "huge" / "huge.ipynb", huge)
    nodata = good_cells()
    write_notebook(root / "nodata" / "cities.ipynb", nodata)
    errored = good_cells()
    errored[2]["outputs"] = [
        {"output_type": "error", "ename": "KeyError", "evalue": "'people'", "traceback": []}
    ]
    write_notebook(root / "good" / "errored.ipynb", errored)
    (root / ".ipynb_checkpoints").mkdir()
    write_notebook(root / ".ipynb_checkpoints" / "cities-checkpoint.ipynb", good_cells())

    events = run_pipeline(root)
    assert sum(isinstance(e, RecordRead) for e in events) == 7  # checkpoints are not read
    assert reasons(events) == {
        "broken.ipynb": "notebook.invalid-json",
        "py2.ipynb": "notebook.python2",
        "empty.ipynb": "notebook.no-outputs",
        "huge/huge.ipynb#cell-2": "output.too-long",
        "nodata/cities.ipynb#cell-2": "data.missing",
        "good/errored.ipynb#cell-2": "output.error",
    }
    drafts = [e for e in events if isinstance(e, Draft)]
    assert [d.bundle.config.metadata.repo2rlenv.source.record_id for d in drafts] == [
        "good/cities.ipynb#cell-2"
    ]
    record_skips = {e.record_id for e in events if isinstance(e, Skip) and e.stage == "record"}
    assert record_skips == {"broken.ipynb", "py2.ipynb", "empty.ipynb"}
