"""`repo2rlenv setup`: a Docker engine and the base image, before the first run."""

from __future__ import annotations

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP

NAME = "setup"
HELP = "start a Docker engine and make the base image available"
DESCRIPTION = (
    "Installs and starts Docker when absent (root, apt), then pulls the configured base "
    "image or, offline, builds one from Debian packages."
)


class Options(Strict):
    skip_base_image: bool = option(
        False,
        "only make sure a Docker engine runs; leave the base image as it is (default: pull "
        "or build it)",
    )


def run(options: Options) -> int:
    from repo2rlenv.runtime.base_image import ensure_base_image
    from repo2rlenv.runtime.engine import EngineError, ensure_engine
    from repo2rlenv.settings import load_settings

    log: list[str] = []
    try:
        state = ensure_engine(log)
        ui.info(f"docker engine: {state}")
        if not options.skip_base_image:
            settings, action = ensure_base_image(load_settings(), log)
            ui.info(f"base image: {settings.base_image} ({action})")
    except EngineError as exc:
        ui.setup_log(log)
        ui.error(str(exc))
        return EXIT_SETUP
    ui.setup_log(log)
    return EXIT_OK
