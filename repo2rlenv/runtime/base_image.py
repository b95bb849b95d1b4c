"""The base image generated tasks start FROM: the public default, or an offline build.

Where the configured image can be pulled (or is already present) nothing is built.
Where it cannot and the setting is still the public default, the image is built from
Debian's own packages with debootstrap, imported into Docker, and recorded in the
settings file, so later generated tasks name it. A base image the user chose
explicitly is never silently replaced.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import docker
from docker.errors import APIError

from repo2rlenv.runtime.engine import EngineError, run_logged
from repo2rlenv.runtime.images import image_present
from repo2rlenv.settings import OFFLINE_BASE_IMAGE, PUBLIC_BASE_IMAGE, Settings, record_setting

OFFLINE_PACKAGES = (
    "python3",
    "python-is-python3",
    "python3-pytest",
    "python3-numpy",
    "python3-pandas",
    "git",
    "ca-certificates",
)
DEFAULT_MIRROR = "http://deb.debian.org/debian"


def _debian_mirror() -> str:
    for source in [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]:
        if not source.is_file():
            continue
        for line in source.read_text(errors="replace").splitlines():
            match = re.match(r"^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+/debian)/?\s*", line)
            if match and "security" not in match.group(1):
                return match.group(1)
    return DEFAULT_MIRROR


def build_offline_image(
    client: docker.DockerClient, log: list[str], tag: str = OFFLINE_BASE_IMAGE
) -> None:
    if shutil.which("debootstrap") is None:
        run_logged(["apt-get", "install", "-y", "-qq", "debootstrap"], log)
    with tempfile.TemporaryDirectory(prefix="rlenv-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        run_logged(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(OFFLINE_PACKAGES)}",
                "bookworm",
                str(rootfs),
                _debian_mirror(),
            ],
            log,
        )
        for cache in (rootfs / "var/cache/apt/archives").glob("*.deb"):
            cache.unlink()
        shutil.rmtree(rootfs / "var/lib/apt/lists", ignore_errors=True)
        log.append(f"$ tar -C {rootfs} -c . | docker import - {tag}")
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        done = subprocess.run(
            [
                "docker",
                "import",
                "--change",
                "ENV LANG=C.UTF-8",
                "--change",
                'CMD ["bash"]',
                "-",
                tag,
            ],
            stdin=tar.stdout,
            capture_output=True,
            text=True,
        )
        tar.wait()
        if done.returncode != 0 or tar.returncode != 0:
            raise EngineError(f"docker import failed: {done.stderr[-1000:]}")


def ensure_base_image(settings: Settings, log: list[str]) -> tuple[Settings, str]:
    """Returns the settings to use from now on and what was done."""
    client = docker.from_env(timeout=300)
    if image_present(client, settings.base_image):
        return settings, "present"
    try:
        client.images.pull(settings.base_image)
        return settings, "pulled"
    except APIError as exc:
        log.append(f"cannot pull {settings.base_image}: {exc.explanation or exc}")
    if settings.base_image != PUBLIC_BASE_IMAGE:
        raise EngineError(
            f"the configured base image {settings.base_image} is neither present nor "
            "pullable; build or load it, or unset REPO2RLENV_BASE_IMAGE"
        )
    action = "present-offline"
    if not image_present(client, OFFLINE_BASE_IMAGE):
        build_offline_image(client, log)
        action = "built-offline"
    updated = settings.model_copy(update={"base_image": OFFLINE_BASE_IMAGE})
    where = record_setting("base_image", OFFLINE_BASE_IMAGE)
    log.append(f"recorded base_image = {OFFLINE_BASE_IMAGE} in {where}")
    return updated, action
