"""Data references: relative paths, same-repository URLs (even stale ones), Kaggle
paths and extra search roots resolve to local files; anything else is a reasoned skip."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from smoldataenvs.datafiles import DataError, FileIndex, apply_rewrites, plan_data
from tests.conftest import needs_samples
from tests.smoldata.helpers import EURO, NOTEBOOKS, TITANIC


def plan(code: str, notebook_dir: Path, roots: list[Path] | None = None):
    return plan_data(ast.parse(code).body, notebook_dir, FileIndex(roots or []))


@needs_samples
def test_raw_github_url_is_matched_by_file_name() -> None:
    folder = (NOTEBOOKS / EURO).parent
    url = (
        "https://raw.githubusercontent.com/guipsamora/pandas_exercises/master/"
        "02_Filtering_%26_Sorting/Euro12/Euro_2012_stats_TEAM.csv"
    )
    result = plan(f"import pandas as pd\neuro12 = pd.read_csv('{url}', sep=',')", folder)
    assert list(result.files) == ["Euro_2012_stats_TEAM.csv"]
    assert result.rewrites == {url: "Euro_2012_stats_TEAM.csv"}
    code = apply_rewrites(f"pd.read_csv('{url}')", result.rewrites)
    assert code == "pd.read_csv('Euro_2012_stats_TEAM.csv')"


@needs_samples
def test_a_stale_url_still_finds_the_local_copy() -> None:
    folder = (NOTEBOOKS / TITANIC).parent
    stale = "https://raw.githubusercontent.com/x/y/master/Visualization/Titanic_Desaster/train.csv"
    result = plan(f"url = '{stale}'", folder)
    item = result.files["train.csv"]
    assert item.local == folder / "train.csv"
    assert item.reference == stale and len(item.sha256) == 64


def test_relative_paths_keep_the_notebook_layout(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.csv").write_text("a\n1\n")
    result = plan("pd.read_csv('./data/x.csv')", tmp_path)
    assert list(result.files) == ["data/x.csv"]
    assert result.rewrites == {}  # the same relative path works in /workspace


@pytest.mark.timeout(10)
def test_a_path_that_climbs_back_into_the_notebook_folder_is_normalised(tmp_path: Path) -> None:
    """flegaspi700/AI-Learning-Journey reads `../001_Data_Analysis/Data/coaster_db.csv`
    from inside `001_Data_Analysis/`: the bundle path was `environment/workspace/../…`,
    which the bundle model refuses (the run crashed once a cell of it became a task)."""
    (tmp_path / "nb" / "Data").mkdir(parents=True)
    (tmp_path / "nb" / "Data" / "c.csv").write_text("a\n1\n")
    result = plan("pd.read_csv('../nb/Data/c.csv')", tmp_path / "nb")
    assert list(result.files) == ["Data/c.csv"]
    assert result.rewrites == {"../nb/Data/c.csv": "Data/c.csv"}


def test_paths_outside_the_notebook_folder_move_under_data(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "y.csv").write_text("b\n2\n")
    (tmp_path / "nb").mkdir()
    result = plan("pd.read_csv('../shared/y.csv')", tmp_path / "nb")
    assert list(result.files) == ["data/y.csv"]
    assert result.rewrites == {"../shared/y.csv": "data/y.csv"}


def test_kaggle_inputs_are_found_by_name_in_extra_roots(tmp_path: Path) -> None:
    downloads = tmp_path / "downloads" / "titanic"
    downloads.mkdir(parents=True)
    (downloads / "train.csv").write_text("Survived\n1\n")
    notebook_dir = tmp_path / "kernel"
    notebook_dir.mkdir()
    code = "train = pd.read_csv('/kaggle/input/titanic/train.csv')"
    with pytest.raises(DataError) as caught:
        plan(code, notebook_dir)
    assert caught.value.reason == "data.missing"
    result = plan(code, notebook_dir, [tmp_path / "downloads"])
    assert list(result.files) == ["kaggle/input/titanic/train.csv"]
    assert apply_rewrites(code, result.rewrites) == (
        "train = pd.read_csv('kaggle/input/titanic/train.csv')"
    )


def test_kaggle_folder_joined_with_a_name(tmp_path: Path) -> None:
    (tmp_path / "test.csv").write_text("a\n")
    code = "base = '/kaggle/input/titanic/'\ntest = pd.read_csv(base + 'test.csv')"
    result = plan(code, tmp_path)
    assert list(result.files) == ["kaggle/input/titanic/test.csv"]
    assert apply_rewrites(code, result.rewrites).startswith("base = 'kaggle/input/titanic/'")


def test_a_url_with_no_local_file_is_a_network_read(tmp_path: Path) -> None:
    with pytest.raises(DataError) as caught:
        plan("pd.read_csv('https://example.org/elsewhere.csv')", tmp_path)
    assert caught.value.reason == "code.network"
    assert "elsewhere.csv" in caught.value.detail


def test_files_the_slice_writes_are_not_inputs(tmp_path: Path) -> None:
    result = plan("df.to_csv('out.csv')\nplt.savefig('figure.png')", tmp_path)
    assert result.files == {}


def test_dataset_key_depends_on_contents_not_names(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "one.csv").write_text("same\n")
    (tmp_path / "b" / "two.csv").write_text("same\n")
    (tmp_path / "b" / "three.csv").write_text("other\n")
    first = plan("pd.read_csv('one.csv')", tmp_path / "a")
    second = plan("pd.read_csv('two.csv')", tmp_path / "b")
    third = plan("pd.read_csv('three.csv')", tmp_path / "b")
    assert first.dataset_key == second.dataset_key != third.dataset_key
