"""What `validate` concludes per task and in total, and the label it derives from that."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.privacy import scrub_paths
from repo2rlenv.runtime import TrialResult
from repo2rlenv.validate.dynamic import NOT_RUN, SKIPPED, not_run_counts, not_run_summary
from repo2rlenv.validate.findings import BLOCKING_RULES, Finding
from schemas import CheckOutcome, EvaluationLabel
from schemas.provenance import CheckStatus

RUN_PREFIXES = ("run.", "probe.")
MAX_JOBS = 512
"""Tasks checked at once. Hosted runtimes (`harbor:daytona`, `harbor:modal`, ...) run
hundreds of sandboxes; on the local engine more jobs than cores only queue."""
INFRA_STATUSES = frozenset({NOT_RUN})
"""Trial statuses that say the backend could not run the trial (engine or provider
failure, driver crash, an environment that did not start, abort) after its retries:
the trial did not run. `skipped` is neither the task's nor the backend's (the task was
already refused); every other failed status (build failed, timeouts, reward missing
or invalid) is the task's. `run.error` is the finding trials not run leave."""
INFRA_RULES = frozenset({"run.error"})


class ValidateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: bool = True
    reruns: int = Field(default=2, ge=0, le=50)
    probes: bool = True
    jobs: int = Field(default=1, ge=1, le=MAX_JOBS)
    use_cache: bool = True
    write_labels: bool = False
    strict_secrets: bool = False
    """`secrets.public-checkout` warnings count as `secrets.detected` errors."""
    runtime: str = "docker"
    """The backend the trials ran on (`docker`, `harbor:docker`, ...): part of the report
    and of the result cache's key."""


class TaskReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    task_id: str
    kind: str | None = None
    content_hash: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    trials: list[TrialResult] = Field(default_factory=list)
    dynamic_ran: bool = False
    cached: bool = False
    wall_s: float = 0.0
    label: EvaluationLabel = Field(default_factory=EvaluationLabel)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def flaky(self) -> bool:
        return any(f.rule_id == "run.flaky" for f in self.findings)

    def rewards(self, prefix: str) -> list[float | None]:
        return [t.reward for t in self.trials if t.label.startswith(prefix)]

    def derive_label(self, *, deterministic: bool = False) -> EvaluationLabel:
        """The label for this verdict. `deterministic` leaves out times and wall-clock
        durations, so a task written by `mine` has the same bytes on every run. Errors
        that are all the infrastructure's (trials not run) leave the task `unverified`:
        nothing was shown, and nothing needs repair."""
        codes = sorted({f.rule_id for f in self.errors})
        if any(code in BLOCKING_RULES for code in codes):
            status = "blocked"
        elif codes and all(code in INFRA_RULES for code in codes):
            status = "unverified"
        elif codes:
            status = "needs_repair"
        elif self.dynamic_ran:
            status = "verified"
        else:
            status = "unverified"
        timing = (lambda t: "") if deterministic else (lambda t: f", {t.wall_s:.1f}s")
        evidence = [f"{t.label}: {t.status}, reward={t.reward}{timing(t)}" for t in self.trials]
        # a finding quotes what it found; a home path quoted into the label written to
        # task.toml made the next validation fail its own `semantic.host-path` check
        evidence += [scrub_paths(f"{f.rule_id}: {f.message}", None) for f in self.findings]
        checked_at = None if deterministic else datetime.now(UTC).replace(microsecond=0).isoformat()
        return EvaluationLabel(
            status=status, reason_codes=codes, evidence=evidence, checked_at=checked_at
        )

    def probe_outcomes(self) -> list[CheckOutcome]:
        """One outcome per probe: `failed` when it fooled the verifier, `error` when it
        did not run (infrastructure), `skipped` when the task was refused before it,
        `passed` only when it ran and earned nothing."""
        failed = {f.rule_id for f in self.errors}
        return [
            CheckOutcome(
                rule_id=t.label,
                status=_outcome(t.label in failed, [t]),
                detail=t.detail if t.status in (NOT_RUN, SKIPPED) else "",
                rewards=[t.reward] if t.reward is not None else [],
            )
            for t in self.trials
            if t.label.startswith("probe.")
        ]

    def check_outcomes(self) -> list[CheckOutcome]:
        """The checks as recorded in task metadata: one entry per check family."""
        by_rule = {f.rule_id: f for f in self.errors}
        outcomes = [
            CheckOutcome(
                rule_id="static",
                status="failed"
                if any(not r.startswith(RUN_PREFIXES) for r in by_rule)
                else "passed",
            )
        ]
        if self.dynamic_ran:
            for name, prefix, rule in (
                ("reference", "reference", "run.reference-failed"),
                ("noop", "noop", "run.noop-passed"),
            ):
                group = [t for t in self.trials if t.label.startswith(prefix)]
                rewards = [t.reward for t in group if t.reward is not None]
                own = [t for t in group if t.status not in (NOT_RUN, SKIPPED)]
                failed = (
                    rule in by_rule or "run.flaky" in by_rule or any(t.status != "ok" for t in own)
                )
                outcomes.append(
                    CheckOutcome(rule_id=name, status=_outcome(failed, group), rewards=rewards)
                )
        return outcomes + self.probe_outcomes()

    def not_run(self) -> list[TrialResult]:
        """Trials the backend could not run (infrastructure)."""
        return [t for t in self.trials if t.status == NOT_RUN]

    def skipped(self) -> list[TrialResult]:
        """Trials not started because an earlier one already refused the task."""
        return [t for t in self.trials if t.status == SKIPPED]

    def rewards_text(self, prefix: str) -> str:
        """Each run's reward; `—` where the task's run gave none (a timeout), `not-run`
        where the backend could not run it, `skipped` after the task was refused."""
        trials = [t for t in self.trials if t.label.startswith(prefix)]
        if not trials:
            return "-"
        shown = {NOT_RUN: "not-run", SKIPPED: "skipped"}
        return " ".join(
            shown.get(t.status) or ("—" if t.reward is None else f"{t.reward:g}") for t in trials
        )

    def probes_text(self) -> tuple[str, int, int]:
        """`6/6 held` only for probes that ran; the others are named apart: `not run` (the
        backend's) and `skipped` (the task was already refused). With the text: how many
        probes fooled the verifier and how many did not run (the console's colour)."""
        probes = [t for t in self.trials if t.label.startswith("probe.")]
        if not probes:
            return "-", 0, 0
        fooled = sum(1 for f in self.errors if f.rule_id.startswith("probe."))
        not_run = sum(1 for t in probes if t.status == NOT_RUN)
        skipped = sum(1 for t in probes if t.status == SKIPPED)
        ran = len(probes) - not_run - skipped
        parts = [f"{ran - fooled}/{len(probes)} held"] if ran else []
        parts += [f"{not_run} not run"] if not_run else []
        parts += [f"{skipped} skipped"] if skipped else []
        return ", ".join(parts), fooled, not_run


def _outcome(failed: bool, trials: list[TrialResult]) -> CheckStatus:
    """A check's status from its trials: the task's failure first, then a trial not
    run (`error`), then one skipped; `passed` only when every trial ran."""
    if failed:
        return "failed"
    if any(t.status == NOT_RUN for t in trials):
        return "error"
    if any(t.status == SKIPPED for t in trials):
        return "skipped"
    return "passed"


class ValidationReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool_version: str
    options: ValidateOptions
    tasks: list[TaskReport]
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        return 0 if all(t.valid for t in self.tasks) else 1

    def _now(self) -> list[TrialResult]:
        """The trial records of this run (a cached task's trials did not run now)."""
        return [r for t in self.tasks if not t.cached for r in t.trials]

    def summary(self) -> dict[str, object]:
        by_rule = Counter(f.rule_id for t in self.tasks for f in t.errors)
        now = self._now()
        run = [r for r in now if r.status not in (NOT_RUN, SKIPPED)]
        costs = [r.cost_usd for r in now if r.cost_usd is not None]
        # Trials that failed the task's own way (by status): infrastructure errors apart.
        task_failed = Counter(r.status for r in run if r.status != "ok")
        not_run = not_run_counts(now)
        return {
            "total": len(self.tasks),
            "valid": sum(t.valid for t in self.tasks),
            "invalid": sum(not t.valid for t in self.tasks),
            "invalid_by_infrastructure": self._invalid_by_infrastructure(),
            "flaky": sum(t.flaky for t in self.tasks),
            "cached": sum(t.cached for t in self.tasks),
            "trials": sum(len(t.trials) for t in self.tasks),
            "trials_run": len(run),
            "trials_skipped": sum(r.status == SKIPPED for r in now),
            "trial_failures": dict(sorted(task_failed.items())),
            "infra_errors": sum(not_run.values()),
            "not_run": not_run,
            "infra_retries": sum(r.infra_retries for r in now),
            "failed_by_rule": dict(sorted(by_rule.items())),
            "wall_s": self.wall_s,
            "cost_usd": round(sum(costs), 6) if costs else None,
            "labels": dict(sorted(Counter(t.label.status for t in self.tasks).items())),
        }

    def _invalid_by_infrastructure(self) -> int:
        """Invalid tasks whose every error is the backend's: rerun them, do not fix them."""
        return sum(
            1 for t in self.tasks if t.errors and all(f.rule_id in INFRA_RULES for f in t.errors)
        )

    def final_line(self) -> str:
        """The run in one line: what ran, what failed because of the tasks (by rule), what
        was skipped because its task was already refused, what the backend could not run
        (by kind, after retries, and the retries), the wall time and the provider's cost,
        kept apart so an outage never reads as bad tasks."""
        by_rule = Counter(f.rule_id for t in self.tasks for f in t.errors)
        now = self._now()
        run = [r for r in now if r.status not in (NOT_RUN, SKIPPED)]
        skipped = sum(r.status == SKIPPED for r in now)
        not_run = [r for r in now if r.status in INFRA_STATUSES]
        cached = sum(len(t.trials) for t in self.tasks if t.cached)
        costs = [r.cost_usd for r in now if r.cost_usd is not None]
        runtime = self.options.runtime if self.options.run else "no runtime (--no-run)"
        invalid = sum(not t.valid for t in self.tasks)
        infra_only = self._invalid_by_infrastructure()
        failures = ", ".join(
            f"{rule} {n}" for rule, n in sorted(by_rule.items()) if rule not in INFRA_RULES
        )
        return (
            f"{len(self.tasks)} tasks, {invalid} invalid"
            + (f" ({infra_only} by infrastructure only)" if infra_only else "")
            + f"; task failures by rule: {failures or 'none'}"
            + f"; {len(run)} trials run on {runtime}"
            + (f", {skipped} skipped (task already refused)" if skipped else "")
            + (f", {cached} cached" if cached else "")
            + f"; infrastructure: {len(not_run)} trials not run"
            + (f" ({not_run_summary(not_run)})" if not_run else "")
            + f", {sum(r.infra_retries for r in now)} retries; wall {self.wall_s:.1f}s; "
            + (f"cost ${sum(costs):.4f}" if costs else f"cost: not reported by {runtime}")
        )

    def to_json(self) -> str:
        data = self.model_dump(mode="json")
        data["summary"] = self.summary()
        data["summary"]["line"] = self.final_line()
        for task, dumped in zip(self.tasks, data["tasks"], strict=True):
            dumped["valid"] = task.valid
            dumped["not_run"] = not_run_counts(task.trials)
            dumped["skipped"] = len(task.skipped())
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
