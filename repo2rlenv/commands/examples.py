"""`repo2rlenv examples`: the bundled example tasks, one per kind."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import BaseImageOption, ForceOption
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, paths_usable

NAME = "examples"
HELP = "write the bundled example tasks (one per kind)"
DESCRIPTION = "Writes the hand-made example tasks through the bundle writer."


class Options(BaseImageOption, ForceOption):
    out: Path = option(
        ...,
        "folder the example tasks are written into (created if absent), e.g. tasks_out",
        positional=True,
        metavar="DIR",
    )


def run(options: Options) -> int:
    from repo2rlenv.bundle import BundleConflictError, write_bundle
    from repo2rlenv.examples import example_bundles
    from repo2rlenv.settings import load_settings

    if not paths_usable({"DIR": options.out}):
        return EXIT_SETUP
    base_image = options.base_image or load_settings().base_image
    for bundle in example_bundles(base_image):
        try:
            outcome = write_bundle(bundle, options.out, overwrite=options.force)
        except BundleConflictError as exc:
            ui.error(str(exc))
            return EXIT_SETUP
        ui.info(f"{outcome.status:>9}  {outcome.path}")
    return EXIT_OK
