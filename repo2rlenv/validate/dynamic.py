"""Dynamic checks: the reference must score 1.0, the untouched start state 0.0, and both
must say the same on every rerun. Each trial runs in fresh containers.

Two kinds of trial end without a verdict of their own, and neither is ever `passed`:
- not run (status `error`): the backend could not run it after the runtime's retries
  (`INFRA_RETRIES`), or the environment did not start for the engine's reasons
  (`EngineError`). A `run.error` finding, infrastructure: the task is not verified, the
  verdict is not cached, and the report counts these by kind ("6 trials not run
  (probe 6)").
- skipped (status `skipped`): an earlier trial already refused the task (a reference
  run that failed or timed out, or any reference/no-op run that timed out), so the rest
  are not started: a verifier that hangs costs one timeout, not twelve (`refusal`).
"""

from __future__ import annotations

from collections.abc import Callable

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import EngineError, Runtime, TrialRequest, TrialResult
from repo2rlenv.runtime.images import ImageBuildError
from repo2rlenv.validate.evidence import verifier_evidence
from repo2rlenv.validate.findings import Finding
from repo2rlenv.validate.image_leaks import LABEL as LEAK_LABEL
from repo2rlenv.validate.image_leaks import image_leak_request, leaks, scan_finished
from repo2rlenv.validate.probes import PROBES, probe_requests

FULL_MARKS = 1.0
EPSILON = 1e-9
NOT_RUN = "error"
"""The status of a trial the backend could not run (infrastructure)."""
SKIPPED = "skipped"
"""The status of a trial not started because the task was already refused."""
PLAN_KINDS = ("reference", "no-op", "rerun")
TIMEOUTS = ("verifier-timeout", "solution-timeout")


def plan(reruns: int) -> list[TrialRequest]:
    requests = [TrialRequest(label="reference", apply_solution=True), TrialRequest(label="noop")]
    for index in range(1, reruns + 1):
        requests.append(TrialRequest(label=f"reference-rerun-{index}", apply_solution=True))
        requests.append(TrialRequest(label=f"noop-rerun-{index}"))
    return requests


def trial_kind(label: str) -> str:
    """What a trial checks, for counting trials not run: `reference`, `no-op`, `rerun`,
    `probe` or `leak-scan`."""
    if label == LEAK_LABEL:
        return "leak-scan"
    if label.startswith("probe."):
        return "probe"
    if "-rerun-" in label:
        return "rerun"
    return "reference" if label.startswith("reference") else "no-op"


def refusal(result: TrialResult) -> str | None:
    """Why this trial ends the task's other trials (None: it does not). A reference
    trial (first run or rerun) that fails or times out refuses the task whatever comes
    after; any trial of the plan that times out (a verifier that hangs on the start
    state) would cost every later trial the same timeout. A no-op that scores is not
    cut short: its reruns tell a flaky verifier from a wrong one. Probes and the leak
    scan never end a task (every forgery that fools the verifier is worth naming), and
    a trial the backend could not run is no verdict at all."""
    if trial_kind(result.label) not in PLAN_KINDS or result.status in (NOT_RUN, SKIPPED):
        return None
    if result.status in TIMEOUTS:
        return result.status
    if not result.label.startswith("reference"):
        return None
    if result.status != "ok":
        return result.status
    if (result.reward or 0.0) < FULL_MARKS - EPSILON:
        return f"reference scored {result.reward or 0.0:g}"
    return None


def skipped_detail(label: str, why: str) -> str:
    """What a skipped trial says: `not run: reference failed (reference scored 0)`,
    `not run: noop timed out (verifier-timeout)`. Its status stays `skipped`: neither
    passed nor the backend's error."""
    verb = "timed out" if why in TIMEOUTS else "failed"
    return f"not run: {label} {verb} ({why})"


def run_dynamic(
    tree: TaskTree,
    runtime: Runtime,
    reruns: int,
    probes: bool = True,
    on_trial: Callable[[TrialResult], None] | None = None,
) -> tuple[list[Finding], list[TrialResult]]:
    leak_check = image_leak_request(tree)
    requests = plan(reruns) + (probe_requests(tree) if probes else [])
    requests += [leak_check] if leak_check else []
    trials: list[TrialResult] = []

    def record(result: TrialResult) -> None:
        trials.append(result)
        if on_trial is not None:
            on_trial(result)

    try:
        image = runtime.prepare(tree)
    except ImageBuildError as exc:
        return [
            Finding(
                rule_id="run.build-failed", message=str(exc)[:2000], path="environment/Dockerfile"
            )
        ], []
    except EngineError as exc:
        for index, request in enumerate(requests):
            # The start's retries are counted once, on the task's first trial.
            retries = exc.retries if index == 0 else 0
            detail = f"not run: {exc}"[:2000]
            record(
                TrialResult(
                    label=request.label, status=NOT_RUN, detail=detail, infra_retries=retries
                )
            )
        return judge(trials), trials
    ended: tuple[str, str] | None = None
    for request in requests:
        if ended is not None:
            record(
                TrialResult(
                    label=request.label,
                    status=SKIPPED,
                    detail=skipped_detail(*ended),
                )
            )
            continue
        result = runtime.run_trial(tree, image, request)
        why = refusal(result)
        if why is not None:
            ended = (result.label, why)
        record(result)
    return judge(trials), trials


