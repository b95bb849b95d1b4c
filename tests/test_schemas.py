import json
import tomllib

import pytest
from pydantic import ValidationError

from repo2rlenv.bundle import dump_config, parse_config
from schemas import BundleFile, TaskConfig
from schemas.export import expected_files

HARBOR_TEMPLATE = """
schema_version = "1.4"
[metadata]
[verifier]
timeout_sec = 900.0
[agent]
timeout_sec = 900.0
[environment]
build_timeout_sec = 600.0
"""

LEGACY = """
version = "1.0"
[metadata]
author_name = "Alex Shaw"
difficulty = "easy"
tags = ["trivial"]
[verifier]
timeout_sec = 120.0
[agent]
timeout_sec = 120.0
[environment]
build_timeout_sec = 600.0
cpus = 1
memory_mb = 2048
storage_mb = 10240
allow_internet = false
"""


def test_json_schema_files_match_the_models():
    stale = [
        p.name for p, text in expected_files().items() if not p.exists() or p.read_text() != text
    ]
    assert not stale, f"run `python -m schemas` to refresh: {stale}"


def test_exported_schema_describes_our_metadata_block():
    schema = json.loads(
        next(t for p, t in expected_files().items() if p.name == "repo2rlenv_metadata.schema.json")
    )
    assert {"kind", "source", "evaluation", "content_hash"} <= set(schema["properties"])


def test_reads_harbor_template_with_defaults():
    config = parse_config(HARBOR_TEMPLATE)
    assert config.verifier.timeout_sec == 900.0
    assert config.verifier_mode == "shared"
    assert config.metadata.repo2rlenv is None


def test_reads_legacy_version_and_allow_internet():
    config = parse_config(LEGACY)
    assert config.schema_version == "1.0"
    assert config.environment.network_mode == "no-network"
    assert config.environment.cpus == 1
    extra = config.metadata.model_extra
    assert extra["author_name"] == "Alex Shaw" and extra["tags"] == ["trivial"]


def test_foreign_keys_survive_a_round_trip():
    text = HARBOR_TEMPLATE + '\n[environment.healthcheck]\ncommand = "true"\n'
    again = tomllib.loads(dump_config(parse_config(text)))
    assert again["environment"]["healthcheck"] == {"command": "true"}


@pytest.mark.parametrize("name", ["no-slash", "a/b/c", "../x", "org/..x", "/abs"])
def test_rejects_bad_task_names(name):
    with pytest.raises(ValidationError):
        TaskConfig.model_validate({"task": {"name": name}})


def test_rejects_relative_workdir():
    with pytest.raises(ValidationError):
        TaskConfig.model_validate({"environment": {"workdir": "workspace"}})


@pytest.mark.parametrize(
    "path",
    ["../x", "/etc/passwd", "tests/../../x", "notes/a.txt", "tests", "environment//a", "./tests/a"],
)
def test_bundle_paths_are_confined(path):
    with pytest.raises(ValidationError):
        BundleFile(path=path, content=b"")


def test_separate_verifier_mode_is_resolved_like_harbor():
    assert (
        TaskConfig.model_validate({"verifier": {"environment": {"cpus": 1}}}).verifier_mode
        == "separate"
    )
    assert (
        TaskConfig.model_validate({"verifier": {"environment_mode": "shared"}}).verifier_mode
        == "shared"
    )
