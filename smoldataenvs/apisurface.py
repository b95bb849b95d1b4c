"""Where the API surface comes from: the task image itself, or this machine.

With a container engine (reproduction on), the probe runs in an image built from the
same Dockerfile lines a task uses (`FROM <base>` plus the pinned installs of pandas
and numpy where the base lacks them), so the names are those of the exact library
versions the reference will meet; Docker's layer cache shares that build with the
tasks. It runs once per mining run, before any reference runs. Without an engine
(`mine --no-validate`) the probe runs in this process against the installed libraries;
either way the versions checked are recorded in each task's metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from repo2rlenv.bundle.reader import TaskTree
from schemas import TaskConfig
from smoldataenvs.apicheck import ApiSurface
from smoldataenvs.apiprobe import surface

PROBE_LIBRARIES = ["numpy", "pandas"]
PROBE_SOURCE = Path(__file__).resolve().parent / "apiprobe.py"


class ProbeError(Exception):
    pass


def local_surface() -> ApiSurface:
    return ApiSurface.model_validate(surface())


def probe_tree(base_image: str) -> TaskTree:
    """A build-only task tree whose Dockerfile installs what a task's would."""
    from smoldataenvs.task import dockerfile

    files = {
        "environment/Dockerfile": (dockerfile(base_image, PROBE_LIBRARIES, {}).encode(), False),
        "environment/workspace/.probe": (b"", False),
    }
    return TaskTree(root=Path("smoldata-api-probe"), files=files, config=TaskConfig())


def image_surface(runtime: Any, base_image: str) -> ApiSurface:
    """Build (or reuse) the probe image and run the probe in it, with no network.

    The probe runs a bare container, which only the local Docker runtime offers; on
    another runtime (`harbor:ENV`) it raises ProbeError, names go unchecked, and each
    reference trial on that runtime is what proves the answer reproduces."""
    from docker.errors import DockerException

    from repo2rlenv.runtime.images import ImageBuildError

    if not hasattr(type(runtime), "client"):  # the class: the property would connect
        raise ProbeError(f"the API probe needs the docker runtime, not {runtime.name}")
    try:
        image = runtime.prepare(probe_tree(base_image))
        output = runtime.client.containers.run(
            image,
            ["python3", "-c", PROBE_SOURCE.read_text()],
            network_disabled=True,
            remove=True,
            stdout=True,
            stderr=False,
        )
    except (ImageBuildError, DockerException, OSError) as exc:
        raise ProbeError(f"{type(exc).__name__}: {str(exc)[-300:]}") from exc
    try:
        return ApiSurface.model_validate(json.loads(output.decode("utf-8", "replace")))
    except ValueError as exc:
        raise ProbeError(f"unreadable probe output: {exc}") from exc
