"""Step metrics: computed from the step's groups, one flushed JSON line per step, read
back for resume (a torn last line is skipped, not fatal), shown in a live table."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from tests.train.rollout_fakes import group
from train import ui
from train.grpo.metrics import MetricsLog, StepMetrics, rollout_summary, step_metrics
from train.grpo.packing import Packer, PackSettings
from train.grpo.samples import build_samples
from train.ui import LiveMetrics


def step(n: int, **changes: object) -> StepMetrics:
    values: dict[str, object] = {
        "step": n, "harness": "pi", "adapter_version": n + 1, "groups": 2, "rollouts": 6,
        "scored": 5, "reward_mean": 0.4, "pass_rate": 0.4, "tool_calls_per_rollout": 2.0,
        "blocked_calls": 1, "dropped_stale_groups": 0, "rows": 5, "tokens": 900,
        "budget_utilisation": 0.97, "wait_s": 1.5, "compute_s": 4.0,
    }  # fmt: skip
    return StepMetrics.model_validate({**values, **changes})


def test_summary_from_groups() -> None:
    groups = [
        group([("scored", 1.0, 0), ("scored", 0.0, 0), ("unscorable", 0.0, 0)], group_id=0),
        group([("scored", 1.0, 2), ("scored", 0.5, 0)], group_id=1),
    ]
    summary = rollout_summary(groups)
    scored = [r for g in groups for r in g.rollouts if r.status == "scored"]
    assert summary["groups"] == 2 and summary["rollouts"] == 5 and summary["scored"] == 4
    assert summary["reward_mean"] == sum(r.reward for r in scored) / 4
    assert summary["pass_rate"] == 0.5  # two full marks; the blocked one still passed
    assert summary["blocked_calls"] == 2
    assert summary["tool_calls_per_rollout"] == sum(r.tool_calls for r in scored) / 4


def test_summary_of_nothing_scored_has_no_means() -> None:
    summary = rollout_summary([group([("unscorable", 0.0, 0)])])
    assert summary["reward_mean"] is None and summary["pass_rate"] is None


def test_step_metrics_from_a_packed_step() -> None:
    groups = [
        group([("scored", 1.0, 0), ("scored", 0.0, 0)], group_id=0),
        group([("scored", 1.0, 1), ("scored", 0.5, 0)], group_id=1),
    ]
    packer = Packer(PackSettings(micro_batches=2, token_budget=200))
    for g in groups:
        assert packer.add(build_samples(g))
    plan = packer.next_step(force=True)
    assert plan is not None and sorted(plan.group_ids) == [0, 1]
    metrics = step_metrics(step=3, harness="pi", adapter_version=4, groups=groups, plan=plan,
                           dropped_stale_groups=2, wait_s=1.0, compute_s=2.5,
                           skipped={"group.zero-variance": 1, "row.over-budget": 0})  # fmt: skip
    assert metrics.rows == 4 and metrics.tokens == plan.tokens
    assert metrics.budget_utilisation == plan.tokens / 400
    assert metrics.blocked_calls == 1 and metrics.dropped_stale_groups == 2
    assert metrics.skipped == {"group.zero-variance": 1}
    assert metrics.step_s == 3.5


def test_log_round_trip_and_resume_point(tmp_path: Path) -> None:
    log = MetricsLog(tmp_path / "run" / "metrics.jsonl")
    assert log.read() == ([], 0) and log.last_step() is None
    written = [step(n) for n in range(3)]
    for metrics in written:
        log.append(metrics)
        lines = log.path.read_text().splitlines()
        assert json.loads(lines[-1])["step"] == metrics.step
    steps, bad = log.read()
    assert steps == written and bad == 0
    assert log.last_step() == 2
    assert written[0].step_s == 5.5


def test_torn_last_line_is_skipped_and_counted(tmp_path: Path) -> None:
    log = MetricsLog(tmp_path / "metrics.jsonl")
    log.append(step(0))
    log.append(step(1))
    with log.path.open("a") as handle:
        handle.write(step(2).model_dump_json()[:40])
    steps, bad = log.read()
    assert [s.step for s in steps] == [0, 1] and bad == 1
    assert log.last_step() == 1


def test_table_shows_every_step() -> None:
    console = Console(file=io.StringIO(), width=160, record=True)
    console.print(ui.metrics_table([step(0), step(1, reward_mean=None, blocked_calls=0)], "pi"))
    text = console.export_text()
    assert "0.400" in text and "97%" in text and "-" in text
    assert text.count("pi") >= 1 and "compute s" in text


def test_live_view_keeps_the_latest_steps() -> None:
    with LiveMetrics("pi trainer", keep=2) as live:
        for n in range(4):
            live.update(step(n))
    assert [s.step for s in live.steps] == [2, 3]
