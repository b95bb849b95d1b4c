"""An instance task's environment FROM the instance's published image.

The image already holds the start state (the repository at the base commit in
`/testbed`, installed as the benchmark installs it), so the task's environment is one
Dockerfile (`runtime.instance_images.published_dockerfile`): the start-state copy and
the dependency wheels of the project's own recipe are left out. The verifier still
arrives only with the verifier (`tests/`), never in the image; its protected copies are
the image's own where they differ.
"""

from __future__ import annotations

from collections.abc import Callable

from repo2rlenv.runtime.instance_images import published_dockerfile
from schemas import BundleFile, TaskBundle
from schemas.provenance import PublishedImage

DOCKERFILE = "environment/Dockerfile"


PROTECTED = "tests/protected/"


def on_published_image(
    bundle: TaskBundle,
    image: PublishedImage,
    read_files: Callable[[PublishedImage, list[str]], dict[str, bytes]] | None = None,
) -> tuple[TaskBundle, list[str]]:
    """`bundle` with its environment replaced by the FROM-image Dockerfile, and the
    verifier's protected copies (`tests/protected/`, put back before the tests run) taken
    from the image where its own differ from the anchored checkout's (a `pre_install`
    edit): the verifier restores the benchmark's start, not the repository's. Returns
    the bundle and the protected paths whose copy is now the image's."""
    own = {
        f.path[len(PROTECTED) :]: f.content for f in bundle.files if f.path.startswith(PROTECTED)
    }
    found = read_files(image, sorted(own)) if read_files and own else {}
    changed = sorted(rel for rel, data in found.items() if data != own[rel])
    files = [
        f.model_copy(update={"content": found[f.path[len(PROTECTED) :]]})
        if f.path.startswith(PROTECTED) and f.path[len(PROTECTED) :] in changed
        else f
        for f in bundle.files
        if not f.path.startswith("environment/")
    ]
    dockerfile = BundleFile(path=DOCKERFILE, content=published_dockerfile(image).encode())
    return bundle.model_copy(update={"files": [dockerfile, *files]}), changed
