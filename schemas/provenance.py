"""The project's own `[metadata.repo2rlenv]` block: where a task came from and what was proven.

Parts that change after a task is written: `checks` and `evaluation` (set by
`repo2rlenv validate`), `difficulty` (set by `repo2rlenv difficulty`), `decontamination`
(set by `mine --decontaminate-against` or `repo2rlenv decontam`) and `content_hash`
itself. They are left out of the content hash (see `VOLATILE_KEYS`), so labelling a task
never changes its identity.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TaskKind = Literal["repair", "build", "extend", "qa"]
"""repair/build/extend/qa from agent sessions; notebook questions (smoldataenvs) are qa."""

LabelStatus = Literal["unverified", "verified", "needs_repair", "blocked"]
CheckStatus = Literal["passed", "failed", "skipped", "error"]

DependencyDateUnmet = Literal["no-upload-times", "no-dated-resolution"]
"""Why an instance task's dependency wheels are the newest rather than its date's: the
index publishes no upload times, or nothing of that date resolves for the image's
Python (`repo2rlenv.kinds.instance_deps`)."""

DifficultyBand = Literal["trivial", "easy", "medium", "hard", "unsolved"]
"""By solve rate over k attempts; cut-offs in `repo2rlenv.difficulty.bands`."""
DifficultySource = Literal["solve-rate", "heuristic"]

VOLATILE_KEYS: frozenset[str] = frozenset(
    {"content_hash", "checks", "evaluation", "difficulty", "decontamination"}
)
"""Keys of the repo2rlenv block that the content hash ignores."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRef(_Strict):
    """The published record a task was mined from."""

    dataset: str = Field(description="Hub dataset id, local path, or 'handmade'.")
    revision: str | None = Field(default=None, description="Dataset commit or file hash.")
    record_id: str = Field(description="Row id, file name or session id inside the dataset.")
    format: str = Field(description="Source format, e.g. pi-v3, claude-code, atif-v1.6, ipynb.")
    harness: str | None = Field(default=None, description="Agent harness that produced it.")
    step_range: tuple[int, int] | None = Field(
        default=None, description="First and last trajectory step used, inclusive."
    )
    license: str | None = None
    repository: str | None = Field(default=None, description="Repository the session worked in.")
    commit: str | None = Field(default=None, description="Commit the start state was built from.")
    anchor_found_by: str | None = Field(
        default=None, description="Where the repository and commit were read from."
    )
    instance_id: str | None = Field(
        default=None,
        description="SWE-bench-style task instance the run worked on (e.g. "
        "django__django-11039), so users can filter out evaluation sets.",
    )


class CheckOutcome(_Strict):
    """One check `validate` ran on the task, with its evidence."""

    rule_id: str
    status: CheckStatus
    detail: str = ""
    rewards: list[float] = Field(default_factory=list)


class EvaluationLabel(_Strict):
    """What was actually proven about this task, and how."""

    status: LabelStatus = "unverified"
    reason_codes: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    checked_at: str | None = Field(default=None, description="UTC ISO-8601 time of the check.")


class DifficultyLabel(_Strict):
    """How hard a task is. `solve-rate`: measured, `solved` of `scored` attempts by `model`
    (out of `k` asked for; failed attempts do not count). `heuristic`: guessed from the
    task's shape (`signals`: reference change size, files touched, hidden tests) when no
    model was run; never `trivial` or `unsolved`, which only attempts can show."""

    label: DifficultyBand
    source: DifficultySource
    k: int | None = Field(default=None, ge=1, description="Attempts asked for per task.")
    scored: int | None = Field(default=None, ge=0, description="Attempts the verifier scored.")
    solved: int | None = Field(default=None, ge=0, description="Scored attempts that passed.")
    model: str | None = Field(default=None, description="Endpoint model or adapter that tried.")
    signals: dict[str, int] = Field(
        default_factory=dict, description="Heuristic inputs, e.g. changed_lines, files, tests."
    )


