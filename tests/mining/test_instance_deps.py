"""Test dependencies of an instance's checkout, and the real marshmallow SWE-agent runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.formats import read_record
from repo2rlenv.kinds.declared_requirements import declared_test_requirements
from repo2rlenv.kinds.instance_deps import dockerfile_lines
from repo2rlenv.mining.session_miner import SessionPipeline
from tests.mining.test_instances import _pipeline as instances_pipeline

DATA = Path(__file__).resolve().parents[1] / "data" / "swe"
MIRROR = Path(
    os.environ.get("RLENV_MARSHMALLOW_MIRROR", DATA / "repos" / "marshmallow-code+marshmallow.git")
)
"""marshmallow at the runs' two base commits: a shallow bare copy in tests/data (MIT, see
SOURCES.md there), so the real runs are mined and proven offline, in CI too;
RLENV_MARSHMALLOW_MIRROR points at a full mirror instead."""
needs_mirror = pytest.mark.skipif(
    not MIRROR.exists(), reason=f"no mirror of marshmallow at {MIRROR} (RLENV_MARSHMALLOW_MIRROR)"
)
MARSHMALLOW = "https://github.com/marshmallow-code/marshmallow"
RUN = DATA / "swe-agent-text" / "marshmallow-code__marshmallow-1867.traj"
TABLE = DATA / "instances" / "marshmallow-1867.jsonl"


@pytest.fixture(autouse=True)
def _no_swebench_spec(monkeypatch):
    """These tests are about tasks without a SWE-bench spec (the `swe` extra absent): the
    checkout's own metadata; test_swe_specs.py covers the spec path."""
    monkeypatch.setattr("repo2rlenv.kinds.instance_wheels.spec_for", lambda *_: None)


SETUP_PY = """
import sys
raise SystemExit("never run")
EXTRAS_REQUIRE = {
    "tests": ["pytest", "pytz", "simplejson", "enum34; python_version < '3.4'"],
    "lint": ["flake8==4.0.1"],
}
"""


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"setup.py": SETUP_PY}, ["pytz", "simplejson"]),
        ({"setup.py": "setup(name='x', extras_require={'test': ['mock>=2']})"}, ["mock"]),
        ({"setup.cfg": "[options.extras_require]\ntesting =\n    hypothesis\n"}, ["hypothesis"]),
        (
            {"pyproject.toml": '[project.optional-dependencies]\ntests = ["attrs", "pytest"]\n'},
            ["attrs"],
        ),
        ({"setup.py": "EXTRAS_REQUIRE = {'docs': ['sphinx']}"}, []),
        ({"setup.py": "EXTRAS_REQUIRE = {'tests': [helper()]}"}, []),  # not a literal
    ],
)
def test_declared_extras_are_read_never_run(files, expected):
    assert declared_test_requirements(files) == expected


def test_wheels_are_unpacked_without_pip_or_network():
    lines = "\n".join(dockerfile_lines(["a-1-py3-none-any.whl"]))
    assert "COPY wheels/ /tmp/rlenv-wheels/" in lines
    assert "zipfile" in lines and "pip" not in lines.replace("rlenv-wheels", "")
    assert dockerfile_lines([]) == []


def _pipeline(tmp_path: Path, **options: object) -> SessionPipeline:
    return instances_pipeline(
        tmp_path, MIRROR, MARSHMALLOW, **({"kinds": ["instance-repair"]} | options)
    )


@needs_mirror
def test_anchored_run_without_a_table_row_says_so(tmp_path):
    """The SWE-agent demonstration anchors itself (replay_config); without a row its
    instance repair is refused with a reason, not left out silently."""
    session = read_record(json.loads(RUN.read_text()), RUN.name)
    events = _pipeline(tmp_path).session_events(session, "r1", None)
    assert [e.reason for e in events if isinstance(e, Skip)] == ["instance.not-in-table"]


