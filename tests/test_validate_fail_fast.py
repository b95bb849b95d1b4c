"""Fail fast (issue 26, point 8): a reference trial that fails or times out ends its
task's other trials at once (reruns, no-op, probes, leak scan): a verifier that hangs
costs one timeout, not twelve. The skipped trials are counted as skipped, with
`not run: reference failed`, never as passed or as the backend's errors. A stub runtime
counts the trials it is asked to run; the Docker test checks that a network attempt
inside `no-network` fails at once instead of waiting out a timeout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repo2rlenv.bundle import TaskTree, find_task_dirs, read_task_dir
from repo2rlenv.runtime import TrialRequest, TrialResult
from repo2rlenv.validate import ValidateOptions, validate_tasks
from repo2rlenv.validate.dynamic import SKIPPED, run_dynamic


class CountingRuntime:
    """Answers every trial with `outcome(label)`; `asked` lists the trials run."""

    name = "stub:count"

    def __init__(self, reference: TrialResult | None = None, noop_reward: float = 0.0) -> None:
        self.reference = reference
        self.noop_reward = noop_reward
        self.asked: list[str] = []

    def check(self) -> None: ...

    def abort(self) -> None: ...

    def environment_key(self, task: TaskTree) -> str:
        return "stub"

    def prepare(self, task: TaskTree) -> str:
        return "image"

    def run_trial(self, task: TaskTree, image: str, request: TrialRequest) -> TrialResult:
        self.asked.append(request.label)
        if request.label.startswith("reference") and self.reference is not None:
            return self.reference.model_copy(update={"label": request.label})
        if request.label.startswith("noop"):
            return TrialResult(label=request.label, status="ok", reward=self.noop_reward)
        reward = 1.0 if request.apply_solution and request.label.startswith("reference") else 0.0
        return TrialResult(label=request.label, status="ok", reward=reward)


@pytest.fixture
def task(examples_dir: Path) -> TaskTree:
    return read_task_dir(find_task_dirs([examples_dir])[0])


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        (TrialResult(label="reference", status="ok", reward=0.0), "failed (reference scored 0)"),
        (TrialResult(label="reference", status="verifier-timeout"), "timed out (verifier-timeout)"),
        (TrialResult(label="reference", status="reward-missing"), "failed (reward-missing)"),
    ],
)
def test_a_failed_reference_is_the_only_trial_run(task, reference, why):
    runtime = CountingRuntime(reference)
    findings, trials = run_dynamic(task, runtime, reruns=5, probes=True)
    assert runtime.asked == ["reference"]  # not 12 + probes + the leak scan
    assert len(trials) > 12
    skipped = trials[1:]
    assert {t.status for t in skipped} == {SKIPPED}
    assert {t.detail for t in skipped} == {f"not run: reference {why}"}
    assert "run.error" not in {f.rule_id for f in findings}  # not the backend's


def test_a_sound_task_runs_every_trial(task):
    runtime = CountingRuntime()
    _, trials = run_dynamic(task, runtime, reruns=5, probes=True)
    assert len(runtime.asked) == len(trials) and SKIPPED not in {t.status for t in trials}


def test_a_scoring_noop_does_not_end_the_task(task):
    """Its reruns tell a flaky verifier from a wrong one: they still run."""
    runtime = CountingRuntime(noop_reward=1.0)
    _, trials = run_dynamic(task, runtime, reruns=2, probes=False)
    assert len(runtime.asked) == len(trials) == 6


def test_validate_reports_the_skipped_trials_as_skipped(examples_dir, tmp_path):
    source = find_task_dirs([examples_dir])[0]
    shutil.copytree(source, tmp_path / "t")
    runtime = CountingRuntime(TrialResult(label="reference", status="ok", reward=0.0))
    options = ValidateOptions(reruns=5, jobs=1, use_cache=False, runtime="stub:count")
    report = validate_tasks([tmp_path / "t"], options, runtime)
    summary = report.summary()
    assert runtime.asked == ["reference"]
    assert summary["trials_run"] == 1 and summary["infra_errors"] == 0
    assert summary["trials_skipped"] == len(report.tasks[0].trials) - 1
    assert [f.rule_id for f in report.tasks[0].errors][:1] == ["run.reference-failed"]
    assert report.tasks[0].label.status != "verified"


NETWORK_TRY = """
import errno, socket
socket.setdefaulttimeout(300)
try:
    socket.getaddrinfo("pypi.org", 443)
    print("dns: answered")
except socket.timeout:
    print("dns: timeout")
except OSError as exc:
    print("dns: refused", type(exc).__name__)
print("localhost:", socket.getaddrinfo("localhost", 0)[0][4][0])
try:
    socket.create_connection(("151.101.0.223", 443))
    print("connect: connected")
except socket.timeout:
    print("connect: timeout")
except OSError as exc:
    print("connect: refused", errno.errorcode.get(exc.errno))
"""


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_a_network_attempt_in_no_network_fails_at_once(examples_dir, docker_ready):
    """The verifier's container in `no-network` has loopback only (Harbor's
    `network_mode: none`, which the Docker runtime uses too): a name lookup and a
    connect fail at once (no resolver, no route), so a suite that downloads test data
    (pydicom) fails its tests rather than hang until the verifier's timeout, while
    `localhost` still resolves (matplotlib's pytest-rerunfailures binds it; docker-py's
    `network_disabled` left it unresolvable). The answer names how each attempt ended:
    a timeout would say `timeout`."""
    import docker

    from repo2rlenv.runtime.containers import container_kwargs

    task = read_task_dir(find_task_dirs([examples_dir])[0])
    client = docker.from_env(timeout=120)
    kwargs = container_kwargs(task, "no-network")
    container = client.containers.run(docker_ready, **kwargs)
    try:
        _code, output = container.exec_run(["python3", "-c", NETWORK_TRY])
    finally:
        container.remove(force=True)
    lines = output.decode().split("\n")
    assert "dns: refused gaierror" in lines, lines
    assert "localhost: 127.0.0.1" in lines, lines
    assert "connect: refused ENETUNREACH" in lines, lines
