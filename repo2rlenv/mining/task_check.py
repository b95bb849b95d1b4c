"""Checks 3 and 4 of the session miner on one rendered task: `clean` (the privacy pass,
then validate's static and semantic rules, `repo2rlenv.gate`) and `oracle` (in a
container, the reference scores 1.0 and the start state 0.0 on reruns)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from repo2rlenv.bundle import write_bundle
from repo2rlenv.emit import SKIP_DETAIL_CHARS, Draft, Event, Skip
from repo2rlenv.gate import Refused, gate
from repo2rlenv.mining.environment_bound import settle
from repo2rlenv.privacy import scrub_bundle
from repo2rlenv.validate import ResultCache, ValidateOptions, validate_one
from repo2rlenv.validate.runner import SilentProgress
from schemas import TaskBundle

if TYPE_CHECKING:
    from repo2rlenv.llm import InstructionRewriter
    from repo2rlenv.runtime import Runtime


class TaskCheck:
    """The clean and oracle checks, with what they need: the optional instruction
    rewriter (`--llm`), the runtime (None: `--no-validate`, no oracle), its cache, and
    `work`, the folder drafts are written to for the oracle (the run's own, set by the
    miner for the length of a run)."""

    def __init__(
        self,
        runtime: Runtime | None,
        cache: ResultCache | None,
        reruns: int,
        rewriter: InstructionRewriter | None,
        work: Path,
    ) -> None:
        self.runtime = runtime
        self.cache = cache
        self.reruns = reruns
        self.rewriter = rewriter
        self.work = work

    def check(
        self, bundle: TaskBundle, root: str | None, record_id: str, kind: str, fmt: str
    ) -> Event:
        """The draft, labelled by the oracle when it ran; or the skip of the first check
        it fails (`clean.<rule>`, `oracle.<rule>`)."""
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
        options = ValidateOptions(reruns=self.reruns, jobs=1, runtime=self.runtime.name)
        report = validate_one(path, options, self.runtime, self.cache, SilentProgress())
        settled = None if report.valid else settle(bundle, report, path, self.runtime)
        if settled is not None:  # environment-bound PASS_TO_PASS names: decided again
            bundle = settled
            path = write_bundle(bundle, folder, overwrite=True).path
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
