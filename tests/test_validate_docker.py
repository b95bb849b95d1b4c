"""`repo2rlenv validate` against a real Docker engine, driven as a user drives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.cli import main
from repo2rlenv.runtime import DockerRuntime, TrialRequest
from repo2rlenv.validate.probes import PROBES
from tests.broken import write_broken_suite

pytestmark = pytest.mark.docker


def run_cli(*args: str, capsys) -> tuple[int, dict]:
    code = main(["validate", "-q", "--json", "-", *args])
    return code, json.loads(capsys.readouterr().out)


def leftover_containers(pid: int | None = None) -> list[str]:
    """Containers this test process (or `pid`) started and did not remove; other runs on
    the same engine are not ours to count."""
    client = docker.from_env()
    label = f"rlenv-harvest.pid={pid or os.getpid()}"
    return [c.name for c in client.containers.list(all=True, filters={"label": label})]


def test_examples_are_verified_cached_and_labelled(docker_ready, examples_dir, capsys):
    code, report = run_cli(str(examples_dir), "--write-labels", capsys=capsys)
    assert code == 0
    assert report["summary"]["labels"] == {"verified": 4}
    for task in report["tasks"]:
        rewards = {
            t["label"]: t["reward"] for t in task["trials"] if not t["label"].startswith("probe.")
        }
        assert rewards == {
            "reference": 1.0,
            "noop": 0.0,
            "reference-rerun-1": 1.0,
            "noop-rerun-1": 0.0,
            "reference-rerun-2": 1.0,
            "noop-rerun-2": 0.0,
        }
        assert all(t["wall_s"] > 0 for t in task["trials"])
        tree = read_task_dir(Path(task["path"]))
        label = tree.config.metadata.repo2rlenv.evaluation
        assert label.status == "verified" and label.checked_at is None  # no time in task bytes
        assert task["label"]["checked_at"]  # the report keeps it
        assert tree.content_hash == task["content_hash"]  # labelling kept the identity
        assert {c.rule_id: c.status for c in tree.config.metadata.repo2rlenv.checks} == {
            "static": "passed",
            "reference": "passed",
            "noop": "passed",
            # the probes planted on the task (the JavaScript/Go/Rust runners' apply to theirs)
            **{rule: "passed" for rule, probe in PROBES.items()
               if probe.applies is None or probe.applies(tree)},
        }  # fmt: skip
    assert leftover_containers() == []

    # A second run re-checks nothing: every verdict comes from the content-hash cache,
    # and labelling again leaves every task.toml byte for byte as it was.
    tomls = sorted(examples_dir.glob("*/task.toml"))
    before = [p.read_bytes() for p in tomls]
    code, again = run_cli(str(examples_dir), "--write-labels", capsys=capsys)
    assert code == 0 and again["summary"]["cached"] == 4
    assert [p.read_bytes() for p in tomls] == before

    # Changing one task's verifier re-checks that task only.
    check = examples_dir / "example-qa-config" / "tests" / "check.py"
    check.write_text(check.read_text().replace('"workers": 8', '"workers": 7'))
    code, third = run_cli(str(examples_dir), capsys=capsys)
    by_id = {t["task_id"]: t for t in third["tasks"]}
    assert code == 1
    assert [t for t, r in by_id.items() if not r["cached"]] == ["example-qa-config"]
    assert {f["rule_id"] for f in by_id["example-qa-config"]["findings"]} >= {
        "run.reference-failed"
    }


def test_broken_suite_each_reported_with_its_rule(docker_ready, tmp_path, capsys):
    expected = write_broken_suite(tmp_path, docker_ready)
    flaky = tmp_path / "broken-flaky-verifier"
    others = [str(p) for p in sorted(tmp_path.iterdir()) if p != flaky]
    code, report = run_cli(*others, "-j", "2", "--reruns", "1", "--no-probes", capsys=capsys)
    assert code == 1
    # A coin-flip verifier: when its first reference run scores 0 the task is refused at
    # once and its other trials are skipped, not run; otherwise it agrees with itself
    # over 8 reference and 8 no-op runs with probability 2**-14, the only chance of this
    # test failing wrongly.
    flaky_code, flaky_report = run_cli(str(flaky), "--reruns", "7", "--no-probes", capsys=capsys)
    assert flaky_code == 1
    flaky_trials = flaky_report["tasks"][0]["trials"]
    if flaky_trials[0]["reward"] == 0.0:
        expected[flaky.name] = "run.reference-failed"
        assert [t["status"] for t in flaky_trials[1:]] == ["skipped"] * (len(flaky_trials) - 1)
    report["tasks"] += flaky_report["tasks"]
    report["summary"]["invalid"] += flaky_report["summary"]["invalid"]
    found = {
        t["task_id"]: {f["rule_id"] for f in t["findings"] if f["severity"] == "error"}
        for t in report["tasks"]
    }
    assert set(found) == set(expected)
    for name, rule in expected.items():
        assert rule in found[name], (name, found[name])
        assert not any(f.startswith("run.error") for f in found[name]), (name, found[name])
    assert report["summary"]["invalid"] == len(expected)
    labels = {t["task_id"]: t["label"]["status"] for t in report["tasks"]}
    assert labels["broken-malformed-toml"] == "blocked"
    assert labels["broken-symlink-escapes"] == "blocked"
    assert labels["broken-noop-passes"] == "needs_repair"
    timed = next(t for t in report["tasks"] if t["task_id"] == "broken-verifier-timeout")
    assert all(t["wall_s"] < 30 for t in timed["trials"])  # killed at 2 s, not after 120 s
    assert leftover_containers() == []


def _trial(examples_dir: Path, name: str, request: TrialRequest):
    runtime = DockerRuntime()
    tree = read_task_dir(examples_dir / name)
    return runtime.run_trial(tree, runtime.prepare(tree), request)


def test_agent_phase_has_no_network_and_declared_limits(docker_ready, examples_dir):
    """The qa grader echoes the numbers it parsed, so the probe reports through it:
    port = network interfaces other than loopback, workers = memory limit in MiB."""
    probe = (
        "python3 - <<'PY'\nimport os\n"
        "nets = [n for n in os.listdir('/sys/class/net') if n != 'lo']\n"
        "v1 = '/sys/fs/cgroup/memory/memory.limit_in_bytes'\n"
        "raw = open(v1 if os.path.exists(v1) else '/sys/fs/cgroup/memory.max').read()\n"
        "open('answer.txt', 'w').write(f'port={len(nets)}\\nworkers={int(raw) >> 20}\\n')\n"
        "PY"
    )
    result = _trial(
        examples_dir, "example-qa-config", TrialRequest(label="probe", agent_commands=[probe])
    )
    assert result.status == "ok" and result.reward == 0.0
    assert "found {'port': 0, 'workers': 1024}" in result.verifier_log_tail, (
        result.verifier_log_tail
    )


def test_verifier_sees_only_the_workspace(docker_ready, examples_dir):
    """Files planted outside /workspace (a pre-written reward, a shadowing python) stay
    in the agent's container; the fresh verifier container never sees them."""
    planted = {
        "/logs/verifier/reward.txt": b"1\n",
        "/usr/local/bin/python3": b"#!/bin/sh\nexit 0\n",
    }
    result = _trial(
        examples_dir,
        "example-build-wordfreq",
        TrialRequest(
            label="forgery", plant_files=planted, agent_commands=["chmod +x /usr/local/bin/python3"]
        ),
    )
    assert result.status == "ok" and result.reward == 0.0


def test_missing_engine_is_a_setup_error(examples_dir, monkeypatch, capsys):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert main(["validate", "-q", str(examples_dir)]) == 2
    assert "repo2rlenv setup" in capsys.readouterr().err


def _default_sigint() -> None:
    """The child takes SIGINT as from a terminal's Ctrl-C even where the suite runs
    under a shell that ignores it: a non-interactive shell's background job (`cmd &`)
    ignores SIGINT, its children inherit that, and Python then never raises
    KeyboardInterrupt (CI run that way failed this test)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_removes_every_container(docker_ready, tmp_path):
    suite = tmp_path / "suite"
    write_broken_suite(suite, docker_ready)
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "repo2rlenv",
            "validate",
            "-q",
            "--no-cache",
            "--reruns",
            "5",
            "-j",
            "2",
            str(suite / "broken-verifier-timeout"),
            str(suite / "broken-flaky-verifier"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not leftover_containers(proc.pid):
        time.sleep(0.2)
    assert leftover_containers(proc.pid), "validate never started a container"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-2000:]
    assert leftover_containers(proc.pid) == []
