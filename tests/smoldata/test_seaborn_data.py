"""seaborn's example datasets (`sns.load_dataset('tips')`) are read from a local copy
put in seaborn's cache folder, with seaborn's own loader; any other `load_dataset`
(Hugging Face's) and a call seaborn would answer with a download stay network reads."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.publish.portable import local_only_bases, portable_dockerfile
from repo2rlenv.runtime.offline_bases import (
    DATA_PACKAGES,
    OFFLINE_BASES,
    OFFLINE_DATA_IMAGE,
    base_for_modules,
    choose_offline_base,
)
from repo2rlenv.settings import OFFLINE_BASE_IMAGE
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.cellcode import hazards
from smoldataenvs.datafiles import DataError, FileIndex, plan_data
from smoldataenvs.describe import Describer
from smoldataenvs.seaborn_data import SEABORN_ENV, dataset_loads
from smoldataenvs.task import dockerfile
from tests.smoldata.helpers import code_cell, result, write_notebook

TIPS = "total_bill,tip,sex,smoker,day,time,size\n16.99,1.01,Female,No,Sun,Dinner,2\n"


def _loads(code: str) -> list[str | None]:
    return [name for _, name in dataset_loads(ast.parse(code).body)]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("import seaborn as sns\nt = sns.load_dataset('tips')", ["tips"]),
        ('import seaborn\nt = seaborn.load_dataset("iris")', ["iris"]),
        ("from seaborn import load_dataset\nt = load_dataset('penguins')", ["penguins"]),
        ("import seaborn as sns\nt = sns.load_dataset('tips', cache=True)", ["tips"]),
        ("import seaborn as sns\nt = sns.load_dataset('tips', index_col=0)", ["tips"]),
        # a download or another reading: not a local copy's
        ("import seaborn as sns\nt = sns.load_dataset('tips', cache=False)", [None]),
        ("import seaborn as sns\nt = sns.load_dataset('tips', data_home='d')", [None]),
        ("import seaborn as sns\nt = sns.load_dataset(name)", [None]),
        ("import seaborn as sns\nt = sns.load_dataset('tips', **options)", [None]),
        ("import seaborn as sns\nt = sns.load_dataset('../../etc/x')", [None]),
        # not seaborn's, or not read as a load by its name
        ("from seaborn import load_dataset as ld\nt = ld('penguins')", []),
        ("from datasets import load_dataset\nt = load_dataset('imdb')", []),
        ("import datasets\nt = datasets.load_dataset('imdb')", []),
        ("t = sns.load_dataset('tips')", []),  # `sns` imported nowhere in the slice
    ],
)
def test_which_calls_are_seaborns_dataset_loads(code: str, names: list) -> None:
    assert _loads(code) == names


@pytest.mark.timeout(10)
def test_only_hugging_faces_load_dataset_is_a_network_hazard_here() -> None:
    seaborn = ast.parse("import seaborn as sns\nt = sns.load_dataset('tips')").body
    assert hazards(seaborn) == []
    hub = ast.parse("from datasets import load_dataset\nt = load_dataset('imdb')").body
    assert hazards(hub) == [("code.network", "load_dataset")]


def _plan(code: str, notebook_dir: Path, roots: list[Path]):
    return plan_data(ast.parse(code).body, notebook_dir, FileIndex(roots))


@pytest.mark.timeout(10)
def test_a_local_copy_goes_to_seaborns_cache_folder(tmp_path: Path) -> None:
    checkout = tmp_path / "seaborn-data-checkout"
    checkout.mkdir()
    (checkout / "tips.csv").write_text(TIPS)
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir()
    plan = _plan("import seaborn as sns\nt = sns.load_dataset('tips')", notebook_dir, [checkout])
    [item] = plan.files.values()
    assert (item.target, item.local) == ("seaborn-data/tips.csv", checkout / "tips.csv")
    assert item.reference == "seaborn.load_dataset('tips')"
    assert plan.rewrites == {}  # the call is kept: seaborn's loader prepares the table
    assert plan.environment == SEABORN_ENV
    # a plan without seaborn's data sets nothing
    (notebook_dir / "x.csv").write_text("a\n1\n")
    assert (
        _plan("import pandas as pd\nx = pd.read_csv('x.csv')", notebook_dir, []).environment == {}
    )


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("code", "detail"),
    [
        (
            "import seaborn as sns\nt = sns.load_dataset('penguins')",
            "no local file named penguins.csv",
        ),
        ("import seaborn as sns\nt = sns.load_dataset('tips', cache=False)", "only a plain"),
    ],
)
def test_without_a_local_copy_it_stays_a_download(tmp_path: Path, code: str, detail: str) -> None:
    (tmp_path / "tips.csv").write_text(TIPS)
    with pytest.raises(DataError) as caught:
        _plan(code, tmp_path, [])
    assert caught.value.reason == "code.network" and detail in caught.value.detail


@pytest.mark.timeout(10)
def test_a_task_needing_seaborn_starts_from_the_offline_data_base() -> None:
    assert base_for_modules(OFFLINE_BASE_IMAGE, ["pandas", "seaborn"]) == OFFLINE_DATA_IMAGE
    assert base_for_modules(OFFLINE_BASE_IMAGE, ["scipy"]) == OFFLINE_DATA_IMAGE
    assert base_for_modules(OFFLINE_BASE_IMAGE, ["numpy", "pandas"]) == OFFLINE_BASE_IMAGE
    # a base with pip installs the pinned package itself
    assert base_for_modules("python:3.12-slim", ["seaborn"]) == "python:3.12-slim"
    text = dockerfile(OFFLINE_BASE_IMAGE, ["seaborn"], SEABORN_ENV)
    assert text.splitlines()[:2] == [
        f"FROM {OFFLINE_DATA_IMAGE}",
        "ENV SEABORN_DATA=/workspace/seaborn-data",
    ]
    # the data base has what the pinned packages would install
    assert {"python3-seaborn", "python3-scipy", "python3-sklearn"} <= set(DATA_PACKAGES)
    assert set(DATA_PACKAGES) <= set(OFFLINE_BASES[OFFLINE_DATA_IMAGE].packages)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("python", ["3.10", "3.11", "3.11.4", "3.12"])
def test_no_spec_python_is_given_the_data_base(python: str) -> None:
    chosen = choose_offline_base(python, OFFLINE_BASE_IMAGE)
    assert chosen is not None and not chosen.data and chosen.tag != OFFLINE_DATA_IMAGE


@pytest.mark.timeout(10)
def test_the_data_base_is_published_with_its_own_packages() -> None:
    text = f"FROM {OFFLINE_DATA_IMAGE}\nRUN true\n"
    assert local_only_bases(text) == [(1, OFFLINE_DATA_IMAGE)]
    portable = portable_dockerfile(text)
    assert "python3-seaborn" in portable and OFFLINE_DATA_IMAGE not in portable
    plain = portable_dockerfile(f"FROM {OFFLINE_BASE_IMAGE}\n")
    assert "python3-seaborn" not in plain and "python3-pandas" in plain


def _tips_notebook(root: Path) -> tuple[Path, Path]:
    """A tutorial that loads seaborn's `tips` and prints a mean; the copy of the dataset
    in a separate folder, as a checkout of mwaskom/seaborn-data would be."""
    data = root / "seaborn-data-checkout"
    data.mkdir(parents=True)
    rows = ["16.99,1.01,Female,No,Sun,Dinner,2", "10.34,1.66,Male,No,Sun,Dinner,3",
            "21.01,3.50,Male,No,Sat,Dinner,3", "23.68,3.31,Male,No,Sat,Dinner,2"]  # fmt: skip
    (data / "tips.csv").write_text(TIPS.splitlines()[0] + "\n" + "\n".join(rows) + "\n")
    notebooks = root / "notebooks"
    write_notebook(
        notebooks / "tips.ipynb",
        [
            code_cell("import seaborn as sns\ntips = sns.load_dataset('tips')"),
            code_cell("tips[tips['day'] == 'Sun']['tip'].sum()", [result("2.67")]),
        ],
    )
    return notebooks, data


@pytest.mark.timeout(60)
def test_a_tutorial_on_a_seaborn_dataset_becomes_a_task(tmp_path: Path) -> None:
    notebooks, data = _tips_notebook(tmp_path)
    options = NotebookOptions(
        dataset=str(notebooks), reproduce=False, base_image=OFFLINE_BASE_IMAGE, data_dir=[data]
    )
    events = list(NotebookPipeline(options).events())
    [draft] = [e for e in events if isinstance(e, Draft)]
    files = {f.path: f.content for f in draft.bundle.files}
    assert files["environment/workspace/seaborn-data/tips.csv"] == (data / "tips.csv").read_bytes()
    assert (
        files["environment/Dockerfile"]
        .decode()
        .startswith(f"FROM {OFFLINE_DATA_IMAGE}\nENV SEABORN_DATA=/workspace/seaborn-data\n")
    )
    assert b"sns.load_dataset('tips')" in files["solution/reference.py"]  # kept as written
    instruction = draft.bundle.instruction
    assert "`seaborn-data/tips.csv`" in instruction
    assert "seaborn.load_dataset('tips')" in instruction
    block = draft.bundle.config.metadata.model_extra["smoldataenvs"]
    [recorded] = block["data_files"]
    assert recorded["referenced_as"] == "seaborn.load_dataset('tips')"
    assert json.loads(files["tests/expected.json"])["value"] == 2.67
    # without the copy the cell is a download, counted
    options = options.model_copy(update={"data_dir": []})
    [skip] = [e for e in NotebookPipeline(options).events() if isinstance(e, Skip)]
    assert skip.reason == "code.network" and "tips.csv" in skip.detail


@pytest.mark.docker
@pytest.mark.extended
@pytest.mark.timeout(900)
def test_the_reference_loads_the_copy_with_seaborn_in_its_container(
    docker_ready: str, tmp_path: Path
) -> None:
    """The real thing: the task's image (on the offline base, its data variant, built
    here if absent: some 2 minutes and 1.4 GB, hence `extended`), seaborn's own loader
    reading the copy through SEABORN_DATA in a container without network, and the
    saved answer reproduced."""
    notebooks, data = _tips_notebook(tmp_path)
    options = NotebookOptions(
        dataset=str(notebooks), base_image=docker_ready, data_dir=[data], jobs=1
    )
    events = list(NotebookPipeline(options).events())
    assert not [e for e in events if isinstance(e, Skip)]
    [draft] = [e for e in events if isinstance(e, Draft)]
    [check] = [
        c for c in draft.bundle.config.metadata.repo2rlenv.checks if c.rule_id.endswith("reproduce")
    ]
    assert (check.status, check.rewards) == ("passed", [1.0])


@pytest.mark.timeout(10)
def test_reader_options_seaborn_passes_on_are_stated_or_refused() -> None:
    describer = Describer({}, {"seaborn.load_dataset('exercise')": "seaborn-data/exercise.csv"})

    def phrase(code: str) -> str | None:
        return describer.phrase(ast.parse(code).body[0].value)  # type: ignore[attr-defined]

    plain = phrase("sns.load_dataset('exercise')")
    assert plain is not None and "`seaborn-data/exercise.csv`" in plain
    labelled = phrase("sns.load_dataset('exercise', index_col=0)")
    assert labelled is not None and "column 0 (counting from 0) as the row labels" in labelled
    assert phrase("sns.load_dataset('exercise', nrows=5)") is None  # changes the table
    assert phrase("sns.load_dataset('tips')") is None  # no copy planned: not our data
