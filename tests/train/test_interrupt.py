"""Ctrl-C on a real `python -m train --preset tiny-cpu` run, in the middle of a rollout.

The run is started in its own process group and interrupted the way a terminal does it
(SIGINT to the whole group: the CLI and its trainer processes; vLLM runs in a session of
its own, as a terminal would leave it), or the way a supervisor or `kill -INT PID` does
(SIGINT or SIGTERM to the `python -m train` process alone, which must then stop
everything itself within its bound). Afterwards nothing the run started may be left: no
rollout container with its labels, no process of its vLLM server or trainers, nothing
listening on the server's or the guard's port.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import docker
import docker.errors
import psutil
import pytest

from train.cli import EXIT_INTERRUPTED
from train.grpo.trainer_process import SPEC, TrainerSpec
from train.harnesses.runtimes import owned_runtime
from train.launch.run import STOP_BOUND_S

REPO = Path(__file__).resolve().parents[2]
START_BOUND_S = 1500.0
"""How long the run may take to start its first rollout container (vLLM CPU start, task
image, harness layer); past it the run is interrupted wherever it is."""
EXIT_BOUND_S = STOP_BOUND_S + 15.0
"""How long the interrupted run may take to clean up and exit: its own bound (a
trainer's graceful stop, then the kill, the container sweep, vLLM's stop), plus slack
for a machine whose CPUs the run's own processes keep busy."""
EXIT_LAG_S = 30.0
"""How long a process the run started may take to exit after the run itself has."""


def _run_containers(client: docker.DockerClient, run_id: str) -> list[str]:
    """Rollout containers of this run: the harness-trial role label and a session id
    that starts with the run's id (the scheduler names sessions `<run_id>-<harness>-…`)."""
    found = client.containers.list(all=True, filters={"label": "rlenv-harvest=harness-trial"})
    return [
        c.name for c in found if c.labels.get("rlenv-harvest.session", "").startswith(f"{run_id}-")
    ]


def _listening(url: str) -> bool:
    parts = urlsplit(url)
    host = "127.0.0.1" if parts.hostname in (None, "0.0.0.0") else parts.hostname
    with contextlib.suppress(OSError), socket.create_connection((host, parts.port), timeout=2):
        return True
    return False


Known = dict[int, tuple[float, str]]
"""pid -> (create time, so a reused pid does not count; command line, for the message)."""


def _alive(known: Known) -> list[str]:
    """The processes of `known` that still run, as `pid command`."""
    left = []
    for pid, (created, command) in known.items():
        try:
            process = psutil.Process(pid)
            if process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{pid} {command}")
        except psutil.NoSuchProcess:
            continue
    return left


def _gone(known: Known, bound_s: float = EXIT_LAG_S) -> list[str]:
    """What of `known` is still running once `bound_s` has passed (a child may take a
    moment to notice that its parent, which stopped it, has exited)."""
    deadline = time.monotonic() + bound_s
    while (left := _alive(known)) and time.monotonic() < deadline:
        time.sleep(1.0)
    return left


def _descendants(pid: int) -> Known:
    found = {}
    with contextlib.suppress(psutil.NoSuchProcess):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                found[child.pid] = (child.create_time(), " ".join(child.cmdline())[:160])
    return found


@contextlib.contextmanager
def _training(
    tasks: Path, out: Path, log: Path, *extra: str
) -> Iterator[tuple[subprocess.Popen[bytes], Known]]:
    """The run as a user starts it (`extra`: more options); whatever it leaves after a
    failed test is removed (the processes the test records in the yielded map, and the
    run's containers)."""
    command = [sys.executable, "-m", "train", "--tasks", str(tasks), "--preset", "tiny-cpu",
               "--out", str(out), *extra]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    seen: Known = {}
    try:
        yield process, seen
    finally:
        seen.update(_descendants(process.pid))
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for left in _alive(seen):  # vLLM's processes, when the run lost them
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(left.split()[0]), signal.SIGKILL)
        with contextlib.suppress(OSError, ValueError, docker.errors.DockerException):
            run_id = TrainerSpec.model_validate_json((out / "pi" / SPEC).read_text()).run_id
            client = docker.from_env()
            for name in _run_containers(client, run_id):
                client.containers.get(name).remove(force=True)


