"""Console output of `python -m train eval`: the report table to stdout, progress and
messages to stderr (through the toolkit's consoles)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from repo2rlenv.ui import error, info, out, warn, written
from train.evaluate.ledger import Attempt
from train.evaluate.report import CheckpointRow, EvalReport

__all__ = ["attempt_line", "error", "info", "report_table", "warn", "written"]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _delta(row: CheckpointRow) -> str:
    if row.delta_vs_base is None or row.delta_ci_low is None or row.delta_ci_high is None:
        return "-"
    style = "green" if row.delta_ci_low > 0 else "red" if row.delta_ci_high < 0 else ""
    text = f"{row.delta_vs_base:+.1%} [{row.delta_ci_low:+.1%}, {row.delta_ci_high:+.1%}]"
    return f"[{style}]{text}[/]" if style else text


def report_table(report: EvalReport) -> None:
    table = Table(
        title=f"evaluation: {report.tasks} tasks × k={report.k}, harness {report.harness}, "
        f"base {escape(report.base_model)}",
        title_justify="left",
    )
    columns = ("checkpoint", "pass@1", "95% CI", "Δ vs base [95% CI]", "calls/ solved",
               "blocked", "failed/ unscorable/ missing")  # fmt: skip
    for column in columns:
        left = column == "checkpoint"
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    for row in report.checkpoints:
        problems = (row.failed, row.unscorable, row.missing)
        table.add_row(
            escape(row.label),
            _pct(row.pass_at_1) + (f" ({row.solved}/{row.scored})" if row.scored else ""),
            f"{row.ci_low:.1%}–{row.ci_high:.1%}",
            _delta(row),
            "-" if row.tool_calls_per_solved is None else f"{row.tool_calls_per_solved:.1f}",
            f"{row.blocked_calls} in {row.attempts_with_blocked}" if row.blocked_calls else "0",
            "/".join(map(str, problems)) if any(problems) else "0/0/0",
        )
    out.print(table)
    a = report.accounted
    out.print(
        f"  {report.planned} attempts planned: {a['scored']} scored, {a['failed']} failed, "
        f"{a['unscorable']} unscorable, {a['missing']} missing; interval: {report.interval}",
        highlight=False,
    )
    for row in report.checkpoints:
        if row.load_error:
            warn(f"{row.label}: adapter did not load ({row.load_error}); its attempts are missing")


def attempt_line(attempt: Attempt, done: int, total: int) -> None:
    mark = "solved" if attempt.solved else attempt.status
    info(f"[{done}/{total}] {attempt.checkpoint} {attempt.task_id} #{attempt.attempt}: {mark}")
