"""The host's pip and the dependency date of instance tasks (issue 28).

A pip without `--uploaded-prior-to` (a fresh virtualenv's 23.2) answered `no such
option`, which was taken for an index without upload times: the newest of everything
went into the tasks and nothing said so. Now the package declares the pip it needs, a
mine with `--instances` stops at start in one line (exit 2), pip's own `no such option`
is never a fallback, and the two real reasons to take the newest (an index without
upload times, nothing of that date for this Python) are written in the task and counted
by mine. pip's messages below are the real ones (23.2 and 26.3, run by hand)."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import git
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from repo2rlenv import hosttools
from repo2rlenv.emit import YieldReport
from repo2rlenv.formats import read_record
from repo2rlenv.hosttools import PIP_UPLOADED_PRIOR_TO, HostToolError, require_pip
from repo2rlenv.kinds import instance_deps
from repo2rlenv.kinds.instance_deps import date_unmet, fetch_wheels
from tests.anchors.test_anchors import CALC_BUGGY, TESTS
from tests.mining.test_instance_repair import SUBMISSION, TEST_PATCH
from tests.mining.test_instances import _pipeline, _row, _run, _table

REPO = Path(__file__).resolve().parents[2]
PIP_23_NO_OPTION = (
    "\nUsage:   \n  python -m pip download [options] <requirement specifier> "
    "[package-index-options] ...\n\nno such option: --uploaded-prior-to\n"
)
"""pip 23.2's stderr for `pip download --uploaded-prior-to ...` (exit 2)."""
PIP_26_NO_UPLOAD_TIMES = (
    "ERROR: Index http://127.0.0.1:8765/simple/six/ does not provide upload-time metadata.\n"
)
"""pip 26.3's stderr for a simple index whose pages carry no upload times (exit 1)."""
PIP_NOTHING_OF_THAT_DATE = (
    "ERROR: Could not find a version that satisfies the requirement six (from versions: "
    "none)\nERROR: No matching distribution found for six\n"
)


def _fake_pip(dated_stderr: str | None, calls: list[list[str]]):
    """`subprocess.run` for pip download: a dated call fails with `dated_stderr` (None:
    it succeeds), any other writes a wheel per name."""

    def run(args, **kwargs):
        calls.append(args)
        if "--uploaded-prior-to" in args and dated_stderr is not None:
            return subprocess.CompletedProcess(args, 2, "", dated_stderr)
        dest = Path(args[args.index("--dest") + 1])
        for name in args[args.index("--") + 1 :]:
            (dest / f"{name.split('==')[0]}-1.0-py3-none-any.whl").write_bytes(b"w")
        return subprocess.CompletedProcess(args, 0, "", "")

    return run


def test_the_package_declares_the_pip_it_needs():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    [pip] = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "pip"]
    assert PIP_UPLOADED_PRIOR_TO in pip.specifier
    assert Version("25.3") not in pip.specifier  # the last pip without the option


@pytest.mark.parametrize("found", ["23.2", "25.3"])
def test_a_pip_without_the_option_stops_in_one_line_naming_the_fix(found):
    with pytest.raises(HostToolError) as raised:
        require_pip(Version(found))
    message = str(raised.value)
    assert message.startswith(f"host.pip-too-old: pip {found} has no --uploaded-prior-to")
    assert f"'pip>={PIP_UPLOADED_PRIOR_TO}'" in message and "\n" not in message
    require_pip(PIP_UPLOADED_PRIOR_TO)  # 26.0 has it


def test_no_pip_at_all_is_said_as_such(monkeypatch):
    monkeypatch.setattr(hosttools, "pip_version", lambda: None)
    with pytest.raises(HostToolError, match=r"^host\.pip-missing: "):
        require_pip()


def test_pips_no_such_option_is_never_taken_for_an_undated_index(monkeypatch):
    """The old code wrote `not met, newest taken: no such option: --uploaded-prior-to`
    and went on with the newest versions."""
    calls: list[list[str]] = []
    monkeypatch.setattr(instance_deps.subprocess, "run", _fake_pip(PIP_23_NO_OPTION, calls))
    with pytest.raises(HostToolError, match="no such option: --uploaded-prior-to"):
        fetch_wheels(["six"], prior_to="2019-08-13T04:37:50Z")
    assert len(calls) == 1  # nothing was fetched without the date