@needs_mirror
def test_real_marshmallow_run_gives_an_instance_task_with_its_test_dependencies(tmp_path):
    session = read_record(json.loads(RUN.read_text()), RUN.name)
    [draft] = _pipeline(tmp_path, instances=str(TABLE)).session_events(session, "r1", None)
    assert isinstance(draft, Draft), draft
    files = {f.path: f.content for f in draft.bundle.files}
    wheels = sorted(
        p.rsplit("/", 1)[-1]
        for p in files
        if p.startswith("environment/wheels/") and p.endswith(".whl")
    )
    assert [w.split("-")[0] for w in wheels] == ["pytz", "simplejson"]
    dockerfile = files["environment/Dockerfile"].decode()
    assert "COPY wheels/" in dockerfile and "/workspace/src" in dockerfile
    assert "tests/test_serialization.py" in {
        p.removeprefix("tests/hidden/") for p in files if p.startswith("tests/hidden/")
    }
    assert "round(" in files["solution/solve.sh"].decode()  # the run's own submission


@needs_mirror
def test_packages_the_run_installed_become_wheels_not_pip_lines(tmp_path):
    """The offline image has no pip: what the run pip-installed (pytz, simplejson, and
    pytest, pluggy... and marshmallow itself by `pip install -e .`) comes in as wheels,
    without the verifier's pytest family and without the checkout's own project."""
    run = json.loads(RUN.read_text())
    run["history"].append(
        {
            "role": "assistant",
            "content": "pip install -e .",
            "action": "pip install -e .",
            "agent": "main",
        }
    )
    run["history"].append(
        {
            "role": "user",
            "content": "Successfully installed marshmallow-3.13.0 pluggy-1.6.0 pytz-2026.1.post1"
            "\n(Open file: n/a)\n(Current directory: /testbed)\nbash-$",
            "agent": "main",
        }
    )
    session = read_record(run, RUN.name)
    [draft] = _pipeline(tmp_path, instances=str(TABLE)).session_events(session, "r1", None)
    assert isinstance(draft, Draft), draft
    files = {f.path: f.content for f in draft.bundle.files}
    wheels = sorted(
        p.rsplit("/", 1)[-1]
        for p in files
        if p.startswith("environment/wheels/") and p.endswith(".whl")
    )
    assert wheels[0].split("-")[:2] == ["pytz", "2026.1.post1"]  # the version pip reported
    assert [w.split("-")[0] for w in wheels] == ["pytz", "simplejson"]
    assert "pip install --no-cache-dir pluggy" not in files["environment/Dockerfile"].decode()


MINI_1359 = DATA / "mini-swe-agent" / "marshmallow-code__marshmallow-1359.traj.json"
TABLE_1359 = DATA / "instances" / "marshmallow-1359.jsonl"


@pytest.mark.docker
@pytest.mark.slow
@needs_mirror
def test_real_resolved_run_becomes_a_proven_task(tmp_path, docker_ready):
    """The mini-swe-agent run that fixed marshmallow-1359: the oracle proves its
    submission against the instance's hidden test (reference 1, no-op 0, probes held)."""
    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    session = read_record(json.loads(MINI_1359.read_text()), MINI_1359.name)
    pipeline = _pipeline(tmp_path, instances=str(TABLE_1359))
    pipeline.options.base_image = docker_ready
    [draft] = pipeline.session_events(session, "r1", None)
    assert isinstance(draft, Draft), draft
    task = write_bundle(draft.bundle, tmp_path / "out").path
    report = validate_one(task, ValidateOptions(reruns=0), DockerRuntime(), None, SilentProgress())
    assert report.valid, [f.rule_id for f in report.findings]
    assert report.label.status == "verified"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                "setup.cfg": "[options]\ninstall_requires =\n    lazy_object_proxy>=1.4.0\n"
                '    wrapt>=1.11,<1.14\n    typed-ast>=1.4;python_version<"3.8"\n'
            },
            ["lazy_object_proxy>=1.4.0", "wrapt<1.14,>=1.11"],
        ),
        (
            {"setup.py": 'setup(name="x", install_requires=["click>=7.1", "pytest", "oyaml"])'},
            ["click>=7.1", "oyaml"],
        ),
        ({"pyproject.toml": '[project]\ndependencies = ["numpy>=1.16"]\n'}, ["numpy>=1.16"]),
        ({"setup.py": "setup(install_requires=read_requirements())"}, []),
    ],
)
def test_runtime_requirements_are_read_with_their_versions(files, expected):
    """What `pip install -e .` would install, read never run; a marker that does not
    hold here drops the line, and the versions declared are kept (they bound the era)."""
    from repo2rlenv.kinds.declared_requirements import declared_runtime_requirements

    assert declared_runtime_requirements(files) == expected


