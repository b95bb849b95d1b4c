"""The dataset card of a published task set: README.md with the Hub's YAML metadata
(licences, tags, size, the manifest as the dataset's table) and a body a reader checks
before training on it: kinds and evaluation labels, what the mine yielded and skipped
per reason code, what the push held back and why, every source with its licence, the
generator versions, what validation proved and what the tasks were checked against for
benchmark contamination.

Built with `huggingface_hub`'s `DatasetCardData`, so the metadata is what the Hub
parses; no clock and sorted tables, so pushing the same tasks twice writes the same
bytes (the Hub then records no change)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from repo2rlenv.publish.licences import OPEN
from repo2rlenv.publish.selection import Chosen, Selection, licence_of

TAGS = ("rlenv-harvest", "harbor", "reinforcement-learning", "agents")


def size_category(count: int) -> str:
    """The Hub's `size_categories` bucket for `count` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if count < limit:
            return name
    return "100K<n<1M"


def card_licences(chosen: list[Chosen]) -> set[str]:
    """The metadata's `license` ids: those the Hub knows, and `other` for any task
    pushed with a licence off the list (`--include-unknown-licence`), so the Hub's
    check of the card never meets an id it refuses; the body names each one."""
    found = {licence_of(c) for c in chosen}
    return {lic for lic in found if lic in OPEN} | ({"other"} if found - OPEN else set())


def read_yield(report: Path | None) -> list[dict[str, Any]]:
    """The pipelines of a `mine --json` report (one pipeline, or `{"pipelines": [...]}`);
    none without a report."""
    if report is None:
        return []
    payload = json.loads(report.read_text())
    return list(payload["pipelines"]) if "pipelines" in payload else [payload]


def card_text(
    name: str, selection: Selection, generator_version: str, report: Path | None = None
) -> str:
    """README.md for the dataset `name` holding `selection.chosen`."""
    from huggingface_hub import DatasetCard, DatasetCardData

    chosen = selection.chosen
    licences = sorted(card_licences(chosen))
    kinds = sorted({c.row.kind for c in chosen if c.row.kind is not None})
    data = DatasetCardData(
        license=licences or None,
        pretty_name=name,
        tags=[*TAGS, *kinds],
        size_categories=[size_category(len(chosen))],
        configs=[{"config_name": "default", "data_files": "manifest.jsonl"}],
    )
    body = "\n".join(
        [
            f"# {name}",
            "",
            f"{len(chosen)} Harbor tasks mined by rlenv-harvest (`repo2rlenv push`, "
            f"version {generator_version}). Each task is a folder `<kind>/<task-id>/` "
            "(task.toml, instruction.md, environment/, tests/, solution/); "
            "`manifest.jsonl` indexes them. Fetch them with "
            f"`repo2rlenv pull {name} --out DIR`.",
            "",
            *_labels(chosen),
            *_sources(chosen),
            *_versions(chosen, generator_version),
            *_validation(chosen),
            *_decontamination(chosen),
            *_portable(chosen),
            *_held(selection),
            *_yield(read_yield(report)),
        ]
    )
    card = DatasetCard.from_template(data, template_str="---\n{{ card_data }}\n---\n\n" + body)
    return str(card).rstrip("\n") + "\n"