@pytest.mark.parametrize(
    ("stderr", "reason"),
    [
        (PIP_26_NO_UPLOAD_TIMES, "no-upload-times"),
        (PIP_NOTHING_OF_THAT_DATE, "no-dated-resolution"),
    ],
)
def test_the_newest_taken_says_why(monkeypatch, stderr, reason):
    calls: list[list[str]] = []
    monkeypatch.setattr(instance_deps.subprocess, "run", _fake_pip(stderr, calls))
    wheels = fetch_wheels(["six"], prior_to="2019-08-13T04:37:50Z")
    assert "six-1.0-py3-none-any.whl" in wheels
    last = stderr.strip().splitlines()[-1]
    assert f"not met, newest taken ({reason}): {last}" in wheels["wheels.txt"].decode()
    assert date_unmet(wheels) == reason


def test_a_date_that_held_is_no_warning(monkeypatch):
    calls: list[list[str]] = []
    monkeypatch.setattr(instance_deps.subprocess, "run", _fake_pip(None, calls))
    wheels = fetch_wheels(["six"], prior_to="2019-08-13T04:37:50Z")
    assert "--uploaded-prior-to" in calls[0] and "newest" not in wheels["wheels.txt"].decode()
    assert date_unmet(wheels) is None


@pytest.fixture
def declares_six(tmp_path):
    """The calc repository with a setup.py that declares `six`, as a checkout declares
    its runtime requirements."""
    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    files = {
        "calc.py": CALC_BUGGY,
        "test_calc.py": TESTS,
        "setup.py": "from setuptools import setup\n\nsetup(install_requires=['six'])\n",
    }
    for rel, text in files.items():
        (path / rel).write_text(text)
    repository.index.add(list(files))
    actor = git.Actor("t", "t@example.com")
    return path, repository.index.commit("start", author=actor, committer=actor).hexsha


def _instance_events(tmp_path, path, commit):
    fields = {
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]',
        "created_at": "2019-08-13T04:37:50Z",
        "version": "",
    }
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = SUBMISSION
    session = read_record(run, "example__calc-1.traj.json")
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    return pipeline.session_events(session, "r1", None)


def test_mine_counts_tasks_made_with_the_newest_wheels(declares_six, tmp_path, monkeypatch):
    from rich.console import Console

    from repo2rlenv import ui

    calls: list[list[str]] = []
    monkeypatch.setattr(instance_deps.subprocess, "run", _fake_pip(PIP_26_NO_UPLOAD_TIMES, calls))
    [draft] = _instance_events(tmp_path, *declares_six)
    block = draft.bundle.config.metadata.repo2rlenv
    assert block.dependency_date_unmet == "no-upload-times"
    report = YieldReport("sessions")
    report.count(draft)
    summary = report.to_dict()
    assert summary["warnings"] == {"deps.newest-taken.no-upload-times": 1}
    [record] = summary["records"]
    assert record["warnings"] == [
        {"task_id": draft.bundle.task_id, "code": "deps.newest-taken.no-upload-times"}
    ]
    console = Console(record=True, width=120)
    ui.yield_table(report, console)
    assert "warning deps.newest-taken.no-upload-times" in console.export_text()


def test_mine_with_instances_and_an_old_pip_exits_2_in_one_line(tmp_path, monkeypatch, capsys):
    """The acceptance line: a venv with pip 23 is exit 2 at start, never wrong tasks."""
    from repo2rlenv.cli import main

    monkeypatch.setattr(hosttools, "pip_version", lambda: Version("23.2"))
    table = _table(tmp_path, [_row("example__calc-1", "b" * 40)])
    session = tmp_path / "example__calc-1.traj.json"
    session.write_text(json.dumps(_run()))
    code = main(
        ["mine", "--dataset", str(session), "--instances", str(table), "--no-validate", "-q",
         "--out", str(tmp_path / "out")]
    )  # fmt: skip
    assert code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: host.pip-too-old: pip 23.2")
    assert not (tmp_path / "out").exists()
