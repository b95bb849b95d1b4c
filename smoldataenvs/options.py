"""The options of a notebook mining run: one validated model shared by the command
line, `repo2rlenv mine` and library callers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.cli_args import POSITIVE
from repo2rlenv.validate.report import MAX_JOBS
from smoldataenvs.grader import DEFAULT_ATOL, DEFAULT_RTOL


class NotebookOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(min_length=1, description="Hub dataset id or a local folder/file.")
    revision: str | None = Field(default=None, description="Hub revision (branch, tag, commit).")
    data_dirs: list[Path] = Field(
        default_factory=list, description="Extra folders searched for data files by name."
    )
    max_per_dataset: int = Field(default=4, ge=1, description="Tasks kept per source dataset.")
    allow_boolean: bool = Field(
        default=False,
        description="Emit yes/no answers too; off because a guess is right half the time.",
    )
    reproduce: bool = Field(
        default=True, description="Re-run each reference in Docker; keep only reproduced answers."
    )
    jobs: int = Field(default=2, ge=1, le=MAX_JOBS, description="Reproduction trials in parallel.")
    atol: float = Field(default=DEFAULT_ATOL, ge=0)
    rtol: float = Field(default=DEFAULT_RTOL, ge=0)
    base_image: str | None = Field(default=None, description="FROM image; default: settings.")
    llm_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL that may rephrase questions."
    )
    llm_model: str | None = None
    llm_timeout_s: float = Field(default=60.0, gt=0)
    agent_timeout_s: float = Field(default=900.0, gt=0)
    verifier_timeout_s: float = Field(default=120.0, gt=0)


def add_notebook_arguments(parser: argparse.ArgumentParser, help_prefix: str = "") -> None:
    """The options only notebooks have, on `python -m smoldataenvs` and on `repo2rlenv
    mine` (there each help begins "notebooks: ", beside the session options)."""
    parser.add_argument(
        "--data-dir",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help=f"{help_prefix}extra folder searched for data files by name (repeatable)",
    )
    parser.add_argument(
        "--max-per-dataset",
        type=POSITIVE,
        default=4,
        metavar="K",
        help=f"{help_prefix}at most K questions per source dataset (default 4)",
    )
    parser.add_argument(
        "--allow-boolean",
        action="store_true",
        help=f"{help_prefix}also emit yes/no (true/false) answers; off by default: a guess "
        "scores half",
    )


def options_from_args(args: argparse.Namespace, **decided: Any) -> NotebookOptions:
    """The options both commands read the same way from their arguments; `decided` holds
    what each command settles itself (reproduction, base image, tolerances, LLM model)."""
    shared = {
        "dataset": args.dataset,
        "revision": args.revision,
        "data_dirs": args.data_dir,
        "max_per_dataset": args.max_per_dataset,
        "allow_boolean": args.allow_boolean,
        "jobs": args.jobs,
        "llm_url": args.llm,
    }
    return NotebookOptions(**(shared | decided))
