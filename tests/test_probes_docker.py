"""Forgery probes against a real verifier: ours hold, a naive one is caught."""

from __future__ import annotations

import json
import re

import pytest

from repo2rlenv.cli import main
from repo2rlenv.validate.probes import PROBES

pytestmark = pytest.mark.docker

NAIVE_TEST_SH = """#!/bin/bash
cd /workspace
if pytest -q; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""


def test_naive_shared_verifier_is_caught_by_probes(docker_ready, examples_dir, capsys):
    task = examples_dir / "example-repair-median"
    (task / "tests" / "test.sh").write_text(NAIVE_TEST_SH)
    toml = task / "task.toml"
    text = re.sub(r'environment_mode = "separate"', 'environment_mode = "shared"', toml.read_text())
    toml.write_text(re.sub(r'artifacts = \[\s*"/workspace",\s*\]\n', "", text))
    assert main(["validate", "-q", "--no-cache", "--reruns", "0", "--json", "-", str(task)]) == 1
    report = json.loads(capsys.readouterr().out)["tasks"][0]
    rewards = {t["label"]: t["reward"] for t in report["trials"]}
    assert rewards["reference"] == 1.0 and rewards["noop"] == 0.0  # otherwise a sound task
    fooled = {f["rule_id"] for f in report["findings"] if f["rule_id"].startswith("probe.")}
    assert len(fooled) >= 3, fooled
    assert {"probe.conftest-pass-all", "probe.fake-pytest"} <= fooled
    assert report["label"]["status"] == "needs_repair"


def test_generated_verifiers_hold_against_every_probe(docker_ready, examples_dir, capsys):
    assert (
        main(
            [
                "validate",
                "-q",
                "--no-cache",
                "--reruns",
                "0",
                "--write-labels",
                "--json",
                "-",
                str(examples_dir),
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    planted = [p for p, probe in PROBES.items() if probe.applies is None]  # Python tasks
    for task in report["tasks"]:
        probes = {t["label"]: t["reward"] for t in task["trials"] if t["label"] in PROBES}
        assert probes == dict.fromkeys(planted, 0.0), task["task_id"]
    toml = (examples_dir / "example-repair-median" / "task.toml").read_text()
    assert 'rule_id = "probe.import-forgery"' in toml
