"""Runs of SWE-style instances: one task per instance, and the runs' own verdicts.

Several runs of one instance give one task (the smallest passing reference); a run's
report published beside it is its own verdict, recorded in the task when it says
resolved, a skip when it says unresolved, and a notice when it and the oracle disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from repo2rlenv.emit import Draft, Event, Notice, Skip
from repo2rlenv.kinds.instance_repair import is_instance_task
from repo2rlenv.mining.novelty import Novelty
from repo2rlenv.mining.run_reports import RunReports


def instance_of(draft: Draft) -> str | None:
    """The instance an instance-backed draft belongs to; None for every other draft."""
    block = draft.bundle.config.metadata.repo2rlenv
    instance = block.source.instance_id if block and block.source else None
    return instance if instance and is_instance_task(draft.bundle) else None


class InstanceRuns:
    """What the miner learns about instance runs while it reads records: the reports
    among the records, each instance task's reference size, and the runs whose
    reference the oracle refused."""

    def __init__(self) -> None:
        self.reports = RunReports()
        """Verdicts of the evaluation reports found among the records."""
        self.reference_size: dict[str, tuple[int, int]] = {}
        """Instance task id -> (changed lines, bytes) of the run's submission."""
        self.refused_by_oracle: dict[str, tuple[str, str]] = {}
        """Record id -> (instance id, reason) of instance tasks the oracle refused: a
        report that calls the run resolved disagrees with it."""

    def one_per_instance(
        self, instance: str, drafts: list[Draft], novelty: Novelty
    ) -> Iterator[Event]:
        """Several runs of one instance give one task: from a complete run before a
        damaged one (`Draft.damaged`), then the smallest reference (fewest changed
        lines of the submission, then fewest bytes), then input order. With the oracle
        on, every draft here already passed it, so it is the smallest *passing*
        reference; with `--no-validate` it is the smallest unproven one."""
        ranked = sorted(
            enumerate(drafts),
            key=lambda pair: (
                pair[1].damaged,
                *self.reference_size.get(pair[1].bundle.task_id, (0, 0)),
                pair[0],
            ),
        )
        chosen: Draft | None = None
        for _, draft in ranked:
            if chosen is None:
                event = novelty.check(draft)
                if isinstance(event, Draft):
                    chosen = draft
                yield event
                continue
            yield Skip(
                draft.record_id,
                "novel.duplicate-instance",
                f"{instance} gave its task from {chosen.record_id}, whose reference is no larger",
                kind=draft.kind,
                source_format=draft.source_format,
            )

    def with_report(self, draft: Draft, instance: str) -> tuple[Draft | None, list[Event]]:
        """The run's own verdict, from the report published beside it: recorded in the
        task's provenance when it says resolved; when it says unresolved the run gives
        no task (`report.unresolved`), and a reference the oracle proved is reported as
        a disagreement (`report.disagrees-with-oracle`)."""
        record = draft.record_id
        found = self.reports.lookup(record, instance)
        block = draft.bundle.config.metadata.repo2rlenv
        fmt = draft.source_format
        if found.conflicting:
            note = Notice(
                record,
                "report.conflicting",
                f"equally close reports disagree on {instance}: {', '.join(found.conflicting)}",
            )
            return draft, [note]
        report = found.report
        if report is None or block is None:
            return draft, []
        if report.resolved:
            bundle = draft.bundle.model_copy(deep=True)
            swe = bundle.config.metadata.repo2rlenv.swe
            if swe is not None:
                swe.report = report
            return replace(draft, bundle=bundle), []
        proven = block.evaluation.status == "verified"
        events: list[Event] = [
            Skip(
                record,
                "report.unresolved",
                f"{report.file} says the run did not resolve {instance}"
                + ("; the oracle proved its reference" if proven else ""),
                kind=draft.kind,
                source_format=fmt,
            )
        ]
        if proven:
            events.append(
                Notice(
                    record,
                    "report.disagrees-with-oracle",
                    f"{report.file}: unresolved; the oracle proved the reference",
                )
            )
        return None, events

    def held_events(self, held: dict[str, list[Draft]], novelty: Novelty) -> Iterator[Event]:
        """The instance drafts held back until every record (and report) was read: each
        judged by its report, then one kept per instance."""
        for instance, drafts in held.items():
            kept: list[Draft] = []
            for draft in drafts:
                judged, said = self.with_report(draft, instance)
                yield from said
                if judged is not None:
                    kept.append(judged)
            if kept:
                yield from self.one_per_instance(instance, kept, novelty)
        yield from self.oracle_disagreements()

    def oracle_disagreements(self) -> Iterator[Notice]:
        """Runs whose report says resolved but whose reference the oracle refused."""
        for record, (instance, reason) in sorted(self.refused_by_oracle.items()):
            report = self.reports.lookup(record, instance).report
            if report is not None and report.resolved:
                yield Notice(
                    record,
                    "report.disagrees-with-oracle",
                    f"{report.file}: resolved; the oracle refused the reference ({reason})",
                )
