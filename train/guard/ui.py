"""Console output of the guard (stderr; the proxy itself prints nothing per request)."""

from __future__ import annotations

from rich.console import Console

err = Console(stderr=True)


def info(message: str) -> None:
    err.print(message, highlight=False)


def plain(message: str) -> None:
    """`message` as it is: one line (never wrapped), no markup (it may quote a client)."""
    err.print(message, markup=False, highlight=False, soft_wrap=True)


def error(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)


def serving(base_url: str, upstream: str, log_dir: object, admin_url: str = "") -> None:
    err.print(
        f"[bold]guard[/] listening on {base_url} -> {upstream}"
        f"{f'  (logs: {log_dir})' if log_dir else ''}",
        highlight=False,
    )
    if admin_url:
        err.print(f"[bold]guard[/] control plane on {admin_url}", highlight=False)


def bench_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    Console().print(table)