def judge(trials: list[TrialResult]) -> list[Finding]:
    """Findings from a set of trial results: pure, so it is tested without Docker."""
    findings: list[Finding] = []
    seen_status: set[str] = set()
    ran = [t for t in trials if t.status not in (NOT_RUN, SKIPPED)]
    for trial in ran:
        if trial.label == LEAK_LABEL:
            findings.extend(_leak_findings(trial))
        elif trial.label in PROBES:
            findings.extend(_probe_findings(trial))
        elif trial.status != "ok" and trial.status not in seen_status:
            seen_status.add(trial.status)
            findings.append(
                Finding(
                    rule_id=f"run.{trial.status}", message=f"{trial.label}: {trial.detail}"[:2000]
                )
            )
    findings.extend(_score_findings(ran))
    not_run = [t for t in trials if t.status == NOT_RUN]
    if not_run:
        # Infrastructure, after the task's own findings (a caller that shows the first
        # error shows the task's): nothing here is a verdict on the task.
        findings.append(
            Finding(
                rule_id="run.error",
                message=(
                    f"{len(not_run)} trial(s) not run ({not_run_summary(not_run)}): "
                    f"{not_run[0].detail}"
                )[:2000],
            )
        )
    return findings


def _leak_findings(trial: TrialResult) -> list[Finding]:
    """The image leak scan: hidden tests found in the image, or a scan that did not end."""
    findings: list[Finding] = []
    found = leaks(trial.agent_output)
    if not found and not scan_finished(trial.agent_output):
        findings.append(
            Finding(
                rule_id="leak.scan-incomplete",
                severity="warning",
                message=f"the scan ended without its last line ({trial.status}: "
                f"{trial.detail[:200] or trial.agent_output[-200:]!r})",
            )
        )
    if found:
        findings.append(
            Finding(
                rule_id=LEAK_LABEL,
                message=f"{len(found)} file(s) of the image are hidden tests: "
                + "; ".join(found[:3]),
            )
        )
    return findings


def _probe_findings(trial: TrialResult) -> list[Finding]:
    """A probe the verifier did not reward (0, a timeout, no reward file) held."""
    if trial.status == "ok" and (trial.reward or 0.0) > EPSILON:
        return [
            Finding(
                rule_id=trial.label,
                message=(
                    f"{PROBES[trial.label].description} scored {trial.reward:g}: "
                    "the verifier can be fooled"
                ),
            )
        ]
    return []


def _score_findings(ran: list[TrialResult]) -> list[Finding]:
    """The reference must score 1.0, the no-op 0.0, and reruns of each must agree."""
    findings: list[Finding] = []
    reference = [t for t in ran if t.label.startswith("reference")]
    noop = [t for t in ran if t.label.startswith("noop")]
    ref_scores = [t.reward for t in reference if t.status == "ok"]
    noop_scores = [t.reward for t in noop if t.status == "ok"]

    if ref_scores and any(score < FULL_MARKS - EPSILON for score in ref_scores):
        worst = min(ref_scores)
        detail = next((t.detail for t in reference if t.detail), "")
        # the verifier's own words: without them the refusal says nothing of why
        failed = next(t for t in reference if t.status == "ok" and t.reward == worst)
        evidence = " ".join(p for p in (detail, verifier_evidence(failed)) if p)
        findings.append(
            Finding(
                rule_id="run.reference-failed",
                message=f"reference scored {worst:g} (want 1.0). {evidence}"[:2000],
            )
        )
    if noop_scores and any(score > EPSILON for score in noop_scores):
        findings.append(
            Finding(
                rule_id="run.noop-passed",
                message=f"untouched start state scored {max(noop_scores):g} (want 0.0)",
            )
        )
    for name, group in (("reference", reference), ("no-op", noop)):
        outcomes = {(t.status, t.reward) for t in group}
        if len(outcomes) > 1:
            shown = ", ".join(
                f"{t.label}={t.reward if t.status == 'ok' else t.status}" for t in group
            )
            findings.append(Finding(rule_id="run.flaky", message=f"{name} runs disagree: {shown}"))
    return findings


def not_run_counts(trials: list[TrialResult]) -> dict[str, int]:
    """The trials the backend could not run, by kind (`trial_kind`)."""
    counts: dict[str, int] = {}
    for trial in trials:
        if trial.status == NOT_RUN:
            kind = trial_kind(trial.label)
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def not_run_summary(trials: list[TrialResult]) -> str:
    """`probe 6, leak-scan 1`: the trials the backend could not run, by kind."""
    return ", ".join(f"{kind} {n}" for kind, n in not_run_counts(trials).items())
