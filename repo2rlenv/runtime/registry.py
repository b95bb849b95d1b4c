"""The runtimes `--runtime` can name: `docker` (the local engine) or `harbor[:ENV]`
(Harbor's environment type ENV, `docker` when left out)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from repo2rlenv.runtime.base import Runtime, RuntimeUnavailableError
from repo2rlenv.runtime.docker_runtime import DockerRuntime
from repo2rlenv.runtime.harbor_runtime import HarborRuntime
from repo2rlenv.settings import Settings


class RuntimeSpecError(ValueError):
    """`--runtime` names no registered runtime, or gives an option one does not take."""


def _docker(option: str | None, _harbor_python: Path | None) -> Runtime:
    if option:
        raise RuntimeSpecError(f"the docker runtime takes no option (got docker:{option})")
    return DockerRuntime()


def _harbor(option: str | None, harbor_python: Path | None) -> Runtime:
    return HarborRuntime(option or "docker", python=harbor_python)


RUNTIMES: dict[str, Callable[[str | None, Path | None], Runtime]] = {
    "docker": _docker,
    "harbor": _harbor,
}


def make_runtime(spec: str, harbor_python: Path | None = None) -> Runtime:
    """The runtime `spec` names (`docker`, `harbor`, `harbor:daytona`, ...)."""
    name, _, option = spec.strip().partition(":")
    factory = RUNTIMES.get(name)
    if factory is None:
        known = ", ".join(f"{n}[:ENV]" if n == "harbor" else n for n in RUNTIMES)
        raise RuntimeSpecError(f"unknown runtime {spec!r}; known: {known}")
    return factory(option or None, harbor_python)


def resolve_runtime(flag: str | None, settings: Settings, *, check: bool = True) -> Runtime:
    """The runtime a command runs trials on: `--runtime` when given, else the settings'
    `runtime` (settings file or REPO2RLENV_RUNTIME), else docker; checked before any
    work when `check`. Every command that runs trials (validate, mine, difficulty)
    resolves it here, so the same name means the same backend and fails the same way.

    Raises RuntimeSpecError for a name no runtime has, RuntimeUnavailableError for a
    backend that cannot run trials (no engine, a hosted provider without credentials)."""
    runtime = make_runtime(flag or settings.runtime, settings.harbor_python)
    if check:
        runtime.check()
    return runtime


__all__ = [
    "RUNTIMES",
    "RuntimeSpecError",
    "RuntimeUnavailableError",
    "make_runtime",
    "resolve_runtime",
]
