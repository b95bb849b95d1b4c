"""`repo2rlenv push`: publish verified tasks as a Hub dataset with a generated card, or as
a Harbor registry dataset (`--to harbor:ORG/NAME --out DIR`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import PublishSelection
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, paths_usable

if TYPE_CHECKING:
    from repo2rlenv.publish.selection import Selection

NAME = "push"
HELP = "publish verified tasks as a Hub dataset with a card, or a Harbor registry dataset"
DESCRIPTION = (
    "To the Hub (--to OWNER/NAME): uploads the task folders under DIR, their "
    "manifest.jsonl and a dataset card (kinds and labels, sources and licences, generator "
    "version, validation summary, the mining yield with --report) as one commit; needs a "
    "write token (HF_TOKEN or `hf auth login`). To Harbor (--to harbor:ORG/NAME[@VERSION] "
    "--out OUT): copies the tasks into OUT with dataset.toml (Harbor's digests, for `harbor "
    "publish`) and registry.json (for `harbor run -d NAME@VERSION --registry-path`). Only "
    "verified tasks whose source licence allows redistribution and whose base image others "
    "can get are published; every other task is held back and counted by reason code "
    "(docs/publish.md). DIR itself is never modified."
)


class Options(PublishSelection):
    path: Path = option(..., "the mined task folder (mine --out)", positional=True, metavar="DIR")
    to: str = option(
        ...,
        "where to: a Hub dataset id (owner/name) or harbor:ORG/NAME[@VERSION] (version "
        "default: 12 hex digits of Harbor's dataset content hash)",
        metavar="TARGET",
    )
    out: Path | None = option(
        None, "harbor: the folder the task copies, dataset.toml and registry.json go in"
    )
    description: str = option("", "harbor: one-line description in dataset.toml")
    report: Path | None = option(
        None,
        "the mine's JSON report (mine --json FILE), for the Hub card's yield table",
        metavar="FILE",
    )
    private: bool = option(False, "create the Hub dataset private")
    dry_run: bool = option(False, "say what would be published and held back; write nothing")


def run(options: Options) -> int:
    from repo2rlenv.publish.harbor_publish import PREFIX

    if not paths_usable(inputs=({"DIR": options.path}, {"--report": options.report})):
        return EXIT_SETUP
    if options.to.startswith(PREFIX):
        return _to_harbor(options)
    return _to_hub(options)


def _request(options: Options) -> dict[str, Any]:
    """The fields every publish request takes (`PublishRequest`), from the options."""
    rules = options.model_dump(include=set(PublishSelection.model_fields))
    return {"root": options.path, "dry_run": options.dry_run, **rules}


def _to_hub(options: Options) -> int:
    from repo2rlenv.hub import SourceUnavailable
    from repo2rlenv.publish.hub_publish import PushRequest, push_to_hub
    from repo2rlenv.source import is_hub_id

    if not is_hub_id(options.to) or "/" not in options.to:
        ui.error(f"--to {options.to!r} is not a Hub dataset id (owner/name) or harbor:ORG/NAME")
        return EXIT_SETUP
    if options.out is not None:
        ui.error("--out is for a Harbor push (--to harbor:ORG/NAME); the Hub keeps the copy")
        return EXIT_SETUP
    request = PushRequest(
        repo_id=options.to, report=options.report, private=options.private, **_request(options)
    )
    try:
        outcome = push_to_hub(request)
    except SourceUnavailable as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    chosen = _report_selection(outcome.selection)
    if outcome.commit is not None:
        ui.info(f"pushed {chosen} task(s) to {options.to} at commit {outcome.commit}")
    elif options.dry_run:
        ui.info(f"would push {chosen} task(s) to {options.to}")
    else:
        ui.info(f"nothing to push to {options.to}: no task qualifies")
    return EXIT_OK


def _to_harbor(options: Options) -> int:
    from repo2rlenv.publish.harbor_publish import HarborPush, HarborTarget, push_to_harbor
    from repo2rlenv.publish.harbor_registry import RegistryError

    if options.out is None:
        ui.error("a Harbor push needs --out DIR: the folder the dataset is written to")
        return EXIT_SETUP
    if not paths_usable({"--out": options.out}):
        return EXIT_SETUP
    try:
        request = HarborPush(
            target=HarborTarget.parse(options.to),
            out=options.out,
            description=options.description,
            **_request(options),
        )
        outcome = push_to_harbor(request)
    except RegistryError as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    chosen = _report_selection(outcome.selection)
    dataset = outcome.dataset
    if options.dry_run:
        ui.info(f"would publish {chosen} task(s) to {options.to} in {options.out}")
        return EXIT_OK
    if dataset is None:  # Harbor has no empty dataset: say so rather than write one
        ui.error(f"no task qualifies for {options.to}; nothing written to {options.out}")
        return EXIT_SETUP
    registry = options.out.resolve() / "registry.json"
    ui.info(f"{len(dataset.tasks)} task(s) in {dataset.name}@{dataset.version} at {options.out}")
    ui.info(f"  harbor run -d {dataset.short_name}@{dataset.version} --registry-path {registry}")
    kept = _kept_local_bases(outcome.selection)
    if kept:
        ui.info(
            f"  {kept} task(s) start FROM a base only this machine builds; before `harbor "
            f"run`, `repo2rlenv setup --tasks {options.out}` builds any that are absent"
        )
    return EXIT_OK


def _kept_local_bases(selection: Selection) -> int:
    """Tasks published with `--local-base keep` whose FROM is an offline base: Harbor's
    compose build cannot make an absent one (it asks a registry), `setup --tasks` can."""
    from repo2rlenv.publish.portable import local_only_bases
    from repo2rlenv.publish.selection import DOCKERFILE

    count = 0
    for chosen in selection.chosen:
        dockerfile = chosen.files.get(DOCKERFILE)
        if dockerfile and local_only_bases(dockerfile[0].decode(errors="replace")):
            count += 1
    return count


def _report_selection(selection: Selection) -> int:
    """Warn per reason code held back, say what was rewritten; the count chosen."""
    for code, tasks in sorted(selection.held_tasks.items()):
        ui.warn(f"{code}: {len(tasks)} task(s) held back, e.g. {tasks[0]}")
    rewritten = [c.row.path for c in selection.chosen if c.rewritten]
    if rewritten:
        ui.info(
            f"rewritten to the portable base in the published copy: {len(rewritten)} "
            f"task(s), e.g. {rewritten[0]}"
        )
    return len(selection.chosen)
