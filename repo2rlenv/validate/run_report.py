"""The run's own verdict (`[metadata.repo2rlenv.swe.report]`) against the oracle's.

A task mined from a SWE-style run records what the evaluation report published beside
the run said (`mining.run_reports`). `validate` holds the task to it:

- a run its report calls unresolved never gives a proven task: `report.unresolved` is
  an error whatever the oracle says (`mine` gives no task for such a run; this keeps a
  task written another way, or edited, from being labelled verified);
- a run its report calls resolved whose reference the oracle refuses is a disagreement
  (`report.disagrees-with-oracle`, a warning beside the oracle's own error): either the
  task's environment differs from the benchmark's, or the report is wrong, and a person
  should look.
"""

from __future__ import annotations

from repo2rlenv.bundle import TaskTree
from repo2rlenv.validate.findings import Finding


def report_findings(tree: TaskTree, failed_rules: set[str], dynamic_ran: bool) -> list[Finding]:
    block = tree.config.metadata.repo2rlenv if tree.config else None
    verdict = block.swe.report if block and block.swe else None
    if verdict is None:
        return []
    if not verdict.resolved:
        return [
            Finding(
                rule_id="report.unresolved",
                message=f"the run's own report ({verdict.file}) says it did not resolve its "
                "instance: the task cannot be proven",
                path="task.toml",
            )
        ]
    if dynamic_ran and "run.reference-failed" in failed_rules:
        return [
            Finding(
                rule_id="report.disagrees-with-oracle",
                severity="warning",
                message=f"the run's own report ({verdict.file}) says resolved; the oracle "
                "refused the reference",
                path="task.toml",
            )
        ]
    return []
