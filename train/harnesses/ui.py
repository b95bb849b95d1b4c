"""Console output of the harness tools (stderr, so stdout stays machine-readable)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

err = Console(stderr=True)


def info(message: str) -> None:
    err.print(escape(message), highlight=False)


def error(message: str) -> None:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
