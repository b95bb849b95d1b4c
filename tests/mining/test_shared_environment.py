"""Tasks of one repository version share one environment layer (issue #19, point 4).

Without a spec, their dependency wheels are taken as of one date (the latest
`created_at` of the version's rows in the table), so two instances whose checkouts
declare the same requirements get the same wheel folder, byte for byte, and the same
Dockerfile lines up to the dependency layer; what is theirs alone (the provenance
naming the date) comes later. pip is replaced by a fake index whose versions depend on
the date asked, as the real index's do. (With a spec the image build runs its recipe:
`test_swe_recipe.py`.)
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import git
import pytest
from packaging.requirements import Requirement

from repo2rlenv.emit import Draft
from repo2rlenv.formats import read_record
from repo2rlenv.kinds import instance_deps, swe_specs
from repo2rlenv.mining.instances import load_instances
from tests.anchors.test_anchors import CALC_BUGGY, TESTS
from tests.mining.test_instance_repair import SUBMISSION, TEST_PATCH
from tests.mining.test_instances import _pipeline, _row, _run, _table
from tests.mining.test_swe_specs import _fake_swebench

URL = "https://github.com/o/r"
SETUP = 'from setuptools import setup\nsetup(name="calc", version="1.0", install_requires={})\n'
SPECS = (
    "SPECS_X = {k: {'python': '3.9', 'install': 'python -m pip install -e .',"
    " 'pip_packages': ['six==1.16.0'], 'test_cmd': 'pytest'} for k in ['0.6', '0.7']}\n"
    "MAP_REPO_VERSION_TO_SPECS_PY = {'o/r': SPECS_X}\n"
)
DEPENDENCY_RUN = 'RUN python3 -c "import pathlib, site, zipfile;'


def _wheel(name: str, version: str) -> tuple[str, bytes]:
    """A real, installable (empty) wheel of `name` `version`, the same bytes each time."""
    dist = f"{name.replace('-', '_')}-{version}"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, text in (
            ("METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
            ("WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        ):
            archive.writestr(zipfile.ZipInfo(f"{dist}.dist-info/{member}"), text)
    return f"{dist}-py3-none-any.whl", buffer.getvalue()


@pytest.fixture
def spec_o_r(tmp_path, monkeypatch):
    """SWE-bench specs for `o/r` versions 0.6 and 0.7, from a fake `swebench`."""
    _fake_swebench(tmp_path / "site", SPECS)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    swe_specs._tables.cache_clear()
    yield
    swe_specs._tables.cache_clear()


@pytest.fixture
def dated_index(monkeypatch):
    """pip against an index whose newest version of every project is the date asked
    (`2025.9.1` as of 2025-09-01); each wheel is a real, installable zip."""

    def download(names: list[str], options: list[str], folder: str) -> None:
        cutoff = (
            options[options.index("--uploaded-prior-to") + 1]
            if "--uploaded-prior-to" in options
            else None
        )
        dated = ".".join(str(int(p)) for p in cutoff[:10].split("-")) if cutoff else "9999.0"
        for line in names:
            requirement = Requirement(line)
            pins = [s.version for s in requirement.specifier if s.operator == "=="]
            name, data = _wheel(requirement.name, pins[0] if pins else dated)
            (Path(folder) / name).write_bytes(data)

    monkeypatch.setattr(instance_deps, "_download", download)


@pytest.fixture
def versions_repo(tmp_path) -> tuple[Path, list[str]]:
    """Three commits: two that declare `simplejson`, a third that also declares `pytz`."""
    path = tmp_path / "o-r"
    repository = git.Repo.init(path)
    actor = git.Actor("t", "t@example.com")
    commits = []
    for requires, note in (
        (["simplejson"], ""),
        (["simplejson"], "# b\n"),
        (["simplejson", "pytz"], ""),
    ):
        files = {
            "calc.py": note + CALC_BUGGY,
            "test_calc.py": TESTS,
            "setup.py": SETUP.format(requires),
        }
        for rel, text in files.items():
            (path / rel).write_text(text)
        repository.index.add(list(files))
        commits.append(
            repository.index.commit(f"c{len(commits)}", author=actor, committer=actor).hexsha
        )
    return path, commits


ROWS = {  # dated after the verifier pytest's release: an earlier date is raised to it
    "o__r-1": (0, "0.6", "2025-03-01T00:00:00Z"),
    "o__r-2": (1, "0.6", "2025-09-01T00:00:00Z"),
    "o__r-3": (0, "0.7", "2026-01-01T00:00:00Z"),
    "o__r-4": (2, "0.6", "2025-05-01T00:00:00Z"),
}


def _table_of(tmp_path: Path, commits: list[str]) -> Path:
    rows = [
        _row(
            instance_id,
            commits[commit],
            repo="o/r",
            version=version,
            created_at=created,
            test_patch=TEST_PATCH,
            FAIL_TO_PASS='["test_hidden.py::test_add_is_a_sum"]',
            PASS_TO_PASS='["test_calc.py::test_double"]',
        )
        for instance_id, (commit, version, created) in ROWS.items()
    ]
    return _table(tmp_path, rows)


def _task(tmp_path: Path, path: Path, table: Path, instance_id: str, base_image: str = "img:1"):
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = SUBMISSION
    session = read_record(run, f"{instance_id}.traj.json")
    pipeline = _pipeline(tmp_path, path, URL, instances=str(table), kinds=["instance-repair"])
    pipeline.options.base_image = base_image
    [draft] = pipeline.session_events(session, instance_id, None)
    assert isinstance(draft, Draft), draft
    return draft.bundle


def _files(bundle) -> dict[str, bytes]:
    return {f.path: f.content for f in bundle.files}


def _shared_prefix(files: dict[str, bytes]) -> list[str]:
    """The Dockerfile's lines up to and including the dependency RUN."""
    lines = files["environment/Dockerfile"].decode().splitlines()
    return lines[: next(i for i, line in enumerate(lines) if line.startswith(DEPENDENCY_RUN)) + 1]


