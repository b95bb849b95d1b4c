"""An instance task's environment FROM the instance's published image.

The image already holds the start state (the repository at the base commit in
`/testbed`, installed as the benchmark installs it), so the task's environment is one
Dockerfile (`runtime.instance_images.published_dockerfile`): the start-state copy and
the dependency wheels of the project's own recipe are left out. The verifier is
unchanged: it still arrives only with the verifier (`tests/`), never in the image.
"""

from __future__ import annotations

from repo2rlenv.runtime.instance_images import published_dockerfile
from schemas import BundleFile, TaskBundle
from schemas.provenance import PublishedImage

DOCKERFILE = "environment/Dockerfile"


def on_published_image(bundle: TaskBundle, image: PublishedImage) -> TaskBundle:
    """`bundle` with its environment replaced by the FROM-image Dockerfile."""
    files = [f for f in bundle.files if not f.path.startswith("environment/")]
    dockerfile = BundleFile(path=DOCKERFILE, content=published_dockerfile(image).encode())
    return bundle.model_copy(update={"files": [dockerfile, *files]})
