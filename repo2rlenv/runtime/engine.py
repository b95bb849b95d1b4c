"""Getting a Docker engine to answer, on a fresh machine if need be.

On a Debian-like machine as root this installs Debian's docker.io and starts dockerd
in the background; elsewhere it says exactly what to do instead. Used by
`repo2rlenv setup`, which the Makefile's demo and test targets run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import docker
from docker.errors import DockerException

DOCKERD_LOG = Path("/tmp/rlenv-harvest-dockerd.log")


class EngineError(Exception):
    pass


def engine_answers() -> bool:
    try:
        docker.from_env(timeout=10).ping()
        return True
    except (DockerException, OSError):
        return False


def run_logged(cmd: list[str], log: list[str]) -> None:
    log.append("$ " + " ".join(cmd))
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise EngineError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")


def ensure_engine(log: list[str], wait_s: float = 60.0) -> str:
    """Make `docker info` answer; returns what was done. Raises EngineError with advice."""
    if engine_answers():
        return "running"
    if shutil.which("dockerd") is None:
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            raise EngineError(
                "No Docker engine is installed and this is not a root Debian/Ubuntu shell; "
                "install Docker (https://docs.docker.com/engine/install/) and start it."
            )
        run_logged(["apt-get", "update", "-qq"], log)
        run_logged(["apt-get", "install", "-y", "-qq", "docker.io"], log)
    if os.geteuid() != 0:
        raise EngineError("dockerd is installed but not running; start it (sudo dockerd &).")
    log.append(f"$ dockerd > {DOCKERD_LOG} 2>&1 &")
    with open(DOCKERD_LOG, "ab") as sink:
        subprocess.Popen(["dockerd"], stdout=sink, stderr=sink, start_new_session=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if engine_answers():
            return "started"
        time.sleep(0.5)
    raise EngineError(f"dockerd did not answer within {wait_s:.0f}s; see {DOCKERD_LOG}")
