"""A candidate as a Harbor task bundle, following `repo2rlenv.bundle.standard`.

- environment/: the data files at their notebook-relative paths under /workspace, and
  a Dockerfile that installs a pinned package only when the base image lacks it (so
  a task builds offline on the Debian base image and online on python:*-slim).
- tests/: the standard test.sh, the grader module as `check.py`, `expected.json`.
- solution/: solve.sh runs the runner module on the sliced `reference.py`, beside the
  grader and saved_output modules it reads the live answer with.
Provenance: `source` names the notebook and cell; `[metadata.smoldataenvs]` holds the
slice, the data file hashes and the question rule.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from repo2rlenv.bundle.standard import grading_files, solution_files, standard_config
from repo2rlenv.runtime.offline_bases import base_for_modules
from schemas import BundleFile, CheckOutcome, SourceRef, TaskBundle, TaskMetadata
from smoldataenvs.candidates import PINNED_PACKAGES, Candidate
from smoldataenvs.datafiles import recorded_reference
from smoldataenvs.given_functions import FUNCTIONS_FILE
from smoldataenvs.given_functions import module_text as given_module
from smoldataenvs.grader import ANSWER_PATH, TABLE_PATH
from smoldataenvs.options import NotebookOptions

PACKAGE_DIR = Path(__file__).resolve().parent
GENERATOR = "smoldataenvs"
REPRODUCE_CHECK = "smoldata.reproduce"
API_CHECK = "smoldata.api"
SOLVE_SH = """#!/bin/bash
# Reference written by smoldataenvs: runs the notebook cells the answer depends on
# (reference.py) on the data in /workspace and writes the answer they show.
set -euo pipefail
cd /workspace
MPLBACKEND=Agg python3 /solution/solve.py
"""


def module_text(name: str) -> str:
    return (PACKAGE_DIR / f"{name}.py").read_text()


def task_id(dataset: str, record_id: str, cell: int, part: int = 0) -> str:
    """`nb-<notebook>-c<cell>-<digest>`; a derived question (part 1, 2, ... of one
    table) is `c<cell>d<part>`, so the questions of one cell stay distinct tasks and a
    cell's own task keeps its id."""
    path = Path(record_id)
    name = f"{path.parent.name}-{path.stem}" if path.parent.name else path.stem
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:56].strip("-") or "notebook"
    seed = f"{dataset}\0{record_id}\0{cell}" + (f"\0{part}" if part else "")
    digest = hashlib.sha256(seed.encode()).hexdigest()[:8]
    return f"nb-{slug}-c{cell}{f'd{part}' if part else ''}-{digest}"


def dockerfile(base_image: str, modules: list[str], environment: dict[str, str]) -> str:
    lines = [f"FROM {base_for_modules(base_image, modules)}"]
    lines += [f"ENV {key}={value}" for key, value in sorted(environment.items())]
    for module in modules:
        lines.append(
            f'RUN python3 -c "import {module}" 2>/dev/null || '
            f"pip install --no-cache-dir {PINNED_PACKAGES[module]}"
        )
    lines += ["WORKDIR /workspace", "COPY workspace/ /workspace/"]
    return "\n".join(lines) + "\n"


LABELS_ASKED = {"expression", "print-caption", "print-expression"}
"""Question rules that do not list a mapping answer's labels: finding which labels
belong (the columns that miss values, the keys a filter keeps) is part of the answer."""


def expected_answer(candidate: Candidate, options: NotebookOptions) -> dict:
    expected = {k: v for k, v in candidate.answer.items() if k != "label"}
    if expected["kind"] == "mapping" and candidate.question.rule in LABELS_ASKED:
        # Read by the constant-answer rule: one constant for every value does not pass
        # without the labels, which only the data gives.
        expected["labels_asked"] = True
    # A rounded display's answer carries its own atol (`stated_steps.rounded_answer`).
    expected.update(atol=max(options.atol, candidate.answer.get("atol", 0)), rtol=options.rtol)
    return expected


def build_bundle(
    candidate: Candidate,
    options: NotebookOptions,
    *,
    dataset: str,
    revision: str | None,
    license: str | None,
    base_image: str,
    instruction: str | None = None,
) -> TaskBundle:
    notebook = candidate.notebook
    identifier = task_id(dataset, notebook.record_id, candidate.cell, candidate.part)
    suffix = f"/derived-{candidate.part}" if candidate.part else ""
    source = SourceRef(
        dataset=dataset,
        revision=revision or f"sha256:{notebook.sha256}",
        record_id=f"{notebook.record_id}#cell-{candidate.cell}{suffix}",
        format="ipynb",
        step_range=(candidate.slice.cells[0], candidate.cell),
        license=license,
    )
    config = standard_config(
        identifier,
        kind="qa",
        source=source,
        generator=GENERATOR,
        description=f"Data-analysis question from {notebook.record_id}, cell {candidate.cell}.",
        agent_timeout=options.agent_timeout_s,
        verifier_timeout=options.verifier_timeout_s,
    )
    provenance = _provenance(candidate)
    config.metadata = TaskMetadata(repo2rlenv=config.metadata.repo2rlenv, smoldataenvs=provenance)
    files = _bundle_files(candidate, options, base_image)
    return TaskBundle(
        task_id=identifier,
        config=config,
        instruction=instruction or candidate.instruction,
        files=files,
    )


