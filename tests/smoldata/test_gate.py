"""Notebook drafts pass the gate session drafts pass (`repo2rlenv.gate`): the privacy
pass, then every static and semantic rule, before any container runs a reference.

Two real failures it closes: a notebook that read its data from the author's home
folder put that path (and the user name) into task.toml's `referenced_as`; and the one
task six real notebooks gave was "the first 10 entries" of a snow indicator, ten zeros,
which a guess made without the data passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.emit import Draft, Skip, emit_all
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.datafiles import apply_rewrites, recorded_reference
from tests.conftest import needs_samples
from tests.smoldata.helpers import NOTEBOOKS, code_cell, markdown_cell, result, write_notebook
from tests.smoldata.test_reproduce import judge, trial

BASE = "example/base:1"
SALES = "city,sales\nOslo,3\nBergen,5\nOslo,7\nTromso,11\n"
FOREIGN = re.compile(r"alicesmith|bobjones|/home/|[\\/]Users[\\/]", re.IGNORECASE)


class _RecordingReproducer:
    """A reference run that always reproduces, and remembers which tasks it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, bundle) -> object:
        self.ran.append(bundle.task_id)
        return judge(trial(reward=1.0, solution_exit_code=0, wall_s=1.0))


def _home_notebooks(root: Path) -> None:
    """Notebooks that read `data.csv` by the author's absolute paths: POSIX, Windows in
    a plain string (doubled backslashes in the source) and in a raw one."""
    root.mkdir(parents=True)
    (root / "data.csv").write_text(SALES)
    write_notebook(
        root / "posix.ipynb",
        [
            markdown_cell("Sales as alicesmith saved them in /home/alicesmith/work/data.csv"),
            code_cell("import pandas as pd\ndf = pd.read_csv('/home/alicesmith/work/data.csv')"),
            code_cell("df['sales'].sum()", [result("26")]),
        ],
    )
    write_notebook(
        root / "windows.ipynb",
        [
            code_cell(
                "import pandas as pd\n"
                "df = pd.read_csv('C:\\\\Users\\\\bobjones\\\\Documents\\\\data.csv')"
            ),
            code_cell("df['sales'].max()", [result("11")]),
            code_cell("raw = pd.read_csv(r'C:\\Users\\bobjones\\Documents\\data.csv')"),
            code_cell("raw['sales'].min()", [result("3")]),
        ],
    )


def test_no_foreign_path_or_user_name_in_any_task_file(tmp_path: Path) -> None:
    _home_notebooks(tmp_path / "nb")
    out = tmp_path / "out"
    options = NotebookOptions(dataset=str(tmp_path / "nb"), reproduce=False, base_image=BASE)
    report = emit_all(NotebookPipeline(options), out)
    assert report.emitted == 3 and not report.skipped
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        assert not FOREIGN.search(text), (path.relative_to(out), FOREIGN.search(text))
    for task in find_task_dirs([out]):
        tree = read_task_dir(task)
        [data] = tree.config.metadata.model_extra["smoldataenvs"]["data_files"]
        assert (data["path"], data["referenced_as"]) == ("data.csv", "data.csv")
        # The reference reads the workspace copy, whichever spelling the notebook used.
        assert "read_csv('data.csv')" in (tree.text("solution/reference.py") or "").replace(
            "r'data.csv'", "'data.csv'"
        )
    posix = next(t for t in find_task_dirs([out]) if "posix" in t.name)
    said = (posix / "instruction.md").read_text()
    assert "Sales as user saved them in ~/work/data.csv" in said


@pytest.mark.parametrize(
    ("written", "recorded"),
    [
        ("/home/alicesmith/work/data.csv", "data.csv"),
        ("C:\\Users\\bobjones\\Documents\\data.csv", "data.csv"),
        ("/mnt/c/Users/bobjones/data.csv", "data.csv"),
        ("\\\\server\\share\\bobjones\\data.csv", "data.csv"),
        ("/kaggle/input/titanic/train.csv", "/kaggle/input/titanic/train.csv"),
        ("https://example.org/raw/data.csv", "https://example.org/raw/data.csv"),
        ("../data/weather.csv", "../data/weather.csv"),
        ("data/weather.csv", "data/weather.csv"),
    ],
)
def test_recorded_reference_keeps_public_paths_and_drops_machine_ones(
    written: str, recorded: str
) -> None:
    assert recorded_reference(written) == recorded


def test_a_windows_path_in_a_plain_string_is_rewritten_too() -> None:
    value = "C:\\Users\\bobjones\\data.csv"
    source = "pd.read_csv('C:\\\\Users\\\\bobjones\\\\data.csv')"
    assert apply_rewrites(source, {value: "data.csv"}) == "pd.read_csv('data.csv')"


WEATHER_ROWS = [("Fog", 4), ("Clear", 6), ("Snow", 3), ("Fog", 2)]


def _snow_notebook(root: Path) -> None:
    """jvns/pandas-cookbook chapter 6's shape: the first 10 hours have no snow."""
    hours = [name for name, count in WEATHER_ROWS for _ in range(count)]
    rows = [f"2012-01-01 {hour:02d}:00:00,{name}" for hour, name in enumerate(hours)]
    (root / "data").mkdir(parents=True)
    (root / "data" / "weather.csv").write_text("Date/Time,Weather\n" + "\n".join(rows) + "\n")
    counts = "Fog      6\nClear    6\nSnow     3\nName: Weather, dtype: int64"
    write_notebook(
        root / "weather.ipynb",
        [
            code_cell("import pandas as pd"),
            code_cell("weather = pd.read_csv('data/weather.csv', index_col='Date/Time')"),
            code_cell("is_snowing = weather['Weather'].str.contains('Snow')"),
            code_cell(
                "is_snowing.astype(float)[:10].sum()",
                [result("0.0")],
            ),
            code_cell("weather['Weather'].value_counts()", [result(counts)]),
        ],
    )


def test_a_constant_answer_is_refused_before_any_container_runs(tmp_path: Path) -> None:
    _snow_notebook(tmp_path / "nb")
    reproducer = _RecordingReproducer()
    options = NotebookOptions(dataset=str(tmp_path / "nb"), base_image=BASE)
    events = list(NotebookPipeline(options, reproducer=reproducer).events())  # type: ignore[arg-type]
    skips = {e.record_id: (e.reason, e.detail) for e in events if isinstance(e, Skip)}
    reason, detail = skips["weather.ipynb#cell-3"]
    assert reason == "clean.semantic.constant-answer" and "0" in detail
    [draft] = [e.bundle for e in events if isinstance(e, Draft)]
    assert draft.config.metadata.repo2rlenv.source.record_id == "weather.ipynb#cell-4"
    assert reproducer.ran == [draft.task_id]


@needs_samples
def test_real_sample_notebooks_pass_the_gate_with_no_foreign_path(tmp_path: Path) -> None:
    """The shared real notebooks: every task they gave before the gate still comes out
    (none is refused by it), and no task file names a home folder."""
    options = NotebookOptions(dataset=str(NOTEBOOKS), reproduce=False, base_image=BASE)
    events: list = []
    report = emit_all(NotebookPipeline(options), tmp_path, on_event=events.append)
    assert report.emitted >= 5
    assert [e.reason for e in events if isinstance(e, Skip) and e.reason.startswith("clean.")] == []
    home = re.compile(r"/h[o]me/|/Users/|[A-Za-z]:\\\\?Users", re.IGNORECASE)
    assert not [
        p for p in tmp_path.rglob("*") if p.is_file() and home.search(p.read_text(errors="replace"))
    ]
