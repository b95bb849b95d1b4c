"""Notebooks as a source of `repo2rlenv mine`, registered in the entry-point group
`rlenv_harvest.sources` (see repo2rlenv.emit.MineSource): notebooks found in the
input become data-analysis qa tasks beside the session miner's tasks."""

from __future__ import annotations

import argparse

from repo2rlenv.runtime import Runtime
from repo2rlenv.source import Source
from smoldataenvs.notebook_files import is_notebook_source
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import add_notebook_arguments, options_from_args
from smoldataenvs.reproduce import Reproducer


class NotebookSource:
    name = "notebooks"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_notebook_arguments(parser, help_prefix="notebooks: ")

    def pipeline(
        self,
        args: argparse.Namespace,
        *,
        source: Source,
        base_image: str,
        runtime: Runtime | None,
    ) -> NotebookPipeline | None:
        if not is_notebook_source(source):  # decided from the one resolution, no probe
            return None
        return NotebookPipeline(
            options_from_args(
                args,
                reproduce=runtime is not None,
                base_image=base_image,
                llm_model=args.llm_model if args.llm else None,
            ),
            reproducer=Reproducer(runtime) if runtime is not None else None,
            source=source,
        )


NOTEBOOKS = NotebookSource()
