"""Training's console (layer 5): what `python -m train` and the device check print, on
the toolkit's consoles (`repo2rlenv.ui`): tables to stdout, messages to stderr, so a
piped stdout holds only the report. The rollout stack below prints through
`train.rollout.ui` (it may not import this module; ARCHITECTURE.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.live import Live
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from repo2rlenv.ui import err, info, out, warn
from train.data.imbalance import ImbalanceReport
from train.data.split import Split
from train.data.tasks import LoadResult
from train.grpo.metrics import StepMetrics
from train.launch.plan import Plan

if TYPE_CHECKING:
    from train.data.failures import FailureSummary

MAX_CELL_ROWS = 25
"""Rows of the full breakdown shown in the terminal; the JSON report has them all."""


def load_summary(result: LoadResult) -> None:
    info(
        f"loaded {len(result.tasks)} of {result.found} tasks from {result.root}"
        + (f" ({len(result.invalid)} invalid)" if result.invalid else "")
        + "".join(f", {n} left out by {reason}" for reason, n in sorted(result.filtered.items()))
    )
    if not result.invalid:
        return
    table = Table(title="invalid tasks", title_justify="left")
    table.add_column("task", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for task in result.invalid[:MAX_CELL_ROWS]:
        table.add_row(escape(task.path), f"[red]{task.reason}[/]", escape(task.detail))
    out.print(table)
    if len(result.invalid) > MAX_CELL_ROWS:
        info(f"  … and {len(result.invalid) - MAX_CELL_ROWS} more")


def split_table(split: Split) -> None:
    table = Table(title=f"split (seed {split.settings.seed}, grouped by "
                  f"{split.settings.group_by})", title_justify="left")  # fmt: skip
    for column in ("source", "tasks", "groups", "target", "cap", "held out", "train"):
        table.add_column(column, justify="left" if column == "source" else "right")
    table.add_column("held out by stratum (quota)")
    for name, s in split.sources.items():
        strata = ", ".join(
            f"{kind} {s.heldout_by_stratum.get(kind, 0)}/{quota}"
            for kind, quota in s.quota_by_stratum.items()
        )
        table.add_row(
            name,
            str(s.tasks),
            str(s.groups),
            str(s.target),
            str(s.cap),
            f"[bold]{s.heldout}[/]",
            str(s.tasks - s.heldout),
            strata,
        )
    out.print(table)


def imbalance_tables(report: ImbalanceReport) -> None:
    kinds = Table(title="tasks by kind", title_justify="left")
    for column in ("kind", "train", "held out", "total", "share", "weight", "sampled share"):
        kinds.add_column(column, justify="left" if column == "kind" else "right")
    for kind, count in report.marginals["kind"].items():
        style = "bold red" if kind == report.dominant_kind and report.dominates else ""
        kinds.add_row(
            f"[{style}]{escape(kind)}[/]" if style else escape(kind),
            str(count.train),
            str(count.heldout),
            str(count.total),
            f"{report.share(count.total):.1%}",
            f"{report.kind_weights[kind]:.3g}" if kind in report.kind_weights else "-",
            f"{report.expected_mix[kind]:.1%}" if kind in report.expected_mix else "-",
        )
    out.print(kinds)
    cells = Table(title="tasks by source × kind × difficulty × format", title_justify="left")
    for column in ("source", "kind", "difficulty", "format", "train", "held out", "share"):
        right = column in ("train", "held out", "share")
        cells.add_column(column, justify="right" if right else "left")
    ordered = sorted(report.cells.items(), key=lambda item: (-item[1].total, item[0]))
    for key, count in ordered[:MAX_CELL_ROWS]:
        cells.add_row(
            *map(escape, key),
            str(count.train),
            str(count.heldout),
            f"{report.share(count.total):.1%}",
        )
    out.print(cells)
    if len(ordered) > MAX_CELL_ROWS:
        info(f"  … {len(ordered) - MAX_CELL_ROWS} more rows in the JSON report")
    difficulty_table(report)
    for message in report.warnings:
        warn(message)


def difficulty_table(report: ImbalanceReport) -> None:
    """Counts by difficulty label (`repo2rlenv difficulty`); heuristic guesses apart."""
    table = Table(title="tasks by difficulty", title_justify="left")
    for column in ("difficulty", "measured", "heuristic", "train", "held out", "share"):
        table.add_column(column, justify="left" if column == "difficulty" else "right")
    for row in report.difficulty_labels():
        table.add_row(
            escape(row.label),
            str(row.measured),
            f"[yellow]{row.heuristic}[/]" if row.heuristic else "0",
            str(row.train),
            str(row.heldout),
            f"{report.share(row.total):.1%}",
        )
    out.print(table)


def config_view(toml_text: str) -> None:
    out.print("[bold]resolved config[/]")
    out.print(Syntax(toml_text, "toml", theme="ansi_dark", background_color="default"))


def plan_tables(plan: Plan) -> None:
    server = plan.server
    devices = f"GPU {', '.join(map(str, server.gpus))}" if server.gpus else "the CPU"
    where = server.url or f"started by the run on {devices}"
    out.print(f"[bold]plan[/] ({plan.preset}): one vLLM server, {escape(where)}")
    out.print(
        f"  model {escape(server.model)}, up to {server.max_loras} LoRA adapters of rank "
        f"{server.max_lora_rank}",
        highlight=False,
    )
    if server.url is None:
        env = " ".join(f"{k}={v}" for k, v in server.env.items())
        out.print(f"  [dim]{escape(env + ' ' + ' '.join(server.command))}[/]", highlight=False)
    table = Table(title="trainers", title_justify="left")
    columns = ("harness", "GPU", "adapter", "live", "sessions", "groups", "steps", "μbatch",
               "tokens")  # fmt: skip
    for column in columns:
        left = column in ("harness", "adapter")
        table.add_column(column, justify="left" if left else "right", no_wrap=True)
    for t in plan.trainers:
        table.add_row(
            t.harness,
            str(t.gpu) if t.gpu >= 0 else "cpu",
            f"{t.adapter}-v{{N}}",
            str(t.live_versions),
            str(t.sessions),
            str(t.task_groups_in_flight),
            str(t.steps),
            str(t.micro_batches_per_step),
            str(t.token_budget),
        )
    out.print(table)
    out.print(
        "  [dim]live: adapter versions kept loaded (staleness window); groups: tasks in "
        "flight (sessions / rollouts per task); μbatch: micro-batches per step; tokens: "
        "token budget per micro-batch[/]"
    )
    sampling = "rebalanced by kind" if plan.rebalance else "uniform over tasks (--no-rebalance)"
    out.print(
        f"  {plan.total_sessions} harness sessions at peak; sampling {plan.train_tasks} train "
        f"tasks {sampling}; {plan.heldout_tasks} held out for evaluation",
        highlight=False,
    )


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def metrics_table(steps: list[StepMetrics], title: str) -> Table:
    """The live view of training: one row per step, newest last."""
    table = Table(title=escape(title), title_justify="left")
    columns = ("step", "v", "groups", "reward", "pass", "calls/r", "blocked", "stale",
               "util", "wait s", "compute s")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    for s in steps:
        table.add_row(
            str(s.step),
            str(s.adapter_version),
            str(s.groups),
            _num(s.reward_mean, ".3f"),
            _num(s.pass_rate, ".0%"),
            _num(s.tool_calls_per_rollout, ".1f"),
            f"[red]{s.blocked_calls}[/]" if s.blocked_calls else "0",
            str(s.dropped_stale_groups),
            f"{s.budget_utilisation:.0%}",
            f"{s.wait_s:.1f}",
            f"{s.compute_s:.1f}",
        )
    return table


def metrics_live(table: Table) -> Live:
    """On stderr, like every progress view, so stdout stays a clean report."""
    return Live(table, console=err, refresh_per_second=2, transient=False)


def live_view() -> bool:
    """Whether the live table is seen (stderr is a terminal); else lines are printed."""
    return err.is_terminal


def step_line(s: StepMetrics) -> None:
    """One optimizer step as a log line, for a run whose live table nobody sees."""
    info(
        f"{s.harness} step {s.step}: v{s.adapter_version}, {s.groups} groups, "
        f"{s.scored}/{s.rollouts} scored, reward {_num(s.reward_mean, '.3f')}, "
        f"pass {_num(s.pass_rate, '.0%')}, wait {s.wait_s:.1f}s, compute {s.compute_s:.1f}s"
    )


def failure_counts(harness: str, summary: FailureSummary) -> None:
    info(
        f"{harness}: {summary.scored} rollouts scored, {summary.failed} failed"
        + (f" ({summary.counts_line()})" if summary.failed else "")
    )


def failure_summary(harness: str, summary: FailureSummary) -> None:
    """Failed rollouts by reason with one example each, on stderr (it explains an error)."""
    table = Table(title=f"{escape(harness)}: failed rollouts by reason", title_justify="left")
    table.add_column("reason", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_column("example", overflow="fold")
    for reason, count in sorted(summary.counts.items(), key=lambda item: (-item[1], item[0])):
        table.add_row(f"[red]{escape(reason)}[/]", str(count), escape(summary.examples[reason]))
    err.print(table)
    failure_counts(harness, summary)


class LiveMetrics:
    """A `rich.live` table of the latest steps, on stderr; use as a context manager."""

    def __init__(self, title: str, keep: int = 12) -> None:
        self.title = title
        self.keep = keep
        self.steps: list[StepMetrics] = []
        self._live = metrics_live(metrics_table([], title))

    def __enter__(self) -> LiveMetrics:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(*exc)

    def update(self, metrics: StepMetrics) -> None:
        self.steps = [*self.steps, metrics][-self.keep :]
        self._live.update(metrics_table(self.steps, self.title), refresh=True)
