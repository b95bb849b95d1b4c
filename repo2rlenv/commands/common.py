"""What every command does before its work: resolve the runtime and check the paths it
was given, each problem one line (exit 2) before anything starts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from repo2rlenv import ui
from repo2rlenv.cli_paths import Named, input_problems, output_problems

if TYPE_CHECKING:
    from repo2rlenv.runtime import Runtime
    from repo2rlenv.settings import Settings

EXIT_OK, EXIT_INVALID, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 130


def runtime_of(
    flag: str | None, settings: Settings, *, check: bool = True, advice: str = ""
) -> Runtime | None:
    """The runtime `--runtime`/the settings name, checked; None after a one-line error
    (the caller exits 2). One place for every command that runs trials."""
    from repo2rlenv.runtime.registry import (
        RuntimeSpecError,
        RuntimeUnavailableError,
        resolve_runtime,
    )

    try:
        return resolve_runtime(flag, settings, check=check)
    except RuntimeSpecError as exc:
        ui.error(str(exc))
    except RuntimeUnavailableError as exc:
        ui.error(f"{exc}{advice}")
    return None


def paths_usable(
    folders: dict[str, Path | None] | None = None,
    files: dict[str, Path | None] | None = None,
    inputs: tuple[Named, Named] = ({}, {}),
) -> bool:
    """Every output a command names can be written and every input folder or file it
    names is there (`inputs`: folders, files): else one line each (exit 2), before any
    work starts."""
    problems = input_problems(*inputs) + output_problems(folders, files)
    for problem in problems:
        ui.error(problem)
    return not problems


def docker_client() -> Any | None:
    """The local engine's client, answering; None after a one-line error (the caller
    exits 2): for commands that read or remove images rather than run trials."""
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (DockerException, OSError) as exc:
        ui.error(f"no Docker engine answers ({exc}); start one (repo2rlenv setup)")
        return None
    return client
