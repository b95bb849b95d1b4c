"""`repo2rlenv pull`: fetch a pushed Hub task set into a new folder."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import HubRevision, Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP

NAME = "pull"
HELP = "fetch a pushed Hub task set into a new folder"
DESCRIPTION = (
    "Downloads the Hub dataset HUB_ID (at --revision) that `repo2rlenv push` wrote into "
    "--out, which must not exist yet: the files land in a temporary folder beside it, "
    "their names are checked, executable bits restored and every task's content hash "
    "checked against manifest.jsonl before the folder is renamed into place."
)


class Options(HubRevision, Strict):
    hub_id: str = option(..., "Hub dataset id (owner/name)", positional=True, metavar="HUB_ID")
    out: Path = option(..., "folder to create", metavar="DIR")


def run(options: Options) -> int:
    from repo2rlenv.hub import SourceUnavailable
    from repo2rlenv.publish.hub_pull import pull
    from repo2rlenv.source import is_hub_id

    if not is_hub_id(options.hub_id):
        ui.error(f"{options.hub_id!r} is not a Hub dataset id (owner/name)")
        return EXIT_SETUP
    if options.out.exists():
        ui.error(f"--out {options.out} exists; pull writes a new folder")
        return EXIT_SETUP
    try:
        commit, tasks = pull(options.hub_id, options.out, options.revision)
    except SourceUnavailable as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    ui.info(f"pulled {tasks} task(s) of {options.hub_id} at {commit} into {options.out}")
    return EXIT_OK
