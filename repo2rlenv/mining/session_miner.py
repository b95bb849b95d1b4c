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
   step notebook drafts pass too;
4. oracle: in Docker, the reference scores 1.0 and the start state 0.0 on reruns
   (unless `no_validate`);
5. novel: not an exact or near duplicate of an earlier task or of the eval set.
Records are processed in parallel; results are consumed in input order, so the
output never depends on scheduling.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from functools import partial
from pathlib import Path

from repo2rlenv.anchors.dirty import apply_local_changes
from repo2rlenv.anchors.find import Anchor, find_anchor
from repo2rlenv.anchors.repos import AnchorError, RepoCache, detect_licence, load_repo_map
from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.bundle.writer import bundle_digest
from repo2rlenv.emit import (
    SKIP_DETAIL_CHARS,
    Draft,
    Event,
    Notice,
    RecordRead,
    Skip,
)
from repo2rlenv.formats import read_record
from repo2rlenv.formats.base import FormatError, OtherTool, ParsedSession
from repo2rlenv.formats.collector import collector_paused
from repo2rlenv.formats.swe_reports import REPORT_FORMAT, read_report
from repo2rlenv.gate import Refused, gate
from repo2rlenv.hosttools import require_pip
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.kinds.instance_repair import is_instance_task, reference_size
from repo2rlenv.mining.instances import (
    InstanceTable,
    join,
    load_instance_ids,
    load_instances,
    run_instance,
)
from repo2rlenv.mining.options import MineOptions
from repo2rlenv.mining.ordered import ordered_map
from repo2rlenv.mining.run_reports import RunReports
from repo2rlenv.mining.sources import FileRevision, RawRecord, SourceSpec, iter_records
from repo2rlenv.privacy import scrub_bundle
from repo2rlenv.replay import replay
from repo2rlenv.runtime import Runtime
from repo2rlenv.source import Source, dataset_label, resolve_source
from repo2rlenv.validate import ResultCache, ValidateOptions, validate_one
from repo2rlenv.validate.runner import SilentProgress
from schemas import TaskBundle


def _record_of(draft: Draft) -> str:
    block = draft.bundle.config.metadata.repo2rlenv
    return block.source.record_id if block and block.source else draft.bundle.task_id


def _instance_of(draft: Draft) -> str | None:
    """The instance an instance-backed draft belongs to; None for every other draft."""
    block = draft.bundle.config.metadata.repo2rlenv
    instance = block.source.instance_id if block and block.source else None
    return instance if instance and is_instance_task(draft.bundle) else None


def near_duplicate_key(instruction: str, solve_sh: str) -> str:
    squash = re.sub(r"\s+", " ", (instruction + "\n" + solve_sh).lower()).strip()
    squash = re.sub(r"rlenv_[0-9a-f]{12}", "", squash)
    return hashlib.sha256(squash.encode()).hexdigest()


def _bundle_key(bundle: TaskBundle) -> str:
    solve = next(
        (
            f.content.decode("utf-8", "replace")
            for f in bundle.files
            if f.path == "solution/solve.sh"
        ),
        "",
    )
    return near_duplicate_key(bundle.instruction, solve)


def exclusion_keys(folders: list[Path]) -> set[str]:
    from repo2rlenv.bundle import find_task_dirs

    keys = set()
    for task_dir in find_task_dirs(folders):
        tree = read_task_dir(task_dir)
        keys.add(
            near_duplicate_key(
                tree.text("instruction.md") or "", tree.text("solution/solve.sh") or ""
            )
        )
    return keys


