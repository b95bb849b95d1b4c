"""The rollout stack's console (layer 4: serving, harnesses, guard, evaluation).

Messages (`info`, `error`, `warn`, `written`) and the two consoles are the toolkit's,
in `repo2rlenv.ui` (layer 1), and a rollout module imports them from there (nothing is
re-exported, so a name has one home); what only the rollout stack prints lives here.
Training (layer 5) has its own, `train.ui`, which no module of this layer may import
(ARCHITECTURE.md: where console output goes). Tables to stdout, everything else to
stderr, so stdout stays machine-readable; the guard prints nothing per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from repo2rlenv.ui import err, info, out, warn

if TYPE_CHECKING:
    from train.evaluate.ledger import Attempt
    from train.evaluate.report import CheckpointRow, EvalReport


def step(message: str) -> None:
    """A command an install runs, as it starts."""
    err.print(f"  [dim]$ {escape(message)}[/]", highlight=False)


def plain(message: str) -> None:
    """`message` as it is: one line (never wrapped), no markup (it may quote a client)."""
    err.print(message, markup=False, highlight=False, soft_wrap=True)


def guard_listening(base_url: str, upstream: str, log_dir: object, admin_url: str = "") -> None:
    err.print(
        f"[bold]guard[/] listening on {base_url} -> {upstream}"
        f"{f'  (logs: {log_dir})' if log_dir else ''}",
        highlight=False,
    )
    if admin_url:
        err.print(f"[bold]guard[/] control plane on {admin_url}", highlight=False)


def bench_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    """A benchmark's numbers: first column left, the rest right."""
    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    out.print(table)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _delta(row: CheckpointRow) -> str:
    if row.delta_vs_base is None or row.delta_ci_low is None or row.delta_ci_high is None:
        return "-"
    style = "green" if row.delta_ci_low > 0 else "red" if row.delta_ci_high < 0 else ""
    text = f"{row.delta_vs_base:+.1%} [{row.delta_ci_low:+.1%}, {row.delta_ci_high:+.1%}]"
    return f"[{style}]{text}[/]" if style else text


def eval_report_table(report: EvalReport) -> None:
    """`python -m train eval`'s report: one row a checkpoint, deltas against the base."""
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


def eval_attempt_line(attempt: Attempt, done: int, total: int) -> None:
    mark = "solved" if attempt.solved else attempt.status
    info(f"[{done}/{total}] {attempt.checkpoint} {attempt.task_id} #{attempt.attempt}: {mark}")
