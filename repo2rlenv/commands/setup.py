"""`repo2rlenv setup`: a Docker engine and the base image, before the first run.

`--tasks` also builds the offline bases those tasks start FROM. The project's own
runtime builds such a base when a task first needs it (`base_image.ensure_task_bases`),
but another client does not: Harbor's `docker compose build` of a SWE task whose spec
names Python 3.9 asks a registry for `rlenv-harvest/offline-python:bullseye-1` and fails
offline. So a user who runs the tasks with Harbor prepares the bases once, here.
"""

from __future__ import annotations

from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP

NAME = "setup"
HELP = "start a Docker engine and make the base image available"
DESCRIPTION = (
    "Installs and starts Docker when absent (root, apt), then pulls the configured base "
    "image or, offline, builds one from Debian packages. With --tasks, also builds the "
    "offline bases (other Debian suites' Pythons) that those tasks' Dockerfiles start "
    "FROM, so that Harbor or plain `docker build` can build them offline."
)


class Options(Strict):
    skip_base_image: bool = option(
        False,
        "only make sure a Docker engine runs; leave the base image as it is (default: pull "
        "or build it)",
    )
    tasks: list[Path] = option(
        [],
        "task folders, or folders to search for task.toml: build the offline bases their "
        "Dockerfiles start FROM that are absent (a SWE task of Python 3.9 needs "
        "bullseye's; each is some 400 MB and a few minutes of debootstrap)",
        metavar="DIR",
        nargs="+",
    )


def run(options: Options) -> int:
    from repo2rlenv.runtime.base_image import ensure_base_image
    from repo2rlenv.runtime.engine import EngineError, ensure_engine
    from repo2rlenv.settings import load_settings

    missing = [p for p in options.tasks if not p.is_dir()]
    if missing:
        ui.error(f"not a folder: {', '.join(map(str, missing))}; give task folders or their parent")
        return EXIT_SETUP
    log: list[str] = []
    try:
        state = ensure_engine(log)
        ui.info(f"docker engine: {state}")
        if not options.skip_base_image:
            settings, action = ensure_base_image(load_settings(), log)
            ui.info(f"base image: {settings.base_image} ({action})")
        if options.tasks:
            _task_bases(options.tasks, log)
    except EngineError as exc:
        ui.setup_log(log)
        ui.error(str(exc))
        return EXIT_SETUP
    ui.setup_log(log)
    return EXIT_OK


def _task_bases(paths: list[Path], log: list[str]) -> None:
    """Builds the absent offline bases the tasks under `paths` start FROM; one line per
    base named, built or present, so the user sees what Harbor will find."""
    import docker
    from docker.errors import DockerException

    from repo2rlenv.bundle import find_task_dirs
    from repo2rlenv.runtime.base_image import ensure_offline_base
    from repo2rlenv.runtime.engine import EngineError
    from repo2rlenv.runtime.images import base_images, image_present
    from repo2rlenv.runtime.offline_bases import offline_base_of

    tasks = find_task_dirs(paths)
    if not tasks:
        raise EngineError(f"no task.toml found under {', '.join(map(str, paths))}")
    needed: dict[str, int] = {}
    for task in tasks:
        dockerfile = task / "environment" / "Dockerfile"
        if dockerfile.is_file():
            for tag in base_images(dockerfile.read_text(errors="replace")):
                if offline_base_of(tag) is not None:
                    needed[tag] = needed.get(tag, 0) + 1
    try:
        client = docker.from_env(timeout=300)
        for tag, count in sorted(needed.items()):
            if ensure_offline_base(client, tag, log):
                state = "built"
            elif image_present(client, tag):
                state = "present"
            else:  # the default base, which --skip-base-image left alone
                state = "absent: run setup without --skip-base-image"
            ui.info(f"offline base {tag}: {state} ({count} tasks)")
    except DockerException as exc:
        raise EngineError(f"building an offline base failed: {exc}") from exc
    if not needed:
        ui.info(f"offline bases: none needed beyond the base image ({len(tasks)} tasks)")