def api_outcome(versions: dict[str, str]) -> CheckOutcome:
    """The API check as a recorded check: which library versions it judged against."""
    if not versions:
        return CheckOutcome(
            rule_id=API_CHECK, status="skipped", detail="the task image could not be probed"
        )
    checked = ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))
    return CheckOutcome(rule_id=API_CHECK, status="passed", detail=f"checked against {checked}")


def with_checks(bundle: TaskBundle, outcomes: list[CheckOutcome]) -> TaskBundle:
    """The bundle with its checks recorded (volatile fields: the content hash does not
    change, so a reproduced and an unreproduced write, or writes checked against other
    library versions, are the same task)."""
    config = bundle.config.model_copy(deep=True)
    block = config.metadata.repo2rlenv
    assert block is not None
    block.checks = list(outcomes)
    block.evaluation.evidence = [f"{o.rule_id}: {o.status} {o.detail}".strip() for o in outcomes]
    return bundle.model_copy(update={"config": config})


def _provenance(candidate: Candidate) -> dict:
    """Where the task came from, kept in task.toml so a task can be traced to its cell."""
    return {
        "notebook": candidate.notebook.record_id,
        "notebook_sha256": candidate.notebook.sha256,
        "cell": candidate.cell,
        **({"derived_part": candidate.part} if candidate.part else {}),
        "slice_cells": candidate.slice.cells,
        "capture": candidate.capture,
        "answer_kind": candidate.answer["kind"],
        "question_rule": candidate.question.rule,
        # `--llm` proposed the question: which model, and which refusal it replaced.
        **({"question_origin": candidate.origin} if candidate.origin else {}),
        # A plot's aggregate or a cut frame's row count: the answer was computed in the
        # task's container.
        **({"plotted": candidate.plotted.plot} if candidate.plotted else {}),
        **({"counted_frame": candidate.counted_frame} if candidate.counted_frame else {}),
        **({"answer_source": "computed"} if candidate.computed_as else {}),
        # The notebook's functions handed to the agent (`given_functions`).
        **(
            {"given_functions": [f.definition.name for f in candidate.given]}
            if candidate.given
            else {}
        ),
        "difficulty": candidate.difficulty.as_metadata(),
        "dataset_key": candidate.data.dataset_key,
        "data_files": [
            {
                "path": f.target,
                "sha256": f.sha256,
                "bytes": f.size,
                "referenced_as": recorded_reference(f.reference),
            }
            for f in sorted(candidate.data.files.values(), key=lambda f: f.target)
        ],
    }


def _bundle_files(
    candidate: Candidate, options: NotebookOptions, base_image: str
) -> list[BundleFile]:
    """The environment (Dockerfile, data), the grader with its expected answer, and the
    reference solution that replays the notebook slice."""
    files = [
        BundleFile(
            path="environment/Dockerfile",
            content=dockerfile(base_image, candidate.modules, candidate.data.environment).encode(),
        )
    ]
    for target, item in sorted(candidate.data.files.items()):
        files.append(
            BundleFile(path=f"environment/workspace/{target}", content=item.local.read_bytes())
        )
    if candidate.given:  # the notebook's functions the question applies
        files.append(
            BundleFile(
                path=f"environment/workspace/{FUNCTIONS_FILE}",
                content=given_module(candidate.given).encode(),
            )
        )
    files += grading_files(module_text("grader"))
    files.append(
        BundleFile(
            path="tests/expected.json",
            content=(
                json.dumps(expected_answer(candidate, options), indent=2, sort_keys=True) + "\n"
            ).encode(),
        )
    )
    files += solution_files(SOLVE_SH)
    answer_path = TABLE_PATH if candidate.answer["kind"] == "table" else ANSWER_PATH
    spec = {"capture": candidate.capture, "answer_path": answer_path}
    if candidate.plotted is not None:
        # A plot draws a labelled aggregate (value_counts, groupby): a count of a 0/1
        # column keeps its labels 0 and 1 rather than reading as a list.
        spec["labelled"] = True
    files += [
        BundleFile(path="solution/solve.py", content=module_text("runner").encode()),
        BundleFile(path="solution/grader.py", content=module_text("grader").encode()),
        BundleFile(path="solution/saved_output.py", content=module_text("saved_output").encode()),
        BundleFile(path="solution/reference.py", content=candidate.reference.encode()),
        BundleFile(
            path="solution/spec.json", content=(json.dumps(spec, sort_keys=True) + "\n").encode()
        ),
    ]
    return files
