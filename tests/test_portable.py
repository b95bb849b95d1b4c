"""Portable tasks (issue 30 point 2): a task built offline names an image only its
machine has; `validate` flags it and `make_portable` rewrites it to the base's recipe,
which builds where that image was never seen."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples import example_bundle
from repo2rlenv.publish.portable import (
    BASE_ARG,
    local_only_bases,
    make_portable,
    portable_dockerfile,
)
from repo2rlenv.settings import OFFLINE_BASE_IMAGE, PUBLIC_BASE_IMAGE
from repo2rlenv.validate import run_static

RULE = "env.local-only-base"


def rules(path: Path) -> dict[str, str]:
    return {f.rule_id: f.severity for f in run_static(read_task_dir(path))}


def offline_task(tmp_path: Path, base: str = OFFLINE_BASE_IMAGE) -> Path:
    return write_bundle(example_bundle("example-qa-config", base), tmp_path).path


def test_offline_task_is_flagged_as_a_warning_and_the_rewrite_clears_it(tmp_path):
    path = offline_task(tmp_path)
    assert rules(path)[RULE] == "warning"
    before = (path / "environment/Dockerfile").read_text()
    assert make_portable(path) is True
    after = (path / "environment/Dockerfile").read_text()
    assert RULE not in rules(path)
    assert "rlenv-harvest/offline-python" not in after
    assert f"ARG {BASE_ARG}={PUBLIC_BASE_IMAGE}" in after
    # The task's own lines follow the recipe unchanged.
    assert after.endswith(before.split("\n", 1)[1])
    assert make_portable(path) is False
    assert (path / "environment/Dockerfile").read_text() == after


@pytest.mark.parametrize(
    ("dockerfile", "found"),
    [
        ("FROM rlenv-harvest/offline-python:bookworm-1\n", [(1, OFFLINE_BASE_IMAGE)]),
        ("# x\nfrom  rlenv-harvest/offline-python\n", [(2, "rlenv-harvest/offline-python")]),
        (f"FROM {PUBLIC_BASE_IMAGE}\n", []),
        ("FROM localhost:5000/rlenv-harvest/offline-python:1\n", []),
        ("FROM base:1\nRUN echo rlenv-harvest/offline-python:bookworm-1\n", []),
    ],
)
def test_which_bases_are_local_only(dockerfile, found):
    assert local_only_bases(dockerfile) == found


def test_a_line_the_recipe_would_change_the_meaning_of_is_refused():
    with pytest.raises(ValueError, match="not a plain FROM"):
        portable_dockerfile(f"FROM {OFFLINE_BASE_IMAGE} AS base\nFROM base\n")


def test_another_suites_base_is_refused_not_given_bookworms_python():
    """A 3.9 task FROM bullseye's base rewritten to bookworm's recipe would run on 3.11:
    refused, the task is held back (`push`) rather than silently changed."""
    with pytest.raises(ValueError, match="no portable recipe"):
        portable_dockerfile("FROM rlenv-harvest/offline-python:bullseye-1\nRUN true\n")
    with pytest.raises(ValueError, match="no portable recipe"):
        portable_dockerfile("FROM rlenv-harvest/offline-python:trixie-1\nRUN true\n")
    # another tag of bookworm's base (a test's throwaway tag) keeps its recipe
    assert "apt-get install" in portable_dockerfile("FROM rlenv-harvest/offline-python:t-1\n")


def _docker(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_rewritten_task_builds_without_the_offline_image(tmp_path):
    """The task is built offline under a throwaway tag of the offline repository (the
    developer's own base image is never untagged); that tag is then removed and the
    rewritten Dockerfile built. A registry is out of reach here, so the recipe's
    public Debian image is stood in for by a Debian bookworm minbase lacking two of the
    recipe's packages (python3-pandas and its -lib): the build installs them from Debian."""
    try:
        if _docker("image", "inspect", OFFLINE_BASE_IMAGE, timeout=30).returncode:
            pytest.skip(f"{OFFLINE_BASE_IMAGE} is absent: no offline base to start from")
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"no Docker engine answers: {exc}")
    token = uuid.uuid4().hex[:12]
    local = f"rlenv-harvest/offline-python:test-{token}"
    standin = f"rlenv-test-debian:{token}"
    built = f"rlenv-test-portable:{token}"
    try:
        assert _docker("tag", OFFLINE_BASE_IMAGE, local).returncode == 0
        path = offline_task(tmp_path / "tasks", local)
        assert RULE in rules(path)
        assert make_portable(path)

        assert _docker("rmi", local).returncode == 0
        assert _docker("image", "inspect", local).returncode != 0
        recipe = tmp_path / "standin"
        recipe.mkdir()
        (recipe / "Dockerfile").write_text(
            f"FROM {OFFLINE_BASE_IMAGE}\nRUN dpkg --purge python3-pandas python3-pandas-lib\n"
        )
        done = _docker("build", "-q", "-t", standin, str(recipe))
        assert done.returncode == 0, done.stderr[-2000:]
        assert _docker("run", "--rm", standin, "python3", "-c", "import pandas.core").returncode

        done = _docker(
            "build",
            "-t",
            built,
            "--build-arg",
            f"{BASE_ARG}={standin}",
            str(path / "environment"),
            timeout=540,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        probe = "import pandas.core, numpy, pytest, os; print(sorted(os.listdir('/workspace')))"
        ran = _docker("run", "--rm", built, "python", "-c", probe)
        assert ran.returncode == 0, ran.stderr
        assert "service" in ran.stdout
    finally:
        for image in (built, standin, local):
            _docker("rmi", "-f", image, timeout=60)
