"""Packages the session installed end up in the task's Dockerfile."""

from __future__ import annotations

import json

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.kinds.installs import (
    NEEDS_INDEX_LABEL,
    Installs,
    dockerfile_lines,
    session_installs,
)
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
from tests.anchors.test_anchors import URL, pipeline
from tests.mining.factory import ROOT, SessionBuilder

REQUESTS = "Successfully installed certifi-2024.2.2 requests-2.31.0 urllib3-2.2.1\n"
PYPROJECT = '[project]\nname = "My_Pkg"\nversion = "0.1.0"\n'


def installs(*runs: tuple[str, str, int | None], cwd: str | None = None) -> Installs:
    builder = SessionBuilder().user("x")
    for command, output, code in runs:
        builder.run(command, output, code, cwd=cwd)
    return session_installs(builder.build())


def test_pins_come_from_what_pip_reported():
    found = installs(
        ("python -m pip install requests", REQUESTS, 0),
        ("pip install -r requirements.txt", "Successfully installed six-1.16.0\n", 0),
        ("pip3 install broken", "ERROR: No matching distribution found for broken\n", 1),
        ("pip install -q numpy", "Requirement already satisfied: numpy in /usr/lib (1.24.2)\n", 0),
    )
    assert found == Installs(
        pins=("certifi==2024.2.2", "requests==2.31.0", "six==1.16.0", "urllib3==2.2.1")
    )
    before, after = dockerfile_lines(found, {})
    assert NEEDS_INDEX_LABEL in before and not after
    assert before[-1].endswith(
        "pip install --no-cache-dir certifi==2024.2.2 requests==2.31.0 six==1.16.0 urllib3==2.2.1"
    )


def test_local_installs_become_a_path_entry_not_a_download():
    pip_e = "Successfully installed My-Pkg-0.1.0 attrs-23.1.0\n"
    found = installs(
        ("pip install -e .", pip_e, 0),
        (f"cd {ROOT} && pip install ./tools/helper", "Successfully installed helper-1.0\n", 0),
        cwd=ROOT,
    )
    assert found.local == ("", "tools/helper")
    files = {
        "pyproject.toml": PYPROJECT,
        "src/my_pkg/__init__.py": "",
        "tools/helper/setup.py": "from setuptools import setup\nsetup(name='helper')\n",
        "tools/helper/helper.py": "",
    }
    before, after = dockerfile_lines(found, files)
    assert before[-1].endswith("pip install --no-cache-dir attrs==23.1.0")  # not the locals
    assert "'/workspace/src\\n/workspace/tools/helper\\n'" in after[-1]
    flat = dockerfile_lines(
        Installs(local=("",)), {"setup.cfg": "[metadata]\nname = x\n", "x/a.py": ""}
    )
    assert flat == ([], flat[1]) and "'/workspace\\n'" in flat[1][-1]


def test_unseen_projects_unsafe_paths_and_pip_itself():
    found = installs(
        ("pip install -U pip", "Successfully installed pip-24.0\n", 0),
        ('pip install -e "./we\'ird" -e ./later', "Successfully installed later-0.1\n", 0),
        cwd=ROOT,
    )
    assert found == Installs(local=("later",), pins=("later==0.1",))
    before, after = dockerfile_lines(found, {"a.py": ""})
    assert NEEDS_INDEX_LABEL in before  # its name is unknown, so it is not known to be local
    assert "'/workspace/later/src\\n/workspace/later\\n'" in after[-1]


def test_a_session_without_installs_changes_nothing():
    assert not installs(("python -m pytest -q", "1 passed", 0))
    assert dockerfile_lines(Installs(), {"a.py": ""}) == ([], [])


def test_the_task_dockerfile_carries_the_installs(repo, tmp_path):
    path, commit = repo
    parsed = (
        SessionBuilder()
        .user("the tests fail, fix add")
        .run("pip install requests==2.31.0", "Successfully installed requests-2.31.0\n", 0)
        .run("python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s", 1)
        .edit(f"{ROOT}/calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", "..\n2 passed in 0.01s", 0)
        .build(git={"repository_url": URL, "commit_hash": commit})
    )
    events = pipeline(tmp_path, path).session_events(parsed, "i1", None)
    (draft,) = [e for e in events if isinstance(e, Draft) and e.kind == "repair"]
    dockerfile = next(
        f.content.decode() for f in draft.bundle.files if f.path == "environment/Dockerfile"
    )
    lines = dockerfile.splitlines()
    assert lines[0] == "FROM img:1"
    assert NEEDS_INDEX_LABEL in lines
    index = lines.index(NEEDS_INDEX_LABEL)
    assert lines[index + 1].endswith("pip install --no-cache-dir requests==2.31.0")
    assert index < lines.index("COPY workspace/ /workspace/")


@pytest.mark.slow
@pytest.mark.docker
def test_named_packages_need_an_index_and_fail_the_oracle_without_one(repo, tmp_path, docker_ready):
    """The offline base image has no pip: the task is skipped with the build failure, not
    emitted with an environment its check cannot run in."""
    from repo2rlenv.runtime import DockerRuntime

    path, commit = repo
    parsed = (
        SessionBuilder()
        .user("the tests fail, fix add")
        .run("pip install six", "Successfully installed six-1.16.0\n", 0)
        .run("python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s", 1)
        .edit(f"{ROOT}/calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", "..\n2 passed in 0.01s", 0)
        .build(git={"repository_url": URL, "commit_hash": commit})
    )
    mapping = tmp_path / "repos.json"
    mapping.write_text(json.dumps({URL: str(path)}))
    options = MineOptions(
        dataset="anchored",
        base_image=docker_ready,
        reruns=0,
        kinds=["repair"],
        repo_map=mapping,
        repo_cache=tmp_path / "cache",
    )
    events = SessionPipeline(options, DockerRuntime()).session_events(parsed, "i2", None)
    (outcome,) = [e for e in events if e.kind == "repair"]
    import docker

    has_pip = b"pip " in docker.from_env().containers.run(
        docker_ready, ["sh", "-c", "python3 -m pip --version || true"], remove=True
    )
    if isinstance(outcome, Draft):  # a base image with pip and a reachable index
        assert has_pip
        dockerfile = next(f for f in outcome.bundle.files if f.path == "environment/Dockerfile")
        assert NEEDS_INDEX_LABEL in dockerfile.content.decode()
    else:
        assert isinstance(outcome, Skip) and outcome.reason == "oracle.run.build-failed", outcome
