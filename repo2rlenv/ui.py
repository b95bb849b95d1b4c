"""The console of the task core and the sources (layers 1-2): the toolkit's two consoles,
its messages, and every table and progress line of `repo2rlenv` and `smoldataenvs`.

Tables and results go to stdout; progress and messages to stderr, so `--json -`
output stays machine-readable when piped. The layers above reuse `out`, `err` and the
message helpers from here through their own console module (`train.rollout.ui` for the
rollout stack, `train.ui` for training); where console output goes is in ARCHITECTURE.md.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from repo2rlenv.difficulty.bands import ORDER
from repo2rlenv.emit import YieldReport
from repo2rlenv.validate.report import TaskReport, ValidationReport
from schemas import DifficultyLabel

if TYPE_CHECKING:
    from repo2rlenv.runtime.cleanup import CleanReport

PIPE_WIDTH = 1000
"""Columns of a console that is not a terminal (a pipe, a file, a CI log). Rich's default
there is 80, which folds task ids over lines and cuts headers to "inva…"; nothing reads
such output by the screenful, so a line is as long as its content (tables are not
expanded, so this is a ceiling, not a padding). `COLUMNS` set in the environment wins."""


def _console(*, stderr: bool = False) -> Console:
    console = Console(stderr=stderr)
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(stderr=stderr, width=PIPE_WIDTH)


out = _console()
err = _console(stderr=True)

_STATUS_STYLE = {
    "verified": "green",
    "unverified": "yellow",
    "needs_repair": "red",
    "blocked": "red",
}


def info(message: str) -> None:
    err.print(escape(message), highlight=False, emoji=False)


def error(message: str) -> None:
    """One line, however long: a log (CI, a supervisor) gets no wrapped fragments, and a
    terminal wraps it as it shows it. No emoji codes: `harbor:cloud: ...` is a name."""
    err.print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True, emoji=False
    )


def warn(message: str) -> None:
    err.print(f"[bold yellow]warning:[/] {escape(message)}", highlight=False, emoji=False)


def written(paths: list[Path]) -> None:
    for path in paths:
        info(f"wrote {path}")


class ValidateProgress:
    """A bar for the whole run and one per task in flight, at most `max_bars` of them
    (thread-safe). With `-j` in the hundreds (hosted runtimes) one bar per task would
    fill the terminal and scroll: the others are counted in the overall bar's title, and
    a task gets a bar when one frees up."""

    def __init__(self, progress: Progress, total: int, max_bars: int = 8) -> None:
        self._progress = progress
        self._overall = progress.add_task("[bold]validating", total=total)
        self._bars: dict[str, int] = {}
        self._waiting: dict[str, tuple[int, int]] = {}
        """Tasks in flight without a bar: task id -> (steps, steps done)."""
        self._max_bars = max_bars
        self._lock = threading.Lock()

    def task_started(self, task_id: str, steps: int) -> None:
        with self._lock:
            self._waiting[task_id] = (steps, 0)
            self._show_waiting()

    def step_done(self, task_id: str) -> None:
        with self._lock:
            if task_id in self._bars:
                self._progress.advance(self._bars[task_id])
            elif task_id in self._waiting:
                steps, done = self._waiting[task_id]
                self._waiting[task_id] = (steps, done + 1)

    def task_done(self, report: TaskReport) -> None:
        with self._lock:
            bar = self._bars.pop(report.task_id, None)
            if bar is not None:
                self._progress.remove_task(bar)
            self._waiting.pop(report.task_id, None)
            self._progress.advance(self._overall)
            self._show_waiting()

    def _show_waiting(self) -> None:
        while self._waiting and len(self._bars) < self._max_bars:
            task_id = next(iter(self._waiting))
            steps, done = self._waiting.pop(task_id)
            self._bars[task_id] = self._progress.add_task(
                f"  {task_id}", total=steps, completed=done
            )
        in_flight = len(self._bars) + len(self._waiting)
        more = f" ({in_flight} in flight, {len(self._waiting)} not shown)" if self._waiting else ""
        self._progress.update(self._overall, description=f"[bold]validating{more}")


@contextmanager
def validate_progress(total: int, enabled: bool = True) -> Iterator[ValidateProgress]:
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not enabled,
    )
    with progress:
        yield ValidateProgress(progress, total)


def _probes(task: TaskReport) -> str:
    text, fooled, not_run = task.probes_text()
    return f"[red]{text}[/]" if fooled else f"[yellow]{text}[/]" if not_run else text


def validation_table(report: ValidationReport, console: Console = out) -> None:
    table = Table(title="repo2rlenv validate", title_justify="left")
    table.add_column("task", overflow="fold", min_width=12)
    table.add_column("kind", overflow="fold")
    table.add_column("label", no_wrap=True)
    for column in ("ref", "noop", "probes", "time"):
        table.add_column(column, overflow="fold")
    table.add_column("rules", overflow="fold")
    for task in report.tasks:
        status = task.label.status
        rules = ", ".join(sorted({f.rule_id for f in task.errors})) or "-"
        warnings = sorted({f.rule_id for f in task.findings if f.severity == "warning"})
        if warnings:
            rules += f" [dim](warn: {', '.join(warnings)})[/]"
        table.add_row(
            task.task_id,
            task.kind or "?",
            f"[{_STATUS_STYLE[status]}]{status}[/]",
            task.rewards_text("reference"),
            task.rewards_text("noop"),
            _probes(task),
            f"{task.wall_s:.1f}s" + (" (cached)" if task.cached else ""),
            rules,
        )
    console.print(table)
    summary = report.summary()
    totals = Table(show_header=True, title="summary", title_justify="left")
    columns = ("tasks", "valid", "invalid", "flaky", "cached", "trials run", "skipped")
    for column in (*columns, "infra errors (not run)", "retries", "wall time", "cost"):
        totals.add_column(column, justify="right")
    cost = summary["cost_usd"]
    not_run = summary["not_run"]
    assert isinstance(not_run, dict)
    totals.add_row(
        str(summary["total"]),
        f"[green]{summary['valid']}[/]",
        f"[red]{summary['invalid']}[/]",
        str(summary["flaky"]),
        str(summary["cached"]),
        str(summary["trials_run"]),
        str(summary["trials_skipped"]),
        str(summary["infra_errors"])
        + (" (" + ", ".join(f"{kind} {n}" for kind, n in not_run.items()) + ")" if not_run else ""),
        str(summary["infra_retries"]),
        f"{report.wall_s:.1f}s",
        f"${cost:.4f}" if isinstance(cost, float) else "not reported",
    )
    console.print(totals)
    if summary["failed_by_rule"]:
        rules = Table(title="failed by rule", title_justify="left")
        rules.add_column("rule")
        rules.add_column("tasks", justify="right")
        for rule, count in summary["failed_by_rule"].items():
            rules.add_row(rule, str(count))
        console.print(rules)
    console.print(escape(report.final_line()), highlight=False, emoji=False, soft_wrap=True)


def setup_log(lines: list[str]) -> None:
    for line in lines:
        err.print(f"  [dim]{escape(line)}[/]", highlight=False)


def yield_table(report: YieldReport, console: Console = out) -> None:
    """The same yield table for every pipeline: where records went, and why, after the
    summary lines whose sums add up (`YieldReport.summary`)."""
    for line in report.summary():
        console.print(escape(line), highlight=False, soft_wrap=True)
    totals = Table(title=f"yield: {report.pipeline}", title_justify="left")
    counts = report.counts()
    columns = (
        "records read",
        "reports",
        "records skipped",
        "candidates",
        "emitted",
        "unchanged",
        "candidates skipped",
        "proven",
        "unverified",
    )
    for column in columns:
        totals.add_column(column, justify="right")
    totals.add_row(
        str(counts.records_read),
        str(counts.reports),
        str(counts.records_skipped),
        str(counts.candidates),
        f"[green]{counts.emitted}[/]",
        str(counts.unchanged),
        str(counts.candidates_skipped),
        str(counts.proven),
        str(counts.unverified),
    )
    console.print(totals)
    if report.by_kind or report.by_format:
        emitted = Table(title="emitted", title_justify="left")
        emitted.add_column("by kind")
        emitted.add_column("tasks", justify="right")
        for kind, count in sorted(report.by_kind.items()):
            emitted.add_row(kind, str(count))
        for fmt, count in sorted(report.by_format.items()):
            emitted.add_row(f"[dim]format[/] {fmt}", str(count))
        for source, count in sorted(report.anchored_by_source.items()):
            emitted.add_row(f"[dim]anchored by[/] {escape(source)}", str(count))
        for kind, count in sorted(report.anchored_by_kind.items()):
            emitted.add_row(f"[dim]anchored[/] {kind}", str(count))
        for code, count in sorted(report.warnings.items()):
            emitted.add_row(f"[yellow]warning[/] {escape(code)}", str(count))
        console.print(emitted)
    if report.skipped:
        skipped = Table(title="skipped by reason", title_justify="left")
        skipped.add_column("reason", no_wrap=True)
        skipped.add_column("count", justify="right")
        skipped.add_column("example", overflow="fold")
        for reason, count in sorted(report.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            skipped.add_row(
                escape(reason), str(count), escape(report.skip_examples.get(reason, ""))
            )
        console.print(skipped)
        formats = Table(title="skipped by source format", title_justify="left")
        formats.add_column("format")
        formats.add_column("skipped", justify="right")
        for fmt, count in sorted(report.skipped_by_format.items()):
            formats.add_row(fmt, str(count))
        console.print(formats)


def spinner(enabled: bool = True) -> Progress:
    """An open-ended progress line on stderr (for work whose total is not known)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not enabled,
    )


