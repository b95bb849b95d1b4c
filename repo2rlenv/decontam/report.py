"""Checking tasks against the loaded tables: the per-task block for the provenance
(`[metadata.repo2rlenv.decontamination]`), the refusal with `--drop-contaminated`, and
the run's counts for the summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from repo2rlenv.decontam.facts import TaskFacts, of_bundle
from repo2rlenv.decontam.index import TableIndex, build_index
from repo2rlenv.decontam.matching import commit_date, match
from repo2rlenv.decontam.tables import Benchmarks, load_benchmarks
from repo2rlenv.emit import Draft, Event, Pipeline, Skip
from schemas.provenance import DecontaminationResult


@dataclass
class DecontamCounts:
    checked_against: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    tasks: int = 0
    contaminated: int = 0
    dropped: int = 0
    by_rule: Counter[str] = field(default_factory=Counter)
    by_table: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        return {
            "checked_against": list(self.checked_against),
            "unavailable": dict(sorted(self.unavailable.items())),
            "tasks": self.tasks,
            "contaminated": self.contaminated,
            "dropped": self.dropped,
            "by_rule": dict(sorted(self.by_rule.items())),
            "by_table": dict(sorted(self.by_table.items())),
        }

    def lines(self) -> list[str]:
        """The summary's words: what was checked, what could not be, what matched."""
        out = [
            f"decontamination: {self.tasks} tasks checked against "
            f"{', '.join(self.checked_against) or 'nothing'}: {self.contaminated} contaminated"
            + (f", {self.dropped} dropped" if self.dropped else "")
        ]
        out += [f"  {rule}: {n}" for rule, n in sorted(self.by_rule.items())]
        out += [f"  not checked: {name} ({why})" for name, why in sorted(self.unavailable.items())]
        return out


class Decontaminator:
    """The tables' indexes, built once; `check` for a task's facts, `apply` for a draft."""

    def __init__(self, benchmarks: Benchmarks, *, drop: bool = False) -> None:
        self.indexes: list[TableIndex] = [build_index(t) for t in benchmarks.tables]
        self.drop = drop
        self.counts = DecontamCounts(
            checked_against=[t.name for t in benchmarks.tables],
            unavailable=dict(benchmarks.unavailable),
        )

    @classmethod
    def load(cls, names: list[str], *, drop: bool = False) -> Decontaminator:
        """Raises tables.TableError (one line) for a table asked for that cannot be read."""
        return cls(load_benchmarks(names), drop=drop)

    def check(self, facts: TaskFacts) -> DecontaminationResult:
        if facts.commit_date is None:
            facts = replace(facts, commit_date=commit_date(facts, self.indexes))
        matches = [m for index in self.indexes for m in match(facts, index)]
        result = DecontaminationResult(
            checked_against=list(self.counts.checked_against),
            contaminated=bool(matches),
            matches=matches,
        )
        self.counts.tasks += 1
        if matches:
            self.counts.contaminated += 1
            self.counts.by_rule.update({m.rule for m in matches})
            self.counts.by_table.update({m.benchmark for m in matches})
        return result

    def apply(self, draft: Draft) -> Event:
        """The draft with its result in the provenance; with `drop`, a contaminated draft
        is a Skip whose reason is its first rule (`decontam.*`)."""
        if not self.indexes:  # `default` with no table readable: no implied "clean"
            return draft
        result = self.check(of_bundle(draft.bundle))
        block = draft.bundle.config.metadata.repo2rlenv
        if result.contaminated and self.drop:
            self.counts.dropped += 1
            first = result.matches[0]
            record = block.source.record_id if block and block.source else draft.bundle.task_id
            return Skip(
                record,
                first.rule,
                f"{draft.bundle.task_id}: {first.benchmark} {first.instance_id} ({first.detail})",
                kind=draft.kind,
                source_format=draft.source_format,
            )
        if block is not None:
            block.decontamination = result
        return draft


class Decontaminated:
    """A mining pipeline whose drafts pass through the checker before they are written:
    one wrapper in `mine`, so sessions and notebooks (another package's pipeline) are
    checked alike, and a dropped draft is counted as a skip like any other."""

    def __init__(self, pipeline: Pipeline, checker: Decontaminator) -> None:
        self.pipeline = pipeline
        self.name = pipeline.name
        self.checker = checker

    def events(self) -> Iterator[Event]:
        for event in self.pipeline.events():
            yield self.checker.apply(event) if isinstance(event, Draft) else event
