"""Published per-instance images: the benchmark's own environment, used as it is.

SWE-bench publishes one image per instance (`swebench/sweb.eval.x86_64.<id>:latest`,
the harness's `TestSpec.instance_image_key` with its default namespace), SWE-rebench
names one per row (`docker_image`). Such an image holds the repository at the
instance's base commit in `/testbed`, its environment installed (compiled extensions
built, the spec's `pre_install` done), so a task built FROM it is exactly what the
benchmark grades in. This module finds one: present on the engine, or pulled, but a
pull is tried only after the registry answered for that name, and within a timeout.
Anything else is a counted fallback reason (`image.*`), never a crash: the task is
then built by the project's own recipe.
"""

from __future__ import annotations

import io
import tarfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from schemas.provenance import PublishedImage

SWEBENCH_NAMESPACE = "swebench"
"""swebench 4.1's default `--namespace` (run_evaluation): where its images are published."""
SWEBENCH_ARCH = "x86_64"
SWEBENCH_TAG = "latest"
PROBE_TIMEOUT_S = 20
"""How long the registry gets to answer for one name (a manifest lookup, no layers)."""
PULL_TIMEOUT_S = 1800
"""How long one pull may take (SWE-bench images are one to a few GB)."""
PULL_READ_TIMEOUT_S = 120
"""The longest silence of the engine's progress stream during a pull."""

FALLBACKS = {
    "image.absent": "no image of that name locally, and the registry has none",
    "image.registry-unreachable": "no image of that name locally, and no registry answered",
    "image.pull-failed": "the registry has the image, but the pull failed or timed out",
    "image.engine-unavailable": "no container engine to look for the image in",
    "image.not-pulled": "no image of that name locally, and pulls are off "
    "(`instance_images = local`)",
}
"""Why a task with a published image was built by the project's recipe instead."""


def swebench_image_name(instance_id: str) -> str:
    """The image SWE-bench's harness pulls for `instance_id`: `TestSpec.instance_image_key`
    with the default namespace (`__` is not allowed in a Docker Hub name; the harness
    writes `_1776_`)."""
    key = f"sweb.eval.{SWEBENCH_ARCH}.{instance_id.lower()}:{SWEBENCH_TAG}"
    return f"{SWEBENCH_NAMESPACE}/{key}".replace("__", "_1776_")


def image_names(instance_id: str, docker_image: str | None) -> list[str]:
    """The names to look for, the row's own first."""
    names = [docker_image] if docker_image else []
    names.append(swebench_image_name(instance_id))
    return list(dict.fromkeys(names))