def test_wheels_are_taken_as_of_the_instance_date(monkeypatch):
    """Unpinned names go to pip with `--uploaded-prior-to` the instance's date and with
    their dependencies; the run's own pins are taken as reported (no cutoff, no deps);
    a pin with no wheel here falls back to its name; skipped projects are dropped."""
    import subprocess

    from repo2rlenv.kinds import instance_deps

    calls: list[list[str]] = []

    def fake_run(args, **kwargs):
        calls.append(args)
        dest = Path(args[args.index("--dest") + 1])
        names = args[args.index("--") + 1 :]
        if "wrapt==1.13.3" in names:
            return subprocess.CompletedProcess(args, 1, "", "ERROR: no wheel for wrapt==1.13.3")
        if "lazy-object-proxy" in names and "--uploaded-prior-to" in args:
            return subprocess.CompletedProcess(args, 1, "", "ERROR: none of that time")
        for name in names:
            (dest / f"{name.split('==')[0].split('>')[0]}-1.0-py3-none-any.whl").write_bytes(b"w")
        (dest / "pytest-9.0-py3-none-any.whl").write_bytes(b"w")  # a dependency pulled in
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(instance_deps.subprocess, "run", fake_run)
    wheels = instance_deps.fetch_wheels(
        ["pytz==2026.1", "simplejson"], prior_to="2019-08-13T04:37:50Z", skip=frozenset({"pytest"})
    )
    pinned, dated = calls
    assert "--no-deps" in pinned and "--uploaded-prior-to" not in pinned
    assert pinned[pinned.index("--") + 1 :] == ["pytz==2026.1"]
    assert dated[dated.index("--uploaded-prior-to") + 1] == "2019-08-13T04:37:50Z"
    assert "--no-deps" not in dated
    assert sorted(wheels) == [
        "pytz-1.0-py3-none-any.whl",
        "simplejson-1.0-py3-none-any.whl",
        "wheels.txt",
    ]
    assert wheels["wheels.txt"].decode().splitlines() == [
        "uploaded-prior-to: 2019-08-13T04:37:50Z",
        "pytz-1.0-py3-none-any.whl",
        "simplejson-1.0-py3-none-any.whl",
    ]

    calls.clear()
    wheels = instance_deps.fetch_wheels(["wrapt==1.13.3"], prior_to="2021-11-21T00:00:00Z")
    assert calls[1][calls[1].index("--") + 1 :] == ["wrapt"]
    assert "--uploaded-prior-to" in calls[1]
    assert "wrapt-1.0-py3-none-any.whl" in wheels

    calls.clear()  # no wheel of the instance's time for this Python: newest, said so
    wheels = instance_deps.fetch_wheels(["lazy-object-proxy"], prior_to="2021-11-21T00:00:00Z")
    assert "--uploaded-prior-to" not in calls[-1]
    listing = wheels["wheels.txt"].decode()
    assert "not met, newest taken (no-dated-resolution): ERROR: none of that time" in listing


def test_an_impossible_resolution_names_the_conflicting_requirements(monkeypatch):
    """pip's last line for a conflict names no package (`ResolutionImpossible: for help
    visit ...`, all 5 refusals of pylint's Gemini runs said only that): the reason
    carries the conflict pip states above it, as `pip download --quiet` prints it, and
    the lines under `The conflict is caused by:` when pip prints them."""
    import subprocess

    from repo2rlenv.kinds import instance_deps
    from repo2rlenv.kinds.instance_deps import DependencyError, pip_failure

    quiet = (
        "WARNING: Location 'file:///opt/pypi/simple/astroid/' is ignored\n"
        "ERROR: Cannot install astroid==2.11.0 and pylint==2.14.0 because these package "
        "versions have conflicting dependencies.\n"
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/\n"
    )
    monkeypatch.setattr(
        instance_deps.subprocess,
        "run",
        lambda args, **kw: subprocess.CompletedProcess(args, 1, "", quiet),
    )
    with pytest.raises(DependencyError) as caught:
        instance_deps.fetch_wheels(["astroid==2.11.0", "pylint==2.14.0"])
    assert str(caught.value) == (
        "ResolutionImpossible: Cannot install astroid==2.11.0 and pylint==2.14.0 because "
        "these package versions have conflicting dependencies."
    )
    verbose = quiet.replace(
        "dependencies.\n",
        "dependencies.\n\nThe conflict is caused by:\n    The user requested astroid==2.11.0\n"
        "    pylint 2.14.0 depends on astroid>=2.11.5\n\nTo fix this you could try to:\n",
    )
    assert pip_failure(verbose).endswith(
        "dependencies.; The user requested astroid==2.11.0; pylint 2.14.0 depends on "
        "astroid>=2.11.5"
    )
    assert pip_failure("x\nERROR: No matching distribution found for y\n") == (
        "ERROR: No matching distribution found for y"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2022-03-03T15:14:54Z", "2022-03-03T15:14:54Z"),
        ("2019-08-13T00:37:50-04:00", "2019-08-13T04:37:50Z"),
        ("not a date", None),
        (None, None),
    ],
)
def test_instance_date_is_normalised(value, expected):
    from repo2rlenv.mining.instances import Instance

    row = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0" * 40, "created_at": value}
    assert Instance.model_validate(row).created_at == expected


