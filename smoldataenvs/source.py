"""Notebooks as a source of `repo2rlenv mine`, registered in the entry-point group
`rlenv_harvest.sources` (see repo2rlenv.emit.MineSource): notebooks found in the
input become data-analysis qa tasks beside the session miner's tasks."""

from __future__ import annotations

from typing import Any

from repo2rlenv.runtime import Runtime
from repo2rlenv.source import Source
from smoldataenvs.notebook_files import is_notebook_source
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import NotebookFlags, notebook_options
from smoldataenvs.reproduce import Reproducer


class NotebookSource:
    name = "notebooks"
    options = NotebookFlags

    def pipeline(
        self,
        options: Any,
        *,
        source: Source,
        base_image: str,
        runtime: Runtime | None,
    ) -> NotebookPipeline | None:
        if not is_notebook_source(source):  # decided from the one resolution, no probe
            return None
        return NotebookPipeline(
            notebook_options(options, reproduce=runtime is not None, base_image=base_image),
            reproducer=Reproducer(runtime) if runtime is not None else None,
            source=source,
        )


NOTEBOOKS = NotebookSource()