class PublicCheckoutSecret(_Strict):
    """A start-state file that holds secret-shaped text and is exactly a blob of the
    anchored public commit (`source.repository` at `source.commit`): the repository
    publishes it there already, so the task carries it unredacted (redacting would
    change the code its tests run). `validate` reports it as a warning while the file
    still hashes to `blob`; any other content is scanned as usual."""

    path: str = Field(description="Path in the checkout (under environment/workspace/).")
    blob: str = Field(description="Git blob id (sha1) of the file at the commit.")
    rules: list[str] = Field(description="Secret rules the file matches, e.g. private-key.")


class InstallConfig(BaseModel):
    """A row's own recipe for its environment and tests (SWE-rebench's `install_config`,
    the same keys as a SWE-bench spec): how the image is built (`python`, `packages`,
    `pip_packages`, `pre_install`, `install`, `reqs_path`), how the tests run
    (`test_cmd`) and how their output is read (`log_parser`, the name of the
    benchmark's parser). Recorded as the row gives it; keys this model does not name
    are kept too, so nothing the publisher wrote is lost on the way to the task."""

    model_config = ConfigDict(extra="allow")

    python: str | None = None
    install: str | list[str] | None = None
    test_cmd: str | list[str] | None = None
    log_parser: str | None = None
    packages: str | None = None
    pip_packages: list[str] = Field(default_factory=list)
    pre_install: list[str] = Field(default_factory=list)
    reqs_path: list[str] = Field(default_factory=list)
    eval_commands: list[str] = Field(default_factory=list)
    no_use_env: bool | None = None


class SweInstanceEnvironment(_Strict):
    """What the instance row says about its environment, beyond the repository and
    commit (`source`): read faithfully; of it, `docker_image` names the image the task
    is built FROM when it can be used (`SweRunProvenance.image`)."""

    environment_setup_commit: str | None = Field(
        default=None, description="Commit SWE-bench builds the version's environment from."
    )
    docker_image: str | None = Field(
        default=None,
        description="The instance's published image (SWE-rebench `docker_image`, "
        "SWE-rebench-V2 `image_name`).",
    )
    install_config: InstallConfig | None = None


class RunReport(_Strict):
    """The run's own verdict, from the evaluation report published beside it."""

    resolved: bool
    file: str = Field(description="The report's record id in the mined dataset.")
    shape: Literal["swebench-instance-report", "swebench-run-summary"] = Field(
        description="SWE-bench harness `report.json` ({instance_id: {resolved, "
        "tests_status}}) or its run summary (`resolved_ids` / `unresolved_ids`)."
    )


class PublishedImage(_Strict):
    """The instance's published image a task's environment is built FROM (SWE-bench's
    per-instance `sweb.eval` images, SWE-rebench's `docker_image`): exact fidelity, the
    benchmark's own environment, not the project's recipe (docs/swe-runs.md)."""

    name: str = Field(description="The image as the row or the benchmark names it.")
    image_id: str = Field(description="The engine's id of the image (its config digest).")
    repo_digest: str | None = Field(
        default=None,
        description="`name@sha256:...` the registry serves it by; None for an image only "
        "present locally (tagged or loaded here), where `image_id` is what identifies it.",
    )
    found_by: Literal["local", "pulled"]


class SweRecipe(_Strict):
    """The trusted spec whose steps built an instance task's image (a SWE-bench spec of
    the pinned package, or the row's `install_config`), and the Python it names beside
    the image's: the offline base has Debian's one Python, so they may differ, and the
    oracle decides whether the instance's tests still hold there."""

    source: str = Field(description="`swebench 4.1.0`, or `the row's install_config`.")
    repo: str
    version: str
    spec_python: str | None = Field(default=None, description="The Python the spec names.")
    image_python: str = Field(description="The Python the task image runs.")
    pre_install: list[str] = Field(default_factory=list, description="Its pre_install steps.")
    install: list[str] = Field(default_factory=list, description="Its install steps.")


