"""Which Harbor environment class a driver request runs in, and whether it can run.

Part of the driver (`harbor_driver.py`): it runs in Harbor's interpreter and imports
only the standard library and Harbor, never `repo2rlenv`. Here: Harbor's Docker
environment taught to keep `no-network` offline (below), the preflight of an
environment type (`check`, with the provider SDK Harbor's preflight does not check),
the compose file that puts a harness run on the harness network, and the raw shape of
a failure. Apart from the trial's phases, which are the driver's.

Offline Docker: Harbor's Docker environment enforces `no-network` with an egress
sidecar (built FROM a gost image pinned by digest) after a kernel probe that runs an
alpine image pinned by digest. Neither can be pulled offline and a digest reference
cannot be satisfied by a locally built image. When those images are absent, a
`no-network` environment gets Harbor's own `docker-compose-no-network.yaml`
(`network_mode: none`, what Harbor's Docker-in-Docker providers use): the container
has no network interface besides loopback, which is stricter than the sidecar's
deny-all. `allowlist` needs the sidecar and is refused by Harbor itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def _image_present(ref: str) -> bool:
    try:
        done = subprocess.run(
            ["docker", "image", "inspect", ref], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _docker_class() -> type:
    """Harbor's DockerEnvironment, taught to keep `no-network` without the egress
    sidecar when the sidecar's images are not on this engine (see the module doc), and
    to stop a finished trial's containers without waiting out their stop timeout."""
    from harbor.environments.docker import COMPOSE_NO_NETWORK_PATH
    from harbor.environments.docker.docker import DockerEnvironment
    from harbor.models.task.config import NetworkMode

    sidecar_base = (
        (DockerEnvironment._EGRESS_CONTROL_SIDECAR_CONTEXT_PATH / "Dockerfile")
        .read_text()
        .split("FROM", 1)[1]
        .split()[0]
    )

    class OfflineAwareDockerEnvironment(DockerEnvironment):
        @classmethod
        def _egress_control_kernel_support(cls) -> bool:
            images = (cls._EGRESS_CONTROL_KERNEL_PROBE_IMAGE, sidecar_base)
            if not all(_image_present(ref) for ref in images):
                return False
            return super()._egress_control_kernel_support()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            # Set before Harbor's constructor, which already asks for the capabilities.
            policy = kwargs.get("network_policy")
            self._rlenv_no_network = (
                policy is not None
                and policy.network_mode == NetworkMode.NO_NETWORK
                and not kwargs.get("phase_network_policies")
                and not self._egress_control_kernel_support()
            )
            super().__init__(*args, **kwargs)

        @property
        def capabilities(self):  # type: ignore[override]
            caps = super().capabilities
            if getattr(self, "_rlenv_no_network", False):
                caps = caps.model_copy(update={"disable_internet": True})
            return caps

        async def stop(self, delete: bool) -> None:
            # The task's container idles in `sleep infinity`, which ignores SIGTERM, so
            # `compose down` waits out Docker's 10 s stop timeout, twice per trial with
            # a separate verifier. The trial is over: kill it first, as the Docker
            # runtime does.
            await self._run_docker_compose_command(["kill"], check=False)
            await super().stop(delete)

        @property
        def _docker_compose_paths(self) -> list[Path]:  # type: ignore[override]
            paths = list(super()._docker_compose_paths)
            if getattr(self, "_rlenv_no_network", False):
                paths.append(COMPOSE_NO_NETWORK_PATH)
            return paths

    return OfflineAwareDockerEnvironment


def environment_class(kind: str) -> type:
    from harbor.environments.factory import EnvironmentFactory
    from harbor.models.environment_type import EnvironmentType

    if kind == "docker":
        return _docker_class()
    return EnvironmentFactory.get_environment_class(EnvironmentType(kind))


def harness_network_compose(path: Path, network: str, host_aliases: dict[str, str]) -> Path:
    """`main` on the external harness network *instead of* the project's default
    one (compose's `!override` replaces the list any earlier file gave), with the
    host aliases (the guard's host) mapped to the network's gateway. YAML, not
    JSON: the override is a YAML tag. Every value is JSON-quoted, which YAML reads
    as the same string, so no name can break out of its scalar."""
    name = json.dumps(network)
    hosts = "".join(
        f"      - {json.dumps(f'{host}:{address}')}\n"
        for host, address in sorted(host_aliases.items())
    )
    text = f"services:\n  main:\n    networks: !override\n      - {name}\n"
    if hosts:
        text += f"    extra_hosts: !override\n{hosts}"
    text += f"networks:\n  {name}:\n    external: true\n"
    path.write_text(text)
    return path


def why(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text[-2000:]


def start_failed(exc: BaseException) -> dict[str, Any]:
    """An environment that did not start, whatever raised (the engine, the provider's
    SDK, a quota, the network, or the task's own build): reported raw as a retryable
    error; the project side tells the task's build failure apart by its log
    (`images.task_build_failed`), since only the builder's output says which it was."""
    return {"status": "error", "detail": why(exc), "retryable": True, "start_failed": True}


def check(kind: str) -> dict[str, Any]:
    """Harbor's own preflight: credentials for hosted providers, the engine for docker."""
    from harbor.models.environment_type import EnvironmentType

    known = [member.value for member in EnvironmentType]
    if kind not in known:
        return {
            "status": "error",
            "detail": f"Harbor knows no environment type {kind!r}; it knows {', '.join(known)}",
        }
    try:
        cls = environment_class(kind)
    except ImportError as exc:
        return {"status": "error", "detail": f"Harbor's {kind} environment cannot load: {exc}"}
    try:
        cls.preflight({})
    except SystemExit as exc:
        return {"status": "error", "detail": str(exc.code)}
    except Exception as exc:
        return {"status": "error", "detail": why(exc)}
    missing = missing_extra(kind)
    if missing:
        import importlib.metadata

        pin = f"harbor[{kind}]=={importlib.metadata.version('harbor')}"
        return {
            "status": "error",
            "detail": f"Harbor's {kind} environment needs its SDK, not installed in Harbor's "
            f"interpreter ({', '.join(missing)}): {sys.executable} -m pip install '{pin}'",
        }
    return {"status": "ok"}


def missing_extra(kind: str) -> list[str]:
    """The packages of Harbor's extra `kind` (its provider SDK) that are not installed.
    Harbor imports a provider's SDK only when a sandbox starts, and its preflight checks
    credentials only: without this, every trial past the check fails on an import."""
    import importlib.metadata

    from packaging.requirements import InvalidRequirement, Requirement

    missing = []
    for line in importlib.metadata.requires("harbor") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        marker = requirement.marker
        if marker is None or not marker.evaluate({"extra": kind}) or marker.evaluate({"extra": ""}):
            continue
        try:
            importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(requirement.name)
    return sorted(set(missing))
