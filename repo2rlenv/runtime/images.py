"""Task images, built once per distinct environment.

The tag is a hash of the build context (paths, exec bits, bytes) and of the image ids
its FROM lines resolve to locally, so an edited environment or a rebuilt base image
gives a new tag, and identical environments across tasks share one image.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import docker
from docker.errors import APIError, BuildError, DockerException, ImageNotFound

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime.archive import entry
from repo2rlenv.runtime.base import EngineError

IMAGE_REPO = "rlenv-harvest-env"
BUILD_STARTED_LABEL = "rlenv-harvest.build-started"
"""An image label: when its `docker build` started (UTC, ISO 8601). The image's own
`Created` is when the build ended, so the two give the build time; images built before
the label existed have no build time ("not recorded")."""
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE | re.MULTILINE)


class ImageBuildError(Exception):
    """The task's own environment does not build (its recipe's fault, not the engine's:
    that is `EngineError`)."""


def image_present(client: docker.DockerClient, ref: str) -> bool:
    """The engine has `ref` locally (a tag or an id); no pull is tried."""
    try:
        client.images.get(ref)
        return True
    except ImageNotFound:
        return False


def environment_files(task: TaskTree) -> dict[str, tuple[bytes, bool]]:
    prefix = "environment/"
    return {p[len(prefix) :]: v for p, v in task.files.items() if p.startswith(prefix)}


def base_images(dockerfile: str) -> list[str]:
    stages: set[str] = set()
    bases = []
    for line in dockerfile.splitlines():
        match = _FROM.match(line)
        if not match:
            continue
        image = match.group(1)
        if image.lower() not in stages:
            bases.append(image)
        parts = line.split()
        if len(parts) >= 4 and parts[-2].upper() == "AS":
            stages.add(parts[-1].lower())
    return bases


class ImageCache:
    def __init__(self, client: docker.DockerClient) -> None:
        self._client = client
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _local_id(self, ref: str) -> str:
        try:
            return self._client.images.get(ref).id
        except ImageNotFound:
            return "absent:" + ref

    def tag_for(self, files: Mapping[str, tuple[bytes, bool]]) -> str:
        digest = hashlib.sha256()
        for rel in sorted(files):
            content, executable = files[rel]
            digest.update(f"{rel}\0{int(executable)}\0{len(content)}\0".encode() + content)
        dockerfile = files.get("Dockerfile", (b"", False))[0].decode("utf-8", "replace")
        for base in base_images(dockerfile):
            digest.update(f"base\0{base}\0{self._local_id(base)}\0".encode())
        return f"{IMAGE_REPO}:{digest.hexdigest()[:24]}"

    def key_for(self, task: TaskTree) -> str:
        assert task.config is not None
        files = environment_files(task)
        prebuilt = task.config.environment.docker_image
        if prebuilt and "Dockerfile" not in files:
            return f"{prebuilt}@{self._local_id(prebuilt)}"
        return self.tag_for(files)

    def ensure(self, task: TaskTree) -> str:
        """The image reference for `task`, building it unless a cached one exists."""
        assert task.config is not None
        prebuilt = task.config.environment.docker_image
        files = environment_files(task)
        if prebuilt and "Dockerfile" not in files:
            return self._ensure_pulled(prebuilt)
        if "Dockerfile" not in files:
            raise ImageBuildError("environment/Dockerfile is missing and no docker_image is set")
        tag = self.tag_for(files)
        with self._guard:
            lock = self._locks.setdefault(tag, threading.Lock())
        with lock:
            if image_present(self._client, tag):
                return tag
            self._build(tag, files, task.config.environment.build_timeout_sec)
        return tag

    def _ensure_pulled(self, ref: str) -> str:
        if image_present(self._client, ref):
            return ref
        try:
            self._client.images.pull(ref)
        except APIError as exc:
            kind = EngineError if engine_side(exc) else ImageBuildError
            raise kind(f"cannot pull {ref}: {exc.explanation or exc}") from exc
        return ref

    def _build(self, tag: str, files: Mapping[str, tuple[bytes, bool]], timeout: float) -> None:
        stream_build(
            self._client,
            failure=ImageBuildError,
            engine_failure=EngineError,
            action="docker build",
            fileobj=build_context(files),
            custom_context=True,
            tag=tag,
            timeout=int(timeout) + 30,
            labels={"rlenv-harvest": "env", BUILD_STARTED_LABEL: started_now()},
        )


def build_context(files: Mapping[str, tuple[bytes, bool]]) -> io.BytesIO:
    """The environment folder as the tar `docker build` reads: file entries only (the
    engine makes their folders), in sorted order, dated `archive.FILE_MTIME`."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for rel in sorted(files):
            content, executable = files[rel]
            info = entry(rel, size=len(content), mode=0o755 if executable else 0o644)
            tar.addfile(info, io.BytesIO(content))
    context.seek(0)
    return context


