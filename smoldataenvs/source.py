"""Notebooks as a source of `repo2rlenv mine`, registered in the entry-point group
`rlenv_harvest.sources` (see repo2rlenv.emit.MineSource): notebooks found in the
input become data-analysis qa tasks beside the session miner's tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repo2rlenv.runtime import Runtime
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import NotebookFlags, notebook_options
from smoldataenvs.reproduce import Reproducer
from smoldataenvs.sources import is_notebook_source


class NotebookSource:
    name = "notebooks"
    options = NotebookFlags

    def pipeline(
        self, options: Any, *, base_image: str, runtime: Runtime | None
    ) -> NotebookPipeline | None:
        if not is_notebook_source(options.dataset, probe_hub=not Path(options.dataset).exists()):
            return None
        return NotebookPipeline(
            notebook_options(options, reproduce=runtime is not None, base_image=base_image),
            reproducer=Reproducer(runtime) if runtime is not None else None,
        )


NOTEBOOKS = NotebookSource()
