"""Containers carry their owner process; a later run removes those whose owner died."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import pytest
from docker.errors import NotFound

from repo2rlenv.runtime.owner import (
    HOST_LABEL,
    PID_LABEL,
    STARTED_LABEL,
    owner_is_gone,
    owner_labels,
    process_started,
    reap_orphans,
)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


class _Engine:
    """The engine's API as docker-py's client calls it, for three containers of this
    host: two whose owner died (one of them removed by another process meanwhile) and
    one whose owner lives. docker-py's model list inspects every listed container,
    which raises NotFound for the one removed in between."""

    def __init__(self) -> None:
        dead = {**owner_labels(), PID_LABEL: str(_dead_pid())}
        self.listed = [
            {"Id": "a" * 64, "Names": ["/gone-meanwhile"], "Labels": dead},
            {"Id": "b" * 64, "Names": ["/orphan"], "Labels": dead},
            {"Id": "c" * 64, "Names": ["/alive"], "Labels": owner_labels()},
        ]
        self.removed: list[str] = []

    def containers(self, all: bool, filters: dict, **kwargs) -> list[dict]:
        assert all and filters == {"label": HOST_LABEL}
        return self.listed

    def inspect_container(self, ident: str) -> dict:
        raise NotFound(f"No such container: {ident}")

    def remove_container(self, ident: str, **kwargs) -> None:
        if ident.startswith("a"):
            raise NotFound(f"No such container: {ident}")
        self.removed.append(ident)


def test_a_container_removed_while_orphans_are_reaped_is_skipped() -> None:
    """Another run removing a container between the list and its inspection ended
    `mine` with NotFound before it started (three runs sharing one engine)."""
    from docker.models.containers import ContainerCollection

    engine = _Engine()
    client = SimpleNamespace(api=engine)
    client.containers = ContainerCollection(client=client)
    with pytest.raises(NotFound):  # what docker-py's own list does in that race
        client.containers.list(all=True, filters={"label": HOST_LABEL})
    assert reap_orphans(client) == ["orphan"]
    assert engine.removed == ["b" * 64]


def test_a_living_owner_is_not_gone() -> None:
    assert not owner_is_gone(owner_labels())


def test_an_exited_owner_is_gone() -> None:
    labels = {**owner_labels(), PID_LABEL: str(_dead_pid())}
    assert owner_is_gone(labels)


def test_a_reused_pid_is_told_apart_by_its_start_time() -> None:
    labels = owner_labels()
    labels[STARTED_LABEL] = str(int(labels[STARTED_LABEL]) - 1)
    assert owner_is_gone(labels)


@pytest.mark.parametrize(
    "change",
    [
        {HOST_LABEL: "another-boot"},  # another host sharing the engine: unknown
        {HOST_LABEL: ""},
        {STARTED_LABEL: ""},
        {PID_LABEL: "not-a-pid"},
    ],
)
def test_owners_we_cannot_judge_are_left_alone(change: dict[str, str]) -> None:
    labels = {**owner_labels(), PID_LABEL: str(_dead_pid()), **change}
    assert not owner_is_gone(labels)


def test_labels_without_an_owner_are_left_alone() -> None:
    assert not owner_is_gone({"rlenv-harvest": "trial"})


def test_start_time_reads_a_command_name_with_spaces_and_parentheses(tmp_path) -> None:
    script = tmp_path / "a (b) c.py"
    script.write_text("import time; time.sleep(30)")
    link = tmp_path / "x) y"
    link.symlink_to(sys.executable)
    child = subprocess.Popen([str(link), str(script)])
    try:
        started = process_started(child.pid)
        assert started is not None and started.isdigit()
        assert int(started) >= int(process_started(os.getpid()) or 0)
    finally:
        child.kill()
        child.wait()
    assert process_started(child.pid) is None


@pytest.mark.docker
def test_containers_of_a_killed_run_are_reaped_by_the_next(
    examples_dir, docker_ready: str, tmp_path
) -> None:
    """A process that starts a task container and is SIGKILLed leaves it behind; the
    next runtime's check removes it, and leaves a living owner's container alone."""
    import docker

    from repo2rlenv.bundle import read_task_dir
    from repo2rlenv.runtime import DockerRuntime

    task_dir = examples_dir / "example-repair-median"
    marker = f"reap-{os.getpid()}-{time.monotonic_ns()}"
    code = textwrap.dedent(
        f"""
        import time
        from repo2rlenv.bundle import read_task_dir
        from repo2rlenv.runtime import DockerRuntime
        task = read_task_dir({str(task_dir)!r})
        labels = {{"rlenv-harvest.test": {marker!r}}}
        with DockerRuntime().container(task, {docker_ready!r}, "none", labels=labels):
            print("up", flush=True)
            time.sleep(120)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    client = docker.from_env()
    selector = {"label": f"rlenv-harvest.test={marker}"}
    runtime = DockerRuntime()
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        with runtime.container(
            read_task_dir(task_dir), docker_ready, "none", labels={"rlenv-harvest.test": marker}
        ):
            assert len(client.containers.list(all=True, filters=selector)) == 2
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            assert len(client.containers.list(all=True, filters=selector)) == 2
            runtime.check()
            left = client.containers.list(all=True, filters=selector)
            assert [c.labels[PID_LABEL] for c in left] == [str(os.getpid())]
    finally:
        child.kill()
        for container in client.containers.list(all=True, filters=selector):
            container.remove(force=True)