class ImageResolver:
    """Finds an instance's published image (`resolve`). One per mining run: once a
    registry probe finds no registry, later names are not probed again (each would cost
    the same timeout and say the same)."""

    def __init__(
        self,
        client_factory: Callable[..., Any] = docker.from_env,
        probe_timeout: float = PROBE_TIMEOUT_S,
        pull_timeout: float = PULL_TIMEOUT_S,
        pull: bool = True,
    ) -> None:
        self._pull_allowed = pull
        self._factory = client_factory
        self._probe_timeout = probe_timeout
        self._pull_timeout = pull_timeout
        self._client: Any = None
        self._no_registry = False
        self._lock = threading.Lock()

    def _engine(self) -> Any:
        if self._client is None:
            self._client = self._factory(timeout=self._probe_timeout)
        return self._client

    def resolve(self, names: Sequence[str]) -> tuple[PublishedImage | None, str | None]:
        """(the image, None), or (None, the `FALLBACKS` reason) when none can be used.
        One lookup at a time (mining runs records in threads): two runs of an instance
        never pull its image twice, and a registry found absent stays found absent."""
        with self._lock:
            return self._resolve(names)

    def _resolve(self, names: Sequence[str]) -> tuple[PublishedImage | None, str | None]:
        try:
            client = self._engine()
            for name in names:
                found = _local(client, name, "local")
                if found is not None:
                    return found, None
        except (DockerException, OSError):
            return None, "image.engine-unavailable"
        if not self._pull_allowed:
            return None, "image.not-pulled"
        if self._no_registry:
            return None, "image.registry-unreachable"
        for name in names:
            answer = self._probe(client, name)
            if answer == "unreachable":
                self._no_registry = True
                return None, "image.registry-unreachable"
            if answer == "served":
                return self._pull(name)
        return None, "image.absent"

    def _probe(self, client: Any, name: str) -> str:
        """`served`, `absent` (the registry answered: no such image) or `unreachable`."""
        try:
            client.api.inspect_distribution(name)
        except APIError as exc:
            return "absent" if exc.is_client_error() else "unreachable"
        except (DockerException, OSError):  # requests' timeouts and refusals are OSErrors
            return "unreachable"
        return "served"

    def _pull(self, name: str) -> tuple[PublishedImage | None, str | None]:
        """Pull `name` on a client of its own, reading the engine's progress: an error
        line, a silence longer than `PULL_READ_TIMEOUT_S` or a pull still running at
        `pull_timeout` ends it (the client is closed, and the engine drops a pull whose
        client went away)."""
        deadline = time.monotonic() + self._pull_timeout
        try:
            puller = self._factory(timeout=PULL_READ_TIMEOUT_S)
        except (DockerException, OSError):
            return None, "image.pull-failed"
        try:
            for chunk in puller.api.pull(name, stream=True, decode=True):
                if "error" in chunk or time.monotonic() >= deadline:
                    return None, "image.pull-failed"
            found = _local(puller, name, "pulled")
        except (DockerException, OSError):
            return None, "image.pull-failed"
        finally:
            puller.close()
        return (found, None) if found is not None else (None, "image.pull-failed")

    def read_files(self, image: PublishedImage, paths: Sequence[str]) -> dict[str, bytes]:
        """The image's own copies of `paths` (relative to its WORKDIR, the checkout),
        read from a container that is created, never started; a path the image lacks
        is left out. What the benchmark's set-up changed (a `pre_install` edit of
        `tox.ini`) is in these copies, not in the anchored checkout's."""
        with self._lock:
            client = self._engine()
            config = client.images.get(image.image_id).attrs.get("Config") or {}
            workdir = (config.get("WorkingDir") or "/").rstrip("/")
            container = client.containers.create(image.image_id, command=["true"])
            try:
                found = {}
                for rel in paths:
                    data = _archived_file(container, f"{workdir}/{rel}")
                    if data is not None:
                        found[rel] = data
                return found
            finally:
                container.remove(force=True)


def _archived_file(container: Any, path: str) -> bytes | None:
    """One regular file out of a container (`get_archive`), or None if it is not one."""
    try:
        chunks, _ = container.get_archive(path)
    except NotFound:
        return None
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
        member = next(iter(tar.getmembers()), None)
        handle = tar.extractfile(member) if member is not None and member.isfile() else None
        return handle.read() if handle is not None else None


def _local(client: Any, name: str, found_by: str) -> PublishedImage | None:
    try:
        image = client.images.get(name)
    except ImageNotFound:
        return None
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    digests = [d for d in image.attrs.get("RepoDigests") or [] if d.startswith(repo + "@")]
    return PublishedImage(
        name=name,
        image_id=image.id,
        repo_digest=digests[0] if digests else None,
        found_by=found_by,
    )


def published_dockerfile(image: PublishedImage) -> str:
    """The task's Dockerfile FROM the published image: nothing rebuilt. The image's
    WORKDIR is its checkout (SWE-bench's and SWE-rebench's images end `WORKDIR
    /testbed`); it moves to `/workspace`, where the agent and the verifier work, and
    its old path becomes a link to it, so the image's own installs (editable `.pth`
    files naming `/testbed`) still find it. Not the other way round: pytest reads its
    rootdir from the real working directory, and a `/workspace` link would put every
    node id outside it. Its git folder is removed: the project's start
    states carry no history (a later commit, the fix among them, could be read from it).
    `BASH_ENV` makes every non-interactive bash (the verifier's `test.sh`, an agent's
    `bash -c`) read the image's `/root/.bashrc`, where these images activate their
    Python environment (conda's `testbed`): the verifier's `python3` is the one the
    benchmark tests with. No literal checkout path is written here: the mining gate
    rewrites the run's root (`/testbed`) to `/workspace` in every file of a task."""
    ref = image.repo_digest or image.name
    return "\n".join(
        [
            f"FROM {ref}",
            "ENV BASH_ENV=/root/.bashrc",
            'RUN d="$PWD" && rm -rf "$d/.git" && if [ "$d" != /workspace ]; then '
            'cd / && rm -rf /workspace && mv "$d" /workspace && ln -s /workspace "$d"; fi',
            "WORKDIR /workspace",
            "",
        ]
    )
