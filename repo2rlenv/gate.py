"""The gate every mined draft passes, whatever its source: the privacy pass, then the
static and semantic checks `validate` runs on a task folder.

Sessions and notebooks are peer sources (they never import each other), so the step
they share lives here, below both: a draft that reaches `emit_all` from either has had
its home paths rewritten and has no error finding of any `STATIC_CHECKS` rule. Keeping
one function (not one copy per miner) is what makes "notebook tasks get the same gates
as session tasks" true by construction; docs/gates.md lists the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.bundle import TaskTree, render_bundle
from repo2rlenv.bundle.toml_io import parse_config
from repo2rlenv.privacy import scrub_bundle
from repo2rlenv.validate.checks import run_static
from schemas import TaskBundle

REFUSAL_PREFIX = "clean."
"""Skip reasons of the gate are `clean.<rule id>` (`clean.semantic.constant-answer`)."""


@dataclass(frozen=True)
class Refused:
    """Why the gate stopped a draft: a skip reason and the first error finding's text."""

    reason: str
    detail: str


def tree_of(bundle: TaskBundle) -> TaskTree:
    """The task as `read_task_dir` would see it once written, without touching disk."""
    _digest, files = render_bundle(bundle)
    config_text = files.pop("task.toml")[0].decode()
    return TaskTree(
        root=Path(bundle.task_id),
        files=files,
        config_text=config_text,
        config=parse_config(config_text),
    )


def gate(bundle: TaskBundle, root: str | None) -> TaskBundle | Refused:
    """The draft with personal paths scrubbed (`root`, the author's working folder when
    the source knows it, becomes /workspace; any other home folder `~`), or the refusal
    of the first static or semantic rule that finds an error in the scrubbed task.
    Scrubbing is idempotent, so a source may scrub earlier (before an LLM sees text)."""
    scrubbed = scrub_bundle(bundle, root)
    errors = [f for f in run_static(tree_of(scrubbed)) if f.severity == "error"]
    if errors:
        return Refused(REFUSAL_PREFIX + errors[0].rule_id, errors[0].message)
    return scrubbed
