"""References that call pandas/numpy API the task image lacks are refused before any
container runs, judged against names probed from the installed libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.apicheck import ApiChecker, ApiSurface
from smoldataenvs.apisurface import local_surface, probe_tree
from tests.smoldata.helpers import code_cell, result, write_notebook

LOAD = "import pandas as pd\nimport numpy as np\ndf = pd.read_csv('a.csv')\n"


@pytest.fixture(scope="module")
def here() -> ApiSurface:
    return local_surface()


def missing(surface: ApiSurface, code: str, columns: set[str] | None = None) -> str | None:
    return ApiChecker(surface, columns or {"Goals", "Team"}).missing(ast.parse(LOAD + code).body)


@pytest.mark.parametrize(
    ("code", "named"),
    [
        ("df.ix[0, 'Goals']", "DataFrame/Series.ix"),
        ("df.as_matrix()", "DataFrame/Series.as_matrix"),
        ("df.sort('Goals')", "DataFrame/Series.sort"),
        ("df['Goals'].order()", "DataFrame/Series.order"),
        ("df.Goals.irow(0)", "DataFrame/Series.irow"),
        ("pd.set_option('html', False)", "pd.set_option('html')"),
        ("pd.rolling_mean(df['Goals'], 3)", "pandas.rolling_mean"),
        ("np.float(df['Goals'].sum())", "numpy.float"),
        ("df['Team'].str.ljustify(3)", "Series.str.ljustify"),
    ],
)
def test_pandas_0x_api_is_refused(here: ApiSurface, code: str, named: str) -> None:
    why = missing(here, code)
    assert why is not None and why.startswith(named), why
    assert here.versions["pandas"] in why or here.versions["numpy"] in why


@pytest.mark.parametrize(
    "code",
    [
        "df.Goals.mean()",  # a column read as an attribute
        "df['Team'].str.contains('a').sum()",
        "df.groupby('Team').Goals.sum().sort_values()",
        "pd.set_option('display.max_rows', 10)",
        "pd.set_option('display.max_columns', 5)",
        "df.values.tolist()",
        "np.percentile(df['Goals'], 75)",
        "df['share'] = df.Goals / df.Goals.sum()\ndf.share.max()",  # a column the code adds
        "x = [3, 1]\nx.sort()",  # not a pandas object
    ],
)
def test_current_api_passes(here: ApiSurface, code: str) -> None:
    assert missing(here, code) is None


def test_the_names_come_from_the_probed_surface_not_a_list() -> None:
    """An image whose DataFrame had no `mean` refuses `df.mean()`; the same image with
    it passes: the check knows no name by itself."""
    names = {"pandas": ["read_csv"], "pandas.DataFrame": ["sum"], "pandas.Series": ["sum"]}
    without = ApiSurface(versions={"pandas": "0.1"}, names=names)
    assert missing(without, "df.mean()") == "DataFrame/Series.mean does not exist in pandas 0.1"
    names["pandas.DataFrame"].append("mean")
    assert missing(ApiSurface(versions={"pandas": "0.2"}, names=names), "df.mean()") is None


def test_the_probe_image_installs_what_a_task_image_does() -> None:
    tree = probe_tree("example/base:1")
    dockerfile = tree.files["environment/Dockerfile"][0].decode()
    assert dockerfile.startswith("FROM example/base:1\n")
    assert "pip install --no-cache-dir pandas==" in dockerfile
    assert "pip install --no-cache-dir numpy==" in dockerfile


class _CountingReproducer:
    def __init__(self) -> None:
        self.runs = 0

    def run(self, bundle) -> object:
        self.runs += 1
        raise AssertionError("a refused reference must not reach a container")


def test_refused_before_any_container_runs(here: ApiSurface, tmp_path: Path) -> None:
    (tmp_path / "euro.csv").write_text("Team,Goals\nSpain,12\nItaly,6\n")
    write_notebook(
        tmp_path / "old.ipynb",
        [
            code_cell("import pandas as pd\neuro = pd.read_csv('euro.csv')"),
            code_cell("euro.ix[0, 'Goals']", [result("12")]),
            code_cell("pd.set_option('html', False)\neuro['Goals'].sum()", [result("18")]),
        ],
    )
    reproducer = _CountingReproducer()
    options = NotebookOptions(dataset=str(tmp_path), base_image="example/base:1")
    pipeline = NotebookPipeline(options, reproducer=reproducer, surface=here)  # type: ignore[arg-type]
    events = list(pipeline.events())
    skips = {e.record_id: (e.reason, e.detail) for e in events if isinstance(e, Skip)}
    assert skips["old.ipynb#cell-2"][0] == "env.missing-api"
    # `euro.ix[0, 'Goals']` reads one value: a look-up, refused before its API is judged.
    assert skips["old.ipynb#cell-1"][0] in (
        "env.missing-api",
        "question.undescribed",
        "question.trivial-lookup",
    )
    assert skips["old.ipynb#cell-2"][1].startswith("pd.set_option('html')")
    assert not [e for e in events if isinstance(e, Draft)] and reproducer.runs == 0


def test_tasks_record_the_versions_they_were_checked_against(here: ApiSurface, tmp_path) -> None:
    (tmp_path / "euro.csv").write_text("Team,Goals\nSpain,12\nItaly,6\n")
    write_notebook(
        tmp_path / "new.ipynb",
        [
            code_cell("import pandas as pd\neuro = pd.read_csv('euro.csv')"),
            code_cell("euro['Goals'].sum()", [result("18")]),
        ],
    )
    options = NotebookOptions(dataset=str(tmp_path), base_image="b:1", reproduce=False)
    [draft] = [e for e in NotebookPipeline(options, surface=here).events() if isinstance(e, Draft)]
    [api] = [
        c for c in draft.bundle.config.metadata.repo2rlenv.checks if c.rule_id == "smoldata.api"
    ]
    assert api.status == "passed" and api.detail == f"checked against {here.label()}"


def test_the_checked_versions_do_not_change_the_task(tmp_path: Path) -> None:
    """Mining with and without Docker judges against different pandas versions; that is
    a recorded check (volatile), not content: the same task either way, so a rerun
    with validation does not conflict with an earlier --no-validate write."""
    from repo2rlenv.bundle import write_bundle

    (tmp_path / "euro.csv").write_text("Team,Goals\nSpain,12\nItaly,6\n")
    load = code_cell("import pandas as pd\neuro = pd.read_csv('euro.csv')")
    write_notebook(tmp_path / "n.ipynb", [load, code_cell("euro['Goals'].sum()", [result("18")])])
    options = NotebookOptions(dataset=str(tmp_path), base_image="b:1", reproduce=False)
    hashes = set()
    for version in ("1.5.3", "2.2.3"):
        names = {"pandas": ["read_csv"], "pandas.DataFrame": ["sum"], "pandas.Series": ["sum"]}
        surface = ApiSurface(versions={"pandas": version}, names=names)
        [draft] = [
            e for e in NotebookPipeline(options, surface=surface).events() if isinstance(e, Draft)
        ]
        hashes.add(write_bundle(draft.bundle, tmp_path / f"out-{version}").content_hash)
    assert len(hashes) == 1


@pytest.mark.docker
def test_the_probe_reads_the_task_images_own_libraries(docker_ready: str) -> None:
    from repo2rlenv.runtime import DockerRuntime
    from smoldataenvs.apisurface import image_surface

    surface = image_surface(DockerRuntime(), docker_ready)
    assert set(surface.versions) == {"pandas", "numpy"}
    assert "read_csv" in surface.names["pandas"] and "ix" not in surface.names["pandas.DataFrame"]
    assert "display.max_rows" in surface.options


def test_a_column_past_the_fortieth_is_not_taken_for_missing_api(
    here: ApiSurface, tmp_path: Path
) -> None:
    """The data note lists 40 columns; the API check must know them all, or
    `wide.c45` would read as a pandas attribute that does not exist."""
    header = ",".join(f"c{i}" for i in range(50))
    (tmp_path / "wide.csv").write_text(header + "\n" + ",".join(["1"] * 50) + "\n")
    write_notebook(
        tmp_path / "wide.ipynb",
        [
            code_cell("import pandas as pd\nwide = pd.read_csv('wide.csv')"),
            code_cell("wide['c45'].sum() + wide.c45.sum()", [result("2")]),
            code_cell("wide.c45.sum()", [result("1")]),
        ],
    )
    options = NotebookOptions(dataset=str(tmp_path), base_image="b:1", reproduce=False)
    events = list(NotebookPipeline(options, surface=here).events())
    assert not [e.detail for e in events if isinstance(e, Skip) and e.reason == "env.missing-api"]
