"""Rule ids: every problem `validate` reports names one, so reports can be counted,
filtered and acted on by machines as well as read by people."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning"]

RULES: dict[str, str] = {
    # The task cannot be read or run at all: its label becomes `blocked`.
    "task.config-missing": "task.toml is missing",
    "task.config-invalid-toml": "task.toml is not valid TOML",
    "task.config-schema": "task.toml does not match Harbor's task schema",
    "task.file-missing": "a required file is missing",
    "task.not-executable": "a script Harbor runs lacks its executable bit",
    "bundle.symlink": "the task folder contains a symlink",
    "bundle.symlink-escape": "a symlink points outside the task folder",
    "bundle.special-file": "the task folder contains a device, fifo or socket",
    "bundle.hash-mismatch": "the recorded content hash does not match the files",
    # The task runs but says or leaks the wrong things.
    "instruction.empty": "instruction.md is empty",
    "instruction.names-hidden-path": "the instruction names a verifier or solution path",
    "instruction.contains-solution": "the instruction contains the reference solution's code",
    "secrets.detected": "a file contains what looks like a credential",
    "secrets.public-checkout": "a start-state file that is exactly a blob of the anchored "
    "public commit holds what looks like a credential (published there already)",
    "leak.copies-hidden-files": "the Dockerfile copies tests or the solution into the image",
    "leak.hidden-file-in-environment": "a test or solution file is also in the agent's image",
    "leak.hidden-test-in-image": "a hidden test file is in the built image (checked inside "
    "the container)",
    "leak.scan-incomplete": "the in-container scan for hidden tests did not finish, so the "
    "image was not checked",
    "verifier.network-download": "test.sh installs or downloads at verify time",
    "env.local-only-base": "the Dockerfile starts FROM an image only this machine has (a "
    "warning: it runs here, but published it builds nowhere else until "
    "`repo2rlenv.publish.portable` rewrites it)",
    "swe.environment-bound-tests": "PASS_TO_PASS names that failed in the network-less "
    "container on the reference and the start alike do not decide (a warning; the list is "
    "in the task's provenance)",
    # Semantic rules (semantic_rules.py): well-formed, but not a real task.
    "semantic.compaction-summary": "the instruction is a harness's compaction summary",
    "semantic.instruction-huge": "the instruction is too long to be a request",
    "semantic.host-path": "a home folder path of the author's machine is in the task",
    "semantic.windows-file-name": "a file name holds a drive letter or backslash",
    "semantic.workspace-file-is-error": "a workspace file holds only error output",
    "semantic.qa-answer-from-error": "the expected qa answer is a token of error text",
    "semantic.reference-unverified": "the reference changes nothing the verifier looks at",
    "semantic.constant-answer": "a qa answer a guess made without the data passes (all "
    "values equal, 0, empty, or a count the instruction states)",
    # The run's own evaluation report against the oracle (run_report.py).
    "report.unresolved": "the run's own report says it did not resolve its instance",
    "report.disagrees-with-oracle": "the run's own report says resolved; the oracle refused "
    "the reference",
    # Dynamic checks in a real container.
    "run.build-failed": "the environment image does not build",
    "run.reference-failed": "the reference solution does not score 1.0",
    "run.noop-passed": "the untouched start state scores above 0.0",
    "run.flaky": "repeated runs of the same trial disagree",
    "run.reward-missing": "the verifier wrote no reward file",
    "run.reward-invalid": "the reward is not a number in [0, 1]",
    "run.verifier-timeout": "test.sh ran past the verifier timeout",
    "run.solution-timeout": "solve.sh ran past the agent timeout",
    "run.error": "trials the backend could not run (engine or provider, after retries): "
    "infrastructure, so the task is not verified and the verdict is not cached",
    # Forgery probes (see probes.py): the verifier gave reward to a forged pass.
    "probe.conftest-pass-all": "a conftest.py hook marking every test passed earned reward",
    "probe.sitecustomize-exit": "a sitecustomize.py exiting 0 at start earned reward",
    "probe.fake-pytest": "a fake pytest earlier on PATH / sys.path earned reward",
    "probe.plugin-entry-point": "a pytest plugin declared by package metadata in the "
    "workspace (sparing the canary) earned reward",
    "probe.reward-file": "a reward file written before the verifier earned reward",
    "probe.tests-overwritten": "tests overwritten with `assert True` earned reward",
    "probe.import-forgery": "project code forging pytest's reports on import earned reward",
    "probe.js-fake-runner": "a fake vitest/jest writing a passing report earned reward",
    "probe.js-skip-all-config": "a vitest/jest config running no test earned reward",
    "probe.js-only-skip": "JS tests turned into .skip / a planted .only earned reward",
    "probe.native-fake-toolchain": "a fake go/cargo on PATH printing passes earned reward",
    "probe.native-skipped-tests": "skipped Go/Rust tests / a test under their names earned reward",
}

BLOCKING_RULES = frozenset(
    {
        "task.config-missing",
        "task.config-invalid-toml",
        "task.config-schema",
        "task.file-missing",
        "bundle.symlink-escape",
        "bundle.special-file",
        "run.build-failed",
    }
)
"""Rules after which the task cannot be checked further; its label becomes `blocked`."""


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule_id: str
    severity: Severity = "error"
    message: str
    path: str | None = None

    def model_post_init(self, _context: object) -> None:
        if self.rule_id not in RULES:
            raise ValueError(f"unknown rule id {self.rule_id!r}")