def test_a_failed_pin_falls_back_to_the_declared_range_not_to_any_version(monkeypatch):
    """astroid 2.9's runs pinned wrapt 1.13.3 (no wheel for 3.11) and astroid declares
    `wrapt<1.14`: the fallback asks for the declared range, never an unbounded name."""
    import subprocess

    from repo2rlenv.kinds import instance_deps

    calls: list[list[str]] = []

    def fake_run(args, **kwargs):
        calls.append(args[args.index("--") + 1 :])
        dest = Path(args[args.index("--dest") + 1])
        if "--no-deps" in args:
            return subprocess.CompletedProcess(args, 1, "", "ERROR: no wheel for wrapt==1.13.3")
        (dest / "wrapt-1.13.3-cp311-none-any.whl").write_bytes(b"w")
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(instance_deps.subprocess, "run", fake_run)
    instance_deps.fetch_wheels(["wrapt==1.13.3", "six==1.16.0", "wrapt<1.14,>=1.11"])
    assert calls == [["wrapt==1.13.3", "six==1.16.0"], ["wrapt<1.14,>=1.11", "six"]]
    calls.clear()
    monkeypatch.setattr(
        instance_deps.subprocess,
        "run",
        lambda args, **kw: (
            calls.append(args[args.index("--") + 1 :])
            or subprocess.CompletedProcess(args, 0, "", "")
        ),
    )
    instance_deps.fetch_wheels(["wrapt==1.13.3", "wrapt<1.14,>=1.11", "pytz"])
    assert calls == [["wrapt==1.13.3"], ["pytz"]]  # the pin stands for the declared name


PYDICOM_MIRROR = os.environ.get("RLENV_PYDICOM_MIRROR", "")
"""A bare mirror of pydicom: not ours to ship, and no path of one is the same on two
machines, so the test runs only where RLENV_PYDICOM_MIRROR names one."""
PYDICOM = Path(PYDICOM_MIRROR)
MINI_1256 = DATA / "mini-swe-agent" / "pydicom__pydicom-1256.traj.json"
TABLE_1256 = DATA / "instances" / "pydicom-1256.jsonl"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(
    not PYDICOM_MIRROR or not PYDICOM.exists(),
    reason=f"RLENV_PYDICOM_MIRROR names no bare mirror of pydicom ({PYDICOM_MIRROR!r})",
)
def test_real_pydicom_run_needs_the_checkouts_binary_test_data(tmp_path, docker_ready):
    """pydicom's tests open `.dcm` files of the checkout: with them in the image the
    oracle proves the real mini-swe-agent run of pydicom-1256 (before: IndexError in
    every test module that opens one, reference 0)."""
    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    pipeline = instances_pipeline(
        tmp_path, PYDICOM, "https://github.com/pydicom/pydicom", base_image=docker_ready,
        kinds=["instance-repair"], instances=str(TABLE_1256),
    )  # fmt: skip
    session = read_record(json.loads(MINI_1256.read_text()), MINI_1256.name)
    [draft] = pipeline.session_events(session, "r1", None)
    assert isinstance(draft, Draft), draft
    paths = [f.path for f in draft.bundle.files]
    assert "environment/workspace/pydicom/data/test_files/waveform_ecg.dcm" in paths
    task = write_bundle(draft.bundle, tmp_path / "out").path
    report = validate_one(task, ValidateOptions(reruns=0), DockerRuntime(), None, SilentProgress())
    assert report.valid, [f.rule_id for f in report.findings]
    assert report.label.status == "verified"
