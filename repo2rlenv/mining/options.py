"""The options of a session mining run: one validated model shared by `repo2rlenv mine`
(its flags are generated from these fields, repo2rlenv.cli_args) and library callers.
Moved out of session_miner so the command and the miner read one declaration."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import HubRevision, JobsOption, LlmEndpoint
from repo2rlenv.kinds import KINDS


class MineOptions(HubRevision, JobsOption, LlmEndpoint):
    """What the session miner reads. `base_image` is required here; `repo2rlenv mine`
    fills it from `--base-image` or the settings."""

    dataset: str = option(..., "Hub dataset id, or a local file/folder", min_length=1)
    split: str = option("train", "dataset split")
    limit: int | None = option(None, "read at most N records (default: all)", ge=1)
    streaming: bool = option(False, "stream a large Hub dataset")
    validate_tasks: bool = option(
        True, "skip the Docker oracle check (tasks stay unverified)", flags=("--no-validate",)
    )
    reruns: int = option(1, "extra oracle runs that must agree", metavar="N", ge=0, le=20)
    exclude: list[Path] = option(
        [], "eval-set task folder: near-duplicates of its tasks are skipped", metavar="DIR"
    )
    repo_map: Path | None = option(
        None,
        "JSON/TOML mapping repository URLs to local paths or mirrors, for sessions that "
        "name the repository and commit they worked on",
        metavar="FILE",
    )
    end_state: bool = option(
        False,
        "anchor a session that names no commit on the git checkout holding its file: the "
        "oldest commit with the file's bytes is its end state, its own edits undone give "
        "the start (reads checked; docs/real-sessions.md)",
    )
    repo_cache: Path | None = option(
        None, "where repository mirrors are kept (default: the cache folder)", metavar="DIR"
    )
    max_repo_files: int | None = option(
        None,
        "largest repository checkout read, in text files (default: settings max_repo_files, "
        "20000); a larger one is skipped as anchor.repo-too-large",
        ge=1,
    )
    max_repo_bytes: int | None = option(
        None,
        "largest repository checkout read, in bytes (default: settings max_repo_bytes, 300000000)",
        ge=1,
    )
    strict_secrets: bool = option(
        False,
        "refuse a task whose start state holds secret-shaped text even in files that are "
        "exactly the anchored public commit's blobs (default: exempt and reported; settings "
        "strict_secrets)",
    )
    instances: str | None = option(
        None,
        "SWE-bench-style instance table (instance_id, repo, base_commit...): joins each "
        "SWE-agent / mini-swe-agent / OpenHands run to its repository and commit",
        metavar="FILE|HUB_ID",
    )
    exclude_instances: list[str] = option(
        [],
        "instance table (e.g. an evaluation set): runs of its instances are skipped "
        "(instance.excluded)",
        metavar="FILE|HUB_ID",
    )
    decontaminate_against: list[str] = option(
        [],
        "benchmark table to check every task against (repeatable): swe-bench, "
        "swe-bench-lite, swe-bench-verified, swe-bench-multilingual, swe-rebench-leaderboard, "
        "'default' (those of them that can be read), a Hub id, an instance table file, a "
        "folder of tasks, or a split.json (its held-out tasks); matches go into each task's "
        "provenance (docs/decontamination.md)",
        metavar="NAME|FILE",
    )
    drop_contaminated: bool = option(
        False, "refuse a task that matches a benchmark (decontam.*) instead of marking it"
    )
    base_image: str = Field(min_length=1, description="FROM image of the tasks")
    kinds: list[str] = Field(
        default_factory=lambda: list(KINDS), description="task kinds to try, in order"
    )
