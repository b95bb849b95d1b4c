"""The options of a notebook mining run: one validated model shared by the command
line, `repo2rlenv mine` and library callers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import BaseImageOption, HubRevision, JobsOption, Strict
from smoldataenvs.grader import DEFAULT_ATOL, DEFAULT_RTOL


class NotebookFlags(Strict):
    """The options only notebooks have, mixed into `repo2rlenv mine` (see
    repo2rlenv.emit.MineSource); `python -m smoldataenvs` is that command for notebooks."""

    data_dir: list[Path] = option(
        [],
        "notebooks: extra folder searched for data files by name (repeatable); a checkout "
        "of mwaskom/seaborn-data serves `sns.load_dataset` offline",
        metavar="DIR",
    )
    max_per_dataset: int = option(
        10, "notebooks: at most K questions per source dataset", metavar="K", ge=1
    )
    """10: a tutorial reuses one data set over several chapters (jorisvandenbossche's
    `titanic.csv`: 20 distinct proven-shape questions over 4 notebooks), and 4 kept a
    third of them; SmolDataEnvs keeps about 11 per Kaggle dataset. Still a cap, so no
    single data set dominates a corpus."""
    allow_boolean: bool = option(
        False,
        "notebooks: also emit yes/no (true/false) answers; off by default: a guess scores half",
    )
    atol: float = option(
        DEFAULT_ATOL, "notebooks: absolute tolerance of a numeric answer", metavar="N", ge=0
    )
    rtol: float = option(
        DEFAULT_RTOL, "notebooks: relative tolerance of a numeric answer", metavar="N", ge=0
    )


class NotebookOptions(NotebookFlags, HubRevision, JobsOption, BaseImageOption):
    """The notebook pipeline's options; the ones a command line also has (data folders,
    questions per dataset, booleans, tolerances, revision, jobs, base image) are those
    models' fields, declared once."""

    dataset: str = Field(min_length=1, description="Hub dataset id or a local folder/file.")
    reproduce: bool = Field(
        default=True, description="Re-run each reference in Docker; keep only reproduced answers."
    )
    llm_url: str | None = Field(
        default=None,
        description=(
            "OpenAI-compatible base URL that may rephrase questions and propose the ones the "
            "describer cannot word (each proposal checked, see smoldataenvs.proposer)."
        ),
    )
    llm_model: str | None = None
    llm_timeout_s: float = Field(default=60.0, gt=0)
    agent_timeout_s: float = Field(default=900.0, gt=0)
    verifier_timeout_s: float = Field(default=120.0, gt=0)


def notebook_options(options: Any, **decided: Any) -> NotebookOptions:
    """The pipeline's options from `mine`'s parsed options model (or a library caller's
    model with the same fields); `decided` holds what the caller settles itself
    (reproduction, base image)."""
    shared = {
        "dataset": options.dataset,
        "revision": options.revision,
        "data_dir": options.data_dir,
        "max_per_dataset": options.max_per_dataset,
        "allow_boolean": options.allow_boolean,
        "atol": options.atol,
        "rtol": options.rtol,
        "jobs": options.jobs,
        "llm_url": options.llm,
        "llm_model": options.llm_model if options.llm else None,
    }
    return NotebookOptions(**(shared | decided))
