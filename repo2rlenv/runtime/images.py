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
from typing import Any

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from repo2rlenv.bundle import TaskTree

IMAGE_REPO = "rlenv-harvest-env"
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE | re.MULTILINE)


class ImageBuildError(Exception):
    pass


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
            try:
                self._client.images.get(tag)
                return tag
            except ImageNotFound:
                pass
            self._build(tag, files, task.config.environment.build_timeout_sec)
        return tag

    def _ensure_pulled(self, ref: str) -> str:
        try:
            self._client.images.get(ref)
        except ImageNotFound:
            try:
                self._client.images.pull(ref)
            except APIError as exc:
                raise ImageBuildError(f"cannot pull {ref}: {exc.explanation or exc}") from exc
        return ref

    def _build(self, tag: str, files: Mapping[str, tuple[bytes, bool]], timeout: float) -> None:
        context = io.BytesIO()
        with tarfile.open(fileobj=context, mode="w") as tar:
            for rel in sorted(files):
                content, executable = files[rel]
                info = tarfile.TarInfo(rel)
                info.size, info.mode = len(content), 0o755 if executable else 0o644
                tar.addfile(info, io.BytesIO(content))
        context.seek(0)
        stream_build(
            self._client,
            failure=ImageBuildError,
            action="docker build",
            fileobj=context,
            custom_context=True,
            tag=tag,
            timeout=int(timeout) + 30,
            labels={"rlenv-harvest": "env"},
        )


def stream_build(
    client: docker.DockerClient, *, failure: type[Exception], action: str, **build: Any
) -> None:
    """Run one `docker build` (`build`: the low-level API's arguments), draining its
    output; any failure becomes `failure` with `action` and the log's tail in its
    message, so a caller reports one error type whatever the engine did."""
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
        raise failure(f"{action} failed: {reason}\n{tail}".strip()) from exc
    except Exception as exc:  # read timeouts surface as requests/urllib3 errors
        raise failure(f"{action} did not finish: {exc}") from exc
