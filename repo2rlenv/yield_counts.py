"""A mining run's numbers, each level adding up to its total, and the summary lines that
say them: the same counts for every pipeline, printed by `repo2rlenv.ui.yield_table`,
written in the yield report's JSON and checked by tests that read either.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


def _reasons(counts: dict[str, int]) -> str:
    shown = ", ".join(
        f"{reason} {n}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return f" ({shown})" if shown else ""


class YieldCounts(BaseModel):
    """A run's numbers, at each level adding up, so a reader can check every one:

    - records_read = reports + records_skipped + records_with_candidates
      (+ records_without_outcome, which a correct pipeline keeps at 0);
    - candidates (a record gives one per kind that found something: often more than one)
      = emitted + unchanged + candidates_skipped;
    - emitted + unchanged = proven + unverified (proven: the oracle passed in a container).
    """

    model_config = ConfigDict(extra="forbid")

    records_read: int
    reports: int
    records_skipped: int
    records_skipped_by_reason: dict[str, int]
    records_with_candidates: int
    records_without_outcome: int
    candidates: int
    emitted: int
    unchanged: int
    candidates_skipped: int
    candidates_skipped_by_reason: dict[str, int]
    proven: int
    unverified: int
    """Emitted or unchanged tasks that no container proved (any status but `verified`)."""
    by_status: dict[str, int]

    def mismatches(self) -> list[str]:
        """Every level whose parts do not add up to its total; empty when all do."""
        wrong = []
        parts = self.reports + self.records_skipped + self.records_with_candidates
        if parts != self.records_read or self.records_without_outcome:
            wrong.append(f"records: {self.records_read} read != {parts} accounted for")
        if self.emitted + self.unchanged + self.candidates_skipped != self.candidates:
            wrong.append(f"candidates: {self.candidates} != emitted + unchanged + skipped")
        if self.proven + self.unverified != self.emitted + self.unchanged:
            wrong.append("tasks: proven + unverified != emitted + unchanged")
        return wrong

    def summary(self, pipeline: str) -> list[str]:
        """Where every record and every candidate went, as sums that add up at each level:
        records read = reports + skipped whole + records that gave candidates; candidates
        (a record gives one per kind that found something, so often several) = emitted +
        unchanged + skipped; tasks (emitted + unchanged) = proven in a container + unverified."""
        tasks = self.emitted + self.unchanged
        lines = [
            f"{pipeline}: {self.records_read} records read → {self.candidates} candidates → "
            f"{self.emitted} emitted, {self.unchanged} unchanged, "
            f"{self.candidates_skipped} skipped",
            f"  records: {self.records_read} read = {self.records_with_candidates} gave candidates"
            f" + {self.records_skipped} skipped whole{_reasons(self.records_skipped_by_reason)}"
            f" + {self.reports} run reports",
            f"  candidates: {self.candidates} (one per kind that found a task in a record; a record"
            f" can give several) = {self.emitted} emitted + {self.unchanged} unchanged"
            f" + {self.candidates_skipped} skipped{_reasons(self.candidates_skipped_by_reason)}",
            f"  tasks: {tasks} (emitted + unchanged) = {self.proven} proven in a container"
            f" + {self.unverified} emitted unverified",
        ]
        lines.extend(f"  counts do not add up: {wrong}" for wrong in self.mismatches())
        return lines
