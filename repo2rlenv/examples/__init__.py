"""Hand-made example tasks, one per kind, written through the same bundle writer as mined
tasks. They are the demo's input until mining lands, and the fixtures the runtime and
Harbor conformance tests run."""

from __future__ import annotations

from types import ModuleType

from repo2rlenv.bundle.standard import (
    environment_files,
    grading_files,
    solution_files,
    standard_config,
)
from repo2rlenv.examples import build, extend, qa, repair
from schemas import SourceRef, TaskBundle

EXAMPLES: dict[str, tuple[str, ModuleType]] = {
    "example-repair-median": ("repair", repair),
    "example-build-wordfreq": ("build", build),
    "example-extend-inventory": ("extend", extend),
    "example-qa-config": ("qa", qa),
}


def example_bundle(task_id: str, base_image: str) -> TaskBundle:
    kind, module = EXAMPLES[task_id]
    source = SourceRef(
        dataset="handmade", record_id=task_id, format="handmade", license="Apache-2.0"
    )
    config = standard_config(
        task_id,
        kind=kind,
        source=source,
        generator="repo2rlenv-examples",
        description=module.__doc__ or "",
        agent_timeout=120.0,
        verifier_timeout=60.0,
        memory_mb=1024,
    )
    files = [
        *environment_files(base_image, module.WORKSPACE),
        *grading_files(module.CHECK, module.PROTECTED),
        *solution_files(module.SOLVE),
    ]
    return TaskBundle(task_id=task_id, config=config, instruction=module.INSTRUCTION, files=files)


def example_bundles(base_image: str) -> list[TaskBundle]:
    return [example_bundle(task_id, base_image) for task_id in EXAMPLES]
