"""Evaluation reports published beside SWE-style runs: the run's own verdict.

A harness that evaluated its runs leaves, next to them, whether each one resolved its
instance. Two shapes are published (seen in SWE-agent/mini-swe-agent's history, commit
3c7d1d7f / ec0e8e84; tests/data/swe/SOURCES.md):

- the SWE-bench harness's per-instance `report.json`
  (`logs/run_evaluation/<run>/<model>/<instance>/report.json`):
  `{instance_id: {"patch_is_None", "patch_exists", "patch_successfully_applied",
  "resolved": bool, "tests_status": {"FAIL_TO_PASS": {"success", "failure"}, ...}}}`;
  Some publishers write the inner object alone, the instance named only by its folder
  (`logs/<instance>/report.json`, gruckion/mini-swe-agent commit d12a71af): read when
  the file sits in a folder named like an instance id;
- the harness's run summary (`<model>.<run_id>.json`, what mini-swe-agent publishes
  per run): `{"total_instances", ..., "resolved_ids", "unresolved_ids", "error_ids",
  "empty_patch_ids", ..., "schema_version": 2}`.

Both are recognised by content, never by file name, like the session readers. They are
not sessions: the miner consumes them as reports (`mining.run_reports`), so they are no
longer refused as `format.unknown`.
"""

from __future__ import annotations

import posixpath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from repo2rlenv.formats.swe_common import INSTANCE_ID

REPORT_FORMAT = "swe-report"
"""The format the yield table gives a file consumed as an evaluation report."""

Shape = Literal["swebench-instance-report", "swebench-run-summary"]

_REPORT_KEYS = frozenset(
    {"patch_is_None", "patch_exists", "patch_successfully_applied", "tests_status"}
)
_UNRESOLVED_LISTS = ("unresolved_ids", "error_ids", "empty_patch_ids")
"""What the summary lists as submitted but not resolved: the harness's verdict is no."""


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_id: str
    resolved: bool
    shape: Shape


def read_report(record: Any, record_id: str = "") -> list[Verdict] | None:
    """The verdicts a report holds, or None when the record is no report. `record_id`
    (the file's path in the dataset) names the instance of an unkeyed report."""
    if not isinstance(record, dict) or not record:
        return None
    folder = posixpath.basename(posixpath.dirname(record_id))
    if _instance_entry(folder, record) and posixpath.basename(record_id) == "report.json":
        resolved = record["resolved"]
        return [Verdict(instance_id=folder, resolved=resolved, shape="swebench-instance-report")]
    if isinstance(record.get("resolved_ids"), list) and any(
        isinstance(record.get(key), list) for key in ("unresolved_ids", "completed_ids")
    ):
        return _summary(record)
    if all(_instance_entry(key, value) for key, value in record.items()):
        return [
            Verdict(instance_id=key, resolved=value["resolved"], shape="swebench-instance-report")
            for key, value in record.items()
        ]
    return None


def _instance_entry(key: Any, value: Any) -> bool:
    return (
        isinstance(key, str)
        and INSTANCE_ID.fullmatch(key) is not None
        and isinstance(value, dict)
        and isinstance(value.get("resolved"), bool)
        and bool(_REPORT_KEYS & value.keys())
    )


def _summary(record: dict[str, Any]) -> list[Verdict]:
    """Resolved ids first, the unresolved ones after; an id in both lists (never seen) is
    taken as unresolved: an unresolved run must never give a proven task."""
    verdicts: dict[str, bool] = {}
    for key in ("resolved_ids", *_UNRESOLVED_LISTS):
        for value in record.get(key) or []:
            if isinstance(value, str) and INSTANCE_ID.fullmatch(value):
                verdicts[value] = key == "resolved_ids"
    return [
        Verdict(instance_id=name, resolved=resolved, shape="swebench-run-summary")
        for name, resolved in verdicts.items()
    ]
