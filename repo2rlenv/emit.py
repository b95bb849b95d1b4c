"""`emit`: the contract every mining pipeline implements, and the one place tasks are emitted.

A pipeline (agent sessions, notebooks, ...) turns its input into a stream of events:
`RecordRead` when it opens a record, then for each candidate a `Draft` (a task bundle)
or a `Skip` with a stable reason code, and a `Notice` for a warning that stops nothing
(a run's own report disagreeing with the oracle). `emit_all` writes drafts through the bundle
writer into `<out>/<kind>/<task-id>/`, keeps `manifest.jsonl` in step, and counts the
same yield table for every pipeline, so they all report their yield the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel

from repo2rlenv.bundle import write_bundle
from repo2rlenv.manifest import write_manifest
from repo2rlenv.yield_counts import YieldCounts
from schemas import TaskBundle

if TYPE_CHECKING:
    from repo2rlenv.runtime import Runtime
    from repo2rlenv.source import Source


@dataclass(frozen=True)
class RecordRead:
    record_id: str
    source_format: str | None = None
    report: bool = False
    """The record is an evaluation report published beside runs (their own verdicts),
    consumed as such: no session, no candidate, no skip."""


@dataclass(frozen=True)
class Draft:
    bundle: TaskBundle
    damaged: bool = False
    """The session it came from has a hole (a line that does not parse, kept as a
    marker: `ParsedSession.truncated`); its history may miss a step, so among
    duplicates it never wins over a complete copy (`mining.novelty`). Not written to
    the task: the same task from a complete copy must have the same bytes."""

    @property
    def record_id(self) -> str:
        """The record it came from (its own task id when no provenance says)."""
        block = self.bundle.config.metadata.repo2rlenv
        return block.source.record_id if block and block.source else self.bundle.task_id

    @property
    def kind(self) -> str:
        block = self.bundle.config.metadata.repo2rlenv
        return (block.kind if block else None) or "unknown"

    @property
    def source_format(self) -> str:
        block = self.bundle.config.metadata.repo2rlenv
        return block.source.format if block and block.source else "unknown"


@dataclass(frozen=True)
class Skip:
    record_id: str
    reason: str
    detail: str = ""
    stage: Literal["record", "candidate"] = "candidate"
    kind: str | None = None
    source_format: str | None = None


@dataclass(frozen=True)
class Notice:
    """A finding that stops nothing by itself but must be seen, with a stable code (a
    run's own report disagreeing with the oracle: `report.disagrees-with-oracle`)."""

    record_id: str
    code: str
    detail: str = ""


Event = RecordRead | Draft | Skip | Notice


class Pipeline(Protocol):
    name: str

    def events(self) -> Iterator[Event]: ...


SOURCES_GROUP = "rlenv_harvest.sources"
"""Entry-point group of the input families `repo2rlenv mine` hands on besides sessions."""


class MineSource(Protocol):
    """An input family another package mines (notebooks: `smoldataenvs`). `mine` finds
    it through SOURCES_GROUP, so the session miner never imports its peers. The source
    declares its own options as a pydantic model (`options`, fields made with
    `repo2rlenv.cli_args.option`); `mine` mixes it into its own options model, generates
    the flags from it, and hands the source the parsed model."""

    name: str
    options: type[BaseModel]

    def pipeline(
        self,
        options: Any,
        *,
        source: Source,
        base_image: str,
        runtime: Runtime | None,
    ) -> Pipeline | None:
        """A pipeline over `source` (`--dataset`, resolved once by `mine`) when it holds
        this source's input, else None. `options`: `repo2rlenv.commands.mine.Options`
        with this source's fields mixed in. `runtime` is the checked runtime `mine`
        resolved (`--runtime`); None: no trials (`--no-validate`)."""
        ...


def installed_sources() -> list[MineSource]:
    """Every installed source, in name order (the order their tables print)."""
    found = sorted(entry_points(group=SOURCES_GROUP), key=lambda ep: ep.name)
    return [ep.load() for ep in found]


SKIP_DETAIL_CHARS = 2000
"""A skip's detail as the yield report keeps it per record (an oracle refusal's evidence:
failing tests and the verifier's last lines, `validate.dynamic`)."""
NEWEST_TAKEN = "deps.newest-taken"
"""Warning code prefix for an instance task whose dependency wheels are the newest, not
its date's (`.no-upload-times`, `.no-dated-resolution`: `dependency_date_unmet`)."""


@dataclass
class YieldReport:
    pipeline: str
    records_read: int = 0
    reports_read: int = 0
    """Records consumed as evaluation reports (among `records_read`)."""
    candidates: int = 0
    """Candidate tasks: every Draft, and every Skip of one (`stage="candidate"`). A record
    gives one per kind that found something in it, so there can be more than records."""
    emitted: int = 0
    """Drafts written this run (new, or replaced with `--force`); not `unchanged` ones."""
    unchanged: int = 0
    """Drafts already in the output with the same bytes (a rerun), left as they were."""
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_records: Counter[str] = field(default_factory=Counter)
    """Records skipped whole (`stage="record"`: no candidate made), per reason."""
    skipped_candidates: Counter[str] = field(default_factory=Counter)
    """Candidates skipped, per reason; with `skipped_records` they make `skipped`."""
    by_status: Counter[str] = field(default_factory=Counter)
    """Drafts (emitted or unchanged) per evaluation status: `verified` is proven, its
    reference passing and its start state failing in a container; `unverified` is not."""
    by_kind: Counter[str] = field(default_factory=Counter)
    by_format: Counter[str] = field(default_factory=Counter)
    skipped_by_format: Counter[str] = field(default_factory=Counter)
    skip_examples: dict[str, str] = field(default_factory=dict)
    anchored_by_source: Counter[str] = field(default_factory=Counter)
    anchored_by_kind: Counter[str] = field(default_factory=Counter)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per record, in input order: its format, the task ids it gave, its skip reasons
    (`reasons`) and each skip's detail (`skips`: reason and detail, the evidence of an
    oracle refusal among them), and warnings that did not stop a task
    (`secrets.public-checkout`, `deps.newest-taken.*`)."""
    warnings: Counter[str] = field(default_factory=Counter)
    """Non-blocking warnings per code: tasks emitted with one, and `Notice`s."""
    _read: set[str] = field(default_factory=set, repr=False)
    _last_read: str = field(default="", repr=False)

    def _record(self, record_id: str) -> dict[str, Any]:
        return self.records.setdefault(
            record_id,
            {"record_id": record_id, "format": None, "candidates": 0, "tasks": [], "reasons": []},
        )

    def _owner(self, record_id: str) -> dict[str, Any]:
        """The record read that a candidate comes from: its own id when a `RecordRead`
        named it; else the read record it is part of (a notebook's cell,
        `nb.ipynb#cell-5`); else the last record read; with none read (events counted
        one by one, outside a pipeline) its own id, not a record with an empty id."""
        candidate = record_id
        while candidate not in self._read and "#" in candidate:
            candidate = candidate.rsplit("#", 1)[0]
        if candidate in self._read or not self._last_read:
            return self._record(candidate if candidate in self._read else record_id)
        return self._record(self._last_read)

    def _warn(self, draft: Draft, code: str, **facts: object) -> None:
        """Count a task emitted with a non-blocking warning, and list it on its record."""
        self.warnings[code] += 1
        block = draft.bundle.config.metadata.repo2rlenv
        if block is not None and block.source is not None:
            self._record(block.source.record_id).setdefault("warnings", []).append(
                {"task_id": draft.bundle.task_id, "code": code, **facts}
            )

    def count(self, event: Event) -> None:
        if isinstance(event, RecordRead):
            self.records_read += 1
            self.reports_read += int(event.report)
            self._read.add(event.record_id)
            self._last_read = event.record_id
            record = self._record(event.record_id)
            record["format"] = event.source_format
            if event.report:
                record["report"] = True
        elif isinstance(event, Notice):
            self.warnings[event.code] += 1
            self._record(event.record_id).setdefault("warnings", []).append(
                {"code": event.code, "detail": event.detail}
            )
        elif isinstance(event, Draft):
            block = event.bundle.config.metadata.repo2rlenv
            source = block.source if block else None
            if source is not None:
                self._record(source.record_id)["tasks"].append(event.bundle.task_id)
            public = block.public_checkout_secrets if block else []
            if block and block.swe:  # hidden test files the benchmark publishes
                public = [*public, *block.swe.published_test_secrets]
            if public:
                self._warn(
                    event,
                    "secrets.public-checkout",
                    files=len(public),
                    rules=sorted({r for entry in public for r in entry.rules}),
                )
            unmet = block.dependency_date_unmet if block else None
            if unmet:
                self._warn(event, f"{NEWEST_TAKEN}.{unmet}")
            swe = block.swe if block else None
            if swe and swe.image_fallback and swe.instance and swe.instance.docker_image:
                # the row named its image and the recipe built instead (`image.*`)
                self._warn(event, swe.image_fallback, image=swe.instance.docker_image)
            if swe and swe.environment_bound_tests:  # the oracle settled them (mining)
                bound = swe.environment_bound_tests
                self._warn(event, "swe.environment-bound-tests", tests=len(bound))
            self.candidates += 1
            self._owner(source.record_id if source else event.bundle.task_id)["candidates"] += 1
            self.by_status[block.evaluation.status if block else "unverified"] += 1
            self.by_kind[event.kind] += 1
            self.by_format[event.source_format] += 1
            block = event.bundle.config.metadata.repo2rlenv
            anchor = block.source.anchor_found_by if block and block.source else None
            if anchor:
                self.anchored_by_source[anchor] += 1
                self.anchored_by_kind[event.kind] += 1
        else:
            record = self._record(event.record_id)
            if event.stage == "candidate":
                self.candidates += 1
                self.skipped_candidates[event.reason] += 1
                self._owner(event.record_id)["candidates"] += 1
            else:
                self.skipped_records[event.reason] += 1
            self.skipped[event.reason] += 1
            self.skipped_by_format[event.source_format or "unknown"] += 1
            self.skip_examples.setdefault(event.reason, f"{event.record_id}: {event.detail}"[:200])
            record["reasons"].append(event.reason)
            record.setdefault("skips", []).append(
                {
                    "reason": event.reason,
                    "stage": event.stage,
                    "detail": event.detail[:SKIP_DETAIL_CHARS],
                }
            )

    def to_dict(self) -> dict[str, object]:
        return {
            "pipeline": self.pipeline,
            "records_read": self.records_read,
            "reports_read": self.reports_read,
            "candidates": self.candidates,
            "emitted": self.emitted,
            "unchanged": self.unchanged,
            "skipped": dict(sorted(self.skipped.items())),
            "emitted_by_kind": dict(sorted(self.by_kind.items())),
            "emitted_by_format": dict(sorted(self.by_format.items())),
            "skipped_by_format": dict(sorted(self.skipped_by_format.items())),
            "skip_examples": dict(sorted(self.skip_examples.items())),
            "warnings": dict(sorted(self.warnings.items())),
            "anchored": {
                "emitted_by_anchor_source": dict(sorted(self.anchored_by_source.items())),
                "emitted_by_kind": dict(sorted(self.anchored_by_kind.items())),
                "skipped": sum(n for r, n in self.skipped.items() if r.startswith("anchor.")),
            },
            "not_anchored_emitted_by_kind": dict(
                sorted((self.by_kind - self.anchored_by_kind).items())
            ),
            "records": list(self.records.values()),
            "counts": self.counts().model_dump(),
        }

    def summary(self) -> list[str]:
        """The lines whose sums add up at each level (`YieldCounts.summary`)."""
        return self.counts().summary(self.pipeline)

    def counts(self) -> YieldCounts:
        """The run's numbers at each level, each level adding up (see YieldCounts)."""
        records = self.records.values()
        with_candidates = sum(
            1
            for r in records
            if r["record_id"] in self._read and r["candidates"] and not r.get("report")
        )
        skipped_whole = sum(self.skipped_records.values())
        return YieldCounts(
            records_read=self.records_read,
            reports=self.reports_read,
            records_skipped=skipped_whole,
            records_skipped_by_reason=dict(sorted(self.skipped_records.items())),
            records_with_candidates=with_candidates,
            records_without_outcome=self.records_read
            - self.reports_read
            - skipped_whole
            - with_candidates,
            candidates=self.candidates,
            emitted=self.emitted,
            unchanged=self.unchanged,
            candidates_skipped=sum(self.skipped_candidates.values()),
            candidates_skipped_by_reason=dict(sorted(self.skipped_candidates.items())),
            proven=self.by_status.get("verified", 0),
            unverified=self.emitted + self.unchanged - self.by_status.get("verified", 0),
            by_status=dict(sorted(self.by_status.items())),
        )


def emit_all(
    pipeline: Pipeline,
    out_dir: Path,
    *,
    on_event: Callable[[Event], None] | None = None,
    on_progress: Callable[[YieldReport], None] | None = None,
    overwrite: bool = False,
) -> YieldReport:
    """Run `pipeline`, write every draft to `<out>/<kind>/<task-id>/`, return the yield.
    `on_event` sees each event; `on_progress` the report after each one is counted and
    written (emitted or unchanged is only known then)."""
    report = YieldReport(pipeline=pipeline.name)
    out_dir = Path(out_dir)
    for event in pipeline.events():
        report.count(event)
        if isinstance(event, Draft):
            outcome = write_bundle(event.bundle, out_dir / event.kind, overwrite=overwrite)
            if outcome.status == "unchanged":
                report.unchanged += 1
            else:
                report.emitted += 1
        if on_event is not None:
            on_event(event)
        if on_progress is not None:
            on_progress(report)
    write_manifest(out_dir)
    return report
