"""Console output of the serving helpers (stderr, so stdout stays machine-readable)."""

from __future__ import annotations

from rich.console import Console

err = Console(stderr=True)


def info(message: str) -> None:
    err.print(message, highlight=False)


def step(message: str) -> None:
    err.print(f"  [dim]$ {message}[/]", highlight=False)


def error(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