PROGRESS_LINE_EVERY_S = 30.0
"""Off a terminal, how often a long mining run prints a line with its counts."""


def progress_line(report: YieldReport, oracle: bool = False) -> str:
    """A mining run's counts so far, in the words and levels of its final summary
    (`yield_summary`): records read and those skipped whole, candidates, and where the
    candidates went; then tasks proven in a container, and with the oracle on (`oracle`)
    the candidates it refused. Read from the counters alone, so it costs the same on
    the millionth record as on the first."""
    proven = report.by_status.get("verified", 0)
    refused = sum(n for r, n in report.skipped_candidates.items() if r.startswith("oracle."))
    return (
        f"mining {report.pipeline}: {report.records_read} records read"
        f" ({sum(report.skipped_records.values())} skipped whole)"
        f" → {report.candidates} candidates → {report.emitted} emitted,"
        f" {report.unchanged} unchanged, {sum(report.skipped_candidates.values())} skipped;"
        f" {proven} proven in a container"
        + (f", {refused} refused by the oracle" if oracle else "")
    )


@contextmanager
def mining_progress(
    enabled: bool = True, oracle: bool = False
) -> Iterator[Callable[[YieldReport], None]]:
    """Counts as records are read (`progress_line`, handed the run's report after each
    event): a spinner on a terminal; elsewhere (a pipe, a CI log, where a spinner draws
    nothing) a line on the first event, then every PROGRESS_LINE_EVERY_S seconds, and
    one when mining ends, so a run of hours is never silent for long. `oracle`: the
    oracle check runs, so its refusals are counted apart."""
    progress = spinner(enabled)
    lines = enabled and not err.is_terminal
    last_line = [0.0]
    last: list[str] = []

    with progress:
        bar = progress.add_task("mining", total=None)

        def on_progress(report: YieldReport) -> None:
            text = progress_line(report, oracle)
            last[:] = [text]
            progress.update(bar, description=text)
            now = time.monotonic()
            if lines and (last_line[0] == 0.0 or now - last_line[0] >= PROGRESS_LINE_EVERY_S):
                last_line[0] = now
                info(text)

        yield on_progress
    if lines and last:
        info(last[0] + " (done)")