class SweRunProvenance(_Strict):
    """How an instance-backed repair task relates to the run and its instance."""

    dropped_test_files: list[str] = Field(
        default_factory=list,
        description="Test files the run's submission changed, left out of the reference "
        "(SWE-bench applies the test patch over the model's patch; docs/swe-runs.md).",
    )
    addressless_tests: list[str] = Field(
        default_factory=list,
        description="Names of the instance's test lists that address no test (a log "
        "parser's artefact such as `[100%]`), left out of the verifier's run and count.",
    )
    instance: SweInstanceEnvironment | None = None
    report: RunReport | None = None
    image: PublishedImage | None = Field(
        default=None, description="The published image the environment is FROM, if any."
    )
    image_protected_files: list[str] = Field(
        default_factory=list,
        description="Protected files the verifier puts back whose copy is the published "
        "image's, where it differs from the anchored checkout's (a `pre_install` edit).",
    )
    image_fallback: str | None = Field(
        default=None,
        description="Why a published image the instance has was not used and the "
        "project's recipe built the environment instead (`image.*` reason code).",
    )
    recipe: SweRecipe | None = None
    published_test_secrets: list[PublicCheckoutSecret] = Field(
        default_factory=list,
        description="Hidden test files (path under tests/hidden/) made only from the "
        "anchored commit's published files and the instance table's test patch that hold "
        "secret-shaped text (requests' `http://user:pass@host` fixtures): the benchmark "
        "publishes them, so `validate` warns (`secrets.public-checkout`) while a file "
        "hashes to `blob`, as for the checkout's own files.",
    )
    environment_bound_tests: list[str] = Field(
        default_factory=list,
        description="PASS_TO_PASS names left out of the deciding ones: they failed in the "
        "task's network-less container on the reference and on the untouched start alike "
        "(`mining.environment_bound`; never a FAIL_TO_PASS name).",
    )


DecontamRule = Literal[
    "decontam.same-instance",
    "decontam.repo-commit-files",
    "decontam.repo-commit-window",
    "decontam.near-duplicate-text",
    "decontam.data-hash",
    "decontam.heldout-task",
]
"""How a task matched a benchmark instance (docs/decontamination.md)."""


class DecontamMatch(_Strict):
    """One benchmark instance the task matched, and by which rule."""

    rule: DecontamRule
    benchmark: str = Field(description="The table or split checked, as named on the command line.")
    instance_id: str = Field(description="The benchmark's instance or task id.")
    score: float | None = Field(
        default=None, description="near-duplicate-text: the containment measured (0..1)."
    )
    detail: str = ""


class DecontaminationResult(_Strict):
    """What the task was checked against and what it matched; `contaminated` when any
    match. Absent when no check ran (never an empty 'clean' by default)."""

    checked_against: list[str] = Field(
        description="Every table or split the task was checked against."
    )
    contaminated: bool
    matches: list[DecontamMatch] = Field(default_factory=list)


class Repo2RLEnvMetadata(_Strict):
    generator: str = Field(
        description="Which part of the toolkit wrote the task; 'external' for a foreign "
        "task that only received a label from `validate --write-labels`."
    )
    generator_version: str = ""
    kind: TaskKind | None = None
    source: SourceRef | None = None
    content_hash: str | None = Field(default=None, description="sha256 over config and files.")
    checks: list[CheckOutcome] = Field(default_factory=list)
    evaluation: EvaluationLabel = Field(default_factory=EvaluationLabel)
    difficulty: DifficultyLabel | None = None
    public_checkout_secrets: list[PublicCheckoutSecret] = Field(
        default_factory=list,
        description="Start-state files exempt from the secret refusal: blobs of the "
        "anchored public commit (docs/swe-yield.md, 'Secrets in public checkouts').",
    )
    dependency_date_unmet: DependencyDateUnmet | None = Field(
        default=None,
        description="Why the dependency wheels are the newest, not those of the instance's "
        "date: the package index publishes no upload times, or nothing of that date "
        "resolves for the image's Python (environment/wheels.txt has pip's words). "
        "Counted by `mine` as a warning; None when the date held or none was asked.",
    )
    swe: SweRunProvenance | None = Field(
        default=None, description="Instance-backed repair tasks: the run, its instance, its report."
    )
    decontamination: DecontaminationResult | None = Field(
        default=None,
        description="Benchmark decontamination: what was checked and what matched "
        "(docs/decontamination.md).",
    )
