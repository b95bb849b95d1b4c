"""Which process owns a container, and removing the containers of owners that died.

A run removes its own containers on every way out it sees (errors, Ctrl-C, SIGTERM),
but not when it is killed outright (SIGKILL, OOM killer, a lost machine). Each
container therefore carries its owner's identity: the host's boot id, the pid, and the
pid's start time (a pid alone is reused). The next run on the same host removes every
container whose owner is gone. Containers of other hosts sharing an engine, or without
these labels, are never touched: we cannot tell whether their owner lives.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from docker.errors import APIError, NotFound

LABEL = "rlenv-harvest"
PID_LABEL = f"{LABEL}.pid"
HOST_LABEL = f"{LABEL}.host"
STARTED_LABEL = f"{LABEL}.started"


@cache
def host_id() -> str:
    """The kernel's boot id: the same for every process of this boot, new after a
    reboot (when every earlier owner is gone anyway)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def process_started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from its end.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def owner_labels() -> dict[str, str]:
    """The labels naming this process as a container's owner."""
    pid = os.getpid()
    return {
        PID_LABEL: str(pid),
        HOST_LABEL: host_id(),
        STARTED_LABEL: process_started(pid) or "",
    }


def owner_is_gone(labels: Mapping[str, str]) -> bool:
    """True only when the labels name a process of this boot that no longer runs (its
    pid is free, or taken by a process started at another time)."""
    host, pid, started = labels.get(HOST_LABEL), labels.get(PID_LABEL), labels.get(STARTED_LABEL)
    if not host or host != host_id() or not started or not (pid or "").isdigit():
        return False
    return process_started(int(pid)) != started


def force_remove(container: Any) -> bool:
    """Remove a container, running or not; False when it was gone already (or another
    caller's removal of it is in progress)."""
    try:
        container.remove(force=True)
    except NotFound:
        return False
    except APIError as exc:
        if "already in progress" not in str(exc):
            raise
        return False
    return True


def reap_orphans(client: Any) -> list[str]:
    """Remove this host's containers whose owner died; returns their names. Read from
    the engine's list call alone, which carries names and labels: docker-py's model list
    inspects each listed container afterwards, and one that another process removed in
    between (validation loops and a test run sharing the engine) ended `mine` with
    NotFound before it had started."""
    reaped = []
    for entry in client.api.containers(all=True, filters={"label": HOST_LABEL}):
        gone = owner_is_gone(entry.get("Labels") or {})
        if gone and force_remove(client.containers.prepare_model(entry)):
            reaped.append((entry.get("Names") or [entry["Id"]])[0].lstrip("/"))
    return reaped