def _wheel_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    return {p: c for p, c in files.items() if p.startswith("environment/wheels/")}


@pytest.fixture
def tasks(tmp_path, versions_repo, dated_index):
    path, commits = versions_repo
    table = _table_of(tmp_path, commits)
    return lambda instance_id, **kw: _task(tmp_path, path, table, instance_id, **kw)


def test_the_version_date_is_the_latest_of_its_rows(tmp_path):
    table = load_instances(str(_table_of(tmp_path, ["a" * 40, "b" * 40, "c" * 40])))
    dated = table.environment_date(table.instances["o__r-1"])
    assert dated.date == "2025-09-01T00:00:00Z"
    assert "3 dated rows of o/r version 0.6" in dated.basis
    assert table.environment_date(table.instances["o__r-3"]).date == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize("version", [None, ""], ids=["none", "empty"])
def test_an_instance_without_a_version_keeps_its_own_date(tmp_path, version):
    rows = [
        _row(f"o__r-{n}", "a" * 40, repo="o/r", version=version, created_at=created)
        for n, created in ((1, "2021-01-01T00:00:00Z"), (2, "2024-01-01T00:00:00Z"))
    ]
    table = load_instances(str(_table(tmp_path, rows)))
    dated = table.environment_date(table.instances["o__r-1"])
    assert (dated.date, dated.basis) == ("2021-01-01T00:00:00Z", "the instance's created_at")


def test_instances_of_one_version_share_the_dependency_layer(tasks):
    first, second = _files(tasks("o__r-1")), _files(tasks("o__r-2"))
    assert _shared_prefix(first) == _shared_prefix(second)
    assert "COPY wheels/ /tmp/rlenv-wheels/" in _shared_prefix(first)
    shared = _wheel_folder(first)
    assert shared == _wheel_folder(second)
    assert "environment/wheels/simplejson-2025.9.1-py3-none-any.whl" in shared  # the version's date
    assert not [p for p in shared if "calc" in p or "pytest" in p or p.endswith(".txt")]
    # what is the task's own comes after: its provenance
    for files in (first, second):
        listing = files["environment/wheels.txt"].decode()
        assert listing.startswith("dependency date: 2025-09-01T00:00:00Z (the latest created_at")


@pytest.mark.parametrize(
    "other",
    ["o__r-3", "o__r-4"],
    ids=["another-version", "other-declared-requirements"],
)
def test_other_versions_or_requirements_do_not_share(tasks, other):
    first, second = _files(tasks("o__r-1")), _files(tasks(other))
    assert _wheel_folder(first) != _wheel_folder(second)


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_two_tasks_of_one_version_share_image_layers(tmp_path, tasks, docker_ready):
    """Built by Docker, the two tasks' images have the same layers up to the
    dependency RUN (Docker built that part once); their own layers differ."""
    import docker

    from repo2rlenv.bundle import write_bundle

    client = docker.from_env(timeout=300)
    built = []
    try:
        for instance_id in ("o__r-1", "o__r-2"):
            task = write_bundle(tasks(instance_id, base_image=docker_ready), tmp_path / "out").path
            image, _ = client.images.build(
                path=str(task / "environment"), rm=True, network_mode="none"
            )
            built.append(image)
        first, second = ([h["Id"] for h in reversed(i.history())] for i in built)
        layers = [i.attrs["RootFS"]["Layers"] for i in built]
    finally:
        for image_id in dict.fromkeys(image.id for image in reversed(built)):
            client.images.remove(image_id, force=True)
    base_image = client.images.get(docker_ready)
    base, base_layers = len(base_image.history()), len(base_image.attrs["RootFS"]["Layers"])
    # + COPY wheels/ and the RUN that unpacks them: the same image ids (one build) and
    # the same filesystem layers
    assert first[: base + 2] == second[: base + 2] and "<missing>" not in first[base : base + 2]
    assert layers[0][: base_layers + 2] == layers[1][: base_layers + 2]
    assert first[-1] != second[-1] and layers[0] != layers[1]  # each its own checkout
