"""`repo2rlenv push`: publish verified tasks as a Hub dataset with a generated card."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, paths_usable

NAME = "push"
HELP = "publish verified tasks as a Hub dataset with a generated card"
DESCRIPTION = (
    "Uploads the task folders under DIR, their manifest.jsonl and a dataset card "
    "(kinds and labels, sources and licences, generator version, validation summary, the "
    "mining yield with --report) to the Hub dataset HUB_ID as one commit. Only verified "
    "tasks whose source licence allows redistribution are pushed; every other task is "
    "held back and counted by reason code (docs/publish.md). Needs a write token "
    "(HF_TOKEN or `hf auth login`)."
)


class Options(Strict):
    path: Path = option(..., "the mined task folder (mine --out)", positional=True, metavar="DIR")
    to: str = option(..., "Hub dataset id to push to (owner/name)", metavar="HUB_ID")
    report: Path | None = option(
        None,
        "the mine's JSON report (mine --json FILE), for the card's yield table",
        metavar="FILE",
    )
    include_unverified: bool = option(False, "also push tasks validate did not prove")
    include_unknown_licence: bool = option(
        False,
        "also push tasks whose source licence is unknown (you vouch for it); a licence "
        "that forbids redistribution is never pushed",
    )
    private: bool = option(False, "create the dataset private")
    dry_run: bool = option(False, "say what would be pushed and held back; upload nothing")


def run(options: Options) -> int:
    from repo2rlenv.hub import SourceUnavailable
    from repo2rlenv.publish.hub_publish import PushRequest, push_to_hub
    from repo2rlenv.source import is_hub_id

    if not is_hub_id(options.to) or "/" not in options.to:
        ui.error(f"--to {options.to!r} is not a Hub dataset id (owner/name)")
        return EXIT_SETUP
    if not paths_usable(inputs=({"DIR": options.path}, {"--report": options.report})):
        return EXIT_SETUP
    request = PushRequest(
        root=options.path,
        repo_id=options.to,
        report=options.report,
        include_unverified=options.include_unverified,
        include_unknown_licence=options.include_unknown_licence,
        private=options.private,
        dry_run=options.dry_run,
    )
    try:
        outcome = push_to_hub(request)
    except SourceUnavailable as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    selection = outcome.selection
    for code, tasks in sorted(selection.held_tasks.items()):
        ui.warn(f"{code}: {len(tasks)} task(s) held back, e.g. {tasks[0]}")
    chosen = len(selection.chosen)
    if outcome.commit is not None:
        ui.info(f"pushed {chosen} task(s) to {options.to} at commit {outcome.commit}")
    elif options.dry_run:
        ui.info(f"would push {chosen} task(s) to {options.to}")
    else:
        ui.info(f"nothing to push to {options.to}: no task qualifies")
    return EXIT_OK
