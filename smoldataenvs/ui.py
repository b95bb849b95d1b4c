"""Console output of `python -m smoldataenvs`: a progress line per notebook and the
yield table, through the same rich consoles as the rest of the toolkit (tables to
stdout, progress and messages to stderr)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from repo2rlenv.ui import error, info, spinner, yield_table

__all__ = ["error", "info", "notebook_progress", "yield_table"]


@contextmanager
def notebook_progress(enabled: bool = True) -> Iterator[Callable[[str], None]]:
    progress = spinner(enabled)
    with progress:
        task = progress.add_task("[bold]notebooks", total=None)

        def advance(record_id: str) -> None:
            progress.update(task, description=f"[bold]notebook[/] {record_id[-70:]}")

        yield advance
