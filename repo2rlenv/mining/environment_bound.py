"""PASS_TO_PASS tests bound to SWE-bench's environment, not to the run: settled by the oracle.

SWE-bench grades a run in a container with a network; ours has none. A PASS_TO_PASS
test that needs one fails there on every state of the repository: psf/requests-5414's
four `TestTimeout` tests connect to 10.255.255.1 and expect a timeout, and with no
network the connect fails at once (`Network is unreachable`), so the run's correct fix
was refused as `run.reference-failed`, 127 of 131.

The choice (docs/swe-runs.md): a PASS_TO_PASS name that fails in our container on the
reference AND on the untouched start is environment-bound. The oracle drops it from the
names that decide (the verifier still runs it and prints it), records the list in the
task's provenance (`swe.environment_bound_tests`) and in `tests/grading.json`, and
`validate` warns about it on every later run. Never a FAIL_TO_PASS name: if one of those
fails on the reference, nothing is settled and the refusal stands. Nor a test that
passes on the start and fails on the reference (that is the run breaking it), nor more
than a quarter of the PASS_TO_PASS names (then the environment, not a few tests, is
wrong, and a task that checks so little is not made).

"Fails" is what SWE-bench's grading counts as not passed: for a repository with its own
runner (Django, SymPy) a name the runner skips or never reports on both states is
settled too (django-16145's `test_honor_umask`, not reported in the container;
django-16315's four `bulk_create` tests, skipped), under the same limits.
"""

from __future__ import annotations

import json
from pathlib import Path

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.kinds.grading import FAILED_NAMES
from repo2rlenv.runtime import Runtime, TrialRequest
from repo2rlenv.validate.report import TaskReport
from schemas import BundleFile, TaskBundle

GRADING = "tests/grading.json"
MAX_SHARE = 0.25
"""The largest share of PASS_TO_PASS names that may be settled as environment-bound."""


def failed_names(log: str) -> list[str] | None:
    """The names the verifier printed as not passed (its `rlenv-failed-names:` line);
    None when the line is absent or cut (the output's tail is kept, not all of it)."""
    for line in reversed(log.splitlines()):
        if line.startswith(FAILED_NAMES):
            try:
                value = json.loads(line[len(FAILED_NAMES) :])
            except ValueError:
                return None
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
            return None
    return None


def deciding_names(settings: dict) -> tuple[list[str], list[str]] | None:
    """(the names that decide, the FAIL_TO_PASS ones among them) of a verifier's
    settings: the pytest verifier's `names`, or an own runner's row lists (Django's
    `runtests.py`, SymPy's `bin/test`); None for a verifier that decides by no names."""
    runner = settings.get("runner")
    if isinstance(runner, dict) and "fail_to_pass" in runner:
        fail_to_pass = [str(n) for n in runner.get("fail_to_pass") or []]
        return [*fail_to_pass, *(str(n) for n in runner.get("pass_to_pass") or [])], fail_to_pass
    if "names" in settings:
        names = [str(n) for n in settings.get("names") or []]
        return names, [str(n) for n in settings.get("fail_to_pass") or []]
    return None


def environment_bound(
    settings: dict, reference_failed: list[str], start_failed: list[str]
) -> list[str] | None:
    """The names to settle as environment-bound, or None when the rule above does not
    allow it."""
    names, fail_to_pass_names = deciding_names(settings) or ([], [])
    fail_to_pass = set(fail_to_pass_names)
    pass_to_pass = [n for n in names if n not in fail_to_pass]
    failing = set(reference_failed)
    if not failing or not fail_to_pass or failing & fail_to_pass:
        return None
    if not failing <= set(pass_to_pass) or not failing <= set(start_failed):
        return None
    if len(failing) > MAX_SHARE * len(pass_to_pass):
        return None
    return sorted(failing)


def settled_bundle(bundle: TaskBundle, bound: list[str]) -> TaskBundle:
    """The bundle whose verifier leaves `bound` out of the deciding names, with the list
    in its provenance."""
    files = []
    for item in bundle.files:
        if item.path == GRADING:
            settings = json.loads(item.content)
            settings["environment_bound"] = bound
            if "names" in settings:  # the pytest verifier's count; an own runner has none
                settings["expected"] = len(settings["names"]) - len(bound)
            text = json.dumps(settings, indent=2, sort_keys=True) + "\n"
            item = BundleFile(path=GRADING, content=text.encode(), executable=item.executable)
        files.append(item)
    settled = bundle.model_copy(deep=True, update={"files": files})
    block = settled.config.metadata.repo2rlenv
    if block is not None and block.swe is not None:
        block.swe.environment_bound_tests = bound
    return settled


def settle(
    bundle: TaskBundle, report: TaskReport, written: Path, runtime: Runtime
) -> TaskBundle | None:
    """The bundle with its environment-bound PASS_TO_PASS names settled, when the
    oracle's refusal is one (`run.reference-failed` with only such names failing); one
    extra trial, the untouched start, tells. None when there is nothing to settle."""
    grading = next((f for f in bundle.files if f.path == GRADING), None)
    if grading is None or "run.reference-failed" not in {f.rule_id for f in report.errors}:
        return None
    settings = json.loads(grading.content)
    if deciding_names(settings) is None or settings.get("environment_bound"):
        return None
    reference = next(
        (t for t in report.trials if t.label.startswith("reference") and t.status == "ok"), None
    )
    reference_failed = failed_names(reference.verifier_log_tail) if reference else None
    allowed = reference_failed and environment_bound(settings, reference_failed, reference_failed)
    if not allowed:
        return None  # a FAIL_TO_PASS name failed, or too many: the refusal stands
    tree = read_task_dir(written)
    start = runtime.run_trial(tree, runtime.prepare(tree), TrialRequest(label="noop"))
    start_failed = failed_names(start.verifier_log_tail) if start.status == "ok" else None
    bound = environment_bound(settings, reference_failed, start_failed or [])
    return settled_bundle(bundle, bound) if bound else None
