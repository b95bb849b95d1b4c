"""The base image generated tasks start FROM: the public default, or an offline build.

Where the configured image can be pulled (or is already present) nothing is built.
Where it cannot and the setting is still the public default, the image is built from
Debian's own packages with debootstrap, imported into Docker, and recorded in the
settings file, so later generated tasks name it. A base image the user chose
explicitly is never silently replaced. The offline base trusts the host's CA bundle
(`trust_host_certificates`), so builds behind a TLS-intercepting proxy reach the index.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import docker
from docker.errors import APIError

from repo2rlenv.runtime.engine import EngineError, run_logged
from repo2rlenv.runtime.images import base_images, image_present
from repo2rlenv.runtime.offline_bases import OFFLINE_BASES, OfflineBase, offline_base_of
from repo2rlenv.settings import OFFLINE_BASE_IMAGE, PUBLIC_BASE_IMAGE, Settings, record_setting

OFFLINE_PACKAGES = OFFLINE_BASES[OFFLINE_BASE_IMAGE].packages
"""The default (bookworm) base's Debian packages; the portable rewrite installs them."""
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
HOST_CA_LABEL = "org.rlenv-harvest.host-ca"


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
    client: docker.DockerClient,
    log: list[str],
    tag: str = OFFLINE_BASE_IMAGE,
    base: OfflineBase | None = None,
) -> None:
    """Builds the offline base `tag` names (`offline_bases.OFFLINE_BASES`: one Debian
    suite per Python), or `base` under `tag`, with debootstrap and imports it.

    `PIP_CERT` names Debian's CA bundle (the host's, `trust_host_certificates`): the
    recipe's pip 26 reads the system's trust store through `truststore` only on Python
    3.10+, and on bullseye's 3.9 fell back to its own certifi bundle, which lacks a
    TLS-intercepting proxy's CA (every pip step of a 3.9 recipe failed here)."""
    base = base or offline_base_of(tag)
    if base is None:
        raise EngineError(f"{tag} is not one of the offline bases ({', '.join(OFFLINE_BASES)})")
    if shutil.which("debootstrap") is None:
        run_logged(["apt-get", "install", "-y", "-qq", "debootstrap"], log)
    with tempfile.TemporaryDirectory(prefix="rlenv-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        run_logged(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(base.packages)}",
                base.suite,
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
                f"ENV PIP_CERT={HOST_CA_BUNDLE}",
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


def trust_host_certificates(
    client: docker.DockerClient, tag: str, log: list[str], bundle: Path = HOST_CA_BUNDLE
) -> bool:
    """Gives the offline base the host's CA bundle; returns whether a layer was added.

    Why: image builds reach the package indexes through the host's network (a spec's
    recipe runs pip in the build). Behind a TLS-intercepting proxy the host trusts the
    proxy's CA and an image made from Debian's packages does not, so every pip step of
    a build fails on the certificate. The offline base is local-only by construction
    (`validate` warns `env.local-only-base`, `push` rewrites it to the public base's
    recipe), so the host's trust never travels with a published task. The bundle's
    digest is a label: a base already trusting this bundle is left as it is, so the
    step is idempotent and reruns keep the same image.
    """
    if not bundle.is_file():
        return False
    data = bundle.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if (client.images.get(tag).labels or {}).get(HOST_CA_LABEL) == digest:
        return False
    with tempfile.TemporaryDirectory(prefix="rlenv-ca-") as tmp:
        (Path(tmp) / "ca-certificates.crt").write_bytes(data)
        (Path(tmp) / "Dockerfile").write_text(
            f"FROM {tag}\n"
            "COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\n"
            f'LABEL {HOST_CA_LABEL}="{digest}"\n'
        )
        client.images.build(path=tmp, tag=tag, rm=True)
    log.append(f"{tag}: trusts the host's CA bundle {bundle} (sha256 {digest[:12]})")
    return True


def ensure_base_image(settings: Settings, log: list[str]) -> tuple[Settings, str]:
    """Returns the settings to use from now on and what was done."""
    client = docker.from_env(timeout=300)
    if image_present(client, settings.base_image):
        if settings.base_image == OFFLINE_BASE_IMAGE:  # recorded by an earlier setup
            trust_host_certificates(client, OFFLINE_BASE_IMAGE, log)
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
    trust_host_certificates(client, OFFLINE_BASE_IMAGE, log)
    updated = settings.model_copy(update={"base_image": OFFLINE_BASE_IMAGE})
    where = record_setting("base_image", OFFLINE_BASE_IMAGE)
    log.append(f"recorded base_image = {OFFLINE_BASE_IMAGE} in {where}")
    return updated, action


def ensure_offline_base(client: docker.DockerClient, tag: str, log: list[str]) -> bool:
    """Builds the offline base `tag` if it is one and absent; returns whether it built.

    Why lazily: a task needs a base of another Debian suite only when its spec names a
    Python the default base lacks (`offline_bases.choose_offline_base`); `setup` and
    CI build the default one alone (each base is some 400 MB and a few minutes of
    debootstrap). A build that runs a task FROM such a base calls this first.
    """
    if offline_base_of(tag) is None or tag == OFFLINE_BASE_IMAGE:
        return False  # the default base is `setup`'s to build, as before
    if image_present(client, tag):
        return False
    with _BUILD_LOCK:
        if image_present(client, tag):
            return False
        build_offline_image(client, log, tag)
        trust_host_certificates(client, tag, log)
    return True


_BUILD_LOCK = threading.Lock()


def ensure_task_bases(client: docker.DockerClient, dockerfile: str, log: list[str]) -> list[str]:
    """Builds the offline bases a task's Dockerfile starts FROM that are absent (an
    instance task of a Python the default base lacks); returns the tags built."""
    return [tag for tag in base_images(dockerfile) if ensure_offline_base(client, tag, log)]