def _wait_for_rollout(
    process: subprocess.Popen[bytes], out: Path, client: docker.DockerClient
) -> tuple[TrainerSpec | None, Known, bool]:
    """Waits for the trainer's spec, then for one of its rollout containers; returns the
    spec, every process the run started so far, and whether a container was seen."""
    deadline = time.monotonic() + START_BOUND_S
    spec: TrainerSpec | None = None
    started: Known = {}
    while time.monotonic() < deadline and process.poll() is None:
        started.update(_descendants(process.pid))
        spec_path = out / "pi" / SPEC
        if spec is None and spec_path.exists():
            with contextlib.suppress(ValueError):
                spec = TrainerSpec.model_validate_json(spec_path.read_text())
        if spec is not None and _run_containers(client, spec.run_id):
            started.update(_descendants(process.pid))
            return spec, started, True
        time.sleep(2.0)
    return spec, started, False


def _interrupt(process: subprocess.Popen[bytes], how: str) -> None:
    if how == "group":
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
    else:  # a supervisor, `kill -INT PID`, `docker stop`: the parent process alone
        # SIGTERM takes the same handler (train.launch.run); each case costs a vLLM start in CI
        process.send_signal(signal.SIGINT if how == "parent-sigint" else signal.SIGTERM)


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.docker
@pytest.mark.parametrize(
    # CI's case is the parent alone: it must then stop the server and containers itself
    "how",
    [pytest.param("group", marks=pytest.mark.extended), "parent-sigint"],
)
def test_ctrl_c_mid_rollout_leaves_no_container_server_or_port(
    how: str, demo_tasks: Path, tmp_path: Path, docker_ready: str
) -> None:
    client = docker.from_env()
    out, log = tmp_path / "run", tmp_path / "train.log"
    with _training(demo_tasks, out, log) as (process, started):
        spec, seen, saw_container = _wait_for_rollout(process, out, client)
        started.update(seen)
        tail = log.read_text(errors="replace")[-3000:]
        assert process.poll() is None, f"the run ended before the interrupt:\n{tail}"
        assert spec is not None and spec.guard is not None, f"no trainer started:\n{tail}"
        assert saw_container, f"no rollout container within {START_BOUND_S:.0f}s:\n{tail}"
        server_url, guard_url = spec.server_url, spec.guard.admin_url
        assert _listening(server_url) and _listening(guard_url)
        assert started, "the run started no process (vLLM, trainer)"

        _interrupt(process, how)
        try:
            code = process.wait(timeout=EXIT_BOUND_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not exit within {EXIT_BOUND_S:.0f}s of the {how} signal")
        tail = log.read_text(errors="replace")[-3000:]

        assert code == EXIT_INTERRUPTED, f"exit {code}:\n{tail}"
        assert _run_containers(client, spec.run_id) == []
        assert _gone(started) == []
        assert not _listening(server_url), "the vLLM server still answers"
        assert not _listening(guard_url), "the guard still listens"
        outcome = json.loads((out / "pi" / "outcome.json").read_text())
        assert outcome["error"] == "run.interrupted"


EXIT_MID_ROLLOUT = """
import sys, threading, time
from repo2rlenv.bundle import read_task_dir
from train.harnesses.runtimes import owned_runtime

runtime = owned_runtime()
task, image, session = read_task_dir(sys.argv[1]), sys.argv[2], sys.argv[3]
ready = threading.Event()

def rollout():
    labels = {"rlenv-harvest.session": session}
    with runtime.container(task, image, "no-network", labels=labels):
        ready.set()
        time.sleep(3600)

threading.Thread(target=rollout, daemon=True).start()
assert ready.wait(300), "no container"
print("started", flush=True)
raise SystemExit(130)
"""
"""A process that exits while a rollout thread (a daemon, as the scheduler's are) still
holds its container, as a trainer does when a rollout outlasts its stop."""


@pytest.mark.docker
def test_a_runner_runtime_removes_its_containers_when_the_process_exits(
    examples_dir: Path, docker_ready: str
) -> None:
    assert owned_runtime().name == "docker"
    session = f"exit-test-{os.getpid()}-{time.monotonic_ns()}"
    task = examples_dir / "example-repair-median"
    client = docker.from_env()
    label = {"label": f"rlenv-harvest.session={session}"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", EXIT_MID_ROLLOUT, str(task), docker_ready, session],
            cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout.strip()) == (130, "started"), done.stderr
        assert client.containers.list(all=True, filters=label) == []
    finally:
        for container in client.containers.list(all=True, filters=label):
            container.remove(force=True)
