"""The harness layer: a task image plus one installed harness bundle, built once.

The task image is left as it is (the verifier keeps running on it); the layer's tag is
a hash of the task image's id, the bundle's identity and the layer recipe, so a rebuilt
task image or a new pin gives a new tag and everything else is reused. Builds of one
tag are serialised across threads and processes with a file lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import threading
from pathlib import Path

import docker
from docker.errors import ImageNotFound

from repo2rlenv.runtime.containers import LABEL
from repo2rlenv.runtime.images import image_present, stream_build
from train.harnesses.install import COMPLETE, LAYER_DOCKERFILE, layer_dockerfile
from train.harnesses.profile import HarnessProfile

LAYER_REPO = "rlenv-harvest-harness"
BUILD_TIMEOUT_S = 1200


class LayerBuildError(RuntimeError):
    reason = "harness.layer-build-failed"


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def layer_tag(task_image_id: str, profile: HarnessProfile, bundle: Path) -> str:
    digest = hashlib.sha256()
    for part in (task_image_id, profile.name, bundle.name, layer_dockerfile(profile)):
        digest.update(part.encode() + b"\0")
    digest.update((bundle / COMPLETE).read_bytes())
    return f"{LAYER_REPO}:{profile.name}-{digest.hexdigest()[:20]}"


def ensure_layer(
    client: docker.DockerClient, task_image: str, profile: HarnessProfile, bundle: Path
) -> str:
    """The harness image for `task_image`, building it from `bundle` when absent."""
    try:
        base_id = client.images.get(task_image).id
    except ImageNotFound as exc:
        raise LayerBuildError(f"task image {task_image} is not built") from exc
    tag = layer_tag(base_id, profile, bundle)
    if image_present(client, tag):
        return tag
    with _locks_guard:
        lock = _locks.setdefault(tag, threading.Lock())
    lock_file = bundle.parent / f".layer-{tag.split(':', 1)[1]}.lock"
    with lock, lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            if not image_present(client, tag):
                _build(client, tag, base_id, profile, bundle)
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return tag


def _build(
    client: docker.DockerClient, tag: str, base_id: str, profile: HarnessProfile, bundle: Path
) -> None:
    stream_build(
        client,
        failure=LayerBuildError,
        action=f"building {tag}",
        path=str(bundle),
        dockerfile=LAYER_DOCKERFILE,
        buildargs={"BASE": base_id},
        tag=tag,
        timeout=BUILD_TIMEOUT_S,
        labels={LABEL: "harness", f"{LABEL}.harness": profile.name},
    )
