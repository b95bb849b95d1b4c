"""Notebook miner (`NotebookPipeline`): notebooks in, `RecordRead` / `Draft` / `Skip` out.

It implements `repo2rlenv.emit.Pipeline`, so `emit_all` writes its tasks into
`<out>/qa/<task-id>/`, keeps `manifest.jsonl` and counts the yield like every other
miner. Order of work per notebook: extract candidates (cheap, pure), collapse
duplicates, pass each draft through the gate session drafts pass (`repo2rlenv.gate`:
privacy pass, static and semantic rules), then reproduce in parallel (`jobs` trials at
a time) while respecting the per-dataset cap, so a full dataset or a refused draft
costs no container runs. Events come out in
notebook and cell order whatever the parallelism, so output is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repo2rlenv.emit import Draft, Event, RecordRead, Skip
from repo2rlenv.gate import Refused, gate
from repo2rlenv.privacy import scrub_instruction
from repo2rlenv.settings import load_settings
from repo2rlenv.source import Source, resolve_source
from schemas import TaskBundle
from smoldataenvs.apicheck import ApiChecker, ApiSurface
from smoldataenvs.apisurface import ProbeError, image_surface, local_surface
from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex, describe_columns
from smoldataenvs.hygiene import Hygiene
from smoldataenvs.llm import Rephraser
from smoldataenvs.notebook import NotebookError, load_notebook
from smoldataenvs.notebook_files import detect_license, find_notebooks
from smoldataenvs.options import NotebookOptions
from smoldataenvs.proposer import QuestionProposer
from smoldataenvs.reproduce import Reproducer, Reproduction, skipped_outcome
from smoldataenvs.task import api_outcome, build_bundle, with_checks

FORMAT = "ipynb"
API_COLUMNS = 100_000
KIND = "qa"
NOT_COMPUTED = "--no-validate: a plot's or a cut frame's answer is computed in the task's container"


class NotebookPipeline:
    name = "smoldataenvs"

    def __init__(
        self,
        options: NotebookOptions,
        *,
        reproducer: Reproducer | None = None,
        source: Source | None = None,
        on_notebook: Callable[[str], None] | None = None,
        surface: ApiSurface | None = None,
    ) -> None:
        self.options = options
        self._surface = surface
        self._source = source
        self._reproducer = reproducer
        self._on_notebook = on_notebook
        self.base_image = options.base_image or load_settings().base_image
        self.rephraser = (
            Rephraser(
                options.llm_url,
                load_settings().cache_dir,
                model=options.llm_model or "default",
                timeout_s=options.llm_timeout_s,
            )
            if options.llm_url
            else None
        )
        self.proposer = (
            QuestionProposer(
                options.llm_url,
                load_settings().cache_dir,
                model=options.llm_model or "default",
                timeout_s=options.llm_timeout_s,
            )
            if options.llm_url
            else None
        )

    @property
    def source(self) -> Source:
        """`--dataset` as `mine` resolved it, or resolved here on first use (a library
        caller)."""
        if self._source is None:
            self._source = resolve_source(self.options.dataset, self.options.revision)
        return self._source

    @property
    def reproducer(self) -> Reproducer | None:
        if self.options.reproduce and self._reproducer is None:
            from repo2rlenv.runtime import DockerRuntime

            self._reproducer = Reproducer(DockerRuntime())
        return self._reproducer if self.options.reproduce else None

    @property
    def surface(self) -> ApiSurface:
        """The pandas/numpy names of the task image (probed once, before any reference
        runs), or of this machine when references are not re-run in containers."""
        if self._surface is None:
            reproducer = self.reproducer
            if isinstance(reproducer, Reproducer):
                try:
                    self._surface = image_surface(reproducer.runtime, self.base_image)
                except ProbeError:
                    # The image cannot be built or run: no name can be checked, and each
                    # reference trial reports the build failure as its skip reason.
                    self._surface = ApiSurface(versions={}, names={})
            else:
                self._surface = local_surface()
        return self._surface

    def notebooks(self) -> list[tuple[Path, str]]:
        return find_notebooks(self.source.root)

    def events(self) -> Iterator[Event]:
        index = FileIndex(list(self.options.data_dir))
        extractor = CandidateExtractor(index, allow_boolean=self.options.allow_boolean)
        extractor.proposer = self.proposer
        hygiene = Hygiene(self.options.max_per_dataset)
        pool = ThreadPoolExecutor(max_workers=self.options.jobs) if self.reproducer else None
        try:
            for path, record_id in self.notebooks():
                if self._on_notebook is not None:
                    self._on_notebook(record_id)
                yield RecordRead(record_id=record_id, source_format=FORMAT)
                try:
                    notebook = load_notebook(path, record_id)
                except NotebookError as exc:
                    yield self._skip(record_id, exc.reason, exc.detail, stage="record")
                    continue
                license = detect_license(path.absolute(), self.source.root.absolute())
                found = list(extractor.extract(notebook))
                yield from self._emit(found, record_id, license, hygiene, pool)
        except KeyboardInterrupt:
            # Ctrl-C: remove every container now, as `validate` does.
            if self._reproducer is not None:
                self._reproducer.runtime.abort()
            raise
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def _skip(self, record_id: str, reason: str, detail: str, stage: str = "candidate") -> Skip:
        return Skip(
            record_id=record_id,
            reason=reason,
            detail=detail,
            stage=stage,  # type: ignore[arg-type]
            kind=KIND,
            source_format=FORMAT,
        )

    def _emit(
        self,
        found: list[Candidate | CellSkip],
        record_id: str,
        license: str | None,
        hygiene: Hygiene,
        pool: ThreadPoolExecutor | None,
    ) -> Iterator[Event]:
        pending: list[Candidate] = []
        # Answers the notebook saved claim their questions first: a plot of a count the
        # notebook also printed is the duplicate, not the printed one.
        computed = self._computed(found, license, hygiene, pool)
        for item in sorted(
            computed, key=lambda i: isinstance(i, Candidate) and bool(i.computed_as)
        ):
            cell_id = f"{record_id}#cell-{item.cell}"
            if isinstance(item, CellSkip):
                yield self._skip(cell_id, item.reason, item.detail)
            elif hygiene.duplicate(item.dedup_key):
                yield self._skip(cell_id, "hygiene.duplicate", "the same question on the same data")
            elif why := self._missing_api(item):
                yield self._skip(cell_id, "env.missing-api", why)
            else:
                pending.append(item)
        # A cell's own question before the questions `derived` asks of a table, and both
        # (answers the notebook saved) before a computed one (a plot's, a cut frame's
        # count): each later kind takes only what the per-dataset cap leaves (stable:
        # notebook order otherwise).
        pending.sort(key=lambda candidate: (candidate.computed_as is not None, candidate.part > 0))
        batch = max(1, self.options.jobs)
        for start in range(0, len(pending), batch):
            chunk = pending[start : start + batch]
            bundles: dict[tuple[int, int], TaskBundle] = {}
            refused: dict[tuple[int, int], Refused] = {}
            for candidate in chunk:
                if not hygiene.full(self._hashes(candidate)):
                    # The gate session drafts pass (privacy pass, static and semantic
                    # rules), before any container runs the reference.
                    gated = gate(self._bundle(candidate, license), root=None)
                    if isinstance(gated, Refused):
                        refused[candidate.key] = gated
                    else:
                        bundles[candidate.key] = gated
            trials = self._reproduce(bundles, pool)
            for candidate in chunk:
                cell_id = f"{record_id}#cell-{candidate.cell}"
                why = refused.get(candidate.key)
                if why is not None:
                    yield self._skip(cell_id, why.reason, _noted(candidate, why.detail))
                    continue
                if candidate.key not in bundles:
                    yield self._cap_skip(cell_id, candidate)
                    continue
                trial = trials.get(candidate.key)
                if trial is not None and not trial.ok:
                    yield self._skip(cell_id, trial.reason, _noted(candidate, trial.detail))
                elif not hygiene.admit(self._hashes(candidate)):
                    yield self._cap_skip(cell_id, candidate)
                else:
                    outcome = trial.outcome() if trial is not None else skipped_outcome()
                    checks = [api_outcome(self.surface.versions), outcome]
                    yield Draft(bundle=with_checks(bundles[candidate.key], checks))

    def _computed(
        self,
        found: list[Candidate | CellSkip],
        license: str | None,
        hygiene: Hygiene,
        pool: ThreadPoolExecutor | None,
    ) -> list[Candidate | CellSkip]:
        """`found` with each plot's provisional candidate replaced by the candidate with
        its answer computed in the task's container (or the reason it has none): one
        trial each, in parallel, before any answer-dependent gate or dedup."""
        reproducer = self.reproducer
        futures = {}
        out: list[Candidate | CellSkip] = []
        for item in found:
            if not isinstance(item, Candidate) or item.finish is None:
                out.append(item)
            elif reproducer is None or pool is None:
                out.append(CellSkip(item.cell, f"{item.computed_as}.not-computed", NOT_COMPUTED))
            elif hygiene.full(self._hashes(item)):
                cap = f"{self.options.max_per_dataset} tasks already use this data"
                out.append(CellSkip(item.cell, "hygiene.max-per-dataset", cap))
            else:
                bundle = build_bundle(item, self.options, dataset=self.source.label,
                                      revision=self.source.revision, license=license,
                                      base_image=self.base_image)  # fmt: skip
                plotted = item.plotted
                widened, table = (plotted.widened, plotted.table) if plotted else (None, None)
                kind = item.computed_as or "plot"
                futures[len(out)] = pool.submit(reproducer.compute, bundle, widened, table, kind)
                out.append(item)
        finished: list[Candidate | CellSkip] = []
        for position, item in enumerate(out):
            future = futures.get(position)
            if future is None:
                finished.append(item)
                continue
            assert isinstance(item, Candidate) and item.finish is not None
            computed = future.result()
            if computed.answer is None and computed.correlations is None:
                finished.append(CellSkip(item.cell, computed.reason, computed.detail))
            else:
                finished.extend(item.finish(computed))
        return finished

    def _cap_skip(self, cell_id: str, candidate: Candidate) -> Skip:
        cap = self.options.max_per_dataset
        detail = _noted(candidate, f"{cap} tasks already use this data")
        return self._skip(cell_id, "hygiene.max-per-dataset", detail)

    def _missing_api(self, candidate: Candidate) -> str | None:
        # Every header name (not the instruction's first 40): `df.SomeColumn` is fine.
        headers = [
            describe_columns(f.local, limit=API_COLUMNS)[1] for f in candidate.data.files.values()
        ]
        columns = {c for header in headers for c in header}
        return ApiChecker(self.surface, columns).missing(candidate.slice.all_statements())

    @staticmethod
    def _hashes(candidate: Candidate) -> list[str]:
        return sorted({f.sha256 for f in candidate.data.files.values()})

    def _bundle(self, candidate: Candidate, license: str | None):
        instruction = candidate.instruction
        if self.rephraser is not None and candidate.origin is None:
            # The LLM server never sees a home path the notebook's markdown holds.
            instruction = scrub_instruction(instruction, None)
            instruction, _ = self.rephraser.rephrase(
                instruction, candidate.answer, candidate.reference
            )
        return build_bundle(
            candidate,
            self.options,
            dataset=self.source.label,
            revision=self.source.revision,
            license=license,
            base_image=self.base_image,
            instruction=instruction,
        )

    def _reproduce(
        self, bundles: dict, pool: ThreadPoolExecutor | None
    ) -> dict[tuple[int, int], Reproduction]:
        reproducer = self.reproducer
        if reproducer is None or pool is None or not bundles:
            return {}
        futures = {key: pool.submit(reproducer.run, bundle) for key, bundle in bundles.items()}
        return {key: future.result() for key, future in futures.items()}


def _noted(candidate: Candidate, detail: str) -> str:
    """A later gate's refusal of an `--llm` proposal says so, so proposals can be
    counted from the skip records (made = kept + refused at any gate)."""
    return f"{detail} [llm-proposed question]" if candidate.origin else detail
