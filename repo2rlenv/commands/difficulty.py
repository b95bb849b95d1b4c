"""`repo2rlenv difficulty`: label task difficulty by solve rate (or a marked heuristic)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import JobsOption, JsonReport, RuntimeOption, TaskPaths
from repo2rlenv.commands.common import EXIT_SETUP, paths_usable, runtime_of

NAME = "difficulty"
HELP = "label task difficulty by solve rate (or a marked heuristic)"
DESCRIPTION = (
    "With --model, runs k attempts per task in a real harness and labels each task "
    "trivial/easy/medium/hard/unsolved by its solve rate; without, writes a heuristic "
    "label (reference change size, files touched, hidden tests) marked source=heuristic. "
    "Labels go into [metadata.repo2rlenv.difficulty] of task.toml."
)


class Options(TaskPaths, JobsOption, JsonReport, RuntimeOption):
    model: str | None = option(None, "OpenAI-compatible endpoint URL, or a peft adapter folder")
    k: int = option(8, "attempts per task", flags=("-k",), ge=1)
    harness: Literal["pi", "opencode", "hermes"] = option("pi", "agent harness the attempts run in")
    model_name: str = option("default", "model name at the endpoint")
    server_url: str | None = option(None, "vLLM server (LoRA on) for an adapter --model")
    base_model: Path | None = option(None, "model folder to serve an adapter on")
    max_tokens: int = option(1024, "per model call", ge=1)
    work_dir: Path = option(Path("tasks_out/difficulty"), "attempt ledgers")
    dry_run: bool = option(False, "show labels, write none")


def run(options: Options) -> int:
    from repo2rlenv.cli_paths import absolute
    from repo2rlenv.difficulty.command import DifficultyRequest, label_tasks
    from repo2rlenv.difficulty.measure import MeasureOptions, is_endpoint
    from repo2rlenv.settings import load_settings

    measuring = options.model is not None
    work_dir = options.work_dir if measuring else None
    inputs = ({"--base-model": options.base_model}, {})
    if not paths_usable({"--work-dir": work_dir}, {"--json": options.json_path}, inputs):
        return EXIT_SETUP
    # Only attempts (--model) run trials; a name no runtime has is refused either way.
    runtime = runtime_of(options.runtime, load_settings(), check=measuring)
    if runtime is None:
        return EXIT_SETUP
    measure = None
    if options.model is not None:
        fields = options.model_dump(include=set(MeasureOptions.model_fields))
        model = options.model  # an adapter folder goes to the vLLM server: absolute
        fields["model"] = model if is_endpoint(model) else str(absolute(Path(model)))
        measure = MeasureOptions(**fields | {"runtime": runtime.name})
    request = DifficultyRequest(
        paths=options.paths, measure=measure, json_path=options.json_path, dry_run=options.dry_run
    )
    return label_tasks(request)