def _table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _cell(value: object) -> str:
    """A table cell from task metadata (hostile text): one line, no column breaks."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _labels(chosen: list[Chosen]) -> list[str]:
    counts = Counter((c.row.kind or "-", c.row.evaluation) for c in chosen)
    rows = [(kind, label, n) for (kind, label), n in sorted(counts.items())]
    return ["## Kinds and evaluation labels", "", *_table(("kind", "label", "tasks"), rows)]


def _sources(chosen: list[Chosen]) -> list[str]:
    counts = Counter((c.row.source_dataset or "-", licence_of(c) or "unknown") for c in chosen)
    rows = [(dataset, licence, n) for (dataset, licence), n in sorted(counts.items())]
    return ["## Sources and licences", "", *_table(("source", "licence", "tasks"), rows)]


def _versions(chosen: list[Chosen], generator_version: str) -> list[str]:
    counts = Counter(
        (c.block.generator, c.block.generator_version or "-") if c.block else ("-", "-")
        for c in chosen
    )
    rows = [(gen, version, n) for (gen, version), n in sorted(counts.items())]
    return [
        "## Generator",
        "",
        f"Pushed by rlenv-harvest {generator_version}. Tasks by the generator that wrote them:",
        "",
        *_table(("generator", "version", "tasks"), rows),
    ]


def _validation(chosen: list[Chosen]) -> list[str]:
    reasons = Counter(code for c in chosen if c.block for code in c.block.evaluation.reason_codes)
    checks = Counter(
        (check.rule_id, check.status) for c in chosen if c.block for check in c.block.checks
    )
    lines = ["## Validation", ""]
    if not reasons and not checks:
        return [*lines, "No validation evidence recorded in these tasks.", ""]
    if reasons:
        rows = sorted(reasons.items())
        lines += _table(("evaluation reason code", "tasks"), rows)
    if checks:
        rows = [(rule, status, n) for (rule, status), n in sorted(checks.items())]
        lines += _table(("check", "status", "tasks"), rows)
    return lines


def _decontamination(chosen: list[Chosen]) -> list[str]:
    """Per table: tasks checked and tasks matching; per rule, tasks matching; and the
    tasks never checked, said as unknown (never as clean)."""
    results = [c.block.decontamination for c in chosen if c.block and c.block.decontamination]
    lines = ["## Decontamination", ""]
    unchecked = len(chosen) - len(results)
    if not results:
        return [*lines, "No task was checked against a benchmark (`mine "
                "--decontaminate-against`, `repo2rlenv decontam --write-labels`): "
                "whether any is a benchmark instance is unknown.", ""]  # fmt: skip
    checked = Counter(table for r in results for table in set(r.checked_against))
    hits = Counter(table for r in results for table in {m.benchmark for m in r.matches})
    rows = [(table, n, hits[table]) for table, n in sorted(checked.items())]
    lines += _table(("benchmark", "tasks checked", "tasks matching"), rows)
    rules = Counter(rule for r in results for rule in {m.rule for m in r.matches})
    if rules:
        lines += _table(("rule", "tasks matching"), sorted(rules.items()))
    if unchecked:
        lines += [f"{unchecked} task(s) were not checked: unknown, not clean.", ""]
    return lines


def _portable(chosen: list[Chosen]) -> list[str]:
    """Said only when it happened: the published Dockerfile is not the one validated."""
    rewritten = sum(c.rewritten for c in chosen)
    if not rewritten:
        return []
    return [
        "## Portable base",
        "",
        f"{rewritten} task(s) were mined on an image only the miner's machine had "
        "(`env.local-only-base`); their published Dockerfile installs that image's Debian "
        "packages on a public Debian image pinned by digest. Their labels were earned on "
        "the original image (task.toml's recorded hash names it); validate them again "
        "before relying on the label.",
        "",
    ]


def _held(selection: Selection) -> list[str]:
    lines = ["## Held back", ""]
    if not selection.held:
        return [*lines, "No task was held back.", ""]
    return [*lines, *_table(("reason", "tasks"), sorted(selection.held.items()))]


def _yield(pipelines: list[dict[str, Any]]) -> list[str]:
    lines = ["## Mining yield", ""]
    if not pipelines:
        return [*lines, "No mining report was given (`repo2rlenv push --report`).", ""]
    rows: list[tuple[object, ...]] = []
    for pipeline in pipelines:
        name = pipeline.get("pipeline", "-")
        written = int(pipeline.get("emitted", 0)) + int(pipeline.get("unchanged", 0))
        rows.append((name, "written", written))
        rows += [(name, reason, n) for reason, n in sorted(pipeline.get("skipped", {}).items())]
    return [*lines, *_table(("pipeline", "outcome", "records"), rows)]
