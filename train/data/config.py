"""One training configuration: a preset, then a TOML/YAML file, then command-line overrides.

The presets are the three model set-ups of the public recipe; everything they share
(harnesses, LoRA shape, rollouts per task, learning rate, sessions, micro-batches,
staleness) is a common default below. Every section forbids unknown keys, so a typo in
a config file is an error rather than a silently ignored setting.
"""

from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path
from typing import Any, Literal

import tomli_w
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from train.data.imbalance import ImbalanceSettings
from train.data.reward import RewardSettings
from train.data.split import SplitSettings

Harness = Literal["pi", "opencode", "hermes"]
HARNESSES: tuple[Harness, ...] = ("pi", "opencode", "hermes")


class ConfigError(Exception):
    """A configuration that cannot be used; the message says which key and why."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoraSettings(_Strict):
    r: int = Field(default=32, ge=1)
    alpha: int = Field(default=64, ge=1)
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: Literal["all-linear"] | list[str] = Field(
        default="all-linear", description="peft's 'all-linear', or explicit module names."
    )


class ServerSettings(_Strict):
    url: str | None = Field(
        default=None, description="Base URL of a running vLLM server (OpenAI API)."
    )
    tool_call_parser: str = Field(default="hermes", min_length=1)
    max_model_len: int | None = Field(default=None, ge=1024)
    python: str | None = Field(
        default=None,
        description="Interpreter with the `vllm` package that starts the server (default: "
        ".venv-vllm's on a CPU run, the trainer's own on a GPU run).",
    )


class TrainConfig(_Strict):
    preset: str
    model: str = Field(min_length=1, description="Hub id or local path of the base model.")
    steps: int = Field(ge=1, description="Optimizer steps per trainer.")
    device: Literal["gpu", "cpu"] = Field(
        default="gpu", description="cpu: the tiny CPU run (vLLM's CPU build); gpus unused."
    )
    gpus: int = Field(ge=0, description="GPUs for the whole run: trainers plus the server.")
    token_budget: int = Field(
        default=65536,
        ge=1024,
        description="Tokens per packed micro-batch (TRL's token_budget); a step holds "
        "micro_batches_per_step of them.",
    )
    trainers_per_gpu: int = Field(default=1, ge=1, description="Trainers sharing one GPU.")
    sessions_per_trainer: int = Field(
        default=48, ge=1, description="Harness sessions (rollouts) in flight per trainer."
    )
    harnesses: list[Harness] = Field(
        default_factory=lambda: list(HARNESSES), min_length=1, description="One adapter each."
    )
    lora: LoraSettings = Field(default_factory=LoraSettings)
    rollouts_per_task: int = Field(default=8, ge=2, description="GRPO group size.")
    learning_rate: float = Field(default=1e-5, gt=0.0, lt=1.0)
    micro_batches_per_step: int = Field(default=4, ge=1)
    max_staleness: int = Field(
        default=4, ge=0, description="Oldest adapter version a sample may come from."
    )
    smoke_baseline: float | None = Field(
        default=None,
        description="Smoke runs only (tiny-cpu): a group whose rollouts all earned the "
        "same reward trains with advantage reward - smoke_baseline instead of being "
        "skipped, since a random tiny model never solves a task and GRPO would get no "
        "gradient at all. Leave unset for real training.",
    )
    seed: int = 0
    runtime: str | None = Field(
        default=None,
        min_length=1,
        description="Where rollouts run: `docker` or `harbor:docker` (a runtime that runs "
        "harness trials); unset: repo2rlenv's settings (`runtime`), else docker.",
    )
    server: ServerSettings = Field(default_factory=ServerSettings)
    split: SplitSettings = Field(default_factory=SplitSettings)
    imbalance: ImbalanceSettings = Field(default_factory=ImbalanceSettings)
    reward: RewardSettings = Field(default_factory=RewardSettings)

    @property
    def trainer_gpus(self) -> int:
        return math.ceil(len(self.harnesses) / self.trainers_per_gpu)

    @property
    def server_gpus(self) -> int:
        return self.gpus - self.trainer_gpus

    @model_validator(mode="after")
    def _fits(self) -> TrainConfig:
        if len(set(self.harnesses)) != len(self.harnesses):
            raise ValueError(f"harnesses repeat: {self.harnesses}")
        if self.device == "cpu":
            return self
        if self.server_gpus < 1:
            raise ValueError(
                f"{len(self.harnesses)} trainers at {self.trainers_per_gpu} per GPU need "
                f"{self.trainer_gpus} GPUs, plus at least 1 for the vLLM server; "
                f"gpus = {self.gpus}"
            )
        return self


TINY_MODEL = "builtin:tiny"
"""A model name that means: build train.serving.tiny_model into the output folder."""

PRESETS: dict[str, dict[str, Any]] = {
    "lfm2.5-24b-a2b": {
        "model": "LFM2.5-24B-A2B",
        "steps": 200,
        "gpus": 4,
        "token_budget": 131072,
    },
    "lfm3-1.7b": {
        "model": "LFM3-1.7B",
        "steps": 400,
        "gpus": 2,
        "token_budget": 65536,
        "trainers_per_gpu": 3,
    },
    "twil-8b": {
        "model": "TwIL-8B",
        "steps": 300,
        "gpus": 4,
        "sessions_per_trainer": 12,
    },
    "tiny-cpu": {
        "model": TINY_MODEL,
        "device": "cpu",
        "gpus": 0,
        "steps": 2,
        "harnesses": ["pi"],
        "sessions_per_trainer": 2,
        "rollouts_per_task": 2,
        "micro_batches_per_step": 2,
        "token_budget": 16384,
        "max_staleness": 2,
        "smoke_baseline": 0.5,
        "server": {"max_model_len": 16384},
    },
}
"""The recipe names its models but not where to fetch them: `model` holds the recipe's
name, to be replaced by a hub id or local path before a real run. TwIL-8B's token
budget is not stated by the recipe and keeps the common default. `tiny-cpu` runs here,
without a GPU: a random tiny model built offline into the run's output folder, one
harness, groups of two, two optimizer steps (`model = "builtin:tiny"`)."""
DEFAULT_PRESET = "lfm2.5-24b-a2b"


def read_config_file(path: Path) -> dict[str, Any]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"config {path}: use a .toml, .yaml or .yml file")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"config {path} does not parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must be a table of settings, not {type(data).__name__}")
    return data


def parse_override(text: str) -> tuple[str, Any]:
    """`a.b=value`; the value is read as a TOML value (numbers, booleans, quoted strings,
    arrays), else taken as a plain string, so `model=org/name` needs no quotes."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"override {text!r}: expected KEY=VALUE, e.g. split.seed=3")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key, value


def _set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    node = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {dotted}: '{part}' is a value, not a section")
        node = child
    node[parts[-1]] = value


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _describe(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "config"
        lines.append(f"{where}: {err['msg']}")
    return "; ".join(lines)


def resolve_config(
    file: Path | None = None,
    preset: str | None = None,
    overrides: list[tuple[str, Any]] | None = None,
) -> TrainConfig:
    data = read_config_file(file) if file is not None else {}
    name = preset or data.get("preset") or DEFAULT_PRESET
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    merged = _merge(PRESETS[name], data)
    merged["preset"] = name
    for key, value in overrides or []:
        _set_path(merged, key, value)
    try:
        return TrainConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(f"invalid config: {_describe(exc)}") from exc


def config_to_toml(config: TrainConfig) -> str:
    return tomli_w.dumps(config.model_dump(mode="json", exclude_none=True))
