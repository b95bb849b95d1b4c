"""Dynamic checks: the reference must score 1.0, the untouched start state 0.0, and both
must say the same on every rerun. Each trial runs in fresh containers."""

from __future__ import annotations

from collections.abc import Callable

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import Runtime, TrialRequest, TrialResult
from repo2rlenv.runtime.images import ImageBuildError
from repo2rlenv.validate.evidence import verifier_evidence
from repo2rlenv.validate.findings import Finding
from repo2rlenv.validate.image_leaks import LABEL as LEAK_LABEL
from repo2rlenv.validate.image_leaks import image_leak_request, leaks, scan_finished
from repo2rlenv.validate.probes import PROBES, probe_requests

FULL_MARKS = 1.0
EPSILON = 1e-9


def plan(reruns: int) -> list[TrialRequest]:
    requests = [TrialRequest(label="reference", apply_solution=True), TrialRequest(label="noop")]
    for index in range(1, reruns + 1):
        requests.append(TrialRequest(label=f"reference-rerun-{index}", apply_solution=True))
        requests.append(TrialRequest(label=f"noop-rerun-{index}"))
    return requests


def run_dynamic(
    tree: TaskTree,
    runtime: Runtime,
    reruns: int,
    probes: bool = True,
    on_trial: Callable[[TrialResult], None] | None = None,
) -> tuple[list[Finding], list[TrialResult]]:
    try:
        image = runtime.prepare(tree)
    except ImageBuildError as exc:
        return [
            Finding(
                rule_id="run.build-failed", message=str(exc)[:2000], path="environment/Dockerfile"
            )
        ], []
    trials: list[TrialResult] = []
    leak_check = image_leak_request(tree)
    requests = plan(reruns) + (probe_requests(tree) if probes else [])
    for request in requests + ([leak_check] if leak_check else []):
        result = runtime.run_trial(tree, image, request)
        trials.append(result)
        if on_trial is not None:
            on_trial(result)
    return judge(trials), trials


def judge(trials: list[TrialResult]) -> list[Finding]:
    """Findings from a set of trial results: pure, so it is tested without Docker."""
    findings: list[Finding] = []
    seen_status: set[str] = set()
    for trial in trials:
        if trial.label == LEAK_LABEL:
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
            continue
        if trial.label in PROBES:
            if trial.status == "ok" and (trial.reward or 0.0) > EPSILON:
                findings.append(
                    Finding(
                        rule_id=trial.label,
                        message=(
                            f"{PROBES[trial.label].description} scored {trial.reward:g}: "
                            "the verifier can be fooled"
                        ),
                    )
                )
            continue
        if trial.status != "ok" and trial.status not in seen_status:
            seen_status.add(trial.status)
            findings.append(
                Finding(
                    rule_id=f"run.{trial.status}", message=f"{trial.label}: {trial.detail}"[:2000]
                )
            )
    reference = [t for t in trials if t.label.startswith("reference")]
    noop = [t for t in trials if t.label.startswith("noop")]
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
