"""`--runtime harbor:docker` against a real engine: Harbor's own Docker environment runs
the trials, and validate must reach the verdicts the Docker runtime reaches."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples import example_bundle
from repo2rlenv.runtime import TrialRequest
from repo2rlenv.runtime.harbor_protocol import session_prefix
from repo2rlenv.runtime.harbor_runtime import HarborRuntime, default_python
from repo2rlenv.runtime.owner import PID_LABEL
from schemas import BundleFile
from tests.broken import BROKEN, SOURCE
from tests.test_probes_docker import NAIVE_TEST_SH

pytestmark = [
    pytest.mark.docker,
    pytest.mark.harbor,
    pytest.mark.skipif(
        not default_python().exists(), reason=f"Harbor's interpreter is not at {default_python()}"
    ),
]

SUITE = (
    "broken-reference-fails",
    "broken-noop-passes",
    "broken-missing-reward",
    "broken-reward-out-of-range",
    "broken-verifier-timeout",
)
"""A few of the broken suite's run-time defects: each a different verdict, few trials."""

ISOLATION_TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
echo "agent: $(cat /workspace/ifaces)  verifier: $(ls /sys/class/net | tr '\\n' ' ')"
test "$(cat /workspace/ifaces)" = "lo" || exit 0
test "$(ls /sys/class/net)" = "lo" || exit 0
test -e /root/outside-marker && exit 0
echo 1 > /logs/verifier/reward.txt
"""


def harbor_projects(*pids: int) -> list[str]:
    """Compose projects that this test process's Harbor runtime (or those of the `pids`,
    validate processes it started) started and that still have containers (other runs on
    the same engine are not ours to count)."""
    client = docker.from_env()
    found = client.containers.list(all=True, filters={"label": "com.docker.compose.project"})
    names = {c.labels["com.docker.compose.project"] for c in found}
    prefixes = tuple(session_prefix(pid) for pid in pids) or (session_prefix(),)
    return sorted(n for n in names if n.startswith(prefixes))


HIDDEN_TEST = b"def test_hidden_sum_is_not_in_the_agent_image():\n    assert 1 + 1 == 2\n"


def verdicts(report: dict) -> dict[str, tuple]:
    """Per task: label, error rules, other rules, and each trial's (status, reward)."""
    return {
        task["task_id"]: (
            task["label"]["status"],
            sorted({f["rule_id"] for f in task["findings"] if f["severity"] == "error"}),
            sorted({f["rule_id"] for f in task["findings"] if f["severity"] != "error"}),
            {t["label"]: (t["status"], t["reward"]) for t in task["trials"]},
        )
        for task in report["tasks"]
    }


def validate_side_by_side(runs: dict[str, list[str]], where: Path) -> dict[str, dict]:
    """`repo2rlenv validate -q --no-cache --json` once per named argument list, all at
    once as the user's command (a trial mostly waits on its containers): reports by name,
    each with the `pid` of the process that wrote it."""
    cli = str(Path(sys.executable).parent / "repo2rlenv")
    started = {}
    for name, args in runs.items():
        report = where / f"{name}.json"
        command = [cli, "validate", "-q", "--no-cache", "--json", str(report), *args]
        with (where / f"{name}.log").open("wb") as log:
            started[name] = (
                subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT),
                report,
            )
    reports = {}
    for name, (process, report) in started.items():
        code = process.wait(timeout=900)
        assert report.exists(), (where / f"{name}.log").read_text()[-3000:]
        reports[name] = json.loads(report.read_text()) | {"pid": process.pid}
        assert code == report_exit(reports[name]), (where / f"{name}.log").read_text()[-3000:]
    return reports


def report_exit(report: dict) -> int:
    return 0 if all(t["valid"] for t in report["tasks"]) else 1