def _binary_files(repos: RepoCache, anchor: Anchor) -> dict[str, bytes]:
    """The checkout's binary files, read when an instance task asks for them; an
    unreadable checkout refuses that task with the anchor's reason."""
    try:
        return repos.binary_files_at(anchor)
    except AnchorError as exc:
        raise Reject(exc.reason, str(exc)) from exc


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
        self.cache = cache
        self.work = Path(tempfile.gettempdir())
        """Where drafts are written for the oracle check; a folder of the run's own,
        removed when `events` ends, so repeated runs leave nothing behind."""
        self.rewriter = None
        self.test_writer = None
        self._reference_size: dict[str, tuple[int, int]] = {}
        """Instance task id -> (changed lines, bytes) of the run's submission."""
        self.reports = RunReports()
        """Verdicts of the evaluation reports found among the records."""
        self._refused_by_oracle: dict[str, tuple[str, str]] = {}
        """Record id -> (instance id, reason) of instance tasks the oracle refused: a
        report that calls the run resolved disagrees with it."""
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
        self.repos = RepoCache(
            options.repo_cache or settings.cache_dir,
            load_repo_map(options.repo_map),
            max_files=options.max_repo_files or settings.max_repo_files,
            max_bytes=options.max_repo_bytes or settings.max_repo_bytes,
        )
        if options.llm:
            from repo2rlenv.llm import InstructionRewriter, TestWriter
            from repo2rlenv.settings import load_settings

            self.test_writer = TestWriter(
                options.llm, load_settings().cache_dir, model=options.llm_model
            )
            self.rewriter = InstructionRewriter(
                options.llm, load_settings().cache_dir, model=options.llm_model
            )

    def events(self) -> Iterator[Event]:
        spec = SourceSpec(
            source=self.source,
            split=self.options.split,
            limit=self.options.limit,
            streaming=self.options.streaming,
        )
        seen_hashes: set[str] = set()
        seen_keys = exclusion_keys(self.options.exclude)
        excluded = set(seen_keys)
        jobs = self.options.jobs
        with (
            tempfile.TemporaryDirectory(prefix="rlenv-mine-") as work,
            ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool,
        ):
            self.work = Path(work)
            window = 4 * jobs
            held: dict[str, list[Draft]] = {}
            for events in ordered_map(pool, self._record_events, iter_records(spec), window):
                for event in events:
                    if isinstance(event, Draft):
                        instance = _instance_of(event)
                        if instance is not None:
                            held.setdefault(instance, []).append(event)
                            continue
                        event = self._novel(event, seen_hashes, seen_keys, excluded)
                    yield event
            for instance, drafts in held.items():
                kept: list[Draft] = []
                for draft in drafts:
                    judged, said = self._with_report(draft, instance)
                    yield from said
                    if judged is not None:
                        kept.append(judged)
                if kept:
                    yield from self._one_per_instance(
                        instance, kept, seen_hashes, seen_keys, excluded
                    )
            yield from self._oracle_disagreements()

    def _one_per_instance(
        self,
        instance: str,
        drafts: list[Draft],
        hashes: set[str],
        keys: set[str],
        excluded: set[str],
    ) -> Iterator[Event]:
        """Several runs of one instance give one task: the smallest reference (fewest
        changed lines of the submission, then fewest bytes, then input order). With the
        oracle on, every draft here already passed it, so it is the smallest *passing*
        reference; with `--no-validate` it is the smallest unproven one."""
        ranked = sorted(
            enumerate(drafts),
            key=lambda pair: (*self._reference_size.get(pair[1].bundle.task_id, (0, 0)), pair[0]),
        )
        chosen: Draft | None = None
        for _, draft in ranked:
            if chosen is None:
                event = self._novel(draft, hashes, keys, excluded)
                if isinstance(event, Draft):
                    chosen = draft
                yield event
                continue
            yield Skip(
                _record_of(draft),
                "novel.duplicate-instance",
                f"{instance} gave its task from {_record_of(chosen)}, whose reference is no larger",
                kind=draft.kind,
                source_format=draft.source_format,
            )

    def _with_report(self, draft: Draft, instance: str) -> tuple[Draft | None, list[Event]]:
        """The run's own verdict, from the report published beside it: recorded in the
        task's provenance when it says resolved; when it says unresolved the run gives
        no task (`report.unresolved`), and a reference the oracle proved is reported as
        a disagreement (`report.disagrees-with-oracle`)."""
        record = _record_of(draft)
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
            return Draft(bundle), []
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

    def _oracle_disagreements(self) -> Iterator[Notice]:
        """Runs whose report says resolved but whose reference the oracle refused."""
        for record, (instance, reason) in sorted(self._refused_by_oracle.items()):
            report = self.reports.lookup(record, instance).report
            if report is not None and report.resolved:
                yield Notice(
                    record,
                    "report.disagrees-with-oracle",
                    f"{report.file}: resolved; the oracle refused the reference ({reason})",
                )

    def _novel(self, draft: Draft, hashes: set[str], keys: set[str], excluded: set[str]) -> Event:
        digest = bundle_digest(draft.bundle)
        key = _bundle_key(draft.bundle)
        block = draft.bundle.config.metadata.repo2rlenv
        record = block.source.record_id if block and block.source else draft.bundle.task_id
        seen = "novel.duplicate" if digest in hashes or key in keys else None
        reason = "novel.in-eval-set" if key in excluded else seen
        if reason is not None:
            return Skip(
                record,
                reason,
                draft.bundle.task_id,
                kind=draft.kind,
                source_format=draft.source_format,
            )
        hashes.add(digest)
        keys.add(key)
        return draft

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
        verdicts = read_report(raw.payload)
        if verdicts is not None:  # a run's own verdict, published beside it
            self.reports.add(raw.record_id, verdicts)
            return [RecordRead(raw.record_id, REPORT_FORMAT, report=True)]
        try:
            session = read_record(raw.payload, raw.record_id)
        except FormatError as exc:
            skip = Skip(
                raw.record_id, exc.reason, str(exc), "record", source_format=exc.source_format
            )
            return [*events, skip]
        events[0] = RecordRead(raw.record_id, session.source_format)
        return events + self.session_events(session, raw.record_id, raw.revision)

    def _anchored(
        self, session: ParsedSession, ctx: SessionContext
    ) -> tuple[dict[str, str] | None, SessionContext, Skip | None]:
        """The repository checkout the session started from, when it names one."""
        if session.compacted:
            return None, ctx, None  # the checkout is the state before the dropped history
        anchor = find_anchor(session)
        if anchor is None:
            return None, ctx, None
        fmt = session.source_format

        def skip(reason: str, detail: str) -> tuple[None, SessionContext, Skip]:
            return None, ctx, Skip(ctx.record_id, reason, detail, stage="record", source_format=fmt)

        try:
            published = self.repos.files_at(anchor)
            baseline, shown_by = apply_local_changes(session, published)
        except AnchorError as exc:
            return skip(exc.reason, str(exc))
        if not any(p.endswith(".py") for p in baseline):
            return skip(
                "anchor.language-unsupported",
                f"{anchor.url} has no Python files (only Python is supported)",
            )
        ctx = replace(
            ctx,
            repository=anchor.url,
            commit=anchor.commit,
            anchor_found_by=anchor.found_by + (f" + uncommitted: {shown_by}" if shown_by else ""),
            license=detect_licence(baseline),
            published=None if self.options.strict_secrets else published,
            binary_files=partial(_binary_files, self.repos, anchor),
        )
        return baseline, ctx, None

    def session_events(
        self, session: ParsedSession, record_id: str, revision: str | FileRevision | None
    ) -> list[Event]:
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
            write_tests=self.test_writer.write if self.test_writer else None,
            instance_id=instance_id,
            instance=instance if instance_id else None,
            dependency_date=(
                self.instances.environment_date(instance)
                if self.instances and instance is not None
                else None
            ),
        )
        baseline, ctx, skipped = self._anchored(session, ctx)
        if skipped is not None:
            return [skipped]
        replayed = replay(session, baseline)
        if replayed.workspace.mismatches:
            shown = ", ".join(replayed.workspace.mismatches[:3])
            return [
                Skip(
                    record_id,
                    "anchor.read-mismatch",
                    f"files read in the session differ from {ctx.commit}: {shown}",
                    stage="record",
                    source_format=fmt,
                )
            ]
        events: list[Event] = []
        for kind in self.options.kinds:
            for outcome in KINDS[kind](replayed, ctx):
                if isinstance(outcome, Reject):
                    events.append(
                        Skip(
                            record_id, outcome.reason, outcome.detail, kind=kind, source_format=fmt
                        )
                    )
                else:
                    checked = self._checked(outcome, session.cwd, record_id, kind, fmt)
                    if is_instance_task(outcome):
                        self._reference_size[outcome.task_id] = reference_size(replayed)
                        if isinstance(checked, Skip) and checked.reason.startswith("oracle."):
                            self._refused_by_oracle[record_id] = (
                                str(instance_id),
                                checked.reason,
                            )
                    events.append(checked)
        if not events:
            detail = "no test runs, questions or requests that a kind could use"
            if replayed.outside:
                detail += f"; {len(replayed.outside)} path(s) outside the session root"
            events.append(
                Skip(record_id, "session.no-candidates", detail, stage="record", source_format=fmt)
            )
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

    def _checked(
        self, bundle: TaskBundle, root: str | None, record_id: str, kind: str, fmt: str
    ) -> Event:
        if self.rewriter is not None:
            bundle = scrub_bundle(bundle, root)  # the LLM server never sees a home path
            bundle = bundle.model_copy(
                update={"instruction": self.rewriter.rewrite(bundle.instruction)}
            )
        gated = gate(bundle, root)
        if isinstance(gated, Refused):
            return Skip(record_id, gated.reason, gated.detail, kind=kind, source_format=fmt)
        bundle = gated
        if self.runtime is None:
            return Draft(bundle)
        folder = self.work / hashlib.sha256(bundle.task_id.encode()).hexdigest()[:16]
        path = write_bundle(bundle, folder, overwrite=True).path
        options = ValidateOptions(reruns=self.options.reruns, jobs=1, runtime=self.runtime.name)
        report = validate_one(path, options, self.runtime, self.cache, SilentProgress())
        if not report.valid:
            rule = report.errors[0].rule_id
            return Skip(
                record_id,
                "oracle." + rule,
                report.errors[0].message[:SKIP_DETAIL_CHARS],
                kind=kind,
                source_format=fmt,
            )
        labelled = bundle.model_copy(deep=True)
        block = labelled.config.metadata.repo2rlenv
        block.evaluation = report.derive_label(deterministic=True)
        block.checks = report.check_outcomes()
        return Draft(labelled)
