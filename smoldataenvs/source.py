"""Notebooks as a source of `repo2rlenv mine`, registered in the entry-point group
`rlenv_harvest.sources` (see repo2rlenv.emit.MineSource): notebooks found in the
input become data-analysis qa tasks beside the session miner's tasks."""

from __future__ import annotations

import argparse
from pathlib import Path

from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import NotebookOptions
from smoldataenvs.sources import is_notebook_source


class NotebookSource:
    name = "notebooks"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--data-dir",
            type=Path,
            action="append",
            default=[],
            metavar="DIR",
            help="notebooks: extra folder searched for data files by name",
        )
        parser.add_argument(
            "--max-per-dataset",
            type=int,
            default=4,
            metavar="K",
            help="notebooks: at most K questions per source dataset (default 4)",
        )
        parser.add_argument(
            "--allow-boolean",
            action="store_true",
            help="notebooks: also emit yes/no (true/false) answers, off by default (a coin flip)",
        )

    def pipeline(
        self, args: argparse.Namespace, *, base_image: str, validate: bool
    ) -> NotebookPipeline | None:
        if not is_notebook_source(args.dataset, probe_hub=not Path(args.dataset).exists()):
            return None
        return NotebookPipeline(
            NotebookOptions(
                dataset=args.dataset,
                revision=args.revision,
                data_dirs=args.data_dir,
                max_per_dataset=args.max_per_dataset,
                allow_boolean=args.allow_boolean,
                reproduce=validate,
                jobs=args.jobs,
                base_image=base_image,
                llm_url=args.llm,
                llm_model=args.llm_model if args.llm else None,
            )
        )


NOTEBOOKS = NotebookSource()
