"""Options more than one command has, declared once and mixed into each command's
options model (`class Options(RuntimeOption, JobsOption, ...)`): the same flag has the
same name, range, default and help wherever it appears, and a component that needs the
LLM endpoint or the runtime takes this model's fields, not a copy of them."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from repo2rlenv.cli_args import option
from repo2rlenv.validate.report import MAX_JOBS

DEBUG_ENV = "REPO2RLENV_DEBUG"


class Strict(BaseModel):
    """Options models refuse unknown names: a misspelt keyword is an error."""

    model_config = ConfigDict(extra="forbid")


class RuntimeOption(Strict):
    runtime: str | None = option(
        None,
        "where trials run: docker (the local engine) or harbor[:ENV] (Harbor's environment "
        "ENV: docker, daytona, modal, e2b, ...); default: the settings file's `runtime`, "
        "else docker (docs/harbor-runtime.md)",
        metavar="NAME",
    )


class JobsOption(Strict):
    jobs: int = option(
        2,
        "how many run in parallel: tasks (validate), records and trials (mine), attempts "
        f"(difficulty); default 2, up to {MAX_JOBS} for hosted runtimes",
        flags=("-j", "--jobs"),
        ge=1,
        le=MAX_JOBS,
    )


class HubRevision(Strict):
    revision: str | None = option(None, "Hub dataset revision (branch, tag or commit)")


class LlmEndpoint(Strict):
    """One OpenAI-compatible endpoint, spelt the same for sessions and notebooks."""

    llm: str | None = option(
        None,
        "OpenAI-compatible base URL used to rephrase instructions and questions, and to "
        "propose notebook questions the describer cannot word (optional; a rewrite that drops "
        "a backticked name, or a proposal that leaks or is vague, is discarded; answers are "
        "cached)",
        metavar="URL",
    )
    llm_model: str = option("default", "model name at --llm")


class BaseImageOption(Strict):
    base_image: str | None = option(
        None, "FROM image of the tasks (default: the settings file's base_image)"
    )


class ForceOption(Strict):
    force: bool = option(False, "replace tasks whose content changed")


class QuietOption(Strict):
    quiet: bool = option(False, "no progress display", flags=("-q", "--quiet"))


class JsonReport(Strict):
    json_path: Path | None = option(
        None,
        "write the JSON report to FILE ('-' prints it to stdout; tables then go to stderr)",
        flags=("--json",),
        metavar="FILE",
    )


class DebugOption(Strict):
    debug: bool = option(
        False, f"show the traceback behind a one-line error (also {DEBUG_ENV}=1)", inherited=True
    )


class TaskPaths(Strict):
    paths: list[Path] = option(
        ..., "task folders, or folders to search for task.toml", positional=True, metavar="DIR"
    )


class PublishSelection(Strict):
    """Which tasks a publish sends out, whatever the destination (`push` to the Hub or to
    a Harbor registry dataset): the rules of `repo2rlenv.publish.selection`."""

    include_unverified: bool = option(False, "also publish tasks validate did not prove")
    include_unknown_licence: bool = option(
        False,
        "also publish tasks whose source licence is unknown (you vouch for it); a licence "
        "that forbids redistribution is never published",
    )
    local_base: Literal["refuse", "rewrite", "keep"] = option(
        "refuse",
        "a task whose Dockerfile starts FROM an image only this machine has "
        "(env.local-only-base): hold it back, rewrite the published copy to the base's "
        "Debian recipe (the mined folder is left as is), or keep it (it then builds only "
        "where that image exists, e.g. a local registry.json run)",
    )
