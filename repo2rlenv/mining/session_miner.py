"""Session miner: parse, replay, draft every kind, then the named quality checks.

Checks, in order, each skipping with its own reason code:
1. parsed: the record reads as a session and, if compacted, a request with tool calls
   follows the last compaction (only that part is replayed, from an unknown start);
2. reconstructable / verifiable / clean: inside the kinds (start state known in full,
   no network/clock/randomness in the check, no secrets in files);
3. clean: after the privacy pass, the rendered task passes validate's static rules (no
   hidden paths, no solution in the instruction, no leaks) and semantic rules (not a
   compaction summary, no host paths, no error text as data, no answer a constant
   guess passes; docs/gates.md), skipped as `clean.<rule id>`: `repo2rlenv.gate`, the
   step notebook drafts pass too (3 and 4: `mining.task_check`);
4. oracle: in Docker, the reference scores 1.0 and the start state 0.0 on reruns
   (unless `no_validate`);
5. novel: not an exact or near duplicate of an earlier task or of the eval set
   (`mining.novelty`; a task from a session with a hole never wins over a complete
   copy: it waits for the end of the run); runs of one SWE instance give one task
   (`mining.instance_runs`).
Records are processed in parallel; results are consumed in input order, so the
output never depends on scheduling.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from repo2rlenv.anchors.find import find_anchor
from repo2rlenv.anchors.repos import RepoCache, load_repo_map
from repo2rlenv.anchors.siblings import Siblings
from repo2rlenv.emit import (
    Draft,
    Event,
    RecordRead,
    Skip,
)
from repo2rlenv.formats import read_record
from repo2rlenv.formats.base import FormatError, OtherTool, ParsedSession
from repo2rlenv.formats.collector import collector_paused
from repo2rlenv.formats.swe_reports import REPORT_FORMAT, read_report
from repo2rlenv.hosttools import require_pip
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.kinds.instance_repair import is_instance_task, reference_size
from repo2rlenv.mining.anchoring import anchored
from repo2rlenv.mining.instance_runs import InstanceRuns, instance_of
from repo2rlenv.mining.instances import (
    Instance,
    InstanceTable,
    join,
    load_instance_ids,
    load_instances,
    run_instance,
    unexplained_mismatches,
)
from repo2rlenv.mining.novelty import Novelty
from repo2rlenv.mining.options import MineOptions
from repo2rlenv.mining.ordered import ordered_map
from repo2rlenv.mining.sources import (
    FileIdentity,
    FileRevision,
    RawRecord,
    SourceSpec,
    iter_records,
)
from repo2rlenv.mining.task_check import TaskCheck
from repo2rlenv.replay import Replay, replay
from repo2rlenv.runtime import Runtime
from repo2rlenv.runtime.instance_images import ImageResolver, image_names
from repo2rlenv.source import Source, dataset_label, resolve_source
from repo2rlenv.validate import ResultCache
from schemas.provenance import PublishedImage


def unusable_tools(session: ParsedSession) -> tuple[str, str] | None:
    """Why a session whose tool calls replay cannot use is skipped: none at all (a chat),
    or only tools no profile knows (their shell and file work is invisible). Any kind's
    reason ("no passing tests", "nothing built") would hide the real one. None when
    some call is known."""
    actions = session.actions
    if not actions:
        return "parsed.no-tool-calls", "the session made no tool calls: nothing to replay"
    if not all(isinstance(a, OtherTool) for a in actions):
        return None
    names = Counter(a.name for a in actions if isinstance(a, OtherTool))
    shown = ", ".join(f"{name} x{count}" for name, count in names.most_common(5))
    detail = f"all {len(actions)} tool calls went to tools no reader maps: {shown}"
    return "parsed.unknown-tools", detail


class SessionPipeline:
    name = "sessions"

    def __init__(
        self,
        options: MineOptions,
        runtime: Runtime | None,
        cache: ResultCache | None = None,
        *,
        source: Source | None = None,
    ) -> None:
        self.options = options
        self._source = source
        """`mine` resolves `--dataset` once and hands it on; a library caller may leave
        it to the first use."""
        self.runtime = runtime if options.validate_tasks else None
        self.test_writer = None
        self.runs = InstanceRuns()
        from repo2rlenv.settings import load_settings

        if options.instances:
            # instance tasks date their wheels with pip's --uploaded-prior-to: a pip
            # without it stops here, in one line, not as wrong tasks (issue 28)
            require_pip()
        self.instances: InstanceTable | None = (
            load_instances(options.instances) if options.instances else None
        )
        self.excluded_instances: frozenset[str] = frozenset().union(
            *(load_instance_ids(source) for source in options.exclude_instances)
        )
        settings = load_settings()
        # one per run: a registry found absent is not asked again for every instance
        self.images = (
            ImageResolver(pull=settings.instance_images == "pull")
            if options.instances and settings.instance_images != "off"
            else None
        )
        self.repos = RepoCache(
            options.repo_cache or settings.cache_dir,
            load_repo_map(options.repo_map),
            max_files=options.max_repo_files or settings.max_repo_files,
            max_bytes=options.max_repo_bytes or settings.max_repo_bytes,
        )
        self.siblings = Siblings()
        """Sessions committed beside the mined ones, parsed once (`--end-state`)."""
        rewriter = None
        if options.llm:
            from repo2rlenv.llm import InstructionRewriter, TestWriter

            self.test_writer = TestWriter(options.llm, settings.cache_dir, model=options.llm_model)
            rewriter = InstructionRewriter(options.llm, settings.cache_dir, model=options.llm_model)
        self.task_check = TaskCheck(
            self.runtime, cache, options.reruns, rewriter, Path(tempfile.gettempdir())
        )
        """Clean and oracle checks; its `work` folder (drafts written for the oracle) is
        the run's own while `events` runs, removed after, so runs leave nothing behind."""

    def events(self) -> Iterator[Event]:
        spec = SourceSpec(
            source=self.source,
            split=self.options.split,
            limit=self.options.limit,
            streaming=self.options.streaming,
        )
        novelty = Novelty(self.options.exclude)
        jobs = self.options.jobs
        with (
            tempfile.TemporaryDirectory(prefix="rlenv-mine-") as work,
            ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool,
        ):
            self.task_check.work = Path(work)
            window = 4 * jobs
            held: dict[str, list[Draft]] = {}
            for events in ordered_map(pool, self._record_events, iter_records(spec), window):
                for event in events:
                    if isinstance(event, Draft):
                        instance = instance_of(event)
                        if instance is not None:
                            held.setdefault(instance, []).append(event)
                            continue
                        yield from novelty.offer(event)
                        continue
                    yield event
            yield from self.runs.held_events(held, novelty)
            yield from novelty.release()

    @property
    def source(self) -> Source:
        if self._source is None:
            self._source = resolve_source(self.options.dataset, self.options.revision)
        return self._source

    @property
    def _dataset_label(self) -> str:
        """The dataset every task records (never a home path: `Source.label`); a caller
        that hands sessions in itself (`session_events`) has no source to resolve."""
        if self._source is None:
            return dataset_label(self.options.dataset)
        return self._source.label

    def _record_events(self, raw: RawRecord) -> list[Event]:
        with collector_paused():  # see formats/collector.py: a tenth of mining time
            return self._record_events_unpaused(raw)

    def _record_events_unpaused(self, raw: RawRecord) -> list[Event]:
        events: list[Event] = [RecordRead(raw.record_id)]
        if isinstance(raw.payload, FormatError):
            return [
                *events,
                Skip(raw.record_id, raw.payload.reason, str(raw.payload), stage="record"),
            ]
        verdicts = read_report(raw.payload, raw.record_id)
        if verdicts is not None:  # a run's own verdict, published beside it
            self.runs.reports.add(raw.record_id, verdicts)
            return [RecordRead(raw.record_id, REPORT_FORMAT, report=True)]
        try:
            session = read_record(raw.payload, raw.record_id)
        except FormatError as exc:
            skip = Skip(
                raw.record_id, exc.reason, str(exc), "record", source_format=exc.source_format
            )
            return [*events, skip]
        events[0] = RecordRead(raw.record_id, session.source_format)
        return events + self.session_events(
            session, raw.record_id, raw.revision, identity=raw.identity
        )

    def _instance_image(self, instance: Instance) -> tuple[PublishedImage | None, str | None]:
        """The instance's published image, or why the project's recipe builds instead."""
        assert self.images is not None
        return self.images.resolve(image_names(instance.instance_id, instance.docker_image))

    def session_events(
        self,
        session: ParsedSession,
        record_id: str,
        revision: str | FileRevision | None,
        identity: FileIdentity | None = None,
    ) -> list[Event]:
        """Checks 1-4 on one parsed session (module docstring): its candidates' drafts
        and skips, or the one skip of the whole record."""
        fmt = session.source_format
        if session.compacted and not (session.user_turns and session.actions):
            return [
                Skip(
                    record_id,
                    "parsed.compacted",
                    "history was compacted and no user request with tool calls follows the "
                    f"last compaction (step {session.compacted_at})",
                    stage="record",
                    source_format=fmt,
                )
            ]
        instance_id = run_instance(session)
        refused = self._instance_refusal(session, instance_id, record_id)
        if refused is not None:
            return [refused]
        instance = self.instances.instances.get(instance_id) if self.instances else None
        # A run joined to its instance needs no replayable calls: the instance gives the
        # start state and the verifier, the run's submission the reference.
        unusable = None if instance is not None else unusable_tools(session)
        if unusable is not None:
            reason, detail = unusable
            return [Skip(record_id, reason, detail, stage="record", source_format=fmt)]
        ctx = SessionContext(
            dataset=self._dataset_label,
            revision=revision,
            record_id=record_id,
            base_image=self.options.base_image,
            identity=identity,
            write_tests=self.test_writer.write if self.test_writer else None,
            instance_id=instance_id,
            instance=instance if instance_id else None,
            instance_image=self._instance_image if self.images is not None else None,
            instance_image_files=self.images.read_files if self.images is not None else None,
            dependency_date=(
                self.instances.environment_date(instance)
                if self.instances and instance is not None
                else None
            ),
        )
        baseline, ctx, skipped = anchored(
            session,
            ctx,
            self.repos,
            end_state=self.siblings if self.options.end_state else None,
            strict_secrets=self.options.strict_secrets,
        )
        if isinstance(skipped, Skip):
            return [skipped]
        replayed = replay(session, baseline)
        mismatches = unexplained_mismatches(replayed.workspace.mismatches, instance)
        if mismatches:
            shown = ", ".join(mismatches[:3])
            return [
                Skip(
                    record_id,
                    "anchor.read-mismatch",
                    f"files read in the session differ from {ctx.commit}: {shown}",
                    stage="record",
                    source_format=fmt,
                )
            ]
        events = self._kind_events(replayed, ctx, session)
        if session.truncated:  # a hole in the history: a complete copy wins (novelty)
            events = [replace(e, damaged=True) if isinstance(e, Draft) else e for e in events]
        if not events:
            detail = "no test runs, questions or requests that a kind could use"
            if replayed.outside:
                detail += f"; {len(replayed.outside)} path(s) outside the session root"
            events.append(
                Skip(record_id, "session.no-candidates", detail, stage="record", source_format=fmt)
            )
        if skipped is not None:  # an end state not found: mined unanchored, reason kept
            events.insert(0, skipped)
        return events

    def _kind_events(
        self, replayed: Replay, ctx: SessionContext, session: ParsedSession
    ) -> list[Event]:
        """Every kind's candidates from one replayed session, each checked (clean, oracle)
        or skipped with the kind's reason."""
        fmt, record_id = session.source_format, ctx.record_id
        events: list[Event] = []
        for kind in self.options.kinds:
            for outcome in KINDS[kind](replayed, ctx):
                if isinstance(outcome, Reject):
                    skip = Skip(
                        record_id, outcome.reason, outcome.detail, kind=kind, source_format=fmt
                    )
                    events.append(skip)
                    continue
                checked = self.task_check.check(outcome, session.cwd, record_id, kind, fmt)
                if is_instance_task(outcome):
                    self.runs.reference_size[outcome.task_id] = reference_size(replayed)
                    if isinstance(checked, Skip) and checked.reason.startswith("oracle."):
                        refusal = (str(ctx.instance_id), checked.reason)
                        self.runs.refused_by_oracle[record_id] = refusal
                events.append(checked)
        return events

    def _instance_refusal(
        self, session: ParsedSession, instance_id: str | None, record_id: str
    ) -> Skip | None:
        """Drop runs of excluded instances; join the others to their instance row, so
        its repository and base commit anchor the run."""
        fmt = session.source_format
        if instance_id is not None and instance_id in self.excluded_instances:
            detail = f"{instance_id} is in an --exclude-instances table"
            return Skip(record_id, "instance.excluded", detail, stage="record", source_format=fmt)
        if self.instances is None or instance_id is None:
            return None
        instance = self.instances.instances.get(instance_id)
        if instance is not None:
            join(session, instance)
            return None
        if find_anchor(session) is None:
            detail = (
                f"{instance_id} is not in {self.instances.source}, and the run names no repository"
            )
            return Skip(
                record_id, "instance.not-in-table", detail, stage="record", source_format=fmt
            )
        return None
