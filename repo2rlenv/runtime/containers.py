"""How a task container is started, for every caller (how a separate verifier container
receives the agent's artifacts: `runtime.handover`).

`validate` trials and training rollouts start their containers from the same task
settings (workdir, env, cpu and memory limits) and label them the same way, so a
leftover can always be traced to its owner process (`runtime.owner`); only the network differs: a
trial follows the task's `network_mode`, a rollout joins the harness network where
the guard is reachable. `DockerRuntime.container` is the one entry point.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime.owner import LABEL, owner_labels


class AttachedNetwork(BaseModel):
    """A named Docker network to join instead of the task's network mode, with extra
    /etc/hosts entries (e.g. `host.docker.internal` -> the network's gateway)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    extra_hosts: dict[str, str] = Field(default_factory=dict)


def container_labels(task: TaskTree, labels: Mapping[str, str] | None = None) -> dict[str, str]:
    """The task and owner labels every container gets (a later run reaps it if its
    owner dies unseen), then the caller's, which may replace the role
    (`rlenv-harvest=trial`)."""
    return {
        LABEL: "trial",
        f"{LABEL}.task": task.name,
        **owner_labels(),
        **(labels or {}),
    }


def container_kwargs(
    task: TaskTree,
    network: str | AttachedNetwork,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`containers.run` arguments for an idle container of the task: `network` is a
    Harbor network mode (`public` gets the bridge, anything else no network) or a
    named network to join."""
    env = task.config.environment
    kwargs: dict[str, Any] = {
        "command": ["sleep", "infinity"],
        "detach": True,
        "labels": container_labels(task, labels),
        "environment": dict(env.env),
    }
    if isinstance(network, AttachedNetwork):
        kwargs["network"] = network.name
        if network.extra_hosts:
            kwargs["extra_hosts"] = dict(network.extra_hosts)
    elif network == "public":
        kwargs["network_mode"] = "bridge"
    else:
        # Harbor's `network_mode: none` (docker-compose-no-network.yaml): loopback and
        # an /etc/hosts that names `localhost`. docker-py's `network_disabled` gave
        # neither, so a suite binding "localhost" (pytest-rerunfailures' socket, a
        # local test server) failed where SWE-bench's harness and Harbor pass it.
        kwargs["network_mode"] = "none"
    if env.workdir:
        kwargs["working_dir"] = env.workdir
    if env.cpus:
        kwargs["nano_cpus"] = int(min(env.cpus, os.cpu_count() or 1) * 1e9)
    if env.memory_mb:
        kwargs["mem_limit"] = f"{env.memory_mb}m"
    return kwargs
