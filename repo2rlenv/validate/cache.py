"""Validation results by content: a rerun of `validate` only re-checks what changed.

The key covers the task's content hash, the environment's identity (which includes
the local base image id), the tool version and the options that change the verdict.
Only complete dynamic verdicts are stored: a report with a trial the backend could not
run (an infrastructure error, an aborted run, an environment that did not start) is no
verdict, so the next run tries it again. A report whose later trials were skipped after
a refusal is complete: the refusal is the verdict.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

from repo2rlenv.validate.report import INFRA_RULES, INFRA_STATUSES, TaskReport


class ResultCache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root) / "validate"

    @staticmethod
    def key(content_hash: str, environment_key: str, tool_version: str, checks: str) -> str:
        """`checks` names what was run (reruns, probes): a different plan is a new verdict."""
        payload = json.dumps([content_hash, environment_key, tool_version, checks])
        return hashlib.sha256(payload.encode()).hexdigest()

    def get(self, key: str) -> TaskReport | None:
        path = self.root / f"{key}.json"
        try:
            return TaskReport.model_validate_json(path.read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, report: TaskReport) -> None:
        """Store `report` as the verdict, unless anything in it is the infrastructure's."""
        if any(t.status in INFRA_STATUSES for t in report.trials) or any(
            f.rule_id in INFRA_RULES for f in report.findings
        ):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        staging = self.root / f".{key}.{uuid.uuid4().hex}.tmp"
        staging.write_text(report.model_dump_json())
        os.replace(staging, self.root / f"{key}.json")
