from __future__ import annotations

from pathlib import Path

import pytest

from train.data.config import (
    ConfigError,
    TrainConfig,
    config_to_toml,
    parse_override,
    read_config_file,
    resolve_config,
)

# The public recipe's three set-ups, as the issue states them.
RECIPE = [
    ("lfm2.5-24b-a2b", {"steps": 200, "gpus": 4, "token_budget": 131072}),
    ("lfm3-1.7b", {"steps": 400, "gpus": 2, "token_budget": 65536, "trainers_per_gpu": 3}),
    ("twil-8b", {"steps": 300, "gpus": 4, "sessions_per_trainer": 12}),
]


@pytest.mark.parametrize(("preset", "expected"), RECIPE)
def test_presets_follow_the_recipe(preset: str, expected: dict[str, int]) -> None:
    config = resolve_config(preset=preset)
    assert config.preset == preset
    for key, value in expected.items():
        assert getattr(config, key) == value, key


@pytest.mark.parametrize("preset", [name for name, _ in RECIPE])
def test_common_fields(preset: str) -> None:
    config = resolve_config(preset=preset)
    assert config.harnesses == ["pi", "opencode", "hermes"]
    assert (config.lora.r, config.lora.target_modules) == (32, "all-linear")
    assert config.rollouts_per_task == 8
    assert config.learning_rate == 1e-5
    assert config.micro_batches_per_step == 4
    assert config.max_staleness == 4
    assert config.sessions_per_trainer <= 48
    assert config.server_gpus >= 1


def test_three_trainers_share_one_gpu_in_the_small_setup() -> None:
    config = resolve_config(preset="lfm3-1.7b")
    assert (config.trainer_gpus, config.server_gpus) == (1, 1)
    big = resolve_config(preset="lfm2.5-24b-a2b")
    assert (big.trainer_gpus, big.server_gpus) == (3, 1)


def test_file_overrides_preset_and_cli_overrides_file(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('preset = "lfm3-1.7b"\nsteps = 10\n[split]\nseed = 5\n')
    config = resolve_config(path, overrides=[("steps", 20), ("split.max_fraction", 0.3)])
    assert config.steps == 20
    assert config.gpus == 2
    assert config.split.seed == 5
    assert config.split.max_fraction == 0.3
    assert resolve_config(path, preset="twil-8b").sessions_per_trainer == 12
    assert resolve_config(path, preset="twil-8b").steps == 10


def test_yaml_and_toml_give_the_same_config(tmp_path: Path) -> None:
    toml = tmp_path / "a.toml"
    toml.write_text('harnesses = ["pi"]\nlearning_rate = 2e-5\n[reward]\ncall_cap = 10\n')
    yaml = tmp_path / "a.yaml"
    yaml.write_text("harnesses: [pi]\nlearning_rate: 2.0e-5\nreward:\n  call_cap: 10\n")
    assert resolve_config(toml) == resolve_config(yaml)
    assert resolve_config(yaml).harnesses == ["pi"]


def test_resolved_config_round_trips_through_toml(tmp_path: Path) -> None:
    config = resolve_config(preset="twil-8b", overrides=[("server.url", "http://h:8000")])
    path = tmp_path / "resolved.toml"
    path.write_text(config_to_toml(config))
    assert resolve_config(path) == config


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[split]\nsed = 3\n", "split.sed"),
        ("steps = 0\n", "steps"),
        ('harnesses = ["pi", "claude"]\n', "harnesses"),
        ('harnesses = ["pi", "pi"]\n', "repeat"),
        ("gpus = 1\n", "vLLM server"),
        ("[reward]\ncall_cap = -1\n", "reward.call_cap"),
        ("[split]\nmax_fraction = 1.5\n", "split.max_fraction"),
        ('preset = "gpt-9"\n', "lfm3-1.7b"),
    ],
)
def test_bad_config_names_the_key(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        resolve_config(path)
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("x.toml", "steps = ", "does not parse"),
        ("x.yaml", "steps: [1,\n", "does not parse"),
        ("x.yaml", "- 1\n- 2\n", "table of settings"),
        ("x.json", "{}", ".toml, .yaml or .yml"),
    ],
)
def test_unreadable_config_files(tmp_path: Path, name: str, text: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_config_file(path)
    assert needle in str(caught.value)
    with pytest.raises(ConfigError, match="cannot read"):
        read_config_file(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("steps=3", ("steps", 3)),
        ("learning_rate=1e-5", ("learning_rate", 1e-5)),
        ("imbalance.rebalance=false", ("imbalance.rebalance", False)),
        ('harnesses=["pi", "hermes"]', ("harnesses", ["pi", "hermes"])),
        ("model=LiquidAI/some-model", ("model", "LiquidAI/some-model")),
        ("server.url = http://localhost:8000/v1", ("server.url", "http://localhost:8000/v1")),
    ],
)
def test_parse_override(text: str, expected: tuple[str, object]) -> None:
    assert parse_override(text) == expected


@pytest.mark.parametrize("text", ["steps", "=3", "split..seed=1"])
def test_malformed_overrides(text: str) -> None:
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_override(text)


def test_override_into_a_value_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a section"):
        resolve_config(overrides=[("steps.inner", 1)])


def test_config_model_forbids_unknown_top_level_keys() -> None:
    data = resolve_config().model_dump()
    data["stepz"] = 3
    with pytest.raises(ValueError, match="stepz"):
        TrainConfig.model_validate(data)