@contextmanager
def record_progress(noun: str, enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner naming the record (`noun` + its id) being worked on."""
    progress = spinner(enabled)
    with progress:
        task = progress.add_task(f"[bold]{noun}s", total=None)

        def advance(record_id: str) -> None:
            progress.update(task, description=f"[bold]{noun}[/] {record_id[-70:]}")

        yield advance


def clean_summary(report: CleanReport, *, dry_run: bool) -> None:
    """What `repo2rlenv clean` removed or would remove, what it kept and why, and the
    space the engine reports freed."""
    verb = "would remove" if dry_run else "removed"
    for name in report.removed:
        info(f"  {verb} {name}")
    for name, why in report.kept:
        warn(f"kept {name}: {why}")
    out.print(escape(report.summary(dry_run=dry_run)), highlight=False)


def labels_table(
    rows: list[tuple[str, DifficultyLabel | None, str]], console: Console | None = None
) -> None:
    """`repo2rlenv difficulty`'s labels; rows: (task, label or None, note)."""
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
    console = console or out
    console.print(table)
    counts = Counter(label.label for _, label, _ in rows if label is not None)
    summary = ", ".join(f"{band} {counts[band]}" for band in ORDER if counts[band])
    console.print(f"  {summary or 'no label'}; unlabelled {sum(1 for r in rows if r[1] is None)}")