@pytest.mark.slow
def test_same_verdicts_under_docker_and_harbor(docker_ready, tmp_path):
    # The good task carries a hidden test, so the in-image leak scan runs on both
    # runtimes too (its output must come back through Harbor's driver).
    base = example_bundle(SOURCE, docker_ready)
    hidden = BundleFile(path="tests/hidden/test_hidden_sum.py", content=HIDDEN_TEST)
    good = write_bundle(
        base.model_copy(update={"files": [*base.files, hidden]}), tmp_path / "suite"
    ).path
    for name in SUITE:
        bundle = example_bundle(SOURCE, docker_ready).model_copy(update={"task_id": name})
        BROKEN[name][0](write_bundle(bundle, tmp_path / "suite").path)
    forgeable = write_bundle(
        example_bundle(SOURCE, docker_ready).model_copy(update={"task_id": "naive-verifier"}),
        tmp_path / "probed",
    ).path
    (forgeable / "tests" / "test.sh").write_text(NAIVE_TEST_SH)
    toml = forgeable / "task.toml"
    text = toml.read_text().replace('environment_mode = "separate"', 'environment_mode = "shared"')
    toml.write_text(re.sub(r'artifacts = \[\s*"/workspace",\s*\]\n', "", text))

    runs = {}
    for runtime in ("docker", "harbor:docker"):
        runs[f"{runtime}-plain"] = ["--runtime", runtime, "-j", "2", "--reruns", "0",
                                    "--no-probes", str(tmp_path / "suite")]  # fmt: skip
        runs[f"{runtime}-probed"] = ["--runtime", runtime, "--reruns", "0", str(forgeable)]
    reports = validate_side_by_side(runs, tmp_path)
    found = {}
    for runtime in ("docker", "harbor:docker"):
        plain, probed = reports[f"{runtime}-plain"], reports[f"{runtime}-probed"]
        assert plain["options"]["runtime"] == probed["options"]["runtime"] == runtime
        found[runtime] = verdicts(plain) | verdicts(probed)

    assert found["harbor:docker"] == found["docker"]
    docker_verdicts = found["docker"]
    assert docker_verdicts[good.name][0] == "verified"
    assert "leak.hidden-test-in-image" in docker_verdicts[good.name][3]  # the scan ran
    # And finished: no leak.scan-incomplete. The one warning allowed is the base image's:
    # the suite builds on the offline base, which only this machine has.
    assert set(docker_verdicts[good.name][2]) <= {"env.local-only-base"}
    for name in SUITE:
        assert BROKEN[name][1] in docker_verdicts[name][1], name
    fooled = [r for r in docker_verdicts["naive-verifier"][1] if r.startswith("probe.")]
    assert {"probe.conftest-pass-all", "probe.fake-pytest"} <= set(fooled)
    assert harbor_projects(*(report["pid"] for report in reports.values())) == []


def test_harbor_trial_keeps_no_network_and_hands_over_only_the_workspace(docker_ready, tmp_path):
    """Offline, Harbor's sidecar cannot be built; the agent and the separate verifier
    must still have no network interface but loopback, and a file the agent leaves
    outside /workspace must not reach the verifier."""
    path = write_bundle(example_bundle(SOURCE, docker_ready), tmp_path).path
    (path / "tests" / "test.sh").write_text(ISOLATION_TEST_SH)
    tree = read_task_dir(path)
    assert tree.config.agent_network_mode == "no-network"
    runtime = HarborRuntime("docker")
    runtime.check()
    request = TrialRequest(
        label="isolation",
        agent_commands=["ls /sys/class/net > /workspace/ifaces", "touch /root/outside-marker"],
    )
    result = runtime.run_trial(tree, runtime.prepare(tree), request)
    assert (result.status, result.reward) == ("ok", 1.0), result
    assert "agent: lo  verifier: lo" in result.verifier_log_tail
    assert harbor_projects() == []


def test_abort_stops_every_harbor_environment(docker_ready, tmp_path):
    """Ctrl-C calls `abort()`: the driver is told to stop, deletes what it started, and
    the trial ends as aborted; no trial starts after it."""
    import threading
    import time

    path = write_bundle(example_bundle(SOURCE, docker_ready), tmp_path).path
    tree = read_task_dir(path)
    runtime = HarborRuntime("docker")
    image = runtime.prepare(tree)
    request = TrialRequest(label="slow", agent_commands=["sleep 300"])
    box: dict[str, object] = {}
    worker = threading.Thread(target=lambda: box.update(r=runtime.run_trial(tree, image, request)))
    worker.start()
    deadline = time.monotonic() + 120
    while not harbor_projects() and time.monotonic() < deadline:
        time.sleep(1)
    assert harbor_projects(), "the trial never started an environment"
    client = docker.from_env()
    project = harbor_projects()[0]
    running = client.containers.list(filters={"label": f"com.docker.compose.project={project}"})
    assert running and all(c.labels.get(PID_LABEL) == str(os.getpid()) for c in running)
    runtime.abort()
    worker.join(120)
    assert not worker.is_alive()
    result = box["r"]
    assert (result.status, result.detail, result.infra_retries) == ("error", "aborted", 0)
    assert harbor_projects() == []
    again = runtime.run_trial(tree, image, TrialRequest(label="noop"))
    assert (again.status, again.detail) == ("error", "aborted")
