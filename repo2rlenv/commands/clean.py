"""`repo2rlenv clean`: remove the images this toolkit built, and say how much it freed."""

from __future__ import annotations

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, docker_client

NAME = "clean"
HELP = "remove the Docker images this toolkit built, and say how much it freed"
DESCRIPTION = (
    "Removes every image labelled rlenv-harvest (task environments, harness layers); an "
    "image a container still uses is kept and named. The next run rebuilds what it needs."
)


class Options(Strict):
    dry_run: bool = option(False, "list the images, remove nothing")
    build_cache: bool = option(
        False,
        "also prune the engine's unused build cache (all of it, not only ours: the engine "
        "does not record who made it; default: left alone)",
    )


def run(options: Options) -> int:
    from repo2rlenv.runtime.cleanup import clean

    client = docker_client()
    if client is None:
        return EXIT_SETUP
    report = clean(client, dry_run=options.dry_run, build_cache=options.build_cache)
    ui.clean_summary(report, dry_run=options.dry_run)
    return EXIT_OK
