"""`repo2rlenv validate`: static checks, then real trials, in parallel, with a result cache."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from repo2rlenv import __version__
from repo2rlenv.bundle import TaskTree, read_task_dir, replace_config
from repo2rlenv.runtime import Runtime
from repo2rlenv.validate.cache import ResultCache
from repo2rlenv.validate.checks import run_static
from repo2rlenv.validate.dynamic import plan, run_dynamic
from repo2rlenv.validate.findings import BLOCKING_RULES
from repo2rlenv.validate.image_leaks import LABEL as LEAK_LABEL
from repo2rlenv.validate.image_leaks import image_leak_request
from repo2rlenv.validate.probes import PROBES, probe_requests
from repo2rlenv.validate.report import TaskReport, ValidateOptions, ValidationReport
from repo2rlenv.validate.run_report import report_findings
from schemas import Repo2RLEnvMetadata


class ProgressSink(Protocol):
    def task_started(self, task_id: str, steps: int) -> None: ...
    def step_done(self, task_id: str) -> None: ...
    def task_done(self, report: TaskReport) -> None: ...


class SilentProgress:
    def task_started(self, task_id: str, steps: int) -> None: ...
    def step_done(self, task_id: str) -> None: ...
    def task_done(self, report: TaskReport) -> None: ...


def validate_one(
    task_dir: Path,
    options: ValidateOptions,
    runtime: Runtime | None,
    cache: ResultCache | None,
    progress: ProgressSink,
) -> TaskReport:
    started = time.perf_counter()
    tree = read_task_dir(task_dir)
    block = tree.config.metadata.repo2rlenv if tree.config else None
    report = TaskReport(
        path=str(task_dir),
        task_id=tree.name,
        content_hash=tree.content_hash,
        kind=block.kind if block else None,
        findings=run_static(tree, strict_secrets=options.strict_secrets),
    )
    blocked = any(f.rule_id in BLOCKING_RULES for f in report.errors)
    will_run = options.run and runtime is not None and not blocked
    progress.task_started(tree.name, 1 + (_trial_count(options, tree) if will_run else 0))
    progress.step_done(tree.name)
    if will_run:
        report = _dynamic(tree, report, options, runtime, cache, progress)
    failed = {f.rule_id for f in report.errors}
    report.findings.extend(report_findings(tree, failed, report.dynamic_ran))
    report.wall_s = round(time.perf_counter() - started, 3)
    report.label = report.derive_label()
    if options.write_labels and tree.config is not None:
        _write_label(tree, report)
    progress.task_done(report)
    return report


def _trial_count(options: ValidateOptions, tree: TaskTree) -> int:
    checks = 1 if image_leak_request(tree) is not None else 0
    return len(plan(options.reruns)) + (len(probe_requests(tree)) if options.probes else 0) + checks


def _dynamic(
    tree: TaskTree,
    report: TaskReport,
    options: ValidateOptions,
    runtime: Runtime,
    cache: ResultCache | None,
    progress: ProgressSink,
) -> TaskReport:
    key = None
    if cache is not None and report.content_hash:
        key = ResultCache.key(
            report.content_hash,
            f"{runtime.name}/{runtime.environment_key(tree)}",
            __version__,
            f"{options.reruns}+{','.join(sorted(PROBES)) if options.probes else 'no-probes'}"
            f"+{LEAK_LABEL}",
        )
        hit = cache.get(key)
        if hit is not None:
            hit.path, hit.cached = report.path, True
            for _ in range(_trial_count(options, tree)):
                progress.step_done(tree.name)
            return hit
    findings, trials = run_dynamic(
        tree,
        runtime,
        options.reruns,
        options.probes,
        on_trial=lambda _t: progress.step_done(tree.name),
    )
    report.findings.extend(findings)
    report.trials, report.dynamic_ran = trials, bool(trials)
    if key is not None and report.dynamic_ran and cache is not None:
        cache.put(key, report)
    return report


def _write_label(tree: TaskTree, report: TaskReport) -> None:
    """The label goes into task.toml without times or a check date (those stay in the
    JSON report): a task's bytes change only when its verdict does."""
    config = tree.config.model_copy(deep=True)
    block = config.metadata.repo2rlenv or Repo2RLEnvMetadata(generator="external")
    block.evaluation = report.derive_label(deterministic=True)
    block.checks = report.check_outcomes()
    config.metadata.repo2rlenv = block
    replace_config(tree.root, config)


def validate_tasks(
    task_dirs: list[Path],
    options: ValidateOptions,
    runtime: Runtime | None,
    cache: ResultCache | None = None,
    progress: ProgressSink | None = None,
) -> ValidationReport:
    started = time.perf_counter()
    sink = progress or SilentProgress()
    pool = ThreadPoolExecutor(max_workers=options.jobs)
    try:
        futures = [pool.submit(validate_one, d, options, runtime, cache, sink) for d in task_dirs]
        reports = [f.result() for f in futures]
    except BaseException:
        # Ctrl-C: remove every container now so running trials end, and start no new ones.
        if runtime is not None:
            runtime.abort()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return ValidationReport(
        tool_version=__version__,
        options=options,
        tasks=reports,
        wall_s=round(time.perf_counter() - started, 3),
    )
