"""The in-container check that no hidden test of the verifier is in the agent's image."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from repo2rlenv.runtime import TrialResult
from repo2rlenv.validate.dynamic import judge
from repo2rlenv.validate.image_leaks import LABEL, SCAN, hidden_digests, image_leak_request
from tests.anchors.test_anchors import repo  # noqa: F401 (fixture)

HIDDEN_TEST = b"from calc import add\n\n\ndef test_add_is_a_sum():\n    assert add(2, 3) == 5\n"


class _Tree:
    """The part of a TaskTree the check reads."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = {rel: (content, False) for rel, content in files.items()}


def test_scan_finds_a_copy_of_a_hidden_test_anywhere_but_not_an_older_version(tmp_path):
    tree = _Tree({"tests/hidden/test_hidden.py": HIDDEN_TEST, "tests/hidden/__init__.py": b""})
    digests = tmp_path / "digests.json"
    digests.write_text(json.dumps(hidden_digests(tree)))
    root = tmp_path / "image"
    (root / "usr/lib/pkg").mkdir(parents=True)
    (root / "usr/lib/pkg/test_hidden.py").write_bytes(HIDDEN_TEST)  # e.g. from a wheel
    (root / "workspace").mkdir()
    (root / "workspace/test_hidden.py").write_bytes(HIDDEN_TEST.replace(b"5", b"6"))  # older
    (root / "workspace/__init__.py").write_bytes(b"")
    out = subprocess.run(
        [sys.executable, "-c", SCAN, str(root), str(digests)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines() == [
        f"LEAK {root}/usr/lib/pkg/test_hidden.py = tests/hidden/test_hidden.py",
        f"SCANNED {root}",
    ]


def test_no_hidden_tests_no_check():
    assert image_leak_request(_Tree({"tests/test.sh": b"#!/bin/sh\necho 1\n"})) is None
    assert image_leak_request(_Tree({"tests/hidden/t.py": HIDDEN_TEST})) is not None


def test_a_leak_the_scan_printed_is_a_finding_and_scores_nothing():
    ok = [
        TrialResult(label="reference", status="ok", reward=1.0),
        TrialResult(label="noop", status="ok", reward=0.0),
    ]
    leaked = TrialResult(
        label=LABEL,
        status="ok",
        reward=0.0,
        agent_output="LEAK /workspace/t.py = tests/hidden/t.py\n",
    )
    assert [f.rule_id for f in judge([*ok, leaked])] == [LABEL]
    clean = TrialResult(label=LABEL, status="ok", reward=1.0, agent_output="SCANNED /\n")
    assert judge([*ok, clean]) == []


def test_a_scan_that_never_finished_is_a_warning_not_a_clean_image():
    """No LEAK line from a scan that did not run (no python3 in a foreign image, or a
    runtime that returns no output) proves nothing, and must not read as clean."""
    ok = [
        TrialResult(label="reference", status="ok", reward=1.0),
        TrialResult(label="noop", status="ok", reward=0.0),
    ]
    silent = TrialResult(label=LABEL, status="ok", reward=0.0,
                         agent_output="sh: 1: python3: not found\n")  # fmt: skip
    findings = judge([*ok, silent])
    assert [(f.rule_id, f.severity) for f in findings] == [("leak.scan-incomplete", "warning")]
    assert "python3: not found" in findings[0].message


@pytest.mark.docker
def test_hidden_test_built_into_the_image_is_found_inside_the_container(
    repo,  # noqa: F811
    tmp_path,
    docker_ready,
):
    """An image build that writes a hidden test (here a RUN line; a wheel or a base image
    could as well) passes the static rules but not the in-container check."""
    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress
    from schemas import BundleFile
    from tests.mining.test_instance_repair import _events

    path, commit = repo
    [draft] = _events(tmp_path, path, commit, base_image=docker_ready)
    files = {f.path: f for f in draft.bundle.files}
    hidden = files["tests/hidden/test_hidden.py"].content
    dockerfile = files["environment/Dockerfile"].content.decode()
    encoded = base64.b64encode(hidden).decode()
    planted = dockerfile + (
        f"RUN python3 -c \"import base64, pathlib; pathlib.Path('/opt/cached_test.py')"
        f".write_bytes(base64.b64decode('{encoded}'))\"\n"
    )
    files["environment/Dockerfile"] = BundleFile(
        path="environment/Dockerfile", content=planted.encode()
    )
    bundle = draft.bundle.model_copy(update={"files": list(files.values())})
    task = write_bundle(bundle, tmp_path / "out").path
    report = validate_one(task, ValidateOptions(reruns=0), DockerRuntime(), None, SilentProgress())
    assert LABEL in [f.rule_id for f in report.findings]

    clean = write_bundle(draft.bundle, tmp_path / "clean").path
    report = validate_one(clean, ValidateOptions(reruns=0), DockerRuntime(), None, SilentProgress())
    assert LABEL not in [f.rule_id for f in report.findings]
    assert any(t.label == LABEL for t in report.trials)
