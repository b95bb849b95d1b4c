"""Console output of `repo2rlenv difficulty`, on the toolkit's consoles."""

from __future__ import annotations

from collections import Counter

from rich.markup import escape
from rich.table import Table

from repo2rlenv.difficulty.bands import ORDER
from repo2rlenv.ui import err, out
from schemas import DifficultyLabel


def info(message: str) -> None:
    err.print(f"[dim]{escape(message)}[/]", highlight=False)


def error(message: str) -> None:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)


def labels_table(rows: list[tuple[str, DifficultyLabel | None, str]]) -> None:
    """rows: (task, label or None, note)."""
    table = Table(title="difficulty", title_justify="left")
    for column in ("task", "label", "source", "solved", "signals", "note"):
        table.add_column(column, justify="right" if column == "solved" else "left")
    for task, label, note in rows:
        if label is None:
            table.add_row(escape(task), "[yellow]-[/]", "", "", "", escape(note))
            continue
        source = label.source if label.source == "solve-rate" else "[yellow]heuristic[/]"
        solved = f"{label.solved}/{label.scored}" if label.scored is not None else ""
        found = ", ".join(f"{k} {v}" for k, v in sorted(label.signals.items()))
        table.add_row(escape(task), label.label, source, solved, escape(found), escape(note))
    out.print(table)
    counts = Counter(label.label for _, label, _ in rows if label is not None)
    summary = ", ".join(f"{band} {counts[band]}" for band in ORDER if counts[band])
    out.print(f"  {summary or 'no label'}; unlabelled {sum(1 for r in rows if r[1] is None)}")
