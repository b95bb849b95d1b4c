"""`repo2rlenv registry`: a Harbor registry dataset (dataset.toml + registry.json) from a
folder of tasks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import Strict
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, paths_usable

NAME = "registry"
HELP = "write a Harbor registry dataset (dataset.toml with digests, registry.json) for tasks"
DESCRIPTION = (
    "Names each task with the sha256 digest Harbor's packager computes (dataset.toml, for "
    "`harbor publish`; `harbor sync` recomputes the same digests) and writes a local "
    "registry.json that `harbor run -d NAME@VERSION --registry-path registry.json` runs. "
    "Only verified tasks go in unless --unverified; a task starting FROM the offline base "
    "(env.local-only-base) is held back unless --local-base says otherwise. Each task held "
    "back is counted under its reason."
)


class Options(Strict):
    tasks: Path = option(..., "folder of task folders", positional=True, metavar="DIR")
    name: str = option(..., "dataset name in Harbor's org/name form, e.g. acme/mined-tasks")
    version: str | None = option(
        None, "dataset version (default: 12 hex digits of Harbor's dataset content hash)"
    )
    description: str = option("", "one-line description of the dataset")
    out: Path | None = option(None, "folder the two files are written into (default: DIR)")
    unverified: bool = option(False, "also include tasks whose label is not `verified`")
    local_base: Literal["refuse", "rewrite", "keep"] = option(
        "refuse",
        "a task whose Dockerfile starts FROM an image only this machine has: hold it back, "
        "rewrite its Dockerfile in place to the base's Debian recipe (repo2rlenv.publish."
        "portable), or keep it (runs only here)",
    )


def run(options: Options) -> int:
    from repo2rlenv.bundle import find_task_dirs, read_task_dir
    from repo2rlenv.publish.harbor_registry import RegistryError, build_dataset, write_dataset
    from repo2rlenv.publish.portable import local_only_bases, make_portable

    out = options.out or options.tasks
    if not paths_usable({"--out": out}, inputs=({"DIR": options.tasks}, {})):
        return EXIT_SETUP
    kept: list[Path] = []
    held: Counter[str] = Counter()
    for task_dir in find_task_dirs([options.tasks]):
        tree = read_task_dir(task_dir)
        block = tree.config.metadata.repo2rlenv if tree.config else None
        status = block.evaluation.status if block else "unverified"
        if status != "verified" and not options.unverified:
            held[f"label.{status}"] += 1
            continue
        if local_only_bases(tree.text("environment/Dockerfile") or ""):
            if options.local_base == "refuse":
                held["env.local-only-base"] += 1
                continue
            if options.local_base == "rewrite":
                make_portable(task_dir)
        kept.append(task_dir)
    for reason, count in sorted(held.items()):
        ui.warn(f"held back {count} task(s): {reason}")
    try:
        dataset = build_dataset(
            options.name, kept, version=options.version, description=options.description
        )
    except RegistryError as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    manifest, registry = write_dataset(dataset, out)
    ui.info(f"{len(dataset.tasks)} task(s) in {dataset.name}@{dataset.version}")
    ui.info(f"  {manifest}")
    ui.info(
        f"  {registry}  (harbor run -d {dataset.short_name}@{dataset.version} "
        f"--registry-path {registry})"
    )
    return EXIT_OK