def stream_build(
    client: docker.DockerClient,
    *,
    failure: type[Exception],
    action: str,
    engine_failure: type[Exception] | None = None,
    **build: Any,
) -> None:
    """Run one `docker build` (`build`: the low-level API's arguments), draining its
    output; a failure becomes `failure` with `action` and the log's tail in its message,
    so a caller reports one error type whatever the engine did. With `engine_failure`,
    what is the engine's rather than the build's (`engine_side`) raises that instead."""
    log: list[str] = []
    try:
        for chunk in client.api.build(rm=True, forcerm=True, decode=True, **build):
            if "stream" in chunk:
                log.append(chunk["stream"])
            if "error" in chunk:
                raise BuildError(chunk["error"], log)
    except (BuildError, APIError) as exc:
        tail = "".join(log)[-1500:]
        reason = getattr(exc, "msg", None) or str(exc)
        kind = engine_failure if engine_failure and engine_side(exc) else failure
        raise kind(f"{action} failed: {reason}\n{tail}".strip()) from exc
    except Exception as exc:  # read timeouts surface as requests/urllib3 errors
        kind = engine_failure if engine_failure and engine_side(exc) else failure
        raise kind(f"{action} did not finish: {exc}") from exc


def engine_side(exc: BaseException) -> bool:
    """Whether a build failed because of the engine, not the task's recipe. The task's:
    a step's error in the build log (a `RUN` that exits non-zero, a `COPY` of a missing
    file, a base image that cannot be found), a request the engine refuses as invalid
    (4xx: a Dockerfile it cannot parse), a build silent past its timeout. The engine's:
    a server error (5xx), no connection (daemon gone, socket refused, connect timeout)."""
    if isinstance(exc, BuildError):
        return False
    if isinstance(exc, APIError):
        return not exc.is_client_error()
    if "Read timed out" in str(exc):  # requests' read timeout; a connect timeout is not
        return False
    # docker-py surfaces connection failures as requests' exceptions, which are OSErrors.
    return isinstance(exc, (DockerException, OSError))


TASK_BUILD_MARKERS = (
    "did not complete successfully",  # BuildKit: a RUN step exited non-zero
    "returned a non-zero code",  # the classic builder: the same
    "dockerfile parse error",
    "unknown instruction",
    "failed to compute cache key",  # BuildKit: a COPY/ADD source that is not there
    "copy failed",  # the classic builder: the same
    "failed to resolve source metadata",  # a base image that cannot be found
    "pull access denied",
    "manifest unknown",
)
"""What a builder prints when the task's own recipe fails (lower case)."""
ENGINE_MARKERS = (
    "cannot connect to the docker daemon",
    "error during connect",
    "no space left on device",
    "connection refused",
    "connection reset",
)
"""What says the engine failed, even inside a failed step's output."""


def task_build_failed(log: str) -> bool:
    """Whether the output of an environment start that failed (Harbor's compose build,
    a provider's build log) shows the task's own recipe failing rather than the engine.
    Unrecognised output is the engine's: an unknown failure is retried and reported as
    infrastructure, never turned into a verdict on the task."""
    text = log.lower()
    if any(marker in text for marker in ENGINE_MARKERS):
        return False
    return any(marker in text for marker in TASK_BUILD_MARKERS)


def started_now() -> str:
    """The `BUILD_STARTED_LABEL` value for a build starting now."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
