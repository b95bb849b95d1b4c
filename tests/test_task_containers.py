"""One way to start a task container: `validate` trials and harness rollouts both go
through `DockerRuntime.container`, so they share limits, labels, removal and abort
handling and differ only in network and role. The Docker client here is a recording
double; the real engine runs these paths in test_validate_docker.py and
tests/train/test_harness_e2e.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from repo2rlenv.bundle import TaskTree, read_task_dir
from repo2rlenv.runtime import AttachedNetwork, DockerRuntime, RuntimeAborted
from repo2rlenv.runtime.containers import container_kwargs
from repo2rlenv.runtime.owner import owner_labels
from train.harnesses.network import HarnessNetwork
from train.harnesses.trial import HOST_ALIAS, HarnessTrial, TrialAborted


class _Container:
    def __init__(self, ident: str) -> None:
        self.id = ident
        self.removed = 0

    def remove(self, force: bool = False) -> None:
        assert force
        self.removed += 1


class _Client:
    """Records what `containers.run` was asked for and hands out containers."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, dict[str, Any]]] = []
        self.made: list[_Container] = []
        self.containers = self

    def run(self, image: str, **kwargs: Any) -> _Container:
        self.runs.append((image, kwargs))
        self.made.append(_Container(f"c{len(self.made)}"))
        return self.made[-1]


@pytest.fixture
def task(examples_dir: Path) -> TaskTree:
    return read_task_dir(examples_dir / "example-repair-median")


def test_trial_container_follows_the_task(task: TaskTree) -> None:
    env = task.config.environment
    offline = container_kwargs(task, "no-network")
    assert offline["network_mode"] == "none" and "network_disabled" not in offline
    assert offline["command"] == ["sleep", "infinity"] and offline["detach"] is True
    assert offline["working_dir"] == env.workdir
    assert offline["mem_limit"] == f"{env.memory_mb}m"
    assert offline["nano_cpus"] == int(min(env.cpus, os.cpu_count() or 1) * 1e9)
    assert offline["labels"] == {
        "rlenv-harvest": "trial",
        "rlenv-harvest.task": task.name,
        **owner_labels(),
    }
    assert offline["labels"]["rlenv-harvest.pid"] == str(os.getpid())
    public = container_kwargs(task, "public")
    assert public["network_mode"] == "bridge" and "network_disabled" not in public


def test_attached_network_and_role_labels(task: TaskTree) -> None:
    network = AttachedNetwork(name="harness-net", extra_hosts={"host.docker.internal": "10.9.0.1"})
    kwargs = container_kwargs(
        task, network, {"rlenv-harvest": "harness-trial", "rlenv-harvest.session": "s1"}
    )
    assert kwargs["network"] == "harness-net"
    assert kwargs["extra_hosts"] == {"host.docker.internal": "10.9.0.1"}
    assert "network_mode" not in kwargs and "network_disabled" not in kwargs
    assert kwargs["labels"] == {
        "rlenv-harvest": "harness-trial",
        "rlenv-harvest.task": task.name,
        **owner_labels(),  # what reaping the containers of dead runs reads
        "rlenv-harvest.session": "s1",
    }
    with pytest.raises(ValueError):
        AttachedNetwork(name="")


def test_rollout_and_trial_containers_differ_only_in_network_and_role(task: TaskTree) -> None:
    client = _Client()
    runtime = DockerRuntime(client)  # type: ignore[arg-type]
    trial = HarnessTrial(runtime, HarnessNetwork(name="harness-net", gateway="10.9.0.1"))
    with runtime.container(task, "task-image", "no-network") as plain:
        assert runtime._live == {plain.id: plain}
    with trial.agent_container(task, "layer-image", "sess-1") as agent:
        assert runtime._live == {agent.id: agent}
    assert [c.removed for c in client.made] == [1, 1] and runtime._live == {}

    (image_a, a), (image_b, b) = client.runs
    assert (image_a, image_b) == ("task-image", "layer-image")
    assert b["network"] == "harness-net" and b["extra_hosts"] == {HOST_ALIAS: "10.9.0.1"}
    assert b["labels"]["rlenv-harvest"] == "harness-trial"
    assert b["labels"]["rlenv-harvest.session"] == "sess-1"
    assert b["labels"]["rlenv-harvest.pid"] == a["labels"]["rlenv-harvest.pid"]
    differ = {"network", "extra_hosts", "network_mode", "labels"}
    assert {k: v for k, v in a.items() if k not in differ} == {
        k: v for k, v in b.items() if k not in differ
    }


def test_a_container_is_removed_when_its_user_fails(task: TaskTree) -> None:
    client = _Client()
    runtime = DockerRuntime(client)  # type: ignore[arg-type]
    with pytest.raises(KeyError), runtime.container(task, "img", "public"):
        raise KeyError("boom")
    assert client.made[0].removed == 1 and runtime._live == {}


def test_abort_removes_live_containers_and_refuses_new_ones(task: TaskTree) -> None:
    client = _Client()
    runtime = DockerRuntime(client)  # type: ignore[arg-type]
    trial = HarnessTrial(runtime, HarnessNetwork(name="harness-net", gateway="10.9.0.1"))
    with trial.agent_container(task, "layer-image", "sess-1") as agent:
        runtime.abort()  # Ctrl-C while a rollout runs
        assert agent.removed == 1 and runtime._live == {}
    with pytest.raises(RuntimeAborted):
        runtime.container(task, "img", "public").__enter__()
    with pytest.raises(TrialAborted) as caught:
        trial.agent_container(task, "layer-image", "sess-2").__enter__()
    assert caught.value.reason == "rollout.aborted"
    assert len(client.runs) == 1  # nothing new was started after the abort
