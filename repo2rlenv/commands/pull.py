"""`repo2rlenv pull`: fetch a pushed task set, from the Hub or from a Harbor registry
dataset that `push --to harbor:` wrote, into a new folder."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import HubRevision, Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP

NAME = "pull"
HELP = "fetch a pushed task set (Hub dataset or Harbor registry dataset) into a new folder"
DESCRIPTION = (
    "Downloads the Hub dataset HUB_ID (at --revision) that `repo2rlenv push` wrote into "
    "--out, which must not exist yet: the files land in a temporary folder beside it, "
    "their names are checked, executable bits restored and every task's content hash "
    "checked against manifest.jsonl before the folder is renamed into place. "
    "harbor:ORG/NAME[@VERSION] --registry PATH copies the Harbor registry dataset a "
    "`push --to harbor:` wrote (PATH: its folder, dataset.toml or registry.json) the same "
    "way, every task checked against the digest dataset.toml lists."
)


class Options(HubRevision, Strict):
    hub_id: str = option(
        ...,
        "Hub dataset id (owner/name), or harbor:ORG/NAME[@VERSION] with --registry",
        positional=True,
        metavar="SOURCE",
    )
    out: Path = option(..., "folder to create", metavar="DIR")
    registry: Path | None = option(
        None,
        "harbor: the folder a `push --to harbor:` wrote, or its dataset.toml or registry.json",
        metavar="PATH",
    )


def run(options: Options) -> int:
    from repo2rlenv.publish.harbor_publish import PREFIX

    if options.out.exists():
        ui.error(f"--out {options.out} exists; pull writes a new folder")
        return EXIT_SETUP
    if options.hub_id.startswith(PREFIX):
        return _from_harbor(options)
    return _from_hub(options)


def _from_hub(options: Options) -> int:
    from repo2rlenv.hub import SourceUnavailable
    from repo2rlenv.publish.hub_pull import pull
    from repo2rlenv.source import is_hub_id

    if not is_hub_id(options.hub_id):
        ui.error(f"{options.hub_id!r} is not a Hub dataset id (owner/name) or harbor:ORG/NAME")
        return EXIT_SETUP
    if options.registry is not None:
        ui.error("--registry is for a Harbor pull (harbor:ORG/NAME); a Hub pull reads the Hub")
        return EXIT_SETUP
    try:
        commit, tasks = pull(options.hub_id, options.out, options.revision)
    except SourceUnavailable as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    ui.info(f"pulled {tasks} task(s) of {options.hub_id} at {commit} into {options.out}")
    return EXIT_OK


def _from_harbor(options: Options) -> int:
    from repo2rlenv.hub import SourceUnavailable
    from repo2rlenv.publish.harbor_publish import HarborTarget
    from repo2rlenv.publish.harbor_pull import pull_harbor
    from repo2rlenv.publish.harbor_registry import RegistryError

    if options.registry is None:
        ui.error(
            "a Harbor pull needs --registry PATH (the push's folder, dataset.toml or "
            "registry.json): Harbor's hosted registry is fetched by `harbor run -d`"
        )
        return EXIT_SETUP
    if options.revision is not None:
        ui.error("--revision is for a Hub pull; name a Harbor version as harbor:ORG/NAME@VERSION")
        return EXIT_SETUP
    if not options.registry.exists():
        ui.error(f"--registry {options.registry} does not exist")
        return EXIT_SETUP
    try:
        target = HarborTarget.parse(options.hub_id)
        dataset, tasks = pull_harbor(target, options.registry, options.out)
    except (SourceUnavailable, RegistryError) as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    ui.info(f"pulled {tasks} task(s) of {dataset} into {options.out}")
    return EXIT_OK
