"""Synthetic task folders with a known, skewed make-up, written fast (no bundle writer:
a valid task.toml and an instruction are all loading needs).

The spec is the ground truth: tests count it directly and compare with what `train`
reports, so the counting code is never checked against itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.bundle import dump_config
from repo2rlenv.bundle.standard import standard_config
from schemas import EvaluationLabel, SourceRef

MINED_FORMATS = ("pi-v3", "claude-code", "codex", "opencode")
DIFFICULTIES = ("easy", "medium", "hard", None)


@dataclass(frozen=True)
class Spec:
    task_id: str
    folder: str
    kind: str | None
    generator: str | None
    """None for a foreign task (no repo2rlenv block)."""
    dataset: str
    record_id: str
    source_format: str
    difficulty: str | None
    status: str = "unverified"
    broken: str | None = None
    """'toml', 'schema' or 'symlink': a folder that must be reported, not loaded."""

    @property
    def source_group(self) -> str:
        return "smoldataenvs" if self.generator == "smoldataenvs" else "repo2rlenv"

    @property
    def kind_or_unknown(self) -> str:
        return self.kind or "unknown"

    @property
    def difficulty_or_unknown(self) -> str:
        return self.difficulty or "unknown"


def skewed_specs(seed: int = 7, mined: int = 700, notebooks: int = 250) -> list[Spec]:
    """`mined` repo2rlenv tasks (90% build), `notebooks` smoldataenvs qa tasks, 40 foreign
    tasks and 10 broken folders. Records hold 1-3 mined tasks or 1-5 notebook questions."""
    rng = random.Random(seed)
    specs: list[Spec] = []
    kinds = ["build"] * 90 + ["repair"] * 5 + ["extend"] * 3 + ["qa"] * 2
    made, record = 0, 0
    while made < mined:
        record += 1
        dataset = f"hub/sessions-{rng.randrange(3)}"
        fmt = rng.choice(MINED_FORMATS)
        for _ in range(min(rng.randint(1, 3), mined - made)):
            made += 1
            specs.append(
                Spec(
                    task_id=f"m{made:04d}",
                    folder=f"mined/{fmt}",
                    kind=rng.choice(kinds),
                    generator="repo2rlenv",
                    dataset=dataset,
                    record_id=f"session-{record}",
                    source_format=fmt,
                    difficulty=rng.choice(DIFFICULTIES),
                    status=rng.choice(("verified", "verified", "unverified", "needs_repair")),
                )
            )
    made, notebook = 0, 0
    while made < notebooks:
        notebook += 1
        for _ in range(min(rng.randint(1, 5), notebooks - made)):
            made += 1
            specs.append(
                Spec(
                    task_id=f"n{made:04d}",
                    folder="notebooks",
                    kind="qa",
                    generator="smoldataenvs",
                    dataset=f"kaggle/set-{notebook % 12}",
                    record_id=f"nb-{notebook}.ipynb",
                    source_format="ipynb",
                    difficulty=rng.choice(DIFFICULTIES),
                    status="verified",
                )
            )
    for i in range(40):
        specs.append(
            Spec(
                task_id=f"f{i:03d}",
                folder="foreign",
                kind=None,
                generator=None,
                dataset="terminal-bench",
                record_id=f"terminal-bench/task-{i}",
                source_format="unknown",
                difficulty=rng.choice(DIFFICULTIES),
            )
        )
    for i, broken in enumerate(["toml"] * 4 + ["schema"] * 3 + ["symlink"] * 3):
        specs.append(Spec(f"x{i:02d}", "broken", None, None, "", "", "", None, broken=broken))
    return specs


def _config_text(spec: Spec) -> str:
    if spec.generator is None:
        lines = [f'[task]\nname = "{spec.record_id}"\n', "[metadata]\n"]
        if spec.difficulty:
            lines.append(f'difficulty = "{spec.difficulty}"\n')
        return "".join(lines)
    source = SourceRef(dataset=spec.dataset, record_id=spec.record_id, format=spec.source_format)
    config = standard_config(
        spec.task_id,
        kind=spec.kind,
        source=source,
        generator=spec.generator,  # type: ignore[arg-type]
    )
    block = config.metadata.repo2rlenv
    assert block is not None
    block.evaluation = EvaluationLabel(status=spec.status)  # type: ignore[arg-type]
    if spec.difficulty:
        config.metadata = config.metadata.model_copy(update={"difficulty": spec.difficulty})
    return dump_config(config)


def write_specs(root: Path, specs: list[Spec]) -> Path:
    for spec in specs:
        folder = root / spec.folder / spec.task_id
        folder.mkdir(parents=True)
        (folder / "instruction.md").write_text(f"Solve task {spec.task_id}.\n")
        if spec.broken == "toml":
            (folder / "task.toml").write_text("[task\nname = ")
        elif spec.broken == "schema":
            (folder / "task.toml").write_text('[task]\nname = "no slash here"\n')
        elif spec.broken == "symlink":
            (folder / "elsewhere.toml").write_text("")
            (folder / "task.toml").symlink_to("elsewhere.toml")
        else:
            (folder / "task.toml").write_text(_config_text(spec))
    return root


def task_id_of(spec: Spec) -> str:
    """The id `train` gives the folder: its path relative to the loaded root."""
    return f"{spec.folder}/{spec.task_id}"
