"""Test dependencies of an instance's checkout, and the real marshmallow SWE-agent runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.formats import read_record
from repo2rlenv.kinds.instance_deps import declared_test_requirements, dockerfile_lines
from repo2rlenv.mining.session_miner import SessionPipeline
from tests.mining.test_instances import _pipeline as instances_pipeline

DATA = Path(__file__).resolve().parents[1] / "data" / "swe"
MIRROR = Path(
    os.environ.get("RLENV_MARSHMALLOW_MIRROR", "/work/.mirror/marshmallow-code+marshmallow/repo")
)
"""A bare mirror of marshmallow (not ours to ship); set RLENV_MARSHMALLOW_MIRROR to one."""
needs_mirror = pytest.mark.skipif(
    not MIRROR.exists(), reason=f"no mirror of marshmallow at {MIRROR} (RLENV_MARSHMALLOW_MIRROR)"
)
MARSHMALLOW = "https://github.com/marshmallow-code/marshmallow"
RUN = DATA / "swe-agent-text" / "marshmallow-code__marshmallow-1867.traj"
TABLE = DATA / "instances" / "marshmallow-1867.jsonl"

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
    wheels = sorted(p.rsplit("/", 1)[-1] for p in files if p.startswith("environment/wheels/"))
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
    wheels = sorted(p.rsplit("/", 1)[-1] for p in files if p.startswith("environment/wheels/"))
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
