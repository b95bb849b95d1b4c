"""The reproduction check: the sliced reference, run in the task's own container on the
task's data, must reproduce the notebook's saved answer as the grader judges it.

One reference trial through the project's runtime (the same code `validate` uses):
write the bundle to a scratch folder, build (or reuse: images are cached by content,
so tasks from one notebook share one) and run `solve.sh` then `test.sh`. Reward 1.0
means reproduced; anything else is a reasoned skip.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from docker.errors import DockerException

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.runtime import Runtime, TrialRequest, TrialResult
from repo2rlenv.runtime.images import ImageBuildError
from schemas import CheckOutcome, TaskBundle
from smoldataenvs.computed import COMPUTE, Computed, read_computed
from smoldataenvs.task import REPRODUCE_CHECK, module_text

DETAIL_CHARS = 300


@dataclass(frozen=True)
class Reproduction:
    ok: bool
    reason: str
    detail: str
    reward: float | None = None
    wall_s: float = 0.0

    def outcome(self) -> CheckOutcome:
        return CheckOutcome(
            rule_id=REPRODUCE_CHECK,
            status="passed" if self.ok else "failed",
            detail=self.detail[:DETAIL_CHARS],
            rewards=[] if self.reward is None else [self.reward],
        )


def skipped_outcome() -> CheckOutcome:
    return CheckOutcome(
        rule_id=REPRODUCE_CHECK,
        status="skipped",
        detail="--no-validate: the saved answer was not recomputed in a container",
    )


def _grader_verdict(log: str) -> str:
    """The grader prints one JSON verdict; show what it expected and what it got."""
    for line in reversed(log.splitlines()):
        if line.startswith("{"):
            try:
                verdict = json.loads(line)
            except json.JSONDecodeError:
                continue
            got = str(verdict.get("got", "")).strip().replace("\n", " | ")
            want = str(verdict.get("expected", "")).strip().replace("\n", " | ")
            return f"expected {want[:120]!r}, reproduced {got[:120]!r}"
    return log.strip()[-DETAIL_CHARS:]


def judge(result: TrialResult) -> Reproduction:
    """What a reference trial says about reproduction: pure, so tested without Docker."""
    if result.status == "ok" and result.reward is not None and result.reward >= 1.0 - 1e-9:
        # No run time in the detail: it lands in task.toml, and a rerun must give the
        # same bytes (`wall_s` stays on the object for progress output only).
        return Reproduction(True, "", "reference reward 1.0", 1.0, result.wall_s)
    if result.status == "build-failed":
        return Reproduction(False, "reproduce.build-failed", result.detail[-DETAIL_CHARS:])
    if result.status == "solution-timeout":
        return Reproduction(False, "reproduce.timeout", result.detail)
    if result.status != "ok":
        return Reproduction(
            False, "reproduce.error", f"{result.status}: {result.detail}"[:DETAIL_CHARS]
        )
    if result.solution_exit_code not in (0, None):
        return Reproduction(False, "reproduce.failed", result.detail[-DETAIL_CHARS:], result.reward)
    return Reproduction(
        False, "reproduce.mismatch", _grader_verdict(result.verifier_log_tail), result.reward
    )


class Reproducer:
    def __init__(self, runtime: Runtime, scratch: Path | None = None) -> None:
        self.runtime = runtime
        self.scratch = scratch

    def check(self) -> None:
        self.runtime.check()

    def run(self, bundle: TaskBundle) -> Reproduction:
        result = self._trial(bundle, TrialRequest(label="reference", apply_solution=True))
        return result if isinstance(result, Reproduction) else judge(result)

    def compute(
        self,
        bundle: TaskBundle,
        widened: str | None = None,
        table: str | None = None,
        kind: str = "plot",
    ) -> Computed:
        """The answer the bundle's reference gives in its container (a plot's aggregate,
        a cut frame's row count: no saved output holds it), read by `compute_live`,
        planted beside solve.py; with `widened` (the aggregate one row past its cut),
        whether the cut splits a tie; with `table` (a heat map's table), that table
        whole instead. `kind`: `plot` or `count` (`computed.read_computed`)."""
        plant = {f"/{f.path}": f.content for f in bundle.files if f.path.startswith("solution/")}
        plant["/solution/compute.py"] = module_text("compute_live").encode()
        if widened is not None:
            plant["/solution/widened.py"] = widened.encode()
        if table is not None:
            plant["/solution/table.py"] = table.encode()
        request = TrialRequest(label="compute", plant_files=plant, agent_commands=[COMPUTE])
        result = self._trial(bundle, request)
        if isinstance(result, Reproduction):
            return Computed(None, result.reason, result.detail)
        return read_computed(result.agent_output, widened is not None, kind)

    def _trial(self, bundle: TaskBundle, request: TrialRequest) -> TrialResult | Reproduction:
        """One trial of the bundle in its own image, or why none ran."""
        with tempfile.TemporaryDirectory(prefix="smoldata-repro-", dir=self.scratch) as folder:
            outcome = write_bundle(bundle, Path(folder))
            tree = read_task_dir(outcome.path)
            try:
                image = self.runtime.prepare(tree)
            except ImageBuildError as exc:
                return Reproduction(False, "reproduce.build-failed", str(exc)[-DETAIL_CHARS:])
            except (DockerException, OSError) as exc:
                return Reproduction(False, "reproduce.error", f"{type(exc).__name__}: {exc}"[:300])
            return self.runtime.run_trial(tree, image, request)
